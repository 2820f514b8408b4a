// The per-example fallback for ops without a batching rule: each batched
// input is split into its examples (one Unpack), the op runs once per
// example on the outer handler, and each output's examples are stacked
// (one Pack). Correct for any op, and B + 2 ops or so per op: the vmap
// reports each op name that takes it (loom_vmap_fallback_count).

#include "handlers/vmap/vmap_internal.h"
#include "tensor/checked_size.h"

loom_status_t loom__vmap_fallback(loom__vmap_call_t* call) {
  int64_t b = call->batch_size;
  int32_t n = call->num_inputs;
  int32_t m = call->num_outputs;
  if (b <= 0) {
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "vmap: %s has no batching rule, and its per-example fallback cannot "
        "run on a batch of %lld examples (it needs one example to run on)",
        call->op_name, (long long)b);
  }
  if (m == 0) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "vmap: %s has no batching rule and no results; "
                            "running it once per example is not supported",
                            call->op_name);
  }
  // slices[i * b + e]: example e of input i (NULL for unbatched inputs);
  // results[k * b + e]: output k of example e.
  int64_t slices_needed = 0, results_needed = 0;
  if (!loom__size_mul(n, b, &slices_needed) ||
      !loom__size_mul(m, b, &results_needed) || slices_needed > INT32_MAX ||
      results_needed > INT32_MAX) {
    return loom__size_overflow_error(
        call->op_name, "batch_size",
        "the per-example fallback of %d inputs and %d outputs over %lld "
        "examples needs too many tensors",
        n, m, (long long)b);
  }
  size_t slice_count = (size_t)slices_needed;
  size_t result_count = (size_t)results_needed;
  loom_allocator_t allocator = loom_allocator_default();
  loom__handle_vector_t slices, results, example;
  loom__handle_vector_initialize(&slices);
  loom__handle_vector_initialize(&results);
  loom__handle_vector_initialize(&example);
  loom_status_t status =
      loom__handle_vector_resize(&slices, allocator, slice_count + 1);
  if (!status) {
    status = loom__handle_vector_resize(&results, allocator, result_count);
  }
  if (!status) {
    status = loom__handle_vector_resize(&example, allocator, (size_t)n + 1);
  }
  loom_tensor_handle_t** slice = loom__handle_vector_data(&slices);
  loom_tensor_handle_t** result = loom__handle_vector_data(&results);
  loom_tensor_handle_t** args = loom__handle_vector_data(&example);
  for (int32_t i = 0; i < n && !status; ++i) {
    if (call->inputs[i].axis == LOOM_VMAP_UNBATCHED) continue;
    loom_tensor_handle_t* front = NULL;
    status = loom__vmap_to_front(call, i, &front);
    if (status) break;
    status = loom__vmap_run(
        call->context, "Unpack", &front, 1, NULL,
        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("num", b), LOOM_GRAD_INT("axis", 0)),
        slice + (size_t)i * (size_t)b, (int32_t)b);
    loom_tensor_handle_release(front);
  }
  for (int64_t e = 0; e < b && !status; ++e) {
    for (int32_t i = 0; i < n; ++i) {
      args[i] = call->inputs[i].axis == LOOM_VMAP_UNBATCHED
                    ? call->inputs[i].value
                    : slice[(size_t)i * (size_t)b + (size_t)e];
    }
    loom_tensor_handle_t** outs = NULL;
    // The outputs of one example go to a scratch range, then to result.
    loom__handle_vector_t scratch;
    loom__handle_vector_initialize(&scratch);
    status = loom__handle_vector_resize(&scratch, allocator, (size_t)m);
    if (!status) {
      outs = loom__handle_vector_data(&scratch);
      status = loom__vmap_run(call->context, call->op_name, args, n,
                              call->attrs, NULL, 0, outs, m);
    }
    for (int32_t k = 0; k < m && !status; ++k) {
      result[(size_t)k * (size_t)b + (size_t)e] = outs[k];
    }
    loom__handle_vector_deinitialize(&scratch, allocator);
  }
  for (int32_t k = 0; k < m && !status; ++k) {
    status = loom__vmap_run(
        call->context, "Pack", result + (size_t)k * (size_t)b, (int32_t)b, NULL,
        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("axis", 0)), &call->outputs[k].value, 1);
    call->outputs[k].axis = 0;
  }
  if (status) {
    for (int32_t k = 0; k < m; ++k) {
      loom_tensor_handle_release(call->outputs[k].value);
      call->outputs[k].value = NULL;
    }
  }
  loom__grad_release_all(slice, (int32_t)slice_count);
  loom__grad_release_all(result, (int32_t)result_count);
  loom__handle_vector_deinitialize(&slices, allocator);
  loom__handle_vector_deinitialize(&results, allocator);
  loom__handle_vector_deinitialize(&example, allocator);
  return status;
}
