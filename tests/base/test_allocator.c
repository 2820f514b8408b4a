// The system and default allocators, the checked helpers, and the
// fault-injecting allocator.

#include <pthread.h>

#include "test_support.h"

static void system_allocator_honours_every_alignment(void** state) {
  (void)state;
  loom_allocator_t allocator = loom_allocator_system();
  for (size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    void* ptr = NULL;
    LOOM_ASSERT_OK(
        loom_allocator_malloc_aligned(allocator, 100, alignment, &ptr));
    assert_int_equal((uintptr_t)ptr % alignment, 0);
    memset(ptr, 0xab, 100);
    loom_allocator_free(allocator, ptr);
  }
}

static void malloc_aligns_for_any_scalar(void** state) {
  (void)state;
  void* ptr = NULL;
  LOOM_ASSERT_OK(loom_allocator_malloc(loom_allocator_system(), 3, &ptr));
  assert_int_equal((uintptr_t)ptr % _Alignof(max_align_t), 0);
  loom_allocator_free(loom_allocator_system(), ptr);
}

static void zero_size_allocation_returns_a_block(void** state) {
  (void)state;
  void* ptr = NULL;
  LOOM_ASSERT_OK(loom_allocator_malloc(loom_allocator_system(), 0, &ptr));
  assert_non_null(ptr);
  loom_allocator_free(loom_allocator_system(), ptr);
}

static void calloc_zero_fills(void** state) {
  (void)state;
  unsigned char* ptr = NULL;
  LOOM_ASSERT_OK(
      loom_allocator_calloc(loom_allocator_system(), 4096, (void**)&ptr));
  for (size_t i = 0; i < 4096; ++i) assert_int_equal(ptr[i], 0);
  loom_allocator_free(loom_allocator_system(), ptr);
}

static void non_power_of_two_alignment_is_rejected(void** state) {
  (void)state;
  void* ptr = (void*)1;
  LOOM_ASSERT_STATUS(
      loom_allocator_malloc_aligned(loom_allocator_system(), 8, 48, &ptr),
      LOOM_STATUS_INVALID_ARGUMENT, "alignment 48 is not a power of two");
  assert_null(ptr);
  LOOM_ASSERT_STATUS(
      loom_allocator_malloc_aligned(loom_allocator_system(), 8, 0, &ptr),
      LOOM_STATUS_INVALID_ARGUMENT, "alignment 0 is not a power of two");
}

static void null_out_pointer_is_rejected(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_allocator_malloc(loom_allocator_system(), 8, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_ptr is NULL");
}

static void allocator_without_functions_is_rejected(void** state) {
  (void)state;
  loom_allocator_t empty = {NULL, NULL, NULL};
  void* ptr = NULL;
  LOOM_ASSERT_STATUS(loom_allocator_malloc(empty, 8, &ptr),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "allocator has no allocate/deallocate function");
}

static void huge_allocation_is_resource_exhausted(void** state) {
  (void)state;
  void* ptr = NULL;
  LOOM_ASSERT_STATUS(
      loom_allocator_malloc(loom_allocator_system(), SIZE_MAX - 8, &ptr),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "bytes requested");
  assert_null(ptr);
}

static void free_of_null_is_a_no_op(void** state) {
  (void)state;
  loom_allocator_free(loom_allocator_system(), NULL);
}

static void set_default_swaps_and_returns_previous(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t previous =
      loom_allocator_set_default(loom_fault_allocator_allocator(fault));
  assert_ptr_equal(loom_allocator_default().self, fault);
  void* ptr = NULL;
  LOOM_ASSERT_OK(loom_allocator_malloc(loom_allocator_default(), 16, &ptr));
  assert_int_equal(loom_fault_allocator_live_count(fault), 1);
  loom_allocator_free(loom_allocator_default(), ptr);
  loom_allocator_t restored = loom_allocator_set_default(previous);
  assert_ptr_equal(restored.self, fault);
  assert_ptr_equal(loom_allocator_default().allocate, previous.allocate);
  loom_fault_allocator_destroy(fault);
}

static void fault_allocator_fails_exactly_the_nth_allocation(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  loom_fault_allocator_fail_nth(fault, 3);
  void* blocks[5] = {0};
  for (int i = 0; i < 5; ++i) {
    loom_status_t status = loom_allocator_malloc(allocator, 32, &blocks[i]);
    if (i == 2) {
      LOOM_ASSERT_STATUS(status, LOOM_STATUS_RESOURCE_EXHAUSTED,
                         "out of memory allocating 32 bytes");
      assert_null(blocks[i]);
    } else {
      LOOM_ASSERT_OK(status);
    }
  }
  assert_int_equal(loom_fault_allocator_allocation_count(fault), 5);
  assert_int_equal(loom_fault_allocator_injected_failures(fault), 1);
  assert_int_equal(loom_fault_allocator_live_count(fault), 4);
  for (int i = 0; i < 5; ++i) loom_allocator_free(allocator, blocks[i]);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void fault_allocator_with_zero_never_fails(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_fault_allocator_fail_nth(fault, 0);
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  for (int i = 0; i < 100; ++i) {
    void* ptr = NULL;
    LOOM_ASSERT_OK(loom_allocator_malloc(allocator, 8, &ptr));
    loom_allocator_free(allocator, ptr);
  }
  assert_int_equal(loom_fault_allocator_injected_failures(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void fault_allocator_create_rejects_null_out(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_fault_allocator_create(loom_allocator_system(), NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out is NULL");
}

typedef struct counting_thread_t {
  loom_allocator_t allocator;
  int iterations;
} counting_thread_t;

static void* allocate_and_free_many(void* arg) {
  counting_thread_t* thread = arg;
  for (int i = 0; i < thread->iterations; ++i) {
    void* ptr = NULL;
    loom_status_t status = loom_allocator_malloc(thread->allocator, 24, &ptr);
    if (status) {
      loom_status_free(status);
      continue;
    }
    loom_allocator_free(thread->allocator, ptr);
  }
  return NULL;
}

static void fault_allocator_counts_exactly_across_threads(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_fault_allocator_fail_nth(fault, 1000);
  enum { kThreads = 4, kIterations = 5000 };
  counting_thread_t args = {loom_fault_allocator_allocator(fault), kIterations};
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    assert_int_equal(
        pthread_create(&threads[i], NULL, allocate_and_free_many, &args), 0);
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  assert_int_equal(loom_fault_allocator_allocation_count(fault),
                   kThreads * kIterations);
  assert_int_equal(loom_fault_allocator_injected_failures(fault), 1);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(system_allocator_honours_every_alignment),
      cmocka_unit_test(malloc_aligns_for_any_scalar),
      cmocka_unit_test(zero_size_allocation_returns_a_block),
      cmocka_unit_test(calloc_zero_fills),
      cmocka_unit_test(non_power_of_two_alignment_is_rejected),
      cmocka_unit_test(null_out_pointer_is_rejected),
      cmocka_unit_test(allocator_without_functions_is_rejected),
      cmocka_unit_test(huge_allocation_is_resource_exhausted),
      cmocka_unit_test(free_of_null_is_a_no_op),
      cmocka_unit_test(set_default_swaps_and_returns_previous),
      cmocka_unit_test(fault_allocator_fails_exactly_the_nth_allocation),
      cmocka_unit_test(fault_allocator_with_zero_never_fails),
      cmocka_unit_test(fault_allocator_create_rejects_null_out),
      cmocka_unit_test(fault_allocator_counts_exactly_across_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
