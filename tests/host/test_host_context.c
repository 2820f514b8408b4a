// The host context: creation, tasks, helping await (also from inside
// queued work), ready chain, cancellation and restart, allocation failures.

#include <pthread.h>
#include <stdatomic.h>

#include "loom/host_context.h"
#include "test_support.h"

static loom_host_context_t* create_host(int threads) {
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = threads;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &host));
  return host;
}

static const loom_async_value_type_t kIntType = {"int", sizeof(int64_t), NULL};

// The calling thread computes too: with a worker per core but one, as many
// threads compute as there are cores.
static void default_context_has_a_worker_per_core_but_one(void** state) {
  (void)state;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &host));
  assert_true(loom_host_context_default_thread_count() >= 1);
  assert_int_equal(
      loom_thread_pool_num_threads(loom_host_context_thread_pool(host)),
      loom_host_context_default_thread_count() - 1);
  assert_ptr_equal(loom_host_context_allocator(host).allocate,
                   loom_allocator_default().allocate);
  loom_host_context_destroy(host);
}

static void invalid_options_are_rejected(void** state) {
  (void)state;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_STATUS(loom_host_context_create(NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_host is NULL");
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = -2;
  LOOM_ASSERT_STATUS(loom_host_context_create(&options, &host),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "num_threads -2 must be -1 (one per core) or >= 0");
  loom_host_context_options_t zeroed;
  memset(&zeroed, 0, sizeof(zeroed));
  LOOM_ASSERT_STATUS(loom_host_context_create(&zeroed, &host),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "options->allocator is not set");
  assert_null(host);
}

static void store_seven(void* arg, loom_async_value_t* result) {
  (void)arg;
  *(int64_t*)loom_async_value_payload(result) = 7;
  loom_status_free(loom_async_value_set_available(result));
}

static void submitted_task_produces_its_result(void** state) {
  (void)state;
  for (int threads = 0; threads <= 2; ++threads) {
    loom_host_context_t* host = create_host(threads);
    loom_task_t task = {store_seven, NULL, NULL};
    loom_async_value_t* result = NULL;
    LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &result));
    LOOM_ASSERT_OK(loom_host_context_await(host, &result, 1));
    assert_true(loom_async_value_is_available(result));
    assert_int_equal(*(int64_t*)loom_async_value_payload(result), 7);
    loom_async_value_release(result);
    loom_host_context_destroy(host);
  }
}

static void increment(void* arg) {
  atomic_fetch_add((atomic_int*)arg, 1);
}

static void enqueued_work_runs_and_quiesce_waits_for_it(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(2);
  atomic_int counter;
  atomic_init(&counter, 0);
  for (int i = 0; i < 1000; ++i) {
    LOOM_ASSERT_OK(loom_host_context_enqueue(host, increment, &counter));
  }
  loom_host_context_quiesce(host);
  assert_int_equal(atomic_load(&counter), 1000);
  LOOM_ASSERT_STATUS(loom_host_context_enqueue(NULL, increment, &counter),
                     LOOM_STATUS_INVALID_ARGUMENT, "host is NULL");
  loom_host_context_destroy(host);
}

typedef struct chain_link_t {
  loom_async_value_t* input;
  loom_async_value_t* output;
} chain_link_t;

static void forward_when_ready(void* arg) {
  chain_link_t* link = arg;
  loom_status_free(loom_async_value_set_available(link->output));
}

static void produce_later(void* arg) {
  loom_status_free(loom_async_value_set_available((loom_async_value_t*)arg));
}

static void await_on_a_pool_without_threads_runs_the_work(void** state) {
  (void)state;
  // With no workers, only the awaiting thread can run the producer.
  loom_host_context_t* host = create_host(0);
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_host_context_allocator(host), &value));
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, produce_later, value));
  LOOM_ASSERT_OK(loom_host_context_await(host, &value, 1));
  assert_true(loom_async_value_is_available(value));
  loom_async_value_release(value);
  loom_host_context_destroy(host);
}

static void* set_from_thread(void* arg) {
  loom_status_free(loom_async_value_set_available((loom_async_value_t*)arg));
  return NULL;
}

static void await_wakes_when_another_thread_sets_the_value(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  for (int round = 0; round < 200; ++round) {
    loom_async_value_t* values[3];
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i) {
      LOOM_ASSERT_OK(loom_async_value_create_chain(
          loom_host_context_allocator(host), &values[i]));
    }
    for (int i = 0; i < 3; ++i) {
      assert_int_equal(
          pthread_create(&threads[i], NULL, set_from_thread, values[i]), 0);
    }
    LOOM_ASSERT_OK(loom_host_context_await(host, values, 3));
    for (int i = 0; i < 3; ++i) {
      assert_true(loom_async_value_is_set(values[i]));
      pthread_join(threads[i], NULL);
      loom_async_value_release(values[i]);
    }
  }
  loom_host_context_destroy(host);
}

static void await_follows_a_chain_of_continuations(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(2);
  enum { kLinks = 100 };
  loom_async_value_t* values[kLinks + 1];
  chain_link_t links[kLinks];
  for (int i = 0; i <= kLinks; ++i) {
    LOOM_ASSERT_OK(loom_async_value_create_chain(
        loom_host_context_allocator(host), &values[i]));
  }
  for (int i = 0; i < kLinks; ++i) {
    links[i] = (chain_link_t){values[i], values[i + 1]};
    LOOM_ASSERT_OK(
        loom_async_value_and_then(values[i], forward_when_ready, &links[i]));
  }
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, produce_later, values[0]));
  LOOM_ASSERT_OK(loom_host_context_await(host, &values[kLinks], 1));
  for (int i = 0; i <= kLinks; ++i) {
    assert_true(loom_async_value_is_available(values[i]));
    loom_async_value_release(values[i]);
  }
  loom_host_context_destroy(host);
}

static void await_rejects_null_arguments(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(0);
  loom_async_value_t* values[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_host_context_await(host, NULL, 0));
  LOOM_ASSERT_STATUS(loom_host_context_await(host, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "values is NULL");
  LOOM_ASSERT_STATUS(loom_host_context_await(NULL, values, 0),
                     LOOM_STATUS_INVALID_ARGUMENT, "host is NULL");
  LOOM_ASSERT_STATUS(loom_host_context_await(host, values, 2),
                     LOOM_STATUS_INVALID_ARGUMENT, "values[0] is NULL");
  loom_host_context_destroy(host);
}

static void ready_chain_is_available_and_shared(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(0);
  loom_async_value_t* a = loom_host_context_ready_chain(host);
  loom_async_value_t* b = loom_host_context_ready_chain(host);
  assert_ptr_equal(a, b);
  assert_true(loom_async_value_is_available(a));
  assert_ptr_equal(loom_async_value_type(a), &loom_async_value_type_chain);
  loom_async_value_release(a);
  loom_async_value_release(b);
  assert_null(loom_host_context_ready_chain(NULL));
  loom_host_context_destroy(host);
}

//===----------------------------------------------------------------------===//
// Cancellation
//===----------------------------------------------------------------------===//

typedef struct gate_t {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool open;
  bool entered;
} gate_t;

static void enter_gate_and_wait(gate_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  gate->entered = true;
  pthread_cond_broadcast(&gate->cond);
  while (!gate->open) pthread_cond_wait(&gate->cond, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
}

// Holds the thread that runs it until the gate opens.
static void hold_at_gate(void* arg) {
  enter_gate_and_wait(arg);
}

static void wait_until_entered(gate_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  while (!gate->entered) pthread_cond_wait(&gate->cond, &gate->mutex);
  pthread_mutex_unlock(&gate->mutex);
}

static void open_gate(gate_t* gate) {
  pthread_mutex_lock(&gate->mutex);
  gate->open = true;
  pthread_cond_broadcast(&gate->cond);
  pthread_mutex_unlock(&gate->mutex);
}

// The same as a submitted task.
static void wait_at_gate(void* arg, loom_async_value_t* result) {
  enter_gate_and_wait(arg);
  loom_status_free(loom_async_value_set_available(result));
}

typedef struct counted_task_t {
  atomic_int runs;
  atomic_int discards;
} counted_task_t;

static void counted_run(void* arg, loom_async_value_t* result) {
  atomic_fetch_add(&((counted_task_t*)arg)->runs, 1);
  loom_status_free(loom_async_value_set_available(result));
}

static void counted_discard(void* arg) {
  atomic_fetch_add(&((counted_task_t*)arg)->discards, 1);
}

static void cancel_resolves_pending_and_new_tasks_to_cancelled(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  gate_t gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false,
                 false};
  loom_task_t blocker = {wait_at_gate, NULL, &gate};
  loom_async_value_t* blocked = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(
      host, &blocker, &loom_async_value_type_chain, &blocked));
  // Wait until the only worker is stuck in the blocker.
  pthread_mutex_lock(&gate.mutex);
  while (!gate.entered) pthread_cond_wait(&gate.cond, &gate.mutex);
  pthread_mutex_unlock(&gate.mutex);

  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  enum { kPending = 10 };
  loom_async_value_t* pending[kPending];
  for (int i = 0; i < kPending; ++i) {
    LOOM_ASSERT_OK(
        loom_host_context_submit(host, &task, &kIntType, &pending[i]));
  }
  assert_false(loom_host_context_is_cancelled(host));
  loom_host_context_cancel(host, "user pressed stop");
  assert_true(loom_host_context_is_cancelled(host));

  // Submitted while cancelled: resolved at once, never run.
  loom_async_value_t* late = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &late));
  assert_true(loom_async_value_is_error(late));

  pthread_mutex_lock(&gate.mutex);
  gate.open = true;
  pthread_cond_broadcast(&gate.cond);
  pthread_mutex_unlock(&gate.mutex);
  LOOM_ASSERT_OK(loom_host_context_await(host, pending, kPending));
  for (int i = 0; i < kPending; ++i) {
    loom_status_t error = loom_async_value_error(pending[i]);
    assert_int_equal(loom_status_code(error), LOOM_STATUS_CANCELLED);
    assert_string_equal(loom_status_message(error), "user pressed stop");
    loom_async_value_release(pending[i]);
  }
  assert_int_equal(loom_status_code(loom_async_value_error(late)),
                   LOOM_STATUS_CANCELLED);
  loom_async_value_release(late);
  assert_int_equal(atomic_load(&counts.runs), 0);
  assert_int_equal(atomic_load(&counts.discards), kPending + 1);
  // The blocker had started before the cancellation: it finishes normally.
  LOOM_ASSERT_OK(loom_host_context_await(host, &blocked, 1));
  assert_true(loom_async_value_is_available(blocked));
  loom_async_value_release(blocked);
  loom_host_context_destroy(host);
}

static void restart_lets_tasks_run_again(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  loom_host_context_cancel(host, NULL);
  loom_status_t status = loom_host_context_cancel_status(host);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_CANCELLED);
  assert_string_equal(loom_status_message(status), "cancelled");
  loom_status_free(status);
  loom_host_context_cancel(host, "again");  // replaces the message
  status = loom_host_context_cancel_status(host);
  assert_string_equal(loom_status_message(status), "again");
  loom_status_free(status);

  loom_host_context_restart(host);
  assert_false(loom_host_context_is_cancelled(host));
  assert_null(loom_host_context_cancel_status(host));
  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  loom_async_value_t* result = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &result));
  LOOM_ASSERT_OK(loom_host_context_await(host, &result, 1));
  assert_true(loom_async_value_is_available(result));
  assert_int_equal(atomic_load(&counts.runs), 1);
  assert_int_equal(atomic_load(&counts.discards), 0);
  loom_async_value_release(result);
  loom_host_context_destroy(host);
}

static void cancel_skips_submitted_tasks_but_not_enqueued_work(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  gate_t gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false,
                 false};
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, hold_at_gate, &gate));
  wait_until_entered(&gate);
  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  atomic_int enqueued_runs;
  atomic_init(&enqueued_runs, 0);

  // Queued before the cancellation, started after it.
  loom_async_value_t* queued = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &queued));
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, increment, &enqueued_runs));
  loom_host_context_cancel(host, "stop");
  // Queued after the cancellation.
  loom_async_value_t* late = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &late));
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, increment, &enqueued_runs));
  assert_int_equal(loom_status_code(loom_async_value_error(late)),
                   LOOM_STATUS_CANCELLED);

  open_gate(&gate);
  loom_host_context_quiesce(host);
  assert_int_equal(atomic_load(&enqueued_runs), 2);
  assert_int_equal(loom_status_code(loom_async_value_error(queued)),
                   LOOM_STATUS_CANCELLED);
  assert_int_equal(atomic_load(&counts.runs), 0);
  assert_int_equal(atomic_load(&counts.discards), 2);

  // Restarting lets submitted tasks run again.
  loom_host_context_restart(host);
  loom_async_value_t* resumed = NULL;
  LOOM_ASSERT_OK(loom_host_context_submit(host, &task, &kIntType, &resumed));
  LOOM_ASSERT_OK(loom_host_context_await(host, &resumed, 1));
  assert_true(loom_async_value_is_available(resumed));
  assert_int_equal(atomic_load(&counts.runs), 1);
  loom_async_value_release(queued);
  loom_async_value_release(late);
  loom_async_value_release(resumed);
  loom_host_context_destroy(host);
}

static void submit_rejects_null_arguments(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(0);
  loom_task_t task = {counted_run, NULL, NULL};
  loom_task_t no_run = {NULL, NULL, NULL};
  loom_async_value_t* result = NULL;
  LOOM_ASSERT_STATUS(loom_host_context_submit(NULL, &task, &kIntType, &result),
                     LOOM_STATUS_INVALID_ARGUMENT, "host is NULL");
  LOOM_ASSERT_STATUS(loom_host_context_submit(host, NULL, &kIntType, &result),
                     LOOM_STATUS_INVALID_ARGUMENT, "task is NULL");
  LOOM_ASSERT_STATUS(
      loom_host_context_submit(host, &no_run, &kIntType, &result),
      LOOM_STATUS_INVALID_ARGUMENT, "task->run is NULL");
  LOOM_ASSERT_STATUS(loom_host_context_submit(host, &task, &kIntType, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_result is NULL");
  LOOM_ASSERT_STATUS(loom_host_context_submit(host, &task, NULL, &result),
                     LOOM_STATUS_INVALID_ARGUMENT, "type is NULL");
  loom_host_context_destroy(host);
}

typedef struct canceller_t {
  loom_host_context_t* host;
  atomic_bool stop;
} canceller_t;

static void* toggle_cancellation(void* arg) {
  canceller_t* canceller = arg;
  while (!atomic_load(&canceller->stop)) {
    loom_host_context_cancel(canceller->host, "toggle");
    loom_host_context_restart(canceller->host);
  }
  return NULL;
}

static void each_task_runs_or_is_discarded_under_racing_cancels(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(2);
  canceller_t canceller = {host, false};
  atomic_init(&canceller.stop, false);
  pthread_t thread;
  assert_int_equal(
      pthread_create(&thread, NULL, toggle_cancellation, &canceller), 0);
  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  enum { kTasks = 2000 };
  static loom_async_value_t* results[kTasks];
  for (int i = 0; i < kTasks; ++i) {
    LOOM_ASSERT_OK(
        loom_host_context_submit(host, &task, &kIntType, &results[i]));
  }
  LOOM_ASSERT_OK(loom_host_context_await(host, results, kTasks));
  atomic_store(&canceller.stop, true);
  pthread_join(thread, NULL);
  int errors = 0;
  for (int i = 0; i < kTasks; ++i) {
    if (loom_async_value_is_error(results[i])) errors++;
    loom_async_value_release(results[i]);
  }
  assert_int_equal(atomic_load(&counts.runs) + atomic_load(&counts.discards),
                   kTasks);
  assert_int_equal(errors, atomic_load(&counts.discards));
  loom_host_context_destroy(host);
}

//===----------------------------------------------------------------------===//
// Awaiting from inside queued work
//===----------------------------------------------------------------------===//

// A consumer that awaits the result of a task queued after it, on a pool
// whose only worker runs the consumer: the await must run the producer
// itself. The test thread only watches (a waiting test thread would help
// and could run the producer first).
typedef struct consumer_t {
  loom_host_context_t* host;
  loom_async_value_t* produced;  // the producer's result, set before it runs
  int64_t seen;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool done;
} consumer_t;

static void signal_done(consumer_t* consumer) {
  pthread_mutex_lock(&consumer->mutex);
  consumer->done = true;
  pthread_cond_broadcast(&consumer->cond);
  pthread_mutex_unlock(&consumer->mutex);
}

static void wait_done(consumer_t* consumer) {
  pthread_mutex_lock(&consumer->mutex);
  while (!consumer->done) {
    pthread_cond_wait(&consumer->cond, &consumer->mutex);
  }
  pthread_mutex_unlock(&consumer->mutex);
}

static void await_produced(consumer_t* consumer) {
  loom_status_free(
      loom_host_context_await(consumer->host, &consumer->produced, 1));
}

static void consume(void* arg, loom_async_value_t* result) {
  consumer_t* consumer = arg;
  await_produced(consumer);
  consumer->seen = *(int64_t*)loom_async_value_payload(consumer->produced);
  loom_status_free(loom_async_value_set_available(result));
  signal_done(consumer);
}

static void consumer_initialize(consumer_t* consumer,
                                loom_host_context_t* host) {
  consumer->host = host;
  consumer->produced = NULL;
  consumer->seen = 0;
  pthread_mutex_init(&consumer->mutex, NULL);
  pthread_cond_init(&consumer->cond, NULL);
  consumer->done = false;
}

static void consumer_deinitialize(consumer_t* consumer) {
  pthread_cond_destroy(&consumer->cond);
  pthread_mutex_destroy(&consumer->mutex);
}

// Queues, behind a gate that holds the only worker, `consumer_task` and
// then a producer of `consumer->produced`; opens the gate and waits,
// without helping, for the consumer to finish. Returns the consumer's
// result.
static loom_async_value_t* run_consumer_then_producer(
    loom_host_context_t* host, consumer_t* consumer,
    const loom_task_t* consumer_task) {
  gate_t gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false,
                 false};
  LOOM_ASSERT_OK(loom_host_context_enqueue(host, hold_at_gate, &gate));
  wait_until_entered(&gate);
  loom_async_value_t* consumed = NULL;
  LOOM_ASSERT_OK(
      loom_host_context_submit(host, consumer_task, &kIntType, &consumed));
  loom_task_t producer = {store_seven, NULL, NULL};
  LOOM_ASSERT_OK(loom_host_context_submit(host, &producer, &kIntType,
                                          &consumer->produced));
  open_gate(&gate);
  wait_done(consumer);
  return consumed;
}

static void task_awaiting_a_later_task_on_one_worker_runs_it(void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  consumer_t consumer;
  consumer_initialize(&consumer, host);
  loom_task_t task = {consume, NULL, &consumer};
  loom_async_value_t* consumed =
      run_consumer_then_producer(host, &consumer, &task);
  assert_int_equal(consumer.seen, 7);
  assert_true(loom_async_value_is_available(consumed));
  loom_async_value_release(consumed);
  loom_async_value_release(consumer.produced);
  loom_host_context_destroy(host);
  consumer_deinitialize(&consumer);
}

enum { kBodyIndices = 64 };

typedef struct awaiting_loop_t {
  consumer_t* consumer;
  atomic_int seen[kBodyIndices];
} awaiting_loop_t;

static void await_in_body(void* arg, int64_t begin, int64_t end) {
  awaiting_loop_t* loop = arg;
  for (int64_t i = begin; i < end; ++i) {
    await_produced(loop->consumer);
    atomic_fetch_add(&loop->seen[i], 1);
  }
}

static void consume_in_parallel_for(void* arg, loom_async_value_t* result) {
  awaiting_loop_t* loop = arg;
  consumer_t* consumer = loop->consumer;
  // Expensive enough to be split: a helper is queued behind the producer.
  loom_status_free(loom_thread_pool_parallel_for(
      loom_host_context_thread_pool(consumer->host), kBodyIndices, 1000000,
      await_in_body, loop));
  consumer->seen = *(int64_t*)loom_async_value_payload(consumer->produced);
  loom_status_free(loom_async_value_set_available(result));
  signal_done(consumer);
}

static void parallel_for_body_awaiting_a_later_task_on_one_worker_runs_it(
    void** state) {
  (void)state;
  loom_host_context_t* host = create_host(1);
  consumer_t consumer;
  consumer_initialize(&consumer, host);
  awaiting_loop_t loop;
  loop.consumer = &consumer;
  for (int i = 0; i < kBodyIndices; ++i) atomic_init(&loop.seen[i], 0);
  loom_task_t task = {consume_in_parallel_for, NULL, &loop};
  loom_async_value_t* consumed =
      run_consumer_then_producer(host, &consumer, &task);
  assert_int_equal(consumer.seen, 7);
  for (int i = 0; i < kBodyIndices; ++i) {
    assert_int_equal(atomic_load(&loop.seen[i]), 1);
  }
  loom_async_value_release(consumed);
  loom_async_value_release(consumer.produced);
  loom_host_context_destroy(host);
  consumer_deinitialize(&consumer);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

static loom_status_t host_lifecycle(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.allocator = allocator;
  options.num_threads = 2;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  loom_host_context_destroy(host);
  return loom_ok_status();
}

static void create_failures_are_reported_without_leaks(void** state) {
  (void)state;
  assert_true(
      loom_test_fault_sweep(host_lifecycle, NULL, LOOM_TEST_SWEEP_STRICT) >= 5);
}

static loom_status_t submit_and_await(loom_allocator_t allocator,
                                      void* context) {
  loom_host_context_t* host = context;
  (void)allocator;
  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  loom_async_value_t* result = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_host_context_submit(host, &task, &kIntType, &result));
  loom_status_t status = loom_host_context_await(host, &result, 1);
  loom_async_value_release(result);
  return status;
}

static loom_status_t submit_on_host(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.allocator = allocator;
  options.num_threads = 1;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  loom_status_t status = submit_and_await(allocator, host);
  loom_host_context_destroy(host);
  return status;
}

static void submit_failures_are_reported_without_leaks(void** state) {
  (void)state;
  assert_true(
      loom_test_fault_sweep(submit_on_host, NULL, LOOM_TEST_SWEEP_STRICT) >= 7);
}

// Enqueued work that owns a block from the host's allocator and frees it.
typedef struct owned_work_t {
  loom_allocator_t allocator;
  void* block;
} owned_work_t;

static void free_owned_block(void* arg) {
  owned_work_t* work = arg;
  loom_allocator_free(work->allocator, work->block);
  loom_allocator_free(work->allocator, work);
}

enum { kEnqueued = 200 };  // enough to grow the queue twice

static loom_status_t enqueue_on_host(loom_allocator_t allocator,
                                     void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.allocator = allocator;
  // No workers: nothing drains the queue before destroy, so it grows at the
  // same points on every run.
  options.num_threads = 0;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < kEnqueued && !status; ++i) {
    owned_work_t* work = NULL;
    status = loom_allocator_malloc(allocator, sizeof(*work), (void**)&work);
    if (status) break;
    work->allocator = allocator;
    status = loom_allocator_malloc(allocator, 32, &work->block);
    if (!status)
      status = loom_host_context_enqueue(host, free_owned_block, work);
    if (status) {
      // Not queued: the caller still owns what the work would have freed.
      loom_allocator_free(allocator, work->block);
      loom_allocator_free(allocator, work);
    }
  }
  loom_host_context_destroy(host);  // runs the queued work
  return status;
}

static void enqueue_failures_are_reported_without_leaks(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(enqueue_on_host, NULL,
                                    LOOM_TEST_SWEEP_STRICT) > 2 * kEnqueued);
}

static loom_status_t submit_while_cancelled(loom_allocator_t allocator,
                                            void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.allocator = allocator;
  options.num_threads = 1;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  loom_host_context_cancel(host, "stopped");
  counted_task_t counts;
  atomic_init(&counts.runs, 0);
  atomic_init(&counts.discards, 0);
  loom_task_t task = {counted_run, counted_discard, &counts};
  loom_async_value_t* result = NULL;
  loom_status_t status =
      loom_host_context_submit(host, &task, &kIntType, &result);
  // On OK the task was discarded once; on error neither run nor discard.
  int expected_discards = status ? 0 : 1;
  if (!status && loom_status_code(loom_async_value_error(result)) !=
                     LOOM_STATUS_CANCELLED) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "result not CANCELLED");
  }
  loom_async_value_release(result);
  loom_host_context_destroy(host);
  if (atomic_load(&counts.runs) != 0 ||
      atomic_load(&counts.discards) != expected_discards) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL, "%d runs, %d discards",
                            atomic_load(&counts.runs),
                            atomic_load(&counts.discards));
  }
  return status;
}

static void submit_while_cancelled_failures_are_reported_without_leaks(
    void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(submit_while_cancelled, NULL,
                                    LOOM_TEST_SWEEP_STRICT) >= 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_context_has_a_worker_per_core_but_one),
      cmocka_unit_test(invalid_options_are_rejected),
      cmocka_unit_test(submitted_task_produces_its_result),
      cmocka_unit_test(enqueued_work_runs_and_quiesce_waits_for_it),
      cmocka_unit_test(await_on_a_pool_without_threads_runs_the_work),
      cmocka_unit_test(await_wakes_when_another_thread_sets_the_value),
      cmocka_unit_test(await_follows_a_chain_of_continuations),
      cmocka_unit_test(await_rejects_null_arguments),
      cmocka_unit_test(ready_chain_is_available_and_shared),
      cmocka_unit_test(cancel_resolves_pending_and_new_tasks_to_cancelled),
      cmocka_unit_test(restart_lets_tasks_run_again),
      cmocka_unit_test(cancel_skips_submitted_tasks_but_not_enqueued_work),
      cmocka_unit_test(submit_rejects_null_arguments),
      cmocka_unit_test(each_task_runs_or_is_discarded_under_racing_cancels),
      cmocka_unit_test(create_failures_are_reported_without_leaks),
      cmocka_unit_test(task_awaiting_a_later_task_on_one_worker_runs_it),
      cmocka_unit_test(
          parallel_for_body_awaiting_a_later_task_on_one_worker_runs_it),
      cmocka_unit_test(submit_failures_are_reported_without_leaks),
      cmocka_unit_test(enqueue_failures_are_reported_without_leaks),
      cmocka_unit_test(
          submit_while_cancelled_failures_are_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
