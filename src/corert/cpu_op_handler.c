// The cpu op handler (TFRT's CpuOpHandler): runs ops on the host.
//
// Execute runs the op's metadata function (a native one, or the registered
// TensorFlow shape function) on the calling thread, so invalid shapes,
// dtypes and attributes are reported at once. An op whose arguments are all
// available, that is cheap and has no chain then runs inline: its kernel
// computes before Execute returns, with no record, attribute copy or string
// lookup — the prepared op caches the kernel per input dtypes. Everything
// else goes through a dispatch record (cpu_dispatch.c).

#include "loom/cpu_op_handler.h"

#include <string.h>

#include "base/rwlock.h"
#include "corert/cpu_op_handler_internal.h"
#include "loom/host_context.h"

typedef cpu_native_op_t native_op_t;

//===----------------------------------------------------------------------===//
// Native op registry
//===----------------------------------------------------------------------===//

static cpu_state_t* cpu_state_of(loom_op_handler_t* handler) {
  return handler->state;
}

static native_op_t* find_native(cpu_state_t* cpu, const char* name) {
  uint64_t head = 0;
  pthread_rwlock_rdlock(&cpu->lock);
  native_op_t* found = NULL;
  if (loom__hash_map_find(&cpu->natives, loom__hash_bytes(name, strlen(name)),
                          &head)) {
    for (native_op_t* op = (native_op_t*)(uintptr_t)head; op; op = op->next) {
      if (strcmp(op->name, name) == 0) {
        found = op;
        break;
      }
    }
  }
  pthread_rwlock_unlock(&cpu->lock);
  return found;
}

static bool is_cpu_handler(const loom_op_handler_t* handler);

static loom_status_t check_cpu(loom_op_handler_t* cpu, const char* function) {
  if (!cpu || !is_cpu_handler(cpu)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the handler is not a cpu handler", function);
  }
  return loom_ok_status();
}

// Finds or adds the native entry for `name`.
static loom_status_t native_entry(cpu_state_t* cpu, const char* name,
                                  native_op_t** out) {
  uint64_t hash = loom__hash_bytes(name, strlen(name));
  uint64_t head = 0;
  loom__hash_map_find(&cpu->natives, hash, &head);
  for (native_op_t* op = (native_op_t*)(uintptr_t)head; op; op = op->next) {
    if (strcmp(op->name, name) == 0) {
      *out = op;
      return loom_ok_status();
    }
  }
  native_op_t* op = NULL;
  size_t length = strlen(name);
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      cpu->allocator, sizeof(*op) + length + 1, (void**)&op));
  op->name = (char*)(op + 1);
  memcpy(op->name, name, length + 1);
  op->next = (native_op_t*)(uintptr_t)head;
  loom_status_t status =
      loom__hash_map_insert(&cpu->natives, hash, (uint64_t)(uintptr_t)op);
  if (status) {
    loom_allocator_free(cpu->allocator, op);
    return status;
  }
  *out = op;
  return loom_ok_status();
}

loom_status_t loom_cpu_op_handler_add_op(loom_op_handler_t* cpu,
                                         const char* op_name,
                                         loom_cpu_dispatch_fn_t dispatch,
                                         uint32_t flags) {
  LOOM_RETURN_IF_ERROR(check_cpu(cpu, "loom_cpu_op_handler_add_op"));
  if (!op_name || !dispatch) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_add_op: %s is NULL",
                            !op_name ? "op_name" : "dispatch");
  }
  cpu_state_t* state = cpu_state_of(cpu);
  pthread_rwlock_wrlock(&state->lock);
  native_op_t* op = NULL;
  loom_status_t status = native_entry(state, op_name, &op);
  if (!status && op->dispatch) {
    status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "op '%s' is already registered on the cpu "
                              "handler",
                              op_name);
  }
  if (!status) {
    op->dispatch = dispatch;
    op->flags = flags;
  }
  pthread_rwlock_unlock(&state->lock);
  return status;
}

loom_status_t loom_cpu_op_handler_add_metadata_fn(
    loom_op_handler_t* cpu, const char* op_name,
    loom_cpu_metadata_fn_t metadata_fn) {
  LOOM_RETURN_IF_ERROR(check_cpu(cpu, "loom_cpu_op_handler_add_metadata_fn"));
  if (!op_name || !metadata_fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_add_metadata_fn: %s is NULL",
                            !op_name ? "op_name" : "metadata_fn");
  }
  cpu_state_t* state = cpu_state_of(cpu);
  pthread_rwlock_wrlock(&state->lock);
  native_op_t* op = NULL;
  loom_status_t status = native_entry(state, op_name, &op);
  if (!status && op->metadata) {
    status =
        loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                         "op '%s' already has a metadata function", op_name);
  }
  if (!status) op->metadata = metadata_fn;
  pthread_rwlock_unlock(&state->lock);
  return status;
}

loom_status_t loom_cpu_set_result(loom_async_value_t* result,
                                  loom_tensor_t* tensor) {
  if (!result || !tensor) {
    loom_tensor_release(tensor);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_set_result: %s is NULL",
                            !result ? "result" : "tensor");
  }
  if (loom_async_value_type(result) != &loom_async_value_type_tensor ||
      loom_async_value_is_set(result)) {
    loom_tensor_release(tensor);
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_cpu_set_result: the result is not an unset "
                            "tensor value");
  }
  *(loom_tensor_t**)loom_async_value_payload(result) = tensor;
  return loom_async_value_set_available(result);
}

//===----------------------------------------------------------------------===//
// Prepare
//===----------------------------------------------------------------------===//

static void op_initialize(cpu_op_t* op, loom_op_handler_t* handler,
                          const native_op_t* native, const loom_op_def_t* def) {
  op->cpu = cpu_state_of(handler);
  op->runtime = handler->runtime;
  op->native = native;
  op->def = def;
  pthread_mutex_init(&op->specs_mutex, NULL);
  atomic_init(&op->num_specs, 0);
}

static void op_destroy(cpu_op_t* op) {
  int32_t count = atomic_load(&op->num_specs);
  for (int32_t i = 0; i < count; ++i) {
    loom__cpu_spec_destroy(op->cpu->allocator, op->specs[i]);
  }
  pthread_mutex_destroy(&op->specs_mutex);
  loom_allocator_free(op->cpu->allocator, op);
}

// Whether the op's kernels hold its state: a stateful op without a
// resource input (a random generator; a variable op's state is in the
// resource). Such an op keeps its kernels to itself: each prepared op has
// its own state, as each TensorFlow node has.
static bool kernel_holds_state(const loom_op_def_t* def) {
  if (!def || !def->is_stateful) return false;
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    if (def->inputs[i].dtype == LOOM_DTYPE_RESOURCE) return false;
  }
  return true;
}

// The shared entry of `op_name` with this native entry and definition (a
// native op registered since makes a new entry; the old one stays with
// the prepared ops that use it), or NULL.
static cpu_op_t* find_op_locked(cpu_state_t* cpu, uint64_t hash,
                                const char* op_name, const native_op_t* native,
                                const loom_op_def_t* def) {
  uint64_t head = 0;
  loom__hash_map_find(&cpu->ops, hash, &head);
  for (cpu_op_t* op = (cpu_op_t*)(uintptr_t)head; op; op = op->next) {
    if (op->native == native && op->def == def &&
        strcmp(op->name, op_name) == 0) {
      return op;
    }
  }
  return NULL;
}

static loom_status_t cpu_prepare(loom_op_handler_t* handler,
                                 const char* op_name, const loom_op_def_t* def,
                                 void** out_op_data) {
  cpu_state_t* cpu = cpu_state_of(handler);
  native_op_t* native = find_native(cpu, op_name);
  if (native && !native->dispatch) native = NULL;  // metadata only
  size_t length = strlen(op_name);
  uint64_t hash = loom__hash_bytes(op_name, length);
  uint64_t head = 0;
  if (!kernel_holds_state(def)) {
    pthread_mutex_lock(&cpu->ops_mutex);
    cpu_op_t* found = find_op_locked(cpu, hash, op_name, native, def);
    pthread_mutex_unlock(&cpu->ops_mutex);
    if (found) {
      *out_op_data = found;
      return loom_ok_status();
    }
  }
  if (!native && (!def || loom_kernel_registry_count(handler->runtime->kernels,
                                                     op_name) == 0)) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "op '%s' has no cpu kernel",
                            op_name);
  }
  cpu_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      cpu->allocator, sizeof(*op) + length + 1, (void**)&op));
  char* name = (char*)(op + 1);
  memcpy(name, op_name, length + 1);
  op->name = name;
  op_initialize(op, handler, native, def);
  if (kernel_holds_state(def)) {
    op->is_private = true;
    *out_op_data = op;
    return loom_ok_status();
  }
  pthread_mutex_lock(&cpu->ops_mutex);
  // Another thread may have added it meanwhile: then its entry is used.
  cpu_op_t* raced = find_op_locked(cpu, hash, op_name, native, def);
  loom_status_t status = loom_ok_status();
  if (!raced) {
    loom__hash_map_find(&cpu->ops, hash, &head);
    op->next = (cpu_op_t*)(uintptr_t)head;
    status = loom__hash_map_insert(&cpu->ops, hash, (uint64_t)(uintptr_t)op);
  }
  pthread_mutex_unlock(&cpu->ops_mutex);
  if (raced || status) op_destroy(op);
  if (status) return status;
  *out_op_data = raced ? raced : op;
  return loom_ok_status();
}

// The handler owns its shared ops (cpu_destroy frees them); a private one
// goes with its prepared op.
static void cpu_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  cpu_op_t* op = data;
  if (op && op->is_private) op_destroy(op);
}

//===----------------------------------------------------------------------===//
// Execute
//===----------------------------------------------------------------------===//

// One invocation's arrays: on the stack up to kCpuInlineArity arguments and
// results, else in one heap block.
typedef struct execute_frame_t {
  loom_allocator_t allocator;
  void* heap;
  loom_tensor_metadata_t* inputs;   // argument metadata (when known)
  loom_tensor_metadata_t* results;  // result metadata (when known)
  loom_dtype_t* dtypes;             // argument dtypes (when known)
  loom_tensor_t** tensors;          // argument tensors (NULL while unavailable)
  loom_tensor_metadata_t inline_inputs[kCpuInlineArity];
  loom_tensor_metadata_t inline_results[kCpuInlineArity];
  loom_dtype_t inline_dtypes[kCpuInlineArity];
  loom_tensor_t* inline_tensors[kCpuInlineArity];
} execute_frame_t;

static loom_status_t frame_initialize(execute_frame_t* frame,
                                      loom_allocator_t allocator, int32_t n,
                                      int32_t m) {
  frame->allocator = allocator;
  frame->heap = NULL;
  frame->inputs = frame->inline_inputs;
  frame->results = frame->inline_results;
  frame->dtypes = frame->inline_dtypes;
  frame->tensors = frame->inline_tensors;
  if (n <= kCpuInlineArity && m <= kCpuInlineArity) return loom_ok_status();
  size_t size = sizeof(loom_tensor_metadata_t) * (size_t)(n + m) +
                sizeof(loom_tensor_t*) * (size_t)n +
                sizeof(loom_dtype_t) * (size_t)n;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(allocator, size, &frame->heap));
  frame->inputs = frame->heap;
  frame->results = frame->inputs + n;
  frame->tensors = (loom_tensor_t**)(frame->results + m);
  frame->dtypes = (loom_dtype_t*)(frame->tensors + n);
  return loom_ok_status();
}

static void frame_deinitialize(execute_frame_t* frame) {
  if (frame->heap) loom_allocator_free(frame->allocator, frame->heap);
}

// An argument (or the chain) is an error: the op does not run and its
// results carry the same error, reported where it arose, not here.
static loom_status_t propagate_error(loom_op_invocation_t* invocation,
                                     loom_status_t error) {
  loom_status_free(
      loom_op_invocation_fail(invocation, loom_status_clone(error), false));
  return loom_ok_status();
}

// Gives ops that do not take SCALAR host tensors dense ones. A converted
// input is owned (its argument handle released now).
static loom_status_t convert_scalars(const cpu_op_t* op,
                                     loom_allocator_t allocator,
                                     loom_op_invocation_t* invocation,
                                     loom_tensor_t** tensors, uint64_t* owned) {
  if (op->native && (op->native->flags & LOOM_CPU_OP_ALLOWS_SCALAR)) {
    return loom_ok_status();
  }
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_t* tensor = tensors[i];
    if (loom_tensor_kind(tensor) != LOOM_TENSOR_SCALAR) continue;
    loom_tensor_t* dense = NULL;
    LOOM_RETURN_IF_ERROR(
        loom_tensor_convert_to_dense(allocator, tensor, &dense));
    if (invocation->arguments[i]) {
      loom_tensor_handle_release(invocation->arguments[i]);
      invocation->arguments[i] = NULL;
    } else {
      loom_tensor_release(tensor);
    }
    tensors[i] = dense;
    if (i < 64) *owned |= (uint64_t)1 << i;
  }
  return loom_ok_status();
}

// The steps of running an op inline, shared by the short path and
// run_inline.

// Makes the op's result handles, each over an unavailable value (returned
// in values): they come first, so that nothing can fail once the kernel
// has run. On failure none is left.
static inline loom_status_t create_results(
    loom_op_handler_t* handler, loom_op_invocation_t* invocation,
    const loom_tensor_metadata_t* result_metadata,
    loom_async_value_t** values) {
  int32_t m = invocation->num_results;
  int32_t made = 0;
  loom_status_t status = loom_ok_status();
  for (; made < m; ++made) {
    status = loom__tensor_handle_create_pending(
        handler, result_metadata ? &result_metadata[made] : NULL,
        &invocation->results[made], &values[made]);
    if (LOOM_UNLIKELY(status != NULL)) break;
  }
  if (LOOM_LIKELY(status == NULL)) return status;
  for (int32_t k = 0; k < made; ++k) {
    loom_tensor_handle_release(invocation->results[k]);
  }
  return status;
}

// The arguments' tensors (already read from their available values) move
// out of the handles nobody else holds (the kernel may then forward them;
// their slots become NULL); the others' are borrowed. Returns the
// owned-inputs mask of loom_cpu_dispatch_context_t.
static inline uint64_t take_arguments(loom_op_invocation_t* invocation) {
  uint64_t owned = 0;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    if (loom__tensor_handle_take_tensor(invocation->arguments[i])) {
      invocation->arguments[i] = NULL;
      if (i < 64) owned |= (uint64_t)1 << i;
    }
  }
  return owned;
}

// After the kernel: drops the arguments (their handles, or the tensors
// taken from them) and, when it failed, reports `status` once and gives it
// to every result it did not set.
static inline void finish_inline(loom_runtime_t* runtime,
                                 loom_op_invocation_t* invocation,
                                 loom_tensor_t** tensors,
                                 loom_async_value_t** values,
                                 loom_status_t status) {
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    if (invocation->arguments[i]) {
      loom_tensor_handle_release(invocation->arguments[i]);
      invocation->arguments[i] = NULL;
    } else {
      loom_tensor_release(tensors[i]);
    }
  }
  if (LOOM_LIKELY(status == NULL)) return;
  loom__runtime_report(runtime, invocation->location, invocation->op->name,
                       status);
  for (int32_t i = 0; i < invocation->num_results; ++i) {
    if (loom_async_value_is_set(values[i])) continue;
    loom_status_ignore(
        loom_async_value_set_error(values[i], loom_status_clone(status)));
  }
  loom_status_free(status);
}

// Runs the op's kernel on available inputs, inline: a native op's dispatch
// function (`native`: op->native, or NULL where the caller knows it is a
// TensorFlow op) straight from its result metadata, else (a TensorFlow
// kernel, or a native op whose result metadata is not known) through a call
// record. Failures come back annotated with the op's name.
static inline loom_status_t run_kernel(
    loom_runtime_t* runtime, loom_op_invocation_t* invocation, cpu_op_t* op,
    const native_op_t* native, cpu_kernel_spec_t* spec, loom_tensor_t** tensors,
    uint64_t owned, const loom_tensor_metadata_t* result_metadata,
    loom_async_value_t** values) {
  if (native && result_metadata) {
    loom_cpu_dispatch_context_t context = {runtime->host,
                                           runtime->allocator,
                                           invocation->location,
                                           tensors,
                                           invocation->num_arguments,
                                           invocation->attrs,
                                           result_metadata,
                                           values,
                                           invocation->num_results,
                                           owned};
    loom_status_t status = native->dispatch(&context);
    if (LOOM_UNLIKELY(status != NULL)) {
      status = loom__cpu_annotate(status, invocation->op->name);
    }
    return status;
  }
  cpu_call_t call = {op,
                     invocation->op->name,
                     invocation->location,
                     invocation->attrs,
                     spec,
                     tensors,
                     invocation->num_arguments,
                     owned,
                     result_metadata,
                     values,
                     invocation->num_results,
                     false};
  return loom__cpu_call_run(&call);
}

// Runs the op now: its arguments are available, it is cheap and its kernel
// synchronous. Dispatch failures go to the result handles. tensors: the
// arguments' (read from their values); result_metadata: NULL when unknown.
static loom_status_t run_inline(loom_op_handler_t* handler,
                                loom_op_invocation_t* invocation, cpu_op_t* op,
                                cpu_kernel_spec_t* spec,
                                loom_tensor_t** tensors,
                                const loom_tensor_metadata_t* result_metadata) {
  loom_runtime_t* runtime = handler->runtime;
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  loom_async_value_t* stack_values[kCpuInlineArity];
  loom_async_value_t** values = stack_values;
  loom_status_t status = loom_ok_status();
  if (LOOM_UNLIKELY(m > kCpuInlineArity)) {
    status = loom_allocator_malloc(runtime->allocator,
                                   sizeof(loom_async_value_t*) * (size_t)m,
                                   (void**)&values);
  }
  if (!status) {
    status = create_results(handler, invocation, result_metadata, values);
  }
  if (LOOM_UNLIKELY(status != NULL)) {
    if (values != stack_values) loom_allocator_free(runtime->allocator, values);
    return loom_op_invocation_fail(invocation, status, true);
  }
  loom__runtime_count_dispatch(runtime, true);
  uint64_t owned = take_arguments(invocation);
  bool scalars = false;
  for (int32_t i = 0; i < n; ++i) {
    scalars |= loom_tensor_kind(tensors[i]) == LOOM_TENSOR_SCALAR;
  }
  if (LOOM_UNLIKELY(scalars)) {
    status =
        convert_scalars(op, runtime->allocator, invocation, tensors, &owned);
  }
  if (!status) {
    status = run_kernel(runtime, invocation, op, op->native, spec, tensors,
                        owned, result_metadata, values);
  }
  finish_inline(runtime, invocation, tensors, values, status);
  if (values != stack_values) loom_allocator_free(runtime->allocator, values);
  return loom_ok_status();
}

// The short path: at most kCpuShortArity arguments and results, no chain,
// every argument an available dense host tensor and few elements in all,
// and either a native op with a metadata function or a TensorFlow op with a
// synchronous kernel: the common case of op-by-op execution. The steps of
// run_inline without its generality: no frame, no scalar conversion, no
// choice between inline and later. Returns false for any other op, having
// consumed nothing (for an asynchronous TensorFlow kernel, found only once
// its specialisation is, that specialisation is then cached, or built and
// dropped, and the general path gets it again).
enum { kCpuShortArity = 4 };

// Whether the op itself qualifies (its arguments are checked next).
static inline bool short_path_may_apply(const loom_op_invocation_t* invocation,
                                        const cpu_op_t* op) {
  const native_op_t* native = op->native;
  return (!native ||
          (native->metadata && !(native->flags & (LOOM_CPU_OP_SIDE_EFFECTING |
                                                  LOOM_CPU_OP_EXPENSIVE)))) &&
         invocation->num_arguments <= kCpuShortArity &&
         invocation->num_results <= kCpuShortArity &&
         !(invocation->chain && *invocation->chain);
}

// The arguments' metadata and tensors, when every one is an available
// dense host tensor and they are few elements in all.
static inline bool gather_short_arguments(
    const loom_runtime_t* runtime, const loom_op_invocation_t* invocation,
    loom_tensor_metadata_t* inputs, loom_tensor_t** tensors) {
  int64_t elements = 0;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_async_value_t* value = invocation->arguments[i]->value;
    if (!value || loom_async_value_state(value) != LOOM_ASYNC_VALUE_AVAILABLE) {
      return false;
    }
    loom_tensor_t* tensor = loom__tensor_of_value(value);
    if (loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE) return false;
    tensors[i] = tensor;
    inputs[i] = *loom_tensor_metadata(tensor);
    elements += loom_tensor_num_elements(tensor);
  }
  int64_t limit = runtime->inline_element_limit;
  return (limit >= 0 && elements <= limit) || runtime->synchronous;
}

// The short path once the results exist: the kernel runs on the arguments'
// tensors (none is scalar), then the arguments are dropped.
static inline void run_short(loom_runtime_t* runtime,
                             loom_op_invocation_t* invocation, cpu_op_t* op,
                             const native_op_t* native, cpu_kernel_spec_t* spec,
                             loom_tensor_t** tensors,
                             const loom_tensor_metadata_t* result_metadata,
                             loom_async_value_t** values) {
  loom__runtime_count_dispatch(runtime, true);
  uint64_t owned = take_arguments(invocation);
  loom_status_t status = run_kernel(runtime, invocation, op, native, spec,
                                    tensors, owned, result_metadata, values);
  finish_inline(runtime, invocation, tensors, values, status);
}

// A native op: its metadata function, then its dispatch function.
static bool execute_short_native(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation, cpu_op_t* op,
                                 loom_status_t* out_status) {
  loom_runtime_t* runtime = handler->runtime;
  const native_op_t* native = op->native;
  loom_tensor_metadata_t inputs[kCpuShortArity];
  loom_tensor_t* tensors[kCpuShortArity];
  if (!gather_short_arguments(runtime, invocation, inputs, tensors)) {
    return false;
  }
  loom_tensor_metadata_t results[kCpuShortArity];
  loom_status_t status =
      native->metadata(inputs, invocation->num_arguments, invocation->attrs,
                       results, invocation->num_results);
  if (LOOM_UNLIKELY(status != NULL)) {
    status = loom__cpu_annotate(status, invocation->op->name);
  }
  loom_async_value_t* values[kCpuShortArity];
  if (!status) status = create_results(handler, invocation, results, values);
  if (LOOM_UNLIKELY(status != NULL)) {
    *out_status = loom_op_invocation_fail(invocation, status, true);
    return true;
  }
  run_short(runtime, invocation, op, native, NULL, tensors, results, values);
  *out_status = loom_ok_status();
  return true;
}

// A TensorFlow op: its kernel specialised for the argument dtypes (cached),
// the op's shape function (remembered per input shapes), then the kernel,
// when it is synchronous.
static bool execute_short_kernel(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation, cpu_op_t* op,
                                 loom_status_t* out_status) {
  loom_runtime_t* runtime = handler->runtime;
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  loom_tensor_metadata_t inputs[kCpuShortArity];
  loom_tensor_t* tensors[kCpuShortArity];
  if (!gather_short_arguments(runtime, invocation, inputs, tensors)) {
    return false;
  }
  loom_dtype_t dtypes[kCpuShortArity];
  for (int32_t i = 0; i < n; ++i) dtypes[i] = inputs[i].dtype;
  cpu_kernel_spec_t* spec = NULL;
  bool spec_owned = false;
  loom_status_t status =
      loom__cpu_spec_get(op, dtypes, n, invocation->attrs, &spec, &spec_owned);
  if (!status && !loom__cpu_call_is_sync(spec)) {
    // An asynchronous kernel goes through a dispatch record.
    if (spec_owned) loom__cpu_spec_destroy(op->cpu->allocator, spec);
    return false;
  }
  loom_tensor_metadata_t results[kCpuShortArity];
  bool known = false;
  if (!status) {
    status =
        loom__cpu_spec_infer(op, spec, inputs, tensors, m, results, &known);
  }
  if (LOOM_UNLIKELY(status != NULL)) {
    status = loom__cpu_annotate(status, invocation->op->name);
  }
  const loom_tensor_metadata_t* result_metadata = known ? results : NULL;
  loom_async_value_t* values[kCpuShortArity];
  if (!status) {
    status = create_results(handler, invocation, result_metadata, values);
  }
  if (LOOM_UNLIKELY(status != NULL)) {
    if (spec_owned) loom__cpu_spec_destroy(op->cpu->allocator, spec);
    *out_status = loom_op_invocation_fail(invocation, status, true);
    return true;
  }
  run_short(runtime, invocation, op, NULL, spec, tensors, result_metadata,
            values);
  if (spec_owned) loom__cpu_spec_destroy(op->cpu->allocator, spec);
  *out_status = loom_ok_status();
  return true;
}

// Every other op (out of line, so the short path saves few registers).
static __attribute__((noinline)) loom_status_t execute_general(
    loom_op_handler_t* handler, loom_op_invocation_t* invocation,
    cpu_op_t* op) {
  loom_runtime_t* runtime = handler->runtime;
  const native_op_t* native = op->native;
  bool has_chain = invocation->chain && *invocation->chain;
  if (native && (native->flags & LOOM_CPU_OP_SIDE_EFFECTING) && !has_chain) {
    return loom_op_invocation_fail(
        invocation,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "op '%s' has side effects and needs a chain",
                         invocation->op->name),
        true);
  }
  if (has_chain && loom_async_value_is_error(*invocation->chain)) {
    return propagate_error(invocation,
                           loom_async_value_error(*invocation->chain));
  }
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  execute_frame_t frame;
  loom_status_t status = frame_initialize(&frame, runtime->allocator, n, m);
  if (status) return loom_op_invocation_fail(invocation, status, true);

  // What is known of the arguments now.
  bool all_known = true;
  bool all_ready = true;
  int64_t elements = 0;
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* handle = invocation->arguments[i];
    if (LOOM_UNLIKELY(!handle->value)) {
      frame_deinitialize(&frame);
      return loom_op_invocation_fail(
          invocation,
          loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                           "%s: argument %d lives on op handler '%s'; copy it "
                           "onto the cpu handler first",
                           invocation->op->name, i,
                           handle->handler->vtable->type_name),
          true);
    }
    loom_async_value_state_t state = loom_async_value_state(handle->value);
    if (state == LOOM_ASYNC_VALUE_ERROR) {
      frame_deinitialize(&frame);
      return propagate_error(invocation, loom_async_value_error(handle->value));
    }
    loom_tensor_t* tensor = state == LOOM_ASYNC_VALUE_AVAILABLE
                                ? loom__tensor_of_value(handle->value)
                                : NULL;
    frame.tensors[i] = tensor;
    if (LOOM_LIKELY(tensor != NULL)) {
      frame.inputs[i] = *loom_tensor_metadata(tensor);
      elements += loom_tensor_num_elements(tensor);
    } else if (handle->metadata_available) {
      all_ready = false;
      frame.inputs[i] = handle->metadata;
      elements += loom_shape_num_elements(&frame.inputs[i].shape);
    } else {
      all_ready = false;
      all_known = false;
    }
  }

  // The metadata function, synchronously: its errors are the caller's now.
  cpu_kernel_spec_t* spec = NULL;
  bool spec_owned = false;
  bool metadata_known = false;
  if (all_known && native && native->metadata) {
    status =
        native->metadata(frame.inputs, n, invocation->attrs, frame.results, m);
    metadata_known = !status;
  } else if (all_known && !native) {
    for (int32_t i = 0; i < n; ++i) frame.dtypes[i] = frame.inputs[i].dtype;
    status = loom__cpu_spec_get(op, frame.dtypes, n, invocation->attrs, &spec,
                                &spec_owned);
    if (!status) {
      status = loom__cpu_spec_infer(op, spec, frame.inputs, frame.tensors, m,
                                    frame.results, &metadata_known);
    }
  }
  if (status) {
    if (spec_owned) loom__cpu_spec_destroy(op->cpu->allocator, spec);
    frame_deinitialize(&frame);
    return loom_op_invocation_fail(
        invocation, loom__cpu_annotate(status, invocation->op->name), true);
  }

  int64_t limit = runtime->inline_element_limit;
  bool expensive = (native && (native->flags & LOOM_CPU_OP_EXPENSIVE)) ||
                   !all_known || limit < 0 || elements > limit;
  if (runtime->synchronous) expensive = false;
  if (all_ready && !has_chain && !expensive && loom__cpu_call_is_sync(spec)) {
    status = run_inline(handler, invocation, op, spec, frame.tensors,
                        metadata_known ? frame.results : NULL);
    if (spec_owned) loom__cpu_spec_destroy(op->cpu->allocator, spec);
  } else {
    status = loom__cpu_dispatch_later(handler, invocation, spec, spec_owned,
                                      metadata_known ? frame.results : NULL,
                                      expensive);
  }
  frame_deinitialize(&frame);
  return status;
}

static loom_status_t cpu_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation) {
  cpu_op_t* op = invocation->op->data;
  loom_status_t status = NULL;
  if (short_path_may_apply(invocation, op) &&
      (op->native ? execute_short_native(handler, invocation, op, &status)
                  : execute_short_kernel(handler, invocation, op, &status))) {
    return status;
  }
  return execute_general(handler, invocation, op);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static const char* cpu_device_name(const loom_op_handler_t* handler) {
  (void)handler;
  return "/job:localhost/replica:0/task:0/device:CPU:0";
}

static void cpu_destroy(void* opaque) {
  cpu_state_t* cpu = opaque;
  size_t cursor = 0;
  uint64_t head = 0;
  while (loom__hash_map_next(&cpu->natives, &cursor, NULL, &head)) {
    for (native_op_t* op = (native_op_t*)(uintptr_t)head; op;) {
      native_op_t* next = op->next;
      loom_allocator_free(cpu->allocator, op);
      op = next;
    }
  }
  loom__hash_map_deinitialize(&cpu->natives);
  cursor = 0;
  while (loom__hash_map_next(&cpu->ops, &cursor, NULL, &head)) {
    for (cpu_op_t* op = (cpu_op_t*)(uintptr_t)head; op;) {
      cpu_op_t* next = op->next;
      op_destroy(op);
      op = next;
    }
  }
  loom__hash_map_deinitialize(&cpu->ops);
  pthread_mutex_destroy(&cpu->ops_mutex);
  pthread_rwlock_destroy(&cpu->lock);
  loom_allocator_free(cpu->allocator, cpu);
}

static const loom_op_handler_vtable_t kCpuVtable = {
    sizeof(loom_op_handler_vtable_t),
    "cpu",
    cpu_prepare,
    cpu_release_op_data,
    cpu_execute,
    cpu_device_name,
    cpu_destroy,
};

static bool is_cpu_handler(const loom_op_handler_t* handler) {
  return handler->vtable->execute == kCpuVtable.execute;
}

loom_status_t loom__cpu_register_builtin_ops(loom_op_handler_t* cpu);

loom_status_t loom_cpu_op_handler_create(loom_runtime_t* runtime,
                                         loom_op_handler_t* fallback,
                                         loom_op_handler_t** out_handler) {
  if (!runtime || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cpu_op_handler_create: %s is NULL",
                            !runtime ? "runtime" : "out_handler");
  }
  *out_handler = NULL;
  cpu_state_t* cpu = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(runtime->allocator, sizeof(*cpu), (void**)&cpu));
  cpu->allocator = runtime->allocator;
  loom__rwlock_initialize(&cpu->lock);
  loom__hash_map_initialize(&cpu->natives, runtime->allocator);
  pthread_mutex_init(&cpu->ops_mutex, NULL);
  loom__hash_map_initialize(&cpu->ops, runtime->allocator);
  loom_op_handler_t* handler = NULL;
  loom_status_t status =
      loom_op_handler_create(runtime, &kCpuVtable, cpu, fallback, &handler);
  if (status) {
    cpu_destroy(cpu);
    return status;
  }
  status = loom__cpu_register_builtin_ops(handler);
  if (status) {
    loom_op_handler_release(handler);
    return status;
  }
  *out_handler = handler;
  return loom_ok_status();
}
