// Gradient functions of the scans, Cumsum and Cumprod, with TensorFlow's
// formulas (math_grad.py): a running sum's gradient is the running sum of
// dy the other way; a running product's is that of prod * dy, divided by
// x (0 where x is 0, as TensorFlow's div_no_nan).

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)
#define RELEASE(array) \
  loom__grad_release_all((array), (int32_t)(sizeof(array) / sizeof((array)[0])))

// The forward op's exclusive and reverse attrs.
static void scan_attrs(grad_ctx_t* ctx, bool* exclusive, bool* reverse) {
  loom_attr_value_t value = {.kind = LOOM_ATTR_KIND_BOOL, .u.b = false};
  *exclusive = loom_gradient_context_attr(ctx, "exclusive", &value) &&
               value.kind == LOOM_ATTR_KIND_BOOL && value.u.b;
  *reverse = loom_gradient_context_attr(ctx, "reverse", &value) &&
             value.kind == LOOM_ATTR_KIND_BOOL && value.u.b;
}

// Cumsum(x, axis): dx = Cumsum(dy, axis) with `exclusive` kept and
// `reverse` flipped (TensorFlow's _CumsumGrad).
static loom_status_t cumsum_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                 handle_t** dxs, void* data) {
  (void)data;
  if (!dys[0]) return loom_ok_status();
  bool exclusive, reverse;
  scan_attrs(ctx, &exclusive, &reverse);
  return loom__grad_op(
      ctx, "Cumsum",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 1)),
      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("exclusive", exclusive),
                      LOOM_GRAD_BOOL("reverse", !reverse)),
      &dxs[0]);
}

// Cumprod(x, axis): dx = div_no_nan(Cumsum(prod * dy, axis, reverse
// flipped), x) with prod = Cumprod(x, axis) under the forward attrs
// (TensorFlow's _CumprodGrad); div_no_nan is Select(x == 0, 0, . / x).
static loom_status_t cumprod_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                  handle_t** dxs, void* data) {
  (void)data;
  if (!dys[0]) return loom_ok_status();
  bool exclusive, reverse;
  scan_attrs(ctx, &exclusive, &reverse);
  handle_t* x = loom_gradient_context_input(ctx, 0);
  handle_t* axis = loom_gradient_context_input(ctx, 1);
  handle_t* t[6] = {NULL};
  loom_status_t s =
      loom__grad_op(ctx, "Cumprod", LOOM_GRAD_INPUTS(x, axis),
                    LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("exclusive", exclusive),
                                    LOOM_GRAD_BOOL("reverse", reverse)),
                    &t[0]);
  if (!s) s = loom__grad_binary(ctx, "Mul", t[0], dys[0], &t[1]);
  if (!s) {
    s = loom__grad_op(ctx, "Cumsum", LOOM_GRAD_INPUTS(t[1], axis),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("exclusive", exclusive),
                                      LOOM_GRAD_BOOL("reverse", !reverse)),
                      &t[2]);
  }
  if (!s) s = loom__grad_binary(ctx, "RealDiv", t[2], x, &t[3]);
  if (!s) {
    s = loom__grad_scalar(
        ctx, loom_gradient_context_input_metadata(ctx, 0)->dtype, 0.0, &t[4]);
  }
  if (!s) s = loom__grad_binary(ctx, "Equal", x, t[4], &t[5]);
  if (!s) {
    s = loom__grad_op(ctx, "SelectV2", LOOM_GRAD_INPUTS(t[5], t[4], t[3]),
                      LOOM_GRAD_NO_ATTRS, &dxs[0]);
  }
  RELEASE(t);
  return s;
}

static const loom__gradient_row_t kGradients[] = {
    {.op = "Cumsum", .fn = cumsum_grad, .inputs = USES(1)},
    {.op = "Cumprod", .fn = cumprod_grad, .inputs = USES(0) | USES(1)},
};

loom_status_t loom__register_scan_gradients(void) {
  return loom__register_gradient_family(kGradients, LOOM__COUNT_OF(kGradients),
                                        NULL, 0);
}
