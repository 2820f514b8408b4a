// Ref-counted buffers: alignment, wrapped memory, the deallocator contract.

#include "loom/buffer.h"
#include "test_support.h"

typedef struct deallocation_t {
  int calls;
  void* data;
  size_t size;
  void* arg;
} deallocation_t;

static void record_deallocation(void* data, size_t size, void* arg) {
  deallocation_t* record = arg;
  record->calls++;
  record->data = data;
  record->size = size;
  record->arg = arg;
}

static void allocated_buffers_are_aligned(void** state) {
  (void)state;
  const size_t kAlignments[] = {0, 16, 64, 128, 4096};
  for (size_t i = 0; i < sizeof(kAlignments) / sizeof(kAlignments[0]); ++i) {
    loom_buffer_t* buffer = NULL;
    LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 1000,
                                        kAlignments[i], &buffer));
    size_t expected =
        kAlignments[i] ? kAlignments[i] : LOOM_DEFAULT_DATA_ALIGNMENT;
    assert_int_equal((uintptr_t)loom_buffer_data(buffer) % expected, 0);
    assert_int_equal(loom_buffer_size(buffer), 1000);
    assert_true(loom_buffer_owns_memory(buffer));
    memset(loom_buffer_data(buffer), 0x5a, 1000);
    loom_buffer_release(buffer);
  }
}

static void non_power_of_two_alignment_is_rejected(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(loom_allocator_system(), 8, 24, &buffer),
      LOOM_STATUS_INVALID_ARGUMENT, "alignment 24 is not a power of two");
  assert_null(buffer);
  LOOM_ASSERT_STATUS(loom_buffer_allocate(loom_allocator_system(), 8, 0, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_buffer is NULL");
  LOOM_ASSERT_STATUS(
      loom_buffer_allocate(loom_allocator_system(), SIZE_MAX - 8, 0, &buffer),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "is too large");
}

static void wrapped_memory_is_freed_once_by_the_last_release(void** state) {
  (void)state;
  static char data[32];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  record_deallocation, &record, &buffer));
  assert_ptr_equal(loom_buffer_data(buffer), data);
  assert_false(loom_buffer_owns_memory(buffer));
  assert_true(loom_buffer_is_unique(buffer));
  loom_buffer_retain(buffer);
  assert_false(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 0);
  assert_true(loom_buffer_is_unique(buffer));
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.data, data);
  assert_int_equal(record.size, sizeof(data));
  assert_ptr_equal(record.arg, &record);
}

static void failed_wrap_still_calls_the_deallocator(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  static char data[8];
  deallocation_t record = {0, NULL, 0, NULL};
  loom_fault_allocator_fail_nth(fault, 1);
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_STATUS(
      loom_buffer_wrap(loom_fault_allocator_allocator(fault), data,
                       sizeof(data), record_deallocation, &record, &buffer),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_null(buffer);
  assert_int_equal(record.calls, 1);
  loom_fault_allocator_destroy(fault);
}

static void wrapping_null_with_a_size_is_rejected_and_deallocates(
    void** state) {
  (void)state;
  deallocation_t record = {0, NULL, 0, NULL};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_STATUS(loom_buffer_wrap(loom_allocator_system(), NULL, 16,
                                      record_deallocation, &record, &buffer),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "data is NULL but size is 16");
  assert_int_equal(record.calls, 1);
  LOOM_ASSERT_STATUS(loom_buffer_wrap(loom_allocator_system(), NULL, 0,
                                      record_deallocation, &record, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_buffer is NULL");
  assert_int_equal(record.calls, 2);
}

static void wrapping_without_deallocator_borrows(void** state) {
  (void)state;
  static char data[4];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  NULL, NULL, &buffer));
  loom_buffer_release(buffer);
}

typedef struct wrap_context_t {
  int deallocations;
} wrap_context_t;

static void count_call(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  ((wrap_context_t*)arg)->deallocations++;
}

static loom_status_t wrap_and_release(loom_allocator_t allocator,
                                      void* context) {
  wrap_context_t* wrap = context;
  static char data[8];
  int before = wrap->deallocations;
  loom_buffer_t* buffer = NULL;
  loom_status_t status = loom_buffer_wrap(allocator, data, sizeof(data),
                                          count_call, wrap, &buffer);
  if (!status) loom_buffer_release(buffer);
  // Exactly one deallocation per attempt, success or failure.
  if (wrap->deallocations != before + 1) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL, "deallocator called %d times",
                            wrap->deallocations - before);
  }
  if (status) return status;
  loom_buffer_t* owned = NULL;
  LOOM_RETURN_IF_ERROR(loom_buffer_allocate(allocator, 256, 0, &owned));
  loom_buffer_release(owned);
  return loom_ok_status();
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  wrap_context_t context = {0};
  assert_int_equal(
      loom_test_fault_sweep(wrap_and_release, &context, LOOM_TEST_SWEEP_STRICT),
      2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(allocated_buffers_are_aligned),
      cmocka_unit_test(non_power_of_two_alignment_is_rejected),
      cmocka_unit_test(wrapped_memory_is_freed_once_by_the_last_release),
      cmocka_unit_test(failed_wrap_still_calls_the_deallocator),
      cmocka_unit_test(wrapping_null_with_a_size_is_rejected_and_deallocates),
      cmocka_unit_test(wrapping_without_deallocator_borrows),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
