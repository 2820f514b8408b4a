// Gradient functions for what an MLP or CNN training step needs
// (arithmetic with broadcasting, MatMul, BiasAdd, Relu, reductions,
// Reshape, cross-entropy, Conv2D, MaxPool, variable reads, casts, copies),
// and the ops that are not differentiable.
//
// Each function computes with ops (grad_ops.h), so an outer tape records
// them: the gradients are differentiable again where TensorFlow's are.

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)

static const loom_tensor_metadata_t* in_meta(ctx_t* ctx, int32_t i) {
  return loom_gradient_context_input_metadata(ctx, i);
}

// Reads the value of a small integer tensor (axes, shapes).
static loom_status_t read_ints(ctx_t* ctx, handle_t* handle, int64_t* values,
                               int32_t capacity, int32_t* out_count) {
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_context_resolve(loom_gradient_context_eager(ctx), handle, &tensor));
  loom_tensor_t* dense = NULL;
  loom_status_t status =
      loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense);
  loom_tensor_release(tensor);
  if (status) return status;
  int64_t count = loom_tensor_num_elements(dense);
  loom_dtype_t dtype = loom_tensor_dtype(dense);
  if (count > capacity ||
      (dtype != LOOM_DTYPE_INT32 && dtype != LOOM_DTYPE_INT64)) {
    loom_tensor_release(dense);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s gradient: expected at most %d int32 or int64 "
                            "values",
                            loom_gradient_context_op_name(ctx), capacity);
  }
  for (int64_t i = 0; i < count; ++i) {
    values[i] = dtype == LOOM_DTYPE_INT32
                    ? ((const int32_t*)loom_tensor_data(dense))[i]
                    : ((const int64_t*)loom_tensor_data(dense))[i];
  }
  *out_count = (int32_t)count;
  loom_tensor_release(dense);
  return loom_ok_status();
}

static bool attr_bool(ctx_t* ctx, const char* name) {
  loom_attr_value_t value;
  return loom_gradient_context_attr(ctx, name, &value) &&
         value.kind == LOOM_ATTR_KIND_BOOL && !value.is_list && value.u.b;
}

static bool is_float(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE ||
         dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16 ||
         dtype == LOOM_DTYPE_COMPLEX64 || dtype == LOOM_DTYPE_COMPLEX128;
}

// Copies forward attribute `name` onto `out` (false when it is absent).
static bool forward_attr(ctx_t* ctx, const char* name, loom__grad_attr_t* out) {
  out->name = name;
  return loom_gradient_context_attr(ctx, name, &out->value);
}

//===----------------------------------------------------------------------===//
// Identity-like and arithmetic
//===----------------------------------------------------------------------===//

static loom_status_t identity_grad(ctx_t* ctx, handle_t* const* dy,
                                   handle_t** dx, void* user) {
  (void)ctx;
  (void)user;
  if (dy[0]) loom_tensor_handle_retain(dy[0]);
  dx[0] = dy[0];
  return loom_ok_status();
}

static loom_status_t neg_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                              void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  return loom__grad_unary(ctx, "Neg", dy[0], &dx[0]);
}

// x + y, x - y (sign -1 for y).
static loom_status_t add_sub_grad(ctx_t* ctx, handle_t* const* dy,
                                  handle_t** dx, float y_sign) {
  if (!dy[0]) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(
      loom__grad_reduce_to(ctx, dy[0], in_meta(ctx, 0), &dx[0]));
  handle_t* g = dy[0];
  handle_t* negated = NULL;
  if (y_sign < 0) {
    LOOM_RETURN_IF_ERROR(loom__grad_unary(ctx, "Neg", dy[0], &negated));
    g = negated;
  }
  loom_status_t status = loom__grad_reduce_to(ctx, g, in_meta(ctx, 1), &dx[1]);
  loom_tensor_handle_release(negated);
  return status;
}

static loom_status_t add_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                              void* user) {
  (void)user;
  return add_sub_grad(ctx, dy, dx, 1.0f);
}

static loom_status_t sub_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                              void* user) {
  (void)user;
  return add_sub_grad(ctx, dy, dx, -1.0f);
}

// reduce_to(op(a, b), input i) into dx[i].
static loom_status_t binary_reduced(ctx_t* ctx, const char* op, handle_t* a,
                                    handle_t* b, int32_t i, handle_t** dx) {
  handle_t* full = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_binary(ctx, op, a, b, &full));
  loom_status_t status =
      loom__grad_reduce_to(ctx, full, in_meta(ctx, i), &dx[i]);
  loom_tensor_handle_release(full);
  return status;
}

static loom_status_t mul_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                              void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  LOOM_RETURN_IF_ERROR(binary_reduced(ctx, "Mul", dy[0], y, 0, dx));
  return binary_reduced(ctx, "Mul", x, dy[0], 1, dx);
}

static loom_status_t real_div_grad(ctx_t* ctx, handle_t* const* dy,
                                   handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  LOOM_RETURN_IF_ERROR(binary_reduced(ctx, "RealDiv", dy[0], y, 0, dx));
  // d/dy (x / y) = -x / y / y
  handle_t* neg_x = NULL;
  handle_t* q1 = NULL;
  handle_t* q2 = NULL;
  loom_status_t status = loom__grad_unary(ctx, "Neg", x, &neg_x);
  if (!status) status = loom__grad_binary(ctx, "RealDiv", neg_x, y, &q1);
  if (!status) status = loom__grad_binary(ctx, "RealDiv", q1, y, &q2);
  if (!status) status = binary_reduced(ctx, "Mul", dy[0], q2, 1, dx);
  loom_tensor_handle_release(neg_x);
  loom_tensor_handle_release(q1);
  loom_tensor_handle_release(q2);
  return status;
}

static loom_status_t cast_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                               void* user) {
  (void)user;
  loom_dtype_t source = in_meta(ctx, 0)->dtype;
  loom_dtype_t destination =
      loom_gradient_context_output_metadata(ctx, 0)->dtype;
  if (!dy[0] || !is_float(source) || !is_float(destination)) {
    return loom_ok_status();  // no gradient through integers
  }
  return loom__grad_op(ctx, "Cast", &dy[0], 1,
                       LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", source)), &dx[0]);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// The gradients of a product with transpose attributes (`ta`, `tb` named
// `name_a`, `name_b`): TensorFlow's four cases.
static loom_status_t product_grads(ctx_t* ctx, const char* op, handle_t* dy,
                                   const char* name_a, const char* name_b,
                                   handle_t** out_a, handle_t** out_b) {
  handle_t* a = loom_gradient_context_input(ctx, 0);
  handle_t* b = loom_gradient_context_input(ctx, 1);
  bool ta = attr_bool(ctx, name_a);
  bool tb = attr_bool(ctx, name_b);
  handle_t *a1, *a2, *b1, *b2;
  bool a_ta, a_tb, b_ta, b_tb;
  if (!ta && !tb) {
    a1 = dy, a2 = b, a_ta = false, a_tb = true;
    b1 = a, b2 = dy, b_ta = true, b_tb = false;
  } else if (!ta && tb) {
    a1 = dy, a2 = b, a_ta = false, a_tb = false;
    b1 = dy, b2 = a, b_ta = true, b_tb = false;
  } else if (ta && !tb) {
    a1 = b, a2 = dy, a_ta = false, a_tb = true;
    b1 = a, b2 = dy, b_ta = false, b_tb = false;
  } else {
    a1 = b, a2 = dy, a_ta = true, a_tb = true;
    b1 = dy, b2 = a, b_ta = true, b_tb = true;
  }
  if (loom_gradient_context_input_needs_gradient(ctx, 0)) {
    LOOM_RETURN_IF_ERROR(
        loom__grad_op(ctx, op, LOOM_GRAD_INPUTS(a1, a2),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL(name_a, a_ta),
                                      LOOM_GRAD_BOOL(name_b, a_tb)),
                      out_a));
  }
  if (!loom_gradient_context_input_needs_gradient(ctx, 1)) {
    return loom_ok_status();
  }
  return loom__grad_op(ctx, op, LOOM_GRAD_INPUTS(b1, b2),
                       LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL(name_a, b_ta),
                                       LOOM_GRAD_BOOL(name_b, b_tb)),
                       out_b);
}

static loom_status_t matmul_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                                 void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  return product_grads(ctx, "MatMul", dy[0], "transpose_a", "transpose_b",
                       &dx[0], &dx[1]);
}

static loom_status_t batch_matmul_grad(ctx_t* ctx, handle_t* const* dy,
                                       handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* full[2] = {NULL, NULL};
  loom_status_t status = product_grads(ctx, "BatchMatMulV2", dy[0], "adj_x",
                                       "adj_y", &full[0], &full[1]);
  // Broadcast batch dimensions are summed away.
  for (int32_t i = 0; i < 2 && !status; ++i) {
    if (!full[i]) continue;  // not needed
    status = loom__grad_reduce_to(ctx, full[i], in_meta(ctx, i), &dx[i]);
  }
  loom__grad_release_all(full, 2);
  return status;
}

//===----------------------------------------------------------------------===//
// Neural-network ops
//===----------------------------------------------------------------------===//

static loom_status_t bias_add_grad(ctx_t* ctx, handle_t* const* dy,
                                   handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  loom_tensor_handle_retain(dy[0]);
  dx[0] = dy[0];
  loom__grad_attr_t format;
  if (forward_attr(ctx, "data_format", &format)) {
    return loom__grad_op(ctx, "BiasAddGrad", &dy[0], 1, &format, 1, &dx[1]);
  }
  return loom__grad_unary(ctx, "BiasAddGrad", dy[0], &dx[1]);
}

static loom_status_t relu_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                               void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  return loom__grad_binary(ctx, "ReluGrad", dy[0],
                           loom_gradient_context_output(ctx, 0), &dx[0]);
}

// ReluGrad(gradients, features) is linear in `gradients`.
static loom_status_t relu_grad_grad(ctx_t* ctx, handle_t* const* dy,
                                    handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* features = loom_gradient_context_input(ctx, 1);
  LOOM_RETURN_IF_ERROR(
      loom__grad_binary(ctx, "ReluGrad", dy[0], features, &dx[0]));
  return loom__grad_zeros_like(ctx, features, &dx[1]);
}

// x (shaped like forward output 0) with a trailing dimension of 1.
static loom_status_t expand_last(ctx_t* ctx, handle_t* x, handle_t** out) {
  loom_shape_t shape = loom_gradient_context_output_metadata(ctx, 0)->shape;
  if (shape.rank < 0 || shape.rank >= LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s gradient: unsupported loss rank %d",
                            loom_gradient_context_op_name(ctx), shape.rank);
  }
  shape.dims[shape.rank++] = 1;
  handle_t* dims = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_shape_constant(ctx, &shape, &dims));
  loom_status_t status = loom__grad_binary(ctx, "Reshape", x, dims, out);
  loom_tensor_handle_release(dims);
  return status;
}

// The second-order term of the cross-entropies (TensorFlow's): with
// p = softmax(logits) and g the gradient of the backprop output,
// (g - sum(g * p, -1, keep_dims)) * p.
static loom_status_t xent_backprop_term(ctx_t* ctx, handle_t* logits,
                                        handle_t* g, handle_t** out) {
  handle_t* p = NULL;
  handle_t* gp = NULL;
  handle_t* axis = NULL;
  handle_t* dot = NULL;
  handle_t* diff = NULL;
  loom_status_t status = loom__grad_unary(ctx, "Softmax", logits, &p);
  if (!status) status = loom__grad_binary(ctx, "Mul", g, p, &gp);
  if (!status) {
    status = loom__grad_scalar(ctx, LOOM_DTYPE_INT32, -1, &axis);
  }
  if (!status) {
    status =
        loom__grad_op(ctx, "Sum", LOOM_GRAD_INPUTS(gp, axis),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", true)), &dot);
  }
  if (!status) status = loom__grad_binary(ctx, "Sub", g, dot, &diff);
  if (!status) status = loom__grad_binary(ctx, "Mul", diff, p, out);
  loom_tensor_handle_t* all[] = {p, gp, axis, dot, diff};
  loom__grad_release_all(all, 5);
  return status;
}

// The logits' gradient of both cross-entropies: dloss[:, None] * backprop,
// plus the second-order term when the backprop output has a gradient.
static loom_status_t xent_logits_grad(ctx_t* ctx, handle_t* const* dy,
                                      handle_t** out) {
  handle_t* first = NULL;
  loom_status_t status = loom_ok_status();
  if (dy[0]) {
    handle_t* expanded = NULL;
    status = expand_last(ctx, dy[0], &expanded);
    if (!status) {
      status = loom__grad_binary(ctx, "Mul", expanded,
                                 loom_gradient_context_output(ctx, 1), &first);
    }
    loom_tensor_handle_release(expanded);
  }
  handle_t* second = NULL;
  if (!status && dy[1]) {
    status = xent_backprop_term(ctx, loom_gradient_context_input(ctx, 0), dy[1],
                                &second);
  }
  if (!status && first && second) {
    status = loom__grad_binary(ctx, "AddV2", first, second, out);
  } else if (!status) {
    *out = first ? first : second;
    first = second = NULL;
  }
  loom_tensor_handle_release(first);
  loom_tensor_handle_release(second);
  return status;
}

static loom_status_t sparse_xent_grad(ctx_t* ctx, handle_t* const* dy,
                                      handle_t** dx, void* user) {
  (void)user;
  return xent_logits_grad(ctx, dy, &dx[0]);  // labels: indices, none
}

static loom_status_t xent_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                               void* user) {
  (void)user;
  LOOM_RETURN_IF_ERROR(xent_logits_grad(ctx, dy, &dx[0]));
  if (!dy[0]) return loom_ok_status();
  // labels: dloss[:, None] * -log_softmax(logits)
  handle_t* log_p = NULL;
  handle_t* neg = NULL;
  handle_t* expanded = NULL;
  loom_status_t status = loom__grad_unary(
      ctx, "LogSoftmax", loom_gradient_context_input(ctx, 0), &log_p);
  if (!status) status = loom__grad_unary(ctx, "Neg", log_p, &neg);
  if (!status) status = expand_last(ctx, dy[0], &expanded);
  if (!status) status = loom__grad_binary(ctx, "Mul", expanded, neg, &dx[1]);
  loom_tensor_handle_release(log_p);
  loom_tensor_handle_release(neg);
  loom_tensor_handle_release(expanded);
  return status;
}

// The attributes a convolution's backprop ops share with it.
static int32_t conv_attrs(ctx_t* ctx, loom__grad_attr_t* attrs) {
  static const char* const kNames[] = {"strides",           "padding",
                                       "data_format",       "dilations",
                                       "explicit_paddings", "use_cudnn_on_gpu"};
  int32_t count = 0;
  for (int32_t i = 0; i < 6; ++i) {
    if (forward_attr(ctx, kNames[i], &attrs[count])) count++;
  }
  return count;
}

static loom_status_t conv2d_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                                 void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* input = loom_gradient_context_input(ctx, 0);
  handle_t* filter = loom_gradient_context_input(ctx, 1);
  loom__grad_attr_t attrs[6];
  int32_t num_attrs = conv_attrs(ctx, attrs);
  handle_t* input_sizes = NULL;
  handle_t* filter_sizes = NULL;
  loom_status_t status =
      loom__grad_shape_constant(ctx, &in_meta(ctx, 0)->shape, &input_sizes);
  if (!status) {
    status =
        loom__grad_shape_constant(ctx, &in_meta(ctx, 1)->shape, &filter_sizes);
  }
  if (!status && loom_gradient_context_input_needs_gradient(ctx, 0)) {
    status = loom__grad_op(ctx, "Conv2DBackpropInput",
                           LOOM_GRAD_INPUTS(input_sizes, filter, dy[0]), attrs,
                           num_attrs, &dx[0]);
  }
  if (!status && loom_gradient_context_input_needs_gradient(ctx, 1)) {
    status = loom__grad_op(ctx, "Conv2DBackpropFilter",
                           LOOM_GRAD_INPUTS(input, filter_sizes, dy[0]), attrs,
                           num_attrs, &dx[1]);
  }
  loom_tensor_handle_release(input_sizes);
  loom_tensor_handle_release(filter_sizes);
  return status;
}

static loom_status_t max_pool_grad(ctx_t* ctx, handle_t* const* dy,
                                   handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  static const char* const kNames[] = {"ksize", "strides", "padding",
                                       "data_format"};
  loom__grad_attr_t attrs[4];
  int32_t count = 0;
  for (int32_t i = 0; i < 4; ++i) {
    if (forward_attr(ctx, kNames[i], &attrs[count])) count++;
  }
  return loom__grad_op(
      ctx, "MaxPoolGrad",
      LOOM_GRAD_INPUTS(loom_gradient_context_input(ctx, 0),
                       loom_gradient_context_output(ctx, 0), dy[0]),
      attrs, count, &dx[0]);
}

//===----------------------------------------------------------------------===//
// Reductions and shapes
//===----------------------------------------------------------------------===//

// Sum and Mean: dy reshaped to the kept-dims shape, then broadcast to the
// input by a product with a tensor of the input's shape holding 1 (Sum) or
// the output/input element count ratio (Mean) — ops whose gradients are
// here, so the result is differentiable again.
static loom_status_t reduction_grad(ctx_t* ctx, handle_t* const* dy,
                                    handle_t** dx, bool mean) {
  if (!dy[0]) return loom_ok_status();
  const loom_tensor_metadata_t* input = in_meta(ctx, 0);
  int32_t rank = input->shape.rank;
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t num_axes = 0;
  LOOM_RETURN_IF_ERROR(read_ints(ctx, loom_gradient_context_input(ctx, 1), axes,
                                 LOOM_MAX_SHAPE_RANK, &num_axes));
  // The input's dims with the reduced ones 1 (any rank: gathered here).
  int64_t kept_dims_values[LOOM_MAX_SHAPE_RANK];
  const int64_t* in_dims = loom_shape_dims(&input->shape);
  for (int32_t d = 0; d < rank; ++d) kept_dims_values[d] = in_dims[d];
  for (int32_t i = 0; i < num_axes; ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s gradient: axis %lld out of range for rank %d",
                              loom_gradient_context_op_name(ctx),
                              (long long)axes[i], rank);
    }
    kept_dims_values[axis] = 1;
  }
  loom_shape_t kept;
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize_large(&kept, kept_dims_values, rank));
  int64_t in_count = loom_shape_num_elements(&input->shape);
  int64_t out_count = loom_shape_num_elements(&kept);
  double factor = !mean      ? 1.0
                  : in_count ? (double)out_count / (double)in_count
                             : 0.0;
  if (out_count == 1 &&
      loom_gradient_context_output_metadata(ctx, 0)->shape.rank == 0) {
    // Everything reduced to a scalar (a loss): dy, scaled, filled out.
    // When dy is the tape's seed of ones, the scaled value is the factor.
    handle_t* dims = NULL;
    handle_t* scale = NULL;
    handle_t* scaled = NULL;
    loom_status_t status = loom__grad_shape_constant(ctx, &input->shape, &dims);
    if (!status && mean) {
      status = loom__grad_scalar(ctx, input->dtype, factor, &scale);
      if (!status && !loom__grad_output_gradient_is_ones(ctx, 0, dy[0])) {
        status = loom__grad_binary(ctx, "Mul", dy[0], scale, &scaled);
      }
    }
    if (!status) {
      handle_t* value = !mean ? dy[0] : scaled ? scaled : scale;
      status = loom__grad_binary(ctx, "Fill", dims, value, &dx[0]);
    }
    handle_t* all[] = {dims, scale, scaled};
    loom__grad_release_all(all, 3);
    return status;
  }
  handle_t* kept_dims = NULL;
  handle_t* reshaped = NULL;
  handle_t* scale = NULL;
  loom_status_t status = loom__grad_shape_constant(ctx, &kept, &kept_dims);
  if (!status) {
    status = loom__grad_binary(ctx, "Reshape", dy[0], kept_dims, &reshaped);
  }
  if (!status) status = loom__grad_filled(ctx, input, factor, &scale);
  if (!status) status = loom__grad_binary(ctx, "Mul", reshaped, scale, &dx[0]);
  handle_t* all[] = {kept_dims, reshaped, scale};
  loom__grad_release_all(all, 3);
  return status;
}

static loom_status_t sum_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                              void* user) {
  (void)user;
  return reduction_grad(ctx, dy, dx, false);
}

static loom_status_t mean_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                               void* user) {
  (void)user;
  return reduction_grad(ctx, dy, dx, true);
}

static loom_status_t reshape_grad(ctx_t* ctx, handle_t* const* dy,
                                  handle_t** dx, void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  handle_t* dims = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_shape_constant(ctx, &in_meta(ctx, 0)->shape, &dims));
  loom_status_t status = loom__grad_binary(ctx, "Reshape", dy[0], dims, &dx[0]);
  loom_tensor_handle_release(dims);
  return status;
}

//===----------------------------------------------------------------------===//
// Copies (TensorFlow's op-handler design): each copy's gradient is its
// counterpart, and the counterpart's gradient the copy again.
//===----------------------------------------------------------------------===//

static loom_status_t copy_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                               void* user) {
  if (!dy[0]) return loom_ok_status();
  return loom__grad_unary(ctx, (const char*)user, dy[0], &dx[0]);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__gradient_row_t kGradients[] = {
    {.op = "Identity", .fn = identity_grad},
    {.op = "ReadVariableOp", .fn = identity_grad},
    {.op = "Neg", .fn = neg_grad},
    {.op = "AddV2", .fn = add_grad},
    {.op = "Add", .fn = add_grad},
    {.op = "Sub", .fn = sub_grad},
    {.op = "Mul", .fn = mul_grad, .inputs = USES(0) | USES(1)},
    {.op = "RealDiv", .fn = real_div_grad, .inputs = USES(0) | USES(1)},
    {.op = "Cast", .fn = cast_grad},
    {.op = "MatMul", .fn = matmul_grad, .inputs = USES(0) | USES(1)},
    {.op = "BatchMatMulV2",
     .fn = batch_matmul_grad,
     .inputs = USES(0) | USES(1)},
    {.op = "BiasAdd", .fn = bias_add_grad},
    {.op = "Relu", .fn = relu_grad, .outputs = USES(0)},
    {.op = "ReluGrad", .fn = relu_grad_grad, .inputs = USES(1)},
    {.op = "SoftmaxCrossEntropyWithLogits",
     .fn = xent_grad,
     .inputs = USES(0),
     .outputs = USES(1)},
    {.op = "SparseSoftmaxCrossEntropyWithLogits",
     .fn = sparse_xent_grad,
     .inputs = USES(0),
     .outputs = USES(1)},
    {.op = "Conv2D", .fn = conv2d_grad, .inputs = USES(0) | USES(1)},
    {.op = "MaxPool",
     .fn = max_pool_grad,
     .inputs = USES(0),
     .outputs = USES(0)},
    {.op = "Sum", .fn = sum_grad, .inputs = USES(1)},
    {.op = "Mean", .fn = mean_grad, .inputs = USES(1)},
    {.op = "Reshape", .fn = reshape_grad},
    {.op = "CopyOn", .fn = copy_grad, .data = "CopyOnGrad"},
    {.op = "CopyOnGrad", .fn = copy_grad, .data = "CopyOn"},
    {.op = "CopyOff", .fn = copy_grad, .data = "CopyOffGrad"},
    {.op = "CopyOffGrad", .fn = copy_grad, .data = "CopyOff"},
};

static const char* const kNotDifferentiable[] = {
    "Assert",
    "StopGradient",
    "Shape",
    "ShapeN",
    "Size",
    "Rank",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "IsFinite",
    "IsNan",
    "IsInf",
    "ArgMax",
    "ArgMin",
    "OnesLike",
    "ZerosLike",
    "BroadcastGradientArgs",
    "RandomUniform",
    "RandomStandardNormal",
    "TruncatedNormal",
    "VarHandleOp",
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "DestroyResourceOp",
    "VarIsInitializedOp",
};

loom_status_t loom__register_core_gradients(void) {
  return LOOM__REGISTER_GRADIENT_FAMILY(kGradients, kNotDifferentiable);
}
