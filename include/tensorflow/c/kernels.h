/* Registering kernels and writing them: the kernel part of TensorFlow's
 * kernel and op C API, as provided by Loom, plus the kernel thread-pool API
 * of TensorFlow's kernel C API design. Valid C11 and C++.
 *
 *   TF_KernelBuilder* b = TF_NewKernelBuilder("Bitcast", "CPU",
 *                                             create, compute, destroy);
 *   TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, status);
 *   TF_RegisterKernelBuilder("BitcastOp", b, status);  // consumes b
 */

#ifndef TENSORFLOW_C_KERNELS_H_
#define TENSORFLOW_C_KERNELS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/core/common_runtime/next_pluggable_device/c/tf_rendezvous_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device stream of TensorFlow's StreamExecutor C API
 * (tensorflow/c/experimental/stream_executor/stream_executor.h); Loom has no
 * such devices, so TF_GetStream never returns one. Repeating the typedef is
 * valid C11 and C++ should that header be included too. */
typedef struct SP_Stream_st* SP_Stream;

typedef struct TF_KernelBuilder TF_KernelBuilder;
typedef struct TF_OpKernelConstruction TF_OpKernelConstruction;
typedef struct TF_OpKernelContext TF_OpKernelContext;
typedef struct TF_AsyncOpKernelDoneCallback TF_AsyncOpKernelDoneCallback;

/* Tells the runtime an asynchronous compute function has finished; call it
 * exactly once per compute, from any thread. */
TF_CAPI_EXPORT extern void TF_RunAsyncOpKernelDoneCallback(
    TF_AsyncOpKernelDoneCallback* done);

/* Implemented by a plugin (not by Loom) to register its kernels: Loom calls
 * it when the plugin is loaded (TF_LoadLibrary). Declared exported, so that
 * a plugin built with hidden visibility still exports it. */
TF_CAPI_EXPORT extern void TF_InitKernel(void);

/* A builder for a kernel of op `op_name` on `device_name` ("CPU").
 * create_func (optional) runs once per op instance and returns the kernel
 * state handed to compute_func and delete_func. Register the builder with
 * TF_RegisterKernelBuilder or free it with TF_DeleteKernelBuilder. */
TF_CAPI_EXPORT extern TF_KernelBuilder* TF_NewKernelBuilder(
    const char* op_name, const char* device_name,
    void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_func)(void*, TF_OpKernelContext*),
    void (*delete_func)(void*));

/* As TF_NewKernelBuilder for a kernel that computes asynchronously and calls
 * TF_RunAsyncOpKernelDoneCallback(done) when finished. */
TF_CAPI_EXPORT extern TF_KernelBuilder* TF_NewAsyncKernelBuilder(
    const char* op_name, const char* device_name,
    void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_async_func)(void*, TF_OpKernelContext*,
                               TF_AsyncOpKernelDoneCallback* done),
    void (*delete_func)(void*));

/* Restricts the type attr `attr_name` to `type` (several calls: any of). */
TF_CAPI_EXPORT extern void TF_KernelBuilder_TypeConstraint(
    TF_KernelBuilder* kernel_builder, const char* attr_name,
    const TF_DataType type, TF_Status* status);

/* Keeps argument `arg_name` in host memory. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_HostMemory(
    TF_KernelBuilder* kernel_builder, const char* arg_name);

/* Among matching kernels, the highest priority is chosen. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_Priority(
    TF_KernelBuilder* kernel_builder, int32_t priority_number);

/* Selects this kernel only for op instances whose "_kernel" attr is `label`. */
TF_CAPI_EXPORT extern void TF_KernelBuilder_Label(
    TF_KernelBuilder* kernel_builder, const char* label);

/* Registers the kernel in the process-wide registry and takes ownership of
 * `builder`: it must not be used afterwards (a later TF_DeleteKernelBuilder
 * on it is harmless). */
TF_CAPI_EXPORT extern void TF_RegisterKernelBuilder(const char* kernel_name,
                                                    TF_KernelBuilder* builder,
                                                    TF_Status* status);

/* As TF_RegisterKernelBuilder when serialized_kernel_def is NULL. A
 * serialized KernelDef is not supported: TF_UNIMPLEMENTED, and the builder
 * is freed (ownership was taken). */
TF_CAPI_EXPORT extern void TF_RegisterKernelBuilderWithKernelDef(
    const char* serialized_kernel_def, const char* name,
    TF_KernelBuilder* builder, TF_Status* status);

/* Frees an unregistered builder. NULL, and a builder already registered,
 * are ignored. */
TF_CAPI_EXPORT extern void TF_DeleteKernelBuilder(TF_KernelBuilder* builder);

/* ---- Kernel construction ------------------------------------------------ */

/* list_size: the length of a list attr (-1 for a scalar); total_size: the
 * bytes of a string (list), the dims of a shape (list), else -1. A missing
 * attr is TF_INVALID_ARGUMENT here (both sizes -1), as in TensorFlow; the
 * getters below report it as TF_NOT_FOUND, and a value of another type as
 * TF_INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrSize(
    TF_OpKernelConstruction* ctx, const char* attr_name, int32_t* list_size,
    int32_t* total_size, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrType(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_DataType* val,
    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32(
    TF_OpKernelConstruction* ctx, const char* attr_name, int32_t* val,
    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64(
    TF_OpKernelConstruction* ctx, const char* attr_name, int64_t* val,
    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloat(
    TF_OpKernelConstruction* ctx, const char* attr_name, float* val,
    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrBool(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Bool* val,
    TF_Status* status);
/* Copies at most max_length bytes (no NUL is added, as in TensorFlow). */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrString(
    TF_OpKernelConstruction* ctx, const char* attr_name, char* val,
    size_t max_length, TF_Status* status);
/* A new tensor the caller owns (TF_DeleteTensor). */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensor(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Tensor** val,
    TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTypeList(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_DataType* vals,
    int max_vals, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt32List(
    TF_OpKernelConstruction* ctx, const char* attr_name, int32_t* vals,
    int max_vals, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrInt64List(
    TF_OpKernelConstruction* ctx, const char* attr_name, int64_t* vals,
    int max_vals, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrFloatList(
    TF_OpKernelConstruction* ctx, const char* attr_name, float* vals,
    int max_vals, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrBoolList(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Bool* vals,
    int max_vals, TF_Status* status);
/* vals[i] points into `storage` (storage_size bytes), lengths[i] its size. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrStringList(
    TF_OpKernelConstruction* ctx, const char* attr_name, char** vals,
    size_t* lengths, int max_values, void* storage, size_t storage_size,
    TF_Status* status);
/* New tensors the caller owns. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensorList(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Tensor** vals,
    int max_values, TF_Status* status);
/* A func attr serialized as TensorFlow's NameAttrList protocol buffer
 * (field 1: the function's name; Loom's functions carry no attrs) in a new
 * TF_Buffer the caller owns (TF_DeleteBuffer); NULL on error. */
TF_CAPI_EXPORT extern TF_Buffer* TF_OpKernelConstruction_GetAttrFunction(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Status* status);
TF_CAPI_EXPORT extern bool TF_OpKernelConstruction_HasAttr(
    TF_OpKernelConstruction* ctx, const char* attr_name, TF_Status* status);
/* The op instance's name. */
TF_CAPI_EXPORT extern TF_StringView TF_OpKernelConstruction_GetName(
    TF_OpKernelConstruction* ctx);
/* The op instance's NodeDef: Loom has no graph nodes, so NULL and
 * TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern TF_Buffer* TF_OpKernelConstruction_GetNodeDef(
    TF_OpKernelConstruction* ctx, TF_Status* status);
/* Makes construction fail with (a copy of) `status`. */
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_Failure(
    TF_OpKernelConstruction* ctx, TF_Status* status);

/* ---- Kernel compute ----------------------------------------------------- */

/* Loom's kernels run on the host: NULL and TF_FAILED_PRECONDITION ("Accessing
 * device stream is not supported for a CPU device."), as TensorFlow on CPU. */
TF_CAPI_EXPORT extern SP_Stream TF_GetStream(TF_OpKernelContext* ctx,
                                             TF_Status* status);

TF_CAPI_EXPORT extern int TF_NumInputs(TF_OpKernelContext* ctx);
TF_CAPI_EXPORT extern int TF_NumOutputs(TF_OpKernelContext* ctx);

/* Input i, as a new TF_Tensor the caller owns (TF_DeleteTensor); it shares
 * the input's memory. TF_OUT_OF_RANGE for a bad index. Holding it keeps
 * the input from being forwarded to an output. */
TF_CAPI_EXPORT extern void TF_GetInput(TF_OpKernelContext* ctx, int i,
                                       TF_Tensor** tensor, TF_Status* status);

typedef struct {
  size_t struct_size;
  void* priv;        /* not used */
  int start;         /* output */
  int stop;          /* output */
  TF_Status* status; /* output */
} TF_InputRange_Args;
/* A macro, not a global, so that including this header defines nothing. */
#define TF_InputRange_Args_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_InputRange_Args, status)

/* The range of flattened inputs [start, stop) of input argument `name`;
 * TF_INVALID_ARGUMENT and [-1, -1) for a name the op does not have. */
TF_CAPI_EXPORT extern void TF_InputRange(TF_OpKernelContext* ctx,
                                         const char* name,
                                         TF_InputRange_Args* args);

/* The dtype of input `index` (0 for a bad index). */
TF_CAPI_EXPORT extern TF_DataType TF_InputDatatype(TF_OpKernelContext* ctx,
                                                   int index);

/* Output i becomes `tensor` (shared, not copied). TF_OUT_OF_RANGE for a bad
 * index, TF_INVALID_ARGUMENT for the wrong dtype. */
TF_CAPI_EXPORT extern void TF_SetOutput(TF_OpKernelContext* ctx, int i,
                                        const TF_Tensor* tensor,
                                        TF_Status* status);

/* Output i as a new TF_Tensor the caller owns; NULL (and an error) when it
 * is not set yet. */
TF_CAPI_EXPORT extern TF_Tensor* TF_GetMutableOutput(TF_OpKernelContext* ctx,
                                                     int i, TF_Status* status);

/* Loom runs no graph functions inside kernels: an empty FunctionDefLibrary
 * (an empty buffer) and TF_OK. */
TF_CAPI_EXPORT extern void TF_GetSerializedFunctionDefLibrary(
    TF_OpKernelContext* ctx, TF_Buffer* serialized_function_def_library,
    TF_Status* status);

/* Loom has no session configuration: the default ConfigProto (an empty
 * buffer) and TF_OK. */
TF_CAPI_EXPORT extern void TF_GetSerializedConfigProto(
    TF_OpKernelContext* ctx, TF_Buffer* serialized_config_proto,
    TF_Status* status);

/* Loom's resource tensors have no ResourceHandleProto form: TF_OUT_OF_RANGE
 * for a bad index, else TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TF_GetSerializedResourceHandleProto(
    TF_OpKernelContext* ctx, int i, TF_Buffer* serialized_resource_handle_proto,
    TF_Status* status);

/* Makes the compute fail with (a copy of) `status`. */
TF_CAPI_EXPORT extern void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx,
                                                      TF_Status* status);

/* The dtype output i must have (0 for a bad index). */
TF_CAPI_EXPORT extern TF_DataType TF_ExpectedOutputDataType(
    TF_OpKernelContext* ctx, int i);

TF_CAPI_EXPORT extern bool TF_IsHostMemoryInput(TF_OpKernelContext* ctx, int i,
                                                TF_Status* status);
TF_CAPI_EXPORT extern bool TF_IsHostMemoryOutput(TF_OpKernelContext* ctx, int i,
                                                 TF_Status* status);

TF_CAPI_EXPORT extern int64_t TF_StepId(TF_OpKernelContext* ctx);
TF_CAPI_EXPORT extern int64_t TF_GetStepId(TF_OpKernelContext* ctx);

/* The kernel's name and its device's name (e.g. "CPU"). */
TF_CAPI_EXPORT extern TF_StringView TF_GetOpKernelName(TF_OpKernelContext* ctx);
TF_CAPI_EXPORT extern TF_StringView TF_GetDeviceName(TF_OpKernelContext* ctx);

/* Loom runs no control-flow frames: frame 0 and iteration 0, the values of
 * TensorFlow's root frame. */
TF_CAPI_EXPORT extern uint64_t TF_GetFrameId(TF_OpKernelContext* ctx);
TF_CAPI_EXPORT extern int64_t TF_GetIterId(TF_OpKernelContext* ctx);

/* The id of the context's device: 0 (Loom has one host device). */
TF_CAPI_EXPORT extern int TF_GetDeviceId(TF_OpKernelContext* ctx);

/* The rendezvous of the context's host: one per Loom host context, shared
 * by every kernel running on it, on any thread (see tf_rendezvous_c_api.h
 * for what send, async_recv and start_abort do). Its contexts stay valid
 * while the host context lives. With ctx NULL, each function reports
 * INVALID_ARGUMENT (a receive: to its done callback). */
TF_CAPI_EXPORT extern TF_RendezvousThunk TF_GetRendezvous(
    TF_OpKernelContext* ctx);

/* Loom runs no GraphDefs: 0. */
TF_CAPI_EXPORT extern int TF_GetGraphDefVersion(TF_OpKernelContext* ctx);

/* "localhost", the default container of TensorFlow's resource manager. */
TF_CAPI_EXPORT extern TF_StringView TF_GetResourceMgrDefaultContainerName(
    TF_OpKernelContext* ctx);

/* The NodeDef input string of input `index`; Loom's op instances are not
 * graph nodes, so the empty string. */
TF_CAPI_EXPORT extern TF_StringView TF_GetOpKernelRequestedInput(
    TF_OpKernelContext* ctx, size_t index);

/* Allocates output `index` (dtype must be the expected one) of shape dims
 * and returns a new TF_Tensor the caller owns. As in TensorFlow, `len` is
 * ignored: the size is the element count times the dtype size. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context,
                                                   int index, TF_DataType dtype,
                                                   const int64_t* dims,
                                                   int num_dims, size_t len,
                                                   TF_Status* status);

/* Reuses the memory of the first candidate input that nothing else
 * references and that has the output's dtype and element count; otherwise
 * allocates. *forwarded_input is the input used, or -1. */
TF_CAPI_EXPORT extern TF_Tensor* TF_ForwardInputOrAllocateOutput(
    TF_OpKernelContext* context, const int* candidate_input_indices,
    int num_candidate_input_indices, int output_index,
    const int64_t* output_dims, int output_num_dims, int* forwarded_input,
    TF_Status* status);

/* A scratch tensor owned by the caller. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTemp(
    TF_OpKernelContext* context, TF_DataType dtype, const int64_t* dims,
    int num_dims, TF_AllocatorAttributes* alloc_attrs, TF_Status* status);

/* Deferred-op accounting of TensorFlow's executor. Loom's asynchronous
 * kernels report completion through their done callback, so these do
 * nothing. */
TF_CAPI_EXPORT extern void TF_IncNumDeferredOps(TF_OpKernelContext* context);
TF_CAPI_EXPORT extern void TF_DecNumDeferredOps(TF_OpKernelContext* context);

/* ---- Kernel thread pool -------------------------------------------------
 * The thread-pool API of TensorFlow's kernel C API design, on the runtime's
 * own pool (never a second set of threads). The design passes bare function
 * pointers; Loom adds a `void* arg` handed to each call so closures work.
 * Parallel-for splits [0, total) into blocks by the cost hint (in cycles
 * per index), runs them on the pool and the calling thread, and returns
 * when all are done. Worker ids are in [0, number of threads] and unique
 * among blocks running at the same time. */

TF_CAPI_EXPORT extern void TF_ThreadPool_Schedule(TF_OpKernelContext* context,
                                                  void (*fn)(void* arg),
                                                  void* arg);

/* As TF_ThreadPool_Schedule, preferring the workers [start, limit). */
TF_CAPI_EXPORT extern void TF_ThreadPool_ScheduleWithHint(
    TF_OpKernelContext* context, void (*fn)(void* arg), void* arg, int start,
    int limit);

TF_CAPI_EXPORT extern void TF_ThreadPool_ParallelFor(
    TF_OpKernelContext* context, int64_t total, int64_t cost_per_unit,
    void (*fn)(void* arg, int64_t begin, int64_t end), void* arg);

TF_CAPI_EXPORT extern void TF_ThreadPool_ParallelForWithWorkerId(
    TF_OpKernelContext* context, int64_t total, int64_t cost_per_unit,
    void (*fn)(void* arg, int64_t begin, int64_t end, int worker_id),
    void* arg);

/* The number of worker threads behind the context's pool. */
TF_CAPI_EXPORT extern int TF_ThreadPool_NumThreads(TF_OpKernelContext* context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_KERNELS_H_ */
