/* The parts of TensorFlow's core C API that Loom provides: the version,
 * TF_StringView, TF_AttrType, device lists, loading op/kernel libraries and
 * the serialized lists of registered ops and kernels.
 * (The graph and session API is not part of Loom.) Valid C11 and C++. */

#ifndef TENSORFLOW_C_C_API_H_
#define TENSORFLOW_C_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_attrtype.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loom's version string. */
TF_CAPI_EXPORT extern const char* TF_Version(void);

/* Strings returned across the API; the caller does not own `data`. */
typedef struct TF_StringView {
  const char* data;
  size_t len;
} TF_StringView;

/* The devices of an eager context (TFE_ContextListDevices). */
typedef struct TF_DeviceList TF_DeviceList;

/* Frees the list. */
TF_CAPI_EXPORT extern void TF_DeleteDeviceList(TF_DeviceList* list);

/* The number of devices in the list (0 for NULL). */
TF_CAPI_EXPORT extern int TF_DeviceListCount(const TF_DeviceList* list);

/* The full name of device `index`
 * ("/job:localhost/replica:0/task:0/device:CPU:0"), valid while the list
 * lives; NULL and INVALID_ARGUMENT for an index out of range. */
TF_CAPI_EXPORT extern const char* TF_DeviceListName(const TF_DeviceList* list,
                                                    int index,
                                                    TF_Status* status);

/* The device type of device `index` ("CPU"), as TF_DeviceListName. */
TF_CAPI_EXPORT extern const char* TF_DeviceListType(const TF_DeviceList* list,
                                                    int index,
                                                    TF_Status* status);

/* The memory of device `index` in bytes (host memory: the physical memory of
 * the machine); -1 and INVALID_ARGUMENT for an index out of range. */
TF_CAPI_EXPORT extern int64_t TF_DeviceListMemoryBytes(
    const TF_DeviceList* list, int index, TF_Status* status);

/* A number identifying device `index` for the life of its context; 0 and
 * INVALID_ARGUMENT for an index out of range. */
TF_CAPI_EXPORT extern uint64_t TF_DeviceListIncarnation(
    const TF_DeviceList* list, int index, TF_Status* status);

/* A function: a FunctionDef imported (TF_FunctionImportFunctionDef), to add
 * to an eager context (TFE_ContextAddFunction). Loom has no graphs, so
 * TF_GraphToFunction does not exist. */
typedef struct TF_Function TF_Function;

/* Decodes proto[0, proto_len), a serialized tensorflow.FunctionDef. NULL
 * and INVALID_ARGUMENT for bytes that are not one (or a body that does not
 * check: an unknown reference, a cycle, ...), UNIMPLEMENTED for what Loom
 * does not take yet (list arguments). */
TF_CAPI_EXPORT extern TF_Function* TF_FunctionImportFunctionDef(
    const void* proto, size_t proto_len, TF_Status* status);

/* Frees the function (contexts it was added to keep their reference). */
TF_CAPI_EXPORT extern void TF_DeleteFunction(TF_Function* func);

/* The function's name (its signature's), valid while it lives. */
TF_CAPI_EXPORT extern const char* TF_FunctionName(TF_Function* func);

/* Writes the FunctionDef the function was imported from into
 * output_func_def (its previous data freed by its deallocator). */
TF_CAPI_EXPORT extern void TF_FunctionToFunctionDef(TF_Function* func,
                                                    TF_Buffer* output_func_def,
                                                    TF_Status* status);

/* A loaded plugin library. */
typedef struct TF_Library TF_Library;

/* Loads the shared library at `library_filename`: its static initialisers
 * register its ops and kernels as dlopen runs them, then its entry points
 * run if it defines them (TF_InitPlugin, TF_InitKernel; neither is
 * required). On failure returns NULL and sets `status`; nothing the library
 * registered stays registered, and it is unmapped. Loading a loaded library
 * again returns a new handle and registers nothing (loom/plugin.h). */
TF_CAPI_EXPORT extern TF_Library* TF_LoadLibrary(const char* library_filename,
                                                 TF_Status* status);

/* Frees the handle. The library stays loaded and its ops and kernels stay
 * registered, as in TensorFlow. */
TF_CAPI_EXPORT extern void TF_DeleteLibraryHandle(TF_Library* lib_handle);

/* The serialized tensorflow.OpList (op_def.proto) of the ops the library
 * registered while it loaded (those still registered). The bytes belong to
 * the handle: valid until TF_DeleteLibraryHandle, not freed by the caller.
 * Empty for NULL. */
TF_CAPI_EXPORT extern TF_Buffer TF_GetOpList(TF_Library* lib_handle);

/* The serialized tensorflow.OpList of every registered op, sorted by name.
 * The caller frees it with TF_DeleteBuffer; NULL when out of memory. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllOpList(void);

/* The serialized tensorflow.KernelList (kernel_def.proto) of every
 * registered kernel, in registration order. The caller frees it with
 * TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status);

/* As TF_GetAllRegisteredKernels, for the kernels of op `name` only (an
 * empty list for an op with none). INVALID_ARGUMENT for a NULL name. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetRegisteredKernelsForOp(
    const char* name, TF_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_C_API_H_ */
