// The component threads of a parallel handler: one thread per component,
// owned by the handler (not the kernels' thread pool), which run one task
// per component at a time and report back when all are done.

#ifndef LOOM_HANDLERS_PARALLEL_PARALLEL_THREADS_H_
#define LOOM_HANDLERS_PARALLEL_PARALLEL_THREADS_H_

#include <stdint.h>

#include "loom/allocator.h"
#include "loom/status.h"

typedef struct loom__parallel_threads_t loom__parallel_threads_t;

// Runs for component `component` of a batch.
typedef void (*loom__parallel_task_fn_t)(void* task, int32_t component);

// Starts `count` threads (>= 1).
LOOM_MUST_USE_RESULT loom_status_t
loom__parallel_threads_create(loom_allocator_t allocator, int32_t count,
                              loom__parallel_threads_t** out_threads);

// Stops and joins the threads (the last batch has returned).
void loom__parallel_threads_destroy(loom__parallel_threads_t* threads);

// Runs fn(task, k) on thread k for every k, at once, and returns when all
// have returned. Batches from several callers run one after the other. A
// call from one of the component threads themselves (a component op that
// runs on the same handler) runs the batch on the calling thread instead.
void loom__parallel_threads_run(loom__parallel_threads_t* threads,
                                loom__parallel_task_fn_t fn, void* task);

#endif  // LOOM_HANDLERS_PARALLEL_PARALLEL_THREADS_H_
