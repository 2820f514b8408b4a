// Custom devices (TFE_CustomDevice) on Loom: registration, copies on and
// off, execution, input-based placement, variables on the device, an If
// whose condition is on the device, and lifetimes. The device here wraps
// CPU tensors and counts what it sees.

#include <stdlib.h>

#include "eager_test_util.h"
#include "loom/eager.h"
#include "loom/function.h"
#include "loom/op_handler.h"

typedef eager_fixture_t fixture_t;

typedef struct device_t {
  char name[128];
  bool strict;          // only explicitly placed ops
  bool allow_copy_off;  // copy_tensor_from_device works
  int pin;              // -1: no shall_pin callback; else its answer
  int arrived;          // tensors copied on
  int executed;         // ops executed
  char last_op[64];     // the name of the last one
  int* deleted;         // incremented by delete_device
} device_t;

typedef struct wrapped_t {
  TFE_TensorHandle* inner;  // on the CPU
} wrapped_t;

static int wrapped_num_dims(void* data, TF_Status* status) {
  return TFE_TensorHandleNumDims(((wrapped_t*)data)->inner, status);
}

static int64_t wrapped_dim(void* data, int index, TF_Status* status) {
  return TFE_TensorHandleDim(((wrapped_t*)data)->inner, index, status);
}

static void wrapped_free(void* data) {
  wrapped_t* wrapped = data;
  TFE_DeleteTensorHandle(wrapped->inner);
  free(wrapped);
}

static TF_Buffer* wrapped_summary(void* data, TF_Status* status) {
  (void)data;
  (void)status;
  return TF_NewBufferFromString("wrapped tensor", 14);
}

// Takes `inner` (a CPU handle) onto the device.
static TFE_TensorHandle* wrap(TFE_Context* ctx, device_t* device,
                              TFE_TensorHandle* inner, TF_Status* status) {
  wrapped_t* wrapped = malloc(sizeof(*wrapped));
  wrapped->inner = inner;
  TFE_CustomDeviceTensorHandle methods;
  memset(&methods, 0, sizeof(methods));
  methods.version = TFE_CUSTOM_DEVICE_VERSION;
  methods.num_dims = wrapped_num_dims;
  methods.dim = wrapped_dim;
  methods.deallocator = wrapped_free;
  methods.summarize = wrapped_summary;
  return TFE_NewCustomDeviceTensorHandle(ctx, device->name,
                                         TFE_TensorHandleDataType(inner),
                                         wrapped, methods, status);
}

static TFE_TensorHandle* copy_on(TFE_Context* ctx, TFE_TensorHandle* tensor,
                                 TF_Status* status, void* info) {
  device_t* device = info;
  TFE_TensorHandle* inner = TFE_TensorHandleCopyToDevice(
      tensor, ctx, "/job:localhost/replica:0/task:0/device:CPU:0", status);
  if (TF_GetCode(status) != TF_OK) return NULL;
  device->arrived++;
  return wrap(ctx, device, inner, status);
}

static TFE_TensorHandle* copy_off(TFE_Context* ctx, TFE_TensorHandle* tensor,
                                  const char* target, TF_Status* status,
                                  void* info) {
  device_t* device = info;
  if (!device->allow_copy_off) {
    TF_SetStatus(status, TF_INTERNAL,
                 "Trying to copy a tensor out of the wrapping device.");
    return NULL;
  }
  wrapped_t* wrapped = TFE_TensorHandleDevicePointer(tensor, status);
  if (TF_GetCode(status) != TF_OK) return NULL;
  return TFE_TensorHandleCopyToDevice(wrapped->inner, ctx, target, status);
}

static void execute(const TFE_Op* original, int* num_outputs,
                    TFE_TensorHandle** outputs, TF_Status* status, void* info) {
  device_t* device = info;
  if (device->strict && TFE_OpGetDevice(original, status)[0] == '\0') {
    TF_SetStatus(status, TF_INTERNAL,
                 "Ops must be placed on the wrapping device explicitly.");
    return;
  }
  TFE_Context* ctx = TFE_OpGetContext(original, status);
  snprintf(device->last_op, sizeof(device->last_op), "%s",
           TFE_OpGetName(original, status));
  TFE_Op* op = TFE_NewOp(ctx, TFE_OpGetName(original, status), status);
  if (TF_GetCode(status) != TF_OK) return;
  TFE_OpAddAttrs(op, TFE_OpGetAttrs(original));
  TFE_OpSetDevice(op, "/job:localhost/replica:0/task:0/device:CPU:0", status);
  int n = TFE_OpGetFlatInputCount(original, status);
  for (int i = 0; i < n && TF_GetCode(status) == TF_OK; ++i) {
    TFE_TensorHandle* input = TFE_OpGetFlatInput(original, i, status);
    const char* where = TFE_TensorHandleDeviceName(input, status);
    if (strcmp(where, device->name) == 0) {
      wrapped_t* wrapped = TFE_TensorHandleDevicePointer(input, status);
      input = wrapped->inner;
    }
    TFE_OpAddInput(op, input, status);
  }
  TFE_TensorHandle* inner[8] = {NULL};
  if (TF_GetCode(status) == TF_OK) {
    TFE_Execute(op, inner, num_outputs, status);
  }
  TFE_DeleteOp(op);
  if (TF_GetCode(status) != TF_OK) return;
  for (int i = 0; i < *num_outputs; ++i) {
    outputs[i] = wrap(ctx, device, inner[i], status);
  }
  device->executed++;
}

// Sends every op placed by its inputs to the physical device.
static bool shall_pin(const TFE_Op* op, TF_Status* status) {
  (void)op;
  (void)status;
  return false;
}

static void delete_device(void* info) {
  device_t* device = info;
  if (device->deleted) (*device->deleted)++;
  free(device);
}

static TFE_CustomDevice device_callbacks(void) {
  TFE_CustomDevice callbacks;
  memset(&callbacks, 0, sizeof(callbacks));
  callbacks.version = TFE_CUSTOM_DEVICE_VERSION;
  callbacks.copy_tensor_to_device = copy_on;
  callbacks.copy_tensor_from_device = copy_off;
  callbacks.execute = execute;
  callbacks.delete_device = delete_device;
  return callbacks;
}

// Registers a wrapping device; returns its info (owned by the context).
static device_t* register_device(TFE_Context* ctx, const char* name,
                                 bool strict, TF_Status* status) {
  device_t* device = calloc(1, sizeof(*device));
  snprintf(device->name, sizeof(device->name), "%s", name);
  device->strict = strict;
  device->pin = -1;
  TFE_RegisterCustomDevice(ctx, device_callbacks(), name, device, status);
  return device;
}

static const char kCustom0[] =
    "/job:localhost/replica:0/task:0/device:CUSTOM:0";
static const char kCustom1[] =
    "/job:localhost/replica:0/task:0/device:CUSTOM:1";
static const char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";

static TFE_TensorHandle* execute_add(fixture_t* f, TFE_TensorHandle* a,
                                     TFE_TensorHandle* b, const char* device) {
  TFE_Op* add = binary_op(f->ctx, "AddV2", a, b);
  if (device) TFE_OpSetDevice(add, device, f->status);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(add, &result, &num_retvals, f->status);
  TFE_DeleteOp(add);
  return result;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void register_copy_and_execute(void** state) {
  fixture_t* f = *state;
  device_t* device = register_device(f->ctx, kCustom0, true, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(TFE_IsCustomDevice(f->ctx, kCustom0));
  assert_true(TFE_IsCustomDevice(f->ctx, "CUSTOM:0"));
  assert_false(TFE_IsCustomDevice(f->ctx, kCpu));
  TFE_TensorHandle* hcpu = matrix_handle(f->ctx);
  assert_int_equal(device->arrived, 0);
  TFE_TensorHandle* hdevice =
      TFE_TensorHandleCopyToDevice(hcpu, f->ctx, kCustom0, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->arrived, 1);
  assert_int_equal(device->executed, 0);
  assert_string_equal(TFE_TensorHandleDeviceName(hdevice, f->status), kCustom0);
  assert_string_equal(TFE_TensorHandleDeviceType(hdevice, f->status), "CUSTOM");
  assert_int_equal(TFE_TensorHandleDataType(hdevice), TF_FLOAT);
  assert_int_equal(TFE_TensorHandleNumDims(hdevice, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(hdevice, 1, f->status), 2);
  assert_int_equal(TFE_TensorHandleDeviceMemorySize(hdevice, f->status),
                   4 * sizeof(float));
  ASSERT_TF_OK(f->status);
  // Explicitly placed: the device's execute sees a mix of inputs.
  TFE_TensorHandle* sum = execute_add(f, hcpu, hdevice, kCustom0);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 1);
  assert_string_equal(TFE_TensorHandleDeviceName(sum, f->status), kCustom0);
  // Resolving copies off the device, which this one refuses.
  assert_null(TFE_TensorHandleResolve(sum, f->status));
  ASSERT_TF_ERROR(f->status, TF_INTERNAL,
                  "Trying to copy a tensor out of the wrapping device.");
  device->allow_copy_off = true;
  float values[4];
  read_floats(sum, values, 4);
  assert_true(values[0] == 2 && values[3] == 8);
  // The handler's debug string is the tensor's summary.
  loom_tensor_handle_t* native = (loom_tensor_handle_t*)sum;
  loom_op_handler_t* handler = loom_tensor_handle_handler(native);
  char text[64];
  loom_op_handler_vtable(handler)->tensor_debug_string(handler, native, text,
                                                       sizeof(text));
  assert_string_equal(text, "wrapped tensor");
  TFE_DeleteTensorHandle(sum);
  TFE_DeleteTensorHandle(hdevice);
  TFE_DeleteTensorHandle(hcpu);
  TF_DeviceList* devices = TFE_ContextListDevices(f->ctx, f->status);
  assert_int_equal(TF_DeviceListCount(devices), 2);
  assert_string_equal(TF_DeviceListName(devices, 1, f->status), kCustom0);
  assert_string_equal(TF_DeviceListType(devices, 1, f->status), "CUSTOM");
  TF_DeleteDeviceList(devices);
}

static void reset_keeps_the_custom_device_name(void** state) {
  fixture_t* f = *state;
  register_device(f->ctx, kCustom0, true, f->status);
  ASSERT_TF_OK(f->status);
  TFE_Op* op = TFE_NewOp(f->ctx, "Identity", f->status);
  TFE_OpReset(op, "Identity", kCustom0, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_OpGetDevice(op, f->status), kCustom0);
  TFE_OpReset(op, "Identity", kCpu, f->status);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_OpGetDevice(op, f->status), kCpu);
  TFE_DeleteOp(op);
}

static TFE_TensorHandle* var_handle(fixture_t* f, const char* device) {
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", NULL, 0, f->status);
  TFE_OpSetAttrString(op, "container", "", 0);
  TFE_OpSetAttrString(op, "shared_name", "", 0);
  TFE_OpSetDevice(op, device, f->status);
  TFE_TensorHandle* var = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &var, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  return var;
}

static void run(fixture_t* f, const char* name, TFE_TensorHandle* a,
                TFE_TensorHandle* b, const char* device,
                TFE_TensorHandle** result) {
  TFE_Op* op = TFE_NewOp(f->ctx, name, f->status);
  TFE_OpAddInput(op, a, f->status);
  if (b) TFE_OpAddInput(op, b, f->status);
  if (result) TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  if (device) TFE_OpSetDevice(op, device, f->status);
  int num_retvals = result ? 1 : 0;
  TFE_Execute(op, result, &num_retvals, f->status);
  TFE_DeleteOp(op);
}

static void variables_live_on_the_device(void** state) {
  fixture_t* f = *state;
  device_t* device = register_device(f->ctx, kCustom0, true, f->status);
  TFE_TensorHandle* var = var_handle(f, kCustom0);
  assert_int_equal(device->executed, 1);
  assert_string_equal(TFE_TensorHandleDeviceName(var, f->status), kCustom0);
  TFE_TensorHandle* value = scalar_handle(f->ctx, 111.0f);
  run(f, "AssignVariableOp", var, value, kCustom0, NULL);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 2);
  TFE_TensorHandle* read = NULL;
  run(f, "ReadVariableOp", var, NULL, kCustom0, &read);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 3);
  assert_string_equal(TFE_TensorHandleBackingDeviceName(read, f->status),
                      kCustom0);
  wrapped_t* wrapped = TFE_TensorHandleDevicePointer(read, f->status);
  ASSERT_TF_OK(f->status);
  assert_true(read_scalar(wrapped->inner) == 111.0f);
  run(f, "DestroyResourceOp", var, NULL, kCustom0, NULL);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(read);
  TFE_DeleteTensorHandle(value);
  TFE_DeleteTensorHandle(var);
}

static void an_input_on_the_device_places_the_op_there(void** state) {
  fixture_t* f = *state;
  device_t* device = register_device(f->ctx, kCustom0, false, f->status);
  TFE_TensorHandle* var = var_handle(f, kCustom0);
  TFE_TensorHandle* value = scalar_handle(f->ctx, 2.0f);
  run(f, "AssignVariableOp", var, value, kCustom0, NULL);
  device->executed = 0;
  TFE_TensorHandle* read = NULL;
  run(f, "ReadVariableOp", var, NULL, NULL, &read);  // no placement
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 1);
  assert_string_equal(TFE_TensorHandleDeviceName(read, f->status), kCustom0);
  TFE_DeleteTensorHandle(read);
  TFE_DeleteTensorHandle(value);
  TFE_DeleteTensorHandle(var);
}

static void input_based_placement(void** state) {
  fixture_t* f = *state;
  device_t* custom0 = register_device(f->ctx, kCustom0, false, f->status);
  ASSERT_TF_OK(f->status);
  device_t* custom1 = register_device(f->ctx, kCustom1, true, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* hcpu = matrix_handle(f->ctx);
  TFE_TensorHandle* h0 =
      TFE_TensorHandleCopyToDevice(hcpu, f->ctx, kCustom0, f->status);
  TFE_TensorHandle* h1 =
      TFE_TensorHandleCopyToDevice(hcpu, f->ctx, kCustom1, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(custom0->arrived + custom1->arrived, 2);
  // Two CPU inputs: the CPU.
  TFE_TensorHandle* r = execute_add(f, hcpu, hcpu, NULL);
  ASSERT_TF_OK(f->status);
  assert_string_equal(TFE_TensorHandleDeviceName(r, f->status), kCpu);
  TFE_DeleteTensorHandle(r);
  assert_int_equal(custom0->executed, 0);
  // Inputs on one custom device: that device.
  r = execute_add(f, h0, h0, NULL);
  ASSERT_TF_OK(f->status);
  assert_int_equal(custom0->executed, 1);
  TFE_DeleteTensorHandle(r);
  // Inputs on two custom devices: an error naming both.
  r = execute_add(f, h0, h1, NULL);
  assert_null(r);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kCustom0);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, kCustom1);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "AddV2: inputs are placed on two different op handlers");
  // A custom device and the CPU: the custom device.
  r = execute_add(f, h0, hcpu, NULL);
  ASSERT_TF_OK(f->status);
  assert_int_equal(custom0->executed, 2);
  TFE_DeleteTensorHandle(r);
  // An explicit placement wins: the input must come off the device, which
  // it refuses.
  r = execute_add(f, h0, hcpu, kCpu);
  assert_null(r);
  ASSERT_TF_ERROR(f->status, TF_INTERNAL,
                  "Trying to copy a tensor out of the wrapping device.");
  assert_int_equal(custom0->executed, 2);
  // A device may refuse ops placed by their inputs.
  r = execute_add(f, h1, hcpu, NULL);
  assert_null(r);
  ASSERT_TF_ERROR(f->status, TF_INTERNAL,
                  "Ops must be placed on the wrapping device explicitly.");
  assert_int_equal(custom1->executed, 0);
  TFE_DeleteTensorHandle(h0);
  TFE_DeleteTensorHandle(h1);
  TFE_DeleteTensorHandle(hcpu);
}

static void shall_pin_sends_ops_to_the_cpu(void** state) {
  fixture_t* f = *state;
  device_t* device = calloc(1, sizeof(*device));
  snprintf(device->name, sizeof(device->name), "%s", kCustom0);
  device->allow_copy_off = true;
  TFE_CustomDevice callbacks = device_callbacks();
  callbacks.shall_pin_to_this_device = shall_pin;
  TFE_RegisterCustomDevice(f->ctx, callbacks, kCustom0, device, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* hcpu = matrix_handle(f->ctx);
  TFE_TensorHandle* h0 =
      TFE_TensorHandleCopyToDevice(hcpu, f->ctx, kCustom0, f->status);
  TFE_TensorHandle* r = execute_add(f, h0, hcpu, NULL);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 0);
  assert_string_equal(TFE_TensorHandleDeviceName(r, f->status), kCpu);
  float values[4];
  read_floats(r, values, 4);
  assert_true(values[1] == 4);
  TFE_DeleteTensorHandle(r);
  // Explicit placement still reaches the device.
  r = execute_add(f, h0, hcpu, kCustom0);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 1);
  TFE_DeleteTensorHandle(r);
  TFE_DeleteTensorHandle(h0);
  TFE_DeleteTensorHandle(hcpu);
}

static void invalid_registrations(void** state) {
  fixture_t* f = *state;
  int deleted = 0;
  device_t* device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, device_callbacks(), "/device:CUSTOM:0",
                           device, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "device name '/device:CUSTOM:0' is not fully qualified");
  assert_int_equal(deleted, 1);

  device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, device_callbacks(), kCustom0, device,
                           f->status);
  ASSERT_TF_OK(f->status);
  device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, device_callbacks(), kCustom0, device,
                           f->status);
  ASSERT_TF_ERROR(f->status, TF_ALREADY_EXISTS,
                  "a device named "
                  "'/job:localhost/replica:0/task:0/device:CUSTOM:0' already "
                  "exists");
  assert_int_equal(deleted, 2);
  device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, device_callbacks(), kCpu, device, f->status);
  ASSERT_TF_ERROR(f->status, TF_ALREADY_EXISTS, "already exists");
  assert_int_equal(deleted, 3);

  TFE_CustomDevice callbacks = device_callbacks();
  callbacks.version = 3;
  device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, callbacks, kCustom1, device, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_CustomDevice version 3 is not supported (Loom supports "
                  "4)");
  assert_int_equal(deleted, 4);
  callbacks = device_callbacks();
  callbacks.execute = NULL;
  device = calloc(1, sizeof(*device));
  device->deleted = &deleted;
  TFE_RegisterCustomDevice(f->ctx, callbacks, kCustom1, device, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "the device's execute callback is NULL");
  assert_int_equal(deleted, 5);
  TFE_DeleteContext(f->ctx);
  f->ctx = new_context(false);
  assert_int_equal(deleted, 6);  // the registered one, with its context
}

static void tensors_on_a_non_custom_device_are_refused(void** state) {
  fixture_t* f = *state;
  wrapped_t* wrapped = malloc(sizeof(*wrapped));
  wrapped->inner = scalar_handle(f->ctx, 1.0f);
  TFE_CustomDeviceTensorHandle methods;
  memset(&methods, 0, sizeof(methods));
  methods.version = TFE_CUSTOM_DEVICE_VERSION;
  methods.num_dims = wrapped_num_dims;
  methods.dim = wrapped_dim;
  methods.deallocator = wrapped_free;
  TFE_TensorHandle* h = TFE_NewCustomDeviceTensorHandle(
      f->ctx, kCpu, TF_FLOAT, wrapped, methods, f->status);
  assert_null(h);  // and `wrapped` was freed (ASan would tell)
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_NewCustomDeviceTensorHandle: "
                  "'/job:localhost/replica:0/task:0/device:CPU:0' is not a "
                  "custom device");
  int n = 1;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 1.0f);
  assert_null(TFE_CreatePackedTensorHandle(f->ctx, &x, &n, f->status));
  ASSERT_TF_ERROR(f->status, TF_UNIMPLEMENTED,
                  "Packed tensor handles are only supported through a custom "
                  "device's pack callback");
  TFE_DeleteTensorHandle(x);
}

static void device_tensors_outlive_their_context(void** state) {
  fixture_t* f = *state;
  int deleted = 0;
  device_t* device = register_device(f->ctx, kCustom0, false, f->status);
  device->deleted = &deleted;
  TFE_TensorHandle* hcpu = matrix_handle(f->ctx);
  TFE_TensorHandle* h0 =
      TFE_TensorHandleCopyToDevice(hcpu, f->ctx, kCustom0, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteContext(f->ctx);
  f->ctx = new_context(false);
  assert_int_equal(deleted, 0);  // the tensor keeps the device
  assert_null(TFE_TensorHandleResolve(h0, f->status));
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "of a context that no longer exists");
  assert_int_equal(TFE_TensorHandleNumDims(h0, f->status), 2);
  TFE_DeleteTensorHandle(h0);
  assert_int_equal(deleted, 1);
  TFE_DeleteTensorHandle(hcpu);
}

// name(x: float) = op(x), added to the context's library (a TFE_Context
// is a loom_context_t).
static void add_unary_function(fixture_t* f, const char* name, const char* op) {
  loom_function_builder_t* b = NULL;
  assert_null(loom_function_builder_create(loom_allocator_system(), name, &b));
  assert_null(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x"};
  assert_null(
      loom_function_builder_add_node(b, "n", op, inputs, 1, NULL, NULL));
  assert_null(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT, NULL,
                                               "n:y:0"));
  loom_function_t* function = NULL;
  assert_null(loom_function_builder_finish(b, &function));
  assert_null(loom_context_add_function((loom_context_t*)f->ctx, function));
  loom_function_release(function);
}

// If(cond, x) with then_branch square, else_branch neg.
static TFE_TensorHandle* execute_if(fixture_t* f, TFE_TensorHandle* cond,
                                    TFE_TensorHandle* x) {
  TFE_Op* op = binary_op(f->ctx, "If", cond, x);
  TFE_OpSetAttrFunctionName(op, "then_branch", "square", 6);
  TFE_OpSetAttrFunctionName(op, "else_branch", "neg", 3);
  TF_DataType tout = TF_FLOAT;
  TFE_OpSetAttrTypeList(op, "Tout", &tout, 1);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &result, &num_retvals, f->status);
  TFE_DeleteOp(op);
  return result;
}

// TensorFlow's design of handlers and control flow: an If whose condition
// is on the device reaches the device's execute whole; with the condition
// on the CPU and x on the device, the If runs op by op and the device sees
// its branch's op. NumPy: [[1, 2], [3, 4]] ** 2 = [[1, 4], [9, 16]].
static void a_condition_on_the_device_makes_it_see_the_if(void** state) {
  fixture_t* f = *state;
  device_t* device = register_device(f->ctx, kCustom0, false, f->status);
  ASSERT_TF_OK(f->status);
  device->allow_copy_off = true;
  add_unary_function(f, "square", "Square");
  add_unary_function(f, "neg", "Neg");
  TFE_TensorHandle* x = matrix_handle(f->ctx);
  TFE_TensorHandle* truth = int_handle(f->ctx, NULL, 0, (const int32_t[]){1});
  TFE_TensorHandle* on_device =
      TFE_TensorHandleCopyToDevice(truth, f->ctx, kCustom0, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* r = execute_if(f, on_device, x);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 1);
  assert_string_equal(device->last_op, "If");
  assert_string_equal(TFE_TensorHandleDeviceName(r, f->status), kCustom0);
  TFE_TensorHandle* back =
      TFE_TensorHandleCopyToDevice(r, f->ctx, kCpu, f->status);
  ASSERT_TF_OK(f->status);
  float values[4];
  read_floats(back, values, 4);
  static const float kSquares[4] = {1, 4, 9, 16};
  for (int i = 0; i < 4; ++i) assert_true(values[i] == kSquares[i]);
  TFE_DeleteTensorHandle(back);
  TFE_DeleteTensorHandle(r);
  // The condition on the CPU, x on the device: op by op.
  TFE_TensorHandle* x_on_device =
      TFE_TensorHandleCopyToDevice(x, f->ctx, kCustom0, f->status);
  ASSERT_TF_OK(f->status);
  r = execute_if(f, truth, x_on_device);
  ASSERT_TF_OK(f->status);
  assert_int_equal(device->executed, 2);
  assert_string_equal(device->last_op, "Square");
  TFE_DeleteTensorHandle(r);
  TFE_DeleteTensorHandle(x_on_device);
  TFE_DeleteTensorHandle(on_device);
  TFE_DeleteTensorHandle(truth);
  TFE_DeleteTensorHandle(x);
}

int main(void) {
#define TEST(test) \
  cmocka_unit_test_setup_teardown(test, eager_setup_sync, eager_teardown)
  const struct CMUnitTest tests[] = {
      TEST(register_copy_and_execute),
      TEST(reset_keeps_the_custom_device_name),
      TEST(variables_live_on_the_device),
      TEST(an_input_on_the_device_places_the_op_there),
      TEST(input_based_placement),
      TEST(shall_pin_sends_ops_to_the_cpu),
      TEST(invalid_registrations),
      TEST(tensors_on_a_non_custom_device_are_refused),
      TEST(a_condition_on_the_device_makes_it_see_the_if),
      TEST(device_tensors_outlive_their_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
