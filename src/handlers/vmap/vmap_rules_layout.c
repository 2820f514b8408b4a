// The batching rules of the ops that move data around: Reshape, Transpose,
// ExpandDims, Squeeze, ConcatV2, Pack, Unpack, Slice, StridedSlice, Tile,
// BroadcastTo, Fill, Pad, GatherV2, Split, SplitV and OneHot. Shape-like inputs
// (a shape, a permutation, begin and size) must be unbatched, else the op takes
// the fallback.

#include <string.h>

#include "handlers/vmap/vmap_internal.h"

// Reshape: the batch dimension goes before the new shape (a -1 in it is
// resolved from one example's size, which a batch of 0 would not give).
loom_status_t loom__vmap_rule_reshape(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[1].value, dims + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  int64_t elements = loom_shape_num_elements(&call->input_metadata[0].shape);
  int64_t known = 1;
  int32_t unknown = -1;
  for (int32_t j = 1; j <= count; ++j) {
    if (dims[j] == -1 && unknown < 0) {
      unknown = j;
    } else {
      known *= dims[j];
    }
  }
  if (unknown > 0 && known > 0 && elements >= 0) {
    dims[unknown] = elements / known;
  }
  dims[0] = call->batch_size;
  loom_tensor_handle_t* front = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_to_front(call, 0, &front));
  loom_tensor_handle_t* result = NULL;
  loom_status_t status =
      loom__vmap_reshape(call->context, front, dims, count + 1, &result);
  loom_tensor_handle_release(front);
  if (status) return status;
  call->outputs[0].value = result;
  call->outputs[0].axis = 0;
  return loom_ok_status();
}

// Transpose: the permutation keeps the batch first.
loom_status_t loom__vmap_rule_transpose(loom__vmap_call_t* call,
                                        bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t perm[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[1].value, perm + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  perm[0] = 0;
  for (int32_t j = 1; j <= count; ++j) perm[j] += 1;
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(
      loom__vmap_int_vector(call->context, call->input_metadata[1].dtype, perm,
                            count + 1, false, &inputs[1]));
  return loom__vmap_run_front(call, "Transpose", 0, inputs, 2, false, NULL, 0);
}

// ExpandDims: the new axis (of a result one rank larger) shifts by one.
loom_status_t loom__vmap_rule_expand_dims(loom__vmap_call_t* call,
                                          bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t axis = 0;
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[1].value, &axis, 1, &count));
  LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(
      call, &axis, call->input_metadata[0].shape.rank + 1));
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(call->context,
                                             call->input_metadata[1].dtype,
                                             &axis, 1, true, &inputs[1]));
  return loom__vmap_run_front(call, "ExpandDims", 0, inputs, 2, false, NULL, 0);
}

// Squeeze: the listed axes shift; no list means every dimension of size 1
// of one example (never the batch, even of size 1).
loom_status_t loom__vmap_rule_squeeze(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  (void)out_fallback;
  const loom_shape_t* shape = &call->input_metadata[0].shape;
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "squeeze_dims", &value) &&
      value.count > 0) {
    if (value.count > LOOM_MAX_SHAPE_RANK) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Squeeze: %d squeeze_dims", (int)value.count);
    }
    for (int32_t j = 0; j < (int32_t)value.count; ++j) {
      axes[count] = ((const int64_t*)value.u.list)[j];
      LOOM_RETURN_IF_ERROR(
          loom__vmap_shift_axis(call, &axes[count], shape->rank));
      ++count;
    }
  } else {
    for (int32_t d = 0; d < shape->rank; ++d) {
      if (loom_shape_dims(shape)[d] == 1) axes[count++] = d + 1;
    }
  }
  loom_tensor_handle_t* inputs[1] = {NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_to_front(call, 0, &inputs[0]));
  return loom__vmap_run_into_outputs(
      call, "Squeeze", inputs, 1, false,
      LOOM_GRAD_ATTRS(LOOM_GRAD_INTS("squeeze_dims", axes, count)));
}

// ConcatV2 (values..., axis): every value [B, ...], the axis shifted.
loom_status_t loom__vmap_rule_concat(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  int32_t n = call->num_inputs - 1;
  if (n < 1 || loom__vmap_batched(call, n)) {
    *out_fallback = true;
    return loom_ok_status();
  }
  int64_t axis = 0;
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[n].value, &axis, 1, &count));
  LOOM_RETURN_IF_ERROR(
      loom__vmap_shift_axis(call, &axis, call->input_metadata[0].shape.rank));
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom__handle_vector_resize(&inputs, allocator, (size_t)(n + 1)));
  loom_tensor_handle_t** handles = loom__handle_vector_data(&inputs);
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < n && !status; ++i) {
    status = loom__vmap_materialized(call, i, &handles[i]);
  }
  if (!status) {
    status = loom__vmap_int_vector(call->context, call->input_metadata[n].dtype,
                                   &axis, 1, true, &handles[n]);
  }
  if (!status) {
    status = loom__vmap_run_into_outputs(call, "ConcatV2", handles, n + 1,
                                         false, NULL, 0);
  } else {
    loom__grad_release_all(handles, n + 1);
  }
  loom__handle_vector_deinitialize(&inputs, allocator);
  return status;
}

// Pack and Unpack: the axis attribute shifts.
loom_status_t loom__vmap_rule_pack(loom__vmap_call_t* call,
                                   bool* out_fallback) {
  (void)out_fallback;
  bool pack = strcmp(call->op_name, "Pack") == 0;
  int64_t axis = 0;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "axis", &value)) axis = value.u.i64;
  int32_t rank = call->input_metadata[0].shape.rank + (pack ? 1 : 0);
  LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(call, &axis, rank));
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom__handle_vector_resize(&inputs, allocator, (size_t)call->num_inputs));
  loom_status_t status =
      loom__vmap_prepare_all(call, loom__vmap_materialized_input, 0,
                             loom__handle_vector_data(&inputs));
  if (!status) {
    status = loom__vmap_run_into_outputs(
        call, call->op_name, loom__handle_vector_data(&inputs),
        call->num_inputs, true, LOOM_GRAD_ATTRS(LOOM_GRAD_INT("axis", axis)));
  }
  loom__handle_vector_deinitialize(&inputs, allocator);
  return status;
}

// Slice (x, begin, size): the batch is taken whole.
loom_status_t loom__vmap_rule_slice(loom__vmap_call_t* call,
                                    bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t begin[LOOM_MAX_SHAPE_RANK], size[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0, count_size = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[1].value, begin + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  LOOM_RETURN_IF_ERROR(
      loom__vmap_read_ints(call->context, call->inputs[2].value, size + 1,
                           LOOM_MAX_SHAPE_RANK - 1, &count_size));
  begin[0] = 0;
  size[0] = -1;
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  loom_dtype_t dtype = call->input_metadata[1].dtype;
  loom_status_t status = loom__vmap_int_vector(call->context, dtype, begin,
                                               count + 1, false, &inputs[1]);
  if (!status) {
    status = loom__vmap_int_vector(call->context, dtype, size, count_size + 1,
                                   false, &inputs[2]);
  }
  if (status) {
    loom__grad_release_all(inputs, 3);
    return status;
  }
  return loom__vmap_run_front(call, "Slice", 0, inputs, 3, false, NULL, 0);
}

// Tile (x, multiples): the batch is not repeated.
loom_status_t loom__vmap_rule_tile(loom__vmap_call_t* call,
                                   bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t multiples[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__vmap_read_ints(call->context, call->inputs[1].value, multiples + 1,
                           LOOM_MAX_SHAPE_RANK - 1, &count));
  multiples[0] = 1;
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(
      loom__vmap_int_vector(call->context, call->input_metadata[1].dtype,
                            multiples, count + 1, false, &inputs[1]));
  return loom__vmap_run_front(call, "Tile", 0, inputs, 2, false, NULL, 0);
}

// BroadcastTo (x, shape): the shape gains the batch in front.
loom_status_t loom__vmap_rule_broadcast_to(loom__vmap_call_t* call,
                                           bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[1].value, dims + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  dims[0] = call->batch_size;
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  loom_status_t status =
      loom__vmap_int_vector(call->context, call->input_metadata[1].dtype, dims,
                            count + 1, false, &inputs[1]);
  if (!status) status = loom__vmap_padded(call, 0, count, &inputs[0]);
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "BroadcastTo", inputs, 2, false,
                                     NULL, 0);
}

// Fill (dims, value) with a batched value: each example's scalar broadcast
// to [B, dims...].
loom_status_t loom__vmap_rule_fill(loom__vmap_call_t* call,
                                   bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 2u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[0].value, dims + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  dims[0] = call->batch_size;
  int64_t ones[LOOM_MAX_SHAPE_RANK];
  ones[0] = call->batch_size;
  for (int32_t d = 1; d <= count; ++d) ones[d] = 1;
  loom_tensor_handle_t* front = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_to_front(call, 1, &front));
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  loom_status_t status =
      loom__vmap_reshape(call->context, front, ones, count + 1, &inputs[0]);
  loom_tensor_handle_release(front);
  if (!status) {
    status = loom__vmap_int_vector(call->context, call->input_metadata[0].dtype,
                                   dims, count + 1, false, &inputs[1]);
  }
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "BroadcastTo", inputs, 2, false,
                                     NULL, 0);
}

// Reads an integer attribute (`absent` when the op ran without it: its
// default).
static int64_t int_attr(const loom__vmap_call_t* call, const char* name,
                        int64_t absent) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(call->attrs, name, &value)) return absent;
  return value.kind == LOOM_ATTR_KIND_I32 ? value.u.i32 : value.u.i64;
}

// StridedSlice (x, begin, end, strides): a whole first dimension is added
// to the spec (begin and end masked, stride 1) and the masks shift.
loom_status_t loom__vmap_rule_strided_slice(loom__vmap_call_t* call,
                                            bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t spec[3][LOOM_MAX_SHAPE_RANK + 1];
  int32_t count = 0;
  static const int64_t kFirst[3] = {0, 0, 1};
  for (int32_t i = 0; i < 3; ++i) {
    int32_t n = 0;
    LOOM_RETURN_IF_ERROR(
        loom__vmap_read_ints(call->context, call->inputs[i + 1].value,
                             spec[i] + 1, LOOM_MAX_SHAPE_RANK, &n));
    if (i > 0 && n != count) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "StridedSlice: begin, end and strides have %d, "
                              "%d values (under vmap)",
                              count, n);
    }
    count = n;
    spec[i][0] = kFirst[i];
  }
  if (count + 1 > LOOM_MAX_SHAPE_RANK) {
    *out_fallback = true;
    return loom_ok_status();
  }
  loom_tensor_handle_t* inputs[4] = {NULL, NULL, NULL, NULL};
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < 3 && !status; ++i) {
    status =
        loom__vmap_int_vector(call->context, call->input_metadata[i + 1].dtype,
                              spec[i], count + 1, false, &inputs[i + 1]);
  }
  if (status) {
    loom__grad_release_all(inputs, 4);
    return status;
  }
  int64_t begin_mask = (int_attr(call, "begin_mask", 0) << 1) | 1;
  int64_t end_mask = (int_attr(call, "end_mask", 0) << 1) | 1;
  return loom__vmap_run_front(
      call, "StridedSlice", 0, inputs, 4, true,
      LOOM_GRAD_ATTRS(
          LOOM_GRAD_INT("begin_mask", begin_mask),
          LOOM_GRAD_INT("end_mask", end_mask),
          LOOM_GRAD_INT("ellipsis_mask", int_attr(call, "ellipsis_mask", 0)
                                             << 1),
          LOOM_GRAD_INT("new_axis_mask", int_attr(call, "new_axis_mask", 0)
                                             << 1),
          LOOM_GRAD_INT("shrink_axis_mask",
                        int_attr(call, "shrink_axis_mask", 0) << 1)));
}

// Pad and PadV2 (x, paddings[, constant]): the batch is not padded.
loom_status_t loom__vmap_rule_pad(loom__vmap_call_t* call, bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t paddings[2 * LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__vmap_read_ints(call->context, call->inputs[1].value, paddings + 2,
                           2 * (LOOM_MAX_SHAPE_RANK - 1), &count));
  paddings[0] = paddings[1] = 0;
  int64_t dims[2] = {count / 2 + 1, 2};
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_tensor(call->context,
                                             call->input_metadata[1].dtype,
                                             paddings, dims, 2, &inputs[1]));
  return loom__vmap_run_front(call, call->op_name, 0, inputs, call->num_inputs,
                              true, NULL, 0);
}

// Gather (params, indices) and GatherV2 (params, indices, axis): batched
// params with unbatched indices gather along the shifted axis; batched
// indices make the batch a batch dimension of the gather (batch_dims + 1).
// Gather is GatherV2 on axis 0.
loom_status_t loom__vmap_rule_gather(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  bool v1 = strcmp(call->op_name, "Gather") == 0;
  int64_t batch_dims = v1 ? 0 : int_attr(call, "batch_dims", 0);
  bool indices_batched = loom__vmap_batched(call, 1);
  if (!loom__vmap_require_unbatched(call, 3u, out_fallback) ||
      (!indices_batched && batch_dims != 0) || batch_dims < 0) {
    *out_fallback = true;
    return loom_ok_status();
  }
  int64_t axis = 0;
  int32_t count = 0;
  loom_dtype_t axis_dtype = LOOM_DTYPE_INT32;
  if (!v1) {
    LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
        call->context, call->inputs[2].value, &axis, 1, &count));
    axis_dtype = call->input_metadata[2].dtype;
  }
  LOOM_RETURN_IF_ERROR(
      loom__vmap_shift_axis(call, &axis, call->input_metadata[0].shape.rank));
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  loom_status_t status = loom__vmap_int_vector(call->context, axis_dtype, &axis,
                                               1, true, &inputs[2]);
  if (!status) status = loom__vmap_materialized(call, 0, &inputs[0]);
  if (status) {
    loom__grad_release_all(inputs, 3);
    return status;
  }
  // Batched indices go batch first (run_front), unbatched ones as they are.
  return loom__vmap_run_front(
      call, "GatherV2", 1, inputs, 3, !v1,
      LOOM_GRAD_ATTRS(
          LOOM_GRAD_INT("batch_dims", indices_batched ? batch_dims + 1 : 0)));
}

// Split (axis, value) and SplitV (value, size_splits, axis): the axis
// shifts; every output has the batch first.
loom_status_t loom__vmap_rule_split(loom__vmap_call_t* call,
                                    bool* out_fallback) {
  bool v2 = strcmp(call->op_name, "SplitV") == 0;
  int32_t value_index = v2 ? 0 : 1;
  int32_t axis_index = v2 ? 2 : 0;
  if (!loom__vmap_require_unbatched(call, 1u << value_index, out_fallback)) {
    return loom_ok_status();
  }
  int64_t axis = 0;
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[axis_index].value, &axis, 1, &count));
  LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(
      call, &axis, call->input_metadata[value_index].shape.rank));
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(
      call->context, call->input_metadata[axis_index].dtype, &axis, 1, true,
      &inputs[axis_index]));
  return loom__vmap_run_front(call, call->op_name, value_index, inputs,
                              call->num_inputs, true, NULL, 0);
}

// OneHot (indices, depth, on, off): the new axis shifts (-1, the end,
// stays); only the indices may be batched.
loom_status_t loom__vmap_rule_one_hot(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t axis = int_attr(call, "axis", -1);
  if (axis != -1) {
    LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(
        call, &axis, call->input_metadata[0].shape.rank + 1));
  }
  loom_tensor_handle_t* inputs[4] = {NULL, NULL, NULL, NULL};
  return loom__vmap_run_front(call, "OneHot", 0, inputs, call->num_inputs, true,
                              LOOM_GRAD_ATTRS(LOOM_GRAD_INT("axis", axis)));
}
