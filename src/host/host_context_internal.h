// The host context's fields, for the layers above that keep state in it on
// their hot paths (registry/kernel_context.c counts kernel outputs here).

#ifndef LOOM_HOST_HOST_CONTEXT_INTERNAL_H_
#define LOOM_HOST_HOST_CONTEXT_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "host/resource_manager_internal.h"
#include "loom/host_context.h"

// What loom_host_context_kernel_statistics reports.
typedef struct loom__kernel_counters_t {
  _Atomic int64_t forwarded_buffers;
  _Atomic int64_t allocated_outputs;
} loom__kernel_counters_t;

struct loom_host_context_t {
  loom_allocator_t allocator;
  loom_thread_pool_t* pool;
  loom_async_value_t* ready_chain;

  // The fast check on every task start; the status sits behind the mutex.
  atomic_bool cancelled;
  pthread_mutex_t cancel_mutex;
  loom_status_t cancel_status;

  loom_resource_manager_t resources;
  struct loom_host_context_t* next_live;  // the process's list (totals)

  // Bumped by every kernel output, from any thread: kept off the line of
  // the fields above, which every task reads.
  char padding[64];
  loom__kernel_counters_t kernel_counters;
};

// The kernel counters summed over every host context made so far, the
// destroyed ones included.
void loom__host_context_total_kernel_counters(int64_t* out_forwarded_buffers,
                                              int64_t* out_allocated_outputs);

#endif  // LOOM_HOST_HOST_CONTEXT_INTERNAL_H_
