/* The experimental part of TensorFlow's C API (non-eager), as provided by
 * Loom. Loom has no graphs, sessions, checkpoints, XLA, collectives across
 * tasks or pluggable devices: the functions about them exist so that code
 * written against TensorFlow compiles and links, and they report
 * TF_UNIMPLEMENTED (or do nothing, where TensorFlow's signature has no
 * status); docs/compat.md lists which. Valid C11 and C++. */

#ifndef TENSORFLOW_C_C_API_EXPERIMENTAL_H_
#define TENSORFLOW_C_C_API_EXPERIMENTAL_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/eager/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Types of TensorFlow's graph and session API, which Loom does not provide:
 * no object of these types can be created, they are declared for the
 * signatures below. (TF_Function is c_api.h's: an imported FunctionDef.) */
typedef struct TF_Graph TF_Graph;
typedef struct TF_Session TF_Session;
typedef struct TF_SessionOptions TF_SessionOptions;
typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;

/* ---- XLA flags: Loom has no XLA; the flags are kept and have no effect -- */

/* Does nothing (there are no session options to change). */
TF_CAPI_EXPORT extern void TF_EnableXLACompilation(TF_SessionOptions* options,
                                                   unsigned char enable);
/* Each setter stores the flag and returns its previous value. */
TF_CAPI_EXPORT extern unsigned char TF_SetXlaEnableLazyCompilation(
    unsigned char enable);
TF_CAPI_EXPORT extern unsigned char TF_SetTfXlaCpuGlobalJit(
    unsigned char enable);
/* Does nothing. */
TF_CAPI_EXPORT extern void TF_SetXlaAutoJitMode(const char* mode);
/* Does nothing. */
TF_CAPI_EXPORT extern void TF_SetXlaMinClusterSize(int size);
TF_CAPI_EXPORT extern unsigned char TF_GetXlaConstantFoldingDisabled(void);
TF_CAPI_EXPORT extern void TF_SetXlaConstantFoldingDisabled(
    unsigned char should_enable);

/* ---- Serialized options ------------------------------------------------ */

/* A serialized tensorflow.ConfigProto: device_count {"CPU":
 * num_cpu_devices}, gpu_options.allow_growth = gpu_memory_allow_growth and
 * graph_options.optimizer_options.global_jit_level ON_1 when
 * enable_xla_compilation is non-zero, else OFF. A new buffer the caller
 * frees with TF_DeleteBuffer; NULL when memory is exhausted. */
TF_CAPI_EXPORT extern TF_Buffer* TF_CreateConfig(
    unsigned char enable_xla_compilation, unsigned char gpu_memory_allow_growth,
    unsigned int num_cpu_devices);

/* A serialized tensorflow.RunOptions whose trace_level is FULL_TRACE when
 * enable_full_trace is non-zero, else NO_TRACE. As TF_CreateConfig. */
TF_CAPI_EXPORT extern TF_Buffer* TF_CreateRunOptions(
    unsigned char enable_full_trace);

/* ---- Graphs and sessions: not in Loom ---------------------------------- */

/* NULL, with *len set to 0. */
TF_CAPI_EXPORT extern const char* TF_GraphDebugString(TF_Graph* graph,
                                                      size_t* len);
/* NULL, with *len set to 0. */
TF_CAPI_EXPORT extern char* TF_FunctionDebugString(TF_Function* func,
                                                   size_t* len);
/* TF_UNIMPLEMENTED (and NULL). */
TF_CAPI_EXPORT extern TF_Tensor* TF_DequeueNamedTensor(TF_Session* session,
                                                       int tensor_id,
                                                       TF_Status* status);
/* TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TF_EnqueueNamedTensor(TF_Session* session,
                                                 int tensor_id,
                                                 TF_Tensor* tensor,
                                                 TF_Status* status);
/* TF_UNIMPLEMENTED (and NULL): Loom reads no text protocol buffers. */
TF_CAPI_EXPORT extern TF_Buffer* TFE_GetServerDef(const char* text_proto,
                                                  TF_Status* status);
/* Does nothing. */
TF_CAPI_EXPORT extern void
TF_ImportGraphDefOptionsSetValidateColocationConstraints(
    TF_ImportGraphDefOptions* opts, unsigned char enable);

/* Sets `status` to TF_INTERNAL with message errMsg. */
TF_CAPI_EXPORT extern void TF_MakeInternalErrorStatus(TF_Status* status,
                                                      const char* errMsg);

/* ---- Checkpoints: not in Loom ------------------------------------------ */

typedef struct TF_CheckpointReader TF_CheckpointReader;
/* TF_UNIMPLEMENTED (and NULL). */
TF_CAPI_EXPORT extern TF_CheckpointReader* TF_NewCheckpointReader(
    const char* filename, TF_Status* status);
/* The remaining functions accept only what TF_NewCheckpointReader returns
 * (NULL): 0, NULL, TF_DataType 0, -1 dims, or TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TF_DeleteCheckpointReader(
    TF_CheckpointReader* reader);
TF_CAPI_EXPORT extern int TF_CheckpointReaderHasTensor(
    TF_CheckpointReader* reader, const char* name);
TF_CAPI_EXPORT extern const char* TF_CheckpointReaderGetVariable(
    TF_CheckpointReader* reader, int index);
TF_CAPI_EXPORT extern int TF_CheckpointReaderSize(TF_CheckpointReader* reader);
TF_CAPI_EXPORT extern TF_DataType TF_CheckpointReaderGetVariableDataType(
    TF_CheckpointReader* reader, const char* name);
TF_CAPI_EXPORT extern void TF_CheckpointReaderGetVariableShape(
    TF_CheckpointReader* reader, const char* name, int64_t* dims, int num_dims,
    TF_Status* status);
TF_CAPI_EXPORT extern int TF_CheckpointReaderGetVariableNumDims(
    TF_CheckpointReader* reader, const char* name);
TF_CAPI_EXPORT extern TF_Tensor* TF_CheckpointReaderGetTensor(
    TF_CheckpointReader* reader, const char* name, TF_Status* status);

/* ---- Ops --------------------------------------------------------------- */

/* Type attributes of an op, to ask whether a kernel exists for them. */
typedef struct TF_AttrBuilder TF_AttrBuilder;
/* A builder for op `op_name` (whether it is registered is checked by
 * TF_AttrBuilderCheckCanRunOnDevice); NULL when memory is exhausted or
 * op_name is NULL. */
TF_CAPI_EXPORT extern TF_AttrBuilder* TF_NewAttrBuilder(const char* op_name);
/* NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteAttrBuilder(TF_AttrBuilder* builder);
/* A failure to set (memory) is reported by the next
 * TF_AttrBuilderCheckCanRunOnDevice. */
TF_CAPI_EXPORT extern void TF_AttrBuilderSetType(TF_AttrBuilder* builder,
                                                 const char* attr_name,
                                                 TF_DataType value);
TF_CAPI_EXPORT extern void TF_AttrBuilderSetTypeList(TF_AttrBuilder* builder,
                                                     const char* attr_name,
                                                     const TF_DataType* values,
                                                     int num_values);
/* TF_OK when a registered kernel of the op on device type `device_type`
 * ("CPU") accepts the attributes set; TF_NOT_FOUND when the op is not
 * registered or no kernel matches. */
TF_CAPI_EXPORT extern void TF_AttrBuilderCheckCanRunOnDevice(
    TF_AttrBuilder* builder, const char* device_type, TF_Status* status);

/* The number attr ("N" of "x: N * T") of input argument `input_index` of op
 * `op_name`, valid while the op is registered; NULL and TF_NOT_FOUND for an
 * unknown op, TF_OUT_OF_RANGE for a bad index, TF_INVALID_ARGUMENT for an
 * argument that is not a list of N tensors. */
TF_CAPI_EXPORT extern const char* TF_GetNumberAttrForOpListInput(
    const char* op_name, int input_index, TF_Status* status);

/* 1 when op `op_type` is stateful, else 0; TF_NOT_FOUND (and 0) for an
 * unknown op. */
TF_CAPI_EXPORT extern int TF_OpIsStateful(const char* op_type,
                                          TF_Status* status);

/* ---- Process ----------------------------------------------------------- */

/* Platform initialisation: Loom needs none, and argc/argv are left as they
 * are. */
TF_CAPI_EXPORT extern void TF_InitMain(const char* usage, int* argc,
                                       char*** argv);

/* A TCP port that is free at the time of the call (for tests); aborts the
 * process when none can be found, as its name says. */
TF_CAPI_EXPORT extern int TF_PickUnusedPortOrDie(void);

/* ---- Eager ------------------------------------------------------------- */

/* A scalar tensor handle of `data_type` holding data[0, len) (len must be
 * the dtype's size); NULL and TF_INVALID_ARGUMENT otherwise. */
TF_CAPI_EXPORT extern TFE_TensorHandle* TFE_NewTensorHandleFromScalar(
    TF_DataType data_type, void* data, size_t len, TF_Status* status);

/* Collectives across tasks: TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TFE_EnableCollectiveOps(TFE_Context* ctx,
                                                   const void* proto,
                                                   size_t proto_len,
                                                   TF_Status* status);
TF_CAPI_EXPORT extern void TFE_AbortCollectiveOps(TFE_Context* ctx,
                                                  TF_Status* status);
TF_CAPI_EXPORT extern void TFE_CollectiveOpsCheckPeerHealth(
    TFE_Context* ctx, const char* task, int64_t timeout_in_ms,
    TF_Status* status);

/* The shape (num_dims -1: unknown rank; a dim -1: unknown) and dtype (0:
 * unknown) of a tensor. */
struct TF_ShapeAndType {
  int num_dims;
  int64_t* dims;
  TF_DataType dtype;
};
typedef struct TF_ShapeAndType TF_ShapeAndType;

struct TF_ShapeAndTypeList {
  int num_items;
  TF_ShapeAndType* items;
};
typedef struct TF_ShapeAndTypeList TF_ShapeAndTypeList;

/* A list of num_shapes items of unknown rank and dtype 0; NULL when
 * num_shapes is negative or memory is exhausted. */
TF_CAPI_EXPORT extern TF_ShapeAndTypeList* TF_NewShapeAndTypeList(
    int num_shapes);
/* Item `index` gets a copy of dims[0, num_dims). An index out of range, or
 * a failed allocation, leaves the list unchanged. */
TF_CAPI_EXPORT extern void TF_ShapeAndTypeListSetShape(
    TF_ShapeAndTypeList* shape_list, int index, const int64_t* dims,
    int num_dims);
TF_CAPI_EXPORT extern void TF_ShapeAndTypeListSetUnknownShape(
    TF_ShapeAndTypeList* shape_list, int index);
TF_CAPI_EXPORT extern void TF_ShapeAndTypeListSetDtype(
    TF_ShapeAndTypeList* shape_list, int index, TF_DataType dtype);
/* NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteShapeAndTypeList(
    TF_ShapeAndTypeList* shape_list);
/* Deletes each list and the array itself (allocated with malloc). */
TF_CAPI_EXPORT extern void TF_DeleteShapeAndTypeListArray(
    TF_ShapeAndTypeList** shape_list_array, int num_items);

/* TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TFE_InferShapes(
    TFE_Op* op, TF_ShapeAndTypeList* input_shapes, TF_Tensor** input_tensors,
    TF_ShapeAndTypeList* input_tensor_as_shapes,
    TF_ShapeAndTypeList** input_resource_shapes_and_types,
    TF_ShapeAndTypeList** output_shapes,
    TF_ShapeAndTypeList*** output_resource_shapes_and_types, TF_Status* status);

/* ---- Pluggable devices: not in Loom ------------------------------------ */

/* TF_UNIMPLEMENTED (and NULL). */
TF_CAPI_EXPORT extern TF_Library* TF_LoadPluggableDeviceLibrary(
    const char* library_filename, TF_Status* status);
/* As TF_DeleteLibraryHandle. */
TF_CAPI_EXPORT extern void TF_DeletePluggableDeviceLibraryHandle(
    TF_Library* lib_handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_C_API_EXPERIMENTAL_H_ */
