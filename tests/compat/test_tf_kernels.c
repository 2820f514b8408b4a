// TensorFlow's kernel C API (tensorflow/c/kernels.h) end to end: kernel
// builders and kernel choice, construction, the compute context, forwarding,
// asynchronous kernels and the thread-pool API, all run through
// loom_kernel_run. Every case registers its own ops: the registries are
// process-wide and registrations cannot be undone.

#include <sched.h>
#include <stdatomic.h>

#include "loom/kernel.h"
#include "loom/op_def.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  return loom_test_host_setup(2, &g_host);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_host_teardown(&g_host);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

// Registers an op from NULL-terminated spec lists (each may be NULL).
static void register_op(const char* name, const char* const* attrs,
                        const char* const* inputs, const char* const* outputs) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  for (; attrs && *attrs; ++attrs) {
    TF_OpDefinitionBuilderAddAttr(builder, *attrs);
  }
  for (; inputs && *inputs; ++inputs) {
    TF_OpDefinitionBuilderAddInput(builder, *inputs);
  }
  for (; outputs && *outputs; ++outputs) {
    TF_OpDefinitionBuilderAddOutput(builder, *outputs);
  }
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

// Registers `builder` (consumed) under `kernel_name`.
static void register_kernel(const char* kernel_name,
                            TF_KernelBuilder* builder) {
  assert_non_null(builder);
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilder(kernel_name, builder, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

static loom_tensor_t* new_tensor(loom_allocator_t allocator, loom_dtype_t dtype,
                                 const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(allocator, dtype, &shape, &tensor));
  return tensor;
}

static loom_tensor_t* float_tensor(const float* values, int64_t count) {
  loom_tensor_t* tensor =
      new_tensor(loom_allocator_system(), LOOM_DTYPE_FLOAT, &count, 1);
  memcpy(loom_tensor_data(tensor), values, sizeof(float) * (size_t)count);
  return tensor;
}

static loom_tensor_t* int32_tensor(const int32_t* values, int64_t count) {
  loom_tensor_t* tensor =
      new_tensor(loom_allocator_system(), LOOM_DTYPE_INT32, &count, 1);
  memcpy(loom_tensor_data(tensor), values, sizeof(int32_t) * (size_t)count);
  return tensor;
}

static loom_status_t run_on(const char* device, int64_t step_id, const char* op,
                            loom_tensor_t** inputs, int32_t n,
                            const loom_op_attrs_t* attrs,
                            loom_tensor_t** outputs, int32_t capacity,
                            int32_t* count) {
  loom_kernel_run_options_t options;
  memset(&options, 0, sizeof(options));
  options.host = g_host;
  options.device_type = device;
  options.step_id = step_id;
  return loom_kernel_run(&options, op, inputs, n, attrs, outputs, capacity,
                         count);
}

// Runs `op` (consuming `inputs`) and fails the test unless it works.
static void run_ok(const char* op, loom_tensor_t** inputs, int32_t n,
                   const loom_op_attrs_t* attrs, loom_tensor_t** outputs,
                   int32_t capacity) {
  int32_t count = -1;
  LOOM_ASSERT_OK(
      run_on(NULL, 0, op, inputs, n, attrs, outputs, capacity, &count));
  assert_true(count >= 0 && count <= capacity);
}

static loom_status_t run(const char* op, loom_tensor_t** inputs, int32_t n,
                         const loom_op_attrs_t* attrs, loom_tensor_t** outputs,
                         int32_t capacity) {
  int32_t count = 0;
  return run_on(NULL, 0, op, inputs, n, attrs, outputs, capacity, &count);
}

static void fail_with(TF_OpKernelContext* ctx, TF_Code code,
                      const char* message) {
  TF_Status* status = TF_NewStatus();
  TF_SetStatus(status, code, message);
  TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

// Allocates float scalar output 0 holding `value`.
static void write_scalar(TF_OpKernelContext* ctx, float value) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* out =
      TF_AllocateOutput(ctx, 0, TF_FLOAT, NULL, 0, sizeof(float), status);
  if (out) *(float*)TF_TensorData(out) = value;
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(out);
  TF_DeleteStatus(status);
}

static float scalar_value(loom_tensor_t* tensor) {
  float value = *(const float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return value;
}

static void copy_view(TF_StringView view, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%.*s", (int)view.len, view.data);
}

//===----------------------------------------------------------------------===//
// Probe kernels: one create / compute / delete trio whose behaviour each
// case chooses by setting the hooks below before running its op.
//===----------------------------------------------------------------------===//

static void (*g_construct_hook)(TF_OpKernelConstruction* ctx);
static void (*g_compute_hook)(TF_OpKernelContext* ctx);
static int g_kernel_state;
static int g_creates, g_computes, g_deletes;

static void* probe_create(TF_OpKernelConstruction* ctx) {
  g_creates++;
  if (g_construct_hook) g_construct_hook(ctx);
  return &g_kernel_state;
}

static void probe_compute(void* kernel, TF_OpKernelContext* ctx) {
  assert_ptr_equal(kernel, &g_kernel_state);
  g_computes++;
  if (g_compute_hook) g_compute_hook(ctx);
}

static void probe_delete(void* kernel) {
  assert_ptr_equal(kernel, &g_kernel_state);
  g_deletes++;
}

static void use_hooks(void (*construct)(TF_OpKernelConstruction*),
                      void (*compute)(TF_OpKernelContext*)) {
  g_construct_hook = construct;
  g_compute_hook = compute;
  g_creates = g_computes = g_deletes = 0;
}

// Registers op `name` and a probe kernel for it named "<name>Kernel".
static void define_probe_op(const char* name, const char* const* attrs,
                            const char* const* inputs,
                            const char* const* outputs) {
  register_op(name, attrs, inputs, outputs);
  char kernel_name[128];
  snprintf(kernel_name, sizeof(kernel_name), "%sKernel", name);
  register_kernel(kernel_name,
                  TF_NewKernelBuilder(name, "CPU", probe_create, probe_compute,
                                      probe_delete));
}

static const char* const kScalarOutput[] = {"y: float", NULL};

//===----------------------------------------------------------------------===//
// Kernel builders and kernel choice
//===----------------------------------------------------------------------===//

static char g_kernel_name[64];

// y = x + 1 for float and int32, recording which kernel ran.
static void add_one_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  copy_view(TF_GetOpKernelName(ctx), g_kernel_name, sizeof(g_kernel_name));
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  int64_t dims[1] = {TF_Dim(input, 0)};
  TF_Tensor* output = TF_AllocateOutput(ctx, 0, TF_TensorType(input), dims, 1,
                                        TF_TensorByteSize(input), status);
  if (TF_GetCode(status) != TF_OK) {
    TF_OpKernelContext_Failure(ctx, status);
  } else if (TF_TensorType(input) == TF_FLOAT) {
    const float* in = TF_TensorData(input);
    float* out = TF_TensorData(output);
    for (int64_t i = 0; i < dims[0]; ++i) out[i] = in[i] + 1.0f;
  } else {
    const int32_t* in = TF_TensorData(input);
    int32_t* out = TF_TensorData(output);
    for (int64_t i = 0; i < dims[0]; ++i) out[i] = in[i] + 1;
  }
  TF_DeleteTensor(output);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

// Op `name` (x: T -> y: T, T in {float, int32, int64}) with an add-one
// kernel per type in `types`, named "<name><suffix>".
static void define_add_one(const char* name, const TF_DataType* types,
                           const char* const* suffixes, int count) {
  static const char* const kAttrs[] = {"T: {float, int32, int64}", NULL};
  static const char* const kInputs[] = {"x: T", NULL};
  static const char* const kOutputs[] = {"y: T", NULL};
  register_op(name, kAttrs, kInputs, kOutputs);
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < count; ++i) {
    TF_KernelBuilder* builder =
        TF_NewKernelBuilder(name, "CPU", NULL, add_one_compute, NULL);
    TF_KernelBuilder_TypeConstraint(builder, "T", types[i], status);
    assert_int_equal(TF_GetCode(status), TF_OK);
    char kernel_name[128];
    snprintf(kernel_name, sizeof(kernel_name), "%s%s", name, suffixes[i]);
    register_kernel(kernel_name, builder);
  }
  TF_DeleteStatus(status);
}

static void type_constraint_chooses_the_kernel_by_attr_t(void** state) {
  (void)state;
  static const TF_DataType kTypes[] = {TF_FLOAT, TF_INT32};
  static const char* const kSuffixes[] = {"Float", "Int32"};
  define_add_one("KTypeChoice", kTypes, kSuffixes, 2);

  float values[3] = {1, 2, 3};
  loom_tensor_t* inputs[1] = {float_tensor(values, 3)};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KTypeChoice", inputs, 1, NULL, outputs, 1);
  assert_string_equal(g_kernel_name, "KTypeChoiceFloat");
  const float* y = loom_tensor_data(outputs[0]);
  for (int i = 0; i < 3; ++i) assert_true(y[i] == values[i] + 1.0f);
  loom_tensor_release(outputs[0]);

  int32_t ints[2] = {41, -1};
  inputs[0] = int32_tensor(ints, 2);
  run_ok("KTypeChoice", inputs, 1, NULL, outputs, 1);
  assert_string_equal(g_kernel_name, "KTypeChoiceInt32");
  assert_int_equal(((int32_t*)loom_tensor_data(outputs[0]))[0], 42);
  assert_int_equal(((int32_t*)loom_tensor_data(outputs[0]))[1], 0);
  loom_tensor_release(outputs[0]);
}

static void no_kernel_for_the_type_is_not_found_listing_kernels(void** state) {
  (void)state;
  static const TF_DataType kTypes[] = {TF_FLOAT, TF_INT32};
  static const char* const kSuffixes[] = {"Float", "Int32"};
  define_add_one("KTypeMissing", kTypes, kSuffixes, 2);
  int64_t dims[1] = {1};
  loom_tensor_t* inputs[1] = {
      new_tensor(loom_allocator_system(), LOOM_DTYPE_INT64, dims, 1)};
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KTypeMissing", inputs, 1, NULL, outputs, 1),
                     LOOM_STATUS_NOT_FOUND,
                     "No registered 'KTypeMissing' kernel for 'CPU' devices "
                     "compatible with attributes {T=DT_INT64}. Registered:\n"
                     "  device='CPU'; T in [int32]\n"
                     "  device='CPU'; T in [float]");
  assert_null(outputs[0]);
}

static void type_constraint_with_an_invalid_dtype_is_rejected(void** state) {
  (void)state;
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder("KBadConstraint", "CPU", NULL, add_one_compute, NULL);
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder_TypeConstraint(builder, "T", (TF_DataType)0, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "kernel for op 'KBadConstraint': type constraint on attr "
                  "'T' names invalid dtype 0");
  TF_KernelBuilder_TypeConstraint(builder, NULL, TF_FLOAT, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status), "attr_name is NULL");
  TF_DeleteKernelBuilder(builder);
  TF_DeleteStatus(status);
}

static void constant_compute(void* kernel, TF_OpKernelContext* ctx);

// Registers a KRefused kernel built by `build` (which may make builder
// calls fail) and checks that it is refused with `message`.
static void check_refused(void (*build)(TF_KernelBuilder*, TF_Status*),
                          const char* message) {
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder("KRefused", "CPU", NULL, constant_compute, NULL);
  TF_Status* status = TF_NewStatus();
  build(builder, status);
  TF_RegisterKernelBuilder("KRefusedKernel", builder, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_string_equal(TF_Message(status), message);
  TF_DeleteKernelBuilder(builder);  // registration consumed it: harmless
  TF_DeleteStatus(status);
  assert_int_equal(
      loom_kernel_registry_count(loom_kernel_registry_global(), "KRefused"), 0);
}

static void constrain_to_dtype_999(TF_KernelBuilder* builder,
                                   TF_Status* status) {
  TF_KernelBuilder_TypeConstraint(builder, "T", (TF_DataType)999, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  // A later failure does not replace the first.
  TF_KernelBuilder_HostMemory(builder, NULL);
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
}

static void keep_a_null_host_memory_arg(TF_KernelBuilder* builder,
                                        TF_Status* status) {
  (void)status;
  TF_KernelBuilder_HostMemory(builder, "x");
  TF_KernelBuilder_HostMemory(builder, NULL);
}

static void label_with_null(TF_KernelBuilder* builder, TF_Status* status) {
  (void)status;
  TF_KernelBuilder_Label(builder, NULL);
}

// Registered without the constraint, host-memory argument or label that
// failed, a kernel would match more than its author asked for.
static void builder_whose_call_failed_is_refused(void** state) {
  (void)state;
  register_op("KRefused", NULL, NULL, kScalarOutput);
  check_refused(constrain_to_dtype_999,
                "TF_RegisterKernelBuilder: kernel 'KRefusedKernel' not "
                "registered: kernel for op 'KRefused': type constraint on "
                "attr 'T' names invalid dtype 999");
  check_refused(keep_a_null_host_memory_arg,
                "TF_RegisterKernelBuilder: kernel 'KRefusedKernel' not "
                "registered: TF_KernelBuilder_HostMemory: arg_name is NULL");
  check_refused(label_with_null,
                "TF_RegisterKernelBuilder: kernel 'KRefusedKernel' not "
                "registered: TF_KernelBuilder_Label: label is NULL");
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KRefused", NULL, 0, NULL, outputs, 1),
                     LOOM_STATUS_NOT_FOUND,
                     "No registered 'KRefused' kernel for 'CPU' devices");
}

static void builder_functions_reject_a_null_builder(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder_TypeConstraint(NULL, "T", TF_FLOAT, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "TF_KernelBuilder_TypeConstraint: the kernel builder is "
                  "NULL or already registered");
  TF_RegisterKernelBuilder("KNullBuilder", NULL, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "TF_RegisterKernelBuilder: the kernel builder is NULL or "
                  "already registered");
  // These cannot report errors: they ignore a NULL builder.
  TF_KernelBuilder_HostMemory(NULL, "x");
  TF_KernelBuilder_Priority(NULL, 3);
  TF_KernelBuilder_Label(NULL, "label");
  TF_DeleteStatus(status);
}

static void registering_a_builder_twice_is_invalid_argument(void** state) {
  (void)state;
  register_op("KRegisterTwice", NULL, NULL, kScalarOutput);
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder("KRegisterTwice", "CPU", NULL, add_one_compute, NULL);
  register_kernel("KRegisterTwiceKernel", builder);
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilder("KRegisterTwiceKernel", builder, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status), "already registered");
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  TF_DeleteStatus(status);
  TF_DeleteKernelBuilder(builder);
  assert_int_equal(loom_kernel_registry_count(loom_kernel_registry_global(),
                                              "KRegisterTwice"),
                   1);
}

static void constant_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  write_scalar(ctx, 7);
}

static void deleting_a_registered_builder_is_harmless(void** state) {
  (void)state;
  register_op("KDeleteRegistered", NULL, NULL, kScalarOutput);
  TF_KernelBuilder* builder = TF_NewKernelBuilder("KDeleteRegistered", "CPU",
                                                  NULL, constant_compute, NULL);
  register_kernel("KDeleteRegisteredKernel", builder);
  TF_DeleteKernelBuilder(builder);
  // The registry owns the kernel: it still runs.
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KDeleteRegistered", NULL, 0, NULL, outputs, 1);
  assert_true(scalar_value(outputs[0]) == 7.0f);
}

static void deleting_an_unregistered_builder_frees_it(void** state) {
  (void)state;
  TF_DeleteKernelBuilder(NULL);
  TF_KernelBuilder* builder = TF_NewKernelBuilder("KDeleteUnregistered", "CPU",
                                                  NULL, constant_compute, NULL);
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
  TF_KernelBuilder_HostMemory(builder, "x");
  TF_KernelBuilder_Label(builder, "label");
  TF_KernelBuilder_Priority(builder, 4);
  TF_DeleteKernelBuilder(builder);  // ASan checks that nothing leaks
  TF_DeleteStatus(status);
  assert_int_equal(loom_kernel_registry_count(loom_kernel_registry_global(),
                                              "KDeleteUnregistered"),
                   0);
}

static void async_noop(void* kernel, TF_OpKernelContext* ctx,
                       TF_AsyncOpKernelDoneCallback* done) {
  (void)kernel;
  (void)ctx;
  TF_RunAsyncOpKernelDoneCallback(done);
}

static void builder_without_a_compute_function_is_null(void** state) {
  (void)state;
  assert_null(TF_NewKernelBuilder("KNoCompute", "CPU", NULL, NULL, NULL));
  assert_null(TF_NewAsyncKernelBuilder("KNoCompute", "CPU", NULL, NULL, NULL));
  assert_null(TF_NewKernelBuilder(NULL, "CPU", NULL, constant_compute, NULL));
  assert_null(
      TF_NewAsyncKernelBuilder("KNoCompute", NULL, NULL, async_noop, NULL));
}

static void priority_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  copy_view(TF_GetOpKernelName(ctx), g_kernel_name, sizeof(g_kernel_name));
  write_scalar(ctx, 0);
}

static void higher_priority_kernel_wins(void** state) {
  (void)state;
  register_op("KPriority", NULL, NULL, kScalarOutput);
  static const struct {
    const char* name;
    int32_t priority;
  } kKernels[] = {{"KPriorityLow", 1},
                  {"KPriorityHigh", 5},
                  {"KPriorityDefault", 0},
                  {"KPriorityNegative", -3}};
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    TF_KernelBuilder* builder =
        TF_NewKernelBuilder("KPriority", "CPU", NULL, priority_compute, NULL);
    TF_KernelBuilder_Priority(builder, kKernels[i].priority);
    register_kernel(kKernels[i].name, builder);
  }
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KPriority", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_string_equal(g_kernel_name, "KPriorityHigh");
}

static void label_selects_the_kernel_named_by_the_kernel_attr(void** state) {
  (void)state;
  register_op("KLabel", NULL, NULL, kScalarOutput);
  register_kernel("KLabelPlain", TF_NewKernelBuilder("KLabel", "CPU", NULL,
                                                     priority_compute, NULL));
  TF_KernelBuilder* labelled =
      TF_NewKernelBuilder("KLabel", "CPU", NULL, priority_compute, NULL);
  TF_KernelBuilder_Label(labelled, "special");
  TF_KernelBuilder_Priority(labelled, 100);
  register_kernel("KLabelSpecial", labelled);

  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KLabel", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_string_equal(g_kernel_name, "KLabelPlain");

  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "_kernel", "special", 7));
  run_ok("KLabel", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_string_equal(g_kernel_name, "KLabelSpecial");

  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "_kernel", "other", 5));
  LOOM_ASSERT_STATUS(run("KLabel", NULL, 0, &attrs, outputs, 1),
                     LOOM_STATUS_NOT_FOUND, "device='CPU'; label='special'");
  loom_op_attrs_deinitialize(&attrs);
}

//===----------------------------------------------------------------------===//
// Host memory and devices
//===----------------------------------------------------------------------===//

static struct {
  bool input[2], output[2];
  TF_Code input_codes[2], output_codes[2];
  char device[16];
  char input_message[128], output_message[128];
} g_host_memory;

// Passes inputs 0 and 1 through as outputs 0 and 1, recording where the
// kernel keeps them.
static void host_memory_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < 2; ++i) {
    g_host_memory.input[i] = TF_IsHostMemoryInput(ctx, i, status);
    g_host_memory.input_codes[i] = TF_GetCode(status);
    g_host_memory.output[i] = TF_IsHostMemoryOutput(ctx, i, status);
    g_host_memory.output_codes[i] = TF_GetCode(status);
  }
  TF_IsHostMemoryInput(ctx, 2, status);
  copy_view((TF_StringView){TF_Message(status), strlen(TF_Message(status))},
            g_host_memory.input_message, sizeof(g_host_memory.input_message));
  TF_IsHostMemoryOutput(ctx, -1, status);
  copy_view((TF_StringView){TF_Message(status), strlen(TF_Message(status))},
            g_host_memory.output_message, sizeof(g_host_memory.output_message));
  copy_view(TF_GetDeviceName(ctx), g_host_memory.device,
            sizeof(g_host_memory.device));
  for (int i = 0; i < 2; ++i) {
    TF_Tensor* input = NULL;
    TF_GetInput(ctx, i, &input, status);
    TF_SetOutput(ctx, i, input, status);
    TF_DeleteTensor(input);
  }
  TF_DeleteStatus(status);
}

static void run_host_memory_op(const char* op, const char* device) {
  float data[2] = {1, 2};
  int32_t shape[1] = {2};
  loom_tensor_t* inputs[2] = {float_tensor(data, 2), int32_tensor(shape, 1)};
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(run_on(device, 0, op, inputs, 2, NULL, outputs, 2, &count));
  assert_int_equal(count, 2);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);
}

static const char* const kHostMemoryInputs[] = {"data: float", "shape: int32",
                                                NULL};
static const char* const kHostMemoryOutputs[] = {"y: float", "out_shape: int32",
                                                 NULL};

static void host_memory_args_are_reported_for_device_kernels(void** state) {
  (void)state;
  register_op("KHostMemory", NULL, kHostMemoryInputs, kHostMemoryOutputs);
  TF_KernelBuilder* builder = TF_NewKernelBuilder("KHostMemory", "GPU", NULL,
                                                  host_memory_compute, NULL);
  TF_KernelBuilder_HostMemory(builder, "shape");
  TF_KernelBuilder_HostMemory(builder, "out_shape");
  register_kernel("KHostMemoryGpu", builder);
  run_host_memory_op("KHostMemory", "GPU");
  assert_string_equal(g_host_memory.device, "GPU");
  assert_false(g_host_memory.input[0]);
  assert_true(g_host_memory.input[1]);
  assert_false(g_host_memory.output[0]);
  assert_true(g_host_memory.output[1]);
  assert_int_equal(g_host_memory.input_codes[0], TF_OK);
  assert_int_equal(g_host_memory.output_codes[1], TF_OK);
}

static void host_memory_query_out_of_range_is_out_of_range(void** state) {
  (void)state;
  register_op("KHostMemoryRange", NULL, kHostMemoryInputs, kHostMemoryOutputs);
  register_kernel("KHostMemoryRangeKernel",
                  TF_NewKernelBuilder("KHostMemoryRange", "CPU", NULL,
                                      host_memory_compute, NULL));
  run_host_memory_op("KHostMemoryRange", NULL);
  assert_string_equal(g_host_memory.input_message,
                      "KHostMemoryRange: input index 2 is outside [0, 2)");
  assert_string_equal(g_host_memory.output_message,
                      "KHostMemoryRange: output index -1 is outside [0, 2)");
}

static void cpu_kernels_keep_every_argument_in_host_memory(void** state) {
  (void)state;
  register_op("KHostMemoryCpu", NULL, kHostMemoryInputs, kHostMemoryOutputs);
  register_kernel("KHostMemoryCpuKernel",
                  TF_NewKernelBuilder("KHostMemoryCpu", "CPU", NULL,
                                      host_memory_compute, NULL));
  run_host_memory_op("KHostMemoryCpu", NULL);
  assert_string_equal(g_host_memory.device, "CPU");
  for (int i = 0; i < 2; ++i) {
    assert_true(g_host_memory.input[i]);
    assert_true(g_host_memory.output[i]);
  }
}

static void kernel_for_another_device_is_not_chosen(void** state) {
  (void)state;
  register_op("KGpuOnly", NULL, NULL, kScalarOutput);
  register_kernel(
      "KGpuOnlyKernel",
      TF_NewKernelBuilder("KGpuOnly", "GPU", NULL, constant_compute, NULL));
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KGpuOnly", NULL, 0, NULL, outputs, 1),
                     LOOM_STATUS_NOT_FOUND,
                     "No registered 'KGpuOnly' kernel for 'CPU' devices "
                     "compatible with attributes {}. Registered:\n"
                     "  device='GPU'");
}

//===----------------------------------------------------------------------===//
// Asynchronous kernels
//===----------------------------------------------------------------------===//

typedef struct async_job_t {
  TF_OpKernelContext* ctx;
  TF_AsyncOpKernelDoneCallback* done;
  atomic_int compute_returned;
  atomic_int done_after_return;
  bool fail;
} async_job_t;

static async_job_t g_job;

// Runs on the pool; waits until compute_async has returned so that done is
// certainly called after it.
static void finish_job(void* arg) {
  async_job_t* job = arg;
  while (!atomic_load(&job->compute_returned)) sched_yield();
  atomic_store(&job->done_after_return, 1);
  if (job->fail) {
    fail_with(job->ctx, TF_ABORTED, "the device went away");
  } else {
    write_scalar(job->ctx, 9);
  }
  TF_RunAsyncOpKernelDoneCallback(job->done);
}

static void async_compute(void* kernel, TF_OpKernelContext* ctx,
                          TF_AsyncOpKernelDoneCallback* done) {
  (void)kernel;
  g_job.ctx = ctx;
  g_job.done = done;
  TF_ThreadPool_Schedule(ctx, finish_job, &g_job);
  atomic_store(&g_job.compute_returned, 1);
}

static void reset_job(bool fail) {
  g_job.ctx = NULL;
  g_job.done = NULL;
  atomic_store(&g_job.compute_returned, 0);
  atomic_store(&g_job.done_after_return, 0);
  g_job.fail = fail;
}

static void async_kernel_completes_when_done_is_called(void** state) {
  (void)state;
  register_op("KAsync", NULL, NULL, kScalarOutput);
  register_kernel(
      "KAsyncKernel",
      TF_NewAsyncKernelBuilder("KAsync", "CPU", NULL, async_compute, NULL));
  reset_job(false);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAsync", NULL, 0, NULL, outputs, 1);
  assert_true(atomic_load(&g_job.done_after_return));
  assert_true(scalar_value(outputs[0]) == 9.0f);
}

static void async_kernel_failure_is_returned(void** state) {
  (void)state;
  register_op("KAsyncFails", NULL, NULL, kScalarOutput);
  register_kernel("KAsyncFailsKernel",
                  TF_NewAsyncKernelBuilder("KAsyncFails", "CPU", NULL,
                                           async_compute, NULL));
  reset_job(true);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(
      run("KAsyncFails", NULL, 0, NULL, outputs, 1), LOOM_STATUS_ABORTED,
      "Op 'KAsyncFails' (kernel 'KAsyncFailsKernel'): the device went away");
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

static struct {
  TF_DataType type;
  int32_t i32;
  int64_t i64;
  float f;
  TF_Bool b;
  char s[8], s_short[8];
  int64_t ints[4];
  int32_t ints32[4];
  float floats[2];
  TF_Bool bools[2];
  TF_DataType types[2];
  char* strings[2];
  size_t lengths[2];
  char storage[16];
  float tensor_value;
  int64_t tensor_elements;
  float tensor_list[2];
  int32_t list_sizes[6], total_sizes[6];
  bool has[3];
  char name[32];
  unsigned char function[256];
  size_t function_size;
  bool function_null[2];
  int64_t function_faults;
  bool function_fault_message_seen;
  TF_Code codes[8];
  char messages[8][160];
} g_attrs;

static void record(int index, TF_Status* status) {
  g_attrs.codes[index] = TF_GetCode(status);
  snprintf(g_attrs.messages[index], sizeof(g_attrs.messages[index]), "%s",
           TF_Message(status));
}

static void compute_zero(TF_OpKernelContext* ctx) {
  write_scalar(ctx, 0);
}

static void read_scalar_attrs(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_OpKernelConstruction_GetAttrType(ctx, "T", &g_attrs.type, s);
  record(0, s);
  TF_OpKernelConstruction_GetAttrInt32(ctx, "i", &g_attrs.i32, s);
  TF_OpKernelConstruction_GetAttrInt64(ctx, "i", &g_attrs.i64, s);
  TF_OpKernelConstruction_GetAttrFloat(ctx, "f", &g_attrs.f, s);
  TF_OpKernelConstruction_GetAttrBool(ctx, "b", &g_attrs.b, s);
  memset(g_attrs.s, 'x', sizeof(g_attrs.s));
  TF_OpKernelConstruction_GetAttrString(ctx, "s", g_attrs.s, sizeof(g_attrs.s),
                                        s);
  memset(g_attrs.s_short, 'x', sizeof(g_attrs.s_short));
  TF_OpKernelConstruction_GetAttrString(ctx, "s", g_attrs.s_short, 3, s);
  record(1, s);
  TF_DeleteStatus(s);
}

static void construction_reads_scalar_attrs(void** state) {
  (void)state;
  static const char* const kAttrs[] = {"T: type", "i: int",    "f: float",
                                       "b: bool", "s: string", NULL};
  define_probe_op("KScalarAttrs", kAttrs, NULL, kScalarOutput);
  use_hooks(read_scalar_attrs, compute_zero);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_DOUBLE));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "i", -9));
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(&attrs, "f", 0.25f));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(&attrs, "b", true));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "s", "hello", 5));
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KScalarAttrs", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_op_attrs_deinitialize(&attrs);

  assert_int_equal(g_attrs.codes[0], TF_OK);
  assert_int_equal(g_attrs.codes[1], TF_OK);
  assert_int_equal(g_attrs.type, TF_DOUBLE);
  assert_int_equal(g_attrs.i32, -9);
  assert_int_equal(g_attrs.i64, -9);
  assert_true(g_attrs.f == 0.25f);
  assert_int_equal(g_attrs.b, 1);
  // As in TensorFlow, no NUL is added, and max_length truncates.
  assert_memory_equal(g_attrs.s, "helloxxx", 8);
  assert_memory_equal(g_attrs.s_short, "helxxxxx", 8);
}

static void read_list_attrs(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  for (int i = 0; i < 4; ++i) {
    g_attrs.ints[i] = -1;
    g_attrs.ints32[i] = -1;
  }
  // Room for 4, the list has 3; the last entry stays untouched.
  TF_OpKernelConstruction_GetAttrInt64List(ctx, "ints", g_attrs.ints, 4, s);
  // Room for 2 only: the rest is not written.
  TF_OpKernelConstruction_GetAttrInt32List(ctx, "ints", g_attrs.ints32, 2, s);
  TF_OpKernelConstruction_GetAttrFloatList(ctx, "floats", g_attrs.floats, 2, s);
  TF_OpKernelConstruction_GetAttrBoolList(ctx, "bools", g_attrs.bools, 2, s);
  TF_OpKernelConstruction_GetAttrTypeList(ctx, "types", g_attrs.types, 2, s);
  record(0, s);
  TF_OpKernelConstruction_GetAttrStringList(ctx, "strings", g_attrs.strings,
                                            g_attrs.lengths, 2, g_attrs.storage,
                                            sizeof(g_attrs.storage), s);
  record(1, s);
  TF_DeleteStatus(s);
}

static const char* const kListAttrs[] = {
    "ints: list(int)",
    "floats: list(float) = [0.5, 1.5]",
    "bools: list(bool) = [true, false]",
    "types: list(type) = [DT_INT8, DT_HALF]",
    "strings: list(string) = ['ab', 'cde']",
    NULL};

static void set_ints(loom_op_attrs_t* attrs) {
  loom_op_attrs_initialize(attrs, loom_allocator_system());
  int64_t ints[3] = {4, 5, 6};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(attrs, "ints", LOOM_ATTR_KIND_I64, ints, 3));
}

static void construction_reads_list_attrs(void** state) {
  (void)state;
  define_probe_op("KListAttrs", kListAttrs, NULL, kScalarOutput);
  use_hooks(read_list_attrs, compute_zero);
  loom_op_attrs_t attrs;
  set_ints(&attrs);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KListAttrs", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_op_attrs_deinitialize(&attrs);

  assert_int_equal(g_attrs.codes[0], TF_OK);
  assert_int_equal(g_attrs.codes[1], TF_OK);
  int64_t ints[4] = {4, 5, 6, -1};
  assert_memory_equal(g_attrs.ints, ints, sizeof(ints));
  int32_t ints32[4] = {4, 5, -1, -1};
  assert_memory_equal(g_attrs.ints32, ints32, sizeof(ints32));
  assert_true(g_attrs.floats[0] == 0.5f && g_attrs.floats[1] == 1.5f);
  assert_int_equal(g_attrs.bools[0], 1);
  assert_int_equal(g_attrs.bools[1], 0);
  assert_int_equal(g_attrs.types[0], TF_INT8);
  assert_int_equal(g_attrs.types[1], TF_HALF);
  // The strings are packed into the storage, without NULs.
  assert_ptr_equal(g_attrs.strings[0], g_attrs.storage);
  assert_int_equal(g_attrs.lengths[0], 2);
  assert_int_equal(g_attrs.lengths[1], 3);
  assert_ptr_equal(g_attrs.strings[1], g_attrs.storage + 2);
  assert_memory_equal(g_attrs.storage, "abcde", 5);
}

static void read_string_list_into_small_storage(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_OpKernelConstruction_GetAttrStringList(ctx, "strings", g_attrs.strings,
                                            g_attrs.lengths, 2, g_attrs.storage,
                                            4, s);
  record(0, s);
  TF_DeleteStatus(s);
}

static void string_list_without_enough_storage_is_invalid_argument(
    void** state) {
  (void)state;
  define_probe_op("KStringListStorage", kListAttrs, NULL, kScalarOutput);
  use_hooks(read_string_list_into_small_storage, compute_zero);
  loom_op_attrs_t attrs;
  set_ints(&attrs);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KStringListStorage", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(g_attrs.codes[0], TF_INVALID_ARGUMENT);
  assert_string_equal(
      g_attrs.messages[0],
      "Attr 'strings': not enough storage (4 bytes) for the strings");
}

static void read_tensor_attrs(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* tensor = NULL;
  TF_OpKernelConstruction_GetAttrTensor(ctx, "value", &tensor, s);
  record(0, s);
  if (tensor) {
    g_attrs.tensor_value = *(float*)TF_TensorData(tensor);
    g_attrs.tensor_elements = TF_TensorElementCount(tensor);
  }
  TF_DeleteTensor(tensor);  // the caller's to free
  TF_Tensor* tensors[2] = {NULL, NULL};
  TF_OpKernelConstruction_GetAttrTensorList(ctx, "values", tensors, 2, s);
  record(1, s);
  for (int i = 0; i < 2; ++i) {
    if (tensors[i]) g_attrs.tensor_list[i] = *(float*)TF_TensorData(tensors[i]);
    TF_DeleteTensor(tensors[i]);
  }
  TF_DeleteStatus(s);
}

static void construction_reads_tensor_attrs(void** state) {
  (void)state;
  static const char* const kAttrs[] = {
      "value: tensor = { dtype: DT_FLOAT float_val: 6.5 }",
      "values: list(tensor)", NULL};
  define_probe_op("KTensorAttrs", kAttrs, NULL, kScalarOutput);
  use_hooks(read_tensor_attrs, compute_zero);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  float a = 3.25f, b = -1.0f;
  loom_tensor_t* values[2] = {float_tensor(&a, 1), float_tensor(&b, 1)};
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor_list(&attrs, "values", values, 2));
  loom_tensor_release(values[0]);
  loom_tensor_release(values[1]);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KTensorAttrs", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_op_attrs_deinitialize(&attrs);

  assert_int_equal(g_attrs.codes[0], TF_OK);
  assert_int_equal(g_attrs.codes[1], TF_OK);
  assert_true(g_attrs.tensor_value == 6.5f);
  assert_int_equal(g_attrs.tensor_elements, 1);
  assert_true(g_attrs.tensor_list[0] == 3.25f);
  assert_true(g_attrs.tensor_list[1] == -1.0f);
}

static void read_attr_sizes(TF_OpKernelConstruction* ctx) {
  static const char* const kNames[6] = {"i",       "ints",  "s",
                                        "strings", "shape", "unknown"};
  TF_Status* s = TF_NewStatus();
  for (int i = 0; i < 6; ++i) {
    TF_OpKernelConstruction_GetAttrSize(ctx, kNames[i], &g_attrs.list_sizes[i],
                                        &g_attrs.total_sizes[i], s);
    if (TF_GetCode(s) != TF_OK) record(0, s);
  }
  TF_DeleteStatus(s);
}

static void get_attr_size_reports_list_and_total_sizes(void** state) {
  (void)state;
  static const char* const kAttrs[] = {
      "i: int = 3",
      "ints: list(int) = [1, 2, 3]",
      "s: string = 'hello'",
      "strings: list(string) = ['ab', 'cde']",
      "shape: shape = { dim { size: 2 } dim { size: 3 } }",
      "unknown: shape = { unknown_rank: true }",
      NULL};
  define_probe_op("KAttrSizes", kAttrs, NULL, kScalarOutput);
  use_hooks(read_attr_sizes, compute_zero);
  g_attrs.codes[0] = TF_OK;
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAttrSizes", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_attrs.codes[0], TF_OK);
  // list_size: the list length or -1; total_size: the bytes of strings, the
  // dims of shapes, else -1.
  static const int32_t kListSizes[6] = {-1, 3, -1, 2, -1, -1};
  static const int32_t kTotalSizes[6] = {-1, -1, 5, 5, 2, -1};
  for (int i = 0; i < 6; ++i) {
    assert_int_equal(g_attrs.list_sizes[i], kListSizes[i]);
    assert_int_equal(g_attrs.total_sizes[i], kTotalSizes[i]);
  }
}

static void read_has_attr_and_name(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  g_attrs.has[0] = TF_OpKernelConstruction_HasAttr(ctx, "i", s);
  g_attrs.has[1] = TF_OpKernelConstruction_HasAttr(ctx, "nope", s);
  record(0, s);
  g_attrs.has[2] = TF_OpKernelConstruction_HasAttr(ctx, NULL, s);
  record(1, s);
  copy_view(TF_OpKernelConstruction_GetName(ctx), g_attrs.name,
            sizeof(g_attrs.name));
  TF_DeleteStatus(s);
}

static void has_attr_tells_whether_an_attr_is_set(void** state) {
  (void)state;
  static const char* const kAttrs[] = {"i: int = 3", NULL};
  define_probe_op("KHasAttr", kAttrs, NULL, kScalarOutput);
  use_hooks(read_has_attr_and_name, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KHasAttr", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_true(g_attrs.has[0]);  // set from its default
  assert_false(g_attrs.has[1]);
  assert_int_equal(g_attrs.codes[0], TF_OK);
  assert_false(g_attrs.has[2]);
  assert_int_equal(g_attrs.codes[1], TF_INVALID_ARGUMENT);
  assert_string_equal(g_attrs.messages[1],
                      "TF_OpKernelConstruction_HasAttr: NULL argument");
}

static void get_name_is_the_op_instance_name(void** state) {
  (void)state;
  define_probe_op("KGetName", NULL, NULL, kScalarOutput);
  use_hooks(read_has_attr_and_name, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KGetName", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_string_equal(g_attrs.name, "KGetName");
}

static void read_bad_attrs(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t i64 = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, "nope", &i64, s);
  record(0, s);
  TF_OpKernelConstruction_GetAttrInt64(ctx, "f", &i64, s);
  record(1, s);
  float floats[1];
  TF_OpKernelConstruction_GetAttrFloatList(ctx, "f", floats, 1, s);
  record(2, s);
  TF_OpKernelConstruction_GetAttrInt64(ctx, "ints", &i64, s);
  record(3, s);
  // A missing attr through the other kinds of getter.
  char text[4];
  TF_OpKernelConstruction_GetAttrString(ctx, "nope", text, sizeof(text), s);
  record(4, s);
  TF_OpKernelConstruction_GetAttrInt64List(ctx, "nope", &i64, 1, s);
  record(5, s);
  TF_Tensor* tensor = NULL;
  TF_OpKernelConstruction_GetAttrTensor(ctx, "nope", &tensor, s);
  record(6, s);
  assert_null(tensor);
  g_attrs.list_sizes[0] = g_attrs.total_sizes[0] = 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, "nope", &g_attrs.list_sizes[0],
                                      &g_attrs.total_sizes[0], s);
  record(7, s);
  TF_DeleteStatus(s);
}

// As in TensorFlow: the getters say NOT_FOUND for a missing attr (its
// OpKernelConstruction::GetAttr does), GetAttrSize says INVALID_ARGUMENT
// (and sets both sizes to -1), and a value of another type is
// INVALID_ARGUMENT.
static void missing_attr_is_not_found_and_a_wrong_type_invalid_argument(
    void** state) {
  (void)state;
  static const char* const kAttrs[] = {"f: float = 1.5",
                                       "ints: list(int) = [1]", NULL};
  define_probe_op("KBadAttrs", kAttrs, NULL, kScalarOutput);
  use_hooks(read_bad_attrs, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KBadAttrs", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  static const TF_Code kCodes[8] = {TF_NOT_FOUND,        TF_INVALID_ARGUMENT,
                                    TF_INVALID_ARGUMENT, TF_INVALID_ARGUMENT,
                                    TF_NOT_FOUND,        TF_NOT_FOUND,
                                    TF_NOT_FOUND,        TF_INVALID_ARGUMENT};
  for (int i = 0; i < 8; ++i) assert_int_equal(g_attrs.codes[i], kCodes[i]);
  for (int i = 4; i < 8; ++i) {
    assert_string_equal(g_attrs.messages[i],
                        "Op 'KBadAttrs' has no attr named 'nope'");
  }
  assert_int_equal(g_attrs.list_sizes[0], -1);
  assert_int_equal(g_attrs.total_sizes[0], -1);
  assert_string_equal(g_attrs.messages[0],
                      "Op 'KBadAttrs' has no attr named 'nope'");
  assert_string_equal(g_attrs.messages[1],
                      "Attr 'f' of op 'KBadAttrs' has type F32, not int");
  assert_string_equal(
      g_attrs.messages[2],
      "Attr 'f' of op 'KBadAttrs' has type F32, not list(float)");
  assert_string_equal(
      g_attrs.messages[3],
      "Attr 'ints' of op 'KBadAttrs' has type list(I64), not int");
}

static void read_function_attrs(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Buffer* buffer = TF_OpKernelConstruction_GetAttrFunction(ctx, "fn", s);
  record(0, s);
  g_attrs.function_size = 0;
  if (buffer && buffer->length <= sizeof(g_attrs.function)) {
    memcpy(g_attrs.function, buffer->data, buffer->length);
    g_attrs.function_size = buffer->length;
  }
  TF_DeleteBuffer(buffer);
  buffer = TF_OpKernelConstruction_GetAttrFunction(ctx, "f", s);
  record(1, s);
  g_attrs.function_null[0] = buffer == NULL;
  buffer = TF_OpKernelConstruction_GetAttrFunction(ctx, "nope", s);
  record(2, s);
  g_attrs.function_null[1] = buffer == NULL;

  // Each allocation failing in turn (the buffer comes from the default
  // allocator): RESOURCE_EXHAUSTED, no buffer, nothing leaked.
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  g_attrs.function_faults = 0;
  g_attrs.function_fault_message_seen = false;
  for (int64_t n = 1;; ++n) {
    loom_fault_allocator_fail_nth(fault, n);
    int64_t injected = loom_fault_allocator_injected_failures(fault);
    loom_allocator_t previous =
        loom_allocator_set_default(loom_fault_allocator_allocator(fault));
    buffer = TF_OpKernelConstruction_GetAttrFunction(ctx, "fn", s);
    loom_allocator_set_default(previous);
    if (loom_fault_allocator_injected_failures(fault) == injected) {
      assert_non_null(buffer);
      TF_DeleteBuffer(buffer);
      break;
    }
    ++g_attrs.function_faults;
    assert_null(buffer);
    assert_int_equal(TF_GetCode(s), TF_RESOURCE_EXHAUSTED);
    if (strcmp(TF_Message(s), "out of memory serializing func attr 'fn'") ==
        0) {
      g_attrs.function_fault_message_seen = true;
    }
    assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  }
  loom_fault_allocator_destroy(fault);
  TF_DeleteStatus(s);
}

// The name comes back as TensorFlow serializes a NameAttrList: field 1
// (tag 0x0a), its varint length, the bytes.
static void get_attr_function_serializes_a_name_attr_list(void** state) {
  (void)state;
  static const char* const kAttrs[] = {"fn: func", "f: float = 1.5", NULL};
  define_probe_op("KFuncAttr", kAttrs, NULL, kScalarOutput);
  use_hooks(read_function_attrs, compute_zero);
  // 200 bytes: a length that takes two varint bytes (0xc8 0x01).
  char name[200];
  for (int i = 0; i < 200; ++i) name[i] = (char)('a' + i % 26);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_func(&attrs, "fn", name, sizeof(name)));
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KFuncAttr", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_attrs.codes[0], TF_OK);
  assert_int_equal(g_attrs.function_size, 3 + sizeof(name));
  static const unsigned char kHeader[3] = {0x0a, 0xc8, 0x01};
  assert_memory_equal(g_attrs.function, kHeader, 3);
  assert_memory_equal(g_attrs.function + 3, name, sizeof(name));
  assert_int_equal(g_attrs.codes[1], TF_INVALID_ARGUMENT);
  assert_string_equal(g_attrs.messages[1],
                      "Attr 'f' of op 'KFuncAttr' has type F32, not func");
  assert_true(g_attrs.function_null[0]);
  assert_int_equal(g_attrs.codes[2], TF_NOT_FOUND);
  assert_string_equal(g_attrs.messages[2],
                      "Op 'KFuncAttr' has no attr named 'nope'");
  assert_true(g_attrs.function_null[1]);
  assert_true(g_attrs.function_faults >= 2);
  assert_true(g_attrs.function_fault_message_seen);

  // A short name: one length byte.
  LOOM_ASSERT_OK(loom_op_attrs_set_func(&attrs, "fn", "Identity", 8));
  run_ok("KFuncAttr", NULL, 0, &attrs, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(g_attrs.function_size, 10);
  assert_memory_equal(g_attrs.function, "\x0a\x08Identity", 10);
}

static void read_big_int32(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  g_attrs.i32 = 5;
  TF_OpKernelConstruction_GetAttrInt32(ctx, "big", &g_attrs.i32, s);
  record(0, s);
  TF_DeleteStatus(s);
}

static void int32_attr_out_of_range_is_invalid_argument(void** state) {
  (void)state;
  static const char* const kAttrs[] = {"big: int = 9999999999", NULL};
  define_probe_op("KBigInt32", kAttrs, NULL, kScalarOutput);
  use_hooks(read_big_int32, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KBigInt32", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_attrs.codes[0], TF_INVALID_ARGUMENT);
  assert_string_equal(g_attrs.messages[0],
                      "Attr 'big' value 9999999999 does not fit an int32");
  assert_int_equal(g_attrs.i32, 5);  // untouched
}

static void fail_construction(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_SetStatus(s, TF_FAILED_PRECONDITION, "bad configuration");
  TF_OpKernelConstruction_Failure(ctx, s);
  TF_SetStatus(s, TF_INTERNAL, "a second failure is ignored");
  TF_OpKernelConstruction_Failure(ctx, s);
  TF_DeleteStatus(s);
}

static void construction_failure_is_returned_with_its_message(void** state) {
  (void)state;
  define_probe_op("KCtorFails", NULL, NULL, kScalarOutput);
  use_hooks(fail_construction, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KCtorFails", NULL, 0, NULL, outputs, 1),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "Op 'KCtorFails' (kernel 'KCtorFailsKernel') "
                     "construction: bad configuration");
  // The kernel never computed, and what create returned was deleted.
  assert_int_equal(g_creates, 1);
  assert_int_equal(g_computes, 0);
  assert_int_equal(g_deletes, 1);
  assert_null(outputs[0]);
}

static void fail_construction_with_ok(TF_OpKernelConstruction* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_OpKernelConstruction_Failure(ctx, s);
  TF_DeleteStatus(s);
}

static void construction_failure_with_an_ok_status_is_unknown(void** state) {
  (void)state;
  define_probe_op("KCtorFailsOk", NULL, NULL, kScalarOutput);
  use_hooks(fail_construction_with_ok, compute_zero);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KCtorFailsOk", NULL, 0, NULL, outputs, 1),
                     LOOM_STATUS_UNKNOWN,
                     "kernel construction failed with an OK status");
}

//===----------------------------------------------------------------------===//
// The compute context
//===----------------------------------------------------------------------===//

static struct {
  int num_inputs, num_outputs;
  int starts[3], stops[3];
  TF_DataType input_types[4];
  TF_DataType output_types[3];
  TF_Code codes[4];
  char messages[4][160];
  void* data[2];
  int64_t step, get_step;
  char kernel[48], device[16];
  int forwarded;
} g_ctx;

static void record_ctx(int index, TF_Status* status) {
  g_ctx.codes[index] = TF_GetCode(status);
  snprintf(g_ctx.messages[index], sizeof(g_ctx.messages[index]), "%s",
           TF_Message(status));
}

// Sets outputs [0, NumOutputs) to inputs [1, ...): "ys: N * int32" from
// "values: N * int32".
static void pass_values_through(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  for (int i = 0; i < TF_NumOutputs(ctx); ++i) {
    TF_Tensor* input = NULL;
    TF_GetInput(ctx, i + 1, &input, s);
    TF_SetOutput(ctx, i, input, s);
    TF_DeleteTensor(input);
  }
  TF_DeleteStatus(s);
}

static void inspect_counts(TF_OpKernelContext* ctx) {
  g_ctx.num_inputs = TF_NumInputs(ctx);
  g_ctx.num_outputs = TF_NumOutputs(ctx);
  TF_Status* s = TF_NewStatus();
  static const char* const kNames[2] = {"first", "values"};
  for (int i = 0; i < 2; ++i) {
    TF_InputRange_Args args;
    memset(&args, 0, sizeof(args));
    args.struct_size = TF_InputRange_Args_STRUCT_SIZE;
    args.status = s;
    TF_InputRange(ctx, kNames[i], &args);
    record_ctx(i, s);
    g_ctx.starts[i] = args.start;
    g_ctx.stops[i] = args.stop;
  }
  TF_InputRange_Args args;
  memset(&args, 0, sizeof(args));
  args.struct_size = TF_InputRange_Args_STRUCT_SIZE;
  args.status = s;
  args.start = args.stop = 7;
  TF_InputRange(ctx, "nope", &args);
  record_ctx(2, s);
  g_ctx.starts[2] = args.start;
  g_ctx.stops[2] = args.stop;
  for (int i = 0; i < 4; ++i) g_ctx.input_types[i] = TF_InputDatatype(ctx, i);
  for (int i = 0; i < 3; ++i) {
    g_ctx.output_types[i] = TF_ExpectedOutputDataType(ctx, i);
  }
  TF_DeleteStatus(s);
  pass_values_through(ctx);
}

static void define_counts_op(const char* name) {
  static const char* const kAttrs[] = {"N: int", NULL};
  static const char* const kInputs[] = {"first: float", "values: N * int32",
                                        NULL};
  static const char* const kOutputs[] = {"ys: N * int32", NULL};
  define_probe_op(name, kAttrs, kInputs, kOutputs);
}

static void run_counts_op(const char* name) {
  float x = 5;
  int32_t a = 1, b = 2;
  loom_tensor_t* inputs[3] = {float_tensor(&x, 1), int32_tensor(&a, 1),
                              int32_tensor(&b, 1)};
  loom_tensor_t* outputs[2] = {NULL, NULL};
  run_ok(name, inputs, 3, NULL, outputs, 2);
  assert_int_equal(*(int32_t*)loom_tensor_data(outputs[0]), 1);
  assert_int_equal(*(int32_t*)loom_tensor_data(outputs[1]), 2);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);
}

static void inputs_and_outputs_are_counted_flattened(void** state) {
  (void)state;
  define_counts_op("KCounts");
  use_hooks(NULL, inspect_counts);
  run_counts_op("KCounts");
  assert_int_equal(g_ctx.num_inputs, 3);
  assert_int_equal(g_ctx.num_outputs, 2);
}

static void input_range_gives_the_flat_range_of_an_argument(void** state) {
  (void)state;
  define_counts_op("KInputRange");
  use_hooks(NULL, inspect_counts);
  run_counts_op("KInputRange");
  assert_int_equal(g_ctx.codes[0], TF_OK);
  assert_int_equal(g_ctx.starts[0], 0);
  assert_int_equal(g_ctx.stops[0], 1);
  assert_int_equal(g_ctx.codes[1], TF_OK);
  assert_int_equal(g_ctx.starts[1], 1);
  assert_int_equal(g_ctx.stops[1], 3);
}

// TensorFlow's OpKernel::InputRange says INVALID_ARGUMENT, and the C API
// then returns [-1, -1).
static void input_range_of_an_unknown_argument_is_invalid_argument(
    void** state) {
  (void)state;
  define_counts_op("KInputRangeUnknown");
  use_hooks(NULL, inspect_counts);
  run_counts_op("KInputRangeUnknown");
  assert_int_equal(g_ctx.codes[2], TF_INVALID_ARGUMENT);
  assert_string_equal(g_ctx.messages[2],
                      "Op 'KInputRangeUnknown' has no input named 'nope'");
  assert_int_equal(g_ctx.starts[2], -1);
  assert_int_equal(g_ctx.stops[2], -1);
}

static void input_and_output_datatypes_are_reported(void** state) {
  (void)state;
  define_counts_op("KDatatypes");
  use_hooks(NULL, inspect_counts);
  run_counts_op("KDatatypes");
  assert_int_equal(g_ctx.input_types[0], TF_FLOAT);
  assert_int_equal(g_ctx.input_types[1], TF_INT32);
  assert_int_equal(g_ctx.input_types[2], TF_INT32);
  assert_int_equal(g_ctx.input_types[3], 0);  // out of range
  assert_int_equal(g_ctx.output_types[0], TF_INT32);
  assert_int_equal(g_ctx.output_types[1], TF_INT32);
  assert_int_equal(g_ctx.output_types[2], 0);  // out of range
}

static const char* const kFloatInput[] = {"x: float", NULL};

static void get_input_and_check_range(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, s);
  g_ctx.data[0] = input ? TF_TensorData(input) : NULL;
  TF_Tensor* bad = NULL;
  TF_GetInput(ctx, 1, &bad, s);
  record_ctx(0, s);
  TF_GetInput(ctx, -1, &bad, s);
  record_ctx(1, s);
  TF_GetInput(ctx, 0, NULL, s);
  record_ctx(2, s);
  assert_null(bad);
  TF_SetOutput(ctx, 0, input, s);
  TF_DeleteTensor(input);
  TF_DeleteStatus(s);
}

static void get_input_shares_the_input_memory(void** state) {
  (void)state;
  define_probe_op("KGetInput", NULL, kFloatInput, kScalarOutput);
  use_hooks(NULL, get_input_and_check_range);
  float x = 2.5f;
  loom_tensor_t* input = float_tensor(&x, 1);
  void* data = loom_tensor_data(input);
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KGetInput", inputs, 1, NULL, outputs, 1);
  assert_ptr_equal(g_ctx.data[0], data);
  assert_ptr_equal(loom_tensor_data(outputs[0]), data);
  loom_tensor_release(outputs[0]);
}

static void get_input_out_of_range_is_out_of_range(void** state) {
  (void)state;
  define_probe_op("KGetInputRange", NULL, kFloatInput, kScalarOutput);
  use_hooks(NULL, get_input_and_check_range);
  float x = 2.5f;
  loom_tensor_t* inputs[1] = {float_tensor(&x, 1)};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KGetInputRange", inputs, 1, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_ctx.codes[0], TF_OUT_OF_RANGE);
  assert_string_equal(g_ctx.messages[0],
                      "KGetInputRange: input index 1 is outside [0, 1)");
  assert_int_equal(g_ctx.codes[1], TF_OUT_OF_RANGE);
  assert_string_equal(g_ctx.messages[1],
                      "KGetInputRange: input index -1 is outside [0, 1)");
  assert_int_equal(g_ctx.codes[2], TF_INVALID_ARGUMENT);
  assert_string_equal(g_ctx.messages[2], "TF_GetInput: NULL argument");
}

static void set_temp_as_output(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[2] = {2, 3};
  TF_Tensor* temp = TF_AllocateTemp(ctx, TF_FLOAT, dims, 2, NULL, s);
  record_ctx(0, s);
  if (temp) {
    g_ctx.data[0] = TF_TensorData(temp);
    for (int i = 0; i < 6; ++i) ((float*)TF_TensorData(temp))[i] = (float)i;
    TF_SetOutput(ctx, 0, temp, s);
    record_ctx(1, s);
  }
  TF_DeleteTensor(temp);  // the output keeps its own reference
  TF_DeleteStatus(s);
}

static void set_output_shares_the_tensor(void** state) {
  (void)state;
  define_probe_op("KSetOutput", NULL, NULL, kScalarOutput);
  use_hooks(NULL, set_temp_as_output);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KSetOutput", NULL, 0, NULL, outputs, 1);
  assert_int_equal(g_ctx.codes[0], TF_OK);
  assert_int_equal(g_ctx.codes[1], TF_OK);
  assert_ptr_equal(loom_tensor_data(outputs[0]), g_ctx.data[0]);
  assert_int_equal(loom_tensor_shape(outputs[0])->rank, 2);
  assert_int_equal(loom_tensor_shape(outputs[0])->dims[1], 3);
  assert_true(((float*)loom_tensor_data(outputs[0]))[5] == 5.0f);
  loom_tensor_release(outputs[0]);
}

static void set_bad_outputs(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[1] = {1};
  TF_Tensor* ints = TF_AllocateTemp(ctx, TF_INT32, dims, 1, NULL, s);
  TF_SetOutput(ctx, 0, ints, s);
  record_ctx(0, s);
  TF_Tensor* floats = TF_AllocateTemp(ctx, TF_FLOAT, dims, 1, NULL, s);
  TF_SetOutput(ctx, 1, floats, s);
  record_ctx(1, s);
  TF_SetOutput(ctx, 0, NULL, s);
  record_ctx(2, s);
  TF_SetOutput(ctx, 0, floats, s);  // the valid one, last
  record_ctx(3, s);
  TF_DeleteTensor(floats);
  TF_DeleteTensor(ints);
  TF_DeleteStatus(s);
}

static void set_output_rejects_bad_tensors_and_indices(void** state) {
  (void)state;
  define_probe_op("KSetOutputErrors", NULL, NULL, kScalarOutput);
  use_hooks(NULL, set_bad_outputs);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KSetOutputErrors", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_ctx.codes[0], TF_INVALID_ARGUMENT);
  assert_string_equal(g_ctx.messages[0],
                      "KSetOutputErrors: output 0 must be of type float, the "
                      "kernel produced int32");
  assert_int_equal(g_ctx.codes[1], TF_OUT_OF_RANGE);
  assert_string_equal(g_ctx.messages[1],
                      "KSetOutputErrors: output index 1 is outside [0, 1)");
  assert_int_equal(g_ctx.codes[2], TF_INVALID_ARGUMENT);
  assert_string_equal(g_ctx.messages[2],
                      "KSetOutputErrors: output 0: the tensor is NULL");
  assert_int_equal(g_ctx.codes[3], TF_OK);
}

static void use_mutable_output(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* before = TF_GetMutableOutput(ctx, 0, s);
  record_ctx(0, s);
  assert_null(before);
  TF_GetMutableOutput(ctx, 1, s);
  record_ctx(1, s);
  TF_Tensor* allocated =
      TF_AllocateOutput(ctx, 0, TF_FLOAT, NULL, 0, sizeof(float), s);
  TF_Tensor* mutable_output = TF_GetMutableOutput(ctx, 0, s);
  record_ctx(2, s);
  if (mutable_output) {
    g_ctx.data[0] = TF_TensorData(allocated);
    g_ctx.data[1] = TF_TensorData(mutable_output);
    *(float*)TF_TensorData(mutable_output) = 4.5f;
  }
  TF_DeleteTensor(mutable_output);
  TF_DeleteTensor(allocated);
  TF_DeleteStatus(s);
}

static void get_mutable_output_returns_the_output_once_set(void** state) {
  (void)state;
  define_probe_op("KMutableOutput", NULL, NULL, kScalarOutput);
  use_hooks(NULL, use_mutable_output);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KMutableOutput", NULL, 0, NULL, outputs, 1);
  assert_int_equal(g_ctx.codes[0], TF_FAILED_PRECONDITION);
  assert_string_equal(g_ctx.messages[0],
                      "KMutableOutput: output 0 has not been allocated");
  assert_int_equal(g_ctx.codes[1], TF_OUT_OF_RANGE);
  assert_string_equal(g_ctx.messages[1],
                      "KMutableOutput: output index 1 is outside [0, 1)");
  assert_int_equal(g_ctx.codes[2], TF_OK);
  assert_ptr_equal(g_ctx.data[1], g_ctx.data[0]);
  assert_true(scalar_value(outputs[0]) == 4.5f);
}

static void allocate_2x3_output(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[2] = {2, 3};
  TF_Tensor* out =
      TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, 2, 6 * sizeof(float), s);
  record_ctx(0, s);
  if (out) {
    g_ctx.num_outputs = TF_NumDims(out);
    g_ctx.data[0] = TF_TensorData(out);
    for (int i = 0; i < 6; ++i) ((float*)TF_TensorData(out))[i] = (float)i;
  }
  TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

static void allocate_output_has_the_requested_shape(void** state) {
  (void)state;
  define_probe_op("KAllocateOutput", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_2x3_output);
  int64_t allocated_before = loom_kernel_statistics().allocated_outputs;
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAllocateOutput", NULL, 0, NULL, outputs, 1);
  assert_int_equal(g_ctx.codes[0], TF_OK);
  assert_int_equal(g_ctx.num_outputs, 2);
  assert_ptr_equal(loom_tensor_data(outputs[0]), g_ctx.data[0]);
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_FLOAT);
  assert_int_equal(loom_tensor_num_elements(outputs[0]), 6);
  assert_int_equal(loom_tensor_shape(outputs[0])->dims[0], 2);
  assert_true(((float*)loom_tensor_data(outputs[0]))[4] == 4.0f);
  assert_int_equal(loom_kernel_statistics().allocated_outputs,
                   allocated_before + 1);
  loom_tensor_release(outputs[0]);
}

static struct { size_t byte_sizes[3]; } g_lens;

// len is ignored, as in TensorFlow: too small, zero, too large.
static void allocate_with_any_len(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[1] = {2};
  static const size_t kLens[3] = {3, 0, 1000};
  for (int i = 0; i < 3; ++i) {
    TF_Tensor* out = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, 1, kLens[i], s);
    record_ctx(i, s);
    g_lens.byte_sizes[i] = out ? TF_TensorByteSize(out) : 0;
    if (out) ((float*)TF_TensorData(out))[1] = 2.5f;
    TF_DeleteTensor(out);
  }
  TF_DeleteStatus(s);
}

static void allocate_output_ignores_len(void** state) {
  (void)state;
  define_probe_op("KAllocateAnyLen", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_with_any_len);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAllocateAnyLen", NULL, 0, NULL, outputs, 1);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(g_ctx.codes[i], TF_OK);
    assert_int_equal(g_lens.byte_sizes[i], 2 * sizeof(float));
  }
  assert_int_equal(loom_tensor_num_elements(outputs[0]), 2);
  assert_true(((const float*)loom_tensor_data(outputs[0]))[1] == 2.5f);
  loom_tensor_release(outputs[0]);
}

static void allocate_bad_outputs(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[1] = {2};
  TF_Tensor* wrong_index =
      TF_AllocateOutput(ctx, 1, TF_FLOAT, dims, 1, 2 * sizeof(float), s);
  record_ctx(0, s);
  assert_null(wrong_index);
  TF_Tensor* wrong_type =
      TF_AllocateOutput(ctx, 0, TF_INT32, dims, 1, 2 * sizeof(int32_t), s);
  record_ctx(1, s);
  assert_null(wrong_type);
  int64_t bad_dims[1] = {-5};
  TF_Tensor* bad_shape = TF_AllocateOutput(ctx, 0, TF_FLOAT, bad_dims, 1, 0, s);
  record_ctx(2, s);
  assert_null(bad_shape);
  TF_DeleteStatus(s);
  write_scalar(ctx, 1);
}

static void allocate_output_rejects_bad_requests(void** state) {
  (void)state;
  define_probe_op("KAllocateErrors", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_bad_outputs);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAllocateErrors", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_ctx.codes[0], TF_OUT_OF_RANGE);
  assert_string_equal(g_ctx.messages[0],
                      "KAllocateErrors: output index 1 is outside [0, 1)");
  assert_int_equal(g_ctx.codes[1], TF_INVALID_ARGUMENT);
  assert_string_equal(g_ctx.messages[1],
                      "KAllocateErrors: output 0 must be of type float, the "
                      "kernel produced int32");
  assert_int_equal(g_ctx.codes[2], TF_INVALID_ARGUMENT);
  assert_string_equal(
      g_ctx.messages[2],
      "shape dimension 0 is -5; dimensions must be >= 0 or -1 (unknown)");
}

static void allocate_temps(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t dims[3] = {2, 1, 4};
  TF_Tensor* temp = TF_AllocateTemp(ctx, TF_INT64, dims, 3, NULL, s);
  record_ctx(0, s);
  if (temp) {
    g_ctx.input_types[0] = TF_TensorType(temp);
    g_ctx.num_inputs = TF_NumDims(temp);
    g_ctx.step = (int64_t)TF_TensorByteSize(temp);
  }
  TF_DeleteTensor(temp);
  TF_Tensor* strings = TF_AllocateTemp(ctx, TF_STRING, dims, 1, NULL, s);
  record_ctx(1, s);
  if (strings) g_ctx.input_types[1] = TF_TensorType(strings);
  TF_DeleteTensor(strings);
  TF_DeleteStatus(s);
  write_scalar(ctx, 1);
}

static void allocate_temp_gives_a_scratch_tensor(void** state) {
  (void)state;
  define_probe_op("KAllocateTemp", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_temps);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAllocateTemp", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_ctx.codes[0], TF_OK);
  assert_int_equal(g_ctx.input_types[0], TF_INT64);
  assert_int_equal(g_ctx.num_inputs, 3);
  assert_int_equal(g_ctx.step, 8 * sizeof(int64_t));
  assert_int_equal(g_ctx.codes[1], TF_OK);
  assert_int_equal(g_ctx.input_types[1], TF_STRING);
}

static void allocate_bad_temps(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  int64_t bad_dims[2] = {2, -3};
  TF_Tensor* temps[4];
  temps[0] = TF_AllocateTemp(ctx, TF_FLOAT, bad_dims, 2, NULL, s);
  record_ctx(0, s);
  int64_t ones[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  temps[1] =
      TF_AllocateTemp(ctx, TF_FLOAT, ones, LOOM_MAX_SHAPE_RANK + 1, NULL, s);
  record_ctx(1, s);
  int64_t dims[1] = {2};
  temps[2] = TF_AllocateTemp(ctx, (TF_DataType)0, dims, 1, NULL, s);
  record_ctx(2, s);
  temps[3] = TF_AllocateTemp(NULL, TF_FLOAT, dims, 1, NULL, s);
  record_ctx(3, s);
  for (int i = 0; i < 4; ++i) assert_null(temps[i]);
  TF_DeleteStatus(s);
  write_scalar(ctx, 1);
}

static void allocate_temp_rejects_bad_dims_and_dtypes(void** state) {
  (void)state;
  define_probe_op("KAllocateTempErrors", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_bad_temps);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KAllocateTempErrors", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(g_ctx.codes[i], TF_INVALID_ARGUMENT);
  }
  assert_string_equal(
      g_ctx.messages[0],
      "shape dimension 1 is -3; dimensions must be >= 0 or -1 (unknown)");
  assert_string_equal(g_ctx.messages[1], "shape rank 255 is outside [0, 254]");
  assert_string_equal(g_ctx.messages[2],
                      "TF_AllocateTemp: cannot allocate a tensor of dtype 0 "
                      "(invalid)");
  assert_string_equal(g_ctx.messages[3], "TF_AllocateTemp: context is NULL");
}

static void read_ids_and_names(TF_OpKernelContext* ctx) {
  g_ctx.step = TF_StepId(ctx);
  g_ctx.get_step = TF_GetStepId(ctx);
  copy_view(TF_GetOpKernelName(ctx), g_ctx.kernel, sizeof(g_ctx.kernel));
  copy_view(TF_GetDeviceName(ctx), g_ctx.device, sizeof(g_ctx.device));
  write_scalar(ctx, 1);
}

static void step_id_comes_from_the_run_options(void** state) {
  (void)state;
  define_probe_op("KStepId", NULL, NULL, kScalarOutput);
  use_hooks(NULL, read_ids_and_names);
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run_on(NULL, 4242, "KStepId", NULL, 0, NULL, outputs, 1, &count));
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_ctx.step, 4242);
  assert_int_equal(g_ctx.get_step, 4242);
}

static void kernel_and_device_names_are_reported(void** state) {
  (void)state;
  define_probe_op("KNames", NULL, NULL, kScalarOutput);
  use_hooks(NULL, read_ids_and_names);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KNames", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_string_equal(g_ctx.kernel, "KNamesKernel");
  assert_string_equal(g_ctx.device, "CPU");
}

static void fail_twice(TF_OpKernelContext* ctx) {
  fail_with(ctx, TF_OUT_OF_RANGE, "index 9 is out of bounds");
  fail_with(ctx, TF_INTERNAL, "a second failure is ignored");
}

static void kernel_failure_names_the_op_and_kernel(void** state) {
  (void)state;
  define_probe_op("KFails", NULL, NULL, kScalarOutput);
  use_hooks(NULL, fail_twice);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(
      run("KFails", NULL, 0, NULL, outputs, 1), LOOM_STATUS_OUT_OF_RANGE,
      "Op 'KFails' (kernel 'KFailsKernel'): index 9 is out of bounds");
  assert_int_equal(g_deletes, 1);
  assert_null(outputs[0]);
}

static void fail_with_ok(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_OpKernelContext_Failure(ctx, s);
  TF_DeleteStatus(s);
}

static void kernel_failure_with_an_ok_status_is_unknown(void** state) {
  (void)state;
  define_probe_op("KFailsOk", NULL, NULL, kScalarOutput);
  use_hooks(NULL, fail_with_ok);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KFailsOk", NULL, 0, NULL, outputs, 1),
                     LOOM_STATUS_UNKNOWN, "kernel failed with an OK status");
}

static void allocate_then_fail(TF_OpKernelContext* ctx) {
  write_scalar(ctx, 1);
  fail_with(ctx, TF_DATA_LOSS, "checksum mismatch");
}

static void kernel_failure_releases_the_outputs_it_set(void** state) {
  (void)state;
  define_probe_op("KFailsAfterOutput", NULL, NULL, kScalarOutput);
  use_hooks(NULL, allocate_then_fail);
  // A counting allocator (nothing fails) shows what stays allocated.
  loom_fault_allocator_t* counter = NULL;
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &counter));
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 0;
  options.allocator = loom_fault_allocator_allocator(counter);
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &host));
  int64_t live_before = loom_fault_allocator_live_count(counter);
  loom_kernel_run_options_t run_options;
  memset(&run_options, 0, sizeof(run_options));
  run_options.host = host;
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_kernel_run(&run_options, "KFailsAfterOutput", NULL, 0,
                                     NULL, outputs, 1, &count),
                     LOOM_STATUS_DATA_LOSS, "checksum mismatch");
  assert_true(loom_fault_allocator_allocation_count(counter) > 0);
  assert_int_equal(loom_fault_allocator_live_count(counter), live_before);
  loom_host_context_destroy(host);
  assert_int_equal(loom_fault_allocator_live_count(counter), 0);
  loom_fault_allocator_destroy(counter);
}

static void forget_outputs(TF_OpKernelContext* ctx) {
  (void)ctx;
}

static void forgotten_output_is_an_internal_error(void** state) {
  (void)state;
  define_probe_op("KForgets", NULL, NULL, kScalarOutput);
  use_hooks(NULL, forget_outputs);
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(
      run("KForgets", NULL, 0, NULL, outputs, 1), LOOM_STATUS_INTERNAL,
      "Op 'KForgets' (kernel 'KForgetsKernel') did not set output 0");
}

//===----------------------------------------------------------------------===//
// Forwarding
//===----------------------------------------------------------------------===//

static struct {
  bool hold_input;
  int64_t dims[2];
  int rank;
  int candidate;
} g_forward;

// y = -x, reusing x's memory when the runtime allows.
static void negate_forwarding(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* held = NULL;
  if (g_forward.hold_input) TF_GetInput(ctx, 0, &held, s);
  int candidates[1] = {g_forward.candidate};
  g_ctx.forwarded = -2;
  TF_Tensor* out =
      TF_ForwardInputOrAllocateOutput(ctx, candidates, 1, 0, g_forward.dims,
                                      g_forward.rank, &g_ctx.forwarded, s);
  record_ctx(0, s);
  if (out) {
    TF_Tensor* in = NULL;
    TF_GetInput(ctx, 0, &in, s);
    const float* x = TF_TensorData(in);
    float* y = TF_TensorData(out);
    for (int64_t i = 0; i < TF_TensorElementCount(out); ++i) y[i] = -x[i];
    TF_DeleteTensor(in);
  } else {
    TF_OpKernelContext_Failure(ctx, s);
  }
  TF_DeleteTensor(out);
  TF_DeleteTensor(held);
  TF_DeleteStatus(s);
}

static void use_forwarding(bool hold_input, int64_t d0, int64_t d1, int rank) {
  use_hooks(NULL, negate_forwarding);
  g_forward.hold_input = hold_input;
  g_forward.dims[0] = d0;
  g_forward.dims[1] = d1;
  g_forward.rank = rank;
  g_forward.candidate = 0;
}

static const float kFour[4] = {1, -2, 3, -4};

static void forwarding_reuses_an_input_the_caller_gave_up(void** state) {
  (void)state;
  define_probe_op("KForward", NULL, kFloatInput, kScalarOutput);
  use_forwarding(false, 4, 0, 1);
  loom_tensor_t* input = float_tensor(kFour, 4);
  void* data = loom_tensor_data(input);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KForward", inputs, 1, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, 0);
  assert_ptr_equal(loom_tensor_data(outputs[0]), data);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers + 1);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs);
  assert_true(((float*)loom_tensor_data(outputs[0]))[1] == 2.0f);
  loom_tensor_release(outputs[0]);
}

static void forwarding_skips_an_input_the_caller_retained(void** state) {
  (void)state;
  define_probe_op("KForwardRetained", NULL, kFloatInput, kScalarOutput);
  use_forwarding(false, 4, 0, 1);
  loom_tensor_t* input = float_tensor(kFour, 4);
  loom_tensor_retain(input);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KForwardRetained", inputs, 1, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, -1);
  assert_ptr_not_equal(loom_tensor_data(outputs[0]), loom_tensor_data(input));
  // The caller's tensor is unchanged.
  assert_true(((float*)loom_tensor_data(input))[1] == -2.0f);
  assert_true(((float*)loom_tensor_data(outputs[0]))[1] == 2.0f);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_int_equal(after.forwarded_buffers, before.forwarded_buffers);
  assert_int_equal(after.allocated_outputs, before.allocated_outputs + 1);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(input);
}

static void forwarding_skips_an_input_the_kernel_holds(void** state) {
  (void)state;
  define_probe_op("KForwardHeld", NULL, kFloatInput, kScalarOutput);
  use_forwarding(true, 4, 0, 1);
  loom_tensor_t* input = float_tensor(kFour, 4);
  void* data = loom_tensor_data(input);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KForwardHeld", inputs, 1, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, -1);
  assert_ptr_not_equal(loom_tensor_data(outputs[0]), data);
  assert_int_equal(loom_kernel_statistics().forwarded_buffers,
                   before.forwarded_buffers);
  loom_tensor_release(outputs[0]);
}

static void forwarding_skips_an_input_of_another_size(void** state) {
  (void)state;
  define_probe_op("KForwardSize", NULL, kFloatInput, kScalarOutput);
  use_forwarding(false, 3, 0, 1);
  loom_tensor_t* inputs[1] = {float_tensor(kFour, 4)};
  loom_tensor_t* outputs[1] = {NULL};
  loom_kernel_statistics_t before = loom_kernel_statistics();
  run_ok("KForwardSize", inputs, 1, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, -1);
  assert_int_equal(loom_tensor_num_elements(outputs[0]), 3);
  assert_int_equal(loom_kernel_statistics().forwarded_buffers,
                   before.forwarded_buffers);
  loom_tensor_release(outputs[0]);
}

static void forwarding_skips_an_input_of_another_dtype(void** state) {
  (void)state;
  static const char* const kInputs[] = {"x: float", "n: int32", NULL};
  define_probe_op("KForwardDtype", NULL, kInputs, kScalarOutput);
  use_forwarding(false, 4, 0, 1);
  g_forward.candidate = 1;  // int32, while the output is float
  int32_t ints[4] = {1, 2, 3, 4};
  loom_tensor_t* inputs[2] = {float_tensor(kFour, 4), int32_tensor(ints, 4)};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KForwardDtype", inputs, 2, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, -1);
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_FLOAT);
  loom_tensor_release(outputs[0]);
}

static void forwarding_into_another_shape_shares_the_buffer(void** state) {
  (void)state;
  define_probe_op("KForwardReshape", NULL, kFloatInput, kScalarOutput);
  use_forwarding(false, 2, 2, 2);
  loom_tensor_t* input = float_tensor(kFour, 4);
  void* data = loom_tensor_data(input);
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KForwardReshape", inputs, 1, NULL, outputs, 1);
  assert_int_equal(g_ctx.forwarded, 0);
  assert_ptr_equal(loom_tensor_data(outputs[0]), data);
  assert_int_equal(loom_tensor_shape(outputs[0])->rank, 2);
  assert_true(((float*)loom_tensor_data(outputs[0]))[3] == 4.0f);
  loom_tensor_release(outputs[0]);
}

static void forwarding_candidate_out_of_range_is_out_of_range(void** state) {
  (void)state;
  define_probe_op("KForwardRange", NULL, kFloatInput, kScalarOutput);
  use_forwarding(false, 4, 0, 1);
  g_forward.candidate = 3;
  loom_tensor_t* inputs[1] = {float_tensor(kFour, 4)};
  loom_tensor_t* outputs[1] = {NULL};
  LOOM_ASSERT_STATUS(run("KForwardRange", inputs, 1, NULL, outputs, 1),
                     LOOM_STATUS_OUT_OF_RANGE,
                     "Op 'KForwardRange' (kernel 'KForwardRangeKernel'): "
                     "KForwardRange: forwarding candidate input 3 is outside "
                     "[0, 1)");
  assert_int_equal(g_ctx.forwarded, -1);
}

//===----------------------------------------------------------------------===//
// The thread pool
//===----------------------------------------------------------------------===//

enum { kParallelTotal = 1000 };

static struct {
  atomic_int hits[kParallelTotal];
  atomic_int calls;
  atomic_int bad_ids;
  int max_id;
  int num_threads;
} g_parallel;

static void mark(void* arg, int64_t begin, int64_t end) {
  (void)arg;
  atomic_fetch_add(&g_parallel.calls, 1);
  for (int64_t i = begin; i < end; ++i) {
    atomic_fetch_add(&g_parallel.hits[i], 1);
  }
}

static void mark_with_id(void* arg, int64_t begin, int64_t end, int id) {
  if (id < 0 || id > g_parallel.max_id)
    atomic_fetch_add(&g_parallel.bad_ids, 1);
  mark(arg, begin, end);
}

static void reset_parallel(void) {
  for (int i = 0; i < kParallelTotal; ++i) {
    atomic_store(&g_parallel.hits[i], 0);
  }
  atomic_store(&g_parallel.calls, 0);
  atomic_store(&g_parallel.bad_ids, 0);
}

static void parallel_for_compute(TF_OpKernelContext* ctx) {
  // Expensive units: the range is split across the pool.
  TF_ThreadPool_ParallelFor(ctx, kParallelTotal, 1000000, mark, NULL);
  write_scalar(ctx, 1);
}

static void parallel_for_covers_every_index_once(void** state) {
  (void)state;
  define_probe_op("KParallelFor", NULL, NULL, kScalarOutput);
  use_hooks(NULL, parallel_for_compute);
  reset_parallel();
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KParallelFor", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  for (int i = 0; i < kParallelTotal; ++i) {
    assert_int_equal(atomic_load(&g_parallel.hits[i]), 1);
  }
  assert_true(atomic_load(&g_parallel.calls) > 1);
}

static void empty_parallel_for_compute(TF_OpKernelContext* ctx) {
  TF_ThreadPool_ParallelFor(ctx, 0, 10, mark, NULL);
  TF_ThreadPool_ParallelForWithWorkerId(ctx, 0, 10, mark_with_id, NULL);
  write_scalar(ctx, 1);
}

static void empty_parallel_for_calls_nothing(void** state) {
  (void)state;
  define_probe_op("KParallelForEmpty", NULL, NULL, kScalarOutput);
  use_hooks(NULL, empty_parallel_for_compute);
  reset_parallel();
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KParallelForEmpty", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(atomic_load(&g_parallel.calls), 0);
}

static void parallel_for_with_ids_compute(TF_OpKernelContext* ctx) {
  g_parallel.max_id = TF_ThreadPool_NumThreads(ctx);
  TF_ThreadPool_ParallelForWithWorkerId(ctx, kParallelTotal, 1000000,
                                        mark_with_id, NULL);
  write_scalar(ctx, 1);
}

static void parallel_for_with_worker_id_keeps_ids_in_range(void** state) {
  (void)state;
  define_probe_op("KParallelForIds", NULL, NULL, kScalarOutput);
  use_hooks(NULL, parallel_for_with_ids_compute);
  reset_parallel();
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KParallelForIds", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(g_parallel.max_id, 2);
  assert_int_equal(atomic_load(&g_parallel.bad_ids), 0);
  for (int i = 0; i < kParallelTotal; ++i) {
    assert_int_equal(atomic_load(&g_parallel.hits[i]), 1);
  }
}

static atomic_int g_scheduled_runs;

static void count_run(void* arg) {
  (void)arg;
  atomic_fetch_add(&g_scheduled_runs, 1);
}

static void schedule_with_hints(TF_OpKernelContext* ctx) {
  TF_ThreadPool_ScheduleWithHint(ctx, count_run, NULL, 0, 1);
  TF_ThreadPool_ScheduleWithHint(ctx, count_run, NULL, 1, 2);
  // Out of range, or empty: still only a hint; the work runs.
  TF_ThreadPool_ScheduleWithHint(ctx, count_run, NULL, 5, 9);
  TF_ThreadPool_ScheduleWithHint(ctx, count_run, NULL, 1, 1);
  TF_ThreadPool_Schedule(ctx, count_run, NULL);
  write_scalar(ctx, 1);
}

static void scheduled_work_runs_whatever_the_hint(void** state) {
  (void)state;
  define_probe_op("KScheduleHint", NULL, NULL, kScalarOutput);
  use_hooks(NULL, schedule_with_hints);
  atomic_store(&g_scheduled_runs, 0);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KScheduleHint", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  loom_host_context_quiesce(g_host);
  assert_int_equal(atomic_load(&g_scheduled_runs), 5);
}

static void read_num_threads(TF_OpKernelContext* ctx) {
  g_parallel.num_threads = TF_ThreadPool_NumThreads(ctx);
  write_scalar(ctx, 1);
}

static void num_threads_is_the_host_context_pool_size(void** state) {
  (void)state;
  define_probe_op("KNumThreads", NULL, NULL, kScalarOutput);
  use_hooks(NULL, read_num_threads);
  loom_tensor_t* outputs[1] = {NULL};
  run_ok("KNumThreads", NULL, 0, NULL, outputs, 1);
  loom_tensor_release(outputs[0]);
  assert_int_equal(
      g_parallel.num_threads,
      loom_thread_pool_num_threads(loom_host_context_thread_pool(g_host)));
  assert_int_equal(g_parallel.num_threads, 2);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Runs `op` (float x[4] -> float y) on a host context, and its input, that
// allocate from `allocator`.
static loom_status_t run_op_with(loom_allocator_t allocator, void* context) {
  const char* op = context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.allocator = allocator;
  options.num_threads = 1;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  int64_t dims[1] = {4};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* input = NULL;
  loom_status_t status =
      loom_tensor_create_dense(allocator, LOOM_DTYPE_FLOAT, &shape, &input);
  if (!status) {
    memcpy(loom_tensor_data(input), kFour, sizeof(kFour));
    loom_kernel_run_options_t run_options;
    memset(&run_options, 0, sizeof(run_options));
    run_options.host = host;
    loom_tensor_t* outputs[1] = {NULL};
    int32_t count = 0;
    status =
        loom_kernel_run(&run_options, op, &input, 1, NULL, outputs, 1, &count);
    if (!status) {
      assert_int_equal(count, 1);
      loom_tensor_release(outputs[0]);
    }
  }
  loom_host_context_destroy(host);
  return status;
}

static void allocate_negation(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* in = NULL;
  TF_GetInput(ctx, 0, &in, s);
  int64_t dims[1] = {4};
  TF_Tensor* out =
      TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, 1, 4 * sizeof(float), s);
  if (out) {
    for (int i = 0; i < 4; ++i) {
      ((float*)TF_TensorData(out))[i] = -((float*)TF_TensorData(in))[i];
    }
  } else {
    TF_OpKernelContext_Failure(ctx, s);
  }
  TF_DeleteTensor(out);
  TF_DeleteTensor(in);
  TF_DeleteStatus(s);
}

static void allocation_failures_while_allocating_an_output_are_reported(
    void** state) {
  (void)state;
  define_probe_op("KFaultAllocate", NULL, kFloatInput, kScalarOutput);
  use_hooks(NULL, allocate_negation);
  assert_true(loom_test_fault_sweep(run_op_with, "KFaultAllocate",
                                    LOOM_TEST_SWEEP_STRICT) > 3);
}

// y = -x computed in a temp that becomes the output.
static void negate_through_a_temp(TF_OpKernelContext* ctx) {
  TF_Status* s = TF_NewStatus();
  TF_Tensor* in = NULL;
  TF_Tensor* temp = NULL;
  TF_GetInput(ctx, 0, &in, s);
  int64_t dims[1] = {4};
  if (TF_GetCode(s) == TF_OK) {
    temp = TF_AllocateTemp(ctx, TF_FLOAT, dims, 1, NULL, s);
  }
  if (temp) {
    for (int i = 0; i < 4; ++i) {
      ((float*)TF_TensorData(temp))[i] = -((float*)TF_TensorData(in))[i];
    }
    TF_SetOutput(ctx, 0, temp, s);
  }
  if (TF_GetCode(s) != TF_OK) TF_OpKernelContext_Failure(ctx, s);
  TF_DeleteTensor(temp);
  TF_DeleteTensor(in);
  TF_DeleteStatus(s);
}

static void allocation_failures_while_allocating_a_temp_are_reported(
    void** state) {
  (void)state;
  define_probe_op("KFaultTemp", NULL, kFloatInput, kScalarOutput);
  use_hooks(NULL, negate_through_a_temp);
  assert_true(loom_test_fault_sweep(run_op_with, "KFaultTemp",
                                    LOOM_TEST_SWEEP_STRICT) > 3);
}

static void allocation_failures_while_forwarding_are_reported(void** state) {
  (void)state;
  define_probe_op("KFaultForward", NULL, kFloatInput, kScalarOutput);
  // Forwarding into another shape allocates a tensor over the input buffer.
  use_forwarding(false, 2, 2, 2);
  assert_true(loom_test_fault_sweep(run_op_with, "KFaultForward",
                                    LOOM_TEST_SWEEP_STRICT) > 3);
}

static void async_negate(void* kernel, TF_OpKernelContext* ctx,
                         TF_AsyncOpKernelDoneCallback* done);

static void allocation_failures_in_an_async_kernel_are_reported(void** state) {
  (void)state;
  register_op("KFaultAsync", NULL, kFloatInput, kScalarOutput);
  register_kernel(
      "KFaultAsyncKernel",
      TF_NewAsyncKernelBuilder("KFaultAsync", "CPU", NULL, async_negate, NULL));
  assert_true(loom_test_fault_sweep(run_op_with, "KFaultAsync",
                                    LOOM_TEST_SWEEP_STRICT) > 3);
}

// Builds a KFaultRegister kernel the way a plugin would, looking at the
// status only at the end, and registers it.
static TF_Code build_and_register_kernel(TF_Status* status) {
  TF_KernelBuilder* builder = TF_NewKernelBuilder("KFaultRegister", "CPU", NULL,
                                                  constant_compute, NULL);
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_INT32, status);
  TF_KernelBuilder_HostMemory(builder, "shape");
  TF_KernelBuilder_Label(builder, "swept");
  TF_KernelBuilder_Priority(builder, 2);
  TF_RegisterKernelBuilder("KFaultRegisterKernel", builder, status);
  return TF_GetCode(status);
}

// Kernel builders allocate from the default allocator. The last run
// registers the kernel, whose memory then lives in the process-wide
// registry: the fault allocator is never destroyed.
static loom_fault_allocator_t* g_registration_faults;

// Every allocation of a kernel registration failing in turn: the
// registration reports an error, registers nothing and leaks nothing.
static void allocation_failures_while_registering_a_kernel_are_reported(
    void** state) {
  (void)state;
  static const char* const kAttrs[] = {"T: {float, int32}", NULL};
  static const char* const kInputs[] = {"x: T", "shape: int32", NULL};
  register_op("KFaultRegister", kAttrs, kInputs, kScalarOutput);
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(),
                                             &g_registration_faults));
  loom_fault_allocator_t* fault = g_registration_faults;
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  TF_Status* status = TF_NewStatus();
  int64_t failures = 0;
  for (int64_t n = 1;; ++n) {
    loom_fault_allocator_fail_nth(fault, n);
    int64_t injected = loom_fault_allocator_injected_failures(fault);
    loom_allocator_t previous =
        loom_allocator_set_default(loom_fault_allocator_allocator(fault));
    TF_Code code = build_and_register_kernel(status);
    loom_allocator_set_default(previous);
    if (loom_fault_allocator_injected_failures(fault) == injected) {
      assert_int_equal(code, TF_OK);  // nothing failed: registered
      break;
    }
    ++failures;
    if (code == TF_OK) {
      fail_msg("allocation %lld failed but the kernel was registered",
               (long long)n);
    }
    assert_int_equal(loom_kernel_registry_count(kernels, "KFaultRegister"), 0);
    assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  }
  TF_DeleteStatus(status);
  assert_true(failures > 3);
  assert_int_equal(loom_kernel_registry_count(kernels, "KFaultRegister"), 1);
}

typedef struct negate_job_t {
  TF_OpKernelContext* ctx;
  TF_AsyncOpKernelDoneCallback* done;
} negate_job_t;

static negate_job_t g_negate_job;

static void negate_on_pool(void* arg) {
  negate_job_t* job = arg;
  allocate_negation(job->ctx);
  TF_RunAsyncOpKernelDoneCallback(job->done);
}

static void async_negate(void* kernel, TF_OpKernelContext* ctx,
                         TF_AsyncOpKernelDoneCallback* done) {
  (void)kernel;
  g_negate_job.ctx = ctx;
  g_negate_job.done = done;
  TF_ThreadPool_Schedule(ctx, negate_on_pool, &g_negate_job);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(type_constraint_chooses_the_kernel_by_attr_t),
      cmocka_unit_test(no_kernel_for_the_type_is_not_found_listing_kernels),
      cmocka_unit_test(type_constraint_with_an_invalid_dtype_is_rejected),
      cmocka_unit_test(builder_whose_call_failed_is_refused),
      cmocka_unit_test(builder_functions_reject_a_null_builder),
      cmocka_unit_test(registering_a_builder_twice_is_invalid_argument),
      cmocka_unit_test(deleting_a_registered_builder_is_harmless),
      cmocka_unit_test(deleting_an_unregistered_builder_frees_it),
      cmocka_unit_test(builder_without_a_compute_function_is_null),
      cmocka_unit_test(higher_priority_kernel_wins),
      cmocka_unit_test(label_selects_the_kernel_named_by_the_kernel_attr),
      cmocka_unit_test(host_memory_args_are_reported_for_device_kernels),
      cmocka_unit_test(host_memory_query_out_of_range_is_out_of_range),
      cmocka_unit_test(cpu_kernels_keep_every_argument_in_host_memory),
      cmocka_unit_test(kernel_for_another_device_is_not_chosen),
      cmocka_unit_test(async_kernel_completes_when_done_is_called),
      cmocka_unit_test(async_kernel_failure_is_returned),
      cmocka_unit_test(construction_reads_scalar_attrs),
      cmocka_unit_test(construction_reads_list_attrs),
      cmocka_unit_test(string_list_without_enough_storage_is_invalid_argument),
      cmocka_unit_test(construction_reads_tensor_attrs),
      cmocka_unit_test(get_attr_size_reports_list_and_total_sizes),
      cmocka_unit_test(has_attr_tells_whether_an_attr_is_set),
      cmocka_unit_test(get_name_is_the_op_instance_name),
      cmocka_unit_test(
          missing_attr_is_not_found_and_a_wrong_type_invalid_argument),
      cmocka_unit_test(get_attr_function_serializes_a_name_attr_list),
      cmocka_unit_test(int32_attr_out_of_range_is_invalid_argument),
      cmocka_unit_test(construction_failure_is_returned_with_its_message),
      cmocka_unit_test(construction_failure_with_an_ok_status_is_unknown),
      cmocka_unit_test(inputs_and_outputs_are_counted_flattened),
      cmocka_unit_test(input_range_gives_the_flat_range_of_an_argument),
      cmocka_unit_test(input_range_of_an_unknown_argument_is_invalid_argument),
      cmocka_unit_test(input_and_output_datatypes_are_reported),
      cmocka_unit_test(get_input_shares_the_input_memory),
      cmocka_unit_test(get_input_out_of_range_is_out_of_range),
      cmocka_unit_test(set_output_shares_the_tensor),
      cmocka_unit_test(set_output_rejects_bad_tensors_and_indices),
      cmocka_unit_test(get_mutable_output_returns_the_output_once_set),
      cmocka_unit_test(allocate_output_has_the_requested_shape),
      cmocka_unit_test(allocate_output_ignores_len),
      cmocka_unit_test(allocate_output_rejects_bad_requests),
      cmocka_unit_test(allocate_temp_gives_a_scratch_tensor),
      cmocka_unit_test(allocate_temp_rejects_bad_dims_and_dtypes),
      cmocka_unit_test(step_id_comes_from_the_run_options),
      cmocka_unit_test(kernel_and_device_names_are_reported),
      cmocka_unit_test(kernel_failure_names_the_op_and_kernel),
      cmocka_unit_test(kernel_failure_with_an_ok_status_is_unknown),
      cmocka_unit_test(kernel_failure_releases_the_outputs_it_set),
      cmocka_unit_test(forgotten_output_is_an_internal_error),
      cmocka_unit_test(forwarding_reuses_an_input_the_caller_gave_up),
      cmocka_unit_test(forwarding_skips_an_input_the_caller_retained),
      cmocka_unit_test(forwarding_skips_an_input_the_kernel_holds),
      cmocka_unit_test(forwarding_skips_an_input_of_another_size),
      cmocka_unit_test(forwarding_skips_an_input_of_another_dtype),
      cmocka_unit_test(forwarding_into_another_shape_shares_the_buffer),
      cmocka_unit_test(forwarding_candidate_out_of_range_is_out_of_range),
      cmocka_unit_test(parallel_for_covers_every_index_once),
      cmocka_unit_test(empty_parallel_for_calls_nothing),
      cmocka_unit_test(parallel_for_with_worker_id_keeps_ids_in_range),
      cmocka_unit_test(scheduled_work_runs_whatever_the_hint),
      cmocka_unit_test(num_threads_is_the_host_context_pool_size),
      cmocka_unit_test(
          allocation_failures_while_allocating_an_output_are_reported),
      cmocka_unit_test(
          allocation_failures_while_allocating_a_temp_are_reported),
      cmocka_unit_test(allocation_failures_while_forwarding_are_reported),
      cmocka_unit_test(allocation_failures_in_an_async_kernel_are_reported),
      cmocka_unit_test(
          allocation_failures_while_registering_a_kernel_are_reported),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
