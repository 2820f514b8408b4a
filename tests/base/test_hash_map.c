// The open-addressing hash map, checked against a direct-indexed reference
// under random inserts, overwrites and removals.

#include "base/hash_map.h"
#include "test_support.h"

static void empty_map_finds_nothing(void** state) {
  (void)state;
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, loom_allocator_system());
  assert_false(loom__hash_map_find(&map, 42, NULL));
  assert_false(loom__hash_map_remove(&map, 42));
  size_t cursor = 0;
  assert_false(loom__hash_map_next(&map, &cursor, NULL, NULL));
  loom__hash_map_deinitialize(&map);
}

static void insert_find_overwrite_remove(void** state) {
  (void)state;
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, loom_allocator_system());
  LOOM_ASSERT_OK(loom__hash_map_insert(&map, 0, 100));
  LOOM_ASSERT_OK(loom__hash_map_insert(&map, UINT64_MAX, 200));
  uint64_t value = 0;
  assert_true(loom__hash_map_find(&map, 0, &value));
  assert_int_equal(value, 100);
  assert_true(loom__hash_map_find(&map, UINT64_MAX, &value));
  assert_int_equal(value, 200);
  LOOM_ASSERT_OK(loom__hash_map_insert(&map, 0, 101));
  assert_int_equal(loom__hash_map_size(&map), 2);
  assert_true(loom__hash_map_find(&map, 0, &value));
  assert_int_equal(value, 101);
  assert_true(loom__hash_map_remove(&map, 0));
  assert_false(loom__hash_map_find(&map, 0, NULL));
  assert_int_equal(loom__hash_map_size(&map), 1);
  loom__hash_map_deinitialize(&map);
}

// xorshift64: a deterministic pseudo-random sequence.
static uint64_t next_random(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void random_operations_match_reference(void** state) {
  (void)state;
  enum { kKeys = 512, kOperations = 200000 };
  static uint64_t reference[kKeys];
  static bool present[kKeys];
  memset(present, 0, sizeof(present));
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, loom_allocator_system());
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  size_t expected_size = 0;
  for (int i = 0; i < kOperations; ++i) {
    uint64_t r = next_random(&seed);
    size_t key = (size_t)(r % kKeys);
    // Spread keys so they collide in the low bits, like pointers do.
    uint64_t map_key = (uint64_t)key << 6;
    if ((r >> 32) % 3 == 0) {
      bool removed = loom__hash_map_remove(&map, map_key);
      assert_int_equal(removed, present[key]);
      if (present[key]) expected_size--;
      present[key] = false;
    } else {
      LOOM_ASSERT_OK(loom__hash_map_insert(&map, map_key, r));
      if (!present[key]) expected_size++;
      present[key] = true;
      reference[key] = r;
    }
    assert_int_equal(loom__hash_map_size(&map), expected_size);
  }
  for (size_t key = 0; key < kKeys; ++key) {
    uint64_t value = 0;
    assert_int_equal(loom__hash_map_find(&map, (uint64_t)key << 6, &value),
                     present[key]);
    if (present[key]) assert_int_equal(value, reference[key]);
  }
  size_t cursor = 0, visited = 0;
  uint64_t key = 0, value = 0;
  while (loom__hash_map_next(&map, &cursor, &key, &value)) {
    assert_true(present[key >> 6]);
    assert_int_equal(value, reference[key >> 6]);
    visited++;
  }
  assert_int_equal(visited, expected_size);
  loom__hash_map_deinitialize(&map);
}

static void reserve_avoids_further_growth(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, loom_fault_allocator_allocator(fault));
  LOOM_ASSERT_OK(loom__hash_map_reserve(&map, 1000));
  loom_fault_allocator_fail_nth(fault, 0);
  for (uint64_t i = 0; i < 1000; ++i) {
    LOOM_ASSERT_OK(loom__hash_map_insert(&map, i, i));
  }
  assert_int_equal(loom_fault_allocator_allocation_count(fault), 0);
  loom__hash_map_deinitialize(&map);
  loom_fault_allocator_destroy(fault);
}

static void failed_insert_leaves_map_unchanged(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, loom_fault_allocator_allocator(fault));
  uint64_t inserted = 0;
  loom_fault_allocator_fail_nth(fault, 0);
  while (loom_fault_allocator_allocation_count(fault) < 2) {
    LOOM_ASSERT_OK(loom__hash_map_insert(&map, inserted, inserted));
    inserted++;
  }
  // The next growth fails.
  loom_fault_allocator_fail_nth(fault, 1);
  loom_status_t status = loom_ok_status();
  uint64_t attempted = inserted;
  while (!status) {
    status = loom__hash_map_insert(&map, attempted, attempted);
    if (!status) attempted++;
  }
  LOOM_ASSERT_STATUS(status, LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_false(loom__hash_map_find(&map, attempted, NULL));
  assert_int_equal(loom__hash_map_size(&map), attempted);
  for (uint64_t i = 0; i < attempted; ++i) {
    uint64_t value = 0;
    assert_true(loom__hash_map_find(&map, i, &value));
    assert_int_equal(value, i);
  }
  loom__hash_map_deinitialize(&map);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static loom_status_t fill_map(loom_allocator_t allocator, void* context) {
  (void)context;
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, allocator);
  loom_status_t status = loom_ok_status();
  for (uint64_t i = 0; i < 300 && !status; ++i) {
    status = loom__hash_map_insert(&map, i * 7919, i);
    if (!status && i % 3 == 0) loom__hash_map_remove(&map, i * 7919);
  }
  loom__hash_map_deinitialize(&map);
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(fill_map, NULL, LOOM_TEST_SWEEP_STRICT) >
              1);
}

static void hashes_differ_for_nearby_inputs(void** state) {
  (void)state;
  assert_int_not_equal(loom__hash_u64(1), loom__hash_u64(2));
  assert_int_not_equal(loom__hash_bytes("ab", 2), loom__hash_bytes("ba", 2));
  assert_int_equal(loom__hash_bytes("MatMul", 6),
                   loom__hash_bytes("MatMul", 6));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(empty_map_finds_nothing),
      cmocka_unit_test(insert_find_overwrite_remove),
      cmocka_unit_test(random_operations_match_reference),
      cmocka_unit_test(reserve_avoids_further_growth),
      cmocka_unit_test(failed_insert_leaves_map_unchanged),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
      cmocka_unit_test(hashes_differ_for_nearby_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
