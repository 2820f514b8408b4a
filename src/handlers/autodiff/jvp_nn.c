// JVPs of the softmax family (over the last axis):
//   Softmax     p = softmax(x):     tp = p * (t - sum(p * t))
//   LogSoftmax  l = log_softmax(x): tl = t - sum(exp(l) * t)
//   the cross-entropies (loss, backprop = softmax(x) - labels):
//     tloss = sum(backprop * tx) - sum(log_softmax(x) * tlabels)
//     tbackprop = softmax(x) * (tx - sum(softmax(x) * tx)) - tlabels
// (sums over the last axis, kept for the element-wise tangents; sparse
// labels are indices and have no tangent).

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"
#include "handlers/autodiff/jvp_ops.h"

typedef loom_tensor_handle_t handle_t;

// sum(x, axis=-1, keep_dims).
static loom_status_t sum_last(loom_gradient_context_t* ctx, handle_t* x,
                              bool keep_dims, handle_t** out) {
  handle_t* axis = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_scalar(ctx, LOOM_DTYPE_INT32, -1, &axis));
  loom_status_t status = loom__grad_op(
      ctx, "Sum", LOOM_GRAD_INPUTS(x, axis),
      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", keep_dims)), out);
  loom_tensor_handle_release(axis);
  return status;
}

// sum(a * b, axis=-1, keep_dims).
static loom_status_t dot_last(loom_gradient_context_t* ctx, handle_t* a,
                              handle_t* b, bool keep_dims, handle_t** out) {
  handle_t* product = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_binary(ctx, "Mul", a, b, &product));
  loom_status_t status = sum_last(ctx, product, keep_dims, out);
  loom_tensor_handle_release(product);
  return status;
}

// p * (t - sum(p * t)).
static loom_status_t softmax_tangent(loom_gradient_context_t* ctx, handle_t* p,
                                     handle_t* t, handle_t** out) {
  handle_t* h[2] = {NULL, NULL};
  loom_status_t status = dot_last(ctx, p, t, true, &h[0]);
  if (!status) status = loom__grad_binary(ctx, "Sub", t, h[0], &h[1]);
  if (!status) status = loom__grad_binary(ctx, "Mul", p, h[1], out);
  loom__grad_release_all(h, 2);
  return status;
}

static loom_status_t softmax_jvp(loom_gradient_context_t* ctx,
                                 handle_t* const* t, handle_t** out,
                                 void* user_data) {
  (void)user_data;
  if (!t[0]) return loom_ok_status();
  return softmax_tangent(ctx, loom_gradient_context_output(ctx, 0), t[0],
                         &out[0]);
}

static loom_status_t log_softmax_jvp(loom_gradient_context_t* ctx,
                                     handle_t* const* t, handle_t** out,
                                     void* user_data) {
  (void)user_data;
  if (!t[0]) return loom_ok_status();
  handle_t* h[2] = {NULL, NULL};
  loom_status_t status =
      loom__grad_unary(ctx, "Exp", loom_gradient_context_output(ctx, 0), &h[0]);
  if (!status) status = dot_last(ctx, h[0], t[0], true, &h[1]);
  if (!status) status = loom__grad_binary(ctx, "Sub", t[0], h[1], &out[0]);
  loom__grad_release_all(h, 2);
  return status;
}

// Both cross-entropies; `dense` when the labels are probabilities.
static loom_status_t xent_jvp(loom_gradient_context_t* ctx, handle_t* const* t,
                              handle_t** out, void* user_data) {
  bool dense = user_data != NULL;
  handle_t* logits = loom_gradient_context_input(ctx, 0);
  handle_t* backprop = loom_gradient_context_output(ctx, 1);
  handle_t* label_tangent = dense ? t[1] : NULL;
  handle_t* loss_terms[2] = {NULL, NULL};
  handle_t* backprop_terms[2] = {NULL, NULL};
  handle_t* p = NULL;
  handle_t* log_p = NULL;
  loom_status_t status = loom_ok_status();
  if (t[0]) {
    status = dot_last(ctx, backprop, t[0], false, &loss_terms[0]);
    if (!status) status = loom__grad_unary(ctx, "Softmax", logits, &p);
    if (!status) status = softmax_tangent(ctx, p, t[0], &backprop_terms[0]);
  }
  if (!status && label_tangent) {
    handle_t* dot = NULL;
    status = loom__grad_unary(ctx, "LogSoftmax", logits, &log_p);
    if (!status) status = dot_last(ctx, log_p, label_tangent, false, &dot);
    if (!status) status = loom__grad_unary(ctx, "Neg", dot, &loss_terms[1]);
    if (!status) {
      status = loom__grad_unary(ctx, "Neg", label_tangent, &backprop_terms[1]);
    }
    loom_tensor_handle_release(dot);
  }
  if (!status) {
    status = loom__jvp_add(ctx, loss_terms[0], loss_terms[1], &out[0]);
    loss_terms[0] = loss_terms[1] = NULL;
  }
  if (!status) {
    status = loom__jvp_add(ctx, backprop_terms[0], backprop_terms[1], &out[1]);
    backprop_terms[0] = backprop_terms[1] = NULL;
  }
  loom__grad_release_all(loss_terms, 2);
  loom__grad_release_all(backprop_terms, 2);
  loom_tensor_handle_release(p);
  loom_tensor_handle_release(log_p);
  return status;
}

static const struct {
  const char* op;
  loom_jvp_fn_t fn;
  void* data;
} kJvps[] = {
    {"Softmax", softmax_jvp, NULL},
    {"LogSoftmax", log_softmax_jvp, NULL},
    {"SoftmaxCrossEntropyWithLogits", xent_jvp, (void*)"dense"},
    {"SparseSoftmaxCrossEntropyWithLogits", xent_jvp, NULL},
};

loom_status_t loom__register_nn_jvps(void) {
  for (size_t i = 0; i < sizeof(kJvps) / sizeof(kJvps[0]); ++i) {
    loom_jvp_def_t def = {
        .struct_size = sizeof(def),
        .op_name = kJvps[i].op,
        .fn = kJvps[i].fn,
        .user_data = kJvps[i].data,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
        .outputs_used = LOOM_GRADIENT_USES_ALL,
    };
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&def));
  }
  return loom_ok_status();
}
