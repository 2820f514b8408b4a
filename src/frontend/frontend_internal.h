// The eager front end's objects, shared by its files:
//   context.c        contexts, devices and handler names, errors, tensors;
//   host_device.c    the process-wide host CPU of context-free handles;
//   scopes.c         per-thread handler scopes, merges and re-entry;
//   eager_op.c       ops being built (name, attributes, inputs, device);
//   execute.c        placement, implicit copies, execution;
//   handler_plugin.c handlers made by plugins.

#ifndef LOOM_FRONTEND_FRONTEND_INTERNAL_H_
#define LOOM_FRONTEND_FRONTEND_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "frontend/function_hooks.h"
#include "frontend/passthrough_op_cache.h"
#include "loom/eager.h"

// A handler known to the context by name.
typedef struct named_handler_t {
  char* name;  // "/job:localhost/replica:0/task:0/device:CPU:0"
  char* type;  // "CPU"
  int64_t index;
  loom_op_handler_t* handler;  // retained
} named_handler_t;

// What a merged handler was made of: `inner` executing on `outer`.
typedef struct merge_record_t {
  loom_op_handler_t* merged;  // retained by the context
  loom_op_handler_t* inner;   // the handler entered (retained)
  loom_op_handler_t* outer;   // what it executes on (retained)
} merge_record_t;

typedef struct scope_entry_t {
  loom_op_handler_t* base;       // retained
  loom_op_handler_t* effective;  // retained
} scope_entry_t;

enum { kEagerOpPoolSize = 64 };

// One thread's state in one context: its scopes, its executor mode, the
// chain that orders its stateful ops when they run asynchronously, and its
// caches (no lock: only the thread uses them, and the context's
// destruction frees them).
typedef struct scope_stack_t {
  struct scope_stack_t* next;  // the context's list
  uint64_t owner;              // loom__thread_id() of its thread
  scope_entry_t* entries;
  int32_t num_entries;
  int32_t entries_capacity;
  int32_t* frames;  // entries each enter opened
  int32_t num_frames;
  int32_t frames_capacity;
  int8_t async_override;      // -1: the context's mode; else 0 / 1
  int8_t policy_override;     // -1: the context's policy
  loom_async_value_t* chain;  // NULL until a stateful op runs async
  // The thread's pass-through op data (passthrough_op_cache.h).
  loom__passthrough_op_cache_t op_cache;
  // Idle ops for loom_eager_op_acquire (eager_op_pool.c).
  int32_t pool_count;
  uint64_t pool_hashes[kEagerOpPoolSize];  // of the ops' names
  loom_eager_op_t* pool[kEagerOpPoolSize];
} scope_stack_t;

struct loom_context_t {
  loom_allocator_t allocator;
  uint64_t id;  // unique per context ever made (thread-local lookups)
  bool async;
  bool owns_host;
  loom_host_context_t* host;
  loom_runtime_t* runtime;
  loom_op_handler_t* cpu;  // borrowed from the runtime's registry
  const char* cpu_name;
  // Whether handles find the context through its runtime (created, not
  // being destroyed).
  _Atomic bool live;
  // Set while first_error is: asynchronous ops check it without the mutex.
  _Atomic bool has_error;
  // Bumped whenever a handler name goes away, so that the handlers cached
  // by ops' explicit placements are looked up again.
  _Atomic uint32_t generation;
  _Atomic int policy;  // loom_placement_policy_t
  _Atomic bool soft_placement;
  _Atomic bool log_placement;

  pthread_mutex_t mutex;  // everything below
  named_handler_t* handlers;
  int32_t num_handlers;
  int32_t handlers_capacity;
  merge_record_t* merges;
  int32_t num_merges;
  int32_t merges_capacity;
  scope_stack_t* stacks;      // every thread's, freed with the context
  loom_status_t first_error;  // of any op since the last clear

  // The function library the function layer installs (function_hooks.h):
  // set once, under function_mutex; NULL until then.
  pthread_mutex_t function_mutex;
  void* _Atomic functions;
  const loom__function_library_vtable_t* functions_vtable;
};

// Destroys every thread's idle ops (when the context goes).
void loom__eager_op_pool_clear(loom_context_t* context);

// An id for the calling thread, unique for the life of the process.
uint64_t loom__thread_id(void);

// This thread's scope stack in `context` (created on first use when
// `create`; NULL when creation fails or !create and there is none). Cached
// per thread: no lock after the first call, found or not.
scope_stack_t* loom__scope_stack(loom_context_t* context, bool create);
loom_op_handler_t* loom__scope_stack_top(const scope_stack_t* stack);

// The handler an op given the device `device` (a final handler) runs on
// when `top` is the thread's scope: the transformations open in the scope
// (tape, forward mode, trace, vmap) merged again onto the device, as
// entering a scope of another device merges them, so that they see the op
// whatever its device, as TensorFlow's tape does. *out_handler is a new
// reference, or NULL when the op runs on the device itself (no scope, no
// transformation in it, or `device` is not final: a handler that places
// ops itself, such as the parallel handler, is never restacked).
loom_status_t loom__scope_place_on_device(loom_context_t* context,
                                          loom_op_handler_t* device,
                                          loom_op_handler_t* top,
                                          loom_op_handler_t** out_handler);
void loom__scope_stacks_free(loom_context_t* context);

// Whether ops of this thread (its stack may be NULL) run asynchronously.
static inline bool loom__thread_async(const loom_context_t* context,
                                      const scope_stack_t* stack) {
  if (stack && stack->async_override >= 0) return stack->async_override != 0;
  return context->async;
}

// The first error among the (complete) results, as a new status.
static inline loom_status_t loom__results_error(loom_tensor_handle_t** results,
                                                int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    loom_async_value_t* value = loom_tensor_handle_value(results[i]);
    if (value && LOOM_UNLIKELY(loom_async_value_is_error(value))) {
      return loom_status_clone(loom_async_value_error(value));
    }
  }
  return loom_ok_status();
}

// The merge record of `merged`, or NULL (caller holds the mutex).
merge_record_t* loom__find_merge(loom_context_t* context,
                                 const loom_op_handler_t* merged);

// Whether `ancestor` is `handler` or one it was merged onto, transitively.
bool loom__handler_stacks_on(loom_context_t* context,
                             const loom_op_handler_t* handler,
                             const loom_op_handler_t* ancestor);

// loom_context_add_handler with the context's mutex held (no checks).
loom_status_t loom__context_add_handler_locked(loom_context_t* context,
                                               const char* type,
                                               loom_op_handler_t* handler,
                                               const char** out_name);

// Collects, on the calling thread, the first error the runtime reports for
// `context` between begin and end (nested captures are kept apart).
typedef struct loom__error_capture_t {
  loom_context_t* context;
  loom_status_t error;
  struct loom__error_capture_t* previous;
} loom__error_capture_t;
void loom__capture_begin(loom_context_t* context,
                         loom__error_capture_t* capture);
// The error collected (owned by the caller), or OK.
loom_status_t loom__capture_end(loom__error_capture_t* capture);

// Records the first error of an op (consumed).
void loom__context_record_error(loom_context_t* context, loom_status_t error);

// A copy of the recorded error (OK when none).
loom_status_t loom__context_error(loom_context_t* context);

// Whether `name` is a device name (TensorFlow's full, partial or legacy
// forms), known or not.
bool loom__device_name_is_valid(const char* name);
// INVALID_ARGUMENT for a well-formed device name no device matches, in
// TensorFlow's words, listing the context's devices.
loom_status_t loom__unknown_device_error(loom_context_t* context,
                                         const char* name);

// loom_eager_op_execute, also giving the op's result count once it was
// known (else -1) when the call fails after that: TFE_Execute then reports
// it in *num_retvals, as TensorFlow does once it has found the kernel.
loom_status_t loom__eager_op_execute_counted(loom_eager_op_t* op,
                                             loom_tensor_handle_t** results,
                                             int32_t capacity,
                                             int32_t* out_count,
                                             int32_t* out_known_count);

// Executes op `op_name` (prepared on `handler`) on one input with one
// attribute; the copy ops use it. *out_handle receives the result.
loom_status_t loom__execute_unary(loom_context_t* context,
                                  loom_op_handler_t* handler,
                                  const char* op_name,
                                  loom_tensor_handle_t* input,
                                  const char* attr_name, const char* attr_value,
                                  loom_tensor_handle_t** out_handle);

//===----------------------------------------------------------------------===//
// The host CPU (host_device.c)
//===----------------------------------------------------------------------===//

// The process-wide host CPU handler once made (NULL before): handles made
// without a context live there and count as every context's CPU.
extern loom_op_handler_t* _Atomic loom__g_host_cpu;

static inline bool loom__is_cpu(const loom_context_t* context,
                                const loom_op_handler_t* handler) {
  return handler == context->cpu ||
         handler ==
             atomic_load_explicit(&loom__g_host_cpu, memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// Contexts by runtime (context.c)
//===----------------------------------------------------------------------===//

// The live context that owns `runtime`, or NULL.
loom_context_t* loom__context_of_runtime(const loom_runtime_t* runtime);

#endif  // LOOM_FRONTEND_FRONTEND_INTERNAL_H_
