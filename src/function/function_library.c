// A context's function library (loom/function.h): functions by name, and
// the hooks through which the eager front end finds and calls them
// (frontend/function_hooks.h). Making a library registers PartitionedCall
// and StatefulPartitionedCall, the ops that call the function their attr
// `f` names, and the control flow ops (function_control_flow.h).

#include <pthread.h>
#include <string.h>

#include "frontend/function_hooks.h"
#include "function/function_call.h"
#include "function/function_capture.h"
#include "function/function_control_flow.h"
#include "function/function_derived.h"
#include "function/function_internal.h"
#include "function/function_plan.h"
#include "loom/op_def.h"
#include "registry/op_registry_internal.h"

// A function derived from another (function_derived.h).
typedef struct derived_t {
  struct derived_t* next;
  const loom_function_t* base;  // in the library: the entry goes with it
  loom_function_t* function;    // retained (also in the library), or NULL
  // Once the entry is dropped: whether the library held `function` then,
  // and the plan it had.
  bool in_library;
  loom__function_plan_t* plan;
  size_t size;
  unsigned char key[];
} derived_t;

enum { kMaxDerivedPerBase = 64 };

typedef struct library_t {
  loom_allocator_t allocator;
  pthread_mutex_t mutex;  // the arrays and the derived list
  loom_function_t** functions;
  // The plan of each function (function_plan.h), or NULL: none yet, or
  // taken by a call running it.
  loom__function_plan_t** plans;
  int32_t count;
  int32_t capacity;
  derived_t* derived;
} library_t;

static loom_function_t* find_locked(library_t* library, const char* name) {
  for (int32_t i = 0; i < library->count; ++i) {
    if (strcmp(library->functions[i]->name, name) == 0) {
      return library->functions[i];
    }
  }
  return NULL;
}

// The index of `function` in the library (caller holds the mutex), or -1.
static int32_t index_locked(const library_t* library,
                            const loom_function_t* function) {
  for (int32_t i = 0; i < library->count; ++i) {
    if (library->functions[i] == function) return i;
  }
  return -1;
}

static loom_status_t find_hook(void* state, const char* name,
                               const loom_op_def_t** out_def,
                               void** out_function) {
  library_t* library = state;
  pthread_mutex_lock(&library->mutex);
  loom_function_t* function = find_locked(library, name);
  loom_function_retain(function);
  pthread_mutex_unlock(&library->mutex);
  if (!function) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "function '%s' is not in the context's function "
                            "library",
                            name);
  }
  *out_def = loom__function_call_signature(function);
  *out_function = function;
  return loom_ok_status();
}

static bool is_call_op_hook(void* state, const loom_op_def_t* def) {
  (void)state;
  return strcmp(def->name, "PartitionedCall") == 0 ||
         strcmp(def->name, "StatefulPartitionedCall") == 0 ||
         loom__control_flow_is_op(def);
}

static bool runs_on_handler_hook(void* state, loom_eager_op_t* op) {
  (void)state;
  // A call of a function by its name is no control-flow op.
  if (op->function) return false;
  return loom__control_flow_runs_on_handler(op);
}

static loom_status_t call_hook(void* state, loom_eager_op_t* op, void* function,
                               loom_tensor_handle_t** results, int32_t capacity,
                               int32_t* out_count) {
  loom_function_t* called = function;
  if (!called && loom__control_flow_is_op(loom_eager_op_def(op))) {
    return loom__control_flow_execute(op, results, capacity, out_count);
  }
  if (!called) {
    // PartitionedCall: the function attr `f` names.
    const char* op_name = loom_eager_op_name(op);
    loom_attr_value_t f;
    if (!loom_op_attrs_get(loom_eager_op_attrs(op), "f", &f) ||
        f.kind != LOOM_ATTR_KIND_FUNC || f.is_list) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr 'f' (the function to call) is not set "
                              "to a function",
                              op_name);
    }
    char name[256];
    if (f.u.string.size >= sizeof(name)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr 'f': function name of %zu bytes is "
                              "too long",
                              op_name, f.u.string.size);
    }
    memcpy(name, f.u.string.data, f.u.string.size);
    name[f.u.string.size] = '\0';
    library_t* library = state;
    pthread_mutex_lock(&library->mutex);
    called = find_locked(library, name);
    loom_function_retain(called);
    pthread_mutex_unlock(&library->mutex);
    if (!called) {
      return loom_make_status(LOOM_STATUS_NOT_FOUND,
                              "%s: attr 'f': function '%s' is not in the "
                              "context's function library",
                              op_name, name);
    }
  }
  loom_status_t status =
      called->captures
          ? loom__function_call_captured(op, called, function == NULL, results,
                                         capacity, out_count)
          : loom__function_call(op, called, function == NULL, results, capacity,
                                out_count);
  if (!function) loom_function_release(called);
  return status;
}

static void release_function_hook(void* function) {
  loom_function_release(function);
}

static void destroy_hook(void* state) {
  library_t* library = state;
  while (library->derived) {
    derived_t* entry = library->derived;
    library->derived = entry->next;
    loom_function_release(entry->function);
    loom_allocator_free(library->allocator, entry);
  }
  for (int32_t i = 0; i < library->count; ++i) {
    loom__function_plan_destroy(library->plans[i]);
  }
  for (int32_t i = 0; i < library->count; ++i) {
    loom_function_release(library->functions[i]);
  }
  loom_allocator_free(library->allocator, library->functions);
  loom_allocator_free(library->allocator, library->plans);
  pthread_mutex_destroy(&library->mutex);
  loom_allocator_free(library->allocator, library);
}

static const loom__function_library_vtable_t kLibraryVtable = {
    .find = find_hook,
    .is_call_op = is_call_op_hook,
    .runs_on_handler = runs_on_handler_hook,
    .call = call_hook,
    .release_function = release_function_hook,
    .destroy = destroy_hook,
};

// Registers a call op in `registry` unless it is there.
static loom_status_t register_call_op(loom_op_registry_t* registry,
                                      const char* name, bool stateful) {
  if (loom_op_registry_find(registry, name)) return loom_ok_status();
  static const char* const kAttrs[] = {
      "Tin: list(type) >= 0",
      "Tout: list(type) >= 0",
      "f: func",
      "config: string = ''",
      "config_proto: string = ''",
      "executor_type: string = ''",
  };
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  loom_status_t status = loom_op_def_builder_add_input(builder, "args: Tin");
  if (!status) {
    status = loom_op_def_builder_add_output(builder, "output: Tout");
  }
  for (size_t i = 0; !status && i < sizeof(kAttrs) / sizeof(kAttrs[0]); ++i) {
    status = loom_op_def_builder_add_attr(builder, kAttrs[i]);
  }
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  loom_op_def_builder_set_is_stateful(builder, stateful);
  status = loom_op_registry_register(registry, builder);
  if (loom_status_code(status) == LOOM_STATUS_ALREADY_EXISTS) {
    loom_status_free(status);  // another thread registered it meanwhile
    status = loom_ok_status();
  }
  return status;
}

static loom_status_t create_library(loom_context_t* context,
                                    void** out_library) {
  loom_op_registry_t* registry =
      loom_runtime_ops(loom_context_runtime(context));
  // The call and control-flow ops are the process's, registered by its
  // first context: a plugin that makes that context as it loads must not
  // take them with it when it fails.
  loom__registration_journal_exempt_begin();
  loom_status_t status = register_call_op(registry, "PartitionedCall", false);
  if (!status) {
    status = register_call_op(registry, "StatefulPartitionedCall", true);
  }
  if (!status) status = loom__control_flow_register(registry);
  loom__registration_journal_exempt_end();
  LOOM_RETURN_IF_ERROR(status);
  library_t* library = NULL;
  loom_allocator_t allocator = loom_allocator_system();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*library), (void**)&library));
  library->allocator = allocator;
  pthread_mutex_init(&library->mutex, NULL);
  *out_library = library;
  return loom_ok_status();
}

static loom_status_t get_library(loom_context_t* context, bool create,
                                 library_t** out_library) {
  void* library = NULL;
  LOOM_RETURN_IF_ERROR(loom__context_function_library(
      context, &kLibraryVtable, create ? create_library : NULL, &library));
  *out_library = library;
  return loom_ok_status();
}

// Adds `function` (retained) unless it is there; ALREADY_EXISTS for
// another function of its name.
static loom_status_t add_locked(library_t* library, loom_function_t* function) {
  loom_function_t* existing = find_locked(library, function->name);
  if (existing == function) return loom_ok_status();
  if (existing) {
    return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                            "Cannot add function '%s' because a different "
                            "function with the same name already exists.",
                            function->name);
  }
  if (library->count == library->capacity) {
    int32_t capacity = library->capacity ? 2 * library->capacity : 8;
    loom_function_t** grown = NULL;
    loom__function_plan_t** plans = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
        library->allocator, sizeof(*grown) * (size_t)capacity, (void**)&grown));
    loom_status_t status = loom_allocator_calloc(
        library->allocator, sizeof(*plans) * (size_t)capacity, (void**)&plans);
    if (status) {
      loom_allocator_free(library->allocator, grown);
      return status;
    }
    if (library->count) {
      memcpy(grown, library->functions,
             sizeof(*grown) * (size_t)library->count);
      memcpy(plans, library->plans, sizeof(*plans) * (size_t)library->count);
    }
    loom_allocator_free(library->allocator, library->functions);
    loom_allocator_free(library->allocator, library->plans);
    library->functions = grown;
    library->plans = plans;
    library->capacity = capacity;
  }
  loom_function_retain(function);
  library->plans[library->count] = NULL;
  library->functions[library->count++] = function;
  return loom_ok_status();
}

// Takes entry `index` out of the arrays: the caller gets the library's
// reference to the function and its plan (*out_plan).
static loom_function_t* detach_locked(library_t* library, int32_t index,
                                      loom__function_plan_t** out_plan) {
  loom_function_t* function = library->functions[index];
  *out_plan = library->plans[index];
  --library->count;
  library->functions[index] = library->functions[library->count];
  library->plans[index] = library->plans[library->count];
  return function;
}

// Moves the entries derived from `base`, and those derived from theirs in
// turn, out of the library onto *dropped (released by release_dropped,
// unlocked).
static void drop_derived_locked(library_t* library, const loom_function_t* base,
                                derived_t** dropped) {
  derived_t** link = &library->derived;
  while (*link) {
    derived_t* entry = *link;
    if (entry->base != base) {
      link = &entry->next;
      continue;
    }
    *link = entry->next;
    int32_t index =
        entry->function ? index_locked(library, entry->function) : -1;
    if (index >= 0) {
      entry->in_library = true;
      (void)detach_locked(library, index, &entry->plan);
    }
    entry->next = *dropped;
    *dropped = entry;
    if (entry->function) drop_derived_locked(library, entry->function, dropped);
    link = &library->derived;  // the list changed: from the start again
  }
}

static void release_dropped(library_t* library, derived_t* dropped) {
  while (dropped) {
    derived_t* next = dropped->next;
    loom__function_plan_destroy(dropped->plan);
    if (dropped->in_library) loom_function_release(dropped->function);
    loom_function_release(dropped->function);
    loom_allocator_free(library->allocator, dropped);
    dropped = next;
  }
}

loom_status_t loom_context_enable_functions(loom_context_t* context) {
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_enable_functions: context is NULL");
  }
  library_t* library = NULL;
  return get_library(context, true, &library);
}

loom_status_t loom_context_add_function(loom_context_t* context,
                                        loom_function_t* function) {
  if (!context || !function) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_add_function: %s is NULL",
                            !context ? "context" : "function");
  }
  if (loom_op_registry_find(loom_runtime_ops(loom_context_runtime(context)),
                            function->name)) {
    // TensorFlow's words.
    return loom_make_status(LOOM_STATUS_ALREADY_EXISTS,
                            "Cannot add function '%s' because an op with the "
                            "same name already exists.",
                            function->name);
  }
  library_t* library = NULL;
  LOOM_RETURN_IF_ERROR(get_library(context, true, &library));
  pthread_mutex_lock(&library->mutex);
  loom_status_t status = add_locked(library, function);
  pthread_mutex_unlock(&library->mutex);
  return status;
}

bool loom_context_has_function(loom_context_t* context, const char* name) {
  if (!context || !name) return false;
  library_t* library = NULL;
  loom_status_t status = get_library(context, false, &library);
  loom_status_free(status);
  if (!library) return false;
  pthread_mutex_lock(&library->mutex);
  bool found = find_locked(library, name) != NULL;
  pthread_mutex_unlock(&library->mutex);
  return found;
}

loom_status_t loom_context_find_function(loom_context_t* context,
                                         const char* name,
                                         loom_function_t** out_function) {
  if (!context || !name || !out_function) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_find_function: %s is NULL",
                            !context ? "context"
                            : !name  ? "name"
                                     : "out_function");
  }
  *out_function = NULL;
  library_t* library = NULL;
  LOOM_RETURN_IF_ERROR(get_library(context, false, &library));
  if (library) {
    const loom_op_def_t* def = NULL;
    void* function = NULL;
    loom_status_t status = find_hook(library, name, &def, &function);
    *out_function = function;
    return status;
  }
  return loom_make_status(LOOM_STATUS_NOT_FOUND,
                          "function '%s' is not in the context's function "
                          "library",
                          name);
}

loom_status_t loom_context_remove_function(loom_context_t* context,
                                           const char* name) {
  if (!context || !name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_context_remove_function: %s is NULL",
                            !context ? "context" : "name");
  }
  library_t* library = NULL;
  LOOM_RETURN_IF_ERROR(get_library(context, false, &library));
  loom_function_t* removed = NULL;
  loom__function_plan_t* plan = NULL;
  derived_t* dropped = NULL;
  if (library) {
    pthread_mutex_lock(&library->mutex);
    for (int32_t i = 0; i < library->count; ++i) {
      if (strcmp(library->functions[i]->name, name) == 0) {
        removed = detach_locked(library, i, &plan);
        drop_derived_locked(library, removed, &dropped);
        break;
      }
    }
    pthread_mutex_unlock(&library->mutex);
    release_dropped(library, dropped);
  }
  loom__function_plan_destroy(plan);
  if (!removed) {
    // TensorFlow's code and words.
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Tried to remove non-existent function '%s'.",
                            name);
  }
  loom_function_release(removed);
  return loom_ok_status();
}

loom__function_plan_t* loom__function_library_take_plan(
    loom_context_t* context, loom_function_t* function) {
  library_t* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  if (!library) return NULL;
  pthread_mutex_lock(&library->mutex);
  int32_t index = index_locked(library, function);
  loom__function_plan_t* plan = NULL;
  if (index >= 0) {
    plan = library->plans[index];
    library->plans[index] = NULL;
  }
  pthread_mutex_unlock(&library->mutex);
  return plan;
}

void loom__function_library_put_plan(loom_context_t* context,
                                     loom_function_t* function,
                                     loom__function_plan_t* plan) {
  library_t* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  loom__function_plan_t* dropped = plan;
  if (library) {
    pthread_mutex_lock(&library->mutex);
    int32_t index = index_locked(library, function);
    if (index >= 0) {
      dropped = library->plans[index];
      library->plans[index] = plan;
    }
    pthread_mutex_unlock(&library->mutex);
  }
  loom__function_plan_destroy(dropped);
}

//===----------------------------------------------------------------------===//
// Derived functions (function_derived.h)
//===----------------------------------------------------------------------===//

static derived_t* find_derived_locked(library_t* library,
                                      const loom_function_t* base,
                                      const void* key, size_t size) {
  for (derived_t* entry = library->derived; entry; entry = entry->next) {
    if (entry->base == base && entry->size == size &&
        memcmp(entry->key, key, size) == 0) {
      return entry;
    }
  }
  return NULL;
}

void loom__function_library_find_derived(loom_context_t* context,
                                         const loom_function_t* base,
                                         const void* key, size_t size,
                                         bool* out_found,
                                         loom_function_t** out_derived) {
  *out_found = false;
  *out_derived = NULL;
  library_t* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  if (!library) return;
  derived_t* dropped = NULL;
  pthread_mutex_lock(&library->mutex);
  derived_t* entry = find_derived_locked(library, base, key, size);
  if (entry && entry->function && index_locked(library, entry->function) < 0) {
    // Removed by name since: the entry (and what came from it) goes.
    for (derived_t** link = &library->derived; *link; link = &(*link)->next) {
      if (*link == entry) {
        *link = entry->next;
        break;
      }
    }
    entry->next = NULL;
    dropped = entry;
    drop_derived_locked(library, entry->function, &dropped);
    entry = NULL;
  }
  if (entry) {
    *out_found = true;
    *out_derived = entry->function;
    loom_function_retain(entry->function);
  }
  pthread_mutex_unlock(&library->mutex);
  release_dropped(library, dropped);
}

loom_status_t loom__function_library_add_derived(
    loom_context_t* context, loom_function_t* base, const void* key,
    size_t size, loom_function_t* derived, loom_function_t** out_derived) {
  *out_derived = NULL;
  library_t* library = NULL;
  LOOM_RETURN_IF_ERROR(get_library(context, true, &library));
  derived_t* entry = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      library->allocator, sizeof(*entry) + size, (void**)&entry));
  entry->base = base;
  entry->function = derived;
  entry->size = size;
  memcpy(entry->key, key, size);
  loom_status_t status = loom_ok_status();
  pthread_mutex_lock(&library->mutex);
  derived_t* existing = find_derived_locked(library, base, key, size);
  int32_t count = 0;
  for (derived_t* e = library->derived; e; e = e->next)
    count += e->base == base;
  if (existing) {
    *out_derived = existing->function;
    loom_function_retain(existing->function);
  } else if (index_locked(library, base) < 0) {
    status = loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                              "function '%s' left the context's function "
                              "library",
                              base->name);
  } else if (count >= kMaxDerivedPerBase) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "function '%s' has %d derived functions already",
                              base->name, count);
  } else {
    if (derived) status = add_locked(library, derived);
    if (!status) {
      loom_function_retain(derived);
      entry->next = library->derived;
      library->derived = entry;
      entry = NULL;
      *out_derived = derived;
      loom_function_retain(derived);
    }
  }
  pthread_mutex_unlock(&library->mutex);
  loom_allocator_free(library->allocator, entry);
  return status;
}

void loom__function_count_backward(loom_function_t* base, bool built) {
  atomic_fetch_add_explicit(
      built ? &base->backward_functions_built : &base->backward_function_hits,
      1, memory_order_relaxed);
}
