/* TensorFlow's eager C API as Loom provides it: contexts, tensor handles,
 * ops and their execution (TensorFlow 2.x signatures). A TFE_Context is a
 * loom_context_t, a TFE_Op a loom_eager_op_t and a TFE_TensorHandle a
 * loom_tensor_handle_t (loom/eager.h): the two APIs mix without copies.
 *
 * Functions with a TF_Status* set it on every call (OK on success).
 * Valid C11 and C++. */

#ifndef TENSORFLOW_C_EAGER_C_API_H_
#define TENSORFLOW_C_EAGER_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Contexts
 * ------------------------------------------------------------------------ */

typedef struct TFE_ContextOptions TFE_ContextOptions;

/* New options: synchronous execution, TFE_DEVICE_PLACEMENT_SILENT. */
TF_CAPI_EXPORT extern TFE_ContextOptions* TFE_NewContextOptions(void);

/* Loom has no ConfigProto: an empty `proto` is accepted, anything else is
 * UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TFE_ContextOptionsSetConfig(
    TFE_ContextOptions* options, const void* proto, size_t proto_len,
    TF_Status* status);

/* What happens to inputs on another device than the op's. Loom's devices
 * share host memory, so inputs are always usable in place; the policy is
 * recorded and reported back. */
typedef enum TFE_ContextDevicePlacementPolicy {
  TFE_DEVICE_PLACEMENT_EXPLICIT = 0,
  TFE_DEVICE_PLACEMENT_WARN = 1,
  TFE_DEVICE_PLACEMENT_SILENT = 2,
  TFE_DEVICE_PLACEMENT_SILENT_FOR_INT32 = 3
} TFE_ContextDevicePlacementPolicy;

/* Asynchronous contexts return from TFE_Execute before the op has run; its
 * errors surface when a result is resolved or at the next wait
 * (TFE_ContextAsyncWait, TFE_ExecutorWaitForAllPendingNodes). */
TF_CAPI_EXPORT extern void TFE_ContextOptionsSetAsync(TFE_ContextOptions*,
                                                      unsigned char enable);

TF_CAPI_EXPORT extern void TFE_ContextOptionsSetDevicePlacementPolicy(
    TFE_ContextOptions*, TFE_ContextDevicePlacementPolicy);

TF_CAPI_EXPORT extern void TFE_DeleteContextOptions(TFE_ContextOptions*);

/* A context: its devices (CPU:0 and the custom devices registered), handler
 * scopes, thread pool and kernels. */
typedef struct TFE_Context TFE_Context;

/* `opts` may be NULL for the defaults. */
TF_CAPI_EXPORT extern TFE_Context* TFE_NewContext(
    const TFE_ContextOptions* opts, TF_Status* status);

/* Waits for pending ops, then frees the context. Its ops must be deleted
 * first; tensor handles may outlive it. */
TF_CAPI_EXPORT extern void TFE_DeleteContext(TFE_Context* ctx);

/* The context's devices (CPU:0, then custom devices). */
TF_CAPI_EXPORT extern TF_DeviceList* TFE_ContextListDevices(TFE_Context* ctx,
                                                            TF_Status* status);

/* Nothing to clear in Loom (kernels are cached per op). */
TF_CAPI_EXPORT extern void TFE_ContextClearCaches(TFE_Context* ctx);

/* The calling thread's placement policy (overriding the context's). */
TF_CAPI_EXPORT extern void TFE_ContextSetThreadLocalDevicePlacementPolicy(
    TFE_Context* ctx, TFE_ContextDevicePlacementPolicy policy);

TF_CAPI_EXPORT extern TFE_ContextDevicePlacementPolicy
TFE_ContextGetDevicePlacementPolicy(TFE_Context* ctx);

/* ------------------------------------------------------------------------
 * Tensor handles
 * ------------------------------------------------------------------------ */

typedef struct TFE_TensorHandle TFE_TensorHandle;

/* A handle on the host CPU holding `t` (shared, not copied: delete `t` when
 * you like). Usable in every context as its CPU:0. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewTensorHandle(const TF_Tensor* t,
                                                            TF_Status* status);

/* Drops the caller's reference. */
TF_CAPI_EXPORT extern void TFE_DeleteTensorHandle(TFE_TensorHandle* h);

/* The dtype; 0 (not a TF_DataType) for NULL or a failed handle. */
TF_CAPI_EXPORT extern TF_DataType TFE_TensorHandleDataType(TFE_TensorHandle* h);

/* Shape queries: they wait for the op producing `h` when its shape is not
 * known yet. NULL `h`: -1 and INVALID_ARGUMENT "Invalid handle". */
TF_CAPI_EXPORT extern int TFE_TensorHandleNumDims(TFE_TensorHandle* h,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern int64_t TFE_TensorHandleNumElements(TFE_TensorHandle* h,
                                                          TF_Status* status);
TF_CAPI_EXPORT extern int64_t TFE_TensorHandleDim(TFE_TensorHandle* h,
                                                  int dim_index,
                                                  TF_Status* status);

/* The device `h` lives on ("/job:localhost/replica:0/task:0/device:CPU:0",
 * a custom device's name, a handler's); valid while `h` lives. */
TF_CAPI_EXPORT extern const char* TFE_TensorHandleDeviceName(
    TFE_TensorHandle* h, TF_Status* status);

/* The device whose memory holds `h` (Loom: the same as its device). */
TF_CAPI_EXPORT extern const char* TFE_TensorHandleBackingDeviceName(
    TFE_TensorHandle* h, TF_Status* status);

/* A new reference to the same tensor. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_TensorHandleCopySharingTensor(
    TFE_TensorHandle* h, TF_Status* status);

/* The value as a host tensor (the caller deletes it; do not write to its
 * data). Waits for the op producing `h`; copies a tensor off its custom
 * device or handler first. The op's error when it failed. */
TF_CAPI_EXPORT extern TF_Tensor* TFE_TensorHandleResolve(TFE_TensorHandle* h,
                                                         TF_Status* status);

/* A handle with the same value on `device_name` (a device or handler of
 * `ctx`, full or partial name). The same device: a new reference. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_TensorHandleCopyToDevice(
    TFE_TensorHandle* h, TFE_Context* ctx, const char* device_name,
    TF_Status* status);

/* ------------------------------------------------------------------------
 * Ops
 * ------------------------------------------------------------------------ */

typedef struct TFE_Op TFE_Op;

/* An op of a registered name; NOT_FOUND otherwise. Delete it before its
 * context. */
TF_CAPI_EXPORT extern TFE_Op* TFE_NewOp(TFE_Context* ctx,
                                        const char* op_or_function_name,
                                        TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteOp(TFE_Op* op);

/* The op's name and context (valid while the op lives). */
TF_CAPI_EXPORT extern const char* TFE_OpGetName(const TFE_Op* op,
                                                TF_Status* status);
TF_CAPI_EXPORT extern TFE_Context* TFE_OpGetContext(const TFE_Op* op,
                                                    TF_Status* status);

/* Places the op ("" for no explicit placement); the name is checked when
 * the op executes. An explicit placement wins over inputs and scopes. */
TF_CAPI_EXPORT extern void TFE_OpSetDevice(TFE_Op* op, const char* device_name,
                                           TF_Status* status);
/* The requested device, as set ("" when none). */
TF_CAPI_EXPORT extern const char* TFE_OpGetDevice(const TFE_Op* op,
                                                  TF_Status* status);

/* Adds an input (the op takes a reference). NULL `input`: INVALID_ARGUMENT
 * "Invalid handle". */
TF_CAPI_EXPORT extern void TFE_OpAddInput(TFE_Op* op, TFE_TensorHandle* input,
                                          TF_Status* status);
/* Adds a list input: the first list argument whose length is unset takes
 * `num_inputs` as its length. */
TF_CAPI_EXPORT extern void TFE_OpAddInputList(TFE_Op* op,
                                              TFE_TensorHandle** inputs,
                                              int num_inputs,
                                              TF_Status* status);

/* The inputs added so far, as a flat list; TFE_OpGetFlatInput returns a
 * borrowed reference (TFE_TensorHandleCopySharingTensor makes a new one). */
TF_CAPI_EXPORT extern int TFE_OpGetFlatInputCount(const TFE_Op* op,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_OpGetFlatInput(const TFE_Op* op,
                                                           int index,
                                                           TF_Status* status);

/* The type of attribute `attr_name` and whether it is a list.
 * INVALID_ARGUMENT for an attribute the op does not have. */
TF_CAPI_EXPORT extern TF_AttrType TFE_OpGetAttrType(TFE_Op* op,
                                                    const char* attr_name,
                                                    unsigned char* is_list,
                                                    TF_Status* status);
TF_CAPI_EXPORT extern TF_AttrType TFE_OpNameGetAttrType(
    TFE_Context* ctx, const char* op_or_function_name, const char* attr_name,
    unsigned char* is_list, TF_Status* status);

/* Attribute setters. Those without a status record a failure (out of
 * memory, a NULL name) in the op: TFE_Execute then returns it. Attributes
 * the inputs determine (type and length attributes) are inferred, and
 * defaults added, when the op executes. */
TF_CAPI_EXPORT extern void TFE_OpSetAttrString(TFE_Op* op,
                                               const char* attr_name,
                                               const void* value,
                                               size_t length);
TF_CAPI_EXPORT extern void TFE_OpSetAttrInt(TFE_Op* op, const char* attr_name,
                                            int64_t value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFloat(TFE_Op* op, const char* attr_name,
                                              float value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrBool(TFE_Op* op, const char* attr_name,
                                             unsigned char value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrType(TFE_Op* op, const char* attr_name,
                                             TF_DataType value);
/* num_dims -1: unknown rank (dims may be NULL); a dim of -1: unknown. */
TF_CAPI_EXPORT extern void TFE_OpSetAttrShape(TFE_Op* op, const char* attr_name,
                                              const int64_t* dims,
                                              const int num_dims,
                                              TF_Status* out_status);
/* A function attribute naming `value`'s op (its attributes are not kept). */
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunction(TFE_Op* op,
                                                 const char* attr_name,
                                                 const TFE_Op* value);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunctionName(TFE_Op* op,
                                                     const char* attr_name,
                                                     const char* data,
                                                     size_t length);
TF_CAPI_EXPORT extern void TFE_OpSetAttrTensor(TFE_Op* op,
                                               const char* attr_name,
                                               TF_Tensor* tensor,
                                               TF_Status* status);
TF_CAPI_EXPORT extern void TFE_OpSetAttrStringList(TFE_Op* op,
                                                   const char* attr_name,
                                                   const void* const* values,
                                                   const size_t* lengths,
                                                   int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrIntList(TFE_Op* op,
                                                const char* attr_name,
                                                const int64_t* values,
                                                int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFloatList(TFE_Op* op,
                                                  const char* attr_name,
                                                  const float* values,
                                                  int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrBoolList(TFE_Op* op,
                                                 const char* attr_name,
                                                 const unsigned char* values,
                                                 int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrTypeList(TFE_Op* op,
                                                 const char* attr_name,
                                                 const TF_DataType* values,
                                                 int num_values);
TF_CAPI_EXPORT extern void TFE_OpSetAttrShapeList(
    TFE_Op* op, const char* attr_name, const int64_t** dims,
    const int* num_dims, int num_values, TF_Status* out_status);
TF_CAPI_EXPORT extern void TFE_OpSetAttrFunctionList(TFE_Op* op,
                                                     const char* attr_name,
                                                     const TFE_Op** value,
                                                     int num_values);

/* The number of tensors of input (output) argument `input_name`
 * (`output_name`) with the inputs and attributes given so far; -1 and an
 * error when that is not known yet. */
TF_CAPI_EXPORT extern int TFE_OpGetInputLength(TFE_Op* op,
                                               const char* input_name,
                                               TF_Status* status);
TF_CAPI_EXPORT extern int TFE_OpGetOutputLength(TFE_Op* op,
                                                const char* output_name,
                                                TF_Status* status);

/* Executes the op. `retvals` has room for *num_retvals handles; on success
 * *num_retvals is the number of outputs and retvals[0, *num_retvals) hold
 * new handles (delete them). Fewer slots than outputs is INVALID_ARGUMENT.
 * Synchronous contexts return the op's error here; asynchronous ones return
 * before it has run (see TFE_ContextOptionsSetAsync). An input that only
 * the op refers to (its handle was deleted) may have its buffer reused for
 * an output; the op then no longer has it. On failure, as in TensorFlow:
 * *num_retvals is left as it was when the op failed before its output
 * count was known (an unknown op, missing inputs or attributes, too few
 * slots), else it is the output count and retvals[0, count) are NULL.
 * Asynchronous contexts return the errors knowable before running (input
 * dtypes and counts against the op's signature) here too. */
TF_CAPI_EXPORT extern void TFE_Execute(TFE_Op* op, TFE_TensorHandle** retvals,
                                       int* num_retvals, TF_Status* status);

/* ------------------------------------------------------------------------
 * Functions
 * ------------------------------------------------------------------------ */

/* Adds a function, given as a serialized tensorflow.FunctionDef, to the
 * context's function library (see loom/function.h): TFE_NewOp then takes
 * its name, and PartitionedCall / StatefulPartitionedCall call it through
 * their func attr `f`. ALREADY_EXISTS for a name a registered op or another
 * function has. */
TF_CAPI_EXPORT extern void TFE_ContextAddFunctionDef(
    TFE_Context* ctx, const char* serialized_function_def, size_t size,
    TF_Status* status);

/* Adds an imported function (TF_FunctionImportFunctionDef); the context
 * takes its own reference. */
TF_CAPI_EXPORT extern void TFE_ContextAddFunction(TFE_Context* ctx,
                                                  TF_Function* function,
                                                  TF_Status* status);

/* Removes function `name` (INVALID_ARGUMENT when there is none); ops made
 * for it keep calling it. */
TF_CAPI_EXPORT extern void TFE_ContextRemoveFunction(TFE_Context* ctx,
                                                     const char* name,
                                                     TF_Status* status);

/* 1 when the context has function `name`. */
TF_CAPI_EXPORT extern unsigned char TFE_ContextHasFunction(TFE_Context* ctx,
                                                           const char* name);

/* ------------------------------------------------------------------------
 * Debug information, run metadata, steps and servers
 * ------------------------------------------------------------------------ */

/* The shape of a handle's value as its device holds it (Loom's devices hold
 * it as it is). Waits for the value; NULL with the status on failure. */
typedef struct TFE_TensorDebugInfo TFE_TensorDebugInfo;
TF_CAPI_EXPORT extern TFE_TensorDebugInfo* TFE_TensorHandleTensorDebugInfo(
    TFE_TensorHandle* h, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteTensorDebugInfo(
    TFE_TensorDebugInfo* debug_info);
TF_CAPI_EXPORT extern int TFE_TensorDebugInfoOnDeviceNumDims(
    TFE_TensorDebugInfo* debug_info);
TF_CAPI_EXPORT extern int64_t TFE_TensorDebugInfoOnDeviceDim(
    TFE_TensorDebugInfo* debug_info, int dim_index);

/* Loom records no step statistics: the exported RunMetadata is the empty
 * message. */
TF_CAPI_EXPORT extern void TFE_ContextEnableRunMetadata(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextDisableRunMetadata(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextExportRunMetadata(TFE_Context* ctx,
                                                        TF_Buffer* buf,
                                                        TF_Status* status);

/* Accepted; Loom keeps no per-step state. */
TF_CAPI_EXPORT extern void TFE_ContextStartStep(TFE_Context* ctx);
TF_CAPI_EXPORT extern void TFE_ContextEndStep(TFE_Context* ctx);

/* UNIMPLEMENTED: contexts run in one process, without remote workers. */
TF_CAPI_EXPORT extern void TFE_ContextSetServerDef(TFE_Context* ctx,
                                                   int keep_alive_secs,
                                                   const void* proto,
                                                   size_t proto_len,
                                                   TF_Status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_EAGER_C_API_H_ */
