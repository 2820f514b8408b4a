// Functions of the eager API: a signature (typed inputs and outputs, attrs)
// and a body of ops over symbolic values, kept by name in a context's
// function library and called like an op — by the function's name
// (loom_eager_op_create(ctx, "my_fn", ...), TensorFlow's TFE_NewOp with a
// function name) or by PartitionedCall / StatefulPartitionedCall with the
// function in attr `f`.
//
// A call runs the body op by op through the eager execution path
// (loom_eager_op_execute) on the calling thread's handler stack, so a
// gradient tape around a call records the body's ops.
//
//   loom_function_builder_t* b;
//   LOOM_RETURN_IF_ERROR(loom_function_builder_create(alloc, "f", &b));
//   loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL);
//   loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL);
//   const char* mul_inputs[] = {"x", "y"};
//   loom_function_builder_add_node(b, "mul", "Mul", mul_inputs, 2, NULL,
//                                  NULL);
//   const char* add_inputs[] = {"mul:z:0", "x"};
//   loom_function_builder_add_node(b, "add", "AddV2", add_inputs, 2, NULL,
//                                  NULL);
//   loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT, NULL,
//                                    "add:z:0");
//   loom_function_t* f;
//   LOOM_RETURN_IF_ERROR(loom_function_builder_finish(b, &f));
//   LOOM_RETURN_IF_ERROR(loom_context_add_function(ctx, f));
//   loom_function_release(f);
//
// References to values use TensorFlow's FunctionDef forms: "x" (an input
// of the function, or "x:0"), "node:out:index" (element `index` of output
// argument `out` of the node's op: "mul:z:0"), "node:out" (all of that
// argument) and, among a node's inputs, "^node" (a control input: the node
// runs after `node`).

#ifndef LOOM_FUNCTION_H_
#define LOOM_FUNCTION_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/dtype.h"
#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/shape.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_function_t loom_function_t;
typedef struct loom_function_builder_t loom_function_builder_t;

// Calls nest at most this deep on a thread (a function calling itself
// without end fails with RESOURCE_EXHAUSTED, not a stack overflow).
#define LOOM_FUNCTION_MAX_CALL_DEPTH 100

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

// Starts function `name` (letters, digits, '_', '.', '-', starting with a
// letter or '_').
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_function_builder_create(loom_allocator_t allocator, const char* name,
                             loom_function_builder_t** out_builder);
LOOM_API void loom_function_builder_destroy(loom_function_builder_t* builder);

// Declares an attr of the signature, in the op-definition language
// ("T: {float, double}", "T: type", "n: int = 2"). A call sets it or
// infers it from its inputs; the body reads it through placeholders.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_builder_add_attr(
    loom_function_builder_t* builder, const char* spec);

// Adds an input (one tensor). Its dtype is `dtype`, or, when `type_attr`
// is not NULL (dtype then LOOM_DTYPE_INVALID), the signature's type attr
// of that name. `shape` (may be NULL: unknown; dims may be -1) is checked
// against the tensors passed.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_builder_add_input(
    loom_function_builder_t* builder, const char* name, loom_dtype_t dtype,
    const char* type_attr, const loom_shape_t* shape);

// Adds an output (one tensor), the value `source` refers to.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_builder_add_output(
    loom_function_builder_t* builder, const char* name, loom_dtype_t dtype,
    const char* type_attr, const char* source);

// Adds an input that is a list of tensors (TensorFlow's `xs: N * T` and
// `xs: Tlist`): with `number_attr` (an int attr of the signature, "N"),
// that many tensors of `dtype` or of type attr `type_attr`; with
// `type_list_attr` instead (a list(type) attr of the signature; `dtype`
// LOOM_DTYPE_INVALID, `type_attr` and `number_attr` NULL), one tensor per
// type in the list. A call sets the attr (loom_op_attrs_set_i64,
// TFE_OpSetAttrInt / TFE_OpSetAttrTypeList) or it is inferred from the
// tensors passed for the list; set, it is checked against them. The body
// refers to the whole list as "xs" (a list input of a node) and to element
// i as "xs:i". `element_shape` (may be NULL: unknown; dims may be -1) is
// the shape of every tensor of the list, checked against each tensor
// passed as an input's shape is. INVALID_ARGUMENT for a bad name or type
// combination.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_function_builder_add_input_list(loom_function_builder_t* builder,
                                     const char* name, loom_dtype_t dtype,
                                     const char* type_attr,
                                     const char* number_attr,
                                     const char* type_list_attr,
                                     const loom_shape_t* element_shape);

// Adds an output that is a list of tensors, typed as an input list is:
// `source` refers to a list ("node:out", a list output argument of a node,
// or a list input "xs") whose tensors match the call's length and types.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_function_builder_add_output_list(loom_function_builder_t* builder,
                                      const char* name, loom_dtype_t dtype,
                                      const char* type_attr,
                                      const char* number_attr,
                                      const char* type_list_attr,
                                      const char* source);

// Makes node `node` a control output named `name` (TensorFlow's
// control_ret): it runs at every call though no output reads it (an
// AssignVariableOp, an Assert), in body order with the other stateful
// nodes; a planned call never drops it as dead. finish fails with
// INVALID_ARGUMENT naming the function, the control output and the node
// when no node has that name.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_function_builder_add_control_output(loom_function_builder_t* builder,
                                         const char* name, const char* node);

// Adds node `name` running op `op` (a registered op or a function of the
// library the function is called from) on `inputs` (references, control
// inputs last), with `attrs` (copied; may be NULL) and an optional device
// (NULL or "": the call's). Node names are unique.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_builder_add_node(
    loom_function_builder_t* builder, const char* name, const char* op,
    const char* const* inputs, int32_t num_inputs, const loom_op_attrs_t* attrs,
    const char* device);

// Makes attr `attr_name` of node `node` take the value of the signature's
// attr `placeholder` at each call (TensorFlow's "$T").
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_function_builder_set_node_placeholder(loom_function_builder_t* builder,
                                           const char* node,
                                           const char* attr_name,
                                           const char* placeholder);

// Marks the function stateful (it is executed in order with the thread's
// other stateful ops).
LOOM_API void loom_function_builder_set_stateful(
    loom_function_builder_t* builder, bool stateful);

// Checks the function and makes it: every reference names an input or a
// node (and an index within range), nodes form no cycle, every output has
// a source, types name declared attrs. INVALID_ARGUMENT naming the
// function, the node or output and the reference. Always consumes the
// builder. Ops are looked up when the function is called.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_builder_finish(
    loom_function_builder_t* builder, loom_function_t** out_function);

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

LOOM_API void loom_function_retain(loom_function_t* function);
LOOM_API void loom_function_release(loom_function_t* function);

LOOM_API const char* loom_function_name(const loom_function_t* function);
// The function's signature as an op definition (inputs, outputs, attrs),
// valid while the function lives.
LOOM_API const loom_op_def_t* loom_function_signature(
    const loom_function_t* function);
LOOM_API int32_t loom_function_num_nodes(const loom_function_t* function);

// How calls of a function ran. A call with only the CPU active (no handler
// scope, a synchronous thread, no device or cancellation on the call,
// inputs on the CPU) runs a plan: the body prepared at the first such call
// for its input dtypes and shapes — op definitions, kernels and attrs fixed
// once, dead nodes dropped, identical stateless nodes merged, nodes of
// constants only folded — kept per context and made again when the inputs
// or the op and kernel registries change. Other calls run op by op.
//
// The struct grows at its end: the caller sets struct_size to the size it
// was compiled with, and loom_function_get_stats writes the fields that
// fit in it, so that a caller built against an older, smaller struct keeps
// working (LOOM_FUNCTION_STATS_V1_SIZE, ..._V2_SIZE, ..._V3_SIZE name
// those).
typedef struct loom_function_stats_t {
  size_t struct_size;     // set by the caller: sizeof(loom_function_stats_t)
  int64_t planned_calls;  // calls that ran a plan
  int64_t plans_built;    // plans made
  int32_t planned_nodes;  // nodes the last plan made runs per call
  // Calls offered to a handler as one op (loom/op_handler.h's
  // execute_function_call) that summarises its inputs share a replay per
  // key (the inputs' dtypes, shapes and summaries), where the handler keeps
  // what it derives once: replays made (keys the handler kept data for),
  // and calls taken that found theirs.
  int64_t replays_built;
  int64_t replay_hits;
  // Planned calls that ran the body on plain tensors, each node's kernel
  // specialised for the call's input shapes (every node a synchronous
  // kernel of the cpu handler, every input an available dense tensor).
  int64_t frame_calls;
  // The buffers of those calls' body values: taken over from values that
  // died earlier in the call or in the previous call (or forwarded from an
  // input), or newly allocated by the kernels. In the steady state only
  // the function's outputs allocate.
  int64_t buffers_reused;
  int64_t buffers_allocated;
  // The gradients of calls a gradient tape recorded as one op: each key
  // (the call's input dtypes and shapes, the inputs differentiated and the
  // outputs given a gradient) gets a backward function, traced once (the
  // body again under a tape, and its gradient ops) and then called as a
  // function, planned like any other: backward functions made, and
  // gradients that found theirs.
  int64_t backward_functions_built;
  int64_t backward_function_hits;
} loom_function_stats_t;

// The struct_size of the first version (the plan's counts, up to
// planned_nodes), of the second (up to replay_hits) and of the third (up
// to buffers_allocated); the current one is sizeof(loom_function_stats_t).
#define LOOM_FUNCTION_STATS_V1_SIZE \
  (offsetof(loom_function_stats_t, planned_nodes) + sizeof(int32_t))
#define LOOM_FUNCTION_STATS_V2_SIZE \
  (offsetof(loom_function_stats_t, replay_hits) + sizeof(int64_t))
#define LOOM_FUNCTION_STATS_V3_SIZE \
  (offsetof(loom_function_stats_t, buffers_allocated) + sizeof(int64_t))

// The counts of `function` across the contexts calling it, into the
// fields of *out_stats that lie within its struct_size (set by the
// caller; other bytes are not touched: a caller built against a newer
// Loom finds its newer fields as it left them). INVALID_ARGUMENT for a NULL
// argument or a struct_size below LOOM_FUNCTION_STATS_V1_SIZE (0 included).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_function_get_stats(
    const loom_function_t* function, loom_function_stats_t* out_stats);

//===----------------------------------------------------------------------===//
// A context's function library
//===----------------------------------------------------------------------===//

// Adds `function` (retained) under its name. ALREADY_EXISTS when the
// context has another function of that name, or a registered op has it
// (adding the same function again does nothing).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_add_function(loom_context_t* context, loom_function_t* function);

LOOM_API bool loom_context_has_function(loom_context_t* context,
                                        const char* name);

// The function `name` (a new reference); NOT_FOUND when there is none.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_context_find_function(
    loom_context_t* context, const char* name, loom_function_t** out_function);

// Removes function `name`; ops made for it before keep calling it.
// INVALID_ARGUMENT when there is none (TensorFlow's code).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_remove_function(loom_context_t* context, const char* name);

// Makes the context's function library now: PartitionedCall and
// StatefulPartitionedCall are then known to its ops (adding a function
// does this too).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_context_enable_functions(loom_context_t* context);

LOOM_EXTERN_C_END

#endif  // LOOM_FUNCTION_H_
