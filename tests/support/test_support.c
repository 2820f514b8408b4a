// Status assertions, the fault-injection sweep and float scalars.

#include "test_support.h"

#include <math.h>

#include "loom/program.h"

void loom_test_check_status(loom_status_t status, loom_status_code_t code,
                            const char* substring, const char* expression,
                            const char* file, int line) {
  char text[1024];
  loom_status_format(status, text, sizeof(text));
  bool code_ok = loom_status_code(status) == code;
  bool message_ok =
      !substring || strstr(loom_status_message(status), substring) != NULL;
  loom_status_free(status);
  if (!code_ok || !message_ok) {
    // _fail does not return: say what went wrong first.
    print_error("%s:%d: %s returned '%s'; expected %s%s%s\n", file, line,
                expression, text, loom_status_code_name(code),
                substring ? " containing " : "", substring ? substring : "");
    _fail(file, line);
  }
}

int64_t loom_test_fault_sweep(loom_test_operation_fn_t operation, void* context,
                              loom_test_sweep_mode_t mode) {
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);

  loom_fault_allocator_fail_nth(fault, 0);
  LOOM_ASSERT_OK(operation(allocator, context));
  int64_t count = loom_fault_allocator_allocation_count(fault);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  if (count == 0) {
    fail_msg("the operation allocated nothing through the sweep's allocator");
  }

  for (int64_t i = 1; i <= count; ++i) {
    int64_t injected_before = loom_fault_allocator_injected_failures(fault);
    loom_fault_allocator_fail_nth(fault, i);
    loom_status_t status = operation(allocator, context);
    bool injected =
        loom_fault_allocator_injected_failures(fault) > injected_before;
    int64_t attempts = loom_fault_allocator_allocation_count(fault);
    int64_t live = loom_fault_allocator_live_count(fault);
    bool returned_ok = status == NULL;
    loom_status_free(status);
    if (live != 0) {
      fail_msg("allocation %lld of %lld failed and %lld blocks leaked",
               (long long)i, (long long)count, (long long)live);
    }
    if (!injected) {
      fail_msg(
          "allocation %lld of %lld was never requested (that run made "
          "%lld): the operation must allocate the same way every time",
          (long long)i, (long long)count, (long long)attempts);
    }
    if (mode == LOOM_TEST_SWEEP_STRICT && returned_ok) {
      fail_msg("allocation %lld of %lld failed but the operation returned OK",
               (long long)i, (long long)count);
    }
  }
  loom_fault_allocator_destroy(fault);
  return count;
}

loom_tensor_handle_t* loom_test_scalar(loom_context_t* context, float value) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  *(float*)loom_tensor_data(tensor) = value;
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

loom_tensor_handle_t* loom_test_int32_scalar(loom_context_t* context,
                                             int32_t value) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  *(int32_t*)loom_tensor_data(tensor) = value;
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

loom_status_t loom_test_collective(loom_context_t* context, const char* name,
                                   loom_tensor_handle_t* input,
                                   int32_t group_size, int32_t group_key,
                                   int32_t instance_key, const char* merge,
                                   const char* final_op, float timeout,
                                   loom_tensor_handle_t** out) {
  loom_tensor_handle_t* inputs[] = {
      input, loom_test_int32_scalar(context, group_size),
      loom_test_int32_scalar(context, group_key),
      loom_test_int32_scalar(context, instance_key)};
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(context, name, &op);
  for (int i = 0; i < 4 && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  loom_op_attrs_t* attrs = status ? NULL : loom_eager_op_attrs(op);
  if (!status && merge) {
    status = loom_op_attrs_set_string(attrs, "merge_op", merge, strlen(merge));
  }
  if (!status && final_op) {
    status =
        loom_op_attrs_set_string(attrs, "final_op", final_op, strlen(final_op));
  }
  if (!status) {
    status = loom_op_attrs_set_f32(attrs, "timeout_seconds", timeout);
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 1; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return status;
}

loom_status_t loom_test_collective_reduce(
    loom_context_t* context, loom_tensor_handle_t* input, int32_t group_size,
    int32_t group_key, int32_t instance_key, const char* merge,
    const char* final_op, float timeout, loom_tensor_handle_t** out) {
  return loom_test_collective(context, "CollectiveReduceV2", input, group_size,
                              group_key, instance_key, merge, final_op, timeout,
                              out);
}

float loom_test_scalar_value(loom_context_t* context,
                             loom_tensor_handle_t* handle) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, handle, &tensor));
  float value = *(float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return value;
}

int loom_test_host_setup(int32_t num_threads, loom_host_context_t** out_host) {
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = num_threads;
  LOOM_ASSERT_OK(loom_host_context_create(&options, out_host));
  return 0;
}

int loom_test_host_teardown(loom_host_context_t** host) {
  loom_host_context_destroy(*host);
  *host = NULL;
  return 0;
}

loom_tensor_handle_t* loom_test_tensor(loom_context_t* context,
                                       loom_dtype_t dtype, const float* values,
                                       int32_t rank, const int64_t* dims) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(), dtype,
                                          &shape, &tensor));
  int64_t n = loom_tensor_num_elements(tensor);
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == LOOM_DTYPE_DOUBLE) {
      ((double*)data)[i] = values[i];
    } else if (dtype == LOOM_DTYPE_INT32) {
      ((int32_t*)data)[i] = (int32_t)values[i];
    } else {
      ((float*)data)[i] = values[i];
    }
  }
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

void loom_test_expect_values(loom_context_t* context,
                             loom_tensor_handle_t* handle,
                             const float* expected, int64_t count) {
  loom_test_expect_values_near(context, handle, expected, count, 0.0);
}

void loom_test_expect_values_near(loom_context_t* context,
                                  loom_tensor_handle_t* handle,
                                  const float* expected, int64_t count,
                                  double tolerance) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), count);
  bool is_double = loom_tensor_dtype(tensor) == LOOM_DTYPE_DOUBLE;
  const void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    double actual =
        is_double ? ((const double*)data)[i] : (double)((const float*)data)[i];
    double want = (double)expected[i];
    if (actual != want && !(fabs(actual - want) <= tolerance)) {
      loom_tensor_release(tensor);
      fail_msg("element %lld: %.9g, expected %.9g", (long long)i, actual, want);
    }
  }
  loom_tensor_release(tensor);
}

loom_status_t loom_test_run2(loom_context_t* context, const char* name,
                             const char* f, loom_tensor_handle_t* x,
                             loom_tensor_handle_t* y,
                             loom_tensor_handle_t** out) {
  *out = NULL;
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status = loom_ok_status();
  if (f) {
    status = loom_op_attrs_set_func(loom_eager_op_attrs(op), "f", f, strlen(f));
  }
  if (!status && x) status = loom_eager_op_add_input(op, x);
  if (!status && y) status = loom_eager_op_add_input(op, y);
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

loom_function_t* loom_test_mul_add_function(const char* name,
                                            const char* type_attr) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), name, &b));
  loom_dtype_t dtype = type_attr ? LOOM_DTYPE_INVALID : LOOM_DTYPE_FLOAT;
  if (type_attr) {
    char attr[64];
    snprintf(attr, sizeof(attr), "%s: {float, double}", type_attr);
    LOOM_ASSERT_OK(loom_function_builder_add_attr(b, attr));
  }
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", dtype, type_attr, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", dtype, type_attr, NULL));
  const char* mul_inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "mul", "Mul", mul_inputs, 2,
                                                NULL, NULL));
  const char* add_inputs[] = {"mul:z:0", "x:0"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "add", "AddV2", add_inputs,
                                                2, NULL, NULL));
  if (type_attr) {
    LOOM_ASSERT_OK(
        loom_function_builder_set_node_placeholder(b, "mul", "T", type_attr));
    LOOM_ASSERT_OK(
        loom_function_builder_set_node_placeholder(b, "add", "T", type_attr));
  }
  LOOM_ASSERT_OK(
      loom_function_builder_add_output(b, "r", dtype, type_attr, "add:z:0"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  return function;
}

void loom_test_run_program(loom_context_t* context, const char* file,
                           const char* text, size_t size, const char* name,
                           loom_tensor_handle_t** arguments, int n,
                           loom_tensor_handle_t** results, int m) {
  loom_program_t* program = NULL;
  loom_program_location_t where;
  LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), file, text, size,
                                    &program, &where));
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options,
                                           loom_context_host(context));
  loom_program_executor_t* executor = NULL;
  LOOM_ASSERT_OK(loom_program_executor_create(&options, &executor));
  loom_async_value_t* values[4] = {NULL};
  loom_async_value_t* returned[4] = {NULL};
  assert_true(n <= 4 && m <= 4);
  for (int i = 0; i < n; ++i) {
    LOOM_ASSERT_OK(
        loom_program_value_create(loom_allocator_system(), &values[i]));
    LOOM_ASSERT_OK(
        loom_program_value_set_tensor_handle(values[i], arguments[i]));
  }
  LOOM_ASSERT_OK(loom_program_executor_call(executor, program, name, values, n,
                                            returned, m));
  loom_program_executor_quiesce(executor);
  for (int k = 0; k < m; ++k) {
    const loom_program_value_t* value = loom_program_value_get(returned[k]);
    assert_non_null(value);
    results[k] = value->u.tensor_handle;
    loom_tensor_handle_retain(results[k]);
    loom_async_value_release(returned[k]);
  }
  for (int i = 0; i < n; ++i) loom_async_value_release(values[i]);
  loom_program_executor_destroy(executor);
  loom_program_destroy(program);
}
