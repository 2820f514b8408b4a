// loom_cancellation_t: tokens, callbacks run once by the thread that
// starts cancelling, registration refused after it, and deregistration
// that waits for running callbacks (TensorFlow's CancellationManager).

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "loom/cancellation.h"
#include "test_support.h"

static loom_cancellation_t* make(void) {
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_default(), &cancellation));
  return cancellation;
}

static void count_call(void* arg) {
  (*(int*)arg)++;
}

static void callbacks_run_once_and_deregistered_ones_never(void** state) {
  (void)state;
  loom_cancellation_t* c = make();
  assert_false(loom_cancellation_is_cancelled(c));
  assert_false(loom_cancellation_is_cancelling(c));
  int first = 0, second = 0, third = 0;
  loom_cancellation_token_t t1 = loom_cancellation_new_token(c);
  loom_cancellation_token_t t2 = loom_cancellation_new_token(c);
  loom_cancellation_token_t t3 = loom_cancellation_new_token(c);
  assert_true(t1 != t2 && t2 != t3 && t1 != t3);
  assert_true(loom_cancellation_register(c, t1, count_call, &first));
  assert_true(loom_cancellation_register(c, t2, count_call, &second));
  assert_true(loom_cancellation_register(c, t3, count_call, &third));
  // A token is registered once.
  assert_false(loom_cancellation_register(c, t2, count_call, &second));
  assert_true(loom_cancellation_deregister(c, t1));
  assert_false(loom_cancellation_deregister(c, t1));  // gone already
  assert_true(loom_cancellation_try_deregister(c, t3));
  loom_cancellation_start(c);
  assert_true(loom_cancellation_is_cancelled(c));
  assert_false(loom_cancellation_is_cancelling(c));
  assert_int_equal(first, 0);
  assert_int_equal(second, 1);
  assert_int_equal(third, 0);
  loom_cancellation_start(c);  // again: nothing
  assert_int_equal(second, 1);
  // Too late: refused, and the caller stops on its own.
  int late = 0;
  assert_false(loom_cancellation_register(c, loom_cancellation_new_token(c),
                                          count_call, &late));
  assert_false(loom_cancellation_deregister(c, t2));
  assert_false(loom_cancellation_try_deregister(c, t2));
  assert_int_equal(late, 0);
  loom_cancellation_release(c);
}

static void bad_arguments_are_refused(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_cancellation_create(loom_allocator_default(), NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_cancellation is NULL");
  loom_cancellation_t* c = make();
  int calls = 0;
  assert_false(loom_cancellation_register(c, 0, NULL, &calls));
  assert_false(loom_cancellation_register(c, -5, count_call, &calls));
  assert_false(loom_cancellation_register(NULL, 0, count_call, &calls));
  assert_false(loom_cancellation_deregister(NULL, 0));
  assert_false(loom_cancellation_is_cancelled(NULL));
  assert_int_equal(loom_cancellation_new_token(NULL), -1);
  loom_cancellation_start(NULL);
  loom_cancellation_retain(NULL);
  loom_cancellation_release(NULL);
  loom_status_t error = loom_cancellation_error("MatMul");
  assert_int_equal(loom_status_code(error), LOOM_STATUS_CANCELLED);
  assert_string_equal(loom_status_message(error),
                      "MatMul: Operation was cancelled");
  loom_status_free(error);
  loom_cancellation_release(c);
}

// A callback that blocks until released, so that another thread can be
// seen to wait for it.
typedef struct slow_t {
  atomic_int entered;
  atomic_int release;
  atomic_int finished;
} slow_t;

static void slow_callback(void* arg) {
  slow_t* slow = arg;
  atomic_store(&slow->entered, 1);
  while (!atomic_load(&slow->release)) usleep(100);
  atomic_store(&slow->finished, 1);
}

typedef struct starter_t {
  loom_cancellation_t* cancellation;
} starter_t;

static void* start_thread(void* arg) {
  loom_cancellation_start(((starter_t*)arg)->cancellation);
  return NULL;
}

typedef struct remover_t {
  loom_cancellation_t* cancellation;
  loom_cancellation_token_t token;
  slow_t* slow;
  int finished_seen;  // whether the callback had finished when it returned
  bool removed;
} remover_t;

static void* deregister_thread(void* arg) {
  remover_t* remover = arg;
  remover->removed =
      loom_cancellation_deregister(remover->cancellation, remover->token);
  remover->finished_seen = atomic_load(&remover->slow->finished);
  return NULL;
}

static void deregister_waits_for_running_callbacks(void** state) {
  (void)state;
  loom_cancellation_t* c = make();
  slow_t slow = {0};
  loom_cancellation_token_t token = loom_cancellation_new_token(c);
  assert_true(loom_cancellation_register(c, token, slow_callback, &slow));
  starter_t starter = {.cancellation = c};
  pthread_t starting;
  assert_int_equal(pthread_create(&starting, NULL, start_thread, &starter), 0);
  while (!atomic_load(&slow.entered)) usleep(100);
  assert_true(loom_cancellation_is_cancelling(c));
  // Does not wait: the callback is running.
  assert_false(loom_cancellation_try_deregister(c, token));
  remover_t remover = {.cancellation = c, .token = token, .slow = &slow};
  pthread_t removing;
  assert_int_equal(pthread_create(&removing, NULL, deregister_thread, &remover),
                   0);
  usleep(2000);
  atomic_store(&slow.release, 1);
  pthread_join(removing, NULL);
  pthread_join(starting, NULL);
  assert_false(remover.removed);
  assert_int_equal(remover.finished_seen, 1);
  assert_true(loom_cancellation_is_cancelled(c));
  loom_cancellation_release(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(callbacks_run_once_and_deregistered_ones_never),
      cmocka_unit_test(bad_arguments_are_refused),
      cmocka_unit_test(deregister_waits_for_running_callbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
