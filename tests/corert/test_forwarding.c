// Buffer forwarding through Execute: a kernel may reuse an input's buffer
// for its output when — and only when — nothing else can see the input.

#include "corert_test_ops.h"

static corert_test_env_t* env_of(void** state) {
  return *state;
}

static loom_tensor_handle_t* negate(corert_test_env_t* env,
                                    loom_tensor_handle_t* x) {
  loom_tensor_handle_t* args[1] = {x};
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestNegate", env->cpu,
                                      CORERT_TEST_HERE(), args, 1, NULL, &y, 1,
                                      NULL));
  assert_null(args[0]);
  return y;
}

// The data pointer of an available handle's tensor.
static const void* data_of(loom_tensor_handle_t* handle) {
  loom_tensor_t* tensor = corert_test_resolve(handle);
  const void* data = loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return data;
}

static const float kValues[6] = {1.5f, -2, 3, -4.25f, 0, 8};

static void negated(float* out) {
  for (int i = 0; i < 6; ++i) out[i] = -kValues[i];
}

static void forwarding_reuses_an_input_nobody_else_holds(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  const void* input_data = data_of(x);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* y = negate(env, x);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(corert_test_last_forwarded(), 0);
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers + 1);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs);
  assert_ptr_equal(data_of(y), input_data);
  float expected[6];
  negated(expected);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 6);
  loom_tensor_handle_release(y);
}

static void forwarding_skips_an_input_whose_handle_the_caller_kept(
    void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  const void* input_data = data_of(x);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* y = negate(env, corert_test_ref(x));
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(corert_test_last_forwarded(), -1);
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs + 1);
  assert_ptr_not_equal(data_of(y), input_data);
  float expected[6];
  negated(expected);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 6);
  // The caller's input is untouched.
  corert_test_expect_values(x, LOOM_DTYPE_FLOAT, kValues, 6);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

static void forwarding_skips_an_input_whose_tensor_the_caller_kept(
    void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  loom_tensor_t* kept = corert_test_resolve(x);  // a tensor reference
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* y = negate(env, x);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_ptr_not_equal(data_of(y), loom_tensor_data(kept));
  assert_memory_equal(loom_tensor_data(kept), kValues, sizeof(kValues));
  loom_tensor_release(kept);
  loom_tensor_handle_release(y);
}

static void forwarding_reuses_a_pending_input_nobody_else_holds(void** state) {
  corert_test_env_t* env = env_of(state);
  corert_test_async_hold();
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, kValues, 6)};
  loom_tensor_handle_t* pending = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAsyncIdentity",
                                      env->cpu, CORERT_TEST_HERE(), args, 1,
                                      NULL, &pending, 1, NULL));
  loom_tensor_handle_t* y = negate(env, pending);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  corert_test_async_release();
  float expected[6];
  negated(expected);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 6);
  loom_runtime_quiesce(env->runtime);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(corert_test_last_forwarded(), 0);
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers + 1);
  // Only the identity's copy allocated.
  assert_int_equal(after.allocated_outputs, before.allocated_outputs + 1);
  loom_tensor_handle_release(y);
}

static void forwarding_skips_a_pending_input_the_caller_kept(void** state) {
  corert_test_env_t* env = env_of(state);
  corert_test_async_hold();
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, kValues, 6)};
  loom_tensor_handle_t* pending = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAsyncIdentity",
                                      env->cpu, CORERT_TEST_HERE(), args, 1,
                                      NULL, &pending, 1, NULL));
  loom_tensor_handle_t* y = negate(env, corert_test_ref(pending));
  loom_kernel_statistics_t before = loom_kernel_statistics();
  corert_test_async_release();
  float expected[6];
  negated(expected);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 6);
  loom_runtime_quiesce(env->runtime);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(corert_test_last_forwarded(), -1);
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_ptr_not_equal(data_of(y), data_of(pending));
  corert_test_expect_values(pending, LOOM_DTYPE_FLOAT, kValues, 6);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(pending);
}

static void forwarding_chain_reuses_one_buffer(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  const void* input_data = data_of(x);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* y = x;
  for (int i = 0; i < 4; ++i) y = negate(env, y);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers + 4);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs);
  assert_ptr_equal(data_of(y), input_data);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, kValues, 6);
  loom_tensor_handle_release(y);
}

//===----------------------------------------------------------------------===//
// TensorFlow binary ops on few elements (their kernels' direct entry)
//===----------------------------------------------------------------------===//

static const float kOther[6] = {0.25f, 4, -1, 2, 7.5f, -3};

static loom_tensor_handle_t* binary(corert_test_env_t* env, const char* op,
                                    loom_tensor_handle_t* x,
                                    loom_tensor_handle_t* y) {
  loom_tensor_handle_t* args[2] = {x, y};
  loom_tensor_handle_t* z = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, op, env->cpu,
                                      CORERT_TEST_HERE(), args, 2, NULL, &z, 1,
                                      NULL));
  return z;
}

static void expect_shape(loom_tensor_handle_t* handle, const int64_t* dims,
                         int rank) {
  loom_tensor_t* tensor = corert_test_resolve(handle);
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  assert_int_equal(shape->rank, rank);
  for (int i = 0; i < rank; ++i) assert_int_equal(shape->dims[i], dims[i]);
  loom_tensor_release(tensor);
}

static void tf_binary_op_reuses_an_input_nobody_else_holds(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  loom_tensor_handle_t* y = corert_test_float_vector(env, kOther, 6);
  const void* input_data = data_of(x);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* z = binary(env, "AddV2", x, y);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers + 1);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs);
  assert_ptr_equal(data_of(z), input_data);
  // NumPy: np.float32 arrays, a + b.
  static const float kSum[6] = {1.75f, 2, 2, -2.25f, 7.5f, 5};
  corert_test_expect_values(z, LOOM_DTYPE_FLOAT, kSum, 6);
  loom_tensor_handle_release(z);
}

static void tf_binary_op_allocates_when_the_caller_kept_its_inputs(
    void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  loom_tensor_handle_t* y = corert_test_float_vector(env, kOther, 6);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* z =
      binary(env, "AddV2", corert_test_ref(x), corert_test_ref(y));
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs + 1);
  assert_ptr_not_equal(data_of(z), data_of(x));
  assert_ptr_not_equal(data_of(z), data_of(y));
  static const float kSum[6] = {1.75f, 2, 2, -2.25f, 7.5f, 5};
  corert_test_expect_values(z, LOOM_DTYPE_FLOAT, kSum, 6);
  corert_test_expect_values(x, LOOM_DTYPE_FLOAT, kValues, 6);
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, kOther, 6);
  loom_tensor_handle_release(z);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

// [1, 6] + [6] is [1, 6]: the [6] operand has the result's element count
// but not its shape, so its buffer is not the output's even when it could
// be reused.
static void tf_binary_op_keeps_an_operand_of_another_shape(void** state) {
  corert_test_env_t* env = env_of(state);
  static const int64_t kRow[2] = {1, 6};
  loom_tensor_handle_t* x =
      corert_test_handle(env, LOOM_DTYPE_FLOAT, kRow, 2, kValues);
  loom_tensor_handle_t* y = corert_test_float_vector(env, kOther, 6);
  const void* y_data = data_of(y);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_handle_t* z = binary(env, "AddV2", corert_test_ref(x), y);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs + 1);
  assert_ptr_not_equal(data_of(z), y_data);
  expect_shape(z, kRow, 2);
  // NumPy: a.reshape(1, 6) + b.
  static const float kSum[6] = {1.75f, 2, 2, -2.25f, 7.5f, 5};
  loom_tensor_t* tensor = corert_test_resolve(z);
  const float* data = loom_tensor_data(tensor);
  for (int i = 0; i < 6; ++i) assert_true(data[i] == kSum[i]);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(z);
  loom_tensor_handle_release(x);
}

static void tf_binary_op_broadcasts_a_single_element(void** state) {
  corert_test_env_t* env = env_of(state);
  float factor = 2.5f;
  float ten = 10;
  loom_tensor_handle_t* x = corert_test_float_vector(env, kValues, 6);
  loom_tensor_handle_t* product =
      binary(env, "Mul", corert_test_ref(x),
             corert_test_handle(env, LOOM_DTYPE_FLOAT, NULL, 0, &factor));
  loom_tensor_handle_t* difference = binary(
      env, "Sub", corert_test_handle(env, LOOM_DTYPE_FLOAT, NULL, 0, &ten), x);
  // NumPy: a * np.float32(2.5), np.float32(10) - a.
  static const float kProduct[6] = {3.75f, -5, 7.5f, -10.625f, 0, 20};
  static const float kDifference[6] = {8.5f, 12, 7, 14.25f, 10, 2};
  corert_test_expect_values(product, LOOM_DTYPE_FLOAT, kProduct, 6);
  corert_test_expect_values(difference, LOOM_DTYPE_FLOAT, kDifference, 6);
  loom_tensor_handle_release(difference);
  loom_tensor_handle_release(product);
}

#define TEST(name) \
  cmocka_unit_test_setup_teardown(name, corert_test_setup, corert_test_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(forwarding_reuses_an_input_nobody_else_holds),
      TEST(forwarding_skips_an_input_whose_handle_the_caller_kept),
      TEST(forwarding_skips_an_input_whose_tensor_the_caller_kept),
      TEST(forwarding_reuses_a_pending_input_nobody_else_holds),
      TEST(forwarding_skips_a_pending_input_the_caller_kept),
      TEST(forwarding_chain_reuses_one_buffer),
      TEST(tf_binary_op_reuses_an_input_nobody_else_holds),
      TEST(tf_binary_op_allocates_when_the_caller_kept_its_inputs),
      TEST(tf_binary_op_keeps_an_operand_of_another_shape),
      TEST(tf_binary_op_broadcasts_a_single_element),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
