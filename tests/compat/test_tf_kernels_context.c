// The device, graph and executor part of TensorFlow's kernel C API
// (tensorflow/c/kernels.h) from inside a kernel run by loom_kernel_run: what
// a CPU kernel outside any graph gets, the errors of what Loom cannot
// provide, and registration with a KernelDef.

#include "loom/kernel.h"
#include "loom/op_def.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  return loom_test_host_setup(1, &g_host);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_host_teardown(&g_host);
}

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

// Registers op `name`: x: float -> y: float.
static void register_unary_op(const char* name) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  TF_OpDefinitionBuilderAddInput(builder, "x: float");
  TF_OpDefinitionBuilderAddOutput(builder, "y: float");
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

static loom_tensor_t* float_vector(const float* values, int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(float) * (size_t)count);
  return tensor;
}

// Runs `op` on [1, 2, 3] (consumed) and returns the status; the output, if
// any, is released.
static loom_status_t run_op(const char* op) {
  const float values[] = {1, 2, 3};
  loom_tensor_t* inputs[] = {float_vector(values, 3)};
  loom_tensor_t* outputs[1] = {NULL};
  loom_kernel_run_options_t options;
  memset(&options, 0, sizeof(options));
  options.host = g_host;
  int32_t count = 0;
  loom_status_t status =
      loom_kernel_run(&options, op, inputs, 1, NULL, outputs, 1, &count);
  if (outputs[0]) loom_tensor_release(outputs[0]);
  return status;
}

// Output 0 becomes input 0.
static void pass_through(TF_OpKernelContext* ctx) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  if (TF_GetCode(status) == TF_OK) TF_SetOutput(ctx, 0, input, status);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// What a compute function observes
//===----------------------------------------------------------------------===//

typedef struct observed_t {
  TF_Code stream_code;
  char stream_message[128];
  bool stream_is_null;
  uint64_t frame_id;
  int64_t iter_id;
  int device_id;
  int graph_def_version;
  char container[32];
  size_t requested_input_length;
  TF_Code config_code;
  size_t config_length;
  TF_Code function_library_code;
  TF_Code non_empty_buffer_code;
  char non_empty_buffer_message[160];
  TF_Code resource_code;
  char resource_message[200];
  TF_Code resource_out_of_range_code;
  char resource_out_of_range_message[160];
} observed_t;

static observed_t g_observed;

static void copy_message(char* out, size_t capacity, TF_Status* status) {
  snprintf(out, capacity, "%s", TF_Message(status));
}

static void observe_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  observed_t* seen = &g_observed;
  TF_Status* status = TF_NewStatus();

  SP_Stream stream = TF_GetStream(ctx, status);
  seen->stream_is_null = stream == NULL;
  seen->stream_code = TF_GetCode(status);
  copy_message(seen->stream_message, sizeof(seen->stream_message), status);

  seen->frame_id = TF_GetFrameId(ctx);
  seen->iter_id = TF_GetIterId(ctx);
  seen->device_id = TF_GetDeviceId(ctx);
  seen->graph_def_version = TF_GetGraphDefVersion(ctx);
  TF_StringView container = TF_GetResourceMgrDefaultContainerName(ctx);
  snprintf(seen->container, sizeof(seen->container), "%.*s", (int)container.len,
           container.data);
  seen->requested_input_length = TF_GetOpKernelRequestedInput(ctx, 0).len;

  TF_Buffer* config = TF_NewBuffer();
  TF_GetSerializedConfigProto(ctx, config, status);
  seen->config_code = TF_GetCode(status);
  seen->config_length = config->length;
  TF_DeleteBuffer(config);

  TF_Buffer* library = TF_NewBuffer();
  TF_GetSerializedFunctionDefLibrary(ctx, library, status);
  seen->function_library_code = TF_GetCode(status);
  TF_DeleteBuffer(library);

  TF_Buffer* full = TF_NewBufferFromString("x", 1);
  TF_GetSerializedConfigProto(ctx, full, status);
  seen->non_empty_buffer_code = TF_GetCode(status);
  copy_message(seen->non_empty_buffer_message,
               sizeof(seen->non_empty_buffer_message), status);
  TF_DeleteBuffer(full);

  TF_Buffer* handle = TF_NewBuffer();
  TF_GetSerializedResourceHandleProto(ctx, 0, handle, status);
  seen->resource_code = TF_GetCode(status);
  copy_message(seen->resource_message, sizeof(seen->resource_message), status);
  TF_GetSerializedResourceHandleProto(ctx, 5, handle, status);
  seen->resource_out_of_range_code = TF_GetCode(status);
  copy_message(seen->resource_out_of_range_message,
               sizeof(seen->resource_out_of_range_message), status);
  TF_DeleteBuffer(handle);

  // Deferred-op accounting is accepted and changes nothing.
  TF_IncNumDeferredOps(ctx);
  TF_DecNumDeferredOps(ctx);

  TF_DeleteStatus(status);
  pass_through(ctx);
}

static void compute_observes_a_cpu_kernel_outside_any_graph(void** state) {
  (void)state;
  register_unary_op("CtxObserve");
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilder(
      "CtxObserveKernel",
      TF_NewKernelBuilder("CtxObserve", "CPU", NULL, observe_compute, NULL),
      status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteStatus(status);
  memset(&g_observed, 0, sizeof(g_observed));

  LOOM_ASSERT_OK(run_op("CtxObserve"));

  const observed_t* seen = &g_observed;
  // TensorFlow's own error for a CPU kernel, word for word.
  assert_true(seen->stream_is_null);
  assert_int_equal(seen->stream_code, TF_FAILED_PRECONDITION);
  assert_string_equal(
      seen->stream_message,
      "Accessing device stream is not supported for a CPU device.");
  assert_int_equal(seen->frame_id, 0);
  assert_int_equal(seen->iter_id, 0);
  assert_int_equal(seen->device_id, 0);
  assert_int_equal(seen->graph_def_version, 0);
  assert_string_equal(seen->container, "localhost");
  assert_int_equal(seen->requested_input_length, 0);
  assert_int_equal(seen->config_code, TF_OK);
  assert_int_equal(seen->config_length, 0);
  assert_int_equal(seen->function_library_code, TF_OK);
  assert_int_equal(seen->non_empty_buffer_code, TF_INVALID_ARGUMENT);
  assert_contains(seen->non_empty_buffer_message,
                  "TF_GetSerializedConfigProto: op 'CtxObserve': passing a "
                  "non-empty TF_Buffer is invalid");
  assert_int_equal(seen->resource_code, TF_UNIMPLEMENTED);
  assert_contains(seen->resource_message,
                  "TF_GetSerializedResourceHandleProto: op 'CtxObserve', "
                  "input 0: Loom's resource tensors have no "
                  "ResourceHandleProto form");
  assert_int_equal(seen->resource_out_of_range_code, TF_OUT_OF_RANGE);
  assert_contains(seen->resource_out_of_range_message,
                  "op 'CtxObserve': input index 5 is outside [0, 1)");
}

static void null_context_and_buffer_are_invalid_arguments(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_Buffer* buffer = TF_NewBuffer();
  TF_GetSerializedConfigProto(NULL, buffer, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_GetSerializedConfigProto: ctx is NULL");
  TF_GetSerializedResourceHandleProto(NULL, 0, buffer, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_GetSerializedResourceHandleProto: ctx is NULL");
  TF_DeleteBuffer(buffer);
  // The stream error does not depend on the context.
  assert_null(TF_GetStream(NULL, status));
  expect_status(status, TF_FAILED_PRECONDITION, "for a CPU device.");
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

static TF_Code g_node_def_code;
static char g_node_def_message[160];
static bool g_node_def_null;

static void* node_def_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  TF_Buffer* node_def = TF_OpKernelConstruction_GetNodeDef(ctx, status);
  g_node_def_null = node_def == NULL;
  g_node_def_code = TF_GetCode(status);
  copy_message(g_node_def_message, sizeof(g_node_def_message), status);
  TF_DeleteBuffer(node_def);
  TF_DeleteStatus(status);
  return NULL;
}

static void pass_through_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  pass_through(ctx);
}

static void construction_has_no_node_def(void** state) {
  (void)state;
  register_unary_op("CtxNodeDef");
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilder(
      "CtxNodeDefKernel",
      TF_NewKernelBuilder("CtxNodeDef", "CPU", node_def_create,
                          pass_through_compute, NULL),
      status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteStatus(status);

  LOOM_ASSERT_OK(run_op("CtxNodeDef"));
  assert_true(g_node_def_null);
  assert_int_equal(g_node_def_code, TF_UNIMPLEMENTED);
  assert_contains(g_node_def_message,
                  "TF_OpKernelConstruction_GetNodeDef: op 'CtxNodeDef' is not "
                  "a graph node in Loom and has no NodeDef");
}

//===----------------------------------------------------------------------===//
// Registration with a KernelDef
//===----------------------------------------------------------------------===//

static void register_with_null_kernel_def_registers_the_builder(void** state) {
  (void)state;
  register_unary_op("CtxKernelDef");
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilderWithKernelDef(
      NULL, "CtxKernelDefKernel",
      TF_NewKernelBuilder("CtxKernelDef", "CPU", NULL, pass_through_compute,
                          NULL),
      status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteStatus(status);
  LOOM_ASSERT_OK(run_op("CtxKernelDef"));
}

static void register_with_a_kernel_def_is_unimplemented(void** state) {
  (void)state;
  register_unary_op("CtxSerializedDef");
  TF_Status* status = TF_NewStatus();
  // The builder is consumed (and freed) even though registration fails.
  TF_RegisterKernelBuilderWithKernelDef(
      "\x0a\x10"
      "CtxSerializedDef",
      "CtxSerializedDefKernel",
      TF_NewKernelBuilder("CtxSerializedDef", "CPU", NULL, pass_through_compute,
                          NULL),
      status);
  expect_status(status, TF_UNIMPLEMENTED,
                "TF_RegisterKernelBuilderWithKernelDef: kernel "
                "'CtxSerializedDefKernel': a serialized KernelDef is not "
                "supported");
  TF_DeleteStatus(status);
  // Nothing was registered.
  LOOM_ASSERT_STATUS(run_op("CtxSerializedDef"), LOOM_STATUS_NOT_FOUND,
                     "CtxSerializedDef");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compute_observes_a_cpu_kernel_outside_any_graph),
      cmocka_unit_test(null_context_and_buffer_are_invalid_arguments),
      cmocka_unit_test(construction_has_no_node_def),
      cmocka_unit_test(register_with_null_kernel_def_registers_the_builder),
      cmocka_unit_test(register_with_a_kernel_def_is_unimplemented),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
