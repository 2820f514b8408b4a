// DLPack exchange of host tensors (loom/dlpack.h): exports share the
// tensor's memory with DLPack's codes, shape and compact row-major strides;
// imports share the producer's memory and hand it back exactly once,
// through the release function given; bad managed tensors are refused with
// the reason and stay the caller's.
//
// Reference values: NumPy. np.empty((2, 3, 4), np.float32).strides //
// itemsize == (12, 4, 1); np.dtype(d).itemsize * 8 for DLPack's bits
// (int8 8, uint16 16, float16 16, complex64 64, bool 8); DLPack's type codes
// as NumPy's __dlpack__ reports them (np.from_dlpack round trips): int 0,
// uint 1, float 2, bfloat 4, complex 5, bool 6.

#include <stdlib.h>

#include "loom/dlpack.h"
#include "test_support.h"

#include "dlpack_producer.h"

static loom_tensor_t* dense(loom_dtype_t dtype, const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  return tensor;
}

static void export_shares_memory_shape_and_strides(void** state) {
  (void)state;
  static const int64_t dims[3] = {2, 3, 4};
  loom_tensor_t* tensor = dense(LOOM_DTYPE_FLOAT, dims, 3);
  float* values = loom_tensor_data(tensor);
  for (int i = 0; i < 24; ++i) values[i] = (float)i;
  void* exported;
  LOOM_ASSERT_OK(loom_tensor_to_dlpack(tensor, &exported));
  DLManagedTensor* dlm = exported;
  loom_tensor_release(tensor);  // the managed tensor keeps it alive
  assert_ptr_equal(dlm->dl_tensor.data, values);
  assert_int_equal(dlm->dl_tensor.device.device_type, LOOM_DLPACK_DEVICE_CPU);
  assert_int_equal(dlm->dl_tensor.ndim, 3);
  assert_int_equal(dlm->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(dlm->dl_tensor.dtype.bits, 32);
  static const int64_t strides[3] = {12, 4, 1};
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(dlm->dl_tensor.shape[i], dims[i]);
    assert_int_equal(dlm->dl_tensor.strides[i], strides[i]);
  }
  for (int i = 0; i < 24; ++i) {
    assert_true(((const float*)dlm->dl_tensor.data)[i] == (float)i);
  }
  loom_dlpack_delete(dlm);
}

static void export_gives_dlpacks_code_for_each_dtype(void** state) {
  (void)state;
  static const struct {
    loom_dtype_t dtype;
    int code, bits;
  } kCases[] = {
      {LOOM_DTYPE_INT8, kDLInt, 8},
      {LOOM_DTYPE_INT64, kDLInt, 64},
      {LOOM_DTYPE_UINT16, kDLUInt, 16},
      {LOOM_DTYPE_HALF, kDLFloat, 16},
      {LOOM_DTYPE_DOUBLE, kDLFloat, 64},
      {LOOM_DTYPE_BFLOAT16, kDLBfloat, 16},
      {LOOM_DTYPE_COMPLEX64, kDLComplex, 64},
      {LOOM_DTYPE_BOOL, kDLBool, 8},
  };
  static const int64_t dims[1] = {3};
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    loom_tensor_t* tensor = dense(kCases[i].dtype, dims, 1);
    void* exported;
    LOOM_ASSERT_OK(loom_tensor_to_dlpack(tensor, &exported));
    DLManagedTensor* dlm = exported;
    assert_int_equal(dlm->dl_tensor.dtype.code, kCases[i].code);
    assert_int_equal(dlm->dl_tensor.dtype.bits, kCases[i].bits);
    assert_int_equal(dlm->dl_tensor.dtype.lanes, 1);
    // And back: the same dtype, over the same memory.
    loom_tensor_t* back;
    LOOM_ASSERT_OK(loom_tensor_from_dlpack(dlm, NULL, &back));
    assert_int_equal(loom_tensor_dtype(back), kCases[i].dtype);
    assert_ptr_equal(loom_tensor_data(back), loom_tensor_data(tensor));
    loom_tensor_release(back);  // deletes dlm, which releases its reference
    loom_tensor_release(tensor);
  }
}

static void a_scalar_tensor_exports_as_dense_memory(void** state) {
  (void)state;
  loom_shape_t shape;
  static const int64_t dims[2] = {2, 2};
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 2));
  const double value = 2.5;
  loom_tensor_t* tensor;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_default(), LOOM_DTYPE_DOUBLE, &shape, &value, &tensor));
  void* exported;
  LOOM_ASSERT_OK(loom_tensor_to_dlpack(tensor, &exported));
  loom_tensor_release(tensor);
  DLManagedTensor* dlm = exported;
  for (int i = 0; i < 4; ++i) {
    assert_true(((const double*)dlm->dl_tensor.data)[i] == 2.5);
  }
  loom_dlpack_delete(dlm);
}

static void export_errors_name_the_problem(void** state) {
  (void)state;
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* strings;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_default(), &shape, &strings));
  void* exported = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_to_dlpack(strings, &exported),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Data type string is not supported by dlpack");
  assert_null(exported);
  LOOM_ASSERT_STATUS(loom_tensor_to_dlpack(strings, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_to_dlpack: out_managed is NULL");
  LOOM_ASSERT_STATUS(loom_tensor_to_dlpack(NULL, &exported),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_to_dlpack: tensor is NULL");
  loom_tensor_release(strings);
}

static int releases;
static void counting_release(void* managed) {
  releases++;
  loom_dlpack_delete(managed);
}

static void import_shares_memory_and_releases_once(void** state) {
  (void)state;
  producer_t p;
  producer_init(&p);
  releases = 0;
  loom_tensor_t* tensor;
  LOOM_ASSERT_OK(
      loom_tensor_from_dlpack(&p.managed, counting_release, &tensor));
  assert_ptr_equal(loom_tensor_data(tensor), p.data);
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_FLOAT);
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  assert_int_equal(shape->rank, 2);
  assert_int_equal(loom_shape_dims(shape)[0], 2);
  assert_int_equal(loom_shape_dims(shape)[1], 2);
  assert_false(loom_tensor_is_forwardable(tensor));  // not Loom's memory
  loom_tensor_retain(tensor);
  loom_tensor_release(tensor);
  assert_int_equal(releases, 0);
  loom_tensor_release(tensor);
  assert_int_equal(releases, 1);
  assert_int_equal(p.deleted, 1);
}

static void import_with_an_offset_and_no_strides(void** state) {
  (void)state;
  producer_t p;
  producer_init(&p);
  p.managed.dl_tensor.strides = NULL;  // compact row-major
  p.managed.dl_tensor.ndim = 1;
  p.shape[0] = 3;
  p.managed.dl_tensor.byte_offset = sizeof(float);  // [2, 3, 4]
  loom_tensor_t* tensor;
  LOOM_ASSERT_OK(loom_tensor_from_dlpack(&p.managed, NULL, &tensor));
  const float* values = loom_tensor_data(tensor);
  assert_true(values[0] == 2.0f && values[1] == 3.0f && values[2] == 4.0f);
  loom_tensor_release(tensor);
  assert_int_equal(p.deleted, 1);
}

static void import_errors_leave_the_tensor_to_the_caller(void** state) {
  (void)state;
  producer_t p;
  loom_tensor_t* tensor = NULL;
  producer_init(&p);
  p.managed.dl_tensor.device.device_type = kDLCUDA;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Unsupported Device Type 2 (only kDLCPU, 1)");
  producer_init(&p);
  p.managed.dl_tensor.dtype.lanes = 4;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Unsupported Type: code 2, 32 bits, 4 lanes");
  producer_init(&p);
  p.managed.dl_tensor.dtype.bits = 24;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Unsupported Type: code 2, 24 bits, 1 lanes");
  producer_init(&p);
  p.managed.dl_tensor.ndim = 255;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Invalid shape from DLPack: rank 255 (at most 254)");
  producer_init(&p);
  p.managed.dl_tensor.shape = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Invalid shape from DLPack: rank 2 without dims");
  producer_init(&p);
  p.shape[0] = INT64_C(1) << 62;  // 2^62 * 2 * 4 bytes overflows
  p.strides[0] = 2;
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT, "overflows");
  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2;  // column-major
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "only compact row-major data is supported (dim 1 of "
                     "size 2 has stride 2, not 1)");
  producer_init(&p);
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(NULL, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_from_dlpack: managed is NULL");
  LOOM_ASSERT_STATUS(loom_tensor_from_dlpack(&p.managed, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_from_dlpack: out_tensor is NULL");
  assert_null(tensor);
  assert_int_equal(p.deleted, 0);
  loom_dlpack_delete(&p.managed);
  assert_int_equal(p.deleted, 1);
  loom_dlpack_delete(NULL);  // nothing
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(export_shares_memory_shape_and_strides),
      cmocka_unit_test(export_gives_dlpacks_code_for_each_dtype),
      cmocka_unit_test(a_scalar_tensor_exports_as_dense_memory),
      cmocka_unit_test(export_errors_name_the_problem),
      cmocka_unit_test(import_shares_memory_and_releases_once),
      cmocka_unit_test(import_with_an_offset_and_no_strides),
      cmocka_unit_test(import_errors_leave_the_tensor_to_the_caller),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
