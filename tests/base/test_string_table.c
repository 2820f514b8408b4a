// String interning: canonical pointers, lookups, growth, threads, failures.

#include <pthread.h>

#include "base/string_table.h"
#include "test_support.h"

static void interning_twice_returns_the_same_pointer(void** state) {
  (void)state;
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  char name[] = "MatMul";
  const char* a = NULL;
  const char* b = NULL;
  LOOM_ASSERT_OK(loom__string_table_intern(table, name, strlen(name), &a));
  assert_ptr_not_equal(a, name);
  name[0] = 'X';  // the table owns its copy
  LOOM_ASSERT_OK(loom__string_table_intern(table, "MatMul", 6, &b));
  assert_ptr_equal(a, b);
  assert_string_equal(a, "MatMul");
  assert_int_equal(loom__string_table_size(table), 1);
  loom__string_table_destroy(table);
}

static void prefixes_and_embedded_nuls_are_distinct(void** state) {
  (void)state;
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  const char *full = NULL, *prefix = NULL, *nul = NULL, *empty = NULL;
  LOOM_ASSERT_OK(loom__string_table_intern(table, "AddV2", 5, &full));
  LOOM_ASSERT_OK(loom__string_table_intern(table, "AddV2", 3, &prefix));
  LOOM_ASSERT_OK(loom__string_table_intern(table, "Ad\0d", 4, &nul));
  LOOM_ASSERT_OK(loom__string_table_intern(table, NULL, 0, &empty));
  assert_string_equal(prefix, "Add");
  assert_ptr_not_equal(full, prefix);
  assert_ptr_not_equal(nul, prefix);
  assert_string_equal(empty, "");
  assert_int_equal(loom__string_table_size(table), 4);
  loom__string_table_destroy(table);
}

static void find_never_adds(void** state) {
  (void)state;
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  assert_null(loom__string_table_find(table, "Relu", 4));
  const char* relu = NULL;
  LOOM_ASSERT_OK(loom__string_table_intern(table, "Relu", 4, &relu));
  assert_ptr_equal(loom__string_table_find(table, "Relu", 4), relu);
  assert_null(loom__string_table_find(table, "Relu6", 5));
  assert_int_equal(loom__string_table_size(table), 1);
  loom__string_table_destroy(table);
}

static void many_strings_survive_growth(void** state) {
  (void)state;
  enum { kCount = 20000 };
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  static const char* first[kCount];
  char text[32];
  for (int i = 0; i < kCount; ++i) {
    int length = snprintf(text, sizeof(text), "op_%d", i);
    LOOM_ASSERT_OK(
        loom__string_table_intern(table, text, (size_t)length, &first[i]));
  }
  for (int i = 0; i < kCount; ++i) {
    int length = snprintf(text, sizeof(text), "op_%d", i);
    assert_ptr_equal(loom__string_table_find(table, text, (size_t)length),
                     first[i]);
    assert_string_equal(first[i], text);
  }
  // A string longer than an arena block.
  static char big[10000];
  memset(big, 'q', sizeof(big));
  const char* interned = NULL;
  LOOM_ASSERT_OK(loom__string_table_intern(table, big, sizeof(big), &interned));
  assert_int_equal(strlen(interned), sizeof(big));
  loom__string_table_destroy(table);
}

static void null_arguments_are_rejected(void** state) {
  (void)state;
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_STATUS(loom__string_table_create(loom_allocator_system(), NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_table is NULL");
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  const char* out = NULL;
  LOOM_ASSERT_STATUS(loom__string_table_intern(NULL, "a", 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "table is NULL");
  LOOM_ASSERT_STATUS(loom__string_table_intern(table, "a", 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_interned is NULL");
  LOOM_ASSERT_STATUS(loom__string_table_intern(table, NULL, 3, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "data is NULL");
  loom__string_table_destroy(table);
}

typedef struct intern_thread_t {
  loom__string_table_t* table;
  const char** results;
  int count;
} intern_thread_t;

static void* intern_all(void* arg) {
  intern_thread_t* thread = arg;
  char text[32];
  for (int i = 0; i < thread->count; ++i) {
    int length = snprintf(text, sizeof(text), "name_%d", i);
    loom_status_t status = loom__string_table_intern(
        thread->table, text, (size_t)length, &thread->results[i]);
    if (status) {
      loom_status_free(status);
      thread->results[i] = NULL;
    }
  }
  return NULL;
}

static void concurrent_interning_agrees_on_pointers(void** state) {
  (void)state;
  enum { kThreads = 4, kCount = 3000 };
  loom__string_table_t* table = NULL;
  LOOM_ASSERT_OK(loom__string_table_create(loom_allocator_system(), &table));
  static const char* results[kThreads][kCount];
  intern_thread_t args[kThreads];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    args[t] = (intern_thread_t){table, results[t], kCount};
    assert_int_equal(pthread_create(&threads[t], NULL, intern_all, &args[t]),
                     0);
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  for (int i = 0; i < kCount; ++i) {
    assert_non_null(results[0][i]);
    for (int t = 1; t < kThreads; ++t) {
      assert_ptr_equal(results[t][i], results[0][i]);
    }
  }
  assert_int_equal(loom__string_table_size(table), kCount);
  loom__string_table_destroy(table);
}

static loom_status_t intern_some(loom_allocator_t allocator, void* context) {
  (void)context;
  loom__string_table_t* table = NULL;
  LOOM_RETURN_IF_ERROR(loom__string_table_create(allocator, &table));
  loom_status_t status = loom_ok_status();
  char text[32];
  for (int i = 0; i < 200 && !status; ++i) {
    int length = snprintf(text, sizeof(text), "attr_%d", i);
    const char* out = NULL;
    status = loom__string_table_intern(table, text, (size_t)length, &out);
  }
  loom__string_table_destroy(table);
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(intern_some, NULL, LOOM_TEST_SWEEP_STRICT) >
              2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(interning_twice_returns_the_same_pointer),
      cmocka_unit_test(prefixes_and_embedded_nuls_are_distinct),
      cmocka_unit_test(find_never_adds),
      cmocka_unit_test(many_strings_survive_growth),
      cmocka_unit_test(null_arguments_are_rejected),
      cmocka_unit_test(concurrent_interning_agrees_on_pointers),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
