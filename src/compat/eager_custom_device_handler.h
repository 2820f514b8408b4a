// TensorFlow's custom devices (TFE_CustomDevice, version 4) as final op
// handlers of a context, built on the handler hooks of devices that run ops
// themselves (loom/op_handler.h): each holds the device's callbacks and
// info; its tensors hold the device's data as their representation. What
// the TensorFlow shims (eager_custom_device.c, eager_tensor_handle.c) call.

#ifndef LOOM_COMPAT_EAGER_CUSTOM_DEVICE_HANDLER_H_
#define LOOM_COMPAT_EAGER_CUSTOM_DEVICE_HANDLER_H_

#include <stdbool.h>

#include "loom/eager.h"
#include "tensorflow/c/eager/c_api_experimental.h"

// Registers `device` under the fully qualified `name`. Whatever happens,
// `info` then belongs to the device: on failure delete_device is called.
loom_status_t loom__custom_device_register(loom_context_t* context,
                                           const TFE_CustomDevice* device,
                                           const char* name, void* info);

// Whether `handler` is a custom device.
bool loom__is_custom_device(const loom_op_handler_t* handler);

// The custom device `name` designates in `context`, or NULL (borrowed).
loom_op_handler_t* loom__custom_device_find(loom_context_t* context,
                                            const char* name);

// A tensor of custom device `device` holding `data` (freed with
// methods->deallocator when the handle goes, or at once on error).
loom_status_t loom__custom_device_tensor_create(
    loom_op_handler_t* device, loom_dtype_t dtype, void* data,
    const TFE_CustomDeviceTensorHandle* methods,
    loom_tensor_handle_t** out_handle);

// A tensor of custom device `device` over device memory of a known shape
// (TFE_NewTensorHandleFromDeviceMemory): deallocator(data, len, arg) frees
// it when the handle goes, or at once on error.
loom_status_t loom__custom_device_memory_create(
    loom_op_handler_t* device, loom_dtype_t dtype, const loom_shape_t* shape,
    void* data, size_t len, void (*deallocator)(void*, size_t, void*),
    void* deallocator_arg, loom_tensor_handle_t** out_handle);

// The data a custom device gave one of its tensors (NULL for others).
void* loom__custom_device_tensor_data(const loom_tensor_handle_t* handle);

// Packs handles through the `pack` callback of the first custom device
// among them; UNIMPLEMENTED when there is none.
loom_status_t loom__custom_device_pack(loom_context_t* context,
                                       loom_tensor_handle_t** handles,
                                       int32_t count,
                                       loom_tensor_handle_t** out_handle);

#endif  // LOOM_COMPAT_EAGER_CUSTOM_DEVICE_HANDLER_H_
