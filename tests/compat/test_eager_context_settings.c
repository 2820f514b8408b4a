// TensorFlow's experimental eager context settings on Loom: logical CPU
// devices, soft and logged placement, debug information, consumed inputs,
// run metadata, and the cluster calls a single process refuses.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eager_test_util.h"
#include "tensorflow/c/c_api_experimental.h"

typedef eager_fixture_t fixture_t;

static const char kCpu1[] = "/job:localhost/replica:0/task:0/device:CPU:1";
static const char kCpu2[] = "/job:localhost/replica:0/task:0/device:CPU:2";

static void logical_cpu_devices_are_devices(void** state) {
  fixture_t* f = *state;
  TFE_SetLogicalCpuDevices(f->ctx, 3, NULL, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeviceList* devices = TFE_ContextListDevices(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_DeviceListCount(devices), 3);
  assert_string_equal(TF_DeviceListName(devices, 1, f->status), kCpu1);
  assert_string_equal(TF_DeviceListName(devices, 2, f->status), kCpu2);
  assert_string_equal(TF_DeviceListType(devices, 2, f->status), "CPU");
  TF_DeleteDeviceList(devices);
  // Asking for as many or fewer changes nothing.
  TFE_SetLogicalCpuDevices(f->ctx, 2, "/job:localhost/replica:0/task:0",
                           f->status);
  ASSERT_TF_OK(f->status);
  devices = TFE_ContextListDevices(f->ctx, f->status);
  assert_int_equal(TF_DeviceListCount(devices), 3);
  TF_DeleteDeviceList(devices);
  // An op placed on CPU:1 runs there, and so does its result.
  TFE_TensorHandle* x = matrix_handle(f->ctx);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  TFE_OpSetDevice(add, kCpu1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(sum, f->status), kCpu1);
  assert_int_equal(TFE_TensorHandleDeviceID(sum, f->status), 1);
  float values[4];
  read_floats(sum, values, 4);
  assert_true(values[0] == 2 && values[3] == 8);  // matrix_handle: 1 2 3 4
  // A copy to CPU:2 holds the same values there.
  TFE_TensorHandle* moved =
      TFE_TensorHandleCopyToDevice(sum, f->ctx, kCpu2, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(moved, f->status), kCpu2);
  read_floats(moved, values, 4);
  assert_true(values[1] == 4);
  // An op fed by a CPU:2 value runs on CPU:2.
  TFE_DeleteOp(add);
  add = binary_op(f->ctx, "AddV2", moved, moved);
  TFE_TensorHandle* twice = NULL;
  TFE_Execute(add, &twice, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(twice, f->status), kCpu2);
  read_floats(twice, values, 4);
  assert_true(values[2] == 12);
  TFE_DeleteTensorHandle(twice);
  TFE_DeleteTensorHandle(moved);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
}

static void logical_cpu_devices_refuse_bad_requests(void** state) {
  fixture_t* f = *state;
  TFE_SetLogicalCpuDevices(f->ctx, 0, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "0 CPU devices is outside [1, 1024]");
  TFE_SetLogicalCpuDevices(f->ctx, 2, "/job:worker/replica:0/task:1",
                           f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "prefix '/job:worker/replica:0/task:1' is not this "
                  "process's task");
  TFE_SetLogicalCpuDevices(NULL, 2, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "ctx is NULL");
}

// A context made from TF_CreateConfig's ConfigProto has its CPU devices,
// and one made from a ConfigProto asking for soft placement places softly.
static void config_protos_configure_contexts(void** state) {
  fixture_t* f = *state;
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TF_Buffer* config = TF_CreateConfig(0, 0, 3);
  TFE_ContextOptionsSetConfig(options, config->data, config->length, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteBuffer(config);
  TFE_Context* ctx = TFE_NewContext(options, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeviceList* devices = TFE_ContextListDevices(ctx, f->status);
  assert_int_equal(TF_DeviceListCount(devices), 3);
  assert_string_equal(TF_DeviceListName(devices, 2, f->status), kCpu2);
  TF_DeleteDeviceList(devices);
  TFE_DeleteContext(ctx);
  // ConfigProto{allow_soft_placement: true, log_device_placement: false,
  // intra_op_parallelism_threads: 2}: fields 7 and 2.
  TFE_ContextOptionsSetConfig(options, "\x10\x02\x38\x01", 4, f->status);
  ASSERT_TF_OK(f->status);
  ctx = TFE_NewContext(options, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* x = scalar_handle(ctx, 2.0f);
  TFE_Op* add = binary_op(ctx, "AddV2", x, x);
  TFE_OpSetDevice(add, "/device:GPU:0", f->status);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(sum) == 4.0f);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteContext(ctx);
  // device_count {"GPU": 1}: Loom has CPU devices only.
  TFE_ContextOptionsSetConfig(options, "\x0a\x07\x0a\x03GPU\x10\x01", 9,
                              f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "asks for 1 'GPU' devices; Loom has CPU devices only");
  TFE_ContextOptionsSetConfig(NULL, "", 0, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "options is NULL");
  TFE_DeleteContextOptions(options);
}

static void soft_placement_falls_back_to_the_cpu(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.5f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  TFE_OpSetDevice(add, "/device:GPU:0", f->status);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Could not satisfy device specification '/device:GPU:0'");
  TFE_ContextSetSoftDevicePlacement(f->ctx, 1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(sum, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  assert_true(read_scalar(sum) == 3.0f);
  TFE_DeleteTensorHandle(sum);
  TFE_ContextSetSoftDevicePlacement(f->ctx, 0, f->status);
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Could not satisfy");
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
}

static void logged_placement_names_op_and_device(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  // Capture stderr in a file while the op runs.
  fflush(stderr);
  int saved = dup(fileno(stderr));
  FILE* log = tmpfile();
  assert_non_null(log);
  dup2(fileno(log), fileno(stderr));
  TFE_ContextSetLogDevicePlacement(f->ctx, 1, f->status);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  TFE_ContextSetLogDevicePlacement(f->ctx, 0, f->status);
  TFE_DeleteTensorHandle(sum);
  TFE_Execute(add, &sum, &num_retvals, f->status);  // not logged
  fflush(stderr);
  dup2(saved, fileno(stderr));
  close(saved);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(sum);
  char text[512] = {0};
  rewind(log);
  size_t length = fread(text, 1, sizeof(text) - 1, log);
  fclose(log);
  assert_string_equal(text,
                      "Executing op AddV2 in device "
                      "/job:localhost/replica:0/task:0/device:CPU:0\n");
  assert_true(length > 0);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
}

static void debug_info_gives_the_shape(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = matrix_handle(f->ctx);
  TFE_TensorDebugInfo* info = TFE_TensorHandleTensorDebugInfo(x, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorDebugInfoOnDeviceNumDims(info), 2);
  assert_int_equal(TFE_TensorDebugInfoOnDeviceDim(info, 0), 2);
  assert_int_equal(TFE_TensorDebugInfoOnDeviceDim(info, 1), 2);
  assert_int_equal(TFE_TensorDebugInfoOnDeviceDim(info, 2), -1);
  TFE_DeleteTensorDebugInfo(info);
  assert_null(TFE_TensorHandleTensorDebugInfo(NULL, f->status));
  assert_int_not_equal(TF_GetCode(f->status), TF_OK);
  TFE_DeleteTensorHandle(x);
}

static void consumed_inputs_belong_to_the_op(void** state) {
  fixture_t* f = *state;
  TFE_Op* add = TFE_NewOp(f->ctx, "AddV2", f->status);
  // The op holds the only references: deleting it frees the handles (the
  // leak checkers would see them otherwise).
  TFE_OpConsumeInput(add, scalar_handle(f->ctx, 2.0f), f->status);
  TFE_OpConsumeInput(add, scalar_handle(f->ctx, 3.0f), f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(sum) == 5.0f);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteOp(add);
  TFE_OpConsumeInput(NULL, scalar_handle(f->ctx, 1.0f), f->status);
  assert_int_equal(TF_GetCode(f->status), TF_INVALID_ARGUMENT);
}

static void run_metadata_steps_and_ids(void** state) {
  fixture_t* f = *state;
  TFE_ContextEnableRunMetadata(f->ctx);
  TFE_ContextStartStep(f->ctx);
  TFE_ContextEndStep(f->ctx);
  TF_Buffer* buffer = TF_NewBuffer();
  TFE_ContextExportRunMetadata(f->ctx, buffer, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(buffer->length, 0);  // the empty RunMetadata
  TFE_GetExecutedOpNames(f->ctx, buffer, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(buffer->length, 0);
  TF_DeleteBuffer(buffer);
  TFE_ContextDisableRunMetadata(f->ctx);
  TFE_ContextSetRunEagerOpAsFunction(f->ctx, 1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_ContextSetJitCompileRewrite(f->ctx, 1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_Context* other = new_context(false);
  assert_true(TFE_GetContextId(f->ctx) != TFE_GetContextId(other));
  TFE_DeleteContext(other);
}

static void cluster_calls_are_refused(void** state) {
  fixture_t* f = *state;
  TFE_InsertConfigKeyValue(f->ctx, "k", "v", f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "Coordination service agent is not enabled.");
  TF_Buffer* buffer = TF_NewBuffer();
  TFE_GetConfigKeyValue(f->ctx, "k", buffer, f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION, "not enabled");
  TF_DeleteBuffer(buffer);
  TFE_DeleteConfigKeyValue(f->ctx, "k", f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION, "not enabled");
  TFE_ReportErrorToCluster(f->ctx, 3, "bad", f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION, "not enabled");
  TFE_ContextSetServerDef(f->ctx, 0, "", 0, f->status);
  ASSERT_TF_ERROR(f->status, TF_UNIMPLEMENTED, "no remote workers");
  TFE_ContextUpdateServerDef(f->ctx, 0, "", 0, f->status);
  ASSERT_TF_ERROR(f->status, TF_UNIMPLEMENTED, "no remote workers");
  assert_false(TFE_ContextCheckAlive(f->ctx, "/job:w", f->status));
  ASSERT_TF_ERROR(f->status, TF_UNIMPLEMENTED, "no remote workers");
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define TEST(name) \
  cmocka_unit_test_setup_teardown(name, eager_setup_sync, eager_teardown)
      TEST(logical_cpu_devices_are_devices),
      TEST(logical_cpu_devices_refuse_bad_requests),
      TEST(config_protos_configure_contexts),
      TEST(soft_placement_falls_back_to_the_cpu),
      TEST(logged_placement_names_op_and_device),
      TEST(debug_info_gives_the_shape),
      TEST(consumed_inputs_belong_to_the_op),
      TEST(run_metadata_steps_and_ids),
      TEST(cluster_calls_are_refused),
#undef TEST
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
