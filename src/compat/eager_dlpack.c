// TensorFlow's DLPack exchange (tensorflow/c/eager/dlpack.h) over the
// eager handles, through loom/dlpack.h: an exported handle's host tensor is
// kept alive by the managed tensor; an imported managed tensor becomes a
// handle over a tensor that hands it back. No data is copied either way.

#include "tensorflow/c/eager/dlpack.h"

#include <stddef.h>

#include "compat/tf_status_internal.h"
#include "loom/dlpack.h"
#include "loom/eager.h"
#include "loom/tensor.h"
#include "loom/tensor_handle.h"

// The dense host tensor of `handle` (a new reference).
static loom_status_t dense_tensor(loom_tensor_handle_t* handle,
                                  loom_tensor_t** out_tensor) {
  if (!loom_tensor_handle_value(handle)) {
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "TFE_HandleToDLPack: the tensor lives on op handler '%s', which has "
        "no device memory",
        loom_op_handler_type_name(loom_tensor_handle_handler(handle)));
  }
  return loom_context_resolve(NULL, handle, out_tensor);
}

void* TFE_HandleToDLPack(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "Invalid handle"));
    return NULL;
  }
  loom_tensor_t* tensor = NULL;
  loom_status_t result = dense_tensor((loom_tensor_handle_t*)h, &tensor);
  if (result) {
    loom__tf_status_set(status, result);
    return NULL;
  }
  void* managed = NULL;
  result = loom_tensor_to_dlpack(tensor, &managed);
  loom_tensor_release(tensor);
  loom__tf_status_set(status, result);
  return managed;
}

TFE_TensorHandle* TFE_HandleFromDLPack(void* dlm, TF_Status* status,
                                       TFE_Context* ctx) {
  if (!dlm || !ctx) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TFE_HandleFromDLPack: %s is NULL",
                                         !dlm ? "dlm" : "ctx"));
    return NULL;
  }
  loom_tensor_t* tensor = NULL;
  loom_tensor_handle_t* handle = NULL;
  loom_status_t result = loom_tensor_from_dlpack(dlm, NULL, &tensor);
  if (!result) {
    result = loom_context_new_handle((loom_context_t*)ctx, tensor, &handle);
    // Past the checks the tensor owns `dlm`: if the handle cannot be made
    // (out of memory), releasing the tensor calls its deleter, as
    // TensorFlow's device-memory handles call their deallocator.
  }
  if (tensor) loom_tensor_release(tensor);
  loom__tf_status_set(status, result);
  return (TFE_TensorHandle*)handle;
}

void TFE_CallDLManagedTensorDeleter(void* dlm_ptr) {
  loom_dlpack_delete(dlm_ptr);
}
