// The vmap handler: a pass-through handler with a tensor representation of
// its own (loom__vmap_value_t: a tensor of the outer handler and its batch
// axis, or an unbatched tensor). An op whose inputs are all unbatched runs
// on the outer handler as it is and its results are that handler's
// tensors. Otherwise its batching rule runs it once over the batch, in the
// scope of the outer handler (a tape or another vmap around this one sees
// the batched ops); an op without a rule runs once per example.

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/ref_count.h"
#include "handlers/vmap/vmap_call_batch.h"
#include "handlers/vmap/vmap_internal.h"

typedef struct fallback_entry_t {
  char* op_name;
  int64_t count;
} fallback_entry_t;

LOOM_DEFINE_SMALL_VECTOR(fallback_vector, fallback_entry_t, 4)

// What a vmap and all its merges share (their base's `shared`).
typedef struct vmap_shared_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;
  pthread_mutex_t mutex;  // fallbacks
  // LOOM_VMAP_BATCH_SIZE_UNKNOWN until known, then fixed (set once by a
  // compare-exchange): read by every batched op without a lock.
  _Atomic int64_t batch_size;
  loom_vmap_randomness_t randomness;
  fallback_vector_t fallbacks;
  // Calls run op by op (vmap_call_batch.h): set before use.
  bool leaves_calls;
} vmap_shared_t;

typedef enum op_kind_t {
  kOpBatched = 0,
  kOpCopyOn,
  kOpCopyOff,
} op_kind_t;

typedef struct vmap_op_data_t {
  loom__passthrough_op_t base;
  const loom__vmap_rule_t* rule;  // NULL: the fallback
  op_kind_t kind;
  int32_t random_seed;  // loom__vmap_random_seed_input
} vmap_op_data_t;

static const loom__passthrough_type_t kVmapType;

static vmap_shared_t* shared_of(const loom_op_handler_t* handler) {
  loom__passthrough_t* base = loom__passthrough_of(handler, &kVmapType);
  return base ? base->shared : NULL;
}

// The representation of `handle` when it is a tensor of `shared` (on any
// of its merges), else NULL.
static loom__vmap_value_t* own_value(const vmap_shared_t* shared,
                                     const loom_tensor_handle_t* handle) {
  if (shared_of(loom_tensor_handle_handler(handle)) != shared) return NULL;
  return loom_tensor_handle_representation(handle);
}

static void shared_retain(void* shared) {
  loom__ref_count_inc(&((vmap_shared_t*)shared)->ref_count);
}

static void shared_release(void* opaque) {
  vmap_shared_t* shared = opaque;
  if (!shared || !loom__ref_count_dec(&shared->ref_count)) return;
  fallback_entry_t* entries = fallback_vector_data(&shared->fallbacks);
  for (size_t i = 0; i < fallback_vector_size(&shared->fallbacks); ++i) {
    loom_allocator_free(shared->allocator, entries[i].op_name);
  }
  fallback_vector_deinitialize(&shared->fallbacks, shared->allocator);
  pthread_mutex_destroy(&shared->mutex);
  loom_allocator_free(shared->allocator, shared);
}

static int64_t batch_size_of(vmap_shared_t* shared) {
  return atomic_load_explicit(&shared->batch_size, memory_order_acquire);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

// One example's shape of a batched shape: `shape` without dimension `axis`
// (any rank: a batched shape of rank LOOM_MAX_RANK + 1 spills its dims, and
// its example's do not). `out` may be `shape`. Fails only when the shape
// pool is full.
static loom_status_t example_shape(const loom_shape_t* shape, int64_t axis,
                                   loom_shape_t* out) {
  if (axis == LOOM_VMAP_UNBATCHED || shape->rank < 0) {
    *out = *shape;
    return loom_ok_status();
  }
  const int64_t* in = loom_shape_dims(shape);
  if (shape->rank <= LOOM_MAX_RANK) {
    // Inline dims, already checked, stay inline (the usual case, once per
    // batched input and result of every op: no validation again).
    loom_shape_t example;
    memset(&example, 0, sizeof(example));
    for (int32_t d = 0; d < shape->rank; ++d) {
      if (d != axis) example.dims[example.rank++] = in[d];
    }
    *out = example;
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (d != axis) dims[rank++] = in[d];
  }
  return loom_shape_initialize_large(out, dims, rank);
}

// A tensor on `handler` viewing `value` (retained) batched along `axis`.
static loom_status_t wrap(loom_op_handler_t* handler,
                          loom_tensor_handle_t* value, int64_t axis,
                          loom_tensor_handle_t** out) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  *out = NULL;
  loom__vmap_value_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(base->allocator, sizeof(*tensor), (void**)&tensor));
  loom_tensor_metadata_t metadata;
  bool known = false;
  if (loom_tensor_handle_metadata_available(value)) {
    loom_status_t status = loom_tensor_handle_metadata(value, &metadata);
    known = !status;
    loom_status_free(status);
  }
  loom_status_t status =
      known ? example_shape(&metadata.shape, axis, &metadata.shape)
            : loom_ok_status();
  if (!status) {
    status = loom_tensor_handle_create_representation(
        handler, known ? &metadata : NULL, tensor, out);
  }
  if (status) {
    loom_allocator_free(base->allocator, tensor);
    return status;
  }
  loom_tensor_handle_retain(value);
  tensor->value = value;
  tensor->axis = axis;
  return loom_ok_status();
}

loom_status_t loom__vmap_wrap(loom_op_handler_t* handler,
                              loom_tensor_handle_t* value, int64_t axis,
                              loom_tensor_handle_t** out) {
  return wrap(handler, value, axis, out);
}

loom__vmap_value_t loom__vmap_unwrap(const loom_op_handler_t* handler,
                                     loom_tensor_handle_t* handle) {
  loom__vmap_value_t* own = own_value(shared_of(handler), handle);
  return own ? *own : (loom__vmap_value_t){handle, LOOM_VMAP_UNBATCHED};
}

static void vmap_release_representation(loom_op_handler_t* handler,
                                        void* representation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  loom__vmap_value_t* tensor = representation;
  if (!tensor) return;
  loom_tensor_handle_release(tensor->value);
  loom_allocator_free(base->allocator, tensor);
}

static loom_status_t vmap_tensor_metadata(loom_op_handler_t* handler,
                                          const loom_tensor_handle_t* handle,
                                          loom_tensor_metadata_t* out) {
  (void)handler;
  loom__vmap_value_t* tensor = loom_tensor_handle_representation(handle);
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(tensor->value, out));
  return example_shape(&out->shape, tensor->axis, &out->shape);
}

// Only an unbatched tensor has a value of its own.
static loom_status_t vmap_static_value(loom_op_handler_t* handler,
                                       loom_tensor_handle_t* handle,
                                       loom_tensor_t** out_tensor) {
  (void)handler;
  loom__vmap_value_t* tensor = loom_tensor_handle_representation(handle);
  if (tensor->axis != LOOM_VMAP_UNBATCHED) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "a batched vmap tensor has no single value");
  }
  return loom_tensor_handle_static_value(tensor->value, out_tensor);
}

static size_t vmap_tensor_debug_string(const loom_op_handler_t* handler,
                                       const loom_tensor_handle_t* handle,
                                       char* buffer, size_t capacity) {
  (void)handler;
  loom__vmap_value_t* tensor = loom_tensor_handle_representation(handle);
  char value[256];
  loom_tensor_handle_debug_string(tensor->value, value, sizeof(value));
  if (tensor->axis == LOOM_VMAP_UNBATCHED) {
    return (size_t)snprintf(buffer, capacity, "<vmap unbatched %s>", value);
  }
  return (size_t)snprintf(buffer, capacity, "<vmap axis=%lld %s>",
                          (long long)tensor->axis, value);
}

//===----------------------------------------------------------------------===//
// Executing ops
//===----------------------------------------------------------------------===//

static loom_status_t vmap_prepare_op(loom__passthrough_t* base,
                                     const char* op_name,
                                     const loom_op_def_t* op_def,
                                     loom__passthrough_op_t* opaque) {
  vmap_op_data_t* data = (vmap_op_data_t*)opaque;
  if (op_def) op_name = op_def->name;
  data->rule = loom__vmap_find_rule(op_name);
  data->kind = kOpBatched;
  data->random_seed = LOOM__VMAP_NOT_RANDOM;
  // An op of the rule table is neither random nor a copy.
  assert(!data->rule ||
         loom__vmap_random_seed_input(op_name) == LOOM__VMAP_NOT_RANDOM);
  if (data->rule) return loom_ok_status();
  data->rule = loom__vmap_call_rule(base->context, op_name, op_def);
  data->random_seed = loom__vmap_random_seed_input(op_name);
  data->kind = strcmp(op_name, "CopyOn") == 0    ? kOpCopyOn
               : strcmp(op_name, "CopyOff") == 0 ? kOpCopyOff
                                                 : kOpBatched;
  return loom_ok_status();
}

// Op data another vmap prepared serves again but for an op without a rule
// (not a copy): whether it calls a function depends on the context's
// function library, which may be installed meanwhile.
static bool vmap_op_data_reusable(const loom__passthrough_t* base,
                                  const loom__passthrough_op_t* opaque) {
  (void)base;
  const vmap_op_data_t* data = (const vmap_op_data_t*)opaque;
  return data->rule || data->kind != kOpBatched;
}

// CopyOn: a tensor of another handler is unbatched.
static loom_status_t copy_on(loom_op_handler_t* handler,
                             loom_op_invocation_t* invocation) {
  LOOM_RETURN_IF_ERROR(loom__handler_copy_check(invocation, "CopyOn"));
  loom_tensor_handle_t* input = invocation->arguments[0];
  loom_tensor_handle_t* result = NULL;
  loom_status_t status = loom_ok_status();
  if (own_value(shared_of(handler), input)) {
    loom_tensor_handle_retain(input);
    result = input;
  } else {
    status = wrap(handler, input, LOOM_VMAP_UNBATCHED, &result);
  }
  if (status) return loom_op_invocation_fail(invocation, status, true);
  return loom__handler_copy_finish(invocation, result);
}

// CopyOff: an unbatched tensor's value; a batched tensor has none.
static loom_status_t copy_off(loom_op_handler_t* handler,
                              loom_op_invocation_t* invocation) {
  LOOM_RETURN_IF_ERROR(loom__handler_copy_check(invocation, "CopyOff"));
  loom_tensor_handle_t* input = invocation->arguments[0];
  vmap_shared_t* shared = shared_of(handler);
  loom__vmap_value_t* value = own_value(shared, input);
  if (value && value->axis != LOOM_VMAP_UNBATCHED) {
    return loom_op_invocation_fail(
        invocation,
        loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "CopyOff of a tensor of vmap handler '%s' that is batched (batch "
            "size %lld, axis %lld): one example has no value outside the "
            "vmap; take the whole batch out with loom_vmap_out and an "
            "out_axis",
            loom_op_handler_type_name(handler),
            (long long)batch_size_of(shared), (long long)value->axis),
        true);
  }
  loom_tensor_handle_t* result = value ? value->value : input;
  loom_tensor_handle_retain(result);
  return loom__handler_copy_finish(invocation, result);
}

// Records a fallback of `op_name`; logs the first of each op name.
static void note_fallback(vmap_shared_t* shared, const char* op_name) {
  pthread_mutex_lock(&shared->mutex);
  fallback_entry_t* entries = fallback_vector_data(&shared->fallbacks);
  for (size_t i = 0; i < fallback_vector_size(&shared->fallbacks); ++i) {
    if (strcmp(entries[i].op_name, op_name) == 0) {
      ++entries[i].count;
      pthread_mutex_unlock(&shared->mutex);
      return;
    }
  }
  size_t length = strlen(op_name) + 1;
  fallback_entry_t entry = {.op_name = NULL, .count = 1};
  loom_status_t status =
      loom_allocator_malloc(shared->allocator, length, (void**)&entry.op_name);
  if (!status) {
    memcpy(entry.op_name, op_name, length);
    status = fallback_vector_push(&shared->fallbacks, shared->allocator, entry);
    if (status) loom_allocator_free(shared->allocator, entry.op_name);
  }
  pthread_mutex_unlock(&shared->mutex);
  loom_status_free(status);  // only the report is lost
  LOOM_LOG(LOOM_LOG_WARNING,
           "vmap: %s has no batching rule; it runs once per example", op_name);
}

// Runs the op's rule (or the fallback) in the outer handler's scope and
// wraps the results. values[i] are the unwrapped arguments.
static loom_status_t batch(loom_op_handler_t* handler,
                           loom_op_invocation_t* invocation,
                           const loom__vmap_rule_t* rule,
                           const loom__vmap_value_t* values) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  vmap_shared_t* shared = base->shared;
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  const loom_op_def_t* op_def = loom_prepared_op_def(invocation->op);
  // The result slots hold nothing of ours yet (the caller's array may hold
  // anything, even the handle of an argument it gave up): they are written
  // here, and released below only once written.
  for (int32_t k = 0; k < m; ++k) invocation->results[k] = NULL;
  loom__metadata_vector_t metadata;
  loom__metadata_vector_initialize(&metadata);
  // The outputs of the usual op fit on the stack.
  loom__vmap_value_t stack_outputs[4];
  loom__vmap_value_t* outputs = stack_outputs;
  loom_status_t status = loom__metadata_vector_resize_uninitialized(
      &metadata, base->allocator, (size_t)n);
  if (!status && m > 4) {
    status = loom_allocator_malloc(
        base->allocator, sizeof(*outputs) * (size_t)m, (void**)&outputs);
  }
  if (status) outputs = NULL;
  for (int32_t k = 0; outputs && k < m; ++k) {
    outputs[k] = (loom__vmap_value_t){NULL, 0};
  }
  loom_tensor_metadata_t* input_metadata =
      loom__metadata_vector_data(&metadata);
  for (int32_t i = 0; i < n && !status; ++i) {
    status = loom__vmap_metadata(values[i].value, &input_metadata[i]);
    if (!status) {
      status = example_shape(&input_metadata[i].shape, values[i].axis,
                             &input_metadata[i].shape);
    }
  }
  loom__vmap_call_t call = {
      .context = base->context,
      .op_name = op_def ? op_def->name : loom_prepared_op_name(invocation->op),
      .attrs = invocation->attrs,
      .batch_size = batch_size_of(shared),
      .num_inputs = n,
      .inputs = values,
      .input_metadata = input_metadata,
      .num_outputs = m,
      .outputs = outputs,
      .handler = handler,
      .arguments = invocation->arguments,
      .outer = base->effective_outer,
      .outer_op = ((const vmap_op_data_t*)loom_prepared_op_data(invocation->op))
                      ->base.outer_op,
  };
  // Rules run in the outer handler's scope, but the one that runs
  // functions on this handler (it enters that scope for its own ops).
  bool in_scope = false;
  bool fallback = rule == NULL;
  if (!status && rule && rule->fn != loom__vmap_rule_control_flow) {
    status = loom_context_enter_scope(base->context, base->effective_outer);
    in_scope = !status;
  }
  if (!status && rule) status = rule->fn(&call, &fallback);
  if (!status && fallback && !in_scope) {
    status = loom_context_enter_scope(base->context, base->effective_outer);
    in_scope = !status;
  }
  if (!status && fallback) {
    note_fallback(shared, call.op_name);
    status = loom__vmap_fallback(&call);
  }
  if (in_scope) loom_status_ignore(loom_context_exit_scope(base->context));
  for (int32_t k = 0; k < m && !status; ++k) {
    status = wrap(handler, outputs[k].value, outputs[k].axis,
                  &invocation->results[k]);
  }
  for (int32_t k = 0; outputs && k < m; ++k) {
    loom_tensor_handle_release(outputs[k].value);
  }
  if (outputs != stack_outputs) loom_allocator_free(base->allocator, outputs);
  loom__metadata_vector_deinitialize(&metadata, base->allocator);
  if (status) {
    loom__grad_release_all(invocation->results, m);
    return loom_op_invocation_fail(invocation, status, true);
  }
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  return loom_ok_status();
}

static loom_status_t vmap_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  const vmap_op_data_t* data = loom_prepared_op_data(invocation->op);
  if (data->kind == kOpCopyOn) return copy_on(handler, invocation);
  if (data->kind == kOpCopyOff) return copy_off(handler, invocation);
  int32_t n = invocation->num_arguments;
  // Each argument's view, looked up once: an argument of another handler
  // is unbatched, and its own value.
  loom__vmap_value_t stack[8];
  loom__vmap_value_t* values = stack;
  if (n > 8) {
    loom_status_t status = loom_allocator_malloc(
        base->allocator, sizeof(*values) * (size_t)n, (void**)&values);
    if (status) return loom_op_invocation_fail(invocation, status, true);
  }
  bool any = false;
  for (int32_t i = 0; i < n; ++i) {
    loom__vmap_value_t* value =
        own_value(base->shared, invocation->arguments[i]);
    values[i] = value ? *value
                      : (loom__vmap_value_t){invocation->arguments[i],
                                             LOOM_VMAP_UNBATCHED};
    if (values[i].axis != LOOM_VMAP_UNBATCHED) any = true;
  }
  const loom__vmap_rule_t* rule = data->rule;
  loom_status_t status = loom_ok_status();
  if (data->random_seed != LOOM__VMAP_NOT_RANDOM) {
    static const loom__vmap_rule_t kDifferent = {
        .op_name = "(random)",
        .fn = loom__vmap_rule_random_different,
        .description = "one draw of [B, shape]",
    };
    loom_vmap_randomness_t randomness =
        ((const vmap_shared_t*)base->shared)->randomness;
    int32_t seed = data->random_seed;
    bool seed_batched =
        seed >= 0 && seed < n && values[seed].axis != LOOM_VMAP_UNBATCHED;
    if (randomness == LOOM_VMAP_RANDOMNESS_ERROR && !seed_batched) {
      status = loom_op_invocation_fail(
          invocation,
          loom__vmap_random_error(loom_prepared_op_name(invocation->op)), true);
    } else if (randomness == LOOM_VMAP_RANDOMNESS_DIFFERENT && !any) {
      any = true;  // batched by the rule
      rule = &kDifferent;
    }
  }
  if (!status && !any) {
    // The same for every example: the op runs as it is on the values.
    for (int32_t i = 0; i < n; ++i) {
      loom_tensor_handle_t* argument = invocation->arguments[i];
      if (values[i].value == argument) continue;  // not a tensor of ours
      loom_tensor_handle_retain(values[i].value);
      invocation->arguments[i] = values[i].value;
      loom_tensor_handle_release(argument);
    }
    if (values != stack) loom_allocator_free(base->allocator, values);
    return loom__passthrough_forward(base, invocation, data->base.outer_op);
  }
  if (status) {
    if (values != stack) loom_allocator_free(base->allocator, values);
    return status;
  }
  // The arguments stay in the invocation (they keep the values alive) until
  // the op has run.
  status = batch(handler, invocation, rule, values);
  if (values != stack) loom_allocator_free(base->allocator, values);
  return status;
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static size_t vmap_debug_string(const loom_op_handler_t* handler, char* buffer,
                                size_t capacity) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return (size_t)snprintf(buffer, capacity, "vmap (batch size %lld)%s",
                          (long long)batch_size_of(base->shared),
                          base->outer ? " (merged)" : "");
}

// Inputs from other handlers are taken as they are: unbatched.
static const loom_op_handler_vtable_t kVmapVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "VMAP",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = vmap_execute,
    .release_representation = vmap_release_representation,
    .static_value = vmap_static_value,
    .debug_string = vmap_debug_string,
    .tensor_debug_string = vmap_tensor_debug_string,
    .tensor_metadata = vmap_tensor_metadata,
    .execute_function_call = loom__vmap_execute_function_call,
};

static const loom__passthrough_type_t kVmapType = {
    .vtable = &kVmapVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = shared_retain,
    .release_shared = shared_release,
    .op_data_size = sizeof(vmap_op_data_t),
    .prepare_op = vmap_prepare_op,
    .op_data_reusable = vmap_op_data_reusable,
    // A vmap is often made per call: its ops find their data ready.
    .cache_op_data = true,
};

//===----------------------------------------------------------------------===//
// The public API
//===----------------------------------------------------------------------===//

void loom_vmap_options_initialize(loom_vmap_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->batch_size = LOOM_VMAP_BATCH_SIZE_UNKNOWN;
  options->randomness = LOOM_VMAP_RANDOMNESS_ERROR;
}

loom_status_t loom_vmap_create(loom_context_t* context, int64_t batch_size,
                               loom_op_handler_t** out_vmap) {
  loom_vmap_options_t options;
  loom_vmap_options_initialize(&options);
  options.batch_size = batch_size;
  return loom_vmap_create_with_options(context, &options, out_vmap);
}

loom_status_t loom_vmap_create_with_options(loom_context_t* context,
                                            const loom_vmap_options_t* options,
                                            loom_op_handler_t** out_vmap) {
  static const char kFunction[] = "loom_vmap_create";
  if (!context || !out_vmap) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !context ? "context" : "out_vmap");
  }
  *out_vmap = NULL;
  loom_vmap_options_t defaults;
  loom_vmap_options_initialize(&defaults);
  if (!options) options = &defaults;
  if (options->struct_size < sizeof(loom_vmap_options_t)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: options->struct_size is %zu, expected %zu",
                            kFunction, options->struct_size,
                            sizeof(loom_vmap_options_t));
  }
  int64_t batch_size = options->batch_size;
  if (batch_size < LOOM_VMAP_BATCH_SIZE_UNKNOWN) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: batch_size is %lld; expected "
                            ">= 0 or LOOM_VMAP_BATCH_SIZE_UNKNOWN (-1)",
                            kFunction, (long long)batch_size);
  }
  if (options->randomness != LOOM_VMAP_RANDOMNESS_ERROR &&
      options->randomness != LOOM_VMAP_RANDOMNESS_DIFFERENT &&
      options->randomness != LOOM_VMAP_RANDOMNESS_SAME) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: randomness is %d; expected LOOM_VMAP_RANDOMNESS_ERROR (0), "
        "LOOM_VMAP_RANDOMNESS_DIFFERENT (1) or LOOM_VMAP_RANDOMNESS_SAME (2)",
        kFunction, (int)options->randomness);
  }
  loom_allocator_t allocator = loom_allocator_default();
  vmap_shared_t* shared = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*shared), (void**)&shared));
  loom__ref_count_init(&shared->ref_count);
  shared->allocator = allocator;
  shared->context = context;
  atomic_init(&shared->batch_size, batch_size);
  shared->randomness = options->randomness;
  pthread_mutex_init(&shared->mutex, NULL);
  fallback_vector_initialize(&shared->fallbacks);
  loom_status_t status = loom__passthrough_create(
      &kVmapType, context, allocator, shared, NULL, out_vmap);
  shared_release(shared);  // the handler holds it (or it is freed)
  return status;
}

int64_t loom_vmap_batch_size(const loom_op_handler_t* vmap) {
  vmap_shared_t* shared = shared_of(vmap);
  return shared ? batch_size_of(shared) : LOOM_VMAP_BATCH_SIZE_UNKNOWN;
}

loom_vmap_randomness_t loom_vmap_randomness(const loom_op_handler_t* vmap) {
  vmap_shared_t* shared = shared_of(vmap);
  return shared ? shared->randomness : LOOM_VMAP_RANDOMNESS_ERROR;
}

int64_t loom_vmap_fallback_count(const loom_op_handler_t* vmap,
                                 const char* op_name) {
  vmap_shared_t* shared = shared_of(vmap);
  if (!shared || !op_name) return 0;
  int64_t count = 0;
  pthread_mutex_lock(&shared->mutex);
  fallback_entry_t* entries = fallback_vector_data(&shared->fallbacks);
  for (size_t i = 0; i < fallback_vector_size(&shared->fallbacks); ++i) {
    if (strcmp(entries[i].op_name, op_name) == 0) count = entries[i].count;
  }
  pthread_mutex_unlock(&shared->mutex);
  return count;
}

int64_t loom__vmap_total_fallbacks(const loom_op_handler_t* vmap) {
  vmap_shared_t* shared = shared_of(vmap);
  if (!shared) return 0;
  int64_t total = 0;
  pthread_mutex_lock(&shared->mutex);
  fallback_entry_t* entries = fallback_vector_data(&shared->fallbacks);
  for (size_t i = 0; i < fallback_vector_size(&shared->fallbacks); ++i) {
    total += entries[i].count;
  }
  pthread_mutex_unlock(&shared->mutex);
  return total;
}

void loom__vmap_leave_calls(loom_op_handler_t* vmap) {
  vmap_shared_t* shared = shared_of(vmap);
  if (shared) shared->leaves_calls = true;
}

bool loom__vmap_leaves_calls(const loom_op_handler_t* vmap) {
  vmap_shared_t* shared = shared_of(vmap);
  return shared && shared->leaves_calls;
}

static loom_status_t check_vmap(const char* function,
                                const loom_op_handler_t* handler) {
  if (!handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: vmap is NULL",
                            function);
  }
  if (shared_of(handler)) return loom_ok_status();
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: the handler is not a vmap handler (type '%s')",
                          function, loom_op_handler_type_name(handler));
}

loom_status_t loom_vmap_in(loom_op_handler_t* vmap,
                           loom_tensor_handle_t* batched, int64_t in_axis,
                           loom_tensor_handle_t** out_handle) {
  static const char kFunction[] = "loom_vmap_in";
  LOOM_RETURN_IF_ERROR(check_vmap(kFunction, vmap));
  if (!batched || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !batched ? "batched" : "out_handle");
  }
  *out_handle = NULL;
  vmap_shared_t* shared = shared_of(vmap);
  if (own_value(shared, batched)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the tensor is already a tensor of this vmap",
                            kFunction);
  }
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(batched, &metadata));
  int32_t rank = metadata.shape.rank;
  if (in_axis != LOOM_VMAP_UNBATCHED) {
    if (in_axis < 0 || in_axis >= rank) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: in_axis %lld is out of range for a tensor "
                              "of rank %d (expected LOOM_VMAP_UNBATCHED (-1) "
                              "or an axis in [0, %d))",
                              kFunction, (long long)in_axis, rank, rank);
    }
    int64_t size = loom_shape_dims(&metadata.shape)[in_axis];
    int64_t expected = LOOM_VMAP_BATCH_SIZE_UNKNOWN;
    // The first batched input sets it; `expected` is then what is set.
    if (atomic_compare_exchange_strong_explicit(&shared->batch_size, &expected,
                                                size, memory_order_acq_rel,
                                                memory_order_acquire)) {
      expected = size;
    }
    if (size != expected) {
      char shape[96];
      loom_shape_format(&metadata.shape, shape, sizeof(shape));
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: dimension %lld of the %s tensor has size "
                              "%lld; the vmap's batch size is %lld",
                              kFunction, (long long)in_axis, shape,
                              (long long)size, (long long)expected);
    }
  }
  loom_op_handler_t* target = NULL;
  LOOM_RETURN_IF_ERROR(loom__passthrough_entry_handler(vmap, &target));
  if (!target) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_vmap_in: no scope of the vmap handler found; "
                            "call it in the vmap's scope");
  }
  loom_status_t status = wrap(target, batched, in_axis, out_handle);
  loom_op_handler_release(target);
  return status;
}

loom_status_t loom_vmap_out(loom_op_handler_t* vmap,
                            loom_tensor_handle_t* handle, int64_t out_axis,
                            loom_tensor_handle_t** out_batched) {
  static const char kFunction[] = "loom_vmap_out";
  LOOM_RETURN_IF_ERROR(check_vmap(kFunction, vmap));
  if (!handle || !out_batched) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !handle ? "handle" : "out_batched");
  }
  *out_batched = NULL;
  vmap_shared_t* shared = shared_of(vmap);
  loom__vmap_value_t* own = own_value(shared, handle);
  loom__vmap_value_t value =
      own ? *own : (loom__vmap_value_t){handle, LOOM_VMAP_UNBATCHED};
  if (!value.value) {  // an error handle of the vmap
    loom_tensor_metadata_t metadata;
    return loom_tensor_handle_wait_metadata(handle, &metadata);
  }
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(handle, &metadata));
  int32_t rank = metadata.shape.rank;  // one example's
  if (out_axis == LOOM_VMAP_UNBATCHED) {
    if (value.axis != LOOM_VMAP_UNBATCHED) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "%s: out_axis is LOOM_VMAP_UNBATCHED but the tensor is batched "
          "(axis %lld); give the axis the batch dimension goes to",
          kFunction, (long long)value.axis);
    }
    loom_tensor_handle_retain(value.value);
    *out_batched = value.value;
    return loom_ok_status();
  }
  if (out_axis < 0 || out_axis > rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: out_axis %lld is out of range for a result "
                            "of rank %d (expected LOOM_VMAP_UNBATCHED (-1) or "
                            "an axis in [0, %d])",
                            kFunction, (long long)out_axis, rank + 1, rank);
  }
  int64_t batch_size = batch_size_of(shared);
  if (value.axis == LOOM_VMAP_UNBATCHED &&
      batch_size == LOOM_VMAP_BATCH_SIZE_UNKNOWN) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "%s: the tensor is unbatched and the vmap's batch "
                            "size is not known yet",
                            kFunction);
  }
  // The ops run where the vmap's do: in the scope of its outer handler.
  loom_op_handler_t* outer = loom_tensor_handle_handler(handle);
  const loom__passthrough_t* base = loom_op_handler_state(own ? outer : vmap);
  LOOM_RETURN_IF_ERROR(
      loom_context_enter_scope(shared->context, base->effective_outer));
  loom_tensor_handle_t* front = NULL;
  loom_status_t status;
  if (value.axis == LOOM_VMAP_UNBATCHED) {
    status = loom__vmap_broadcast(shared->context, value.value, &metadata.shape,
                                  batch_size, &front);
  } else {
    status = loom__vmap_move_front(shared->context, &value, rank, &front);
  }
  if (!status) {
    status = loom__vmap_move_from_front(shared->context, front, rank, out_axis,
                                        out_batched);
  }
  loom_tensor_handle_release(front);
  loom_status_ignore(loom_context_exit_scope(shared->context));
  return status;
}
