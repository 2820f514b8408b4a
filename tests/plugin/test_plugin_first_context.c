// A plugin that makes the process's first eager context as it loads, and
// then fails: the rollback removes what the plugin registered, never what
// the context registered on first use (the built-in ops and kernels, the
// call and control-flow ops). Its own process, so that the plugin's context
// really is the first.

#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/plugin.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/eager/c_api.h"
#include "test_support.h"

// Ops the first context registers, with whether they have CPU kernels.
static const struct {
  const char* name;
  bool has_kernels;
} kProcessOps[] = {
    {"ZerosLike", true},        {"AddV2", true},
    {"MatMul", true},           {"While", false},
    {"StatelessWhile", false},  {"If", false},
    {"PartitionedCall", false}, {"StatefulPartitionedCall", false},
};
enum { kNumProcessOps = sizeof(kProcessOps) / sizeof(kProcessOps[0]) };

static void check_process_ops_registered(void) {
  loom_op_registry_t* ops = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  for (int i = 0; i < kNumProcessOps; ++i) {
    if (!loom_op_registry_find(ops, kProcessOps[i].name)) {
      fail_msg("op '%s' is gone after the failed load", kProcessOps[i].name);
    }
    if (kProcessOps[i].has_kernels &&
        loom_kernel_registry_count(kernels, kProcessOps[i].name) == 0) {
      fail_msg("op '%s' has no kernels after the failed load",
               kProcessOps[i].name);
    }
  }
}

// 2 + 3 on a new context, after the rollback.
static void check_add_runs(void) {
  TF_Status* status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_Context* context = TFE_NewContext(options, status);
  TFE_DeleteContextOptions(options);
  assert_int_equal(TF_GetCode(status), TF_OK);
  float values[2] = {2.0f, 3.0f};
  TFE_TensorHandle* inputs[2];
  for (int i = 0; i < 2; ++i) {
    TF_Tensor* tensor = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
    assert_non_null(tensor);
    *(float*)TF_TensorData(tensor) = values[i];
    inputs[i] = TFE_NewTensorHandle(tensor, status);
    TF_DeleteTensor(tensor);
    assert_int_equal(TF_GetCode(status), TF_OK);
  }
  TFE_Op* op = TFE_NewOp(context, "AddV2", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TFE_OpAddInput(op, inputs[0], status);
  TFE_OpAddInput(op, inputs[1], status);
  TFE_TensorHandle* result = NULL;
  int num_results = 1;
  TFE_Execute(op, &result, &num_results, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_Tensor* resolved = TFE_TensorHandleResolve(result, status);
  assert_non_null(resolved);
  assert_float_equal(*(float*)TF_TensorData(resolved), 5.0f, 0.0f);
  TF_DeleteTensor(resolved);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteOp(op);
  for (int i = 0; i < 2; ++i) TFE_DeleteTensorHandle(inputs[i]);
  TFE_DeleteContext(context);
  TF_DeleteStatus(status);
}

static void a_failed_load_keeps_the_ops_of_the_first_context(void** state) {
  (void)state;
  // Nothing has made a context yet: the plugin's is the process's first.
  assert_null(loom_op_registry_find(loom_op_registry_global(), "While"));
  for (int attempt = 0; attempt < 2; ++attempt) {
    TF_Status* status = TF_NewStatus();
    assert_null(TF_LoadLibrary(LOOM_FIXTURE_FIRST_CONTEXT_PATH, status));
    assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
    if (!strstr(TF_Message(status), "unknown type 'int33'")) {
      fail_msg("unexpected message: %s", TF_Message(status));
    }
    TF_DeleteStatus(status);
    assert_null(loom_op_registry_find(loom_op_registry_global(),
                                      "FixtureAfterContext"));
    check_process_ops_registered();
  }
  check_add_runs();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_failed_load_keeps_the_ops_of_the_first_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
