// loom_host_context_t: the host runtime every Loom layer above runs on
// (TFRT's HostContext): an allocator, a thread pool that owns the cores, a
// ready chain, blocking waits that help run work, and cancellation.

#ifndef LOOM_HOST_CONTEXT_H_
#define LOOM_HOST_CONTEXT_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/allocator.h"
#include "loom/async_value.h"
#include "loom/macros.h"
#include "loom/resource_manager.h"
#include "loom/status.h"
#include "loom/thread_pool.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_host_context_t loom_host_context_t;

typedef struct loom_host_context_options_t {
  // Worker threads; -1 (the default) means one fewer than the cores
  // available to the process: the thread that runs ops (and takes its share
  // of every parallel loop) is the last one, so that as many threads
  // compute as there are cores. 0 runs work only on threads that wait for
  // it.
  int num_threads;
  // Where the context and everything created through it allocate.
  loom_allocator_t allocator;
} loom_host_context_options_t;

// Fills `options` with the defaults (a worker per core but one, the
// default allocator).
LOOM_API void loom_host_context_options_initialize(
    loom_host_context_options_t* options);

// Creates a host context; `options` may be NULL for the defaults.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_host_context_create(
    const loom_host_context_options_t* options, loom_host_context_t** out_host);

// Runs the work still queued, joins the workers and frees the context.
// Async values created through it must not outlive it.
LOOM_API void loom_host_context_destroy(loom_host_context_t* host);

LOOM_API loom_allocator_t
loom_host_context_allocator(const loom_host_context_t* host);

LOOM_API loom_thread_pool_t* loom_host_context_thread_pool(
    loom_host_context_t* host);

// The manager of the resources that kernels running on this context share
// by name (variables with a shared_name): the context's own, emptied when
// it is destroyed. Borrowed; NULL for a NULL host.
LOOM_API loom_resource_manager_t* loom_host_context_resources(
    loom_host_context_t* host);

// The number of cores available to this process (at least 1).
LOOM_API int loom_host_context_default_thread_count(void);

// Queues fn(arg) on the thread pool. Cancellation never skips it: work
// queued here runs whether the context is cancelled before or after it was
// queued, because it has no result through which to report the
// cancellation and may own resources only it frees (check
// loom_host_context_is_cancelled inside fn to stop early). Use
// loom_host_context_submit for work that cancellation skips.
// RESOURCE_EXHAUSTED when the queue cannot grow: fn is then not run and the
// caller keeps `arg`.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_host_context_enqueue(
    loom_host_context_t* host, loom_work_fn_t fn, void* arg);

// Work that produces an async value and that cancellation can skip.
typedef struct loom_task_t {
  // Computes the result and sets `result` (now or later, from any thread).
  void (*run)(void* arg, loom_async_value_t* result);
  // Called instead of `run` when the context is cancelled before the task
  // starts (then `result` is already set to the CANCELLED error): releases
  // what `arg` holds. May be NULL.
  void (*discard)(void* arg);
  void* arg;
} loom_task_t;

// Creates *out_result (an UNAVAILABLE value of `result_type`) and queues the
// task. When the context is cancelled at submission or by the time a worker
// picks the task up, the result becomes the cancellation error and
// `discard` runs instead of `run`. On OK exactly one of run / discard is
// called; on error neither is, and the caller keeps `arg`.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_host_context_submit(loom_host_context_t* host, const loom_task_t* task,
                         const loom_async_value_type_t* result_type,
                         loom_async_value_t** out_result);

// Blocks until every value in values[0, count) is set (AVAILABLE or ERROR),
// running queued work on the calling thread meanwhile instead of sleeping
// while there is work. INVALID_ARGUMENT for NULL arguments.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_host_context_await(
    loom_host_context_t* host, loom_async_value_t* const* values, size_t count);

// Blocks until no work is queued or running on the thread pool.
LOOM_API void loom_host_context_quiesce(loom_host_context_t* host);

// A chain that is already available, shared (+1 reference for the caller):
// the usual start of a sequence of side effects.
LOOM_API loom_async_value_t* loom_host_context_ready_chain(
    loom_host_context_t* host);

// Enters the cancelled state: tasks submitted with loom_host_context_submit
// that have not started, and those submitted from now on, resolve to
// CANCELLED with `message` (NULL: "cancelled") and have their `discard` run,
// until loom_host_context_restart. Tasks already running finish, and work
// queued with loom_host_context_enqueue still runs. Cancelling again
// replaces the message.
LOOM_API void loom_host_context_cancel(loom_host_context_t* host,
                                       const char* message);

// Leaves the cancelled state: tasks submitted from now on, and queued ones
// not yet started, run again.
LOOM_API void loom_host_context_restart(loom_host_context_t* host);

LOOM_API bool loom_host_context_is_cancelled(const loom_host_context_t* host);

// A copy of the cancellation error, or OK when not cancelled. The caller
// owns the returned status.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_host_context_cancel_status(loom_host_context_t* host);

LOOM_EXTERN_C_END

#endif  // LOOM_HOST_CONTEXT_H_
