// Small vectors: inline storage, spilling, moves and allocation failures.

#include "base/small_vector.h"
#include "test_support.h"

LOOM_DEFINE_SMALL_VECTOR(int_vector, int64_t, 4)
// Pointer elements: const_data gives T const* (the pointers are const).
LOOM_DEFINE_SMALL_VECTOR(pointer_vector, int64_t*, 2)

static void starts_empty_and_inline(void** state) {
  (void)state;
  int_vector_t v;
  int_vector_initialize(&v);
  assert_int_equal(int_vector_size(&v), 0);
  assert_true(int_vector_is_inline(&v));
  int_vector_deinitialize(&v, loom_allocator_system());
}

static void stays_inline_up_to_capacity(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  int_vector_t v;
  int_vector_initialize(&v);
  for (int64_t i = 0; i < 4; ++i)
    LOOM_ASSERT_OK(int_vector_push(&v, allocator, i));
  assert_true(int_vector_is_inline(&v));
  assert_int_equal(loom_fault_allocator_allocation_count(fault), 0);
  int_vector_deinitialize(&v, allocator);
  loom_fault_allocator_destroy(fault);
}

static void spills_to_heap_and_keeps_order(void** state) {
  (void)state;
  int_vector_t v;
  int_vector_initialize(&v);
  for (int64_t i = 0; i < 1000; ++i) {
    LOOM_ASSERT_OK(int_vector_push(&v, loom_allocator_system(), i * 3));
  }
  assert_false(int_vector_is_inline(&v));
  assert_int_equal(int_vector_size(&v), 1000);
  for (int64_t i = 0; i < 1000; ++i) {
    assert_int_equal(int_vector_data(&v)[i], i * 3);
  }
  int_vector_deinitialize(&v, loom_allocator_system());
  assert_int_equal(int_vector_size(&v), 0);
}

static void struct_copy_moves_an_inline_vector(void** state) {
  (void)state;
  int_vector_t a;
  int_vector_initialize(&a);
  LOOM_ASSERT_OK(int_vector_push(&a, loom_allocator_system(), 7));
  LOOM_ASSERT_OK(int_vector_push(&a, loom_allocator_system(), 8));
  int_vector_t b = a;
  memset(&a, 0xff, sizeof(a));  // the old copy is dead
  assert_int_equal(int_vector_size(&b), 2);
  assert_int_equal(int_vector_const_data(&b)[0], 7);
  assert_int_equal(int_vector_const_data(&b)[1], 8);
  int_vector_deinitialize(&b, loom_allocator_system());
}

static void resize_zero_fills_new_elements(void** state) {
  (void)state;
  int_vector_t v;
  int_vector_initialize(&v);
  LOOM_ASSERT_OK(int_vector_push(&v, loom_allocator_system(), 5));
  LOOM_ASSERT_OK(int_vector_resize(&v, loom_allocator_system(), 10));
  assert_int_equal(int_vector_size(&v), 10);
  assert_int_equal(int_vector_data(&v)[0], 5);
  for (int i = 1; i < 10; ++i) assert_int_equal(int_vector_data(&v)[i], 0);
  LOOM_ASSERT_OK(int_vector_resize(&v, loom_allocator_system(), 1));
  assert_int_equal(int_vector_size(&v), 1);
  int_vector_clear(&v);
  assert_int_equal(int_vector_size(&v), 0);
  int_vector_deinitialize(&v, loom_allocator_system());
}

static void failed_growth_leaves_vector_unchanged(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  int_vector_t v;
  int_vector_initialize(&v);
  for (int64_t i = 0; i < 4; ++i)
    LOOM_ASSERT_OK(int_vector_push(&v, allocator, i));
  loom_fault_allocator_fail_nth(fault, 1);
  LOOM_ASSERT_STATUS(int_vector_push(&v, allocator, 99),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_int_equal(int_vector_size(&v), 4);
  assert_true(int_vector_is_inline(&v));
  for (int64_t i = 0; i < 4; ++i) assert_int_equal(int_vector_data(&v)[i], i);
  loom_fault_allocator_fail_nth(fault, 1);
  LOOM_ASSERT_STATUS(int_vector_resize_uninitialized(&v, allocator, 100),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_int_equal(int_vector_size(&v), 4);
  assert_true(int_vector_is_inline(&v));
  int_vector_deinitialize(&v, allocator);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

// resize_uninitialized: the size changes and kept elements stay, without
// writing the new ones; growth past the inline capacity spills.
static void resize_uninitialized_keeps_existing_elements(void** state) {
  (void)state;
  int_vector_t v;
  int_vector_initialize(&v);
  LOOM_ASSERT_OK(int_vector_push(&v, loom_allocator_system(), 5));
  LOOM_ASSERT_OK(
      int_vector_resize_uninitialized(&v, loom_allocator_system(), 3));
  assert_int_equal(int_vector_size(&v), 3);
  assert_true(int_vector_is_inline(&v));
  assert_int_equal(int_vector_data(&v)[0], 5);
  LOOM_ASSERT_OK(
      int_vector_resize_uninitialized(&v, loom_allocator_system(), 9));
  assert_int_equal(int_vector_size(&v), 9);
  assert_false(int_vector_is_inline(&v));
  assert_int_equal(int_vector_data(&v)[0], 5);
  int_vector_deinitialize(&v, loom_allocator_system());
}

static void holds_pointer_elements(void** state) {
  (void)state;
  int64_t values[3] = {1, 2, 3};
  pointer_vector_t v;
  pointer_vector_initialize(&v);
  for (int i = 0; i < 3; ++i) {
    LOOM_ASSERT_OK(
        pointer_vector_push(&v, loom_allocator_system(), &values[i]));
  }
  int64_t* const* items = pointer_vector_const_data(&v);
  for (int i = 0; i < 3; ++i) assert_ptr_equal(items[i], &values[i]);
  pointer_vector_deinitialize(&v, loom_allocator_system());
}

static loom_status_t push_many(loom_allocator_t allocator, void* context) {
  (void)context;
  int_vector_t v;
  int_vector_initialize(&v);
  loom_status_t status = loom_ok_status();
  for (int64_t i = 0; i < 100 && !status; ++i) {
    status = int_vector_push(&v, allocator, i);
  }
  int_vector_deinitialize(&v, allocator);
  return status;
}

static void every_growth_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(push_many, NULL, LOOM_TEST_SWEEP_STRICT) >
              1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(starts_empty_and_inline),
      cmocka_unit_test(stays_inline_up_to_capacity),
      cmocka_unit_test(spills_to_heap_and_keeps_order),
      cmocka_unit_test(struct_copy_moves_an_inline_vector),
      cmocka_unit_test(resize_zero_fills_new_elements),
      cmocka_unit_test(failed_growth_leaves_vector_unchanged),
      cmocka_unit_test(every_growth_failure_is_reported_without_leaks),
      cmocka_unit_test(holds_pointer_elements),
      cmocka_unit_test(resize_uninitialized_keeps_existing_elements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
