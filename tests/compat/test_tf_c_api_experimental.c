// TensorFlow's experimental C API (tensorflow/c/c_api_experimental.h): what
// Loom implements (ops and kernels, serialized options, scalar handles,
// ports, TF_InitMain) and the errors of what it does not.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tensorflow/c/c_api_experimental.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

static void expect_status(TF_Status* status, TF_Code code,
                          const char* substring) {
  if (TF_GetCode(status) != code) {
    fail_msg("code %d, expected %d: %s", (int)TF_GetCode(status), (int)code,
             TF_Message(status));
  }
  assert_contains(TF_Message(status), substring);
}

static void register_op(const char* name, const char* attr, const char* input,
                        bool stateful) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  if (attr) TF_OpDefinitionBuilderAddAttr(builder, attr);
  TF_OpDefinitionBuilderAddInput(builder, input);
  TF_OpDefinitionBuilderAddInput(builder, "plain: float");
  TF_OpDefinitionBuilderAddOutput(builder, "y: float");
  TF_OpDefinitionBuilderSetIsStateful(builder, stateful);
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Process
//===----------------------------------------------------------------------===//

static void init_main_leaves_the_arguments_alone(void** state) {
  (void)state;
  char program[] = "program";
  char flag[] = "--flag";
  char* arguments[] = {program, flag, NULL};
  char** argv = arguments;
  int argc = 2;
  TF_InitMain("usage", &argc, &argv);
  assert_int_equal(argc, 2);
  assert_ptr_equal(argv, arguments);
  assert_string_equal(argv[1], "--flag");
  TF_InitMain(NULL, NULL, NULL);
}

static void picked_port_can_be_bound(void** state) {
  (void)state;
  int port = TF_PickUnusedPortOrDie();
  assert_true(port > 0 && port < 65536);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(fd, (struct sockaddr*)&address, sizeof(address)), 0);
  close(fd);
}

static void internal_error_status_carries_the_message(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_MakeInternalErrorStatus(status, "broken invariant");
  assert_int_equal(TF_GetCode(status), TF_INTERNAL);
  assert_string_equal(TF_Message(status), "broken invariant");
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Ops and kernels
//===----------------------------------------------------------------------===//

static void op_is_stateful_reads_the_registry(void** state) {
  (void)state;
  register_op("ExpStateful", NULL, "x: float", true);
  register_op("ExpStateless", NULL, "x: float", false);
  TF_Status* status = TF_NewStatus();
  assert_int_equal(TF_OpIsStateful("ExpStateful", status), 1);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(TF_OpIsStateful("ExpStateless", status), 0);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(TF_OpIsStateful("ExpNoSuchOp", status), 0);
  expect_status(status, TF_NOT_FOUND, "TF_OpIsStateful: op 'ExpNoSuchOp'");
  assert_int_equal(TF_OpIsStateful(NULL, status), 0);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_OpIsStateful: the op name is NULL");
  TF_DeleteStatus(status);
}

static void number_attr_of_a_list_input(void** state) {
  (void)state;
  register_op("ExpListInput", "N: int >= 1", "values: N * float", false);
  TF_Status* status = TF_NewStatus();
  const char* attr = TF_GetNumberAttrForOpListInput("ExpListInput", 0, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_string_equal(attr, "N");

  assert_null(TF_GetNumberAttrForOpListInput("ExpListInput", 1, status));
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_GetNumberAttrForOpListInput: input 1 ('plain') of op "
                "'ExpListInput' is not a list of N tensors");
  assert_null(TF_GetNumberAttrForOpListInput("ExpListInput", 2, status));
  expect_status(status, TF_OUT_OF_RANGE,
                "TF_GetNumberAttrForOpListInput: op 'ExpListInput' has 2 "
                "inputs; input_index 2 is outside [0, 2)");
  assert_null(TF_GetNumberAttrForOpListInput("ExpListInput", -1, status));
  expect_status(status, TF_OUT_OF_RANGE, "input_index -1");
  assert_null(TF_GetNumberAttrForOpListInput("ExpMissing", 0, status));
  expect_status(status, TF_NOT_FOUND,
                "TF_GetNumberAttrForOpListInput: op 'ExpMissing'");
  TF_DeleteStatus(status);
}

static void compute_nothing(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  (void)ctx;
}

static void attr_builder_finds_kernels_by_type(void** state) {
  (void)state;
  register_op("ExpTyped", "T: {float, int32}", "x: T", false);
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder* kernel =
      TF_NewKernelBuilder("ExpTyped", "CPU", NULL, compute_nothing, NULL);
  TF_KernelBuilder_TypeConstraint(kernel, "T", TF_FLOAT, status);
  TF_RegisterKernelBuilder("ExpTypedFloat", kernel, status);
  assert_int_equal(TF_GetCode(status), TF_OK);

  TF_AttrBuilder* builder = TF_NewAttrBuilder("ExpTyped");
  TF_AttrBuilderSetType(builder, "T", TF_FLOAT);
  TF_AttrBuilderCheckCanRunOnDevice(builder, "CPU", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_AttrBuilderSetType(builder, "T", TF_INT32);
  TF_AttrBuilderCheckCanRunOnDevice(builder, "CPU", status);
  expect_status(status, TF_NOT_FOUND, "ExpTyped");
  TF_AttrBuilderSetType(builder, "T", TF_FLOAT);
  TF_AttrBuilderCheckCanRunOnDevice(builder, "GPU", status);
  expect_status(status, TF_NOT_FOUND, "ExpTyped");
  TF_AttrBuilderCheckCanRunOnDevice(builder, NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_AttrBuilderCheckCanRunOnDevice: device_type is NULL");
  TF_DeleteAttrBuilder(builder);

  TF_AttrBuilder* unknown = TF_NewAttrBuilder("ExpNotRegistered");
  const TF_DataType types[] = {TF_FLOAT, TF_INT64};
  TF_AttrBuilderSetTypeList(unknown, "Tlist", types, 2);
  TF_AttrBuilderCheckCanRunOnDevice(unknown, "CPU", status);
  expect_status(status, TF_NOT_FOUND, "ExpNotRegistered");
  TF_DeleteAttrBuilder(unknown);

  TF_AttrBuilder* bad = TF_NewAttrBuilder("ExpTyped");
  TF_AttrBuilderSetTypeList(bad, "T", NULL, 3);
  TF_AttrBuilderCheckCanRunOnDevice(bad, "CPU", status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_AttrBuilderSetTypeList: attr 'T' of op 'ExpTyped' got 3 "
                "values");
  TF_DeleteAttrBuilder(bad);
  TF_DeleteAttrBuilder(NULL);
  assert_null(TF_NewAttrBuilder(NULL));
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Serialized options
//===----------------------------------------------------------------------===//

// Expected bytes from protobuf's own serializer (Python protobuf 4.21) over
// the fields of TensorFlow's ConfigProto and RunOptions.
static void expect_buffer(TF_Buffer* buffer, const char* bytes, size_t length) {
  assert_non_null(buffer);
  assert_int_equal(buffer->length, length);
  if (length) assert_memory_equal(buffer->data, bytes, length);
  TF_DeleteBuffer(buffer);
}

static void create_config_serializes_a_config_proto(void** state) {
  (void)state;
  expect_buffer(TF_CreateConfig(1, 1, 4),
                "\x0a\x07\x0a\x03\x43\x50\x55\x10\x04\x32\x02\x20\x01\x52\x04"
                "\x1a\x02\x28\x01",
                19);
  // A count of 0 leaves the entry's value off the wire (protobuf-c writes
  // no proto3 default; TensorFlow's writer puts "\x10\x00"): both decode to
  // {"CPU": 0}.
  expect_buffer(TF_CreateConfig(0, 0, 0),
                "\x0a\x05\x0a\x03\x43\x50\x55\x32\x00\x52\x0d\x1a\x0b"
                "\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                24);
  expect_buffer(TF_CreateConfig(0, 1, 300),
                "\x0a\x08\x0a\x03\x43\x50\x55\x10\xac\x02\x32\x02\x20\x01\x52"
                "\x0d\x1a\x0b\x28\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                29);
}

static void create_run_options_sets_the_trace_level(void** state) {
  (void)state;
  expect_buffer(TF_CreateRunOptions(1), "\x08\x03", 2);
  expect_buffer(TF_CreateRunOptions(0), "", 0);
}

static void xla_flags_are_kept(void** state) {
  (void)state;
  assert_int_equal(TF_SetXlaEnableLazyCompilation(0), 1);  // default on
  assert_int_equal(TF_SetXlaEnableLazyCompilation(1), 0);
  assert_int_equal(TF_GetXlaConstantFoldingDisabled(), 0);
  TF_SetXlaConstantFoldingDisabled(1);
  assert_int_equal(TF_GetXlaConstantFoldingDisabled(), 1);
  TF_SetXlaConstantFoldingDisabled(0);
  TF_SetTfXlaCpuGlobalJit(0);
  TF_EnableXLACompilation(NULL, 1);
  assert_int_equal(TF_SetTfXlaCpuGlobalJit(0), 1);
  TF_SetXlaAutoJitMode("single-gpu(2)");
  TF_SetXlaMinClusterSize(1);
}

//===----------------------------------------------------------------------===//
// Eager
//===----------------------------------------------------------------------===//

static void scalar_handle_holds_the_value(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  double value = 2.5;
  TFE_TensorHandle* handle =
      TFE_NewTensorHandleFromScalar(TF_DOUBLE, &value, sizeof(value), status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(TFE_TensorHandleNumDims(handle, status), 0);
  assert_int_equal(TFE_TensorHandleDataType(handle), TF_DOUBLE);
  TF_Tensor* tensor = TFE_TensorHandleResolve(handle, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_true(*(double*)TF_TensorData(tensor) == 2.5);
  TF_DeleteTensor(tensor);
  TFE_DeleteTensorHandle(handle);

  assert_null(TFE_NewTensorHandleFromScalar(TF_DOUBLE, &value, 4, status));
  expect_status(status, TF_INVALID_ARGUMENT,
                "TFE_NewTensorHandleFromScalar: a scalar of dtype 2 takes 8 "
                "bytes; got len 4");
  assert_null(TFE_NewTensorHandleFromScalar(TF_FLOAT, NULL, 4, status));
  expect_status(status, TF_INVALID_ARGUMENT, "got len 4 and data NULL");
  TF_DeleteStatus(status);
}

static void shape_and_type_lists_hold_shapes(void** state) {
  (void)state;
  TF_ShapeAndTypeList* list = TF_NewShapeAndTypeList(3);
  assert_non_null(list);
  assert_int_equal(list->num_items, 3);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(list->items[i].num_dims, -1);
    assert_null(list->items[i].dims);
    assert_int_equal(list->items[i].dtype, 0);
  }
  const int64_t dims[] = {2, -1, 5};
  TF_ShapeAndTypeListSetShape(list, 0, dims, 3);
  TF_ShapeAndTypeListSetDtype(list, 0, TF_FLOAT);
  TF_ShapeAndTypeListSetShape(list, 1, NULL, 0);  // a scalar
  TF_ShapeAndTypeListSetShape(list, 2, dims, 2);
  TF_ShapeAndTypeListSetUnknownShape(list, 2);
  TF_ShapeAndTypeListSetShape(list, 3, dims, 3);  // out of range: ignored
  TF_ShapeAndTypeListSetDtype(list, -1, TF_INT32);
  assert_int_equal(list->items[0].num_dims, 3);
  assert_memory_equal(list->items[0].dims, dims, sizeof(dims));
  assert_int_equal(list->items[0].dtype, TF_FLOAT);
  assert_int_equal(list->items[1].num_dims, 0);
  assert_int_equal(list->items[2].num_dims, -1);
  assert_null(list->items[2].dims);

  TF_ShapeAndTypeList** array = malloc(2 * sizeof(*array));
  array[0] = list;
  array[1] = TF_NewShapeAndTypeList(0);
  assert_int_equal(array[1]->num_items, 0);
  TF_DeleteShapeAndTypeListArray(array, 2);
  assert_null(TF_NewShapeAndTypeList(-1));
  TF_DeleteShapeAndTypeList(NULL);
}

//===----------------------------------------------------------------------===//
// Not in Loom
//===----------------------------------------------------------------------===//

static void graph_session_and_device_functions_are_unimplemented(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  assert_null(TF_NewCheckpointReader("model.ckpt", status));
  expect_status(status, TF_UNIMPLEMENTED,
                "TF_NewCheckpointReader is not supported: Loom reads no "
                "TensorFlow checkpoints");
  assert_int_equal(TF_CheckpointReaderSize(NULL), 0);
  assert_int_equal(TF_CheckpointReaderGetVariableNumDims(NULL, "w"), -1);
  assert_null(TF_CheckpointReaderGetTensor(NULL, "w", status));
  expect_status(status, TF_UNIMPLEMENTED, "TF_CheckpointReaderGetTensor");
  TF_DeleteCheckpointReader(NULL);

  assert_null(TF_DequeueNamedTensor(NULL, 0, status));
  expect_status(status, TF_UNIMPLEMENTED,
                "TF_DequeueNamedTensor is not supported: Loom has no "
                "sessions (TF_Session)");
  TF_EnqueueNamedTensor(NULL, 0, NULL, status);
  expect_status(status, TF_UNIMPLEMENTED, "TF_EnqueueNamedTensor");
  assert_null(TFE_GetServerDef("cluster {}", status));
  expect_status(status, TF_UNIMPLEMENTED, "TFE_GetServerDef is not supported");
  TFE_EnableCollectiveOps(NULL, NULL, 0, status);
  expect_status(status, TF_UNIMPLEMENTED,
                "TFE_EnableCollectiveOps is not supported: Loom runs no "
                "collectives across TensorFlow tasks");
  TFE_AbortCollectiveOps(NULL, status);
  expect_status(status, TF_UNIMPLEMENTED, "TFE_AbortCollectiveOps");
  TFE_CollectiveOpsCheckPeerHealth(NULL, "/job:worker", 10, status);
  expect_status(status, TF_UNIMPLEMENTED, "TFE_CollectiveOpsCheckPeerHealth");
  TFE_InferShapes(NULL, NULL, NULL, NULL, NULL, NULL, NULL, status);
  expect_status(status, TF_UNIMPLEMENTED, "TFE_InferShapes is not supported");
  assert_null(TF_LoadPluggableDeviceLibrary("libdevice.so", status));
  expect_status(status, TF_UNIMPLEMENTED,
                "TF_LoadPluggableDeviceLibrary is not supported: Loom has no "
                "pluggable devices");
  TF_DeletePluggableDeviceLibraryHandle(NULL);

  size_t length = 99;
  assert_null(TF_GraphDebugString(NULL, &length));
  assert_int_equal(length, 0);
  length = 99;
  assert_null(TF_FunctionDebugString(NULL, &length));
  assert_int_equal(length, 0);
  TF_ImportGraphDefOptionsSetValidateColocationConstraints(NULL, 1);
  TF_DeleteStatus(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_main_leaves_the_arguments_alone),
      cmocka_unit_test(picked_port_can_be_bound),
      cmocka_unit_test(internal_error_status_carries_the_message),
      cmocka_unit_test(op_is_stateful_reads_the_registry),
      cmocka_unit_test(number_attr_of_a_list_input),
      cmocka_unit_test(attr_builder_finds_kernels_by_type),
      cmocka_unit_test(create_config_serializes_a_config_proto),
      cmocka_unit_test(create_run_options_sets_the_trace_level),
      cmocka_unit_test(xla_flags_are_kept),
      cmocka_unit_test(scalar_handle_holds_the_value),
      cmocka_unit_test(shape_and_type_lists_hold_shapes),
      cmocka_unit_test(graph_session_and_device_functions_are_unimplemented),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
