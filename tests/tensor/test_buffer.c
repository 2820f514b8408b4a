// Ref-counted buffers: alignment, wrapped memory, the deallocator contract
// (also when threads race to drop the last reference) and allocation
// failures.

#include <pthread.h>
#include <stdatomic.h>

#include "loom/buffer.h"
#include "test_support.h"

typedef struct deallocation_t {
  int calls;
  void* data;
  size_t size;
  void* arg;
} deallocation_t;

// The deallocator under test: records its arguments; `arg` is the record.
static void record_deallocation(void* data, size_t size, void* arg) {
  deallocation_t* record = arg;
  record->calls++;
  record->data = data;
  record->size = size;
  record->arg = arg;
}

static bool is_aligned(const void* ptr, size_t alignment) {
  return (uintptr_t)ptr % alignment == 0;
}

//===----------------------------------------------------------------------===//
// loom_buffer_allocate
//===----------------------------------------------------------------------===//

static void allocate_aligns_to_64_bytes_by_default(void** state) {
  (void)state;
  assert_int_equal(LOOM_DEFAULT_DATA_ALIGNMENT, 64);
  for (size_t size = 1; size <= 256; size += 37) {
    loom_buffer_t* buffer = NULL;
    LOOM_ASSERT_OK(
        loom_buffer_allocate(loom_allocator_system(), size, 0, &buffer));
    assert_true(is_aligned(loom_buffer_data(buffer), 64));
    loom_buffer_release(buffer);
  }
}

static void allocate_aligns_to_128_bytes_when_asked(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), 1000, 128, &buffer));
  assert_true(is_aligned(loom_buffer_data(buffer), 128));
  loom_buffer_release(buffer);
}

static void allocate_aligns_to_16_bytes_when_asked(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), 1000, 16, &buffer));
  assert_true(is_aligned(loom_buffer_data(buffer), 16));
  loom_buffer_release(buffer);
}

static void allocate_aligns_to_a_page_when_asked(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), 10, 4096, &buffer));
  assert_true(is_aligned(loom_buffer_data(buffer), 4096));
  loom_buffer_release(buffer);
}

static void allocate_with_alignment_one_is_allowed(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 10, 1, &buffer));
  assert_int_equal(loom_buffer_size(buffer), 10);
  loom_buffer_release(buffer);
}

static void allocate_records_the_size(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), 1000, 0, &buffer));
  assert_int_equal(loom_buffer_size(buffer), 1000);
  loom_buffer_release(buffer);
}

static void allocated_bytes_are_all_writable(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), 1000, 128, &buffer));
  // AddressSanitizer checks every byte is inside the block.
  memset(loom_buffer_data(buffer), 0x5a, loom_buffer_size(buffer));
  assert_int_equal(((unsigned char*)loom_buffer_data(buffer))[999], 0x5a);
  loom_buffer_release(buffer);
}

static void allocate_zero_bytes_gives_an_empty_buffer(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 0, 0, &buffer));
  assert_non_null(buffer);
  assert_int_equal(loom_buffer_size(buffer), 0);
  assert_true(is_aligned(loom_buffer_data(buffer), 64));
  loom_buffer_release(buffer);
}

static void allocated_buffer_owns_its_memory(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 8, 0, &buffer));
  assert_true(loom_buffer_owns_memory(buffer));
  loom_buffer_release(buffer);
}

static void allocate_rejects_a_non_power_of_two_alignment(void** state) {
  (void)state;
  loom_buffer_t* buffer = (loom_buffer_t*)&buffer;
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(loom_allocator_system(), 8, 24, &buffer),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_buffer_allocate: alignment 24 is not a power of two");
  assert_null(buffer);
}

static void allocate_rejects_an_allocator_without_functions(void** state) {
  (void)state;
  loom_allocator_t broken = loom_allocator_system();
  broken.deallocate = NULL;
  loom_buffer_t* buffer = (loom_buffer_t*)&buffer;
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(broken, 8, 0, &buffer), LOOM_STATUS_INVALID_ARGUMENT,
      "loom_buffer_allocate: the allocator has no allocate or deallocate "
      "function");
  assert_null(buffer);
}

static void allocate_rejects_a_null_out_buffer(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_buffer_allocate(loom_allocator_system(), 8, 0, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_buffer_allocate: out_buffer is NULL");
}

static void allocate_of_an_impossible_size_is_resource_exhausted(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  char expected[128];
  snprintf(expected, sizeof(expected),
           "loom_buffer_allocate: %zu bytes is too large", SIZE_MAX - 8);
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(loom_allocator_system(), SIZE_MAX - 8, 0, &buffer),
      LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_null(buffer);
}

static void allocate_beyond_half_the_address_space_is_resource_exhausted(
    void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(loom_allocator_system(), SIZE_MAX / 2, 0, &buffer),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "bytes requested");
  assert_null(buffer);
}

static void allocate_reports_allocator_failure(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_fault_allocator_fail_nth(fault, 1);
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_STATUS(loom_buffer_allocate(loom_fault_allocator_allocator(fault),
                                          100, 0, &buffer),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_null(buffer);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void allocate_uses_the_given_allocator(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_fault_allocator_allocator(fault),
                                      100, 0, &buffer));
  assert_int_equal(loom_fault_allocator_live_count(fault), 1);
  loom_buffer_release(buffer);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

//===----------------------------------------------------------------------===//
// Reference counting
//===----------------------------------------------------------------------===//

static void new_buffer_is_unique(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 8, 0, &buffer));
  assert_true(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
}

static void retained_buffer_is_not_unique(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 8, 0, &buffer));
  loom_buffer_retain(buffer);
  assert_false(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
  loom_buffer_release(buffer);
}

static void buffer_is_unique_again_after_the_extra_release(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 8, 0, &buffer));
  loom_buffer_retain(buffer);
  loom_buffer_retain(buffer);
  loom_buffer_release(buffer);
  assert_false(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
  assert_true(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
}

static void retain_and_release_of_null_do_nothing(void** state) {
  (void)state;
  loom_buffer_retain(NULL);
  loom_buffer_release(NULL);
}

//===----------------------------------------------------------------------===//
// loom_buffer_wrap
//===----------------------------------------------------------------------===//

static void wrap_shares_the_callers_pointer_and_size(void** state) {
  (void)state;
  static char data[32];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  NULL, NULL, &buffer));
  assert_ptr_equal(loom_buffer_data(buffer), data);
  assert_int_equal(loom_buffer_size(buffer), sizeof(data));
  loom_buffer_release(buffer);
}

static void wrapped_buffer_does_not_own_its_memory(void** state) {
  (void)state;
  static char data[32];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  NULL, NULL, &buffer));
  assert_false(loom_buffer_owns_memory(buffer));
  loom_buffer_release(buffer);
}

static void wrapped_buffer_is_unique(void** state) {
  (void)state;
  static char data[32];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  NULL, NULL, &buffer));
  assert_true(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
}

static void wrap_does_not_call_the_deallocator_before_the_last_release(
    void** state) {
  (void)state;
  static char data[32];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  record_deallocation, &record, &buffer));
  assert_int_equal(record.calls, 0);
  loom_buffer_retain(buffer);
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 0);
  loom_buffer_release(buffer);
}

static void last_release_calls_the_deallocator_once_with_its_arguments(
    void** state) {
  (void)state;
  static char data[32];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  record_deallocation, &record, &buffer));
  loom_buffer_retain(buffer);
  loom_buffer_release(buffer);
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.data, data);
  assert_int_equal(record.size, sizeof(data));
  assert_ptr_equal(record.arg, &record);
}

static void wrap_without_a_deallocator_leaves_the_memory_alone(void** state) {
  (void)state;
  char data[4] = {1, 2, 3, 4};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  NULL, NULL, &buffer));
  loom_buffer_release(buffer);
  assert_int_equal(data[3], 4);  // still ours (and on the stack: not freed)
}

static void wrap_of_null_data_and_zero_size_is_allowed(void** state) {
  (void)state;
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), NULL, 0,
                                  record_deallocation, &record, &buffer));
  assert_null(loom_buffer_data(buffer));
  assert_int_equal(loom_buffer_size(buffer), 0);
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 1);
}

static void wrap_failure_calls_the_deallocator_at_once(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  static char data[8];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_fault_allocator_fail_nth(fault, 1);
  loom_buffer_t* buffer = (loom_buffer_t*)&buffer;
  LOOM_ASSERT_STATUS(
      loom_buffer_wrap(loom_fault_allocator_allocator(fault), data,
                       sizeof(data), record_deallocation, &record, &buffer),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_null(buffer);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.data, data);
  assert_int_equal(record.size, sizeof(data));
  assert_ptr_equal(record.arg, &record);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void wrap_of_null_data_with_a_size_is_rejected_and_deallocates(
    void** state) {
  (void)state;
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = (loom_buffer_t*)&buffer;
  LOOM_ASSERT_STATUS(loom_buffer_wrap(loom_allocator_system(), NULL, 16,
                                      record_deallocation, &record, &buffer),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_buffer_wrap: data is NULL but size is 16");
  assert_null(buffer);
  assert_int_equal(record.calls, 1);
  assert_null(record.data);
  assert_int_equal(record.size, 16);
}

static void wrap_with_a_null_out_buffer_is_rejected_and_deallocates(
    void** state) {
  (void)state;
  static char data[8];
  deallocation_t record = {0, NULL, 0, NULL};
  LOOM_ASSERT_STATUS(
      loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                       record_deallocation, &record, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_buffer_wrap: out_buffer is NULL");
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.data, data);
}

static void wrap_frees_only_its_header_through_the_allocator(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  static char data[8];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_fault_allocator_allocator(fault), data,
                                  sizeof(data), record_deallocation, &record,
                                  &buffer));
  assert_int_equal(loom_fault_allocator_live_count(fault), 1);
  loom_buffer_release(buffer);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  assert_int_equal(record.calls, 1);
  loom_fault_allocator_destroy(fault);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

static loom_status_t allocate_and_release(loom_allocator_t allocator,
                                          void* context) {
  (void)context;
  loom_buffer_t* buffer = NULL;
  LOOM_RETURN_IF_ERROR(loom_buffer_allocate(allocator, 256, 128, &buffer));
  memset(loom_buffer_data(buffer), 0, loom_buffer_size(buffer));
  loom_buffer_release(buffer);
  return loom_ok_status();
}

static void every_allocate_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_int_equal(
      loom_test_fault_sweep(allocate_and_release, NULL, LOOM_TEST_SWEEP_STRICT),
      1);
}

typedef struct wrap_sweep_t {
  int deallocations;
} wrap_sweep_t;

static void count_deallocation(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  ((wrap_sweep_t*)arg)->deallocations++;
}

static loom_status_t wrap_and_release(loom_allocator_t allocator,
                                      void* context) {
  wrap_sweep_t* sweep = context;
  static char data[8];
  int before = sweep->deallocations;
  loom_buffer_t* buffer = NULL;
  loom_status_t status = loom_buffer_wrap(allocator, data, sizeof(data),
                                          count_deallocation, sweep, &buffer);
  if (!status) {
    loom_buffer_retain(buffer);
    loom_buffer_release(buffer);
    loom_buffer_release(buffer);
  }
  // Exactly one deallocation per attempt, success or failure.
  int calls = sweep->deallocations - before;
  if (calls != 1) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL, "deallocator called %d times",
                            calls);
  }
  return status;
}

static void every_wrap_failure_deallocates_once_without_leaks(void** state) {
  (void)state;
  wrap_sweep_t sweep = {0};
  assert_int_equal(
      loom_test_fault_sweep(wrap_and_release, &sweep, LOOM_TEST_SWEEP_STRICT),
      1);
  // The counting run and the failing run.
  assert_int_equal(sweep.deallocations, 2);
}

//===----------------------------------------------------------------------===//
// Concurrent release
//===----------------------------------------------------------------------===//

enum { kDroppers = 4, kRacedBuffers = 2000 };

typedef struct drop_race_t {
  loom_buffer_t* buffers[kRacedBuffers];
  atomic_int deallocations[kRacedBuffers];
  pthread_barrier_t start;
} drop_race_t;

static void count_raced_deallocation(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  atomic_fetch_add((atomic_int*)arg, 1);
}

// Every dropper holds one reference to every buffer and releases them in
// the same order, so the threads race for each last release.
static void* drop_every_buffer(void* arg) {
  drop_race_t* race = arg;
  pthread_barrier_wait(&race->start);
  for (int i = 0; i < kRacedBuffers; ++i) loom_buffer_release(race->buffers[i]);
  return NULL;
}

static void run_drop_race(drop_race_t* race) {
  for (int i = 0; i < kRacedBuffers; ++i) {
    for (int d = 1; d < kDroppers; ++d) loom_buffer_retain(race->buffers[i]);
  }
  pthread_barrier_init(&race->start, NULL, kDroppers);
  pthread_t threads[kDroppers];
  for (int d = 0; d < kDroppers; ++d) {
    assert_int_equal(pthread_create(&threads[d], NULL, drop_every_buffer, race),
                     0);
  }
  for (int d = 0; d < kDroppers; ++d) pthread_join(threads[d], NULL);
  pthread_barrier_destroy(&race->start);
}

static void racing_last_releases_call_each_deallocator_once(void** state) {
  (void)state;
  static drop_race_t race;
  static char data[kRacedBuffers];
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  for (int i = 0; i < kRacedBuffers; ++i) {
    atomic_init(&race.deallocations[i], 0);
    LOOM_ASSERT_OK(loom_buffer_wrap(loom_fault_allocator_allocator(fault),
                                    &data[i], 1, count_raced_deallocation,
                                    &race.deallocations[i], &race.buffers[i]));
  }
  run_drop_race(&race);
  for (int i = 0; i < kRacedBuffers; ++i) {
    if (atomic_load(&race.deallocations[i]) != 1) {
      fail_msg("buffer %d: deallocator called %d times", i,
               atomic_load(&race.deallocations[i]));
    }
  }
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void racing_last_releases_free_each_allocated_buffer_once(void** state) {
  (void)state;
  static drop_race_t race;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  for (int i = 0; i < kRacedBuffers; ++i) {
    LOOM_ASSERT_OK(loom_buffer_allocate(loom_fault_allocator_allocator(fault),
                                        16, 0, &race.buffers[i]));
  }
  run_drop_race(&race);
  // A double free would drive the count below zero (and ASan would stop).
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocate_aligns_to_64_bytes_by_default),
      cmocka_unit_test(allocate_rejects_an_allocator_without_functions),
      cmocka_unit_test(allocate_aligns_to_128_bytes_when_asked),
      cmocka_unit_test(allocate_aligns_to_16_bytes_when_asked),
      cmocka_unit_test(allocate_aligns_to_a_page_when_asked),
      cmocka_unit_test(allocate_with_alignment_one_is_allowed),
      cmocka_unit_test(allocate_records_the_size),
      cmocka_unit_test(allocated_bytes_are_all_writable),
      cmocka_unit_test(allocate_zero_bytes_gives_an_empty_buffer),
      cmocka_unit_test(allocated_buffer_owns_its_memory),
      cmocka_unit_test(allocate_rejects_a_non_power_of_two_alignment),
      cmocka_unit_test(allocate_rejects_a_null_out_buffer),
      cmocka_unit_test(allocate_of_an_impossible_size_is_resource_exhausted),
      cmocka_unit_test(
          allocate_beyond_half_the_address_space_is_resource_exhausted),
      cmocka_unit_test(allocate_reports_allocator_failure),
      cmocka_unit_test(allocate_uses_the_given_allocator),
      cmocka_unit_test(new_buffer_is_unique),
      cmocka_unit_test(retained_buffer_is_not_unique),
      cmocka_unit_test(buffer_is_unique_again_after_the_extra_release),
      cmocka_unit_test(retain_and_release_of_null_do_nothing),
      cmocka_unit_test(wrap_shares_the_callers_pointer_and_size),
      cmocka_unit_test(wrapped_buffer_does_not_own_its_memory),
      cmocka_unit_test(wrapped_buffer_is_unique),
      cmocka_unit_test(
          wrap_does_not_call_the_deallocator_before_the_last_release),
      cmocka_unit_test(
          last_release_calls_the_deallocator_once_with_its_arguments),
      cmocka_unit_test(wrap_without_a_deallocator_leaves_the_memory_alone),
      cmocka_unit_test(wrap_of_null_data_and_zero_size_is_allowed),
      cmocka_unit_test(wrap_failure_calls_the_deallocator_at_once),
      cmocka_unit_test(
          wrap_of_null_data_with_a_size_is_rejected_and_deallocates),
      cmocka_unit_test(wrap_with_a_null_out_buffer_is_rejected_and_deallocates),
      cmocka_unit_test(wrap_frees_only_its_header_through_the_allocator),
      cmocka_unit_test(every_allocate_failure_is_reported_without_leaks),
      cmocka_unit_test(every_wrap_failure_deallocates_once_without_leaks),
      cmocka_unit_test(racing_last_releases_call_each_deallocator_once),
      cmocka_unit_test(racing_last_releases_free_each_allocated_buffer_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
