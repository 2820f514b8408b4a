// TensorFlow's eager tensor handles over loom/eager.h: a TFE_TensorHandle
// is a loom_tensor_handle_t, a TF_Tensor a loom_tensor_t.

#include <string.h>

#include "compat/eager_custom_device_handler.h"
#include "compat/tf_status_internal.h"
#include "loom/eager.h"
#include "loom/tensor_handle.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"

static loom_tensor_handle_t* unwrap(TFE_TensorHandle* h) {
  return (loom_tensor_handle_t*)h;
}

static TFE_TensorHandle* wrap(loom_tensor_handle_t* h) {
  return (TFE_TensorHandle*)h;
}

static loom_status_t invalid_handle(void) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle");
}

TFE_TensorHandle* TFE_NewTensorHandle(const TF_Tensor* t, TF_Status* status) {
  loom_tensor_handle_t* handle = NULL;
  loom_status_t result =
      t ? loom_host_handle_create((loom_tensor_t*)t, &handle)
        : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                           "TFE_NewTensorHandle: the tensor is NULL");
  loom__tf_status_set(status, result);
  return wrap(handle);
}

TFE_TensorHandle* TFE_NewTensorHandleFromTensor(TFE_Context* ctx, TF_Tensor* t,
                                                TF_Status* status) {
  loom_tensor_handle_t* handle = NULL;
  loom_status_t result =
      !ctx ? loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromTensor: ctx is NULL")
      : !t ? loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromTensor: the tensor is "
                              "NULL")
           : loom_context_new_handle((loom_context_t*)ctx, (loom_tensor_t*)t,
                                     &handle);
  loom__tf_status_set(status, result);
  return wrap(handle);
}

void TFE_DeleteTensorHandle(TFE_TensorHandle* h) {
  loom_tensor_handle_release(unwrap(h));
}

TF_DataType TFE_TensorHandleDataType(TFE_TensorHandle* h) {
  return (TF_DataType)loom_tensor_handle_dtype(unwrap(h));
}

// The shape of `h`, waiting for it if needed.
static bool shape_of(TFE_TensorHandle* h, TF_Status* status,
                     loom_shape_t* out_shape) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return false;
  }
  loom_tensor_metadata_t metadata;
  loom_status_t result = loom_tensor_handle_wait_metadata(unwrap(h), &metadata);
  if (!result && metadata.shape.rank < 0) {
    result =
        loom_make_status(LOOM_STATUS_INTERNAL, "the tensor's rank is unknown");
  }
  loom__tf_status_set(status, result);
  if (result) return false;
  *out_shape = metadata.shape;
  return true;
}

int TFE_TensorHandleNumDims(TFE_TensorHandle* h, TF_Status* status) {
  loom_shape_t shape;
  return shape_of(h, status, &shape) ? shape.rank : -1;
}

int64_t TFE_TensorHandleNumElements(TFE_TensorHandle* h, TF_Status* status) {
  loom_shape_t shape;
  return shape_of(h, status, &shape) ? loom_shape_num_elements(&shape) : -1;
}

int64_t TFE_TensorHandleDim(TFE_TensorHandle* h, int dim_index,
                            TF_Status* status) {
  loom_shape_t shape;
  if (!shape_of(h, status, &shape)) return -1;
  if (dim_index < 0 || dim_index >= shape.rank) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "Dimension %d out of range [0, %d) of a "
                                 "tensor of rank %d",
                                 dim_index, shape.rank, shape.rank));
    return -1;
  }
  return loom_shape_dims(&shape)[dim_index];
}

const char* TFE_TensorHandleDeviceName(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return NULL;
  }
  // Devices name themselves; only a handler's name needs its context.
  loom_tensor_handle_t* handle = unwrap(h);
  const char* name = loom_context_device_name(NULL, handle);
  if (!name) {
    name = loom_context_device_name(loom_context_of_handle(handle), handle);
  }
  if (!name) {
    loom__tf_status_set(
        status,
        loom_make_status(
            LOOM_STATUS_FAILED_PRECONDITION,
            "the tensor lives on op handler '%s', whose context "
            "no longer exists",
            loom_op_handler_type_name(loom_tensor_handle_handler(handle))));
    return NULL;
  }
  loom__tf_status_set(status, loom_ok_status());
  return name;
}

const char* TFE_TensorHandleBackingDeviceName(TFE_TensorHandle* h,
                                              TF_Status* status) {
  return TFE_TensorHandleDeviceName(h, status);
}

const char* TFE_TensorHandleDeviceType(TFE_TensorHandle* h, TF_Status* status) {
  const char* name = TFE_TensorHandleDeviceName(h, status);
  if (!name) return NULL;
  // The part of "/device:TYPE:N" between the colons, in a per-thread
  // buffer (valid until the thread's next call): TensorFlow's signature
  // returns a string the caller does not free, and a handler that names
  // itself has no type string of its own to point at.
  const char* device = strstr(name, "/device:");
  static _Thread_local char type[64];
  const char* start = device ? device + 8 : name;
  const char* colon = strrchr(start, ':');
  size_t length = colon ? (size_t)(colon - start) : strlen(start);
  if (length >= sizeof(type)) length = sizeof(type) - 1;
  memcpy(type, start, length);
  type[length] = '\0';
  return type;
}

int TFE_TensorHandleDeviceID(TFE_TensorHandle* h, TF_Status* status) {
  const char* name = TFE_TensorHandleDeviceName(h, status);
  if (!name) return -1;
  const char* colon = strrchr(name, ':');
  int id = 0;
  for (const char* p = colon ? colon + 1 : ""; *p >= '0' && *p <= '9'; ++p) {
    id = id * 10 + (*p - '0');
  }
  return id;
}

void TFE_TensorHandleGetStatus(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return;
  }
  loom_async_value_t* value = loom_tensor_handle_value(unwrap(h));
  loom__tf_status_set(status,
                      value && loom_async_value_is_error(value)
                          ? loom_status_clone(loom_async_value_error(value))
                          : loom_ok_status());
}

TFE_TensorHandle* TFE_TensorHandleCopySharingTensor(TFE_TensorHandle* h,
                                                    TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return NULL;
  }
  loom_tensor_handle_retain(unwrap(h));
  loom__tf_status_set(status, loom_ok_status());
  return h;
}

TF_Tensor* TFE_TensorHandleResolve(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return NULL;
  }
  loom_tensor_t* tensor = NULL;
  loom__tf_status_set(status, loom_context_resolve(NULL, unwrap(h), &tensor));
  return (TF_Tensor*)tensor;
}

TFE_TensorHandle* TFE_TensorHandleCopyToDevice(TFE_TensorHandle* h,
                                               TFE_Context* ctx,
                                               const char* device_name,
                                               TF_Status* status) {
  loom_context_t* context = (loom_context_t*)ctx;
  if (!h || !ctx || !device_name) {
    loom__tf_status_set(
        status, !h ? invalid_handle()
                   : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                      "TFE_TensorHandleCopyToDevice: %s is "
                                      "NULL",
                                      !ctx ? "ctx" : "device_name"));
    return NULL;
  }
  loom_op_handler_t* target = loom_context_find_handler(context, device_name);
  if (!target) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TFE_TensorHandleCopyToDevice: "
                                         "unknown device '%s'",
                                         device_name));
    return NULL;
  }
  loom_tensor_handle_t* copy = NULL;
  loom__tf_status_set(status,
                      loom_context_copy_to(context, unwrap(h), target, &copy));
  return wrap(copy);
}

void* TFE_TensorHandleDevicePointer(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return NULL;
  }
  loom_tensor_handle_t* handle = unwrap(h);
  if (!loom_tensor_handle_value(handle)) {
    void* data = loom__custom_device_tensor_data(handle);
    loom__tf_status_set(
        status,
        data || loom__is_custom_device(loom_tensor_handle_handler(handle))
            ? loom_ok_status()
            : loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                               "TFE_TensorHandleDevicePointer: the "
                               "tensor lives on op handler '%s', "
                               "which has no device memory",
                               loom_op_handler_type_name(
                                   loom_tensor_handle_handler(handle))));
    return data;
  }
  // A host tensor: its data lives as long as the handle's value.
  loom_tensor_t* tensor = NULL;
  loom_status_t result = loom_tensor_handle_resolve(handle, &tensor);
  loom__tf_status_set(status, result);
  if (result) return NULL;
  void* data = loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return data;
}

size_t TFE_TensorHandleDeviceMemorySize(TFE_TensorHandle* h,
                                        TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, invalid_handle());
    return 0;
  }
  loom_tensor_handle_t* handle = unwrap(h);
  if (loom_tensor_handle_value(handle)) {
    loom_tensor_t* tensor = NULL;
    loom_status_t result = loom_tensor_handle_resolve(handle, &tensor);
    loom__tf_status_set(status, result);
    if (result) return 0;
    size_t size = loom_tensor_byte_size(tensor);
    loom_tensor_release(tensor);
    return size;
  }
  loom_tensor_metadata_t metadata;
  loom_status_t result = loom_tensor_handle_wait_metadata(handle, &metadata);
  loom__tf_status_set(status, result);
  if (result) return 0;
  int64_t elements = loom_shape_num_elements(&metadata.shape);
  return elements > 0 ? (size_t)elements * loom_dtype_size(metadata.dtype) : 0;
}

TFE_TensorHandle* TFE_NewTensorHandleFromDeviceMemory(
    TFE_Context* ctx, const char* device_name, TF_DataType dtype,
    const int64_t* dims, int num_dims, void* data, size_t len,
    void (*deallocator)(void* data, size_t len, void* arg),
    void* deallocator_arg, TF_Status* status) {
  loom_context_t* context = (loom_context_t*)ctx;
  loom_shape_t shape;
  loom_status_t result = loom_ok_status();
  if (!ctx || !device_name || (num_dims > 0 && !dims)) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromDeviceMemory: %s",
                              !ctx           ? "ctx is NULL"
                              : !device_name ? "device_name is NULL"
                                             : "dims is NULL");
  }
  if (!result) result = loom_shape_initialize_large(&shape, dims, num_dims);
  if (!result && !loom_shape_is_fully_defined(&shape)) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromDeviceMemory: every "
                              "dimension must be known");
  }
  if (!result && !loom_dtype_is_valid((loom_dtype_t)dtype)) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromDeviceMemory: invalid "
                              "dtype %d",
                              (int)dtype);
  }
  loom_op_handler_t* device =
      result ? NULL : loom_context_find_handler(context, device_name);
  if (!result && !device) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_NewTensorHandleFromDeviceMemory: unknown "
                              "device '%s'",
                              device_name);
  }
  if (result) {
    if (deallocator) deallocator(data, len, deallocator_arg);
    loom__tf_status_set(status, result);
    return NULL;
  }
  loom_tensor_handle_t* handle = NULL;
  if (loom__is_custom_device(device)) {
    result = loom__custom_device_memory_create(device, (loom_dtype_t)dtype,
                                               &shape, data, len, deallocator,
                                               deallocator_arg, &handle);
    loom__tf_status_set(status, result);
    return wrap(handle);
  }
  if (device != loom_context_cpu(context)) {
    if (deallocator) deallocator(data, len, deallocator_arg);
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_NewTensorHandleFromDeviceMemory: '%s' "
                                 "is not a device with memory",
                                 device_name));
    return NULL;
  }
  // Host memory, wrapped in place.
  size_t element = loom_dtype_size((loom_dtype_t)dtype);
  int64_t elements = loom_shape_num_elements(&shape);
  if (element && (elements < 0 || (uint64_t)elements > len / element)) {
    if (deallocator) deallocator(data, len, deallocator_arg);
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_NewTensorHandleFromDeviceMemory: %zu "
                                 "bytes do not hold %lld elements of %s",
                                 len, (long long)elements,
                                 loom_dtype_name((loom_dtype_t)dtype)));
    return NULL;
  }
  loom_allocator_t allocator = loom_allocator_default();
  loom_buffer_t* buffer = NULL;
  result = loom_buffer_wrap(allocator, data, len,
                            (loom_buffer_deallocator_fn_t)deallocator,
                            deallocator_arg, &buffer);
  loom_tensor_t* tensor = NULL;
  if (!result) {
    result = dtype == TF_STRING ? loom_tensor_create_string_in_buffer(
                                      allocator, &shape, buffer, &tensor)
                                : loom_tensor_create_dense_in_buffer(
                                      allocator, (loom_dtype_t)dtype, &shape,
                                      buffer, 0, &tensor);
    loom_buffer_release(buffer);
  }
  if (!result) {
    result = loom_context_new_handle(context, tensor, &handle);
    loom_tensor_release(tensor);
  }
  loom__tf_status_set(status, result);
  return wrap(handle);
}

TF_Tensor* TFE_AllocateHostTensor(TFE_Context* ctx, TF_DataType dtype,
                                  const int64_t* dims, int num_dims,
                                  TF_Status* status) {
  loom_shape_t shape;
  loom_status_t result = loom_ok_status();
  if (!ctx || (num_dims > 0 && !dims)) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TFE_AllocateHostTensor: %s is NULL",
                              !ctx ? "ctx" : "dims");
  }
  if (!result) result = loom_shape_initialize_large(&shape, dims, num_dims);
  loom_tensor_t* tensor = NULL;
  if (!result) {
    loom_allocator_t allocator = loom_allocator_default();
    result = dtype == TF_STRING
                 ? loom_tensor_create_string(allocator, &shape, &tensor)
                 : loom_tensor_create_dense(allocator, (loom_dtype_t)dtype,
                                            &shape, &tensor);
  }
  loom__tf_status_set(status, result);
  return (TF_Tensor*)tensor;
}

//===----------------------------------------------------------------------===//
// Debug information
//===----------------------------------------------------------------------===//

struct TFE_TensorDebugInfo {
  loom_shape_t shape;  // as the device holds the value: as it is in Loom
};

TFE_TensorDebugInfo* TFE_TensorHandleTensorDebugInfo(TFE_TensorHandle* h,
                                                     TF_Status* status) {
  loom_shape_t shape;
  if (!shape_of(h, status, &shape)) return NULL;
  TFE_TensorDebugInfo* info = NULL;
  loom_status_t result = loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*info), (void**)&info);
  loom__tf_status_set(status, result);
  if (result) return NULL;
  info->shape = shape;
  return info;
}

void TFE_DeleteTensorDebugInfo(TFE_TensorDebugInfo* debug_info) {
  loom_allocator_free(loom_allocator_default(), debug_info);
}

int TFE_TensorDebugInfoOnDeviceNumDims(TFE_TensorDebugInfo* debug_info) {
  return debug_info ? debug_info->shape.rank : -1;
}

int64_t TFE_TensorDebugInfoOnDeviceDim(TFE_TensorDebugInfo* debug_info,
                                       int dim_index) {
  if (!debug_info || dim_index < 0 || dim_index >= debug_info->shape.rank) {
    return -1;
  }
  return loom_shape_dims(&debug_info->shape)[dim_index];
}
