// Forward mode for ops that have a gradient function but no JVP function:
// the double-transpose trick. The gradient function maps output gradients
// u to input gradients VJP(u) = J^T u, linearly in u; so for tangents v of
// the inputs, J v is the gradient with respect to u of <VJP(u), v>. A tape
// watching a dummy u (zeros: the value does not matter) records the
// gradient function, and its backward pass, seeded with v, gives J v.
// Every op whose gradient function is itself differentiable works in
// forward mode this way, at the cost of about two backward passes.

#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/grad_ops.h"
#include "handlers/forward/forward_internal.h"

enum { kMaxArgs = 64 };

loom_status_t loom__forward_jvp_by_transposition(
    const loom_gradient_def_t* gradient, loom_gradient_context_t* context,
    loom_tensor_handle_t* const* input_tangents,
    loom_tensor_handle_t** output_tangents) {
  int32_t n = loom_gradient_context_num_inputs(context);
  int32_t m = loom_gradient_context_num_outputs(context);
  for (int32_t k = 0; k < m; ++k) output_tangents[k] = NULL;
  if (!gradient || !gradient->fn) return loom_ok_status();
  if (n > kMaxArgs || m > kMaxArgs) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "forward mode by transposition: %s has more than "
                            "%d inputs or outputs",
                            loom_gradient_context_op_name(context), kMaxArgs);
  }
  loom_context_t* eager = loom_gradient_context_eager(context);
  loom_tensor_handle_t* upstream[kMaxArgs] = {NULL};
  loom_tensor_handle_t* sources[kMaxArgs] = {NULL};
  int32_t source_output[kMaxArgs];
  loom_tensor_handle_t* vjp[kMaxArgs] = {NULL};
  loom_tensor_handle_t* targets[kMaxArgs] = {NULL};
  loom_tensor_handle_t* seeds[kMaxArgs] = {NULL};
  loom_tensor_handle_t* results[kMaxArgs] = {NULL};
  int32_t num_sources = 0;
  loom_status_t status = loom_ok_status();
  for (int32_t k = 0; k < m && !status; ++k) {
    const loom_tensor_metadata_t* metadata =
        loom_gradient_context_output_metadata(context, k);
    if (!loom_dtype_is_floating(metadata->dtype)) continue;
    status = loom__grad_filled(context, metadata, 0.0, &upstream[k]);
    if (!status) {
      source_output[num_sources] = k;
      sources[num_sources++] = upstream[k];
    }
  }
  loom_op_handler_t* tape = NULL;
  if (!status && num_sources > 0) {
    status = loom_tape_create(eager, NULL, &tape);
  }
  bool entered = false;
  if (tape) {
    status = loom_context_enter_scope(eager, tape);
    entered = !status;
  }
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    status = loom_tape_watch(tape, sources[s]);
  }
  if (!status && tape) {
    status = gradient->fn(context, upstream, vjp, gradient->user_data);
  }
  if (entered) {
    loom_status_t exit_status = loom_context_exit_scope(eager);
    if (!status) {
      status = exit_status;
    } else {
      loom_status_free(exit_status);
    }
  }
  int32_t num_targets = 0;
  for (int32_t j = 0; j < n && !status; ++j) {
    if (!vjp[j] || !input_tangents[j]) continue;
    targets[num_targets] = vjp[j];
    seeds[num_targets++] = input_tangents[j];
  }
  if (!status && num_targets > 0) {
    status =
        loom_tape_gradient(tape, targets, num_targets, sources, num_sources,
                           seeds, LOOM_UNCONNECTED_NONE, results);
  }
  for (int32_t s = 0; s < num_sources && !status; ++s) {
    output_tangents[source_output[s]] = results[s];
    results[s] = NULL;
  }
  loom__grad_release_all(results, num_sources);
  loom__grad_release_all(vjp, n);
  loom__grad_release_all(upstream, m);
  loom_op_handler_release(tape);
  if (status) {
    loom__grad_release_all(output_tangents, m);
    status = loom_status_annotate(status, "transposing the gradient of %s",
                                  loom_gradient_context_op_name(context));
  }
  return status;
}
