// Calls on a vmap as batched functions (vmap_control_flow.c): a call of a
// stateless function first asks the builder installed here — the trace
// layer's (handlers/trace/trace_call_batch.c), which can make functions —
// to run it as one function over the whole batch: the body batched once by
// the vmap's rules into a new function (the design's replay into a new
// function), made once per key and kept in the context's library, then
// called planned on the outer handler. Otherwise (no builder, or a body it
// cannot batch without the per-example fallback) the body runs op by op
// on the vmap.

#ifndef LOOM_HANDLERS_VMAP_VMAP_CALL_BATCH_H_
#define LOOM_HANDLERS_VMAP_VMAP_CALL_BATCH_H_

#include <stdbool.h>

#include "loom/op_handler.h"
#include "loom/vmap.h"

// Runs a call of `function_name` over a batch in the current scope (the
// vmap's outer handler's): inputs[0, n) are batched tensors whose
// dimension axes[i] is the batch (LOOM_VMAP_UNBATCHED: none); outputs[0,
// m) receive new references to the batched outputs, batch first.
// `options` are the vmap's (batch size known). *out_done false: the
// builder leaves the call (nothing written).
typedef loom_status_t (*loom__vmap_call_batch_fn_t)(
    loom_context_t* context, const char* function_name,
    const loom_vmap_options_t* options, int32_t n,
    loom_tensor_handle_t* const* inputs, const int64_t* axes, int32_t m,
    loom_tensor_handle_t** outputs, bool* out_done);

// An int attr of a While (Loom's own: a leading '_', as TensorFlow's
// internal attrs): loop variables from this index on are not masked when a
// vmap runs the loop batched. They take the body's value for every
// example, those whose loop ended too, so that they may change shape (the
// stacks of a While's gradient, which grow by one row per iteration of the
// longest example).
#define LOOM_VMAP_UNMASKED_FROM_ATTR "_vmap_unmasked_from"

// Installs `fn` for the process.
void loom__vmap_set_call_batch(loom__vmap_call_batch_fn_t fn);

// Makes `vmap` (and its merges) run the calls it sees op by op: what
// batching a call's body into a function needs.
void loom__vmap_leave_calls(loom_op_handler_t* vmap);

// How many ops took the per-example fallback on `vmap` and its merges.
int64_t loom__vmap_total_fallbacks(const loom_op_handler_t* vmap);

#endif  // LOOM_HANDLERS_VMAP_VMAP_CALL_BATCH_H_
