// The eager front end under allocation failures: every allocation of a
// context's life — creation, a handler scope and its merge, ops built and
// executed, a variable, resolving — fails once in turn; each run must end
// with a clean error (or recover) and leave nothing allocated.

#include <stdlib.h>

#include "loom/handlers.h"
#include "loom/loom.h"
#include "test_support.h"

static loom_status_t new_scalar(loom_context_t* context, float value,
                                loom_tensor_handle_t** out) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &tensor));
  *(float*)loom_tensor_data(tensor) = value;
  loom_status_t status = loom_context_new_handle(context, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

// Runs op `name` on `a` (and `b`), the result (if any) into *out.
static loom_status_t run(loom_context_t* context, const char* name,
                         loom_tensor_handle_t* a, loom_tensor_handle_t* b,
                         loom_dtype_t dtype, loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status = loom_ok_status();
  if (a) status = loom_eager_op_add_input(op, a);
  if (!status && b) status = loom_eager_op_add_input(op, b);
  if (!status && dtype != LOOM_DTYPE_INVALID) {
    status = loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype", dtype);
  }
  if (!status && !a) {
    status = loom_op_attrs_set_shape(loom_eager_op_attrs(op), "shape", NULL, 0);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out, out ? 1 : 0, &count);
  loom_eager_op_destroy(op);
  return status;
}

static loom_status_t eager_session(loom_allocator_t allocator, void* unused) {
  (void)unused;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.allocator = allocator;
  options.num_threads = 0;  // deterministic: work runs on waiting threads
  loom_context_t* context = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_create(&options, &context));
  loom_op_handler_t* logging = NULL;
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  loom_tensor_handle_t* var = NULL;
  loom_tensor_handle_t* value = NULL;
  loom_tensor_t* tensor = NULL;
  bool in_scope = false;
  loom_status_t status =
      loom_scope_logging_handler_create(context, NULL, &logging);
  if (!status) status = loom_context_enter_scope(context, logging);
  in_scope = !status;
  if (!status) status = new_scalar(context, 2.0f, &x);
  if (!status) status = run(context, "Mul", x, x, LOOM_DTYPE_INVALID, &y);
  if (!status) status = loom_context_resolve(context, y, &tensor);
  if (!status && *(float*)loom_tensor_data(tensor) != 4.0f) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "wrong product");
  }
  if (!status) {
    status = run(context, "VarHandleOp", NULL, NULL, LOOM_DTYPE_FLOAT, &var);
  }
  if (!status) {
    status = run(context, "AssignVariableOp", var, y, LOOM_DTYPE_INVALID, NULL);
  }
  if (!status) {
    status =
        run(context, "ReadVariableOp", var, NULL, LOOM_DTYPE_FLOAT, &value);
  }
  if (in_scope) {
    loom_status_t exited = loom_context_exit_scope(context);
    if (status) {
      loom_status_free(exited);
    } else {
      status = exited;
    }
  }
  loom_tensor_release(tensor);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(var);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(logging);
  loom_context_destroy(context);
  return status;
}

static void every_allocation_failure_is_clean(void** state) {
  (void)state;
  int64_t count =
      loom_test_fault_sweep(eager_session, NULL, LOOM_TEST_SWEEP_TOLERANT);
  assert_true(count > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_allocation_failure_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
