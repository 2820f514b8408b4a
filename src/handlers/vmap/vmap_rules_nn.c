// The batching rules of the neural-network ops whose examples are rows or
// channels: the convolutions, pooling and their gradients, the
// cross-entropies, fused batch normalisation and L2Loss. The batch folds
// into a dimension the op already treats independently (rows: N; with
// grouped convolutions and per-channel statistics: the channels), the op
// runs once, and the result's dimension is split again.

#include <string.h>

#include "handlers/vmap/vmap_internal.h"
#include "tensor/checked_size.h"

static bool nchw_format(const loom__vmap_call_t* call) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(call->attrs, "data_format", &value)) return false;
  return value.u.string.size >= 3 && memcmp(value.u.string.data, "NC", 2) == 0;
}

// Ops whose inputs in `rows` have a leading dimension of independent rows,
// as do their outputs (convolutions, pooling and their input gradients,
// the cross-entropies): the batch folds into it, [B * N, ...], and out
// again. `sizes` (or -1) is an unbatched shape input whose first value is
// N (the input sizes of a gradient): it is multiplied by B.
static loom_status_t fold_rows(loom__vmap_call_t* call, uint32_t rows,
                               int32_t sizes, bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, rows, out_fallback)) {
    return loom_ok_status();
  }
  int64_t n = -1;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    if (!((rows >> i) & 1u)) continue;
    if (call->input_metadata[i].shape.rank < 1) {
      *out_fallback = true;
      return loom_ok_status();
    }
    n = call->input_metadata[i].shape.dims[0];
  }
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom__handle_vector_resize(&inputs, allocator, (size_t)call->num_inputs));
  loom_tensor_handle_t** handles = loom__handle_vector_data(&inputs);
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < call->num_inputs && !status; ++i) {
    if ((rows >> i) & 1u) {
      status = loom__vmap_fold_into(call, i, 0, &handles[i]);
    } else if (i == sizes) {
      int64_t values[LOOM_MAX_SHAPE_RANK];
      int32_t count = 0;
      status = loom__vmap_read_ints(call->context, call->inputs[i].value,
                                    values, LOOM_MAX_SHAPE_RANK, &count);
      if (!status && count < 1) {
        status = loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "%s: input %d (a shape) is empty; expected N first (under vmap)",
            call->op_name, i);
      }
      if (!status && !loom__size_mul(values[0], call->batch_size, &values[0])) {
        status = loom__size_overflow_error(
            call->op_name, "batch_size",
            "%lld examples of %lld rows (under vmap)",
            (long long)call->batch_size, (long long)values[0]);
      }
      if (!status) {
        status =
            loom__vmap_int_vector(call->context, call->input_metadata[i].dtype,
                                  values, count, false, &handles[i]);
      }
    }
  }
  if (status) {
    loom__grad_release_all(handles, call->num_inputs);
    loom__handle_vector_deinitialize(&inputs, allocator);
    return status;
  }
  status = loom__vmap_run_front(call, call->op_name, 0, handles,
                                call->num_inputs, true, NULL, 0);
  loom__handle_vector_deinitialize(&inputs, allocator);
  for (int32_t k = 0; k < call->num_outputs && !status; ++k) {
    status = loom__vmap_unfold_output(call, k, 0, n);
  }
  return status;
}

loom_status_t loom__vmap_rule_fold_first(loom__vmap_call_t* call,
                                         bool* out_fallback) {
  return fold_rows(call, 1u, -1, out_fallback);
}

loom_status_t loom__vmap_rule_fold_first_two(loom__vmap_call_t* call,
                                             bool* out_fallback) {
  return fold_rows(call, 3u, -1, out_fallback);
}

// MaxPoolGrad and MaxPoolGradGrad (orig_input, orig_output, grad).
loom_status_t loom__vmap_rule_fold_all(loom__vmap_call_t* call,
                                       bool* out_fallback) {
  return fold_rows(call, (1u << call->num_inputs) - 1u, -1, out_fallback);
}

// AvgPoolGrad (orig_input_shape, grad).
loom_status_t loom__vmap_rule_avg_pool_grad(loom__vmap_call_t* call,
                                            bool* out_fallback) {
  return fold_rows(call, 2u, 0, out_fallback);
}

// Conv2DBackpropInput (input_sizes, filter, out_backprop): a batched filter
// takes the fallback.
loom_status_t loom__vmap_rule_conv_backprop_input(loom__vmap_call_t* call,
                                                  bool* out_fallback) {
  return fold_rows(call, 4u, 0, out_fallback);
}

// The channel dimension of one example of input `input` (an image).
static int32_t channel_dim(const loom__vmap_call_t* call, int32_t input) {
  return nchw_format(call) ? 1 : call->input_metadata[input].shape.rank - 1;
}

// A filter [kh, kw, in, out] with its out dimension B * out (batch folded
// in), or filter sizes with out multiplied by B.
static loom_status_t grouped_filter_sizes(loom__vmap_call_t* call,
                                          int32_t input,
                                          loom_tensor_handle_t** out) {
  int64_t values[4];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[input].value, values, 4, &count));
  if (count != 4 || !loom__size_mul(values[3], call->batch_size, &values[3])) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: filter_sizes must hold 4 values that times "
                            "the batch of %lld fit in int64 (under vmap)",
                            call->op_name, (long long)call->batch_size);
  }
  return loom__vmap_int_vector(call->context, call->input_metadata[input].dtype,
                               values, 4, false, out);
}

// Conv2D (input, filter) with a batched filter, and Conv2DBackpropFilter
// (input, filter_sizes, out_backprop): the batch folds into the channels
// of the images (B * C) and into the filter's output channels, a grouped
// convolution with B groups (times the groups of one example) in which
// example b meets only its own filter.
static loom_status_t grouped_conv(loom__vmap_call_t* call) {
  bool filter_grad = strcmp(call->op_name, "Conv2DBackpropFilter") == 0;
  int32_t channel = channel_dim(call, 0);
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  loom_status_t status = loom__vmap_fold_into(call, 0, channel, &inputs[0]);
  int64_t out_channels = 0;
  if (!status && filter_grad) {
    status = grouped_filter_sizes(call, 1, &inputs[1]);
    if (!status) status = loom__vmap_fold_into(call, 2, channel, &inputs[2]);
    out_channels = call->input_metadata[2].shape.dims[channel];
  } else if (!status) {
    status = loom__vmap_fold_into(call, 1, 3, &inputs[1]);
    out_channels = call->input_metadata[1].shape.dims[3];
  }
  int32_t n = filter_grad ? 3 : 2;
  if (status) {
    loom__grad_release_all(inputs, n);
    return status;
  }
  LOOM_RETURN_IF_ERROR(loom__vmap_run_into_outputs(call, call->op_name, inputs,
                                                   n, true, NULL, 0));
  return loom__vmap_unfold_output(call, 0, filter_grad ? 3 : channel,
                                  out_channels);
}

loom_status_t loom__vmap_rule_conv2d(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  if (!loom__vmap_batched(call, 1))
    return fold_rows(call, 1u, -1, out_fallback);
  if (call->input_metadata[0].shape.rank != 4 ||
      call->input_metadata[1].shape.rank != 4) {
    *out_fallback = true;  // the op's own error
    return loom_ok_status();
  }
  return grouped_conv(call);
}

loom_status_t loom__vmap_rule_conv_backprop_filter(loom__vmap_call_t* call,
                                                   bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 5u, out_fallback)) {
    return loom_ok_status();
  }
  if (call->input_metadata[0].shape.rank != 4 ||
      call->input_metadata[2].shape.rank != 4) {
    *out_fallback = true;
    return loom_ok_status();
  }
  return grouped_conv(call);
}

// FusedBatchNormV3 (x, scale, offset, mean, variance) and
// FusedBatchNormGradV3 (y_backprop, x, scale, reserve_space_1..3): the
// statistics are per channel, so the batch folds into the channels (B * C)
// and the per-channel vectors are [B * C]; the scalar reserve_space_3 and
// the grad's empty reserve spaces are the same for every example.
loom_status_t loom__vmap_rule_batch_norm(loom__vmap_call_t* call,
                                         bool* out_fallback) {
  bool grad = strcmp(call->op_name, "FusedBatchNormGradV3") == 0;
  int32_t images = grad ? 2 : 1;  // inputs [0, images) are images
  uint32_t vectors = grad ? 0x1cu : 0x1eu;
  if (call->num_inputs < (grad ? 6 : 5) || call->num_outputs < 5 ||
      !loom__vmap_require_unbatched(call, vectors | ((1u << images) - 1u),
                                    out_fallback)) {
    *out_fallback = true;
    return loom_ok_status();
  }
  int32_t rank = call->input_metadata[0].shape.rank;
  if (rank != 4 && rank != 5) {
    *out_fallback = true;  // the op's own error
    return loom_ok_status();
  }
  for (int32_t i = images; i < call->num_inputs; ++i) {
    if (loom__vmap_batched(call, i) &&
        call->input_metadata[i].shape.rank != 1) {
      *out_fallback = true;  // the op's own error
      return loom_ok_status();
    }
  }
  int32_t channel = channel_dim(call, 0);
  int64_t c = call->input_metadata[0].shape.dims[channel];
  loom_tensor_handle_t* inputs[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < call->num_inputs && !status; ++i) {
    const loom_shape_t* shape = &call->input_metadata[i].shape;
    bool vector = (vectors >> i) & 1u;
    if (i < images) {
      status = loom__vmap_fold_into(call, i, channel, &inputs[i]);
    } else if (vector && shape->rank == 1 &&
               (loom__vmap_batched(call, i) || shape->dims[0] != 0)) {
      status = loom__vmap_fold_into(call, i, 0, &inputs[i]);
    }
  }
  if (status) {
    loom__grad_release_all(inputs, call->num_inputs);
    return status;
  }
  // Vector inputs of another rank are the op's own error, unbatched.
  LOOM_RETURN_IF_ERROR(loom__vmap_run_front(call, call->op_name, 0, inputs,
                                            call->num_inputs, true, NULL, 0));
  status = loom__vmap_unfold_output(call, 0, channel, c);
  for (int32_t k = 1; k < call->num_outputs && !status; ++k) {
    if (k < (grad ? 3 : 5)) {
      status = loom__vmap_unfold_output(call, k, 0, c);
    } else {
      call->outputs[k].axis = LOOM_VMAP_UNBATCHED;
    }
  }
  return status;
}

// L2Loss: one example's sum(t ** 2) / 2, a Sum over its axes.
loom_status_t loom__vmap_rule_l2_loss(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  loom_dtype_t dtype = call->input_metadata[0].dtype;
  if (dtype != LOOM_DTYPE_FLOAT && dtype != LOOM_DTYPE_DOUBLE) {
    *out_fallback = true;  // no host constant of 1/2 for it
    return loom_ok_status();
  }
  int32_t rank = call->input_metadata[0].shape.rank;
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0; d < rank; ++d) axes[d] = d + 1;
  loom_tensor_handle_t* handles[4] = {NULL, NULL, NULL, NULL};
  loom_context_t* context = call->context;
  loom_status_t status = loom__vmap_to_front(call, 0, &handles[0]);
  if (!status) {
    status = loom__vmap_run(context, "Square", &handles[0], 1, NULL, NULL, 0,
                            &handles[1], 1);
  }
  if (!status) {
    status = loom__vmap_int_vector(context, LOOM_DTYPE_INT32, axes, rank, false,
                                   &handles[2]);
  }
  if (!status) {
    loom_tensor_handle_t* sum_inputs[2] = {handles[1], handles[2]};
    status = loom__vmap_run(context, "Sum", sum_inputs, 2, NULL, NULL, 0,
                            &handles[3], 1);
  }
  loom__grad_release_all(handles, 3);
  loom_tensor_handle_t* half = NULL;
  if (!status) {
    status = loom__grad_host_scalar(context, dtype, 0.5, &half);
  }
  if (status) {
    loom_tensor_handle_release(handles[3]);
    return status;
  }
  loom_tensor_handle_t* mul_inputs[2] = {handles[3], half};
  return loom__vmap_run_into_outputs(call, "Mul", mul_inputs, 2, false, NULL,
                                     0);
}
