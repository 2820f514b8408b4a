// Ops kept by the context for reuse (loom_eager_op_acquire / recycle; those
// calling a function by name while the name designates it), the
// runtime's shared prepared ops (loom_runtime_prepare_op_shared), and their
// argument checks. Values are checked against plain float arithmetic done
// by the same kernels (AddV2 of small integers is exact).

#include <pthread.h>
#include <stdlib.h>

#include "loom/function.h"
#include "loom/loom.h"
#include "test_support.h"

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

static loom_tensor_handle_t* scalar(float value) {
  return loom_test_scalar(g_ctx, value);
}

static float value_of(loom_tensor_handle_t* handle) {
  return loom_test_scalar_value(g_ctx, handle);
}

static float add_with(loom_eager_op_t* op, float a, float b) {
  loom_tensor_handle_t* x = scalar(a);
  loom_tensor_handle_t* y = scalar(b);
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  assert_int_equal(count, 1);
  float result = value_of(z);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(z);
  return result;
}

static void a_recycled_op_comes_back_reset(void** state) {
  (void)state;
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "AddV2", &op));
  assert_true(add_with(op, 1.0f, 2.0f) == 3.0f);
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(loom_eager_op_attrs(op), "x", true));
  loom_eager_op_recycle(op);
  loom_eager_op_t* again = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "AddV2", &again));
  assert_ptr_equal(again, op);  // the same object, reset
  assert_int_equal(loom_op_attrs_count(loom_eager_op_attrs(again)), 0);
  assert_true(add_with(again, 4.0f, 5.0f) == 9.0f);
  // Another name is another op.
  loom_eager_op_t* sub = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "Sub", &sub));
  assert_ptr_not_equal(sub, again);
  assert_string_equal(loom_eager_op_name(sub), "Sub");
  assert_true(add_with(sub, 4.0f, 5.0f) == -1.0f);
  loom_eager_op_recycle(sub);
  loom_eager_op_recycle(again);
}

// More ops than the context keeps: the extra ones are destroyed (no leak,
// checked by the sanitizers and valgrind); the idle ones go with the
// context.
static void a_full_pool_destroys_what_comes_back(void** state) {
  (void)state;
  enum { kCount = 100 };
  loom_eager_op_t* ops[kCount];
  for (int i = 0; i < kCount; ++i) {
    LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "Mul", &ops[i]));
  }
  for (int i = 0; i < kCount; ++i) loom_eager_op_recycle(ops[i]);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "Mul", &op));
  assert_true(add_with(op, 3.0f, 5.0f) == 15.0f);
  loom_eager_op_recycle(op);
}

static void* acquire_and_recycle(void* arg) {
  (void)arg;
  for (int i = 0; i < 200; ++i) {
    loom_eager_op_t* op = NULL;
    LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, i % 2 ? "AddV2" : "Mul", &op));
    float expected = i % 2 ? 3.0f : 2.0f;
    assert_true(add_with(op, 1.0f, 2.0f) == expected);
    loom_eager_op_recycle(op);
  }
  return NULL;
}

static void threads_share_the_pool(void** state) {
  (void)state;
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(
        pthread_create(&threads[i], NULL, acquire_and_recycle, NULL), 0);
  }
  for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
}

static void pool_checks_its_arguments(void** state) {
  (void)state;
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_STATUS(loom_eager_op_acquire(NULL, "AddV2", &op),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_eager_op_acquire: context is NULL");
  LOOM_ASSERT_STATUS(loom_eager_op_acquire(g_ctx, NULL, &op),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_eager_op_acquire: op_name is NULL");
  LOOM_ASSERT_STATUS(loom_eager_op_acquire(g_ctx, "AddV2", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_eager_op_acquire: out_op is NULL");
  LOOM_ASSERT_STATUS(loom_eager_op_acquire(g_ctx, "NoSuchOp", &op),
                     LOOM_STATUS_NOT_FOUND, "NoSuchOp");
  assert_null(op);
  loom_eager_op_recycle(NULL);  // no crash
}

static void shared_prepared_ops_are_per_runtime(void** state) {
  (void)state;
  loom_runtime_t* runtime = loom_context_runtime(g_ctx);
  loom_op_handler_t* cpu = loom_context_cpu(g_ctx);
  loom_prepared_op_t* a = NULL;
  loom_prepared_op_t* b = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op_shared(runtime, "AddV2", cpu, &a));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_shared(runtime, "AddV2", cpu, &b));
  assert_ptr_equal(a, b);
  loom_prepared_op_release(a);
  loom_prepared_op_release(b);
  // A stateful op gets its own each time (its kernel holds its state).
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op_shared(runtime, "RandomUniform", cpu, &a));
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op_shared(runtime, "RandomUniform", cpu, &b));
  assert_ptr_not_equal(a, b);
  loom_prepared_op_release(a);
  loom_prepared_op_release(b);
  LOOM_ASSERT_STATUS(
      loom_runtime_prepare_op_shared(runtime, "AddV2", cpu, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "out_op is NULL");
  LOOM_ASSERT_STATUS(loom_runtime_prepare_op_shared(NULL, "AddV2", cpu, &a),
                     LOOM_STATUS_INVALID_ARGUMENT, "runtime is NULL");
}

// Adds "fn" to the context: x + y when `add`, else x * y.
static void add_function(bool add) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "fn", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "n", add ? "AddV2" : "Mul",
                                                inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "n:z:0"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_ctx, function));
  loom_function_release(function);
}

// An op calling a function by its name comes back from the pool while the
// name designates that function; once the function is replaced, acquire
// gives an op calling the new one, and once it is removed, the name is
// not found.
static void function_ops_come_back_while_their_function_stays(void** state) {
  (void)state;
  add_function(true);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "fn", &op));
  assert_true(add_with(op, 2.0f, 3.0f) == 5.0f);
  loom_eager_op_recycle(op);
  loom_eager_op_t* again = NULL;
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "fn", &again));
  assert_ptr_equal(again, op);
  assert_true(add_with(again, 2.0f, 3.0f) == 5.0f);
  loom_eager_op_recycle(again);
  LOOM_ASSERT_OK(loom_context_remove_function(g_ctx, "fn"));
  add_function(false);
  LOOM_ASSERT_OK(loom_eager_op_acquire(g_ctx, "fn", &op));
  assert_true(add_with(op, 2.0f, 3.0f) == 6.0f);
  loom_eager_op_recycle(op);
  LOOM_ASSERT_OK(loom_context_remove_function(g_ctx, "fn"));
  LOOM_ASSERT_STATUS(loom_eager_op_acquire(g_ctx, "fn", &op),
                     LOOM_STATUS_NOT_FOUND, "fn");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_recycled_op_comes_back_reset, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(a_full_pool_destroys_what_comes_back,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_the_pool, setup, teardown),
      cmocka_unit_test_setup_teardown(
          function_ops_come_back_while_their_function_stays, setup, teardown),
      cmocka_unit_test_setup_teardown(pool_checks_its_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(shared_prepared_ops_are_per_runtime,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
