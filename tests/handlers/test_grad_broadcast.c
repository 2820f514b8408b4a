// The gradient of a broadcast (src/handlers/autodiff/grad_collective.c,
// LOOM_GRADIENT_COLLECTIVE in the tape): participants are threads running
// CollectiveBcastSendV2 / RecvV2 eagerly on the in-process backend, each
// under its own tape. The sender's gradient is the sum of every
// participant's output gradient; a receiver's tape records its RecvV2
// although none of its inputs is tracked, and brings its output gradient
// (or zeros, when its loss does not use the value) to the sender's
// all-reduce.
//
// Reference values: PyTorch, the broadcast written out as copies of x:
//   x = [1, 2, 3] (requires_grad), a0 = [0.5, -1, 2], w1 = [3, 0.25, -2],
//   w2 = [-1, 4, 0.5]; y0 = x, y1 = x.clone(), y2 = x.clone()
//   torch.autograd.grad((y0*a0).sum() + (y1*w1).sum(), [x, w1])
//     == ([3.5, -0.75, 0], [1, 2, 3])
//   torch.autograd.grad((y0*a0).sum() + (w1*w1).sum(), [x, w1])
//     == ([0.5, -1, 2], [6, 0.5, -4])
//   torch.autograd.grad((y0*a0).sum() + (y1*w1).sum() + (y2*y2*w2).sum(),
//                       [x, w1, w2])
//     == ([1.5, 15.25, 3], [1, 2, 3], [1, 4, 9])

#include <pthread.h>
#include <string.h>

#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

enum { kN = 3, kMaxParticipants = 3 };

static const float kX[kN] = {1, 2, 3};
static const float kA0[kN] = {0.5f, -1, 2};
static const float kW[2][kN] = {{3, 0.25f, -2}, {-1, 4, 0.5f}};

// How a receiver's loss uses the value it receives, y.
typedef enum {
  kLossYTimesW,   // sum(y * w)
  kLossYYTimesW,  // sum(y * y * w)
  kLossWTimesW,   // sum(w * w): y unused
} receiver_loss_t;

// One participant: the sender (rank 0: x watched, loss sum(y * a0)) or a
// receiver (w watched); its thread stores the gradient of its loss with
// respect to its watched value, and its status.
typedef struct {
  loom_context_t* context;
  int32_t group_size;
  int32_t instance_key;
  bool sender;
  receiver_loss_t loss;
  handle_t* watched;  // x or w
  handle_t* factor;   // a0 for the sender
  handle_t* gradient;
  loom_status_t status;
} participant_t;

static loom_status_t run_op(loom_context_t* context, const char* name,
                            handle_t* const* inputs, int32_t n,
                            loom_dtype_t type_attr, handle_t** out) {
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(context, name, &op);
  for (int32_t i = 0; i < n && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!status && type_attr != LOOM_DTYPE_INVALID) {
    status = loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "T", type_attr);
    if (!status) {
      status =
          loom_op_attrs_set_f32(loom_eager_op_attrs(op), "timeout_seconds", 20);
    }
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

// The broadcast: Send(x) on the sender, Recv(shape [kN]) on a receiver.
static loom_status_t broadcast(const participant_t* p, handle_t** out) {
  loom_context_t* c = p->context;
  handle_t* keys[3] = {loom_test_int32_scalar(c, p->group_size),
                       loom_test_int32_scalar(c, 9),
                       loom_test_int32_scalar(c, p->instance_key)};
  loom_status_t status;
  if (p->sender) {
    handle_t* inputs[] = {p->watched, keys[0], keys[1], keys[2]};
    status =
        run_op(c, "CollectiveBcastSendV2", inputs, 4, LOOM_DTYPE_FLOAT, out);
  } else {
    static const float kShape[1] = {kN};
    static const int64_t kRank1[1] = {1};
    handle_t* shape = loom_test_tensor(c, LOOM_DTYPE_INT32, kShape, 1, kRank1);
    handle_t* inputs[] = {keys[0], keys[1], keys[2], shape};
    status =
        run_op(c, "CollectiveBcastRecvV2", inputs, 4, LOOM_DTYPE_FLOAT, out);
    loom_tensor_handle_release(shape);
  }
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(keys[i]);
  return status;
}

// This participant's loss of y.
static loom_status_t loss_of(const participant_t* p, handle_t* y,
                             handle_t** out) {
  loom_context_t* c = p->context;
  handle_t* t[3] = {NULL, NULL, NULL};
  loom_status_t status;
  if (p->sender) {
    status = run_op(c, "Mul", (handle_t*[]){y, p->factor}, 2,
                    LOOM_DTYPE_INVALID, &t[0]);
  } else if (p->loss == kLossWTimesW) {
    status = run_op(c, "Mul", (handle_t*[]){p->watched, p->watched}, 2,
                    LOOM_DTYPE_INVALID, &t[0]);
  } else {
    status = run_op(c, "Mul", (handle_t*[]){y, p->watched}, 2,
                    LOOM_DTYPE_INVALID, &t[0]);
    if (!status && p->loss == kLossYYTimesW) {
      status = run_op(c, "Mul", (handle_t*[]){t[0], y}, 2, LOOM_DTYPE_INVALID,
                      &t[1]);
      handle_t* swap = t[0];
      t[0] = t[1];
      t[1] = swap;
    }
  }
  t[2] = loom_test_int32_scalar(c, 0);
  if (!status) {
    status =
        run_op(c, "Sum", (handle_t*[]){t[0], t[2]}, 2, LOOM_DTYPE_INVALID, out);
  }
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(t[i]);
  return status;
}

static void* participate(void* arg) {
  participant_t* p = arg;
  loom_context_t* c = p->context;
  loom_op_handler_t* tape = NULL;
  handle_t* y = NULL;
  handle_t* loss = NULL;
  loom_status_t status = loom_tape_create(c, NULL, &tape);
  if (!status) status = loom_context_enter_scope(c, tape);
  if (!status) {
    status = loom_tape_watch(tape, p->watched);
    if (!status) status = broadcast(p, &y);
    if (!status) status = loss_of(p, y, &loss);
    loom_status_t exited = loom_context_exit_scope(c);
    if (!status) {
      status = exited;
    } else {
      loom_status_free(exited);
    }
  }
  if (!status) {
    status = loom_tape_gradient(tape, &loss, 1, &p->watched, 1, NULL,
                                LOOM_UNCONNECTED_ZERO, &p->gradient);
  }
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
  p->status = status;
  return NULL;
}

// Runs the sender and `num_receivers` receivers (losses[r]) in threads
// with broadcast instance `instance_key`, and checks each gradient against
// expected[0] (the sender's) and expected[1 + r].
static void expect_gradients(int32_t num_receivers,
                             const receiver_loss_t* losses,
                             int32_t instance_key,
                             const float (*expected)[kN]) {
  loom_context_t* context = NULL;
  LOOM_ASSERT_OK(loom_context_create(NULL, &context));
  static const int64_t dims[1] = {kN};
  participant_t p[kMaxParticipants];
  int32_t n = 1 + num_receivers;
  for (int32_t r = 0; r < n; ++r) {
    p[r] = (participant_t){
        .context = context,
        .group_size = n,
        .instance_key = instance_key,
        .sender = r == 0,
        .loss = r > 0 ? losses[r - 1] : kLossYTimesW,
        .watched = loom_test_tensor(context, LOOM_DTYPE_FLOAT,
                                    r == 0 ? kX : kW[r - 1], 1, dims),
        .factor =
            r == 0 ? loom_test_tensor(context, LOOM_DTYPE_FLOAT, kA0, 1, dims)
                   : NULL,
    };
  }
  pthread_t threads[kMaxParticipants];
  for (int32_t r = 0; r < n; ++r) {
    assert_int_equal(pthread_create(&threads[r], NULL, participate, &p[r]), 0);
  }
  for (int32_t r = 0; r < n; ++r) pthread_join(threads[r], NULL);
  for (int32_t r = 0; r < n; ++r) {
    LOOM_ASSERT_OK(p[r].status);
    loom_test_expect_values(context, p[r].gradient, expected[r], kN);
    loom_tensor_handle_release(p[r].gradient);
    loom_tensor_handle_release(p[r].watched);
    loom_tensor_handle_release(p[r].factor);
  }
  loom_context_destroy(context);
}

static void the_sender_gets_the_sum_of_the_receivers_gradients(void** state) {
  (void)state;
  const receiver_loss_t losses[] = {kLossYTimesW};
  const float expected[2][kN] = {{3.5f, -0.75f, 0}, {1, 2, 3}};
  expect_gradients(1, losses, 1, expected);
}

static void a_receiver_whose_loss_ignores_the_value_brings_zeros(void** state) {
  (void)state;
  const receiver_loss_t losses[] = {kLossWTimesW};
  const float expected[2][kN] = {{0.5f, -1, 2}, {6, 0.5f, -4}};
  expect_gradients(1, losses, 2, expected);
}

static void two_receivers(void** state) {
  (void)state;
  const receiver_loss_t losses[] = {kLossYTimesW, kLossYYTimesW};
  const float expected[3][kN] = {{1.5f, 15.25f, 3}, {1, 2, 3}, {1, 4, 9}};
  expect_gradients(2, losses, 3, expected);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(the_sender_gets_the_sum_of_the_receivers_gradients),
      cmocka_unit_test(a_receiver_whose_loss_ignores_the_value_brings_zeros),
      cmocka_unit_test(two_receivers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
