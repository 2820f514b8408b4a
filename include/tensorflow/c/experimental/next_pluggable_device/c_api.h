// TensorFlow's C API for "next pluggable devices": plugin resources,
// variable infos, the coordination service and PJRT, at TensorFlow's path.
//
// What Loom provides: plugin resources (kept in the resource manager of
// the host context the kernel runs on) and a single-process coordination
// service (a key-value store per host context). Loom has no TF_Device, no
// resource variables behind TF_VariableInfo and no PJRT: those functions
// set UNIMPLEMENTED naming themselves, and return NULL.

#ifndef TENSORFLOW_C_EXPERIMENTAL_NEXT_PLUGGABLE_DEVICE_C_API_H_
#define TENSORFLOW_C_EXPERIMENTAL_NEXT_PLUGGABLE_DEVICE_C_API_H_

#include <stdbool.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/kernels_experimental.h"
#include "tensorflow/c/tf_buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

// TensorFlow takes these from XLA's pjrt_c_api.h, which Loom does not
// ship; they are used here by pointer only.
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_NamedValue PJRT_NamedValue;

// TensorFlow's C++ Device behind a kernel context (opaque).
typedef struct TF_Device TF_Device;

typedef struct TF_VariableInfo TF_VariableInfo;

// Loom's kernels run on no TF_Device: NULL.
TF_CAPI_EXPORT extern TF_Device* TF_GetDevice(TF_OpKernelContext* ctx);

// ------------------------------ Resources ------------------------------------

// Stores `plugin_resource` as (container_name, plugin_resource_name) in the
// resource manager of ctx's host context, which calls delete_func on it
// when the resource is dropped (the host context goes). ALREADY_EXISTS when
// the name is taken: delete_func is then called on `plugin_resource` at
// once, as TensorFlow's resource manager does. INVALID_ARGUMENT for a NULL
// context, name or delete_func.
TF_CAPI_EXPORT extern void TF_CreatePluginResource(
    TF_OpKernelContext* ctx, const char* container_name,
    const char* plugin_resource_name, void* plugin_resource,
    void (*delete_func)(void*), TF_Status* status);

// The plugin resource named (container_name, plugin_resource_name) in
// *result_plugin_resource (not owned by the caller), made with
// create_func(create_func_args) when there is none. On error
// *result_plugin_resource is NULL.
TF_CAPI_EXPORT extern void TF_LookupOrCreatePluginResource(
    TF_OpKernelContext* ctx, const char* container_name,
    const char* plugin_resource_name, void** result_plugin_resource,
    void* (*create_func)(void*), void* create_func_args,
    void (*delete_func)(void*), TF_Status* status);

// ---------------------------- VariableInfo -----------------------------------
// UNIMPLEMENTED: Loom's resource tensors hold no TensorFlow variables.

TF_CAPI_EXPORT extern TF_VariableInfo* TF_CreateVariableInfoFromContext(
    TF_OpKernelContext* ctx, int index, TF_Status* status);

TF_CAPI_EXPORT extern void TF_LockVariableInfos(TF_VariableInfo** vars,
                                                int num_vars,
                                                TF_Status* status);

TF_CAPI_EXPORT extern void TF_AllocateTempForVariableInfo(
    TF_OpKernelContext* ctx, TF_VariableInfo* var_info, TF_Status* status);

TF_CAPI_EXPORT extern TF_Tensor* TF_GetTensorFromVariableInfo(
    TF_VariableInfo* var_info, TF_Status* status);

// Accepts NULL (what the functions above return).
TF_CAPI_EXPORT extern void TF_DeleteVariableInfo(TF_VariableInfo* var_info);

// ------------------------- Coordination service ------------------------------
// One process, one task: the service is a key-value store shared by the
// kernels that run on one host context.

// The agent of ctx's host context (not owned by the caller; it lives as
// long as the host context). NULL for a NULL context.
TF_CAPI_EXPORT extern TF_CoordinationServiceAgent*
TF_GetCoordinationServiceAgent(TF_OpKernelContext* ctx);

// Whether `agent` is one (a non-NULL agent is always initialized).
TF_CAPI_EXPORT extern bool TF_CoordinationServiceIsInitialized(
    TF_CoordinationServiceAgent* agent);

// Inserts key -> value (copied). ALREADY_EXISTS when the key has a value.
TF_CAPI_EXPORT extern void TF_CoordinationServiceInsertKeyValue(
    const char* key, const char* value, TF_CoordinationServiceAgent* agent,
    TF_Status* status);

// A new TF_Buffer holding the value of `key` (the caller deletes it with
// TF_DeleteBuffer). TensorFlow waits for another task to insert a missing
// key; in one process there is no other task: NOT_FOUND, and NULL.
TF_CAPI_EXPORT extern TF_Buffer* TF_CoordinationServiceGetKeyValue(
    const char* key, TF_CoordinationServiceAgent* agent, TF_Status* status);

// Deletes `key` and every key under it as a directory ("key/..."); OK when
// there is none.
TF_CAPI_EXPORT extern void TF_CoordinationServiceDeleteKeyValue(
    const char* key, TF_CoordinationServiceAgent* agent, TF_Status* status);

// -------------------------------- PJRT ---------------------------------------
// UNIMPLEMENTED: Loom has no PJRT clients or buffers.

TF_CAPI_EXPORT extern void TF_CreateAndSetPjRtCApiClient(
    const char* device_type, TF_Status* status, PJRT_NamedValue* create_options,
    int num_options);

TF_CAPI_EXPORT extern PJRT_Client* TF_GetPjRtCClient(const char* device_type,
                                                     TF_Status* status);

TF_CAPI_EXPORT extern PJRT_Buffer* TF_GetPjRtCBuffer(TF_Tensor* c_tensor,
                                                     TF_Status* status);

TF_CAPI_EXPORT extern void TF_CreatePjRtBuffer(TF_Tensor* c_tensor,
                                               PJRT_Buffer* c_buffer,
                                               const char* device_type,
                                               TF_Status* status);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // TENSORFLOW_C_EXPERIMENTAL_NEXT_PLUGGABLE_DEVICE_C_API_H_
