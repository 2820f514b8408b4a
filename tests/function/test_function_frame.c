// A planned call's frame (src/function/function_frame.c): the body run on
// plain tensors with kernels specialised for the call's input shapes. In
// the steady state its values take the buffers of dead values, so that
// only the results allocate; new input shapes specialise the body again;
// the values stay those of the op-by-op call, and the call's inputs are
// never written; a node the frame cannot run itself (a nested call) runs
// as an eager op inside it.
//
// Reference values from NumPy (float32), for f(x, y) = (x + 20 y) * y as
// twenty AddV2 and a Mul:
//   x = [1.5, -2, 0.5], y = [0.25, 4, -3]: [1.625, 312, 178.5]
//   x2 = [2, -1], y2 = [3, 0.5]:           [186, 4.5]
//   x3 = [0.5, 1, -1], y3 = [1, -0.5, 2]:  [20.5, 4.5, 78]
// (every partial sum is exact in float32).

#include <pthread.h>

#include "loom/function.h"
#include "loom/loom.h"
#include "test_support.h"

enum { kAdds = 20 };

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kF[3] = {1.625f, 312, 178.5f};
static const float kX2[2] = {2, -1};
static const float kY2[2] = {3, 0.5f};
static const float kF2[2] = {186, 4.5f};
static const float kX3[3] = {0.5f, 1, -1};
static const float kY3[3] = {1, -0.5f, 2};
static const float kF3[3] = {20.5f, 4.5f, 78};

static int setup(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  LOOM_ASSERT_OK(loom_context_create(&options, &g_context));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

static loom_tensor_handle_t* tensor_of(const float* values, int64_t count) {
  return loom_test_tensor(g_context, LOOM_DTYPE_FLOAT, values, 1, &count);
}

static void expect_values(loom_tensor_handle_t* handle, const float* expected,
                          int64_t count) {
  loom_test_expect_values(g_context, handle, expected, count);
}

// f(x, y) = (x + 20 y) * y, added to the context under `name`; returns it
// (a reference).
static loom_function_t* add_f(const char* name) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), name, &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  char previous[32] = "x";
  for (int i = 0; i < kAdds; ++i) {
    char node[32];
    snprintf(node, sizeof(node), "add%d", i);
    const char* inputs[] = {previous, "y"};
    LOOM_ASSERT_OK(loom_function_builder_add_node(b, node, "AddV2", inputs, 2,
                                                  NULL, NULL));
    snprintf(previous, sizeof(previous), "add%d:z:0", i);
  }
  const char* inputs[] = {previous, "y"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "mul", "Mul", inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "mul:z:0"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  return function;
}

static void call(const char* name, loom_tensor_handle_t* x,
                 loom_tensor_handle_t* y, const float* expected,
                 int64_t count) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* result = NULL;
  int32_t results = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &results));
  loom_eager_op_destroy(op);
  expect_values(result, expected, count);
  loom_tensor_handle_release(result);
}

static loom_function_stats_t stats_of(const loom_function_t* function) {
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  return stats;
}

static void steady_calls_allocate_only_their_results(void** state) {
  (void)state;
  loom_function_t* f = add_f("steady");
  loom_tensor_handle_t* x = tensor_of(kX, 3);
  loom_tensor_handle_t* y = tensor_of(kY, 3);
  for (int i = 0; i < 3; ++i) call("steady", x, y, kF, 3);
  loom_function_stats_t before = stats_of(f);
  assert_int_equal(before.planned_nodes, kAdds + 1);
  assert_int_equal(before.frame_calls, 2);
  loom_kernel_statistics_t kernels_before =
      loom_host_context_kernel_statistics(loom_context_host(g_context));
  enum { kCalls = 10 };
  for (int i = 0; i < kCalls; ++i) call("steady", x, y, kF, 3);
  loom_function_stats_t after = stats_of(f);
  loom_kernel_statistics_t kernels_after =
      loom_host_context_kernel_statistics(loom_context_host(g_context));
  assert_int_equal(after.frame_calls - before.frame_calls, kCalls);
  // One buffer per call, the result's; every other node's is reused.
  assert_int_equal(after.buffers_allocated - before.buffers_allocated, kCalls);
  assert_int_equal(after.buffers_reused - before.buffers_reused,
                   kCalls * kAdds);
  assert_int_equal(
      kernels_after.allocated_outputs - kernels_before.allocated_outputs,
      kCalls);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(f);
}

static void new_input_shapes_specialise_the_body_again(void** state) {
  (void)state;
  loom_function_t* f = add_f("shapes");
  loom_tensor_handle_t* x = tensor_of(kX, 3);
  loom_tensor_handle_t* y = tensor_of(kY, 3);
  loom_tensor_handle_t* x2 = tensor_of(kX2, 2);
  loom_tensor_handle_t* y2 = tensor_of(kY2, 2);
  call("shapes", x, y, kF, 3);
  call("shapes", x, y, kF, 3);
  assert_int_equal(stats_of(f).plans_built, 1);
  assert_int_equal(stats_of(f).frame_calls, 1);
  call("shapes", x2, y2, kF2, 2);
  assert_int_equal(stats_of(f).plans_built, 2);
  call("shapes", x2, y2, kF2, 2);
  assert_int_equal(stats_of(f).frame_calls, 2);
  call("shapes", x, y, kF, 3);
  assert_int_equal(stats_of(f).plans_built, 3);
  call("shapes", x, y, kF, 3);
  assert_int_equal(stats_of(f).frame_calls, 3);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x2);
  loom_tensor_handle_release(y2);
  loom_function_release(f);
}

static void frame_calls_leave_their_inputs_alone(void** state) {
  (void)state;
  loom_function_t* f = add_f("inputs");
  loom_tensor_handle_t* x = tensor_of(kX, 3);
  loom_tensor_handle_t* y = tensor_of(kY, 3);
  for (int i = 0; i < 4; ++i) call("inputs", x, y, kF, 3);
  assert_int_equal(stats_of(f).frame_calls, 3);
  expect_values(x, kX, 3);
  expect_values(y, kY, 3);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(f);
}

// The kept buffers the body's values are computed into never become a
// result: a result held across later calls keeps its values.
static void results_outlive_later_calls(void** state) {
  (void)state;
  loom_function_t* f = add_f("held");
  loom_tensor_handle_t* x = tensor_of(kX, 3);
  loom_tensor_handle_t* y = tensor_of(kY, 3);
  loom_tensor_handle_t* x3 = tensor_of(kX3, 3);
  loom_tensor_handle_t* y3 = tensor_of(kY3, 3);
  loom_tensor_handle_t* held[4] = {NULL};
  for (int i = 0; i < 4; ++i) {
    loom_eager_op_t* op = NULL;
    LOOM_ASSERT_OK(loom_eager_op_create(g_context, "held", &op));
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, i % 2 ? x3 : x));
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, i % 2 ? y3 : y));
    int32_t results = 0;
    LOOM_ASSERT_OK(loom_eager_op_execute(op, &held[i], 1, &results));
    loom_eager_op_destroy(op);
  }
  assert_int_equal(stats_of(f).frame_calls, 3);
  for (int i = 0; i < 4; ++i) expect_values(held[i], i % 2 ? kF3 : kF, 3);
  for (int i = 0; i < 4; ++i) loom_tensor_handle_release(held[i]);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x3);
  loom_tensor_handle_release(y3);
  loom_function_release(f);
}

typedef struct caller_t {
  loom_tensor_handle_t* x;
  loom_tensor_handle_t* y;
  const float* expected;
  int failures;
} caller_t;

static void* call_many(void* arg) {
  caller_t* caller = arg;
  loom_eager_op_t* op = NULL;
  if (loom_eager_op_create(g_context, "shared", &op)) return NULL;
  for (int i = 0; i < 200; ++i) {
    loom_tensor_handle_t* result = NULL;
    int32_t results = 0;
    loom_status_t status = loom_eager_op_reset(op, "shared");
    if (!status) status = loom_eager_op_add_input(op, caller->x);
    if (!status) status = loom_eager_op_add_input(op, caller->y);
    if (!status) status = loom_eager_op_execute(op, &result, 1, &results);
    loom_tensor_t* tensor = NULL;
    if (!status) status = loom_context_resolve(g_context, result, &tensor);
    if (status) {
      loom_status_free(status);
      caller->failures++;
    } else {
      const float* values = loom_tensor_data(tensor);
      for (int k = 0; k < 3; ++k) {
        caller->failures += values[k] != caller->expected[k];
      }
      loom_tensor_release(tensor);
    }
    loom_tensor_handle_release(result);
  }
  loom_eager_op_destroy(op);
  return NULL;
}

// A body with a node the frame cannot run itself (a call of another
// function) still has a frame: that node runs as an eager op on handles
// over the frame's tensors, and the nested call runs its own frame.
// outer(x, y) = f(x, y) * y; NumPy: kF * y = [0.40625, 1248, -535.5].
static void a_nested_call_runs_in_the_frame(void** state) {
  (void)state;
  loom_function_t* inner = add_f("inner");
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "outer", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* call_inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "call", "inner", call_inputs,
                                                2, NULL, NULL));
  const char* mul_inputs[] = {"call:r:0", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "mul", "Mul", mul_inputs, 2,
                                                NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "mul:z:0"));
  loom_function_t* outer = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &outer));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, outer));
  loom_tensor_handle_t* x = tensor_of(kX, 3);
  loom_tensor_handle_t* y = tensor_of(kY, 3);
  static const float kOuter[3] = {0.40625f, 1248, -535.5f};
  for (int i = 0; i < 4; ++i) call("outer", x, y, kOuter, 3);
  // The first call runs op by op (and plans); the later ones run frames,
  // the inner call's too.
  assert_int_equal(stats_of(outer).frame_calls, 3);
  assert_int_equal(stats_of(inner).frame_calls, 3);
  expect_values(x, kX, 3);
  expect_values(y, kY, 3);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "outer"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "inner"));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(outer);
  loom_function_release(inner);
}

// Two threads calling one function at once each get their own values:
// a frame runs one call at a time, the other call runs op by op.
static void concurrent_calls_keep_their_values_apart(void** state) {
  (void)state;
  loom_function_t* f = add_f("shared");
  caller_t callers[2] = {
      {.x = tensor_of(kX, 3), .y = tensor_of(kY, 3), .expected = kF},
      {.x = tensor_of(kX3, 3), .y = tensor_of(kY3, 3), .expected = kF3},
  };
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) {
    assert_int_equal(pthread_create(&threads[t], NULL, call_many, &callers[t]),
                     0);
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < 2; ++t) {
    assert_int_equal(callers[t].failures, 0);
    loom_tensor_handle_release(callers[t].x);
    loom_tensor_handle_release(callers[t].y);
  }
  assert_true(stats_of(f).frame_calls > 0);
  loom_function_release(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(steady_calls_allocate_only_their_results),
      cmocka_unit_test(new_input_shapes_specialise_the_body_again),
      cmocka_unit_test(frame_calls_leave_their_inputs_alone),
      cmocka_unit_test(results_outlive_later_calls),
      cmocka_unit_test(a_nested_call_runs_in_the_frame),
      cmocka_unit_test(concurrent_calls_keep_their_values_apart),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
