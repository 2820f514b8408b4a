// The program executor through its API: calls with arguments and results,
// dataflow on unset arguments, error propagation and diagnostics, the
// bef_executor-style runner, kernel and cpu-op registration, plugins,
// cancellation and concurrent calls.

#include <pthread.h>
#include <stdlib.h>

#include "loom/cpu_op_handler.h"
#include "loom/program.h"
#include "loom/program_kernel.h"
#include "loom/tensor_handle.h"
#include "test_support.h"

typedef struct diagnostics_t {
  pthread_mutex_t mutex;
  int count;
  char last[4096];
  int line;
  int column;
} diagnostics_t;

static void record(void* user_data, const loom_program_diagnostic_t* d) {
  diagnostics_t* diagnostics = user_data;
  pthread_mutex_lock(&diagnostics->mutex);
  diagnostics->count++;
  snprintf(diagnostics->last, sizeof(diagnostics->last), "%s:%d:%d: %s",
           d->location.file, d->location.line, d->location.column, d->message);
  diagnostics->line = d->location.line;
  diagnostics->column = d->location.column;
  pthread_mutex_unlock(&diagnostics->mutex);
}

typedef struct env_t {
  loom_host_context_t* host;
  loom_program_executor_t* executor;
  diagnostics_t diagnostics;
  char* output;
  size_t output_size;
  FILE* stream;
} env_t;

static int setup(void** state) {
  env_t* env = calloc(1, sizeof(*env));
  if (!env) return -1;
  pthread_mutex_init(&env->diagnostics.mutex, NULL);
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  host_options.num_threads = 2;
  LOOM_ASSERT_OK(loom_host_context_create(&host_options, &env->host));
  env->stream = open_memstream(&env->output, &env->output_size);
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options, env->host);
  options.output = env->stream;
  options.diagnostic_handler = record;
  options.diagnostic_user_data = &env->diagnostics;
  LOOM_ASSERT_OK(loom_program_executor_create(&options, &env->executor));
  *state = env;
  return 0;
}

static int teardown(void** state) {
  env_t* env = *state;
  loom_program_executor_destroy(env->executor);
  loom_host_context_destroy(env->host);
  fclose(env->stream);
  free(env->output);
  pthread_mutex_destroy(&env->diagnostics.mutex);
  free(env);
  return 0;
}

static loom_program_t* parse(const char* text) {
  loom_program_t* program = NULL;
  LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), "exec.mlir", text,
                                    strlen(text), &program, NULL));
  return program;
}

static loom_async_value_t* i32_value(int32_t x) {
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_program_value_create(loom_allocator_system(), &value));
  LOOM_ASSERT_OK(loom_program_value_set_i32(value, x));
  return value;
}

static const char kAdd[] =
    "func.func @add(%a: i32, %b: i32) -> (i32, !tfrt.chain) {\n"
    "  %c = tfrt.add.i32 %a, %b\n"
    "  %ch = tfrt.new.chain\n"
    "  tfrt.return %c, %ch : i32, !tfrt.chain\n"
    "}\n"
    "func.func @fail() -> i32 {\n"
    "  %zero = tfrt.constant.i32 0\n"
    "  %q, %r = tfrt.div.i32 %zero, %zero\n"
    "  tfrt.return %q : i32\n"
    "}\n";

static void calls_a_function_with_arguments(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_async_value_t* args[2] = {i32_value(40), i32_value(2)};
  loom_async_value_t* results[2];
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "add", args,
                                            2, results, 2));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 2));
  const loom_program_value_t* sum = loom_program_value_get(results[0]);
  assert_non_null(sum);
  assert_int_equal(sum->kind, LOOM_PROGRAM_VALUE_I32);
  assert_int_equal(sum->u.i32, 42);
  assert_int_equal(loom_program_value_get(results[1])->kind,
                   LOOM_PROGRAM_VALUE_CHAIN);
  for (int i = 0; i < 2; ++i) {
    loom_async_value_release(args[i]);
    loom_async_value_release(results[i]);
  }
  loom_program_executor_quiesce(env->executor);
  loom_program_destroy(program);
}

// Results are returned at once; they are set when the arguments are.
static void results_wait_for_unset_arguments(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_async_value_t* pending = NULL;
  LOOM_ASSERT_OK(loom_program_value_create(loom_allocator_system(), &pending));
  loom_async_value_t* args[2] = {pending, i32_value(1)};
  loom_async_value_t* results[2];
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "add", args,
                                            2, results, 2));
  assert_false(loom_async_value_is_set(results[0]));
  // The chain does not depend on the arguments.
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &results[1], 1));
  LOOM_ASSERT_OK(loom_program_value_set_i32(pending, 9));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 1));
  assert_int_equal(loom_program_value_get(results[0])->u.i32, 10);
  for (int i = 0; i < 2; ++i) {
    loom_async_value_release(args[i]);
    loom_async_value_release(results[i]);
  }
  loom_program_executor_quiesce(env->executor);
  loom_program_destroy(program);
}

// An error argument skips the kernels using it, without a diagnostic.
static void error_arguments_propagate_silently(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_async_value_t* error = NULL;
  LOOM_ASSERT_OK(loom_program_value_create(loom_allocator_system(), &error));
  LOOM_ASSERT_OK(loom_async_value_set_error(
      error, loom_make_status(LOOM_STATUS_ABORTED, "upstream failed")));
  loom_async_value_t* args[2] = {error, i32_value(1)};
  loom_async_value_t* results[2];
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "add", args,
                                            2, results, 2));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 2));
  assert_true(loom_async_value_is_error(results[0]));
  assert_string_equal(loom_status_message(loom_async_value_error(results[0])),
                      "upstream failed");
  assert_true(loom_async_value_is_available(results[1]));
  assert_int_equal(env->diagnostics.count, 0);
  for (int i = 0; i < 2; ++i) {
    loom_async_value_release(args[i]);
    loom_async_value_release(results[i]);
  }
  loom_program_executor_quiesce(env->executor);
  loom_program_destroy(program);
}

static void kernel_errors_are_reported_at_their_operation(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_async_value_t* result = NULL;
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "fail",
                                            NULL, 0, &result, 1));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &result, 1));
  assert_true(loom_async_value_is_error(result));
  loom_program_executor_quiesce(env->executor);
  assert_int_equal(env->diagnostics.count, 1);
  assert_string_equal(env->diagnostics.last,
                      "exec.mlir:8:12: runtime error: Divide by zero");
  loom_async_value_release(result);
  loom_program_destroy(program);
}

static void call_checks_its_arguments(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_async_value_t* results[2];
  LOOM_ASSERT_STATUS(loom_program_executor_call(env->executor, program,
                                                "nowhere", NULL, 0, results, 0),
                     LOOM_STATUS_NOT_FOUND, "there is no function @nowhere");
  LOOM_ASSERT_STATUS(
      loom_program_executor_call(env->executor, program, "add", NULL, 0,
                                 results, 2),
      LOOM_STATUS_INVALID_ARGUMENT,
      "@add takes 2 arguments and returns 2 values; got 0 and 2");
  loom_async_value_t* chain = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &chain));
  loom_async_value_t* args[2] = {chain, chain};
  LOOM_ASSERT_STATUS(loom_program_executor_call(env->executor, program, "add",
                                                args, 2, results, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "@add: argument 0 is not a program value");
  loom_async_value_release(chain);
  loom_program_destroy(program);
}

static const char kRunAll[] =
    "func.func @init() {\n"
    "  %ch = tfrt.new.chain\n"
    "  %x = tfrt.constant.i32 5\n"
    "  %ch1 = tfrt.print.i32 %x, %ch\n"
    "  tfrt.return\n"
    "}\n"
    "func.func @values() -> (i1, i64, f32, f64, !tfrt.chain) {\n"
    "  %a = tfrt.constant.i1 false\n"
    "  %b = tfrt.constant.i64 -9\n"
    "  %c = tfrt.constant.f32 0.5\n"
    "  %d = tfrt.constant.f64 2.0\n"
    "  %e = tfrt.new.chain\n"
    "  tfrt.return %a, %b, %c, %d, %e : i1, i64, f32, f64, !tfrt.chain\n"
    "}\n"
    "func.func @arg(%x: i32) -> i32 {\n"
    "  tfrt.return %x : i32\n"
    "}\n";

static const char* flush_output(env_t* env) {
  fflush(env->stream);
  return env->output;
}

static void run_all_prints_as_bef_executor_does(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kRunAll);
  LOOM_ASSERT_OK(loom_program_executor_run_all(env->executor, program, NULL));
  assert_string_equal(flush_output(env),
                      "--- Running 'init':\n"
                      "int32 = 5\n"
                      "--- Running 'values':\n"
                      "'values' returned 0,-9,5.000000e-01,2.000000e+00,"
                      "!tfrt.chain value\n"
                      "--- Not running 'arg' because it has arguments.\n");
  loom_program_destroy(program);
}

static void run_all_runs_the_init_function_first_and_selected_ones(
    void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kRunAll);
  loom_program_run_options_t options;
  loom_program_run_options_initialize(&options);
  const char* functions[] = {"values", "init"};
  options.functions = functions;
  options.num_functions = 2;
  options.test_init_function = "init";
  LOOM_ASSERT_OK(
      loom_program_executor_run_all(env->executor, program, &options));
  assert_string_equal(flush_output(env),
                      "int32 = 5\n"
                      "--- Running 'values':\n"
                      "'values' returned 0,-9,5.000000e-01,2.000000e+00,"
                      "!tfrt.chain value\n");
  const char* missing[] = {"nowhere"};
  options.functions = missing;
  options.num_functions = 1;
  LOOM_ASSERT_STATUS(
      loom_program_executor_run_all(env->executor, program, &options),
      LOOM_STATUS_NOT_FOUND, "exec.mlir: couldn't find function 'nowhere'");
  options.functions = NULL;
  options.num_functions = 0;
  options.test_init_function = "arg";
  LOOM_ASSERT_STATUS(
      loom_program_executor_run_all(env->executor, program, &options),
      LOOM_STATUS_INVALID_ARGUMENT, "the init function 'arg' takes arguments");
  loom_program_destroy(program);
}

static void unknown_kernels_stop_the_program_before_it_runs(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(
      "func.func @f() -> i32 {\n"
      "  %ch = tfrt.new.chain\n"
      "  %x = \"no.kernel\"(%ch) : (!tfrt.chain) -> i32\n"
      "  tfrt.return %x : i32\n"
      "}\n");
  LOOM_ASSERT_STATUS(
      loom_program_executor_run_all(env->executor, program, NULL),
      LOOM_STATUS_FAILED_PRECONDITION,
      "exec.mlir:3:8: 'no.kernel' is not a known kernel");
  assert_int_equal(env->diagnostics.count, 1);
  assert_int_equal(env->diagnostics.line, 3);
  assert_int_equal(env->diagnostics.column, 8);
  assert_string_equal(flush_output(env), "");
  loom_program_destroy(program);
}

static void nothing_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)frame;
  (void)user_data;
}

static void add_kernel_rejects_duplicates_and_bad_definitions(void** state) {
  env_t* env = *state;
  loom_program_kernel_def_t def = {
      sizeof(def), "tfrt.new.chain", NULL, NULL, 0, 1};
  LOOM_ASSERT_STATUS(loom_program_executor_add_kernel(env->executor, &def),
                     LOOM_STATUS_INVALID_ARGUMENT, "def->fn is NULL");
  def.fn = nothing_kernel;
  LOOM_ASSERT_STATUS(loom_program_executor_add_kernel(env->executor, &def),
                     LOOM_STATUS_ALREADY_EXISTS,
                     "a kernel named 'tfrt.new.chain' is already registered");
  def.name = "";
  LOOM_ASSERT_STATUS(loom_program_executor_add_kernel(env->executor, &def),
                     LOOM_STATUS_INVALID_ARGUMENT, "must not be empty");
}

// A native op registered through add_cpu_ops: "test.negate".
static loom_status_t negate_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  loom_tensor_t* x = ctx->inputs[0];
  loom_tensor_t* y = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      ctx->allocator, loom_tensor_dtype(x), loom_tensor_shape(x), &y));
  for (int64_t i = 0; i < loom_tensor_num_elements(x); ++i) {
    ((int32_t*)loom_tensor_data(y))[i] = -((int32_t*)loom_tensor_data(x))[i];
  }
  return loom_cpu_set_result(ctx->results[0], y);
}

static int g_cpu_ops_calls;

static loom_status_t add_negate(loom_op_handler_t* cpu, void* user_data) {
  (void)user_data;
  g_cpu_ops_calls++;
  return loom_cpu_op_handler_add_op(cpu, "test.negate", negate_dispatch, 0);
}

static void cpu_ops_reach_the_cpu_handlers_programs_create(void** state) {
  env_t* env = *state;
  g_cpu_ops_calls = 0;
  LOOM_ASSERT_OK(
      loom_program_executor_add_cpu_ops(env->executor, add_negate, NULL));
  assert_int_equal(g_cpu_ops_calls, 1);  // the runtime's "cpu"
  loom_program_t* program = parse(
      "func.func @f() -> (i32, i32) {\n"
      "  %ch = tfrt.new.chain\n"
      "  %cpu = corert.get_op_handler %ch \"cpu\"\n"
      "  %null = corert.create_null_op_handler\n"
      "  %mine = corert.create_cpu_op_handler %null\n"
      "  %a = corert.const_dense_tensor dense<[3]> : tensor<1xi32>\n"
      "  %b = corert.executeop(%cpu) \"test.negate\"(%a) : 1\n"
      "  %c = corert.executeop(%mine) \"test.negate\"(%b) : 1\n"
      "  %x = corert.tensorhandle_to_int32 %b\n"
      "  %y = corert.tensorhandle_to_int32 %c\n"
      "  tfrt.return %x, %y : i32, i32\n"
      "}\n");
  loom_async_value_t* results[2];
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "f", NULL,
                                            0, results, 2));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 2));
  assert_int_equal(loom_program_value_get(results[0])->u.i32, -3);
  assert_int_equal(loom_program_value_get(results[1])->u.i32, 3);
  assert_int_equal(g_cpu_ops_calls, 2);
  loom_async_value_release(results[0]);
  loom_async_value_release(results[1]);
  loom_program_executor_quiesce(env->executor);
  loom_program_destroy(program);
}

static void load_plugin_names_a_missing_library(void** state) {
  env_t* env = *state;
  LOOM_ASSERT_STATUS(
      loom_program_executor_load_plugin(env->executor, "/no/such/plugin.so"),
      LOOM_STATUS_NOT_FOUND, "cannot load plugin '/no/such/plugin.so'");
}

// Cancelling the host resolves kernels not yet run to the cancellation,
// without diagnostics; after a restart they run again.
static void cancellation_skips_kernels_until_restart(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(kAdd);
  loom_host_context_cancel(env->host, "stop now");
  loom_async_value_t* args[2] = {i32_value(1), i32_value(2)};
  loom_async_value_t* results[2];
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "add", args,
                                            2, results, 2));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 2));
  assert_true(loom_async_value_is_error(results[0]));
  assert_string_equal(loom_status_message(loom_async_value_error(results[0])),
                      "stop now");
  assert_int_equal(env->diagnostics.count, 0);
  loom_async_value_release(results[0]);
  loom_async_value_release(results[1]);
  loom_host_context_restart(env->host);
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, "add", args,
                                            2, results, 2));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, results, 2));
  assert_int_equal(loom_program_value_get(results[0])->u.i32, 3);
  for (int i = 0; i < 2; ++i) {
    loom_async_value_release(args[i]);
    loom_async_value_release(results[i]);
  }
  loom_program_executor_quiesce(env->executor);
  loom_program_destroy(program);
}

typedef struct caller_t {
  env_t* env;
  const loom_program_t* program;
  int failures;
} caller_t;

static void* call_many(void* arg) {
  caller_t* caller = arg;
  for (int i = 0; i < 200; ++i) {
    loom_async_value_t* args[2] = {i32_value(i), i32_value(1)};
    loom_async_value_t* results[2];
    loom_status_t status = loom_program_executor_call(
        caller->env->executor, caller->program, "sum", args, 2, results, 2);
    if (!status) {
      status = loom_host_context_await(caller->env->host, results, 2);
      const loom_program_value_t* value = loom_program_value_get(results[0]);
      if (!value || value->u.i32 != 2 * (i + 1)) caller->failures++;
      loom_async_value_release(results[0]);
      loom_async_value_release(results[1]);
    }
    if (status) caller->failures++;
    loom_status_free(status);
    loom_async_value_release(args[0]);
    loom_async_value_release(args[1]);
  }
  return NULL;
}

// Calls from several threads at once share one program and executor;
// here each goes through an asynchronous op and the runtime.
static void concurrent_calls_share_a_program(void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(
      "func.func @sum(%a: i32, %b: i32) -> (i32, !tfrt.chain) {\n"
      "  %c = tfrt.add.i32 %a, %b\n"
      "  %d = tfrt.call @double(%c) : (i32) -> i32\n"
      "  %ch = tfrt.new.chain\n"
      "  tfrt.return %d, %ch : i32, !tfrt.chain\n"
      "}\n"
      "func.func @double(%x: i32) -> i32 {\n"
      "  %y = tfrt.add.i32 %x, %x\n"
      "  tfrt.return %y : i32\n"
      "}\n");
  enum { kThreads = 4 };
  pthread_t threads[kThreads];
  caller_t callers[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    callers[i] = (caller_t){env, program, 0};
    assert_int_equal(pthread_create(&threads[i], NULL, call_many, &callers[i]),
                     0);
  }
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(callers[i].failures, 0);
  }
  loom_program_executor_quiesce(env->executor);
  loom_program_executor_statistics_t statistics =
      loom_program_executor_statistics(env->executor);
  assert_true(statistics.functions_called >= 2 * kThreads * 200);
  assert_true(statistics.kernels_run >= 3 * kThreads * 200);
  loom_program_destroy(program);
}

//===----------------------------------------------------------------------===//
// Limits on calls
//===----------------------------------------------------------------------===//

// Replaces the environment's executor by one with these limits.
static void recreate(env_t* env, int32_t max_call_depth,
                     int32_t max_calls_in_flight) {
  loom_program_executor_destroy(env->executor);
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options, env->host);
  options.output = env->stream;
  options.diagnostic_handler = record;
  options.diagnostic_user_data = &env->diagnostics;
  options.max_call_depth = max_call_depth;
  options.max_calls_in_flight = max_calls_in_flight;
  LOOM_ASSERT_OK(loom_program_executor_create(&options, &env->executor));
}

// A function that calls itself twice per call, without end.
static const char kExplode[] =
    "func.func @explode(%x: i32) -> i32 {\n"
    "  %a = tfrt.call @explode(%x) : (i32) -> i32\n"
    "  %b = tfrt.call @explode(%x) : (i32) -> i32\n"
    "  %c = tfrt.add.i32 %a, %b\n"
    "  tfrt.return %c : i32\n"
    "}\n"
    "func.func @main() -> i32 {\n"
    "  %x = tfrt.constant.i32 1\n"
    "  %y = tfrt.call @explode(%x) : (i32) -> i32\n"
    "  tfrt.return %y : i32\n"
    "}\n"
    "func.func @one() -> i32 {\n"
    "  %x = tfrt.constant.i32 1\n"
    "  tfrt.return %x : i32\n"
    "}\n";

static loom_async_value_t* call_and_wait(env_t* env,
                                         const loom_program_t* program,
                                         const char* name) {
  loom_async_value_t* result = NULL;
  LOOM_ASSERT_OK(loom_program_executor_call(env->executor, program, name, NULL,
                                            0, &result, 1));
  LOOM_ASSERT_OK(loom_host_context_await(env->host, &result, 1));
  loom_program_executor_quiesce(env->executor);
  return result;
}

static void calls_in_flight_are_bounded_with_one_error(void** state) {
  env_t* env = *state;
  recreate(env, 0, 32);
  loom_program_t* program = parse(kExplode);
  loom_async_value_t* result = call_and_wait(env, program, "main");
  assert_true(loom_async_value_is_error(result));
  loom_status_t error = loom_async_value_error(result);
  assert_int_equal(loom_status_code(error), LOOM_STATUS_RESOURCE_EXHAUSTED);
  const char* message = loom_status_message(error);
  const char* expected =
      "calling @explode: 32 function calls are in flight, the most allowed "
      "(max_calls_in_flight)\n  at @explode (exec.mlir:";
  assert_memory_equal(message, expected, strlen(expected));
  const char* outermost = "\n  at @main (exec.mlir:9:8)";
  assert_string_equal(message + strlen(message) - strlen(outermost), outermost);
  // One diagnostic, with the same text; no call started past the limit.
  assert_int_equal(env->diagnostics.count, 1);
  assert_non_null(strstr(env->diagnostics.last, message));
  loom_program_executor_statistics_t statistics =
      loom_program_executor_statistics(env->executor);
  assert_true(statistics.functions_called >= 2);
  assert_true(statistics.functions_called <= 32);
  loom_async_value_release(result);
  // The stop ended with the calls: the next call runs.
  result = call_and_wait(env, program, "one");
  const loom_program_value_t* one = loom_program_value_get(result);
  assert_non_null(one);
  assert_int_equal(one->u.i32, 1);
  assert_int_equal(env->diagnostics.count, 1);
  loom_async_value_release(result);
  loom_program_destroy(program);
}

static void call_depth_is_bounded_with_the_call_stack(void** state) {
  env_t* env = *state;
  recreate(env, 2, 0);
  loom_program_t* program = parse(kExplode);
  loom_async_value_t* result = call_and_wait(env, program, "main");
  assert_true(loom_async_value_is_error(result));
  const char* expected =
      "calling @explode: the call depth limit (2) is exceeded "
      "(max_call_depth)\n"
      "  at @explode (exec.mlir:2:8)\n"
      "  at @explode (exec.mlir:2:8)\n"
      "  at @main (exec.mlir:9:8)";
  assert_string_equal(loom_status_message(loom_async_value_error(result)),
                      expected);
  assert_int_equal(env->diagnostics.count, 1);
  char diagnostic[512];
  snprintf(diagnostic, sizeof(diagnostic), "exec.mlir:2:8: runtime error: %s",
           expected);
  assert_string_equal(env->diagnostics.last, diagnostic);
  loom_async_value_release(result);
  loom_program_destroy(program);
}

// A status without a message (made when there was no memory for one).
static void fail_without_message(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_program_frame_fail(
      frame, loom_status_from_code(LOOM_STATUS_RESOURCE_EXHAUSTED));
}

static void errors_without_a_message_are_reported_with_one(void** state) {
  env_t* env = *state;
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = "test.no_message",
                                   .fn = fail_without_message,
                                   .num_arguments = 0,
                                   .num_results = 1};
  LOOM_ASSERT_OK(loom_program_executor_add_kernel(env->executor, &def));
  loom_program_t* program = parse(
      "func.func @f() -> i32 {\n"
      "  %x = \"test.no_message\"() : () -> i32\n"
      "  tfrt.return %x : i32\n"
      "}\n");
  LOOM_ASSERT_OK(loom_program_executor_run_all(env->executor, program, NULL));
  assert_string_equal(
      env->diagnostics.last,
      "exec.mlir:2:8: runtime error: RESOURCE_EXHAUSTED: out of memory (no "
      "memory was left for the error's message)");
  assert_string_equal(flush_output(env),
                      "--- Running 'f':\n"
                      "'f' returned <<error: RESOURCE_EXHAUSTED: out of memory "
                      "(no memory was left for the error's message)>>\n");
  loom_program_destroy(program);
}

static void unknown_op_attributes_stop_the_program_before_it_runs(
    void** state) {
  env_t* env = *state;
  loom_program_t* program = parse(
      "func.func @f() -> !tfrt.chain {\n"
      "  %ch = tfrt.new.chain\n"
      "  %cpu = corert.get_op_handler %ch \"cpu\"\n"
      "  %a = corert.const_dense_tensor dense<1.0> : tensor<f32>\n"
      "  %b = corert.executeop(%cpu) \"tf.AddV2\"(%a, %a) {_x = 1, bogus = 3} "
      ": 1\n"
      "  tfrt.return %ch : !tfrt.chain\n"
      "}\n");
  LOOM_ASSERT_STATUS(
      loom_program_executor_run_all(env->executor, program, NULL),
      LOOM_STATUS_FAILED_PRECONDITION,
      "exec.mlir:5:59: op 'AddV2' has no attribute 'bogus'; its attributes "
      "are T");
  assert_int_equal(env->diagnostics.count, 1);
  assert_string_equal(env->diagnostics.last,
                      "exec.mlir:5:59: op 'AddV2' has no attribute 'bogus'; "
                      "its attributes are T");
  assert_string_equal(flush_output(env), "");
  loom_program_destroy(program);
}

static void create_rejects_bad_options(void** state) {
  (void)state;
  loom_program_executor_t* executor = NULL;
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options, NULL);
  LOOM_ASSERT_STATUS(loom_program_executor_create(&options, &executor),
                     LOOM_STATUS_INVALID_ARGUMENT, "options->host is NULL");
  LOOM_ASSERT_STATUS(loom_program_executor_create(NULL, &executor),
                     LOOM_STATUS_INVALID_ARGUMENT, "options is NULL");
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  host_options.num_threads = 1;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&host_options, &host));
  loom_program_executor_options_initialize(&options, host);
  options.max_calls_in_flight = -1;
  LOOM_ASSERT_STATUS(loom_program_executor_create(&options, &executor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "options->max_calls_in_flight is -1; it must be >= 0 "
                     "(0: the default)");
  options.max_calls_in_flight = 0;
  options.max_call_depth = -5;
  LOOM_ASSERT_STATUS(loom_program_executor_create(&options, &executor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "options->max_call_depth is -5; it must be >= 0");
  assert_null(executor);
  loom_host_context_destroy(host);
  loom_program_executor_destroy(NULL);
}

static void string_values_hold_a_copy(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_program_value_create(loom_allocator_system(), &value));
  LOOM_ASSERT_STATUS(loom_program_value_set_string(value, NULL, 3),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_program_value_set_string: data is NULL and size "
                     "is 3");
  char text[] = {'a', '\0', 'b'};
  LOOM_ASSERT_OK(loom_program_value_set_string(value, text, sizeof(text)));
  text[0] = 'z';
  const loom_program_value_t* payload = loom_program_value_get(value);
  assert_int_equal(payload->kind, LOOM_PROGRAM_VALUE_STRING);
  size_t size = 0;
  const char* data = loom_program_string_data(payload->u.string, &size);
  assert_int_equal(size, 3);
  assert_memory_equal(data, "a\0b", 4);
  LOOM_ASSERT_STATUS(loom_program_value_set_string(value, "x", 1),
                     LOOM_STATUS_FAILED_PRECONDITION, "already set");
  // Another value shares the string.
  loom_async_value_t* copy = NULL;
  LOOM_ASSERT_OK(loom_program_value_create(loom_allocator_system(), &copy));
  LOOM_ASSERT_OK(loom_program_value_set(copy, payload));
  loom_async_value_release(value);
  data = loom_program_string_data(loom_program_value_get(copy)->u.string, NULL);
  assert_memory_equal(data, "a\0b", 4);
  loom_async_value_release(copy);
  assert_string_equal(loom_program_string_data(NULL, &size), "");
  assert_int_equal(size, 0);
}

static void values_check_their_state(void** state) {
  (void)state;
  loom_async_value_t* value = i32_value(1);
  LOOM_ASSERT_STATUS(loom_program_value_set_i32(value, 2),
                     LOOM_STATUS_FAILED_PRECONDITION, "already set");
  loom_async_value_t* chain = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &chain));
  LOOM_ASSERT_STATUS(loom_program_value_set_chain(chain),
                     LOOM_STATUS_FAILED_PRECONDITION, "not a program value");
  assert_null(loom_program_value_get(chain));
  assert_string_equal(loom_program_value_kind_name(LOOM_PROGRAM_VALUE_SHAPE),
                      "!ts.shape");
  assert_string_equal(loom_program_value_kind_name(LOOM_PROGRAM_VALUE_FUNCTION),
                      "!corert.op");
  assert_string_equal(
      loom_program_value_kind_name(LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS),
      "!corert.opattrs_ref");
  assert_string_equal(loom_program_value_kind_name(LOOM_PROGRAM_VALUE_STRING),
                      "!tfrt.string");
  loom_async_value_release(chain);
  loom_async_value_release(value);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(calls_a_function_with_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(results_wait_for_unset_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(error_arguments_propagate_silently, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          kernel_errors_are_reported_at_their_operation, setup, teardown),
      cmocka_unit_test_setup_teardown(call_checks_its_arguments, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(run_all_prints_as_bef_executor_does,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          run_all_runs_the_init_function_first_and_selected_ones, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          unknown_kernels_stop_the_program_before_it_runs, setup, teardown),
      cmocka_unit_test_setup_teardown(
          add_kernel_rejects_duplicates_and_bad_definitions, setup, teardown),
      cmocka_unit_test_setup_teardown(
          cpu_ops_reach_the_cpu_handlers_programs_create, setup, teardown),
      cmocka_unit_test_setup_teardown(load_plugin_names_a_missing_library,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(cancellation_skips_kernels_until_restart,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_calls_share_a_program, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          calls_in_flight_are_bounded_with_one_error, setup, teardown),
      cmocka_unit_test_setup_teardown(call_depth_is_bounded_with_the_call_stack,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          errors_without_a_message_are_reported_with_one, setup, teardown),
      cmocka_unit_test_setup_teardown(
          unknown_op_attributes_stop_the_program_before_it_runs, setup,
          teardown),
      cmocka_unit_test(create_rejects_bad_options),
      cmocka_unit_test(values_check_their_state),
      cmocka_unit_test(string_values_hold_a_copy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
