// Tracing ops into functions (loom/trace.h): a traced function called by
// name gives the eager values; traced values are symbolic (dtype and shape
// from shape inference, no data); eager tensors are captured and bound by
// the function; a gradient tape inside the trace adds the gradient ops to
// the function; stateful ops keep their order; a trace inside a trace is a
// call in the outer body, whose results have the shapes of the callee's
// body for the call's input shapes; a variable read has the variable's
// declared shape (its handle data); printed programs note the inferred
// types and call the functions they use, threading a chain through the
// calls of stateful functions, and run as `loom run` runs them; the
// errors; and releasing functions, traces and contexts in any order.
//
// Reference values from NumPy / PyTorch (float32):
//   (x*y+x)*c = [3.75, 10, -0.5]
//   x = [1.5, -2, 0.5], y = [0.25, 4, -3], c = [2, -1, 0.5]
//   x*y+x = [1.875, -10, -1]; x*c+c = [5, 1, 0.75]
//   d(sum(x*x + x*y))/dx = 2x+y = [3.25, 0, -2]
//   v = [1, 2, 3]: v+x = [2.5, 0, 3.5]; v+2x = [4, -2, 4]
//   V = arange(12).reshape(3, 4) * 0.5, W = arange(8).reshape(4, 2) - 3:
//   V @ W = [[5, 8], [5, 16], [5, 24]]
//   A = [[1.5, -2, 0.5], [0.25, 4, -3]]:
//   A @ A.T = [[6.5, -9.125], [-9.125, 25.0625]]

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/loom.h"
#include "loom/program.h"
#include "loom/trace.h"
#include "test_support.h"

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kC[3] = {2, -1, 0.5f};

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_create(NULL, &g_context));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

static loom_tensor_handle_t* vector(loom_context_t* context,
                                    const float* values) {
  int64_t three = 3;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &three, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(float) * 3);
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static void expect_values(loom_context_t* context, loom_tensor_handle_t* handle,
                          const float* expected) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), 3);
  for (int i = 0; i < 3; ++i) {
    assert_true(((const float*)loom_tensor_data(tensor))[i] == expected[i]);
  }
  loom_tensor_release(tensor);
}

// Runs op `name` on x (and y when not NULL) with a dtype attr `dtype_attr`
// (NULL: none); one result, or none when `out` is NULL.
static loom_status_t run(loom_context_t* context, const char* name,
                         loom_tensor_handle_t* x, loom_tensor_handle_t* y,
                         const char* dtype_attr, loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status = loom_ok_status();
  if (dtype_attr) {
    status = loom_op_attrs_set_dtype(loom_eager_op_attrs(op), dtype_attr,
                                     LOOM_DTYPE_FLOAT);
  }
  if (!status && x) status = loom_eager_op_add_input(op, x);
  if (!status && y) status = loom_eager_op_add_input(op, y);
  int32_t count = 0;
  loom_tensor_handle_t* result = NULL;
  if (!status) status = loom_eager_op_execute(op, &result, 1, &count);
  loom_eager_op_destroy(op);
  if (out) {
    *out = result;
  } else {
    loom_tensor_handle_release(result);
  }
  return status;
}

static loom_tensor_handle_t* op2(const char* name, loom_tensor_handle_t* x,
                                 loom_tensor_handle_t* y) {
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_OK(run(g_context, name, x, y, NULL, &result));
  return result;
}

static loom_shape_t vector_shape(int64_t size) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &size, 1));
  return shape;
}

// A float matrix of rows x cols holding values.
static loom_tensor_handle_t* matrix(int64_t rows, int64_t cols,
                                    const float* values) {
  int64_t dims[2] = {rows, cols};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values,
         sizeof(float) * (size_t)(rows * cols));
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// A variable of float and shape dims[0, rank) (rank LOOM_UNKNOWN_RANK:
// unknown), made by VarHandleOp where the thread's scopes place it.
static loom_tensor_handle_t* new_variable(const char* shared_name,
                                          const int64_t* dims, int32_t rank) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, "dtype", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(attrs, "shape", dims, rank));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "shared_name", shared_name,
                                          strlen(shared_name)));
  loom_tensor_handle_t* variable = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &variable, 1, &count));
  loom_eager_op_destroy(op);
  return variable;
}

static void expect_shape(loom_tensor_handle_t* handle, const int64_t* dims,
                         int32_t rank) {
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(handle, &metadata));
  assert_int_equal(metadata.shape.rank, rank);
  for (int32_t d = 0; d < rank; ++d) {
    assert_int_equal(loom_shape_dims(&metadata.shape)[d], dims[d]);
  }
}

// Traces f(x, y) = x * y + x over float vectors of 3.
static loom_function_t* trace_f(const char* name) {
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, name, &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "y", LOOM_DTYPE_FLOAT, &shape, &y));
  loom_tensor_handle_t* product = op2("Mul", x, y);
  loom_tensor_handle_t* sum = op2("AddV2", product, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_int_equal(loom_trace_num_nodes(trace), 2);
  assert_int_equal(loom_trace_num_parameters(trace), 2);
  assert_int_equal(loom_trace_num_captures(trace), 0);
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &sum, 1, &function));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(product);
  loom_tensor_handle_release(sum);
  loom_op_handler_release(trace);
  return function;
}

static void a_traced_function_gives_the_eager_values(void** state) {
  (void)state;
  loom_function_t* function = trace_f("traced_f");
  assert_int_equal(loom_function_num_nodes(function), 2);
  assert_int_equal(loom_function_signature(function)->num_inputs, 2);
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  loom_tensor_handle_t* product = op2("Mul", x, y);
  loom_tensor_handle_t* eager = op2("AddV2", product, x);
  loom_tensor_handle_t* traced = op2("traced_f", x, y);
  static const float kExpected[3] = {1.875f, -10, -1};
  expect_values(g_context, eager, kExpected);
  expect_values(g_context, traced, kExpected);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "traced_f"));
  loom_tensor_handle_release(traced);
  loom_tensor_handle_release(eager);
  loom_tensor_handle_release(product);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
}

static void traced_values_are_symbolic(void** state) {
  (void)state;
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "symbolic", &trace));
  assert_true(loom_trace_is_trace(trace));
  assert_string_equal(loom_op_handler_type_name(trace), "TRACE");
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  int64_t dims[2] = {LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_tensor_handle_t* doubled = op2("AddV2", x, x);
  loom_tensor_handle_t* shape_of = NULL;
  LOOM_ASSERT_OK(run(g_context, "Shape", x, NULL, NULL, &shape_of));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_true(loom_trace_is_symbolic(doubled));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(doubled, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(metadata.shape.rank, 2);
  assert_int_equal(metadata.shape.dims[0], LOOM_UNKNOWN_DIM);
  assert_int_equal(metadata.shape.dims[1], 3);
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(shape_of, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_INT32);
  assert_int_equal(metadata.shape.rank, 1);
  assert_int_equal(metadata.shape.dims[0], 2);
  // A symbolic value has no data.
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(g_context, doubled, &tensor),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "cannot read the value of symbolic tensor "
                     "'AddV2_0:z:0' of trace 'symbolic'");
  char text[256];
  loom_tensor_handle_debug_string(doubled, text, sizeof(text));
  assert_non_null(strstr(text, "'AddV2_0:z:0' of trace 'symbolic'"));
  loom_tensor_handle_release(shape_of);
  loom_tensor_handle_release(doubled);
  loom_tensor_handle_release(x);
  loom_op_handler_release(trace);
}

// f(x) = x * c + c with c an eager tensor: captured once, bound by the
// function at each call.
static void eager_tensors_are_captured(void** state) {
  (void)state;
  loom_tensor_handle_t* c = vector(g_context, kC);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "captures", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, NULL, LOOM_DTYPE_FLOAT, NULL, &x));
  loom_tensor_handle_t* product = op2("Mul", x, c);
  loom_tensor_handle_t* sum = op2("AddV2", product, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_int_equal(loom_trace_num_captures(trace), 1);
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &sum, 1, &function));
  loom_tensor_handle_release(product);
  loom_tensor_handle_release(sum);
  loom_tensor_handle_release(x);
  loom_op_handler_release(trace);
  loom_tensor_handle_release(c);  // the function keeps it
  assert_int_equal(loom_function_signature(function)->num_inputs, 1);
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_t* input = vector(g_context, kX);
  loom_tensor_handle_t* result = op2("captures", input, NULL);
  static const float kExpected[3] = {5, 1, 0.75f};
  expect_values(g_context, result, kExpected);
  loom_tensor_handle_release(result);
  // PartitionedCall passes the parameters only, too.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "PartitionedCall", &op));
  LOOM_ASSERT_OK(loom_op_attrs_set_func(loom_eager_op_attrs(op), "f",
                                        "captures", strlen("captures")));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, input));
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &count));
  expect_values(g_context, result, kExpected);
  loom_tensor_handle_release(result);
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "captures"));
  loom_tensor_handle_release(input);
}

// The seed's trace-time gradient: a tape entered inside the trace records
// the traced ops and its gradient adds the gradient ops to the function.
static void a_tape_inside_a_trace_adds_the_gradient(void** state) {
  (void)state;
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "grad_f", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "y", LOOM_DTYPE_FLOAT, &shape, &y));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  loom_tensor_handle_t* square = op2("Mul", x, x);
  loom_tensor_handle_t* product = op2("Mul", x, y);
  loom_tensor_handle_t* sum = op2("AddV2", square, product);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  int32_t forward_nodes = loom_trace_num_nodes(trace);
  loom_tensor_handle_t* grad = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &sum, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &grad));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_true(loom_trace_is_symbolic(grad));
  assert_true(loom_trace_num_nodes(trace) > forward_nodes);
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &grad, 1, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_t* ex = vector(g_context, kX);
  loom_tensor_handle_t* ey = vector(g_context, kY);
  loom_tensor_handle_t* result = op2("grad_f", ex, ey);
  static const float kExpected[3] = {3.25f, 0, -2};
  expect_values(g_context, result, kExpected);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "grad_f"));
  loom_tensor_handle_t* handles[] = {result,  ex,  ey, grad, square,
                                     product, sum, x,  y};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
  loom_op_handler_release(tape);
  loom_op_handler_release(trace);
}

// v = v + x, read v, v = v + x, read v: the reads see the assignments in
// program order, at every call.
static void stateful_ops_keep_their_order(void** state) {
  (void)state;
  loom_tensor_handle_t* v0 = NULL;
  static const float kV[3] = {1, 2, 3};
  v0 = vector(g_context, kV);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  int64_t three = 3;
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, "dtype", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(attrs, "shape", &three, 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "shared_name", "trace_v", 7));
  loom_tensor_handle_t* variable = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &variable, 1, &count));
  loom_eager_op_destroy(op);

  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "stateful", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_tensor_handle_t* reads[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* value = NULL;
    LOOM_ASSERT_OK(
        run(g_context, "ReadVariableOp", variable, NULL, "dtype", &value));
    loom_tensor_handle_t* sum = op2("AddV2", value, x);
    LOOM_ASSERT_OK(
        run(g_context, "AssignVariableOp", variable, sum, "dtype", NULL));
    LOOM_ASSERT_OK(
        run(g_context, "ReadVariableOp", variable, NULL, "dtype", &reads[i]));
    loom_tensor_handle_release(sum);
    loom_tensor_handle_release(value);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_int_equal(loom_trace_num_captures(trace), 1);
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, reads, 2, &function));
  assert_int_equal(loom_function_num_nodes(function), 8);
  char* text = NULL;
  LOOM_ASSERT_STATUS(
      loom_trace_print_program(g_context, function, loom_allocator_system(),
                               &text, NULL),
      LOOM_STATUS_UNIMPLEMENTED,
      "function 'stateful': captured input 0: a resource (a variable's "
      "handle) cannot be written as a program");
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_op_handler_release(trace);
  loom_tensor_handle_release(reads[0]);
  loom_tensor_handle_release(reads[1]);
  loom_tensor_handle_release(x);

  // The variable holds v0; each call adds x twice.
  LOOM_ASSERT_OK(
      run(g_context, "AssignVariableOp", variable, v0, "dtype", NULL));
  loom_tensor_handle_t* input = vector(g_context, kX);
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "stateful", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, input));
  loom_tensor_handle_t* results[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_eager_op_execute(op, results, 2, &count));
  assert_int_equal(count, 2);
  static const float kFirst[3] = {2.5f, 0, 3.5f};
  static const float kSecond[3] = {4, -2, 4};
  expect_values(g_context, results[0], kFirst);
  expect_values(g_context, results[1], kSecond);
  loom_tensor_handle_release(results[0]);
  loom_tensor_handle_release(results[1]);
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "stateful"));
  loom_tensor_handle_release(input);
  loom_tensor_handle_release(variable);
  loom_tensor_handle_release(v0);
}

static void errors_name_what_is_wrong(void** state) {
  (void)state;
  loom_tensor_handle_t* eager = vector(g_context, kX);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_STATUS(loom_trace_create(g_context, "bad name!", &trace),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "invalid function name 'bad name!'");
  LOOM_ASSERT_STATUS(loom_trace_create(NULL, "f", &trace),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_trace_create: context is NULL");
  LOOM_ASSERT_OK(loom_trace_create(g_context, "errors", &trace));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_STATUS(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_INVALID, NULL, &x),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_trace_add_parameter: dtype 0 is not a valid dtype");
  LOOM_ASSERT_STATUS(
      loom_trace_add_parameter(loom_context_cpu(g_context), "x",
                               LOOM_DTYPE_FLOAT, NULL, &x),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_trace_add_parameter: the handler is not a trace handler");
  LOOM_ASSERT_STATUS(
      loom_trace_add_parameter(trace, "captured_0", LOOM_DTYPE_FLOAT, NULL, &x),
      LOOM_STATUS_INVALID_ARGUMENT, "parameter name 'captured_0' is invalid");
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, NULL, &x));
  loom_tensor_handle_t* again = NULL;
  LOOM_ASSERT_STATUS(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, NULL, &again),
      LOOM_STATUS_ALREADY_EXISTS, "trace 'errors' has a parameter 'x'");
  loom_tensor_handle_t* y = op2("Neg", x, NULL);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_STATUS(loom_trace_finish(trace, &eager, 1, &function),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "output 0 of trace 'errors' is not a value of the trace");
  LOOM_ASSERT_OK(loom_trace_finish(trace, &y, 1, &function));
  loom_function_t* twice = NULL;
  LOOM_ASSERT_STATUS(loom_trace_finish(trace, &y, 1, &twice),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "trace 'errors' is finished");
  // A value of one trace is no input of another's ops.
  loom_op_handler_t* other = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "other", &other));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, other));
  loom_tensor_handle_t* nested = NULL;
  LOOM_ASSERT_STATUS(run(g_context, "Neg", x, NULL, NULL, &nested),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Neg: inputs are placed on two different op handlers");
  loom_tensor_handle_release(nested);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  LOOM_ASSERT_STATUS(loom_trace_capture(other, x, &nested),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "trace 'other': cannot capture a symbolic value of "
                     "trace 'errors'");
  loom_op_handler_release(other);
  // Ops on a finished trace fail.
  loom_tensor_handle_t* z = NULL;
  LOOM_ASSERT_STATUS(run(g_context, "Neg", y, NULL, NULL, &z),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "Neg: trace 'errors' is finished");
  loom_tensor_handle_release(z);
  // A call with an int32 input where the function takes float.
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  int64_t three = 3;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &three, 1));
  loom_tensor_t* ints = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT32, &shape, &ints));
  memset(loom_tensor_data(ints), 0, sizeof(int32_t) * 3);
  loom_tensor_handle_t* wrong = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, ints, &wrong));
  loom_tensor_release(ints);
  LOOM_ASSERT_STATUS(
      run(g_context, "errors", wrong, NULL, NULL, &z),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'errors': input 0 ('x') has dtype int32, expected float");
  loom_tensor_handle_release(z);
  loom_tensor_handle_release(wrong);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "errors"));
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(eager);
  loom_op_handler_release(trace);
}

// A function keeps its captures alive past its trace and its context; a
// trace's values outlive the trace handler's scope and the function.
static void release_in_any_order(void** state) {
  (void)state;
  for (int order = 0; order < 3; ++order) {
    loom_context_t* context = NULL;
    LOOM_ASSERT_OK(loom_context_create(NULL, &context));
    loom_tensor_handle_t* c = vector(context, kC);
    loom_op_handler_t* trace = NULL;
    LOOM_ASSERT_OK(loom_trace_create(context, "released", &trace));
    LOOM_ASSERT_OK(loom_context_enter_scope(context, trace));
    loom_tensor_handle_t* x = NULL;
    LOOM_ASSERT_OK(
        loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, NULL, &x));
    loom_tensor_handle_t* y = NULL;
    LOOM_ASSERT_OK(run(context, "Mul", x, c, NULL, &y));
    LOOM_ASSERT_OK(loom_context_exit_scope(context));
    loom_function_t* function = NULL;
    LOOM_ASSERT_OK(loom_trace_finish(trace, &y, 1, &function));
    LOOM_ASSERT_OK(loom_context_add_function(context, function));
    loom_tensor_handle_release(c);
    if (order == 0) {
      loom_op_handler_release(trace);
      loom_function_release(function);
      loom_tensor_handle_release(x);
      loom_tensor_handle_release(y);
      loom_context_destroy(context);
    } else if (order == 1) {
      loom_context_destroy(context);
      loom_function_release(function);
      loom_tensor_handle_release(y);
      loom_op_handler_release(trace);
      loom_tensor_handle_release(x);
    } else {
      loom_tensor_handle_release(x);
      loom_context_destroy(context);
      loom_op_handler_release(trace);
      loom_tensor_handle_release(y);
      loom_function_release(function);
    }
  }
}

// TraceAndExecute: the ops run while they are recorded, so their values
// can be read in the trace; the function gives the same values.
static void an_executing_trace_also_runs_the_ops(void** state) {
  (void)state;
  loom_tensor_handle_t* c = vector(g_context, kC);
  loom_tensor_handle_t* ex = vector(g_context, kX);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create_executing(g_context, "executed", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(loom_trace_add_parameter_value(trace, "x", ex, &x));
  loom_tensor_handle_t* product = op2("Mul", x, c);
  loom_tensor_handle_t* sum = op2("AddV2", product, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_true(loom_trace_is_symbolic(sum));
  static const float kExpected[3] = {5, 1, 0.75f};
  expect_values(g_context, sum, kExpected);
  // An op that fails while executing is an error and is not recorded.
  loom_tensor_t* seven = NULL;
  loom_shape_t scalar;
  LOOM_ASSERT_OK(loom_shape_initialize(&scalar, NULL, 0));
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT32, &scalar, &seven));
  *(int32_t*)loom_tensor_data(seven) = 7;
  loom_tensor_handle_t* index = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, seven, &index));
  loom_tensor_release(seven);
  loom_tensor_handle_t* bad = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  LOOM_ASSERT_STATUS(run(g_context, "Gather", sum, index, NULL, &bad),
                     LOOM_STATUS_INVALID_ARGUMENT, "7");
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_release(bad);
  loom_tensor_handle_release(index);
  assert_int_equal(loom_trace_num_nodes(trace), 2);
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &sum, 1, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_t* called = op2("executed", ex, NULL);
  expect_values(g_context, called, kExpected);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "executed"));
  loom_tensor_handle_t* handles[] = {called, sum, product, x, ex, c};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
  loom_op_handler_release(trace);
}

// f(x, y) = (x * y + x) * c printed as a program, parsed back and run by
// the program executor with the same values: (x*y+x)*c = [3.75, 10, -0.5].
static void a_traced_function_prints_as_a_program(void** state) {
  (void)state;
  loom_tensor_handle_t* c = vector(g_context, kC);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "printed", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "y", LOOM_DTYPE_FLOAT, &shape, &y));
  loom_tensor_handle_t* product = op2("Mul", x, y);
  loom_tensor_handle_t* sum = op2("AddV2", product, x);
  loom_tensor_handle_t* scaled = op2("Mul", sum, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &scaled, 1, &function));
  char* text = NULL;
  size_t size = 0;
  LOOM_ASSERT_OK(loom_trace_print_program(
      g_context, function, loom_allocator_system(), &text, &size));
  assert_int_equal(size, strlen(text));
  assert_non_null(strstr(text,
                         "func.func @printed(%arg0: "
                         "!corert.tensorhandle, %arg1: "
                         "!corert.tensorhandle) -> "
                         "(!corert.tensorhandle)"));
  assert_non_null(strstr(text,
                         "%n0_0 = corert.executeop(%cpu) "
                         "\"tf.Mul\"(%arg0, %arg1) {T = f32} : 1"));
  assert_non_null(strstr(text,
                         "%cap0 = corert.const_dense_tensor "
                         "dense<[2.0, -1.0, 0.5]> : tensor<3xf32>"));
  loom_tensor_handle_t* arguments[2] = {vector(g_context, kX),
                                        vector(g_context, kY)};
  loom_tensor_handle_t* ran = NULL;
  loom_test_run_program(g_context, "printed.mlir", text, size, "printed",
                        arguments, 2, &ran, 1);
  static const float kExpected[3] = {3.75f, 10, -0.5f};
  expect_values(g_context, ran, kExpected);
  loom_tensor_handle_release(ran);
  // The same as calling the traced function.
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_tensor_handle_t* ex = vector(g_context, kX);
  loom_tensor_handle_t* ey = vector(g_context, kY);
  loom_tensor_handle_t* called = op2("printed", ex, ey);
  expect_values(g_context, called, kExpected);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "printed"));
  loom_allocator_free(loom_allocator_system(), text);
  loom_function_release(function);
  loom_tensor_handle_t* handles[] = {called, ex,  ey,     c,      x,
                                     y,      sum, scaled, product};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
  loom_op_handler_release(trace);
}

// A trace inside a trace: the inner function, called in the outer trace,
// is one node of the outer body (a call), not its body inlined; the outer
// function gives the values of the same ops run eagerly.
static void a_trace_inside_a_trace_is_a_call(void** state) {
  (void)state;
  loom_op_handler_t* outer = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "outer", &outer));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, outer));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(outer, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(outer, "y", LOOM_DTYPE_FLOAT, &shape, &y));
  loom_function_t* inner = trace_f("inner_f");  // traced in outer's scope
  LOOM_ASSERT_OK(loom_context_add_function(g_context, inner));
  loom_function_release(inner);
  loom_tensor_handle_t* called = op2("inner_f", x, y);
  assert_true(loom_trace_is_symbolic(called));
  loom_tensor_handle_t* sum = op2("AddV2", called, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_int_equal(loom_trace_num_nodes(outer), 2);  // the call, AddV2
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(outer, &sum, 1, &function));
  assert_int_equal(loom_function_num_nodes(function), 2);
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_release(sum);
  loom_tensor_handle_release(called);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(outer);

  x = vector(g_context, kX);
  y = vector(g_context, kY);
  loom_tensor_handle_t* product = op2("Mul", x, y);
  loom_tensor_handle_t* f = op2("AddV2", product, x);
  loom_tensor_handle_t* eager = op2("AddV2", f, x);
  loom_tensor_handle_t* traced = op2("outer", x, y);
  loom_tensor_t* expected = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, eager, &expected));
  expect_values(g_context, traced, loom_tensor_data(expected));
  loom_tensor_release(expected);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "outer"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "inner_f"));
  loom_tensor_handle_t* handles[] = {traced, eager, f, product, x, y};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
}

// A variable read in a trace has the variable's declared shape (its
// handle data), and so has what is computed from it: V [3, 4] read and
// multiplied by W [4, 2] is [3, 2] while tracing, and the function gives
// NumPy's V @ W when called.
static void a_variable_read_has_the_variable_shape(void** state) {
  (void)state;
  static const int64_t kVDims[2] = {3, 4};
  loom_tensor_handle_t* variable = new_variable("shape_v", kVDims, 2);
  float v[12];
  for (int i = 0; i < 12; ++i) v[i] = (float)i * 0.5f;
  float w[8];
  for (int i = 0; i < 8; ++i) w[i] = (float)i - 3;
  loom_tensor_handle_t* initial = matrix(3, 4, v);
  LOOM_ASSERT_OK(
      run(g_context, "AssignVariableOp", variable, initial, "dtype", NULL));

  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "read_v", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  static const int64_t kWDims[2] = {4, 2};
  loom_shape_t w_shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&w_shape, kWDims, 2));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "w", LOOM_DTYPE_FLOAT, &w_shape, &x));
  loom_tensor_handle_t* read = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &read));
  assert_true(loom_trace_is_symbolic(read));
  expect_shape(read, kVDims, 2);
  loom_tensor_handle_t* product = op2("MatMul", read, x);
  static const int64_t kProductDims[2] = {3, 2};
  expect_shape(product, kProductDims, 2);
  // The assign's checks: the value's shape against the declared one (with
  // validate_shape), the dtypes.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "AssignVariableOp", &op));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "validate_shape", true));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, variable));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, product));
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, NULL, 0, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "AssignVariableOp: Trying to assign to variable with "
                     "tensor with wrong shape. Expected [3, 4] got [3, 2] "
                     "(input 'resource' is a variable of shape [3, 4], input "
                     "'value' has shape [3, 2])");
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "ReadVariableOp", &op));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, variable));
  loom_tensor_handle_t* wrong = NULL;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &wrong, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ReadVariableOp: Trying to read variable with wrong "
                     "dtype. Expected float got int32 (input 'resource' is a "
                     "variable of float, attr 'dtype' is int32)");
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &product, 1, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_op_handler_release(trace);

  loom_tensor_handle_t* eager_w = matrix(4, 2, w);
  loom_tensor_handle_t* called = op2("read_v", eager_w, NULL);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, called, &tensor));
  static const float kExpected[6] = {5, 8, 5, 16, 5, 24};
  assert_int_equal(loom_tensor_num_elements(tensor), 6);
  for (int i = 0; i < 6; ++i) {
    assert_true(((const float*)loom_tensor_data(tensor))[i] == kExpected[i]);
  }
  loom_tensor_release(tensor);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "read_v"));
  loom_tensor_handle_t* handles[] = {called, eager_w, product, read,
                                     x,      initial, variable};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
}

// A variable above rank 8 keeps its declared shape too (its dims spilled
// to the process's shape pool): a read in a trace has it.
static void a_variable_of_rank_10_read_has_its_shape(void** state) {
  (void)state;
  static const int64_t kVDims[10] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 3};
  loom_tensor_handle_t* variable = new_variable("rank10_v", kVDims, 10);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "read_rank10", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* read = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &read));
  assert_true(loom_trace_is_symbolic(read));
  expect_shape(read, kVDims, 10);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_release(read);
  loom_op_handler_release(trace);
  loom_tensor_handle_release(variable);
}

// A variable declared without a shape traces with an unknown shape; one
// made in the trace (VarHandleOp recorded) has its attrs' shape, which the
// printed program notes after each node.
static void a_variable_without_a_shape_traces_unknown(void** state) {
  (void)state;
  loom_tensor_handle_t* unshaped =
      new_variable("unshaped_v", NULL, LOOM_UNKNOWN_RANK);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "unshaped_read", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* read = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", unshaped, NULL, "dtype", &read));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(read, &metadata));
  assert_int_equal(metadata.shape.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &read, 1, &function));
  loom_function_release(function);
  loom_op_handler_release(trace);
  loom_tensor_handle_release(read);

  LOOM_ASSERT_OK(loom_trace_create(g_context, "make_v", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  static const int64_t kDims[2] = {2, 5};
  loom_tensor_handle_t* made = new_variable("traced_v", kDims, 2);
  assert_true(loom_trace_is_symbolic(made));
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, kDims, 2));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(run(g_context, "AssignVariableOp", made, x, "dtype", NULL));
  LOOM_ASSERT_OK(run(g_context, "ReadVariableOp", made, NULL, "dtype", &read));
  expect_shape(read, kDims, 2);
  loom_tensor_handle_t* negated = op2("Neg", read, NULL);
  expect_shape(negated, kDims, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  LOOM_ASSERT_OK(loom_trace_finish(trace, &negated, 1, &function));
  char* text = NULL;
  LOOM_ASSERT_OK(loom_trace_print_program(
      g_context, function, loom_allocator_system(), &text, NULL));
  assert_non_null(strstr(text,
                         "\"tf.ReadVariableOp\"(%n0_0) {dtype = f32} : 1  "
                         "// tensor<2x5xf32>"));
  assert_non_null(
      strstr(text, "\"tf.Neg\"(%n2_0) {T = f32} : 1  // tensor<2x5xf32>"));
  // The text still parses as a program.
  loom_program_t* program = NULL;
  loom_program_location_t where;
  LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), "make_v.mlir",
                                    text, strlen(text), &program, &where));
  loom_program_destroy(program);
  loom_allocator_free(loom_allocator_system(), text);
  loom_function_release(function);
  loom_op_handler_release(trace);
  loom_tensor_handle_t* handles[] = {negated, read, x, made, unshaped};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
}

// MatMul(a, a, transpose_b=true) where the scopes place it.
static loom_tensor_handle_t* gram(loom_tensor_handle_t* a) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "MatMul", &op));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "transpose_b", true));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &count));
  loom_eager_op_destroy(op);
  return result;
}

// Traces `name`(a) = body(a) with parameter a of `shape` (NULL: unknown),
// and adds it to the context.
static void trace_unary(const char* name, const loom_shape_t* shape,
                        loom_tensor_handle_t* (*body)(loom_tensor_handle_t*)) {
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, name, &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* a = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "a", LOOM_DTYPE_FLOAT, shape, &a));
  loom_tensor_handle_t* result = body(a);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &result, 1, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_op_handler_release(trace);
  loom_tensor_handle_release(result);
  loom_tensor_handle_release(a);
}

static loom_tensor_handle_t* negated_gram(loom_tensor_handle_t* b) {
  loom_tensor_handle_t* inner = op2("inner_gram", b, NULL);
  loom_tensor_handle_t* result = op2("Neg", inner, NULL);
  loom_tensor_handle_release(inner);
  return result;
}

// A call in a trace has the shapes of the callee's body specialised for
// the call's input shapes, through nested calls: inner_gram(a) = a @ a.T
// and middle(b) = -inner_gram(b) are traced for any shape; outer(x) =
// -middle(x) traced for x [2, 3] sees [2, 2] at each call, and its printed
// program (the callees first, the calls as tfrt.call) notes them and runs
// to NumPy's A @ A.T.
static void a_call_in_a_trace_has_the_callee_shapes(void** state) {
  (void)state;
  trace_unary("inner_gram", NULL, gram);
  trace_unary("middle", NULL, negated_gram);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "outer_gram", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  static const int64_t kXDims[2] = {2, 3};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, kXDims, 2));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_tensor_handle_t* called = op2("middle", x, NULL);
  assert_true(loom_trace_is_symbolic(called));
  static const int64_t kGramDims[2] = {2, 2};
  expect_shape(called, kGramDims, 2);
  loom_tensor_handle_t* result = op2("Neg", called, NULL);
  expect_shape(result, kGramDims, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &result, 1, &function));
  char* text = NULL;
  size_t size = 0;
  LOOM_ASSERT_OK(loom_trace_print_program(
      g_context, function, loom_allocator_system(), &text, &size));
  assert_int_equal(size, strlen(text));
  // The callees come first, each once, inferred for their own (unknown)
  // parameter shapes; the outer body for x [2, 3].
  const char* inner = strstr(text, "func.func @inner_gram(");
  const char* middle = strstr(text, "func.func @middle(");
  const char* outer = strstr(text, "func.func @outer_gram(");
  assert_non_null(inner);
  assert_non_null(middle);
  assert_non_null(outer);
  assert_true(inner < middle && middle < outer);
  assert_null(strstr(inner + 1, "func.func @inner_gram("));
  assert_non_null(strstr(inner,
                         "\"tf.MatMul\"(%arg0, %arg0) {T = f32, grad_a = "
                         "false, grad_b = false, transpose_a = false, "
                         "transpose_b = true} : 1  // tensor<?x?xf32>"));
  assert_non_null(strstr(middle,
                         "%n0_0 = tfrt.call @inner_gram(%arg0) : "
                         "(!corert.tensorhandle) -> !corert.tensorhandle  // "
                         "tensor<?x?xf32>"));
  assert_non_null(strstr(outer,
                         "%n0_0 = tfrt.call @middle(%arg0) : "
                         "(!corert.tensorhandle) -> !corert.tensorhandle  // "
                         "tensor<2x2xf32>"));
  assert_non_null(strstr(outer,
                         "\"tf.Neg\"(%n0_0) {T = f32} : 1  // "
                         "tensor<2x2xf32>"));
  // The program runs: A @ A.T.
  static const float kA[6] = {1.5f, -2, 0.5f, 0.25f, 4, -3};
  loom_tensor_handle_t* argument = matrix(2, 3, kA);
  loom_tensor_handle_t* got = NULL;
  loom_test_run_program(g_context, "gram.mlir", text, size, "outer_gram",
                        &argument, 1, &got, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, got, &tensor));
  loom_tensor_handle_release(got);
  static const float kExpected[4] = {6.5f, -9.125f, -9.125f, 25.0625f};
  assert_int_equal(loom_tensor_num_elements(tensor), 4);
  for (int i = 0; i < 4; ++i) {
    assert_true(((const float*)loom_tensor_data(tensor))[i] == kExpected[i]);
  }
  loom_tensor_release(tensor);
  loom_allocator_free(loom_allocator_system(), text);
  loom_function_release(function);
  loom_op_handler_release(trace);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "middle"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "inner_gram"));
  loom_tensor_handle_t* handles[] = {result, called, x};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
}

static loom_tensor_handle_t* negated(loom_tensor_handle_t* a) {
  return op2("Neg", a, NULL);
}

// A call whose input contradicts the callee's declared shape fails while
// tracing, as the call would, naming the trace, the function and the
// shapes; so does a shape error inside the callee's body.
static void a_call_with_wrong_shapes_fails_in_the_trace(void** state) {
  (void)state;
  loom_shape_t three = vector_shape(3);
  trace_unary("neg3", &three, negated);
  trace_unary("inner_gram2", NULL, gram);
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "caller", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t four = vector_shape(4);
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &four, &x));
  loom_tensor_handle_t* result = NULL;
  LOOM_ASSERT_STATUS(run(g_context, "neg3", x, NULL, NULL, &result),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'neg3': input 0 ('a') has shape [4], expected "
                     "[3]");
  assert_null(result);
  LOOM_ASSERT_STATUS(run(g_context, "inner_gram2", x, NULL, NULL, &result),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'inner_gram2': node 'MatMul_0' (MatMul)");
  assert_null(result);
  assert_int_equal(loom_trace_num_nodes(trace), 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_op_handler_release(trace);
  loom_tensor_handle_release(x);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "neg3"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "inner_gram2"));
}

// v += x on the variable "chain_v" ([3] float, found by its shared name),
// returning v: a stateful function traced for x [3].
static loom_tensor_handle_t* bump_body(loom_tensor_handle_t* x) {
  static const int64_t kThree = 3;
  loom_tensor_handle_t* variable = new_variable("chain_v", &kThree, 1);
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &value));
  loom_tensor_handle_t* sum = op2("AddV2", value, x);
  LOOM_ASSERT_OK(
      run(g_context, "AssignVariableOp", variable, sum, "dtype", NULL));
  loom_tensor_handle_t* read = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &read));
  loom_tensor_handle_release(sum);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(variable);
  return read;
}

// chain_bump(chain_bump(a)): v += a, then v += v.
static loom_tensor_handle_t* bump_twice_body(loom_tensor_handle_t* a) {
  loom_tensor_handle_t* once = op2("chain_bump", a, NULL);
  loom_tensor_handle_t* twice = op2("chain_bump", once, NULL);
  loom_tensor_handle_release(once);
  return twice;
}

// Traces chain_outer(x) = (chain_twice(x), read v, chain_bump(x)): the
// read sees both assignments of chain_twice, chain_bump's sees the read.
static loom_function_t* trace_chain_outer(void) {
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "chain_outer", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_tensor_handle_t* results[3] = {NULL, NULL, NULL};
  results[0] = op2("chain_twice", x, NULL);
  static const int64_t kThree = 3;
  loom_tensor_handle_t* variable = new_variable("chain_v", &kThree, 1);
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &results[1]));
  results[2] = op2("chain_bump", x, NULL);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, results, 3, &function));
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(results[i]);
  loom_tensor_handle_release(variable);
  loom_tensor_handle_release(x);
  loom_op_handler_release(trace);
  return function;
}

// Sets "chain_v" to `values` eagerly.
static void set_chain_v(const float* values) {
  static const int64_t kThree = 3;
  loom_tensor_handle_t* variable = new_variable("chain_v", &kThree, 1);
  loom_tensor_handle_t* value = vector(g_context, values);
  LOOM_ASSERT_OK(
      run(g_context, "AssignVariableOp", variable, value, "dtype", NULL));
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(variable);
}

static void expect_chain_v(const float* expected) {
  static const int64_t kThree = 3;
  loom_tensor_handle_t* variable = new_variable("chain_v", &kThree, 1);
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(
      run(g_context, "ReadVariableOp", variable, NULL, "dtype", &value));
  expect_values(g_context, value, expected);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(variable);
}

// Calls of stateful functions print with a chain: a stateful callee takes
// the chain to start from first and returns the one its stateful ops end
// with first, and a caller passes its current chain to the call and
// continues with the returned one, through two levels of calls. The
// program runs to the values and the variable the traced function gives
// when called: v = [1, 2, 3], x = [1.5, -2, 0.5]: chain_twice(x) = v =
// 2 * (v + x) = [5, 0, 7], the read [5, 0, 7], chain_bump(x) = v + x =
// [6.5, -2, 7.5].
static void calls_of_stateful_functions_thread_a_chain(void** state) {
  (void)state;
  static const float kV[3] = {1, 2, 3};
  static const float kTwice[3] = {5, 0, 7};
  static const float kBumped[3] = {6.5f, -2, 7.5f};
  set_chain_v(kV);
  loom_shape_t three = vector_shape(3);
  trace_unary("chain_bump", &three, bump_body);
  trace_unary("chain_twice", &three, bump_twice_body);
  loom_function_t* function = trace_chain_outer();
  expect_chain_v(kV);  // tracing ran nothing

  char* text = NULL;
  size_t size = 0;
  LOOM_ASSERT_OK(loom_trace_print_program(
      g_context, function, loom_allocator_system(), &text, &size));
  const char* bump = strstr(text, "func.func @chain_bump(");
  const char* twice = strstr(text, "func.func @chain_twice(");
  const char* outer = strstr(text, "func.func @chain_outer(");
  assert_non_null(bump);
  assert_non_null(twice);
  assert_non_null(outer);
  assert_true(bump < twice && twice < outer);
  assert_non_null(strstr(bump,
                         "func.func @chain_bump(%ch0: !tfrt.chain, %arg0: "
                         "!corert.tensorhandle) -> (!tfrt.chain, "
                         "!corert.tensorhandle) {\n"
                         "  %cpu = corert.get_op_handler %ch0 \"cpu\"\n"));
  assert_non_null(strstr(bump,
                         "%ch1, %n0_0 = corert.executeop.seq(%cpu, "
                         "%ch0) \"tf.VarHandleOp\""));
  assert_non_null(strstr(bump,
                         "tfrt.return %ch4, %n4_0 : !tfrt.chain, "
                         "!corert.tensorhandle\n"));
  assert_non_null(strstr(twice,
                         "%ch1, %n0_0 = tfrt.call @chain_bump(%ch0, %arg0) : "
                         "(!tfrt.chain, !corert.tensorhandle) -> "
                         "(!tfrt.chain, !corert.tensorhandle)  // "
                         "tensor<3xf32>\n"));
  assert_non_null(
      strstr(twice, "%ch2, %n1_0 = tfrt.call @chain_bump(%ch1, %n0_0) :"));
  assert_non_null(strstr(twice, "tfrt.return %ch2, %n1_0 :"));
  assert_non_null(strstr(outer,
                         "%ch1, %n0_0 = tfrt.call @chain_twice(%ch0, %arg0) "
                         ":"));
  assert_non_null(strstr(outer,
                         "corert.executeop.seq(%cpu, %ch1) "
                         "\"tf.VarHandleOp\""));
  assert_non_null(strstr(outer, "= tfrt.call @chain_bump(%ch3, %arg0) :"));
  // The function printed starts from a new chain and returns its tensors.
  assert_non_null(strstr(outer,
                         "func.func @chain_outer(%arg0: "
                         "!corert.tensorhandle) -> (!corert.tensorhandle, "
                         "!corert.tensorhandle, !corert.tensorhandle) {\n"
                         "  %ch0 = tfrt.new.chain\n"));
  assert_non_null(strstr(outer,
                         "tfrt.return %n0_0, %n2_0, %n3_0 : "
                         "!corert.tensorhandle, !corert.tensorhandle, "
                         "!corert.tensorhandle\n"));

  // Called eagerly.
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "chain_outer", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  loom_tensor_handle_t* eager[3] = {NULL, NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, eager, 3, &count));
  assert_int_equal(count, 3);
  loom_eager_op_destroy(op);
  expect_values(g_context, eager[0], kTwice);
  expect_values(g_context, eager[1], kTwice);
  expect_values(g_context, eager[2], kBumped);
  expect_chain_v(kBumped);

  // Run as a program from the same variable: the same values, the same
  // variable after.
  set_chain_v(kV);
  loom_tensor_handle_t* argument = vector(g_context, kX);
  loom_tensor_handle_t* results[3] = {NULL, NULL, NULL};
  loom_test_run_program(g_context, "chain.mlir", text, size, "chain_outer",
                        &argument, 1, results, 3);
  for (int i = 0; i < 3; ++i) {
    loom_tensor_t* expected = NULL;
    LOOM_ASSERT_OK(loom_context_resolve(g_context, eager[i], &expected));
    expect_values(g_context, results[i], loom_tensor_data(expected));
    loom_tensor_release(expected);
    loom_tensor_handle_release(results[i]);
  }
  expect_chain_v(kBumped);

  loom_allocator_free(loom_allocator_system(), text);
  loom_function_release(function);
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(eager[i]);
  loom_tensor_handle_release(x);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_outer"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_twice"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_bump"));
}

// Traces chain_set(a) = (): v = a, a stateful function without outputs.
static void trace_chain_set(void) {
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "chain_set", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape = vector_shape(3);
  loom_tensor_handle_t* a = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "a", LOOM_DTYPE_FLOAT, &shape, &a));
  static const int64_t kThree = 3;
  loom_tensor_handle_t* variable = new_variable("chain_v", &kThree, 1);
  LOOM_ASSERT_OK(
      run(g_context, "AssignVariableOp", variable, a, "dtype", NULL));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, NULL, 0, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_release(variable);
  loom_tensor_handle_release(a);
  loom_op_handler_release(trace);
}

// A function without parameters whose body calls stateful functions runs
// as `loom run` runs a program (loom_program_executor_run_all): its
// callees, which take arguments, are not run by themselves; it calls them
// in order, one of them without outputs (it returns its chain alone):
// chain_set(x) leaves v = x, chain_twice(x) v = 2x then 4x, chain_bump of
// that doubles it: 8x = [12, -16, 4].
static void a_printed_stateful_program_runs_as_loom_run_does(void** state) {
  (void)state;
  static const float kV[3] = {1, 2, 3};
  static const float kEightX[3] = {12, -16, 4};
  loom_shape_t three = vector_shape(3);
  trace_unary("chain_bump", &three, bump_body);
  trace_unary("chain_twice", &three, bump_twice_body);
  trace_chain_set();
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "chain_main", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_tensor_handle_t* x = vector(g_context, kX);  // captured
  LOOM_ASSERT_OK(run(g_context, "chain_set", x, NULL, NULL, NULL));
  loom_tensor_handle_t* twice = op2("chain_twice", x, NULL);
  loom_tensor_handle_t* bumped = op2("chain_bump", twice, NULL);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &bumped, 1, &function));
  char* text = NULL;
  size_t size = 0;
  LOOM_ASSERT_OK(loom_trace_print_program(
      g_context, function, loom_allocator_system(), &text, &size));
  assert_non_null(strstr(text,
                         "func.func @chain_main() -> "
                         "(!corert.tensorhandle) {\n"
                         "  %ch0 = tfrt.new.chain\n"));
  assert_non_null(strstr(text,
                         "func.func @chain_set(%ch0: !tfrt.chain, "
                         "%arg0: !corert.tensorhandle) -> "
                         "(!tfrt.chain) {\n"));
  assert_non_null(strstr(text, "  tfrt.return %ch2 : !tfrt.chain\n"));
  assert_non_null(strstr(text,
                         "  %ch1 = tfrt.call @chain_set(%ch0, %cap0) : "
                         "(!tfrt.chain, !corert.tensorhandle) -> "
                         "!tfrt.chain\n"));
  assert_non_null(strstr(text,
                         "%ch2, %n1_0 = tfrt.call @chain_twice(%ch1, "
                         "%cap0) :"));
  assert_non_null(strstr(text,
                         "%ch3, %n2_0 = tfrt.call @chain_bump(%ch2, "
                         "%n1_0) :"));

  set_chain_v(kV);
  loom_program_t* program = NULL;
  loom_program_location_t where;
  LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), "main.mlir", text,
                                    size, &program, &where));
  char* output = NULL;
  size_t output_size = 0;
  FILE* stream = open_memstream(&output, &output_size);
  assert_non_null(stream);
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options,
                                           loom_context_host(g_context));
  options.output = stream;
  loom_program_executor_t* executor = NULL;
  LOOM_ASSERT_OK(loom_program_executor_create(&options, &executor));
  LOOM_ASSERT_OK(loom_program_executor_run_all(executor, program, NULL));
  loom_program_executor_destroy(executor);
  fclose(stream);
  assert_string_equal(output,
                      "--- Not running 'chain_set' because it has "
                      "arguments.\n"
                      "--- Not running 'chain_bump' because it has "
                      "arguments.\n"
                      "--- Not running 'chain_twice' because it has "
                      "arguments.\n"
                      "--- Running 'chain_main':\n"
                      "'chain_main' returned !corert.tensorhandle value\n");
  free(output);
  expect_chain_v(kEightX);

  loom_program_destroy(program);
  loom_allocator_free(loom_allocator_system(), text);
  loom_function_release(function);
  loom_op_handler_release(trace);
  loom_tensor_handle_t* handles[] = {bumped, twice, x};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_set"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_twice"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "chain_bump"));
}

// A program's function imported into the eager API
// (loom_trace_program_function): the corert form runs as eager ops, and
// what it cannot trace is an error naming the function, the line and the
// op. NumPy: (x + x) * c for x = [1.5, -2, 0.5], c = [2, 2, 2]:
// [6, -8, 2].
static void a_program_function_is_called_from_the_eager_api(void** state) {
  (void)state;
  static const char kText[] =
      "func.func @double_scaled(%x: !corert.tensorhandle) -> "
      "!corert.tensorhandle {\n"
      "  %ch0 = tfrt.new.chain\n"
      "  %cpu = corert.get_op_handler %ch0 \"cpu\"\n"
      "  %c = corert.const_dense_tensor dense<[2.0, 2.0, 2.0]> : "
      "tensor<3xf32>\n"
      "  %s = corert.executeop(%cpu) \"tf.AddV2\"(%x, %x) : 1\n"
      "  %y = corert.executeop(%cpu) \"tf.Mul\"(%s, %c) : 1\n"
      "  tfrt.return %y : !corert.tensorhandle\n"
      "}\n"
      "func.func @counts(%n: i32) -> i32 {\n"
      "  %one = tfrt.constant.i32 1\n"
      "  %m = tfrt.add.i32 %n, %one\n"
      "  tfrt.return %m : i32\n"
      "}\n";
  loom_program_t* program = NULL;
  loom_program_location_t where;
  LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), "import.mlir",
                                    kText, sizeof(kText) - 1, &program,
                                    &where));
  loom_dtype_t dtype = LOOM_DTYPE_FLOAT;
  loom_function_t* f = NULL;
  LOOM_ASSERT_OK(loom_trace_program_function(
      g_context, program, "double_scaled", "imported_ds", &dtype, NULL, 1, &f));
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(run(g_context, "imported_ds", x, NULL, NULL, &y));
  static const float kExpected[3] = {6, -8, 2};
  expect_values(g_context, y, kExpected);
  loom_function_release(f);
  LOOM_ASSERT_STATUS(
      loom_trace_program_function(g_context, program, "counts", "c", NULL, NULL,
                                  0, &f),
      LOOM_STATUS_UNIMPLEMENTED,
      "function 'counts', line 10: 'tfrt.constant.i32' has no eager form");
  LOOM_ASSERT_STATUS(loom_trace_program_function(g_context, program, "nope",
                                                 "n", NULL, NULL, 0, &f),
                     LOOM_STATUS_NOT_FOUND,
                     "the program has no function 'nope'");
  LOOM_ASSERT_STATUS(
      loom_trace_program_function(g_context, program, "double_scaled", "d2",
                                  NULL, NULL, 0, &f),
      LOOM_STATUS_INVALID_ARGUMENT,
      "function 'double_scaled' takes 1 tensor handles, 0 input dtypes given");
  LOOM_ASSERT_STATUS(loom_trace_program_function(NULL, program, "double_scaled",
                                                 "d3", &dtype, NULL, 1, &f),
                     LOOM_STATUS_INVALID_ARGUMENT, "context is NULL");
  loom_program_destroy(program);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "imported_ds"));
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_traced_function_gives_the_eager_values),
      cmocka_unit_test(traced_values_are_symbolic),
      cmocka_unit_test(eager_tensors_are_captured),
      cmocka_unit_test(a_tape_inside_a_trace_adds_the_gradient),
      cmocka_unit_test(stateful_ops_keep_their_order),
      cmocka_unit_test(errors_name_what_is_wrong),
      cmocka_unit_test(release_in_any_order),
      cmocka_unit_test(a_traced_function_prints_as_a_program),
      cmocka_unit_test(an_executing_trace_also_runs_the_ops),
      cmocka_unit_test(a_trace_inside_a_trace_is_a_call),
      cmocka_unit_test(a_variable_read_has_the_variable_shape),
      cmocka_unit_test(a_variable_of_rank_10_read_has_its_shape),
      cmocka_unit_test(a_variable_without_a_shape_traces_unknown),
      cmocka_unit_test(a_call_in_a_trace_has_the_callee_shapes),
      cmocka_unit_test(a_call_with_wrong_shapes_fails_in_the_trace),
      cmocka_unit_test(calls_of_stateful_functions_thread_a_chain),
      cmocka_unit_test(a_printed_stateful_program_runs_as_loom_run_does),
      cmocka_unit_test(a_program_function_is_called_from_the_eager_api),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
