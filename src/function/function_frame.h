// A plan's frame (function_frame.c): the body specialised for the input
// dtypes and shapes of one call signature, run on plain host tensors. Each
// node holds its cpu kernel, specialised once (the kernel and its complete
// attrs, the result's metadata when the op's metadata function fixes it);
// its values live in a frame array of tensors, not in eager handles; a
// value's last reader may forward its buffer, and a value that dies leaves
// its tensor to the next value of the same dtype and shape, in this call or
// the next, so that a call in the steady state allocates for its results
// only (a node whose kernel has a direct entry computes into the kept
// tensor itself, no reference count changing). A node the frame cannot
// run itself (a nested call, a native op, a kernel without a synchronous
// entry) runs as the plan's eager op, on handles over the frame's tensors:
// frames mix the two. A body with a node placed on a device, or a value
// whose metadata the first call did not know, has no frame; the plan runs
// it op by op.

#ifndef LOOM_FUNCTION_FUNCTION_FRAME_H_
#define LOOM_FUNCTION_FUNCTION_FRAME_H_

#include "frontend/eager_op_internal.h"
#include "function/function_internal.h"

typedef struct loom__function_frame_t loom__function_frame_t;

// A node of the plan, as the frame takes it (borrowed for the create).
typedef struct loom__function_frame_node_desc_t {
  loom_eager_op_t* op;   // its op and complete attrs
  const char* name;      // the body node's, for messages
  const int32_t* slots;  // its kernel inputs, flattened
  int32_t num_slots;
  int32_t first;  // its first result slot
  int32_t count;
} loom__function_frame_node_desc_t;

typedef struct loom__function_frame_desc_t {
  loom_context_t* context;
  const char* function;  // its name, for messages
  int32_t num_inputs;    // slots [0, num_inputs) are the call's inputs
  int32_t num_values;
  // Per slot: its metadata in the call the plan was made from, and the
  // handle the plan keeps for it (a folded constant), or NULL.
  const loom_tensor_metadata_t* metadata;
  loom_tensor_handle_t* const* constants;
  const loom__function_frame_node_desc_t* nodes;
  int32_t num_nodes;
  const int32_t* outputs;  // a slot per function output
  int32_t num_outputs;
  // Runs node k as an eager op: its inputs are values[slot] for its input
  // slots (handles the frame sets), its results go to values[first + j]
  // (new references). `values` has a slot per value.
  loom_status_t (*run_eager)(void* state, int32_t k);
  void* eager_state;
  loom_tensor_handle_t** values;
} loom__function_frame_desc_t;

// The frame of `desc`, or NULL in *out_frame when a node cannot run in one
// (then the status is OK). Errors only for allocation.
LOOM_MUST_USE_RESULT loom_status_t
loom__function_frame_create(const loom__function_frame_desc_t* desc,
                            loom__function_frame_t** out_frame);

void loom__function_frame_destroy(loom__function_frame_t* frame);

// Buffers of a frame's results: taken over from dead values (of this
// call or the previous one) or forwarded from inputs, or allocated by the
// kernels.
typedef struct loom__function_frame_counts_t {
  int64_t reused;
  int64_t allocated;
} loom__function_frame_counts_t;

// Runs `frame` on `inputs` (the call's, whose metadata the plan matched).
// *out_ran is false, nothing done, when an input is not an available dense
// host tensor or the host is cancelled: the caller runs the body op by op.
// Otherwise the results (new references) or the first failure, naming the
// function and the node; `counts` grows by the call's buffers.
LOOM_MUST_USE_RESULT loom_status_t loom__function_frame_run(
    loom__function_frame_t* frame, loom_tensor_handle_t* const* inputs,
    loom_tensor_handle_t** results, loom__function_frame_counts_t* counts,
    bool* out_ran);

#endif  // LOOM_FUNCTION_FUNCTION_FRAME_H_
