// The context's function library, as the function layer installs it
// (function_hooks.h).

#include "frontend/function_hooks.h"

#include "frontend/frontend_internal.h"

loom_status_t loom__context_function_library(
    loom_context_t* context, const loom__function_library_vtable_t* vtable,
    loom_status_t (*create)(loom_context_t* context, void** out_library),
    void** out_library) {
  *out_library = NULL;
  pthread_mutex_lock(&context->function_mutex);
  loom_status_t status = loom_ok_status();
  if (!context->functions && create) {
    void* library = NULL;
    status = create(context, &library);
    if (!status) {
      context->functions_vtable = vtable;
      atomic_store_explicit(&context->functions, library, memory_order_release);
    }
  }
  *out_library =
      atomic_load_explicit(&context->functions, memory_order_relaxed);
  pthread_mutex_unlock(&context->function_mutex);
  return status;
}

loom_status_t loom__context_resolve_op(loom_context_t* context,
                                       const char* name,
                                       const loom_op_def_t** out_def,
                                       void** out_function, bool* out_calls) {
  *out_def = NULL;
  *out_function = NULL;
  *out_calls = false;
  void* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  // A function's name is no op's: looked up without making the registry's
  // NOT_FOUND status, which every call of a function would format.
  *out_def = loom_op_registry_find(loom_runtime_ops(context->runtime), name);
  if (*out_def) {
    *out_calls =
        library && context->functions_vtable->is_call_op(library, *out_def);
    return loom_ok_status();
  }
  if (library && name) {
    loom_status_t found =
        context->functions_vtable->find(library, name, out_def, out_function);
    if (!found) {
      *out_calls = true;
      return loom_ok_status();
    }
    loom_status_free(found);
    *out_def = NULL;
  }
  // Neither an op nor a function: the registry's words.
  return loom_op_registry_lookup(loom_runtime_ops(context->runtime), name,
                                 out_def);
}

void loom__context_release_function(loom_context_t* context, void* function) {
  if (function) context->functions_vtable->release_function(function);
}

bool loom__context_call_runs_on_handler(loom_context_t* context,
                                        loom_eager_op_t* op) {
  void* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  if (!library || !context->functions_vtable->runs_on_handler) return false;
  return context->functions_vtable->runs_on_handler(library, op);
}

loom_status_t loom__context_call_function(loom_context_t* context,
                                          loom_eager_op_t* op, void* function,
                                          loom_tensor_handle_t** results,
                                          int32_t capacity,
                                          int32_t* out_count) {
  void* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  return context->functions_vtable->call(library, op, function, results,
                                         capacity, out_count);
}

void loom__context_destroy_function_library(loom_context_t* context) {
  void* library =
      atomic_load_explicit(&context->functions, memory_order_acquire);
  if (library) context->functions_vtable->destroy(library);
  atomic_store_explicit(&context->functions, NULL, memory_order_relaxed);
}
