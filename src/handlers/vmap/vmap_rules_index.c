// The batching rules of the ops whose integer input indexes one example's
// leading dimensions: GatherNd, ScatterNd and TensorScatterUpdate. The
// batch becomes one more indexed dimension: each index gains its example's
// number in front, and the indexed tensors are [B, ...].

#include <string.h>

#include "handlers/vmap/vmap_internal.h"
#include "tensor/checked_size.h"

// Whether the index input `input` can gain the batch index: int32 or
// int64, rank >= 1 per example, a depth q with q + 1 <= LOOM_MAX_SHAPE_RANK.
static bool indices_supported(const loom__vmap_call_t* call, int32_t input) {
  const loom_tensor_metadata_t* metadata = &call->input_metadata[input];
  return (metadata->dtype == LOOM_DTYPE_INT32 ||
          metadata->dtype == LOOM_DTYPE_INT64) &&
         metadata->shape.rank >= 1 &&
         metadata->shape.rank < LOOM_MAX_SHAPE_RANK;
}

// Index input `input` ([..., q] per example, broadcast when unbatched) as
// [B, ..., q + 1], the example's number first in each index.
static loom_status_t batched_indices(loom__vmap_call_t* call, int32_t input,
                                     loom_tensor_handle_t** out) {
  *out = NULL;
  const loom_tensor_metadata_t* metadata = &call->input_metadata[input];
  const loom_shape_t* shape = &metadata->shape;
  int32_t rank = shape->rank;
  // The example numbers: [B, ..., 1].
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  dims[0] = call->batch_size;
  for (int32_t d = 0; d + 1 < rank; ++d)
    dims[d + 1] = loom_shape_dims(shape)[d];
  dims[rank] = 1;
  int64_t per_example = 1, count = 0, bytes = 0;
  if (!loom__size_product(dims + 1, rank - 1, &per_example) ||
      !loom__size_mul(per_example, call->batch_size, &count) ||
      !loom__size_mul(count, (int64_t)sizeof(int64_t), &bytes)) {
    return loom__size_overflow_error(
        call->op_name, "indices",
        "the batch of %lld examples of %lld indices (under vmap)",
        (long long)call->batch_size, (long long)per_example);
  }
  loom_allocator_t allocator = loom_allocator_default();
  int64_t* numbers = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, (size_t)(count ? count : 1) * sizeof(int64_t),
      (void**)&numbers));
  for (int64_t i = 0; i < count; ++i) numbers[i] = i / per_example;
  loom_tensor_handle_t* parts[3] = {NULL, NULL, NULL};
  loom_status_t status = loom__vmap_int_tensor(
      call->context, metadata->dtype, numbers, dims, rank + 1, &parts[0]);
  loom_allocator_free(allocator, numbers);
  if (!status) status = loom__vmap_materialized(call, input, &parts[1]);
  int64_t axis = rank;
  if (!status) {
    status = loom__vmap_int_vector(call->context, LOOM_DTYPE_INT32, &axis, 1,
                                   true, &parts[2]);
  }
  if (!status) {
    status = loom__vmap_run(call->context, "ConcatV2", parts, 3, NULL, NULL, 0,
                            out, 1);
  }
  loom__grad_release_all(parts, 3);
  return status;
}

// GatherNd (params, indices). Unbatched indices gather from params with the
// batch moved after the indexed dimensions (the result has it after the
// index dimensions); batched indices gain the example's number.
loom_status_t loom__vmap_rule_gather_nd(loom__vmap_call_t* call,
                                        bool* out_fallback) {
  const loom_shape_t* params = &call->input_metadata[0].shape;
  const loom_shape_t* indices = &call->input_metadata[1].shape;
  if (!indices_supported(call, 1) ||
      loom_shape_dims(indices)[indices->rank - 1] > params->rank) {
    *out_fallback = true;  // the op's own error, or int16 indices
    return loom_ok_status();
  }
  int64_t depth = loom_shape_dims(indices)[indices->rank - 1];
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  if (!loom__vmap_batched(call, 1)) {
    LOOM_RETURN_IF_ERROR(loom__vmap_move_to(call->context, &call->inputs[0],
                                            params->rank, depth, &inputs[0]));
    loom_tensor_handle_retain(call->inputs[1].value);
    inputs[1] = call->inputs[1].value;
    LOOM_RETURN_IF_ERROR(loom__vmap_run_into_outputs(call, "GatherNd", inputs,
                                                     2, true, NULL, 0));
    call->outputs[0].axis = indices->rank - 1;
    return loom_ok_status();
  }
  loom_status_t status = loom__vmap_materialized(call, 0, &inputs[0]);
  if (!status) status = batched_indices(call, 1, &inputs[1]);
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "GatherNd", inputs, 2, true, NULL,
                                     0);
}

// ScatterNd (indices, updates, shape) and TensorScatterUpdate (tensor,
// indices, updates): the indices gain the example's number, the updates
// and the tensor are [B, ...], the shape gains B in front. A batched shape
// takes the fallback.
loom_status_t loom__vmap_rule_scatter_nd(loom__vmap_call_t* call,
                                         bool* out_fallback) {
  bool scatter = strcmp(call->op_name, "ScatterNd") == 0;
  int32_t index_input = scatter ? 0 : 1;
  if (call->num_inputs != 3 || !indices_supported(call, index_input) ||
      (scatter && !loom__vmap_require_unbatched(call, 3u, out_fallback))) {
    *out_fallback = true;
    return loom_ok_status();
  }
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < 3 && !status; ++i) {
    if (i == index_input) {
      status = batched_indices(call, i, &inputs[i]);
    } else if (scatter && i == 2) {
      int64_t dims[LOOM_MAX_SHAPE_RANK];
      int32_t count = 0;
      status = loom__vmap_read_ints(call->context, call->inputs[2].value,
                                    dims + 1, LOOM_MAX_SHAPE_RANK - 1, &count);
      dims[0] = call->batch_size;
      if (!status) {
        status =
            loom__vmap_int_vector(call->context, call->input_metadata[2].dtype,
                                  dims, count + 1, false, &inputs[2]);
      }
    } else {
      status = loom__vmap_materialized(call, i, &inputs[i]);
    }
  }
  if (status) {
    loom__grad_release_all(inputs, 3);
    return status;
  }
  return loom__vmap_run_into_outputs(call, call->op_name, inputs, 3, true, NULL,
                                     0);
}
