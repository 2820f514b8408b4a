// loom_thread_pool_t: the worker threads that own the machine's cores.
//
// Each worker has its own FIFO queue and steals from the others when it runs
// dry; idle workers spin briefly, then sleep. Besides plain scheduling it
// offers the kernel thread-pool API of TensorFlow's kernel C API design:
// schedule, schedule with a worker hint, and parallel-for with a cost hint,
// with or without a worker id. Every function here is thread-safe.
//
// Parallel regions never nest: a parallel-for issued from inside another
// parallel-for's body runs serially on the calling thread, so the pool is
// never oversubscribed.

#ifndef LOOM_THREAD_POOL_H_
#define LOOM_THREAD_POOL_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_thread_pool_t loom_thread_pool_t;

typedef void (*loom_work_fn_t)(void* arg);
// Processes the half-open index range [begin, end).
typedef void (*loom_parallel_for_fn_t)(void* arg, int64_t begin, int64_t end);
// As above; worker_id is in [0, num_threads] and no two invocations running
// at the same time within one parallel-for share an id, so it can index
// per-worker scratch space of num_threads + 1 entries.
typedef void (*loom_parallel_for_worker_fn_t)(void* arg, int64_t begin,
                                              int64_t end, int worker_id);

// Starts `num_threads` workers (>= 0; with 0, work runs only when a thread
// helps: loom_thread_pool_run_one, an await, a parallel-for, destroy).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_thread_pool_create(
    loom_allocator_t allocator, int num_threads, loom_thread_pool_t** out_pool);

// Runs every task still queued, then stops and joins the workers. No thread
// may schedule work concurrently with or after destroy.
LOOM_API void loom_thread_pool_destroy(loom_thread_pool_t* pool);

LOOM_API int loom_thread_pool_num_threads(const loom_thread_pool_t* pool);

// The calling thread's worker index in [0, num_threads), or -1 when it is
// not one of this pool's workers.
LOOM_API int loom_thread_pool_current_thread_index(
    const loom_thread_pool_t* pool);

// Queues fn(arg). From a worker of this pool it goes to that worker's own
// queue, otherwise to the queues in turn. RESOURCE_EXHAUSTED when a queue
// cannot grow (fn is then not run).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_thread_pool_schedule(
    loom_thread_pool_t* pool, loom_work_fn_t fn, void* arg);

// Queues fn(arg) preferring the workers with index in [start, limit);
// another worker may still steal it. INVALID_ARGUMENT unless
// 0 <= start < limit <= num_threads (any range is accepted, and ignored, by
// a pool without threads).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_thread_pool_schedule_with_hint(loom_thread_pool_t* pool, loom_work_fn_t fn,
                                    void* arg, int start, int limit);

// Calls fn over [0, total) split into blocks, on the workers and the calling
// thread, and returns when every block is done. cost_per_unit estimates the
// cost of one index in nanoseconds-ish units (TensorFlow passes cycles):
// cheap ranges run inline, expensive ones are split so that each block is
// worth scheduling. INVALID_ARGUMENT for total < 0, cost_per_unit < 0 or a
// NULL fn.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_thread_pool_parallel_for(
    loom_thread_pool_t* pool, int64_t total, int64_t cost_per_unit,
    loom_parallel_for_fn_t fn, void* arg);

LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_thread_pool_parallel_for_with_worker_id(loom_thread_pool_t* pool,
                                             int64_t total,
                                             int64_t cost_per_unit,
                                             loom_parallel_for_worker_fn_t fn,
                                             void* arg);

// Runs one queued task on the calling thread, if there is one. Returns
// whether it ran one.
LOOM_API bool loom_thread_pool_run_one(loom_thread_pool_t* pool);

// Blocks until no task is queued or running, helping to run them.
LOOM_API void loom_thread_pool_wait_idle(loom_thread_pool_t* pool);

LOOM_EXTERN_C_END

#endif  // LOOM_THREAD_POOL_H_
