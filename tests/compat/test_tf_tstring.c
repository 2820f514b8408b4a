// TF_TString functions: TensorFlow's string API over loom_tstring_t, the
// shared layout that lets both APIs work on the same 24 bytes, and interop
// with the header-only TF_TString a plugin compiles in (an independent copy
// in tstring_inline_copy.c): the same layout after every operation, and
// strings made, grown and freed across the boundary, alone, in tensors and
// through the eager API.

#include <stdlib.h>

#include "eager_test_util.h"
#include "loom/tensor.h"
#include "loom/tstring.h"
#include "string_allocation_gate.h"
#include "tensor/tstring_internal.h"
#include "tensorflow/c/tf_tstring.h"
#include "test_support.h"
#include "tstring_inline_copy.h"

// One layout: every field at the same offset with the same size.
_Static_assert(sizeof(TF_TString) == 24, "TF_TString is 24 bytes");
_Static_assert(sizeof(TF_TString) == sizeof(loom_tstring_t), "same size");
_Static_assert(offsetof(TF_TString, u.smll.size) ==
                   offsetof(loom_tstring_t, u.small.size),
               "small size");
_Static_assert(offsetof(TF_TString, u.smll.str) ==
                   offsetof(loom_tstring_t, u.small.str),
               "small bytes");
_Static_assert(offsetof(TF_TString, u.large.size) ==
                   offsetof(loom_tstring_t, u.large.size),
               "large size");
_Static_assert(offsetof(TF_TString, u.large.cap) ==
                   offsetof(loom_tstring_t, u.large.capacity),
               "large capacity");
_Static_assert(offsetof(TF_TString, u.large.ptr) ==
                   offsetof(loom_tstring_t, u.large.ptr),
               "large pointer");
_Static_assert(offsetof(TF_TString, u.offset.offset) ==
                   offsetof(loom_tstring_t, u.offset.offset),
               "offset");
_Static_assert(offsetof(TF_TString, u.offset.count) ==
                   offsetof(loom_tstring_t, u.offset.count),
               "offset count");
_Static_assert(offsetof(TF_TString, u.view.ptr) ==
                   offsetof(loom_tstring_t, u.view.ptr),
               "view pointer");
_Static_assert((int)TF_TSTR_SMALL == (int)LOOM_TSTRING_SMALL, "SMALL");
_Static_assert((int)TF_TSTR_LARGE == (int)LOOM_TSTRING_LARGE, "LARGE");
_Static_assert((int)TF_TSTR_OFFSET == (int)LOOM_TSTRING_OFFSET, "OFFSET");
_Static_assert((int)TF_TSTR_VIEW == (int)LOOM_TSTRING_VIEW, "VIEW");
_Static_assert((int)TF_TString_SmallCapacity == LOOM_TSTRING_SMALL_CAPACITY,
               "small capacity");

static const char kLong[] = "a string long enough to live on the heap";

// TensorFlow's capacity for a LARGE string of `size` bytes (ctstring's
// TF_align16(size + 1) - 1).
static size_t tf_large_capacity(size_t size) {
  return ((size + 1 + 15) & ~(size_t)15) - 1;
}

static void init_copy(TF_TString* str, const char* text) {
  TF_TString_Init(str);
  TF_TString_Copy(str, text, strlen(text));
}

static bool points_inside(const TF_TString* str, const char* ptr) {
  return ptr >= (const char*)str && ptr < (const char*)str + sizeof(*str);
}

// An OFFSET string as TensorFlow lays one out.
typedef struct offset_block_t {
  TF_TString string;
  char bytes[64];
} offset_block_t;

static void make_offset(offset_block_t* block, const char* text) {
  memset(block, 0, sizeof(*block));
  size_t size = strlen(text);
  memcpy(block->bytes, text, size);
  block->string.u.offset.size = (uint32_t)(size << 2 | TF_TSTR_OFFSET);
  block->string.u.offset.offset = (uint32_t)offsetof(offset_block_t, bytes);
}

#define ASSERT_TF_TSTRING_EQ(str, text, size)                   \
  do {                                                          \
    assert_int_equal(TF_TString_GetSize(str), (size));          \
    assert_memory_equal(TF_TString_GetDataPointer(str), (text), \
                        (size) ? (size) : 1 /* NUL */);         \
  } while (0)

//===----------------------------------------------------------------------===//
// One layout for both APIs
//===----------------------------------------------------------------------===//

static void type_values_equal_loom_types(void** state) {
  (void)state;
  assert_int_equal(TF_TSTR_SMALL, LOOM_TSTRING_SMALL);
  assert_int_equal(TF_TSTR_LARGE, LOOM_TSTRING_LARGE);
  assert_int_equal(TF_TSTR_OFFSET, LOOM_TSTRING_OFFSET);
  assert_int_equal(TF_TSTR_VIEW, LOOM_TSTRING_VIEW);
  assert_int_equal(TF_TSTR_TYPE_MASK, 3);
}

static void tf_strings_read_the_same_through_loom(void** state) {
  (void)state;
  TF_TString strings[3];
  init_copy(&strings[0], "small");
  init_copy(&strings[1], kLong);
  TF_TString_Init(&strings[2]);
  TF_TString_AssignView(&strings[2], kLong, 10);
  for (int i = 0; i < 3; ++i) {
    const loom_tstring_t* same = (const loom_tstring_t*)&strings[i];
    assert_int_equal((int)loom_tstring_type(same),
                     (int)TF_TString_GetType(&strings[i]));
    assert_int_equal(loom_tstring_size(same), TF_TString_GetSize(&strings[i]));
    assert_int_equal(loom_tstring_capacity(same),
                     TF_TString_GetCapacity(&strings[i]));
    assert_ptr_equal(loom_tstring_data(same),
                     TF_TString_GetDataPointer(&strings[i]));
  }
  TF_TString_Dealloc(&strings[1]);
}

static void loom_strings_read_the_same_through_tf(void** state) {
  (void)state;
  loom_tstring_t strings[3];
  for (int i = 0; i < 3; ++i) loom_tstring_initialize(&strings[i]);
  LOOM_ASSERT_OK(loom_tstring_copy(&strings[0], "small", 5));
  LOOM_ASSERT_OK(loom_tstring_copy(&strings[1], kLong, strlen(kLong)));
  loom_tstring_assign_view(&strings[2], kLong, 10);
  for (int i = 0; i < 3; ++i) {
    const TF_TString* same = (const TF_TString*)&strings[i];
    assert_int_equal((int)TF_TString_GetType(same),
                     (int)loom_tstring_type(&strings[i]));
    assert_int_equal(TF_TString_GetSize(same), loom_tstring_size(&strings[i]));
    assert_ptr_equal(TF_TString_GetDataPointer(same),
                     loom_tstring_data(&strings[i]));
  }
  loom_tstring_deinitialize(&strings[1]);
}

static void both_apis_write_the_same_small_bytes(void** state) {
  (void)state;
  TF_TString tf;
  loom_tstring_t loom;
  memset(&tf, 0xab, sizeof(tf));
  memset(&loom, 0xab, sizeof(loom));
  init_copy(&tf, "same bytes");
  loom_tstring_initialize(&loom);
  LOOM_ASSERT_OK(loom_tstring_copy(&loom, "same bytes", 10));
  assert_memory_equal(&tf, &loom, sizeof(tf));
}

static void both_apis_write_the_same_view_bytes(void** state) {
  (void)state;
  TF_TString tf;
  loom_tstring_t loom;
  TF_TString_Init(&tf);
  loom_tstring_initialize(&loom);
  TF_TString_AssignView(&tf, kLong, strlen(kLong));
  loom_tstring_assign_view(&loom, kLong, strlen(kLong));
  assert_memory_equal(&tf, &loom, sizeof(tf));
}

static void both_apis_write_the_same_large_header(void** state) {
  (void)state;
  TF_TString tf;
  loom_tstring_t loom;
  init_copy(&tf, kLong);
  loom_tstring_initialize(&loom);
  LOOM_ASSERT_OK(loom_tstring_copy(&loom, kLong, strlen(kLong)));
  // Size and capacity words agree; the heap pointers differ.
  assert_memory_equal(&tf, &loom, offsetof(TF_TString, u.large.ptr));
  TF_TString_Dealloc(&tf);
  loom_tstring_deinitialize(&loom);
}

static void loom_frees_a_large_tf_string(void** state) {
  (void)state;
  TF_TString tf;
  init_copy(&tf, kLong);
  loom_tstring_deinitialize((loom_tstring_t*)&tf);
  assert_int_equal(TF_TString_GetSize(&tf), 0);
  // AddressSanitizer reports a mismatched free or a leak otherwise.
}

static void tf_frees_a_large_loom_string(void** state) {
  (void)state;
  loom_tstring_t loom;
  loom_tstring_initialize(&loom);
  LOOM_ASSERT_OK(loom_tstring_copy(&loom, kLong, strlen(kLong)));
  TF_TString_Dealloc((TF_TString*)&loom);
  assert_int_equal(loom_tstring_size(&loom), 0);
}

//===----------------------------------------------------------------------===//
// TF_String* (tensorflow/c/tf_tstring.h)
//===----------------------------------------------------------------------===//

static void string_init_gives_an_empty_small_string(void** state) {
  (void)state;
  TF_TString s;
  memset(&s, 0xff, sizeof(s));
  TF_StringInit(&s);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_StringGetSize(&s), 0);
  assert_int_equal(TF_StringGetCapacity(&s), TF_TString_SmallCapacity);
  assert_string_equal(TF_StringGetDataPointer(&s), "");
}

static void string_copy_stores_short_text_inline(void** state) {
  (void)state;
  TF_TString s;
  TF_StringInit(&s);
  TF_StringCopy(&s, "hi", 2);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_StringGetSize(&s), 2);
  assert_string_equal(TF_StringGetDataPointer(&s), "hi");
  assert_true(points_inside(&s, TF_StringGetDataPointer(&s)));
}

static void string_copy_stores_long_text_on_the_heap(void** state) {
  (void)state;
  TF_TString s;
  TF_StringInit(&s);
  TF_StringCopy(&s, kLong, strlen(kLong));
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_LARGE);
  assert_int_equal(TF_StringGetSize(&s), strlen(kLong));
  assert_int_equal(TF_StringGetCapacity(&s), tf_large_capacity(strlen(kLong)));
  assert_string_equal(TF_StringGetDataPointer(&s), kLong);
  assert_ptr_not_equal(TF_StringGetDataPointer(&s), kLong);
  TF_StringDealloc(&s);
}

static void string_assign_view_borrows_the_bytes(void** state) {
  (void)state;
  TF_TString s;
  TF_StringInit(&s);
  TF_StringAssignView(&s, kLong, 11);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_VIEW);
  assert_int_equal(TF_StringGetSize(&s), 11);
  assert_int_equal(TF_StringGetCapacity(&s), 0);
  assert_ptr_equal(TF_StringGetDataPointer(&s), kLong);
}

static void string_dealloc_frees_and_empties(void** state) {
  (void)state;
  TF_TString s;
  TF_StringInit(&s);
  TF_StringCopy(&s, kLong, strlen(kLong));
  TF_StringDealloc(&s);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_StringGetSize(&s), 0);
}

//===----------------------------------------------------------------------===//
// TF_TString_*: initialization and accessors
//===----------------------------------------------------------------------===//

static void init_gives_an_empty_small_string(void** state) {
  (void)state;
  TF_TString s;
  memset(&s, 0xff, sizeof(s));
  TF_TString_Init(&s);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_TString_GetSize(&s), 0);
  assert_int_equal(TF_TString_GetCapacity(&s), TF_TString_SmallCapacity);
  assert_string_equal(TF_TString_GetDataPointer(&s), "");
}

static void dealloc_leaves_an_empty_small_string(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  TF_TString_Dealloc(&s);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_TString_GetSize(&s), 0);
}

static void offset_string_reads_its_bytes(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset text");
  assert_int_equal(TF_TString_GetType(&block.string), TF_TSTR_OFFSET);
  assert_int_equal(TF_TString_GetSize(&block.string), strlen("offset text"));
  assert_int_equal(TF_TString_GetCapacity(&block.string), 0);
  assert_ptr_equal(TF_TString_GetDataPointer(&block.string), block.bytes);
}

//===----------------------------------------------------------------------===//
// TF_TString_GetMutableDataPointer
//===----------------------------------------------------------------------===//

static void mutable_pointer_of_a_small_string_is_inline(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "small");
  char* data = TF_TString_GetMutableDataPointer(&s);
  assert_ptr_equal(data, TF_TString_GetDataPointer(&s));
  assert_true(points_inside(&s, data));
}

static void mutable_pointer_of_a_large_string_is_its_heap_block(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  const char* heap = TF_TString_GetDataPointer(&s);
  assert_ptr_equal(TF_TString_GetMutableDataPointer(&s), heap);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_LARGE);
  TF_TString_Dealloc(&s);
}

static void mutable_pointer_turns_a_view_into_an_owned_copy(void** state) {
  (void)state;
  char text[] = "read-only source bytes here";
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_AssignView(&s, text, strlen(text));
  char* data = TF_TString_GetMutableDataPointer(&s);
  assert_ptr_not_equal(data, text);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_LARGE);
  ASSERT_TF_TSTRING_EQ(&s, text, strlen(text));
  data[0] = 'R';
  assert_int_equal(text[0], 'r');
  TF_TString_Dealloc(&s);
}

static void mutable_pointer_turns_a_short_view_into_a_small_copy(void** state) {
  (void)state;
  char text[] = "view";
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_AssignView(&s, text, 4);
  char* data = TF_TString_GetMutableDataPointer(&s);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  assert_true(points_inside(&s, data));
  ASSERT_TF_TSTRING_EQ(&s, "view", 4);
}

static void mutable_pointer_turns_an_offset_string_into_an_owned_copy(
    void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, kLong);
  char* data = TF_TString_GetMutableDataPointer(&block.string);
  assert_int_equal(TF_TString_GetType(&block.string), TF_TSTR_LARGE);
  assert_ptr_not_equal(data, block.bytes);
  ASSERT_TF_TSTRING_EQ(&block.string, kLong, strlen(kLong));
  data[0] = 'A';
  assert_int_equal(block.bytes[0], 'a');
  TF_TString_Dealloc(&block.string);
}

//===----------------------------------------------------------------------===//
// Resizing and reserving
//===----------------------------------------------------------------------===//

static void resize_uninitialized_grows_keeping_the_prefix(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "prefix");
  char* data = TF_TString_ResizeUninitialized(&s, 40);
  assert_non_null(data);
  assert_ptr_equal(data, TF_TString_GetDataPointer(&s));
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_LARGE);
  assert_int_equal(TF_TString_GetSize(&s), 40);
  assert_memory_equal(data, "prefix", 6);
  assert_int_equal(data[40], '\0');
  TF_TString_Dealloc(&s);
}

static void resize_uninitialized_shrinks_keeping_the_prefix(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  char* data = TF_TString_ResizeUninitialized(&s, 1);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  assert_string_equal(data, "a");
}

static void failed_resize_uninitialized_returns_null_and_keeps_the_string(
    void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "keep");
  assert_null(TF_TString_ResizeUninitialized(&s, SIZE_MAX / 2));
  ASSERT_TF_TSTRING_EQ(&s, "keep", 4);
}

static void resize_fills_new_bytes_with_the_char(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "ab");
  char* data = TF_TString_Resize(&s, 30, 'z');
  assert_int_equal(TF_TString_GetSize(&s), 30);
  char expected[30];
  memset(expected, 'z', sizeof(expected));
  memcpy(expected, "ab", 2);
  assert_memory_equal(data, expected, sizeof(expected));
  assert_int_equal(data[30], '\0');
  TF_TString_Dealloc(&s);
}

static void resize_within_small_capacity_fills_new_bytes(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "ab");
  char* data = TF_TString_Resize(&s, 5, '-');
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  assert_string_equal(data, "ab---");
}

static void resize_to_a_smaller_size_truncates_without_filling(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "abcdef");
  char* data = TF_TString_Resize(&s, 3, 'z');
  assert_string_equal(data, "abc");
}

static void failed_resize_returns_null_and_keeps_the_string(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "keep");
  assert_null(TF_TString_Resize(&s, SIZE_MAX / 2, 'x'));
  ASSERT_TF_TSTRING_EQ(&s, "keep", 4);
}

static void reserve_gives_at_least_the_capacity(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "start");
  TF_TString_Reserve(&s, 64);
  assert_int_equal(TF_TString_GetCapacity(&s), tf_large_capacity(64));
  ASSERT_TF_TSTRING_EQ(&s, "start", 5);
  TF_TString_Dealloc(&s);
}

static void reserve_within_small_capacity_keeps_a_small_string(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "start");
  TF_TString_Reserve(&s, 10);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
}

static void failed_reserve_keeps_the_string(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "keep");
  TF_TString_Reserve(&s, SIZE_MAX);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  ASSERT_TF_TSTRING_EQ(&s, "keep", 4);
}

static void reserve_amortized_at_least_doubles_the_capacity(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  size_t capacity = TF_TString_GetCapacity(&s);
  TF_TString_ReserveAmortized(&s, capacity + 1);
  assert_int_equal(TF_TString_GetCapacity(&s), tf_large_capacity(2 * capacity));
  ASSERT_TF_TSTRING_EQ(&s, kLong, strlen(kLong));
  TF_TString_Dealloc(&s);
}

static void reserve_amortized_takes_a_request_beyond_double(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  size_t capacity = TF_TString_GetCapacity(&s);
  TF_TString_ReserveAmortized(&s, 3 * capacity);
  assert_int_equal(TF_TString_GetCapacity(&s), tf_large_capacity(3 * capacity));
  TF_TString_Dealloc(&s);
}

static void reserve_amortized_within_capacity_does_nothing(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  const char* heap = TF_TString_GetDataPointer(&s);
  size_t capacity = TF_TString_GetCapacity(&s);
  TF_TString_ReserveAmortized(&s, capacity);
  assert_int_equal(TF_TString_GetCapacity(&s), capacity);
  assert_ptr_equal(TF_TString_GetDataPointer(&s), heap);
  TF_TString_Dealloc(&s);
}

//===----------------------------------------------------------------------===//
// Views, appends, copies, assignment and moves
//===----------------------------------------------------------------------===//

static void assign_view_borrows_the_bytes(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);  // freed by the assignment
  TF_TString_AssignView(&s, kLong, 5);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_VIEW);
  assert_ptr_equal(TF_TString_GetDataPointer(&s), kLong);
  assert_int_equal(TF_TString_GetSize(&s), 5);
}

static void append_n_adds_the_bytes(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "start");
  TF_TString_AppendN(&s, "-middle", 7);
  ASSERT_TF_TSTRING_EQ(&s, "start-middle", 12);
  TF_TString_AppendN(&s, kLong, strlen(kLong));
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_LARGE);
  assert_memory_equal(TF_TString_GetDataPointer(&s) + 12, kLong, strlen(kLong));
  TF_TString_Dealloc(&s);
}

static void append_n_of_nothing_changes_nothing(void** state) {
  (void)state;
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_AssignView(&s, kLong, 4);
  TF_TString_AppendN(&s, NULL, 0);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_VIEW);
  assert_int_equal(TF_TString_GetSize(&s), 4);
}

static void append_n_to_a_view_copies_first(void** state) {
  (void)state;
  char text[] = "viewed";
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_AssignView(&s, text, 6);
  TF_TString_AppendN(&s, "!", 1);
  ASSERT_TF_TSTRING_EQ(&s, "viewed!", 7);
  assert_string_equal(text, "viewed");
}

static void append_adds_another_string(void** state) {
  (void)state;
  TF_TString s, other;
  init_copy(&s, "start");
  init_copy(&other, "-end");
  TF_TString_Append(&s, &other);
  ASSERT_TF_TSTRING_EQ(&s, "start-end", 9);
  ASSERT_TF_TSTRING_EQ(&other, "-end", 4);
}

static void append_of_a_string_to_itself_doubles_it(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "0123456789abcdef");
  TF_TString_Append(&s, &s);
  ASSERT_TF_TSTRING_EQ(&s, "0123456789abcdef0123456789abcdef", 32);
  TF_TString_Append(&s, &s);
  ASSERT_TF_TSTRING_EQ(&s,
                       "0123456789abcdef0123456789abcdef"
                       "0123456789abcdef0123456789abcdef",
                       64);
  TF_TString_Dealloc(&s);
}

static void copy_replaces_the_contents(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, kLong);
  TF_TString_Copy(&s, "short", 5);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_SMALL);
  ASSERT_TF_TSTRING_EQ(&s, "short", 5);
  // The heap block is freed: LeakSanitizer reports it otherwise.
}

static void failed_copy_keeps_the_string(void** state) {
  (void)state;
  TF_TString s;
  init_copy(&s, "keep");
  TF_TString_Copy(&s, "x", SIZE_MAX / 2);  // size checked before reading
  ASSERT_TF_TSTRING_EQ(&s, "keep", 4);
}

static void assign_of_a_small_string_copies_it(void** state) {
  (void)state;
  TF_TString src, dst;
  init_copy(&src, "tiny");
  TF_TString_Init(&dst);
  TF_TString_Assign(&dst, &src);
  assert_int_equal(TF_TString_GetType(&dst), TF_TSTR_SMALL);
  ASSERT_TF_TSTRING_EQ(&dst, "tiny", 4);
}

static void assign_of_a_large_string_makes_a_separate_copy(void** state) {
  (void)state;
  TF_TString src, dst;
  init_copy(&src, kLong);
  TF_TString_Init(&dst);
  TF_TString_Assign(&dst, &src);
  assert_int_equal(TF_TString_GetType(&dst), TF_TSTR_LARGE);
  assert_ptr_not_equal(TF_TString_GetDataPointer(&dst),
                       TF_TString_GetDataPointer(&src));
  ASSERT_TF_TSTRING_EQ(&dst, kLong, strlen(kLong));
  TF_TString_Dealloc(&src);
  TF_TString_Dealloc(&dst);
}

static void assign_of_a_view_shares_the_bytes(void** state) {
  (void)state;
  TF_TString src, dst;
  TF_TString_Init(&src);
  TF_TString_Init(&dst);
  TF_TString_AssignView(&src, kLong, strlen(kLong));
  TF_TString_Assign(&dst, &src);
  assert_int_equal(TF_TString_GetType(&dst), TF_TSTR_VIEW);
  assert_ptr_equal(TF_TString_GetDataPointer(&dst), kLong);
}

static void assign_of_an_offset_string_views_its_bytes(void** state) {
  (void)state;
  offset_block_t block;
  make_offset(&block, "offset text");
  TF_TString dst;
  TF_TString_Init(&dst);
  TF_TString_Assign(&dst, &block.string);
  assert_int_equal(TF_TString_GetType(&dst), TF_TSTR_VIEW);
  assert_ptr_equal(TF_TString_GetDataPointer(&dst), block.bytes);
  assert_int_equal(TF_TString_GetSize(&dst), strlen("offset text"));
}

static void move_of_a_large_string_transfers_the_heap_block(void** state) {
  (void)state;
  TF_TString src, dst;
  init_copy(&src, kLong);
  TF_TString_Init(&dst);
  const char* heap = TF_TString_GetDataPointer(&src);
  TF_TString_Move(&dst, &src);
  assert_ptr_equal(TF_TString_GetDataPointer(&dst), heap);
  assert_int_equal(TF_TString_GetType(&src), TF_TSTR_SMALL);
  assert_int_equal(TF_TString_GetSize(&src), 0);
  TF_TString_Dealloc(&src);
  TF_TString_Dealloc(&dst);
}

static void move_of_a_small_string_copies_it(void** state) {
  (void)state;
  TF_TString src, dst;
  init_copy(&src, "small");
  init_copy(&dst, kLong);  // freed by the move
  TF_TString_Move(&dst, &src);
  assert_int_equal(TF_TString_GetType(&dst), TF_TSTR_SMALL);
  ASSERT_TF_TSTRING_EQ(&dst, "small", 5);
}

//===----------------------------------------------------------------------===//
// Allocation failures of the C heap, injected through the allocation gate
//===----------------------------------------------------------------------===//

// These functions report running out of memory only by leaving the string
// as it was (or returning NULL): an unmet `succeeded` must find the string
// unchanged, and becomes an error for the sweep.
static loom_status_t check_step(bool succeeded, const TF_TString* str,
                                const char* before, size_t before_size,
                                const char* step) {
  if (succeeded) return loom_ok_status();
  if (TF_TString_GetSize(str) != before_size ||
      memcmp(TF_TString_GetDataPointer(str), before, before_size) != 0) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "%s failed and changed the string", step);
  }
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "%s failed", step);
}

#define TF_STEP(str, call, succeeded)                                      \
  do {                                                                     \
    if (!status) {                                                         \
      size_t before_size = TF_TString_GetSize(str);                        \
      memcpy(before, TF_TString_GetDataPointer(str), before_size);         \
      call;                                                                \
      status = check_step((succeeded), (str), before, before_size, #call); \
    }                                                                      \
  } while (0)

static loom_status_t grow_tf_strings(loom_allocator_t allocator,
                                     void* context) {
  (void)context;
  loom_test_gate_strings(&allocator);
  const size_t n = strlen(kLong);
  char before[512];
  char* resized = NULL;
  char* mutable_view = NULL;
  TF_TString s, other, view;
  TF_StringInit(&s);
  TF_StringInit(&other);
  TF_StringInit(&view);
  TF_StringAssignView(&view, kLong, n);
  loom_status_t status = loom_ok_status();
  TF_STEP(&s, TF_StringCopy(&s, kLong, n), TF_StringGetSize(&s) == n);
  TF_STEP(&s, TF_TString_AppendN(&s, kLong, n), TF_StringGetSize(&s) == 2 * n);
  TF_STEP(&s, TF_TString_Reserve(&s, 200), TF_StringGetCapacity(&s) >= 200);
  TF_STEP(&s, resized = TF_TString_Resize(&s, 300, 'z'), resized != NULL);
  TF_STEP(&other, TF_TString_Assign(&other, &s),
          TF_StringGetSize(&other) == 300);
  TF_STEP(&view, mutable_view = TF_TString_GetMutableDataPointer(&view),
          mutable_view != NULL);
  TF_StringDealloc(&s);
  TF_StringDealloc(&other);
  TF_StringDealloc(&view);
  loom_test_ungate_strings();
  return status;
}

static void every_string_allocation_failure_keeps_the_string(void** state) {
  (void)state;
  assert_int_equal(
      loom_test_fault_sweep(grow_tf_strings, NULL, LOOM_TEST_SWEEP_STRICT), 6);
}

//===----------------------------------------------------------------------===//
// Interop with the inline TF_TString a plugin compiles in
//===----------------------------------------------------------------------===//

// Sizes either side of every boundary: SMALL's 22 bytes, 16-byte blocks,
// capacities halved and doubled.
static const size_t kSizes[] = {0,   1,    21,   22,   23,   30,  31,
                                32,  47,   48,   100,  111,  112, 255,
                                256, 1000, 4095, 4096, 70000};
enum { kNumSizes = sizeof(kSizes) / sizeof(kSizes[0]) };

// Text of up to 80000 bytes: no two nearby bytes alike, no NUL.
static char g_text[80001];

static int setup_text(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(g_text) - 1; ++i) {
    g_text[i] = (char)('!' + (i * 31 + i / 89) % 90);
  }
  return 0;
}

// Whether a string Loom handled and one the inline copy handled through
// the same steps are the same 24 bytes: every field but a LARGE string's
// block pointer, whose bytes must match.
static void assert_same_layout(const TF_TString* loom, const void* inline_str) {
  assert_int_equal((int)TF_TString_GetType(loom),
                   inline_tstring_get_type(inline_str));
  // Each side reads the other's string the same way.
  assert_int_equal(TF_TString_GetSize(loom),
                   inline_tstring_get_size(inline_str));
  assert_int_equal(TF_TString_GetCapacity(loom),
                   inline_tstring_get_capacity(inline_str));
  assert_int_equal(inline_tstring_get_size(loom),
                   TF_TString_GetSize((const TF_TString*)inline_str));
  assert_int_equal(inline_tstring_get_capacity(loom),
                   TF_TString_GetCapacity((const TF_TString*)inline_str));
  assert_ptr_equal(inline_tstring_get_data_pointer(loom),
                   TF_TString_GetDataPointer(loom));
  size_t size = TF_TString_GetSize(loom);
  const char* a = TF_TString_GetDataPointer(loom);
  const char* b = inline_tstring_get_data_pointer(inline_str);
  if (size) assert_memory_equal(a, b, size);
  switch (TF_TString_GetType(loom)) {
    case TF_TSTR_SMALL:
      // The size byte, the bytes and the NUL (what lies past them is
      // whatever earlier steps left).
      assert_memory_equal(loom, inline_str, 1 + size + 1);
      break;
    case TF_TSTR_LARGE:
      assert_memory_equal(loom, inline_str, offsetof(TF_TString, u.large.ptr));
      assert_int_equal(a[size], '\0');
      assert_int_equal(b[size], '\0');
      break;
    case TF_TSTR_OFFSET:
      assert_memory_equal(loom, inline_str, sizeof(TF_TString_Offset));
      break;
    default:
      // The size word; the pointers differ when the viewed bytes do.
      assert_memory_equal(loom, inline_str, sizeof(size_t));
      break;
  }
}

static void copy_lays_out_strings_as_the_inline_code_at_every_size(
    void** state) {
  (void)state;
  for (int i = 0; i < kNumSizes; ++i) {
    TF_TString loom, inline_str;
    TF_TString_Init(&loom);
    inline_tstring_init(&inline_str);
    TF_TString_Copy(&loom, g_text + i, kSizes[i]);
    inline_tstring_copy(&inline_str, g_text + i, kSizes[i]);
    assert_same_layout(&loom, &inline_str);
    // Each side frees the other's string (AddressSanitizer: no mismatch,
    // no leak).
    inline_tstring_dealloc(&loom);
    TF_TString_Dealloc(&inline_str);
    // Dealloc empties a LARGE string and leaves a SMALL one as it is.
    size_t left = kSizes[i] > TF_TString_SmallCapacity ? 0 : kSizes[i];
    assert_int_equal(TF_TString_GetSize(&inline_str), left);
    assert_int_equal(inline_tstring_get_size(&loom), left);
  }
}

// One step of a script, done the same way by either implementation.
typedef enum step_kind_t {
  STEP_COPY,
  STEP_RESIZE,
  STEP_RESIZE_UNINITIALIZED,
  STEP_RESERVE,
  STEP_RESERVE_AMORTIZED,
  STEP_APPEND,
  STEP_ASSIGN_VIEW,
  STEP_MUTABLE_POINTER,
  STEP_DEALLOC,
  STEP_KIND_COUNT,
} step_kind_t;

typedef struct step_t {
  step_kind_t kind;
  size_t size;
} step_t;

static void run_step(void* str, step_t step, bool with_loom) {
  TF_TString* s = str;
  size_t old_size = inline_tstring_get_size(str);
  char* bytes = NULL;
  switch (step.kind) {
    case STEP_COPY:
      with_loom ? TF_TString_Copy(s, g_text + 3, step.size)
                : inline_tstring_copy(str, g_text + 3, step.size);
      break;
    case STEP_RESIZE:
      bytes = with_loom ? TF_TString_Resize(s, step.size, 'r')
                        : inline_tstring_resize(str, step.size, 'r');
      assert_non_null(bytes);
      break;
    case STEP_RESIZE_UNINITIALIZED:
      bytes = with_loom ? TF_TString_ResizeUninitialized(s, step.size)
                        : inline_tstring_resize_uninitialized(str, step.size);
      assert_non_null(bytes);
      if (step.size > old_size) {
        memcpy(bytes + old_size, g_text + 7, step.size - old_size);
      }
      break;
    case STEP_RESERVE:
      with_loom ? TF_TString_Reserve(s, step.size)
                : inline_tstring_reserve(str, step.size);
      break;
    case STEP_RESERVE_AMORTIZED:
      with_loom ? TF_TString_ReserveAmortized(s, step.size)
                : inline_tstring_reserve_amortized(str, step.size);
      break;
    case STEP_APPEND:
      with_loom ? TF_TString_AppendN(s, g_text + 11, step.size)
                : inline_tstring_append_n(str, g_text + 11, step.size);
      break;
    case STEP_ASSIGN_VIEW:
      with_loom ? TF_TString_AssignView(s, g_text + 5, step.size)
                : inline_tstring_assign_view(str, g_text + 5, step.size);
      break;
    case STEP_MUTABLE_POINTER:
      bytes = with_loom ? TF_TString_GetMutableDataPointer(s)
                        : inline_tstring_get_mutable_data_pointer(str);
      assert_non_null(bytes);
      if (old_size) bytes[0] = 'M';
      break;
    case STEP_DEALLOC:
    default:
      with_loom ? TF_TString_Dealloc(s) : inline_tstring_dealloc(str);
      break;
  }
}

// Runs `steps` on a string only Loom touches, one only the inline copy
// touches and one the two take turns on, checking after every step that
// all three are laid out alike; the mixed string ends freed by the side
// that did not make its last block.
static void run_script(const step_t* steps, size_t count) {
  TF_TString loom, inline_str, mixed;
  TF_TString_Init(&loom);
  inline_tstring_init(&inline_str);
  TF_TString_Init(&mixed);
  for (size_t i = 0; i < count; ++i) {
    run_step(&loom, steps[i], true);
    run_step(&inline_str, steps[i], false);
    run_step(&mixed, steps[i], i % 2 == 0);
    assert_same_layout(&loom, &inline_str);
    assert_same_layout(&mixed, &inline_str);
  }
  TF_TString_Dealloc(&loom);
  inline_tstring_dealloc(&inline_str);
  if (count % 2) {
    inline_tstring_dealloc(&mixed);
  } else {
    TF_TString_Dealloc(&mixed);
  }
}

static void resizes_keep_grow_and_shrink_blocks_as_the_inline_code(
    void** state) {
  (void)state;
  static const step_t steps[] = {
      {STEP_RESIZE, 100},  // SMALL -> LARGE, capacity 111
      {STEP_RESIZE, 60},   // above half: the block stays
      {STEP_RESIZE, 40},   // below half: capacity 63
      {STEP_RESIZE, 63},   // exactly the capacity
      {STEP_RESIZE, 64},   // one past: 79
      {STEP_RESIZE_UNINITIALIZED, 1000},
      {STEP_RESIZE_UNINITIALIZED, 23},  // halves once, to 511
      {STEP_RESIZE, 22},                // back to SMALL
      {STEP_RESIZE, 0},
      {STEP_RESIZE_UNINITIALIZED, 5000},
      {STEP_RESIZE, 4999},
      {STEP_COPY, 30},    // in place: halves the 5007-byte capacity to 2511
      {STEP_COPY, 3000},  // grows to 3007
      {STEP_COPY, 5},
  };
  run_script(steps, sizeof(steps) / sizeof(steps[0]));
}

static void reserves_and_appends_grow_as_the_inline_code(void** state) {
  (void)state;
  static const step_t steps[] = {
      {STEP_RESERVE, 10},  // within SMALL: nothing
      {STEP_RESERVE, 23},
      {STEP_APPEND, 5},
      {STEP_RESERVE_AMORTIZED, 40},  // doubles 31 to 62, so 63
      {STEP_APPEND, 100},
      {STEP_RESERVE, 50},  // below the capacity: nothing
      {STEP_APPEND, 1},
      {STEP_ASSIGN_VIEW, 30},
      {STEP_RESERVE, 20},  // a VIEW stays a VIEW
      {STEP_RESERVE_AMORTIZED, 31},
      {STEP_ASSIGN_VIEW, 200},
      {STEP_APPEND, 7},  // a VIEW becomes owned before it grows
      {STEP_ASSIGN_VIEW, 10},
      {STEP_APPEND, 3},
      {STEP_ASSIGN_VIEW, 50},
      {STEP_MUTABLE_POINTER, 0},
      {STEP_ASSIGN_VIEW, 12},
      {STEP_MUTABLE_POINTER, 0},
      {STEP_DEALLOC, 0},
      {STEP_APPEND, 0},
  };
  run_script(steps, sizeof(steps) / sizeof(steps[0]));
}

static void appending_byte_by_byte_doubles_as_the_inline_code(void** state) {
  (void)state;
  step_t steps[600];
  for (size_t i = 0; i < 600; ++i) {
    steps[i] = (step_t){.kind = STEP_APPEND, .size = 1 + i % 3};
  }
  run_script(steps, 600);
}

static void random_steps_stay_laid_out_as_the_inline_code(void** state) {
  (void)state;
  step_t steps[2000];
  uint64_t rng = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < 2000; ++i) {
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    steps[i].kind = (step_kind_t)((rng >> 33) % STEP_KIND_COUNT);
    size_t size = kSizes[(rng >> 45) % kNumSizes];
    // One byte either side of the boundaries too.
    if (size > 3) size = size - 1 + (rng >> 20) % 3;
    steps[i].size = size;
  }
  run_script(steps, 2000);
}

// A string of each representation: SMALL, LARGE, VIEW, OFFSET (in `block`).
typedef struct source_strings_t {
  TF_TString small, large, view;
  offset_block_t block;
} source_strings_t;

static void make_sources(source_strings_t* src, bool with_loom) {
  TF_TString* strings[] = {&src->small, &src->large};
  size_t sizes[] = {9, 300};
  for (int i = 0; i < 2; ++i) {
    if (with_loom) {
      TF_TString_Init(strings[i]);
      TF_TString_Copy(strings[i], g_text + 20, sizes[i]);
    } else {
      inline_tstring_init(strings[i]);
      inline_tstring_copy(strings[i], g_text + 20, sizes[i]);
    }
  }
  inline_tstring_init(&src->view);
  inline_tstring_assign_view(&src->view, g_text + 40, 77);
  make_offset(&src->block, "an offset string's bytes");
}

static void free_sources(source_strings_t* src) {
  TF_TString_Dealloc(&src->small);
  inline_tstring_dealloc(&src->large);
}

// Destinations in each state a string can be in before an assignment.
static void make_destination(TF_TString* dst, int state, bool with_loom) {
  static const size_t sizes[] = {0, 15, 500};
  if (with_loom) {
    TF_TString_Init(dst);
    if (state < 3) TF_TString_Copy(dst, g_text + 1, sizes[state]);
    if (state == 3) TF_TString_AssignView(dst, g_text + 2, 40);
  } else {
    inline_tstring_init(dst);
    if (state < 3) inline_tstring_copy(dst, g_text + 1, sizes[state]);
    if (state == 3) inline_tstring_assign_view(dst, g_text + 2, 40);
  }
}

typedef enum binary_kind_t { ASSIGN, APPEND, MOVE } binary_kind_t;

// dst op= src, the sources made by one side, the destination by one side
// and the operation done by one side, compared with the inline code alone.
static void check_binary_operation(binary_kind_t kind, bool src_by_loom,
                                   bool dst_by_loom, bool loom_operates) {
  for (int state = 0; state < 4; ++state) {
    for (int which = 0; which < 4; ++which) {
      source_strings_t mixed_src, inline_src;
      make_sources(&mixed_src, src_by_loom);
      make_sources(&inline_src, false);
      TF_TString* mixed_from[] = {&mixed_src.small, &mixed_src.large,
                                  &mixed_src.view, &mixed_src.block.string};
      TF_TString* inline_from[] = {&inline_src.small, &inline_src.large,
                                   &inline_src.view, &inline_src.block.string};
      TF_TString mixed_dst, inline_dst;
      make_destination(&mixed_dst, state, dst_by_loom);
      make_destination(&inline_dst, state, false);
      switch (kind) {
        case ASSIGN:
          loom_operates ? TF_TString_Assign(&mixed_dst, mixed_from[which])
                        : inline_tstring_assign(&mixed_dst, mixed_from[which]);
          inline_tstring_assign(&inline_dst, inline_from[which]);
          break;
        case APPEND:
          loom_operates ? TF_TString_Append(&mixed_dst, mixed_from[which])
                        : inline_tstring_append(&mixed_dst, mixed_from[which]);
          inline_tstring_append(&inline_dst, inline_from[which]);
          break;
        case MOVE:
        default:
          loom_operates ? TF_TString_Move(&mixed_dst, mixed_from[which])
                        : inline_tstring_move(&mixed_dst, mixed_from[which]);
          inline_tstring_move(&inline_dst, inline_from[which]);
          assert_same_layout(mixed_from[which], inline_from[which]);
          break;
      }
      assert_same_layout(&mixed_dst, &inline_dst);
      // The destination is freed by the side that did not operate.
      loom_operates ? inline_tstring_dealloc(&mixed_dst)
                    : TF_TString_Dealloc(&mixed_dst);
      inline_tstring_dealloc(&inline_dst);
      free_sources(&mixed_src);
      free_sources(&inline_src);
    }
  }
}

// Every combination of which side made the source, made the destination
// and does the operation.
static void check_binary_operation_both_ways(binary_kind_t kind) {
  for (int who = 0; who < 8; ++who) {
    check_binary_operation(kind, who & 1, who & 2, who & 4);
  }
}

static void assign_across_the_boundary_gives_the_inline_layout(void** state) {
  (void)state;
  check_binary_operation_both_ways(ASSIGN);
}

static void append_across_the_boundary_gives_the_inline_layout(void** state) {
  (void)state;
  check_binary_operation_both_ways(APPEND);
}

static void move_across_the_boundary_gives_the_inline_layout(void** state) {
  (void)state;
  check_binary_operation_both_ways(MOVE);
}

static void dealloc_of_a_view_leaves_it_as_the_inline_code_does(void** state) {
  (void)state;
  TF_TString loom, inline_str;
  TF_TString_Init(&loom);
  inline_tstring_init(&inline_str);
  TF_TString_AssignView(&loom, kLong, 10);
  inline_tstring_assign_view(&inline_str, kLong, 10);
  TF_TString_Dealloc(&loom);
  inline_tstring_dealloc(&inline_str);
  assert_int_equal(TF_TString_GetType(&loom), TF_TSTR_VIEW);
  assert_same_layout(&loom, &inline_str);
}

//===----------------------------------------------------------------------===//
// String tensors whose elements either side made
//===----------------------------------------------------------------------===//

enum { kTensorStrings = 7 };
static const size_t kTensorSizes[kTensorStrings] = {0,   5,    22,   23,
                                                    100, 4096, 70000};

static void fill_with_inline_strings(TF_TString* strings) {
  for (int i = 0; i < kTensorStrings; ++i) {
    inline_tstring_init(&strings[i]);
    inline_tstring_copy(&strings[i], g_text + i, kTensorSizes[i]);
  }
}

static void fill_with_loom_strings(TF_TString* strings) {
  for (int i = 0; i < kTensorStrings; ++i) {
    TF_StringInit(&strings[i]);
    TF_StringCopy(&strings[i], g_text + i, kTensorSizes[i]);
  }
}

static void assert_tensor_strings(const TF_TString* strings) {
  for (int i = 0; i < kTensorStrings; ++i) {
    assert_int_equal(TF_StringGetSize(&strings[i]), kTensorSizes[i]);
    assert_int_equal(inline_tstring_get_size(&strings[i]), kTensorSizes[i]);
    if (kTensorSizes[i]) {
      assert_memory_equal(TF_StringGetDataPointer(&strings[i]), g_text + i,
                          kTensorSizes[i]);
      assert_memory_equal(inline_tstring_get_data_pointer(&strings[i]),
                          g_text + i, kTensorSizes[i]);
    }
  }
}

static TF_Tensor* allocate_string_tensor(void) {
  int64_t dims[1] = {kTensorStrings};
  TF_Tensor* tensor = TF_AllocateTensor(TF_STRING, dims, 1,
                                        kTensorStrings * sizeof(TF_TString));
  assert_non_null(tensor);
  assert_int_equal(TF_TensorByteSize(tensor),
                   kTensorStrings * sizeof(TF_TString));
  return tensor;
}

static void delete_tensor_frees_strings_the_inline_code_made(void** state) {
  (void)state;
  TF_Tensor* tensor = allocate_string_tensor();
  TF_TString* strings = TF_TensorData(tensor);
  fill_with_inline_strings(strings);
  assert_tensor_strings(strings);
  // Grown by Loom after the inline code made it: realloc of its block.
  TF_TString_AppendN(&strings[4], "!", 1);
  assert_int_equal(inline_tstring_get_size(&strings[4]), 101);
  TF_DeleteTensor(tensor);  // free() of each block, or ASan reports
}

static void tensor_release_frees_strings_the_inline_code_made(void** state) {
  (void)state;
  loom_shape_t shape;
  const int64_t dims[1] = {kTensorStrings};
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_default(), &shape, &tensor));
  TF_TString* strings = (TF_TString*)loom_tensor_string_at(tensor, 0);
  fill_with_inline_strings(strings);
  for (int i = 0; i < kTensorStrings; ++i) {
    const loom_tstring_t* element = loom_tensor_string_at(tensor, i);
    assert_int_equal(loom_tstring_size(element), kTensorSizes[i]);
  }
  loom_tensor_release(tensor);
}

static void inline_code_reads_grows_and_frees_strings_loom_made(void** state) {
  (void)state;
  TF_Tensor* tensor = allocate_string_tensor();
  TF_TString* strings = TF_TensorData(tensor);
  fill_with_loom_strings(strings);
  assert_tensor_strings(strings);
  // The plugin grows some (realloc of Loom's blocks), frees others, and
  // leaves the rest to TF_DeleteTensor.
  for (int i = 0; i < kTensorStrings; i += 2) {
    inline_tstring_append_n(&strings[i], g_text, 50);
    assert_int_equal(TF_StringGetSize(&strings[i]), kTensorSizes[i] + 50);
  }
  for (int i = 1; i < kTensorStrings; i += 2) {
    inline_tstring_dealloc(&strings[i]);
    if (kTensorSizes[i] > TF_TString_SmallCapacity) {
      assert_int_equal(TF_StringGetSize(&strings[i]), 0);
    }
  }
  TF_DeleteTensor(tensor);
}

// TF_NewTensor's deallocator owns the elements, as in TensorFlow: here the
// plugin's, freeing strings Loom made and OFFSET strings into its buffer.
typedef struct offset_tensor_t {
  TF_TString strings[4];
  char bytes[64];
} offset_tensor_t;

static int g_deallocated;

static void inline_deallocator(void* data, size_t len, void* arg) {
  (void)arg;
  TF_TString* strings = data;
  for (size_t i = 0; i < 4; ++i) inline_tstring_dealloc(&strings[i]);
  assert_int_equal(len, 4 * sizeof(TF_TString));
  free(data);
  ++g_deallocated;
}

static void new_tensor_deallocator_frees_strings_loom_made(void** state) {
  (void)state;
  offset_tensor_t* block = calloc(1, sizeof(*block));
  assert_non_null(block);
  TF_TString* strings = block->strings;
  TF_StringInit(&strings[0]);
  TF_StringCopy(&strings[0], kLong, strlen(kLong));
  TF_StringInit(&strings[1]);
  TF_StringCopy(&strings[1], "short", 5);
  // OFFSET strings count their bytes from their own address.
  memcpy(block->bytes, "offset bytes", 12);
  for (int i = 2; i < 4; ++i) {
    uint32_t offset =
        (uint32_t)(offsetof(offset_tensor_t, bytes) - i * sizeof(TF_TString));
    strings[i].u.offset.size = (uint32_t)((12 - i) << 2 | TF_TSTR_OFFSET);
    strings[i].u.offset.offset = offset;
  }
  int64_t dims[1] = {4};
  g_deallocated = 0;
  TF_Tensor* tensor =
      TF_NewTensor(TF_STRING, dims, 1, block, 4 * sizeof(TF_TString),
                   inline_deallocator, NULL);
  assert_non_null(tensor);
  const TF_TString* elements = TF_TensorData(tensor);
  assert_int_equal(TF_StringGetType(&elements[3]), TF_TSTR_OFFSET);
  assert_int_equal(TF_StringGetSize(&elements[3]), 9);
  assert_memory_equal(TF_StringGetDataPointer(&elements[3]), "offset by", 9);
  assert_ptr_equal(inline_tstring_get_data_pointer(&elements[2]),
                   TF_StringGetDataPointer(&elements[2]));
  // Loom's copy of an OFFSET element is a VIEW of its bytes, as inline.
  TF_TString view, inline_view;
  TF_TString_Init(&view);
  inline_tstring_init(&inline_view);
  TF_TString_Assign(&view, &elements[2]);
  inline_tstring_assign(&inline_view, &elements[2]);
  assert_same_layout(&view, &inline_view);
  TF_DeleteTensor(tensor);
  assert_int_equal(g_deallocated, 1);
}

//===----------------------------------------------------------------------===//
// String tensors through the eager API
//===----------------------------------------------------------------------===//

static void eager_tile_copies_strings_the_inline_code_made(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_Context* ctx = TFE_NewContext(options, status);
  TFE_DeleteContextOptions(options);
  ASSERT_TF_OK(status);

  TF_Tensor* input = allocate_string_tensor();
  fill_with_inline_strings(TF_TensorData(input));
  TFE_TensorHandle* strings = TFE_NewTensorHandle(input, status);
  ASSERT_TF_OK(status);
  TF_DeleteTensor(input);  // the handle keeps the data
  int64_t two = 2;
  const int64_t one_dim[1] = {1};
  TF_Tensor* multiples = TF_AllocateTensor(TF_INT64, one_dim, 1, sizeof(two));
  memcpy(TF_TensorData(multiples), &two, sizeof(two));
  TFE_TensorHandle* multiples_handle = TFE_NewTensorHandle(multiples, status);
  ASSERT_TF_OK(status);
  TF_DeleteTensor(multiples);

  TFE_Op* op = TFE_NewOp(ctx, "Tile", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, strings, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, multiples_handle, status);
  ASSERT_TF_OK(status);
  TFE_TensorHandle* result = NULL;
  int num_results = 1;
  TFE_Execute(op, &result, &num_results, status);
  ASSERT_TF_OK(status);
  TFE_DeleteOp(op);

  TF_Tensor* output = TFE_TensorHandleResolve(result, status);
  ASSERT_TF_OK(status);
  assert_int_equal(TF_TensorType(output), TF_STRING);
  assert_int_equal(TF_TensorElementCount(output), 2 * kTensorStrings);
  TF_TString* tiled = TF_TensorData(output);
  assert_tensor_strings(tiled);
  assert_tensor_strings(tiled + kTensorStrings);
  // The plugin frees the copies Loom made of the second half.
  for (int i = 0; i < kTensorStrings; ++i) {
    inline_tstring_dealloc(&tiled[kTensorStrings + i]);
  }
  TF_DeleteTensor(output);
  TFE_DeleteTensorHandle(result);
  TFE_DeleteTensorHandle(multiples_handle);
  TFE_DeleteTensorHandle(strings);
  TFE_DeleteContext(ctx);
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Arguments and messages
//===----------------------------------------------------------------------===//

static void null_strings_are_ignored(void** state) {
  (void)state;
  TF_TString_Init(NULL);
  TF_TString_Dealloc(NULL);
  TF_StringInit(NULL);
  TF_StringDealloc(NULL);
  assert_int_equal(TF_TString_GetSize(NULL), 0);
  assert_int_equal(TF_TString_GetCapacity(NULL), 0);
  assert_null(TF_TString_GetDataPointer(NULL));
  assert_null(TF_TString_GetMutableDataPointer(NULL));
  assert_null(TF_TString_ResizeUninitialized(NULL, 3));
  assert_null(TF_TString_Resize(NULL, 3, 'x'));
  TF_TString_Reserve(NULL, 100);
  TF_TString_ReserveAmortized(NULL, 100);
  TF_TString_AssignView(NULL, "x", 1);
  TF_TString_AppendN(NULL, "x", 1);
  TF_TString_Append(NULL, NULL);
  TF_TString_Copy(NULL, "x", 1);
  TF_TString_Assign(NULL, NULL);
  TF_TString_Move(NULL, NULL);
}

static void reserve_amortized_rejects_a_null_string(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_tstring_reserve_amortized(NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tstring_reserve_amortized: str is NULL");
}

static void too_large_a_size_names_the_function_and_argument(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  char expected[160];
  snprintf(expected, sizeof(expected),
           "loom_tstring_resize_uninitialized: new_size: a string of %zu bytes "
           "is too large (at most %zu)",
           SIZE_MAX, SIZE_MAX >> 2);
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(&s, SIZE_MAX, NULL),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  snprintf(expected, sizeof(expected),
           "loom_tstring_reserve: capacity: a string of %zu bytes is too "
           "large (at most %zu)",
           SIZE_MAX, SIZE_MAX >> 2);
  LOOM_ASSERT_STATUS(loom_tstring_reserve(&s, SIZE_MAX),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, expected);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
}

static bool refuse_everything(size_t size, void* context) {
  (void)size;
  ++*(int*)context;
  return false;
}

static void failed_malloc_names_the_function_and_the_sizes(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  int refused = 0;
  const loom__tstring_allocation_gate_t gate = {
      .allow = refuse_everything,
      .context = &refused,
  };
  loom__tstring_set_allocation_gate(&gate);
  LOOM_ASSERT_STATUS(loom_tstring_copy(&s, kLong, 40),
                     LOOM_STATUS_RESOURCE_EXHAUSTED,
                     "loom_tstring_copy: out of memory for a string of 40 "
                     "bytes (a block of 48 bytes)");
  LOOM_ASSERT_STATUS(loom_tstring_reserve(&s, 100),
                     LOOM_STATUS_RESOURCE_EXHAUSTED,
                     "loom_tstring_reserve: out of memory for a string of 100 "
                     "bytes (a block of 112 bytes)");
  loom__tstring_set_allocation_gate(NULL);
  assert_int_equal(refused, 2);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(type_values_equal_loom_types),
      cmocka_unit_test(tf_strings_read_the_same_through_loom),
      cmocka_unit_test(loom_strings_read_the_same_through_tf),
      cmocka_unit_test(both_apis_write_the_same_small_bytes),
      cmocka_unit_test(both_apis_write_the_same_view_bytes),
      cmocka_unit_test(both_apis_write_the_same_large_header),
      cmocka_unit_test(loom_frees_a_large_tf_string),
      cmocka_unit_test(tf_frees_a_large_loom_string),
      cmocka_unit_test(string_init_gives_an_empty_small_string),
      cmocka_unit_test(string_copy_stores_short_text_inline),
      cmocka_unit_test(string_copy_stores_long_text_on_the_heap),
      cmocka_unit_test(string_assign_view_borrows_the_bytes),
      cmocka_unit_test(string_dealloc_frees_and_empties),
      cmocka_unit_test(init_gives_an_empty_small_string),
      cmocka_unit_test(dealloc_leaves_an_empty_small_string),
      cmocka_unit_test(offset_string_reads_its_bytes),
      cmocka_unit_test(mutable_pointer_of_a_small_string_is_inline),
      cmocka_unit_test(mutable_pointer_of_a_large_string_is_its_heap_block),
      cmocka_unit_test(mutable_pointer_turns_a_view_into_an_owned_copy),
      cmocka_unit_test(mutable_pointer_turns_a_short_view_into_a_small_copy),
      cmocka_unit_test(
          mutable_pointer_turns_an_offset_string_into_an_owned_copy),
      cmocka_unit_test(resize_uninitialized_grows_keeping_the_prefix),
      cmocka_unit_test(resize_uninitialized_shrinks_keeping_the_prefix),
      cmocka_unit_test(
          failed_resize_uninitialized_returns_null_and_keeps_the_string),
      cmocka_unit_test(resize_fills_new_bytes_with_the_char),
      cmocka_unit_test(resize_within_small_capacity_fills_new_bytes),
      cmocka_unit_test(resize_to_a_smaller_size_truncates_without_filling),
      cmocka_unit_test(failed_resize_returns_null_and_keeps_the_string),
      cmocka_unit_test(reserve_gives_at_least_the_capacity),
      cmocka_unit_test(reserve_within_small_capacity_keeps_a_small_string),
      cmocka_unit_test(failed_reserve_keeps_the_string),
      cmocka_unit_test(reserve_amortized_at_least_doubles_the_capacity),
      cmocka_unit_test(reserve_amortized_takes_a_request_beyond_double),
      cmocka_unit_test(reserve_amortized_within_capacity_does_nothing),
      cmocka_unit_test(assign_view_borrows_the_bytes),
      cmocka_unit_test(append_n_adds_the_bytes),
      cmocka_unit_test(append_n_of_nothing_changes_nothing),
      cmocka_unit_test(append_n_to_a_view_copies_first),
      cmocka_unit_test(append_adds_another_string),
      cmocka_unit_test(append_of_a_string_to_itself_doubles_it),
      cmocka_unit_test(copy_replaces_the_contents),
      cmocka_unit_test(failed_copy_keeps_the_string),
      cmocka_unit_test(assign_of_a_small_string_copies_it),
      cmocka_unit_test(assign_of_a_large_string_makes_a_separate_copy),
      cmocka_unit_test(assign_of_a_view_shares_the_bytes),
      cmocka_unit_test(assign_of_an_offset_string_views_its_bytes),
      cmocka_unit_test(move_of_a_large_string_transfers_the_heap_block),
      cmocka_unit_test(move_of_a_small_string_copies_it),
      cmocka_unit_test(every_string_allocation_failure_keeps_the_string),
      cmocka_unit_test(copy_lays_out_strings_as_the_inline_code_at_every_size),
      cmocka_unit_test(resizes_keep_grow_and_shrink_blocks_as_the_inline_code),
      cmocka_unit_test(reserves_and_appends_grow_as_the_inline_code),
      cmocka_unit_test(appending_byte_by_byte_doubles_as_the_inline_code),
      cmocka_unit_test(random_steps_stay_laid_out_as_the_inline_code),
      cmocka_unit_test(assign_across_the_boundary_gives_the_inline_layout),
      cmocka_unit_test(append_across_the_boundary_gives_the_inline_layout),
      cmocka_unit_test(move_across_the_boundary_gives_the_inline_layout),
      cmocka_unit_test(dealloc_of_a_view_leaves_it_as_the_inline_code_does),
      cmocka_unit_test(delete_tensor_frees_strings_the_inline_code_made),
      cmocka_unit_test(tensor_release_frees_strings_the_inline_code_made),
      cmocka_unit_test(inline_code_reads_grows_and_frees_strings_loom_made),
      cmocka_unit_test(new_tensor_deallocator_frees_strings_loom_made),
      cmocka_unit_test(eager_tile_copies_strings_the_inline_code_made),
      cmocka_unit_test(null_strings_are_ignored),
      cmocka_unit_test(reserve_amortized_rejects_a_null_string),
      cmocka_unit_test(too_large_a_size_names_the_function_and_argument),
      cmocka_unit_test(failed_malloc_names_the_function_and_the_sizes),
  };
  return cmocka_run_group_tests(tests, setup_text, NULL);
}
