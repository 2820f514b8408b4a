// Running one op's kernel on available host tensors: a native dispatch
// function (TFRT's CPU dispatch functions) or a TensorFlow kernel through
// its op-kernel context, which lives on the stack for synchronous kernels.

#include <string.h>

#include "base/small_vector.h"
#include "corert/cpu_op_handler_internal.h"
#include "host/async_value_internal.h"

loom_status_t loom__cpu_annotate(loom_status_t status, const char* op_name) {
  if (!status || strstr(loom_status_message(status), op_name)) return status;
  return loom_status_annotate(status, "%s", op_name);
}

bool loom_cpu_input_is_forwardable(const loom_cpu_dispatch_context_t* context,
                                   int32_t index) {
  return context && index >= 0 && index < context->num_inputs && index < 64 &&
         (context->owned_inputs & ((uint64_t)1 << index)) &&
         loom_tensor_is_forwardable(context->inputs[index]);
}

loom_status_t loom__cpu_convert_inputs(const cpu_op_t* op,
                                       loom_allocator_t allocator,
                                       loom_tensor_t** inputs,
                                       int32_t num_inputs) {
  if (op->native && (op->native->flags & LOOM_CPU_OP_ALLOWS_SCALAR)) {
    return loom_ok_status();
  }
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (loom_tensor_kind(inputs[i]) != LOOM_TENSOR_SCALAR) continue;
    loom_tensor_t* dense = NULL;
    LOOM_RETURN_IF_ERROR(
        loom_tensor_convert_to_dense(allocator, inputs[i], &dense));
    loom_tensor_release(inputs[i]);
    inputs[i] = dense;
  }
  return loom_ok_status();
}

static loom_status_t call_native(
    const cpu_call_t* call, const loom_tensor_metadata_t* result_metadata) {
  loom_runtime_t* runtime = call->op->runtime;
  loom_cpu_dispatch_context_t context = {
      .host = runtime->host,
      .allocator = runtime->allocator,
      .location = call->location,
      .inputs = call->inputs,
      .num_inputs = call->num_inputs,
      .attrs = call->attrs,
      .result_metadata = result_metadata,
      .results = call->results,
      .num_results = call->num_results,
      .owned_inputs = call->owned_inputs,
  };
  return call->op->native->dispatch(&context);
}

LOOM_DEFINE_SMALL_VECTOR(metadata_vector, loom_tensor_metadata_t,
                         2 * kCpuInlineArity)

static loom_status_t run_native(const cpu_call_t* call) {
  const cpu_native_op_t* native = call->op->native;
  // Known results' metadata: Execute knew the inputs' and checked their
  // ranks (loom__cpu_check_large_ranks) before the metadata function ran.
  if (call->result_metadata) return call_native(call, call->result_metadata);
  // The metadata was not known at Execute; it is now: check it before the
  // dispatch function sees the inputs.
  int32_t n = call->num_inputs;
  int32_t m = call->num_results;
  loom_allocator_t allocator = call->op->runtime->allocator;
  metadata_vector_t metadata;
  metadata_vector_initialize(&metadata);
  LOOM_RETURN_IF_ERROR(
      metadata_vector_reserve(&metadata, allocator, (size_t)(n + m)));
  loom_tensor_metadata_t* inputs = metadata_vector_data(&metadata);
  loom_tensor_metadata_t* results = inputs + n;
  for (int32_t i = 0; i < n; ++i) {
    inputs[i] = *loom_tensor_metadata(call->inputs[i]);
  }
  // Native ops read dims in place.
  loom_status_t status =
      loom__cpu_check_large_ranks(NULL, call->op_name, inputs, n);
  if (!status && native->metadata) {
    status = native->metadata(inputs, n, call->attrs, results, m);
    if (!status) status = call_native(call, results);
  } else if (!status) {
    status = call_native(call, NULL);
  }
  metadata_vector_deinitialize(&metadata, allocator);
  return status;
}

static void initialize_context(const cpu_call_t* call,
                               loom_kernel_context_t* context,
                               loom_tensor_t** outputs) {
  const cpu_kernel_spec_t* spec = call->spec;
  loom_runtime_t* runtime = call->op->runtime;
  context->op = call->op->def;
  context->attrs = spec->attrs;
  context->kernel = spec->kernel;
  context->host = runtime->host;
  context->allocator = runtime->allocator;
  context->inputs = call->inputs;
  context->num_inputs = call->num_inputs;
  context->owned_inputs = call->owned_inputs;
  context->outputs = outputs;
  context->reuse_outputs = NULL;
  context->output_dtypes = spec->output_dtypes;
  context->num_outputs = spec->num_outputs;
  context->step_id = 0;
  context->device_name = LOOM_DEVICE_CPU;
  context->device = call->op->cpu->device_name;
  context->status = NULL;
}

// Hands the kernel's outputs to the results, or returns its failure. Every
// output reference is consumed either way.
static loom_status_t finish_tf_kernel(const cpu_call_t* call,
                                      loom_kernel_context_t* context) {
  loom_status_t error = context->status;
  context->status = NULL;
  for (int32_t i = 0; !error && i < call->num_results; ++i) {
    if (!context->outputs[i]) {
      error = loom_make_status(LOOM_STATUS_INTERNAL,
                               "kernel '%s' did not set output %d",
                               call->spec->kernel->name, i);
    }
  }
  for (int32_t i = 0; i < call->num_results; ++i) {
    loom_tensor_t* output = context->outputs[i];
    context->outputs[i] = NULL;
    if (error) {
      loom_tensor_release(output);
    } else if (call->results_owned) {
      loom_async_value_t* result = call->results[i];
      call->results[i] = NULL;
      *(loom_tensor_t**)loom_async_value_payload(result) = output;
      loom__async_value_set_available_and_release(result);
    } else {
      // Inline: the value was made by this Execute and nobody sees it yet.
      *(loom_tensor_t**)loom_async_value_payload(call->results[i]) = output;
      loom__async_value_set_available_unshared(call->results[i]);
    }
  }
  return error;
}

LOOM_DEFINE_SMALL_VECTOR(output_vector, loom_tensor_t*, kCpuInlineArity)

static loom_status_t run_tf_kernel(const cpu_call_t* call) {
  loom_allocator_t allocator = call->op->runtime->allocator;
  output_vector_t outputs;
  output_vector_initialize(&outputs);
  if (LOOM_UNLIKELY(call->num_results > kCpuInlineArity)) {
    LOOM_RETURN_IF_ERROR(
        output_vector_reserve(&outputs, allocator, (size_t)call->num_results));
  }
  loom_tensor_t** output_data = output_vector_data(&outputs);
  // Most ops have one or two results: two stores rather than a memset
  // (the array holds at least two).
  output_data[0] = NULL;
  output_data[1] = NULL;
  for (int32_t i = 2; i < call->num_results; ++i) output_data[i] = NULL;
  loom_kernel_context_t context;
  initialize_context(call, &context, output_data);
  call->spec->kernel->compute(call->spec->instance, &context);
  loom_status_t status = finish_tf_kernel(call, &context);
  output_vector_deinitialize(&outputs, allocator);
  return status;
}

loom_status_t loom__cpu_call_run(const cpu_call_t* call) {
  loom_status_t status =
      call->op->native ? run_native(call) : run_tf_kernel(call);
  if (status) return loom__cpu_annotate(status, call->op_name);
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Asynchronous TensorFlow kernels
//===----------------------------------------------------------------------===//

typedef struct async_call_t {
  cpu_call_t call;
  loom_kernel_context_t context;
  loom_kernel_done_t done;
  void (*on_done)(void* arg, loom_status_t error);
  void* on_done_arg;
  loom_tensor_t* outputs[];
} async_call_t;

static void async_kernel_done(void* arg) {
  async_call_t* record = arg;
  loom_status_t error = finish_tf_kernel(&record->call, &record->context);
  if (error) error = loom__cpu_annotate(error, record->call.op_name);
  void (*on_done)(void*, loom_status_t) = record->on_done;
  void* on_done_arg = record->on_done_arg;
  loom_allocator_free(record->call.op->runtime->allocator, record);
  on_done(on_done_arg, error);
}

void loom__cpu_call_run_async(const cpu_call_t* call,
                              void (*done)(void* arg, loom_status_t error),
                              void* arg) {
  async_call_t* record = NULL;
  loom_status_t status = loom_allocator_calloc(
      call->op->runtime->allocator,
      sizeof(*record) + sizeof(loom_tensor_t*) * (size_t)call->num_results,
      (void**)&record);
  if (status) {
    done(arg, loom__cpu_annotate(status, call->op_name));
    return;
  }
  record->call = *call;
  record->on_done = done;
  record->on_done_arg = arg;
  record->done.fn = async_kernel_done;
  record->done.arg = record;
  initialize_context(&record->call, &record->context, record->outputs);
  call->spec->kernel->compute_async(call->spec->instance, &record->context,
                                    &record->done);
}
