// Op handlers and prepared ops: preparing once and executing many times,
// the handler registry, fallbacks, the null handler, the logging pseudo
// handler, and a handler written against the public vtable.

#include <stdlib.h>

#include "corert_test_ops.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"

static corert_test_env_t* env_of(void** state) {
  return *state;
}

static loom_tensor_handle_t* execute_prepared_binary(loom_prepared_op_t* op,
                                                     loom_tensor_handle_t* x,
                                                     loom_tensor_handle_t* y) {
  loom_tensor_handle_t* args[2] = {x, y};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute_prepared(op, CORERT_TEST_HERE(), args, 2,
                                               NULL, &result, 1, NULL));
  return result;
}

//===----------------------------------------------------------------------===//
// Prepared ops
//===----------------------------------------------------------------------===//

static void prepared_op_runs_many_times_with_different_dtypes(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", env->cpu, &op));
  assert_string_equal(loom_prepared_op_name(op), "TestAdd");
  assert_ptr_equal(loom_prepared_op_handler(op), env->cpu);
  assert_non_null(loom_prepared_op_def(op));
  const float fx[3] = {1.5f, 2, -3};
  const int32_t ix[3] = {4, -5, 6};
  float fexpected[3];
  int32_t iexpected[3];
  for (int i = 0; i < 3; ++i) {
    fexpected[i] = fx[i] + fx[i];
    iexpected[i] = ix[i] + ix[i];
  }
  for (int round = 0; round < 3; ++round) {
    loom_tensor_handle_t* f =
        execute_prepared_binary(op, corert_test_float_vector(env, fx, 3),
                                corert_test_float_vector(env, fx, 3));
    loom_tensor_handle_t* n =
        execute_prepared_binary(op, corert_test_int32_vector(env, ix, 3),
                                corert_test_int32_vector(env, ix, 3));
    corert_test_expect_values(f, LOOM_DTYPE_FLOAT, fexpected, 3);
    corert_test_expect_values(n, LOOM_DTYPE_INT32, iexpected, 3);
    loom_tensor_handle_release(f);
    loom_tensor_handle_release(n);
  }
  loom_prepared_op_release(op);
}

static void prepared_op_survives_extra_references(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "test.add", env->cpu, &op));
  loom_prepared_op_retain(op);
  loom_prepared_op_release(op);
  const int32_t x[2] = {1, 2};
  loom_tensor_handle_t* result =
      execute_prepared_binary(op, corert_test_int32_vector(env, x, 2),
                              corert_test_int32_vector(env, x, 2));
  int32_t expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_INT32, expected, 2);
  loom_tensor_handle_release(result);
  loom_prepared_op_release(op);
}

// Many specialisations of one prepared op (more than it caches) stay
// correct.
static void prepared_op_handles_many_attribute_sets(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", env->cpu, &op));
  const float x[2] = {1, 2};
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  for (int i = 0; i < 20; ++i) {
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, loom_allocator_system());
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
    char name[32];
    snprintf(name, sizeof(name), "_tag%d", i);
    LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, name, i));
    loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                     corert_test_float_vector(env, x, 2)};
    loom_tensor_handle_t* result = NULL;
    LOOM_ASSERT_OK(loom_runtime_execute_prepared(op, CORERT_TEST_HERE(), args,
                                                 2, &attrs, &result, 1, NULL));
    corert_test_expect_values(result, LOOM_DTYPE_FLOAT, expected, 2);
    loom_tensor_handle_release(result);
    loom_op_attrs_deinitialize(&attrs);
  }
  loom_prepared_op_release(op);
}

static void register_kernel_less_op_once(void) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("TestNoKernel");
  TF_OpDefinitionBuilderAddInput(builder, "x: float");
  TF_OpDefinitionBuilderAddOutput(builder, "y: float");
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) abort();
  TF_DeleteStatus(status);
}

static void register_kernel_less_op(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, register_kernel_less_op_once);
}

static void prepare_reports_not_found_without_a_fallback(void** state) {
  corert_test_env_t* env = env_of(state);
  register_kernel_less_op();
  loom_op_handler_t* lone_cpu = NULL;
  LOOM_ASSERT_OK(loom_cpu_op_handler_create(env->runtime, NULL, &lone_cpu));
  assert_null(loom_op_handler_fallback(lone_cpu));
  loom_prepared_op_t* op = (loom_prepared_op_t*)&op;
  LOOM_ASSERT_STATUS(
      loom_runtime_prepare_op(env->runtime, "NoSuchOp", lone_cpu, &op),
      LOOM_STATUS_NOT_FOUND,
      "op 'NoSuchOp' is not supported by op handler 'cpu' (it is not a "
      "registered op)");
  assert_null(op);
  loom_op_handler_release(lone_cpu);
}

static void execute_of_an_unknown_op_fails_its_results(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_t* lone_cpu = NULL;
  LOOM_ASSERT_OK(loom_cpu_op_handler_create(env->runtime, NULL, &lone_cpu));
  const float x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* results[2] = {NULL, NULL};
  LOOM_ASSERT_STATUS(loom_runtime_execute(env->runtime, "NoSuchOp", lone_cpu,
                                          corert_test_location("app.py", 3, 1),
                                          args, 1, NULL, results, 2, NULL),
                     LOOM_STATUS_NOT_FOUND,
                     "op 'NoSuchOp' is not supported by op handler 'cpu'");
  assert_null(args[0]);
  for (int i = 0; i < 2; ++i) {
    corert_test_expect_error(results[i], LOOM_STATUS_NOT_FOUND, "NoSuchOp");
  }
  corert_test_release_all(results, 2);
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char op_name[128], where[128];
  corert_test_last_diagnostic(env, op_name, where, NULL, sizeof(op_name));
  assert_string_equal(op_name, "NoSuchOp");
  assert_string_equal(where, "app.py:3:1");
  loom_op_handler_release(lone_cpu);
}

static void cpu_falls_back_to_null_for_ops_it_does_not_know(void** state) {
  corert_test_env_t* env = env_of(state);
  register_kernel_less_op();
  assert_ptr_equal(loom_op_handler_fallback(env->cpu), env->null);
  const char* unknown[1] = {"NoSuchOp"};
  for (int i = 0; i < 1; ++i) {
    loom_prepared_op_t* op = NULL;
    LOOM_ASSERT_OK(
        loom_runtime_prepare_op(env->runtime, unknown[i], env->cpu, &op));
    assert_ptr_equal(loom_prepared_op_handler(op), env->null);
    const float x[1] = {1};
    loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
    loom_tensor_handle_t* result = NULL;
    char expected[128];
    snprintf(expected, sizeof(expected),
             "%s was not supported by NullOpHandler", unknown[i]);
    LOOM_ASSERT_STATUS(
        loom_runtime_execute_prepared(op, CORERT_TEST_HERE(), args, 1, NULL,
                                      &result, 1, NULL),
        LOOM_STATUS_UNIMPLEMENTED, expected);
    corert_test_expect_error(result, LOOM_STATUS_UNIMPLEMENTED, expected);
    loom_tensor_handle_release(result);
    loom_prepared_op_release(op);
  }
}

// A registered op without a kernel stays on the cpu handler: its kernel is
// looked up when it executes, so one registered later is found, and until
// then the error says which kernels there are.
static void cpu_keeps_a_registered_op_without_a_kernel(void** state) {
  corert_test_env_t* env = env_of(state);
  register_kernel_less_op();
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestNoKernel", env->cpu, &op));
  assert_ptr_equal(loom_prepared_op_handler(op), env->cpu);
  const float x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* result = NULL;
  const char* expected =
      "No registered 'TestNoKernel' kernel for 'CPU' devices compatible with "
      "attributes {";
  LOOM_ASSERT_STATUS(loom_runtime_execute_prepared(op, CORERT_TEST_HERE(), args,
                                                   1, NULL, &result, 1, NULL),
                     LOOM_STATUS_NOT_FOUND, expected);
  corert_test_expect_error(result, LOOM_STATUS_NOT_FOUND,
                           "Registered: <no registered kernels>");
  loom_tensor_handle_release(result);
  loom_prepared_op_release(op);
}

static void cpu_falls_back_to_the_handler_it_was_given(void** state) {
  corert_test_env_t* env = env_of(state);
  // A fresh cpu handler knows the TensorFlow ops but not env->cpu's natives.
  loom_op_handler_t* second = NULL;
  LOOM_ASSERT_OK(loom_cpu_op_handler_create(env->runtime, env->cpu, &second));
  loom_prepared_op_t* native = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "test.add", second, &native));
  assert_ptr_equal(loom_prepared_op_handler(native), env->cpu);
  loom_prepared_op_t* tensorflow = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", second, &tensorflow));
  assert_ptr_equal(loom_prepared_op_handler(tensorflow), second);
  const int32_t x[2] = {3, 4};
  loom_tensor_handle_t* result =
      execute_prepared_binary(native, corert_test_int32_vector(env, x, 2),
                              corert_test_int32_vector(env, x, 2));
  int32_t expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_INT32, expected, 2);
  loom_tensor_handle_release(result);
  loom_prepared_op_release(native);
  loom_prepared_op_release(tensorflow);
  loom_op_handler_release(second);
}

//===----------------------------------------------------------------------===//
// The null handler
//===----------------------------------------------------------------------===//

static void null_handler_fails_every_op(void** state) {
  corert_test_env_t* env = env_of(state);
  const char* ops[3] = {"TestAdd", "test.add", "Anything"};
  for (int i = 0; i < 3; ++i) {
    const float x[1] = {1};
    loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 1),
                                     corert_test_float_vector(env, x, 1)};
    loom_tensor_handle_t* result = NULL;
    char expected[128];
    snprintf(expected, sizeof(expected),
             "%s was not supported by NullOpHandler", ops[i]);
    corert_test_counts_t before = corert_test_counts();
    LOOM_ASSERT_STATUS(loom_runtime_execute(env->runtime, ops[i], env->null,
                                            CORERT_TEST_HERE(), args, 2, NULL,
                                            &result, 1, NULL),
                       LOOM_STATUS_UNIMPLEMENTED, expected);
    assert_null(args[0]);
    assert_null(args[1]);
    corert_test_expect_error(result, LOOM_STATUS_UNIMPLEMENTED, expected);
    corert_test_counts_t after = corert_test_counts();
    assert_int_equal(after.add, before.add);
    assert_int_equal(after.native_add, before.native_add);
    loom_tensor_handle_release(result);
    assert_int_equal(corert_test_diagnostic_count(env), i + 1);
  }
}

//===----------------------------------------------------------------------===//
// The handler registry and handler queries
//===----------------------------------------------------------------------===//

static void runtime_has_cpu_and_null_handlers(void** state) {
  corert_test_env_t* env = env_of(state);
  assert_non_null(env->cpu);
  assert_non_null(env->null);
  assert_null(loom_runtime_get_op_handler(env->runtime, "gpu"));
  assert_null(loom_runtime_get_op_handler(env->runtime, NULL));
  assert_string_equal(loom_op_handler_type_name(env->cpu), "cpu");
  assert_string_equal(loom_op_handler_type_name(env->null), "null");
  assert_string_equal(loom_op_handler_device_name(env->cpu),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  assert_null(loom_op_handler_device_name(env->null));
  assert_ptr_equal(loom_op_handler_runtime(env->cpu), env->runtime);
  assert_ptr_equal(loom_runtime_host(env->runtime), env->host);
  assert_non_null(loom_runtime_ops(env->runtime));
  assert_non_null(loom_runtime_kernels(env->runtime));
}

static void register_op_handler_rejects_a_name_in_use(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_STATUS(
      loom_runtime_register_op_handler(env->runtime, "cpu", env->null),
      LOOM_STATUS_ALREADY_EXISTS,
      "an op handler named 'cpu' is already registered");
  assert_ptr_equal(loom_runtime_get_op_handler(env->runtime, "cpu"), env->cpu);
}

static void register_op_handler_rejects_null_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  LOOM_ASSERT_STATUS(loom_runtime_register_op_handler(NULL, "x", env->cpu),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_runtime_register_op_handler: runtime is NULL");
  LOOM_ASSERT_STATUS(
      loom_runtime_register_op_handler(env->runtime, NULL, env->cpu),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_runtime_register_op_handler: name is NULL");
  LOOM_ASSERT_STATUS(loom_runtime_register_op_handler(env->runtime, "x", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_runtime_register_op_handler: handler is NULL");
}

static void registered_handler_is_found_by_name_and_kept_alive(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_t* second = NULL;
  LOOM_ASSERT_OK(loom_cpu_op_handler_create(env->runtime, env->null, &second));
  LOOM_ASSERT_OK(
      loom_runtime_register_op_handler(env->runtime, "cpu:1", second));
  loom_op_handler_release(second);  // the runtime keeps its own reference
  loom_op_handler_t* found = loom_runtime_get_op_handler(env->runtime, "cpu:1");
  assert_ptr_equal(found, second);
  const float x[2] = {1, 2};
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", found,
                                      CORERT_TEST_HERE(), args, 2, NULL,
                                      &result, 1, NULL));
  assert_ptr_equal(loom_tensor_handle_handler(result), found);
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_FLOAT, expected, 2);
  loom_tensor_handle_release(result);
}

static void register_op_handler_has_a_limit(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_status_t status = loom_ok_status();
  int registered = 2;  // cpu and null
  for (int i = 0; i < 1000 && !status; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "extra:%d", i);
    status = loom_runtime_register_op_handler(env->runtime, name, env->null);
    if (!status) registered++;
  }
  char expected[64];
  snprintf(expected, sizeof(expected), "more than %d op handlers", registered);
  LOOM_ASSERT_STATUS(status, LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
}

static loom_status_t refuse_prepare(loom_op_handler_t* handler,
                                    const char* op_name,
                                    const loom_op_def_t* op, void** data) {
  (void)handler;
  (void)op;
  (void)data;
  return loom_make_status(LOOM_STATUS_NOT_FOUND, "no %s here", op_name);
}

static loom_status_t never_execute(loom_op_handler_t* handler,
                                   loom_op_invocation_t* invocation) {
  (void)handler;
  (void)invocation;
  return loom_make_status(LOOM_STATUS_INTERNAL, "never called");
}

static void op_handler_create_checks_its_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_vtable_t vtable = {sizeof(loom_op_handler_vtable_t),
                                     "refuser",
                                     refuse_prepare,
                                     NULL,
                                     never_execute,
                                     NULL,
                                     NULL};
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_STATUS(
      loom_op_handler_create(NULL, &vtable, NULL, NULL, &handler),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_op_handler_create: runtime is NULL");
  LOOM_ASSERT_STATUS(
      loom_op_handler_create(env->runtime, NULL, NULL, NULL, &handler),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_op_handler_create: vtable is NULL");
  LOOM_ASSERT_STATUS(
      loom_op_handler_create(env->runtime, &vtable, NULL, NULL, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_op_handler_create: out_handler is NULL");
  loom_op_handler_vtable_t incomplete[3] = {vtable, vtable, vtable};
  incomplete[0].struct_size = 8;
  incomplete[1].prepare = NULL;
  incomplete[2].execute = NULL;
  for (int i = 0; i < 3; ++i) {
    LOOM_ASSERT_STATUS(
        loom_op_handler_create(env->runtime, &incomplete[i], NULL, NULL,
                               &handler),
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_op_handler_create: the vtable needs struct_size, type_name, "
        "prepare and execute");
    assert_null(handler);
  }
  LOOM_ASSERT_STATUS(loom_cpu_op_handler_create(NULL, NULL, &handler),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_cpu_op_handler_create: runtime is NULL");
  LOOM_ASSERT_STATUS(loom_cpu_op_handler_create(env->runtime, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_cpu_op_handler_create: out_handler is NULL");
}

static void handler_refusing_an_op_passes_it_to_its_fallback(void** state) {
  corert_test_env_t* env = env_of(state);
  static const loom_op_handler_vtable_t kRefuser = {
      sizeof(loom_op_handler_vtable_t),
      "refuser",
      refuse_prepare,
      NULL,
      never_execute,
      NULL,
      NULL};
  loom_op_handler_t* refuser = NULL;
  LOOM_ASSERT_OK(loom_op_handler_create(env->runtime, &kRefuser, NULL, env->cpu,
                                        &refuser));
  assert_string_equal(loom_op_handler_type_name(refuser), "refuser");
  assert_null(loom_op_handler_device_name(refuser));
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", refuser, &op));
  assert_ptr_equal(loom_prepared_op_handler(op), env->cpu);
  loom_prepared_op_release(op);
  loom_op_handler_release(refuser);
}

//===----------------------------------------------------------------------===//
// A handler on the public vtable: counts ops, then runs them on the cpu
// handler (what a transformation handler does).
//===----------------------------------------------------------------------===//

typedef struct counting_state_t {
  loom_op_handler_t* inner;
  int executed;
  int destroyed;
} counting_state_t;

static loom_status_t counting_prepare(loom_op_handler_t* handler,
                                      const char* op_name,
                                      const loom_op_def_t* op, void** data) {
  (void)op;
  counting_state_t* state = loom_op_handler_state(handler);
  return loom_runtime_prepare_op(loom_op_handler_runtime(handler), op_name,
                                 state->inner, (loom_prepared_op_t**)data);
}

static void counting_release(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

static loom_status_t counting_execute(loom_op_handler_t* handler,
                                      loom_op_invocation_t* invocation) {
  counting_state_t* state = loom_op_handler_state(handler);
  state->executed++;
  return loom_runtime_execute_prepared(
      loom_prepared_op_data(invocation->op), invocation->location,
      invocation->arguments, invocation->num_arguments, invocation->attrs,
      invocation->results, invocation->num_results, invocation->chain);
}

static void counting_destroy(void* opaque) {
  ((counting_state_t*)opaque)->destroyed++;
}

static const loom_op_handler_vtable_t kCounting = {
    sizeof(loom_op_handler_vtable_t),
    "counting",
    counting_prepare,
    counting_release,
    counting_execute,
    NULL,
    counting_destroy};

static void custom_handler_delegates_to_the_handler_it_wraps(void** state) {
  corert_test_env_t* env = env_of(state);
  // Static: the runtime may keep the handler (and so its state) until it is
  // destroyed.
  static counting_state_t counting;
  counting.inner = env->cpu;
  counting.executed = 0;
  counting.destroyed = 0;
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_OK(loom_op_handler_create(env->runtime, &kCounting, &counting,
                                        NULL, &handler));
  assert_ptr_equal(loom_op_handler_state(handler), &counting);
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", handler, &op));
  assert_ptr_equal(loom_prepared_op_handler(op), handler);
  const int32_t x[3] = {1, 2, 3};
  loom_tensor_handle_t* value = corert_test_int32_vector(env, x, 3);
  for (int i = 0; i < 3; ++i) {
    value =
        execute_prepared_binary(op, value, corert_test_int32_vector(env, x, 3));
  }
  assert_int_equal(counting.executed, 3);
  // The results live on the handler that ran the kernel.
  assert_ptr_equal(loom_tensor_handle_handler(value), env->cpu);
  int32_t expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = x[i] + x[i] + x[i] + x[i];
  corert_test_expect_values(value, LOOM_DTYPE_INT32, expected, 3);
  loom_tensor_handle_release(value);
  // The prepared op keeps the handler alive; the last reference frees it.
  loom_op_handler_release(handler);
  assert_int_equal(counting.destroyed, 0);
  loom_prepared_op_release(op);
  assert_int_equal(counting.destroyed, 1);
}

// A counting handler that also answers reuse_op_data as told: sharing its
// sibling's prepared op, declining (NOT_FOUND), or failing.
static loom_status_code_t g_reuse_answer;
static int g_reuse_calls;

static loom_status_t counting_reuse(loom_op_handler_t* handler,
                                    const loom_op_handler_t* source,
                                    void* source_op_data, void** out_op_data) {
  (void)handler;
  (void)source;
  g_reuse_calls++;
  if (g_reuse_answer != LOOM_STATUS_OK) {
    return loom_make_status(g_reuse_answer, "reuse refused on purpose");
  }
  loom_prepared_op_retain(source_op_data);
  *out_op_data = source_op_data;
  return loom_ok_status();
}

static const loom_op_handler_vtable_t kReusing = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "reusing",
    .prepare = counting_prepare,
    .release_op_data = counting_release,
    .execute = counting_execute,
    .destroy = counting_destroy,
    .reuse_op_data = counting_reuse};

// loom_runtime_prepare_op_like offers a sibling's op data to a handler of
// the same type: taken (shared), declined (prepared anew), or an error
// (returned); a handler of another type is prepared as usual, unasked.
static void prepare_op_like_follows_the_reuse_hook(void** state) {
  corert_test_env_t* env = env_of(state);
  static counting_state_t states[2];
  loom_op_handler_t* handlers[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    states[i].inner = env->cpu;
    LOOM_ASSERT_OK(loom_op_handler_create(env->runtime, &kReusing, &states[i],
                                          NULL, &handlers[i]));
  }
  loom_prepared_op_t* first = NULL;
  loom_prepared_op_t* like = NULL;
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(env->runtime, "TestAdd", handlers[0], &first));
  g_reuse_calls = 0;
  g_reuse_answer = LOOM_STATUS_OK;
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(first, handlers[1], &like));
  assert_int_equal(g_reuse_calls, 1);
  assert_ptr_equal(loom_prepared_op_handler(like), handlers[1]);
  assert_ptr_equal(loom_prepared_op_data(like), loom_prepared_op_data(first));
  loom_prepared_op_release(like);
  g_reuse_answer = LOOM_STATUS_NOT_FOUND;
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(first, handlers[1], &like));
  assert_int_equal(g_reuse_calls, 2);
  assert_ptr_equal(loom_prepared_op_handler(like), handlers[1]);
  assert_ptr_not_equal(loom_prepared_op_data(like),
                       loom_prepared_op_data(first));
  loom_prepared_op_release(like);
  g_reuse_answer = LOOM_STATUS_ABORTED;
  LOOM_ASSERT_STATUS(loom_runtime_prepare_op_like(first, handlers[1], &like),
                     LOOM_STATUS_ABORTED, "reuse refused on purpose");
  assert_null(like);
  // The cpu handler has no hook: prepared by name, the hook not asked.
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(first, env->cpu, &like));
  assert_int_equal(g_reuse_calls, 3);
  assert_ptr_equal(loom_prepared_op_handler(like), env->cpu);
  loom_prepared_op_release(like);
  loom_prepared_op_release(first);
  for (int i = 0; i < 2; ++i) loom_op_handler_release(handlers[i]);
}

static loom_status_t failing_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  (void)handler;
  return loom_op_invocation_fail(
      invocation,
      loom_make_status(LOOM_STATUS_UNAVAILABLE, "the device is busy"), true);
}

static loom_status_t accept_prepare(loom_op_handler_t* handler,
                                    const char* op_name,
                                    const loom_op_def_t* op, void** data) {
  (void)handler;
  (void)op_name;
  (void)op;
  *data = NULL;
  return loom_ok_status();
}

static void invocation_fail_fills_results_and_releases_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  static const loom_op_handler_vtable_t kFailing = {
      sizeof(loom_op_handler_vtable_t),
      "failing",
      accept_prepare,
      NULL,
      failing_execute,
      NULL,
      NULL};
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_OK(
      loom_op_handler_create(env->runtime, &kFailing, NULL, NULL, &handler));
  const float x[1] = {1};
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 1),
                                   corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* results[3] = {NULL, NULL, NULL};
  loom_async_value_t* chain = loom_host_context_ready_chain(env->host);
  LOOM_ASSERT_STATUS(loom_runtime_execute(env->runtime, "Busy", handler,
                                          corert_test_location("busy.py", 1, 2),
                                          args, 2, NULL, results, 3, &chain),
                     LOOM_STATUS_UNAVAILABLE, "the device is busy");
  assert_null(args[0]);
  assert_null(args[1]);
  for (int i = 0; i < 3; ++i) {
    assert_ptr_equal(loom_tensor_handle_handler(results[i]), handler);
    corert_test_expect_error(results[i], LOOM_STATUS_UNAVAILABLE,
                             "the device is busy");
  }
  // The chain becomes the error too.
  assert_true(loom_async_value_is_error(chain));
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char op_name[64], where[64];
  corert_test_last_diagnostic(env, op_name, where, NULL, sizeof(op_name));
  assert_string_equal(op_name, "Busy");
  assert_string_equal(where, "busy.py:1:2");
  corert_test_release_all(results, 3);
  loom_async_value_release(chain);
  loom_op_handler_release(handler);
}

//===----------------------------------------------------------------------===//
// The logging handler
//===----------------------------------------------------------------------===//

// Reads all of `stream` into a NUL-terminated heap string.
static char* read_all(FILE* stream) {
  fflush(stream);
  long size = ftell(stream);
  assert_true(size >= 0);
  char* text = calloc((size_t)size + 1, 1);
  rewind(stream);
  size_t read = fread(text, 1, (size_t)size, stream);
  assert_int_equal(read, (size_t)size);
  return text;
}

static loom_op_handler_t* logging_handler(corert_test_env_t* env, FILE* stream,
                                          bool print_tensors) {
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_OK(loom_dispatch_logging_handler_create(
      env->runtime, env->cpu, stream, print_tensors, &handler));
  return handler;
}

static void logging_handler_prints_each_dispatch_then_runs_it(void** state) {
  corert_test_env_t* env = env_of(state);
  FILE* stream = tmpfile();
  assert_non_null(stream);
  loom_op_handler_t* logging = logging_handler(env, stream, false);
  assert_string_equal(loom_op_handler_type_name(logging), "logging");
  assert_string_equal(loom_op_handler_device_name(logging),
                      loom_op_handler_device_name(env->cpu));
  const float x[2] = {1, 2};
  loom_tensor_handle_t* value = corert_test_float_vector(env, x, 2);
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* args[2] = {value,
                                     corert_test_float_vector(env, x, 2)};
    LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", logging,
                                        CORERT_TEST_HERE(), args, 2, NULL,
                                        &value, 1, NULL));
  }
  loom_tensor_handle_t* args[1] = {value};
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "loom.to_dense", logging,
                                      CORERT_TEST_HERE(), args, 1, NULL, &value,
                                      1, NULL));
  char* text = read_all(stream);
  assert_string_equal(text,
                      "[0] dispatch 'TestAdd' 2 arguments, 1 result, no "
                      "attributes\n"
                      "[1] dispatch 'TestAdd' 2 arguments, 1 result, no "
                      "attributes\n"
                      "[2] dispatch 'loom.to_dense' 1 argument, 1 result, "
                      "no attributes\n");
  free(text);
  // The op ran on the wrapped handler.
  loom_tensor_t* result = corert_test_resolve(value);
  assert_int_equal(loom_tensor_kind(result), LOOM_TENSOR_DENSE);
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i] + x[i];
  assert_memory_equal(loom_tensor_data(result), expected, sizeof(expected));
  loom_tensor_release(result);
  loom_tensor_handle_release(value);
  loom_op_handler_release(logging);
  fclose(stream);
}

static void logging_handler_prints_the_attributes_given(void** state) {
  corert_test_env_t* env = env_of(state);
  FILE* stream = tmpfile();
  loom_op_handler_t* logging = logging_handler(env, stream, false);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_INT32));
  const int32_t x[2] = {5, 6};
  loom_tensor_handle_t* args[2] = {corert_test_int32_vector(env, x, 2),
                                   corert_test_int32_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", logging,
                                      CORERT_TEST_HERE(), args, 2, &attrs,
                                      &result, 1, NULL));
  char printed[512];
  loom_op_attrs_print(&attrs, printed, sizeof(printed));
  char expected[1024];
  snprintf(expected, sizeof(expected),
           "[0] dispatch 'TestAdd' 2 arguments, 1 result, %s", printed);
  char* text = read_all(stream);
  assert_string_equal(text, expected);
  corert_test_assert_contains(text, "'T'");
  free(text);
  int32_t sums[2];
  for (int i = 0; i < 2; ++i) sums[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_INT32, sums, 2);
  loom_tensor_handle_release(result);
  loom_op_attrs_deinitialize(&attrs);
  loom_op_handler_release(logging);
  fclose(stream);
}

static void logging_handler_prints_arguments_and_results(void** state) {
  corert_test_env_t* env = env_of(state);
  FILE* stream = tmpfile();
  loom_op_handler_t* logging = logging_handler(env, stream, true);
  const float x[3] = {1, 2, 3};
  const float y[3] = {0.5f, 0.25f, 4};
  loom_tensor_handle_t* xh = corert_test_float_vector(env, x, 3);
  loom_tensor_handle_t* yh = corert_test_float_vector(env, y, 3);
  char x_text[256], y_text[256], result_text[256];
  loom_tensor_t* tensor = corert_test_resolve(xh);
  loom_tensor_format(tensor, x_text, sizeof(x_text));
  loom_tensor_release(tensor);
  tensor = corert_test_resolve(yh);
  loom_tensor_format(tensor, y_text, sizeof(y_text));
  loom_tensor_release(tensor);
  loom_tensor_handle_t* args[2] = {xh, yh};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", logging,
                                      CORERT_TEST_HERE(), args, 2, NULL,
                                      &result, 1, NULL));
  tensor = corert_test_resolve(result);
  loom_tensor_format(tensor, result_text, sizeof(result_text));
  float expected_sum[3];
  for (int i = 0; i < 3; ++i) expected_sum[i] = x[i] + y[i];
  assert_memory_equal(loom_tensor_data(tensor), expected_sum,
                      sizeof(expected_sum));
  loom_tensor_release(tensor);
  char expected[1024];
  snprintf(expected, sizeof(expected),
           "[0] dispatch 'TestAdd' 2 arguments, 1 result, no attributes\n"
           "  Arg 0: %s\n  Arg 1: %s\n  Result 0: %s\n",
           x_text, y_text, result_text);
  char* text = read_all(stream);
  assert_string_equal(text, expected);
  free(text);
  loom_tensor_handle_release(result);
  loom_op_handler_release(logging);
  fclose(stream);
}

static void logging_handler_prints_error_results(void** state) {
  corert_test_env_t* env = env_of(state);
  FILE* stream = tmpfile();
  loom_op_handler_t* logging = logging_handler(env, stream, true);
  const float x[1] = {1};
  loom_tensor_handle_t* args[1] = {corert_test_float_vector(env, x, 1)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestFail", logging,
                                      CORERT_TEST_HERE(), args, 1, NULL,
                                      &result, 1, NULL));
  char* text = read_all(stream);
  corert_test_assert_contains(text, "  Result 0: <<error: ");
  corert_test_assert_contains(text, "the kernel failed on purpose>>\n");
  free(text);
  loom_tensor_handle_release(result);
  loom_op_handler_release(logging);
  fclose(stream);
}

static void logging_handler_passes_synchronous_errors_on(void** state) {
  corert_test_env_t* env = env_of(state);
  FILE* stream = tmpfile();
  loom_op_handler_t* logging = logging_handler(env, stream, false);
  const float x[2] = {1, 2};
  const float y[1] = {3};
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, y, 1)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_STATUS(
      loom_runtime_execute(env->runtime, "TestAdd", logging, CORERT_TEST_HERE(),
                           args, 2, NULL, &result, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "TestAdd requires inputs of equal shapes");
  corert_test_expect_error(result, LOOM_STATUS_INVALID_ARGUMENT,
                           "TestAdd requires inputs of equal shapes");
  assert_int_equal(corert_test_diagnostic_count(env), 1);
  char* text = read_all(stream);
  assert_string_equal(text,
                      "[0] dispatch 'TestAdd' 2 arguments, 1 result, no "
                      "attributes\n");
  free(text);
  loom_tensor_handle_release(result);
  loom_op_handler_release(logging);
  fclose(stream);
}

static void logging_handler_without_a_stream_only_runs_ops(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_t* logging = logging_handler(env, NULL, true);
  const float x[2] = {1, 2};
  loom_tensor_handle_t* args[2] = {corert_test_float_vector(env, x, 2),
                                   corert_test_float_vector(env, x, 2)};
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(loom_runtime_execute(env->runtime, "TestAdd", logging,
                                      CORERT_TEST_HERE(), args, 2, NULL,
                                      &result, 1, NULL));
  float expected[2];
  for (int i = 0; i < 2; ++i) expected[i] = x[i] + x[i];
  corert_test_expect_values(result, LOOM_DTYPE_FLOAT, expected, 2);
  loom_tensor_handle_release(result);
  loom_op_handler_release(logging);
}

static void logging_handler_create_checks_its_arguments(void** state) {
  corert_test_env_t* env = env_of(state);
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_STATUS(loom_dispatch_logging_handler_create(NULL, env->cpu, NULL,
                                                          false, &handler),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_dispatch_logging_handler_create: runtime is NULL");
  LOOM_ASSERT_STATUS(loom_dispatch_logging_handler_create(
                         env->runtime, NULL, NULL, false, &handler),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_dispatch_logging_handler_create: wrapped is NULL");
  LOOM_ASSERT_STATUS(
      loom_dispatch_logging_handler_create(env->runtime, env->cpu, NULL, false,
                                           NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_dispatch_logging_handler_create: out_handler is NULL");
}

#define TEST(name) \
  cmocka_unit_test_setup_teardown(name, corert_test_setup, corert_test_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(prepared_op_runs_many_times_with_different_dtypes),
      TEST(prepared_op_survives_extra_references),
      TEST(prepared_op_handles_many_attribute_sets),
      TEST(prepare_reports_not_found_without_a_fallback),
      TEST(execute_of_an_unknown_op_fails_its_results),
      TEST(cpu_falls_back_to_null_for_ops_it_does_not_know),
      TEST(cpu_keeps_a_registered_op_without_a_kernel),
      TEST(cpu_falls_back_to_the_handler_it_was_given),
      TEST(null_handler_fails_every_op),
      TEST(runtime_has_cpu_and_null_handlers),
      TEST(register_op_handler_rejects_a_name_in_use),
      TEST(register_op_handler_rejects_null_arguments),
      TEST(registered_handler_is_found_by_name_and_kept_alive),
      TEST(register_op_handler_has_a_limit),
      TEST(op_handler_create_checks_its_arguments),
      TEST(handler_refusing_an_op_passes_it_to_its_fallback),
      TEST(custom_handler_delegates_to_the_handler_it_wraps),
      TEST(prepare_op_like_follows_the_reuse_hook),
      TEST(invocation_fail_fills_results_and_releases_arguments),
      TEST(logging_handler_prints_each_dispatch_then_runs_it),
      TEST(logging_handler_prints_the_attributes_given),
      TEST(logging_handler_prints_arguments_and_results),
      TEST(logging_handler_prints_error_results),
      TEST(logging_handler_passes_synchronous_errors_on),
      TEST(logging_handler_without_a_stream_only_runs_ops),
      TEST(logging_handler_create_checks_its_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
