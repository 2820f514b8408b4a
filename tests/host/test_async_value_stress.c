// Async values under contention: over a million continuations added from
// several threads while another thread sets the values. Every continuation
// must run exactly once, whether it was added before or after its value
// became available. Run under ThreadSanitizer by the test command.

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "loom/async_value.h"
#include "test_support.h"

enum {
  kValues = 2000,
  kAdders = 4,
  kPerAdderPerValue = 25,  // continuations each adder puts on each value
  kRounds = 6,
  kPerRound = kValues * kAdders * kPerAdderPerValue,
};

typedef struct round_t {
  loom_async_value_t* values[kValues];
  atomic_uchar runs[kPerRound];          // how often continuation i ran
  loom_async_waiter_t nodes[kPerRound];  // intrusive nodes (half of them)
  atomic_int per_value[kValues];
  int set_order[kValues];
  pthread_barrier_t start;
  atomic_long heap_failures;
} round_t;

typedef struct slot_arg_t {
  round_t* round;
  int index;
} slot_arg_t;

static slot_arg_t g_slots[kPerRound];

// Continuations that ran on the setter thread (added before their value was
// set) versus inline in an adder (added after).
static _Thread_local bool tls_is_setter = false;
static atomic_long g_ran_on_setter;
static atomic_long g_ran_inline;

static void count_run(void* arg) {
  slot_arg_t* slot = arg;
  atomic_fetch_add_explicit(&slot->round->runs[slot->index], 1,
                            memory_order_relaxed);
  int value = slot->index / (kAdders * kPerAdderPerValue);
  atomic_fetch_add_explicit(&slot->round->per_value[value], 1,
                            memory_order_relaxed);
  atomic_fetch_add_explicit(tls_is_setter ? &g_ran_on_setter : &g_ran_inline, 1,
                            memory_order_relaxed);
}

typedef struct adder_t {
  round_t* round;
  int id;
} adder_t;

static void* add_continuations(void* arg) {
  adder_t* adder = arg;
  round_t* round = adder->round;
  pthread_barrier_wait(&round->start);
  for (int c = 0; c < kPerAdderPerValue; ++c) {
    for (int v = 0; v < kValues; ++v) {
      int index =
          v * kAdders * kPerAdderPerValue + adder->id * kPerAdderPerValue + c;
      slot_arg_t* slot = &g_slots[index];
      if (index % 2 == 0) {
        loom_async_waiter_t* node = &round->nodes[index];
        node->fn = count_run;
        node->arg = slot;
        loom_async_value_and_then_node(round->values[v], node);
      } else {
        loom_status_t status =
            loom_async_value_and_then(round->values[v], count_run, slot);
        if (status) {
          atomic_fetch_add(&round->heap_failures, 1);
          loom_status_free(status);
        }
      }
    }
  }
  return NULL;
}

static void* set_values(void* arg) {
  round_t* round = arg;
  tls_is_setter = true;
  pthread_barrier_wait(&round->start);
  for (int i = 0; i < kValues; ++i) {
    // Pace the sets over the time the adders run, so continuations land
    // both before and after their value is set.
    for (int spin = 0; spin < 300; ++spin) {
      (void)atomic_load_explicit(&round->per_value[0], memory_order_relaxed);
    }
    loom_async_value_t* value = round->values[round->set_order[i]];
    loom_status_t status;
    if (i % 7 == 0) {
      status = loom_async_value_set_error(
          value, loom_make_status(LOOM_STATUS_ABORTED, "value %d", i));
    } else {
      status = loom_async_value_set_available(value);
    }
    loom_status_free(status);
  }
  return NULL;
}

static void million_continuations_each_run_exactly_once(void** state) {
  (void)state;
  round_t* round = calloc(1, sizeof(round_t));
  assert_non_null(round);
  long total = 0;
  unsigned seed = 12345;
  for (int r = 0; r < kRounds; ++r) {
    for (int v = 0; v < kValues; ++v) {
      LOOM_ASSERT_OK(loom_async_value_create_chain(loom_allocator_system(),
                                                   &round->values[v]));
      atomic_init(&round->per_value[v], 0);
      round->set_order[v] = v;
    }
    for (int i = 0; i < kPerRound; ++i) {
      atomic_init(&round->runs[i], 0);
      g_slots[i] = (slot_arg_t){round, i};
    }
    // A random order of setting, so values near and far from the adders'
    // positions are set.
    for (int v = kValues - 1; v > 0; --v) {
      seed = seed * 1103515245u + 12345u;
      int j = (int)((seed >> 8) % (unsigned)(v + 1));
      int tmp = round->set_order[v];
      round->set_order[v] = round->set_order[j];
      round->set_order[j] = tmp;
    }
    atomic_init(&round->heap_failures, 0);
    pthread_barrier_init(&round->start, NULL, kAdders + 1);

    pthread_t adders[kAdders];
    adder_t adder_args[kAdders];
    pthread_t setter;
    for (int a = 0; a < kAdders; ++a) {
      adder_args[a] = (adder_t){round, a};
      assert_int_equal(
          pthread_create(&adders[a], NULL, add_continuations, &adder_args[a]),
          0);
    }
    assert_int_equal(pthread_create(&setter, NULL, set_values, round), 0);
    for (int a = 0; a < kAdders; ++a) pthread_join(adders[a], NULL);
    pthread_join(setter, NULL);
    pthread_barrier_destroy(&round->start);

    assert_int_equal(atomic_load(&round->heap_failures), 0);
    for (int i = 0; i < kPerRound; ++i) {
      if (atomic_load(&round->runs[i]) != 1) {
        fail_msg("round %d: continuation %d ran %d times", r, i,
                 (int)atomic_load(&round->runs[i]));
      }
    }
    for (int v = 0; v < kValues; ++v) {
      assert_int_equal(atomic_load(&round->per_value[v]),
                       kAdders * kPerAdderPerValue);
      assert_true(loom_async_value_is_set(round->values[v]));
      loom_async_value_release(round->values[v]);
    }
    total += kPerRound;
  }
  assert_true(total >= 1000000);
  long on_setter = atomic_load(&g_ran_on_setter);
  long inline_runs = atomic_load(&g_ran_inline);
  assert_int_equal(on_setter + inline_runs, total);
  print_message("continuations: %ld total, %ld before set, %ld after\n", total,
                on_setter, inline_runs);
  // How the runs split between the setter and the adders is the
  // scheduler's choice (on a loaded machine one side may get none): a
  // statistic, printed, not asserted.
  free(round);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(million_continuations_each_run_exactly_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
