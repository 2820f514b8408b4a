// loom_program_format_tensor: TFRT's text of tensors, f16 and bf16 values as
// their bits (expected bits from NumPy and PyTorch), unsigned dtypes by
// TFRT's names, more than 16 values ending as TFRT's `, ... ]`.

#include <string.h>

#include "loom/program_kernel.h"
#include "test_support.h"

static loom_tensor_t* dense(loom_dtype_t dtype, const int64_t* dims, int rank,
                            const void* data, size_t size) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(), dtype,
                                          &shape, &tensor));
  memcpy(loom_tensor_data(tensor), data, size);
  return tensor;
}

static void half_values_print_as_bits(void** state) {
  (void)state;
  // 1.0, -0.5, 65504, 1e-7 (a subnormal) in f16.
  const uint16_t bits[4] = {15360, 47104, 31743, 2};
  const int64_t dims[2] = {2, 2};
  loom_tensor_t* tensor = dense(LOOM_DTYPE_HALF, dims, 2, bits, sizeof(bits));
  char text[256];
  size_t length = loom_program_format_tensor(tensor, text, sizeof(text));
  const char* expected =
      "DenseHostTensor dtype = f16, shape = [2, 2], values = [fp16(15360), "
      "fp16(47104), fp16(31743), fp16(2)]";
  assert_string_equal(text, expected);
  assert_int_equal(length, strlen(expected));
  // The length without a buffer; a short buffer gets what fits.
  assert_int_equal(loom_program_format_tensor(tensor, NULL, 0), length);
  char small[8];
  assert_int_equal(loom_program_format_tensor(tensor, small, sizeof(small)),
                   length);
  assert_string_equal(small, "DenseHo");
  loom_tensor_release(tensor);
}

static void bf16_scalars_and_long_tensors(void** state) {
  (void)state;
  // 3.0 in bf16.
  const uint16_t three = 16448;
  const int64_t dims[1] = {3};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_BFLOAT16, &shape, &three, &scalar));
  char text[512];
  loom_program_format_tensor(scalar, text, sizeof(text));
  assert_string_equal(
      text, "ScalarHostTensor dtype = bf16, shape = [3], value = bf16(16448)");
  loom_tensor_release(scalar);
  // At most 16 values, then TFRT's ", ... ]".
  uint16_t many[20];
  for (int i = 0; i < 20; ++i) many[i] = (uint16_t)i;
  const int64_t twenty[1] = {20};
  loom_tensor_t* tensor =
      dense(LOOM_DTYPE_BFLOAT16, twenty, 1, many, sizeof(many));
  loom_program_format_tensor(tensor, text, sizeof(text));
  assert_non_null(strstr(text, "bf16(14), bf16(15), ... ]"));
  assert_null(strstr(text, "bf16(16)"));
  loom_tensor_release(tensor);
}

static void unsigned_dtypes_have_tfrt_names(void** state) {
  (void)state;
  const uint64_t values[2] = {2, UINT64_MAX};
  const int64_t dims[1] = {2};
  loom_tensor_t* tensor =
      dense(LOOM_DTYPE_UINT64, dims, 1, values, sizeof(values));
  char text[128];
  size_t length = loom_program_format_tensor(tensor, text, sizeof(text));
  const char* expected =
      "DenseHostTensor dtype = u64, shape = [2], values = [2, "
      "18446744073709551615]";
  assert_string_equal(text, expected);
  assert_int_equal(length, strlen(expected));
  assert_int_equal(loom_program_format_tensor(tensor, NULL, 0), length);
  char small[28];
  assert_int_equal(loom_program_format_tensor(tensor, small, sizeof(small)),
                   length);
  assert_string_equal(small, "DenseHostTensor dtype = u64");
  loom_tensor_release(tensor);
  const uint16_t seven = 7;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_UINT16, &shape, &seven, &scalar));
  loom_program_format_tensor(scalar, text, sizeof(text));
  assert_string_equal(text,
                      "ScalarHostTensor dtype = u16, shape = [2], value = 7");
  loom_tensor_release(scalar);
}

static void other_dtypes_print_as_loom_tensor_format(void** state) {
  (void)state;
  const float values[2] = {1.5f, -2.0f};
  const int64_t dims[1] = {2};
  loom_tensor_t* tensor =
      dense(LOOM_DTYPE_FLOAT, dims, 1, values, sizeof(values));
  char ours[128];
  char theirs[128];
  loom_program_format_tensor(tensor, ours, sizeof(ours));
  loom_tensor_format(tensor, theirs, sizeof(theirs));
  assert_string_equal(ours, theirs);
  loom_tensor_release(tensor);
  loom_program_format_tensor(NULL, ours, sizeof(ours));
  assert_string_equal(ours, "<null tensor>");
}

static void long_tensors_end_as_tfrt(void** state) {
  (void)state;
  float values[17];
  for (int i = 0; i < 17; ++i) values[i] = (float)i;
  const int64_t seventeen[1] = {17};
  loom_tensor_t* tensor =
      dense(LOOM_DTYPE_FLOAT, seventeen, 1, values, sizeof(values));
  char text[512];
  size_t length = loom_program_format_tensor(tensor, text, sizeof(text));
  const char* tail = "1.500000e+01, ... ]";
  assert_int_equal(length, strlen(text));
  assert_string_equal(text + length - strlen(tail), tail);
  assert_int_equal(loom_program_format_tensor(tensor, NULL, 0), length);
  loom_tensor_release(tensor);
  // Both TFRT changes at once: u8's name and the end.
  uint8_t bytes[20] = {0};
  const int64_t twenty[1] = {20};
  tensor = dense(LOOM_DTYPE_UINT8, twenty, 1, bytes, sizeof(bytes));
  length = loom_program_format_tensor(tensor, text, sizeof(text));
  assert_non_null(strstr(text, "DenseHostTensor dtype = u8, shape = [20]"));
  assert_string_equal(text + length - 8, "0, ... ]");
  loom_tensor_release(tensor);
  // Exactly 16: no ellipsis.
  const int64_t sixteen[1] = {16};
  tensor = dense(LOOM_DTYPE_FLOAT, sixteen, 1, values, 16 * sizeof(float));
  loom_program_format_tensor(tensor, text, sizeof(text));
  assert_null(strstr(text, "..."));
  loom_tensor_release(tensor);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(half_values_print_as_bits),
      cmocka_unit_test(bf16_scalars_and_long_tensors),
      cmocka_unit_test(unsigned_dtypes_have_tfrt_names),
      cmocka_unit_test(other_dtypes_print_as_loom_tensor_format),
      cmocka_unit_test(long_tensors_end_as_tfrt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
