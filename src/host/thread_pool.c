// Thread pool: per-worker FIFO queues with stealing, spin-then-sleep idling,
// and parallel-for with a cost model.
//
// Sleeping uses one mutex + condition variable for the whole pool. The
// counters `pending` (queued tasks) and `sleepers` are sequentially
// consistent: a thread about to sleep increments `sleepers` and then checks
// `pending`; a producer increments `pending` and then checks `sleepers`.
// One of the two always sees the other, so no wake-up is lost.

#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "host/thread_pool_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

enum {
  kInitialQueueCapacity = 64,
  // Spin iterations (each a pause) before an idle worker sleeps: a few
  // microseconds, enough to catch the next task of a busy producer.
  kSpinIterations = 2000,
};

// Below this total cost a parallel-for runs inline; each block carries at
// least this much work. About the cost of waking a worker and handing it a
// task, in cost_per_unit units.
static const double kMinBlockCost = 20000.0;
// Blocks per participating thread, so uneven blocks still balance.
static const int64_t kBlocksPerThread = 4;

typedef struct work_item_t {
  loom_work_fn_t fn;
  void* arg;
} work_item_t;

typedef struct work_queue_t {
  alignas(64) pthread_mutex_t mutex;
  work_item_t* items;  // ring buffer, capacity a power of two
  size_t capacity;
  size_t head;
  _Atomic size_t count;  // written under mutex, read without it
} work_queue_t;

typedef struct worker_t {
  loom_thread_pool_t* pool;
  int index;
  pthread_t thread;
  bool started;
} worker_t;

struct loom_thread_pool_t {
  loom_allocator_t allocator;
  int num_threads;
  int num_queues;  // max(num_threads, 1)
  work_queue_t* queues;
  worker_t* workers;

  _Atomic int64_t pending;      // queued, not yet started
  _Atomic int64_t outstanding;  // queued or running
  _Atomic int sleepers;         // threads blocked on `wake`
  _Atomic unsigned next_queue;  // round robin for external producers
  atomic_bool stopping;

  pthread_mutex_t sleep_mutex;
  pthread_cond_t wake;
};

// The pool and worker index of the current thread, if it is a worker: the
// thread's own identity, which no pool argument can tell (a caller may be
// another pool's worker).
static _Thread_local const loom_thread_pool_t* tls_pool = NULL;
static _Thread_local int tls_worker_index = -1;
// > 0 while this thread runs a parallel-for block: nested ones run inline.
// Per thread rather than per pool: a block may call into another pool, and
// parallel regions never nest, whichever pools they use.
static _Thread_local int tls_parallel_depth = 0;

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

static loom_status_t queue_initialize(work_queue_t* queue,
                                      loom_allocator_t allocator) {
  memset(queue, 0, sizeof(*queue));
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, kInitialQueueCapacity * sizeof(work_item_t),
      (void**)&queue->items));
  queue->capacity = kInitialQueueCapacity;
  pthread_mutex_init(&queue->mutex, NULL);
  return loom_ok_status();
}

static void queue_deinitialize(work_queue_t* queue,
                               loom_allocator_t allocator) {
  pthread_mutex_destroy(&queue->mutex);
  loom_allocator_free(allocator, queue->items);
}

// Doubles the ring, unrolling it so head becomes 0. Called with the mutex.
static loom_status_t queue_grow(work_queue_t* queue,
                                loom_allocator_t allocator) {
  size_t count = atomic_load_explicit(&queue->count, memory_order_relaxed);
  size_t capacity = queue->capacity * 2;
  work_item_t* items = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, capacity * sizeof(work_item_t), (void**)&items));
  for (size_t i = 0; i < count; ++i) {
    items[i] = queue->items[(queue->head + i) & (queue->capacity - 1)];
  }
  loom_allocator_free(allocator, queue->items);
  queue->items = items;
  queue->capacity = capacity;
  queue->head = 0;
  return loom_ok_status();
}

static loom_status_t queue_push(work_queue_t* queue, loom_allocator_t allocator,
                                work_item_t item) {
  pthread_mutex_lock(&queue->mutex);
  size_t count = atomic_load_explicit(&queue->count, memory_order_relaxed);
  if (count == queue->capacity) {
    loom_status_t status = queue_grow(queue, allocator);
    if (status) {
      pthread_mutex_unlock(&queue->mutex);
      return status;
    }
  }
  queue->items[(queue->head + count) & (queue->capacity - 1)] = item;
  atomic_store_explicit(&queue->count, count + 1, memory_order_relaxed);
  pthread_mutex_unlock(&queue->mutex);
  return loom_ok_status();
}

static bool queue_pop(work_queue_t* queue, work_item_t* out_item) {
  if (atomic_load_explicit(&queue->count, memory_order_relaxed) == 0) {
    return false;
  }
  pthread_mutex_lock(&queue->mutex);
  size_t count = atomic_load_explicit(&queue->count, memory_order_relaxed);
  if (count == 0) {
    pthread_mutex_unlock(&queue->mutex);
    return false;
  }
  *out_item = queue->items[queue->head];
  queue->head = (queue->head + 1) & (queue->capacity - 1);
  atomic_store_explicit(&queue->count, count - 1, memory_order_relaxed);
  pthread_mutex_unlock(&queue->mutex);
  return true;
}

//===----------------------------------------------------------------------===//
// Scheduling and running
//===----------------------------------------------------------------------===//

static void wake_one(loom_thread_pool_t* pool) {
  if (atomic_load(&pool->sleepers) == 0) return;
  pthread_mutex_lock(&pool->sleep_mutex);
  pthread_cond_signal(&pool->wake);
  pthread_mutex_unlock(&pool->sleep_mutex);
}

static void wake_all(loom_thread_pool_t* pool) {
  pthread_mutex_lock(&pool->sleep_mutex);
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->sleep_mutex);
}

static loom_status_t push_to_queue(loom_thread_pool_t* pool, int queue_index,
                                   work_item_t item) {
  atomic_fetch_add(&pool->outstanding, 1);
  loom_status_t status =
      queue_push(&pool->queues[queue_index], pool->allocator, item);
  if (status) {
    atomic_fetch_sub(&pool->outstanding, 1);
    return status;
  }
  atomic_fetch_add(&pool->pending, 1);
  wake_one(pool);
  return loom_ok_status();
}

// Pops from the queue at `start` first, then steals from the others.
static bool pop_any(loom_thread_pool_t* pool, int start, work_item_t* out) {
  if (atomic_load(&pool->pending) == 0) return false;
  for (int i = 0; i < pool->num_queues; ++i) {
    int index = (start + i) % pool->num_queues;
    if (queue_pop(&pool->queues[index], out)) {
      atomic_fetch_sub(&pool->pending, 1);
      return true;
    }
  }
  return false;
}

static void run_item(loom_thread_pool_t* pool, work_item_t item) {
  item.fn(item.arg);
  if (atomic_fetch_sub(&pool->outstanding, 1) == 1) {
    // Possibly the last task a wait_idle caller is waiting for.
    if (atomic_load(&pool->sleepers) > 0) wake_all(pool);
  }
}

static int start_queue_for_caller(loom_thread_pool_t* pool) {
  if (tls_pool == pool && tls_worker_index >= 0) return tls_worker_index;
  return (int)(atomic_fetch_add_explicit(&pool->next_queue, 1,
                                         memory_order_relaxed) %
               (unsigned)pool->num_queues);
}

bool loom_thread_pool_run_one(loom_thread_pool_t* pool) {
  if (!pool) return false;
  work_item_t item;
  if (!pop_any(pool, start_queue_for_caller(pool), &item)) return false;
  run_item(pool, item);
  return true;
}

// Sleeps until there may be queued work or `done` returns true. Returns
// immediately when either already holds.
static void sleep_until(loom_thread_pool_t* pool,
                        bool (*done)(loom_thread_pool_t*, void*),
                        void* done_arg) {
  pthread_mutex_lock(&pool->sleep_mutex);
  atomic_fetch_add(&pool->sleepers, 1);
  while (atomic_load(&pool->pending) == 0 && !done(pool, done_arg)) {
    pthread_cond_wait(&pool->wake, &pool->sleep_mutex);
  }
  atomic_fetch_sub(&pool->sleepers, 1);
  pthread_mutex_unlock(&pool->sleep_mutex);
}

static bool worker_should_exit(loom_thread_pool_t* pool, void* arg) {
  (void)arg;
  return atomic_load(&pool->stopping);
}

static void* worker_main(void* arg) {
  worker_t* worker = arg;
  loom_thread_pool_t* pool = worker->pool;
  tls_pool = pool;
  tls_worker_index = worker->index;
  for (;;) {
    work_item_t item;
    if (pop_any(pool, worker->index, &item)) {
      run_item(pool, item);
      continue;
    }
    bool found = false;
    for (int i = 0; i < kSpinIterations; ++i) {
      if (atomic_load_explicit(&pool->pending, memory_order_relaxed) > 0) {
        found = true;
        break;
      }
      CPU_RELAX();
    }
    if (found) continue;
    if (atomic_load(&pool->stopping) && atomic_load(&pool->pending) == 0) {
      break;
    }
    sleep_until(pool, worker_should_exit, NULL);
  }
  tls_pool = NULL;
  tls_worker_index = -1;
  return NULL;
}

//===----------------------------------------------------------------------===//
// Lifetime
//===----------------------------------------------------------------------===//

static void pool_free(loom_thread_pool_t* pool, int initialized_queues) {
  for (int i = 0; i < initialized_queues; ++i) {
    queue_deinitialize(&pool->queues[i], pool->allocator);
  }
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->sleep_mutex);
  loom_allocator_free(pool->allocator, pool->workers);
  loom_allocator_free(pool->allocator, pool->queues);
  loom_allocator_free(pool->allocator, pool);
}

static void stop_and_join(loom_thread_pool_t* pool) {
  atomic_store(&pool->stopping, true);
  wake_all(pool);
  for (int i = 0; i < pool->num_threads; ++i) {
    if (pool->workers[i].started) pthread_join(pool->workers[i].thread, NULL);
  }
}

loom_status_t loom_thread_pool_create(loom_allocator_t allocator,
                                      int num_threads,
                                      loom_thread_pool_t** out_pool) {
  if (!out_pool) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_thread_pool_create: out_pool is NULL");
  }
  *out_pool = NULL;
  if (num_threads < 0 || num_threads > 4096) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_thread_pool_create: num_threads %d is outside [0, 4096]",
        num_threads);
  }
  loom_thread_pool_t* pool = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*pool), (void**)&pool));
  pool->allocator = allocator;
  pool->num_threads = num_threads;
  pool->num_queues = num_threads > 0 ? num_threads : 1;
  pthread_mutex_init(&pool->sleep_mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);

  // Each queue sits on its own cache line(s): allocate with its alignment.
  size_t queues_size = sizeof(work_queue_t) * (size_t)pool->num_queues;
  loom_status_t status = loom_allocator_malloc_aligned(
      allocator, queues_size, alignof(work_queue_t), (void**)&pool->queues);
  if (!status) memset(pool->queues, 0, queues_size);
  if (!status && num_threads > 0) {
    status =
        loom_allocator_calloc(allocator, sizeof(worker_t) * (size_t)num_threads,
                              (void**)&pool->workers);
  }
  int initialized_queues = 0;
  for (; !status && initialized_queues < pool->num_queues;
       ++initialized_queues) {
    status = queue_initialize(&pool->queues[initialized_queues], allocator);
    if (status) break;
  }
  if (status) {
    pool_free(pool, initialized_queues);
    return status;
  }

  for (int i = 0; i < num_threads; ++i) {
    worker_t* worker = &pool->workers[i];
    worker->pool = pool;
    worker->index = i;
    int error = pthread_create(&worker->thread, NULL, worker_main, worker);
    if (error != 0) {
      stop_and_join(pool);
      pool_free(pool, pool->num_queues);
      return loom_make_status(
          LOOM_STATUS_RESOURCE_EXHAUSTED,
          "loom_thread_pool_create: cannot start worker %d of %d (error %d)", i,
          num_threads, error);
    }
    worker->started = true;
  }
  *out_pool = pool;
  return loom_ok_status();
}

void loom_thread_pool_destroy(loom_thread_pool_t* pool) {
  if (!pool) return;
  // Without workers nobody else would run what is left.
  while (loom_thread_pool_run_one(pool)) {
  }
  stop_and_join(pool);
  while (loom_thread_pool_run_one(pool)) {
  }
  pool_free(pool, pool->num_queues);
}

int loom_thread_pool_num_threads(const loom_thread_pool_t* pool) {
  return pool ? pool->num_threads : 0;
}

int loom_thread_pool_current_thread_index(const loom_thread_pool_t* pool) {
  return (pool && tls_pool == pool) ? tls_worker_index : -1;
}

loom_status_t loom_thread_pool_schedule(loom_thread_pool_t* pool,
                                        loom_work_fn_t fn, void* arg) {
  if (!pool || !fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_thread_pool_schedule: %s is NULL",
                            !pool ? "pool" : "fn");
  }
  work_item_t item = {fn, arg};
  return push_to_queue(pool, start_queue_for_caller(pool), item);
}

loom_status_t loom_thread_pool_schedule_with_hint(loom_thread_pool_t* pool,
                                                  loom_work_fn_t fn, void* arg,
                                                  int start, int limit) {
  if (!pool || !fn) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_thread_pool_schedule_with_hint: %s is NULL",
                            !pool ? "pool" : "fn");
  }
  work_item_t item = {fn, arg};
  if (pool->num_threads == 0) return push_to_queue(pool, 0, item);
  if (start < 0 || start >= limit || limit > pool->num_threads) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_thread_pool_schedule_with_hint: hint [%d, %d) is not a "
        "non-empty range within [0, %d)",
        start, limit, pool->num_threads);
  }
  unsigned spread = (unsigned)(limit - start);
  int index = start + (int)(atomic_fetch_add_explicit(&pool->next_queue, 1,
                                                      memory_order_relaxed) %
                            spread);
  return push_to_queue(pool, index, item);
}

//===----------------------------------------------------------------------===//
// Helping waits
//===----------------------------------------------------------------------===//

static bool flag_is_set(loom_thread_pool_t* pool, void* arg) {
  (void)pool;
  return atomic_load((atomic_int*)arg) != 0;
}

void loom__thread_pool_wait_for_flag(loom_thread_pool_t* pool,
                                     atomic_int* flag) {
  while (!atomic_load(flag)) {
    if (loom_thread_pool_run_one(pool)) continue;
    sleep_until(pool, flag_is_set, flag);
  }
}

void loom__thread_pool_set_flag(loom_thread_pool_t* pool, atomic_int* flag) {
  atomic_store(flag, 1);
  // From here on `flag` may be gone; only the pool is touched.
  if (atomic_load(&pool->sleepers) > 0) wake_all(pool);
}

static bool pool_is_idle(loom_thread_pool_t* pool, void* arg) {
  (void)arg;
  return atomic_load(&pool->outstanding) == 0;
}

void loom_thread_pool_wait_idle(loom_thread_pool_t* pool) {
  if (!pool) return;
  while (atomic_load(&pool->outstanding) != 0) {
    if (loom_thread_pool_run_one(pool)) continue;
    sleep_until(pool, pool_is_idle, NULL);
  }
}

//===----------------------------------------------------------------------===//
// Parallel for
//===----------------------------------------------------------------------===//

// The blocks are cut into one contiguous range per participant (the caller
// and each helper; beyond kMaxRanges participants, some share one), so that
// each thread streams through neighbouring memory as a static split would;
// a participant whose range is done takes blocks from the others' (in
// order), so the split still balances.
enum { kMaxRanges = 16 };

typedef struct block_range_t {
  _Alignas(64) _Atomic int64_t next;  // the next block to claim
  int64_t end;
} block_range_t;

// Shared by the caller and the helper tasks; lives on the caller's stack.
typedef struct parallel_for_t {
  loom_thread_pool_t* pool;
  loom_parallel_for_fn_t fn;
  loom_parallel_for_worker_fn_t worker_fn;
  void* arg;
  int64_t total;
  int64_t block_size;
  int num_ranges;
  _Atomic int next_worker_id;
  // Helpers that may still touch this struct; the caller waits for 0.
  _Atomic int helpers;
  atomic_int helpers_done;
  block_range_t ranges[kMaxRanges];
} parallel_for_t;

static void run_block(const parallel_for_t* pf, int64_t block, int worker_id) {
  int64_t begin = block * pf->block_size;
  int64_t end = begin + pf->block_size;
  if (end > pf->total) end = pf->total;
  if (pf->worker_fn) {
    pf->worker_fn(pf->arg, begin, end, worker_id);
  } else {
    pf->fn(pf->arg, begin, end);
  }
}

// This participant's own range first, then what is left of the others'.
static void run_blocks(parallel_for_t* pf) {
  int worker_id = atomic_fetch_add(&pf->next_worker_id, 1);
  tls_parallel_depth++;
  for (int k = 0; k < pf->num_ranges; ++k) {
    block_range_t* range = &pf->ranges[(worker_id + k) % pf->num_ranges];
    int64_t block;
    while ((block = atomic_fetch_add(&range->next, 1)) < range->end) {
      run_block(pf, block, worker_id);
    }
  }
  tls_parallel_depth--;
}

static void parallel_for_helper(void* arg) {
  parallel_for_t* pf = arg;
  run_blocks(pf);
  loom_thread_pool_t* pool = pf->pool;
  if (atomic_fetch_sub(&pf->helpers, 1) == 1) {
    loom__thread_pool_set_flag(pool, &pf->helpers_done);
  }
}

static void run_serially(loom_parallel_for_fn_t fn,
                         loom_parallel_for_worker_fn_t worker_fn, void* arg,
                         int64_t total) {
  if (total == 0) return;
  if (worker_fn) {
    worker_fn(arg, 0, total, 0);
  } else {
    fn(arg, 0, total);
  }
}

static loom_status_t parallel_for(loom_thread_pool_t* pool, const char* name,
                                  int64_t total, int64_t cost_per_unit,
                                  loom_parallel_for_fn_t fn,
                                  loom_parallel_for_worker_fn_t worker_fn,
                                  void* arg) {
  if (!pool || (!fn && !worker_fn)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            name, !pool ? "pool" : "fn");
  }
  if (total < 0 || cost_per_unit < 0) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: total (%lld) and cost_per_unit (%lld) must be non-negative", name,
        (long long)total, (long long)cost_per_unit);
  }
  int participants = pool->num_threads + 1;
  double total_cost =
      (double)total * (double)(cost_per_unit ? cost_per_unit : 1);
  int64_t num_blocks = (int64_t)(total_cost / kMinBlockCost);
  if (num_blocks > kBlocksPerThread * participants) {
    num_blocks = kBlocksPerThread * participants;
  }
  if (num_blocks > total) num_blocks = total;
  if (num_blocks <= 1 || pool->num_threads == 0 || tls_parallel_depth > 0) {
    tls_parallel_depth++;
    run_serially(fn, worker_fn, arg, total);
    tls_parallel_depth--;
    return loom_ok_status();
  }

  parallel_for_t pf;
  pf.pool = pool;
  pf.fn = fn;
  pf.worker_fn = worker_fn;
  pf.arg = arg;
  pf.total = total;
  pf.block_size = (total + num_blocks - 1) / num_blocks;
  num_blocks = (total + pf.block_size - 1) / pf.block_size;
  atomic_init(&pf.next_worker_id, 0);
  int64_t wanted = num_blocks - 1;
  if (wanted > pool->num_threads) wanted = pool->num_threads;
  pf.num_ranges = wanted + 1 < kMaxRanges ? (int)wanted + 1 : kMaxRanges;
  for (int r = 0; r < pf.num_ranges; ++r) {
    atomic_init(&pf.ranges[r].next, num_blocks * r / pf.num_ranges);
    pf.ranges[r].end = num_blocks * (r + 1) / pf.num_ranges;
  }
  atomic_init(&pf.helpers, (int)wanted);
  atomic_init(&pf.helpers_done, wanted == 0);

  // Helpers that cannot be queued are simply not there: the blocks they
  // would have taken are run by the others.
  for (int64_t i = 0; i < wanted; ++i) {
    work_item_t item = {parallel_for_helper, &pf};
    int queue_index =
        (int)((i + 1 + (tls_pool == pool ? tls_worker_index : 0)) %
              pool->num_queues);
    loom_status_t status = push_to_queue(pool, queue_index, item);
    if (status) {
      loom_status_ignore(status);
      if (atomic_fetch_sub(&pf.helpers, 1) == 1) {
        atomic_store(&pf.helpers_done, 1);
      }
    }
  }
  run_blocks(&pf);
  loom__thread_pool_wait_for_flag(pool, &pf.helpers_done);
  return loom_ok_status();
}

loom_status_t loom_thread_pool_parallel_for(loom_thread_pool_t* pool,
                                            int64_t total,
                                            int64_t cost_per_unit,
                                            loom_parallel_for_fn_t fn,
                                            void* arg) {
  return parallel_for(pool, "loom_thread_pool_parallel_for", total,
                      cost_per_unit, fn, NULL, arg);
}

loom_status_t loom_thread_pool_parallel_for_with_worker_id(
    loom_thread_pool_t* pool, int64_t total, int64_t cost_per_unit,
    loom_parallel_for_worker_fn_t fn, void* arg) {
  return parallel_for(pool, "loom_thread_pool_parallel_for_with_worker_id",
                      total, cost_per_unit, NULL, fn, arg);
}
