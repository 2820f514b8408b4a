/* TensorFlow's experimental eager C API as Loom provides it: op reuse,
 * executors, device memory, op attribute forwarding and custom devices
 * (TFE_CustomDevice version 4). Custom devices are Loom op handlers
 * (loom/op_handler.h) whose tensors hold the device's data.
 *
 * Valid C11 and C++: in C, fill TFE_CustomDevice and
 * TFE_CustomDeviceTensorHandle completely (version, and NULL for the
 * optional callbacks), which C++ initialises for you. */

#ifndef TENSORFLOW_C_EAGER_C_API_EXPERIMENTAL_H_
#define TENSORFLOW_C_EAGER_C_API_EXPERIMENTAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes `op_to_reset` a new op `op_or_function_name` (inputs and attributes
 * cleared), placed on `raw_device_name` (NULL or "": no placement). Cheaper
 * than a new op: a previous device lookup is kept when the name is the
 * same. */
TF_CAPI_EXPORT extern void TFE_OpReset(TFE_Op* op_to_reset,
                                       const char* op_or_function_name,
                                       const char* raw_device_name,
                                       TF_Status* status);

/* ------------------------------------------------------------------------
 * Executors
 *
 * Every op of a context runs on its thread pool in dataflow order (stateful
 * ops of one thread in program order); an executor is the calling thread's
 * mode (synchronous or asynchronous) and its view of the context's errors.
 * ------------------------------------------------------------------------ */

typedef struct TFE_Executor TFE_Executor;

/* An executor not yet attached to a context (the other arguments are
 * accepted for compatibility: ops are not streamed, and nothing limits the
 * ops in flight). */
TF_CAPI_EXPORT extern TFE_Executor* TFE_NewExecutor(
    bool is_async, bool enable_streaming_enqueue, int in_flight_nodes_limit);

/* Frees the executor object (pending ops still run). */
TF_CAPI_EXPORT extern void TFE_DeleteExecutor(TFE_Executor* executor);

TF_CAPI_EXPORT extern bool TFE_ExecutorIsAsync(TFE_Executor* executor);

/* Waits for every pending op of the executor's context; the first error of
 * an asynchronous op since the last clear (kept until then). */
TF_CAPI_EXPORT extern void TFE_ExecutorWaitForAllPendingNodes(
    TFE_Executor* executor, TF_Status* status);

/* Forgets that error: new ops run again. */
TF_CAPI_EXPORT extern void TFE_ExecutorClearError(TFE_Executor* executor);

/* Makes the calling thread's ops in `ctx` synchronous or asynchronous as
 * `executor` is, and attaches `executor` to `ctx`. */
TF_CAPI_EXPORT extern void TFE_ContextSetExecutorForThread(
    TFE_Context* ctx, TFE_Executor* executor);

/* A new executor object for the calling thread's mode in `ctx` (delete it
 * with TFE_DeleteExecutor). */
TF_CAPI_EXPORT extern TFE_Executor* TFE_ContextGetExecutorForThread(
    TFE_Context* ctx);

/* Waits for every pending op of the context; its first error since the last
 * clear. */
TF_CAPI_EXPORT extern void TFE_ContextAsyncWait(TFE_Context* ctx,
                                                TF_Status* status);

/* Forgets the context's recorded error. */
TF_CAPI_EXPORT extern void TFE_ContextAsyncClearError(TFE_Context* ctx);

/* The calling thread's mode, as TFE_ContextSetExecutorForThread sets it. */
TF_CAPI_EXPORT extern void TFE_ContextSetAsyncForThread(TFE_Context* ctx,
                                                        unsigned char is_async,
                                                        TF_Status* status);

/* ------------------------------------------------------------------------
 * Device memory and host tensors
 * ------------------------------------------------------------------------ */

/* The data of `h` on its device: a host tensor's data (waiting for it), or
 * the data a custom device gave its tensor. Valid while `h` lives. */
TF_CAPI_EXPORT extern void* TFE_TensorHandleDevicePointer(TFE_TensorHandle* h,
                                                          TF_Status* status);

/* The size in bytes of that data (elements x dtype size for a custom
 * device's tensor). */
TF_CAPI_EXPORT extern size_t TFE_TensorHandleDeviceMemorySize(
    TFE_TensorHandle* h, TF_Status* status);

/* A handle over memory on `device_name`: the CPU (wrapped in place; `len`
 * must cover the tensor) or a custom device (the data is the device's).
 * Takes ownership of `data`: `deallocator` runs when the handle goes, or at
 * once on error. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewTensorHandleFromDeviceMemory(
    TFE_Context* ctx, const char* device_name, TF_DataType dtype,
    const int64_t* dims, int num_dims, void* data, size_t len,
    void (*deallocator)(void* data, size_t len, void* arg),
    void* deallocator_arg, TF_Status* status);

/* A host tensor allocated by the context (write its data, then wrap it). */
TF_CAPI_EXPORT extern TF_Tensor* TFE_AllocateHostTensor(TFE_Context* ctx,
                                                        TF_DataType dtype,
                                                        const int64_t* dims,
                                                        int num_dims,
                                                        TF_Status* status);

/* A handle on the context's CPU holding `t` (shared, not copied). */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewTensorHandleFromTensor(
    TFE_Context* ctx, TF_Tensor* t, TF_Status* status);

/* The device type ("CPU"; valid until the calling thread's next call) and
 * index of the device `h` lives on. */
TF_CAPI_EXPORT extern const char* TFE_TensorHandleDeviceType(
    TFE_TensorHandle* h, TF_Status* status);
TF_CAPI_EXPORT extern int TFE_TensorHandleDeviceID(TFE_TensorHandle* h,
                                                   TF_Status* status);

/* The error `h` carries (an asynchronous op that failed), or OK; does not
 * wait. */
TF_CAPI_EXPORT extern void TFE_TensorHandleGetStatus(TFE_TensorHandle* h,
                                                     TF_Status* status);

/* Writes "/job:localhost/replica:0/task:0" into `buf`. */
TF_CAPI_EXPORT extern void TFE_HostAddressSpace(TFE_Context* ctx,
                                                TF_Buffer* buf);

/* ------------------------------------------------------------------------
 * Op attributes, for forwarding them (custom devices)
 * ------------------------------------------------------------------------ */

typedef struct TFE_OpAttrs TFE_OpAttrs;

/* The attributes set on `op` (valid while `op` lives and is not changed). */
TF_CAPI_EXPORT extern const TFE_OpAttrs* TFE_OpGetAttrs(const TFE_Op* op);

/* Adds the attributes of `attrs` that `op` does not have yet. */
TF_CAPI_EXPORT extern void TFE_OpAddAttrs(TFE_Op* op, const TFE_OpAttrs* attrs);

/* ------------------------------------------------------------------------
 * Custom devices
 * ------------------------------------------------------------------------ */

#define TFE_CUSTOM_DEVICE_VERSION 4

/* A custom device's callbacks; all required except where noted. */
typedef struct TFE_CustomDevice {
#ifdef __cplusplus
  int version = TFE_CUSTOM_DEVICE_VERSION;
#else
  int version; /* TFE_CUSTOM_DEVICE_VERSION */
#endif
  /* Copies `tensor` (on a physical device) onto the custom device. */
  TFE_TensorHandle* (*copy_tensor_to_device)(TFE_Context* context,
                                             TFE_TensorHandle* tensor,
                                             TF_Status* status,
                                             void* device_info);
  /* Copies one of its tensors to `target_device_name`. */
  TFE_TensorHandle* (*copy_tensor_from_device)(TFE_Context* context,
                                               TFE_TensorHandle* tensor,
                                               const char* target_device_name,
                                               TF_Status* status,
                                               void* device_info);
  /* Executes `op`: its name, attributes, inputs (as given: the device's own
   * tensors and others) and requested device (TFE_OpGetDevice: "" when the
   * op came here because of an input). *num_outputs is the number of
   * outputs expected; set it to the number written. */
  void (*execute)(const TFE_Op* op, int* num_outputs,
                  TFE_TensorHandle** outputs, TF_Status* s, void* device_info);
  /* Frees `device_info` (when the device goes, or registration fails). */
  void (*delete_device)(void* device_info);
  /* Optional: TFE_CreatePackedTensorHandle of handles on this device. */
  TFE_TensorHandle* (*pack)(TFE_Context* context, TFE_TensorHandle** handles,
                            int num_handles, TF_Status* s, void* device_info)
#ifdef __cplusplus
      = nullptr
#endif
      ;
  /* Optional: for an op placed here by an input, whether it stays (true) or
   * runs on the physical device (false). */
  bool (*shall_pin_to_this_device)(const TFE_Op* op, TF_Status* s)
#ifdef __cplusplus
      = nullptr
#endif
      ;
} TFE_CustomDevice;

/* Registers a custom device under a fully qualified name
 * ("/job:localhost/replica:0/task:0/device:CUSTOM:0"): INVALID_ARGUMENT for
 * another form, an unsupported version or a missing callback,
 * ALREADY_EXISTS for a name in use. On failure `device.delete_device` is
 * called with `device_info`. */
TF_CAPI_EXPORT extern void TFE_RegisterCustomDevice(TFE_Context* ctx,
                                                    TFE_CustomDevice device,
                                                    const char* device_name,
                                                    void* device_info,
                                                    TF_Status* status);

/* Whether `device_name` names a custom device of `ctx`. */
TF_CAPI_EXPORT extern bool TFE_IsCustomDevice(TFE_Context* ctx,
                                              const char* device_name);

/* What a custom device's tensor needs: its shape on demand, and how to free
 * its data. All required except `summarize`. */
typedef struct TFE_CustomDeviceTensorHandleMethods {
#ifdef __cplusplus
  int version = TFE_CUSTOM_DEVICE_VERSION;
#else
  int version; /* TFE_CUSTOM_DEVICE_VERSION */
#endif
  int (*num_dims)(void* data, TF_Status* status);
  int64_t (*dim)(void* data, int dim_index, TF_Status* status);
  void (*deallocator)(void* data);
  /* Optional: a description of the value (the caller deletes the buffer). */
  TF_Buffer* (*summarize)(void* data, TF_Status* status)
#ifdef __cplusplus
      = nullptr
#endif
      ;
} TFE_CustomDeviceTensorHandle;

/* A handle on custom device `device_name` holding `data` (owned: freed with
 * methods.deallocator when the handle goes, or at once on error). Its shape
 * is asked of the methods when needed. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewCustomDeviceTensorHandle(
    TFE_Context* ctx, const char* device_name, TF_DataType dtype, void* data,
    TFE_CustomDeviceTensorHandle methods, TF_Status* status);

/* One handle standing for `handles`: the custom device of one of them packs
 * them (its `pack` callback); UNIMPLEMENTED otherwise. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_CreatePackedTensorHandle(
    TFE_Context* ctx, TFE_TensorHandle** handles, int* num_handles,
    TF_Status* status);

/* ------------------------------------------------------------------------
 * Cancellation (loom/cancellation.h)
 *
 * An op given a cancellation manager fails with CANCELLED ("Operation was
 * cancelled") when the manager has started cancelling before the op runs:
 * at TFE_Execute, or, for an op still waiting for its inputs, when it would
 * run. Callbacks registered on the manager run once, on the thread that
 * calls TFE_CancellationManagerStartCancel.
 * ------------------------------------------------------------------------ */

typedef struct TFE_CancellationManager TFE_CancellationManager;
typedef int64_t TFE_CancellationToken;
typedef struct TFE_CancelCallback {
  void (*callback)(void* context);
  void* context;
} TFE_CancelCallback;

TF_CAPI_EXPORT extern TFE_CancellationManager* TFE_NewCancellationManager(void);
TF_CAPI_EXPORT extern bool TFE_CancellationManagerIsCancelled(
    TFE_CancellationManager* manager);
TF_CAPI_EXPORT extern bool TFE_CancellationManagerIsCancelling(
    TFE_CancellationManager* manager);
TF_CAPI_EXPORT extern void TFE_CancellationManagerStartCancel(
    TFE_CancellationManager* manager);
TF_CAPI_EXPORT extern TFE_CancellationToken TFE_CancellationManagerGetToken(
    TFE_CancellationManager* manager);
/* False (nothing registered) once cancellation has started. The name is
 * for diagnostics only. */
TF_CAPI_EXPORT extern bool TFE_CancellationManagerRegisterCallback(
    TFE_CancellationManager* manager, TFE_CancellationToken token,
    const TFE_CancelCallback* c_callback, const char* callback_name);
/* True when the callback was removed before it ran; false once
 * cancellation started (Deregister then waits for the callbacks to finish,
 * TryDeregister does not). */
TF_CAPI_EXPORT extern bool TFE_CancellationManagerDeregisterCallback(
    TFE_CancellationManager* manager, TFE_CancellationToken token);
TF_CAPI_EXPORT extern bool TFE_CancellationManagerTryDeregisterCallback(
    TFE_CancellationManager* manager, TFE_CancellationToken token);
/* Ops still waiting with it keep it alive until they have run. */
TF_CAPI_EXPORT extern void TFE_DeleteCancellationManager(
    TFE_CancellationManager* manager);

/* Associates `cancellation_manager` (NULL: none) with the op's executions
 * from now on; TFE_OpReset clears it. */
TF_CAPI_EXPORT extern void TFE_OpSetCancellationManager(
    TFE_Op* op, TFE_CancellationManager* cancellation_manager,
    TF_Status* status);

/* ------------------------------------------------------------------------
 * Context settings
 * ------------------------------------------------------------------------ */

/* Adds the op's input `h`, taking the caller's reference (the caller must
 * not delete `h`). */
TF_CAPI_EXPORT extern void TFE_OpConsumeInput(TFE_Op* op, TFE_TensorHandle* h,
                                              TF_Status* status);

/* Gives the context `num_cpus` CPU devices, CPU:0 .. CPU:num_cpus-1, each a
 * cpu op handler of its own sharing the context's thread pool
 * (loom_context_set_cpu_device_count). `prefix` is NULL, "" or this
 * process's "/job:localhost/replica:0/task:0". */
TF_CAPI_EXPORT extern void TFE_SetLogicalCpuDevices(TFE_Context* ctx,
                                                    int num_cpus,
                                                    const char* prefix,
                                                    TF_Status* status);

/* Soft placement: ops placed on a device the context lacks run on CPU:0. */
TF_CAPI_EXPORT extern void TFE_ContextSetSoftDevicePlacement(
    TFE_Context* ctx, unsigned char enable, TF_Status* status);
/* Logs "Executing op <op> in device <device>" to stderr for each op. */
TF_CAPI_EXPORT extern void TFE_ContextSetLogDevicePlacement(
    TFE_Context* ctx, unsigned char enable, TF_Status* status);
/* Accepted; they change nothing in Loom. */
TF_CAPI_EXPORT extern void TFE_ContextSetRunEagerOpAsFunction(
    TFE_Context* ctx, unsigned char enable, TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ContextSetJitCompileRewrite(TFE_Context* ctx,
                                                           unsigned char enable,
                                                           TF_Status* status);

/* The empty list (TensorFlow records it in TFRT debug builds only). */
TF_CAPI_EXPORT extern void TFE_GetExecutedOpNames(TFE_Context* ctx,
                                                  TF_Buffer* buf,
                                                  TF_Status* status);

/* Unique per context made in the process. */
TF_CAPI_EXPORT extern uint64_t TFE_GetContextId(TFE_Context* ctx);

/* The coordination service of a cluster: FAILED_PRECONDITION ("Coordination
 * service agent is not enabled."), as TensorFlow answers for a local
 * context. Servers: UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TFE_InsertConfigKeyValue(TFE_Context* ctx,
                                                    const char* key,
                                                    const char* value,
                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TFE_GetConfigKeyValue(TFE_Context* ctx,
                                                 const char* key,
                                                 TF_Buffer* value_buf,
                                                 TF_Status* status);
TF_CAPI_EXPORT extern void TFE_DeleteConfigKeyValue(TFE_Context* ctx,
                                                    const char* key,
                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ReportErrorToCluster(TFE_Context* ctx,
                                                    int error_code,
                                                    const char* error_message,
                                                    TF_Status* status);
TF_CAPI_EXPORT extern void TFE_ContextUpdateServerDef(TFE_Context* ctx,
                                                      int keep_alive_secs,
                                                      const void* proto,
                                                      size_t proto_len,
                                                      TF_Status* status);
TF_CAPI_EXPORT extern bool TFE_ContextCheckAlive(TFE_Context* ctx,
                                                 const char* worker_name,
                                                 TF_Status* status);

/* Accepted for TensorFlow's sake: Loom's runtime is TFRT's design already,
 * so the choice changes nothing. */
TF_CAPI_EXPORT extern void TFE_ContextOptionsSetTfrt(
    TFE_ContextOptions* options, bool use_tfrt);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_EAGER_C_API_EXPERIMENTAL_H_ */
