// The core runtime: handler registry, op preparation, Execute, errors.

#include <string.h>

#include "base/rwlock.h"
#include "corert/corert_internal.h"
#include "loom/builtin_ops.h"
#include "loom/cpu_op_handler.h"
#include "loom/host_context.h"
#include "registry/op_registry_generation.h"

void loom_runtime_options_initialize(loom_runtime_options_t* options,
                                     loom_host_context_t* host) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->host = host;
}

static loom_status_t register_default_handlers(loom_runtime_t* runtime) {
  loom_op_handler_t* null_handler = NULL;
  loom_op_handler_t* cpu = NULL;
  LOOM_RETURN_IF_ERROR(loom_null_op_handler_create(runtime, &null_handler));
  loom_status_t status =
      loom_runtime_register_op_handler(runtime, "null", null_handler);
  if (!status) status = loom_cpu_op_handler_create(runtime, null_handler, &cpu);
  if (!status) status = loom_runtime_register_op_handler(runtime, "cpu", cpu);
  loom_op_handler_release(cpu);
  loom_op_handler_release(null_handler);
  return status;
}

loom_status_t loom_runtime_create(const loom_runtime_options_t* options,
                                  loom_runtime_t** out_runtime) {
  if (!options || !options->host || !out_runtime) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_runtime_create: %s is NULL",
                            !options         ? "options"
                            : !options->host ? "options->host"
                                             : "out_runtime");
  }
  *out_runtime = NULL;
  loom_allocator_t allocator = loom_host_context_allocator(options->host);
  loom_runtime_t* runtime = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*runtime), (void**)&runtime));
  loom__ref_count_init(&runtime->ref_count);
  runtime->host = options->host;
  runtime->allocator = allocator;
  runtime->diagnostic_handler = options->diagnostic_handler;
  runtime->diagnostic_user_data = options->diagnostic_user_data;
  runtime->ops = options->ops ? options->ops : loom_op_registry_global();
  runtime->kernels =
      options->kernels ? options->kernels : loom_kernel_registry_global();
  runtime->synchronous = options->synchronous;
  runtime->inline_element_limit =
      options->inline_element_limit ? options->inline_element_limit : 16384;
  runtime->owner_kind = options->owner_kind;
  atomic_init(&runtime->owner, options->owner);
  loom__rwlock_initialize(&runtime->handlers_lock);
  loom__rwlock_initialize(&runtime->prepared_lock);
  loom__hash_map_initialize(&runtime->prepared, allocator);
  loom_status_t status = loom_ok_status();
  if (!runtime->ops || !runtime->kernels) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "the global registries could not be created");
  }
  // The built-in op library lives in the global registries.
  if (!status && !options->ops && !options->kernels) {
    status = loom_builtin_ops_register();
  }
  if (!status) status = register_default_handlers(runtime);
  if (status) {
    loom_runtime_destroy(runtime);
    return status;
  }
  *out_runtime = runtime;
  return loom_ok_status();
}

void loom__runtime_retain(loom_runtime_t* runtime) {
  loom__ref_count_inc(&runtime->ref_count);
}

// The last reference: the caller's went with destroy, the handlers' with
// them (a handle keeps its handler, and through it the runtime, alive).
void loom__runtime_release(loom_runtime_t* runtime) {
  if (!loom__ref_count_dec(&runtime->ref_count)) return;
  loom__hash_map_deinitialize(&runtime->prepared);
  pthread_rwlock_destroy(&runtime->prepared_lock);
  pthread_rwlock_destroy(&runtime->handlers_lock);
  loom_allocator_free(runtime->allocator, runtime);
}

void loom_runtime_destroy(loom_runtime_t* runtime) {
  if (!runtime) return;
  atomic_store_explicit(&runtime->owner, NULL, memory_order_release);
  loom_runtime_quiesce(runtime);
  // Drop the runtime's own references (the prepared-op cache, the handler
  // registry); handles and handlers still held elsewhere keep the rest.
  pthread_rwlock_wrlock(&runtime->prepared_lock);
  size_t cursor = 0;
  uint64_t head = 0;
  while (loom__hash_map_next(&runtime->prepared, &cursor, NULL, &head)) {
    for (loom_prepared_op_t* op = (loom_prepared_op_t*)(uintptr_t)head; op;) {
      loom_prepared_op_t* next = op->next_cached;
      loom_prepared_op_release(op);
      op = next;
    }
  }
  loom__hash_map_deinitialize(&runtime->prepared);
  pthread_rwlock_unlock(&runtime->prepared_lock);
  pthread_rwlock_wrlock(&runtime->handlers_lock);
  int32_t count = runtime->num_handlers;
  runtime->num_handlers = 0;
  pthread_rwlock_unlock(&runtime->handlers_lock);
  for (int32_t i = 0; i < count; ++i) {
    loom_op_handler_release(runtime->handlers[i]);
    loom_allocator_free(runtime->allocator, (void*)runtime->handler_names[i]);
  }
  loom__runtime_release(runtime);
}

loom_host_context_t* loom_runtime_host(const loom_runtime_t* runtime) {
  return runtime ? runtime->host : NULL;
}

void* loom_runtime_owner(const loom_runtime_t* runtime,
                         const void* owner_kind) {
  if (!runtime || runtime->owner_kind != owner_kind) return NULL;
  return atomic_load_explicit(&((loom_runtime_t*)runtime)->owner,
                              memory_order_acquire);
}

loom_op_registry_t* loom_runtime_ops(const loom_runtime_t* runtime) {
  return runtime ? runtime->ops : NULL;
}

loom_kernel_registry_t* loom_runtime_kernels(const loom_runtime_t* runtime) {
  return runtime ? runtime->kernels : NULL;
}

loom_status_t loom_runtime_register_op_handler(loom_runtime_t* runtime,
                                               const char* name,
                                               loom_op_handler_t* handler) {
  if (!runtime || !name || !handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_runtime_register_op_handler: %s is NULL",
                            !runtime ? "runtime"
                            : !name  ? "name"
                                     : "handler");
  }
  size_t length = strlen(name);
  char* copy = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(runtime->allocator, length + 1, (void**)&copy));
  memcpy(copy, name, length + 1);
  loom_status_t status = loom_ok_status();
  pthread_rwlock_wrlock(&runtime->handlers_lock);
  for (int32_t i = 0; i < runtime->num_handlers && !status; ++i) {
    if (strcmp(runtime->handler_names[i], name) == 0) {
      status = loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                                "an op handler named '%s' is already "
                                "registered",
                                name);
    }
  }
  if (!status && runtime->num_handlers == kMaxHandlers) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "more than %d op handlers", kMaxHandlers);
  }
  if (!status) {
    runtime->handler_names[runtime->num_handlers] = copy;
    runtime->handlers[runtime->num_handlers] = handler;
    runtime->num_handlers++;
    loom_op_handler_retain(handler);
  }
  pthread_rwlock_unlock(&runtime->handlers_lock);
  if (status) loom_allocator_free(runtime->allocator, copy);
  return status;
}

loom_op_handler_t* loom_runtime_get_op_handler(loom_runtime_t* runtime,
                                               const char* name) {
  if (!runtime || !name) return NULL;
  loom_op_handler_t* found = NULL;
  pthread_rwlock_rdlock(&runtime->handlers_lock);
  for (int32_t i = 0; i < runtime->num_handlers; ++i) {
    if (strcmp(runtime->handler_names[i], name) == 0) {
      found = runtime->handlers[i];
    }
  }
  pthread_rwlock_unlock(&runtime->handlers_lock);
  return found;
}

//===----------------------------------------------------------------------===//
// Prepared ops
//===----------------------------------------------------------------------===//

// A prepared op of `op_name` on `handler` (which accepted it, with `data`),
// requested of `requested`. On failure the data is released.
static loom_status_t new_prepared_op(loom_runtime_t* runtime,
                                     const char* op_name, uint64_t generation,
                                     const loom_op_def_t* def,
                                     loom_op_handler_t* requested,
                                     loom_op_handler_t* handler, void* data,
                                     loom_prepared_op_t** out_op) {
  size_t length = strlen(op_name);
  loom_prepared_op_t* op = NULL;
  loom_status_t status = loom_allocator_malloc(
      runtime->allocator, sizeof(*op) + length + 1, (void**)&op);
  if (status) {
    if (handler->vtable->release_op_data) {
      handler->vtable->release_op_data(handler, data);
    }
    return status;
  }
  loom__ref_count_init(&op->ref_count);
  op->runtime = runtime;
  op->requested = requested;
  loom_op_handler_retain(requested);
  op->next_cached = NULL;
  op->cache_key = 0;
  op->generation = generation;
  op->handler = handler;
  loom_op_handler_retain(handler);
  op->def = def;
  op->data = data;
  memcpy(op->name, op_name, length + 1);
  *out_op = op;
  return loom_ok_status();
}

static loom_status_t prepare_on(loom_runtime_t* runtime, const char* op_name,
                                uint64_t generation, const loom_op_def_t* def,
                                loom_op_handler_t* handler,
                                loom_prepared_op_t** out_op);

loom_status_t loom_runtime_prepare_op(loom_runtime_t* runtime,
                                      const char* op_name,
                                      loom_op_handler_t* handler,
                                      loom_prepared_op_t** out_op) {
  if (!runtime || !op_name || !handler || !out_op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_runtime_prepare_op: %s is NULL",
                            !runtime   ? "runtime"
                            : !op_name ? "op_name"
                            : !handler ? "handler"
                                       : "out_op");
  }
  *out_op = NULL;
  uint64_t generation = loom__registry_generation();
  const loom_op_def_t* def = loom_op_registry_find(runtime->ops, op_name);
  return prepare_on(runtime, op_name, generation, def, handler, out_op);
}

loom_status_t loom__runtime_prepare_op_known(loom_runtime_t* runtime,
                                             const char* op_name,
                                             const loom_op_def_t* def,
                                             uint64_t generation,
                                             loom_op_handler_t* handler,
                                             loom_prepared_op_t** out_op) {
  // A final handler's prepared ops are cached by name (no look-up when
  // found); a definition from an older generation may be stale.
  if (!def || loom_op_handler_is_final(handler) ||
      generation != loom__registry_generation()) {
    return loom_runtime_prepare_op_shared(runtime, op_name, handler, out_op);
  }
  *out_op = NULL;
  return prepare_on(runtime, op_name, generation, def, handler, out_op);
}

// Prepares `op_name` (defined by `def`, looked up at `generation`) on the
// first handler of `handler`'s fallback chain that accepts it.
static loom_status_t prepare_on(loom_runtime_t* runtime, const char* op_name,
                                uint64_t generation, const loom_op_def_t* def,
                                loom_op_handler_t* handler,
                                loom_prepared_op_t** out_op) {
  for (loom_op_handler_t* h = handler; h; h = h->fallback) {
    void* data = NULL;
    loom_status_t status = h->vtable->prepare(h, op_name, def, &data);
    if (status && loom_status_code(status) == LOOM_STATUS_NOT_FOUND) {
      loom_status_free(status);
      continue;
    }
    LOOM_RETURN_IF_ERROR(status);
    return new_prepared_op(runtime, op_name, generation, def, handler, h, data,
                           out_op);
  }
  return loom_make_status(LOOM_STATUS_NOT_FOUND,
                          "op '%s' is not supported by op handler '%s'%s",
                          op_name, handler->vtable->type_name,
                          def ? "" : " (it is not a registered op)");
}

loom_status_t loom_runtime_prepare_op_like(loom_prepared_op_t* sibling,
                                           loom_op_handler_t* handler,
                                           loom_prepared_op_t** out_op) {
  if (!sibling || !handler || !out_op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_runtime_prepare_op_like: %s is NULL",
                            !sibling   ? "sibling"
                            : !handler ? "handler"
                                       : "out_op");
  }
  *out_op = NULL;
  loom_op_handler_t* source = sibling->handler;
  const loom_op_handler_vtable_t* vtable = handler->vtable;
  if (vtable->reuse_op_data && source == sibling->requested &&
      source != handler && source->vtable->execute == vtable->execute &&
      source->vtable->reuse_op_data == vtable->reuse_op_data &&
      sibling->runtime == handler->runtime) {
    void* data = NULL;
    loom_status_t status =
        vtable->reuse_op_data(handler, source, sibling->data, &data);
    if (!status) {
      return new_prepared_op(handler->runtime, sibling->name,
                             sibling->generation, sibling->def, handler,
                             handler, data, out_op);
    }
    if (loom_status_code(status) != LOOM_STATUS_NOT_FOUND) return status;
    loom_status_free(status);
  }
  if (sibling->runtime == handler->runtime) {
    return loom__runtime_prepare_op_known(handler->runtime, sibling->name,
                                          sibling->def, sibling->generation,
                                          handler, out_op);
  }
  return loom_runtime_prepare_op_shared(handler->runtime, sibling->name,
                                        handler, out_op);
}

void loom_prepared_op_retain(loom_prepared_op_t* op) {
  if (op) loom__ref_count_inc(&op->ref_count);
}

void loom_prepared_op_release(loom_prepared_op_t* op) {
  if (!op || !loom__ref_count_dec(&op->ref_count)) return;
  loom_op_handler_t* handler = op->handler;
  if (handler->vtable->release_op_data) {
    handler->vtable->release_op_data(handler, op->data);
  }
  loom_op_handler_t* requested = op->requested;
  loom_allocator_free(op->runtime->allocator, op);
  loom_op_handler_release(handler);
  loom_op_handler_release(requested);
}

const char* loom_prepared_op_name(const loom_prepared_op_t* op) {
  return op ? op->name : NULL;
}

//===----------------------------------------------------------------------===//
// Execute
//===----------------------------------------------------------------------===//

void loom__runtime_report(loom_runtime_t* runtime, loom_location_t location,
                          const char* op_name, loom_status_t error) {
  atomic_fetch_add(&runtime->errors_reported, 1);
  if (!runtime->diagnostic_handler) return;
  loom_diagnostic_t diagnostic = {
      .location = location, .error = error, .op_name = op_name};
  runtime->diagnostic_handler(runtime->diagnostic_user_data, &diagnostic);
}

void loom__runtime_dispatch_started(loom_runtime_t* runtime) {
  atomic_fetch_add(&runtime->pending, 1);
}

void loom__runtime_dispatch_finished(loom_runtime_t* runtime) {
  atomic_fetch_sub(&runtime->pending, 1);
}

void loom__runtime_count_dispatch(loom_runtime_t* runtime, bool inline_run) {
  atomic_fetch_add_explicit(
      inline_run ? &runtime->ops_inline : &runtime->ops_enqueued, 1,
      memory_order_relaxed);
}

// Releases whatever the caller handed over when the invocation cannot even
// be formed, and fills the results (if any) with error handles.
static loom_status_t reject(loom_prepared_op_t* op,
                            loom_tensor_handle_t** arguments,
                            int32_t num_arguments,
                            loom_tensor_handle_t** results, int32_t num_results,
                            loom_status_t error) {
  for (int32_t i = 0; arguments && i < num_arguments; ++i) {
    loom_tensor_handle_release(arguments[i]);
    arguments[i] = NULL;
  }
  if (op && results && num_results > 0) {
    loom_op_invocation_t invocation = {
        .op = op, .results = results, .num_results = num_results};
    loom_status_free(
        loom_op_invocation_fail(&invocation, loom_status_clone(error), false));
  }
  return error;
}

// Inline: after an op that ran inline (the common case) it is a check of
// each result, not worth a call.
static inline void wait_for_results(loom_runtime_t* runtime,
                                    loom_tensor_handle_t** results,
                                    int32_t num_results,
                                    loom_async_value_t** chain) {
  for (int32_t i = 0; i < num_results; ++i) {
    // Inline ops are done already: no call for them.
    if (!results[i] || !results[i]->value ||
        loom_async_value_is_set(results[i]->value)) {
      continue;
    }
    loom_status_ignore(
        loom_host_context_await(runtime->host, &results[i]->value, 1));
  }
  if (chain && *chain) {
    loom_status_ignore(loom_host_context_await(runtime->host, chain, 1));
  }
}

loom_status_t loom_runtime_execute_prepared(
    loom_prepared_op_t* op, loom_location_t location,
    loom_tensor_handle_t** arguments, int32_t num_arguments,
    const loom_op_attrs_t* attrs, loom_tensor_handle_t** results,
    int32_t num_results, loom_async_value_t** chain) {
  loom_op_invocation_t invocation = {
      .op = op,
      .location = location,
      .arguments = arguments,
      .num_arguments = num_arguments,
      .attrs = attrs,
      .results = results,
      .num_results = num_results,
      .chain = chain,
  };
  return loom_runtime_execute_invocation(&invocation);
}

loom_status_t loom_runtime_execute_invocation(
    loom_op_invocation_t* invocation) {
  if (!invocation) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Execute: the invocation is NULL");
  }
  loom_prepared_op_t* op = invocation->op;
  loom_tensor_handle_t** arguments = invocation->arguments;
  int32_t num_arguments = invocation->num_arguments;
  loom_tensor_handle_t** results = invocation->results;
  int32_t num_results = invocation->num_results;
  loom_async_value_t** chain = invocation->chain;
  if (!op || (num_arguments > 0 && !arguments) || num_arguments < 0 ||
      (num_results > 0 && !results) || num_results < 0) {
    return reject(op, arguments, num_arguments, results, num_results,
                  loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Execute: %s",
                                   !op ? "the prepared op is NULL"
                                       : "invalid argument or result arrays"));
  }
  for (int32_t i = 0; i < num_arguments; ++i) {
    if (!arguments[i]) {
      return reject(
          op, arguments, num_arguments, results, num_results,
          loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                           "op '%s': argument %d is NULL", op->name, i));
    }
  }
  loom_runtime_t* runtime = op->runtime;
  invocation->notes = NULL;
  if (loom_host_context_is_cancelled(runtime->host)) {
    return loom_op_invocation_fail(
        invocation, loom_host_context_cancel_status(runtime->host), false);
  }
  if (LOOM_UNLIKELY(invocation->cancellation != NULL) &&
      (loom_cancellation_is_cancelled(invocation->cancellation) ||
       loom_cancellation_is_cancelling(invocation->cancellation))) {
    return loom_op_invocation_fail(invocation,
                                   loom_cancellation_error(op->name), false);
  }
  loom_status_t status = loom__handler_execute(op->handler, invocation);
  if (runtime->synchronous) {
    wait_for_results(runtime, results, num_results, chain);
  }
  return status;
}

loom_status_t loom__runtime_execute_lent(loom_op_invocation_t* invocation,
                                         loom__cpu_memo_t* memo) {
  loom_prepared_op_t* op = invocation->op;
  loom_op_handler_t* handler = op->handler;
  loom_runtime_t* runtime = op->runtime;
  bool lent = loom__is_cpu_handler(handler);
  if (!lent) {
    for (int32_t i = 0; i < invocation->num_arguments; ++i) {
      loom_tensor_handle_retain(invocation->arguments[i]);
    }
  }
  invocation->notes = NULL;
  loom_status_t cancelled = loom_ok_status();
  if (LOOM_UNLIKELY(loom_host_context_is_cancelled(runtime->host))) {
    cancelled = loom_host_context_cancel_status(runtime->host);
  } else if (LOOM_UNLIKELY(invocation->cancellation != NULL) &&
             (loom_cancellation_is_cancelled(invocation->cancellation) ||
              loom_cancellation_is_cancelling(invocation->cancellation))) {
    cancelled = loom_cancellation_error(op->name);
  }
  if (LOOM_UNLIKELY(cancelled != NULL)) {
    // loom_op_invocation_fail releases the arguments: they become its.
    for (int32_t i = 0; lent && i < invocation->num_arguments; ++i) {
      loom_tensor_handle_retain(invocation->arguments[i]);
    }
    return loom_op_invocation_fail(invocation, cancelled, false);
  }
  loom_status_t status = lent
                             ? loom__cpu_execute_lent(handler, invocation, memo)
                             : loom__handler_execute(handler, invocation);
  if (runtime->synchronous) {
    wait_for_results(runtime, invocation->results, invocation->num_results,
                     invocation->chain);
  }
  return status;
}

static uint64_t cache_key(const loom_op_handler_t* handler,
                          const char* op_name) {
  return loom__hash_bytes(op_name, strlen(op_name)) ^
         loom__hash_u64((uint64_t)(uintptr_t)handler);
}

// Whether `op` is the cached prepared op of (handler, op_name) prepared
// since the registries last changed.
static bool cached_as(const loom_prepared_op_t* op, uint64_t key,
                      const loom_op_handler_t* handler, const char* op_name,
                      uint64_t generation) {
  return op->cache_key == key && op->requested == handler &&
         op->generation == generation && strcmp(op->name, op_name) == 0;
}

// The cached prepared op for (handler, op_name), retained, or NULL (also
// when the one cached was prepared before the registries changed).
static loom_prepared_op_t* find_prepared(loom_runtime_t* runtime,
                                         loom_op_handler_t* handler,
                                         const char* op_name, uint64_t key) {
  loom_prepared_op_t* found = NULL;
  uint64_t head = 0;
  uint64_t generation = loom__registry_generation();
  pthread_rwlock_rdlock(&runtime->prepared_lock);
  if (loom__hash_map_find(&runtime->prepared, key, &head)) {
    for (loom_prepared_op_t* op = (loom_prepared_op_t*)(uintptr_t)head; op;
         op = op->next_cached) {
      if (cached_as(op, key, handler, op_name, generation)) {
        found = op;
        loom_prepared_op_retain(found);
        break;
      }
    }
  }
  pthread_rwlock_unlock(&runtime->prepared_lock);
  return found;
}

// Releases the cache's references to a chain of dropped entries.
static void release_chain(loom_prepared_op_t* op) {
  while (op) {
    loom_prepared_op_t* next = op->next_cached;
    op->next_cached = NULL;
    loom_prepared_op_release(op);
    op = next;
  }
}

// Prepares (handler, op_name) once: later calls by name reuse it. Returns
// a new reference.
// Whether an op may be shared by callers that did not ask for it by name:
// a registered, stateless one.
static bool shareable(const loom_prepared_op_t* op) {
  return op->def && !op->def->is_stateful;
}

// `stateless_only`: a stateful op gets a new prepared op of its own.
static loom_status_t prepare_cached(loom_runtime_t* runtime,
                                    loom_op_handler_t* handler,
                                    const char* op_name, bool stateless_only,
                                    loom_prepared_op_t** out_op) {
  uint64_t key = cache_key(handler, op_name);
  *out_op = find_prepared(runtime, handler, op_name, key);
  if (*out_op && (!stateless_only || shareable(*out_op))) {
    return loom_ok_status();
  }
  if (*out_op) {
    loom_prepared_op_release(*out_op);
    *out_op = NULL;
    return loom_runtime_prepare_op(runtime, op_name, handler, out_op);
  }
  loom_prepared_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_runtime_prepare_op(runtime, op_name, handler, &op));
  if (stateless_only && !shareable(op)) {
    *out_op = op;
    return loom_ok_status();
  }
  op->cache_key = key;
  pthread_rwlock_wrlock(&runtime->prepared_lock);
  uint64_t head = 0;
  loom__hash_map_find(&runtime->prepared, key, &head);
  loom_prepared_op_t* raced = NULL;
  // Drops the entries of (handler, op_name) prepared at an older generation
  // (holders keep their references), and finds one prepared meanwhile at
  // this generation or a newer one.
  loom_prepared_op_t* stale = NULL;
  loom_prepared_op_t* first = (loom_prepared_op_t*)(uintptr_t)head;
  for (loom_prepared_op_t** link = &first; *link;) {
    loom_prepared_op_t* other = *link;
    bool same = other->cache_key == key && other->requested == handler &&
                strcmp(other->name, op_name) == 0;
    if (same && other->generation < op->generation) {
      *link = other->next_cached;
      other->next_cached = stale;
      stale = other;
      continue;
    }
    if (same && !raced) raced = other;
    link = &other->next_cached;
  }
  if (stale) {
    head = (uint64_t)(uintptr_t)first;
    if (head) {
      // Replacing the value of a present key allocates nothing.
      loom_status_ignore(loom__hash_map_insert(&runtime->prepared, key, head));
    } else {
      loom__hash_map_remove(&runtime->prepared, key);
    }
  }
  if (raced) {
    // Another thread prepared it meanwhile: use theirs.
    loom_prepared_op_retain(raced);
    pthread_rwlock_unlock(&runtime->prepared_lock);
    release_chain(stale);
    loom_prepared_op_release(op);
    *out_op = raced;
    return loom_ok_status();
  }
  op->next_cached = (loom_prepared_op_t*)(uintptr_t)head;
  loom_status_t inserted =
      loom__hash_map_insert(&runtime->prepared, key, (uint64_t)(uintptr_t)op);
  if (inserted) {
    // Out of memory for the cache: run it uncached, the caller's reference
    // only; the next call by name prepares it again.
    loom_status_free(inserted);
    op->next_cached = NULL;
  } else {
    loom_prepared_op_retain(op);  // the cache's reference
  }
  pthread_rwlock_unlock(&runtime->prepared_lock);
  release_chain(stale);
  *out_op = op;
  return loom_ok_status();
}

loom_status_t loom_runtime_prepare_op_shared(loom_runtime_t* runtime,
                                             const char* op_name,
                                             loom_op_handler_t* handler,
                                             loom_prepared_op_t** out_op) {
  if (!runtime || !op_name || !handler || !out_op ||
      !loom_op_handler_is_final(handler)) {
    return loom_runtime_prepare_op(runtime, op_name, handler, out_op);
  }
  return prepare_cached(runtime, handler, op_name, true, out_op);
}

loom_status_t loom_runtime_execute(
    loom_runtime_t* runtime, const char* op_name, loom_op_handler_t* handler,
    loom_location_t location, loom_tensor_handle_t** arguments,
    int32_t num_arguments, const loom_op_attrs_t* attrs,
    loom_tensor_handle_t** results, int32_t num_results,
    loom_async_value_t** chain) {
  loom_prepared_op_t* op = NULL;
  loom_status_t status =
      runtime && op_name && handler
          ? prepare_cached(runtime, handler, op_name, false, &op)
          : loom_runtime_prepare_op(runtime, op_name, handler, &op);
  if (status) {
    for (int32_t i = 0; arguments && i < num_arguments; ++i) {
      loom_tensor_handle_release(arguments[i]);
      arguments[i] = NULL;
    }
    for (int32_t i = 0; results && i < num_results; ++i) {
      results[i] = NULL;
      if (!handler) continue;
      loom_status_t error = loom_tensor_handle_create_error(
          handler, loom_status_clone(status), &results[i]);
      loom_status_free(error);
    }
    if (runtime) loom__runtime_report(runtime, location, op_name, status);
    return status;
  }
  status = loom_runtime_execute_prepared(op, location, arguments, num_arguments,
                                         attrs, results, num_results, chain);
  loom_prepared_op_release(op);
  return status;
}

void loom_runtime_quiesce(loom_runtime_t* runtime) {
  if (!runtime) return;
  while (atomic_load(&runtime->pending) > 0) {
    if (!loom_thread_pool_run_one(
            loom_host_context_thread_pool(runtime->host))) {
      loom_host_context_quiesce(runtime->host);
    }
  }
  loom_host_context_quiesce(runtime->host);
}

loom_runtime_statistics_t loom_runtime_statistics(
    const loom_runtime_t* runtime) {
  loom_runtime_statistics_t statistics = {0};
  if (!runtime) return statistics;
  loom_runtime_t* r = (loom_runtime_t*)runtime;
  statistics.ops_inline = atomic_load(&r->ops_inline);
  statistics.ops_enqueued = atomic_load(&r->ops_enqueued);
  // One counter per op, not two: an op is inline, enqueued, or failed
  // before either.
  statistics.ops_executed = statistics.ops_inline + statistics.ops_enqueued +
                            atomic_load(&r->ops_failed_early);
  statistics.errors_reported = atomic_load(&r->errors_reported);
  return statistics;
}
