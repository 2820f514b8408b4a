// loom_tape_gradient_with_options: the gradient_ready callback reports each
// source once its gradient is final, last layer first, with the very handle
// out_gradients gets; the gradients equal loom_tape_gradient's bit for bit;
// an error from the callback stops the computation.

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "autodiff_test_util.h"
#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

enum { kSources = 5, kMaxValues = 64 };

// A two-layer MLP's parameters, an input, and a tensor the loss never reads.
typedef struct net_t {
  handle_t *x, *w1, *b1, *w2, *b2, *unused;
} net_t;

static handle_t* filled(const int64_t* dims, int rank, double scale,
                        double offset) {
  double values[kMaxValues];
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  for (int64_t i = 0; i < n; ++i) {
    values[i] = scale * sin(0.7 * (double)i + offset);
  }
  return make(LOOM_DTYPE_FLOAT, dims, rank, values);
}

static void net_create(net_t* n) {
  static const int64_t kX[] = {3, 4}, kW1[] = {4, 5}, kB1[] = {5},
                       kW2[] = {5, 2}, kB2[] = {2};
  n->x = filled(kX, 2, 1.0, 0.1);
  n->w1 = filled(kW1, 2, 0.5, 0.2);
  n->b1 = filled(kB1, 1, 0.1, 0.3);
  n->w2 = filled(kW2, 2, 0.5, 0.4);
  n->b2 = filled(kB2, 1, 0.1, 0.5);
  n->unused = filled(kB2, 1, 1.0, 0.6);
}

static void net_release(net_t* n) {
  handle_t* all[] = {n->x, n->w1, n->b1, n->w2, n->b2, n->unused};
  loom__grad_release_all(all, 6);
}

// The sum of a matrix's elements.
static handle_t* sum_all(handle_t* x) {
  double axes[2] = {0, 1};
  int64_t dims[1] = {2};
  handle_t* axes_handle = make(LOOM_DTYPE_INT32, dims, 1, axes);
  handle_t* y = bin("Sum", x, axes_handle);
  loom_tensor_handle_release(axes_handle);
  return y;
}

// Records sum((relu(x w1 + b1) w2 + b2)^2) + sum(w1 * w1) (w1 is read twice:
// its gradient sums two contributions) on a new non-persistent tape and
// returns the loss; the sources are w1, b1, w2, b2, unused.
static handle_t* record(const net_t* n, loom_op_handler_t** out_tape) {
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  handle_t* sources[kSources] = {n->w1, n->b1, n->w2, n->b2, n->unused};
  for (int i = 0; i < kSources; ++i) {
    LOOM_ASSERT_OK(loom_tape_watch(tape, sources[i]));
  }
  handle_t* a = bin("MatMul", n->x, n->w1);
  handle_t* z = bin("AddV2", a, n->b1);
  handle_t* h = op1("Relu", &z, 1, LOOM_GRAD_NO_ATTRS);
  handle_t* o = bin("MatMul", h, n->w2);
  handle_t* y = bin("AddV2", o, n->b2);
  handle_t* sq = bin("Mul", y, y);
  handle_t* data = sum_all(sq);
  handle_t* w1sq = bin("Mul", n->w1, n->w1);
  handle_t* decay = sum_all(w1sq);
  handle_t* loss = bin("AddV2", data, decay);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* temps[] = {a, z, h, o, y, sq, data, w1sq, decay};
  loom__grad_release_all(temps, 9);
  *out_tape = tape;
  return loss;
}

typedef struct calls_t {
  int32_t count;
  int32_t order[kSources];
  handle_t* seen[kSources];  // the handles reported (borrowed)
  int32_t fail_at;           // the source whose report fails; -1: none
} calls_t;

static loom_status_t on_ready(void* user_data, int32_t source_index,
                              loom_tensor_handle_t* gradient) {
  calls_t* calls = user_data;
  if (source_index == calls->fail_at) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "the bucket queue is full");
  }
  assert_true(calls->count < kSources);
  calls->order[calls->count++] = source_index;
  calls->seen[source_index] = gradient;
  return loom_ok_status();
}

static void gradients(const net_t* n, calls_t* calls,
                      loom_unconnected_gradients_t unconnected,
                      handle_t** out) {
  loom_op_handler_t* tape = NULL;
  handle_t* loss = record(n, &tape);
  handle_t* sources[kSources] = {n->w1, n->b1, n->w2, n->b2, n->unused};
  if (calls) {
    loom_tape_gradient_options_t options;
    loom_tape_gradient_options_initialize(&options);
    options.gradient_ready = on_ready;
    options.user_data = calls;
    LOOM_ASSERT_OK(loom_tape_gradient_with_options(
        tape, &loss, 1, sources, kSources, NULL, unconnected, &options, out));
  } else {
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, kSources, NULL,
                                      unconnected, out));
  }
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
}

static void sources_are_reported_last_layer_first(void** state) {
  (void)state;
  net_t n;
  net_create(&n);
  calls_t calls = {.fail_at = -1};
  handle_t* grads[kSources];
  gradients(&n, &calls, LOOM_UNCONNECTED_NONE, grads);
  // b2, w2, b1, then w1 (read again by the decay term, recorded last: its
  // gradient is final only once the first MatMul has run), then the
  // source the loss does not reach, after the backward pass.
  static const int32_t kExpected[kSources] = {3, 2, 1, 0, 4};
  assert_int_equal(calls.count, kSources);
  for (int i = 0; i < kSources; ++i) {
    assert_int_equal(calls.order[i], kExpected[i]);
  }
  for (int i = 0; i < kSources; ++i) assert_ptr_equal(calls.seen[i], grads[i]);
  assert_null(grads[4]);
  loom__grad_release_all(grads, kSources);
  net_release(&n);
}

static void reported_gradients_equal_the_plain_call(void** state) {
  (void)state;
  net_t n;
  net_create(&n);
  calls_t calls = {.fail_at = -1};
  handle_t* with_callback[kSources];
  handle_t* plain[kSources];
  gradients(&n, &calls, LOOM_UNCONNECTED_ZERO, with_callback);
  gradients(&n, NULL, LOOM_UNCONNECTED_ZERO, plain);
  assert_int_equal(calls.count, kSources);
  for (int s = 0; s < kSources; ++s) {
    assert_ptr_equal(calls.seen[s], with_callback[s]);
    double a[kMaxValues], b[kMaxValues];
    int64_t count = read_values(with_callback[s], a, kMaxValues);
    assert_int_equal(read_values(plain[s], b, kMaxValues), count);
    assert_memory_equal(a, b, sizeof(double) * (size_t)count);
  }
  // The unconnected source gets zeros shaped like it, reported too.
  double zeros[2];
  assert_int_equal(read_values(with_callback[4], zeros, 2), 2);
  assert_true(zeros[0] == 0.0 && zeros[1] == 0.0);
  loom__grad_release_all(with_callback, kSources);
  loom__grad_release_all(plain, kSources);
  net_release(&n);
}

static void callback_error_stops_the_gradient(void** state) {
  (void)state;
  net_t n;
  net_create(&n);
  loom_op_handler_t* tape = NULL;
  handle_t* loss = record(&n, &tape);
  handle_t* sources[kSources] = {n.w1, n.b1, n.w2, n.b2, n.unused};
  calls_t calls = {.fail_at = 2};
  loom_tape_gradient_options_t options;
  loom_tape_gradient_options_initialize(&options);
  options.gradient_ready = on_ready;
  options.user_data = &calls;
  handle_t* grads[kSources];
  LOOM_ASSERT_STATUS(
      loom_tape_gradient_with_options(tape, &loss, 1, sources, kSources, NULL,
                                      LOOM_UNCONNECTED_NONE, &options, grads),
      LOOM_STATUS_RESOURCE_EXHAUSTED,
      "loom_tape_gradient: gradient_ready for source 2: the bucket queue is "
      "full");
  // b2 was reported before w2 failed; nothing after.
  assert_int_equal(calls.count, 1);
  assert_int_equal(calls.order[0], 3);
  for (int s = 0; s < kSources; ++s) assert_null(grads[s]);
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
  net_release(&n);
}

static void options_are_checked(void** state) {
  (void)state;
  net_t n;
  net_create(&n);
  loom_op_handler_t* tape = NULL;
  handle_t* loss = record(&n, &tape);
  loom_tape_gradient_options_t options;
  loom_tape_gradient_options_initialize(&options);
  assert_int_equal(options.struct_size, sizeof(options));
  assert_null(options.gradient_ready);
  options.struct_size = sizeof(size_t);
  handle_t* grad = NULL;
  LOOM_ASSERT_STATUS(
      loom_tape_gradient_with_options(tape, &loss, 1, &n.w1, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &options, &grad),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tape_gradient: options->struct_size 8 is too small");
  // No callback, or no options: the plain computation.
  options.struct_size = sizeof(options);
  LOOM_ASSERT_OK(loom_tape_gradient_with_options(
      tape, &loss, 1, &n.w1, 1, NULL, LOOM_UNCONNECTED_NONE, &options, &grad));
  assert_non_null(grad);
  loom_tensor_handle_release(grad);
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
  net_release(&n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sources_are_reported_last_layer_first),
      cmocka_unit_test(reported_gradients_equal_the_plain_call),
      cmocka_unit_test(callback_error_stops_the_gradient),
      cmocka_unit_test(options_are_checked),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
