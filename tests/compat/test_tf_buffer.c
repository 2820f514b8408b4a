// TF_Buffer: copies, custom deallocators, plain copies of the struct.

#include "tensorflow/c/tf_buffer.h"
#include "test_support.h"

static void new_buffer_is_empty(void** state) {
  (void)state;
  TF_Buffer* buffer = TF_NewBuffer();
  assert_non_null(buffer);
  assert_null(buffer->data);
  assert_int_equal(buffer->length, 0);
  assert_null(buffer->data_deallocator);
  TF_DeleteBuffer(buffer);
  TF_DeleteBuffer(NULL);
}

static void buffer_from_string_owns_a_copy(void** state) {
  (void)state;
  char proto[5] = {1, 2, 0, 4, 5};
  TF_Buffer* buffer = TF_NewBufferFromString(proto, sizeof(proto));
  assert_non_null(buffer);
  assert_ptr_not_equal(buffer->data, proto);
  assert_int_equal(buffer->length, sizeof(proto));
  assert_memory_equal(buffer->data, proto, sizeof(proto));
  proto[0] = 9;
  assert_int_equal(((const char*)buffer->data)[0], 1);
  TF_DeleteBuffer(buffer);  // LeakSanitizer checks the copy is freed
  buffer = TF_NewBufferFromString(NULL, 0);
  assert_non_null(buffer);
  assert_int_equal(buffer->length, 0);
  TF_DeleteBuffer(buffer);
  assert_null(TF_NewBufferFromString(NULL, 3));
}

static int g_deallocations = 0;
static const void* g_data = NULL;
static size_t g_length = 0;

static void deallocate(void* data, size_t length) {
  g_deallocations++;
  g_data = data;
  g_length = length;
}

static void delete_calls_the_deallocator_once(void** state) {
  (void)state;
  static char block[16];
  TF_Buffer* buffer = TF_NewBuffer();
  buffer->data = block;
  buffer->length = sizeof(block);
  buffer->data_deallocator = deallocate;
  g_deallocations = 0;
  TF_DeleteBuffer(buffer);
  assert_int_equal(g_deallocations, 1);
  assert_ptr_equal(g_data, block);
  assert_int_equal(g_length, sizeof(block));
}

static void get_buffer_copies_the_fields(void** state) {
  (void)state;
  TF_Buffer* buffer = TF_NewBufferFromString("abc", 3);
  TF_Buffer copy = TF_GetBuffer(buffer);
  assert_ptr_equal(copy.data, buffer->data);
  assert_int_equal(copy.length, 3);
  assert_ptr_equal(copy.data_deallocator, buffer->data_deallocator);
  TF_DeleteBuffer(buffer);
  TF_Buffer empty = TF_GetBuffer(NULL);
  assert_null(empty.data);
  assert_int_equal(empty.length, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_buffer_is_empty),
      cmocka_unit_test(buffer_from_string_owns_a_copy),
      cmocka_unit_test(delete_calls_the_deallocator_once),
      cmocka_unit_test(get_buffer_copies_the_fields),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
