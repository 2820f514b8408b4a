// The eager front end from several threads: per-thread scopes and
// executors, shared merges, variables updated concurrently, synchronous
// and asynchronous contexts (run under ThreadSanitizer).

#include <pthread.h>
#include <stdlib.h>

#include "loom/handlers.h"
#include "loom/loom.h"
#include "test_support.h"

enum { kThreads = 4, kOps = 200 };

typedef struct shared_t {
  loom_context_t* context;
  loom_op_handler_t* logging;  // entered by every thread
  loom_tensor_handle_t* var;   // a float variable
  loom_tensor_handle_t* one;
  bool thread_async;  // threads switch to asynchronous executors
  int failures;       // set by threads (read after join)
} shared_t;

static loom_status_t run_op(loom_context_t* context, loom_eager_op_t* op,
                            const char* name, loom_tensor_handle_t* a,
                            loom_tensor_handle_t* b,
                            loom_tensor_handle_t** out) {
  LOOM_RETURN_IF_ERROR(loom_eager_op_reset(op, name));
  LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, a));
  if (b) LOOM_RETURN_IF_ERROR(loom_eager_op_add_input(op, b));
  int32_t count = 0;
  (void)context;
  return loom_eager_op_execute(op, out, out ? 1 : 0, &count);
}

static void* worker(void* arg) {
  shared_t* shared = arg;
  loom_context_t* context = shared->context;
  if (shared->thread_async) loom_context_set_thread_async(context, true);
  loom_status_t status = loom_context_enter_scope(context, shared->logging);
  loom_eager_op_t* op = NULL;
  if (!status) status = loom_eager_op_create(context, "AddV2", &op);
  loom_tensor_handle_t* x = shared->one;
  loom_tensor_handle_retain(x);
  for (int i = 0; i < kOps && !status; ++i) {
    loom_tensor_handle_t* y = NULL;
    status = run_op(context, op, "AddV2", x, shared->one, &y);
    loom_tensor_handle_release(x);
    x = y;
    if (!status) {
      status = run_op(context, op, "AssignAddVariableOp", shared->var,
                      shared->one, NULL);
    }
  }
  if (!status) {
    loom_tensor_t* tensor = NULL;
    status = loom_context_resolve(context, x, &tensor);
    if (!status && *(float*)loom_tensor_data(tensor) != 1.0f + kOps) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "wrong sum %f",
                                *(float*)loom_tensor_data(tensor));
    }
    loom_tensor_release(tensor);
  }
  loom_tensor_handle_release(x);
  loom_eager_op_destroy(op);
  loom_status_t exited = loom_context_exit_scope(context);
  if (!status) status = exited;
  if (status) {
    char text[512];
    loom_status_format(status, text, sizeof(text));
    fprintf(stderr, "worker failed: %s\n", text);
    loom_status_free(status);
    return (void*)1;
  }
  return NULL;
}

static void run_threads(bool context_async, bool thread_async) {
  shared_t shared;
  memset(&shared, 0, sizeof(shared));
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = context_async;
  options.num_threads = 2;
  LOOM_ASSERT_OK(loom_context_create(&options, &shared.context));
  shared.thread_async = thread_async;
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_create(shared.context, NULL, &shared.logging));
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &scalar, &tensor));
  *(float*)loom_tensor_data(tensor) = 1.0f;
  LOOM_ASSERT_OK(loom_context_new_handle(shared.context, tensor, &shared.one));
  loom_tensor_release(tensor);
  // The variable, starting at 0.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(shared.context, "VarHandleOp", &op));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_shape(loom_eager_op_attrs(op), "shape", NULL, 0));
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &shared.var, 1, &count));
  LOOM_ASSERT_OK(loom_eager_op_reset(op, "Sub"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shared.one));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shared.one));
  loom_tensor_handle_t* zero = NULL;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &zero, 1, &count));
  LOOM_ASSERT_OK(loom_eager_op_reset(op, "AssignVariableOp"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shared.var));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, zero));
  LOOM_ASSERT_OK(loom_eager_op_execute(op, NULL, 0, &count));
  loom_tensor_handle_release(zero);

  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, worker, &shared), 0);
  }
  int failed = 0;
  for (int i = 0; i < kThreads; ++i) {
    void* result = NULL;
    pthread_join(threads[i], &result);
    if (result) failed++;
  }
  assert_int_equal(failed, 0);
  LOOM_ASSERT_OK(loom_context_wait(shared.context));
  assert_int_equal(loom_scope_logging_handler_count(shared.logging),
                   kThreads * kOps * 2);
  // Every thread's updates, none lost.
  LOOM_ASSERT_OK(loom_eager_op_reset(op, "ReadVariableOp"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shared.var));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_FLOAT));
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &value, 1, &count));
  LOOM_ASSERT_OK(loom_context_resolve(shared.context, value, &tensor));
  assert_true(*(float*)loom_tensor_data(tensor) == (float)(kThreads * kOps));
  loom_tensor_release(tensor);
  loom_tensor_handle_release(value);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shared.var);
  loom_tensor_handle_release(shared.one);
  loom_op_handler_release(shared.logging);
  loom_context_destroy(shared.context);
}

static void threads_on_a_synchronous_context(void** state) {
  (void)state;
  run_threads(false, false);
}

static void threads_on_an_asynchronous_context(void** state) {
  (void)state;
  run_threads(true, true);
}

static void asynchronous_threads_on_a_synchronous_context(void** state) {
  (void)state;
  run_threads(false, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_on_a_synchronous_context),
      cmocka_unit_test(threads_on_an_asynchronous_context),
      cmocka_unit_test(asynchronous_threads_on_a_synchronous_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
