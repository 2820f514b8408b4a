// TensorFlow's custom-device entry points over the custom device handlers
// (eager_custom_device_handler.c).

#include "compat/eager_custom_device_handler.h"
#include "compat/tf_status_internal.h"
#include "tensorflow/c/eager/c_api_experimental.h"

void TFE_RegisterCustomDevice(TFE_Context* ctx, TFE_CustomDevice device,
                              const char* device_name, void* device_info,
                              TF_Status* status) {
  loom__tf_status_set(
      status, loom__custom_device_register((loom_context_t*)ctx, &device,
                                           device_name, device_info));
}

bool TFE_IsCustomDevice(TFE_Context* ctx, const char* device_name) {
  if (!ctx || !device_name) return false;
  return loom__custom_device_find((loom_context_t*)ctx, device_name) != NULL;
}

TFE_TensorHandle* TFE_NewCustomDeviceTensorHandle(
    TFE_Context* ctx, const char* device_name, TF_DataType dtype, void* data,
    TFE_CustomDeviceTensorHandle methods, TF_Status* status) {
  loom_op_handler_t* device =
      ctx && device_name
          ? loom__custom_device_find((loom_context_t*)ctx, device_name)
          : NULL;
  if (!device) {
    if (methods.deallocator) methods.deallocator(data);
    loom__tf_status_set(
        status,
        !ctx ? loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TFE_NewCustomDeviceTensorHandle: ctx is NULL")
             : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "TFE_NewCustomDeviceTensorHandle: '%s' is not "
                                "a custom device",
                                device_name ? device_name : "(null)"));
    return NULL;
  }
  loom_tensor_handle_t* handle = NULL;
  loom__tf_status_set(
      status, loom__custom_device_tensor_create(device, (loom_dtype_t)dtype,
                                                data, &methods, &handle));
  return (TFE_TensorHandle*)handle;
}

TFE_TensorHandle* TFE_CreatePackedTensorHandle(TFE_Context* ctx,
                                               TFE_TensorHandle** handles,
                                               int* num_handles,
                                               TF_Status* status) {
  if (!ctx || !num_handles || *num_handles <= 0 || !handles) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_CreatePackedTensorHandle: %s",
                                 !ctx ? "ctx is NULL" : "no handles to pack"));
    return NULL;
  }
  for (int i = 0; i < *num_handles; ++i) {
    if (!handles[i]) {
      loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                   "Invalid handle"));
      return NULL;
    }
  }
  loom_tensor_handle_t* packed = NULL;
  loom__tf_status_set(status,
                      loom__custom_device_pack((loom_context_t*)ctx,
                                               (loom_tensor_handle_t**)handles,
                                               *num_handles, &packed));
  return (TFE_TensorHandle*)packed;
}
