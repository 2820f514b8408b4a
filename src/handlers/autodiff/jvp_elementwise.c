// JVPs of element-wise ops. A unary element-wise op has a diagonal
// Jacobian, equal to its transpose: its JVP is its gradient function
// applied to the tangent. The binary ones that are not (bi)linear have
// their own rules here, with broadcasting.

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"
#include "handlers/autodiff/jvp_ops.h"

static loom_status_t diagonal_jvp(loom_gradient_context_t* ctx,
                                  loom_tensor_handle_t* const* tangents,
                                  loom_tensor_handle_t** out, void* user_data) {
  (void)user_data;
  if (!tangents[0]) return loom_ok_status();
  const char* name = loom_gradient_context_op_name(ctx);
  const loom_gradient_def_t* gradient = loom_gradient_find(name);
  if (!gradient || !gradient->fn) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "JVP of %s: it has no gradient function", name);
  }
  loom_tensor_handle_t* upstream[1] = {tangents[0]};
  return gradient->fn(ctx, upstream, out, gradient->user_data);
}

// x / y: (tx - out * ty) / y.
static loom_status_t div_jvp(loom_gradient_context_t* ctx,
                             loom_tensor_handle_t* const* t,
                             loom_tensor_handle_t** out, void* user_data) {
  (void)user_data;
  loom_tensor_handle_t* y = loom_gradient_context_input(ctx, 1);
  loom_tensor_handle_t* z = loom_gradient_context_output(ctx, 0);
  loom_tensor_handle_t* first = NULL;
  loom_tensor_handle_t* second = NULL;
  loom_status_t status = loom_ok_status();
  if (t[0]) status = loom__grad_binary(ctx, "RealDiv", t[0], y, &first);
  if (!status && t[1]) {
    loom_tensor_handle_t* product = NULL;
    loom_tensor_handle_t* quotient = NULL;
    status = loom__grad_binary(ctx, "Mul", z, t[1], &product);
    if (!status)
      status = loom__grad_binary(ctx, "RealDiv", product, y, &quotient);
    if (!status) status = loom__grad_unary(ctx, "Neg", quotient, &second);
    loom_tensor_handle_release(product);
    loom_tensor_handle_release(quotient);
  }
  loom_tensor_handle_t* sum = NULL;
  if (!status) {
    status = loom__jvp_add(ctx, first, second, &sum);
    first = second = NULL;
  }
  if (!status && sum) status = loom__jvp_fit_output(ctx, sum, 0, &out[0]);
  loom_tensor_handle_release(first);
  loom_tensor_handle_release(second);
  return status;
}

// Maximum / Minimum: the tangent of the operand chosen (x on ties, as the
// gradient: GreaterEqual / LessEqual).
static loom_status_t extremum_jvp(loom_gradient_context_t* ctx,
                                  loom_tensor_handle_t* const* t,
                                  loom_tensor_handle_t** out, void* user_data) {
  const char* compare = user_data;
  loom_tensor_handle_t* x = loom_gradient_context_input(ctx, 0);
  loom_tensor_handle_t* y = loom_gradient_context_input(ctx, 1);
  loom_tensor_handle_t* mask = NULL;
  loom_tensor_handle_t* zero = NULL;
  loom_tensor_handle_t* chosen = NULL;
  loom_status_t status = loom__grad_binary(ctx, compare, x, y, &mask);
  if (!status && (!t[0] || !t[1])) {
    status = loom__grad_scalar(
        ctx, loom_gradient_context_output_metadata(ctx, 0)->dtype, 0.0, &zero);
  }
  if (!status) {
    status = loom__grad_op(
        ctx, "SelectV2",
        LOOM_GRAD_INPUTS(mask, t[0] ? t[0] : zero, t[1] ? t[1] : zero),
        LOOM_GRAD_NO_ATTRS, &chosen);
  }
  if (!status) {
    status = loom__jvp_fit_output(ctx, chosen, 0, &out[0]);
    chosen = NULL;
  }
  loom_tensor_handle_release(mask);
  loom_tensor_handle_release(zero);
  loom_tensor_handle_release(chosen);
  return status;
}

// (x - y)^2: 2 (x - y) (tx - ty).
static loom_status_t squared_difference_jvp(loom_gradient_context_t* ctx,
                                            loom_tensor_handle_t* const* t,
                                            loom_tensor_handle_t** out,
                                            void* user_data) {
  (void)user_data;
  loom_tensor_handle_t* x = loom_gradient_context_input(ctx, 0);
  loom_tensor_handle_t* y = loom_gradient_context_input(ctx, 1);
  loom_tensor_handle_t* h[5] = {NULL};
  loom_status_t status = loom__grad_binary(ctx, "Sub", x, y, &h[0]);
  if (!status) {
    if (t[0] && t[1]) {
      status = loom__grad_binary(ctx, "Sub", t[0], t[1], &h[1]);
    } else if (t[0]) {
      loom_tensor_handle_retain(t[0]);
      h[1] = t[0];
    } else {
      status = loom__grad_unary(ctx, "Neg", t[1], &h[1]);
    }
  }
  if (!status) status = loom__grad_binary(ctx, "Mul", h[0], h[1], &h[2]);
  if (!status) {
    status = loom__grad_scalar(
        ctx, loom_gradient_context_output_metadata(ctx, 0)->dtype, 2.0, &h[3]);
  }
  if (!status) status = loom__grad_binary(ctx, "Mul", h[2], h[3], &h[4]);
  if (!status) {
    status = loom__jvp_fit_output(ctx, h[4], 0, &out[0]);
    h[4] = NULL;
  }
  loom__grad_release_all(h, 5);
  return status;
}

static const char* const kDiagonal[] = {
    "Abs",  "Sign",     "Exp",      "Expm1",      "Log",       "Log1p",
    "Sqrt", "Rsqrt",    "Square",   "Reciprocal", "Inv",       "Sin",
    "Cos",  "Tanh",     "Sigmoid",  "Relu",       "Relu6",     "Elu",
    "Selu", "Softplus", "Softsign", "Erf",        "LeakyRelu",
};

static const struct {
  const char* op;
  loom_jvp_fn_t fn;
  const char* data;
} kBinary[] = {
    {"RealDiv", div_jvp, NULL},
    {"Div", div_jvp, NULL},
    {"Maximum", extremum_jvp, "GreaterEqual"},
    {"Minimum", extremum_jvp, "LessEqual"},
    {"SquaredDifference", squared_difference_jvp, NULL},
};

loom_status_t loom__register_elementwise_jvps(void) {
  for (size_t i = 0; i < sizeof(kDiagonal) / sizeof(kDiagonal[0]); ++i) {
    loom_jvp_def_t def = {
        .struct_size = sizeof(def),
        .op_name = kDiagonal[i],
        .fn = diagonal_jvp,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
        .outputs_used = LOOM_GRADIENT_USES_ALL,
    };
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&def));
  }
  for (size_t i = 0; i < sizeof(kBinary) / sizeof(kBinary[0]); ++i) {
    loom_jvp_def_t def = {
        .struct_size = sizeof(def),
        .op_name = kBinary[i].op,
        .fn = kBinary[i].fn,
        .user_data = (void*)kBinary[i].data,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
        .outputs_used = LOOM_GRADIENT_USES_ALL,
    };
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&def));
  }
  return loom_ok_status();
}
