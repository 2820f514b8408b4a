// Eager contexts: the host and runtime they own, the handlers they know by
// device name, the first error of their ops, and tensors in and out.

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corert/corert_internal.h"
#include "frontend/frontend_internal.h"
#include "loom/cpu_op_handler.h"

// Context ids key the per-thread caches of scope stacks (scopes.c), which
// span every context a thread uses: an id must never repeat in the process,
// where an address may, once a context is freed.
static _Atomic uint64_t g_next_context_id = 1;

// What a context's runtime names as its owner (loom_runtime_owner).
static const char kRuntimeOwnerKind[] = "loom_context_t";

loom_context_t* loom__context_of_runtime(const loom_runtime_t* runtime) {
  loom_context_t* context = loom_runtime_owner(runtime, kRuntimeOwnerKind);
  // Found from the end of its creation to the start of its destruction.
  return context && atomic_load_explicit(&context->live, memory_order_acquire)
             ? context
             : NULL;
}

loom_context_t* loom_context_of_handle(const loom_tensor_handle_t* handle) {
  return loom__context_of_runtime(
      loom_op_handler_runtime(loom_tensor_handle_handler(handle)));
}

static bool same_text_ignoring_case(const char* a, const char* b);

void loom_context_options_initialize(loom_context_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->num_threads = -1;
  options->allocator = loom_allocator_default();
}

// The errors a thread collects while it executes an op without results
// in a synchronous context (they have no result handle to travel in): the
// innermost capture of the thread's own calls, on its stack. Thread-local
// because the runtime's diagnostic handler is per runtime, called on the
// thread that found the error with no argument of the call that ran the
// op.
static _Thread_local loom__error_capture_t* t_capture;

void loom__capture_begin(loom_context_t* context,
                         loom__error_capture_t* capture) {
  capture->context = context;
  capture->error = NULL;
  capture->previous = t_capture;
  t_capture = capture;
}

loom_status_t loom__capture_end(loom__error_capture_t* capture) {
  t_capture = capture->previous;
  return capture->error;
}

// Asynchronous contexts keep the first error for the next wait; synchronous
// ones return each op's error from execute (through its results, or
// captured on the executing thread for an op without results).
static void record_diagnostic(void* user_data,
                              const loom_diagnostic_t* diagnostic) {
  loom_context_t* context = user_data;
  loom__error_capture_t* capture = t_capture;
  if (capture && capture->context == context && !capture->error) {
    capture->error = loom_status_clone(diagnostic->error);
  }
  if (!context->async) return;
  loom__context_record_error(context, loom_status_clone(diagnostic->error));
}

void loom__context_record_error(loom_context_t* context, loom_status_t error) {
  if (!error) return;
  pthread_mutex_lock(&context->mutex);
  if (!context->first_error) {
    context->first_error = error;
    error = NULL;
    atomic_store_explicit(&context->has_error, true, memory_order_release);
  }
  pthread_mutex_unlock(&context->mutex);
  loom_status_free(error);
}

loom_status_t loom__context_error(loom_context_t* context) {
  if (!atomic_load_explicit(&context->has_error, memory_order_acquire)) {
    return loom_ok_status();
  }
  pthread_mutex_lock(&context->mutex);
  loom_status_t error = loom_status_clone(context->first_error);
  pthread_mutex_unlock(&context->mutex);
  return error;
}

static char* copy_text(loom_allocator_t allocator, const char* text) {
  size_t length = strlen(text);
  char* copy = NULL;
  loom_status_t status =
      loom_allocator_malloc(allocator, length + 1, (void**)&copy);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  memcpy(copy, text, length + 1);
  return copy;
}

// Adds a handler under a name (copied); the caller holds the mutex.
static loom_status_t add_locked(loom_context_t* context, const char* name,
                                const char* type, int64_t index,
                                loom_op_handler_t* handler) {
  for (int32_t i = 0; i < context->num_handlers; ++i) {
    if (strcmp(context->handlers[i].name, name) == 0) {
      return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "a device named '%s' already exists", name);
    }
  }
  if (context->num_handlers == context->handlers_capacity) {
    int32_t capacity =
        context->handlers_capacity ? 2 * context->handlers_capacity : 8;
    named_handler_t* grown = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        context->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
    if (context->num_handlers) {
      memcpy(grown, context->handlers,
             sizeof(*grown) * (size_t)context->num_handlers);
    }
    loom_allocator_free(context->allocator, context->handlers);
    context->handlers = grown;
    context->handlers_capacity = capacity;
  }
  named_handler_t* entry = &context->handlers[context->num_handlers];
  entry->name = copy_text(context->allocator, name);
  entry->type = copy_text(context->allocator, type);
  if (!entry->name || !entry->type) {
    loom_allocator_free(context->allocator, entry->name);
    loom_allocator_free(context->allocator, entry->type);
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory naming device '%s'", name);
  }
  entry->index = index;
  entry->handler = handler;
  loom_op_handler_retain(handler);
  context->num_handlers++;
  return loom_ok_status();
}

loom_status_t loom_context_create(const loom_context_options_t* options,
                                  loom_context_t** out_context) {
  if (!out_context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_create: out_context is NULL");
  }
  *out_context = NULL;
  loom_context_options_t defaults;
  if (!options) {
    loom_context_options_initialize(&defaults);
    options = &defaults;
  }
  if (!options->allocator.allocate || !options->allocator.deallocate) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_create: options->allocator is not "
                            "set (call loom_context_options_initialize)");
  }
  loom_context_t* context = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      options->allocator, sizeof(*context), (void**)&context));
  context->allocator = options->allocator;
  context->id = atomic_fetch_add(&g_next_context_id, 1);
  context->async = options->async;
  atomic_init(&context->live, false);
  atomic_init(&context->has_error, false);
  atomic_init(&context->generation, 0);
  atomic_init(&context->policy, LOOM_PLACEMENT_SILENT);
  atomic_init(&context->soft_placement, false);
  atomic_init(&context->log_placement, false);
  atomic_init(&context->functions, NULL);
  pthread_mutex_init(&context->mutex, NULL);
  pthread_mutex_init(&context->function_mutex, NULL);
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  host_options.allocator = options->allocator;
  host_options.num_threads = options->num_threads;
  loom_status_t status =
      loom_host_context_create(&host_options, &context->host);
  context->owns_host = !status;
  if (!status) {
    loom_runtime_options_t runtime_options;
    loom_runtime_options_initialize(&runtime_options, context->host);
    runtime_options.synchronous = !options->async;
    runtime_options.diagnostic_handler = record_diagnostic;
    runtime_options.diagnostic_user_data = context;
    runtime_options.owner_kind = kRuntimeOwnerKind;
    runtime_options.owner = context;
    status = loom_runtime_create(&runtime_options, &context->runtime);
  }
  if (!status) {
    context->cpu = loom_runtime_get_op_handler(context->runtime, "cpu");
    pthread_mutex_lock(&context->mutex);
    status = add_locked(context, "/job:localhost/replica:0/task:0/device:CPU:0",
                        "CPU", 0, context->cpu);
    pthread_mutex_unlock(&context->mutex);
  }
  if (status) {
    loom_context_destroy(context);
    return status;
  }
  context->cpu_name = context->handlers[0].name;
  if (options->num_cpu_devices > 1) {
    status =
        loom_context_set_cpu_device_count(context, options->num_cpu_devices);
    if (status) {
      loom_context_destroy(context);
      return status;
    }
  }
  atomic_store_explicit(&context->live, true, memory_order_release);
  *out_context = context;
  return loom_ok_status();
}

loom_status_t loom_context_set_cpu_device_count(loom_context_t* context,
                                                int32_t count) {
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_set_cpu_device_count: context is "
                            "NULL");
  }
  if (count < 1 || count > 1024) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_set_cpu_device_count: %d CPU "
                            "devices is outside [1, 1024]",
                            (int)count);
  }
  for (;;) {
    int32_t have = 0;
    pthread_mutex_lock(&context->mutex);
    for (int32_t i = 0; i < context->num_handlers; ++i) {
      if (same_text_ignoring_case(context->handlers[i].type, "CPU") &&
          loom_op_handler_is_final(context->handlers[i].handler)) {
        have++;
      }
    }
    pthread_mutex_unlock(&context->mutex);
    if (have >= count) return loom_ok_status();
    loom_op_handler_t* cpu = NULL;
    LOOM_RETURN_IF_ERROR(
        loom_cpu_op_handler_create(context->runtime, NULL, &cpu));
    char name[64];
    snprintf(name, sizeof(name),
             "/job:localhost/replica:0/task:0/device:CPU:%d", (int)have);
    loom_status_t status = loom_cpu_op_handler_set_device_name(cpu, name);
    if (!status) {
      pthread_mutex_lock(&context->mutex);
      status = add_locked(context, name, "CPU", have, cpu);
      pthread_mutex_unlock(&context->mutex);
    }
    loom_op_handler_release(cpu);
    LOOM_RETURN_IF_ERROR(status);
  }
}

void loom_context_set_soft_placement(loom_context_t* context, bool enable) {
  if (context) atomic_store(&context->soft_placement, enable);
}

void loom_context_set_log_placement(loom_context_t* context, bool enable) {
  if (context) atomic_store(&context->log_placement, enable);
}

void loom_context_destroy(loom_context_t* context) {
  if (!context) return;
  atomic_store_explicit(&context->live, false, memory_order_release);
  if (context->runtime) loom_runtime_quiesce(context->runtime);
  loom__eager_op_pool_clear(context);
  loom__context_destroy_function_library(context);
  loom__scope_stacks_free(context);
  // Merges first: they reference the handlers below them.
  for (int32_t i = context->num_merges - 1; i >= 0; --i) {
    loom_op_handler_release(context->merges[i].merged);
    loom_op_handler_release(context->merges[i].inner);
    loom_op_handler_release(context->merges[i].outer);
  }
  loom_allocator_free(context->allocator, context->merges);
  for (int32_t i = 0; i < context->num_handlers; ++i) {
    loom_op_handler_release(context->handlers[i].handler);
    loom_allocator_free(context->allocator, context->handlers[i].name);
    loom_allocator_free(context->allocator, context->handlers[i].type);
  }
  loom_allocator_free(context->allocator, context->handlers);
  loom_runtime_destroy(context->runtime);
  if (context->owns_host) loom_host_context_destroy(context->host);
  loom_status_free(context->first_error);
  pthread_mutex_destroy(&context->function_mutex);
  pthread_mutex_destroy(&context->mutex);
  loom_allocator_free(context->allocator, context);
}

loom_runtime_t* loom_context_runtime(const loom_context_t* context) {
  return context ? context->runtime : NULL;
}

loom_host_context_t* loom_context_host(const loom_context_t* context) {
  return context ? context->host : NULL;
}

bool loom_context_is_async(const loom_context_t* context) {
  return context && context->async;
}

loom_op_handler_t* loom_context_cpu(const loom_context_t* context) {
  return context ? context->cpu : NULL;
}

loom_status_t loom_context_wait(loom_context_t* context) {
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_wait: context is NULL");
  }
  loom_runtime_quiesce(context->runtime);
  pthread_mutex_lock(&context->mutex);
  loom_status_t error = loom_status_clone(context->first_error);
  pthread_mutex_unlock(&context->mutex);
  return error;
}

void loom_context_clear_error(loom_context_t* context) {
  if (!context) return;
  pthread_mutex_lock(&context->mutex);
  loom_status_free(context->first_error);
  context->first_error = NULL;
  atomic_store_explicit(&context->has_error, false, memory_order_release);
  pthread_mutex_unlock(&context->mutex);
}

void loom_context_set_thread_async(loom_context_t* context, bool async) {
  if (!context) return;
  scope_stack_t* stack = loom__scope_stack(context, true);
  if (stack) stack->async_override = async ? 1 : 0;
}

bool loom_context_thread_is_async(loom_context_t* context) {
  if (!context) return false;
  return loom__thread_async(context, loom__scope_stack(context, false));
}

void loom_context_set_placement_policy(loom_context_t* context, bool thread,
                                       loom_placement_policy_t policy) {
  if (!context || (int)policy < 0 || policy > LOOM_PLACEMENT_SILENT_FOR_INT32) {
    return;
  }
  if (!thread) {
    atomic_store(&context->policy, (int)policy);
    return;
  }
  scope_stack_t* stack = loom__scope_stack(context, true);
  if (stack) stack->policy_override = (int8_t)policy;
}

loom_placement_policy_t loom_context_placement_policy(loom_context_t* context) {
  if (!context) return LOOM_PLACEMENT_SILENT;
  scope_stack_t* stack = loom__scope_stack(context, false);
  if (stack && stack->policy_override >= 0) {
    return (loom_placement_policy_t)stack->policy_override;
  }
  return (loom_placement_policy_t)atomic_load(&context->policy);
}

//===----------------------------------------------------------------------===//
// Device names
//===----------------------------------------------------------------------===//

// The parts of a device name; missing parts are NULL / -1 (wildcards).
typedef struct device_name_t {
  char job[64];
  int64_t replica;
  int64_t task;
  char type[64];
  int64_t index;
} device_name_t;

static bool parse_number(const char* text, size_t length, int64_t* out) {
  if (length == 0 || length > 18) return false;
  int64_t value = 0;
  for (size_t i = 0; i < length; ++i) {
    if (!isdigit((unsigned char)text[i])) return false;
    value = value * 10 + (text[i] - '0');
  }
  *out = value;
  return true;
}

// "TYPE:INDEX" or "TYPE" into name->type / name->index.
static bool parse_type_index(const char* text, size_t length,
                             device_name_t* name) {
  const char* colon = memchr(text, ':', length);
  size_t type_length = colon ? (size_t)(colon - text) : length;
  if (type_length == 0 || type_length >= sizeof(name->type)) return false;
  memcpy(name->type, text, type_length);
  name->type[type_length] = '\0';
  if (!colon) return true;
  return parse_number(colon + 1, length - type_length - 1, &name->index);
}

// Accepts "/job:J/replica:R/task:T/device:TYPE:I" with any of the parts
// left out, "/device:TYPE:I", the legacy "/cpu:0", and "CPU:0".
static bool parse_device_name(const char* text, device_name_t* name) {
  memset(name, 0, sizeof(*name));
  name->replica = name->task = name->index = -1;
  if (!text || !*text) return false;
  if (text[0] != '/') return parse_type_index(text, strlen(text), name);
  const char* p = text;
  while (*p == '/') {
    p++;
    const char* end = strchr(p, '/');
    size_t length = end ? (size_t)(end - p) : strlen(p);
    if (length > 4 && strncmp(p, "job:", 4) == 0) {
      if (length - 4 >= sizeof(name->job)) return false;
      memcpy(name->job, p + 4, length - 4);
      name->job[length - 4] = '\0';
    } else if (length > 8 && strncmp(p, "replica:", 8) == 0) {
      if (!parse_number(p + 8, length - 8, &name->replica)) return false;
    } else if (length > 5 && strncmp(p, "task:", 5) == 0) {
      if (!parse_number(p + 5, length - 5, &name->task)) return false;
    } else if (length > 7 && strncmp(p, "device:", 7) == 0) {
      if (!parse_type_index(p + 7, length - 7, name)) return false;
    } else if (!parse_type_index(p, length, name)) {  // legacy "/cpu:0"
      return false;
    }
    p += length;
  }
  return *p == '\0';
}

static bool same_text_ignoring_case(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    if (toupper((unsigned char)*a) != toupper((unsigned char)*b)) return false;
  }
  return *a == *b;
}

static bool name_matches(const device_name_t* pattern,
                         const device_name_t* full) {
  return (!pattern->job[0] || strcmp(pattern->job, full->job) == 0) &&
         (pattern->replica < 0 || pattern->replica == full->replica) &&
         (pattern->task < 0 || pattern->task == full->task) &&
         (!pattern->type[0] ||
          same_text_ignoring_case(pattern->type, full->type)) &&
         (pattern->index < 0 || pattern->index == full->index);
}

static bool is_full_name(const device_name_t* name) {
  return name->job[0] && name->replica >= 0 && name->task >= 0 &&
         name->type[0] && name->index >= 0;
}

loom_status_t loom_context_add_handler(loom_context_t* context,
                                       const char* type,
                                       loom_op_handler_t* handler,
                                       const char** out_name) {
  if (!context || !type || !handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_add_handler: %s is NULL",
                            !context ? "context"
                            : !type  ? "type"
                                     : "handler");
  }
  if (out_name) *out_name = NULL;
  if (!*type || strchr(type, '/') || strchr(type, ':')) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_add_handler: device type '%s' must "
                            "be a non-empty name without '/' or ':'",
                            type);
  }
  pthread_mutex_lock(&context->mutex);
  loom_status_t status =
      loom__context_add_handler_locked(context, type, handler, out_name);
  pthread_mutex_unlock(&context->mutex);
  return status;
}

loom_status_t loom__context_add_handler_locked(loom_context_t* context,
                                               const char* type,
                                               loom_op_handler_t* handler,
                                               const char** out_name) {
  int64_t index = 0;
  for (int32_t i = 0; i < context->num_handlers; ++i) {
    if (same_text_ignoring_case(context->handlers[i].type, type) &&
        context->handlers[i].index >= index) {
      index = context->handlers[i].index + 1;
    }
  }
  // "/job:localhost/replica:0/task:0/device:<type>:<index>", put together
  // by hand: this runs for each new merge (a tape per training step).
  static const char kPrefix[] = "/job:localhost/replica:0/task:0/device:";
  char name[192];
  char digits[24];
  int num_digits = 0;
  uint64_t rest = (uint64_t)index;
  do {
    digits[num_digits++] = (char)('0' + rest % 10);
    rest /= 10;
  } while (rest);
  size_t type_length = strlen(type);
  size_t room = sizeof(name) - sizeof(kPrefix) - (size_t)num_digits - 1;
  if (type_length > room) type_length = room;
  char* at = name;
  memcpy(at, kPrefix, sizeof(kPrefix) - 1);
  at += sizeof(kPrefix) - 1;
  memcpy(at, type, type_length);
  at += type_length;
  *at++ = ':';
  while (num_digits) *at++ = digits[--num_digits];
  *at = '\0';
  loom_status_t status = add_locked(context, name, type, index, handler);
  if (!status && out_name) {
    *out_name = context->handlers[context->num_handlers - 1].name;
  }
  return status;
}

loom_status_t loom_context_add_named_handler(loom_context_t* context,
                                             const char* name,
                                             loom_op_handler_t* handler) {
  if (!context || !name || !handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_add_named_handler: %s is NULL",
                            !context ? "context"
                            : !name  ? "name"
                                     : "handler");
  }
  device_name_t parsed;
  if (!parse_device_name(name, &parsed) || !is_full_name(&parsed)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "device name '%s' is not fully qualified: expected "
                            "/job:<job>/replica:<n>/task:<n>/device:<type>:<n>",
                            name);
  }
  pthread_mutex_lock(&context->mutex);
  loom_status_t status =
      add_locked(context, name, parsed.type, parsed.index, handler);
  pthread_mutex_unlock(&context->mutex);
  return status;
}

bool loom__device_name_is_valid(const char* name) {
  device_name_t parsed;
  // A bare word is no device name (TensorFlow wants "/..." or "TYPE:N").
  return parse_device_name(name, &parsed) &&
         (name[0] == '/' || strchr(name, ':') != NULL);
}

loom_status_t loom__unknown_device_error(loom_context_t* context,
                                         const char* name) {
  char devices[1024];
  size_t used = 0;
  devices[0] = '\0';
  pthread_mutex_lock(&context->mutex);
  for (int32_t i = 0; i < context->num_handlers; ++i) {
    if (!loom_op_handler_is_final(context->handlers[i].handler)) continue;
    int n = snprintf(devices + used, sizeof(devices) - used, "%s%s",
                     used ? ", " : "", context->handlers[i].name);
    if (n < 0 || (size_t)n >= sizeof(devices) - used) break;
    used += (size_t)n;
  }
  pthread_mutex_unlock(&context->mutex);
  // TensorFlow's words when placement cannot be satisfied.
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Could not satisfy device specification '%s'. "
                          "enable_soft_placement=0. Supported device types "
                          "[CPU]. All available devices [%s].",
                          name, devices);
}

loom_op_handler_t* loom_context_find_handler(loom_context_t* context,
                                             const char* name) {
  if (!context || !name) return NULL;
  device_name_t pattern;
  if (!parse_device_name(name, &pattern)) return NULL;
  loom_op_handler_t* found = NULL;
  pthread_mutex_lock(&context->mutex);
  for (int32_t i = 0; i < context->num_handlers && !found; ++i) {
    device_name_t full;
    if (parse_device_name(context->handlers[i].name, &full) &&
        name_matches(&pattern, &full)) {
      found = context->handlers[i].handler;
    }
  }
  pthread_mutex_unlock(&context->mutex);
  return found;
}

const char* loom_context_handler_name(loom_context_t* context,
                                      const loom_op_handler_t* handler) {
  if (!context || !handler) return NULL;
  if (handler == context->cpu) return context->cpu_name;
  const char* name = NULL;
  pthread_mutex_lock(&context->mutex);
  for (int32_t i = 0; i < context->num_handlers && !name; ++i) {
    if (context->handlers[i].handler == handler)
      name = context->handlers[i].name;
  }
  pthread_mutex_unlock(&context->mutex);
  return name;
}

size_t loom_context_list_devices(loom_context_t* context, const char** names,
                                 const char** types, size_t capacity) {
  if (!context) return 0;
  size_t count = 0;
  pthread_mutex_lock(&context->mutex);
  for (int32_t i = 0; i < context->num_handlers; ++i) {
    if (!loom_op_handler_is_final(context->handlers[i].handler)) continue;
    if (count < capacity) {
      if (names) names[count] = context->handlers[i].name;
      if (types) types[count] = context->handlers[i].type;
    }
    count++;
  }
  pthread_mutex_unlock(&context->mutex);
  return count;
}

const char* loom_context_device_name(loom_context_t* context,
                                     const loom_tensor_handle_t* handle) {
  loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
  if (!handler) return NULL;
  const char* name = loom_op_handler_device_name(handler);
  if (name) return name;
  return context ? loom_context_handler_name(context, handler) : NULL;
}

size_t loom_context_list_handlers(loom_context_t* context, const char** names,
                                  size_t capacity) {
  if (!context) return 0;
  pthread_mutex_lock(&context->mutex);
  size_t count = (size_t)context->num_handlers;
  for (size_t i = 0; names && i < count && i < capacity; ++i) {
    names[i] = context->handlers[i].name;
  }
  pthread_mutex_unlock(&context->mutex);
  return count;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

loom_status_t loom_context_new_handle(loom_context_t* context,
                                      loom_tensor_t* tensor,
                                      loom_tensor_handle_t** out_handle) {
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_new_handle: context is NULL");
  }
  return loom_tensor_handle_create(context->cpu, tensor, out_handle);
}

// A handle on `target` sharing the value of `handle` (host memory: a copy
// between devices is a new handle on the same tensor).
static loom_status_t share_value(loom_tensor_handle_t* handle,
                                 loom_op_handler_t* target,
                                 loom_tensor_handle_t** out_handle) {
  loom_tensor_metadata_t metadata;
  bool known = loom_tensor_handle_metadata_available(handle);
  if (known) {
    loom_status_t status = loom_tensor_handle_metadata(handle, &metadata);
    known = !status;
    loom_status_free(status);
  }
  return loom_tensor_handle_create_async(target, known ? &metadata : NULL,
                                         loom_tensor_handle_value(handle),
                                         out_handle);
}

// A copy to the device `target` the user makes inside a transformation's
// scope: an Identity placed on `target`, which the transformations record
// (its gradient copies back), as TensorFlow's tape records its copies
// between devices. NULL in *out_handle when it does not apply: no
// transformation open, or the copy is a handler's own (it runs while the
// handler executes an op).
static loom_status_t copy_in_scope(loom_context_t* context,
                                   loom_tensor_handle_t* handle,
                                   loom_op_handler_t* target,
                                   loom_tensor_handle_t** out_handle) {
  if (loom__handler_execution_depth > 0) return loom_ok_status();
  loom_op_handler_t* top =
      loom__scope_stack_top(loom__scope_stack(context, false));
  const char* name = loom_context_handler_name(context, target);
  if (!top || loom_op_handler_is_final(top) || !name) return loom_ok_status();
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, "Identity", &op));
  loom_status_t status = loom_eager_op_set_device(op, name);
  if (!status) status = loom_eager_op_add_input(op, handle);
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out_handle, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

loom_status_t loom_context_copy_to(loom_context_t* context,
                                   loom_tensor_handle_t* handle,
                                   loom_op_handler_t* target,
                                   loom_tensor_handle_t** out_handle) {
  if (!context || !handle || !target || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_copy_to: %s",
                            !context  ? "context is NULL"
                            : !handle ? "Invalid handle"
                            : !target ? "target is NULL"
                                      : "out_handle is NULL");
  }
  *out_handle = NULL;
  loom_op_handler_t* source = loom_tensor_handle_handler(handle);
  if (source == target) {
    loom_tensor_handle_retain(handle);
    *out_handle = handle;
    return loom_ok_status();
  }
  if (!loom_tensor_handle_value(handle)) {
    // The handler's own representation: off it first (to `target` if that
    // is a device), then on to `target`.
    const char* target_name = loom_op_handler_is_final(target)
                                  ? loom_context_handler_name(context, target)
                                  : NULL;
    loom_tensor_handle_t* off = NULL;
    LOOM_RETURN_IF_ERROR(
        loom__execute_unary(context, source, "CopyOff", handle, "new_device",
                            target_name ? target_name : "", &off));
    if (!off || (loom_tensor_handle_handler(off) == source &&
                 !loom_tensor_handle_value(off))) {
      loom_tensor_handle_release(off);
      return loom_make_status(
          LOOM_STATUS_INTERNAL,
          "CopyOff on op handler '%s' left the tensor on that handler",
          loom_op_handler_type_name(source));
    }
    loom_status_t status =
        loom_context_copy_to(context, off, target, out_handle);
    loom_tensor_handle_release(off);
    return status;
  }
  // A device tensor: devices share host memory, so a copy to another device
  // shares the value; a transformation handler, or a device that runs ops
  // itself (tensors of its own), takes it with CopyOn.
  if (loom_op_handler_is_final(target) &&
      !loom_op_handler_vtable(target)->execute_eager_op) {
    LOOM_RETURN_IF_ERROR(copy_in_scope(context, handle, target, out_handle));
    if (*out_handle) return loom_ok_status();
    return share_value(handle, target, out_handle);
  }
  return loom__execute_unary(context, target, "CopyOn", handle, NULL, NULL,
                             out_handle);
}

loom_status_t loom_context_resolve(loom_context_t* context,
                                   loom_tensor_handle_t* handle,
                                   loom_tensor_t** out_tensor) {
  if (!handle || !out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_resolve: %s",
                            !handle ? "Invalid handle" : "NULL argument");
  }
  *out_tensor = NULL;
  if (loom_tensor_handle_value(handle)) {
    return loom_tensor_handle_resolve(handle, out_tensor);
  }
  if (!context) context = loom_context_of_handle(handle);
  if (!context) {
    return loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "the tensor lives on op handler '%s' of a context that no longer "
        "exists: it cannot be copied off any more",
        loom_op_handler_type_name(loom_tensor_handle_handler(handle)));
  }
  loom_tensor_handle_t* host = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_context_copy_to(context, handle, context->cpu, &host));
  loom_status_t status = loom_tensor_handle_resolve(host, out_tensor);
  loom_tensor_handle_release(host);
  return status;
}

loom_status_t loom_tensor_handle_wait_metadata(
    loom_tensor_handle_t* handle, loom_tensor_metadata_t* out_metadata) {
  if (!handle || !out_metadata) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s",
                            !handle ? "Invalid handle"
                                    : "loom_tensor_handle_wait_metadata: "
                                      "out_metadata is NULL");
  }
  if (loom_tensor_handle_metadata_available(handle) ||
      !loom_tensor_handle_value(handle)) {
    return loom_tensor_handle_metadata(handle, out_metadata);
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_resolve(handle, &tensor));
  *out_metadata = *loom_tensor_metadata(tensor);
  loom_tensor_release(tensor);
  return loom_ok_status();
}

loom_dtype_t loom_tensor_handle_dtype(loom_tensor_handle_t* handle) {
  if (handle && !loom_tensor_handle_metadata_available(handle) &&
      !loom_tensor_handle_value(handle)) {
    loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
    const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
    if (vtable->tensor_dtype) {
      return vtable->tensor_dtype(handler, handle);  // without its shape
    }
  }
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_wait_metadata(handle, &metadata);
  if (status) {
    loom_status_free(status);
    return LOOM_DTYPE_INVALID;
  }
  return metadata.dtype;
}

loom_status_t loom_tensor_handle_static_value(loom_tensor_handle_t* handle,
                                              loom_tensor_t** out_tensor) {
  if (!handle || !out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s",
                            !handle ? "Invalid handle"
                                    : "loom_tensor_handle_static_value: "
                                      "out_tensor is NULL");
  }
  *out_tensor = NULL;
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (value) {
    if (!loom_async_value_is_available(value)) {
      return loom_make_status(LOOM_STATUS_NOT_FOUND,
                              "the tensor's value is not known yet");
    }
    return loom_tensor_handle_resolve(handle, out_tensor);
  }
  loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
  if (!vtable->static_value) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "op handler '%s' has no static values",
                            vtable->type_name);
  }
  return vtable->static_value(handler, handle, out_tensor);
}

size_t loom_tensor_handle_debug_string(loom_tensor_handle_t* handle,
                                       char* buffer, size_t capacity) {
  if (!buffer) capacity = 0;
  if (!handle) return (size_t)snprintf(buffer, capacity, "<invalid handle>");
  loom_op_handler_t* handler = loom_tensor_handle_handler(handle);
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
  if (vtable->tensor_debug_string) {
    return vtable->tensor_debug_string(handler, handle, buffer, capacity);
  }
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  if (value && loom_async_value_is_available(value)) {
    loom_tensor_t* tensor = NULL;
    loom_status_t status = loom_tensor_handle_resolve(handle, &tensor);
    if (!status) {
      size_t length = loom_tensor_format(tensor, buffer, capacity);
      loom_tensor_release(tensor);
      return length;
    }
    loom_status_free(status);
  }
  if (value && loom_async_value_is_error(value)) {
    return (size_t)snprintf(buffer, capacity, "<error: %s>",
                            loom_status_message(loom_async_value_error(value)));
  }
  loom_tensor_metadata_t metadata;
  char shape[96] = "?";
  const char* dtype = "?";
  if (loom_tensor_handle_metadata_available(handle)) {
    loom_status_t status = loom_tensor_handle_metadata(handle, &metadata);
    if (!status) {
      dtype = loom_dtype_name(metadata.dtype);
      loom_shape_format(&metadata.shape, shape, sizeof(shape));
    }
    loom_status_free(status);
  }
  return (size_t)snprintf(buffer, capacity, "<%s %s tensor on %s>", dtype,
                          shape, vtable->type_name);
}
