// The thread pool: scheduling, hints, parallel-for coverage and worker ids,
// helping, idling, argument errors and allocation failures.

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "loom/thread_pool.h"
#include "test_support.h"

static loom_thread_pool_t* create_pool(int threads) {
  loom_thread_pool_t* pool = NULL;
  LOOM_ASSERT_OK(
      loom_thread_pool_create(loom_allocator_system(), threads, &pool));
  return pool;
}

static void increment(void* arg) {
  atomic_fetch_add((atomic_int*)arg, 1);
}

static void scheduled_tasks_all_run(void** state) {
  (void)state;
  for (int threads = 0; threads <= 3; ++threads) {
    loom_thread_pool_t* pool = create_pool(threads);
    assert_int_equal(loom_thread_pool_num_threads(pool), threads);
    atomic_int counter;
    atomic_init(&counter, 0);
    // More tasks than a queue's initial capacity, so queues grow.
    for (int i = 0; i < 10000; ++i) {
      LOOM_ASSERT_OK(loom_thread_pool_schedule(pool, increment, &counter));
    }
    loom_thread_pool_wait_idle(pool);
    assert_int_equal(atomic_load(&counter), 10000);
    loom_thread_pool_destroy(pool);
  }
}

static void destroy_runs_what_is_still_queued(void** state) {
  (void)state;
  atomic_int counter;
  atomic_init(&counter, 0);
  loom_thread_pool_t* pool = create_pool(0);
  for (int i = 0; i < 100; ++i) {
    LOOM_ASSERT_OK(loom_thread_pool_schedule(pool, increment, &counter));
  }
  assert_int_equal(atomic_load(&counter), 0);  // nobody ran them yet
  loom_thread_pool_destroy(pool);
  assert_int_equal(atomic_load(&counter), 100);
}

static void run_one_helps_a_pool_without_threads(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(0);
  atomic_int counter;
  atomic_init(&counter, 0);
  assert_false(loom_thread_pool_run_one(pool));
  LOOM_ASSERT_OK(loom_thread_pool_schedule(pool, increment, &counter));
  LOOM_ASSERT_OK(loom_thread_pool_schedule(pool, increment, &counter));
  assert_true(loom_thread_pool_run_one(pool));
  assert_int_equal(atomic_load(&counter), 1);
  assert_true(loom_thread_pool_run_one(pool));
  assert_false(loom_thread_pool_run_one(pool));
  assert_int_equal(atomic_load(&counter), 2);
  loom_thread_pool_destroy(pool);
}

typedef struct index_probe_t {
  loom_thread_pool_t* pool;
  atomic_int index;
} index_probe_t;

static void record_index(void* arg) {
  index_probe_t* probe = arg;
  atomic_store(&probe->index,
               loom_thread_pool_current_thread_index(probe->pool));
}

static void workers_know_their_index(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(2);
  assert_int_equal(loom_thread_pool_current_thread_index(pool), -1);
  index_probe_t probe = {pool, 0};
  atomic_init(&probe.index, -5);
  LOOM_ASSERT_OK(loom_thread_pool_schedule(pool, record_index, &probe));
  loom_thread_pool_wait_idle(pool);
  int index = atomic_load(&probe.index);
  // A worker ran it, or the waiting thread helped (-1).
  assert_true(index >= -1 && index < 2);
  loom_thread_pool_destroy(pool);
}

static void schedule_with_hint_runs_the_task(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(3);
  atomic_int counter;
  atomic_init(&counter, 0);
  for (int start = 0; start < 3; ++start) {
    for (int limit = start + 1; limit <= 3; ++limit) {
      LOOM_ASSERT_OK(loom_thread_pool_schedule_with_hint(
          pool, increment, &counter, start, limit));
    }
  }
  loom_thread_pool_wait_idle(pool);
  assert_int_equal(atomic_load(&counter), 6);
  loom_thread_pool_destroy(pool);
}

static void schedule_with_bad_hint_is_rejected(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(2);
  atomic_int counter;
  atomic_init(&counter, 0);
  LOOM_ASSERT_STATUS(
      loom_thread_pool_schedule_with_hint(pool, increment, &counter, 1, 1),
      LOOM_STATUS_INVALID_ARGUMENT,
      "hint [1, 1) is not a non-empty range within [0, 2)");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_schedule_with_hint(pool, increment, &counter, -1, 1),
      LOOM_STATUS_INVALID_ARGUMENT, "hint [-1, 1)");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_schedule_with_hint(pool, increment, &counter, 0, 3),
      LOOM_STATUS_INVALID_ARGUMENT, "hint [0, 3)");
  loom_thread_pool_wait_idle(pool);
  assert_int_equal(atomic_load(&counter), 0);
  loom_thread_pool_destroy(pool);

  // A pool without threads accepts any hint.
  pool = create_pool(0);
  LOOM_ASSERT_OK(
      loom_thread_pool_schedule_with_hint(pool, increment, &counter, 5, 9));
  loom_thread_pool_destroy(pool);
  assert_int_equal(atomic_load(&counter), 1);
}

static void null_arguments_are_rejected(void** state) {
  (void)state;
  loom_thread_pool_t* pool = NULL;
  LOOM_ASSERT_STATUS(loom_thread_pool_create(loom_allocator_system(), 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_pool is NULL");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_create(loom_allocator_system(), -1, &pool),
      LOOM_STATUS_INVALID_ARGUMENT, "num_threads -1 is outside [0, 4096]");
  LOOM_ASSERT_STATUS(loom_thread_pool_schedule(NULL, increment, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "pool is NULL");
  pool = create_pool(1);
  LOOM_ASSERT_STATUS(loom_thread_pool_schedule(pool, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "fn is NULL");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_schedule_with_hint(pool, NULL, NULL, 0, 1),
      LOOM_STATUS_INVALID_ARGUMENT, "fn is NULL");
  LOOM_ASSERT_STATUS(loom_thread_pool_parallel_for(pool, 10, 1, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "fn is NULL");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_parallel_for_with_worker_id(NULL, 10, 1, NULL, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "pool is NULL");
  loom_thread_pool_destroy(pool);
  loom_thread_pool_destroy(NULL);
}

//===----------------------------------------------------------------------===//
// Parallel for
//===----------------------------------------------------------------------===//

typedef struct coverage_t {
  atomic_uchar* hits;
  int64_t total;
  atomic_int calls;
  atomic_int bad_ranges;
} coverage_t;

static void mark_range(void* arg, int64_t begin, int64_t end) {
  coverage_t* coverage = arg;
  atomic_fetch_add(&coverage->calls, 1);
  if (begin < 0 || end > coverage->total || begin >= end) {
    atomic_fetch_add(&coverage->bad_ranges, 1);
    return;
  }
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&coverage->hits[i], 1);
}

static void check_coverage(loom_thread_pool_t* pool, int64_t total,
                           int64_t cost) {
  coverage_t coverage;
  coverage.hits = calloc((size_t)(total ? total : 1), sizeof(atomic_uchar));
  coverage.total = total;
  atomic_init(&coverage.calls, 0);
  atomic_init(&coverage.bad_ranges, 0);
  LOOM_ASSERT_OK(
      loom_thread_pool_parallel_for(pool, total, cost, mark_range, &coverage));
  assert_int_equal(atomic_load(&coverage.bad_ranges), 0);
  for (int64_t i = 0; i < total; ++i) {
    if (atomic_load(&coverage.hits[i]) != 1) {
      fail_msg("total %lld cost %lld: index %lld covered %d times",
               (long long)total, (long long)cost, (long long)i,
               (int)atomic_load(&coverage.hits[i]));
    }
  }
  if (total == 0) assert_int_equal(atomic_load(&coverage.calls), 0);
  free(coverage.hits);
}

// The grid every parallel-for coverage test runs: sizes around the block
// boundaries, costs from "always inline" to "always split", and pools from
// no workers to more workers than cores.
static const int64_t kTotals[] = {0,  1,  2,    3,     5,     7,
                                  13, 97, 1001, 12345, 100003};
static const int64_t kCosts[] = {0, 1, 7, 100, 1000, 100000, 10000000};
enum { kMaxGridThreads = 3 };

#define ARRAY_LENGTH(array) (sizeof(array) / sizeof((array)[0]))

static void parallel_for_covers_every_index_exactly_once(void** state) {
  (void)state;
  for (int threads = 0; threads <= kMaxGridThreads; ++threads) {
    loom_thread_pool_t* pool = create_pool(threads);
    for (size_t t = 0; t < ARRAY_LENGTH(kTotals); ++t) {
      for (size_t c = 0; c < ARRAY_LENGTH(kCosts); ++c) {
        check_coverage(pool, kTotals[t], kCosts[c]);
      }
    }
    loom_thread_pool_destroy(pool);
  }
}

static void cheap_parallel_for_runs_inline_in_one_call(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(2);
  coverage_t coverage;
  coverage.hits = calloc(100, sizeof(atomic_uchar));
  coverage.total = 100;
  atomic_init(&coverage.calls, 0);
  atomic_init(&coverage.bad_ranges, 0);
  LOOM_ASSERT_OK(
      loom_thread_pool_parallel_for(pool, 100, 1, mark_range, &coverage));
  assert_int_equal(atomic_load(&coverage.calls), 1);
  free(coverage.hits);
  loom_thread_pool_destroy(pool);
}

static void expensive_parallel_for_is_split(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(2);
  coverage_t coverage;
  coverage.hits = calloc(1000, sizeof(atomic_uchar));
  coverage.total = 1000;
  atomic_init(&coverage.calls, 0);
  atomic_init(&coverage.bad_ranges, 0);
  LOOM_ASSERT_OK(loom_thread_pool_parallel_for(pool, 1000, 1000000, mark_range,
                                               &coverage));
  // 3 participants x 4 blocks each.
  assert_int_equal(atomic_load(&coverage.calls), 12);
  free(coverage.hits);
  loom_thread_pool_destroy(pool);
}

static void negative_sizes_are_rejected(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(1);
  LOOM_ASSERT_STATUS(
      loom_thread_pool_parallel_for(pool, -1, 1, mark_range, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_thread_pool_parallel_for: total (-1) and "
      "cost_per_unit (1) must be non-negative");
  LOOM_ASSERT_STATUS(
      loom_thread_pool_parallel_for(pool, 5, -3, mark_range, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "cost_per_unit (-3)");
  loom_thread_pool_destroy(pool);
}

typedef struct worker_probe_t {
  int num_threads;
  int64_t total;
  atomic_uchar* hits;                      // per index
  atomic_int in_use[kMaxGridThreads + 1];  // per worker id: running now?
  atomic_int conflicts;
  atomic_int out_of_range;
  atomic_int bad_ranges;
} worker_probe_t;

static void use_worker_slot(void* arg, int64_t begin, int64_t end,
                            int worker_id) {
  worker_probe_t* probe = arg;
  if (worker_id < 0 || worker_id > probe->num_threads) {
    atomic_fetch_add(&probe->out_of_range, 1);
    return;
  }
  if (atomic_exchange(&probe->in_use[worker_id], 1) != 0) {
    atomic_fetch_add(&probe->conflicts, 1);
  }
  if (begin < 0 || end > probe->total || begin >= end) {
    atomic_fetch_add(&probe->bad_ranges, 1);
  } else {
    for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&probe->hits[i], 1);
  }
  atomic_store(&probe->in_use[worker_id], 0);
}

static void check_worker_ids(loom_thread_pool_t* pool, int threads,
                             int64_t total, int64_t cost) {
  worker_probe_t probe;
  memset(&probe, 0, sizeof(probe));
  probe.num_threads = threads;
  probe.total = total;
  probe.hits = calloc((size_t)(total ? total : 1), sizeof(atomic_uchar));
  LOOM_ASSERT_OK(loom_thread_pool_parallel_for_with_worker_id(
      pool, total, cost, use_worker_slot, &probe));
  if (atomic_load(&probe.out_of_range) || atomic_load(&probe.conflicts) ||
      atomic_load(&probe.bad_ranges)) {
    fail_msg(
        "threads %d total %lld cost %lld: %d ids out of range, %d ids "
        "shared, %d bad ranges",
        threads, (long long)total, (long long)cost,
        atomic_load(&probe.out_of_range), atomic_load(&probe.conflicts),
        atomic_load(&probe.bad_ranges));
  }
  for (int64_t i = 0; i < total; ++i) {
    if (atomic_load(&probe.hits[i]) != 1) {
      fail_msg("threads %d total %lld cost %lld: index %lld covered %d times",
               threads, (long long)total, (long long)cost, (long long)i,
               (int)atomic_load(&probe.hits[i]));
    }
  }
  free(probe.hits);
}

// Two participants each start on a contiguous half of the blocks (as a
// static split would), not on interleaved blocks: the first block each
// runs waits until the other has claimed its own first block too.
typedef struct first_blocks_t {
  atomic_int arrived;
  _Atomic int64_t first[2];
  atomic_int timed_out;
} first_blocks_t;

static void record_first_block(void* arg, int64_t begin, int64_t end,
                               int worker_id) {
  (void)end;
  first_blocks_t* probe = arg;
  if (worker_id < 0 || worker_id > 1) return;
  int64_t none = -1;
  if (!atomic_compare_exchange_strong(&probe->first[worker_id], &none, begin)) {
    return;  // not this participant's first block
  }
  atomic_fetch_add(&probe->arrived, 1);
  for (int spins = 0; atomic_load(&probe->arrived) < 2; ++spins) {
    if (spins > 5000000) {  // the other participant never came
      atomic_store(&probe->timed_out, 1);
      return;
    }
    sched_yield();
  }
}

static void participants_start_on_contiguous_ranges(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(1);
  first_blocks_t probe;
  atomic_init(&probe.arrived, 0);
  atomic_init(&probe.first[0], -1);
  atomic_init(&probe.first[1], -1);
  atomic_init(&probe.timed_out, 0);
  // 8 blocks (4 per participant) of 100 units each.
  LOOM_ASSERT_OK(loom_thread_pool_parallel_for_with_worker_id(
      pool, 800, 1000000, record_first_block, &probe));
  assert_int_equal(atomic_load(&probe.timed_out), 0);
  int64_t a = atomic_load(&probe.first[0]);
  int64_t b = atomic_load(&probe.first[1]);
  assert_int_equal(a < b ? a : b, 0);
  assert_int_equal(a < b ? b : a, 400);
  loom_thread_pool_destroy(pool);
}

static void worker_ids_are_in_range_and_never_shared(void** state) {
  (void)state;
  for (int threads = 0; threads <= kMaxGridThreads; ++threads) {
    loom_thread_pool_t* pool = create_pool(threads);
    for (size_t t = 0; t < ARRAY_LENGTH(kTotals); ++t) {
      for (size_t c = 0; c < ARRAY_LENGTH(kCosts); ++c) {
        check_worker_ids(pool, threads, kTotals[t], kCosts[c]);
      }
    }
    loom_thread_pool_destroy(pool);
  }
}

typedef struct nested_t {
  loom_thread_pool_t* pool;
  atomic_int inner_calls;
  atomic_long inner_covered;
} nested_t;

static void count_inner(void* arg, int64_t begin, int64_t end) {
  nested_t* nested = arg;
  atomic_fetch_add(&nested->inner_calls, 1);
  atomic_fetch_add(&nested->inner_covered, end - begin);
}

static void outer_body(void* arg, int64_t begin, int64_t end) {
  nested_t* nested = arg;
  for (int64_t i = begin; i < end; ++i) {
    loom_status_t status = loom_thread_pool_parallel_for(
        nested->pool, 1000, 1000000, count_inner, nested);
    loom_status_free(status);
  }
}

static void nested_parallel_for_runs_serially(void** state) {
  (void)state;
  loom_thread_pool_t* pool = create_pool(2);
  nested_t nested;
  nested.pool = pool;
  atomic_init(&nested.inner_calls, 0);
  atomic_init(&nested.inner_covered, 0);
  LOOM_ASSERT_OK(
      loom_thread_pool_parallel_for(pool, 30, 10000000, outer_body, &nested));
  // Each inner loop ran as one call covering all 1000 indices.
  assert_int_equal(atomic_load(&nested.inner_calls), 30);
  assert_int_equal(atomic_load(&nested.inner_covered), 30 * 1000);
  loom_thread_pool_destroy(pool);
}

typedef struct from_task_t {
  loom_thread_pool_t* pool;
  atomic_long covered;
} from_task_t;

static void add_covered(void* arg, int64_t begin, int64_t end) {
  from_task_t* task = arg;
  atomic_fetch_add(&task->covered, end - begin);
}

static void parallel_for_in_task(void* arg) {
  from_task_t* task = arg;
  loom_status_free(loom_thread_pool_parallel_for(task->pool, 5000, 1000000,
                                                 add_covered, task));
}

static void parallel_for_from_every_worker_completes(void** state) {
  (void)state;
  // Every worker issues a parallel-for at once: their helpers can only run
  // because waiting threads help run queued work.
  loom_thread_pool_t* pool = create_pool(2);
  from_task_t tasks[8];
  for (int i = 0; i < 8; ++i) {
    tasks[i].pool = pool;
    atomic_init(&tasks[i].covered, 0);
    LOOM_ASSERT_OK(
        loom_thread_pool_schedule(pool, parallel_for_in_task, &tasks[i]));
  }
  loom_thread_pool_wait_idle(pool);
  for (int i = 0; i < 8; ++i)
    assert_int_equal(atomic_load(&tasks[i].covered), 5000);
  loom_thread_pool_destroy(pool);
}

// Holds the workers that run it until it opens.
typedef struct gate_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int entered;
  bool open;
} gate_t;

static void gate_initialize(gate_t* gate) {
  pthread_mutex_init(&gate->mutex, NULL);
  pthread_cond_init(&gate->cond, NULL);
  gate->entered = 0;
  gate->open = false;
}

static void gate_deinitialize(gate_t* gate) {
  pthread_cond_destroy(&gate->cond);
  pthread_mutex_destroy(&gate->mutex);
}

static void hold_at_gate(void* arg) {
  gate_t* gate = arg;
  pthread_mutex_lock(&gate->mutex);
  gate->entered++;
  pthread_cond_broadcast(&gate->cond);
  while (!gate->open) pthread_cond_wait(&gate->cond, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
}

static void wait_until_entered(gate_t* gate, int count) {
  pthread_mutex_lock(&gate->mutex);
  while (gate->entered < count) pthread_cond_wait(&gate->cond, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
}

static void open_gate(gate_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  gate->open = true;
  pthread_cond_broadcast(&gate->cond);
  pthread_mutex_unlock(&gate->mutex);
}

// Parks every worker of `pool` at `gate`, so that nothing drains the queues
// until the gate opens: queues then grow at the same points on every run.
static loom_status_t park_workers(loom_thread_pool_t* pool, gate_t* gate) {
  int threads = loom_thread_pool_num_threads(pool);
  for (int i = 0; i < threads; ++i) {
    LOOM_RETURN_IF_ERROR(loom_thread_pool_schedule_with_hint(pool, hold_at_gate,
                                                             gate, i, i + 1));
  }
  wait_until_entered(gate, threads);
  return loom_ok_status();
}

enum { kQueuedTasks = 200 };  // grows a queue of 64 twice

static loom_status_t pool_with_work(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_thread_pool_t* pool = NULL;
  LOOM_RETURN_IF_ERROR(loom_thread_pool_create(allocator, 2, &pool));
  gate_t gate;
  gate_initialize(&gate);
  atomic_int counter;
  atomic_init(&counter, 0);
  int queued = 0;
  loom_status_t status = park_workers(pool, &gate);
  for (; queued < kQueuedTasks && !status; ++queued) {
    status =
        loom_thread_pool_schedule_with_hint(pool, increment, &counter, 0, 1);
    if (status) break;
  }
  open_gate(&gate);
  loom_thread_pool_destroy(pool);
  gate_deinitialize(&gate);
  if (!status && atomic_load(&counter) != queued) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "%d of %d tasks ran",
                              atomic_load(&counter), queued);
  }
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  // pool + queues + workers + one ring per worker, then two ring growths.
  assert_int_equal(
      loom_test_fault_sweep(pool_with_work, NULL, LOOM_TEST_SWEEP_STRICT), 7);
}

// A parallel-for whose helper cannot be queued still covers every index:
// the threads that do take part run the helper's blocks.
static loom_status_t parallel_for_behind_a_full_queue(
    loom_allocator_t allocator, void* context) {
  (void)context;
  loom_thread_pool_t* pool = NULL;
  LOOM_RETURN_IF_ERROR(loom_thread_pool_create(allocator, 1, &pool));
  gate_t gate;
  gate_initialize(&gate);
  atomic_int counter;
  atomic_init(&counter, 0);
  loom_status_t status = park_workers(pool, &gate);
  // Fill the parked worker's ring (64 entries) so queueing the helper must
  // grow it.
  for (int i = 0; i < 64 && !status; ++i) {
    status = loom_thread_pool_schedule(pool, increment, &counter);
  }
  enum { kTotal = 1000 };
  coverage_t coverage;
  coverage.hits = calloc(kTotal, sizeof(atomic_uchar));
  coverage.total = kTotal;
  atomic_init(&coverage.calls, 0);
  atomic_init(&coverage.bad_ranges, 0);
  if (!status) {
    status = loom_thread_pool_parallel_for(pool, kTotal, 1000000, mark_range,
                                           &coverage);
  }
  for (int64_t i = 0; i < kTotal && !status; ++i) {
    if (atomic_load(&coverage.hits[i]) != 1) {
      status =
          loom_make_status(LOOM_STATUS_INTERNAL, "index %lld covered %d times",
                           (long long)i, (int)atomic_load(&coverage.hits[i]));
    }
  }
  free(coverage.hits);
  open_gate(&gate);
  loom_thread_pool_destroy(pool);
  gate_deinitialize(&gate);
  return status;
}

static void parallel_for_recovers_when_a_helper_cannot_be_queued(void** state) {
  (void)state;
  // Creating the pool fails with an error; growing the ring for the helper
  // fails quietly (TOLERANT), and the loop still covers every index.
  // pool + queues + workers + ring, then the ring's growth.
  assert_int_equal(loom_test_fault_sweep(parallel_for_behind_a_full_queue, NULL,
                                         LOOM_TEST_SWEEP_TOLERANT),
                   5);
}

static loom_status_t pool_lifecycle(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_thread_pool_t* pool = NULL;
  LOOM_RETURN_IF_ERROR(loom_thread_pool_create(allocator, 3, &pool));
  loom_thread_pool_destroy(pool);
  return loom_ok_status();
}

static void create_failures_are_reported_without_leaks(void** state) {
  (void)state;
  // pool + queues + workers + one ring per queue.
  assert_int_equal(
      loom_test_fault_sweep(pool_lifecycle, NULL, LOOM_TEST_SWEEP_STRICT), 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scheduled_tasks_all_run),
      cmocka_unit_test(destroy_runs_what_is_still_queued),
      cmocka_unit_test(run_one_helps_a_pool_without_threads),
      cmocka_unit_test(workers_know_their_index),
      cmocka_unit_test(schedule_with_hint_runs_the_task),
      cmocka_unit_test(schedule_with_bad_hint_is_rejected),
      cmocka_unit_test(null_arguments_are_rejected),
      cmocka_unit_test(parallel_for_covers_every_index_exactly_once),
      cmocka_unit_test(cheap_parallel_for_runs_inline_in_one_call),
      cmocka_unit_test(expensive_parallel_for_is_split),
      cmocka_unit_test(participants_start_on_contiguous_ranges),
      cmocka_unit_test(negative_sizes_are_rejected),
      cmocka_unit_test(worker_ids_are_in_range_and_never_shared),
      cmocka_unit_test(nested_parallel_for_runs_serially),
      cmocka_unit_test(parallel_for_from_every_worker_completes),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
      cmocka_unit_test(parallel_for_recovers_when_a_helper_cannot_be_queued),
      cmocka_unit_test(create_failures_are_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
