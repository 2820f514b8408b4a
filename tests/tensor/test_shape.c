// Inline shapes: construction, element counts, comparisons, printing.

#include "loom/shape.h"
#include "loom/tensor_metadata.h"
#include "test_support.h"

static loom_shape_t make(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

static void initialize_copies_dims(void** state) {
  (void)state;
  int64_t dims[3] = {2, 3, 4};
  loom_shape_t shape = make(dims, 3);
  assert_int_equal(shape.rank, 3);
  assert_memory_equal(shape.dims, dims, sizeof(dims));
  assert_true(loom_shape_is_fully_defined(&shape));
  assert_int_equal(loom_shape_num_elements(&shape), 2 * 3 * 4);
}

static void invalid_ranks_and_dims_are_rejected(void** state) {
  (void)state;
  loom_shape_t shape;
  int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, 9),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape rank 9 is outside [0, 8]");
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, dims, -1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape rank -1 is outside [0, 8]");
  int64_t bad[2] = {3, -2};
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, bad, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "shape dimension 1 is -2; dimensions must be >= 0 or -1 "
                     "(unknown)");
  LOOM_ASSERT_STATUS(loom_shape_initialize(&shape, NULL, 2),
                     LOOM_STATUS_INVALID_ARGUMENT, "dims is NULL");
  LOOM_ASSERT_STATUS(loom_shape_initialize(NULL, dims, 1),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_shape is NULL");
}

static void scalar_has_one_element(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  assert_int_equal(scalar.rank, 0);
  assert_int_equal(loom_shape_num_elements(&scalar), 1);
  loom_shape_t also = make(NULL, 0);
  assert_true(loom_shape_equal(&scalar, &also));
}

static void empty_dimension_gives_zero_elements(void** state) {
  (void)state;
  int64_t dims[3] = {4, 0, 7};
  loom_shape_t shape = make(dims, 3);
  assert_int_equal(loom_shape_num_elements(&shape), 0);
}

static void unknown_parts_have_no_element_count(void** state) {
  (void)state;
  int64_t dims[2] = {-1, 3};
  loom_shape_t partial = make(dims, 2);
  assert_false(loom_shape_is_fully_defined(&partial));
  assert_int_equal(loom_shape_num_elements(&partial), -1);
  loom_shape_t unknown = loom_shape_unknown();
  assert_int_equal(unknown.rank, LOOM_UNKNOWN_RANK);
  assert_false(loom_shape_is_fully_defined(&unknown));
  assert_int_equal(loom_shape_num_elements(&unknown), -1);
}

static void overflowing_element_count_is_minus_one(void** state) {
  (void)state;
  int64_t dims[3] = {INT64_MAX / 2, 3, 5};
  loom_shape_t shape = make(dims, 3);
  assert_int_equal(loom_shape_num_elements(&shape), -1);
}

static void equality_and_compatibility(void** state) {
  (void)state;
  int64_t a_dims[2] = {2, 3};
  int64_t b_dims[2] = {2, -1};
  int64_t c_dims[2] = {2, 4};
  int64_t d_dims[3] = {2, 3, 1};
  loom_shape_t a = make(a_dims, 2), b = make(b_dims, 2), c = make(c_dims, 2),
               d = make(d_dims, 3), unknown = loom_shape_unknown();
  assert_true(loom_shape_equal(&a, &a));
  assert_false(loom_shape_equal(&a, &b));
  assert_true(loom_shape_equal(&unknown, &unknown));
  assert_true(loom_shape_is_compatible(&a, &b));
  assert_false(loom_shape_is_compatible(&a, &c));
  assert_false(loom_shape_is_compatible(&a, &d));
  assert_true(loom_shape_is_compatible(&a, &unknown));
  assert_true(loom_shape_is_compatible(&unknown, &d));
}

static void format_prints_tfrt_style(void** state) {
  (void)state;
  char text[64];
  int64_t dims[2] = {2, 3};
  loom_shape_t shape = make(dims, 2);
  assert_int_equal(loom_shape_format(&shape, text, sizeof(text)), 6);
  assert_string_equal(text, "[2, 3]");
  int64_t partial_dims[2] = {-1, 3};
  loom_shape_t partial = make(partial_dims, 2);
  loom_shape_format(&partial, text, sizeof(text));
  assert_string_equal(text, "[?, 3]");
  loom_shape_t scalar = loom_shape_scalar();
  loom_shape_format(&scalar, text, sizeof(text));
  assert_string_equal(text, "[]");
  loom_shape_t unknown = loom_shape_unknown();
  loom_shape_format(&unknown, text, sizeof(text));
  assert_string_equal(text, "<unknown>");
  char small[4];
  assert_int_equal(loom_shape_format(&shape, small, sizeof(small)), 6);
  assert_string_equal(small, "[2,");
}

static void metadata_compares_and_prints(void** state) {
  (void)state;
  int64_t dims[1] = {5};
  loom_tensor_metadata_t a = {LOOM_DTYPE_FLOAT, make(dims, 1)};
  loom_tensor_metadata_t b = {LOOM_DTYPE_INT32, make(dims, 1)};
  assert_true(loom_tensor_metadata_equal(&a, &a));
  assert_false(loom_tensor_metadata_equal(&a, &b));
  char text[64];
  loom_tensor_metadata_format(&a, text, sizeof(text));
  assert_string_equal(text, "f32 [5]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(initialize_copies_dims),
      cmocka_unit_test(invalid_ranks_and_dims_are_rejected),
      cmocka_unit_test(scalar_has_one_element),
      cmocka_unit_test(empty_dimension_gives_zero_elements),
      cmocka_unit_test(unknown_parts_have_no_element_count),
      cmocka_unit_test(overflowing_element_count_is_minus_one),
      cmocka_unit_test(equality_and_compatibility),
      cmocka_unit_test(format_prints_tfrt_style),
      cmocka_unit_test(metadata_compares_and_prints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
