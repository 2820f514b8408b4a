// The batching rules: each runs its op once over the whole batch on the
// outer handler, with the batch dimension first in every batched result.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash_map.h"
#include "handlers/vmap/vmap_internal.h"

// Element-wise ops with broadcasting: batched inputs get the batch first
// and 1s after it up to the largest rank, so that broadcasting lines the
// examples' dimensions up; unbatched inputs broadcast over the batch.
static loom_status_t rule_elementwise(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  (void)out_fallback;
  return loom__vmap_same_op(call, loom__vmap_padded, loom__vmap_max_rank(call));
}

// OnesLike and ZerosLike: the result depends on an example's shape only,
// which every example shares, so it is one unbatched value (a gradient's
// seed of ones stays unbatched, and the ops it reaches run on fewer
// batched inputs). Made on the host when the outer handler is the CPU's
// (a constant for a scalar, else one Fill); the op over the batch
// otherwise.
static loom_status_t rule_like(loom__vmap_call_t* call, bool* out_fallback) {
  const loom_tensor_metadata_t* example = &call->input_metadata[0];
  loom_dtype_t dtype = example->dtype;
  bool host = call->num_inputs == 1 && call->num_outputs == 1 &&
              call->outer == loom_context_cpu(call->context) &&
              loom_shape_is_fully_defined(&example->shape) &&
              (dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE ||
               dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_INT64);
  if (!host) return rule_elementwise(call, out_fallback);
  double value = strcmp(call->op_name, "OnesLike") == 0 ? 1.0 : 0.0;
  loom_tensor_handle_t* scalar = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_host_scalar(call->context, dtype, value, &scalar));
  loom_tensor_handle_t* result = scalar;
  if (example->shape.rank > 0) {
    loom_tensor_handle_t* inputs[2] = {NULL, scalar};
    loom_status_t status = loom__vmap_int_vector(
        call->context, LOOM_DTYPE_INT32, loom_shape_dims(&example->shape),
        example->shape.rank, false, &inputs[0]);
    if (!status) {
      status = loom__vmap_run(call->context, "Fill", inputs, 2, NULL, NULL, 0,
                              &result, 1);
    }
    loom__grad_release_all(inputs, 2);
    LOOM_RETURN_IF_ERROR(status);
  }
  call->outputs[0].value = result;
  call->outputs[0].axis = LOOM_VMAP_UNBATCHED;
  return loom_ok_status();
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
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  return loom__vmap_same_op(call, loom__vmap_padded, 0);
}

// The same for ops on the last `min_rank` dimensions of input 0 (TopKV2,
// MatrixBandPart, MatrixDiagPartV3): an example of lower rank is the op's
// own error, which the fallback gives.
static loom_status_t rule_inner_dims(loom__vmap_call_t* call, int32_t min_rank,
                                     bool* out_fallback) {
  if (call->input_metadata[0].shape.rank < min_rank) {
    *out_fallback = true;
    return loom_ok_status();
  }
  return rule_first_input(call, out_fallback);
}

static loom_status_t rule_last_dim(loom__vmap_call_t* call,
                                   bool* out_fallback) {
  return rule_inner_dims(call, 1, out_fallback);
}

static loom_status_t rule_last_two_dims(loom__vmap_call_t* call,
                                        bool* out_fallback) {
  return rule_inner_dims(call, 2, out_fallback);
}

// MatrixDiagV3 (diagonal, k, num_rows, num_cols, padding_value): the
// diagonals are the last dimension of input 0, or its last two when k is
// a range.
static loom_status_t rule_matrix_diag(loom__vmap_call_t* call,
                                      bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    return loom_ok_status();
  }
  int64_t k[2] = {0, 0};
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom__vmap_read_ints(call->context, call->inputs[1].value, k, 2, &count));
  bool range = count == 2 && k[0] != k[1];
  return rule_inner_dims(call, range ? 2 : 1, out_fallback);
}

// Ops whose input 1 lists axes of input 0 (reductions, ArgMax, ArgMin,
// Cumsum, ReverseV2):
// the axes shift by one, input 0 has the batch first.
static loom_status_t rule_axes_input(loom__vmap_call_t* call,
                                     bool* out_fallback) {
  if (call->num_inputs != 2 ||
      !loom__vmap_require_unbatched(call, 1u, out_fallback)) {
    *out_fallback = true;
    return loom_ok_status();
  }
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(
      call->context, call->inputs[1].value, axes, LOOM_MAX_SHAPE_RANK, &count));
  int32_t rank = call->input_metadata[0].shape.rank;
  for (int32_t j = 0; j < count; ++j) {
    LOOM_RETURN_IF_ERROR(loom__vmap_shift_axis(call, &axes[j], rank));
  }
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(
      call->context, call->input_metadata[1].dtype, axes, count,
      call->input_metadata[1].shape.rank == 0, &inputs[1]));
  return loom__vmap_run_front(call, call->op_name, 0, inputs, 2, true, NULL, 0);
}

// Select (condition, t, e): t and e have equal shapes; the condition has
// theirs, or is a scalar, or (t of rank >= 1) a vector over t's first
// dimension. Given t's rank by 1s after its dimensions, the condition
// broadcasts as SelectV2's does: one SelectV2, the operands padded.
static loom_status_t rule_select(loom__vmap_call_t* call, bool* out_fallback) {
  const loom_shape_t* condition = &call->input_metadata[0].shape;
  const loom_shape_t* t = &call->input_metadata[1].shape;
  int32_t rank = t->rank;
  bool vector = condition->rank == 1 && rank >= 1 &&
                loom_shape_dims(condition)[0] == loom_shape_dims(t)[0];
  if (!loom_shape_equal(t, &call->input_metadata[2].shape) ||
      rank + 1 > LOOM_MAX_SHAPE_RANK ||
      !(vector || condition->rank == 0 || loom_shape_equal(condition, t))) {
    *out_fallback = true;  // the op's own error
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t k = 0;
  if (loom__vmap_batched(call, 0)) dims[k++] = call->batch_size;
  for (int32_t d = 0; d < condition->rank; ++d) {
    dims[k++] = loom_shape_dims(condition)[d];
  }
  for (int32_t d = condition->rank; d < rank; ++d) dims[k++] = 1;
  loom_tensor_handle_t* inputs[3] = {NULL, NULL, NULL};
  loom_tensor_handle_t* front = NULL;
  loom_status_t status = loom__vmap_padded(call, 0, 0, &front);
  if (!status) {
    status = loom__vmap_reshape(call->context, front, dims, k, &inputs[0]);
  }
  loom_tensor_handle_release(front);
  for (int32_t i = 1; i < 3 && !status; ++i) {
    status = loom__vmap_padded(call, i, rank, &inputs[i]);
  }
  if (status) {
    loom__grad_release_all(inputs, 3);
    return status;
  }
  return loom__vmap_run_into_outputs(call, "SelectV2", inputs, 3, false, NULL,
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

// Einsum: a label the equation does not use names the batch; it is
// prepended to the subscripts of the batched operands and to the output's,
// whose batch dimension is then first. Unbatched operands keep theirs. An
// equation the op would reject takes the fallback, which gives its error.
static loom_status_t rule_einsum(loom__vmap_call_t* call, bool* out_fallback) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(call->attrs, "equation", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING || value.is_list ||
      call->num_inputs > 2) {
    *out_fallback = true;
    return loom_ok_status();
  }
  const char* text = value.u.string.data;
  size_t length = value.u.string.size;
  // The subscripts: [starts[i], ends[i]) for the inputs, then the output.
  size_t starts[3] = {0}, ends[3] = {0};
  int32_t count = 0, arrows = 0;
  bool used[256] = {false};
  for (size_t i = 0; i < length; ++i) {
    unsigned char c = (unsigned char)text[i];
    if (c == '-' && i + 1 < length && text[i + 1] == '>') {
      if (arrows++ || count >= 2) break;
      ends[count++] = i;
      starts[count] = i + 2;
      ++i;
    } else if (c == ',' && !arrows) {
      if (count >= 2) break;
      ends[count++] = i;
      starts[count] = i + 1;
    } else if (c != '.') {
      used[c] = true;
    }
  }
  ends[count] = length;
  char label = 0;
  static const char kLabels[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (const char* l = kLabels; *l && !label; ++l) {
    if (!used[(unsigned char)*l]) label = *l;
  }
  // Three subscripts of up to LOOM_MAX_SHAPE_RANK labels and an ellipsis.
  char equation[1024];
  if (arrows != 1 || count != call->num_inputs || !label ||
      length + 4 > sizeof(equation)) {
    *out_fallback = true;
    return loom_ok_status();
  }
  size_t n = 0;
  for (int32_t i = 0; i <= count; ++i) {
    if (i == count) {
      equation[n++] = '-';
      equation[n++] = '>';
    } else if (i > 0) {
      equation[n++] = ',';
    }
    if (i == count || loom__vmap_batched(call, i)) equation[n++] = label;
    memcpy(equation + n, text + starts[i], ends[i] - starts[i]);
    n += ends[i] - starts[i];
  }
  equation[n] = '\0';
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    loom_status_t status = loom_ok_status();
    if (loom__vmap_batched(call, i)) {
      status = loom__vmap_to_front(call, i, &inputs[i]);
    } else {
      loom_tensor_handle_retain(call->inputs[i].value);
      inputs[i] = call->inputs[i].value;
    }
    if (status) {
      loom__grad_release_all(inputs, i);
      return status;
    }
  }
  return loom__vmap_run_into_outputs(
      call, "Einsum", inputs, call->num_inputs, true,
      LOOM_GRAD_ATTRS(LOOM_GRAD_STRING("equation", equation)));
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
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t k = 0;
  if (loom__vmap_batched(call, 1)) dims[k++] = call->batch_size;
  for (int32_t d = 0; d < rank; ++d) {
    dims[k++] =
        d == channel ? loom_shape_dims(&call->input_metadata[1].shape)[0] : 1;
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
  int64_t values[LOOM_MAX_SHAPE_RANK];
  int32_t count = 1;
  bool scalar = true;
  if (strcmp(call->op_name, "Shape") == 0) {
    for (int32_t d = 0; d < shape->rank; ++d) {
      values[d] = loom_shape_dims(shape)[d];
    }
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
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (d != channel) axes[count++] = d + 1;
  }
  loom_tensor_handle_t* inputs[2] = {NULL, NULL};
  LOOM_RETURN_IF_ERROR(loom__vmap_int_vector(call->context, LOOM_DTYPE_INT32,
                                             axes, count, false, &inputs[1]));
  return loom__vmap_run_front(call, "Sum", 0, inputs, 2, false, NULL, 0);
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

// The indicator ops (FunctionInput ... WhileOutput): every output is input
// 0, batched as it is.
static loom_status_t rule_fan_out(loom__vmap_call_t* call, bool* out_fallback) {
  (void)out_fallback;
  for (int32_t k = 0; k < call->num_outputs; ++k) {
    loom_tensor_handle_retain(call->inputs[0].value);
    call->outputs[k] = call->inputs[0];
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
#define FOLD(name)                                \
  {                                               \
    name, loom__vmap_rule_fold_first,             \
        "batch folded into the leading dimension" \
  }

// Sorted by name (the order loom__vmap_rule_at lists them in).
// Ops that call functions (vmap_control_flow.c).
#define IF_OR_CASE(name)                                               \
  {                                                                    \
    name, loom__vmap_rule_control_flow,                                \
        "the branches the examples take run on the vmap; each output " \
        "selected "                                                    \
        "per example"                                                  \
  }
#define WHILE(name)                                                        \
  {                                                                        \
    name, loom__vmap_rule_control_flow,                                    \
        "condition and body run on the vmap until no example goes on; an " \
        "example whose condition failed keeps its values"                  \
  }
#define CALL(name)                                                      \
  {                                                                     \
    name, loom__vmap_rule_control_flow,                                 \
        "the function's body op by op on the vmap, each op by its rule" \
  }

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
    {"AvgPoolGrad", loom__vmap_rule_avg_pool_grad,
     "batch folded into N (grad and orig_input_shape)"},
    {"BatchMatMulV2", rule_matmul, "batched product, ranks padded"},
    {"BiasAdd", rule_bias_add, "BiasAdd, or AddV2 for a batched bias"},
    {"BiasAddGrad", rule_bias_add_grad, "Sum over the non-channel axes"},
    {"BroadcastTo", loom__vmap_rule_broadcast_to,
     "shape gains the batch in front"},
    IF_OR_CASE("Case"),
    {"CaseInput", rule_fan_out, "each output is the input, as it is"},
    {"CaseOutput", rule_fan_out, "each output is the input, as it is"},
    ELEMENTWISE("Cast"),
    ELEMENTWISE("Ceil"),
    ELEMENTWISE("CheckNumericsV2"),
    {"ClipByValue", rule_first_input, "batch first (bounds unbatched)"},
    {"ConcatV2", loom__vmap_rule_concat, "values [B, ...], axis shifted"},
    {"Conv2D", loom__vmap_rule_conv2d,
     "batch folded into N; a batched filter: a grouped convolution"},
    {"Conv2DBackpropFilter", loom__vmap_rule_conv_backprop_filter,
     "batch folded into the channels: a grouped filter gradient"},
    {"Conv2DBackpropInput", loom__vmap_rule_conv_backprop_input,
     "batch folded into N (out_backprop and input_sizes)"},
    ELEMENTWISE("Cos"),
    AXES("Cumprod"),
    AXES("Cumsum"),
    ELEMENTWISE("Div"),
    {"Einsum", rule_einsum,
     "a label of its own for the batch, prepended to the batched operands' "
     "subscripts and the output's"},
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
    {"FunctionInput", rule_fan_out, "each output is the input, as it is"},
    {"FunctionOutput", rule_fan_out, "each output is the input, as it is"},
    {"FusedBatchNormGradV3", loom__vmap_rule_batch_norm,
     "batch folded into the channels (per-channel statistics)"},
    {"FusedBatchNormV3", loom__vmap_rule_batch_norm,
     "batch folded into the channels (per-channel statistics)"},
    {"Gather", loom__vmap_rule_gather,
     "GatherV2 on the shifted axis 0; batched indices: batch_dims 1"},
    {"GatherNd", loom__vmap_rule_gather_nd,
     "params' batch after the indexed dims; batched indices gain the "
     "example's number"},
    {"GatherV2", loom__vmap_rule_gather,
     "axis shifted; batched indices: batch_dims + 1"},
    ELEMENTWISE("Greater"),
    ELEMENTWISE("GreaterEqual"),
    ELEMENTWISE("Identity"),
    {"IdentityN", rule_identity_n, "each value as it is"},
    IF_OR_CASE("If"),
    {"IfInput", rule_fan_out, "each output is the input, as it is"},
    {"IfOutput", rule_fan_out, "each output is the input, as it is"},
    ELEMENTWISE("Inv"),
    SAME_SHAPE("InvGrad"),
    ELEMENTWISE("IsFinite"),
    ELEMENTWISE("IsInf"),
    ELEMENTWISE("IsNan"),
    {"L2Loss", loom__vmap_rule_l2_loss, "Sum of squares over one example"},
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
    {"MatrixBandPart", rule_last_two_dims, "batch first (bounds unbatched)"},
    {"MatrixDiagPartV3", rule_last_two_dims, "batch first (k unbatched)"},
    {"MatrixDiagV3", rule_matrix_diag, "batch first (k, sizes unbatched)"},
    AXES("Max"),
    FOLD("MaxPool"),
    {"MaxPoolGrad", loom__vmap_rule_fold_all,
     "batch folded into N of every input"},
    {"MaxPoolGradGrad", loom__vmap_rule_fold_all,
     "batch folded into N of every input"},
    ELEMENTWISE("Maximum"),
    AXES("Mean"),
    AXES("Min"),
    ELEMENTWISE("Minimum"),
    ELEMENTWISE("Mul"),
    ELEMENTWISE("Neg"),
    ELEMENTWISE("NotEqual"),
    {"OneHot", loom__vmap_rule_one_hot, "indices batch first, axis shifted"},
    {"OnesLike", rule_like, "one unbatched value: ones of an example's shape"},
    {"Pack", loom__vmap_rule_pack, "values [B, ...], axis shifted"},
    {"Pad", loom__vmap_rule_pad, "paddings gain [0, 0] for the batch"},
    {"PadV2", loom__vmap_rule_pad, "paddings gain [0, 0] for the batch"},
    CALL("PartitionedCall"),
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
    {"ScatterNd", loom__vmap_rule_scatter_nd,
     "indices gain the example's number, shape gains B"},
    {"Select", rule_select, "SelectV2, the condition padded to t's rank"},
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
    {"SoftmaxCrossEntropyWithLogits", loom__vmap_rule_fold_first_two,
     "batch folded into the leading dimension of logits and labels"},
    ELEMENTWISE("Softplus"),
    SAME_SHAPE("SoftplusGrad"),
    ELEMENTWISE("Softsign"),
    SAME_SHAPE("SoftsignGrad"),
    {"SparseSoftmaxCrossEntropyWithLogits", loom__vmap_rule_fold_first_two,
     "batch folded into the leading dimension of logits and labels"},
    {"Split", loom__vmap_rule_split, "axis shifted, outputs batch first"},
    {"SplitV", loom__vmap_rule_split, "axis shifted, outputs batch first"},
    ELEMENTWISE("Sqrt"),
    SAME_SHAPE("SqrtGrad"),
    ELEMENTWISE("Square"),
    ELEMENTWISE("SquaredDifference"),
    {"Squeeze", loom__vmap_rule_squeeze, "axes shifted; never the batch"},
    CALL("StatefulPartitionedCall"),
    IF_OR_CASE("StatelessCase"),
    IF_OR_CASE("StatelessIf"),
    WHILE("StatelessWhile"),
    ELEMENTWISE("StopGradient"),
    {"StridedSlice", loom__vmap_rule_strided_slice,
     "a whole batch dimension first, masks shifted"},
    ELEMENTWISE("Sub"),
    AXES("Sum"),
    ELEMENTWISE("Tanh"),
    SAME_SHAPE("TanhGrad"),
    {"TensorScatterUpdate", loom__vmap_rule_scatter_nd,
     "indices gain the example's number, tensor and updates [B, ...]"},
    {"Tile", loom__vmap_rule_tile, "multiples gain a 1 for the batch"},
    {"TopKV2", rule_last_dim, "batch first (k unbatched)"},
    {"Transpose", loom__vmap_rule_transpose,
     "permutation shifted, batch first"},
    ELEMENTWISE("TruncateDiv"),
    ELEMENTWISE("TruncateMod"),
    {"Unpack", loom__vmap_rule_pack, "value batch first, axis shifted"},
    WHILE("While"),
    {"WhileInput", rule_fan_out, "each output is the input, as it is"},
    {"WhileOutput", rule_fan_out, "each output is the input, as it is"},
    {"ZerosLike", rule_like,
     "one unbatched value: zeros of an example's shape"},
};

// A hash index of kRules by name (entry i + 1; 0: empty), built once: a
// vmap is often made per call (vmap(grad f)), so each of its ops is
// prepared, and its rule looked up, per call; one hash and one strcmp
// instead of a binary search's eight. Immutable once built, so shared by
// every thread.
enum { kRuleIndexSize = 1024 };  // a power of two, over twice the rules
_Static_assert(sizeof(kRules) / sizeof(kRules[0]) < kRuleIndexSize / 2,
               "kRuleIndexSize is too small");
static uint16_t g_rule_index[kRuleIndexSize];
static pthread_once_t g_rule_index_once = PTHREAD_ONCE_INIT;

static size_t rule_slot(const char* op_name) {
  return (size_t)loom__hash_bytes(op_name, strlen(op_name)) &
         (kRuleIndexSize - 1);
}

static void build_rule_index(void) {
  for (size_t i = 0; i < sizeof(kRules) / sizeof(kRules[0]); ++i) {
    size_t slot = rule_slot(kRules[i].op_name);
    while (g_rule_index[slot]) slot = (slot + 1) & (kRuleIndexSize - 1);
    g_rule_index[slot] = (uint16_t)(i + 1);
  }
}

const loom__vmap_rule_t* loom__vmap_find_rule(const char* op_name) {
  if (!op_name) return NULL;
  pthread_once(&g_rule_index_once, build_rule_index);
  for (size_t slot = rule_slot(op_name);;
       slot = (slot + 1) & (kRuleIndexSize - 1)) {
    uint16_t entry = g_rule_index[slot];
    if (!entry) return NULL;
    const loom__vmap_rule_t* rule = &kRules[entry - 1];
    if (strcmp(rule->op_name, op_name) == 0) return rule;
  }
}

size_t loom__vmap_rule_count(void) {
  return sizeof(kRules) / sizeof(kRules[0]);
}

const loom__vmap_rule_t* loom__vmap_rule_at(size_t index) {
  return index < loom__vmap_rule_count() ? &kRules[index] : NULL;
}
