/* DLPack exchange of eager tensor handles (TensorFlow's
 * tensorflow/c/eager/dlpack.h): a handle's memory handed to another
 * framework as a DLManagedTensor, and a DLManagedTensor's memory taken in
 * as a handle, both without a copy. The managed tensors are DLPack's
 * unversioned (pre-1.0) struct, passed as void* as TensorFlow passes them,
 * so this header needs no dlpack.h. */

#ifndef TENSORFLOW_C_EAGER_DLPACK_H_
#define TENSORFLOW_C_EAGER_DLPACK_H_

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The name of the PyCapsule a DLManagedTensor travels in (DLPack's). */
#define TF_DLPACK_CAPSULE_NAME "dltensor"

/* A DLManagedTensor (returned as void*) sharing the memory of `h`, a
 * dense tensor on a CPU device (kDLCPU, device 0), compact row-major with
 * its strides filled in. The managed tensor keeps the tensor alive until
 * its deleter runs, which the consumer calls exactly once (or
 * TFE_CallDLManagedTensorDeleter). On failure returns NULL and sets
 * `status`: INVALID_ARGUMENT for a NULL handle and for a dtype DLPack
 * cannot hold ("DT_STRING is not supported by dlpack"), UNIMPLEMENTED for
 * a tensor on a handler without device memory, the handle's error. */
TF_CAPI_EXPORT extern void* TFE_HandleToDLPack(TFE_TensorHandle* h,
                                               TF_Status* status);

/* A tensor handle on `ctx`'s CPU device sharing the memory of `dlm`, a
 * DLManagedTensor on kDLCPU, compact row-major (strides NULL or equal to
 * the compact ones; dims of size 1 may have any stride). The handle owns
 * `dlm` from then on: the managed tensor's deleter runs once, when the
 * last tensor using the memory is freed. On failure returns NULL, sets
 * `status` (INVALID_ARGUMENT: "Unsupported Device Type", "Unsupported
 * Type", "Invalid strides array from DLPack", a NULL argument) and
 * leaves `dlm` the caller's, its deleter not called. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_HandleFromDLPack(void* dlm,
                                                             TF_Status* status,
                                                             TFE_Context* ctx);

/* Calls the deleter of `dlm_ptr`, a DLManagedTensor (nothing for NULL or a
 * NULL deleter): for a producer's tensor that nobody consumed. */
TF_CAPI_EXPORT extern void TFE_CallDLManagedTensorDeleter(void* dlm_ptr);

#ifdef __cplusplus
} /* end extern "C" */
#endif

#endif /* TENSORFLOW_C_EAGER_DLPACK_H_ */
