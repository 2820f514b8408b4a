// TF_TString functions: TensorFlow's string API over loom_tstring_t.

#include "loom/tstring.h"
#include "tensorflow/c/tf_tstring.h"
#include "test_support.h"

static void tf_and_loom_strings_share_one_layout(void** state) {
  (void)state;
  assert_int_equal(sizeof(TF_TString), 24);
  TF_TString s;
  TF_StringInit(&s);
  TF_StringCopy(&s, "shared layout, long enough", 26);
  const loom_tstring_t* same = (const loom_tstring_t*)&s;
  assert_int_equal(loom_tstring_type(same), LOOM_TSTRING_LARGE);
  assert_int_equal(loom_tstring_size(same), 26);
  assert_ptr_equal(loom_tstring_data(same), TF_StringGetDataPointer(&s));
  assert_int_equal((int)TF_TSTR_LARGE, (int)LOOM_TSTRING_LARGE);
  TF_StringDealloc(&s);
}

static void string_functions_report_type_size_capacity(void** state) {
  (void)state;
  TF_TString s;
  TF_StringInit(&s);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_SMALL);
  assert_int_equal(TF_StringGetSize(&s), 0);
  assert_int_equal(TF_StringGetCapacity(&s), TF_TString_SmallCapacity);
  TF_StringCopy(&s, "hi", 2);
  assert_string_equal(TF_StringGetDataPointer(&s), "hi");
  TF_StringAssignView(&s, "viewed text", 11);
  assert_int_equal(TF_StringGetType(&s), TF_TSTR_VIEW);
  assert_int_equal(TF_StringGetSize(&s), 11);
  assert_int_equal(TF_StringGetCapacity(&s), 0);
  TF_StringDealloc(&s);
}

static void mutable_pointer_turns_a_view_into_a_copy(void** state) {
  (void)state;
  static const char text[] = "read-only source bytes here";
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_AssignView(&s, text, sizeof(text) - 1);
  char* data = TF_TString_GetMutableDataPointer(&s);
  assert_ptr_not_equal(data, text);
  assert_int_equal(TF_TString_GetType(&s), TF_TSTR_LARGE);
  data[0] = 'R';
  assert_int_equal(text[0], 'r');
  assert_memory_equal(TF_TString_GetDataPointer(&s), "Read-only", 9);
  TF_TString_Dealloc(&s);
}

static void resize_fills_new_bytes(void** state) {
  (void)state;
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_Copy(&s, "ab", 2);
  char* data = TF_TString_Resize(&s, 30, 'z');
  assert_int_equal(TF_TString_GetSize(&s), 30);
  assert_memory_equal(data, "abzzzz", 6);
  assert_int_equal(data[29], 'z');
  assert_int_equal(data[30], '\0');
  data = TF_TString_ResizeUninitialized(&s, 1);
  assert_string_equal(data, "a");
  TF_TString_Dealloc(&s);
}

static void reserve_and_append_keep_contents(void** state) {
  (void)state;
  TF_TString s;
  TF_TString_Init(&s);
  TF_TString_Copy(&s, "start", 5);
  TF_TString_Reserve(&s, 64);
  assert_true(TF_TString_GetCapacity(&s) >= 64);
  size_t capacity = TF_TString_GetCapacity(&s);
  TF_TString_ReserveAmortized(&s, capacity + 1);
  assert_true(TF_TString_GetCapacity(&s) >= 2 * capacity);  // doubled
  TF_TString_AppendN(&s, "-middle", 7);
  TF_TString other;
  TF_TString_Init(&other);
  TF_TString_Copy(&other, "-end", 4);
  TF_TString_Append(&s, &other);
  assert_string_equal(TF_TString_GetDataPointer(&s), "start-middle-end");
  TF_TString_Dealloc(&other);
  TF_TString_Dealloc(&s);
}

static void assign_and_move_follow_tensorflow(void** state) {
  (void)state;
  TF_TString large, copy, moved;
  TF_TString_Init(&large);
  TF_TString_Init(&copy);
  TF_TString_Init(&moved);
  TF_TString_Copy(&large, "a large string for assigning", 28);
  TF_TString_Assign(&copy, &large);
  assert_ptr_not_equal(TF_TString_GetDataPointer(&copy),
                       TF_TString_GetDataPointer(&large));
  assert_string_equal(TF_TString_GetDataPointer(&copy),
                      TF_TString_GetDataPointer(&large));
  const char* heap = TF_TString_GetDataPointer(&large);
  TF_TString_Move(&moved, &large);
  assert_ptr_equal(TF_TString_GetDataPointer(&moved), heap);
  assert_int_equal(TF_TString_GetSize(&large), 0);
  TF_TString_Dealloc(&copy);
  TF_TString_Dealloc(&moved);
  TF_TString_Dealloc(&large);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tf_and_loom_strings_share_one_layout),
      cmocka_unit_test(string_functions_report_type_size_capacity),
      cmocka_unit_test(mutable_pointer_turns_a_view_into_a_copy),
      cmocka_unit_test(resize_fills_new_bytes),
      cmocka_unit_test(reserve_and_append_keep_contents),
      cmocka_unit_test(assign_and_move_follow_tensorflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
