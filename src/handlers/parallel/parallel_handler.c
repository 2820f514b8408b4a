// The parallel handler (loom/parallel.h): its state, its tensors (one
// handle per component), and the execution of an op once per component,
// on the component threads, each component op placed explicitly on its
// device. Its own ops (copies, pack, unpack) are in parallel_copies.c.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/parallel/parallel_internal.h"

static void parallel_destroy(void* state);

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

static void shared_release(loom__parallel_t* shared) {
  if (!shared || atomic_fetch_sub(&shared->ref_count, 1) != 1) return;
  loom__parallel_threads_destroy(shared->threads);
  for (int32_t k = 0; k < shared->num_components; ++k) {
    if (shared->components) loom_op_handler_release(shared->components[k]);
    if (shared->devices) free(shared->devices[k]);
  }
  loom_allocator_free(shared->allocator, shared->components);
  loom_allocator_free(shared->allocator, shared->devices);
  free(shared->name);
  loom_allocator_free(shared->allocator, shared);
}

loom__parallel_t* loom__parallel_of(const loom_op_handler_t* handler) {
  if (!handler ||
      loom_op_handler_vtable(handler)->destroy != parallel_destroy) {
    return NULL;
  }
  return ((loom__parallel_state_t*)loom_op_handler_state(handler))->shared;
}

loom__parallel_tensor_t* loom__parallel_tensor_of(
    const loom_tensor_handle_t* handle) {
  if (!handle || !loom__parallel_of(loom_tensor_handle_handler(handle))) {
    return NULL;
  }
  return loom_tensor_handle_representation(handle);
}

static void parallel_destroy(void* opaque) {
  loom__parallel_state_t* state = opaque;
  loom__parallel_t* shared = state->shared;
  loom_allocator_t allocator = shared->allocator;
  loom_allocator_free(allocator, state);
  shared_release(shared);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

// The metadata of a parallel value: its components' when they agree; a
// dimension on which they differ is unknown, as is the rank when ranks
// differ.
static loom_status_t merged_metadata(loom_tensor_handle_t* const* components,
                                     int32_t n, bool wait,
                                     loom_tensor_metadata_t* out, bool* known) {
  *known = false;
  for (int32_t k = 0; k < n; ++k) {
    loom_tensor_metadata_t metadata;
    if (!wait && !loom_tensor_handle_metadata_available(components[k])) {
      return loom_ok_status();
    }
    loom_status_t status =
        loom_tensor_handle_wait_metadata(components[k], &metadata);
    if (status) {
      if (wait) return status;
      loom_status_free(status);
      return loom_ok_status();
    }
    if (k == 0) {
      *out = metadata;
      continue;
    }
    if (metadata.dtype != out->dtype) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "a parallel value's components have different dtypes: %s and %s",
          loom_dtype_name(out->dtype), loom_dtype_name(metadata.dtype));
    }
    if (metadata.shape.rank != out->shape.rank) {
      out->shape.rank = LOOM_UNKNOWN_RANK;
      continue;
    }
    for (int32_t d = 0; d < out->shape.rank; ++d) {
      if (out->shape.dims[d] != metadata.shape.dims[d]) {
        out->shape.dims[d] = LOOM_UNKNOWN_DIM;
      }
    }
  }
  *known = true;
  return loom_ok_status();
}

loom_status_t loom__parallel_wrap(loom_op_handler_t* handler,
                                  loom_tensor_handle_t** components,
                                  loom_tensor_handle_t** out_handle) {
  loom__parallel_t* shared = loom__parallel_of(handler);
  int32_t n = shared->num_components;
  *out_handle = NULL;
  loom__parallel_tensor_t* tensor = NULL;
  loom_tensor_metadata_t metadata;
  bool known = false;
  loom_status_t status =
      merged_metadata(components, n, false, &metadata, &known);
  if (!status) {
    status = loom_allocator_malloc(
        shared->allocator,
        sizeof(*tensor) + sizeof(loom_tensor_handle_t*) * (size_t)n,
        (void**)&tensor);
  }
  if (!status) {
    tensor->num_components = n;
    memcpy(tensor->components, components,
           sizeof(loom_tensor_handle_t*) * (size_t)n);
    status = loom_tensor_handle_create_representation(
        handler, known ? &metadata : NULL, tensor, out_handle);
    if (!status) return loom_ok_status();
  }
  for (int32_t k = 0; k < n; ++k) {
    loom_tensor_handle_release(components[k]);
    components[k] = NULL;
  }
  loom_allocator_free(shared->allocator, tensor);
  return status;
}

static void parallel_release_representation(loom_op_handler_t* handler,
                                            void* representation) {
  loom__parallel_tensor_t* tensor = representation;
  if (!tensor) return;
  for (int32_t k = 0; k < tensor->num_components; ++k) {
    loom_tensor_handle_release(tensor->components[k]);
  }
  loom_allocator_free(loom__parallel_of(handler)->allocator, tensor);
}

static loom_status_t parallel_tensor_metadata(
    loom_op_handler_t* handler, const loom_tensor_handle_t* handle,
    loom_tensor_metadata_t* out_metadata) {
  (void)handler;
  loom__parallel_tensor_t* tensor = loom_tensor_handle_representation(handle);
  bool known = false;
  return merged_metadata(tensor->components, tensor->num_components, true,
                         out_metadata, &known);
}

static bool same_value(const loom_tensor_t* a, const loom_tensor_t* b) {
  if (a == b) return true;
  if (loom_tensor_dtype(a) != loom_tensor_dtype(b) ||
      !loom_shape_equal(loom_tensor_shape(a), loom_tensor_shape(b)) ||
      loom_tensor_dtype(a) == LOOM_DTYPE_STRING ||
      loom_tensor_byte_size(a) != loom_tensor_byte_size(b)) {
    return false;
  }
  size_t bytes = loom_tensor_byte_size(a);
  return bytes == 0 ||
         memcmp(loom_tensor_data(a), loom_tensor_data(b), bytes) == 0;
}

// The value every component holds, when they hold the same one.
static loom_status_t parallel_static_value(loom_op_handler_t* handler,
                                           loom_tensor_handle_t* handle,
                                           loom_tensor_t** out_tensor) {
  (void)handler;
  *out_tensor = NULL;
  loom__parallel_tensor_t* tensor = loom_tensor_handle_representation(handle);
  if (!tensor) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "an error handle");
  }
  loom_tensor_t* first = NULL;
  for (int32_t k = 0; k < tensor->num_components; ++k) {
    loom_tensor_t* value = NULL;
    loom_status_t status =
        loom_tensor_handle_static_value(tensor->components[k], &value);
    if (status) {
      loom_tensor_release(first);
      return status;
    }
    if (k == 0) {
      first = value;
      continue;
    }
    bool same = same_value(first, value);
    loom_tensor_release(value);
    if (!same) {
      loom_tensor_release(first);
      return loom_make_status(LOOM_STATUS_NOT_FOUND,
                              "components 0 and %d of the parallel value "
                              "hold different values",
                              (int)k);
    }
  }
  *out_tensor = first;
  return loom_ok_status();
}

static size_t parallel_tensor_debug_string(const loom_op_handler_t* handler,
                                           const loom_tensor_handle_t* handle,
                                           char* buffer, size_t capacity) {
  loom__parallel_t* shared = loom__parallel_of(handler);
  loom__parallel_tensor_t* tensor = loom_tensor_handle_representation(handle);
  if (!buffer) capacity = 0;
  size_t length = (size_t)snprintf(buffer, capacity, "ParallelValue({");
  for (int32_t k = 0; tensor && k < tensor->num_components; ++k) {
    char part[256];
    loom_tensor_handle_debug_string(tensor->components[k], part, sizeof(part));
    size_t offset = length < capacity ? length : capacity;
    length += (size_t)snprintf(buffer ? buffer + offset : NULL,
                               capacity - offset, "%s\"%s\": %s", k ? ", " : "",
                               shared->devices[k], part);
  }
  size_t offset = length < capacity ? length : capacity;
  length += (size_t)snprintf(buffer ? buffer + offset : NULL, capacity - offset,
                             "})");
  return length;
}

//===----------------------------------------------------------------------===//
// Executing an op once per component
//===----------------------------------------------------------------------===//

typedef struct batch_t {
  const loom__parallel_t* shared;
  const char* op_name;
  const loom_op_attrs_t* attrs;
  int32_t num_arguments;
  int32_t num_results;
  loom_tensor_handle_t** inputs;   // [k * num_arguments + i], borrowed
  loom_tensor_handle_t** results;  // [k * num_results + j], owned
  loom_status_t* statuses;         // per component
} batch_t;

// Component k's op, on component thread k.
static void run_component(void* opaque, int32_t k) {
  batch_t* batch = opaque;
  const loom__parallel_t* shared = batch->shared;
  loom_eager_op_t* op = NULL;
  loom_status_t status =
      loom_eager_op_create(shared->context, batch->op_name, &op);
  if (!status) status = loom_eager_op_set_device(op, shared->devices[k]);
  if (!status && batch->attrs) {
    status = loom_eager_op_add_attrs(op, batch->attrs);
  }
  for (int32_t i = 0; i < batch->num_arguments && !status; ++i) {
    status = loom_eager_op_add_input(
        op,
        batch->inputs[(size_t)k * (size_t)batch->num_arguments + (size_t)i]);
  }
  int32_t count = 0;
  loom_tensor_handle_t** results =
      batch->results + (size_t)k * (size_t)batch->num_results;
  if (!status) {
    status = loom_eager_op_execute(op, results, batch->num_results, &count);
  }
  if (!status && count != batch->num_results) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "%d results, expected %d",
                              (int)count, (int)batch->num_results);
  }
  loom_eager_op_destroy(op);
  if (status) {
    status = loom_status_annotate(status, "%s on component %d (%s)",
                                  batch->op_name, (int)k, shared->devices[k]);
  }
  batch->statuses[k] = status;
}

// The component inputs of arguments[0, n) (parallel values of this
// handler give their components; other tensors go to every component as
// they are).
static loom_status_t component_inputs(const loom__parallel_t* shared,
                                      const char* op_name,
                                      loom_tensor_handle_t* const* arguments,
                                      int32_t n,
                                      loom_tensor_handle_t** inputs) {
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* argument = arguments[i];
    loom__parallel_tensor_t* tensor = loom__parallel_tensor_of(argument);
    if (tensor &&
        loom__parallel_of(loom_tensor_handle_handler(argument)) != shared) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "%s on parallel handler '%s': input %d is a parallel value of "
          "another parallel handler (%d components; this one has %d)",
          op_name, shared->name, (int)i, (int)tensor->num_components,
          (int)shared->num_components);
    }
    for (int32_t k = 0; k < shared->num_components; ++k) {
      inputs[(size_t)k * (size_t)n + (size_t)i] =
          tensor ? tensor->components[k] : argument;
    }
  }
  return loom_ok_status();
}

// Runs op `op_name` (with `attrs`, may be NULL) once per component, each on
// its component thread and device, on the components of arguments[0, n):
// results[0, m) receive parallel values (new references; none on error).
static loom_status_t run_components(loom_op_handler_t* handler,
                                    const char* op_name,
                                    const loom_op_attrs_t* attrs,
                                    loom_tensor_handle_t* const* arguments,
                                    int32_t num_arguments,
                                    loom_tensor_handle_t** results,
                                    int32_t num_results) {
  const loom__parallel_t* shared = loom__parallel_of(handler);
  int32_t n = shared->num_components;
  // The result slots are only written here: what they held on entry is
  // the caller's (x = f(x) passes x's own slot), never released.
  for (int32_t j = 0; j < num_results; ++j) results[j] = NULL;
  // The inputs' slots hold one result's components afterwards: at least n
  // of them, also for an op without inputs (VarHandleOp).
  int32_t input_slots = num_arguments > 0 ? num_arguments : 1;
  size_t handles = (size_t)n * (size_t)(input_slots + num_results);
  void* block = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(shared->allocator,
                            handles * sizeof(loom_tensor_handle_t*) +
                                (size_t)n * sizeof(loom_status_t),
                            &block));
  batch_t batch = {
      .shared = shared,
      .op_name = op_name,
      .attrs = attrs,
      .num_arguments = num_arguments,
      .num_results = num_results,
      .inputs = block,
      .results =
          (loom_tensor_handle_t**)block + (size_t)n * (size_t)input_slots,
      .statuses = (loom_status_t*)((loom_tensor_handle_t**)block + handles),
  };
  loom_status_t status =
      component_inputs(shared, op_name, arguments, num_arguments, batch.inputs);
  if (!status) {
    loom__parallel_threads_run(shared->threads, run_component, &batch);
    for (int32_t k = 0; k < n; ++k) {
      if (!status) {
        status = batch.statuses[k];
      } else {
        loom_status_free(batch.statuses[k]);
      }
    }
  }
  loom_tensor_handle_t** components = batch.inputs;  // reused for results
  for (int32_t j = 0; j < num_results && !status; ++j) {
    for (int32_t k = 0; k < n; ++k) {
      size_t at = (size_t)k * (size_t)num_results + (size_t)j;
      components[k] = batch.results[at];
      batch.results[at] = NULL;
    }
    status = loom__parallel_wrap(handler, components, &results[j]);
  }
  for (size_t at = 0; at < (size_t)n * (size_t)num_results; ++at) {
    loom_tensor_handle_release(batch.results[at]);
  }
  loom_allocator_free(shared->allocator, block);
  if (status) {
    for (int32_t j = 0; j < num_results; ++j) {
      loom_tensor_handle_release(results[j]);
      results[j] = NULL;
    }
  }
  return status;
}

static loom_status_t run_per_component(loom_op_handler_t* handler,
                                       loom_op_invocation_t* invocation) {
  int32_t num_arguments = invocation->num_arguments;
  int32_t num_results = invocation->num_results;
  loom_status_t status = run_components(
      handler, loom_prepared_op_name(invocation->op), invocation->attrs,
      invocation->arguments, num_arguments, invocation->results, num_results);
  if (status) return loom_op_invocation_fail(invocation, status, true);
  for (int32_t i = 0; i < num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  return loom_ok_status();
}

// A call whose parameters include values of this handler runs whole once
// per component, as any op does (the design's reason for delayed
// processing): each component thread calls the function on its device,
// where the call runs its plan, rather than the body's ops each running
// per component. A call binding a parallel value it captured runs op by
// op (its captures are the function's own, not per component).
static loom_status_t parallel_execute_function_call(
    loom_op_handler_t* handler, loom_function_call_t* call,
    loom_tensor_handle_t** results, bool* out_taken) {
  *out_taken = false;
  loom__parallel_t* shared = loom__parallel_of(handler);
  int32_t n = call->num_inputs - call->num_captured;
  bool own = false;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    loom__parallel_tensor_t* tensor = loom__parallel_tensor_of(call->inputs[i]);
    if (!tensor) continue;
    if (i >= n) return loom_ok_status();
    own |= loom__parallel_of(loom_tensor_handle_handler(call->inputs[i])) ==
           shared;
  }
  if (!own) return loom_ok_status();
  *out_taken = true;
  atomic_fetch_add_explicit(&shared->calls_taken, 1, memory_order_relaxed);
  return run_components(handler, call->function_name, NULL, call->inputs, n,
                        results, call->num_outputs);
}

//===----------------------------------------------------------------------===//
// Hooks
//===----------------------------------------------------------------------===//

// Any op: the components' devices decide whether they can run it.
static loom_status_t parallel_prepare(loom_op_handler_t* handler,
                                      const char* op_name,
                                      const loom_op_def_t* op_def,
                                      void** out_op_data) {
  (void)handler;
  *out_op_data = NULL;
  if (!op_def) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "%s is not a registered op: the parallel handler "
                            "runs registered ops only",
                            op_name);
  }
  return loom_ok_status();
}

static loom_status_t parallel_execute(loom_op_handler_t* handler,
                                      loom_op_invocation_t* invocation) {
  loom_status_t status;
  if (loom__parallel_execute_own_op(handler, invocation, &status)) {
    return status;
  }
  return run_per_component(handler, invocation);
}

static const char* parallel_device_name(const loom_op_handler_t* handler) {
  return loom__parallel_of(handler)->name;
}

static size_t parallel_debug_string(const loom_op_handler_t* handler,
                                    char* buffer, size_t capacity) {
  const loom__parallel_t* shared = loom__parallel_of(handler);
  // Measuring only (no buffer): every write gets no room.
  char none[1];
  char* out = buffer ? buffer : none;
  if (!buffer) capacity = 0;
  size_t length = (size_t)snprintf(out, capacity, "parallel handler '%s' over",
                                   shared->name);
  for (int32_t k = 0; k < shared->num_components; ++k) {
    size_t offset = length < capacity ? length : capacity;
    length += (size_t)snprintf(out + offset, capacity - offset, "%s %s",
                               k ? "," : "", shared->devices[k]);
  }
  return length;
}

// Pack takes each component where it is; every other op's inputs from
// other handlers are copied on (broadcast) first.
static bool parallel_takes_foreign_inputs(const loom_op_handler_t* handler,
                                          const char* op_name) {
  (void)handler;
  return strcmp(op_name, "ParallelPack") == 0;
}

static loom_status_t make_handler(loom_runtime_t* runtime,
                                  loom__parallel_t* shared,
                                  loom_op_handler_t** out_handler);

// A merge runs its ops on the components, as the handler does: the scope
// around it does not see the component ops (they are placed on devices).
// Merged onto a device (a scope entered first), the handler is its own
// merge, so that its values and the ops of its scope live on one handler.
static loom_status_t parallel_merge(loom_op_handler_t* handler,
                                    loom_op_handler_t* outer,
                                    loom_op_handler_t** out_merged) {
  if (!outer || loom_op_handler_is_final(outer)) {
    loom_op_handler_retain(handler);
    *out_merged = handler;
    return loom_ok_status();
  }
  return make_handler(loom_op_handler_runtime(handler),
                      loom__parallel_of(handler), out_merged);
}

static const loom_op_handler_vtable_t kParallelVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "PARALLEL",
    .prepare = parallel_prepare,
    .execute = parallel_execute,
    .device_name = parallel_device_name,
    .destroy = parallel_destroy,
    .merge = parallel_merge,
    .release_representation = parallel_release_representation,
    .static_value = parallel_static_value,
    .takes_foreign_inputs = parallel_takes_foreign_inputs,
    .debug_string = parallel_debug_string,
    .tensor_debug_string = parallel_tensor_debug_string,
    .tensor_metadata = parallel_tensor_metadata,
    .execute_function_call = parallel_execute_function_call,
};

static loom_status_t make_handler(loom_runtime_t* runtime,
                                  loom__parallel_t* shared,
                                  loom_op_handler_t** out_handler) {
  loom__parallel_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(shared->allocator, sizeof(*state), (void**)&state));
  atomic_fetch_add(&shared->ref_count, 1);
  state->shared = shared;
  loom_status_t status = loom_op_handler_create(runtime, &kParallelVtable,
                                                state, NULL, out_handler);
  if (status) {
    parallel_destroy(state);
    return status;
  }
  state->handler = *out_handler;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

static loom_status_t find_components(loom_context_t* context,
                                     const char* const* devices,
                                     loom__parallel_t* shared) {
  for (int32_t k = 0; k < shared->num_components; ++k) {
    if (!devices[k]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_parallel_handler_create: devices[%d] is "
                              "NULL",
                              (int)k);
    }
    loom_op_handler_t* component =
        loom_context_find_handler(context, devices[k]);
    if (!component || !loom_op_handler_is_final(component)) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "loom_parallel_handler_create: devices[%d] '%s' is not a device of "
          "the context (add CPU devices with "
          "loom_context_set_cpu_device_count)",
          (int)k, devices[k]);
    }
    for (int32_t j = 0; j < k; ++j) {
      if (shared->components[j] == component) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "loom_parallel_handler_create: devices[%d] "
                                "'%s' repeats devices[%d] '%s'",
                                (int)k, devices[k], (int)j, devices[j]);
      }
    }
    const char* name = loom_context_handler_name(context, component);
    shared->devices[k] = strdup(name ? name : devices[k]);
    if (!shared->devices[k]) {
      return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "loom_parallel_handler_create: out of memory");
    }
    loom_op_handler_retain(component);
    shared->components[k] = component;
  }
  return loom_ok_status();
}

loom_status_t loom_parallel_handler_create(loom_context_t* context,
                                           const char* const* devices,
                                           int32_t num_devices,
                                           loom_op_handler_t** out_handler) {
  if (!context || !devices || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_parallel_handler_create: %s is NULL",
                            !context   ? "context"
                            : !devices ? "devices"
                                       : "out_handler");
  }
  *out_handler = NULL;
  if (num_devices < 1 || num_devices > 1024) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_parallel_handler_create: num_devices is %d, "
                            "expected 1 to 1024",
                            (int)num_devices);
  }
  LOOM_RETURN_IF_ERROR(loom__parallel_register_gradients());
  loom_allocator_t allocator = loom_allocator_default();
  loom__parallel_t* shared = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*shared), (void**)&shared));
  atomic_init(&shared->ref_count, 1);
  shared->allocator = allocator;
  shared->context = context;
  shared->num_components = num_devices;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(char*) * (size_t)num_devices, (void**)&shared->devices);
  if (!status) {
    status = loom_allocator_calloc(
        allocator, sizeof(loom_op_handler_t*) * (size_t)num_devices,
        (void**)&shared->components);
  }
  if (!status) status = find_components(context, devices, shared);
  if (!status) {
    status =
        loom__parallel_threads_create(allocator, num_devices, &shared->threads);
  }
  loom_op_handler_t* handler = NULL;
  if (!status) {
    status = make_handler(loom_context_runtime(context), shared, &handler);
  }
  const char* name = NULL;
  if (!status) {
    status = loom_context_add_handler(context, "PARALLEL", handler, &name);
  }
  if (!status) {
    shared->name = strdup(name);
    if (!shared->name) {
      status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "loom_parallel_handler_create: out of memory");
    }
  }
  shared_release(shared);  // the handler holds it now (or it is freed)
  if (status) {
    loom_op_handler_release(handler);
    return status;
  }
  *out_handler = handler;
  return loom_ok_status();
}
