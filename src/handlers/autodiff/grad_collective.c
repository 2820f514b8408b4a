// Gradients of the collectives. Every participant of a collective runs
// its gradient function, so the backward pass meets the group again, with
// the collective that transposes the forward one: an all-reduce sum's
// gradient is the sum of the participants' output gradients (a mean's,
// their mean), a gather's a reduce-scatter, a reduce-scatter's a gather,
// an all-to-all's an all-to-all, a broadcast's an all-reduce to which the
// receivers bring theirs. The backward collective reuses the
// forward op's keys: the forward round is over by then, and every
// participant runs the backward ops in the same order. The rows are
// LOOM_GRADIENT_COLLECTIVE: a tape records them on every participant, also
// untracked, and runs them in every backward pass; a participant that no
// gradient reached brings zeros, so the others do not wait for it.

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)

static bool string_attr_is(grad_ctx_t* ctx, const char* name,
                           const char* expected) {
  loom_attr_value_t value;
  if (!loom_gradient_context_attr(ctx, name, &value) ||
      value.kind != LOOM_ATTR_KIND_STRING) {
    return false;
  }
  return value.u.string.size == strlen(expected) &&
         memcmp(value.u.string.data, expected, value.u.string.size) == 0;
}

// Runs collective `op_name` on the output gradient (zeros when none
// reached this participant) with the forward op's keys (its inputs
// group_size, group_key, instance_key from `first_key` on) and timeout,
// and the attributes given, into *out.
static loom_status_t collective_of_gradient_keyed(
    grad_ctx_t* ctx, handle_t* const* dys, int32_t first_key,
    const char* op_name, const char* merge_op, const char* final_op,
    handle_t** out) {
  loom_attr_value_t timeout = {.kind = LOOM_ATTR_KIND_F32, .u.f32 = 0};
  loom_gradient_context_attr(ctx, "timeout_seconds", &timeout);
  handle_t* dy = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_output_gradient_or_zeros(ctx, dys, 0, &dy));
  handle_t* inputs[] = {dy, loom_gradient_context_input(ctx, first_key),
                        loom_gradient_context_input(ctx, first_key + 1),
                        loom_gradient_context_input(ctx, first_key + 2)};
  loom__grad_attr_t attrs[3] = {LOOM_GRAD_VALUE("timeout_seconds", timeout)};
  int32_t num_attrs = 1;
  if (merge_op) {
    attrs[num_attrs++] = LOOM_GRAD_STRING("merge_op", merge_op);
    attrs[num_attrs++] = LOOM_GRAD_STRING("final_op", final_op);
  }
  loom_status_t status =
      loom__grad_op(ctx, op_name, inputs, 4, attrs, num_attrs, out);
  loom_tensor_handle_release(dy);
  return status;
}

// The ops whose input 0 is the tensor and inputs 1-3 the keys.
static loom_status_t collective_of_gradient(
    grad_ctx_t* ctx, handle_t* const* dys, const char* op_name,
    const char* merge_op, const char* final_op, handle_t** out) {
  return collective_of_gradient_keyed(ctx, dys, 1, op_name, merge_op, final_op,
                                      out);
}

// CollectiveReduceV2 with merge_op Add: dx = CollectiveReduceV2(dy) with
// the forward op's final_op (Id: the sum; Div: the mean), keys and
// timeout. A participant that no gradient reached brings zeros: the
// others wait for it.
static loom_status_t collective_reduce_grad(grad_ctx_t* ctx,
                                            handle_t* const* dys,
                                            handle_t** dxs, void* data) {
  (void)data;
  if (!string_attr_is(ctx, "merge_op", "Add")) {
    loom_attr_value_t merge = {.kind = LOOM_ATTR_KIND_STRING};
    loom_gradient_context_attr(ctx, "merge_op", &merge);
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "the gradient of CollectiveReduceV2 with merge_op %.*s: only Add "
        "(with final_op Id or Div) has one",
        (int)merge.u.string.size,
        merge.u.string.data ? merge.u.string.data : "");
  }
  bool mean = string_attr_is(ctx, "final_op", "Div");
  return collective_of_gradient(ctx, dys, "CollectiveReduceV2", "Add",
                                mean ? "Div" : "Id", &dxs[0]);
}

// CollectiveGatherV2: participant r's input is part r of every
// participant's output, so its gradient is part r of the sum of their
// output gradients: a reduce-scatter (Add, Id) of them.
static loom_status_t collective_gather_grad(grad_ctx_t* ctx,
                                            handle_t* const* dys,
                                            handle_t** dxs, void* data) {
  (void)data;
  return collective_of_gradient(ctx, dys, "CollectiveReduceScatterV2", "Add",
                                "Id", &dxs[0]);
}

// CollectiveReduceScatterV2 with merge_op Add: every participant's input
// reaches part r of the sum on participant r, so the gradient is every
// participant's output gradient in rank order: a gather (divided by the
// group size for Div).
static loom_status_t collective_reduce_scatter_grad(grad_ctx_t* ctx,
                                                    handle_t* const* dys,
                                                    handle_t** dxs,
                                                    void* data) {
  (void)data;
  if (!string_attr_is(ctx, "merge_op", "Add")) {
    loom_attr_value_t merge = {.kind = LOOM_ATTR_KIND_STRING};
    loom_gradient_context_attr(ctx, "merge_op", &merge);
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "the gradient of CollectiveReduceScatterV2 with merge_op %.*s: only "
        "Add (with final_op Id or Div) has one",
        (int)merge.u.string.size,
        merge.u.string.data ? merge.u.string.data : "");
  }
  if (!string_attr_is(ctx, "final_op", "Div")) {
    return collective_of_gradient(ctx, dys, "CollectiveGatherV2", NULL, NULL,
                                  &dxs[0]);
  }
  handle_t* t[3] = {NULL, NULL, NULL};
  loom_status_t status =
      collective_of_gradient(ctx, dys, "CollectiveGatherV2", NULL, NULL, &t[0]);
  if (!status) {
    status = loom__grad_op(
        ctx, "Cast", LOOM_GRAD_INPUTS(loom_gradient_context_input(ctx, 1)),
        LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE(
            "DstT", loom_gradient_context_input_metadata(ctx, 0)->dtype)),
        &t[1]);
  }
  if (!status) status = loom__grad_binary(ctx, "RealDiv", t[0], t[1], &dxs[0]);
  loom__grad_release_all(t, 3);
  return status;
}

// CollectiveAllToAllV2 exchanges parts: part j of participant r's input
// is part r of participant j's output, so the gradient exchanges the
// output gradients' parts the same way.
static loom_status_t collective_all_to_all_grad(grad_ctx_t* ctx,
                                                handle_t* const* dys,
                                                handle_t** dxs, void* data) {
  (void)data;
  return collective_of_gradient(ctx, dys, "CollectiveAllToAllV2", NULL, NULL,
                                &dxs[0]);
}

// CollectiveBcastSendV2 gives its input to every participant (itself
// included), so its gradient is the sum of all participants' output
// gradients: an all-reduce (Add, Id) of them, which the receivers join
// through their own gradient.
static loom_status_t collective_bcast_send_grad(grad_ctx_t* ctx,
                                                handle_t* const* dys,
                                                handle_t** dxs, void* data) {
  (void)data;
  return collective_of_gradient(ctx, dys, "CollectiveReduceV2", "Add", "Id",
                                &dxs[0]);
}

// CollectiveBcastRecvV2 (inputs group_size, group_key, instance_key,
// shape: nothing to differentiate) brings its output gradient, or zeros,
// to the sender's all-reduce, and keeps nothing of the result.
static loom_status_t collective_bcast_recv_grad(grad_ctx_t* ctx,
                                                handle_t* const* dys,
                                                handle_t** dxs, void* data) {
  (void)dxs;
  (void)data;
  handle_t* sum = NULL;
  loom_status_t status = collective_of_gradient_keyed(
      ctx, dys, 0, "CollectiveReduceV2", "Add", "Id", &sum);
  loom_tensor_handle_release(sum);
  return status;
}

#define KEYS(first) (USES(first) | USES((first) + 1) | USES((first) + 2))

static const loom__gradient_row_t kGradients[] = {
    {.op = "CollectiveReduceV2",
     .fn = collective_reduce_grad,
     .inputs = KEYS(1),
     .flags = LOOM_GRADIENT_COLLECTIVE},
    {.op = "CollectiveGatherV2",
     .fn = collective_gather_grad,
     .inputs = KEYS(1),
     .flags = LOOM_GRADIENT_COLLECTIVE},
    {.op = "CollectiveReduceScatterV2",
     .fn = collective_reduce_scatter_grad,
     .inputs = KEYS(1),
     .flags = LOOM_GRADIENT_COLLECTIVE},
    {.op = "CollectiveAllToAllV2",
     .fn = collective_all_to_all_grad,
     .inputs = KEYS(1),
     .flags = LOOM_GRADIENT_COLLECTIVE},
    {.op = "CollectiveBcastSendV2",
     .fn = collective_bcast_send_grad,
     .inputs = KEYS(1),
     .flags = LOOM_GRADIENT_COLLECTIVE},
    {.op = "CollectiveBcastRecvV2",
     .fn = collective_bcast_recv_grad,
     .inputs = KEYS(0),
     .flags = LOOM_GRADIENT_COLLECTIVE},
};

loom_status_t loom__register_collective_gradients(void) {
  return loom__register_gradient_family(kGradients, LOOM__COUNT_OF(kGradients),
                                        NULL, 0);
}
