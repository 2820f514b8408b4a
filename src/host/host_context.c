// The host context: owns the thread pool, the ready chain and the
// cancellation state, and implements the helping await.

#include "loom/host_context.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "host/host_context_internal.h"
#include "host/thread_pool_internal.h"

// Every live host context, and what the destroyed ones counted:
// loom_kernel_statistics() reports the process's totals (it has no other
// argument), so it must find them all.
static pthread_mutex_t g_hosts_mutex = PTHREAD_MUTEX_INITIALIZER;
static loom_host_context_t* g_hosts;  // linked through next_live
static int64_t g_retired_forwarded_buffers;
static int64_t g_retired_allocated_outputs;

static void add_live(loom_host_context_t* host) {
  pthread_mutex_lock(&g_hosts_mutex);
  host->next_live = g_hosts;
  g_hosts = host;
  pthread_mutex_unlock(&g_hosts_mutex);
}

static void retire(loom_host_context_t* host) {
  pthread_mutex_lock(&g_hosts_mutex);
  for (loom_host_context_t** link = &g_hosts; *link;
       link = &(*link)->next_live) {
    if (*link == host) {
      *link = host->next_live;
      break;
    }
  }
  g_retired_forwarded_buffers +=
      atomic_load(&host->kernel_counters.forwarded_buffers);
  g_retired_allocated_outputs +=
      atomic_load(&host->kernel_counters.allocated_outputs);
  pthread_mutex_unlock(&g_hosts_mutex);
}

void loom__host_context_total_kernel_counters(int64_t* out_forwarded_buffers,
                                              int64_t* out_allocated_outputs) {
  pthread_mutex_lock(&g_hosts_mutex);
  int64_t forwarded = g_retired_forwarded_buffers;
  int64_t allocated = g_retired_allocated_outputs;
  for (loom_host_context_t* host = g_hosts; host; host = host->next_live) {
    forwarded += atomic_load(&host->kernel_counters.forwarded_buffers);
    allocated += atomic_load(&host->kernel_counters.allocated_outputs);
  }
  pthread_mutex_unlock(&g_hosts_mutex);
  *out_forwarded_buffers = forwarded;
  *out_allocated_outputs = allocated;
}

int loom_host_context_default_thread_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int)online : 1;
}

void loom_host_context_options_initialize(
    loom_host_context_options_t* options) {
  if (!options) return;
  options->num_threads = -1;
  options->allocator = loom_allocator_default();
}

loom_status_t loom_host_context_create(
    const loom_host_context_options_t* options,
    loom_host_context_t** out_host) {
  if (!out_host) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_host_context_create: out_host is NULL");
  }
  *out_host = NULL;
  loom_host_context_options_t defaults;
  loom_host_context_options_initialize(&defaults);
  if (!options) options = &defaults;
  if (!options->allocator.allocate || !options->allocator.deallocate) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_host_context_create: options->allocator is not set (call "
        "loom_host_context_options_initialize first)");
  }
  int num_threads = options->num_threads;
  if (num_threads < -1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_host_context_create: num_threads %d must be -1 (one per core) "
        "or >= 0",
        num_threads);
  }
  // The calling thread computes too: one thread per core in all.
  if (num_threads == -1) {
    num_threads = loom_host_context_default_thread_count() - 1;
  }

  loom_allocator_t allocator = options->allocator;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*host), (void**)&host));
  host->allocator = allocator;
  atomic_init(&host->cancelled, false);
  pthread_mutex_init(&host->cancel_mutex, NULL);
  loom__resource_manager_initialize(&host->resources, allocator);
  atomic_init(&host->kernel_counters.forwarded_buffers, 0);
  atomic_init(&host->kernel_counters.allocated_outputs, 0);

  loom_status_t status =
      loom_async_value_create_chain(allocator, &host->ready_chain);
  if (!status) status = loom_async_value_set_available(host->ready_chain);
  if (!status) {
    status = loom_thread_pool_create(allocator, num_threads, &host->pool);
  }
  if (status) {
    loom_async_value_release(host->ready_chain);
    loom__resource_manager_deinitialize(&host->resources);
    pthread_mutex_destroy(&host->cancel_mutex);
    loom_allocator_free(allocator, host);
    return status;
  }
  add_live(host);
  *out_host = host;
  return loom_ok_status();
}

void loom_host_context_destroy(loom_host_context_t* host) {
  if (!host) return;
  loom_thread_pool_destroy(host->pool);
  retire(host);
  // No kernel runs any more: the shared resources go (those that resource
  // tensors still refer to stay until released).
  loom__resource_manager_deinitialize(&host->resources);
  loom_async_value_release(host->ready_chain);
  loom_status_free(host->cancel_status);
  pthread_mutex_destroy(&host->cancel_mutex);
  loom_allocator_free(host->allocator, host);
}

loom_allocator_t loom_host_context_allocator(const loom_host_context_t* host) {
  return host->allocator;
}

loom_thread_pool_t* loom_host_context_thread_pool(loom_host_context_t* host) {
  return host ? host->pool : NULL;
}

loom_resource_manager_t* loom_host_context_resources(
    loom_host_context_t* host) {
  return host ? &host->resources : NULL;
}

loom_status_t loom_host_context_enqueue(loom_host_context_t* host,
                                        loom_work_fn_t fn, void* arg) {
  if (!host) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_host_context_enqueue: host is NULL");
  }
  return loom_thread_pool_schedule(host->pool, fn, arg);
}

//===----------------------------------------------------------------------===//
// Cancellation
//===----------------------------------------------------------------------===//

void loom_host_context_cancel(loom_host_context_t* host, const char* message) {
  if (!host) return;
  loom_status_t status = loom_make_status(LOOM_STATUS_CANCELLED, "%s",
                                          message ? message : "cancelled");
  pthread_mutex_lock(&host->cancel_mutex);
  loom_status_t previous = host->cancel_status;
  host->cancel_status = status;
  atomic_store(&host->cancelled, true);
  pthread_mutex_unlock(&host->cancel_mutex);
  loom_status_free(previous);
}

void loom_host_context_restart(loom_host_context_t* host) {
  if (!host) return;
  pthread_mutex_lock(&host->cancel_mutex);
  loom_status_t previous = host->cancel_status;
  host->cancel_status = loom_ok_status();
  atomic_store(&host->cancelled, false);
  pthread_mutex_unlock(&host->cancel_mutex);
  loom_status_free(previous);
}

bool loom_host_context_is_cancelled(const loom_host_context_t* host) {
  return host && atomic_load_explicit(&((loom_host_context_t*)host)->cancelled,
                                      memory_order_acquire);
}

loom_status_t loom_host_context_cancel_status(loom_host_context_t* host) {
  if (!loom_host_context_is_cancelled(host)) return loom_ok_status();
  pthread_mutex_lock(&host->cancel_mutex);
  loom_status_t status = loom_status_clone(host->cancel_status);
  pthread_mutex_unlock(&host->cancel_mutex);
  return status;
}

//===----------------------------------------------------------------------===//
// Tasks
//===----------------------------------------------------------------------===//

typedef struct submitted_task_t {
  loom_host_context_t* host;
  loom_task_t task;
  loom_async_value_t* result;  // one reference held by the task
} submitted_task_t;

// Resolves `result` to the cancellation error and lets the task clean up.
// Returns false when the context is not (or no longer) cancelled.
static bool cancel_task(loom_host_context_t* host, const loom_task_t* task,
                        loom_async_value_t* result) {
  loom_status_t cancelled = loom_host_context_cancel_status(host);
  if (!cancelled) return false;
  loom_status_ignore(loom_async_value_set_error(result, cancelled));
  if (task->discard) task->discard(task->arg);
  return true;
}

static void run_submitted_task(void* arg) {
  submitted_task_t* submitted = arg;
  loom_host_context_t* host = submitted->host;
  loom_task_t task = submitted->task;
  loom_async_value_t* result = submitted->result;
  loom_allocator_free(host->allocator, submitted);
  if (!cancel_task(host, &task, result)) task.run(task.arg, result);
  loom_async_value_release(result);
}

loom_status_t loom_host_context_submit(
    loom_host_context_t* host, const loom_task_t* task,
    const loom_async_value_type_t* result_type,
    loom_async_value_t** out_result) {
  if (!host || !task || !task->run || !out_result) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_host_context_submit: %s is NULL",
                            !host        ? "host"
                            : !task      ? "task"
                            : !task->run ? "task->run"
                                         : "out_result");
  }
  *out_result = NULL;
  loom_async_value_t* result = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_async_value_create(host->allocator, result_type, &result));
  if (cancel_task(host, task, result)) {
    *out_result = result;
    return loom_ok_status();
  }
  submitted_task_t* submitted = NULL;
  loom_status_t status = loom_allocator_malloc(
      host->allocator, sizeof(*submitted), (void**)&submitted);
  if (!status) {
    submitted->host = host;
    submitted->task = *task;
    submitted->result = result;
    loom_async_value_retain(result);
    status =
        loom_thread_pool_schedule(host->pool, run_submitted_task, submitted);
    if (status) {
      loom_async_value_release(result);
      loom_allocator_free(host->allocator, submitted);
    }
  }
  if (status) {
    loom_async_value_release(result);
    return status;
  }
  *out_result = result;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Waiting
//===----------------------------------------------------------------------===//

typedef struct await_state_t {
  loom_thread_pool_t* pool;
  atomic_int done;
} await_state_t;

static void await_wake(void* arg) {
  await_state_t* state = arg;
  loom_thread_pool_t* pool = state->pool;  // read before `state` may vanish
  loom__thread_pool_set_flag(pool, &state->done);
}

loom_status_t loom_host_context_await(loom_host_context_t* host,
                                      loom_async_value_t* const* values,
                                      size_t count) {
  if (!host || (!values && count)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_host_context_await: %s is NULL",
                            !host ? "host" : "values");
  }
  for (size_t i = 0; i < count; ++i) {
    if (!values[i]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom_host_context_await: values[%zu] is NULL",
                              i);
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (loom_async_value_is_set(values[i])) continue;
    await_state_t state;
    state.pool = host->pool;
    atomic_init(&state.done, 0);
    loom_async_waiter_t node = {.fn = await_wake, .arg = &state};
    loom_async_value_and_then_node(values[i], &node);
    loom__thread_pool_wait_for_flag(host->pool, &state.done);
  }
  return loom_ok_status();
}

void loom_host_context_quiesce(loom_host_context_t* host) {
  if (host) loom_thread_pool_wait_idle(host->pool);
}

loom_async_value_t* loom_host_context_ready_chain(loom_host_context_t* host) {
  if (!host) return NULL;
  loom_async_value_retain(host->ready_chain);
  return host->ready_chain;
}
