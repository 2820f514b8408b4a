// TF_TString-compatible strings: representations, transitions and copies.

#include "loom/tstring.h"
#include "test_support.h"

static void new_string_is_empty_and_small(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  assert_int_equal(sizeof(loom_tstring_t), 24);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
  assert_int_equal(loom_tstring_capacity(&s), LOOM_TSTRING_SMALL_CAPACITY);
  assert_string_equal(loom_tstring_data(&s), "");
  loom_tstring_deinitialize(&s);
}

static void up_to_22_bytes_stay_inline(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  const char* text = "exactly twenty-two ch!";
  assert_int_equal(strlen(text), 22);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, text, 22));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 22);
  assert_string_equal(loom_tstring_data(&s), text);
  // The small representation lives inside the 24 bytes.
  assert_true(loom_tstring_data(&s) > (const char*)&s &&
              loom_tstring_data(&s) < (const char*)&s + 24);
  loom_tstring_deinitialize(&s);
}

static void longer_strings_go_to_the_heap(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  const char* text = "twenty-three characters";
  assert_int_equal(strlen(text), 23);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, text, 23));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_int_equal(loom_tstring_size(&s), 23);
  assert_true(loom_tstring_capacity(&s) >= 23);
  // Capacities are 16-byte multiples minus the terminating NUL.
  assert_int_equal((loom_tstring_capacity(&s) + 1) % 16, 0);
  assert_string_equal(loom_tstring_data(&s), text);
  loom_tstring_deinitialize(&s);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&s), 0);
}

static void views_borrow_their_bytes(void** state) {
  (void)state;
  static const char text[] = "borrowed bytes that are long enough";
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  loom_tstring_assign_view(&s, text, sizeof(text) - 1);
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&s), text);
  assert_int_equal(loom_tstring_size(&s), sizeof(text) - 1);
  assert_int_equal(loom_tstring_capacity(&s), 0);
  loom_tstring_deinitialize(&s);  // frees nothing
}

// An OFFSET string as TensorFlow lays one out: bytes after the struct.
typedef struct offset_block_t {
  loom_tstring_t string;
  char bytes[40];
} offset_block_t;

static void make_offset(offset_block_t* block, const char* text) {
  size_t size = strlen(text);
  memcpy(block->bytes, text, size);
  block->string.u.offset.size = (uint32_t)(size << 2 | LOOM_TSTRING_OFFSET);
  block->string.u.offset.offset = (uint32_t)offsetof(offset_block_t, bytes);
  block->string.u.offset.count = 1;
}

static void offsets_point_past_the_string(void** state) {
  (void)state;
  offset_block_t block;
  memset(&block, 0, sizeof(block));
  make_offset(&block, "offset bytes");
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_OFFSET);
  assert_int_equal(loom_tstring_size(&block.string), 12);
  assert_ptr_equal(loom_tstring_data(&block.string), block.bytes);
  assert_int_equal(loom_tstring_capacity(&block.string), 0);

  // Writing to it makes an owned copy first.
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&block.string, 6, &data));
  assert_int_equal(loom_tstring_type(&block.string), LOOM_TSTRING_SMALL);
  assert_memory_equal(loom_tstring_data(&block.string), "offset", 6);
  loom_tstring_deinitialize(&block.string);
}

static void assign_copies_owned_and_shares_views(void** state) {
  (void)state;
  loom_tstring_t small, large, view, copy;
  loom_tstring_initialize(&small);
  loom_tstring_initialize(&large);
  loom_tstring_initialize(&view);
  loom_tstring_initialize(&copy);
  LOOM_ASSERT_OK(loom_tstring_copy(&small, "tiny", 4));
  LOOM_ASSERT_OK(
      loom_tstring_copy(&large, "a string that is fairly large", 29));
  loom_tstring_assign_view(&view, "viewed", 6);

  LOOM_ASSERT_OK(loom_tstring_assign(&copy, &small));
  assert_int_equal(loom_tstring_type(&copy), LOOM_TSTRING_SMALL);
  assert_string_equal(loom_tstring_data(&copy), "tiny");
  LOOM_ASSERT_OK(loom_tstring_assign(&copy, &large));
  assert_int_equal(loom_tstring_type(&copy), LOOM_TSTRING_LARGE);
  assert_ptr_not_equal(loom_tstring_data(&copy), loom_tstring_data(&large));
  assert_string_equal(loom_tstring_data(&copy), loom_tstring_data(&large));
  LOOM_ASSERT_OK(loom_tstring_assign(&copy, &view));
  assert_int_equal(loom_tstring_type(&copy), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&copy), loom_tstring_data(&view));
  LOOM_ASSERT_OK(loom_tstring_assign(&copy, &copy));

  offset_block_t block;
  memset(&block, 0, sizeof(block));
  make_offset(&block, "from offset");
  LOOM_ASSERT_OK(loom_tstring_assign(&copy, &block.string));
  assert_int_equal(loom_tstring_type(&copy), LOOM_TSTRING_VIEW);
  assert_ptr_equal(loom_tstring_data(&copy), block.bytes);

  loom_tstring_deinitialize(&small);
  loom_tstring_deinitialize(&large);
  loom_tstring_deinitialize(&view);
  loom_tstring_deinitialize(&copy);
}

static void move_takes_heap_memory(void** state) {
  (void)state;
  loom_tstring_t source, destination;
  loom_tstring_initialize(&source);
  loom_tstring_initialize(&destination);
  LOOM_ASSERT_OK(
      loom_tstring_copy(&source, "moved string on the heap here", 29));
  const char* heap = loom_tstring_data(&source);
  loom_tstring_move(&destination, &source);
  assert_ptr_equal(loom_tstring_data(&destination), heap);
  assert_int_equal(loom_tstring_type(&source), LOOM_TSTRING_SMALL);
  assert_int_equal(loom_tstring_size(&source), 0);
  loom_tstring_deinitialize(&destination);
}

static void append_grows_amortised(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  char expected[1000];
  for (int i = 0; i < 100; ++i) {
    LOOM_ASSERT_OK(loom_tstring_append(&s, "0123456789", 10));
    memcpy(expected + i * 10, "0123456789", 10);
  }
  assert_int_equal(loom_tstring_size(&s), 1000);
  assert_memory_equal(loom_tstring_data(&s), expected, 1000);
  assert_int_equal(loom_tstring_data(&s)[1000], '\0');
  LOOM_ASSERT_OK(loom_tstring_append(&s, NULL, 0));
  loom_tstring_deinitialize(&s);
}

static void resize_keeps_the_prefix(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, "abcdef", 6));
  char* data = NULL;
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 40, &data));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_memory_equal(data, "abcdef", 6);
  LOOM_ASSERT_OK(loom_tstring_resize_uninitialized(&s, 3, &data));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  assert_string_equal(loom_tstring_data(&s), "abc");
  loom_tstring_deinitialize(&s);
}

static void reserve_keeps_contents(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, "keep", 4));
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 10));  // fits inline: no change
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_SMALL);
  LOOM_ASSERT_OK(loom_tstring_reserve(&s, 100));
  assert_int_equal(loom_tstring_type(&s), LOOM_TSTRING_LARGE);
  assert_true(loom_tstring_capacity(&s) >= 100);
  assert_string_equal(loom_tstring_data(&s), "keep");
  loom_tstring_deinitialize(&s);
}

static void copy_from_itself_is_safe(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_OK(loom_tstring_copy(&s, "a self referencing long string", 30));
  LOOM_ASSERT_OK(loom_tstring_copy(&s, loom_tstring_data(&s) + 2, 4));
  assert_string_equal(loom_tstring_data(&s), "self");
  loom_tstring_deinitialize(&s);
}

static void null_arguments_are_rejected(void** state) {
  (void)state;
  loom_tstring_t s;
  loom_tstring_initialize(&s);
  LOOM_ASSERT_STATUS(loom_tstring_copy(NULL, "a", 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "str is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_copy(&s, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "data is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_append(&s, NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "data is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_assign(&s, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "src is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(NULL, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "str is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_reserve(NULL, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "str is NULL");
  LOOM_ASSERT_STATUS(loom_tstring_resize_uninitialized(&s, SIZE_MAX / 2, NULL),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "is too large");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_string_is_empty_and_small),
      cmocka_unit_test(up_to_22_bytes_stay_inline),
      cmocka_unit_test(longer_strings_go_to_the_heap),
      cmocka_unit_test(views_borrow_their_bytes),
      cmocka_unit_test(offsets_point_past_the_string),
      cmocka_unit_test(assign_copies_owned_and_shares_views),
      cmocka_unit_test(move_takes_heap_memory),
      cmocka_unit_test(append_grows_amortised),
      cmocka_unit_test(resize_keeps_the_prefix),
      cmocka_unit_test(reserve_keeps_contents),
      cmocka_unit_test(copy_from_itself_is_safe),
      cmocka_unit_test(null_arguments_are_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
