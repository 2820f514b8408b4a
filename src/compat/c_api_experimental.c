// TensorFlow's experimental C API (tensorflow/c/c_api_experimental.h): what
// has a meaning on Loom (ops, kernels, serialized options, shape lists,
// scalar handles, ports) is implemented; what needs graphs, sessions,
// checkpoints, XLA, remote collectives or pluggable devices reports
// UNIMPLEMENTED, or does nothing where TensorFlow's signature has no status.

#include "tensorflow/c/c_api_experimental.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "compat/tf_status_internal.h"
#include "loom/kernel.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"

static void set_unimplemented(TF_Status* status, const char* function,
                              const char* reason) {
  loom__tf_status_set(
      status, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                               "%s is not supported: %s", function, reason));
}

//===----------------------------------------------------------------------===//
// XLA flags
//===----------------------------------------------------------------------===//

// Process-wide as TensorFlow's XLA flags they stand for; Loom reads none.
// TensorFlow's defaults: lazy compilation on, the others off.
static atomic_bool g_xla_lazy_compilation = true;
static atomic_bool g_xla_cpu_global_jit = false;
static atomic_bool g_xla_constant_folding_disabled = false;

void TF_EnableXLACompilation(TF_SessionOptions* options, unsigned char enable) {
  (void)options;
  if (enable) atomic_store(&g_xla_cpu_global_jit, true);
}

unsigned char TF_SetXlaEnableLazyCompilation(unsigned char enable) {
  return atomic_exchange(&g_xla_lazy_compilation, enable != 0);
}

unsigned char TF_SetTfXlaCpuGlobalJit(unsigned char enable) {
  return atomic_exchange(&g_xla_cpu_global_jit, enable != 0);
}

void TF_SetXlaAutoJitMode(const char* mode) {
  (void)mode;
}

void TF_SetXlaMinClusterSize(int size) {
  (void)size;
}

unsigned char TF_GetXlaConstantFoldingDisabled(void) {
  return atomic_load(&g_xla_constant_folding_disabled);
}

void TF_SetXlaConstantFoldingDisabled(unsigned char should_enable) {
  atomic_store(&g_xla_constant_folding_disabled, should_enable != 0);
}

//===----------------------------------------------------------------------===//
// Graphs, sessions, checkpoints: not in Loom
//===----------------------------------------------------------------------===//

const char* TF_GraphDebugString(TF_Graph* graph, size_t* len) {
  (void)graph;
  if (len) *len = 0;
  return NULL;
}

char* TF_FunctionDebugString(TF_Function* func, size_t* len) {
  (void)func;
  if (len) *len = 0;
  return NULL;
}

TF_Tensor* TF_DequeueNamedTensor(TF_Session* session, int tensor_id,
                                 TF_Status* status) {
  (void)session;
  (void)tensor_id;
  set_unimplemented(status, "TF_DequeueNamedTensor",
                    "Loom has no sessions (TF_Session)");
  return NULL;
}

void TF_EnqueueNamedTensor(TF_Session* session, int tensor_id,
                           TF_Tensor* tensor, TF_Status* status) {
  (void)session;
  (void)tensor_id;
  (void)tensor;
  set_unimplemented(status, "TF_EnqueueNamedTensor",
                    "Loom has no sessions (TF_Session)");
}

TF_Buffer* TFE_GetServerDef(const char* text_proto, TF_Status* status) {
  (void)text_proto;
  set_unimplemented(status, "TFE_GetServerDef",
                    "Loom has no servers and reads no text protocol buffers");
  return NULL;
}

void TF_ImportGraphDefOptionsSetValidateColocationConstraints(
    TF_ImportGraphDefOptions* opts, unsigned char enable) {
  (void)opts;
  (void)enable;
}

void TF_MakeInternalErrorStatus(TF_Status* status, const char* errMsg) {
  TF_SetStatus(status, TF_INTERNAL, errMsg ? errMsg : "");
}

TF_CheckpointReader* TF_NewCheckpointReader(const char* filename,
                                            TF_Status* status) {
  (void)filename;
  set_unimplemented(status, "TF_NewCheckpointReader",
                    "Loom reads no TensorFlow checkpoints");
  return NULL;
}

void TF_DeleteCheckpointReader(TF_CheckpointReader* reader) {
  (void)reader;
}

int TF_CheckpointReaderHasTensor(TF_CheckpointReader* reader,
                                 const char* name) {
  (void)reader;
  (void)name;
  return 0;
}

const char* TF_CheckpointReaderGetVariable(TF_CheckpointReader* reader,
                                           int index) {
  (void)reader;
  (void)index;
  return NULL;
}

int TF_CheckpointReaderSize(TF_CheckpointReader* reader) {
  (void)reader;
  return 0;
}

TF_DataType TF_CheckpointReaderGetVariableDataType(TF_CheckpointReader* reader,
                                                   const char* name) {
  (void)reader;
  (void)name;
  return (TF_DataType)0;
}

void TF_CheckpointReaderGetVariableShape(TF_CheckpointReader* reader,
                                         const char* name, int64_t* dims,
                                         int num_dims, TF_Status* status) {
  (void)reader;
  (void)name;
  (void)dims;
  (void)num_dims;
  set_unimplemented(status, "TF_CheckpointReaderGetVariableShape",
                    "Loom reads no TensorFlow checkpoints");
}

int TF_CheckpointReaderGetVariableNumDims(TF_CheckpointReader* reader,
                                          const char* name) {
  (void)reader;
  (void)name;
  return -1;
}

TF_Tensor* TF_CheckpointReaderGetTensor(TF_CheckpointReader* reader,
                                        const char* name, TF_Status* status) {
  (void)reader;
  (void)name;
  set_unimplemented(status, "TF_CheckpointReaderGetTensor",
                    "Loom reads no TensorFlow checkpoints");
  return NULL;
}

//===----------------------------------------------------------------------===//
// Ops and kernels
//===----------------------------------------------------------------------===//

struct TF_AttrBuilder {
  loom_op_attrs_t attrs;
  loom_status_t first_error;  // of a setter, reported by the check
  char op_name[];
};

TF_AttrBuilder* TF_NewAttrBuilder(const char* op_name) {
  if (!op_name) return NULL;
  size_t name_size = strlen(op_name) + 1;
  TF_AttrBuilder* builder = malloc(sizeof(*builder) + name_size);
  if (!builder) return NULL;
  loom_op_attrs_initialize(&builder->attrs, loom_allocator_default());
  builder->first_error = loom_ok_status();
  memcpy(builder->op_name, op_name, name_size);
  return builder;
}

void TF_DeleteAttrBuilder(TF_AttrBuilder* builder) {
  if (!builder) return;
  loom_op_attrs_deinitialize(&builder->attrs);
  loom_status_free(builder->first_error);
  free(builder);
}

static void keep_first_error(TF_AttrBuilder* builder, loom_status_t status) {
  if (!status) return;
  if (builder->first_error) {
    loom_status_free(status);
  } else {
    builder->first_error = status;
  }
}

void TF_AttrBuilderSetType(TF_AttrBuilder* builder, const char* attr_name,
                           TF_DataType value) {
  if (!builder) return;
  keep_first_error(builder, loom_op_attrs_set_dtype(&builder->attrs, attr_name,
                                                    (loom_dtype_t)value));
}

void TF_AttrBuilderSetTypeList(TF_AttrBuilder* builder, const char* attr_name,
                               const TF_DataType* values, int num_values) {
  if (!builder) return;
  if (num_values < 0 || (num_values > 0 && !values)) {
    keep_first_error(
        builder,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "TF_AttrBuilderSetTypeList: attr '%s' "
                         "of op '%s' got %d values at %p",
                         attr_name ? attr_name : "(null)", builder->op_name,
                         num_values, (const void*)values));
    return;
  }
  // TF_DataType and loom_dtype_t share their values but not their size.
  loom_dtype_t* dtypes = NULL;
  if (num_values > 0) {
    dtypes = malloc((size_t)num_values * sizeof(*dtypes));
    if (!dtypes) {
      keep_first_error(
          builder,
          loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                           "TF_AttrBuilderSetTypeList: out of "
                           "memory for %d types of attr '%s'",
                           num_values, attr_name ? attr_name : "(null)"));
      return;
    }
    for (int i = 0; i < num_values; ++i) dtypes[i] = (loom_dtype_t)values[i];
  }
  keep_first_error(builder, loom_op_attrs_set_list(&builder->attrs, attr_name,
                                                   LOOM_ATTR_KIND_DTYPE, dtypes,
                                                   num_values));
  free(dtypes);
}

void TF_AttrBuilderCheckCanRunOnDevice(TF_AttrBuilder* builder,
                                       const char* device_type,
                                       TF_Status* status) {
  if (!builder || !device_type) {
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "TF_AttrBuilderCheckCanRunOnDevice: %s is NULL",
                         !builder ? "builder" : "device_type"));
    return;
  }
  if (builder->first_error) {
    loom__tf_status_set(status, loom_status_clone(builder->first_error));
    return;
  }
  const loom_op_def_t* op = NULL;
  loom_status_t result =
      loom_op_registry_lookup(loom_op_registry_global(), builder->op_name, &op);
  const loom_kernel_def_t* kernel = NULL;
  if (!result) {
    result = loom_kernel_registry_lookup(loom_kernel_registry_global(), op,
                                         device_type, &builder->attrs, &kernel);
  }
  loom__tf_status_set(status, result);
}

// The registered op `name`, or NULL with NOT_FOUND in `status`.
static const loom_op_def_t* find_op(const char* function, const char* name,
                                    TF_Status* status) {
  if (!name) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "%s: the op name is NULL", function));
    return NULL;
  }
  const loom_op_def_t* op = NULL;
  loom_status_t result =
      loom_op_registry_lookup(loom_op_registry_global(), name, &op);
  if (result) {
    loom__tf_status_set(
        status, loom_status_annotate(result, "%s: op '%s'", function, name));
    return NULL;
  }
  return op;
}

const char* TF_GetNumberAttrForOpListInput(const char* op_name, int input_index,
                                           TF_Status* status) {
  const loom_op_def_t* op =
      find_op("TF_GetNumberAttrForOpListInput", op_name, status);
  if (!op) return NULL;
  if (input_index < 0 || input_index >= op->num_inputs) {
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                         "TF_GetNumberAttrForOpListInput: op '%s' has "
                         "%d inputs; input_index %d is outside [0, %d)",
                         op_name, op->num_inputs, input_index, op->num_inputs));
    return NULL;
  }
  const loom_arg_def_t* arg = &op->inputs[input_index];
  if (!arg->number_attr) {
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "TF_GetNumberAttrForOpListInput: input %d ('%s') of "
                         "op '%s' is not a list of N tensors ('%s')",
                         input_index, arg->name, op_name,
                         arg->spec ? arg->spec : arg->name));
    return NULL;
  }
  loom__tf_status_set(status, loom_ok_status());
  return arg->number_attr;
}

int TF_OpIsStateful(const char* op_type, TF_Status* status) {
  const loom_op_def_t* op = find_op("TF_OpIsStateful", op_type, status);
  if (!op) return 0;
  loom__tf_status_set(status, loom_ok_status());
  return op->is_stateful ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Process
//===----------------------------------------------------------------------===//

void TF_InitMain(const char* usage, int* argc, char*** argv) {
  (void)usage;
  (void)argc;
  (void)argv;
}

int TF_PickUnusedPortOrDie(void) {
  // Binding port 0 lets the kernel choose a free port; it stays free for
  // the caller once the socket closes (barring a race with other programs,
  // as in TensorFlow).
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = 0,
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof(address);
  if (fd < 0 || bind(fd, (struct sockaddr*)&address, sizeof(address)) != 0 ||
      getsockname(fd, (struct sockaddr*)&address, &length) != 0) {
    perror("TF_PickUnusedPortOrDie: cannot find a free TCP port");
    abort();
  }
  close(fd);
  return ntohs(address.sin_port);
}

//===----------------------------------------------------------------------===//
// Eager
//===----------------------------------------------------------------------===//

TFE_TensorHandle* TFE_NewTensorHandleFromScalar(TF_DataType data_type,
                                                void* data, size_t len,
                                                TF_Status* status) {
  size_t size = TF_DataTypeSize(data_type);
  if (size == 0 || len != size || !data) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_NewTensorHandleFromScalar: a scalar of "
                                 "dtype %d takes %zu bytes; got len %zu%s",
                                 (int)data_type, size, len,
                                 data ? "" : " and data NULL"));
    return NULL;
  }
  TF_Tensor* tensor = TF_AllocateTensor(data_type, NULL, 0, len);
  if (!tensor) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                 "TFE_NewTensorHandleFromScalar: out of memory "
                                 "for a scalar of dtype %d",
                                 (int)data_type));
    return NULL;
  }
  memcpy(TF_TensorData(tensor), data, len);
  TFE_TensorHandle* handle = TFE_NewTensorHandle(tensor, status);
  TF_DeleteTensor(tensor);
  return handle;
}

void TFE_EnableCollectiveOps(TFE_Context* ctx, const void* proto,
                             size_t proto_len, TF_Status* status) {
  (void)ctx;
  (void)proto;
  (void)proto_len;
  set_unimplemented(status, "TFE_EnableCollectiveOps",
                    "Loom runs no collectives across TensorFlow tasks");
}

void TFE_AbortCollectiveOps(TFE_Context* ctx, TF_Status* status) {
  (void)ctx;
  set_unimplemented(status, "TFE_AbortCollectiveOps",
                    "Loom runs no collectives across TensorFlow tasks");
}

void TFE_CollectiveOpsCheckPeerHealth(TFE_Context* ctx, const char* task,
                                      int64_t timeout_in_ms,
                                      TF_Status* status) {
  (void)ctx;
  (void)task;
  (void)timeout_in_ms;
  set_unimplemented(status, "TFE_CollectiveOpsCheckPeerHealth",
                    "Loom runs no collectives across TensorFlow tasks");
}

void TFE_InferShapes(TFE_Op* op, TF_ShapeAndTypeList* input_shapes,
                     TF_Tensor** input_tensors,
                     TF_ShapeAndTypeList* input_tensor_as_shapes,
                     TF_ShapeAndTypeList** input_resource_shapes_and_types,
                     TF_ShapeAndTypeList** output_shapes,
                     TF_ShapeAndTypeList*** output_resource_shapes_and_types,
                     TF_Status* status) {
  (void)op;
  (void)input_shapes;
  (void)input_tensors;
  (void)input_tensor_as_shapes;
  (void)input_resource_shapes_and_types;
  (void)output_shapes;
  (void)output_resource_shapes_and_types;
  set_unimplemented(status, "TFE_InferShapes",
                    "Loom has no NodeDef-based shape inference (TFE_Execute "
                    "infers the shapes of what it runs)");
}

//===----------------------------------------------------------------------===//
// Pluggable devices: not in Loom
//===----------------------------------------------------------------------===//

TF_Library* TF_LoadPluggableDeviceLibrary(const char* library_filename,
                                          TF_Status* status) {
  (void)library_filename;
  set_unimplemented(status, "TF_LoadPluggableDeviceLibrary",
                    "Loom has no pluggable devices (load kernels with "
                    "TF_LoadLibrary)");
  return NULL;
}

void TF_DeletePluggableDeviceLibraryHandle(TF_Library* lib_handle) {
  TF_DeleteLibraryHandle(lib_handle);
}
