// How the eager front end calls functions without knowing them: the
// function layer (above it) installs a function library on a context, and
// the front end asks it about op names it does not find in the op registry
// and hands it the executions of ops that call a function. A call then
// runs the function's body op by op through loom_eager_op_execute, on the
// calling thread's handler stack.

#ifndef LOOM_FRONTEND_FUNCTION_HOOKS_H_
#define LOOM_FRONTEND_FUNCTION_HOOKS_H_

#include "loom/eager.h"

typedef struct loom__function_library_vtable_t {
  // The definition of function `name` and a reference on the function
  // (released with release_function), or NOT_FOUND.
  loom_status_t (*find)(void* library, const char* name,
                        const loom_op_def_t** out_def, void** out_function);
  // Whether ops of the registered definition `def` call the function an
  // attribute names (PartitionedCall).
  bool (*is_call_op)(void* library, const loom_op_def_t* def);
  // Whether such an op runs as one op on the handler placement chooses,
  // which then sees it whole (an If whose condition lives on a handler),
  // rather than op by op. May be NULL: always op by op.
  bool (*runs_on_handler)(void* library, loom_eager_op_t* op);
  // Executes `op`, which calls `function` (from find) or, when NULL, the
  // function its attributes name. As loom_eager_op_execute.
  loom_status_t (*call)(void* library, loom_eager_op_t* op, void* function,
                        loom_tensor_handle_t** results, int32_t capacity,
                        int32_t* out_count);
  void (*release_function)(void* function);
  // Frees the library (when its context goes).
  void (*destroy)(void* library);
} loom__function_library_vtable_t;

// The context's function library, made by `create` on first use when
// `create` is not NULL (NULL when there is none). Thread-safe; `vtable`
// must be the same on every call.
loom_status_t loom__context_function_library(
    loom_context_t* context, const loom__function_library_vtable_t* vtable,
    loom_status_t (*create)(loom_context_t* context, void** out_library),
    void** out_library);

// What `name` is in `context`: a registered op (*out_function NULL,
// *out_calls whether it calls a function) or a function of its library
// (*out_function a new reference, *out_calls true). NOT_FOUND otherwise,
// in the registry's words.
loom_status_t loom__context_resolve_op(loom_context_t* context,
                                       const char* name,
                                       const loom_op_def_t** out_def,
                                       void** out_function, bool* out_calls);

// Releases a function reference from loom__context_resolve_op.
void loom__context_release_function(loom_context_t* context, void* function);

// Whether an op that calls a function runs on a handler as one op
// (runs_on_handler above).
bool loom__context_call_runs_on_handler(loom_context_t* context,
                                        loom_eager_op_t* op);

// Runs an op that calls a function (loom__context_resolve_op said so).
loom_status_t loom__context_call_function(loom_context_t* context,
                                          loom_eager_op_t* op, void* function,
                                          loom_tensor_handle_t** results,
                                          int32_t capacity, int32_t* out_count);

// Frees the library (loom_context_destroy).
void loom__context_destroy_function_library(loom_context_t* context);

#endif  // LOOM_FRONTEND_FUNCTION_HOOKS_H_
