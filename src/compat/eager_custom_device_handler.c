// Custom devices: TensorFlow's TFE_CustomDevice as a final op handler.
//
// An op placed on the device — explicitly, or because an input lives there
// (unless shall_pin_to_this_device declines: the pins_op hook) — goes to
// the device's execute callback with the caller's TFE_Op, inputs as they
// are (the execute_eager_op hook). Copies onto and off the device (CopyOn /
// CopyOff, which the front end runs for TFE_TensorHandleCopyToDevice,
// resolves and explicit placements) go to its copy callbacks. Its tensors
// hold the device's data as their handler representation, freed with the
// tensor's deallocator; their shape is asked of the tensor's methods only
// when someone needs it (tensor_metadata; tensor_dtype answers without).

#include "compat/eager_custom_device_handler.h"

#include <stdio.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "frontend/frontend_internal.h"
#include "loom/tensor_handle.h"

typedef struct custom_device_t {
  loom_allocator_t allocator;
  // Its context's, which finds the context while it lives (context_of).
  loom_runtime_t* runtime;
  TFE_CustomDevice device;
  void* info;
  char name[192];
} custom_device_t;

// What one of its tensors holds.
typedef struct custom_tensor_t {
  loom_dtype_t dtype;
  void* data;
  bool has_methods;
  TFE_CustomDeviceTensorHandle methods;
  // Device memory of a known shape (TFE_NewTensorHandleFromDeviceMemory).
  void (*memory_deallocator)(void* data, size_t len, void* arg);
  size_t len;
  void* memory_arg;
} custom_tensor_t;

static custom_device_t* state_of(const loom_op_handler_t* handler) {
  return loom_op_handler_state(handler);
}

static loom_allocator_t allocator_of(const loom_op_handler_t* handler) {
  return state_of(handler)->allocator;
}

// Calls a TensorFlow-style callback with a status on the stack.
typedef struct call_status_t {
  TF_Status status;
} call_status_t;

static void call_begin(call_status_t* call, loom_allocator_t allocator) {
  loom__tf_status_initialize(&call->status, allocator);
}

// The callback's status (consumed from the call).
static loom_status_t call_end(call_status_t* call) {
  loom_status_t status = loom__tf_status_take(&call->status);
  loom__tf_status_deinitialize(&call->status);
  return status;
}

// The device's context, or NULL once it is destroyed: the device (its
// tensors keep it) must not call back with it any more.
static loom_context_t* context_of(custom_device_t* device) {
  return loom__context_of_runtime(device->runtime);
}

static loom_status_t detached_error(const custom_device_t* device) {
  return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                          "custom device '%s': its context was destroyed",
                          device->name);
}

//===----------------------------------------------------------------------===//
// Executing on the device
//===----------------------------------------------------------------------===//

// Runs the device's execute callback for `op`: *out_count outputs (at most
// `capacity`, `expected` when known) into outputs[0, *out_count).
static loom_status_t call_execute(custom_device_t* device, loom_eager_op_t* op,
                                  int32_t expected,
                                  loom_tensor_handle_t** outputs,
                                  int32_t capacity, int32_t* out_count) {
  *out_count = 0;
  if (expected > capacity) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: Expecting %d outputs, but *num_retvals is %d",
                            loom_eager_op_name(op), expected, capacity);
  }
  for (int32_t i = 0; i < capacity; ++i) outputs[i] = NULL;
  int num_outputs = expected >= 0 ? expected : capacity;
  call_status_t call;
  call_begin(&call, device->allocator);
  device->device.execute((const TFE_Op*)op, &num_outputs,
                         (TFE_TensorHandle**)outputs, &call.status,
                         device->info);
  loom_status_t status = call_end(&call);
  if (!status && (num_outputs < 0 || num_outputs > capacity)) {
    status = loom_make_status(
        LOOM_STATUS_INTERNAL,
        "custom device '%s' reported %d outputs of %s, with room for %d",
        device->name, num_outputs, loom_eager_op_name(op), capacity);
  }
  for (int i = 0; !status && i < num_outputs; ++i) {
    if (!outputs[i]) {
      status = loom_make_status(
          LOOM_STATUS_INTERNAL,
          "custom device '%s' executed %s without setting output %d",
          device->name, loom_eager_op_name(op), i);
    }
  }
  if (status) {
    for (int32_t i = 0; i < capacity; ++i) {
      loom_tensor_handle_release(outputs[i]);
      outputs[i] = NULL;
    }
    return status;
  }
  *out_count = num_outputs;
  return loom_ok_status();
}

static loom_status_t device_execute_eager_op(
    loom_op_handler_t* handler, loom_eager_op_t* op, int32_t expected,
    loom_tensor_handle_t** results, int32_t capacity, int32_t* out_count) {
  return call_execute(state_of(handler), op, expected, results, capacity,
                      out_count);
}

static loom_status_t device_pins_op(loom_op_handler_t* handler,
                                    loom_eager_op_t* op, bool* out_pin) {
  custom_device_t* device = state_of(handler);
  *out_pin = true;
  if (!device->device.shall_pin_to_this_device) return loom_ok_status();
  call_status_t call;
  call_begin(&call, device->allocator);
  bool pin =
      device->device.shall_pin_to_this_device((const TFE_Op*)op, &call.status);
  LOOM_RETURN_IF_ERROR(call_end(&call));
  *out_pin = pin;
  return loom_ok_status();
}

// A copy onto the device (`copy_on`) or off it to `target`.
static loom_status_t copy(custom_device_t* device, bool copy_on,
                          loom_tensor_handle_t* tensor, const char* target,
                          loom_tensor_handle_t** out) {
  *out = NULL;
  loom_context_t* context = context_of(device);
  if (!context) return detached_error(device);
  call_status_t call;
  call_begin(&call, device->allocator);
  TFE_TensorHandle* result =
      copy_on ? device->device.copy_tensor_to_device((TFE_Context*)context,
                                                     (TFE_TensorHandle*)tensor,
                                                     &call.status, device->info)
              : device->device.copy_tensor_from_device(
                    (TFE_Context*)context, (TFE_TensorHandle*)tensor, target,
                    &call.status, device->info);
  loom_status_t status = call_end(&call);
  if (status) {
    loom_tensor_handle_release((loom_tensor_handle_t*)result);
    return status;
  }
  if (!result) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "custom device '%s': copy %s returned no tensor",
                            device->name, copy_on ? "onto it" : "off it");
  }
  *out = (loom_tensor_handle_t*)result;
  return loom_ok_status();
}

// An invocation the runtime hands the device: the copies, or an op some
// other code executes on it by name (run through execute as a new op).
static loom_status_t run_invocation(custom_device_t* device,
                                    loom_op_invocation_t* invocation) {
  const char* name = loom_prepared_op_name(invocation->op);
  bool copy_on = strcmp(name, "CopyOn") == 0;
  bool copy_off = strcmp(name, "CopyOff") == 0;
  if ((copy_on || copy_off) && invocation->num_arguments == 1 &&
      invocation->num_results == 1) {
    char target[192] = "";
    loom_attr_value_t value;
    if (copy_off && invocation->attrs &&
        loom_op_attrs_get(invocation->attrs, "new_device", &value) &&
        value.kind == LOOM_ATTR_KIND_STRING) {
      snprintf(target, sizeof(target), "%.*s", (int)value.u.string.size,
               value.u.string.data);
    }
    loom_context_t* context = context_of(device);
    if (copy_off && !target[0] && context) {
      snprintf(target, sizeof(target), "%s", context->cpu_name);
    }
    return copy(device, copy_on, invocation->arguments[0], target,
                &invocation->results[0]);
  }
  loom_context_t* context = context_of(device);
  if (!context) return detached_error(device);
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status =
      loom_op_attrs_merge(loom_eager_op_attrs(op), invocation->attrs);
  for (int32_t i = 0; !status && i < invocation->num_arguments; ++i) {
    status = loom_eager_op_add_input(op, invocation->arguments[i]);
  }
  if (!status) status = loom_eager_op_set_device(op, device->name);
  int32_t count = 0;
  if (!status) {
    status = call_execute(device, op, invocation->num_results,
                          invocation->results, invocation->num_results, &count);
  }
  if (!status && count != invocation->num_results) {
    for (int32_t i = 0; i < count; ++i) {
      loom_tensor_handle_release(invocation->results[i]);
      invocation->results[i] = NULL;
    }
    status =
        loom_make_status(LOOM_STATUS_INTERNAL,
                         "custom device '%s' gave %d outputs of %s, "
                         "expected %d",
                         device->name, count, name, invocation->num_results);
  }
  loom_eager_op_destroy(op);
  return status;
}

static loom_status_t device_execute(loom_op_handler_t* handler,
                                    loom_op_invocation_t* invocation) {
  custom_device_t* device = state_of(handler);
  loom_status_t status = run_invocation(device, invocation);
  if (status) return loom_op_invocation_fail(invocation, status, true);
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t device_prepare(loom_op_handler_t* handler,
                                    const char* op_name,
                                    const loom_op_def_t* op,
                                    void** out_op_data) {
  (void)handler;
  (void)op_name;
  (void)op;
  *out_op_data = NULL;  // every op goes to the device's execute
  return loom_ok_status();
}

static const char* device_name(const loom_op_handler_t* handler) {
  return state_of(handler)->name;
}

static void device_destroy(void* opaque) {
  custom_device_t* device = opaque;
  if (device->device.delete_device) device->device.delete_device(device->info);
  loom_allocator_free(device->allocator, device);
}

static bool device_takes_foreign_inputs(const loom_op_handler_t* handler,
                                        const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;  // custom devices see their inputs as they are
}

static void release_tensor(loom_op_handler_t* handler, void* representation) {
  custom_tensor_t* tensor = representation;
  if (!tensor) return;
  if (tensor->has_methods) {
    if (tensor->methods.deallocator) tensor->methods.deallocator(tensor->data);
  } else if (tensor->memory_deallocator) {
    tensor->memory_deallocator(tensor->data, tensor->len, tensor->memory_arg);
  }
  loom_allocator_free(allocator_of(handler), tensor);
}

static loom_status_t tensor_metadata(loom_op_handler_t* handler,
                                     const loom_tensor_handle_t* handle,
                                     loom_tensor_metadata_t* out) {
  custom_device_t* device = state_of(handler);
  custom_tensor_t* tensor = loom_tensor_handle_representation(handle);
  if (!tensor || !tensor->has_methods) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "custom device '%s': a tensor without a shape",
                            device->name);
  }
  call_status_t call;
  call_begin(&call, device->allocator);
  int rank = tensor->methods.num_dims(tensor->data, &call.status);
  loom_status_t status = call_end(&call);
  if (status) return status;
  if (rank < 0 || rank > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "custom device '%s': a tensor of rank %d (Loom "
                            "supports ranks 0 to %d)",
                            device->name, rank, LOOM_MAX_RANK);
  }
  int64_t dims[LOOM_MAX_RANK];
  for (int i = 0; i < rank; ++i) {
    call_begin(&call, device->allocator);
    dims[i] = tensor->methods.dim(tensor->data, i, &call.status);
    LOOM_RETURN_IF_ERROR(call_end(&call));
  }
  out->dtype = tensor->dtype;
  return loom_shape_initialize(&out->shape, dims, rank);
}

static size_t tensor_debug_string(const loom_op_handler_t* handler,
                                  const loom_tensor_handle_t* handle,
                                  char* buffer, size_t capacity) {
  custom_device_t* device = state_of(handler);
  custom_tensor_t* tensor = loom_tensor_handle_representation(handle);
  const char* dtype = tensor ? loom_dtype_name(tensor->dtype) : "invalid";
  if (!tensor || !tensor->has_methods || !tensor->methods.summarize) {
    return (size_t)snprintf(buffer, capacity, "<%s tensor on %s>", dtype,
                            device->name);
  }
  call_status_t call;
  call_begin(&call, device->allocator);
  TF_Buffer* summary = tensor->methods.summarize(tensor->data, &call.status);
  loom_status_t status = call_end(&call);
  size_t length;
  if (status || !summary) {
    length = (size_t)snprintf(
        buffer, capacity, "<%s tensor on %s: %s>", dtype, device->name,
        status ? loom_status_message(status) : "no summary");
  } else {
    length = (size_t)snprintf(buffer, capacity, "%.*s", (int)summary->length,
                              (const char*)summary->data);
  }
  loom_status_free(status);
  TF_DeleteBuffer(summary);
  return length;
}

static loom_dtype_t tensor_dtype(const loom_op_handler_t* handler,
                                 const loom_tensor_handle_t* handle) {
  (void)handler;
  custom_tensor_t* tensor = loom_tensor_handle_representation(handle);
  return tensor ? tensor->dtype : LOOM_DTYPE_INVALID;
}

static const loom_op_handler_vtable_t kVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "custom_device",
    .prepare = device_prepare,
    .execute = device_execute,
    .device_name = device_name,
    .destroy = device_destroy,
    .release_representation = release_tensor,
    .takes_foreign_inputs = device_takes_foreign_inputs,
    .tensor_debug_string = tensor_debug_string,
    .tensor_metadata = tensor_metadata,
    .execute_eager_op = device_execute_eager_op,
    .pins_op = device_pins_op,
    .tensor_dtype = tensor_dtype,
};

bool loom__is_custom_device(const loom_op_handler_t* handler) {
  return loom_op_handler_vtable(handler)->execute == kVtable.execute;
}

//===----------------------------------------------------------------------===//
// Registration and tensors
//===----------------------------------------------------------------------===//

static loom_status_t check_device(const TFE_CustomDevice* device) {
  if (device->version != TFE_CUSTOM_DEVICE_VERSION) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "TFE_RegisterCustomDevice: TFE_CustomDevice "
                            "version %d is not supported (Loom supports %d)",
                            device->version, TFE_CUSTOM_DEVICE_VERSION);
  }
  const char* missing = !device->copy_tensor_to_device ? "copy_tensor_to_device"
                        : !device->copy_tensor_from_device
                            ? "copy_tensor_from_device"
                        : !device->execute       ? "execute"
                        : !device->delete_device ? "delete_device"
                                                 : NULL;
  if (missing) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "TFE_RegisterCustomDevice: the device's %s callback is NULL", missing);
  }
  return loom_ok_status();
}

loom_status_t loom__custom_device_register(loom_context_t* context,
                                           const TFE_CustomDevice* device,
                                           const char* name, void* info) {
  loom_status_t status = loom_ok_status();
  if (!context || !device || !name) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_RegisterCustomDevice: %s is NULL",
                              !context  ? "the context"
                              : !device ? "the device"
                                        : "device_name");
  }
  if (!status) status = check_device(device);
  if (!status && strlen(name) >= sizeof(((custom_device_t*)0)->name)) {
    status =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "TFE_RegisterCustomDevice: device name '%.64s...' "
                         "is too long",
                         name);
  }
  custom_device_t* state = NULL;
  if (!status) {
    status = loom_allocator_calloc(context->allocator, sizeof(*state),
                                   (void**)&state);
  }
  if (status) {
    if (device && device->delete_device) device->delete_device(info);
    return status;
  }
  state->allocator = context->allocator;
  state->runtime = context->runtime;
  state->device = *device;
  state->info = info;
  snprintf(state->name, sizeof(state->name), "%s", name);
  loom_op_handler_t* handler = NULL;
  status =
      loom_op_handler_create(context->runtime, &kVtable, state, NULL, &handler);
  if (status) {
    device_destroy(state);
    return status;
  }
  // From here the handler owns the state: releasing it deletes the device.
  status = loom_context_add_named_handler(context, name, handler);
  loom_op_handler_release(handler);
  if (status) {
    return loom_status_annotate(status, "TFE_RegisterCustomDevice");
  }
  return loom_ok_status();
}

loom_op_handler_t* loom__custom_device_find(loom_context_t* context,
                                            const char* name) {
  loom_op_handler_t* handler = loom_context_find_handler(context, name);
  return handler && loom__is_custom_device(handler) ? handler : NULL;
}

static loom_status_t make_tensor(loom_op_handler_t* handler,
                                 custom_tensor_t* tensor,
                                 const loom_tensor_metadata_t* metadata,
                                 loom_tensor_handle_t** out_handle) {
  loom_status_t status = loom_tensor_handle_create_representation(
      handler, metadata, tensor, out_handle);
  if (status) release_tensor(handler, tensor);
  return status;
}

loom_status_t loom__custom_device_tensor_create(
    loom_op_handler_t* handler, loom_dtype_t dtype, void* data,
    const TFE_CustomDeviceTensorHandle* methods,
    loom_tensor_handle_t** out_handle) {
  *out_handle = NULL;
  loom_status_t status = loom_ok_status();
  if (!methods->num_dims || !methods->dim || !methods->deallocator) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "TFE_NewCustomDeviceTensorHandle: the methods' %s is NULL",
        !methods->num_dims ? "num_dims"
        : !methods->dim    ? "dim"
                           : "deallocator");
  } else if (!loom_dtype_is_valid(dtype)) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewCustomDeviceTensorHandle: invalid dtype "
                              "%d",
                              (int)dtype);
  }
  custom_tensor_t* tensor = NULL;
  if (!status) {
    status = loom_allocator_calloc(allocator_of(handler), sizeof(*tensor),
                                   (void**)&tensor);
  }
  if (status) {
    if (methods->deallocator) methods->deallocator(data);
    return status;
  }
  tensor->dtype = dtype;
  tensor->data = data;
  tensor->has_methods = true;
  tensor->methods = *methods;
  return make_tensor(handler, tensor, NULL, out_handle);
}

loom_status_t loom__custom_device_memory_create(
    loom_op_handler_t* handler, loom_dtype_t dtype, const loom_shape_t* shape,
    void* data, size_t len, void (*deallocator)(void*, size_t, void*),
    void* deallocator_arg, loom_tensor_handle_t** out_handle) {
  *out_handle = NULL;
  custom_tensor_t* tensor = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator_of(handler), sizeof(*tensor), (void**)&tensor);
  if (status) {
    if (deallocator) deallocator(data, len, deallocator_arg);
    return status;
  }
  tensor->dtype = dtype;
  tensor->data = data;
  tensor->memory_deallocator = deallocator;
  tensor->len = len;
  tensor->memory_arg = deallocator_arg;
  loom_tensor_metadata_t metadata = {dtype, *shape};
  return make_tensor(handler, tensor, &metadata, out_handle);
}

static custom_tensor_t* tensor_of(const loom_tensor_handle_t* handle) {
  loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
  if (!handler || !loom__is_custom_device(handler)) return NULL;
  return loom_tensor_handle_representation(handle);
}

void* loom__custom_device_tensor_data(const loom_tensor_handle_t* handle) {
  custom_tensor_t* tensor = tensor_of(handle);
  return tensor ? tensor->data : NULL;
}

loom_status_t loom__custom_device_pack(loom_context_t* context,
                                       loom_tensor_handle_t** handles,
                                       int32_t count,
                                       loom_tensor_handle_t** out_handle) {
  *out_handle = NULL;
  for (int32_t i = 0; i < count; ++i) {
    loom_op_handler_t* handler = loom_tensor_handle_handler(handles[i]);
    if (!handler || !loom__is_custom_device(handler)) continue;
    custom_device_t* device = state_of(handler);
    if (!device->device.pack) break;
    call_status_t call;
    call_begin(&call, device->allocator);
    TFE_TensorHandle* packed =
        device->device.pack((TFE_Context*)context, (TFE_TensorHandle**)handles,
                            count, &call.status, device->info);
    loom_status_t status = call_end(&call);
    if (status) {
      loom_tensor_handle_release((loom_tensor_handle_t*)packed);
      return status;
    }
    if (!packed) {
      return loom_make_status(LOOM_STATUS_INTERNAL,
                              "custom device '%s': pack returned no tensor",
                              device->name);
    }
    *out_handle = (loom_tensor_handle_t*)packed;
    return loom_ok_status();
  }
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "Packed tensor handles are only supported through "
                          "a custom device's pack callback");
}
