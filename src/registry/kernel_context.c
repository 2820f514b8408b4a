// Kernel construction and compute contexts: outputs, forwarding, failures.

#include "registry/kernel_context.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include "host/host_context_internal.h"
#include "loom/op_signature.h"
#include "tensor/tensor_internal.h"

// The counters live in the host context the kernel runs on.
static void count_host_output(loom_host_context_t* host, bool forwarded) {
  loom__kernel_counters_t* counters = &host->kernel_counters;
  atomic_fetch_add_explicit(
      forwarded ? &counters->forwarded_buffers : &counters->allocated_outputs,
      1, memory_order_relaxed);
}

static void count_output(const loom_kernel_context_t* context, bool forwarded) {
  loom__kernel_counters_t* counters = &context->host->kernel_counters;
  atomic_fetch_add_explicit(
      forwarded ? &counters->forwarded_buffers : &counters->allocated_outputs,
      1, memory_order_relaxed);
}

loom_kernel_statistics_t loom_kernel_statistics(void) {
  loom_kernel_statistics_t statistics;
  loom__host_context_total_kernel_counters(&statistics.forwarded_buffers,
                                           &statistics.allocated_outputs);
  return statistics;
}

loom_kernel_statistics_t loom_host_context_kernel_statistics(
    const loom_host_context_t* host) {
  loom_kernel_statistics_t statistics = {0, 0};
  if (!host) return statistics;
  loom__kernel_counters_t* counters =
      &((loom_host_context_t*)host)->kernel_counters;
  statistics.forwarded_buffers = atomic_load(&counters->forwarded_buffers);
  statistics.allocated_outputs = atomic_load(&counters->allocated_outputs);
  return statistics;
}

void loom__kernel_context_fail(loom_kernel_context_t* context,
                               loom_status_t status) {
  if (!status) return;
  if (context->status) {
    loom_status_free(status);
    return;
  }
  context->status = status;
}

void loom__kernel_construction_fail(loom_kernel_construction_t* construction,
                                    loom_status_t status) {
  if (!status) return;
  if (construction->status) {
    loom_status_free(status);
    return;
  }
  construction->status = status;
}

static loom_status_t check_output_index(const loom_kernel_context_t* context,
                                        int32_t index) {
  if (index < 0 || index >= context->num_outputs) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "%s: output index %d is outside [0, %d)",
                            context->op->name, index, context->num_outputs);
  }
  return loom_ok_status();
}

static loom_status_t check_output_dtype(const loom_kernel_context_t* context,
                                        int32_t index, loom_dtype_t dtype) {
  loom_dtype_t expected = context->output_dtypes[index];
  if (dtype != expected) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: output %d must be of type %s, the kernel produced %s",
        context->op->name, index, loom_dtype_name(expected),
        loom_dtype_name(dtype));
  }
  return loom_ok_status();
}

loom_status_t loom__kernel_context_set_output(loom_kernel_context_t* context,
                                              int32_t index,
                                              loom_tensor_t* tensor) {
  LOOM_RETURN_IF_ERROR(check_output_index(context, index));
  if (!tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: output %d: the tensor is NULL",
                            context->op->name, index);
  }
  LOOM_RETURN_IF_ERROR(
      check_output_dtype(context, index, loom_tensor_dtype(tensor)));
  loom_tensor_retain(tensor);
  loom_tensor_release(context->outputs[index]);
  context->outputs[index] = tensor;
  return loom_ok_status();
}

// The output's tensor stays the context's; `kernel_reference` adds one for
// the caller (TensorFlow's API hands out TF_Tensors the kernel deletes).
static loom_status_t allocate_output(loom_kernel_context_t* context,
                                     int32_t index, loom_dtype_t dtype,
                                     const loom_shape_t* shape,
                                     bool kernel_reference,
                                     loom_tensor_t** out_tensor);

loom_status_t loom__kernel_context_allocate_output(
    loom_kernel_context_t* context, int32_t index, loom_dtype_t dtype,
    const loom_shape_t* shape, loom_tensor_t** out_tensor) {
  return allocate_output(context, index, dtype, shape, true, out_tensor);
}

// allocate_output once `index` and `dtype` are known to be the output's;
// `count` is the shape's element count when the caller knows it, else -1.
static loom_status_t allocate_checked_output(loom_kernel_context_t* context,
                                             int32_t index, loom_dtype_t dtype,
                                             const loom_shape_t* shape,
                                             int64_t count,
                                             bool kernel_reference,
                                             loom_tensor_t** out_tensor) {
  loom_tensor_t* tensor = NULL;
  loom_tensor_t* reuse =
      context->reuse_outputs ? context->reuse_outputs[index] : NULL;
  if (reuse && loom_tensor_dtype(reuse) == dtype &&
      loom_tensor_kind(reuse) == LOOM_TENSOR_DENSE &&
      loom_shape_equal(loom_tensor_shape(reuse), shape) &&
      loom_tensor_is_forwardable(reuse)) {
    loom_tensor_retain(reuse);
    loom_tensor_release(context->outputs[index]);
    context->outputs[index] = reuse;
    if (kernel_reference) loom_tensor_retain(reuse);
    *out_tensor = reuse;
    return loom_ok_status();
  }
  loom_status_t status =
      dtype == LOOM_DTYPE_STRING
          ? loom_tensor_create_string(context->allocator, shape, &tensor)
      : count >= 0 ? loom__tensor_create_dense_counted(
                         &context->allocator, dtype, shape, count, &tensor)
                   : loom__tensor_create_dense(&context->allocator, dtype,
                                               shape, &tensor);
  if (status) {
    return loom_status_annotate(status, "%s: allocating output %d",
                                context->op->name, index);
  }
  loom_tensor_t* previous = context->outputs[index];
  if (LOOM_UNLIKELY(previous != NULL)) loom_tensor_release(previous);
  context->outputs[index] = tensor;
  if (kernel_reference) loom_tensor_retain(tensor);
  count_output(context, false);
  *out_tensor = tensor;
  return loom_ok_status();
}

static loom_status_t allocate_output(loom_kernel_context_t* context,
                                     int32_t index, loom_dtype_t dtype,
                                     const loom_shape_t* shape,
                                     bool kernel_reference,
                                     loom_tensor_t** out_tensor) {
  *out_tensor = NULL;
  LOOM_RETURN_IF_ERROR(check_output_index(context, index));
  LOOM_RETURN_IF_ERROR(check_output_dtype(context, index, dtype));
  return allocate_checked_output(context, index, dtype, shape, -1,
                                 kernel_reference, out_tensor);
}

static loom_status_t forward_or_allocate(
    loom_kernel_context_t* context, const int* candidates, int num_candidates,
    int32_t output_index, const loom_shape_t* shape, bool kernel_reference,
    int* out_forwarded, loom_tensor_t** out_tensor);

loom_status_t loom__kernel_context_forward_or_allocate(
    loom_kernel_context_t* context, const int* candidates, int num_candidates,
    int32_t output_index, const loom_shape_t* shape, int* out_forwarded,
    loom_tensor_t** out_tensor) {
  return forward_or_allocate(context, candidates, num_candidates, output_index,
                             shape, true, out_forwarded, out_tensor);
}

static loom_status_t forward_or_allocate(
    loom_kernel_context_t* context, const int* candidates, int num_candidates,
    int32_t output_index, const loom_shape_t* shape, bool kernel_reference,
    int* out_forwarded, loom_tensor_t** out_tensor) {
  *out_tensor = NULL;
  if (out_forwarded) *out_forwarded = -1;
  LOOM_RETURN_IF_ERROR(check_output_index(context, output_index));
  loom_dtype_t dtype = context->output_dtypes[output_index];
  int64_t count = -1;  // counted once an input may be reused
  for (int c = 0; c < num_candidates; ++c) {
    int i = candidates[c];
    if (i < 0 || i >= context->num_inputs) {
      return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                              "%s: forwarding candidate input %d is outside "
                              "[0, %d)",
                              context->op->name, i, context->num_inputs);
    }
    if (i >= 64 || !(context->owned_inputs & ((uint64_t)1 << i))) continue;
    if (count < 0) count = loom_shape_num_elements(shape);
    loom_tensor_t* input = context->inputs[i];
    if (loom_tensor_kind(input) != LOOM_TENSOR_DENSE ||
        loom_tensor_dtype(input) != dtype ||
        loom_tensor_num_elements(input) != count ||
        !loom_tensor_is_forwardable(input)) {
      continue;
    }
    loom_tensor_t* output = NULL;
    if (loom_shape_equal(loom_tensor_shape(input), shape)) {
      loom_tensor_retain(input);
      output = input;
    } else {
      // The input may be a view from an offset into its buffer.
      loom_buffer_t* buffer = loom_tensor_buffer(input);
      size_t offset = (size_t)((const char*)loom_tensor_data(input) -
                               (const char*)loom_buffer_data(buffer));
      LOOM_RETURN_IF_ERROR(loom_tensor_create_dense_in_buffer(
          context->allocator, dtype, shape, buffer, offset, &output));
    }
    loom_tensor_release(context->outputs[output_index]);
    context->outputs[output_index] = output;
    if (kernel_reference) loom_tensor_retain(output);
    count_output(context, true);
    if (out_forwarded) *out_forwarded = i;
    *out_tensor = output;
    return loom_ok_status();
  }
  return allocate_checked_output(context, output_index, dtype, shape, -1,
                                 kernel_reference, out_tensor);
}

loom_status_t loom__kernel_context_forward_or_allocate_same(
    loom_kernel_context_t* context, const int32_t* candidates,
    int32_t num_candidates, const loom_shape_t* shape, int64_t count,
    loom_tensor_t** out_tensor) {
  for (int32_t c = 0; c < num_candidates; ++c) {
    int32_t i = candidates[c];
    if (!(context->owned_inputs & ((uint64_t)1 << i))) continue;
    loom_tensor_t* input = context->inputs[i];
    if (loom_tensor_kind(input) != LOOM_TENSOR_DENSE ||
        !loom_tensor_is_forwardable(input)) {
      continue;
    }
    loom_tensor_retain(input);
    loom_tensor_release(context->outputs[0]);
    context->outputs[0] = input;
    count_output(context, true);
    *out_tensor = input;
    return loom_ok_status();
  }
  return allocate_checked_output(context, 0, context->output_dtypes[0], shape,
                                 count, false, out_tensor);
}

//===----------------------------------------------------------------------===//
// Direct entries
//===----------------------------------------------------------------------===//

enum { kMaxDirectEntries = 64 };

// compute -> direct, appended under the lock; an entry is published (for
// readers without the lock) by the count that covers it.
static struct {
  loom_kernel_compute_fn_t compute;
  loom__kernel_direct_fn_t direct;
} g_direct[kMaxDirectEntries];
static _Atomic int32_t g_direct_count;
static pthread_mutex_t g_direct_mutex = PTHREAD_MUTEX_INITIALIZER;

void loom__kernel_set_direct_entry(loom_kernel_compute_fn_t compute,
                                   loom__kernel_direct_fn_t direct) {
  pthread_mutex_lock(&g_direct_mutex);
  int32_t count = atomic_load_explicit(&g_direct_count, memory_order_relaxed);
  bool known = false;
  for (int32_t i = 0; i < count && !known; ++i) {
    known = g_direct[i].compute == compute;
  }
  // Registered once per kernel; a full table only costs the short cut.
  if (!known && count < kMaxDirectEntries) {
    g_direct[count].compute = compute;
    g_direct[count].direct = direct;
    atomic_store_explicit(&g_direct_count, count + 1, memory_order_release);
  }
  pthread_mutex_unlock(&g_direct_mutex);
}

loom__kernel_direct_fn_t loom__kernel_direct_entry(
    loom_kernel_compute_fn_t compute) {
  int32_t count = atomic_load_explicit(&g_direct_count, memory_order_acquire);
  for (int32_t i = 0; compute && i < count; ++i) {
    if (g_direct[i].compute == compute) return g_direct[i].direct;
  }
  return NULL;
}

loom_status_t loom__kernel_direct_forward_or_allocate(
    const loom__kernel_direct_call_t* call, const int32_t* candidates,
    int32_t num_candidates, int64_t count, loom_tensor_t** out_tensor) {
  if (call->into) {
    *out_tensor = call->into;
    return loom_ok_status();
  }
  for (int32_t c = 0; c < num_candidates; ++c) {
    int32_t i = candidates[c];
    if (i >= 64 || !(call->owned_inputs & ((uint64_t)1 << i))) continue;
    loom_tensor_t* input = call->inputs[i];
    if (loom_tensor_kind(input) != LOOM_TENSOR_DENSE ||
        !loom_tensor_is_forwardable(input)) {
      continue;
    }
    loom_tensor_retain(input);
    count_host_output(call->host, true);
    *out_tensor = input;
    return loom_ok_status();
  }
  if (call->reuse && loom_tensor_is_forwardable(call->reuse)) {
    loom_tensor_retain(call->reuse);
    *out_tensor = call->reuse;
    return loom_ok_status();
  }
  loom_status_t status = loom__tensor_create_dense_counted(
      &call->allocator, call->output->dtype, &call->output->shape, count,
      out_tensor);
  if (status) return loom_status_annotate(status, "allocating output 0");
  count_host_output(call->host, false);
  return loom_ok_status();
}

bool loom__kernel_context_is_host_memory(const loom_kernel_context_t* context,
                                         bool output, int32_t index) {
  const loom_kernel_def_t* kernel = context->kernel;
  if (!kernel) return false;
  for (int32_t i = 0; i < kernel->num_host_memory_args; ++i) {
    int32_t start = 0, stop = 0;
    loom_status_t status =
        loom_op_def_arg_range(context->op, context->attrs, output,
                              kernel->host_memory_args[i], &start, &stop);
    if (status) {
      loom_status_free(status);
      continue;
    }
    if (index >= start && index < stop) return true;
  }
  // Loom's only device is the host: everything is in host memory.
  return strcmp(kernel->device_type, LOOM_DEVICE_CPU) == 0;
}

//===----------------------------------------------------------------------===//
// The native kernel API
//===----------------------------------------------------------------------===//

const loom_op_attrs_t* loom_kernel_construction_attrs(
    const loom_kernel_construction_t* ctx) {
  return ctx ? ctx->attrs : NULL;
}

void loom_kernel_construction_fail(loom_kernel_construction_t* ctx,
                                   loom_status_t status) {
  if (!ctx) {
    loom_status_free(status);
    return;
  }
  loom__kernel_construction_fail(ctx, status);
}

const loom_op_def_t* loom_kernel_context_op(const loom_kernel_context_t* ctx) {
  return ctx ? ctx->op : NULL;
}

const loom_op_attrs_t* loom_kernel_context_attrs(
    const loom_kernel_context_t* ctx) {
  return ctx ? ctx->attrs : NULL;
}

int32_t loom_kernel_context_num_inputs(const loom_kernel_context_t* ctx) {
  return ctx ? ctx->num_inputs : 0;
}

int32_t loom_kernel_context_num_outputs(const loom_kernel_context_t* ctx) {
  return ctx ? ctx->num_outputs : 0;
}

loom_tensor_t* loom_kernel_context_input(const loom_kernel_context_t* ctx,
                                         int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_inputs) return NULL;
  return ctx->inputs[index];
}

loom_dtype_t loom_kernel_context_output_dtype(const loom_kernel_context_t* ctx,
                                              int32_t index) {
  if (!ctx || index < 0 || index >= ctx->num_outputs) {
    return LOOM_DTYPE_INVALID;
  }
  return ctx->output_dtypes[index];
}

static loom_status_t check_context(const loom_kernel_context_t* ctx,
                                   const void* out, const char* function) {
  if (!ctx || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            function, !ctx ? "ctx" : "out_tensor");
  }
  return loom_ok_status();
}

loom_status_t loom_kernel_context_allocate_output(loom_kernel_context_t* ctx,
                                                  int32_t index,
                                                  const loom_shape_t* shape,
                                                  loom_tensor_t** out_tensor) {
  LOOM_RETURN_IF_ERROR(
      check_context(ctx, out_tensor, "loom_kernel_context_allocate_output"));
  *out_tensor = NULL;
  LOOM_RETURN_IF_ERROR(check_output_index(ctx, index));
  if (!shape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: output %d: the shape is NULL", ctx->op->name,
                            index);
  }
  return allocate_output(ctx, index, ctx->output_dtypes[index], shape, false,
                         out_tensor);
}

loom_status_t loom_kernel_context_forward_or_allocate(
    loom_kernel_context_t* ctx, const int32_t* candidates,
    int32_t num_candidates, int32_t index, const loom_shape_t* shape,
    int32_t* out_forwarded, loom_tensor_t** out_tensor) {
  LOOM_RETURN_IF_ERROR(check_context(
      ctx, out_tensor, "loom_kernel_context_forward_or_allocate"));
  *out_tensor = NULL;
  if (out_forwarded) *out_forwarded = -1;
  if ((num_candidates > 0 && !candidates) || num_candidates < 0 || !shape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: invalid candidates or shape", ctx->op->name);
  }
  int forwarded = -1;
  LOOM_RETURN_IF_ERROR(forward_or_allocate(ctx, (const int*)candidates,
                                           num_candidates, index, shape, false,
                                           &forwarded, out_tensor));
  if (out_forwarded) *out_forwarded = forwarded;
  return loom_ok_status();
}

loom_status_t loom_kernel_context_set_output(loom_kernel_context_t* ctx,
                                             int32_t index,
                                             loom_tensor_t* tensor) {
  if (!ctx) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_kernel_context_set_output: ctx is NULL");
  }
  return loom__kernel_context_set_output(ctx, index, tensor);
}

void loom_kernel_context_fail(loom_kernel_context_t* ctx,
                              loom_status_t status) {
  if (!ctx) {
    loom_status_free(status);
    return;
  }
  loom__kernel_context_fail(ctx, status);
}

loom_allocator_t loom_kernel_context_allocator(
    const loom_kernel_context_t* ctx) {
  return ctx ? ctx->allocator : loom_allocator_default();
}

loom_host_context_t* loom_kernel_context_host(
    const loom_kernel_context_t* ctx) {
  return ctx ? ctx->host : NULL;
}

const char* loom_kernel_context_device(const loom_kernel_context_t* ctx) {
  return ctx ? ctx->device : NULL;
}

loom_resource_manager_t* loom_kernel_context_resources(
    const loom_kernel_context_t* ctx) {
  return ctx ? loom_host_context_resources(ctx->host) : NULL;
}
