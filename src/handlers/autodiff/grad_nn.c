// Gradient functions of the neural-network op family: Softmax and
// LogSoftmax, AvgPool (and AvgPoolGrad, for second order), MaxPoolGrad and
// MaxPoolGradGrad (second and third order of MaxPool), the
// convolution backprops (each one's gradient is the other two convolution
// ops), BiasAddV1 / BiasAddGrad, FusedBatchNormV3 in training and
// inference, LeakyRelu (and LeakyReluGrad) and L2Loss. TensorFlow's
// formulas (nn_grad.py).

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)
#define RELEASE(array) \
  loom__grad_release_all((array), (int32_t)(sizeof(array) / sizeof((array)[0])))

enum { kMaxPassedAttrs = 8 };

// The forward op's values of the attributes `names` (those it has), to pass
// on to the ops of its gradient.
static int32_t pass_attrs(grad_ctx_t* ctx, const char* const* names,
                          int32_t count, loom__grad_attr_t* out) {
  int32_t n = 0;
  for (int32_t i = 0; i < count && n < kMaxPassedAttrs; ++i) {
    loom_attr_value_t value;
    if (loom_gradient_context_attr(ctx, names[i], &value)) {
      out[n++] = LOOM_GRAD_VALUE(names[i], value);
    }
  }
  return n;
}

static const char* const kConvAttrs[] = {
    "strides",     "padding",   "explicit_paddings",
    "data_format", "dilations", "use_cudnn_on_gpu",
};
static const char* const kPoolAttrs[] = {"ksize", "strides", "padding",
                                         "data_format"};
#define COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

// Whether the forward op's data_format starts with "NC" (channels first).
static bool channels_first(grad_ctx_t* ctx) {
  loom_attr_value_t value;
  return loom_gradient_context_attr(ctx, "data_format", &value) &&
         value.kind == LOOM_ATTR_KIND_STRING && value.u.string.size >= 2 &&
         memcmp(value.u.string.data, "NC", 2) == 0;
}

static loom_status_t shape_of_input(grad_ctx_t* ctx, int32_t index,
                                    handle_t** out) {
  return loom__grad_shape_constant(
      ctx, &loom_gradient_context_input_metadata(ctx, index)->shape, out);
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

// The last axis of output 0, as a one-element axis list.
static int64_t last_axis(grad_ctx_t* ctx) {
  int32_t rank = loom_gradient_context_output_metadata(ctx, 0)->shape.rank;
  return rank > 0 ? rank - 1 : 0;
}

// dx = (g - sum(g * y, -1)) * y.
static loom_status_t softmax_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  handle_t* y = loom_gradient_context_output(ctx, 0);
  int64_t axis = last_axis(ctx);
  handle_t* t[3] = {NULL};
  loom_status_t s = loom__grad_binary(ctx, "Mul", dys[0], y, &t[0]);
  if (!s) s = loom__grad_sum(ctx, t[0], &axis, 1, true, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Sub", dys[0], t[1], &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[2], y, &dxs[0]);
  RELEASE(t);
  return s;
}

// dx = g - sum(g, -1) * exp(y).
static loom_status_t log_softmax_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                      handle_t** dxs, void* data) {
  int64_t axis = last_axis(ctx);
  handle_t* t[3] = {NULL};
  loom_status_t s = loom__grad_sum(ctx, dys[0], &axis, 1, true, &t[0]);
  if (!s) {
    s = loom__grad_unary(ctx, "Exp", loom_gradient_context_output(ctx, 0),
                         &t[1]);
  }
  if (!s) s = loom__grad_binary(ctx, "Mul", t[0], t[1], &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Sub", dys[0], t[2], &dxs[0]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Pooling and convolutions
//===----------------------------------------------------------------------===//

static loom_status_t avg_pool_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                   handle_t** dxs, void* data) {
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kPoolAttrs, COUNT(kPoolAttrs), attrs);
  handle_t* t[1] = {NULL};
  loom_status_t s = shape_of_input(ctx, 0, &t[0]);
  if (!s) {
    s = loom__grad_op(ctx, "AvgPoolGrad", LOOM_GRAD_INPUTS(t[0], dys[0]), attrs,
                      n, &dxs[0]);
  }
  RELEASE(t);
  return s;
}

// AvgPoolGrad is linear in its gradient input: AvgPool is its transpose.
static loom_status_t avg_pool_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kPoolAttrs, COUNT(kPoolAttrs), attrs);
  return loom__grad_op(ctx, "AvgPool", &dys[0], 1, attrs, n, &dxs[1]);
}

// MaxPoolGrad(x, y, g) and MaxPoolGradGrad(x, y, g) are linear in g (they
// move g's elements to or from each window's first maximum) and piecewise
// constant in x (and do not read y's values): TensorFlow's gradients are
// zeros for x and y and, for g, the other op of the pair on the upstream
// gradient.
static loom_status_t max_pool_second_order(grad_ctx_t* ctx,
                                           handle_t* const* dys, handle_t** dxs,
                                           const char* transpose) {
  if (!dys[0]) return loom_ok_status();
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  loom_status_t s = loom_ok_status();
  if (loom_gradient_context_input_needs_gradient(ctx, 2)) {
    loom__grad_attr_t attrs[kMaxPassedAttrs];
    int32_t n = pass_attrs(ctx, kPoolAttrs, COUNT(kPoolAttrs), attrs);
    for (int32_t i = 0; i < n; ++i) {
      const loom_attr_value_t* v = &attrs[i].value;
      if (strcmp(attrs[i].name, "padding") == 0 &&
          v->kind == LOOM_ATTR_KIND_STRING && v->u.string.size == 8 &&
          memcmp(v->u.string.data, "EXPLICIT", 8) == 0) {
        return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                "%s does not support EXPLICIT padding",
                                transpose);
      }
    }
    s = loom__grad_op(ctx, transpose, LOOM_GRAD_INPUTS(x, y, dys[0]), attrs, n,
                      &dxs[2]);
  }
  if (!s && loom_gradient_context_input_needs_gradient(ctx, 0)) {
    s = loom__grad_zeros_like(ctx, x, &dxs[0]);
  }
  if (!s && loom_gradient_context_input_needs_gradient(ctx, 1)) {
    s = loom__grad_zeros_like(ctx, y, &dxs[1]);
  }
  return s;
}

static loom_status_t max_pool_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  return max_pool_second_order(ctx, dys, dxs, "MaxPoolGradGrad");
}

static loom_status_t max_pool_grad_grad_grad(grad_ctx_t* ctx,
                                             handle_t* const* dys,
                                             handle_t** dxs, void* data) {
  return max_pool_second_order(ctx, dys, dxs, "MaxPoolGrad");
}

// Conv2DBackpropInput(input_sizes, filter, dy) = dx: linear in filter and
// dy.
static loom_status_t conv_backprop_input_grad(grad_ctx_t* ctx,
                                              handle_t* const* dys,
                                              handle_t** dxs, void* data) {
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kConvAttrs, COUNT(kConvAttrs), attrs);
  handle_t* filter = loom_gradient_context_input(ctx, 1);
  handle_t* out_backprop = loom_gradient_context_input(ctx, 2);
  handle_t* t[1] = {NULL};
  loom_status_t s = shape_of_input(ctx, 1, &t[0]);
  if (!s) {
    s = loom__grad_op(ctx, "Conv2DBackpropFilter",
                      LOOM_GRAD_INPUTS(dys[0], t[0], out_backprop), attrs, n,
                      &dxs[1]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "Conv2D", LOOM_GRAD_INPUTS(dys[0], filter), attrs, n,
                      &dxs[2]);
  }
  RELEASE(t);
  return s;
}

// Conv2DBackpropFilter(input, filter_sizes, dy) = dfilter: linear in input
// and dy.
static loom_status_t conv_backprop_filter_grad(grad_ctx_t* ctx,
                                               handle_t* const* dys,
                                               handle_t** dxs, void* data) {
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kConvAttrs, COUNT(kConvAttrs), attrs);
  handle_t* input = loom_gradient_context_input(ctx, 0);
  handle_t* out_backprop = loom_gradient_context_input(ctx, 2);
  handle_t* t[1] = {NULL};
  loom_status_t s = shape_of_input(ctx, 0, &t[0]);
  if (!s) {
    s = loom__grad_op(ctx, "Conv2DBackpropInput",
                      LOOM_GRAD_INPUTS(t[0], dys[0], out_backprop), attrs, n,
                      &dxs[0]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "Conv2D", LOOM_GRAD_INPUTS(input, dys[0]), attrs, n,
                      &dxs[2]);
  }
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Bias
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// LeakyRelu, L2Loss
//===----------------------------------------------------------------------===//

static const char* const kAlphaAttrs[] = {"alpha"};

// LeakyRelu(x): dx = LeakyReluGrad(dy, x) with the same alpha.
static loom_status_t leaky_relu_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                     handle_t** dxs, void* data) {
  if (!dys[0]) return loom_ok_status();
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kAlphaAttrs, 1, attrs);
  return loom__grad_op(
      ctx, "LeakyReluGrad",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 0)), attrs, n,
      &dxs[0]);
}

// LeakyReluGrad(g, x) is linear in g; x only selects the slope.
static loom_status_t leaky_relu_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                          handle_t** dxs, void* data) {
  if (!dys[0]) return loom_ok_status();
  handle_t* features = loom_gradient_context_input(ctx, 1);
  loom__grad_attr_t attrs[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kAlphaAttrs, 1, attrs);
  LOOM_RETURN_IF_ERROR(loom__grad_op(ctx, "LeakyReluGrad",
                                     LOOM_GRAD_INPUTS(dys[0], features), attrs,
                                     n, &dxs[0]));
  return loom__grad_zeros_like(ctx, features, &dxs[1]);
}

// L2Loss(t) = sum(t^2) / 2: dt = t * dy.
static loom_status_t l2_loss_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  if (!dys[0]) return loom_ok_status();
  return loom__grad_binary(ctx, "Mul", loom_gradient_context_input(ctx, 0),
                           dys[0], &dxs[0]);
}

static loom_status_t bias_add_v1_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                      handle_t** dxs, void* data) {
  loom_tensor_handle_retain(dys[0]);
  dxs[0] = dys[0];
  return loom__grad_unary(ctx, "BiasAddGrad", dys[0], &dxs[1]);
}

// BiasAddGrad sums over all but the channel dimension: its gradient
// broadcasts back along them.
static loom_status_t bias_add_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  const loom_shape_t* shape =
      &loom_gradient_context_input_metadata(ctx, 0)->shape;
  if (shape->rank < 2 || !loom_shape_is_fully_defined(shape)) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "BiasAddGrad (gradient): the shape must be known");
  }
  handle_t* t[2] = {NULL};
  loom_status_t s = loom_ok_status();
  if (channels_first(ctx)) {
    int64_t dims[LOOM_MAX_RANK];
    dims[0] = shape->dims[1];
    for (int32_t d = 1; d < shape->rank - 1; ++d) dims[d] = 1;
    s = loom__grad_reshape(ctx, dys[0], dims, shape->rank - 1, &t[0]);
  } else {
    loom_tensor_handle_retain(dys[0]);
    t[0] = dys[0];
  }
  if (!s) s = loom__grad_shape_constant(ctx, shape, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "BroadcastTo", t[0], t[1], &dxs[0]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// FusedBatchNormV3
//===----------------------------------------------------------------------===//

typedef struct batch_norm_t {
  loom_dtype_t t, u;
  int32_t rank;
  int64_t axes[LOOM_MAX_RANK];  // every dimension but the channel one
  int32_t num_axes;
  int64_t channel_dims[LOOM_MAX_RANK];  // a channel vector, broadcastable
  int32_t channel_rank;
  bool training;
  float epsilon;
} batch_norm_t;

// A channel vector (input or output) in T, shaped to broadcast against x.
static loom_status_t channel_operand(grad_ctx_t* ctx, const batch_norm_t* bn,
                                     handle_t* v, handle_t** out) {
  handle_t* cast = NULL;
  if (bn->u != bn->t) {
    LOOM_RETURN_IF_ERROR(
        loom__grad_op(ctx, "Cast", &v, 1,
                      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", bn->t)), &cast));
    v = cast;
  }
  loom_status_t s =
      loom__grad_reshape(ctx, v, bn->channel_dims, bn->channel_rank, out);
  loom_tensor_handle_release(cast);
  return s;
}

// A per-channel sum of `v` (in T) as U.
static loom_status_t channel_sum(grad_ctx_t* ctx, const batch_norm_t* bn,
                                 handle_t* v, handle_t** out) {
  if (bn->u == bn->t) {
    return loom__grad_sum(ctx, v, bn->axes, bn->num_axes, false, out);
  }
  handle_t* sum = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_sum(ctx, v, bn->axes, bn->num_axes, false, &sum));
  loom_status_t s =
      loom__grad_op(ctx, "Cast", &sum, 1,
                    LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", bn->u)), out);
  loom_tensor_handle_release(sum);
  return s;
}

// The gradient with ops whose gradients are known (any dtype, and
// differentiable again). Training, with x^ = (x - m) * r and
// r = rsqrt(v + eps) from the batch's mean m and biased variance v:
//   dx = scale * r * (dy - mean(dy) - x^ * mean(dy * x^))
// inference, with the given mean and variance:
//   dx = dy * scale * r, dscale = sum(dy * (x - mean) * r);
// doffset = sum(dy) in both.
static loom_status_t batch_norm_composite(grad_ctx_t* ctx,
                                          const batch_norm_t* bn, handle_t* dy,
                                          handle_t** dxs) {
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* t[20] = {NULL};
  loom_status_t s = loom__grad_scalar(ctx, bn->t, bn->epsilon, &t[0]);
  if (!s)
    s = channel_operand(ctx, bn, loom_gradient_context_input(ctx, 1),
                        &t[1]);  // scale
  if (bn->training) {
    handle_t* axes = NULL;
    if (!s) {
      s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, bn->axes, bn->num_axes,
                                &axes);
    }
    t[19] = axes;
#define MEAN(in, out)                                      \
  loom__grad_op(ctx, "Mean", LOOM_GRAD_INPUTS((in), axes), \
                LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", true)), (out))
    if (!s) s = MEAN(x, &t[2]);                                 // m
    if (!s) s = loom__grad_binary(ctx, "Sub", x, t[2], &t[3]);  // x - m
    if (!s) s = loom__grad_unary(ctx, "Square", t[3], &t[4]);
    if (!s) s = MEAN(t[4], &t[5]);  // v
    if (!s) s = loom__grad_binary(ctx, "AddV2", t[5], t[0], &t[6]);
    if (!s) s = loom__grad_unary(ctx, "Rsqrt", t[6], &t[7]);       // r
    if (!s) s = loom__grad_binary(ctx, "Mul", t[3], t[7], &t[8]);  // x^
    if (!s) s = loom__grad_binary(ctx, "Mul", dy, t[8], &t[9]);    // dy x^
    if (!s) s = MEAN(dy, &t[10]);
    if (!s) s = MEAN(t[9], &t[11]);
    if (!s) s = loom__grad_binary(ctx, "Mul", t[8], t[11], &t[12]);
    if (!s) s = loom__grad_binary(ctx, "Sub", dy, t[10], &t[13]);
    if (!s) s = loom__grad_binary(ctx, "Sub", t[13], t[12], &t[14]);
    if (!s) s = loom__grad_binary(ctx, "Mul", t[1], t[7], &t[15]);
    if (!s) s = loom__grad_binary(ctx, "Mul", t[15], t[14], &dxs[0]);
    if (!s) s = channel_sum(ctx, bn, t[9], &dxs[1]);
#undef MEAN
  } else {
    if (!s)
      s = channel_operand(ctx, bn, loom_gradient_context_output(ctx, 3),
                          &t[2]);  // mean
    if (!s)
      s = channel_operand(ctx, bn, loom_gradient_context_output(ctx, 4),
                          &t[3]);  // variance
    if (!s) s = loom__grad_binary(ctx, "AddV2", t[3], t[0], &t[4]);
    if (!s) s = loom__grad_unary(ctx, "Rsqrt", t[4], &t[5]);  // r
    if (!s) s = loom__grad_binary(ctx, "Mul", t[1], t[5], &t[6]);
    if (!s) s = loom__grad_binary(ctx, "Mul", dy, t[6], &dxs[0]);
    if (!s) s = loom__grad_binary(ctx, "Sub", x, t[2], &t[7]);
    if (!s) s = loom__grad_binary(ctx, "Mul", t[7], t[5], &t[8]);  // x^
    if (!s) s = loom__grad_binary(ctx, "Mul", dy, t[8], &t[9]);
    if (!s) s = channel_sum(ctx, bn, t[9], &dxs[1]);
  }
  if (!s) s = channel_sum(ctx, bn, dy, &dxs[2]);
  RELEASE(t);
  return s;
}

// Gradients of x, scale and offset (TensorFlow gives none to the mean and
// variance inputs, and uses only y's gradient). FusedBatchNormGradV3 where
// it has a kernel (T half, bfloat16 or float with U float), the composite
// otherwise.
static loom_status_t batch_norm_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                     handle_t** dxs, void* data) {
  if (!dys[0]) return loom_ok_status();
  const loom_tensor_metadata_t* xm =
      loom_gradient_context_input_metadata(ctx, 0);
  batch_norm_t bn = {
      .t = xm->dtype,
      .u = loom_gradient_context_input_metadata(ctx, 1)->dtype,
      .rank = xm->shape.rank,
      .training = true,
      .epsilon = 1e-4f,
  };
  const loom_op_attrs_t* attrs = loom_gradient_context_attrs(ctx);
  loom_status_t s = loom_op_attrs_get_bool(attrs, "is_training", &bn.training);
  if (!s) s = loom_op_attrs_get_f32(attrs, "epsilon", &bn.epsilon);
  LOOM_RETURN_IF_ERROR(s);
  if (bn.rank < 3 || !loom_shape_is_fully_defined(&xm->shape)) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "FusedBatchNormV3 (gradient): x's shape must be "
                            "known");
  }
  int32_t channel = channels_first(ctx) ? 1 : bn.rank - 1;
  for (int32_t d = 0; d < bn.rank; ++d) {
    if (d != channel) bn.axes[bn.num_axes++] = d;
  }
  bn.channel_rank = bn.rank - channel;
  bn.channel_dims[0] = xm->shape.dims[channel];
  for (int32_t d = 1; d < bn.channel_rank; ++d) bn.channel_dims[d] = 1;
  bool fused = bn.u == LOOM_DTYPE_FLOAT &&
               (bn.t == LOOM_DTYPE_FLOAT || bn.t == LOOM_DTYPE_HALF ||
                bn.t == LOOM_DTYPE_BFLOAT16);
  if (!fused) return batch_norm_composite(ctx, &bn, dys[0], dxs);
  static const char* const kNames[] = {"epsilon", "data_format", "is_training"};
  loom__grad_attr_t passed[kMaxPassedAttrs];
  int32_t n = pass_attrs(ctx, kNames, COUNT(kNames), passed);
  handle_t* results[5] = {NULL};
  s = loom__grad_execute(
      ctx, "FusedBatchNormGradV3",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 0),
                       loom_gradient_context_input(ctx, 1),
                       loom_gradient_context_output(ctx, 3),
                       loom_gradient_context_output(ctx, 4),
                       loom_gradient_context_output(ctx, 5)),
      passed, n, results, 5);
  if (!s) {
    for (int32_t i = 0; i < 3; ++i) {
      dxs[i] = results[i];
      results[i] = NULL;
    }
  }
  RELEASE(results);
  return s;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__gradient_row_t kGradients[] = {
    {.op = "Softmax", .fn = softmax_grad, .outputs = USES(0)},
    {.op = "LogSoftmax", .fn = log_softmax_grad, .outputs = USES(0)},
    {.op = "AvgPool", .fn = avg_pool_grad},
    {.op = "AvgPoolGrad", .fn = avg_pool_grad_grad},
    {.op = "MaxPoolGrad",
     .fn = max_pool_grad_grad,
     .inputs = USES(0) | USES(1)},
    {.op = "MaxPoolGradGrad",
     .fn = max_pool_grad_grad_grad,
     .inputs = USES(0) | USES(1)},
    {.op = "Conv2DBackpropInput",
     .fn = conv_backprop_input_grad,
     .inputs = USES(1) | USES(2)},
    {.op = "Conv2DBackpropFilter",
     .fn = conv_backprop_filter_grad,
     .inputs = USES(0) | USES(2)},
    {.op = "BiasAddV1", .fn = bias_add_v1_grad},
    {.op = "LeakyRelu", .fn = leaky_relu_grad, .inputs = USES(0)},
    {.op = "LeakyReluGrad", .fn = leaky_relu_grad_grad, .inputs = USES(1)},
    {.op = "L2Loss", .fn = l2_loss_grad, .inputs = USES(0)},
    {.op = "BiasAddGrad", .fn = bias_add_grad_grad},
    {.op = "FusedBatchNormV3",
     .fn = batch_norm_grad,
     .inputs = USES(0) | USES(1),
     .outputs = USES(3) | USES(4) | USES(5)},
};

loom_status_t loom__register_nn_gradients(void) {
  return loom__register_gradient_family(kGradients, LOOM__COUNT_OF(kGradients),
                                        NULL, 0);
}
