// TensorFlow's eager C API on Loom: contexts, tensor handles, ops,
// attributes, execution (synchronous and asynchronous), forwarding,
// variables, executors — the behaviours TensorFlow's own eager C API
// tests check, written from them.

#include <stdlib.h>

#include "eager_test_util.h"
#include "loom/eager.h"
#include "loom/op_attrs.h"

typedef eager_fixture_t fixture_t;

//===----------------------------------------------------------------------===//
// Contexts and devices
//===----------------------------------------------------------------------===//

static void context_lists_its_cpu(void** state) {
  fixture_t* f = *state;
  TF_DeviceList* devices = TFE_ContextListDevices(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_DeviceListCount(devices), 1);
  assert_string_equal(TF_DeviceListName(devices, 0, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  assert_string_equal(TF_DeviceListType(devices, 0, f->status), "CPU");
  assert_true(TF_DeviceListMemoryBytes(devices, 0, f->status) > 0);
  assert_true(TF_DeviceListIncarnation(devices, 0, f->status) != 0);
  ASSERT_TF_OK(f->status);
  assert_null(TF_DeviceListName(devices, 1, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Index out of bounds: 1 (the list has 1 devices)");
  TF_DeleteDeviceList(devices);
}

static void options_take_a_config_proto(void** state) {
  fixture_t* f = *state;
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_ContextOptionsSetConfig(options, "", 0, f->status);
  ASSERT_TF_OK(f->status);
  TFE_ContextOptionsSetConfig(options, "\xff\xff", 2, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Unable to parse ConfigProto");
  TFE_ContextOptionsSetDevicePlacementPolicy(options,
                                             TFE_DEVICE_PLACEMENT_EXPLICIT);
  TFE_Context* ctx = TFE_NewContext(options, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_ContextGetDevicePlacementPolicy(ctx),
                   TFE_DEVICE_PLACEMENT_EXPLICIT);
  TFE_ContextSetThreadLocalDevicePlacementPolicy(ctx,
                                                 TFE_DEVICE_PLACEMENT_WARN);
  assert_int_equal(TFE_ContextGetDevicePlacementPolicy(ctx),
                   TFE_DEVICE_PLACEMENT_WARN);
  TFE_ContextClearCaches(ctx);
  TFE_DeleteContext(ctx);
  TFE_DeleteContextOptions(options);
  ctx = TFE_NewContext(NULL, f->status);  // NULL options: the defaults
  ASSERT_TF_OK(f->status);
  TFE_DeleteContext(ctx);
}

//===----------------------------------------------------------------------===//
// Tensor handles
//===----------------------------------------------------------------------===//

static void tensor_handle_reports_its_tensor(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* h = matrix_handle(f->ctx);
  assert_int_equal(TFE_TensorHandleDataType(h), TF_FLOAT);
  assert_int_equal(TFE_TensorHandleNumDims(h, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(h, 0, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(h, 1, f->status), 2);
  assert_int_equal(TFE_TensorHandleNumElements(h, f->status), 4);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(h, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  assert_string_equal(TFE_TensorHandleBackingDeviceName(h, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  assert_string_equal(TFE_TensorHandleDeviceType(h, f->status), "CPU");
  assert_int_equal(TFE_TensorHandleDeviceID(h, f->status), 0);
  float values[4];
  read_floats(h, values, 4);
  assert_true(values[0] == 1 && values[1] == 2 && values[2] == 3 &&
              values[3] == 4);
  assert_int_equal(TFE_TensorHandleDeviceMemorySize(h, f->status),
                   4 * sizeof(float));
  float* data = TFE_TensorHandleDevicePointer(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(data[3] == 4.0f);
  assert_int_equal(TFE_TensorHandleDim(h, 2, f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Dimension 2 out of range [0, 2)");
  TFE_DeleteTensorHandle(h);
}

static void null_handles_are_invalid(void** state) {
  fixture_t* f = *state;
  assert_null(TFE_TensorHandleResolve(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_string_equal(TF_Message(f->status), "Invalid handle");
  assert_null(TFE_TensorHandleDeviceName(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_null(TFE_TensorHandleBackingDeviceName(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_int_equal(TFE_TensorHandleNumDims(NULL, f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_int_equal(TFE_TensorHandleDim(NULL, 0, f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_int_equal(TFE_TensorHandleNumElements(NULL, f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_null(TFE_TensorHandleCopySharingTensor(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  assert_null(TFE_TensorHandleDevicePointer(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  TFE_Op* op = TFE_NewOp(f->ctx, "AddV2", f->status);
  TFE_OpAddInput(op, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(NULL);
}

static void copy_sharing_tensor_shares_the_buffer(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* h = matrix_handle(f->ctx);
  TFE_TensorHandle* shared = TFE_TensorHandleCopySharingTensor(h, f->status);
  ASSERT_TF_OK(f->status);
  TF_Tensor* a = TFE_TensorHandleResolve(h, f->status);
  TFE_DeleteTensorHandle(h);  // the copy keeps the tensor
  TF_Tensor* b = TFE_TensorHandleResolve(shared, f->status);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TF_TensorData(a), TF_TensorData(b));
  TF_DeleteTensor(a);
  TF_DeleteTensor(b);
  TFE_DeleteTensorHandle(shared);
}

static void copy_to_the_cpu_shares_the_buffer(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* h = matrix_handle(f->ctx);
  TFE_TensorHandle* copy = TFE_TensorHandleCopyToDevice(
      h, f->ctx, "/job:localhost/replica:0/task:0/device:CPU:0", f->status);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TFE_TensorHandleDevicePointer(h, f->status),
                   TFE_TensorHandleDevicePointer(copy, f->status));
  TFE_DeleteTensorHandle(copy);
  assert_null(TFE_TensorHandleCopyToDevice(h, f->ctx, "GPU:0", f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_TensorHandleCopyToDevice: unknown device 'GPU:0'");
  TFE_DeleteTensorHandle(h);
}

static void context_free_handles_run_on_any_context(void** state) {
  fixture_t* f = *state;
  // As TensorFlow's TestVariable: a tensor of no dims, then a handle
  // without a context.
  float value = 2.5f;
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(value));
  memcpy(TF_TensorData(t), &value, sizeof(value));
  TFE_TensorHandle* h = TFE_NewTensorHandle(t, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteTensor(t);
  assert_string_equal(TFE_TensorHandleDeviceName(h, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  TFE_Op* add = binary_op(f->ctx, "AddV2", h, h);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(sum) == 5.0f);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteTensorHandle(h);
  assert_null(TFE_NewTensorHandle(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_NewTensorHandle: the tensor is NULL");
}

static int g_deallocations;
static void count_deallocation(void* data, size_t len, void* arg) {
  (void)len;
  (void)arg;
  free(data);
  g_deallocations++;
}

static void device_memory_is_wrapped_and_freed_once(void** state) {
  fixture_t* f = *state;
  g_deallocations = 0;
  float* data = malloc(4 * sizeof(float));
  for (int i = 0; i < 4; ++i) data[i] = (float)i;
  int64_t dims[2] = {2, 2};
  TFE_TensorHandle* h = TFE_NewTensorHandleFromDeviceMemory(
      f->ctx, "CPU:0", TF_FLOAT, dims, 2, data, 4 * sizeof(float),
      count_deallocation, NULL, f->status);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TFE_TensorHandleDevicePointer(h, f->status), data);
  assert_int_equal(g_deallocations, 0);
  TFE_DeleteTensorHandle(h);
  assert_int_equal(g_deallocations, 1);
  // Too small: refused, and the memory freed at once.
  h = TFE_NewTensorHandleFromDeviceMemory(f->ctx, "CPU:0", TF_FLOAT, dims, 2,
                                          malloc(4), 4, count_deallocation,
                                          NULL, f->status);
  assert_null(h);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "4 bytes do not hold 4 elements of float");
  assert_int_equal(g_deallocations, 2);
  h = TFE_NewTensorHandleFromDeviceMemory(f->ctx, "TPU:0", TF_FLOAT, dims, 2,
                                          malloc(16), 16, count_deallocation,
                                          NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "unknown device 'TPU:0'");
  assert_int_equal(g_deallocations, 3);
}

//===----------------------------------------------------------------------===//
// Ops and execution
//===----------------------------------------------------------------------===//

static void execute_add(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* m = matrix_handle(f->ctx);
  TFE_Op* add = binary_op(f->ctx, "AddV2", m, m);
  TFE_TensorHandle* retvals[2] = {NULL, NULL};
  int num_retvals = 2;
  TFE_Execute(add, retvals, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(num_retvals, 1);
  float values[4];
  read_floats(retvals[0], values, 4);
  assert_true(values[0] == 2 && values[1] == 4 && values[2] == 6 &&
              values[3] == 8);
  TFE_DeleteTensorHandle(retvals[0]);
  // Executing the same op again gives a new result.
  num_retvals = 1;
  TFE_Execute(add, retvals, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(retvals[0]);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(m);
}

static void execute_matmul(void** state) {
  fixture_t* f = *state;
  if (!op_exists(f->ctx, "MatMul")) skip();
  TFE_TensorHandle* m = matrix_handle(f->ctx);
  TFE_Op* matmul = binary_op(f->ctx, "MatMul", m, m);
  TFE_TensorHandle* product = NULL;
  int num_retvals = 1;
  TFE_Execute(matmul, &product, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  float values[4];
  read_floats(product, values, 4);
  assert_true(values[0] == 7 && values[1] == 10 && values[2] == 15 &&
              values[3] == 22);
  TFE_DeleteTensorHandle(product);
  TFE_DeleteOp(matmul);
  TFE_DeleteTensorHandle(m);
}

static TFE_TensorHandle* matrix_3x2(TFE_Context* ctx) {
  static const int64_t dims[2] = {3, 2};
  static const float values[6] = {1, 2, 3, 4, 5, 6};
  return float_handle(ctx, dims, 2, values);
}

static const char kMatMulError[] =
    "Matrix size-incompatible: In[0]: [2,2], In[1]: [3,2]";

static void matmul_runtime_error_is_returned_by_execute(void** state) {
  fixture_t* f = *state;
  if (!op_exists(f->ctx, "MatMul")) skip();
  TFE_TensorHandle* m1 = matrix_handle(f->ctx);
  TFE_TensorHandle* m2 = matrix_3x2(f->ctx);
  TFE_Op* matmul = binary_op(f->ctx, "MatMul", m1, m2);
  TFE_OpSetDevice(matmul, "/job:localhost/replica:0/task:0/device:CPU:0",
                  f->status);
  TFE_TensorHandle* product = NULL;
  int num_retvals = 1;
  TFE_Execute(matmul, &product, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kMatMulError);
  // As TensorFlow: the output count once the kernel is known, no handle.
  assert_int_equal(num_retvals, 1);
  assert_null(product);
  // A good op still runs: a synchronous error does not stick.
  TFE_Op* good = binary_op(f->ctx, "MatMul", m1, m1);
  num_retvals = 1;
  TFE_Execute(good, &product, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(product);
  TFE_DeleteOp(good);
  TFE_DeleteOp(matmul);
  TFE_DeleteTensorHandle(m1);
  TFE_DeleteTensorHandle(m2);
}

static void async_matmul_error_surfaces_at_resolve_and_wait(void** state) {
  fixture_t* f = *state;
  if (!op_exists(f->ctx, "MatMul")) skip();
  TFE_TensorHandle* m1 = matrix_handle(f->ctx);
  TFE_TensorHandle* m2 = matrix_3x2(f->ctx);
  TFE_Op* matmul = binary_op(f->ctx, "MatMul", m1, m2);
  TFE_Op* matmul2 = binary_op(f->ctx, "MatMul", m1, m1);
  TFE_TensorHandle* retval = NULL;
  int num_retvals = 1;
  TFE_Execute(matmul, &retval, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);  // asynchronous: not run yet as far as we know
  assert_int_equal(num_retvals, 1);
  TF_Tensor* t = TFE_TensorHandleResolve(retval, f->status);
  assert_null(t);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kMatMulError);
  TFE_TensorHandleGetStatus(retval, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kMatMulError);
  TFE_DeleteTensorHandle(retval);
  TFE_Executor* executor = TFE_ContextGetExecutorForThread(f->ctx);
  assert_true(TFE_ExecutorIsAsync(executor));
  TFE_ExecutorWaitForAllPendingNodes(executor, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kMatMulError);
  // Until the error is cleared, new ops fail with it.
  retval = NULL;
  TFE_Execute(matmul2, &retval, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kMatMulError);
  assert_null(retval);
  TFE_ExecutorClearError(executor);
  TFE_ExecutorWaitForAllPendingNodes(executor, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteExecutor(executor);
  num_retvals = 1;
  TFE_Execute(matmul2, &retval, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  float values[4];
  read_floats(retval, values, 4);
  assert_true(values[3] == 22);
  TFE_DeleteTensorHandle(retval);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(matmul);
  TFE_DeleteOp(matmul2);
  TFE_DeleteTensorHandle(m1);
  TFE_DeleteTensorHandle(m2);
}

static void async_add_runs(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* m = matrix_handle(f->ctx);
  // A chain of 50 adds: each waits for the previous one.
  TFE_TensorHandle* x = TFE_TensorHandleCopySharingTensor(m, f->status);
  for (int i = 0; i < 50; ++i) {
    TFE_Op* add = binary_op(f->ctx, "AddV2", x, m);
    TFE_TensorHandle* y = NULL;
    int num_retvals = 1;
    TFE_Execute(add, &y, &num_retvals, f->status);
    ASSERT_TF_OK(f->status);
    TFE_DeleteOp(add);
    TFE_DeleteTensorHandle(x);
    x = y;
  }
  float values[4];
  read_floats(x, values, 4);
  assert_true(values[0] == 51 && values[3] == 204);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(m);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

static void execute_min(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* input = matrix_handle(f->ctx);
  int64_t axis_dims[1] = {1};
  int32_t axis_value[1] = {1};
  TFE_TensorHandle* axis = int_handle(f->ctx, axis_dims, 1, axis_value);
  TFE_Op* min = binary_op(f->ctx, "Min", input, axis);
  TFE_OpSetAttrBool(min, "keep_dims", 0);
  TFE_OpSetAttrType(min, "T", TF_FLOAT);
  TFE_OpSetAttrType(min, "Tidx", TF_INT32);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(min, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorHandleNumDims(result, f->status), 1);
  float values[2];
  read_floats(result, values, 2);
  assert_true(values[0] == 1 && values[1] == 3);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteOp(min);
  TFE_DeleteTensorHandle(input);
  TFE_DeleteTensorHandle(axis);
}

static void mismatched_input_types_are_errors(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  int32_t one = 1;
  TFE_TensorHandle* i = int_handle(f->ctx, NULL, 0, &one);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, i);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Op 'AddV2': input 1 ('y') has dtype int32 but attr 'T' is "
                  "float");
  // Known before running: TFE_Execute says so in asynchronous contexts too,
  // with the output count and no handle (TensorFlow's behaviour).
  assert_int_equal(num_retvals, 1);
  assert_null(result);
  TFE_DeleteOp(add);
  // The error did not stick to the context: a good op runs.
  add = binary_op(f->ctx, "AddV2", x, x);
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TF_Tensor* sum = TFE_TensorHandleResolve(result, f->status);
  ASSERT_TF_OK(f->status);
  assert_float_equal(*(float*)TF_TensorData(sum), 2.0f, 0);
  TF_DeleteTensor(sum);
  TFE_DeleteTensorHandle(result);
  result = NULL;
  TFE_DeleteOp(add);
  // An attribute contradicting the inputs.
  add = binary_op(f->ctx, "AddV2", x, x);
  TFE_OpSetAttrType(add, "T", TF_INT32);
  num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Op 'AddV2': input 0 ('x') has dtype float but attr 'T' is "
                  "int32");
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(i);
}

static void execute_needs_room_for_the_outputs(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  int num_retvals = 0;
  TFE_Execute(add, NULL, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "AddV2: Expecting 1 outputs, but *num_retvals is 0");
  TFE_Execute(add, NULL, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_Execute: num_retvals is NULL");
  TFE_Execute(NULL, NULL, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "TFE_Execute: op is NULL");
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
}

static void unknown_ops_and_devices_are_errors(void** state) {
  fixture_t* f = *state;
  assert_null(TFE_NewOp(f->ctx, "NoSuchOp", f->status));
  ASSERT_TF_ERROR(f->status, TF_NOT_FOUND, "NoSuchOp");
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  TFE_OpSetDevice(add, "/job:localhost/replica:0/task:0/device:GPU:0",
                  f->status);
  ASSERT_TF_OK(f->status);  // well formed: found at execution
  TFE_TensorHandle* result = (TFE_TensorHandle*)&f;
  int num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Could not satisfy device specification "
                  "'/job:localhost/replica:0/task:0/device:GPU:0'. "
                  "enable_soft_placement=0. Supported device types [CPU]. "
                  "All available devices "
                  "[/job:localhost/replica:0/task:0/device:CPU:0");
  // Failed before the output count was known: *num_retvals is untouched.
  assert_int_equal(num_retvals, 1);
  assert_ptr_equal(result, (TFE_TensorHandle*)&f);
  // A malformed name is refused at once, and the op keeps its device.
  TFE_OpSetDevice(add, "garbage", f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Malformed device specification 'garbage' in eager op: "
                  "AddV2");
  assert_string_equal(TFE_OpGetDevice(add, f->status),
                      "/job:localhost/replica:0/task:0/device:GPU:0");
  TFE_OpSetDevice(add, "/cpu:0", f->status);
  ASSERT_TF_OK(f->status);
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
}

static void op_reports_name_context_device_and_inputs(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* a = scalar_handle(f->ctx, 1.0f);
  TFE_TensorHandle* b = scalar_handle(f->ctx, 2.0f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", a, b);
  assert_string_equal(TFE_OpGetName(add, f->status), "AddV2");
  assert_ptr_equal(TFE_OpGetContext(add, f->status), f->ctx);
  assert_string_equal(TFE_OpGetDevice(add, f->status), "");
  TFE_OpSetDevice(add, "CPU:0", f->status);
  assert_string_equal(TFE_OpGetDevice(add, f->status), "CPU:0");
  assert_int_equal(TFE_OpGetFlatInputCount(add, f->status), 2);
  assert_ptr_equal(TFE_OpGetFlatInput(add, 0, f->status), a);
  assert_ptr_equal(TFE_OpGetFlatInput(add, 1, f->status), b);
  ASSERT_TF_OK(f->status);
  assert_null(TFE_OpGetFlatInput(add, 2, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_OpGetFlatInput: index 2 is out of range [0, 2)");
  assert_null(TFE_OpGetName(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "TFE_OpGetName: op is NULL");
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
}

static void op_reset_reuses_the_op(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 3.0f);
  TFE_Op* op = TFE_NewOp(f->ctx, "Identity", f->status);
  TFE_OpReset(op, "AddV2", "/job:localhost/replica:0/task:0/device:CPU:0",
              f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_OpGetName(op, f->status), "AddV2");
  assert_string_equal(TFE_OpGetDevice(op, f->status),
                      "/job:localhost/replica:0/task:0/device:CPU:0");
  for (int i = 0; i < 3; ++i) {
    TFE_OpReset(op, "AddV2", "/job:localhost/replica:0/task:0/device:CPU:0",
                f->status);
    TFE_OpAddInput(op, x, f->status);
    TFE_OpAddInput(op, x, f->status);
    TFE_TensorHandle* sum = NULL;
    int num_retvals = 1;
    TFE_Execute(op, &sum, &num_retvals, f->status);
    ASSERT_TF_OK(f->status);
    assert_true(read_scalar(sum) == 6.0f);
    TFE_DeleteTensorHandle(sum);
  }
  TFE_OpReset(op, "Identity", NULL, f->status);
  assert_string_equal(TFE_OpGetDevice(op, f->status), "");
  assert_int_equal(TFE_OpGetFlatInputCount(op, f->status), 0);
  TFE_OpReset(op, "NoSuchOp", NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_NOT_FOUND, "NoSuchOp");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
}

static void input_and_output_lengths(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* a = matrix_handle(f->ctx);
  TFE_TensorHandle* b = matrix_handle(f->ctx);
  TFE_Op* op = TFE_NewOp(f->ctx, "IdentityN", f->status);
  // Not known before the inputs or the attribute T.
  assert_int_equal(TFE_OpGetInputLength(op, "input", f->status), -1);
  assert_int_not_equal(TF_GetCode(f->status), TF_OK);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "the length of output 'output' of 'IdentityN' is not known");
  TFE_TensorHandle* inputs[2] = {a, b};
  TFE_OpAddInputList(op, inputs, 2, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_OpGetInputLength(op, "input", f->status), 2);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), 2);
  TFE_TensorHandle* retvals[2] = {NULL, NULL};
  int num_retvals = 2;
  TFE_Execute(op, retvals, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(num_retvals, 2);
  assert_int_equal(TFE_OpGetInputLength(op, "input", f->status), 2);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), 2);
  assert_int_equal(TFE_OpGetInputLength(op, "nope", f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Input 'nope' not found");
  assert_int_equal(TFE_OpGetOutputLength(op, "nope", f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Output 'nope' not found");
  TFE_DeleteTensorHandle(retvals[0]);
  TFE_DeleteTensorHandle(retvals[1]);
  TFE_DeleteOp(op);
  // Attributes alone may decide a length, before any input (TensorFlow
  // answers from the attributes set).
  op = TFE_NewOp(f->ctx, "Split", f->status);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), -1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "the length of output 'output' of 'Split' is not known");
  TFE_OpSetAttrInt(op, "num_split", 3);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), 3);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  op = TFE_NewOp(f->ctx, "IdentityN", f->status);
  TF_DataType types[3] = {TF_FLOAT, TF_INT32, TF_FLOAT};
  TFE_OpSetAttrTypeList(op, "T", types, 3);
  assert_int_equal(TFE_OpGetInputLength(op, "input", f->status), 3);
  assert_int_equal(TFE_OpGetOutputLength(op, "output", f->status), 3);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  // A single input argument has length one at once.
  op = TFE_NewOp(f->ctx, "AddV2", f->status);
  assert_int_equal(TFE_OpGetInputLength(op, "y", f->status), 1);
  assert_int_equal(TFE_OpGetOutputLength(op, "z", f->status), 1);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
}

static void flag_callback(void* context) {
  *(bool*)context = true;
}

static void cancellation_managers(void** state) {
  fixture_t* f = *state;
  TFE_CancellationManager* manager = TFE_NewCancellationManager();
  assert_false(TFE_CancellationManagerIsCancelled(manager));
  bool first = false, second = false, third = false;
  TFE_CancelCallback callback1 = {flag_callback, &first};
  TFE_CancelCallback callback2 = {flag_callback, &second};
  TFE_CancelCallback callback3 = {flag_callback, &third};
  TFE_CancellationToken token1 = TFE_CancellationManagerGetToken(manager);
  TFE_CancellationToken token2 = TFE_CancellationManagerGetToken(manager);
  TFE_CancellationToken token3 = TFE_CancellationManagerGetToken(manager);
  assert_true(TFE_CancellationManagerRegisterCallback(manager, token1,
                                                      &callback1, "first"));
  assert_true(TFE_CancellationManagerRegisterCallback(manager, token2,
                                                      &callback2, "second"));
  assert_true(TFE_CancellationManagerRegisterCallback(manager, token3,
                                                      &callback3, "third"));
  assert_true(TFE_CancellationManagerDeregisterCallback(manager, token1));
  assert_true(TFE_CancellationManagerTryDeregisterCallback(manager, token3));
  // An op given the manager runs while it is not cancelled.
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  TFE_Op* add = binary_op(f->ctx, "AddV2", x, x);
  TFE_OpSetCancellationManager(add, manager, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(result);
  TFE_CancellationManagerStartCancel(manager);
  assert_true(TFE_CancellationManagerIsCancelled(manager));
  assert_false(TFE_CancellationManagerIsCancelling(manager));
  assert_false(first);
  assert_true(second);
  assert_false(third);
  assert_false(TFE_CancellationManagerRegisterCallback(
      manager, TFE_CancellationManagerGetToken(manager), &callback1, "late"));
  // Now it fails with CANCELLED, before running: at once when synchronous,
  // in its result when asynchronous.
  TFE_Executor* executor = TFE_ContextGetExecutorForThread(f->ctx);
  bool async = TFE_ExecutorIsAsync(executor);
  TFE_DeleteExecutor(executor);
  result = NULL;
  TFE_Execute(add, &result, &num_retvals, f->status);
  if (async) {
    ASSERT_TF_OK(f->status);
    TFE_TensorHandleGetStatus(result, f->status);
    ASSERT_TF_ERROR(f->status, TF_CANCELLED, "AddV2: Operation was cancelled");
    TFE_DeleteTensorHandle(result);
  } else {
    ASSERT_TF_ERROR(f->status, TF_CANCELLED, "AddV2: Operation was cancelled");
    assert_null(result);
  }
  // The op keeps the manager alive; a reset drops it.
  TFE_DeleteCancellationManager(manager);
  TFE_OpReset(add, "AddV2", NULL, f->status);
  TFE_OpAddInput(add, x, f->status);
  TFE_OpAddInput(add, x, f->status);
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(result);
  TFE_OpSetCancellationManager(NULL, NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_OpSetCancellationManager: op is NULL");
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(x);
  // Accepted, and changes nothing.
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_ContextOptionsSetTfrt(options, true);
  TFE_DeleteContextOptions(options);
}

static void attr_types(void** state) {
  fixture_t* f = *state;
  unsigned char is_list = 7;
  assert_int_equal(
      TFE_OpNameGetAttrType(f->ctx, "AddV2", "T", &is_list, f->status),
      TF_ATTR_TYPE);
  ASSERT_TF_OK(f->status);
  assert_int_equal(is_list, 0);
  assert_int_equal(
      TFE_OpNameGetAttrType(f->ctx, "IdentityN", "T", &is_list, f->status),
      TF_ATTR_TYPE);
  assert_int_equal(is_list, 1);
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  assert_int_equal(TFE_OpGetAttrType(op, "shape", &is_list, f->status),
                   TF_ATTR_SHAPE);
  assert_int_equal(TFE_OpGetAttrType(op, "container", &is_list, f->status),
                   TF_ATTR_STRING);
  assert_int_equal(
      TFE_OpGetAttrType(op, "allowed_devices", &is_list, f->status),
      TF_ATTR_STRING);
  assert_int_equal(is_list, 1);
  ASSERT_TF_OK(f->status);
  TFE_OpGetAttrType(op, "nope", &is_list, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Attribute 'nope' does not exist for this operation");
  TFE_OpNameGetAttrType(f->ctx, "NoSuchOp", "T", &is_list, f->status);
  ASSERT_TF_ERROR(f->status, TF_NOT_FOUND, "NoSuchOp");
  TFE_DeleteOp(op);
}

static void every_attr_setter_stores_its_value(void** state) {
  fixture_t* f = *state;
  TFE_Op* op = TFE_NewOp(f->ctx, "Identity", f->status);
  TFE_Op* fn = TFE_NewOp(f->ctx, "AddV2", f->status);
  TFE_OpSetAttrString(op, "s", "abc", 3);
  TFE_OpSetAttrInt(op, "i", -7);
  TFE_OpSetAttrFloat(op, "f", 1.5f);
  TFE_OpSetAttrBool(op, "b", 1);
  TFE_OpSetAttrType(op, "t", TF_INT64);
  int64_t dims[2] = {2, -1};
  TFE_OpSetAttrShape(op, "shape", dims, 2, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrShape(op, "unknown_rank", NULL, -1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrFunction(op, "fn", fn);
  TFE_OpSetAttrFunctionName(op, "fn_name", "Square", 6);
  const void* strings[2] = {"x", "yz"};
  size_t lengths[2] = {1, 2};
  TFE_OpSetAttrStringList(op, "sl", strings, lengths, 2);
  int64_t ints[3] = {1, 2, 3};
  TFE_OpSetAttrIntList(op, "il", ints, 3);
  float floats[2] = {0.5f, 0.25f};
  TFE_OpSetAttrFloatList(op, "fl", floats, 2);
  unsigned char bools[2] = {0, 1};
  TFE_OpSetAttrBoolList(op, "bl", bools, 2);
  TF_DataType types[2] = {TF_FLOAT, TF_INT32};
  TFE_OpSetAttrTypeList(op, "tl", types, 2);
  const int64_t* shape_dims[2] = {dims, NULL};
  int shape_ranks[2] = {2, -1};
  TFE_OpSetAttrShapeList(op, "shl", shape_dims, shape_ranks, 2, f->status);
  ASSERT_TF_OK(f->status);
  const TFE_Op* fns[1] = {fn};
  TFE_OpSetAttrFunctionList(op, "fnl", fns, 1);
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  TFE_OpSetAttrTensor(op, "tensor", t, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteTensor(t);
  int64_t too_many[255];
  for (int i = 0; i < 255; ++i) too_many[i] = 1;
  TFE_OpSetAttrShape(op, "big", too_many, 255, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Value specified for `big` has 255 dimensions which is over "
                  "the limit of 254.");

  const loom_op_attrs_t* attrs = (const loom_op_attrs_t*)TFE_OpGetAttrs(op);
  loom_attr_value_t value;
  assert_true(loom_op_attrs_get(attrs, "s", &value));
  assert_int_equal(value.u.string.size, 3);
  assert_memory_equal(value.u.string.data, "abc", 3);
  int64_t i = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_i64(attrs, "i", &i));
  assert_int_equal(i, -7);
  float fv = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_f32(attrs, "f", &fv));
  assert_true(fv == 1.5f);
  loom_dtype_t dtype;
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(attrs, "t", &dtype));
  assert_int_equal(dtype, LOOM_DTYPE_INT64);
  assert_true(loom_op_attrs_get(attrs, "shape", &value));
  assert_int_equal(value.u.shape.rank, 2);
  assert_int_equal(value.u.shape.dims[1], -1);
  assert_true(loom_op_attrs_get(attrs, "unknown_rank", &value));
  assert_int_equal(value.u.shape.rank, LOOM_UNKNOWN_RANK);
  assert_true(loom_op_attrs_get(attrs, "fn", &value));
  assert_int_equal(value.kind, LOOM_ATTR_KIND_FUNC);
  assert_memory_equal(value.u.string.data, "AddV2", 5);
  assert_true(loom_op_attrs_get(attrs, "sl", &value));
  assert_int_equal(value.count, 2);
  loom_attr_value_t element;
  LOOM_ASSERT_OK(loom_attr_value_list_element(&value, 1, &element));
  assert_memory_equal(element.u.string.data, "yz", 2);
  assert_true(loom_op_attrs_get(attrs, "il", &value));
  assert_int_equal(((const int64_t*)value.u.list)[2], 3);
  assert_true(loom_op_attrs_get(attrs, "fl", &value));
  assert_true(((const float*)value.u.list)[1] == 0.25f);
  assert_true(loom_op_attrs_get(attrs, "bl", &value));
  assert_true(((const bool*)value.u.list)[1]);
  assert_true(loom_op_attrs_get(attrs, "tl", &value));
  assert_int_equal(((const loom_dtype_t*)value.u.list)[1], LOOM_DTYPE_INT32);
  assert_true(loom_op_attrs_get(attrs, "shl", &value));
  assert_int_equal(value.count, 2);
  assert_true(loom_op_attrs_get(attrs, "fnl", &value));
  assert_int_equal(value.count, 1);
  assert_true(loom_op_attrs_get(attrs, "tensor", &value));
  assert_int_equal(value.kind, LOOM_ATTR_KIND_TENSOR);
  // A bad list is remembered and reported by TFE_Execute.
  TFE_OpSetAttrIntList(op, "bad", NULL, 3);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &result, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "attr 'bad': invalid list of 3 values");
  TFE_DeleteOp(fn);
  TFE_DeleteOp(op);
}

// TensorFlow's op recreation: a copy of an op made through the getters.
static TFE_Op* clone_op(const TFE_Op* other, TF_Status* status) {
  TFE_Context* ctx = TFE_OpGetContext(other, status);
  TFE_Op* op = TFE_NewOp(ctx, TFE_OpGetName(other, status), status);
  TFE_OpSetDevice(op, TFE_OpGetDevice(other, status), status);
  TFE_OpAddAttrs(op, TFE_OpGetAttrs(other));
  int n = TFE_OpGetFlatInputCount(other, status);
  for (int i = 0; i < n; ++i) {
    TFE_OpAddInput(op, TFE_OpGetFlatInput(other, i, status), status);
  }
  return op;
}

static void ops_are_recreated_from_their_attrs(void** state) {
  fixture_t* f = *state;
  TFE_Op* var = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(var, "dtype", TF_INT64);
  TFE_OpSetAttrShape(var, "shape", NULL, 0, f->status);
  TFE_OpSetAttrString(var, "container", "", 0);
  TFE_OpSetAttrString(var, "shared_name", "shared", 6);
  TFE_OpSetDevice(var, "CPU:0", f->status);
  TFE_Op* copy = clone_op(var, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_OpGetDevice(copy, f->status), "CPU:0");
  assert_true(
      loom_op_attrs_equal((const loom_op_attrs_t*)TFE_OpGetAttrs(var),
                          (const loom_op_attrs_t*)TFE_OpGetAttrs(copy)));
  // TFE_OpAddAttrs keeps the values already there.
  TFE_Op* other = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(other, "dtype", TF_FLOAT);
  TFE_OpAddAttrs(other, TFE_OpGetAttrs(var));
  loom_dtype_t dtype;
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(
      (const loom_op_attrs_t*)TFE_OpGetAttrs(other), "dtype", &dtype));
  assert_int_equal(dtype, LOOM_DTYPE_FLOAT);
  TFE_DeleteOp(other);
  TFE_DeleteOp(copy);
  TFE_DeleteOp(var);
}

//===----------------------------------------------------------------------===//
// Forwarding
//===----------------------------------------------------------------------===//

static TFE_TensorHandle* ones_100x100(TFE_Context* ctx) {
  static float values[100 * 100];
  for (int i = 0; i < 100 * 100; ++i) values[i] = 1.0f;
  int64_t dims[2] = {100, 100};
  return float_handle(ctx, dims, 2, values);
}

static void add_forwarding(fixture_t* f, bool forward) {
  TFE_TensorHandle* n = ones_100x100(f->ctx);
  TFE_TensorHandle* m = ones_100x100(f->ctx);
  TF_Tensor* original = TFE_TensorHandleResolve(n, f->status);
  void* original_data = TF_TensorData(original);
  TF_DeleteTensor(original);
  TFE_Op* add = binary_op(f->ctx, "AddV2", n, m);
  if (forward) TFE_DeleteTensorHandle(n);  // only the op holds it now
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  if (!forward) TFE_DeleteTensorHandle(n);
  TF_Tensor* t = TFE_TensorHandleResolve(sum, f->status);
  ASSERT_TF_OK(f->status);
  if (forward) {
    assert_ptr_equal(TF_TensorData(t), original_data);
    // The op no longer has the input it handed on.
    assert_null(TFE_OpGetFlatInput(add, 0, f->status));
    ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                    "input 0 (of 2) was handed to a previous execution");
    TFE_TensorHandle* again = NULL;
    TFE_Execute(add, &again, &num_retvals, f->status);
    ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                    "AddV2: input 0 was handed to a previous execution");
  } else {
    assert_ptr_not_equal(TF_TensorData(t), original_data);
  }
  const float* data = TF_TensorData(t);
  for (int i = 0; i < 100 * 100; ++i) assert_true(data[i] == 2.0f);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteOp(add);
  TFE_DeleteTensorHandle(m);
}

static void an_input_only_the_op_holds_is_forwarded(void** state) {
  add_forwarding(*state, true);
}

static void an_input_the_caller_holds_is_not_forwarded(void** state) {
  add_forwarding(*state, false);
}

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

static TFE_TensorHandle* new_variable(fixture_t* f, float value,
                                      const char* shared_name) {
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", NULL, 0, f->status);
  TFE_OpSetAttrString(op, "container", "localhost", 9);
  TFE_OpSetAttrString(op, "shared_name", shared_name, strlen(shared_name));
  TFE_TensorHandle* var = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &var, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(num_retvals, 1);
  assert_int_equal(TFE_TensorHandleDataType(var), TF_RESOURCE);
  assert_int_equal(TFE_TensorHandleNumDims(var, f->status), 0);
  TFE_DeleteOp(op);
  op = TFE_NewOp(f->ctx, "AssignVariableOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpAddInput(op, var, f->status);
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(value));
  memcpy(TF_TensorData(t), &value, sizeof(value));
  TFE_TensorHandle* v = TFE_NewTensorHandle(t, f->status);
  TF_DeleteTensor(t);
  TFE_OpAddInput(op, v, f->status);
  num_retvals = 0;
  TFE_Execute(op, NULL, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(num_retvals, 0);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(v);
  return var;
}

static TFE_TensorHandle* read_variable(fixture_t* f, TFE_TensorHandle* var,
                                       TF_DataType dtype) {
  TFE_Op* op = TFE_NewOp(f->ctx, "ReadVariableOp", f->status);
  TFE_OpSetAttrType(op, "dtype", dtype);
  TFE_OpAddInput(op, var, f->status);
  TFE_TensorHandle* value = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &value, &num_retvals, f->status);
  TFE_DeleteOp(op);
  return value;
}

static void run_on_variable(fixture_t* f, const char* op_name,
                            TFE_TensorHandle* var, TFE_TensorHandle* value) {
  TFE_Op* op = TFE_NewOp(f->ctx, op_name, f->status);
  TFE_OpAddInput(op, var, f->status);
  if (value) TFE_OpAddInput(op, value, f->status);
  int num_retvals = 0;
  TFE_Execute(op, NULL, &num_retvals, f->status);
  TFE_DeleteOp(op);
}

static void variables_assign_and_read(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f, 12.0f, "");
  TFE_TensorHandle* value = read_variable(f, var, TF_FLOAT);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(value) == 12.0f);
  // An update after the read leaves the read's tensor as it was.
  TFE_TensorHandle* three = scalar_handle(f->ctx, 3.0f);
  run_on_variable(f, "AssignAddVariableOp", var, three);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(value) == 12.0f);
  TFE_TensorHandle* updated = read_variable(f, var, TF_FLOAT);
  assert_true(read_scalar(updated) == 15.0f);
  TFE_DeleteTensorHandle(updated);
  TFE_DeleteTensorHandle(value);
  run_on_variable(f, "AssignSubVariableOp", var, three);
  updated = read_variable(f, var, TF_FLOAT);
  assert_true(read_scalar(updated) == 12.0f);
  TFE_DeleteTensorHandle(updated);
  TFE_DeleteTensorHandle(three);
  TFE_DeleteTensorHandle(var);
}

static void variable_errors(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f, 1.0f, "");
  TFE_TensorHandle* value = read_variable(f, var, TF_INT32);
  assert_null(value);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Trying to read variable with wrong dtype. Expected float "
                  "got int32");
  int32_t one = 1;
  TFE_TensorHandle* i = int_handle(f->ctx, NULL, 0, &one);
  run_on_variable(f, "AssignVariableOp", var, i);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Trying to assign variable with wrong dtype. Expected float "
                  "got int32");
  run_on_variable(f, "DestroyResourceOp", var, NULL);
  ASSERT_TF_OK(f->status);
  value = read_variable(f, var, TF_FLOAT);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "This could mean that the variable has been deleted");
  TFE_DeleteTensorHandle(i);
  TFE_DeleteTensorHandle(var);
  // Read before any assign.
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", NULL, 0, f->status);
  int num_retvals = 1;
  TFE_Execute(op, &var, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  value = read_variable(f, var, TF_FLOAT);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "Attempting to use uninitialized value _AnonymousVar");
  TFE_DeleteTensorHandle(var);
}

static void shared_variables_are_found_by_name(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* a = new_variable(f, 5.0f, "counter");
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", NULL, 0, f->status);
  TFE_OpSetAttrString(op, "container", "localhost", 9);
  TFE_OpSetAttrString(op, "shared_name", "counter", 7);
  TFE_TensorHandle* b = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &b, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  TFE_TensorHandle* value = read_variable(f, b, TF_FLOAT);
  assert_true(read_scalar(value) == 5.0f);
  TFE_DeleteTensorHandle(value);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
}

static void async_variables_keep_program_order(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f, 0.0f, "");
  TFE_TensorHandle* one = scalar_handle(f->ctx, 1.0f);
  for (int i = 0; i < 20; ++i) {
    run_on_variable(f, "AssignAddVariableOp", var, one);
    ASSERT_TF_OK(f->status);
  }
  TFE_TensorHandle* value = read_variable(f, var, TF_FLOAT);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(value) == 20.0f);
  TFE_DeleteTensorHandle(value);
  TFE_DeleteTensorHandle(one);
  TFE_DeleteTensorHandle(var);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

//===----------------------------------------------------------------------===//
// Executors
//===----------------------------------------------------------------------===//

static void executors_set_the_thread_mode(void** state) {
  fixture_t* f = *state;
  TFE_Executor* current = TFE_ContextGetExecutorForThread(f->ctx);
  assert_false(TFE_ExecutorIsAsync(current));
  TFE_DeleteExecutor(current);
  TFE_Executor* async = TFE_NewExecutor(true, false, 0);
  assert_true(TFE_ExecutorIsAsync(async));
  TFE_ExecutorWaitForAllPendingNodes(async, f->status);  // not attached: OK
  ASSERT_TF_OK(f->status);
  TFE_ContextSetExecutorForThread(f->ctx, async);
  current = TFE_ContextGetExecutorForThread(f->ctx);
  assert_true(TFE_ExecutorIsAsync(current));
  TFE_DeleteExecutor(current);
  // An asynchronous thread on a synchronous context: errors wait.
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  int64_t dims[1] = {3};
  float zeros[3] = {0, 0, 0};
  TFE_TensorHandle* y = float_handle(f->ctx, dims, 1, zeros);
  int64_t dims2[1] = {2};
  TFE_TensorHandle* z = float_handle(f->ctx, dims2, 1, zeros);
  TFE_Op* add = binary_op(f->ctx, "AddV2", y, z);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(result);
  TFE_ExecutorWaitForAllPendingNodes(async, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Incompatible shapes: [3] vs. [2]");
  TFE_ExecutorClearError(async);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_ContextSetAsyncForThread(f->ctx, 0, f->status);
  ASSERT_TF_OK(f->status);
  TFE_Execute(add, &result, &num_retvals, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Incompatible shapes: [3] vs. [2]");
  TFE_DeleteOp(add);
  TFE_DeleteExecutor(async);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteTensorHandle(z);
  TFE_ExecutorWaitForAllPendingNodes(NULL, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_ExecutorWaitForAllPendingNodes: executor is NULL");
}

static void host_address_space(void** state) {
  fixture_t* f = *state;
  TF_Buffer* buffer = TF_NewBuffer();
  TFE_HostAddressSpace(f->ctx, buffer);
  assert_int_equal(buffer->length, strlen("/job:localhost/replica:0/task:0"));
  assert_memory_equal(buffer->data, "/job:localhost/replica:0/task:0",
                      buffer->length);
  TF_DeleteBuffer(buffer);
}

// An attribute the op does not define is an error at execute, as in
// TensorFlow; one named with a leading '_' is the runtime's and allowed.
static void unknown_attr_is_an_error_at_execute(void** state) {
  fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 2.0f);
  TFE_Op* op = TFE_NewOp(f->ctx, "AddV2", f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_OpSetAttrInt(op, "no_such_attr", 3);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* y = NULL;
  int n = 1;
  TFE_Execute(op, &y, &n, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "NodeDef mentions attr 'no_such_attr' not in "
                  "Op<name=AddV2>: the op's attrs are {T}");
  assert_null(y);
  // The same op without it runs; a '_'-prefixed attr is accepted.
  TFE_OpReset(op, "AddV2", NULL, f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_OpSetAttrString(op, "_class", "loc:@x", 6);
  n = 1;
  TFE_Execute(op, &y, &n, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(y) == 4.0f);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
}

int main(void) {
#define SYNC(test) \
  cmocka_unit_test_setup_teardown(test, eager_setup_sync, eager_teardown)
#define ASYNC(test) \
  cmocka_unit_test_setup_teardown(test, eager_setup_async, eager_teardown)
  const struct CMUnitTest tests[] = {
      SYNC(context_lists_its_cpu),
      SYNC(options_take_a_config_proto),
      SYNC(tensor_handle_reports_its_tensor),
      SYNC(null_handles_are_invalid),
      SYNC(copy_sharing_tensor_shares_the_buffer),
      SYNC(copy_to_the_cpu_shares_the_buffer),
      SYNC(context_free_handles_run_on_any_context),
      SYNC(device_memory_is_wrapped_and_freed_once),
      SYNC(execute_add),
      ASYNC(execute_add),
      SYNC(unknown_attr_is_an_error_at_execute),
      SYNC(execute_matmul),
      ASYNC(execute_matmul),
      SYNC(matmul_runtime_error_is_returned_by_execute),
      ASYNC(async_matmul_error_surfaces_at_resolve_and_wait),
      ASYNC(async_add_runs),
      ASYNC(mismatched_input_types_are_errors),
      SYNC(execute_min),
      ASYNC(execute_min),
      SYNC(mismatched_input_types_are_errors),
      SYNC(cancellation_managers),
      ASYNC(cancellation_managers),
      SYNC(execute_needs_room_for_the_outputs),
      SYNC(unknown_ops_and_devices_are_errors),
      SYNC(op_reports_name_context_device_and_inputs),
      SYNC(op_reset_reuses_the_op),
      SYNC(input_and_output_lengths),
      SYNC(attr_types),
      SYNC(every_attr_setter_stores_its_value),
      SYNC(ops_are_recreated_from_their_attrs),
      SYNC(an_input_only_the_op_holds_is_forwarded),
      SYNC(an_input_the_caller_holds_is_not_forwarded),
      ASYNC(an_input_only_the_op_holds_is_forwarded),
      SYNC(variables_assign_and_read),
      ASYNC(variables_assign_and_read),
      SYNC(variable_errors),
      SYNC(shared_variables_are_found_by_name),
      ASYNC(async_variables_keep_program_order),
      SYNC(executors_set_the_thread_mode),
      SYNC(host_address_space),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
