// What the rest of the host layer needs from the thread pool beyond its
// public API: blocking on a flag while helping to run queued work.

#ifndef LOOM_HOST_THREAD_POOL_INTERNAL_H_
#define LOOM_HOST_THREAD_POOL_INTERNAL_H_

#include <stdatomic.h>

#include "loom/thread_pool.h"

// Returns once *flag is non-zero. Until then the calling thread runs queued
// tasks, and sleeps only when there is nothing to run; it wakes for new work
// or for loom__thread_pool_set_flag on this flag.
void loom__thread_pool_wait_for_flag(loom_thread_pool_t* pool,
                                     atomic_int* flag);

// Sets *flag and wakes the threads waiting in wait_for_flag. Touches only
// the pool after the store, so the flag's owner may free it as soon as it
// sees the flag set.
void loom__thread_pool_set_flag(loom_thread_pool_t* pool, atomic_int* flag);

#endif  // LOOM_HOST_THREAD_POOL_INTERNAL_H_
