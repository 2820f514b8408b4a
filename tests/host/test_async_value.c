// Async values: states, payloads, errors, continuations and ownership.

#include <pthread.h>
#include <stdatomic.h>

#include "loom/async_value.h"
#include "test_support.h"

typedef struct pair_t {
  int64_t first;
  double second;
} pair_t;

static int g_destroyed = 0;
static void destroy_pair(void* payload) {
  (void)payload;
  g_destroyed++;
}

static const loom_async_value_type_t kPairType = {"pair", sizeof(pair_t),
                                                  destroy_pair};

static void new_value_is_unavailable(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create(loom_allocator_system(), &kPairType, &value));
  assert_int_equal(loom_async_value_state(value), LOOM_ASYNC_VALUE_UNAVAILABLE);
  assert_false(loom_async_value_is_set(value));
  assert_ptr_equal(loom_async_value_type(value), &kPairType);
  assert_null(loom_async_value_error(value));
  g_destroyed = 0;
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 0);  // never constructed, never destroyed
}

static void payload_is_aligned_and_published(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create(loom_allocator_system(), &kPairType, &value));
  pair_t* pair = loom_async_value_payload(value);
  assert_int_equal((uintptr_t)pair % 16, 0);
  pair->first = 42;
  pair->second = 0.5;
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  assert_true(loom_async_value_is_available(value));
  pair_t* read = loom_async_value_payload(value);
  assert_int_equal(read->first, 42);
  assert_true(read->second == 0.5);
  g_destroyed = 0;
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 1);
}

static void payload_destroyed_once_after_last_reference(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create(loom_allocator_system(), &kPairType, &value));
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  loom_async_value_retain(value);
  loom_async_value_retain(value);
  g_destroyed = 0;
  loom_async_value_release(value);
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 0);
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 1);
}

static void error_value_carries_its_status(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create(loom_allocator_system(), &kPairType, &value));
  LOOM_ASSERT_OK(loom_async_value_set_error(
      value, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "bad shape")));
  assert_true(loom_async_value_is_error(value));
  assert_true(loom_async_value_is_set(value));
  loom_status_t error = loom_async_value_error(value);
  assert_int_equal(loom_status_code(error), LOOM_STATUS_INVALID_ARGUMENT);
  assert_string_equal(loom_status_message(error), "bad shape");
  g_destroyed = 0;
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 0);
}

static void create_error_makes_a_set_value(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_async_value_create_error(
      loom_allocator_system(), &kPairType,
      loom_make_status(LOOM_STATUS_CANCELLED, "stop"), &value));
  assert_true(loom_async_value_is_error(value));
  assert_string_equal(loom_status_message(loom_async_value_error(value)),
                      "stop");
  loom_async_value_release(value);
}

static void create_error_rejects_ok_status(void** state) {
  (void)state;
  loom_async_value_t* value = (loom_async_value_t*)1;
  LOOM_ASSERT_STATUS(
      loom_async_value_create_error(loom_allocator_system(), &kPairType,
                                    loom_ok_status(), &value),
      LOOM_STATUS_INVALID_ARGUMENT, "the error status is OK");
  assert_null(value);
}

static void setting_twice_is_a_failed_precondition(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  LOOM_ASSERT_STATUS(loom_async_value_set_available(value),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "async value of type 'chain' is already set");
  // The error passed in is consumed (ASan would report it otherwise).
  LOOM_ASSERT_STATUS(loom_async_value_set_error(
                         value, loom_make_status(LOOM_STATUS_INTERNAL, "x")),
                     LOOM_STATUS_FAILED_PRECONDITION, "already set");
  assert_true(loom_async_value_is_available(value));
  loom_async_value_release(value);
}

static void set_error_rejects_ok_and_null(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  LOOM_ASSERT_STATUS(loom_async_value_set_error(value, loom_ok_status()),
                     LOOM_STATUS_INVALID_ARGUMENT, "the error status is OK");
  assert_false(loom_async_value_is_set(value));
  LOOM_ASSERT_STATUS(loom_async_value_set_error(
                         NULL, loom_make_status(LOOM_STATUS_INTERNAL, "x")),
                     LOOM_STATUS_INVALID_ARGUMENT, "value is NULL");
  LOOM_ASSERT_STATUS(loom_async_value_set_available(NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "value is NULL");
  loom_async_value_release(value);
}

static void create_rejects_bad_arguments(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_STATUS(
      loom_async_value_create(loom_allocator_system(), NULL, &value),
      LOOM_STATUS_INVALID_ARGUMENT, "type is NULL");
  LOOM_ASSERT_STATUS(
      loom_async_value_create(loom_allocator_system(), &kPairType, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "out_value is NULL");
  static const loom_async_value_type_t kHuge = {"huge", 1 << 20, NULL};
  LOOM_ASSERT_STATUS(
      loom_async_value_create(loom_allocator_system(), &kHuge, &value),
      LOOM_STATUS_INVALID_ARGUMENT, "payload of type 'huge' is 1048576 bytes");
}

static void create_rejects_an_allocator_without_functions(void** state) {
  (void)state;
  loom_allocator_t broken = {NULL, NULL, NULL};
  loom_async_value_t* value = (loom_async_value_t*)1;
  LOOM_ASSERT_STATUS(loom_async_value_create(broken, &kPairType, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the allocator has no allocate or deallocate function");
  assert_null(value);
  value = (loom_async_value_t*)1;
  // The error is the function's to free, even when it fails.
  LOOM_ASSERT_STATUS(
      loom_async_value_create_error(
          broken, &kPairType,
          loom_make_status(LOOM_STATUS_INTERNAL, "never stored"), &value),
      LOOM_STATUS_INVALID_ARGUMENT,
      "the allocator has no allocate or deallocate function");
  assert_null(value);
}

typedef struct recorder_t {
  int order[16];
  int count;
} recorder_t;

typedef struct record_arg_t {
  recorder_t* recorder;
  int id;
} record_arg_t;

static void record(void* arg) {
  record_arg_t* r = arg;
  r->recorder->order[r->recorder->count++] = r->id;
}

static void continuations_run_once_in_order_added(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  recorder_t recorder = {{0}, 0};
  record_arg_t args[4] = {
      {&recorder, 0}, {&recorder, 1}, {&recorder, 2}, {&recorder, 3}};
  loom_async_waiter_t node = {NULL, record, &args[1]};
  LOOM_ASSERT_OK(loom_async_value_and_then(value, record, &args[0]));
  loom_async_value_and_then_node(value, &node);
  LOOM_ASSERT_OK(loom_async_value_and_then(value, record, &args[2]));
  assert_int_equal(recorder.count, 0);
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  assert_int_equal(recorder.count, 3);
  for (int i = 0; i < 3; ++i) assert_int_equal(recorder.order[i], i);
  // Added after: runs at once, on this thread.
  LOOM_ASSERT_OK(loom_async_value_and_then(value, record, &args[3]));
  assert_int_equal(recorder.count, 4);
  assert_int_equal(recorder.order[3], 3);
  loom_async_value_release(value);
}

static void continuations_run_on_error_too(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  recorder_t recorder = {{0}, 0};
  record_arg_t arg = {&recorder, 7};
  LOOM_ASSERT_OK(loom_async_value_and_then(value, record, &arg));
  LOOM_ASSERT_OK(loom_async_value_set_error(
      value, loom_make_status(LOOM_STATUS_ABORTED, "no")));
  assert_int_equal(recorder.count, 1);
  loom_async_value_release(value);
}

static void release_continuation(void* arg) {
  loom_async_value_release((loom_async_value_t*)arg);
}

static void continuation_may_drop_the_last_reference(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create(loom_allocator_system(), &kPairType, &value));
  loom_async_value_retain(value);  // owned by the continuation
  LOOM_ASSERT_OK(loom_async_value_and_then(value, release_continuation, value));
  g_destroyed = 0;
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  assert_int_equal(g_destroyed, 0);
  loom_async_value_release(value);
  assert_int_equal(g_destroyed, 1);
}

static void destroying_an_unset_value_drops_continuations(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  recorder_t recorder = {{0}, 0};
  record_arg_t arg = {&recorder, 1};
  LOOM_ASSERT_OK(loom_async_value_and_then(value, record, &arg));
  loom_async_waiter_t node = {NULL, record, &arg};
  loom_async_value_and_then_node(value, &node);
  loom_async_value_release(value);  // the heap node is freed (LSan checks)
  assert_int_equal(recorder.count, 0);
}

static void and_then_rejects_null(void** state) {
  (void)state;
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(
      loom_async_value_create_chain(loom_allocator_system(), &value));
  LOOM_ASSERT_STATUS(loom_async_value_and_then(value, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "fn is NULL");
  LOOM_ASSERT_STATUS(loom_async_value_and_then(NULL, record, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "value is NULL");
  loom_async_value_release(value);
}

static void failed_and_then_never_runs_the_continuation(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_async_value_t* value = NULL;
  LOOM_ASSERT_OK(loom_async_value_create_chain(
      loom_fault_allocator_allocator(fault), &value));
  recorder_t recorder = {{0}, 0};
  record_arg_t arg = {&recorder, 1};
  loom_fault_allocator_fail_nth(fault, 1);
  LOOM_ASSERT_STATUS(loom_async_value_and_then(value, record, &arg),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  LOOM_ASSERT_OK(loom_async_value_set_available(value));
  assert_int_equal(recorder.count, 0);
  loom_async_value_release(value);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void nothing(void* arg) {
  (void)arg;
}

static loom_status_t value_lifecycle(loom_allocator_t allocator,
                                     void* context) {
  (void)context;
  loom_async_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(loom_async_value_create(allocator, &kPairType, &value));
  loom_status_t status = loom_async_value_and_then(value, nothing, NULL);
  if (!status) status = loom_async_value_and_then(value, nothing, NULL);
  if (!status) status = loom_async_value_set_available(value);
  loom_async_value_release(value);
  if (status) return status;
  LOOM_RETURN_IF_ERROR(loom_async_value_create_error(
      allocator, &kPairType, loom_make_status(LOOM_STATUS_INTERNAL, "e"),
      &value));
  loom_async_value_release(value);
  return loom_ok_status();
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_int_equal(
      loom_test_fault_sweep(value_lifecycle, NULL, LOOM_TEST_SWEEP_STRICT), 4);
}

typedef struct setter_t {
  loom_async_value_t* value;
  atomic_int winners;
} setter_t;

static void* try_set(void* arg) {
  setter_t* setter = arg;
  loom_status_t status = loom_async_value_set_available(setter->value);
  if (!status) atomic_fetch_add(&setter->winners, 1);
  loom_status_free(status);
  return NULL;
}

static void concurrent_setters_have_exactly_one_winner(void** state) {
  (void)state;
  for (int round = 0; round < 200; ++round) {
    setter_t setter;
    LOOM_ASSERT_OK(
        loom_async_value_create_chain(loom_allocator_system(), &setter.value));
    atomic_init(&setter.winners, 0);
    pthread_t threads[4];
    for (int i = 0; i < 4; ++i) {
      assert_int_equal(pthread_create(&threads[i], NULL, try_set, &setter), 0);
    }
    for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
    assert_int_equal(atomic_load(&setter.winners), 1);
    loom_async_value_release(setter.value);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_value_is_unavailable),
      cmocka_unit_test(payload_is_aligned_and_published),
      cmocka_unit_test(payload_destroyed_once_after_last_reference),
      cmocka_unit_test(error_value_carries_its_status),
      cmocka_unit_test(create_error_makes_a_set_value),
      cmocka_unit_test(create_rejects_an_allocator_without_functions),
      cmocka_unit_test(create_error_rejects_ok_status),
      cmocka_unit_test(setting_twice_is_a_failed_precondition),
      cmocka_unit_test(set_error_rejects_ok_and_null),
      cmocka_unit_test(create_rejects_bad_arguments),
      cmocka_unit_test(continuations_run_once_in_order_added),
      cmocka_unit_test(continuations_run_on_error_too),
      cmocka_unit_test(continuation_may_drop_the_last_reference),
      cmocka_unit_test(destroying_an_unset_value_drops_continuations),
      cmocka_unit_test(and_then_rejects_null),
      cmocka_unit_test(failed_and_then_never_runs_the_continuation),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
      cmocka_unit_test(concurrent_setters_have_exactly_one_winner),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
