// Checked size arithmetic: every result that does not fit int64_t (or is
// not a size) is refused, zero dims win over overflowing products, and the
// window sizes of convolutions and pools refuse strides, dilations and
// paddings whose arithmetic would wrap. The window sizes themselves are
// checked against PyTorch by the conformance cases of Conv2D and the pools.

#include <string.h>

#include "tensor/checked_size.h"
#include "test_support.h"

static void products_refuse_overflow_and_negative_dims(void** state) {
  (void)state;
  int64_t out = -7;
  int64_t big[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 6};
  assert_false(loom__size_product(big, 3, &out));
  int64_t negative[2] = {3, -1};
  assert_false(loom__size_product(negative, 2, &out));
  int64_t fits[3] = {INT64_MAX, 1, 1};
  assert_true(loom__size_product(fits, 3, &out));
  assert_true(out == INT64_MAX);
  assert_true(loom__size_product(NULL, 0, &out));
  assert_int_equal(out, 1);
}

static void a_zero_dim_wins_over_an_overflowing_prefix(void** state) {
  (void)state;
  int64_t dims[4] = {(int64_t)1 << 62, 4, 0, 9};
  int64_t out = -7;
  assert_true(loom__size_product(dims, 4, &out));
  assert_int_equal(out, 0);
  // ... but not over a negative dim after it.
  int64_t bad[3] = {0, 2, -3};
  assert_false(loom__size_product(bad, 3, &out));
}

static void sums_and_bytes_refuse_overflow(void** state) {
  (void)state;
  int64_t out;
  int64_t values[3] = {INT64_MAX - 1, 1, 1};
  assert_false(loom__size_sum(values, 3, &out));
  assert_true(loom__size_sum(values, 2, &out));
  assert_true(out == INT64_MAX);
  int64_t negative[2] = {5, -1};
  assert_false(loom__size_sum(negative, 2, &out));
  size_t bytes;
  assert_false(loom__size_bytes(INT64_MAX / 2, 4, &bytes));
  assert_false(loom__size_bytes(-1, 4, &bytes));
  assert_true(loom__size_bytes(INT64_MAX / 8, 8, &bytes));
  assert_false(loom__size_mul(INT64_MAX, 2, &out));
  assert_false(loom__size_add(INT64_MAX, 1, &out));
  assert_false(loom__size_sub(INT64_MIN, 1, &out));
}

static void windows_refuse_wrapping_arguments(void** state) {
  (void)state;
  int64_t size = -7, before = -7, extent;
  // A dilation of 2^62 on a window of 5 spans more than int64_t holds.
  assert_false(loom__window_extent(5, (int64_t)1 << 62, &extent));
  assert_false(loom__window_output_size(
      10, 5, (int64_t)1 << 62, 1, LOOM_WINDOW_VALID, 0, 0, &size, &before));
  // A stride of INT64_MAX: one window, not a wrapped sum.
  assert_true(loom__window_output_size(10, 3, 1, INT64_MAX, LOOM_WINDOW_VALID,
                                       0, 0, &size, &before));
  assert_int_equal(size, 1);
  assert_true(loom__window_output_size(10, 3, 1, INT64_MAX, LOOM_WINDOW_SAME, 0,
                                       0, &size, &before));
  assert_int_equal(size, 1);
  // Explicit paddings near INT64_MAX.
  assert_false(loom__window_output_size(10, 3, 1, 1, LOOM_WINDOW_EXPLICIT,
                                        INT64_MAX, 1, &size, &before));
  assert_false(loom__window_output_size(10, 3, 1, 1, LOOM_WINDOW_EXPLICIT, -1,
                                        0, &size, &before));
  // A window that does not fit at all.
  assert_false(loom__window_output_size(1, 3, 1, 1, LOOM_WINDOW_VALID, 0, 0,
                                        &size, &before));
  // Zero and negative arguments.
  assert_false(loom__window_output_size(10, 0, 1, 1, LOOM_WINDOW_VALID, 0, 0,
                                        &size, &before));
  assert_false(loom__window_output_size(10, 3, 1, 0, LOOM_WINDOW_VALID, 0, 0,
                                        &size, &before));
  assert_false(loom__window_output_size(-1, 3, 1, 1, LOOM_WINDOW_VALID, 0, 0,
                                        &size, &before));
}

static void overflow_errors_name_op_argument_and_values(void** state) {
  (void)state;
  int64_t dims[3] = {(int64_t)1 << 32, (int64_t)1 << 32, -1};
  char text[64];
  loom_status_t status = loom__size_overflow_error(
      "Reshape", "shape", "%s",
      loom__format_int64s(dims, 3, text, sizeof(text)));
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(
      loom_status_message(status),
      "Reshape: shape [4294967296, 4294967296, -1]: the size overflows"));
  loom_status_free(status);
  // A cut list ends in "...".
  char small[12];
  loom__format_int64s(dims, 3, small, sizeof(small));
  assert_string_equal(small, "[4294967...");
}

static void checked_products_give_the_product_or_an_error(void** state) {
  (void)state;
  int64_t dims[3] = {2, 3, 7}, product = 0;
  assert_null(
      loom__size_product_checked("Conv2D", "filter", dims, 3, &product));
  assert_int_equal(product, 42);
  assert_null(loom__size_product_checked("Conv2D", "filter", dims, 3, NULL));
  int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 1};
  product = 5;
  loom_status_t status =
      loom__size_product_checked("Conv2D", "filter", huge, 3, &product);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(loom_status_message(status),
                         "Conv2D: filter [1099511627776, 1099511627776, 1]: "
                         "the size overflows int64"));
  loom_status_free(status);
  assert_int_equal(product, 5);  // untouched on failure
  // The quoting form names the user's values, not the dims multiplied.
  int64_t multiples[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  status = loom__size_product_checked_quoting("Tile", "multiples", huge, 3,
                                              multiples, 2, NULL);
  assert_non_null(strstr(loom_status_message(status),
                         "Tile: multiples [1099511627776, 1099511627776]: "
                         "the size overflows int64"));
  loom_status_free(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(products_refuse_overflow_and_negative_dims),
      cmocka_unit_test(a_zero_dim_wins_over_an_overflowing_prefix),
      cmocka_unit_test(sums_and_bytes_refuse_overflow),
      cmocka_unit_test(windows_refuse_wrapping_arguments),
      cmocka_unit_test(overflow_errors_name_op_argument_and_values),
      cmocka_unit_test(checked_products_give_the_product_or_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
