// Host tensors: dense, scalar and string kinds, sharing, forwarding,
// reshapes, bitcasts and allocation failures.

#include "loom/tensor.h"
#include "test_support.h"

static loom_shape_t shape_of(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

static void dense_tensor_is_aligned_and_sized(void** state) {
  (void)state;
  int64_t dims[2] = {3, 5};
  loom_shape_t shape = shape_of(dims, 2);
  const loom_dtype_t kTypes[] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                                 LOOM_DTYPE_INT8, LOOM_DTYPE_COMPLEX128,
                                 LOOM_DTYPE_BOOL};
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i) {
    loom_tensor_t* tensor = NULL;
    LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(), kTypes[i],
                                            &shape, &tensor));
    assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_DENSE);
    assert_int_equal(loom_tensor_dtype(tensor), kTypes[i]);
    assert_true(loom_shape_equal(loom_tensor_shape(tensor), &shape));
    assert_int_equal(loom_tensor_num_elements(tensor), 15);
    assert_int_equal(loom_tensor_byte_size(tensor),
                     15 * loom_dtype_size(kTypes[i]));
    assert_true(loom_tensor_is_aligned(tensor));
    assert_int_equal((uintptr_t)loom_tensor_data(tensor) % 64, 0);
    assert_non_null(loom_tensor_buffer(tensor));
    memset(loom_tensor_data(tensor), 1, loom_tensor_byte_size(tensor));
    loom_tensor_release(tensor);
  }
}

static void rank_zero_and_empty_tensors(void** state) {
  (void)state;
  loom_tensor_t* scalar = NULL;
  loom_shape_t rank0 = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT64, &rank0, &scalar));
  assert_int_equal(loom_tensor_num_elements(scalar), 1);
  assert_int_equal(loom_tensor_byte_size(scalar), sizeof(int64_t));
  loom_tensor_release(scalar);
  int64_t dims[2] = {0, 7};
  loom_shape_t empty = shape_of(dims, 2);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &empty, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), 0);
  assert_int_equal(loom_tensor_byte_size(tensor), 0);
  loom_tensor_release(tensor);
}

static void dense_creation_rejects_bad_arguments(void** state) {
  (void)state;
  int64_t dims[1] = {4};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_STRING,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "dtype string (7) has no fixed element size");
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_RESOURCE,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "dtype resource (20) has no fixed element size");
  int64_t partial_dims[1] = {-1};
  loom_shape_t partial = shape_of(partial_dims, 1);
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                               &partial, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, "shape [?] is not fully defined");
  LOOM_ASSERT_STATUS(loom_tensor_create_dense(loom_allocator_system(),
                                              LOOM_DTYPE_FLOAT, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT, "shape is NULL");
  LOOM_ASSERT_STATUS(loom_tensor_create_dense(loom_allocator_system(),
                                              LOOM_DTYPE_FLOAT, &shape, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_tensor is NULL");
  int64_t huge_dims[2] = {INT64_MAX / 4, 2};
  loom_shape_t huge = shape_of(huge_dims, 2);
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_DOUBLE,
                               &huge, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, "overflow");
  assert_null(tensor);
}

static void tensors_share_a_buffer(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 64, 0, &buffer));
  int64_t dims[1] = {4};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t *first = NULL, *second = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, &first));
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, buffer, 16, &second));
  loom_buffer_release(buffer);
  assert_ptr_equal((char*)loom_tensor_data(first) + 16,
                   loom_tensor_data(second));
  assert_ptr_equal(loom_tensor_buffer(first), loom_tensor_buffer(second));
  assert_false(loom_tensor_is_forwardable(first));  // the buffer is shared
  loom_tensor_release(second);
  assert_true(loom_tensor_is_forwardable(first));
  loom_tensor_release(first);
}

static void too_small_buffer_names_both_sizes(void** state) {
  (void)state;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_allocate(loom_allocator_system(), 10, 0, &buffer));
  int64_t dims[1] = {3};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_create_dense_in_buffer(
                         loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape,
                         buffer, 0, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "a float tensor of shape [3] needs 12 bytes, the buffer "
                     "has 10 from offset 0");
  LOOM_ASSERT_STATUS(loom_tensor_create_dense_in_buffer(loom_allocator_system(),
                                                        LOOM_DTYPE_INT8, &shape,
                                                        buffer, 11, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "byte offset 11 is past the end of a 10-byte buffer");
  LOOM_ASSERT_STATUS(loom_tensor_create_dense_in_buffer(
                         loom_allocator_system(), LOOM_DTYPE_STRING, &shape,
                         buffer, 0, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "cannot back a dense tensor");
  // Types without a fixed size cover the rest of the buffer.
  loom_shape_t scalar = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_RESOURCE, &scalar, buffer, 4,
      &tensor));
  assert_int_equal(loom_tensor_byte_size(tensor), 6);
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void scalar_tensor_expands_to_every_element(void** state) {
  (void)state;
  int64_t dims[2] = {2, 3};
  loom_shape_t shape = shape_of(dims, 2);
  double value = -2.5;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_DOUBLE, &shape, &value, &scalar));
  assert_int_equal(loom_tensor_kind(scalar), LOOM_TENSOR_SCALAR);
  assert_int_equal(loom_tensor_num_elements(scalar), 6);
  assert_int_equal(loom_tensor_byte_size(scalar), sizeof(double));
  assert_null(loom_tensor_buffer(scalar));
  assert_true(*(double*)loom_tensor_data(scalar) == value);
  assert_false(loom_tensor_is_forwardable(scalar));

  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_system(), scalar, &dense));
  assert_int_equal(loom_tensor_kind(dense), LOOM_TENSOR_DENSE);
  const double* data = loom_tensor_data(dense);
  for (int i = 0; i < 6; ++i) assert_true(data[i] == value);
  loom_tensor_release(dense);
  loom_tensor_release(scalar);

  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_STRING,
                                &shape, &value, &scalar),
      LOOM_STATUS_INVALID_ARGUMENT, "no fixed element size");
  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                &shape, NULL, &scalar),
      LOOM_STATUS_INVALID_ARGUMENT, "value is NULL");
}

static void converting_dense_returns_the_same_tensor(void** state) {
  (void)state;
  int64_t dims[1] = {2};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_system(), tensor, &dense));
  assert_ptr_equal(dense, tensor);
  loom_tensor_release(dense);
  loom_tensor_release(tensor);
}

static void string_tensor_elements_start_empty(void** state) {
  (void)state;
  int64_t dims[1] = {3};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_system(), &shape, &tensor));
  assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_STRING);
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_STRING);
  assert_int_equal(loom_tensor_byte_size(tensor), 3 * sizeof(loom_tstring_t));
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(loom_tstring_size(loom_tensor_string_at(tensor, i)), 0);
  }
  // Large strings are freed with the tensor (LeakSanitizer checks).
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 1),
                                   "a string long enough for the heap", 33));
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 2), "x", 1));
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 1)),
                      "a string long enough for the heap");
  assert_null(loom_tensor_string_at(tensor, 3));
  assert_null(loom_tensor_string_at(tensor, -1));
  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_convert_to_dense(loom_allocator_system(), tensor, &dense),
      LOOM_STATUS_INVALID_ARGUMENT, "a string tensor has no dense form");
  loom_tensor_release(tensor);
}

static void string_tensor_over_caller_elements(void** state) {
  (void)state;
  static loom_tstring_t elements[2];
  loom_tstring_initialize(&elements[0]);
  loom_tstring_initialize(&elements[1]);
  loom_tstring_assign_view(&elements[0], "a", 1);
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), elements,
                                  sizeof(elements), NULL, NULL, &buffer));
  int64_t dims[1] = {2};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_string_in_buffer(loom_allocator_system(),
                                                     &shape, buffer, &tensor));
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 0)), "a");
  loom_tensor_release(tensor);
  int64_t three[1] = {3};
  loom_shape_t too_many = shape_of(three, 1);
  LOOM_ASSERT_STATUS(loom_tensor_create_string_in_buffer(
                         loom_allocator_system(), &too_many, buffer, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "3 strings need 72 bytes, the buffer has 48");
  loom_buffer_release(buffer);
}

static void forwardable_only_when_unshared_and_owned(void** state) {
  (void)state;
  int64_t dims[1] = {8};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_retain(tensor);
  assert_false(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);

  static float outside[8];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), outside,
                                  sizeof(outside), NULL, NULL, &buffer));
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, &tensor));
  loom_buffer_release(buffer);
  assert_false(loom_tensor_is_forwardable(tensor));  // caller memory
  loom_tensor_release(tensor);
}

static void set_shape_keeps_the_element_count(void** state) {
  (void)state;
  int64_t dims[2] = {2, 6};
  loom_shape_t shape = shape_of(dims, 2);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT16, &shape, &tensor));
  int64_t new_dims[3] = {3, 2, 2};
  loom_shape_t reshaped = shape_of(new_dims, 3);
  LOOM_ASSERT_OK(loom_tensor_set_shape(tensor, &reshaped));
  assert_true(loom_shape_equal(loom_tensor_shape(tensor), &reshaped));
  int64_t bad_dims[1] = {5};
  loom_shape_t bad = shape_of(bad_dims, 1);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, &bad),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "cannot reshape a tensor of shape [3, 2, 2] (12 elements) "
                     "to [5] (5 elements)");
  loom_tensor_retain(tensor);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, &shape),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "the tensor is shared; only its sole owner may reshape");
  loom_tensor_release(tensor);
  loom_tensor_release(tensor);
}

static void bitcast_shares_the_buffer_with_a_new_type(void** state) {
  (void)state;
  int64_t dims[1] = {4};
  loom_shape_t shape = shape_of(dims, 1);
  loom_tensor_t *source = NULL, *target = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &source));
  float* values = loom_tensor_data(source);
  for (int i = 0; i < 4; ++i) values[i] = (float)i + 0.5f;
  loom_shape_t scalar = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT8, &scalar, &target));
  int64_t new_dims[2] = {2, 2};
  loom_shape_t new_shape = shape_of(new_dims, 2);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_INT32, &new_shape));
  assert_ptr_equal(loom_tensor_data(target), loom_tensor_data(source));
  assert_int_equal(loom_tensor_dtype(target), LOOM_DTYPE_INT32);
  assert_true(loom_shape_equal(loom_tensor_shape(target), &new_shape));
  int32_t bits;
  memcpy(&bits, &values[1], sizeof(bits));
  assert_int_equal(((int32_t*)loom_tensor_data(target))[1], bits);

  int64_t three[1] = {3};
  loom_shape_t wrong = shape_of(three, 1);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_FLOAT, &wrong),
      LOOM_STATUS_INVALID_ARGUMENT,
      "input tensor (16 bytes) is not compatible with output dtype float and "
      "shape [3] (12 bytes)");
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_STRING, &new_shape),
      LOOM_STATUS_INVALID_ARGUMENT, "output tensor has a zero-sized data type");
  loom_tensor_release(source);
  loom_tensor_release(target);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

static loom_status_t make_every_kind(loom_allocator_t allocator,
                                     void* context) {
  (void)context;
  int64_t dims[2] = {4, 4};
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t *dense = NULL, *scalar = NULL, *expanded = NULL,
                *strings = NULL, *view = NULL;
  float one = 1.0f;
  loom_status_t status =
      loom_tensor_create_dense(allocator, LOOM_DTYPE_FLOAT, &shape, &dense);
  if (!status) {
    status =
        loom_tensor_create_dense_in_buffer(allocator, LOOM_DTYPE_INT32, &shape,
                                           loom_tensor_buffer(dense), 0, &view);
  }
  if (!status) {
    status = loom_tensor_create_scalar(allocator, LOOM_DTYPE_FLOAT, &shape,
                                       &one, &scalar);
  }
  if (!status) {
    status = loom_tensor_convert_to_dense(allocator, scalar, &expanded);
  }
  if (!status) status = loom_tensor_create_string(allocator, &shape, &strings);
  if (!status) {
    status = loom_tstring_copy(loom_tensor_string_at(strings, 0),
                               "long enough to need the heap!!", 30);
  }
  loom_tensor_release(dense);
  loom_tensor_release(view);
  loom_tensor_release(scalar);
  loom_tensor_release(expanded);
  loom_tensor_release(strings);
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  // dense (buffer + header), view header, scalar header, expanded (buffer +
  // header), strings (buffer + header).
  assert_int_equal(
      loom_test_fault_sweep(make_every_kind, NULL, LOOM_TEST_SWEEP_STRICT), 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dense_tensor_is_aligned_and_sized),
      cmocka_unit_test(rank_zero_and_empty_tensors),
      cmocka_unit_test(dense_creation_rejects_bad_arguments),
      cmocka_unit_test(tensors_share_a_buffer),
      cmocka_unit_test(too_small_buffer_names_both_sizes),
      cmocka_unit_test(scalar_tensor_expands_to_every_element),
      cmocka_unit_test(converting_dense_returns_the_same_tensor),
      cmocka_unit_test(string_tensor_elements_start_empty),
      cmocka_unit_test(string_tensor_over_caller_elements),
      cmocka_unit_test(forwardable_only_when_unshared_and_owned),
      cmocka_unit_test(set_shape_keeps_the_element_count),
      cmocka_unit_test(bitcast_shares_the_buffer_with_a_new_type),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
