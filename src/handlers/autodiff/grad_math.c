// Gradient functions of the math op family: element-wise math and
// activations, the gradient helpers themselves (for higher orders),
// binary ops with broadcasting, Prod / Max / Min reductions, AddN,
// ClipByValue and Select. TensorFlow's formulas (math_grad.py,
// nn_grad.py), written with ops executed through the eager API so that an
// outer tape records them.

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)

// Releases the handles of a local array of temporaries.
#define RELEASE(array) \
  loom__grad_release_all((array), (int32_t)(sizeof(array) / sizeof((array)[0])))

static loom_dtype_t input_dtype(grad_ctx_t* ctx, int32_t index) {
  const loom_tensor_metadata_t* m =
      loom_gradient_context_input_metadata(ctx, index);
  return m ? m->dtype : LOOM_DTYPE_INVALID;
}

// A scalar of input `index`'s dtype.
static loom_status_t scalar(grad_ctx_t* ctx, int32_t index, double value,
                            handle_t** out) {
  return loom__grad_scalar(ctx, input_dtype(ctx, index), value, out);
}

// out = binary(op, x, y) reduced to the shape of forward input `index`.
static loom_status_t reduce_to_input(grad_ctx_t* ctx, handle_t* gradient,
                                     int32_t index, handle_t** out) {
  return loom__grad_reduce_to(
      ctx, gradient, loom_gradient_context_input_metadata(ctx, index), out);
}

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

// dx = dy * f(x) for a unary op f.
static loom_status_t times_unary_of_input(grad_ctx_t* ctx, const char* f,
                                          handle_t* dy, handle_t** dx) {
  handle_t* t[1] = {NULL};
  loom_status_t s =
      loom__grad_unary(ctx, f, loom_gradient_context_input(ctx, 0), &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dy, t[0], dx);
  RELEASE(t);
  return s;
}

static loom_status_t abs_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  return times_unary_of_input(ctx, "Sign", dys[0], &dxs[0]);
}

static loom_status_t sign_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  (void)dys, (void)data;
  return loom__grad_filled(ctx, loom_gradient_context_input_metadata(ctx, 0),
                           0.0, &dxs[0]);
}

static loom_status_t exp_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  return loom__grad_binary(ctx, "Mul", dys[0],
                           loom_gradient_context_output(ctx, 0), &dxs[0]);
}

static loom_status_t expm1_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  (void)data;
  return times_unary_of_input(ctx, "Exp", dys[0], &dxs[0]);
}

static loom_status_t log_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  return loom__grad_binary(ctx, "RealDiv", dys[0],
                           loom_gradient_context_input(ctx, 0), &dxs[0]);
}

static loom_status_t log1p_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  (void)data;
  handle_t* t[2] = {NULL, NULL};
  loom_status_t s = scalar(ctx, 0, 1.0, &t[0]);
  if (!s) {
    s = loom__grad_binary(ctx, "AddV2", loom_gradient_context_input(ctx, 0),
                          t[0], &t[1]);
  }
  if (!s) s = loom__grad_binary(ctx, "RealDiv", dys[0], t[1], &dxs[0]);
  RELEASE(t);
  return s;
}

// dx = helper(y, dy): Sqrt, Rsqrt, Tanh, Sigmoid, Reciprocal, Inv.
static loom_status_t helper_of_output(grad_ctx_t* ctx, handle_t* const* dys,
                                      handle_t** dxs, void* data) {
  return loom__grad_binary(ctx, (const char*)data,
                           loom_gradient_context_output(ctx, 0), dys[0],
                           &dxs[0]);
}

// dx = helper(dy, y) (Elu, Selu, Relu6) or helper(dy, x) (Softplus,
// Softsign).
static loom_status_t helper_of_dy_output(grad_ctx_t* ctx, handle_t* const* dys,
                                         handle_t** dxs, void* data) {
  return loom__grad_binary(ctx, (const char*)data, dys[0],
                           loom_gradient_context_output(ctx, 0), &dxs[0]);
}

static loom_status_t helper_of_dy_input(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  return loom__grad_binary(ctx, (const char*)data, dys[0],
                           loom_gradient_context_input(ctx, 0), &dxs[0]);
}

static loom_status_t square_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  (void)data;
  handle_t* t[2] = {NULL, NULL};
  loom_status_t s = scalar(ctx, 0, 2.0, &t[0]);
  if (!s) {
    s = loom__grad_binary(ctx, "Mul", loom_gradient_context_input(ctx, 0), t[0],
                          &t[1]);
  }
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], t[1], &dxs[0]);
  RELEASE(t);
  return s;
}

static loom_status_t sin_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  return times_unary_of_input(ctx, "Cos", dys[0], &dxs[0]);
}

static loom_status_t cos_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  handle_t* t[1] = {NULL};
  loom_status_t s = times_unary_of_input(ctx, "Sin", dys[0], &t[0]);
  if (!s) s = loom__grad_unary(ctx, "Neg", t[0], &dxs[0]);
  RELEASE(t);
  return s;
}

// d erf(x) = 2 / sqrt(pi) * exp(-x^2).
static loom_status_t erf_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  handle_t* t[5] = {NULL};
  loom_status_t s = loom__grad_unary(
      ctx, "Square", loom_gradient_context_input(ctx, 0), &t[0]);
  if (!s) s = loom__grad_unary(ctx, "Neg", t[0], &t[1]);
  if (!s) s = loom__grad_unary(ctx, "Exp", t[1], &t[2]);
  if (!s) s = scalar(ctx, 0, 1.1283791670955125739, &t[3]);  // 2/sqrt(pi)
  if (!s) s = loom__grad_binary(ctx, "Mul", t[2], t[3], &t[4]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], t[4], &dxs[0]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// The gradient helpers (second order)
//===----------------------------------------------------------------------===//

// For z = helper(y, dy) with dz/dy = c * dy * y^p (TanhGrad: -2 dy y,
// RsqrtGrad: -1.5 dy y^2, ReciprocalGrad: -2 dy y): the gradient of dy is
// helper(y, g) (z is linear in dy).
typedef struct helper_def_t {
  const char* op;
  double c;
  int power;  // 1 or 2
} helper_def_t;

static const helper_def_t kTanhGrad = {"TanhGrad", -2.0, 1};
static const helper_def_t kRsqrtGrad = {"RsqrtGrad", -1.5, 2};
static const helper_def_t kReciprocalGrad = {"ReciprocalGrad", -2.0, 1};
static const helper_def_t kInvGrad = {"InvGrad", -2.0, 1};

static loom_status_t power_helper_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                       handle_t** dxs, void* data) {
  const helper_def_t* def = data;
  handle_t* y = loom_gradient_context_input(ctx, 0);
  handle_t* dy = loom_gradient_context_input(ctx, 1);
  handle_t* g = dys[0];
  handle_t* t[4] = {NULL};
  loom_status_t s = loom__grad_binary(ctx, "Mul", g, dy, &t[0]);
  if (!s) {
    s = def->power == 2
            ? loom__grad_unary(ctx, "Square", y, &t[1])
            : (loom_tensor_handle_retain(y), t[1] = y, loom_ok_status());
  }
  if (!s) s = loom__grad_binary(ctx, "Mul", t[0], t[1], &t[2]);
  if (!s) s = scalar(ctx, 0, def->c, &t[3]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[2], t[3], &dxs[0]);
  if (!s) s = loom__grad_binary(ctx, def->op, y, g, &dxs[1]);
  RELEASE(t);
  return s;
}

// z = dy * y * (1 - y): dz/dy = dy * (1 - 2y).
static loom_status_t sigmoid_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                       handle_t** dxs, void* data) {
  (void)data;
  handle_t* y = loom_gradient_context_input(ctx, 0);
  handle_t* dy = loom_gradient_context_input(ctx, 1);
  handle_t* t[6] = {NULL};
  loom_status_t s = scalar(ctx, 0, 1.0, &t[0]);
  if (!s) s = scalar(ctx, 0, 2.0, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Mul", y, t[1], &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Sub", t[0], t[2], &t[3]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], dy, &t[4]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[4], t[3], &dxs[0]);
  if (!s) s = loom__grad_binary(ctx, "SigmoidGrad", y, dys[0], &dxs[1]);
  RELEASE(t);
  return s;
}

// z = dy * 0.5 / y: dz/dy = -z / y.
static loom_status_t sqrt_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                    handle_t** dxs, void* data) {
  (void)data;
  handle_t* y = loom_gradient_context_input(ctx, 0);
  handle_t* z = loom_gradient_context_output(ctx, 0);
  handle_t* t[2] = {NULL};
  loom_status_t s = loom__grad_binary(ctx, "Mul", dys[0], z, &t[0]);
  if (!s) s = loom__grad_binary(ctx, "RealDiv", t[0], y, &t[1]);
  if (!s) s = loom__grad_unary(ctx, "Neg", t[1], &dxs[0]);
  if (!s) s = loom__grad_binary(ctx, "SqrtGrad", y, dys[0], &dxs[1]);
  RELEASE(t);
  return s;
}

// Relu6Grad(dy, x) masks dy: linear in dy, flat in x.
static loom_status_t relu6_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                     handle_t** dxs, void* data) {
  (void)data;
  handle_t* x = loom_gradient_context_input(ctx, 1);
  loom_status_t s = loom__grad_binary(ctx, "Relu6Grad", dys[0], x, &dxs[0]);
  if (!s) {
    s = loom__grad_filled(ctx, loom_gradient_context_input_metadata(ctx, 1),
                          0.0, &dxs[1]);
  }
  return s;
}

// EluGrad / SeluGrad(dy, y): linear in dy; in y, dy where y < 0.
static loom_status_t exp_unit_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  handle_t* dy = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  handle_t* t[4] = {NULL};
  loom_status_t s =
      loom__grad_binary(ctx, (const char*)data, dys[0], y, &dxs[0]);
  if (!s) s = scalar(ctx, 1, 0.0, &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Less", y, t[0], &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], dy, &t[2]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[1], t[2], t[0]),
                      LOOM_GRAD_NO_ATTRS, &dxs[1]);
  }
  RELEASE(t);
  return s;
}

// SoftplusGrad(dy, x) = dy * sigmoid(x): in x, g * dy * sigmoid'(x).
static loom_status_t softplus_grad_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                        handle_t** dxs, void* data) {
  (void)data;
  handle_t* dy = loom_gradient_context_input(ctx, 0);
  handle_t* x = loom_gradient_context_input(ctx, 1);
  handle_t* t[2] = {NULL};
  loom_status_t s = loom__grad_binary(ctx, "SoftplusGrad", dys[0], x, &dxs[0]);
  if (!s) s = loom__grad_unary(ctx, "Sigmoid", x, &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], dy, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "SigmoidGrad", t[0], t[1], &dxs[1]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Binary ops (with broadcasting)
//===----------------------------------------------------------------------===//

// gx and gy (broadcast shaped) reduced to the inputs' shapes into dxs.
static loom_status_t reduce_both(grad_ctx_t* ctx, handle_t* gx, handle_t* gy,
                                 handle_t** dxs) {
  loom_status_t s = loom_ok_status();
  if (gx) s = reduce_to_input(ctx, gx, 0, &dxs[0]);
  if (!s && gy) s = reduce_to_input(ctx, gy, 1, &dxs[1]);
  return s;
}

// Pow: z = x^y. dx = g * y * x^(y - 1); dy = g * z * log(x) where x > 0,
// else 0.
static loom_status_t pow_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  handle_t* z = loom_gradient_context_output(ctx, 0);
  handle_t* g = dys[0];
  handle_t* t[12] = {NULL};
  loom_status_t s = scalar(ctx, 0, 1.0, &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Sub", y, t[0], &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Pow", x, t[1], &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Mul", y, t[2], &t[3]);
  if (!s) s = loom__grad_binary(ctx, "Mul", g, t[3], &t[4]);
  if (!s) s = scalar(ctx, 0, 0.0, &t[5]);
  if (!s) s = loom__grad_binary(ctx, "Greater", x, t[5], &t[6]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[6], x, t[0]),
                      LOOM_GRAD_NO_ATTRS, &t[7]);
  }
  if (!s) s = loom__grad_unary(ctx, "Log", t[7], &t[8]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[6], t[8], t[5]),
                      LOOM_GRAD_NO_ATTRS, &t[9]);
  }
  if (!s) s = loom__grad_binary(ctx, "Mul", g, z, &t[10]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[10], t[9], &t[11]);
  if (!s) s = reduce_both(ctx, t[4], t[11], dxs);
  RELEASE(t);
  return s;
}

// Maximum (selector GreaterEqual) and Minimum (LessEqual): a tie goes to x.
static loom_status_t extremum_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                   handle_t** dxs, void* data) {
  handle_t* t[4] = {NULL};
  loom_status_t s = loom__grad_binary(
      ctx, (const char*)data, loom_gradient_context_input(ctx, 0),
      loom_gradient_context_input(ctx, 1), &t[0]);
  if (!s) s = scalar(ctx, 0, 0.0, &t[1]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[0], dys[0], t[1]),
                      LOOM_GRAD_NO_ATTRS, &t[2]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[0], t[1], dys[0]),
                      LOOM_GRAD_NO_ATTRS, &t[3]);
  }
  if (!s) s = reduce_both(ctx, t[2], t[3], dxs);
  RELEASE(t);
  return s;
}

// (x - y)^2: dx = 2 g (x - y), dy = -dx.
static loom_status_t squared_difference_grad(grad_ctx_t* ctx,
                                             handle_t* const* dys,
                                             handle_t** dxs, void* data) {
  (void)data;
  handle_t* t[5] = {NULL};
  loom_status_t s =
      loom__grad_binary(ctx, "Sub", loom_gradient_context_input(ctx, 0),
                        loom_gradient_context_input(ctx, 1), &t[0]);
  if (!s) s = scalar(ctx, 0, 2.0, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], t[1], &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[2], t[0], &t[3]);
  if (!s) s = loom__grad_unary(ctx, "Neg", t[3], &t[4]);
  if (!s) s = reduce_both(ctx, t[3], t[4], dxs);
  RELEASE(t);
  return s;
}

// Div (on floats, RealDiv): dx = g / y, dy = g * (-x / y) / y.
static loom_status_t div_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  (void)data;
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* y = loom_gradient_context_input(ctx, 1);
  handle_t* t[5] = {NULL};
  loom_status_t s = loom__grad_binary(ctx, "Div", dys[0], y, &t[0]);
  if (!s) s = loom__grad_unary(ctx, "Neg", x, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Div", t[1], y, &t[2]);
  if (!s) s = loom__grad_binary(ctx, "Div", t[2], y, &t[3]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], t[3], &t[4]);
  if (!s) s = reduce_both(ctx, t[0], t[4], dxs);
  RELEASE(t);
  return s;
}

// FloorMod / TruncateMod: x - q(x, y) * y with q piecewise constant:
// dx = g, dy = -g * q(x, y) (q: FloorDiv / TruncateDiv).
static loom_status_t mod_grad(grad_ctx_t* ctx, handle_t* const* dys,
                              handle_t** dxs, void* data) {
  handle_t* t[3] = {NULL};
  loom_status_t s = loom__grad_binary(
      ctx, (const char*)data, loom_gradient_context_input(ctx, 0),
      loom_gradient_context_input(ctx, 1), &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Mul", dys[0], t[0], &t[1]);
  if (!s) s = loom__grad_unary(ctx, "Neg", t[1], &t[2]);
  if (!s) s = reduce_both(ctx, dys[0], t[2], dxs);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// The reduction axes of input 1, normalised to [0, rank), sorted, unique:
// a bit set.
static loom_status_t reduction_axes(grad_ctx_t* ctx, int32_t rank,
                                    bool* reduced) {
  int64_t axes[LOOM_MAX_SHAPE_RANK * 2];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(loom__grad_input_ints(
      ctx, 1, axes, (int32_t)(sizeof(axes) / sizeof(axes[0])), &count));
  for (int32_t d = 0; d < rank; ++d) reduced[d] = false;
  for (int32_t i = 0; i < count; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s (gradient): axis %lld out of range for "
                              "rank %d",
                              loom_gradient_context_op_name(ctx),
                              (long long)axes[i], rank);
    }
    reduced[a] = true;
  }
  return loom_ok_status();
}

// Prod: the gradient of an entry is the product of the others in its
// reduction group (exact with zeros). The reduced axes are moved last and
// flattened to [outer, n]; each row is repeated n times with the diagonal
// set to 1, and Prod over the last axis gives the products of the others.
static loom_status_t prod_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  (void)data;
  const loom_tensor_metadata_t* xm =
      loom_gradient_context_input_metadata(ctx, 0);
  const loom_shape_t* shape = &xm->shape;
  int32_t rank = shape->rank;
  if (rank < 0 || !loom_shape_is_fully_defined(shape)) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "Prod (gradient): the input's shape must be known");
  }
  bool reduced[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(reduction_axes(ctx, rank, reduced));
  int64_t perm[LOOM_MAX_SHAPE_RANK], inverse[LOOM_MAX_SHAPE_RANK],
      moved[LOOM_MAX_SHAPE_RANK];
  int64_t outer = 1, n = 1;
  int32_t k = 0;
  for (int32_t pass = 0; pass < 2; ++pass) {
    for (int32_t d = 0; d < rank; ++d) {
      if (reduced[d] != (pass == 1)) continue;
      perm[k] = d;
      moved[k] = loom_shape_dims(shape)[d];
      inverse[d] = k++;
      if (pass) {
        n *= loom_shape_dims(shape)[d];
      } else {
        outer *= loom_shape_dims(shape)[d];
      }
    }
  }
  bool identity = true;
  for (int32_t d = 0; d < rank; ++d) identity &= perm[d] == d;
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* t[11] = {NULL};
  loom_status_t s = loom_ok_status();
  if (identity) {
    loom_tensor_handle_retain(x);
    t[0] = x;
  } else {
    s = loom__grad_transpose(ctx, x, perm, rank, &t[0]);
  }
  // Rows [outer, 1, n] broadcast to [outer, n, n], diagonal set to 1.
  int64_t rows[3] = {outer, 1, n};
  int64_t square[3] = {outer, n, n};
  if (!s) s = loom__grad_reshape(ctx, t[0], rows, 3, &t[1]);
  if (!s) s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, square, 3, &t[2]);
  if (!s) s = loom__grad_binary(ctx, "BroadcastTo", t[1], t[2], &t[3]);
  if (!s) {
    // The diagonal mask, a bool constant [n, n].
    int64_t eye_dims[2] = {n, n};
    loom_shape_t eye_shape;
    s = loom_shape_initialize(&eye_shape, eye_dims, 2);
    loom_tensor_t* eye = NULL;
    if (!s) {
      s = loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_BOOL,
                                   &eye_shape, &eye);
    }
    if (!s) {
      bool* b = loom_tensor_data(eye);
      for (int64_t i = 0; i < n * n; ++i) b[i] = i % (n + 1) == 0;
      s = loom_context_new_handle(loom_gradient_context_eager(ctx), eye, &t[4]);
    }
    loom_tensor_release(eye);
  }
  if (!s) s = scalar(ctx, 0, 1.0, &t[5]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[4], t[5], t[3]),
                      LOOM_GRAD_NO_ATTRS, &t[6]);
  }
  int64_t last[1] = {2};
  if (!s) s = loom__grad_int_vector(ctx, LOOM_DTYPE_INT32, last, 1, &t[7]);
  if (!s) {
    s = loom__grad_op(ctx, "Prod", LOOM_GRAD_INPUTS(t[6], t[7]),
                      LOOM_GRAD_NO_ATTRS, &t[8]);  // [outer, n]
  }
  int64_t column[2] = {outer, 1};
  if (!s) s = loom__grad_reshape(ctx, dys[0], column, 2, &t[9]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[8], t[9], &t[10]);
  if (!s) {
    handle_t* r = NULL;
    s = loom__grad_reshape(ctx, t[10], moved, rank, &r);
    if (!s && identity) {
      dxs[0] = r;
    } else if (!s) {
      s = loom__grad_transpose(ctx, r, inverse, rank, &dxs[0]);
      loom_tensor_handle_release(r);
    }
  }
  RELEASE(t);
  return s;
}

// Max / Min: the gradient goes to the elements equal to the result, split
// evenly between ties.
static loom_status_t extremum_reduction_grad(grad_ctx_t* ctx,
                                             handle_t* const* dys,
                                             handle_t** dxs, void* data) {
  (void)data;
  const loom_tensor_metadata_t* xm =
      loom_gradient_context_input_metadata(ctx, 0);
  int32_t rank = xm->shape.rank;
  if (rank < 0 || !loom_shape_is_fully_defined(&xm->shape)) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s (gradient): the input's shape must be known",
                            loom_gradient_context_op_name(ctx));
  }
  bool reduced[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(reduction_axes(ctx, rank, reduced));
  int64_t kept[LOOM_MAX_SHAPE_RANK], axes[LOOM_MAX_SHAPE_RANK];
  int32_t num_axes = 0;
  for (int32_t d = 0; d < rank; ++d) {
    kept[d] = reduced[d] ? 1 : loom_shape_dims(&xm->shape)[d];
    if (reduced[d]) axes[num_axes++] = d;
  }
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* t[7] = {NULL};
  loom_status_t s = loom__grad_reshape(
      ctx, loom_gradient_context_output(ctx, 0), kept, rank, &t[0]);
  if (!s) s = loom__grad_reshape(ctx, dys[0], kept, rank, &t[1]);
  if (!s) s = loom__grad_binary(ctx, "Equal", t[0], x, &t[2]);
  if (!s) {
    s = loom__grad_op(ctx, "Cast", LOOM_GRAD_INPUTS(t[2]),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", xm->dtype)),
                      &t[3]);
  }
  if (!s) s = loom__grad_sum(ctx, t[3], axes, num_axes, true, &t[4]);
  if (!s) s = loom__grad_binary(ctx, "RealDiv", t[3], t[4], &t[5]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[5], t[1], &dxs[0]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// AddN, ClipByValue, Select
//===----------------------------------------------------------------------===//

static loom_status_t add_n_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  (void)data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_retain(dys[0]);
    dxs[i] = dys[0];
  }
  return loom_ok_status();
}

// ClipByValue(t, lo, hi): t's gradient where lo <= t <= hi, the bounds'
// where t is below / above them (reduced to their shapes).
static loom_status_t clip_grad(grad_ctx_t* ctx, handle_t* const* dys,
                               handle_t** dxs, void* data) {
  (void)data;
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* t[7] = {NULL};
  loom_status_t s = loom__grad_binary(
      ctx, "Less", x, loom_gradient_context_input(ctx, 1), &t[0]);
  if (!s) {
    s = loom__grad_binary(ctx, "Greater", x,
                          loom_gradient_context_input(ctx, 2), &t[1]);
  }
  if (!s) s = loom__grad_binary(ctx, "LogicalOr", t[0], t[1], &t[2]);
  if (!s) s = scalar(ctx, 0, 0.0, &t[3]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[2], t[3], dys[0]),
                      LOOM_GRAD_NO_ATTRS, &dxs[0]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[0], dys[0], t[3]),
                      LOOM_GRAD_NO_ATTRS, &t[4]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[1], dys[0], t[3]),
                      LOOM_GRAD_NO_ATTRS, &t[5]);
  }
  if (!s) s = reduce_to_input(ctx, t[4], 1, &dxs[1]);
  if (!s) s = reduce_to_input(ctx, t[5], 2, &dxs[2]);
  RELEASE(t);
  return s;
}

// Select(c, t, e): c picks whole rows (a vector c) or elements; the same
// op routes the gradient.
static loom_status_t select_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  (void)data;
  handle_t* c = loom_gradient_context_input(ctx, 0);
  handle_t* t[1] = {NULL};
  loom_status_t s = loom__grad_zeros_like(ctx, dys[0], &t[0]);
  if (!s) {
    s = loom__grad_op(ctx, "Select", LOOM_GRAD_INPUTS(c, dys[0], t[0]),
                      LOOM_GRAD_NO_ATTRS, &dxs[1]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "Select", LOOM_GRAD_INPUTS(c, t[0], dys[0]),
                      LOOM_GRAD_NO_ATTRS, &dxs[2]);
  }
  RELEASE(t);
  return s;
}

static loom_status_t select_v2_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                    handle_t** dxs, void* data) {
  (void)data;
  handle_t* c = loom_gradient_context_input(ctx, 0);
  handle_t* t[3] = {NULL};
  loom_status_t s = scalar(ctx, 1, 0.0, &t[0]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(c, dys[0], t[0]),
                      LOOM_GRAD_NO_ATTRS, &t[1]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(c, t[0], dys[0]),
                      LOOM_GRAD_NO_ATTRS, &t[2]);
  }
  if (!s) s = reduce_to_input(ctx, t[1], 1, &dxs[1]);
  if (!s) s = reduce_to_input(ctx, t[2], 2, &dxs[2]);
  RELEASE(t);
  return s;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__gradient_row_t kGradients[] = {
    {.op = "Abs", .fn = abs_grad, .inputs = USES(0)},
    {.op = "Sign", .fn = sign_grad},
    {.op = "Exp", .fn = exp_grad, .outputs = USES(0)},
    {.op = "Expm1", .fn = expm1_grad, .inputs = USES(0)},
    {.op = "Log", .fn = log_grad, .inputs = USES(0)},
    {.op = "Log1p", .fn = log1p_grad, .inputs = USES(0)},
    {.op = "Sqrt",
     .fn = helper_of_output,
     .data = "SqrtGrad",
     .outputs = USES(0)},
    {.op = "Rsqrt",
     .fn = helper_of_output,
     .data = "RsqrtGrad",
     .outputs = USES(0)},
    {.op = "Square", .fn = square_grad, .inputs = USES(0)},
    {.op = "Reciprocal",
     .fn = helper_of_output,
     .data = "ReciprocalGrad",
     .outputs = USES(0)},
    {.op = "Inv",
     .fn = helper_of_output,
     .data = "InvGrad",
     .outputs = USES(0)},
    {.op = "Sin", .fn = sin_grad, .inputs = USES(0)},
    {.op = "Cos", .fn = cos_grad, .inputs = USES(0)},
    {.op = "Tanh",
     .fn = helper_of_output,
     .data = "TanhGrad",
     .outputs = USES(0)},
    {.op = "Sigmoid",
     .fn = helper_of_output,
     .data = "SigmoidGrad",
     .outputs = USES(0)},
    {.op = "Relu6",
     .fn = helper_of_dy_output,
     .data = "Relu6Grad",
     .outputs = USES(0)},
    {.op = "Elu",
     .fn = helper_of_dy_output,
     .data = "EluGrad",
     .outputs = USES(0)},
    {.op = "Selu",
     .fn = helper_of_dy_output,
     .data = "SeluGrad",
     .outputs = USES(0)},
    {.op = "Softplus",
     .fn = helper_of_dy_input,
     .data = "SoftplusGrad",
     .inputs = USES(0)},
    {.op = "Softsign",
     .fn = helper_of_dy_input,
     .data = "SoftsignGrad",
     .inputs = USES(0)},
    {.op = "Erf", .fn = erf_grad, .inputs = USES(0)},
    {.op = "TanhGrad",
     .fn = power_helper_grad,
     .data = &kTanhGrad,
     .inputs = USES(0) | USES(1)},
    {.op = "RsqrtGrad",
     .fn = power_helper_grad,
     .data = &kRsqrtGrad,
     .inputs = USES(0) | USES(1)},
    {.op = "ReciprocalGrad",
     .fn = power_helper_grad,
     .data = &kReciprocalGrad,
     .inputs = USES(0) | USES(1)},
    {.op = "InvGrad",
     .fn = power_helper_grad,
     .data = &kInvGrad,
     .inputs = USES(0) | USES(1)},
    {.op = "SigmoidGrad", .fn = sigmoid_grad_grad, .inputs = USES(0) | USES(1)},
    {.op = "SqrtGrad",
     .fn = sqrt_grad_grad,
     .inputs = USES(0),
     .outputs = USES(0)},
    {.op = "Relu6Grad", .fn = relu6_grad_grad, .inputs = USES(1)},
    {.op = "EluGrad",
     .fn = exp_unit_grad_grad,
     .data = "EluGrad",
     .inputs = USES(0) | USES(1)},
    {.op = "SeluGrad",
     .fn = exp_unit_grad_grad,
     .data = "SeluGrad",
     .inputs = USES(0) | USES(1)},
    {.op = "SoftplusGrad",
     .fn = softplus_grad_grad,
     .inputs = USES(0) | USES(1)},
    {.op = "Pow",
     .fn = pow_grad,
     .inputs = USES(0) | USES(1),
     .outputs = USES(0)},
    {.op = "Maximum",
     .fn = extremum_grad,
     .data = "GreaterEqual",
     .inputs = USES(0) | USES(1)},
    {.op = "Minimum",
     .fn = extremum_grad,
     .data = "LessEqual",
     .inputs = USES(0) | USES(1)},
    {.op = "SquaredDifference",
     .fn = squared_difference_grad,
     .inputs = USES(0) | USES(1)},
    {.op = "Div", .fn = div_grad, .inputs = USES(0) | USES(1)},
    {.op = "FloorMod",
     .fn = mod_grad,
     .data = "FloorDiv",
     .inputs = USES(0) | USES(1)},
    {.op = "TruncateMod",
     .fn = mod_grad,
     .data = "TruncateDiv",
     .inputs = USES(0) | USES(1)},
    {.op = "Prod", .fn = prod_grad, .inputs = USES(0) | USES(1)},
    {.op = "Max",
     .fn = extremum_reduction_grad,
     .inputs = USES(0) | USES(1),
     .outputs = USES(0)},
    {.op = "Min",
     .fn = extremum_reduction_grad,
     .inputs = USES(0) | USES(1),
     .outputs = USES(0)},
    {.op = "AddN", .fn = add_n_grad},
    {.op = "ClipByValue", .fn = clip_grad, .inputs = LOOM_GRADIENT_USES_ALL},
    {.op = "Select", .fn = select_grad, .inputs = USES(0)},
    {.op = "SelectV2", .fn = select_v2_grad, .inputs = USES(0)},
};

// Piecewise constant: no gradient (TensorFlow returns None for them); and
// the boolean reductions.
static const char* const kNotDifferentiable[] = {
    "Floor", "Ceil", "Round", "FloorDiv", "TruncateDiv", "All", "Any",
};

loom_status_t loom__register_math_gradients(void) {
  return LOOM__REGISTER_GRADIENT_FAMILY(kGradients, kNotDifferentiable);
}
