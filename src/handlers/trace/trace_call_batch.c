// The batched functions of calls on a vmap (handlers/vmap/vmap_call_batch.h):
// a call of a stateless function on a vmap runs a function of its own,
// traced once per key and kept in the context's library
// (function/function_derived.h) as "<f>_batched_<k>", then called like any
// function — planned, on plain tensors — at every later such call.
//
// The key is what the trace specialises on: the batch size, the vmap's
// randomness option, and per input its dtype and shape (the batched
// tensor's) and its batch dimension (or none). The body is the call again
// under a vmap of its own that leaves calls (so each op of the body is
// batched by its rule), entered at the inputs' batch dimensions; its
// outputs leave batch first (an unbatched one broadcast).
//
// A body whose batching takes the per-example fallback, or cannot be
// traced, is left to the vmap (op by op, the fallback reported on it); the
// library remembers that, so the trace is tried once per key.

#include <string.h>

#include "handlers/trace/trace_derived.h"
#include "handlers/vmap/vmap_call_batch.h"
#include "loom/trace.h"

typedef struct batch_request_t {
  loom_context_t* eager;
  const char* function;
  const loom_vmap_options_t* options;
  int32_t n, m;
  const loom_tensor_metadata_t* inputs;  // [n], the batched tensors'
  const int64_t* axes;                   // [n]
} batch_request_t;

// 'V', the batch size and randomness, the number of inputs and outputs,
// then per input its batch dimension, dtype and shape.
static void write_key(const void* request, loom__derived_key_t* w) {
  const batch_request_t* r = request;
  loom__derived_key_put(w, "V", 1);
  int64_t head[4] = {r->options->batch_size, (int64_t)r->options->randomness,
                     r->n, r->m};
  loom__derived_key_put(w, head, sizeof(head));
  for (int32_t i = 0; i < r->n; ++i) {
    loom__derived_key_put(w, &r->axes[i], sizeof(r->axes[i]));
    loom__derived_key_put_metadata(w, true, &r->inputs[i]);
  }
}

// The body, in the trace's scope: params[n] are the batched inputs; outs[m]
// receive the batched outputs.
static loom_status_t trace_body(const void* request,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** outs,
                                int32_t* out_count) {
  const batch_request_t* r = request;
  // views[n], ys[m]: owned
  loom_tensor_handle_t** all = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*all) * (size_t)(r->n + r->m + 1),
      (void**)&all));
  loom_tensor_handle_t** views = all;
  loom_tensor_handle_t** ys = all + r->n;
  loom_op_handler_t* vmap = NULL;
  loom_status_t status =
      loom_vmap_create_with_options(r->eager, r->options, &vmap);
  if (!status) {
    loom__vmap_leave_calls(vmap);
    status = loom_context_enter_scope(r->eager, vmap);
  }
  bool entered = !status;
  for (int32_t i = 0; !status && i < r->n; ++i) {
    if (r->axes[i] == LOOM_VMAP_UNBATCHED) {
      loom_tensor_handle_retain(params[i]);
      views[i] = params[i];
    } else {
      status = loom_vmap_in(vmap, params[i], r->axes[i], &views[i]);
    }
  }
  loom_function_t* f = NULL;
  if (!status) status = loom_context_find_function(r->eager, r->function, &f);
  if (!status) status = loom__derived_call(r->eager, f, views, r->n, ys, r->m);
  loom_function_release(f);
  for (int32_t k = 0; !status && k < r->m; ++k) {
    status = loom_vmap_out(vmap, ys[k], 0, &outs[k]);
  }
  if (!status) *out_count = r->m;
  // A body that needs the per-example fallback runs op by op instead, so
  // that the caller's vmap reports it.
  if (!status && loom__vmap_total_fallbacks(vmap) > 0) {
    status = loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "function '%s' takes the per-example fallback "
                              "under vmap",
                              r->function);
  }
  if (entered) status = loom__derived_exit_scope(r->eager, status);
  loom_op_handler_release(vmap);
  for (int32_t i = 0; i < r->n + r->m; ++i) loom_tensor_handle_release(all[i]);
  loom_allocator_free(loom_allocator_system(), all);
  return status;
}

// Traces the batched function `name` of the request.
static loom_status_t trace_batched(const void* request, const char* name,
                                   loom_function_t** out_function) {
  const batch_request_t* r = request;
  return loom__derived_trace(r->eager, name, r->inputs, r->n, r->m, trace_body,
                             r, out_function);
}

static loom_status_t call_batched(loom_context_t* context,
                                  const char* function_name,
                                  const loom_vmap_options_t* options, int32_t n,
                                  loom_tensor_handle_t* const* inputs,
                                  const int64_t* axes, int32_t m,
                                  loom_tensor_handle_t** outputs,
                                  bool* out_done) {
  *out_done = false;
  loom_tensor_metadata_t* metadata = NULL;
  LOOM_RETURN_IF_ERROR(loom__derived_metadata(inputs, n, &metadata));
  batch_request_t r = {
      .eager = context,
      .function = function_name,
      .options = options,
      .n = n,
      .m = m,
      .inputs = metadata,
      .axes = axes,
  };
  loom__derived_builder_t builder = {&r, write_key, trace_batched};
  loom_status_t status =
      loom__derived_run(context, function_name, "batched", &builder, inputs, n,
                        outputs, m, out_done);
  loom_allocator_free(loom_allocator_system(), metadata);
  return status;
}

void loom__trace_install_call_batch(void) {
  loom__vmap_set_call_batch(call_batched);
}
