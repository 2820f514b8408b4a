// The cpu handler's native op registry, its dispatch-function helpers and
// its built-in loom.print.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corert_test_ops.h"

static corert_test_env_t* env_of(void** state) {
  return *state;
}

static loom_status_t noop_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  (void)ctx;
  return loom_ok_status();
}

static loom_status_t noop_metadata(const loom_tensor_metadata_t* inputs,
                                   int32_t num_inputs,
                                   const loom_op_attrs_t* attrs,
                                   loom_tensor_metadata_t* results,
                                   int32_t num_results) {
  (void)inputs;
  (void)num_inputs;
  (void)attrs;
  (void)results;
  (void)num_results;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Registering native ops
//===----------------------------------------------------------------------===//

static void add_op_rejects_a_handler_that_is_not_cpu(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_op(env->null, "x.op", noop_dispatch, 0),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_op: the handler is not a cpu handler");
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_op(NULL, "x.op", noop_dispatch, 0),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_op: the handler is not a cpu handler");
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_metadata_fn(env->null, "x.op", noop_metadata),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_metadata_fn: the handler is not a cpu handler");
}

static void add_op_rejects_null_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_op(env->cpu, NULL, noop_dispatch, 0),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_op: op_name is NULL");
  LOOM_ASSERT_STATUS(loom_cpu_op_handler_add_op(env->cpu, "x.op", NULL, 0),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_cpu_op_handler_add_op: dispatch is NULL");
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_metadata_fn(env->cpu, NULL, noop_metadata),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_metadata_fn: op_name is NULL");
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_metadata_fn(env->cpu, "x.op", NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_cpu_op_handler_add_metadata_fn: metadata_fn is NULL");
}

static void add_op_rejects_a_second_registration(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_op(env->cpu, "test.add", noop_dispatch, 0),
      LOOM_STATUS_ALREADY_EXISTS,
      "op 'test.add' is already registered on the cpu handler");
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_metadata_fn(env->cpu, "test.add", noop_metadata),
      LOOM_STATUS_ALREADY_EXISTS,
      "op 'test.add' already has a metadata function");
  // The built-ins are registered like any other native op.
  LOOM_ASSERT_STATUS(
      loom_cpu_op_handler_add_op(env->cpu, "loom.print", noop_dispatch, 0),
      LOOM_STATUS_ALREADY_EXISTS,
      "op 'loom.print' is already registered on the cpu handler");
}

static void metadata_fn_may_come_before_the_op(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_metadata_fn(env->cpu, "x.late", noop_metadata));
  // A metadata function alone is not an op: cpu passes it to its fallback.
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "x.late", env->cpu, &op));
  assert_ptr_equal(loom_prepared_op_handler(op), env->null);
  loom_prepared_op_release(op);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.late", noop_dispatch, 0));
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "x.late", env->cpu, &op));
  assert_ptr_equal(loom_prepared_op_handler(op), env->cpu);
  loom_prepared_op_release(op);
}

static void native_ops_are_per_handler(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_t* other = NULL;
  LOOM_ASSERT_OK(loom_cpu_op_handler_create(env->runtime, NULL, &other));
  // The other handler has the built-ins but not env->cpu's test ops.
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "loom.to_dense", other, &op));
  loom_prepared_op_release(op);
  LOOM_ASSERT_STATUS(
      loom_runtime_prepare_op(env->runtime, "test.add", other, &op),
      LOOM_STATUS_NOT_FOUND,
      "op 'test.add' is not supported by op handler 'cpu'");
  loom_op_handler_release(other);
}

//===----------------------------------------------------------------------===//
// loom_cpu_set_result
//===----------------------------------------------------------------------===//

static void set_result_rejects_null_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_allocator_t allocator = loom_host_context_allocator(env->host);
  int64_t one = 1;
  LOOM_ASSERT_STATUS(
      loom_cpu_set_result(
          NULL, corert_test_tensor(allocator, LOOM_DTYPE_FLOAT, &one, 1, NULL)),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_cpu_set_result: result is NULL");
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_async_value_create(
      allocator, &loom_async_value_type_tensor, &value));
  LOOM_ASSERT_STATUS(loom_cpu_set_result(value, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_cpu_set_result: tensor is NULL");
  loom_async_value_release(value);
}

static void set_result_rejects_a_value_already_set_or_of_another_type(
    void** state) {
  corert_test_env_t* env = env_of(state);
  loom_allocator_t allocator = loom_host_context_allocator(env->host);
  int64_t one = 1;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_async_value_create(
      allocator, &loom_async_value_type_tensor, &value));
  LOOM_ASSERT_OK(loom_cpu_set_result(
      value, corert_test_tensor(allocator, LOOM_DTYPE_FLOAT, &one, 1, NULL)));
  LOOM_ASSERT_STATUS(
      loom_cpu_set_result(value, corert_test_tensor(allocator, LOOM_DTYPE_FLOAT,
                                                    &one, 1, NULL)),
      LOOM_STATUS_FAILED_PRECONDITION,
      "loom_cpu_set_result: the result is not an unset tensor value");
  loom_async_value_release(value);
  loom_async_value_t* chain = NULL;
  LOOM_ASSERT_OK(loom_async_value_create_chain(allocator, &chain));
  LOOM_ASSERT_STATUS(
      loom_cpu_set_result(chain, corert_test_tensor(allocator, LOOM_DTYPE_FLOAT,
                                                    &one, 1, NULL)),
      LOOM_STATUS_FAILED_PRECONDITION,
      "loom_cpu_set_result: the result is not an unset tensor value");
  loom_async_value_release(chain);
}

//===----------------------------------------------------------------------===//
// Native dispatch functions
//===----------------------------------------------------------------------===//

static loom_status_t failing_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  (void)ctx;
  return loom_make_status(LOOM_STATUS_OUT_OF_RANGE, "index 9 is out of range");
}

static void native_dispatch_error_reaches_the_results(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.fails", failing_dispatch, 0));
  const float x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* results[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "x.fails", env->cpu,
                                      corert_test_location("ops.py", 8, 3),
                                      args, 1, NULL, results, 2, NULL));
  for (int i = 0; i < 2; ++i) {
    corert_test_expect_error(results[i], LOOM_STATUS_OUT_OF_RANGE,
                             "x.fails: index 9 is out of range");
  }
  corert_test_release_all(results, 2);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char where[64];
  corert_test_last_diagnostic(env, NULL, where, NULL, sizeof(where));
  assert_string_equal(where, "ops.py:8:3");
}

// A float tensor of rank 10 (its dims spilled), two elements.
static loom_tensor_t* rank_10_tensor(corert_test_env_t* env) {
  static const int64_t kDims[10] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  static const float kValues[2] = {1, 2};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, kDims, 10));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_host_context_allocator(env->host),
                               LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), kValues, sizeof(kValues));
  return tensor;
}

static const char kRank10Error[] =
    "Op 'test.add': input 0 has rank 10; the kernel of 'test.add' takes "
    "ranks up to 8";

// Native ops read dims in place: inputs above rank 8 are refused by name,
// whether Execute knows them (checked there) or they arrive later (checked
// at dispatch, before the metadata function).
static void native_ops_refuse_rank_10_at_execute_and_at_dispatch(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_tensor_t* tensor = rank_10_tensor(env);
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_create(env->cpu, tensor, &x));
  loom_tensor_release(tensor);
  loom_tensor_handle_t* args[2] = {x, corert_test_ref(x)};
  loom_tensor_handle_t* result = NULL;
  loom_status_t status =
      loom_runtime_execute(env->runtime, "test.add", env->cpu,
                           CORERT_TEST_HERE(), args, 2, NULL, &result, 1, NULL);
  if (status) {
    // The result slot holds an error handle all the same.
    loom_tensor_handle_release(result);
    LOOM_ASSERT_STATUS(status, LOOM_STATUS_INVALID_ARGUMENT, kRank10Error);
  } else {
    corert_test_expect_error_and_release(result, LOOM_STATUS_INVALID_ARGUMENT,
                                         kRank10Error);
  }
  // An input whose value, and so its rank, comes after Execute.
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_async_value_create(loom_host_context_allocator(env->host),
                                         &loom_async_value_type_tensor,
                                         &value));
  loom_tensor_handle_t* pending = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_handle_create_async(env->cpu, NULL, value, &pending));
  loom_tensor_handle_t* later[2] = {pending, corert_test_ref(pending)};
  result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "test.add", env->cpu,
                                      CORERT_TEST_HERE(), later, 2, NULL,
                                      &result, 1, NULL));
  LOOM_ASSERT_OK(loom_cpu_set_result(value, rank_10_tensor(env)));
  loom_async_value_release(value);
  corert_test_expect_error_and_release(result, LOOM_STATUS_INVALID_ARGUMENT,
                                       kRank10Error);
}

// A native asynchronous op: returns at once and sets its result later from
// the thread pool.
static void set_later(void* arg) {
  loom_async_value_t* result = arg;
  int64_t one = 1;
  loom_tensor_t* tensor = NULL;
  loom_shape_t shape;
  loom_status_ignore(loom_shape_initialize(&shape, &one, 1));
  loom_status_t status = loom_tensor_create_dense(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, &tensor);
  if (!status) {
    *(int32_t*)loom_tensor_data(tensor) = 77;
    status = loom_cpu_set_result(result, tensor);
  }
  if (status) loom_status_ignore(loom_async_value_set_error(result, status));
  loom_async_value_release(result);
}

static loom_status_t later_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  loom_async_value_retain(ctx->results[0]);
  loom_status_t status =
      loom_host_context_enqueue(ctx->host, set_later, ctx->results[0]);
  if (status) loom_async_value_release(ctx->results[0]);
  return status;
}

static void native_dispatch_may_set_its_results_later(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.later", later_dispatch, 0));
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "x.later", env->cpu,
                                      CORERT_TEST_HERE(), NULL, 0, NULL,
                                      &result, 1, NULL));
  const int32_t expected[1] = {77};
  corert_test_expect_values(result, LOOM_DTYPE_INT32, expected, 1);
  loom_tensor_handle_release(result);
}

static int64_t g_seen_forwardable = -1;

static loom_status_t forwardable_probe(const loom_cpu_dispatch_context_t* ctx) {
  g_seen_forwardable = loom_cpu_input_is_forwardable(ctx, 0) ? 1 : 0;
  // Out of range indices are never forwardable.
  if (loom_cpu_input_is_forwardable(ctx, -1) ||
      loom_cpu_input_is_forwardable(ctx, ctx->num_inputs)) {
    g_seen_forwardable = 2;
  }
  loom_tensor_retain(ctx->inputs[0]);
  return loom_cpu_set_result(ctx->results[0], ctx->inputs[0]);
}

static void native_dispatch_sees_which_inputs_it_owns(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.probe", forwardable_probe, 0));
  const float x[2] = {1, 2};
  loom_tensor_handle_t* kept = corert_test_float_vector(env, x, 2);
  for (int round = 0; round < 2; ++round) {
    // Round 0: the caller keeps a reference; round 1: it gives it up.
    loom_tensor_handle_t* args[1] = {round == 0 ? corert_test_ref(kept) : kept};
    loom_tensor_handle_t* result = NULL;
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "x.probe", env->cpu,
                                        CORERT_TEST_HERE(), args, 1, NULL,
                                        &result, 1, NULL));
    assert_int_equal(g_seen_forwardable, round);
    corert_test_expect_values(result, LOOM_DTYPE_FLOAT, x, 2);
    loom_tensor_handle_release(result);
  }
  assert_false(loom_cpu_input_is_forwardable(NULL, 0));
}

//===----------------------------------------------------------------------===//
// The short path and the general one
//===----------------------------------------------------------------------===//

// A native op with a metadata function and at most four available dense
// arguments takes Execute's short path; with six it takes the general one.
// Each case runs both ways and expects the same.
static const int32_t kArities[2] = {1, 6};

static loom_status_t first_input_metadata(const loom_tensor_metadata_t* inputs,
                                          int32_t num_inputs,
                                          const loom_op_attrs_t* attrs,
                                          loom_tensor_metadata_t* results,
                                          int32_t num_results) {
  (void)attrs;
  if (num_inputs < 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "x.first takes at least one argument");
  }
  for (int32_t i = 0; i < num_results; ++i) results[i] = inputs[0];
  return loom_ok_status();
}

static loom_status_t rejecting_metadata(const loom_tensor_metadata_t* inputs,
                                        int32_t num_inputs,
                                        const loom_op_attrs_t* attrs,
                                        loom_tensor_metadata_t* results,
                                        int32_t num_results) {
  (void)attrs;
  (void)results;
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "x.rejects: %d arguments, %d results, the first "
                          "argument of shape [%lld]",
                          (int)num_inputs, (int)num_results,
                          (long long)inputs[0].shape.dims[0]);
}

// args[0] = first; the others new vectors of one element.
static void fill_arguments(corert_test_env_t* env, loom_tensor_handle_t* first,
                           loom_tensor_handle_t** args, int32_t arity) {
  const float one[1] = {1};
  args[0] = first;
  for (int32_t i = 1; i < arity; ++i) {
    args[i] = corert_test_float_vector(env, one, 1);
  }
}

static void both_paths_see_which_inputs_they_own(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.first", forwardable_probe, 0));
  LOOM_ASSERT_OK(loom_cpu_op_handler_add_metadata_fn(env->cpu, "x.first",
                                                     first_input_metadata));
  const float x[2] = {1, 2};
  for (int a = 0; a < 2; ++a) {
    loom_tensor_handle_t* kept = corert_test_float_vector(env, x, 2);
    for (int round = 0; round < 2; ++round) {
      // Round 0: the caller keeps a reference; round 1: it gives it up.
      loom_tensor_handle_t* args[6];
      fill_arguments(env, round == 0 ? corert_test_ref(kept) : kept, args,
                     kArities[a]);
      loom_tensor_handle_t* result = NULL;
      g_seen_forwardable = -1;
      LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "x.first", env->cpu,
                                          CORERT_TEST_HERE(), args, kArities[a],
                                          NULL, &result, 1, NULL));
      assert_int_equal(g_seen_forwardable, round);
      corert_test_expect_values(result, LOOM_DTYPE_FLOAT, x, 2);
      loom_tensor_handle_release(result);
    }
  }
}

static void both_paths_report_a_dispatch_error_once(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(loom_cpu_op_handler_add_op(env->cpu, "x.first_fails",
                                            failing_dispatch, 0));
  LOOM_ASSERT_OK(loom_cpu_op_handler_add_metadata_fn(env->cpu, "x.first_fails",
                                                     first_input_metadata));
  const float x[1] = {1};
  for (int a = 0; a < 2; ++a) {
    loom_tensor_handle_t* args[6];
    fill_arguments(env, corert_test_float_vector(env, x, 1), args, kArities[a]);
    loom_tensor_handle_t* results[2] = {NULL, NULL};
    LOOM_ASSERT_OK(
        loom_runtime_execute(env->runtime, "x.first_fails", env->cpu,
                             corert_test_location("ops.py", 20 + a, 1), args,
                             kArities[a], NULL, results, 2, NULL));
    for (int i = 0; i < 2; ++i) {
      corert_test_expect_error(results[i], LOOM_STATUS_OUT_OF_RANGE,
                               "x.first_fails: index 9 is out of range");
    }
    corert_test_release_all(results, 2);
    assert_int_equal(corert_test_diagnostic_count(env), a + 1);
    char where[64];
    corert_test_last_diagnostic(env, NULL, where, NULL, sizeof(where));
    assert_string_equal(where, a == 0 ? "ops.py:20:1" : "ops.py:21:1");
  }
}

static void both_paths_return_a_metadata_error(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_OK(
      loom_cpu_op_handler_add_op(env->cpu, "x.rejects", noop_dispatch, 0));
  LOOM_ASSERT_OK(loom_cpu_op_handler_add_metadata_fn(env->cpu, "x.rejects",
                                                     rejecting_metadata));
  const float x[2] = {1, 2};
  for (int a = 0; a < 2; ++a) {
    loom_tensor_handle_t* args[6];
    fill_arguments(env, corert_test_float_vector(env, x, 2), args, kArities[a]);
    loom_tensor_handle_t* result = NULL;
    loom_status_t status = loom_runtime_execute(
        env->runtime, "x.rejects", env->cpu, CORERT_TEST_HERE(), args,
        kArities[a], NULL, &result, 1, NULL);
    char message[96];
    snprintf(message, sizeof(message),
             "x.rejects: %d arguments, 1 results, the first argument of "
             "shape [2]",
             (int)kArities[a]);
    LOOM_ASSERT_STATUS(status, LOOM_STATUS_INVALID_ARGUMENT, message);
    corert_test_expect_error(result, LOOM_STATUS_INVALID_ARGUMENT, message);
    loom_tensor_handle_release(result);
    assert_int_equal(corert_test_diagnostic_count(env), a + 1);
  }
}

//===----------------------------------------------------------------------===//
// loom.print
//===----------------------------------------------------------------------===//

// Runs `body` with stdout redirected to a temporary file; returns what was
// printed (heap string).
static char* capture_stdout(void (*body)(corert_test_env_t*),
                            corert_test_env_t* env) {
  fflush(stdout);
  FILE* capture = tmpfile();
  assert_non_null(capture);
  int saved = dup(STDOUT_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(capture), STDOUT_FILENO) >= 0);
  body(env);
  fflush(stdout);
  assert_true(dup2(saved, STDOUT_FILENO) >= 0);
  close(saved);
  long size = ftell(capture);
  if (size < 0) size = 0;
  rewind(capture);
  size = (long)lseek(fileno(capture), 0, SEEK_END);
  lseek(fileno(capture), 0, SEEK_SET);
  char* text = calloc((size_t)size + 1, 1);
  assert_int_equal(read(fileno(capture), text, (size_t)size), size);
  fclose(capture);
  return text;
}

static const int32_t kPrinted[3] = {7, 8, 9};

static void print_three(corert_test_env_t* env) {
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  for (int i = 0; i < 3; ++i) {
    loom_tensor_handle_t* args[1] = {
        corert_test_int32_vector(env, &kPrinted[i], 1)};
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "loom.print", env->cpu,
                                        CORERT_TEST_HERE(), args, 1, NULL, NULL,
                                        0, &chain));
  }
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &chain, 1));
  assert_true(loom_async_value_is_available(chain));
  loom_async_value_release(chain);
}

static void print_writes_each_tensor_in_chain_order(void** state) {
  corert_test_env_t* env = env_of(state);
  char* text = capture_stdout(print_three, env);
  char expected[1024] = "";
  for (int i = 0; i < 3; ++i) {
    loom_tensor_t* tensor =
        corert_test_tensor(loom_allocator_system(), LOOM_DTYPE_INT32,
                           (const int64_t[]){1}, 1, &kPrinted[i]);
    char line[256];
    loom_tensor_format(tensor, line, sizeof(line));
    loom_tensor_release(tensor);
    strncat(expected, line, sizeof(expected) - strlen(expected) - 1);
    strncat(expected, "\n", sizeof(expected) - strlen(expected) - 1);
  }
  assert_string_equal(text, expected);
  free(text);
}

static void print_checks_its_arity(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  const int32_t x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_int32_vector(env, x, 1)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "loom.print", env->cpu,
                                      CORERT_TEST_HERE(), args, 1, NULL,
                                      &result, 1, &chain));
  corert_test_expect_error(result, LOOM_STATUS_INVALID_ARGUMENT,
                           "loom.print takes 1 argument and has no results, "
                           "got 1 and 1");
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &chain, 1));
  assert_true(loom_async_value_is_error(chain));
  loom_tensor_handle_release(result);
  loom_async_value_release(chain);
}

static void print_needs_a_chain(void** state) {
  corert_test_env_t* env = env_of(state);
  const int32_t x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_int32_vector(env, x, 1)};
  LOOM_ASSERT_STATUS(
      loom_runtime_execute(env->runtime, "loom.print", env->cpu,
                           CORERT_TEST_HERE(), args, 1, NULL, NULL, 0, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "op 'loom.print' has side effects and needs a chain");
}

static void conversion_dispatch_checks_its_arity(void** state) {
  corert_test_env_t* env = env_of(state);
  // A pending input leaves the metadata unchecked until dispatch, where the
  // dispatch function itself sees the wrong arity.
  const char* ops[2] = {"loom.to_dense", "loom.to_scalar"};
  for (int i = 0; i < 2; ++i) {
    corert_test_async_hold();
    const int32_t n = 2;
    loom_tensor_handle_t* args[1] = {corert_test_int32_scalar(env, n)};
    loom_tensor_handle_t* pending = NULL;
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAsyncIdentity",
                                        env->cpu, CORERT_TEST_HERE(), args, 1,
                                        NULL, &pending, 1, NULL));
    args[0] = pending;
    loom_tensor_handle_t* range = NULL;
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestRange", env->cpu,
                                        CORERT_TEST_HERE(), args, 1, NULL,
                                        &range, 1, NULL));
    args[0] = range;
    loom_tensor_handle_t* results[2] = {NULL, NULL};
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, ops[i], env->cpu,
                                        CORERT_TEST_HERE(), args, 1, NULL,
                                        results, 2, NULL));
    corert_test_async_release();
    corert_test_expect_error(results[0], LOOM_STATUS_INVALID_ARGUMENT,
                             "the conversion ops take 1 argument and have 1 "
                             "result, got 1 and 2");
    corert_test_release_all(results, 2);
  }
}

// Runs `op_name` on env->cpu (consuming args) and checks its one result's
// float dtype and shape dims[0, rank).
static void expect_result_shape(corert_test_env_t* env, const char* op_name,
                                loom_tensor_handle_t** args, int32_t n,
                                const int64_t* dims, int32_t rank) {
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, op_name, env->cpu,
                                      CORERT_TEST_HERE(), args, n, NULL,
                                      &result, 1, NULL));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(result, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(metadata.shape.rank, rank);
  for (int32_t d = 0; d < rank; ++d) {
    assert_int_equal(metadata.shape.dims[d], dims[d]);
  }
  loom_tensor_handle_release(result);
}

// The shapes a shape function gave are remembered per input shapes: one
// op (a MatMul kernel specialisation) run on several shapes in turn, as
// each layer of a network runs it, gets each one's output shape, also when
// the memo already knows the others; so does an op with many inputs.
static void shapes_are_remembered_per_input_shapes(void** state) {
  corert_test_env_t* env = env_of(state);
  const int64_t shapes[3][3] = {{2, 3, 4}, {5, 3, 1}, {1, 7, 2}};
  for (int round = 0; round < 4; ++round) {
    for (int s = 0; s < 3; ++s) {
      const int64_t a_dims[2] = {shapes[s][0], shapes[s][1]};
      const int64_t b_dims[2] = {shapes[s][1], shapes[s][2]};
      loom_tensor_handle_t* args[2] = {
          corert_test_handle(env, LOOM_DTYPE_FLOAT, a_dims, 2, NULL),
          corert_test_handle(env, LOOM_DTYPE_FLOAT, b_dims, 2, NULL)};
      const int64_t product_dims[2] = {shapes[s][0], shapes[s][2]};
      expect_result_shape(env, "MatMul", args, 2, product_dims, 2);
    }
  }
  // AddN of fourteen inputs: more than the memo keeps dimensions of, at rank
  // 3 (the shape function runs every time), and at rank 1 (remembered).
  for (int rank = 1; rank <= 3; rank += 2) {
    for (int round = 0; round < 2; ++round) {
      const int64_t dims[3] = {2 + round, 1, 3};
      loom_tensor_handle_t* args[14];
      for (int i = 0; i < 14; ++i) {
        args[i] = corert_test_handle(env, LOOM_DTYPE_FLOAT, dims, rank, NULL);
      }
      expect_result_shape(env, "AddN", args, 14, dims, rank);
    }
  }
}

#define TEST(name) \
  cmocka_unit_test_setup_teardown(name, corert_test_setup, corert_test_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(add_op_rejects_a_handler_that_is_not_cpu),
      TEST(add_op_rejects_null_arguments),
      TEST(add_op_rejects_a_second_registration),
      TEST(metadata_fn_may_come_before_the_op),
      TEST(native_ops_are_per_handler),
      TEST(set_result_rejects_null_arguments),
      TEST(set_result_rejects_a_value_already_set_or_of_another_type),
      TEST(native_dispatch_error_reaches_the_results),
      TEST(native_ops_refuse_rank_10_at_execute_and_at_dispatch),
      TEST(native_dispatch_may_set_its_results_later),
      TEST(native_dispatch_sees_which_inputs_it_owns),
      TEST(both_paths_see_which_inputs_they_own),
      TEST(both_paths_report_a_dispatch_error_once),
      TEST(both_paths_return_a_metadata_error),
      TEST(print_writes_each_tensor_in_chain_order),
      TEST(print_checks_its_arity),
      TEST(print_needs_a_chain),
      TEST(conversion_dispatch_checks_its_arity),
      TEST(shapes_are_remembered_per_input_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
