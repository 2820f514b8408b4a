// CollectiveReduceV2 run eagerly by threads of one process (the in-process
// collective backend, src/collective): sums and means between three
// threads, keys reused round after round, participants that disagree on
// shapes, a participant left alone timing out, and bad arguments.
// Reference values come from NumPy (the expressions are given beside
// them). Between the components of a parallel value: test_parallel.

#include <pthread.h>
#include <string.h>

#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

static loom_context_t* g_ctx;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_create(NULL, &g_ctx));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_ctx);
  return 0;
}

static handle_t* make(loom_dtype_t dtype, const int64_t* dims, int32_t rank,
                      const double* values) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  for (int64_t i = 0; i < loom_tensor_num_elements(tensor); ++i) {
    if (dtype == LOOM_DTYPE_FLOAT) {
      ((float*)loom_tensor_data(tensor))[i] = (float)values[i];
    } else if (dtype == LOOM_DTYPE_INT32) {
      ((int32_t*)loom_tensor_data(tensor))[i] = (int32_t)values[i];
    } else {
      ((double*)loom_tensor_data(tensor))[i] = values[i];
    }
  }
  handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static void expect_values(handle_t* handle, const double* expected, int64_t n) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_ctx, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), n);
  for (int64_t i = 0; i < n; ++i) {
    double got = ((const double*)loom_tensor_data(tensor))[i];
    if (got < expected[i] - 1e-12 || got > expected[i] + 1e-12) {
      fail_msg("element %lld: got %.17g, expected %.17g", (long long)i, got,
               expected[i]);
    }
  }
  loom_tensor_release(tensor);
}

typedef struct thread_case_t {
  int64_t size;  // elements of the input
  double values[3];
  const char* final_op;
  int32_t instance_key;
  handle_t* result;
  loom_status_t status;
} thread_case_t;

static void* collective_thread(void* opaque) {
  thread_case_t* c = opaque;
  handle_t* x = make(LOOM_DTYPE_DOUBLE, &c->size, 1, c->values);
  c->status = loom_test_collective_reduce(g_ctx, x, 3, 7, c->instance_key,
                                          "Add", c->final_op, 10, &c->result);
  loom_tensor_handle_release(x);
  return NULL;
}

static void run_threads(thread_case_t* cases) {
  pthread_t threads[3];
  for (int t = 0; t < 3; ++t) {
    assert_int_equal(
        pthread_create(&threads[t], NULL, collective_thread, &cases[t]), 0);
  }
  for (int t = 0; t < 3; ++t) pthread_join(threads[t], NULL);
}

// Three threads running the op with the same keys meet; the keys serve
// again for the next round.
static void reduce_between_threads(void** state) {
  (void)state;
  for (int round = 0; round < 4; ++round) {
    const char* final_op = round % 2 ? "Div" : "Id";
    thread_case_t cases[3] = {{2, {1.5, -2}, final_op, 1, NULL, NULL},
                              {2, {3, 4}, final_op, 1, NULL, NULL},
                              {2, {-0.5, 10}, final_op, 1, NULL, NULL}};
    run_threads(cases);
    // numpy: a = [[1.5, -2], [3, 4], [-0.5, 10]]; a.sum(0), a.mean(0)
    const double sum[] = {4, 12}, mean[] = {1.3333333333333333, 4};
    for (int t = 0; t < 3; ++t) {
      LOOM_ASSERT_OK(cases[t].status);
      expect_values(cases[t].result, round % 2 ? mean : sum, 2);
      loom_tensor_handle_release(cases[t].result);
    }
  }
}

// One thread brings 3 elements, the others 2: all three fail, naming the
// op and the keys.
static void mismatched_shapes_fail_every_participant(void** state) {
  (void)state;
  thread_case_t cases[3] = {{2, {1, 2}, "Id", 2, NULL, NULL},
                            {2, {3, 4}, "Id", 2, NULL, NULL},
                            {3, {5, 6, 7}, "Id", 2, NULL, NULL}};
  run_threads(cases);
  for (int t = 0; t < 3; ++t) {
    LOOM_ASSERT_STATUS(cases[t].status, LOOM_STATUS_INVALID_ARGUMENT,
                       "CollectiveReduceV2 (group_key 7, instance_key 2): a "
                       "participant's input is double");
    loom_tensor_handle_release(cases[t].result);
  }
}

static void lone_participant_times_out(void** state) {
  (void)state;
  const int64_t dims[] = {3};
  const double values[] = {1, 2, 3};
  handle_t* x = make(LOOM_DTYPE_DOUBLE, dims, 1, values);
  handle_t* y = NULL;
  LOOM_ASSERT_STATUS(
      loom_test_collective_reduce(g_ctx, x, 2, 5, 11, "Add", "Id", 0.1f, &y),
      LOOM_STATUS_DEADLINE_EXCEEDED,
      "CollectiveReduceV2 (group_key 5, instance_key 11): "
      "timed out after 0.1 seconds with 1 of 2 participants "
      "arrived");
  loom_tensor_handle_release(y);
  // A group of one is the identity (Div by 1).
  LOOM_ASSERT_OK(
      loom_test_collective_reduce(g_ctx, x, 1, 5, 12, "Max", "Div", 0, &y));
  expect_values(y, values, 3);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

static void bad_arguments_fail(void** state) {
  (void)state;
  const int64_t dims[] = {1};
  const double values[] = {1};
  handle_t* x = make(LOOM_DTYPE_DOUBLE, dims, 1, values);
  handle_t* y = NULL;
  LOOM_ASSERT_STATUS(
      loom_test_collective_reduce(g_ctx, x, 0, 5, 12, "Add", "Id", 0.1f, &y),
      LOOM_STATUS_INVALID_ARGUMENT,
      "CollectiveReduceV2 (group_key 5, instance_key 12): "
      "group_size must be at least 1, got 0");
  loom_tensor_handle_release(y);
  LOOM_ASSERT_STATUS(
      loom_test_collective_reduce(g_ctx, x, 1, 5, 12, "Sum", "Id", 0.1f, &y),
      LOOM_STATUS_INVALID_ARGUMENT, "merge_op");
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

static void* gather_thread(void* opaque) {
  thread_case_t* c = opaque;
  handle_t* x = make(LOOM_DTYPE_DOUBLE, &c->size, 1, c->values);
  handle_t* inputs[] = {x, loom_test_int32_scalar(g_ctx, 3),
                        loom_test_int32_scalar(g_ctx, 7),
                        loom_test_int32_scalar(g_ctx, c->instance_key)};
  loom_eager_op_t* op = NULL;
  c->status = loom_eager_op_create(g_ctx, "CollectiveGatherV2", &op);
  for (int i = 0; i < 4 && !c->status; ++i) {
    c->status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!c->status) {
    c->status =
        loom_op_attrs_set_f32(loom_eager_op_attrs(op), "timeout_seconds", 10);
  }
  int32_t count = 0;
  if (!c->status) c->status = loom_eager_op_execute(op, &c->result, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 0; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return NULL;
}

// The in-process backend orders a gather's participants by their devices:
// threads on one device cannot be ordered, and all of them fail.
static void gather_on_one_device_fails_every_participant(void** state) {
  (void)state;
  thread_case_t cases[3] = {{1, {1}, "Id", 5, NULL, NULL},
                            {1, {2}, "Id", 5, NULL, NULL},
                            {1, {3}, "Id", 5, NULL, NULL}};
  pthread_t threads[3];
  for (int t = 0; t < 3; ++t) {
    assert_int_equal(
        pthread_create(&threads[t], NULL, gather_thread, &cases[t]), 0);
  }
  for (int t = 0; t < 3; ++t) pthread_join(threads[t], NULL);
  for (int t = 0; t < 3; ++t) {
    assert_null(cases[t].result);
    LOOM_ASSERT_STATUS(
        cases[t].status, LOOM_STATUS_INVALID_ARGUMENT,
        "CollectiveGatherV2 (group_key 7, instance_key 5): two participants "
        "of a gather run on device "
        "'/job:localhost/replica:0/task:0/device:CPU:0': the in-process "
        "backend orders them by their devices, so each must have its own");
  }
}

// A gathered dim 0 past int64 is an error naming the sizes, found before
// any participant is waited for.
static void a_gather_too_large_fails(void** state) {
  (void)state;
  const int64_t dims[] = {INT64_C(1) << 62, 0};
  handle_t* x = make(LOOM_DTYPE_DOUBLE, dims, 2, NULL);
  handle_t* inputs[] = {x, loom_test_int32_scalar(g_ctx, 3),
                        loom_test_int32_scalar(g_ctx, 7),
                        loom_test_int32_scalar(g_ctx, 9)};
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, "CollectiveGatherV2", &op));
  for (int i = 0; i < 4; ++i) {
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, inputs[i]));
  }
  handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &result, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "CollectiveGatherV2: output dim 0 (input dim 0 "
                     "4611686018427387904 times group_size 3)");
  assert_null(result);
  loom_eager_op_destroy(op);
  for (int i = 0; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_gather_too_large_fails),
      cmocka_unit_test(reduce_between_threads),
      cmocka_unit_test(mismatched_shapes_fail_every_participant),
      cmocka_unit_test(gather_on_one_device_fails_every_participant),
      cmocka_unit_test(lone_participant_times_out),
      cmocka_unit_test(bad_arguments_fail),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
