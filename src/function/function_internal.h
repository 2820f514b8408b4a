// Eager functions (loom/function.h): the function object shared by
// function_builder.c (building and checking), function_library.c (a
// context's library and the front end's hooks) and function_call.c
// (running a call op by op).

#ifndef LOOM_FUNCTION_FUNCTION_INTERNAL_H_
#define LOOM_FUNCTION_FUNCTION_INTERNAL_H_

#include <stdatomic.h>

#include "base/arena.h"
#include "loom/function.h"

// A reference to a value of the body.
typedef struct loom__function_ref_t {
  int32_t node;        // the node, or -1: an input of the function
  int32_t input;       // the function's input (node == -1)
  const char* output;  // the node's output argument (node >= 0)
  int32_t index;       // the element, or -1: the whole argument
  const char* text;    // as written, for messages
} loom__function_ref_t;

typedef struct loom__function_placeholder_t {
  const char* attr;         // the node's attr
  const char* placeholder;  // the signature's attr it takes
} loom__function_placeholder_t;

typedef struct loom__function_node_t {
  const char* name;
  const char* op;
  const char* device;  // "" : the call's
  loom__function_ref_t* inputs;
  int32_t num_inputs;
  int32_t* controls;  // nodes that run first
  int32_t num_controls;
  loom_op_attrs_t attrs;
  loom__function_placeholder_t* placeholders;
  int32_t num_placeholders;
} loom__function_node_t;

typedef struct loom__function_arg_t {
  const char* name;
  loom_dtype_t dtype;     // or LOOM_DTYPE_INVALID with type_attr
  const char* type_attr;  // NULL for a fixed dtype
  // A list of tensors: `number_attr` of them (`N * T`), or one per type of
  // the list(type) attr `type_list_attr`; both NULL: one tensor.
  const char* number_attr;
  const char* type_list_attr;
  bool has_shape;
  loom_shape_t shape;
} loom__function_arg_t;

// A node that runs at every call although no output reads it
// (TensorFlow's control_ret): the plan never drops it.
typedef struct loom__function_control_output_t {
  const char* name;
  int32_t node;
} loom__function_control_output_t;

struct loom_function_t {
  _Atomic int32_t references;
  loom_allocator_t allocator;
  loom__arena_t arena;  // names, references, arrays
  const char* name;
  bool stateful;
  // The signature as an op definition, in a registry of its own.
  loom_op_registry_t* registry;
  const loom_op_def_t* signature;
  loom__function_arg_t* inputs;
  int32_t num_inputs;
  loom__function_arg_t* outputs;
  loom__function_ref_t* sources;  // per output
  int32_t num_outputs;
  // An input or output is a list: a call's tensors are laid out by its
  // attrs (loom_op_def_arg_range), not one per argument.
  bool has_lists;
  loom__function_control_output_t* control_outputs;
  int32_t num_control_outputs;
  loom__function_node_t* nodes;
  int32_t num_nodes;
  int32_t* order;  // the nodes in an order that runs inputs first
  // Values a traced function captured, bound to its last inputs at each
  // call (function_capture.h); NULL when it has none.
  struct loom__function_captures_t* captures;
  // loom_function_stats_t's counts.
  _Atomic int64_t planned_calls;
  _Atomic int64_t plans_built;
  _Atomic int32_t planned_nodes;
  // Calls offered to a handler as one op: their replays
  // (function_replay.c), made on first use, and the counts.
  struct loom__function_replays_t* _Atomic replays;
  _Atomic int64_t replays_built;
  _Atomic int64_t replay_hits;
  _Atomic int64_t frame_calls;
  _Atomic int64_t buffers_reused;
  _Atomic int64_t buffers_allocated;
  // Backward functions of calls a tape took whole (function_derived.h).
  _Atomic int64_t backward_functions_built;
  _Atomic int64_t backward_function_hits;
};

// Parses reference `text` of function `function` (its inputs and nodes
// known) into *out; `where` names the user for messages.
loom_status_t loom__function_parse_ref(loom_function_t* function,
                                       const char* text, const char* where,
                                       loom__function_ref_t* out);

// The node named `name`, or -1.
int32_t loom__function_find_node(const loom_function_t* function,
                                 const char* name);

#endif  // LOOM_FUNCTION_FUNCTION_INTERNAL_H_
