// TF_TString-compatible strings: the four representations, the SMALL/LARGE
// boundary, copies, views, offsets, resizing, appending, assignment, moves.

#include <stdlib.h>

#include "loom/tstring.h"
#include "string_allocation_gate.h"
#include "tensor/tstring_internal.h"
#include "test_support.h"

// Sanitizers abort on an allocation larger than they support; malloc returns
// NULL instead, which is what the out-of-memory tests rely on.
const char* __asan_default_options(void);
const char* __asan_default_options(void) {
  return "allocator_may_return_null=1";
}
const char* __tsan_default_options(void);
const char* __tsan_default_options(void) {
  return "allocator_may_return_null=1";
}

// 22 bytes: the most a SMALL string holds; 23: the fewest a LARGE one holds.
static const char k22[] = "exactly twenty-two ch!";
static const char k23[] = "twenty-three characters";
static const char kLong[] = "a string long enough to live on the heap";

_Static_assert(sizeof(k22) - 1 == LOOM_TSTRING_SMALL_CAPACITY, "k22");
_Static_assert(sizeof(k23) - 1 == LOOM_TSTRING_SMALL_CAPACITY + 1, "k23");
_Static_assert(sizeof(kLong) - 1 > LOOM_TSTRING_SMALL_CAPACITY, "kLong");

// TensorFlow's capacity for a LARGE string of `size` bytes (ctstring's
// TF_align16(size + 1) - 1): 16-byte blocks with room for the NUL.
static size_t tf_large_capacity(size_t size) {
  return ((size + 1 + 15) & ~(size_t)15) - 1;
}

#define ASSERT_TSTRING_EQ(str, text, size)              \
  do {                                                  \
    assert_int_equal(loom_tstring_size(str), (size));   \
    assert_memory_equal(loom_tstring_data(str), (text), \
                        (size) ? (size) : 1 /* NUL */); \
  } while (0)

static void init_copy(loom_tstring_t* str, const char* text) {
  loom_tstring_initialize(str);
  LOOM_ASSERT_OK(loom_tstring_copy(str, text, strlen(text)));
}

static bool points_inside(const loom_tstring_t* str, const char* ptr) {
  return ptr >= (const char*)str && ptr < (const char*)str + sizeof(*str);
}

// An OFFSET string as TensorFlow lays one out: the bytes follow the string,
// the offset is counted from the string's own address.
typedef struct offset_block_t {
  loom_tstring_t string;
  char bytes[64];
} offset_block_t;

static void make_offset(offset_block_t* block, const char* text) {
  memset(block, 0, sizeof(*block));
  size_t size = strlen(text);
  memcpy(block->bytes, text, size);
  block->string.u.offset.size = (uint32_t)(size << 2 | LOOM_TSTRING_OFFSET);
  block->string.u.offset.offset = (uint32_t)offsetof(offset_block_t, bytes);
}

//===----------------------------------------------------------------------===//
// Layout and empty strings
//===----------------------------------------------------------------------===//

static void tstring_is_24_bytes(void** state) {
  (void)state;
  assert_int_equal(sizeof(loom_tstring_t), 24);
}

static void types_are_the_low_two_bits(void** state) {
  (void)state;
  assert_int_equal(LOOM_TSTRING_SMALL, 0);
  assert_int_equal(LOOM_TSTRING_LARGE, 1);
  assert_int_equal(LOOM_TSTRING_OFFSET, 2);
  assert_int_equal(LOOM_TSTRING_VIEW, 3);
}

static void initialized_string_is_empty_and_small(void** state) {
  (void)state;
  loom_tstring_t s;
  memset(&s, 0xff, sizeof(s));
  loom_tstring_initialize(&s);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
  assert_string_equal(loom_tstring_data(&s), "");
}

static void small_capacity_is_22(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  assert_int_equal(LOOM_TSTRING_SMALL_CAPACITY, 22);
  assert_int_equal(loom_tstring_capacity(&s), LOOM_TSTRING_SMALL_CAPACITY);
}

static void deinitialize_leaves_an_empty_small_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  loom_tstring_deinitialize(&s);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
  assert_string_equal(loom_tstring_data(&s), "");
}

//===----------------------------------------------------------------------===//
// loom_tstring_copy: SMALL and LARGE
//===----------------------------------------------------------------------===//

static void copy_of_22_bytes_stays_small(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, k22, strlen(k22));
  loom_tstring_deinitialize(&s);
}

static void copy_of_23_bytes_becomes_large(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k23);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  ASSERT_TSTRING_EQ(&s, k23, strlen(k23));
  loom_tstring_deinitialize(&s);
}

static void small_data_lives_inside_the_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);
  assert_true(points_inside(&s, loom_tstring_data(&s)));
  assert_true(points_inside(&s, loom_tstring_data(&s) + strlen(k22)));
  loom_tstring_deinitialize(&s);
}

static void large_data_lives_outside_the_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k23);
  assert_false(points_inside(&s, loom_tstring_data(&s)));
  loom_tstring_deinitialize(&s);
}

static void small_string_is_nul_terminated(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, "abc", 3));
  assert_int_equal(loom_tstring_data(&s)[3], '\0');
  loom_tstring_deinitialize(&s);
}

static void large_string_is_nul_terminated(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  assert_int_equal(loom_tstring_data(&s)[strlen(kLong)], '\0');
  loom_tstring_deinitialize(&s);
}

static void large_capacity_is_a_16_byte_multiple_minus_one(void** state) {
  (void)state;
  char text[200];
  memset(text, 'x', sizeof(text));
  for (size_t size = LOOM_TSTRING_SMALL_CAPACITY + 1; size <= sizeof(text);
       ++size) {
    loom_tstring_t s;
    loom_tstring_initialize(&s);
    LOOM_ASSERT_OK(loom_tstring_copy(&s, text, size));
    assert_int_equal(loom_tstring_capacity(&s), tf_large_capacity(size));
    loom_tstring_deinitialize(&s);
  }
}

static void copy_of_a_small_string_over_a_large_one_frees_the_heap(
    void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, "short", 5));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, "short", 5);
  // Nothing to free: LeakSanitizer reports the heap block otherwise.
}

static void copy_of_zero_bytes_from_null_gives_an_empty_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, NULL, 0));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
}

static void copy_keeps_embedded_nul_bytes(void** state) {
  (void)state;
  const char bytes[5] = {'a', '\0', 'b', '\0', 'c'};
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, bytes, sizeof(bytes)));
  ASSERT_TSTRING_EQ(&s, bytes, sizeof(bytes));
  loom_tstring_deinitialize(&s);
}

static void copy_from_the_large_strings_own_bytes_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);  // "a string long enough ..."
  LOOM_ASSERT_OK(loom_tstring_copy(&s, loom_tstring_data(&s) + 2, 6));
  ASSERT_TSTRING_EQ(&s, "string", 6);
  loom_tstring_deinitialize(&s);
}

static void copy_from_the_small_strings_own_bytes_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "0123456789");
  LOOM_ASSERT_OK(loom_tstring_copy(&s, loom_tstring_data(&s) + 3, 4));
  ASSERT_TSTRING_EQ(&s, "3456", 4);
  loom_tstring_deinitialize(&s);
}

static void failed_copy_leaves_the_string_unchanged(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  const char* before = loom_tstring_data(&s);
  // The size is checked before any byte is read.
  LOOM_ASSERT_STATUS(loom_tstring_copy(&s, "x", SIZE_MAX / 2),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "is too large");
  assert_ptr_equal(loom_tstring_data(&s), before);
  ASSERT_TSTRING_EQ(&s, kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
}

static void copy_rejects_a_null_string(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_tstring_copy(NULL, "a", 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_copy: str is NULL");
}

static void copy_rejects_null_data_with_a_size(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_STATUS(loom_tstring_copy(&s, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_copy: data is NULL");
}

//===----------------------------------------------------------------------===//
// VIEW
//===----------------------------------------------------------------------===//

static void view_borrows_the_callers_bytes(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, kLong, strlen(kLong));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&s), kLong);
  assert_int_equal(loom_tstring_size(&s), strlen(kLong));
}

static void short_view_is_still_a_view(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, "ab", 2);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_VIEW);
  assert_int_equal(loom_tstring_size(&s), 2);
}

static void view_has_capacity_zero(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, kLong, strlen(kLong));
  assert_int_equal(loom_tstring_capacity(&s), 0);
}

static void assign_view_frees_a_large_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  loom_tstring_assign_view(&s, k22, strlen(k22));
  assert_ptr_equal(loom_tstring_data(&s), k22);
  // Nothing to free: LeakSanitizer reports the heap block otherwise.
}

static void deinitialize_of_a_view_leaves_the_bytes_alone(void** state) {
  (void)state;
  char bytes[40];
  memcpy(bytes, kLong, sizeof(bytes));
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, bytes, sizeof(bytes));
  loom_tstring_deinitialize(&s);  // stack memory: freeing it would crash
  assert_memory_equal(bytes, kLong, sizeof(bytes));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
}

static void assign_view_to_a_null_string_is_ignored(void** state) {
  (void)state;
  loom_tstring_assign_view(NULL, "x", 1);
}

//===----------------------------------------------------------------------===//
// OFFSET
//===----------------------------------------------------------------------===//

static void offset_string_reports_type_size_and_data(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset bytes");
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_OFFSET);
  assert_int_equal(loom_tstring_size(&block.string), strlen("offset bytes"));
  assert_ptr_equal(loom_tstring_data(&block.string), block.bytes);
}

static void offset_string_has_capacity_zero(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset bytes");
  assert_int_equal(loom_tstring_capacity(&block.string), 0);
}

// Two strings followed by their bytes, as in a serialized string tensor.
typedef struct two_offsets_t {
  loom_tstring_t strings[2];
  char bytes[16];
} two_offsets_t;

static void offset_is_counted_from_each_strings_own_address(void** state) {
  (void)state;
  two_offsets_t block;
  memset(&block, 0, sizeof(block));
  memcpy(block.bytes, "firstsecond", 11);
  size_t bytes_at = offsetof(two_offsets_t, bytes);
  block.strings[0].u.offset.size = 5 << 2 | LOOM_TSTRING_OFFSET;
  block.strings[0].u.offset.offset = (uint32_t)bytes_at;
  block.strings[1].u.offset.size = 6 << 2 | LOOM_TSTRING_OFFSET;
  block.strings[1].u.offset.offset =
      (uint32_t)(bytes_at + 5 - sizeof(loom_tstring_t));
  assert_ptr_equal(loom_tstring_data(&block.strings[0]), block.bytes);
  assert_ptr_equal(loom_tstring_data(&block.strings[1]), block.bytes + 5);
  assert_memory_equal(loom_tstring_data(&block.strings[1]), "second", 6);
}

static void deinitialize_of_an_offset_string_frees_nothing(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset bytes");
  loom_tstring_deinitialize(&block.string);  // on the stack: no free
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&block.string), 0);
}

//===----------------------------------------------------------------------===//
// loom_tstring_resize_uninitialized
//===----------------------------------------------------------------------===//

static void resize_small_to_large_keeps_the_prefix(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "abcdef");
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 40, &data));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_int_equal(loom_tstring_size(&s), 40);
  assert_memory_equal(data, "abcdef", 6);
  assert_int_equal(data[40], '\0');
  loom_tstring_deinitialize(&s);
}

static void resize_large_to_small_keeps_the_prefix(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 8, NULL));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, "a string", 8);
  assert_int_equal(loom_tstring_data(&s)[8], '\0');
  // The heap block is freed: LeakSanitizer reports it otherwise.
}

static void resize_to_exactly_22_bytes_becomes_small(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 22, NULL));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, kLong, 22);
}

static void resize_to_23_bytes_becomes_large(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 23, NULL));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_memory_equal(loom_tstring_data(&s), k22, 22);
  loom_tstring_deinitialize(&s);
}

static void resize_within_large_capacity_keeps_the_pointer(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  const char* before = loom_tstring_data(&s);
  size_t capacity = loom_tstring_capacity(&s);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, capacity, NULL));
  assert_ptr_equal(loom_tstring_data(&s), before);
  assert_int_equal(loom_tstring_size(&s), capacity);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 30, NULL));
  assert_ptr_equal(loom_tstring_data(&s), before);
  ASSERT_TSTRING_EQ(&s, kLong, 30);
  assert_int_equal(loom_tstring_data(&s)[30], '\0');
  loom_tstring_deinitialize(&s);
}

static void resize_beyond_large_capacity_keeps_the_prefix(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  size_t capacity = loom_tstring_capacity(&s);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, capacity + 1, NULL));
  assert_int_equal(loom_tstring_capacity(&s), tf_large_capacity(capacity + 1));
  assert_memory_equal(loom_tstring_data(&s), kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
}

static void resize_small_to_a_smaller_size_truncates(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "abcdef");
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 3, NULL));
  assert_string_equal(loom_tstring_data(&s), "abc");
  assert_int_equal(loom_tstring_size(&s), 3);
}

static void resize_returns_the_writable_bytes(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 30, &data));
  assert_ptr_equal(data, loom_tstring_data(&s));
  memset(data, 'q', 30);
  assert_int_equal(loom_tstring_data(&s)[29], 'q');
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 5, &data));
  assert_ptr_equal(data, loom_tstring_data(&s));
  loom_tstring_deinitialize(&s);
}

static void resize_of_a_view_makes_an_owned_copy(void** state) {
  (void)state;
  char bytes[] = "viewed bytes that are long enough";
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, bytes, strlen(bytes));
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 30, &data));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_ptr_not_equal(data, bytes);
  assert_memory_equal(data, bytes, 30);
  data[0] = 'V';
  assert_int_equal(bytes[0], 'v');
  loom_tstring_deinitialize(&s);
}

static void resize_of_a_short_view_makes_a_small_copy(void** state) {
  (void)state;
  char bytes[] = "view";
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, bytes, 4);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 6, NULL));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_memory_equal(loom_tstring_data(&s), "view", 4);
  assert_true(points_inside(&s, loom_tstring_data(&s)));
}

static void resize_of_an_offset_string_makes_a_small_copy(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset bytes");
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&block.string, 6, &data));
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&block.string, "offset", 6);
  assert_true(points_inside(&block.string, data));
}

static void resize_of_an_offset_string_makes_a_large_copy(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, kLong);
  LOOM_ASSERT_OK(
      loom_tstring_resize_uninitialized(&block.string, strlen(kLong), NULL));
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_LARGE);
  ASSERT_TSTRING_EQ(&block.string, kLong, strlen(kLong));
  assert_ptr_not_equal(loom_tstring_data(&block.string), block.bytes);
  loom_tstring_deinitialize(&block.string);
}

static void resize_rejects_a_size_that_cannot_be_encoded(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  char expected[96];
  snprintf(expected, sizeof(expected), "string of %zu bytes is too large",
           SIZE_MAX / 2);
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(&s, SIZE_MAX / 2, NULL),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
}

static void resize_reports_exhausted_memory(void** state) {
  (void)state;
#if SIZE_MAX > UINT32_MAX
  loom_tstring_t s;
  init_copy(&s, kLong);
  const char* before = loom_tstring_data(&s);
  // The largest encodable size: more than any address space holds.
  size_t huge = SIZE_MAX >> 3;
  char expected[96];
  snprintf(expected, sizeof(expected),
           "out of memory for a string of %zu bytes", huge);
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(&s, huge, NULL),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_ptr_equal(loom_tstring_data(&s), before);
  ASSERT_TSTRING_EQ(&s, kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
#else
  skip();
#endif
}

static void resize_rejects_a_null_string(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(NULL, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_resize_uninitialized: str is NULL");
}

//===----------------------------------------------------------------------===//
// loom_tstring_reserve
//===----------------------------------------------------------------------===//

static void reserve_within_small_capacity_keeps_a_small_string(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, LOOM_TSTRING_SMALL_CAPACITY));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
}

static void reserve_beyond_small_capacity_moves_to_the_heap(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 100));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_int_equal(loom_tstring_capacity(&s), tf_large_capacity(100));
  ASSERT_TSTRING_EQ(&s, "keep", 4);
  assert_int_equal(loom_tstring_data(&s)[4], '\0');
  loom_tstring_deinitialize(&s);
}

static void reserve_below_large_capacity_keeps_the_pointer(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  const char* before = loom_tstring_data(&s);
  size_t capacity = loom_tstring_capacity(&s);
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, capacity));
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 1));
  assert_ptr_equal(loom_tstring_data(&s), before);
  assert_int_equal(loom_tstring_capacity(&s), capacity);
  loom_tstring_deinitialize(&s);
}

static void reserve_beyond_large_capacity_keeps_the_contents(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 1000));
  assert_true(loom_tstring_capacity(&s) >= 1000);
  ASSERT_TSTRING_EQ(&s, kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
}

static void reserve_within_small_capacity_keeps_a_short_view(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, "view", 4);
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 10));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_VIEW);
}

static void reserve_of_a_view_copies_its_bytes(void** state) {
  (void)state;
  char bytes[] = "view";
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, bytes, 4);
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 64));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_ptr_not_equal(loom_tstring_data(&s), bytes);
  ASSERT_TSTRING_EQ(&s, "view", 4);
  loom_tstring_deinitialize(&s);
}

static void reserve_rejects_a_capacity_that_cannot_be_encoded(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  char expected[160];
  snprintf(expected, sizeof(expected),
           "loom_tstring_reserve: capacity: a string of %zu bytes is too "
           "large (at most %zu)",
           SIZE_MAX, SIZE_MAX >> 2);
  LOOM_ASSERT_STATUS(loom_tstring_reserve(&s, SIZE_MAX),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
}

static void reserve_reports_exhausted_memory(void** state) {
  (void)state;
#if SIZE_MAX > UINT32_MAX
  loom_tstring_t s;
  init_copy(&s, "keep");
  size_t huge = SIZE_MAX >> 3;
  char expected[96];
  snprintf(expected, sizeof(expected),
           "out of memory for a string of %zu bytes", huge);
  LOOM_ASSERT_STATUS(loom_tstring_reserve(&s, huge),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
#else
  skip();
#endif
}

static void reserve_rejects_a_null_string(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_tstring_reserve(NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_reserve: str is NULL");
}

//===----------------------------------------------------------------------===//
// loom_tstring_append
//===----------------------------------------------------------------------===//

static void append_within_small_capacity_stays_small(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "abc");
  LOOM_ASSERT_OK(loom_tstring_append(&s, "def", 3));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_string_equal(loom_tstring_data(&s), "abcdef");
  assert_int_equal(loom_tstring_size(&s), 6);
}

static void append_past_small_capacity_moves_to_the_heap(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);
  LOOM_ASSERT_OK(loom_tstring_append(&s, "!", 1));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_int_equal(loom_tstring_size(&s), 23);
  assert_memory_equal(loom_tstring_data(&s), k22, 22);
  assert_string_equal(loom_tstring_data(&s) + 22, "!");
  loom_tstring_deinitialize(&s);
}

static void append_at_least_doubles_an_outgrown_capacity(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k23);
  size_t capacity = loom_tstring_capacity(&s);
  size_t room = capacity - loom_tstring_size(&s);
  char more[64];
  memset(more, '+', sizeof(more));
  LOOM_ASSERT_OK(loom_tstring_append(&s, more, room + 1));
  assert_true(loom_tstring_capacity(&s) >= 2 * capacity);
  loom_tstring_deinitialize(&s);
}

static void append_within_large_capacity_keeps_the_pointer(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k23);
  const char* before = loom_tstring_data(&s);
  assert_true(loom_tstring_capacity(&s) > loom_tstring_size(&s));
  LOOM_ASSERT_OK(loom_tstring_append(&s, "!", 1));
  assert_ptr_equal(loom_tstring_data(&s), before);
  loom_tstring_deinitialize(&s);
}

static void append_of_many_pieces_keeps_every_byte(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  char expected[1000];
  for (int i = 0; i < 100; ++i) {
    char piece[11];
    snprintf(piece, sizeof(piece), "%010d", i);
    LOOM_ASSERT_OK(loom_tstring_append(&s, piece, 10));
    memcpy(expected + i * 10, piece, 10);
  }
  ASSERT_TSTRING_EQ(&s, expected, sizeof(expected));
  assert_int_equal(loom_tstring_data(&s)[sizeof(expected)], '\0');
  loom_tstring_deinitialize(&s);
}

static void append_to_a_view_copies_and_leaves_the_bytes_alone(void** state) {
  (void)state;
  char bytes[] = "viewed";
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, bytes, 6);
  LOOM_ASSERT_OK(loom_tstring_append(&s, " and appended", 13));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_string_equal(loom_tstring_data(&s), "viewed and appended");
  assert_string_equal(bytes, "viewed");
}

static void append_to_an_offset_string_copies(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset");
  LOOM_ASSERT_OK(loom_tstring_append(&block.string, kLong, strlen(kLong)));
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_LARGE);
  assert_memory_equal(loom_tstring_data(&block.string), "offset", 6);
  assert_memory_equal(loom_tstring_data(&block.string) + 6, kLong,
                      strlen(kLong));
  assert_memory_equal(block.bytes, "offset", 6);
  loom_tstring_deinitialize(&block.string);
}

static void append_of_nothing_changes_nothing(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, kLong, strlen(kLong));
  LOOM_ASSERT_OK(loom_tstring_append(&s, NULL, 0));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&s), kLong);
}

static void append_of_the_small_strings_own_bytes_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "0123456789abcdef");  // SMALL; doubling makes it LARGE
  LOOM_ASSERT_OK(
      loom_tstring_append(&s, loom_tstring_data(&s), loom_tstring_size(&s)));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  ASSERT_TSTRING_EQ(&s, "0123456789abcdef0123456789abcdef", 32);
  loom_tstring_deinitialize(&s);
}

static void append_of_the_large_strings_own_bytes_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "abcdefghijklmnopqrstuvwxyz0123");  // 30 of 31 bytes used
  LOOM_ASSERT_OK(
      loom_tstring_append(&s, loom_tstring_data(&s), loom_tstring_size(&s)));
  ASSERT_TSTRING_EQ(
      &s, "abcdefghijklmnopqrstuvwxyz0123abcdefghijklmnopqrstuvwxyz0123", 60);
  loom_tstring_deinitialize(&s);
}

static void append_of_part_of_its_own_bytes_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, k22);  // "exactly twenty-two ch!"
  LOOM_ASSERT_OK(loom_tstring_append(&s, loom_tstring_data(&s) + 8, 6));
  ASSERT_TSTRING_EQ(&s, "exactly twenty-two ch!twenty", 28);
  loom_tstring_deinitialize(&s);
}

static void append_rejects_a_null_string(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_tstring_append(NULL, "a", 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_append: str is NULL");
}

static void append_rejects_null_data_with_a_size(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_STATUS(loom_tstring_append(&s, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_append: data is NULL");
}

static void append_rejects_a_size_that_overflows(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  char expected[160];
  snprintf(expected, sizeof(expected),
           "loom_tstring_append: size: appending %zu bytes to 4 overflows a "
           "string (at most %zu)",
           SIZE_MAX / 2, SIZE_MAX >> 2);
  // The size is checked before any byte is read.
  LOOM_ASSERT_STATUS(loom_tstring_append(&s, "x", SIZE_MAX / 2),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
}

//===----------------------------------------------------------------------===//
// loom_tstring_assign
//===----------------------------------------------------------------------===//

static void assign_of_a_small_string_copies_it_inline(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, "tiny");
  loom_tstring_initialize(&dst);
  LOOM_ASSERT_OK(loom_tstring_assign(&dst, &src));
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&dst, "tiny", 4);
  assert_true(points_inside(&dst, loom_tstring_data(&dst)));
}

static void assign_of_a_large_string_makes_a_separate_copy(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, kLong);
  loom_tstring_initialize(&dst);
  LOOM_ASSERT_OK(loom_tstring_assign(&dst, &src));
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_LARGE);
  assert_ptr_not_equal(loom_tstring_data(&dst), loom_tstring_data(&src));
  ASSERT_TSTRING_EQ(&dst, kLong, strlen(kLong));
  loom_tstring_deinitialize(&src);
  ASSERT_TSTRING_EQ(&dst, kLong, strlen(kLong));  // still readable
  loom_tstring_deinitialize(&dst);
}

static void assign_of_a_view_shares_the_viewed_bytes(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  loom_tstring_initialize(&src);
  loom_tstring_initialize(&dst);
  loom_tstring_assign_view(&src, kLong, strlen(kLong));
  LOOM_ASSERT_OK(loom_tstring_assign(&dst, &src));
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&dst), kLong);
  assert_int_equal(loom_tstring_size(&dst), strlen(kLong));
}

static void assign_of_an_offset_string_views_its_bytes(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "from offset");
  loom_tstring_t dst;
  loom_tstring_initialize(&dst);
  LOOM_ASSERT_OK(loom_tstring_assign(&dst, &block.string));
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&dst), block.bytes);
  assert_int_equal(loom_tstring_size(&dst), strlen("from offset"));
}

static void assign_to_itself_changes_nothing(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  const char* before = loom_tstring_data(&s);
  LOOM_ASSERT_OK(loom_tstring_assign(&s, &s));
  assert_ptr_equal(loom_tstring_data(&s), before);
  ASSERT_TSTRING_EQ(&s, kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
}

static void assign_frees_the_destinations_heap(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, "small");
  init_copy(&dst, kLong);
  LOOM_ASSERT_OK(loom_tstring_assign(&dst, &src));
  ASSERT_TSTRING_EQ(&dst, "small", 5);
  // Nothing to free: LeakSanitizer reports the heap block otherwise.
}

static void assign_rejects_a_null_destination(void** state) {
  (void)state;
  loom_tstring_t src;
  loom_tstring_initialize(&src);
  LOOM_ASSERT_STATUS(loom_tstring_assign(NULL, &src),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_assign: dst is NULL");
}

static void assign_rejects_a_null_source(void** state) {
  (void)state;
  loom_tstring_t dst;
  loom_tstring_initialize(&dst);
  LOOM_ASSERT_STATUS(loom_tstring_assign(&dst, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_assign: src is NULL");
}

//===----------------------------------------------------------------------===//
// loom_tstring_move
//===----------------------------------------------------------------------===//

static void move_of_a_large_string_transfers_the_heap_block(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, kLong);
  loom_tstring_initialize(&dst);
  const char* heap = loom_tstring_data(&src);
  loom_tstring_move(&dst, &src);
  assert_ptr_equal(loom_tstring_data(&dst), heap);
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_LARGE);
  ASSERT_TSTRING_EQ(&dst, kLong, strlen(kLong));
  loom_tstring_deinitialize(&src);  // must not free the moved block
  loom_tstring_deinitialize(&dst);
}

static void move_of_a_large_string_empties_the_source(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, kLong);
  loom_tstring_initialize(&dst);
  loom_tstring_move(&dst, &src);
  assert_int_equal(loom_tstring_type(&src), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&src), 0);
  loom_tstring_deinitialize(&dst);
}

static void move_of_a_small_string_copies_it(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, "small");
  loom_tstring_initialize(&dst);
  loom_tstring_move(&dst, &src);
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_SMALL);
  ASSERT_TSTRING_EQ(&dst, "small", 5);
  assert_true(points_inside(&dst, loom_tstring_data(&dst)));
}

static void move_of_a_view_shares_the_bytes(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  loom_tstring_initialize(&src);
  loom_tstring_initialize(&dst);
  loom_tstring_assign_view(&src, kLong, strlen(kLong));
  loom_tstring_move(&dst, &src);
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&dst), kLong);
}

static void move_of_an_offset_string_views_its_bytes(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "from offset");
  loom_tstring_t dst;
  loom_tstring_initialize(&dst);
  loom_tstring_move(&dst, &block.string);
  assert_int_equal(loom_tstring_type(&dst), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&dst), block.bytes);
  assert_int_equal(loom_tstring_size(&dst), strlen("from offset"));
}

static void move_frees_the_destinations_heap(void** state) {
  (void)state;
  loom_tstring_t src, dst;
  init_copy(&src, "small");
  init_copy(&dst, kLong);
  loom_tstring_move(&dst, &src);
  ASSERT_TSTRING_EQ(&dst, "small", 5);
  // Nothing to free: LeakSanitizer reports the heap block otherwise.
}

static void move_to_itself_changes_nothing(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, kLong);
  loom_tstring_move(&s, &s);
  ASSERT_TSTRING_EQ(&s, kLong, strlen(kLong));
  loom_tstring_deinitialize(&s);
}

static void move_with_a_null_argument_is_ignored(void** state) {
  (void)state;
  loom_tstring_t s;
  init_copy(&s, "keep");
  loom_tstring_move(NULL, &s);
  loom_tstring_move(&s, NULL);
  ASSERT_TSTRING_EQ(&s, "keep", 4);
}

//===----------------------------------------------------------------------===//
// Memory: LARGE bytes come from malloc, as in TensorFlow's inline code
//===----------------------------------------------------------------------===//

static bool count_allocations(size_t size, void* context) {
  (void)size;
  ++*(int*)context;
  return true;
}

static void large_string_takes_its_bytes_from_malloc(void** state) {
  (void)state;
  int allocations = 0;
  const loom__tstring_allocation_gate_t gate = {
      .allow = count_allocations,
      .context = &allocations,
  };
  loom__tstring_set_allocation_gate(&gate);
  loom_tstring_t s;
  init_copy(&s, kLong);
  loom__tstring_set_allocation_gate(NULL);
  assert_int_equal(allocations, 1);
  // A block of malloc's: free() takes it (AddressSanitizer checks).
  free(s.u.large.ptr);
}

static void string_frees_a_block_that_malloc_made(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  char* block = malloc(48);
  assert_non_null(block);
  memcpy(block, kLong, strlen(kLong) + 1);
  s.u.large.size = strlen(kLong) << 2 | LOOM_TSTRING_LARGE;
  s.u.large.capacity = 47;
  s.u.large.ptr = block;
  LOOM_ASSERT_OK(loom_tstring_append(&s, kLong, strlen(kLong)));  // realloc
  assert_int_equal(loom_tstring_size(&s), 2 * strlen(kLong));
  loom_tstring_deinitialize(&s);  // free
}

// A failed step must leave the string as it was.
static loom_status_t check_unchanged(loom_status_t status,
                                     const loom_tstring_t* str,
                                     const char* before, size_t before_size,
                                     const char* step) {
  if (status && (loom_tstring_size(str) != before_size ||
                 memcmp(loom_tstring_data(str), before, before_size) != 0)) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "%s failed and changed the string", step);
  }
  return status;
}

#define GROWTH_STEP(str, expr)                                             \
  do {                                                                     \
    if (!status) {                                                         \
      size_t before_size = loom_tstring_size(str);                         \
      memcpy(before, loom_tstring_data(str), before_size);                 \
      status = check_unchanged((expr), (str), before, before_size, #expr); \
    }                                                                      \
  } while (0)

// Every way a string reaches the heap or grows there: copy, amortised
// append, reserve, resize, assign of a LARGE string.
static loom_status_t grow_strings(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_test_gate_strings(&allocator);
  char before[512];
  char* data = NULL;
  loom_tstring_t s, other;
  loom_tstring_initialize(&s);
  loom_tstring_initialize(&other);
  loom_status_t status = loom_ok_status();
  GROWTH_STEP(&s, loom_tstring_copy(&s, kLong, strlen(kLong)));
  GROWTH_STEP(&s, loom_tstring_append(&s, kLong, strlen(kLong)));
  GROWTH_STEP(&s, loom_tstring_reserve(&s, 200));
  GROWTH_STEP(&s, loom_tstring_resize_uninitialized(&s, 300, &data));
  if (!status) memset(data + 2 * strlen(kLong), 'z', 300 - 2 * strlen(kLong));
  GROWTH_STEP(&other, loom_tstring_assign(&other, &s));
  loom_tstring_deinitialize(&s);
  loom_tstring_deinitialize(&other);
  loom_test_ungate_strings();
  return status;
}

static void every_growth_failure_is_reported_and_keeps_the_string(
    void** state) {
  (void)state;
  assert_int_equal(
      loom_test_fault_sweep(grow_strings, NULL, LOOM_TEST_SWEEP_STRICT), 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tstring_is_24_bytes),
      cmocka_unit_test(types_are_the_low_two_bits),
      cmocka_unit_test(initialized_string_is_empty_and_small),
      cmocka_unit_test(small_capacity_is_22),
      cmocka_unit_test(deinitialize_leaves_an_empty_small_string),
      cmocka_unit_test(copy_of_22_bytes_stays_small),
      cmocka_unit_test(copy_of_23_bytes_becomes_large),
      cmocka_unit_test(small_data_lives_inside_the_string),
      cmocka_unit_test(large_data_lives_outside_the_string),
      cmocka_unit_test(small_string_is_nul_terminated),
      cmocka_unit_test(large_string_is_nul_terminated),
      cmocka_unit_test(large_capacity_is_a_16_byte_multiple_minus_one),
      cmocka_unit_test(copy_of_a_small_string_over_a_large_one_frees_the_heap),
      cmocka_unit_test(copy_of_zero_bytes_from_null_gives_an_empty_string),
      cmocka_unit_test(copy_keeps_embedded_nul_bytes),
      cmocka_unit_test(copy_from_the_large_strings_own_bytes_is_safe),
      cmocka_unit_test(copy_from_the_small_strings_own_bytes_is_safe),
      cmocka_unit_test(failed_copy_leaves_the_string_unchanged),
      cmocka_unit_test(copy_rejects_a_null_string),
      cmocka_unit_test(copy_rejects_null_data_with_a_size),
      cmocka_unit_test(view_borrows_the_callers_bytes),
      cmocka_unit_test(short_view_is_still_a_view),
      cmocka_unit_test(view_has_capacity_zero),
      cmocka_unit_test(assign_view_frees_a_large_string),
      cmocka_unit_test(deinitialize_of_a_view_leaves_the_bytes_alone),
      cmocka_unit_test(assign_view_to_a_null_string_is_ignored),
      cmocka_unit_test(offset_string_reports_type_size_and_data),
      cmocka_unit_test(offset_string_has_capacity_zero),
      cmocka_unit_test(offset_is_counted_from_each_strings_own_address),
      cmocka_unit_test(deinitialize_of_an_offset_string_frees_nothing),
      cmocka_unit_test(resize_small_to_large_keeps_the_prefix),
      cmocka_unit_test(resize_large_to_small_keeps_the_prefix),
      cmocka_unit_test(resize_to_exactly_22_bytes_becomes_small),
      cmocka_unit_test(resize_to_23_bytes_becomes_large),
      cmocka_unit_test(resize_within_large_capacity_keeps_the_pointer),
      cmocka_unit_test(resize_beyond_large_capacity_keeps_the_prefix),
      cmocka_unit_test(resize_small_to_a_smaller_size_truncates),
      cmocka_unit_test(resize_returns_the_writable_bytes),
      cmocka_unit_test(resize_of_a_view_makes_an_owned_copy),
      cmocka_unit_test(resize_of_a_short_view_makes_a_small_copy),
      cmocka_unit_test(resize_of_an_offset_string_makes_a_small_copy),
      cmocka_unit_test(resize_of_an_offset_string_makes_a_large_copy),
      cmocka_unit_test(resize_rejects_a_size_that_cannot_be_encoded),
      cmocka_unit_test(resize_reports_exhausted_memory),
      cmocka_unit_test(resize_rejects_a_null_string),
      cmocka_unit_test(reserve_within_small_capacity_keeps_a_small_string),
      cmocka_unit_test(reserve_beyond_small_capacity_moves_to_the_heap),
      cmocka_unit_test(reserve_below_large_capacity_keeps_the_pointer),
      cmocka_unit_test(reserve_beyond_large_capacity_keeps_the_contents),
      cmocka_unit_test(reserve_within_small_capacity_keeps_a_short_view),
      cmocka_unit_test(reserve_of_a_view_copies_its_bytes),
      cmocka_unit_test(reserve_rejects_a_capacity_that_cannot_be_encoded),
      cmocka_unit_test(reserve_reports_exhausted_memory),
      cmocka_unit_test(reserve_rejects_a_null_string),
      cmocka_unit_test(append_within_small_capacity_stays_small),
      cmocka_unit_test(append_past_small_capacity_moves_to_the_heap),
      cmocka_unit_test(append_at_least_doubles_an_outgrown_capacity),
      cmocka_unit_test(append_within_large_capacity_keeps_the_pointer),
      cmocka_unit_test(append_of_many_pieces_keeps_every_byte),
      cmocka_unit_test(append_to_a_view_copies_and_leaves_the_bytes_alone),
      cmocka_unit_test(append_to_an_offset_string_copies),
      cmocka_unit_test(append_of_nothing_changes_nothing),
      cmocka_unit_test(append_of_the_small_strings_own_bytes_is_safe),
      cmocka_unit_test(append_of_the_large_strings_own_bytes_is_safe),
      cmocka_unit_test(append_of_part_of_its_own_bytes_is_safe),
      cmocka_unit_test(append_rejects_a_null_string),
      cmocka_unit_test(append_rejects_null_data_with_a_size),
      cmocka_unit_test(append_rejects_a_size_that_overflows),
      cmocka_unit_test(assign_of_a_small_string_copies_it_inline),
      cmocka_unit_test(assign_of_a_large_string_makes_a_separate_copy),
      cmocka_unit_test(assign_of_a_view_shares_the_viewed_bytes),
      cmocka_unit_test(assign_of_an_offset_string_views_its_bytes),
      cmocka_unit_test(assign_to_itself_changes_nothing),
      cmocka_unit_test(assign_frees_the_destinations_heap),
      cmocka_unit_test(assign_rejects_a_null_destination),
      cmocka_unit_test(assign_rejects_a_null_source),
      cmocka_unit_test(move_of_a_large_string_transfers_the_heap_block),
      cmocka_unit_test(move_of_a_large_string_empties_the_source),
      cmocka_unit_test(move_of_a_small_string_copies_it),
      cmocka_unit_test(move_of_a_view_shares_the_bytes),
      cmocka_unit_test(move_of_an_offset_string_views_its_bytes),
      cmocka_unit_test(move_frees_the_destinations_heap),
      cmocka_unit_test(move_to_itself_changes_nothing),
      cmocka_unit_test(move_with_a_null_argument_is_ignored),
      cmocka_unit_test(large_string_takes_its_bytes_from_malloc),
      cmocka_unit_test(string_frees_a_block_that_malloc_made),
      cmocka_unit_test(every_growth_failure_is_reported_and_keeps_the_string),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
