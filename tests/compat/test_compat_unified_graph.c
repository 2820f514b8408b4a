// TensorFlow's unified C API, graph side: the classic flow (a tracing
// context, two parameters, "Add" executed on it, finalize, register the
// function in an eager context, call it with TFE tensors), the tracing
// engines, and TensorFlow's errors; contexts, functions and tensors
// released in any order.
//
// Reference values from NumPy (float32): 2 + 3.5 = 5.5;
// (1.5 + -4.25) * 1.5 = -4.125.

#include <stdlib.h>

#include "eager_test_util.h"
#include "tensorflow/c/eager/c_api_unified_experimental.h"

static TF_Shape scalar_shape(void) {
  TF_Shape shape = {0, NULL};
  return shape;
}

// Traces fn(a, b) = (a + b) (* a when `multiply`).
static TF_AbstractFunction* trace_add(const char* name, bool multiply) {
  TF_Status* s = TF_NewStatus();
  TF_SetTracingImplementation("graphdef", s);
  ASSERT_TF_OK(s);
  TF_ExecutionContext* graph = TF_CreateFunction(name, s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* a =
      TF_AddFunctionParameter(graph, TF_FLOAT, scalar_shape(), s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* b =
      TF_AddFunctionParameter(graph, TF_FLOAT, scalar_shape(), s);
  ASSERT_TF_OK(s);
  TF_AbstractOp* add = TF_NewAbstractOp(graph);
  TF_AbstractOpSetOpType(add, "Add", s);
  ASSERT_TF_OK(s);
  TF_AbstractOpSetOpName(add, "my_add", s);
  ASSERT_TF_OK(s);
  TF_AbstractOpSetAttrType(add, "T", TF_FLOAT, s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* inputs[2] = {a, b};
  TF_OutputList* o = TF_NewOutputList();
  TF_OutputListSetNumOutputs(o, 1, s);
  ASSERT_TF_OK(s);
  TF_ExecuteOperation(add, 2, inputs, o, s);
  ASSERT_TF_OK(s);
  assert_int_equal(TF_OutputListNumOutputs(o), 1);
  TF_AbstractTensor* sum = TF_OutputListGet(o, 0);
  // A graph tensor has no eager tensor.
  assert_null(TF_AbstractTensorGetEagerTensor(sum, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT, "Not an eager tensor handle.");
  TF_AbstractTensor* result = sum;
  TF_AbstractOp* mul = NULL;
  if (multiply) {
    mul = TF_NewAbstractOp(graph);
    TF_AbstractOpSetOpType(mul, "Mul", s);
    ASSERT_TF_OK(s);
    TF_AbstractTensor* mul_inputs[2] = {sum, a};
    TF_ExecuteOperation(mul, 2, mul_inputs, o, s);
    ASSERT_TF_OK(s);
    result = TF_OutputListGet(o, 0);
  }
  TF_OutputList* outputs = TF_NewOutputList();
  TF_OutputListPushBack(outputs, result, s);
  ASSERT_TF_OK(s);
  TF_AbstractFunction* function = TF_FinalizeFunction(graph, outputs, s);
  ASSERT_TF_OK(s);
  assert_non_null(function);
  // The tensors and ops outlive their (deleted) tracing context.
  TF_DeleteAbstractTensor(a);
  TF_DeleteAbstractTensor(b);
  TF_DeleteAbstractTensor(sum);
  if (multiply) TF_DeleteAbstractTensor(result);
  TF_DeleteAbstractOp(add);
  TF_DeleteAbstractOp(mul);
  TF_DeleteOutputList(o);
  TF_DeleteOutputList(outputs);
  TF_DeleteStatus(s);
  return function;
}

// Calls `name` in eager context `ctx` on scalars a and b.
static float call(TF_ExecutionContext* ctx, const char* name, float a,
                  float b) {
  TF_Status* s = TF_NewStatus();
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* inputs[2] = {
      TF_CreateAbstractTensorFromEagerTensor(scalar_handle(eager, a), s),
      TF_CreateAbstractTensorFromEagerTensor(scalar_handle(eager, b), s)};
  TF_AbstractOp* op = TF_NewAbstractOp(ctx);
  TF_AbstractOpSetOpType(op, name, s);
  ASSERT_TF_OK(s);
  TF_OutputList* o = TF_NewOutputList();
  TF_OutputListSetNumOutputs(o, 1, s);
  ASSERT_TF_OK(s);
  TF_ExecuteOperation(op, 2, inputs, o, s);
  ASSERT_TF_OK(s);
  assert_int_equal(TF_OutputListNumOutputs(o), 1);
  TF_AbstractTensor* result = TF_OutputListGet(o, 0);
  float value = read_scalar(TF_AbstractTensorGetEagerTensor(result, s));
  ASSERT_TF_OK(s);
  TF_DeleteAbstractTensor(result);
  TF_DeleteAbstractTensor(inputs[0]);
  TF_DeleteAbstractTensor(inputs[1]);
  TF_DeleteOutputList(o);
  TF_DeleteAbstractOp(op);
  TF_DeleteStatus(s);
  return value;
}

static void a_traced_function_runs_in_an_eager_context(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_AbstractFunction* function = trace_add("two_params_add", false);
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(NULL, s);
  ASSERT_TF_OK(s);
  TF_ExecutionContextRegisterFunction(ctx, function, s);
  ASSERT_TF_OK(s);
  TF_DeleteAbstractFunction(function);  // the context keeps it
  assert_true(call(ctx, "two_params_add", 2.0f, 3.5f) == 5.5f);
  // Through the eager API too.
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  TFE_TensorHandle* a = scalar_handle(eager, 2.0f);
  TFE_TensorHandle* b = scalar_handle(eager, 3.5f);
  TFE_Op* op = binary_op(eager, "two_params_add", a, b);
  TFE_TensorHandle* result = NULL;
  int count = 1;
  TFE_Execute(op, &result, &count, s);
  ASSERT_TF_OK(s);
  assert_true(read_scalar(result) == 5.5f);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
  TF_DeleteExecutionContext(ctx);
  TF_DeleteStatus(s);
}

static void ops_chain_in_a_trace(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(NULL, s);
  ASSERT_TF_OK(s);
  TF_AbstractFunction* function = trace_add("add_mul", true);
  TF_ExecutionContextRegisterFunction(ctx, function, s);
  ASSERT_TF_OK(s);
  assert_true(call(ctx, "add_mul", 1.5f, -4.25f) == -4.125f);
  // The function outlives the context that registered it.
  TF_DeleteExecutionContext(ctx);
  TF_DeleteAbstractFunction(function);
  TF_DeleteStatus(s);
}

static void tracing_engines(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_SetTracingImplementation("mlir", s);
  ASSERT_TF_OK(s);
  TF_SetTracingImplementation("graphdef", s);
  ASSERT_TF_OK(s);
  TF_SetTracingImplementation("xla", s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "No tracing engine factory has been registered with the "
                  "key 'xla' (available: graphdef, mlir)");
  TF_DeleteStatus(s);
}

static void errors_are_tensorflows(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(NULL, s);
  ASSERT_TF_OK(s);
  assert_null(TF_FinalizeFunction(ctx, NULL, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "Only TracingContext can be converted into a function.");
  assert_null(TF_AddFunctionParameter(ctx, TF_FLOAT, scalar_shape(), s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "TF_AddFunctionParameter must be called on a "
                  "TracingContext.");
  TF_ExecutionContext* graph = TF_CreateFunction("errors", s);
  ASSERT_TF_OK(s);
  assert_null(TF_ExecutionContextGetTFEContext(graph, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT, "Not an eager context");
  TF_Shape bad = {-2, NULL};
  assert_null(TF_AddFunctionParameter(graph, TF_FLOAT, bad, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "TF_AddFunctionParameter: shape.num_dims is -2");
  TF_Shape unknown = {-1, NULL};
  TF_AbstractTensor* x = TF_AddFunctionParameter(graph, TF_FLOAT, unknown, s);
  ASSERT_TF_OK(s);
  // An eager tensor is no input of a graph op, and a graph tensor none of
  // an eager op.
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  TF_AbstractTensor* e =
      TF_CreateAbstractTensorFromEagerTensor(scalar_handle(eager, 1.0f), s);
  TF_AbstractOp* op = TF_NewAbstractOp(graph);
  TF_AbstractOpSetOpType(op, "AddV2", s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* mixed[2] = {x, e};
  TF_OutputList* o = TF_NewOutputList();
  TF_ExecuteOperation(op, 2, mixed, o, s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "Unable to cast input to GraphTensor: input 1 of AddV2");
  TF_AbstractOp* eager_op = TF_NewAbstractOp(ctx);
  TF_AbstractOpSetOpType(eager_op, "AddV2", s);
  ASSERT_TF_OK(s);
  TF_ExecuteOperation(eager_op, 2, mixed, o, s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "TF_ExecuteOperation: input 0 is not an eager tensor "
                  "handle");
  // An output that is not a tensor of the trace: the context is consumed.
  TF_OutputList* outputs = TF_NewOutputList();
  TF_OutputListPushBack(outputs, e, s);
  ASSERT_TF_OK(s);
  assert_null(TF_FinalizeFunction(graph, outputs, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "output 0 of trace 'errors' is not a value of the trace");
  TF_DeleteOutputList(outputs);
  TF_DeleteOutputList(o);
  TF_DeleteAbstractOp(op);
  TF_DeleteAbstractOp(eager_op);
  TF_DeleteAbstractTensor(x);
  TF_DeleteAbstractTensor(e);
  TF_DeleteExecutionContext(ctx);
  TF_DeleteStatus(s);
}

static void a_call_with_the_wrong_dtype_fails(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_AbstractFunction* function = trace_add("typed_add", false);
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(NULL, s);
  ASSERT_TF_OK(s);
  TF_ExecutionContextRegisterFunction(ctx, function, s);
  ASSERT_TF_OK(s);
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  int32_t one = 1;
  TFE_TensorHandle* a = int_handle(eager, NULL, 0, &one);
  TFE_TensorHandle* b = int_handle(eager, NULL, 0, &one);
  TFE_Op* op = binary_op(eager, "typed_add", a, b);
  TFE_TensorHandle* result = NULL;
  int count = 1;
  TFE_Execute(op, &result, &count, s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT, "int32");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
  TF_DeleteExecutionContext(ctx);
  TF_DeleteAbstractFunction(function);
  TF_DeleteStatus(s);
}

// A tracing context deleted without finalizing, its tensors after it.
static void a_tracing_context_is_deleted_unfinished(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_ExecutionContext* graph = TF_CreateFunction("unfinished", s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* x =
      TF_AddFunctionParameter(graph, TF_FLOAT, scalar_shape(), s);
  ASSERT_TF_OK(s);
  TF_AbstractOp* op = TF_NewAbstractOp(graph);
  TF_AbstractOpSetOpType(op, "Neg", s);
  ASSERT_TF_OK(s);
  TF_OutputList* o = TF_NewOutputList();
  TF_ExecuteOperation(op, 1, &x, o, s);
  ASSERT_TF_OK(s);
  TF_DeleteAbstractOp(op);
  TF_DeleteExecutionContext(graph);
  TF_DeleteAbstractTensor(TF_OutputListGet(o, 0));
  TF_DeleteAbstractTensor(x);
  TF_DeleteOutputList(o);
  TF_DeleteStatus(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_traced_function_runs_in_an_eager_context),
      cmocka_unit_test(ops_chain_in_a_trace),
      cmocka_unit_test(tracing_engines),
      cmocka_unit_test(errors_are_tensorflows),
      cmocka_unit_test(a_call_with_the_wrong_dtype_fails),
      cmocka_unit_test(a_tracing_context_is_deleted_unfinished),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
