// The batching rules: each runs its op once over the whole batch on the
// outer handler, with the batch dimension first in every batched result.

#include <stdlib.h>
#include <string.h>

#include "handlers/vmap/vmap_internal.h"

// Element-wise ops with broadcasting: batched inputs get the batch first
// and 1s after it up to the largest rank, so that broadcasting lines the
// examples' dimensions up; unbatched inputs broadcast over the batch.
static loom_status_t rule_elementwise(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  (void)out_fallback;
  return loom__vmap_same_op(call, loom__vmap_padded, loom__vmap_max_rank(call));
}

// Element-wise ops whose inputs have equal shapes: every input [B, ...].
static loom_status_t rule_same_shape(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  (void)out_fallback;
  return loom__vmap_same_op(call, loom__vmap_materialized_input, 0);
}

// Ops of one batched input (the others the same for every example) that
// act on its dimensions independently of a leading one.
static loom_status_t rule_first_input(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  for (int32_t i = 1; i < call->num_inputs; ++i) {
    if (loom__vmap_batched(call, i)) {
      *out_fallback = true;
      return loom_ok_status();
    }
  }
  return loom__vmap_same_op(call, loom__vmap_padded, 0);
}

// Ops whose input 1 lists axes of input 0 (reductions, ArgMax, ArgMin,
// Cumsum, ReverseV2):
// the axes shift by one, input 0 has the batch first.
static loom_status_t rule_axes_input(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  if (call->num_inputs != 2 || loom__vmap_batched(call, 1) ||
      !loom__vmap_batched(call, 0)) {
    *out_fallback = true;
    return loom_ok_status();
  }
  int64_t axes[LOOM_MAX_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[1].value, axes, LOOM_MAX_RANK, &count));
  int32_t rank = call->input_metadata[0].shape.rank;
  for (int32_t j = 0; j < count; ++j) {
    LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(call, &axes[j], rank));
  }
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(
      call->context, call->input_metadata[1].dtype, axes, count,
      call->input_metadata[1].shape.rank == 0, &inputs[1]));
  loom_status_t status = loom__vmap_to_front(call, 0, &inputs[0]);
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, call->op_name, inputs, 2, true, NULL,
                                     0);
}

// MatMul becomes BatchMatMulV2 (a batched product); BatchMatMulV2 pads its
// operands as element-wise ops do. One op either way.
static loom_status_t rule_matmul(loom__vmap_call_t* call, bool* out_fallback) {
  (void)out_fallback;
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  int32_t rank = loom__vmap_max_rank(call);
  loom_status_t status =
      loom__vmap_prepare_all(call, loom__vmap_padded, rank, inputs);
  if (status) return status;
  if (strcmp(call->op_name, "MatMul") != 0) {
    return loom__vmap_run_into_outputs(call, call->op_name, inputs, 2, true,
                                       NULL, 0);
  }
  bool transpose_a = false, transpose_b = false;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "transpose_a", &value)) {
    transpose_a = value.u.b;
  }
  if (loom_op_attrs_get(call->attrs, "transpose_b", &value)) {
    transpose_b = value.u.b;
  }
  return loom__vmap_run_into_outputs(
      call, "BatchMatMulV2", inputs, 2, false,
      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("adj_x", transpose_a),
                      LOOM_GRAD_BOOL("adj_y", transpose_b)));
}

// BiasAdd: a batched value with an unbatched bias is BiasAdd itself; a
// batched bias is added with broadcasting along the channel axis.
static loom_status_t rule_bias_add(loom__vmap_call_t* call,
                                   bool* out_fallback) {
  (void)out_fallback;
  bool nchw = false;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "data_format", &value)) {
    nchw =
        value.u.string.size == 4 && memcmp(value.u.string.data, "NCHW", 4) == 0;
  }
  if (!nchw && !loom__vmap_batched(call, 1))
    return loom__vmap_same_op(call, loom__vmap_padded, 0);
  const loom_shape_t* shape = &call->input_metadata[0].shape;
  int32_t rank = shape->rank;
  int32_t channel = nchw ? 1 : rank - 1;
  int64_t dims[LOOM_MAX_RANK];
  int32_t k = 0;
  if (loom__vmap_batched(call, 1)) dims[k++] = call->batch_size;
  for (int32_t d = 0; d < rank; ++d) {
    dims[k++] = d == channel ? call->input_metadata[1].shape.dims[0] : 1;
  }
  loom_tensor_handle_t* bias = NULL;
  LOOM_RETURN_IF_ERROR(loom__vmap_padded(call, 1, 0, &bias));
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  loom_status_t status =
      loom__vmap_reshape(call->context, bias, dims, k, &inputs[1]);
  loom_tensor_handle_release(bias);
  if (!status) status = loom__vmap_padded(call, 0, rank, &inputs[0]);
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "AddV2", inputs, 2, false, NULL, 0);
}

// Shape, Size and Rank: one example's, the same for every example.
static loom_status_t rule_shape(loom__vmap_call_t* call, bool* out_fallback) {
  (void)out_fallback;
  const loom_shape_t* shape = &call->input_metadata[0].shape;
  loom_dtype_t dtype = LOOM_DTYPE_INT32;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "out_type", &value)) {
    dtype = value.u.dtype;
  }
  int64_t values[LOOM_MAX_RANK];
  int32_t count = 1;
  bool scalar = true;
  if (strcmp(call->op_name, "Shape") == 0) {
    for (int32_t d = 0; d < shape->rank; ++d) values[d] = shape->dims[d];
    count = shape->rank;
    scalar = false;
  } else if (strcmp(call->op_name, "Size") == 0) {
    values[0] = loom_shape_num_elements(shape);
  } else {
    values[0] = shape->rank;
  }
  call->outputs[0].axis = LOOM_VMAP_UNBATCHED;
  return loom__vmap_int_vector(call->context, dtype, values, count, scalar,
                               &call->outputs[0].value);
}

// Ops whose input 0 (and the inputs in `rows`) has a leading dimension of
// independent rows, as do their outputs (convolutions, pooling, the
// cross-entropies): the batch folds into it, [B * N, ...], and out again.
static loom_status_t fold(loom__vmap_call_t* call, uint32_t rows,
                          bool* out_fallback) {
  int64_t n = -1;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    bool row = (rows >> i) & 1u;
    if (!row && loom__vmap_batched(call, i)) {
      *out_fallback = true;
      return loom_ok_status();
    }
    if (row && call->input_metadata[i].shape.rank < 1) {
      *out_fallback = true;
      return loom_ok_status();
    }
    if (row) n = call->input_metadata[i].shape.dims[0];
  }
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom__handle_vector_resize(&inputs, allocator, (size_t)call->num_inputs));
  loom_tensor_handle_t** handles = loom__handle_vector_data(&inputs);
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < call->num_inputs && !status; ++i) {
    if (!((rows >> i) & 1u)) {
      loom_tensor_handle_retain(call->inputs[i].value);
      handles[i] = call->inputs[i].value;
      continue;
    }
    loom_tensor_handle_t* full = NULL;
    status = loom__vmap_materialized(call, i, &full);
    const loom_shape_t* shape = &call->input_metadata[i].shape;
    int64_t dims[LOOM_MAX_RANK];
    dims[0] = call->batch_size * shape->dims[0];
    for (int32_t d = 1; d < shape->rank; ++d) dims[d] = shape->dims[d];
    if (!status) {
      status = loom__vmap_reshape(call->context, full, dims, shape->rank,
                                  &handles[i]);
    }
    loom_tensor_handle_release(full);
  }
  if (!status) {
    status = loom__vmap_run_into_outputs(call, call->op_name, handles,
                                         call->num_inputs, true, NULL, 0);
  } else {
    loom__grad_release_all(handles, call->num_inputs);
  }
  loom__handle_vector_deinitialize(&inputs, allocator);
  // Unfold each result: [B * N, ...] -> [B, N, ...].
  for (int32_t k = 0; k < call->num_outputs && !status; ++k) {
    loom_tensor_metadata_t metadata;
    status = loom__vmap_metadata(call->outputs[k].value, &metadata);
    if (status) break;
    int64_t dims[LOOM_MAX_RANK];
    dims[0] = call->batch_size;
    dims[1] = n;
    for (int32_t d = 1; d < metadata.shape.rank; ++d) {
      dims[d + 1] = metadata.shape.dims[d];
    }
    loom_tensor_handle_t* unfolded = NULL;
    status = loom__vmap_reshape(call->context, call->outputs[k].value, dims,
                                metadata.shape.rank + 1, &unfolded);
    if (status) break;
    loom_tensor_handle_release(call->outputs[k].value);
    call->outputs[k].value = unfolded;
  }
  return status;
}

static loom_status_t rule_fold_first(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  return fold(call, 1u, out_fallback);
}

static loom_status_t rule_fold_first_two(loom__vmap_call_t* call,
                                         bool* out_fallback) {
  return fold(call, 3u, out_fallback);
}

// BiasAddGrad: one example's sum over every axis but the channel's.
static loom_status_t rule_bias_add_grad(loom__vmap_call_t* call,
                                        bool* out_fallback) {
  (void)out_fallback;
  bool nchw = false;
  loom_attr_value_t value;
  if (loom_op_attrs_get(call->attrs, "data_format", &value)) {
    nchw =
        value.u.string.size == 4 && memcmp(value.u.string.data, "NCHW", 4) == 0;
  }
  int32_t rank = call->input_metadata[0].shape.rank;
  int32_t channel = nchw ? 1 : rank - 1;
  int64_t axes[LOOM_MAX_RANK];
  int32_t count = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (d != channel) axes[count++] = d + 1;
  }
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(call->context, LOOM_DTYPE_INT32,
                                             axes, count, false, &inputs[1]));
  loom_status_t status = loom__vmap_to_front(call, 0, &inputs[0]);
  if (status) {
    loom__grad_release_all(inputs, 2);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "Sum", inputs, 2, false, NULL, 0);
}

// IdentityN: each output is its input, batched as it is.
static loom_status_t rule_identity_n(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  (void)out_fallback;
  if (call->num_outputs != call->num_inputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "IdentityN: %d inputs and %d outputs",
                            call->num_inputs, call->num_outputs);
  }
  for (int32_t k = 0; k < call->num_outputs; ++k) {
    loom_tensor_handle_retain(call->inputs[k].value);
    call->outputs[k] = call->inputs[k];
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

#define ELEMENTWISE(name) \
  { name, rule_elementwise, "element-wise: batch first, ranks padded" }
#define SAME_SHAPE(name) \
  { name, rule_same_shape, "element-wise, equal shapes: every input [B, ...]" }
#define AXES(name) \
  { name, rule_axes_input, "axes input shifted by one" }
#define FOLD(name) \
  { name, rule_fold_first, "batch folded into the leading dimension" }

// Sorted by name (bsearch).
static const loom__vmap_rule_t kRules[] = {
    ELEMENTWISE("Abs"),
    ELEMENTWISE("Add"),
    SAME_SHAPE("AddN"),
    ELEMENTWISE("AddV2"),
    AXES("All"),
    AXES("Any"),
    AXES("ArgMax"),
    AXES("ArgMin"),
    FOLD("AvgPool"),
    {"BatchMatMulV2", rule_matmul, "batched product, ranks padded"},
    {"BiasAdd", rule_bias_add, "BiasAdd, or AddV2 for a batched bias"},
    {"BiasAddGrad", rule_bias_add_grad, "Sum over the non-channel axes"},
    {"BroadcastTo", loom__vmap_rule_broadcast_to,
     "shape gains the batch in front"},
    ELEMENTWISE("Cast"),
    ELEMENTWISE("Ceil"),
    ELEMENTWISE("CheckNumericsV2"),
    {"ClipByValue", rule_first_input, "batch first (bounds unbatched)"},
    {"ConcatV2", loom__vmap_rule_concat, "values [B, ...], axis shifted"},
    FOLD("Conv2D"),
    ELEMENTWISE("Cos"),
    AXES("Cumprod"),
    AXES("Cumsum"),
    ELEMENTWISE("Div"),
    ELEMENTWISE("Elu"),
    SAME_SHAPE("EluGrad"),
    ELEMENTWISE("Equal"),
    ELEMENTWISE("Erf"),
    ELEMENTWISE("Exp"),
    {"ExpandDims", loom__vmap_rule_expand_dims, "axis shifted by one"},
    ELEMENTWISE("Expm1"),
    {"Fill", loom__vmap_rule_fill, "batched value broadcast to [B, dims]"},
    ELEMENTWISE("Floor"),
    ELEMENTWISE("FloorDiv"),
    ELEMENTWISE("FloorMod"),
    {"GatherV2", loom__vmap_rule_gather,
     "axis shifted; batched indices: batch_dims + 1"},
    ELEMENTWISE("Greater"),
    ELEMENTWISE("GreaterEqual"),
    ELEMENTWISE("Identity"),
    {"IdentityN", rule_identity_n, "each value as it is"},
    ELEMENTWISE("Inv"),
    SAME_SHAPE("InvGrad"),
    ELEMENTWISE("IsFinite"),
    ELEMENTWISE("IsInf"),
    ELEMENTWISE("IsNan"),
    ELEMENTWISE("LeakyRelu"),
    SAME_SHAPE("LeakyReluGrad"),
    ELEMENTWISE("Less"),
    ELEMENTWISE("LessEqual"),
    ELEMENTWISE("Log"),
    ELEMENTWISE("Log1p"),
    ELEMENTWISE("LogSoftmax"),
    ELEMENTWISE("LogicalAnd"),
    ELEMENTWISE("LogicalNot"),
    ELEMENTWISE("LogicalOr"),
    {"MatMul", rule_matmul, "BatchMatMulV2 with adj_x/adj_y"},
    AXES("Max"),
    FOLD("MaxPool"),
    ELEMENTWISE("Maximum"),
    AXES("Mean"),
    AXES("Min"),
    ELEMENTWISE("Minimum"),
    ELEMENTWISE("Mul"),
    ELEMENTWISE("Neg"),
    ELEMENTWISE("NotEqual"),
    {"OneHot", loom__vmap_rule_one_hot, "indices batch first, axis shifted"},
    ELEMENTWISE("OnesLike"),
    {"Pack", loom__vmap_rule_pack, "values [B, ...], axis shifted"},
    {"Pad", loom__vmap_rule_pad, "paddings gain [0, 0] for the batch"},
    {"PadV2", loom__vmap_rule_pad, "paddings gain [0, 0] for the batch"},
    ELEMENTWISE("Pow"),
    AXES("Prod"),
    {"Rank", rule_shape, "one example's rank, unbatched"},
    ELEMENTWISE("RealDiv"),
    ELEMENTWISE("Reciprocal"),
    SAME_SHAPE("ReciprocalGrad"),
    ELEMENTWISE("Relu"),
    ELEMENTWISE("Relu6"),
    SAME_SHAPE("Relu6Grad"),
    SAME_SHAPE("ReluGrad"),
    {"Reshape", loom__vmap_rule_reshape,
     "batch dimension prepended to the shape"},
    AXES("ReverseV2"),
    ELEMENTWISE("Round"),
    ELEMENTWISE("Rsqrt"),
    SAME_SHAPE("RsqrtGrad"),
    ELEMENTWISE("SelectV2"),
    ELEMENTWISE("Selu"),
    SAME_SHAPE("SeluGrad"),
    {"Shape", rule_shape, "one example's shape, unbatched"},
    ELEMENTWISE("Sigmoid"),
    SAME_SHAPE("SigmoidGrad"),
    ELEMENTWISE("Sign"),
    ELEMENTWISE("Sin"),
    {"Size", rule_shape, "one example's size, unbatched"},
    {"Slice", loom__vmap_rule_slice, "begin and size gain the whole batch"},
    ELEMENTWISE("Softmax"),
    {"SoftmaxCrossEntropyWithLogits", rule_fold_first_two,
     "batch folded into the leading dimension of logits and labels"},
    ELEMENTWISE("Softplus"),
    SAME_SHAPE("SoftplusGrad"),
    ELEMENTWISE("Softsign"),
    SAME_SHAPE("SoftsignGrad"),
    {"SparseSoftmaxCrossEntropyWithLogits", rule_fold_first_two,
     "batch folded into the leading dimension of logits and labels"},
    {"Split", loom__vmap_rule_split, "axis shifted, outputs batch first"},
    {"SplitV", loom__vmap_rule_split, "axis shifted, outputs batch first"},
    ELEMENTWISE("Sqrt"),
    SAME_SHAPE("SqrtGrad"),
    ELEMENTWISE("Square"),
    ELEMENTWISE("SquaredDifference"),
    {"Squeeze", loom__vmap_rule_squeeze, "axes shifted; never the batch"},
    ELEMENTWISE("StopGradient"),
    {"StridedSlice", loom__vmap_rule_strided_slice,
     "a whole batch dimension first, masks shifted"},
    ELEMENTWISE("Sub"),
    AXES("Sum"),
    ELEMENTWISE("Tanh"),
    SAME_SHAPE("TanhGrad"),
    {"Tile", loom__vmap_rule_tile, "multiples gain a 1 for the batch"},
    {"Transpose", loom__vmap_rule_transpose,
     "permutation shifted, batch first"},
    ELEMENTWISE("TruncateDiv"),
    ELEMENTWISE("TruncateMod"),
    {"Unpack", loom__vmap_rule_pack, "value batch first, axis shifted"},
    ELEMENTWISE("ZerosLike"),
};

static int compare_rule(const void* key, const void* element) {
  return strcmp((const char*)key, ((const loom__vmap_rule_t*)element)->op_name);
}

const loom__vmap_rule_t* loom__vmap_find_rule(const char* op_name) {
  if (!op_name) return NULL;
  return bsearch(op_name, kRules, sizeof(kRules) / sizeof(kRules[0]),
                 sizeof(kRules[0]), compare_rule);
}

size_t loom__vmap_rule_count(void) {
  return sizeof(kRules) / sizeof(kRules[0]);
}

const loom__vmap_rule_t* loom__vmap_rule_at(size_t index) {
  return index < loom__vmap_rule_count() ? &kRules[index] : NULL;
}
