/* TensorFlow's rendezvous C API: the structs through which a kernel sends
 * tensors to, and receives them from, other kernels by a string key
 * (TF_GetRendezvous in tensorflow/c/kernels.h returns one). Valid C11 and
 * C++.
 *
 * Send stores the tensor under the key (a new reference; the caller keeps
 * its own); an asynchronous receive of the key runs its done callback once
 * a tensor has been sent under it (at once when one is waiting), with the
 * tensor (borrowed: valid during the callback) or with the error that ended
 * the wait: CANCELLED when the receive's cancellation manager starts
 * cancelling, or the status given to start_abort. Tensors sent under one
 * key are received in the order they were sent. */

#ifndef TENSORFLOW_CORE_COMMON_RUNTIME_NEXT_PLUGGABLE_DEVICE_C_TF_RENDEZVOUS_C_API_H_
#define TENSORFLOW_CORE_COMMON_RUNTIME_NEXT_PLUGGABLE_DEVICE_C_TF_RENDEZVOUS_C_API_H_

#include <stdbool.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loom has host memory only: the device context is unused (NULL). */
typedef struct TF_DeviceContext TF_DeviceContext;

typedef struct TFDevice_AllocatorAttributes {
  uint32_t value;
  int32_t scope_id;
} TFDevice_AllocatorAttributes;

typedef struct TFE_CancellationManager TFE_CancellationManager;

/* Per send or receive; cancellation_manager (may be NULL) cancels a
 * waiting receive. */
typedef struct TF_RendezvousArgsStruct {
  TF_DeviceContext* device_context;
  TFDevice_AllocatorAttributes alloc_attrs;
  TFE_CancellationManager* cancellation_manager;
} TF_RendezvousArgsStruct;

/* The key: full_key_size bytes (any bytes; not NUL-terminated). */
typedef struct TF_RendezvousParsedKey {
  char* full_key;
  uint32_t full_key_size;
} TF_RendezvousParsedKey;

typedef struct TF_RendezvousSend_Params {
  const TF_RendezvousParsedKey* key;
  const TF_RendezvousArgsStruct* args;
  TF_Tensor* tensor;
  bool is_dead;

  TF_Status* status; /* out */
} TF_RendezvousSend_Params;

typedef void (*TF_RendezvousSend_Function)(void*, TF_RendezvousSend_Params*);

typedef struct TF_RendezvousSenderImpl {
  void* context;
  TF_RendezvousSend_Function send_func;
} TF_RendezvousSenderImpl;

typedef struct TF_RendezvousDoneCallback_Params {
  void* context;
  const TF_Status* status;
  const TF_Tensor* tensor; /* NULL on error */
  bool is_dead;
} TF_RendezvousDoneCallback_Params;

typedef void (*TF_RendezvousDoneCallback_Function)(
    void*, TF_RendezvousDoneCallback_Params*);

typedef struct TF_RendezvousDoneCallbackImpl {
  void* context;
  TF_RendezvousDoneCallback_Function callback;
} TF_RendezvousDoneCallbackImpl;

typedef struct TF_RendezvousAsyncRecv_Params {
  void* context;
  const TF_RendezvousParsedKey* key;
  const TF_RendezvousArgsStruct* args;
  TF_RendezvousDoneCallbackImpl on_done;
} TF_RendezvousAsyncRecv_Params;

typedef void (*TF_RendezvousAsyncRecv_Function)(void*,
                                                TF_RendezvousAsyncRecv_Params*);

typedef struct TF_RendezvousAsyncRecverImpl {
  void* context;
  TF_RendezvousAsyncRecv_Function async_recv_func;
} TF_RendezvousAsyncRecverImpl;

typedef void (*TF_RendezvousStartAbort_Function)(void* context,
                                                 const TF_Status*);

typedef struct TF_RendezvousStartAbortImpl {
  void* context;
  TF_RendezvousStartAbort_Function start_abort_func;
} TF_RendezvousStartAbortImpl;

typedef struct TF_RendezvousThunk {
  TF_RendezvousSenderImpl send;
  TF_RendezvousAsyncRecverImpl async_recv;
  TF_RendezvousStartAbortImpl start_abort;
} TF_RendezvousThunk;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_CORE_COMMON_RUNTIME_NEXT_PLUGGABLE_DEVICE_C_TF_RENDEZVOUS_C_API_H_ \
        */
