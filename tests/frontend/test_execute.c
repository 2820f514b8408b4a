// Executing eager ops with inputs the caller keeps: the op passes them to
// the cpu handler without references of its own, so every execution —
// succeeding, failing, cancelled, repeated — must leave the caller's and
// the op's references exactly as they were.

#include "loom/loom.h"
#include "test_support.h"

static loom_context_t* g_context;

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

static loom_tensor_handle_t* vector(const float* values, int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) data[i] = values[i];
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static void expect_values(loom_tensor_handle_t* handle, const float* expected,
                          int64_t count) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), count);
  const float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) assert_true(data[i] == expected[i]);
  loom_tensor_release(tensor);
}

static const float kX[2] = {1.5f, -2};
static const float kY[2] = {0.25f, 4};

static loom_eager_op_t* binary_op(const char* name, loom_tensor_handle_t* x,
                                  loom_tensor_handle_t* y) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  return op;
}

static void repeated_executions_leave_the_inputs_as_they_were(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("AddV2", x, y);
  // NumPy: np.float32 arrays, a + b.
  static const float kSum[2] = {1.75f, 2};
  for (int i = 0; i < 3; ++i) {
    loom_tensor_handle_t* z = NULL;
    int32_t count = 0;
    LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
    assert_int_equal(count, 1);
    expect_values(z, kSum, 2);
    loom_tensor_handle_release(z);
    assert_ptr_equal(loom_eager_op_input(op, 0), x);
    assert_ptr_equal(loom_eager_op_input(op, 1), y);
  }
  loom_eager_op_destroy(op);
  // The op's references went with it, and the executions kept none.
  assert_true(loom_tensor_handle_is_unique(x));
  assert_true(loom_tensor_handle_is_unique(y));
  expect_values(x, kX, 2);
  expect_values(y, kY, 2);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void a_failing_execution_leaves_the_inputs_as_they_were(void** state) {
  (void)state;
  static const float kThree[3] = {1, 2, 3};
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kThree, 3);
  loom_eager_op_t* op = binary_op("AddV2", x, y);
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT, "[2] vs. [3]");
  assert_int_equal(count, 0);
  assert_ptr_equal(loom_eager_op_input(op, 0), x);
  assert_ptr_equal(loom_eager_op_input(op, 1), y);
  loom_eager_op_destroy(op);
  assert_true(loom_tensor_handle_is_unique(x));
  assert_true(loom_tensor_handle_is_unique(y));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void a_cancelled_execution_leaves_the_inputs_as_they_were(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("Mul", x, y);
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_system(), &cancellation));
  LOOM_ASSERT_OK(loom_eager_op_set_cancellation(op, cancellation));
  loom_cancellation_start(cancellation);
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_CANCELLED, "Mul");
  // Not cancelled any more: the same op runs.
  LOOM_ASSERT_OK(loom_eager_op_set_cancellation(op, NULL));
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  // NumPy: a * b.
  static const float kProduct[2] = {0.375f, -8};
  expect_values(z, kProduct, 2);
  loom_tensor_handle_release(z);
  loom_eager_op_destroy(op);
  loom_cancellation_release(cancellation);
  assert_true(loom_tensor_handle_is_unique(x));
  assert_true(loom_tensor_handle_is_unique(y));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

// An op executed again with inputs like the last ones runs from what the
// last run found (its memo); anything else takes the usual path. These
// change one thing at a time after the memo is made.

static loom_tensor_handle_t* double_vector(const double* values,
                                           int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_DOUBLE, &shape, &tensor));
  double* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) data[i] = values[i];
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* execute_one(loom_eager_op_t* op) {
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  assert_int_equal(count, 1);
  return z;
}

static void reset_with(loom_eager_op_t* op, const char* name,
                       loom_tensor_handle_t* x, loom_tensor_handle_t* y) {
  LOOM_ASSERT_OK(loom_eager_op_reset(op, name));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
}

static void run_twice(loom_eager_op_t* op, const float* expected,
                      int64_t count) {
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* z = execute_one(op);
    expect_values(z, expected, count);
    loom_tensor_handle_release(z);
  }
}

static void a_repeated_op_follows_its_inputs_shapes_and_dtypes(void** state) {
  (void)state;
  static const float kThree[3] = {1, 2, 3};
  static const float kHalf[1] = {0.5f};
  static const double kXd[2] = {1.5, -2};
  static const double kYd[2] = {0.25, 4};
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_tensor_handle_t* three = vector(kThree, 3);
  loom_tensor_handle_t* half = vector(kHalf, 1);
  loom_tensor_handle_t* xd = double_vector(kXd, 2);
  loom_tensor_handle_t* yd = double_vector(kYd, 2);
  loom_eager_op_t* op = binary_op("AddV2", x, y);
  // NumPy: np.float32 arrays, a + b.
  static const float kSum[2] = {1.75f, 2};
  static const float kBroadcast[3] = {1.5f, 2.5f, 3.5f};
  run_twice(op, kSum, 2);
  reset_with(op, "AddV2", three, half);  // other shapes, broadcast
  run_twice(op, kBroadcast, 3);
  reset_with(op, "AddV2", x, y);
  run_twice(op, kSum, 2);
  // Another dtype, and another op under the same eager op.
  reset_with(op, "Mul", xd, yd);
  loom_tensor_handle_t* z = execute_one(op);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, z, &tensor));
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_DOUBLE);
  const double* data = loom_tensor_data(tensor);
  // NumPy: np.float64 arrays, a * b.
  assert_true(data[0] == 0.375 && data[1] == -8);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(z);
  // Inputs of two dtypes now: the usual path reports the mismatch.
  reset_with(op, "Mul", x, yd);
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT, "Mul");
  loom_eager_op_destroy(op);
  loom_tensor_handle_t* all[] = {x, y, three, half, xd, yd};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    assert_true(loom_tensor_handle_is_unique(all[i]));
    loom_tensor_handle_release(all[i]);
  }
}

static void a_repeated_op_checks_attributes_again(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("AddV2", x, y);
  static const float kSum[2] = {1.75f, 2};
  run_twice(op, kSum, 2);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "T", LOOM_DTYPE_FLOAT));
  run_twice(op, kSum, 2);
  reset_with(op, "AddV2", x, y);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "T", LOOM_DTYPE_DOUBLE));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT, "AddV2");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void a_repeated_op_is_seen_by_a_scope_entered_later(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("Mul", x, y);
  static const float kProduct[2] = {0.375f, -8};
  run_twice(op, kProduct, 2);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  loom_tensor_handle_t* z = execute_one(op);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  assert_int_equal(statistics.num_ops, 1);
  loom_tensor_handle_t* gradient = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &z, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &gradient));
  expect_values(gradient, kY, 2);  // d(sum(x * y))/dx = y
  loom_tensor_handle_release(gradient);
  loom_tensor_handle_release(z);
  loom_op_handler_release(tape);
  // Out of the scope again: as before.
  run_twice(op, kProduct, 2);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void a_repeated_op_watches_a_cancellation_set_later(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("Mul", x, y);
  static const float kProduct[2] = {0.375f, -8};
  run_twice(op, kProduct, 2);
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_system(), &cancellation));
  loom_cancellation_start(cancellation);
  LOOM_ASSERT_OK(loom_eager_op_set_cancellation(op, cancellation));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_CANCELLED, "Mul");
  loom_eager_op_destroy(op);
  loom_cancellation_release(cancellation);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void a_repeated_op_still_moves_an_input_only_it_holds(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(kX, 2);
  loom_tensor_handle_t* y = vector(kY, 2);
  loom_eager_op_t* op = binary_op("AddV2", x, y);
  static const float kSum[2] = {1.75f, 2};
  run_twice(op, kSum, 2);
  loom_tensor_handle_release(x);  // the op holds the only reference now
  loom_tensor_handle_t* z = execute_one(op);
  expect_values(z, kSum, 2);
  // Moved into the execution (its buffer free for the result), not lent.
  assert_null(loom_eager_op_input(op, 0));
  assert_ptr_equal(loom_eager_op_input(op, 1), y);
  loom_tensor_handle_release(z);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repeated_executions_leave_the_inputs_as_they_were),
      cmocka_unit_test(a_failing_execution_leaves_the_inputs_as_they_were),
      cmocka_unit_test(a_cancelled_execution_leaves_the_inputs_as_they_were),
      cmocka_unit_test(a_repeated_op_follows_its_inputs_shapes_and_dtypes),
      cmocka_unit_test(a_repeated_op_checks_attributes_again),
      cmocka_unit_test(a_repeated_op_is_seen_by_a_scope_entered_later),
      cmocka_unit_test(a_repeated_op_watches_a_cancellation_set_later),
      cmocka_unit_test(a_repeated_op_still_moves_an_input_only_it_holds),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
