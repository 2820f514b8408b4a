// Host-runtime costs: async values, thread-pool round trips and parallel-for
// overhead. Prints one "name median unit" line per figure.

#include <stdatomic.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

static void count_continuation(void* arg) {
  ++*(int64_t*)arg;
}

// create + and_then (heap continuation) + set_available + release.
static double measure_async_value(void* arg, int64_t iterations) {
  loom_allocator_t allocator = *(loom_allocator_t*)arg;
  int64_t runs = 0;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_async_value_t* value = NULL;
    CHECK_OK(loom_async_value_create_chain(allocator, &value));
    CHECK_OK(loom_async_value_and_then(value, count_continuation, &runs));
    CHECK_OK(loom_async_value_set_available(value));
    loom_async_value_release(value);
  }
  double elapsed = bench_now_ns() - start;
  if (runs != iterations) exit(2);
  return elapsed;
}

// The same with a caller-owned continuation node (no allocation for it).
static double measure_async_value_node(void* arg, int64_t iterations) {
  loom_allocator_t allocator = *(loom_allocator_t*)arg;
  int64_t runs = 0;
  loom_async_waiter_t node = {.fn = count_continuation, .arg = &runs};
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_async_value_t* value = NULL;
    CHECK_OK(loom_async_value_create_chain(allocator, &value));
    loom_async_value_and_then_node(value, &node);
    CHECK_OK(loom_async_value_set_available(value));
    loom_async_value_release(value);
  }
  double elapsed = bench_now_ns() - start;
  if (runs != iterations) exit(2);
  return elapsed;
}

typedef struct round_trip_t {
  loom_host_context_t* host;
  atomic_int flag;
} round_trip_t;

static void raise_flag(void* arg) {
  atomic_store_explicit((atomic_int*)arg, 1, memory_order_release);
}

// Enqueue from this (non-pool) thread, a worker runs the task, this thread
// sees its effect: spin-waiting, so the figure is the queue's latency.
static double measure_round_trip(void* arg, int64_t iterations) {
  round_trip_t* trip = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    atomic_store_explicit(&trip->flag, 0, memory_order_relaxed);
    CHECK_OK(loom_host_context_enqueue(trip->host, raise_flag, &trip->flag));
    while (!atomic_load_explicit(&trip->flag, memory_order_acquire)) {
    }
  }
  return bench_now_ns() - start;
}

static void finish_task(void* arg, loom_async_value_t* result) {
  (void)arg;
  loom_status_ignore(loom_async_value_set_available(result));
}

// submit + await (the blocking, helping wait) of a task.
static double measure_submit_await(void* arg, int64_t iterations) {
  round_trip_t* trip = arg;
  loom_task_t task = {.run = finish_task};
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_async_value_t* result = NULL;
    CHECK_OK(loom_host_context_submit(trip->host, &task,
                                      &loom_async_value_type_chain, &result));
    CHECK_OK(loom_host_context_await(trip->host, &result, 1));
    loom_async_value_release(result);
  }
  return bench_now_ns() - start;
}

static void empty_body(void* arg, int64_t begin, int64_t end) {
  (void)arg;
  (void)begin;
  (void)end;
}

typedef struct parallel_for_bench_t {
  loom_thread_pool_t* pool;
  int64_t total;
  int64_t cost;
} parallel_for_bench_t;

static double measure_parallel_for(void* arg, int64_t iterations) {
  parallel_for_bench_t* bench = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    CHECK_OK(loom_thread_pool_parallel_for(bench->pool, bench->total,
                                           bench->cost, empty_body, NULL));
  }
  return bench_now_ns() - start;
}

int main(int argc, char** argv) {
  // --quick: few iterations, for a smoke run under valgrind or in tests.
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int64_t scale = quick ? 100 : 1;
  int repetitions = quick ? 3 : 15;

  loom_allocator_t allocator = loom_allocator_system();
  bench_report("async_value_create_set_and_then",
               bench_median_ns(measure_async_value, &allocator, 200000 / scale,
                               repetitions),
               "ns/op");
  bench_report("async_value_create_set_and_then_node",
               bench_median_ns(measure_async_value_node, &allocator,
                               200000 / scale, repetitions),
               "ns/op");

  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 1;  // one worker: a clean producer/consumer pair
  round_trip_t trip;
  CHECK_OK(loom_host_context_create(&options, &trip.host));
  atomic_init(&trip.flag, 0);
  bench_report(
      "thread_pool_enqueue_round_trip",
      bench_median_ns(measure_round_trip, &trip, 20000 / scale, repetitions),
      "ns/op");
  bench_report(
      "host_submit_await_round_trip",
      bench_median_ns(measure_submit_await, &trip, 20000 / scale, repetitions),
      "ns/op");
  loom_host_context_destroy(trip.host);

  loom_host_context_t* host = NULL;
  CHECK_OK(loom_host_context_create(NULL, &host));  // one worker per core
  parallel_for_bench_t inline_case = {
      .pool = loom_host_context_thread_pool(host), .total = 1000, .cost = 1};
  bench_report("parallel_for_empty_body_inline",
               bench_median_ns(measure_parallel_for, &inline_case,
                               200000 / scale, repetitions),
               "ns/call");
  parallel_for_bench_t split_case = {
      .pool = loom_host_context_thread_pool(host),
      .total = 1000,
      .cost = 1000000};
  bench_report("parallel_for_empty_body_split",
               bench_median_ns(measure_parallel_for, &split_case, 20000 / scale,
                               repetitions),
               "ns/call");
  loom_host_context_destroy(host);
  return 0;
}
