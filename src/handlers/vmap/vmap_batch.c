// Moving, padding and broadcasting batch dimensions, and running ops on the
// outer handler: what the batching rules and the fallback are made of.

#include <string.h>

#include "frontend/passthrough_handler.h"
#include "handlers/vmap/vmap_internal.h"
#include "loom/eager.h"
#include "tensor/checked_size.h"

loom_status_t loom__vmap_run(loom_context_t* context, const char* op_name,
                             loom_tensor_handle_t* const* inputs,
                             int32_t num_inputs, const loom_op_attrs_t* attrs,
                             const loom__grad_attr_t* extra, int32_t num_extra,
                             loom_tensor_handle_t** results,
                             int32_t num_results) {
  for (int32_t k = 0; k < num_results; ++k) results[k] = NULL;
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_acquire(context, op_name, &op));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < num_inputs && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  loom_op_attrs_t* op_attrs = loom_eager_op_attrs(op);
  for (int32_t i = 0; i < num_extra && !status; ++i) {
    status = loom_op_attrs_set_value(op_attrs, extra[i].name, &extra[i].value);
  }
  if (!status && attrs) status = loom_eager_op_add_attrs(op, attrs);
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, results, num_results, &count);
  if (!status && count != num_results) {
    loom__grad_release_all(results, count);
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "vmap: %s gave %d results, expected %d", op_name,
                              count, num_results);
  }
  loom_eager_op_recycle(op);
  return status;
}

loom_status_t loom__vmap_metadata(loom_tensor_handle_t* handle,
                                  loom_tensor_metadata_t* out) {
  if (loom_tensor_handle_metadata_available(handle)) {
    return loom_tensor_handle_metadata(handle, out);
  }
  return loom_tensor_handle_wait_metadata(handle, out);
}

loom_status_t loom__vmap_int_tensor(loom_context_t* context, loom_dtype_t dtype,
                                    const int64_t* values, const int64_t* dims,
                                    int32_t rank, loom_tensor_handle_t** out) {
  *out = NULL;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, rank));
  dtype = dtype == LOOM_DTYPE_INT64 ? LOOM_DTYPE_INT64 : LOOM_DTYPE_INT32;
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &shape, &tensor));
  void* data = loom_tensor_data(tensor);
  int64_t count = loom_shape_num_elements(&shape);
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == LOOM_DTYPE_INT64) {
      ((int64_t*)data)[i] = values[i];
    } else {
      ((int32_t*)data)[i] = (int32_t)values[i];
    }
  }
  loom_status_t status = loom_context_new_handle(context, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

loom_status_t loom__vmap_int_vector(loom_context_t* context, loom_dtype_t dtype,
                                    const int64_t* values, int32_t count,
                                    bool scalar, loom_tensor_handle_t** out) {
  int64_t dims[1] = {count};
  return loom__vmap_int_tensor(context, dtype, values, dims, scalar ? 0 : 1,
                               out);
}

loom_status_t loom__vmap_read_ints(loom_context_t* context,
                                   loom_tensor_handle_t* handle,
                                   int64_t* values, int32_t capacity,
                                   int32_t* out_count) {
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_resolve(context, handle, &tensor));
  loom_tensor_t* dense = NULL;
  loom_status_t status =
      loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense);
  loom_tensor_release(tensor);
  if (status) return status;
  int64_t n = loom_tensor_num_elements(dense);
  loom_dtype_t dtype = loom_tensor_dtype(dense);
  if (dtype != LOOM_DTYPE_INT32 && dtype != LOOM_DTYPE_INT64) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "vmap: expected an int32 or int64 tensor, got %s",
                              loom_dtype_name(dtype));
  } else if (n > capacity) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "vmap: expected at most %d values, got %lld",
                              capacity, (long long)n);
  }
  for (int64_t i = 0; i < n && !status; ++i) {
    const void* data = loom_tensor_data(dense);
    values[i] = dtype == LOOM_DTYPE_INT64 ? ((const int64_t*)data)[i]
                                          : ((const int32_t*)data)[i];
  }
  if (!status) *out_count = (int32_t)n;
  loom_tensor_release(dense);
  return status;
}

loom_status_t loom__vmap_reshape(loom_context_t* context,
                                 loom_tensor_handle_t* value,
                                 const int64_t* dims, int32_t rank,
                                 loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* shape = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(context, LOOM_DTYPE_INT32, dims,
                                             rank, false, &shape));
  loom_tensor_handle_t* inputs[2] = {value, shape};
  loom_status_t status =
      loom__vmap_run(context, "Reshape", inputs, 2, NULL, NULL, 0, out, 1);
  loom_tensor_handle_release(shape);
  return status;
}

// Transpose of `value` (of `rank` dimensions) by perm[0, rank).
static loom_status_t transpose(loom_context_t* context,
                               loom_tensor_handle_t* value, const int64_t* perm,
                               int32_t rank, loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* permutation = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(context, LOOM_DTYPE_INT32, perm,
                                             rank, false, &permutation));
  loom_tensor_handle_t* inputs[2] = {value, permutation};
  loom_status_t status =
      loom__vmap_run(context, "Transpose", inputs, 2, NULL, NULL, 0, out, 1);
  loom_tensor_handle_release(permutation);
  return status;
}

loom_status_t loom__vmap_move_front(loom_context_t* context,
                                    const loom__vmap_value_t* value,
                                    int32_t rank, loom_tensor_handle_t** out) {
  if (value->axis == 0) {
    loom_tensor_handle_retain(value->value);
    *out = value->value;
    return loom_ok_status();
  }
  int64_t perm[LOOM_MAX_SHAPE_RANK];
  perm[0] = value->axis;
  for (int32_t d = 0, k = 1; d <= rank; ++d) {
    if (d != value->axis) perm[k++] = d;
  }
  return transpose(context, value->value, perm, rank + 1, out);
}

loom_status_t loom__vmap_move_from_front(loom_context_t* context,
                                         loom_tensor_handle_t* value,
                                         int32_t rank, int64_t axis,
                                         loom_tensor_handle_t** out) {
  if (axis == 0) {
    loom_tensor_handle_retain(value);
    *out = value;
    return loom_ok_status();
  }
  // Dimension d of the result is dimension perm[d] of `value`.
  int64_t perm[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0, k = 1; d <= rank; ++d) {
    perm[d] = d == axis ? 0 : k++;
  }
  return transpose(context, value, perm, rank + 1, out);
}

loom_status_t loom__vmap_to_front(loom__vmap_call_t* call, int32_t input,
                                  loom_tensor_handle_t** out) {
  return loom__vmap_move_front(call->context, &call->inputs[input],
                               call->input_metadata[input].shape.rank, out);
}

loom_status_t loom__vmap_padded(loom__vmap_call_t* call, int32_t input,
                                int32_t rank, loom_tensor_handle_t** out) {
  const loom__vmap_value_t* value = &call->inputs[input];
  const loom_shape_t* shape = &call->input_metadata[input].shape;
  if (value->axis == LOOM_VMAP_UNBATCHED) {
    loom_tensor_handle_retain(value->value);
    *out = value->value;
    return loom_ok_status();
  }
  loom_tensor_handle_t* front = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_to_front(call, input, &front));
  if (shape->rank >= rank) {
    *out = front;
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t k = 0;
  dims[k++] = call->batch_size;
  for (int32_t d = shape->rank; d < rank; ++d) dims[k++] = 1;
  const int64_t* in = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) dims[k++] = in[d];
  loom_status_t status = loom__vmap_reshape(call->context, front, dims, k, out);
  loom_tensor_handle_release(front);
  return status;
}

// `value` with a batch of `batch_size` copies in front when its shape has
// unknown dimensions (a symbolic value in a trace), where BroadcastTo would
// need them: ExpandDims then Tile, whose multiples need only the rank.
static loom_status_t broadcast_by_tile(loom_context_t* context,
                                       loom_tensor_handle_t* value,
                                       int32_t rank, int64_t batch_size,
                                       loom_tensor_handle_t** out) {
  int64_t multiples[LOOM_MAX_SHAPE_RANK];
  multiples[0] = batch_size;
  for (int32_t d = 0; d < rank; ++d) multiples[d + 1] = 1;
  const int64_t zero = 0;
  loom_tensor_handle_t *axis = NULL, *times = NULL, *expanded = NULL;
  loom_status_t status =
      loom__vmap_int_vector(context, LOOM_DTYPE_INT32, &zero, 1, true, &axis);
  if (!status) {
    status = loom__vmap_int_vector(context, LOOM_DTYPE_INT32, multiples,
                                   rank + 1, false, &times);
  }
  if (!status) {
    loom_tensor_handle_t* inputs[2] = {value, axis};
    status = loom__vmap_run(context, "ExpandDims", inputs, 2, NULL, NULL, 0,
                            &expanded, 1);
  }
  if (!status) {
    loom_tensor_handle_t* inputs[2] = {expanded, times};
    status = loom__vmap_run(context, "Tile", inputs, 2, NULL, NULL, 0, out, 1);
  }
  loom_tensor_handle_t* all[3] = {axis, times, expanded};
  loom__grad_release_all(all, 3);
  return status;
}

loom_status_t loom__vmap_broadcast(loom_context_t* context,
                                   loom_tensor_handle_t* value,
                                   const loom_shape_t* shape,
                                   int64_t batch_size,
                                   loom_tensor_handle_t** out) {
  *out = NULL;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  dims[0] = batch_size;
  const int64_t* in = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (in[d] < 0) {
      return broadcast_by_tile(context, value, shape->rank, batch_size, out);
    }
    dims[d + 1] = in[d];
  }
  loom_tensor_handle_t* target = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(context, LOOM_DTYPE_INT32, dims,
                                             shape->rank + 1, false, &target));
  loom_tensor_handle_t* inputs[2] = {value, target};
  loom_status_t status =
      loom__vmap_run(context, "BroadcastTo", inputs, 2, NULL, NULL, 0, out, 1);
  loom_tensor_handle_release(target);
  return status;
}

loom_status_t loom__vmap_materialized(loom__vmap_call_t* call, int32_t input,
                                      loom_tensor_handle_t** out) {
  if (call->inputs[input].axis != LOOM_VMAP_UNBATCHED) {
    return loom__vmap_to_front(call, input, out);
  }
  return loom__vmap_broadcast(call->context, call->inputs[input].value,
                              &call->input_metadata[input].shape,
                              call->batch_size, out);
}

//===----------------------------------------------------------------------===//
// Rule helpers
//===----------------------------------------------------------------------===//

// The largest per-example rank of the inputs.
int32_t loom__vmap_max_rank(const loom__vmap_call_t* call) {
  int32_t rank = 0;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    if (call->input_metadata[i].shape.rank > rank) {
      rank = call->input_metadata[i].shape.rank;
    }
  }
  return rank;
}

bool loom__vmap_batched(const loom__vmap_call_t* call, int32_t input) {
  return call->inputs[input].axis != LOOM_VMAP_UNBATCHED;
}

// Runs `op_name` on inputs[0, n) (owned: released here) with the op's
// attributes after `extra`, into every output, batched first.
loom_status_t loom__vmap_run_into_outputs(loom__vmap_call_t* call,
                                          const char* op_name,
                                          loom_tensor_handle_t** inputs,
                                          int32_t n, bool with_attrs,
                                          const loom__grad_attr_t* extra,
                                          int32_t num_extra) {
  loom__handle_vector_t results;
  loom__handle_vector_initialize(&results);
  loom_allocator_t allocator = loom_allocator_default();
  loom_status_t status = loom__handle_vector_resize(
      &results, allocator, (size_t)(call->num_outputs ? call->num_outputs : 1));
  // The op itself with its attributes: its prepared op on the outer
  // handler runs it, without an eager op.
  bool done = false;
  if (!status && op_name == call->op_name && with_attrs && num_extra == 0 &&
      call->outer_op) {
    status = loom__passthrough_run_outer_op(
        call->context, call->outer_op, inputs, n, call->attrs,
        loom__handle_vector_data(&results), call->num_outputs, &done);
  }
  if (!status && !done) {
    status =
        loom__vmap_run(call->context, op_name, inputs, n,
                       with_attrs ? call->attrs : NULL, extra, num_extra,
                       loom__handle_vector_data(&results), call->num_outputs);
  }
  for (int32_t k = 0; k < call->num_outputs && !status; ++k) {
    call->outputs[k].value = loom__handle_vector_data(&results)[k];
    call->outputs[k].axis = 0;
  }
  loom__handle_vector_deinitialize(&results, allocator);
  loom__grad_release_all(inputs, n);
  return status;
}

loom_status_t loom__vmap_prepare_all(loom__vmap_call_t* call,
                                     loom__vmap_prepare_fn_t prepare,
                                     int32_t rank,
                                     loom_tensor_handle_t** inputs) {
  for (int32_t i = 0; i < call->num_inputs; ++i) inputs[i] = NULL;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    loom_status_t status = prepare(call, i, rank, &inputs[i]);
    if (status) {
      loom__grad_release_all(inputs, i);
      return status;
    }
  }
  return loom_ok_status();
}

loom_status_t loom__vmap_materialized_input(loom__vmap_call_t* call,
                                            int32_t input, int32_t rank,
                                            loom_tensor_handle_t** out) {
  (void)rank;
  return loom__vmap_materialized(call, input, out);
}

// Runs the op itself on the inputs after `prepare`.
loom_status_t loom__vmap_same_op(loom__vmap_call_t* call,
                                 loom__vmap_prepare_fn_t prepare,
                                 int32_t rank) {
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  loom_status_t status = loom__handle_vector_resize(
      &inputs, allocator, (size_t)(call->num_inputs ? call->num_inputs : 1));
  if (!status) {
    status = loom__vmap_prepare_all(call, prepare, rank,
                                    loom__handle_vector_data(&inputs));
  }
  if (!status) {
    status = loom__vmap_run_into_outputs(call, call->op_name,
                                         loom__handle_vector_data(&inputs),
                                         call->num_inputs, true, NULL, 0);
  }
  loom__handle_vector_deinitialize(&inputs, allocator);
  return status;
}

// Normalizes an axis of an example of `rank` dimensions (TensorFlow's
// negative axes) and shifts it past the batch dimension.
loom_status_t loom__vmap_shift_axis(const loom__vmap_call_t* call,
                                    int64_t* axis, int32_t rank) {
  if (*axis < -rank || *axis >= (rank ? rank : 1)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: axis %lld is out of range for an input of "
                            "rank %d (under vmap)",
                            call->op_name, (long long)*axis, rank);
  }
  if (*axis < 0) *axis += rank;
  *axis += 1;
  return loom_ok_status();
}
bool loom__vmap_require_unbatched(const loom__vmap_call_t* call,
                                  uint32_t allowed, bool* out_fallback) {
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    bool may_be_batched = i < 32 && ((allowed >> i) & 1u);
    if (!may_be_batched && loom__vmap_batched(call, i)) {
      *out_fallback = true;
      return false;
    }
  }
  return true;
}

loom_status_t loom__vmap_run_front(loom__vmap_call_t* call, const char* op_name,
                                   int32_t front, loom_tensor_handle_t** inputs,
                                   int32_t n, bool with_attrs,
                                   const loom__grad_attr_t* extra,
                                   int32_t num_extra) {
  loom_status_t status = loom_ok_status();
  if (!inputs[front] && loom__vmap_batched(call, front)) {
    status = loom__vmap_to_front(call, front, &inputs[front]);
  }
  for (int32_t i = 0; i < n && !status; ++i) {
    if (inputs[i] || i >= call->num_inputs) continue;
    loom_tensor_handle_retain(call->inputs[i].value);
    inputs[i] = call->inputs[i].value;
  }
  if (status) {
    loom__grad_release_all(inputs, n);
    return status;
  }
  return loom__vmap_run_into_outputs(call, op_name, inputs, n, with_attrs,
                                     extra, num_extra);
}

loom_status_t loom__vmap_move_to(loom_context_t* context,
                                 const loom__vmap_value_t* value, int32_t rank,
                                 int64_t axis, loom_tensor_handle_t** out) {
  if (value->axis == axis) {
    loom_tensor_handle_retain(value->value);
    *out = value->value;
    return loom_ok_status();
  }
  // Dimension d of the result is dimension perm[d] of the value; the
  // others keep their order.
  int64_t perm[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0, k = 0; d <= rank; ++d) {
    if (k == value->axis) ++k;
    perm[d] = d == axis ? value->axis : k++;
  }
  return transpose(context, value->value, perm, rank + 1, out);
}

loom_status_t loom__vmap_fold_into(loom__vmap_call_t* call, int32_t input,
                                   int32_t dim, loom_tensor_handle_t** out) {
  *out = NULL;
  const loom_shape_t* shape = &call->input_metadata[input].shape;
  loom__vmap_value_t value = call->inputs[input];
  loom_tensor_handle_t* broadcast = NULL;
  if (value.axis == LOOM_VMAP_UNBATCHED) {
    LOOM_RETURN_IF_ERROR(loom__vmap_materialized(call, input, &broadcast));
    value = (loom__vmap_value_t){broadcast, 0};
  }
  loom_tensor_handle_t* moved = NULL;
  loom_status_t status =
      loom__vmap_move_to(call->context, &value, shape->rank, dim, &moved);
  loom_tensor_handle_release(broadcast);
  if (status) return status;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  const int64_t* in = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) dims[d] = in[d];
  if (!loom__size_mul(dims[dim], call->batch_size, &dims[dim])) {
    status = loom__size_overflow_error(
        call->op_name, "batch_size",
        "folding %lld examples into dimension %d of size %lld (under vmap)",
        (long long)call->batch_size, dim, (long long)in[dim]);
  }
  if (!status) {
    status = loom__vmap_reshape(call->context, moved, dims, shape->rank, out);
  }
  loom_tensor_handle_release(moved);
  return status;
}

loom_status_t loom__vmap_unfold_output(loom__vmap_call_t* call, int32_t output,
                                       int32_t dim, int64_t size) {
  loom__vmap_value_t* value = &call->outputs[output];
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom__vmap_metadata(value->value, &metadata));
  const loom_shape_t* shape = &metadata.shape;
  if (dim >= shape->rank || shape->rank + 1 > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "vmap: %s's output %d (rank %d) has no dimension "
                            "%d to split into the batch",
                            call->op_name, output, shape->rank, dim);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  const int64_t* in = loom_shape_dims(shape);
  for (int32_t d = 0, k = 0; d < shape->rank; ++d) {
    if (d == dim) dims[k++] = call->batch_size;
    dims[k++] = d == dim ? size : in[d];
  }
  loom_tensor_handle_t* unfolded = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_reshape(call->context, value->value, dims,
                                          shape->rank + 1, &unfolded));
  loom_tensor_handle_release(value->value);
  value->value = unfolded;
  value->axis = dim;
  return loom_ok_status();
}
