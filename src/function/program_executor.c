// The program executor: its runtime, kernel registry, op handler names,
// per-program bindings, and diagnostics.

#include <dlfcn.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "function/program_executor.h"
#include "loom/cpu_op_handler.h"
#include "loom/op_def.h"
#include "loom/op_handler.h"
#include "loom/plugin.h"

enum { kDefaultMaxCallDepth = 10000, kDefaultMaxCallsInFlight = 100000 };

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

static void deliver(loom_program_executor_t* executor,
                    const loom_program_diagnostic_t* diagnostic) {
  atomic_fetch_add(&executor->diagnostics, 1);
  pthread_mutex_lock(&executor->report_mutex);
  if (executor->diagnostic_handler) {
    executor->diagnostic_handler(executor->diagnostic_user_data, diagnostic);
  } else {
    // Keep the order of what the program printed and its errors.
    fflush(executor->output);
    fprintf(stderr, "%s:%d:%d: error: %s\n", diagnostic->location.file,
            diagnostic->location.line, diagnostic->location.column,
            diagnostic->message);
    fflush(stderr);
  }
  pthread_mutex_unlock(&executor->report_mutex);
}

void loom__program_append(char* buffer, size_t capacity, size_t* length,
                          const char* format, ...) {
  if (*length + 1 >= capacity) return;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buffer + *length, capacity - *length, format, args);
  va_end(args);
  if (n < 0) return;
  *length += (size_t)n;
  if (*length >= capacity) *length = capacity - 1;
}

const char* loom__program_status_text(loom_status_t status, char* buffer,
                                      size_t capacity) {
  const char* message = loom_status_message(status);
  if (message && *message) return message;
  loom_status_code_t code = loom_status_code(status);
  snprintf(buffer, capacity, "%s%s", loom_status_code_name(code),
           code == LOOM_STATUS_RESOURCE_EXHAUSTED
               ? ": out of memory (no memory was left for the error's "
                 "message)"
               : " (the error has no message: there was no memory for it)");
  return buffer;
}

static void report(loom_program_executor_t* executor, const char* file,
                   program_source_location_t location, loom_status_t error) {
  char fallback[128];
  const char* message =
      loom__program_status_text(error, fallback, sizeof(fallback));
  char text[4096];
  snprintf(text, sizeof(text), "runtime error: %s", message);
  loom_program_diagnostic_t diagnostic = {
      .location = {.file = file,
                   .line = location.line,
                   .column = location.column},
      .message = text};
  deliver(executor, &diagnostic);
}

void loom__program_report_at(loom_program_executor_t* executor,
                             const program_op_t* op, loom_status_t error) {
  report(executor, op->function->program->file_name, op->location, error);
}

void loom__program_report_at_location(loom_program_executor_t* executor,
                                      const loom_program_t* program,
                                      program_source_location_t location,
                                      loom_status_t error) {
  report(executor, program->file_name, location, error);
}

void loom__program_report_message(loom_program_executor_t* executor,
                                  const loom_program_t* program,
                                  program_source_location_t location,
                                  const char* message) {
  loom_program_diagnostic_t diagnostic = {
      .location = {.file = program->file_name,
                   .line = location.line,
                   .column = location.column},
      .message = message};
  deliver(executor, &diagnostic);
}

loom_location_t loom__program_location(const program_binding_t* binding,
                                       const program_op_t* op) {
  loom_location_t location;
  location.token = ((uint64_t)binding->id << 32) |
                   (uint64_t)(uint32_t)(op->global_index + 1);
  return location;
}

// The binding and op a token names, or false.
static bool decode(loom_program_executor_t* executor, loom_location_t location,
                   const program_binding_t** out_binding,
                   const program_op_t** out_op) {
  uint32_t id = (uint32_t)(location.token >> 32);
  int64_t index = (int64_t)(uint32_t)location.token - 1;
  bool found = false;
  pthread_mutex_lock(&executor->mutex);
  for (const program_binding_t* b = executor->bindings; b; b = b->next) {
    if (b->id == id && index >= 0 && index < b->num_ops) {
      *out_binding = b;
      *out_op = b->program->ops[index];
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&executor->mutex);
  return found;
}

void loom_program_executor_report(loom_program_executor_t* executor,
                                  loom_location_t location,
                                  loom_status_t error) {
  if (!executor || !error) return;
  const program_binding_t* binding = NULL;
  const program_op_t* op = NULL;
  if (decode(executor, location, &binding, &op)) {
    report(executor, binding->program->file_name, op->location, error);
  } else {
    program_source_location_t nowhere = {0, 0};
    report(executor, "<unknown>", nowhere, error);
  }
}

static void runtime_diagnostic(void* user_data,
                               const loom_diagnostic_t* diagnostic) {
  loom_program_executor_report(user_data, diagnostic->location,
                               diagnostic->error);
}

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

void loom_program_executor_options_initialize(
    loom_program_executor_options_t* options, loom_host_context_t* host) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->host = host;
}

static loom_status_t register_builtin_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(loom__program_register_tfrt_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_control_flow_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_corert_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_corert_sync_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_composite_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_benchmark_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_dht_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_btf_kernels(executor));
  return loom__program_register_shape_kernels(executor);
}

loom_status_t loom_program_executor_create(
    const loom_program_executor_options_t* options,
    loom_program_executor_t** out_executor) {
  if (!options || !options->host || !out_executor ||
      options->struct_size < sizeof(*options)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "loom_program_executor_create: %s",
        !options         ? "options is NULL"
        : !options->host ? "options->host is NULL"
        : !out_executor  ? "out_executor is NULL"
                         : "options->struct_size is too small (call "
                           "loom_program_executor_options_initialize)");
  }
  *out_executor = NULL;
  if (options->max_call_depth < 0 || options->max_calls_in_flight < 0) {
    bool depth = options->max_call_depth < 0;
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_program_executor_create: options->%s is %d; it must be >= 0 "
        "(0: the default)",
        depth ? "max_call_depth" : "max_calls_in_flight",
        depth ? options->max_call_depth : options->max_calls_in_flight);
  }
  loom_allocator_t allocator = loom_host_context_allocator(options->host);
  loom_program_executor_t* executor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*executor), (void**)&executor));
  executor->allocator = allocator;
  executor->host = options->host;
  executor->output = options->output ? options->output : stdout;
  executor->diagnostic_handler = options->diagnostic_handler;
  executor->diagnostic_user_data = options->diagnostic_user_data;
  executor->max_call_depth = options->max_call_depth > 0
                                 ? options->max_call_depth
                                 : kDefaultMaxCallDepth;
  executor->max_calls_in_flight = options->max_calls_in_flight > 0
                                      ? options->max_calls_in_flight
                                      : kDefaultMaxCallsInFlight;
  executor->next_binding_id = 1;
  loom_op_attrs_initialize(&executor->empty_attrs, allocator);
  pthread_mutex_init(&executor->mutex, NULL);
  pthread_mutex_init(&executor->report_mutex, NULL);
  pthread_mutex_init(&executor->op_attrs_mutex, NULL);
  loom__arena_initialize(&executor->arena, allocator);
  loom__hash_map_initialize(&executor->kernels, allocator);
  loom_runtime_options_t runtime_options;
  loom_runtime_options_initialize(&runtime_options, options->host);
  runtime_options.diagnostic_handler = runtime_diagnostic;
  runtime_options.diagnostic_user_data = executor;
  runtime_options.synchronous = options->synchronous;
  loom_status_t status =
      loom_runtime_create(&runtime_options, &executor->runtime);
  if (!status) status = register_builtin_kernels(executor);
  if (status) {
    loom_program_executor_destroy(executor);
    return status;
  }
  *out_executor = executor;
  return loom_ok_status();
}

void loom_program_executor_quiesce(loom_program_executor_t* executor) {
  if (!executor) return;
  for (int spins = 0;; ++spins) {
    if (executor->runtime) loom_runtime_quiesce(executor->runtime);
    loom_host_context_quiesce(executor->host);
    if (atomic_load(&executor->live_frames) == 0) {
      // Nothing is in flight: a stop (see max_calls_in_flight) is over.
      loom_status_free(loom__program_stop_clear(executor));
      break;
    }
    // Frames wait for values set by work already under way elsewhere.
    struct timespec pause = {0, spins < 100 ? 10000 : 1000000};
    nanosleep(&pause, NULL);
  }
  if (executor->runtime) loom_runtime_quiesce(executor->runtime);
}

void loom_program_executor_destroy(loom_program_executor_t* executor) {
  if (!executor) return;
  loom_program_executor_quiesce(executor);
  for (program_binding_t* binding = executor->bindings; binding;
       binding = binding->next) {
    for (int32_t i = 0; binding->prepared && i < binding->num_prepared; ++i) {
      program_prepared_t* prepared = atomic_load(&binding->prepared[i]);
      if (!prepared) continue;
      loom_prepared_op_release(prepared->op);
      loom_allocator_free(executor->allocator, prepared);
    }
  }
  for (int32_t i = 0; i < executor->num_handlers; ++i) {
    loom_op_handler_release(executor->handlers[i].handler);
  }
  loom_runtime_destroy(executor->runtime);
  for (int32_t i = 0; i < executor->num_plugins; ++i) {
    dlclose(executor->plugins[i]);
  }
  loom__hash_map_deinitialize(&executor->kernels);
  loom__arena_deinitialize(&executor->arena);
  pthread_mutex_destroy(&executor->op_attrs_mutex);
  pthread_mutex_destroy(&executor->report_mutex);
  pthread_mutex_destroy(&executor->mutex);
  loom_op_attrs_deinitialize(&executor->empty_attrs);
  loom_status_free(executor->stop_error);
  loom_allocator_free(executor->allocator, executor);
}

loom_runtime_t* loom_program_executor_runtime(
    loom_program_executor_t* executor) {
  return executor ? executor->runtime : NULL;
}

loom_program_executor_statistics_t loom_program_executor_statistics(
    const loom_program_executor_t* executor) {
  loom_program_executor_statistics_t statistics = {0};
  if (!executor) return statistics;
  loom_program_executor_t* e = (loom_program_executor_t*)executor;
  statistics.kernels_run = atomic_load(&e->kernels_run);
  statistics.kernels_skipped = atomic_load(&e->kernels_skipped);
  statistics.functions_called = atomic_load(&e->functions_called);
  statistics.diagnostics = atomic_load(&e->diagnostics);
  return statistics;
}

//===----------------------------------------------------------------------===//
// Registries
//===----------------------------------------------------------------------===//

// Grows an array kept in the executor's arena (the old one stays there).
static loom_status_t reserve(loom_program_executor_t* executor, void** data,
                             int32_t* capacity, int32_t count,
                             size_t element_size) {
  if (count < *capacity) return loom_ok_status();
  int32_t new_capacity = *capacity ? *capacity * 2 : 8;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &executor->arena, element_size * (size_t)new_capacity, &grown));
  if (count) memcpy(grown, *data, element_size * (size_t)count);
  *data = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

static const program_kernel_t* find_kernel_locked(
    const loom_program_executor_t* executor, const char* name) {
  size_t length = strlen(name);
  uint64_t hash = loom__hash_bytes(name, length);
  uint64_t found = 0;
  for (uint64_t probe = 0;
       loom__hash_map_find(&executor->kernels, hash + probe, &found); ++probe) {
    const program_kernel_t* kernel = (const program_kernel_t*)(uintptr_t)found;
    if (strcmp(kernel->name, name) == 0) return kernel;
  }
  return NULL;
}

const program_kernel_t* loom__program_find_kernel(
    loom_program_executor_t* executor, const char* name) {
  pthread_mutex_lock(&executor->mutex);
  const program_kernel_t* kernel = find_kernel_locked(executor, name);
  pthread_mutex_unlock(&executor->mutex);
  return kernel;
}

loom_status_t loom_program_executor_add_kernel(
    loom_program_executor_t* executor, const loom_program_kernel_def_t* def) {
  if (!executor || !def || !def->name || !def->fn ||
      def->struct_size < sizeof(*def)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_executor_add_kernel: %s",
                            !executor    ? "executor is NULL"
                            : !def       ? "def is NULL"
                            : !def->name ? "def->name is NULL"
                            : !def->fn   ? "def->fn is NULL"
                                         : "def->struct_size is too small");
  }
  if (!*def->name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "a kernel name must not be empty");
  }
  pthread_mutex_lock(&executor->mutex);
  loom_status_t status = loom_ok_status();
  if (find_kernel_locked(executor, def->name)) {
    status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                              "a kernel named '%s' is already registered",
                              def->name);
  }
  program_kernel_t* kernel = NULL;
  if (!status) {
    status = loom__arena_allocate(&executor->arena, sizeof(*kernel),
                                  (void**)&kernel);
  }
  if (!status) {
    status = loom__arena_strndup(&executor->arena, def->name, strlen(def->name),
                                 &kernel->name);
  }
  if (!status) {
    kernel->fn = def->fn;
    kernel->user_data = def->user_data;
    kernel->num_arguments = def->num_arguments;
    kernel->num_results = def->num_results;
    uint64_t slot = loom__hash_bytes(def->name, strlen(def->name));
    while (loom__hash_map_find(&executor->kernels, slot, NULL)) ++slot;
    status = loom__hash_map_insert(&executor->kernels, slot,
                                   (uint64_t)(uintptr_t)kernel);
  }
  pthread_mutex_unlock(&executor->mutex);
  return status;
}

loom_status_t loom_program_executor_add_cpu_ops(
    loom_program_executor_t* executor, loom_program_cpu_ops_fn_t fn,
    void* user_data) {
  if (!executor || !fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_executor_add_cpu_ops: %s is NULL",
                            !executor ? "executor" : "fn");
  }
  loom_op_handler_t* cpu =
      loom_runtime_get_op_handler(executor->runtime, "cpu");
  if (cpu) LOOM_RETURN_IF_ERROR(fn(cpu, user_data));
  pthread_mutex_lock(&executor->mutex);
  loom_status_t status =
      reserve(executor, (void**)&executor->cpu_ops, &executor->cpu_ops_capacity,
              executor->num_cpu_ops, sizeof(program_cpu_ops_t));
  if (!status) {
    executor->cpu_ops[executor->num_cpu_ops].fn = fn;
    executor->cpu_ops[executor->num_cpu_ops].user_data = user_data;
    executor->num_cpu_ops++;
  }
  pthread_mutex_unlock(&executor->mutex);
  return status;
}

loom_status_t loom__program_apply_cpu_ops(loom_program_executor_t* executor,
                                          loom_op_handler_t* cpu) {
  pthread_mutex_lock(&executor->mutex);
  int32_t count = executor->num_cpu_ops;
  program_cpu_ops_t* hooks = executor->cpu_ops;
  pthread_mutex_unlock(&executor->mutex);
  for (int32_t i = 0; i < count; ++i) {
    LOOM_RETURN_IF_ERROR(hooks[i].fn(cpu, hooks[i].user_data));
  }
  return loom_ok_status();
}

loom_status_t loom__program_register_handler(loom_program_executor_t* executor,
                                             const char* name,
                                             loom_op_handler_t* handler) {
  loom_status_t status = loom_ok_status();
  loom_op_handler_t* replaced = NULL;
  pthread_mutex_lock(&executor->mutex);
  int32_t i = 0;
  for (; i < executor->num_handlers; ++i) {
    if (strcmp(executor->handlers[i].name, name) == 0) break;
  }
  if (i == executor->num_handlers) {
    status = reserve(executor, (void**)&executor->handlers,
                     &executor->handlers_capacity, executor->num_handlers,
                     sizeof(program_named_handler_t));
    if (!status) {
      status = loom__arena_strndup(&executor->arena, name, strlen(name),
                                   &executor->handlers[i].name);
    }
    if (!status) {
      executor->handlers[i].handler = NULL;
      executor->num_handlers++;
    }
  }
  if (!status) {
    replaced = executor->handlers[i].handler;
    loom_op_handler_retain(handler);
    executor->handlers[i].handler = handler;
  }
  pthread_mutex_unlock(&executor->mutex);
  loom_op_handler_release(replaced);
  return status;
}

loom_op_handler_t* loom__program_get_handler(loom_program_executor_t* executor,
                                             const char* name) {
  loom_op_handler_t* found = NULL;
  pthread_mutex_lock(&executor->mutex);
  for (int32_t i = 0; i < executor->num_handlers; ++i) {
    if (strcmp(executor->handlers[i].name, name) == 0) {
      found = executor->handlers[i].handler;
      loom_op_handler_retain(found);
      break;
    }
  }
  pthread_mutex_unlock(&executor->mutex);
  if (found) return found;
  found = loom_runtime_get_op_handler(executor->runtime, name);
  if (found) loom_op_handler_retain(found);
  return found;
}

//===----------------------------------------------------------------------===//
// Plugins
//===----------------------------------------------------------------------===//

loom_status_t loom_program_executor_load_plugin(
    loom_program_executor_t* executor, const char* path) {
  if (!executor || !path) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_executor_load_plugin: %s is NULL",
                            !executor ? "executor" : "path");
  }
  // As TF_LoadLibrary loads it: whatever it registers (from static
  // initialisers or TensorFlow's entry points) belongs to the load, all or
  // nothing; a library with no entry point at all is fine.
  loom_plugin_t* plugin = NULL;
  loom_status_t status = loom_plugin_load(executor->allocator, path, &plugin);
  loom_plugin_release(plugin);
  if (status) return status;  // names the library already
  // Loaded now: this only finds it (and holds a reference to it).
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle) {
    const char* why = dlerror();
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "plugin '%s' loaded but cannot be found: %s", path,
                            why ? why : "unknown error");
  }
  loom_program_plugin_init_fn_t init = NULL;
  void* symbol = dlsym(handle, LOOM_PROGRAM_PLUGIN_ENTRY_POINT);
  memcpy(&init, &symbol, sizeof(init));
  if (!status) {
    pthread_mutex_lock(&executor->mutex);
    status = reserve(executor, (void**)&executor->plugins,
                     &executor->plugins_capacity, executor->num_plugins,
                     sizeof(void*));
    if (!status) executor->plugins[executor->num_plugins++] = handle;
    pthread_mutex_unlock(&executor->mutex);
  }
  if (status) {
    dlclose(handle);
    return status;
  }
  if (init) {
    status = init(executor);
    if (status) return loom_status_annotate(status, "plugin '%s'", path);
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Binding
//===----------------------------------------------------------------------===//

// The first attribute of a corert.executeop that its op's definition does
// not declare, as TensorFlow rejects one ("NodeDef mentions attr 'x' not in
// Op<...>"): writes the message and its location, and returns true. Names
// that start with '_' are internal attributes TensorFlow lets through; ops
// without a definition (a handler's native ops) declare nothing to check.
static bool find_unknown_attr(loom_program_executor_t* executor,
                              const program_op_t* op, char* message,
                              size_t capacity,
                              program_source_location_t* out_location) {
  if (!op->execute_name || op->num_execute_keys == 0) return false;
  const loom_op_def_t* def = loom_op_registry_find(
      loom_runtime_ops(executor->runtime), op->execute_name);
  if (!def) return false;
  for (int32_t i = 0; i < op->num_execute_keys; ++i) {
    const char* key = op->execute_keys[i];
    if (key[0] == '_' || loom_op_def_find_attr(def, key)) continue;
    size_t n = 0;
    loom__program_append(message, capacity, &n,
                         "op '%s' has no attribute '%s'; ", def->name, key);
    if (def->num_attrs == 0) {
      loom__program_append(message, capacity, &n, "it has no attributes");
    }
    for (int32_t j = 0; j < def->num_attrs; ++j) {
      loom__program_append(message, capacity, &n, "%s%s",
                           j ? ", " : "its attributes are ",
                           def->attrs[j].name);
    }
    *out_location = op->execute_key_locations[i];
    return true;
  }
  return false;
}

static loom_status_t bind_ops(loom_program_executor_t* executor,
                              const loom_program_t* program,
                              program_binding_t* binding) {
  loom_status_t first = loom_ok_status();
  for (int32_t i = 0; i < program->num_ops; ++i) {
    const program_op_t* op = program->ops[i];
    if (op->is_return) continue;
    const program_kernel_t* kernel = find_kernel_locked(executor, op->name);
    char message[512];
    message[0] = '\0';
    program_source_location_t location = op->location;
    if (!kernel) {
      snprintf(message, sizeof(message),
               "'%s' is not a known kernel (load the plugin that provides it "
               "with --plugin)",
               op->name);
    } else if (kernel->num_arguments >= 0 &&
               op->num_operands != kernel->num_arguments) {
      snprintf(message, sizeof(message), "'%s' takes %d argument%s, got %d",
               op->name, kernel->num_arguments,
               kernel->num_arguments == 1 ? "" : "s", op->num_operands);
    } else if (kernel->num_results >= 0 &&
               op->num_results != kernel->num_results) {
      snprintf(message, sizeof(message), "'%s' has %d result%s, got %d",
               op->name, kernel->num_results,
               kernel->num_results == 1 ? "" : "s", op->num_results);
    } else {
      find_unknown_attr(executor, op, message, sizeof(message), &location);
    }
    if (message[0]) {
      loom__program_report_message(executor, program, location, message);
      if (!first) {
        first = loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                                 "%s:%d:%d: %s", program->file_name,
                                 location.line, location.column, message);
      }
      continue;
    }
    binding->kernels[i] = kernel;
  }
  return first;
}

loom_status_t loom__program_bind(loom_program_executor_t* executor,
                                 const loom_program_t* program,
                                 program_binding_t** out_binding) {
  pthread_mutex_lock(&executor->mutex);
  for (program_binding_t* b = executor->bindings; b; b = b->next) {
    if (b->program_id == program->id) {
      pthread_mutex_unlock(&executor->mutex);
      *out_binding = b;
      return loom_ok_status();
    }
  }
  program_binding_t* binding = NULL;
  size_t count = (size_t)program->num_ops;
  loom_status_t status = loom__arena_allocate(
      &executor->arena, sizeof(*binding), (void**)&binding);
  if (!status && count) {
    status = loom__arena_allocate(&executor->arena,
                                  sizeof(*binding->kernels) * count,
                                  (void**)&binding->kernels);
  }
  size_t names = (size_t)program->num_execute_names;
  if (!status && names) {
    status = loom__arena_allocate(&executor->arena,
                                  sizeof(*binding->prepared) * names,
                                  (void**)&binding->prepared);
  }
  if (!status) {
    binding->program = program;
    binding->program_id = program->id;
    binding->id = executor->next_binding_id++;
    binding->num_ops = program->num_ops;
    binding->num_prepared = (int32_t)names;
    for (size_t i = 0; i < names; ++i) atomic_init(&binding->prepared[i], NULL);
    status = bind_ops(executor, program, binding);
  }
  if (!status) {
    binding->next = executor->bindings;
    executor->bindings = binding;
    *out_binding = binding;
  }
  pthread_mutex_unlock(&executor->mutex);
  return status;
}
