// Ops that wait (cpu_dispatch.c): dataflow order behind asynchronous
// kernels, inline versus enqueued dispatch, error propagation, cancellation,
// chains, and metadata that is only known once the data is.

#include "corert_test_ops.h"

static corert_test_env_t* env_of(void** state) {
  return *state;
}

static loom_status_t execute_at(corert_test_env_t* env, const char* op,
                                loom_location_t location,
                                loom_tensor_handle_t** args, int32_t n,
                                loom_tensor_handle_t** results, int32_t m,
                                loom_async_value_t** chain) {
  return loom_runtime_execute(env->runtime, op, env->cpu, location, args, n,
                              NULL, results, m, chain);
}

static loom_status_t execute(corert_test_env_t* env, const char* op,
                             loom_tensor_handle_t** args, int32_t n,
                             loom_tensor_handle_t** results, int32_t m) {
  return execute_at(env, op, CORERT_TEST_HERE(), args, n, results, m, NULL);
}

// One-argument, one-result op on `arg` (consumed).
static loom_tensor_handle_t* unary(corert_test_env_t* env, const char* op,
                                   loom_tensor_handle_t* arg) {
  loom_tensor_handle_t* args[1] = {arg};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(execute(env, op, args, 1, &result, 1));
  return result;
}

// Two-argument, one-result op on `x` and `y` (consumed).
static loom_tensor_handle_t* binary(corert_test_env_t* env, const char* op,
                                    loom_tensor_handle_t* x,
                                    loom_tensor_handle_t* y) {
  loom_tensor_handle_t* args[2] = {x, y};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(execute(env, op, args, 2, &result, 1));
  return result;
}

static bool is_set(loom_tensor_handle_t* handle) {
  return loom_async_value_is_set(loom_tensor_handle_value(handle));
}

static void await_chain(corert_test_env_t* env, loom_async_value_t* chain) {
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &chain, 1));
}

//===----------------------------------------------------------------------===//
// Dataflow order
//===----------------------------------------------------------------------===//

static void ops_fed_by_an_async_result_run_after_it(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[4] = {1, 2, -3, 0.5f};
  const float y[4] = {10, 20, 30, 40};
  corert_test_async_hold();
  corert_test_counts_t before = corert_test_counts();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 4));
  loom_tensor_handle_t* b = binary(env, "TestAdd", corert_test_ref(a),
                                   corert_test_float_vector(env, y, 4));
  loom_tensor_handle_t* c = binary(env, "test.add", b, corert_test_ref(a));
  loom_tensor_handle_t* d = unary(env, "TestNegate", c);
  // Everything downstream of the parked kernel waits for it.
  corert_test_counts_t waiting = corert_test_counts();
  assert_int_equal(waiting.add, before.add);
  assert_int_equal(waiting.native_add, before.native_add);
  assert_int_equal(waiting.negate, before.negate);
  assert_false(is_set(a));
  assert_false(is_set(d));

  assert_int_equal(corert_test_async_release(), 1);
  float expected[4];
  for (int i = 0; i < 4; ++i) expected[i] = -((x[i] + y[i]) + x[i]);
  corert_test_expect_values(d, LOOM_DTYPE_FLOAT, expected, 4);
  corert_test_expect_values(a, LOOM_DTYPE_FLOAT, x, 4);
  corert_test_counts_t after = corert_test_counts();
  assert_int_equal(after.add, before.add + 1);
  assert_int_equal(after.native_add, before.native_add + 1);
  assert_int_equal(after.negate, before.negate + 1);
  assert_int_equal(after.async_finished, before.async_finished + 1);
  loom_tensor_handle_release(d);
  loom_tensor_handle_release(a);
}

static void ops_with_pending_inputs_are_enqueued(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  corert_test_async_hold();
  loom_runtime_statistics_t s0 = loom_runtime_statistics(env->runtime);
  // An asynchronous kernel always goes through a dispatch record.
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  loom_runtime_statistics_t s1 = loom_runtime_statistics(env->runtime);
  assert_int_equal(s1.ops_enqueued, s0.ops_enqueued + 1);
  assert_int_equal(s1.ops_inline, s0.ops_inline);
  // A cheap op whose input is pending.
  loom_tensor_handle_t* b =
      binary(env, "TestAdd", corert_test_ref(a), corert_test_ref(a));
  loom_runtime_statistics_t s2 = loom_runtime_statistics(env->runtime);
  assert_int_equal(s2.ops_enqueued, s1.ops_enqueued + 1);
  assert_int_equal(s2.ops_inline, s1.ops_inline);
  // A cheap op whose inputs are ready.
  loom_tensor_handle_t* c =
      binary(env, "TestAdd", corert_test_float_vector(env, x, 2),
             corert_test_float_vector(env, x, 2));
  loom_runtime_statistics_t s3 = loom_runtime_statistics(env->runtime);
  assert_int_equal(s3.ops_inline, s2.ops_inline + 1);
  assert_int_equal(s3.ops_enqueued, s2.ops_enqueued);
  assert_int_equal(s3.ops_executed, s0.ops_executed + 3);
  corert_test_async_release();
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(b, LOOM_DTYPE_FLOAT, expected, 2);
  corert_test_expect_values(c, LOOM_DTYPE_FLOAT, expected, 2);
  loom_tensor_handle_t* all[3] = {a, b, c};
  corert_test_release_all(all, 3);
}

static void expensive_op_is_enqueued_even_with_ready_inputs(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[3] = {1, -2, 3};
  loom_runtime_statistics_t before = loom_runtime_statistics(env->runtime);
  loom_tensor_handle_t* y =
      unary(env, "test.expensive_negate", corert_test_float_vector(env, x, 3));
  loom_runtime_statistics_t after = loom_runtime_statistics(env->runtime);
  assert_int_equal(after.ops_enqueued, before.ops_enqueued + 1);
  assert_int_equal(after.ops_inline, before.ops_inline);
  int64_t dims[1] = {3};
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(y, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(metadata.shape.rank, 1);
  assert_int_equal(metadata.shape.dims[0], dims[0]);
  float expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = -x[i];
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 3);
  loom_tensor_handle_release(y);
}

static void negative_inline_limit_enqueues_every_op(void** state) {
  (void)state;
  corert_test_env_options_t options;
  corert_test_env_options_initialize(&options);
  options.inline_element_limit = -1;
  corert_test_env_t env;
  LOOM_ASSERT_OK(corert_test_env_create(&env, &options));
  const int32_t x[2] = {4, 5};
  loom_tensor_handle_t* y =
      binary(&env, "TestAdd", corert_test_int32_vector(&env, x, 2),
             corert_test_int32_vector(&env, x, 2));
  loom_runtime_statistics_t stats = loom_runtime_statistics(env.runtime);
  assert_int_equal(stats.ops_inline, 0);
  assert_int_equal(stats.ops_enqueued, 1);
  int32_t expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(y, LOOM_DTYPE_INT32, expected, 2);
  loom_tensor_handle_release(y);
  corert_test_env_destroy(&env);
}

static void inputs_above_the_inline_limit_are_enqueued(void** state) {
  (void)state;
  corert_test_env_options_t options;
  corert_test_env_options_initialize(&options);
  options.inline_element_limit = 4;
  corert_test_env_t env;
  LOOM_ASSERT_OK(corert_test_env_create(&env, &options));
  float small[2], large[3];
  for (int i = 0; i < 2; ++i) small[i] = (float)i;
  for (int i = 0; i < 3; ++i) large[i] = (float)(i * 3);
  // 2 + 2 elements: at the limit, inline.
  loom_tensor_handle_t* a =
      binary(&env, "TestAdd", corert_test_float_vector(&env, small, 2),
             corert_test_float_vector(&env, small, 2));
  loom_runtime_statistics_t s1 = loom_runtime_statistics(env.runtime);
  assert_int_equal(s1.ops_inline, 1);
  // 3 + 3 elements: above it, enqueued.
  loom_tensor_handle_t* b =
      binary(&env, "TestAdd", corert_test_float_vector(&env, large, 3),
             corert_test_float_vector(&env, large, 3));
  loom_runtime_statistics_t s2 = loom_runtime_statistics(env.runtime);
  assert_int_equal(s2.ops_inline, 1);
  assert_int_equal(s2.ops_enqueued, 1);
  float expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = large[i] + large[i];
  corert_test_expect_values(b, LOOM_DTYPE_FLOAT, expected, 3);
  for (int i = 0; i < 2; ++i) expected[i] = small[i] + small[i];
  corert_test_expect_values(a, LOOM_DTYPE_FLOAT, expected, 2);
  loom_tensor_handle_release(a);
  loom_tensor_handle_release(b);
  corert_test_env_destroy(&env);
}

static void quiesce_waits_for_every_pending_op(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_tensor_handle_t* results[8];
  for (int i = 0; i < 8; ++i) {
    results[i] =
        unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  }
  loom_runtime_quiesce(env->runtime);
  for (int i = 0; i < 8; ++i) assert_true(is_set(results[i]));
  corert_test_release_all(results, 8);
}

//===----------------------------------------------------------------------===//
// Error propagation
//===----------------------------------------------------------------------===//

static const char kFailMessage[] = "the kernel failed on purpose";

static void failing_kernel_makes_error_handles(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_location_t location = corert_test_location("train.py", 12, 5);
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  // Dispatch errors are not Execute's: they arrive in the results.
  LOOM_ASSERT_OK(
      execute_at(env, "TestFail", location, args, 1, &result, 1, NULL));
  corert_test_expect_error(result, LOOM_STATUS_ABORTED, kFailMessage);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char op_name[256], where[256], message[256];
  corert_test_last_diagnostic(env, op_name, where, message, sizeof(op_name));
  assert_string_equal(op_name, "TestFail");
  assert_string_equal(where, "train.py:12:5");
  corert_test_assert_contains(message, kFailMessage);
  assert_int_equal(loom_runtime_statistics(env->runtime).errors_reported, 1);
  loom_tensor_handle_release(result);
}

static void execute_propagates_error_to_dependents_only(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[3] = {1, 2, 3};
  const float y[3] = {-1, 5, 0.25f};
  loom_location_t fail_location = corert_test_location("train.py", 30, 7);
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 3));
  loom_tensor_handle_t* args[1] = {corert_test_ref(a)};
  loom_tensor_handle_t* failed = NULL;
  LOOM_ASSERT_OK(
      execute_at(env, "TestFail", fail_location, args, 1, &failed, 1, NULL));
  loom_tensor_handle_t* dependent =
      binary(env, "TestAdd", corert_test_ref(failed),
             corert_test_float_vector(env, y, 3));
  loom_tensor_handle_t* dependent2 =
      binary(env, "test.add", dependent, corert_test_float_vector(env, y, 3));
  // Independent of the failure, in the same batch.
  loom_tensor_handle_t* independent =
      binary(env, "TestAdd", a, corert_test_float_vector(env, y, 3));
  corert_test_counts_t before = corert_test_counts();

  corert_test_async_release();
  float expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = x[i] + y[i];
  corert_test_expect_values(independent, LOOM_DTYPE_FLOAT, expected, 3);
  corert_test_expect_error(failed, LOOM_STATUS_ABORTED, kFailMessage);
  corert_test_expect_error(dependent2, LOOM_STATUS_ABORTED, kFailMessage);
  loom_runtime_quiesce(env->runtime);
  // Only the independent op's kernel ran; the dependents were skipped.
  corert_test_counts_t after = corert_test_counts();
  assert_int_equal(after.add, before.add + 1);
  assert_int_equal(after.native_add, before.native_add);
  assert_int_equal(after.fail, before.fail + 1);
  // One report, at the origin.
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char op_name[256], where[256], message[256];
  corert_test_last_diagnostic(env, op_name, where, message, sizeof(op_name));
  assert_string_equal(op_name, "TestFail");
  assert_string_equal(where, "train.py:30:7");
  loom_tensor_handle_release(failed);
  loom_tensor_handle_release(dependent2);
  loom_tensor_handle_release(independent);
}

static void dependents_carry_the_same_error_message(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {1};
  loom_tensor_handle_t* failed =
      unary(env, "TestFail", corert_test_float_vector(env, x, 1));
  loom_tensor_handle_t* dependent =
      unary(env, "TestNegate", corert_test_ref(failed));
  loom_tensor_t* tensor = NULL;
  loom_status_t origin = loom_tensor_handle_resolve(failed, &tensor);
  loom_status_t copy = loom_tensor_handle_resolve(dependent, &tensor);
  assert_non_null(origin);
  assert_non_null(copy);
  assert_int_equal(loom_status_code(copy), loom_status_code(origin));
  assert_string_equal(loom_status_message(copy), loom_status_message(origin));
  loom_status_free(origin);
  loom_status_free(copy);
  loom_tensor_handle_release(failed);
  loom_tensor_handle_release(dependent);
}

static void error_input_present_at_execute_propagates(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_tensor_handle_t* failed =
      unary(env, "TestFail", corert_test_float_vector(env, x, 2));
  assert_true(loom_async_value_is_error(loom_tensor_handle_value(failed)));
  corert_test_counts_t before = corert_test_counts();
  loom_runtime_statistics_t stats = loom_runtime_statistics(env->runtime);
  loom_tensor_handle_t* dependent =
      binary(env, "TestAdd", failed, corert_test_float_vector(env, x, 2));
  // Already an error when Execute returns, without running anything.
  assert_true(loom_async_value_is_error(loom_tensor_handle_value(dependent)));
  corert_test_expect_error(dependent, LOOM_STATUS_ABORTED, kFailMessage);
  assert_int_equal(corert_test_counts().add, before.add);
  loom_runtime_statistics_t after = loom_runtime_statistics(env->runtime);
  assert_int_equal(after.ops_inline, stats.ops_inline);
  assert_int_equal(after.errors_reported, 1);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  loom_tensor_handle_release(dependent);
}

static void error_input_arriving_later_propagates(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  loom_tensor_handle_t* failed = unary(env, "TestFail", a);
  loom_tensor_handle_t* dependent =
      binary(env, "TestAdd", failed, corert_test_float_vector(env, x, 2));
  assert_false(is_set(dependent));
  assert_int_equal(corert_test_diagnostic_count(env), 0);
  corert_test_async_release();
  corert_test_expect_error(dependent, LOOM_STATUS_ABORTED, kFailMessage);
  loom_runtime_quiesce(env->runtime);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  assert_int_equal(loom_runtime_statistics(env->runtime).errors_reported, 1);
  loom_tensor_handle_release(dependent);
}

static void kernel_that_sets_no_output_fails(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {1};
  loom_tensor_handle_t* y =
      unary(env, "TestNoOutput", corert_test_float_vector(env, x, 1));
  corert_test_expect_error(y, LOOM_STATUS_INTERNAL,
                           "kernel 'TestNoOutputKernel' did not set output 0");
  loom_tensor_handle_release(y);
}

//===----------------------------------------------------------------------===//
// Cancellation
//===----------------------------------------------------------------------===//

static void cancel_fails_pending_ops_with_cancelled(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  loom_tensor_handle_t* pending =
      binary(env, "TestAdd", corert_test_ref(a), corert_test_ref(a));
  corert_test_counts_t before = corert_test_counts();
  loom_host_context_cancel(env->host, "the user pressed stop");
  corert_test_async_release();
  corert_test_expect_error(pending, LOOM_STATUS_CANCELLED,
                           "the user pressed stop");
  assert_int_equal(corert_test_counts().add, before.add);
  loom_host_context_restart(env->host);
  loom_tensor_handle_release(pending);
  loom_tensor_handle_release(a);
}

static void cancel_fails_new_ops_at_once(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_host_context_cancel(env->host, NULL);
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  corert_test_counts_t before = corert_test_counts();
  LOOM_ASSERT_STATUS(execute(env, "TestAdd", args, 2, &result, 1),
                     LOOM_STATUS_CANCELLED, "cancelled");
  assert_null(args[0]);
  assert_null(args[1]);
  corert_test_expect_error(result, LOOM_STATUS_CANCELLED, "cancelled");
  assert_int_equal(corert_test_counts().add, before.add);
  loom_tensor_handle_release(result);
  loom_host_context_restart(env->host);
}

// Executes TestAdd(x, y) (consumed) under `cancellation`.
static loom_status_t add_cancellable(corert_test_env_t* env,
                                     loom_tensor_handle_t* x,
                                     loom_tensor_handle_t* y,
                                     loom_cancellation_t* cancellation,
                                     loom_tensor_handle_t** result) {
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", env->cpu, &op));
  loom_tensor_handle_t* args[2] = {x, y};
  loom_op_invocation_t invocation = {
      .op = op,
      .location = CORERT_TEST_HERE(),
      .arguments = args,
      .num_arguments = 2,
      .results = result,
      .num_results = 1,
      .cancellation = cancellation,
  };
  loom_status_t status = loom_runtime_execute_invocation(&invocation);
  loom_prepared_op_release(op);
  return status;
}

static void a_cancellation_fails_only_the_pending_ops_it_was_given(
    void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_default(), &cancellation));
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  loom_tensor_handle_t* cancelled = NULL;
  loom_tensor_handle_t* kept = NULL;
  LOOM_ASSERT_OK(add_cancellable(env, corert_test_ref(a), corert_test_ref(a),
                                 cancellation, &cancelled));
  LOOM_ASSERT_OK(add_cancellable(env, corert_test_ref(a), corert_test_ref(a),
                                 NULL, &kept));
  corert_test_counts_t before = corert_test_counts();
  loom_cancellation_start(cancellation);
  // The op holds the cancellation until it has run.
  loom_cancellation_release(cancellation);
  corert_test_async_release();
  corert_test_expect_error(cancelled, LOOM_STATUS_CANCELLED,
                           "TestAdd: Operation was cancelled");
  float expected[2] = {2, 4};
  corert_test_expect_values(kept, LOOM_DTYPE_FLOAT, expected, 2);
  assert_int_equal(corert_test_counts().add, before.add + 1);
  loom_tensor_handle_t* all[3] = {a, cancelled, kept};
  corert_test_release_all(all, 3);
}

static void a_started_cancellation_fails_the_op_at_once(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_default(), &cancellation));
  loom_cancellation_start(cancellation);
  loom_tensor_handle_t* result = NULL;
  corert_test_counts_t before = corert_test_counts();
  LOOM_ASSERT_STATUS(add_cancellable(env, corert_test_float_vector(env, x, 2),
                                     corert_test_float_vector(env, x, 2),
                                     cancellation, &result),
                     LOOM_STATUS_CANCELLED, "TestAdd: Operation was cancelled");
  corert_test_expect_error(result, LOOM_STATUS_CANCELLED,
                           "Operation was cancelled");
  assert_int_equal(corert_test_counts().add, before.add);
  loom_tensor_handle_release(result);
  loom_cancellation_release(cancellation);
}

static void restart_resumes_normal_execution(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  loom_host_context_cancel(env->host, "pause");
  loom_host_context_restart(env->host);
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 2));
  loom_tensor_handle_t* b =
      binary(env, "TestAdd", corert_test_ref(a), corert_test_ref(a));
  corert_test_async_release();
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(b, LOOM_DTYPE_FLOAT, expected, 2);
  loom_tensor_handle_release(a);
  loom_tensor_handle_release(b);
}

//===----------------------------------------------------------------------===//
// Chains
//===----------------------------------------------------------------------===//

static void side_effecting_op_needs_a_chain(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {1};
  corert_test_log_reset();
  // No chain at all, and a chain slot holding nothing.
  loom_async_value_t* empty = NULL;
  loom_async_value_t** chains[2] = {NULL, &empty};
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
    LOOM_ASSERT_STATUS(loom_runtime_execute(env->runtime, "test.log", env->cpu,
                                            CORERT_TEST_HERE(), args, 1, NULL,
                                            NULL, 0, chains[i]),
                       LOOM_STATUS_INVALID_ARGUMENT,
                       "op 'test.log' has side effects and needs a chain");
    assert_null(args[0]);
  }
  assert_int_equal(corert_test_log_count(), 0);
  assert_int_equal(corert_test_diagnostic_count(env), 2);
}

static void log_with_chain(corert_test_env_t* env, loom_tensor_handle_t* x,
                           loom_async_value_t** chain) {
  loom_tensor_handle_t* args[1] = {x};
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "test.log", env->cpu,
                                      CORERT_TEST_HERE(), args, 1, NULL, NULL,
                                      0, chain));
}

static void side_effects_run_in_chain_order(void** state) {
  corert_test_env_t* env = env_of(state);
  const float values[3] = {11, 22, 33};
  corert_test_log_reset();
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  corert_test_async_hold();
  // The first waits for an asynchronous input; the others are ready but
  // must wait for it through the chain.
  loom_tensor_handle_t* first = unary(
      env, "TestAsyncIdentity", corert_test_float_vector(env, &values[0], 1));
  log_with_chain(env, first, &chain);
  log_with_chain(env, corert_test_float_vector(env, &values[1], 1), &chain);
  log_with_chain(env, corert_test_float_vector(env, &values[2], 1), &chain);
  assert_false(loom_async_value_is_set(chain));
  assert_int_equal(corert_test_log_count(), 0);
  corert_test_async_release();
  await_chain(env, chain);
  assert_true(loom_async_value_is_available(chain));
  assert_int_equal(corert_test_log_count(), 3);
  for (int i = 0; i < 3; ++i) {
    assert_true(corert_test_log_at(i) == (double)values[i]);
  }
  loom_async_value_release(chain);
}

static void chain_is_replaced_by_the_ops_out_chain(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {5};
  corert_test_log_reset();
  loom_async_value_t* in = loom_host_context_ready_chain(env->host);
  loom_async_value_t* chain = in;
  loom_async_value_retain(in);
  log_with_chain(env, corert_test_float_vector(env, x, 1), &chain);
  assert_ptr_not_equal(chain, in);
  await_chain(env, chain);
  assert_true(loom_async_value_is_available(chain));
  assert_int_equal(corert_test_log_count(), 1);
  loom_async_value_release(chain);
  loom_async_value_release(in);
}

static void error_chain_propagates(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {1};
  corert_test_log_reset();
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  // A side effect on a failed value fails the chain...
  loom_tensor_handle_t* failed =
      unary(env, "TestFail", corert_test_float_vector(env, x, 1));
  log_with_chain(env, failed, &chain);
  await_chain(env, chain);
  assert_true(loom_async_value_is_error(chain));
  corert_test_assert_contains(
      loom_status_message(loom_async_value_error(chain)), kFailMessage);
  // ...and every later op on the chain is skipped with that error.
  log_with_chain(env, corert_test_float_vector(env, x, 1), &chain);
  await_chain(env, chain);
  assert_true(loom_async_value_is_error(chain));
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 1),
                                   corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", env->cpu,
                                      CORERT_TEST_HERE(), args, 2, NULL,
                                      &result, 1, &chain));
  corert_test_expect_error(result, LOOM_STATUS_ABORTED, kFailMessage);
  assert_int_equal(corert_test_log_count(), 0);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  loom_tensor_handle_release(result);
  loom_async_value_release(chain);
}

static void error_chain_arriving_later_propagates(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[1] = {1};
  corert_test_log_reset();
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  corert_test_async_hold();
  loom_tensor_handle_t* a =
      unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 1));
  log_with_chain(env, unary(env, "TestFail", a), &chain);
  log_with_chain(env, corert_test_float_vector(env, x, 1), &chain);
  assert_false(loom_async_value_is_set(chain));
  corert_test_async_release();
  await_chain(env, chain);
  assert_true(loom_async_value_is_error(chain));
  corert_test_assert_contains(
      loom_status_message(loom_async_value_error(chain)), kFailMessage);
  assert_int_equal(corert_test_log_count(), 0);
  loom_runtime_quiesce(env->runtime);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  loom_async_value_release(chain);
}

static void tensorflow_op_with_a_chain_waits_for_it(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {3, 4};
  corert_test_log_reset();
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  corert_test_async_hold();
  log_with_chain(
      env, unary(env, "TestAsyncIdentity", corert_test_float_vector(env, x, 1)),
      &chain);
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", env->cpu,
                                      CORERT_TEST_HERE(), args, 2, NULL,
                                      &result, 1, &chain));
  // Its inputs are ready, but the chain is not.
  assert_false(is_set(result));
  corert_test_async_release();
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_FLOAT, expected, 2);
  await_chain(env, chain);
  assert_true(loom_async_value_is_available(chain));
  assert_int_equal(corert_test_log_count(), 1);
  loom_tensor_handle_release(result);
  loom_async_value_release(chain);
}

//===----------------------------------------------------------------------===//
// Metadata known only with the data
//===----------------------------------------------------------------------===//

static void expect_unknown_metadata(loom_tensor_handle_t* handle) {
  assert_false(loom_tensor_handle_metadata_available(handle));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_STATUS(loom_tensor_handle_metadata(handle, &metadata),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "the tensor's metadata is not known yet");
}

static void expect_vector_metadata(loom_tensor_handle_t* handle,
                                   int64_t length) {
  assert_true(loom_tensor_handle_metadata_available(handle));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(handle, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(metadata.shape.rank, 1);
  assert_int_equal(metadata.shape.dims[0], length);
}

static void op_without_shape_fn_has_metadata_only_after_resolve(void** state) {
  corert_test_env_t* env = env_of(state);
  const int32_t n = 5;
  corert_test_async_hold();
  loom_tensor_handle_t* count =
      unary(env, "TestAsyncIdentity", corert_test_int32_scalar(env, n));
  loom_tensor_handle_t* range = unary(env, "TestRange", count);
  expect_unknown_metadata(range);
  // Downstream ops cannot know theirs either.
  loom_tensor_handle_t* negated =
      unary(env, "TestNegate", corert_test_ref(range));
  loom_tensor_handle_t* sum =
      binary(env, "test.add", corert_test_ref(range), corert_test_ref(range));
  expect_unknown_metadata(negated);
  expect_unknown_metadata(sum);

  corert_test_async_release();
  float expected_range[5], expected_negated[5], expected_sum[5];
  for (int i = 0; i < n; ++i) {
    expected_range[i] = (float)i;
    expected_negated[i] = -(float)i;
    expected_sum[i] = (float)i + (float)i;
  }
  corert_test_expect_values(negated, LOOM_DTYPE_FLOAT, expected_negated, n);
  corert_test_expect_values(sum, LOOM_DTYPE_FLOAT, expected_sum, n);
  corert_test_expect_values(range, LOOM_DTYPE_FLOAT, expected_range, n);
  expect_vector_metadata(range, n);
  expect_vector_metadata(negated, n);
  expect_vector_metadata(sum, n);
  loom_tensor_handle_t* all[3] = {range, negated, sum};
  corert_test_release_all(all, 3);
}

static void op_without_shape_fn_on_ready_input_has_metadata_on_return(
    void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_handle_t* range =
      unary(env, "TestRange", corert_test_int32_scalar(env, 3));
  // It ran inline, so its value (and with it the metadata) is there.
  expect_vector_metadata(range, 3);
  float expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = (float)i;
  corert_test_expect_values(range, LOOM_DTYPE_FLOAT, expected, 3);
  loom_tensor_handle_release(range);
}

static void shape_errors_of_late_metadata_arrive_in_the_results(void** state) {
  corert_test_env_t* env = env_of(state);
  corert_test_async_hold();
  loom_tensor_handle_t* count =
      unary(env, "TestAsyncIdentity", corert_test_int32_scalar(env, 4));
  loom_tensor_handle_t* range = unary(env, "TestRange", count);
  const float other[3] = {1, 2, 3};
  // The shapes ([4] and [3]) are only known after Execute returned.
  loom_tensor_handle_t* sum =
      binary(env, "TestAdd", range, corert_test_float_vector(env, other, 3));
  corert_test_async_release();
  corert_test_expect_error(sum, LOOM_STATUS_INVALID_ARGUMENT,
                           "TestAdd requires inputs of equal shapes");
  loom_runtime_quiesce(env->runtime);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  loom_tensor_handle_release(sum);
}

// test.sum over `arity` inputs: input 0 is TestRange(n) (its metadata is
// only known once an asynchronous count arrives), the others are ready
// vectors of `length` ones.
static loom_tensor_handle_t* sum_with_late_input(corert_test_env_t* env,
                                                 int arity, int32_t n,
                                                 int64_t length) {
  corert_test_async_hold();
  loom_tensor_handle_t* count =
      unary(env, "TestAsyncIdentity", corert_test_int32_scalar(env, n));
  loom_tensor_handle_t* args[16] = {unary(env, "TestRange", count)};
  float ones[16];
  for (int i = 0; i < 16; ++i) ones[i] = 1;
  for (int i = 1; i < arity; ++i) {
    args[i] = corert_test_float_vector(env, ones, length);
  }
  loom_tensor_handle_t* sum = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "test.sum", env->cpu,
                                      CORERT_TEST_HERE(), args, arity, NULL,
                                      &sum, 1, NULL));
  expect_unknown_metadata(sum);
  corert_test_async_release();
  return sum;
}

// Arities on both sides of the runtime's inline array size.
static const int kArities[3] = {2, 12, 16};

static void late_metadata_is_checked_for_any_number_of_inputs(void** state) {
  corert_test_env_t* env = env_of(state);
  for (int a = 0; a < 3; ++a) {
    print_message("%d arguments\n", kArities[a]);
    loom_tensor_handle_t* sum = sum_with_late_input(env, kArities[a], 4, 3);
    corert_test_expect_error_and_release(
        sum, LOOM_STATUS_INVALID_ARGUMENT,
        "arguments of test.sum must have same shape");
  }
}

static void late_metadata_op_computes_with_any_number_of_inputs(void** state) {
  corert_test_env_t* env = env_of(state);
  for (int a = 0; a < 3; ++a) {
    int arity = kArities[a];
    loom_tensor_handle_t* sum = sum_with_late_input(env, arity, 5, 5);
    float expected[5];
    for (int i = 0; i < 5; ++i) {
      expected[i] = (float)i;
      for (int k = 1; k < arity; ++k) expected[i] += 1.0f;
    }
    corert_test_expect_values(sum, LOOM_DTYPE_FLOAT, expected, 5);
    expect_vector_metadata(sum, 5);
    loom_tensor_handle_release(sum);
  }
}

static void metadata_of_an_error_handle_is_its_error(void** state) {
  corert_test_env_t* env = env_of(state);
  const float x[2] = {1, 2};
  const float y[3] = {1, 2, 3};
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, y, 3)};
  loom_tensor_handle_t* result = NULL;
  loom_status_free(execute(env, "TestAdd", args, 2, &result, 1));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_STATUS(loom_tensor_handle_metadata(result, &metadata),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "TestAdd requires inputs of equal shapes");
  loom_tensor_handle_release(result);
}

#define TEST(name) \
  cmocka_unit_test_setup_teardown(name, corert_test_setup, corert_test_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(ops_fed_by_an_async_result_run_after_it),
      TEST(ops_with_pending_inputs_are_enqueued),
      TEST(expensive_op_is_enqueued_even_with_ready_inputs),
      cmocka_unit_test(negative_inline_limit_enqueues_every_op),
      cmocka_unit_test(inputs_above_the_inline_limit_are_enqueued),
      TEST(quiesce_waits_for_every_pending_op),
      TEST(failing_kernel_makes_error_handles),
      TEST(execute_propagates_error_to_dependents_only),
      TEST(dependents_carry_the_same_error_message),
      TEST(error_input_present_at_execute_propagates),
      TEST(error_input_arriving_later_propagates),
      TEST(kernel_that_sets_no_output_fails),
      TEST(cancel_fails_pending_ops_with_cancelled),
      TEST(a_cancellation_fails_only_the_pending_ops_it_was_given),
      TEST(a_started_cancellation_fails_the_op_at_once),
      TEST(cancel_fails_new_ops_at_once),
      TEST(restart_resumes_normal_execution),
      TEST(side_effecting_op_needs_a_chain),
      TEST(side_effects_run_in_chain_order),
      TEST(chain_is_replaced_by_the_ops_out_chain),
      TEST(error_chain_propagates),
      TEST(error_chain_arriving_later_propagates),
      TEST(tensorflow_op_with_a_chain_waits_for_it),
      TEST(op_without_shape_fn_has_metadata_only_after_resolve),
      TEST(op_without_shape_fn_on_ready_input_has_metadata_on_return),
      TEST(shape_errors_of_late_metadata_arrive_in_the_results),
      TEST(late_metadata_is_checked_for_any_number_of_inputs),
      TEST(late_metadata_op_computes_with_any_number_of_inputs),
      TEST(metadata_of_an_error_handle_is_its_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
