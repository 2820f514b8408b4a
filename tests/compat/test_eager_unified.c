// TensorFlow's unified (eager/graph-agnostic) C API, eager side: execution
// contexts, abstract ops, output lists and abstract tensors.

#include <stdlib.h>

#include "eager_test_util.h"
#include "tensorflow/c/eager/c_api_unified_experimental.h"

static void execute_add_through_abstract_ops(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(options, s);
  ASSERT_TF_OK(s);
  TFE_DeleteContextOptions(options);
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* at =
      TF_CreateAbstractTensorFromEagerTensor(scalar_handle(eager, 2.0f), s);
  ASSERT_TF_OK(s);

  TF_AbstractOp* op = TF_NewAbstractOp(ctx);
  TF_AbstractOpSetOpType(op, "Add", s);
  ASSERT_TF_OK(s);
  TF_AbstractOpSetOpName(op, "my_add", s);
  ASSERT_TF_OK(s);
  TF_AbstractOpSetAttrType(op, "T", TF_FLOAT, s);
  ASSERT_TF_OK(s);
  TF_AbstractTensor* inputs[2] = {at, at};
  TF_OutputList* o = TF_NewOutputList();
  TF_OutputListSetNumOutputs(o, 1, s);
  ASSERT_TF_OK(s);
  TF_ExecuteOperation(op, 2, inputs, o, s);
  ASSERT_TF_OK(s);
  assert_int_equal(TF_OutputListNumOutputs(o), 1);
  TF_AbstractTensor* result = TF_OutputListGet(o, 0);
  assert_null(TF_OutputListGet(o, 1));
  TFE_TensorHandle* handle = TF_AbstractTensorGetEagerTensor(result, s);
  ASSERT_TF_OK(s);
  assert_true(read_scalar(handle) == 4.0f);
  // The list does not own its outputs; PushBack appends.
  TF_OutputListPushBack(o, at, s);
  ASSERT_TF_OK(s);
  assert_int_equal(TF_OutputListNumOutputs(o), 2);
  assert_ptr_equal(TF_OutputListGet(o, 1), at);
  TF_DeleteAbstractTensor(result);
  TF_DeleteAbstractTensor(at);
  TF_DeleteOutputList(o);
  TF_DeleteAbstractOp(op);
  TF_DeleteExecutionContext(ctx);
  TF_DeleteStatus(s);
}

static void abstract_op_errors(void** state) {
  (void)state;
  TF_Status* s = TF_NewStatus();
  TF_ExecutionContext* ctx = TF_NewEagerExecutionContext(NULL, s);
  ASSERT_TF_OK(s);
  TF_AbstractOp* op = TF_NewAbstractOp(ctx);
  TF_OutputList* o = TF_NewOutputList();
  TF_ExecuteOperation(op, 0, NULL, o, s);
  ASSERT_TF_ERROR(s, TF_FAILED_PRECONDITION,
                  "TF_ExecuteOperation: the op's type is not set "
                  "(TF_AbstractOpSetOpType)");
  TF_AbstractOpSetAttrType(op, "T", TF_FLOAT, s);
  ASSERT_TF_ERROR(s, TF_FAILED_PRECONDITION, "the op's type is not set");
  TF_AbstractOpSetOpType(op, "NoSuchOp", s);
  ASSERT_TF_ERROR(s, TF_NOT_FOUND, "NoSuchOp");
  TF_AbstractOpSetOpType(op, "AddV2", s);
  ASSERT_TF_OK(s);
  // Room for no outputs.
  TFE_Context* eager = TF_ExecutionContextGetTFEContext(ctx, s);
  TF_AbstractTensor* at =
      TF_CreateAbstractTensorFromEagerTensor(scalar_handle(eager, 1.0f), s);
  TF_AbstractTensor* inputs[2] = {at, at};
  TF_ExecuteOperation(op, 2, inputs, o, s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "AddV2: Expecting 1 outputs, but *num_retvals is 0");
  assert_int_equal(TF_OutputListNumOutputs(o), 0);
  TF_OutputListSetNumOutputs(o, -1, s);
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT,
                  "TF_OutputListSetNumOutputs: -1 outputs");
  assert_null(TF_CreateAbstractTensorFromEagerTensor(NULL, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_null(TF_AbstractTensorGetEagerTensor(NULL, s));
  ASSERT_TF_ERROR(s, TF_INVALID_ARGUMENT, "Not an eager tensor handle.");
  TF_DeleteAbstractTensor(at);
  TF_DeleteOutputList(o);
  TF_DeleteAbstractOp(op);
  TF_DeleteExecutionContext(ctx);
  TF_DeleteStatus(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(execute_add_through_abstract_ops),
      cmocka_unit_test(abstract_op_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
