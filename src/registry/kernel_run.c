// Running one kernel on host tensors: attribute completion, kernel choice,
// construction, (async) compute and cleanup.

#include <string.h>

#include "base/small_vector.h"
#include "host/thread_pool_internal.h"
#include "loom/op_signature.h"
#include "registry/kernel_context.h"

// Ops with up to 16 inputs or outputs run without allocating these arrays.
LOOM_DEFINE_SMALL_VECTOR(dtype_vector, loom_dtype_t, 16)
LOOM_DEFINE_SMALL_VECTOR(tensor_vector, loom_tensor_t*, 16)

typedef struct run_state_t {
  loom_op_attrs_t attrs;
  dtype_vector_t input_dtypes;
  dtype_vector_t output_dtypes;
  tensor_vector_t outputs;  // NULL until the kernel sets them; owned
} run_state_t;

typedef struct done_flag_t {
  loom_thread_pool_t* pool;
  atomic_int done;
} done_flag_t;

static void mark_done(void* arg) {
  done_flag_t* flag = arg;
  loom_thread_pool_t* pool = flag->pool;
  loom__thread_pool_set_flag(pool, &flag->done);
}

static loom_status_t copy_attrs(const loom_op_attrs_t* source,
                                loom_op_attrs_t* destination) {
  for (size_t i = 0; i < loom_op_attrs_count(source); ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    loom_op_attrs_entry_at(source, i, &name, &value);
    LOOM_RETURN_IF_ERROR(loom_op_attrs_set_value(destination, name, &value));
  }
  return loom_ok_status();
}

static loom_status_t prepare_outputs(loom_allocator_t allocator,
                                     const loom_op_def_t* op,
                                     run_state_t* state) {
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_flat_types(op, &state->attrs, true, NULL, 0, &count));
  LOOM_RETURN_IF_ERROR(dtype_vector_resize_uninitialized(
      &state->output_dtypes, allocator, (size_t)count));
  LOOM_RETURN_IF_ERROR(
      tensor_vector_resize(&state->outputs, allocator, (size_t)count));
  return loom_op_def_flat_types(op, &state->attrs, true,
                                dtype_vector_data(&state->output_dtypes), count,
                                &count);
}

static void cleanup(loom_allocator_t allocator, run_state_t* state) {
  loom_tensor_t** outputs = tensor_vector_data(&state->outputs);
  for (size_t i = 0; i < tensor_vector_size(&state->outputs); ++i) {
    loom_tensor_release(outputs[i]);
  }
  dtype_vector_deinitialize(&state->input_dtypes, allocator);
  dtype_vector_deinitialize(&state->output_dtypes, allocator);
  tensor_vector_deinitialize(&state->outputs, allocator);
  loom_op_attrs_deinitialize(&state->attrs);
}

// Creates the kernel, computes once, deletes it. Outputs land in `state`.
static loom_status_t construct_and_compute(
    const loom_kernel_run_options_t* options, const loom_op_def_t* op,
    const loom_kernel_def_t* kernel, loom_tensor_t* const* inputs,
    int32_t num_inputs, run_state_t* state) {
  loom_kernel_construction_t construction;
  memset(&construction, 0, sizeof(construction));
  construction.op = op;
  construction.attrs = &state->attrs;
  construction.kernel = kernel;
  construction.node_name = op->name;
  void* instance = kernel->create ? kernel->create(&construction) : NULL;
  if (construction.status) {
    if (kernel->destroy) kernel->destroy(instance);
    return loom_status_annotate(construction.status,
                                "Op '%s' (kernel '%s') construction", op->name,
                                kernel->name);
  }

  loom_kernel_context_t context;
  memset(&context, 0, sizeof(context));
  context.op = op;
  context.attrs = &state->attrs;
  context.kernel = kernel;
  context.host = options->host;
  context.allocator = loom_host_context_allocator(options->host);
  context.inputs = inputs;
  context.num_inputs = num_inputs;
  context.owned_inputs = ~(uint64_t)0;  // the run took the inputs over
  context.outputs = tensor_vector_data(&state->outputs);
  context.output_dtypes = dtype_vector_data(&state->output_dtypes);
  context.num_outputs = (int32_t)tensor_vector_size(&state->outputs);
  context.step_id = options->step_id;
  context.device_name = kernel->device_type;
  if (kernel->compute) {
    kernel->compute(instance, &context);
  } else {
    loom_thread_pool_t* pool = loom_host_context_thread_pool(options->host);
    done_flag_t flag;
    flag.pool = pool;
    atomic_init(&flag.done, 0);
    loom_kernel_done_t done = {mark_done, &flag};
    kernel->compute_async(instance, &context, &done);
    loom__thread_pool_wait_for_flag(pool, &flag.done);
  }
  if (kernel->destroy) kernel->destroy(instance);
  if (context.status) {
    return loom_status_annotate(context.status, "Op '%s' (kernel '%s')",
                                op->name, kernel->name);
  }
  for (int32_t i = 0; i < context.num_outputs; ++i) {
    if (!context.outputs[i]) {
      return loom_make_status(LOOM_STATUS_INTERNAL,
                              "Op '%s' (kernel '%s') did not set output %d",
                              op->name, kernel->name, i);
    }
  }
  return loom_ok_status();
}

static loom_status_t run(const loom_kernel_run_options_t* options,
                         const char* op_name, loom_tensor_t* const* inputs,
                         int32_t num_inputs, const loom_op_attrs_t* attrs,
                         loom_tensor_t** outputs, int32_t capacity,
                         int32_t* out_num_outputs, run_state_t* state) {
  loom_allocator_t allocator = loom_host_context_allocator(options->host);
  loom_op_registry_t* ops =
      options->ops ? options->ops : loom_op_registry_global();
  loom_kernel_registry_t* kernels =
      options->kernels ? options->kernels : loom_kernel_registry_global();
  const char* device =
      options->device_type ? options->device_type : LOOM_DEVICE_CPU;
  const loom_op_def_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_op_registry_lookup(ops, op_name, &op));
  if (attrs) LOOM_RETURN_IF_ERROR(copy_attrs(attrs, &state->attrs));
  LOOM_RETURN_IF_ERROR(dtype_vector_resize_uninitialized(
      &state->input_dtypes, allocator, (size_t)num_inputs));
  loom_dtype_t* input_dtypes = dtype_vector_data(&state->input_dtypes);
  for (int32_t i = 0; i < num_inputs; ++i) {
    input_dtypes[i] = loom_tensor_dtype(inputs[i]);
  }
  LOOM_RETURN_IF_ERROR(
      loom_op_def_complete_attrs(op, input_dtypes, num_inputs, &state->attrs));
  LOOM_RETURN_IF_ERROR(prepare_outputs(allocator, op, state));
  int32_t num_outputs = (int32_t)tensor_vector_size(&state->outputs);
  if (num_outputs > capacity) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Op '%s' has %d outputs, the caller has room for %d", op->name,
        num_outputs, capacity);
  }
  const loom_kernel_def_t* kernel = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_registry_lookup(kernels, op, device, &state->attrs, &kernel));
  LOOM_RETURN_IF_ERROR(
      construct_and_compute(options, op, kernel, inputs, num_inputs, state));
  loom_tensor_t** results = tensor_vector_data(&state->outputs);
  for (int32_t i = 0; i < num_outputs; ++i) {
    outputs[i] = results[i];
    results[i] = NULL;
  }
  *out_num_outputs = num_outputs;
  return loom_ok_status();
}

loom_status_t loom_kernel_run(const loom_kernel_run_options_t* options,
                              const char* op_name, loom_tensor_t* const* inputs,
                              int32_t num_inputs, const loom_op_attrs_t* attrs,
                              loom_tensor_t** outputs, int32_t capacity,
                              int32_t* out_num_outputs) {
  loom_status_t status = loom_ok_status();
  if (!options || !options->host || !op_name || !out_num_outputs ||
      (num_inputs > 0 && !inputs) || num_inputs < 0 ||
      (capacity > 0 && !outputs) || capacity < 0) {
    status =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "loom_kernel_run: %s",
                         !options           ? "options is NULL"
                         : !options->host   ? "options->host is NULL"
                         : !op_name         ? "op_name is NULL"
                         : !out_num_outputs ? "out_num_outputs is NULL"
                                            : "invalid input/output arrays");
  }
  for (int32_t i = 0; !status && i < num_inputs; ++i) {
    if (!inputs[i]) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "Op '%s': input %d is NULL", op_name, i);
    }
  }
  if (!status) {
    *out_num_outputs = 0;
    run_state_t state;
    loom_allocator_t allocator = loom_host_context_allocator(options->host);
    loom_op_attrs_initialize(&state.attrs, allocator);
    dtype_vector_initialize(&state.input_dtypes);
    dtype_vector_initialize(&state.output_dtypes);
    tensor_vector_initialize(&state.outputs);
    status = run(options, op_name, inputs, num_inputs, attrs, outputs, capacity,
                 out_num_outputs, &state);
    cleanup(allocator, &state);
  }
  for (int32_t i = 0; inputs && i < num_inputs; ++i) {
    loom_tensor_release(inputs[i]);
  }
  return status;
}
