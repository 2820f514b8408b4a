// Host tensors: dense, scalar and string kinds, buffer sharing, forwarding,
// reshapes, bitcasts, printing, concurrent release and allocation failures.

#include <complex.h>
#include <pthread.h>
#include <stdatomic.h>

#include "loom/tensor.h"
#include "string_allocation_gate.h"
#include "test_support.h"

// Sanitizers abort on an allocation larger than they support; malloc returns
// NULL instead, which is what the impossible-allocation test relies on.
const char* __asan_default_options(void);
const char* __asan_default_options(void) {
  return "allocator_may_return_null=1";
}
const char* __tsan_default_options(void);
const char* __tsan_default_options(void) {
  return "allocator_may_return_null=1";
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char kLong[] = "a string long enough to live on the heap";

static loom_shape_t shape_of(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

static loom_shape_t vector_of(int64_t n) {
  return shape_of(&n, 1);
}

static loom_tensor_t* make_dense(loom_dtype_t dtype,
                                 const loom_shape_t* shape) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_allocator_system(), dtype, shape, &tensor));
  return tensor;
}

static loom_buffer_t* make_buffer(size_t size) {
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_system(), size, 0, &buffer));
  return buffer;
}

typedef struct sized_dtype_t {
  loom_dtype_t dtype;
  size_t size;  // sizeof the C type
} sized_dtype_t;

static const sized_dtype_t kSizedTypes[] = {
    {LOOM_DTYPE_FLOAT, sizeof(float)},
    {LOOM_DTYPE_DOUBLE, sizeof(double)},
    {LOOM_DTYPE_INT8, sizeof(int8_t)},
    {LOOM_DTYPE_UINT16, sizeof(uint16_t)},
    {LOOM_DTYPE_INT32, sizeof(int32_t)},
    {LOOM_DTYPE_INT64, sizeof(int64_t)},
    {LOOM_DTYPE_BOOL, sizeof(bool)},
    {LOOM_DTYPE_COMPLEX64, sizeof(float _Complex)},
    {LOOM_DTYPE_COMPLEX128, sizeof(double _Complex)},
    {LOOM_DTYPE_HALF, sizeof(uint16_t)},
};

typedef struct deallocation_t {
  int calls;
  void* data;
  size_t size;
} deallocation_t;

static void record_deallocation(void* data, size_t size, void* arg) {
  deallocation_t* record = arg;
  record->calls++;
  record->data = data;
  record->size = size;
}

//===----------------------------------------------------------------------===//
// loom_tensor_create_dense
//===----------------------------------------------------------------------===//

static void dense_tensor_has_the_requested_kind_dtype_and_shape(void** state) {
  (void)state;
  const int64_t dims[2] = {3, 5};
  loom_shape_t shape = shape_of(dims, 2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_DENSE);
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_FLOAT);
  assert_true(loom_shape_equal(loom_tensor_shape(tensor), &shape));
  assert_int_equal(loom_tensor_num_elements(tensor), 15);
  loom_tensor_release(tensor);
}

static void metadata_holds_dtype_and_shape(void** state) {
  (void)state;
  const int64_t dims[3] = {1, 2, 3};
  loom_shape_t shape = shape_of(dims, 3);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT16, &shape);
  const loom_tensor_metadata_t* metadata = loom_tensor_metadata(tensor);
  assert_int_equal(metadata->dtype, LOOM_DTYPE_INT16);
  assert_true(loom_shape_equal(&metadata->shape, &shape));
  loom_tensor_release(tensor);
}

static void dense_data_is_64_byte_aligned(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(7);
  for (size_t i = 0; i < ARRAY_SIZE(kSizedTypes); ++i) {
    loom_tensor_t* tensor = make_dense(kSizedTypes[i].dtype, &shape);
    assert_int_equal((uintptr_t)loom_tensor_data(tensor) % 64, 0);
    assert_true(loom_tensor_is_aligned(tensor));
    loom_tensor_release(tensor);
  }
}

static void dense_byte_size_is_elements_times_sizeof(void** state) {
  (void)state;
  const int64_t dims[2] = {3, 5};
  loom_shape_t shape = shape_of(dims, 2);
  for (size_t i = 0; i < ARRAY_SIZE(kSizedTypes); ++i) {
    loom_tensor_t* tensor = make_dense(kSizedTypes[i].dtype, &shape);
    assert_int_equal(loom_tensor_byte_size(tensor),
                     (size_t)(dims[0] * dims[1]) * kSizedTypes[i].size);
    loom_tensor_release(tensor);
  }
}

static void dense_data_is_writable_over_its_byte_size(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(33);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_DOUBLE, &shape);
  // AddressSanitizer checks every byte is inside the allocation.
  memset(loom_tensor_data(tensor), 0x7f, loom_tensor_byte_size(tensor));
  loom_tensor_release(tensor);
}

static void dense_tensor_has_a_buffer_holding_its_data(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT32, &shape);
  loom_buffer_t* buffer = loom_tensor_buffer(tensor);
  assert_non_null(buffer);
  assert_ptr_equal(loom_buffer_data(buffer), loom_tensor_data(tensor));
  assert_int_equal(loom_buffer_size(buffer), loom_tensor_byte_size(tensor));
  loom_tensor_release(tensor);
}

static void rank_zero_dense_tensor_has_one_element(void** state) {
  (void)state;
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT64, &scalar);
  assert_int_equal(loom_tensor_num_elements(tensor), 1);
  assert_int_equal(loom_tensor_byte_size(tensor), sizeof(int64_t));
  loom_tensor_release(tensor);
}

static void empty_dense_tensor_has_zero_bytes(void** state) {
  (void)state;
  const int64_t dims[2] = {0, 7};
  loom_shape_t empty = shape_of(dims, 2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &empty);
  assert_int_equal(loom_tensor_num_elements(tensor), 0);
  assert_int_equal(loom_tensor_byte_size(tensor), 0);
  loom_tensor_release(tensor);
}

static void create_dense_uses_the_given_allocator(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_fault_allocator_allocator(fault),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  assert_true(loom_fault_allocator_live_count(fault) > 0);
  loom_tensor_release(tensor);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

static void create_dense_rejects_the_string_dtype(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = (loom_tensor_t*)&tensor;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_STRING,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense: dtype string (7) has no fixed element size");
  assert_null(tensor);
}

static void create_dense_rejects_the_resource_dtype(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_RESOURCE,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "dtype resource (20) has no fixed element size");
}

static void create_dense_rejects_the_variant_dtype(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_VARIANT,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "dtype variant (21) has no fixed element size");
}

static void create_dense_rejects_an_invalid_dtype(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), (loom_dtype_t)99,
                               &shape, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "dtype invalid (99) has no fixed element size");
}

static void create_dense_rejects_an_unknown_dimension(void** state) {
  (void)state;
  loom_shape_t partial = vector_of(LOOM_UNKNOWN_DIM);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                               &partial, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense: shape [?] is not fully defined");
}

static void create_dense_rejects_an_unknown_rank(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                               &unknown, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, "shape <unknown> is not fully defined");
}

static void create_dense_rejects_a_null_shape(void** state) {
  (void)state;
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_create_dense(loom_allocator_system(),
                                              LOOM_DTYPE_FLOAT, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_create_dense: shape is NULL");
}

static void create_dense_rejects_a_null_out_tensor(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(loom_tensor_create_dense(loom_allocator_system(),
                                              LOOM_DTYPE_FLOAT, &shape, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_create_dense: out_tensor is NULL");
}

static void create_dense_rejects_an_overflowing_element_count(void** state) {
  (void)state;
  const int64_t dims[3] = {INT64_MAX / 2, 3, 5};
  loom_shape_t huge = shape_of(dims, 3);
  loom_tensor_t* tensor = NULL;
  char expected[128];
  snprintf(expected, sizeof(expected),
           "the element count of shape [%lld, 3, 5] overflows",
           (long long)(INT64_MAX / 2));
  LOOM_ASSERT_STATUS(loom_tensor_create_dense(loom_allocator_system(),
                                              LOOM_DTYPE_FLOAT, &huge, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT, expected);
}

static void create_dense_rejects_an_overflowing_byte_size(void** state) {
  (void)state;
  const int64_t dims[2] = {INT64_MAX / 4, 2};
  loom_shape_t huge = shape_of(dims, 2);
  loom_tensor_t* tensor = NULL;
  char expected[128];
  snprintf(expected, sizeof(expected), "%lld elements of %zu bytes overflow",
           (long long)(INT64_MAX / 4 * 2), sizeof(double));
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_DOUBLE,
                               &huge, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, expected);
  // 2^60 doubles: 2^63 bytes fit size_t but not int64, as byte sizes must.
  huge = vector_of((int64_t)1 << 60);
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_DOUBLE,
                               &huge, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "1152921504606846976 elements of 8 bytes overflow");
  assert_null(tensor);
}

static void create_dense_reports_an_impossible_allocation(void** state) {
  (void)state;
  // 2^59 doubles: 2^62 bytes, representable (byte sizes stay within
  // int64), but more than any address space.
  loom_shape_t huge = vector_of((int64_t)1 << 59);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_DOUBLE,
                               &huge, &tensor),
      LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  assert_null(tensor);
}

//===----------------------------------------------------------------------===//
// loom_tensor_create_dense_in_buffer
//===----------------------------------------------------------------------===//

static void dense_in_buffer_views_the_bytes_at_the_offset(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(64);
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, buffer, 16, &tensor));
  assert_ptr_equal(loom_tensor_data(tensor),
                   (char*)loom_buffer_data(buffer) + 16);
  assert_ptr_equal(loom_tensor_buffer(tensor), buffer);
  assert_int_equal(loom_tensor_byte_size(tensor), 4 * sizeof(int32_t));
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void dense_in_buffer_at_an_unaligned_offset_is_not_aligned(
    void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(64);
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, buffer, 4, &tensor));
  assert_false(loom_tensor_is_aligned(tensor));
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void dense_in_buffer_keeps_the_buffer_alive(void** state) {
  (void)state;
  static char data[16];
  deallocation_t record = {0, NULL, 0};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), data, sizeof(data),
                                  record_deallocation, &record, &buffer));
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, &tensor));
  loom_buffer_release(buffer);
  assert_int_equal(record.calls, 0);
  loom_tensor_release(tensor);
  assert_int_equal(record.calls, 1);
  assert_ptr_equal(record.data, data);
}

static void tensors_in_one_buffer_see_each_others_writes(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t shape = vector_of(4);
  loom_tensor_t *as_int = NULL, *as_uint = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, buffer, 0, &as_int));
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_UINT32, &shape, buffer, 0, &as_uint));
  loom_buffer_release(buffer);
  ((int32_t*)loom_tensor_data(as_int))[2] = -1;
  assert_int_equal(((uint32_t*)loom_tensor_data(as_uint))[2], UINT32_MAX);
  loom_tensor_release(as_int);
  loom_tensor_release(as_uint);
}

static void dense_in_a_too_small_buffer_names_both_sizes(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(10);
  loom_shape_t shape = vector_of(3);
  loom_tensor_t* tensor = (loom_tensor_t*)&tensor;
  LOOM_ASSERT_STATUS(loom_tensor_create_dense_in_buffer(
                         loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape,
                         buffer, 0, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_create_dense_in_buffer: a float tensor of "
                     "shape [3] needs 12 bytes, the buffer has 10 from offset "
                     "0");
  assert_null(tensor);
  loom_buffer_release(buffer);
}

static void dense_past_the_end_from_an_offset_names_the_room_left(
    void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(loom_allocator_system(),
                                         LOOM_DTYPE_DOUBLE, &shape, buffer, 4,
                                         &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "a double tensor of shape [2] needs 16 bytes, the buffer has 12 from "
      "offset 4");
  loom_buffer_release(buffer);
}

static void dense_in_buffer_rejects_an_offset_past_the_end(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(10);
  loom_shape_t shape = vector_of(0);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(loom_allocator_system(),
                                         LOOM_DTYPE_INT8, &shape, buffer, 11,
                                         &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense_in_buffer: byte offset 11 is past the end of a "
      "10-byte buffer");
  loom_buffer_release(buffer);
}

static void empty_dense_at_the_end_of_a_buffer_is_allowed(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(10);
  loom_shape_t shape = vector_of(0);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT8, &shape, buffer, 10, &tensor));
  assert_int_equal(loom_tensor_byte_size(tensor), 0);
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void dense_in_buffer_rejects_the_string_dtype(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(96);
  loom_shape_t shape = vector_of(3);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(loom_allocator_system(),
                                         LOOM_DTYPE_STRING, &shape, buffer, 0,
                                         &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense_in_buffer: dtype string (7) cannot back a "
      "dense tensor");
  loom_buffer_release(buffer);
}

static void dense_in_buffer_rejects_an_invalid_dtype(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t shape = vector_of(1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_create_dense_in_buffer(
                         loom_allocator_system(), LOOM_DTYPE_INVALID, &shape,
                         buffer, 0, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "dtype invalid (0) cannot back a dense tensor");
  loom_buffer_release(buffer);
}

static void resource_dense_covers_the_rest_of_the_buffer(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(10);
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_RESOURCE, &scalar, buffer, 4,
      &tensor));
  assert_int_equal(loom_tensor_byte_size(tensor), 10 - 4);
  assert_ptr_equal(loom_tensor_data(tensor),
                   (char*)loom_buffer_data(buffer) + 4);
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void variant_dense_covers_the_rest_of_the_buffer(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(24);
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_VARIANT, &shape, buffer, 0, &tensor));
  assert_int_equal(loom_tensor_byte_size(tensor), 24);
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void dense_in_buffer_rejects_a_null_buffer(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(
          loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, NULL, 0, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense_in_buffer: buffer is NULL");
}

static void dense_in_buffer_rejects_a_null_out_tensor(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t shape = vector_of(1);
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(
          loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense_in_buffer: out_tensor is NULL");
  loom_buffer_release(buffer);
}

static void dense_in_buffer_rejects_an_unknown_dimension(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t partial = vector_of(LOOM_UNKNOWN_DIM);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_dense_in_buffer(loom_allocator_system(),
                                         LOOM_DTYPE_FLOAT, &partial, buffer, 0,
                                         &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_dense_in_buffer: shape [?] is not fully defined");
  loom_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// loom_tensor_create_scalar and loom_tensor_convert_to_dense
//===----------------------------------------------------------------------===//

static void scalar_tensor_holds_the_value(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape = shape_of(dims, 2);
  double value = -2.5;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_DOUBLE, &shape, &value, &scalar));
  assert_int_equal(loom_tensor_kind(scalar), LOOM_TENSOR_SCALAR);
  assert_int_equal(loom_tensor_dtype(scalar), LOOM_DTYPE_DOUBLE);
  assert_memory_equal(loom_tensor_data(scalar), &value, sizeof(value));
  loom_tensor_release(scalar);
}

static void scalar_tensor_has_the_element_count_of_its_shape(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape = shape_of(dims, 2);
  int32_t value = 7;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, &value, &scalar));
  assert_true(loom_shape_equal(loom_tensor_shape(scalar), &shape));
  assert_int_equal(loom_tensor_num_elements(scalar), 6);
  loom_tensor_release(scalar);
}

static void scalar_byte_size_is_one_element(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(1000);
  for (size_t i = 0; i < ARRAY_SIZE(kSizedTypes); ++i) {
    unsigned char value[LOOM_TENSOR_MAX_SCALAR_SIZE] = {0};
    loom_tensor_t* scalar = NULL;
    LOOM_ASSERT_OK(loom_tensor_create_scalar(
        loom_allocator_system(), kSizedTypes[i].dtype, &shape, value, &scalar));
    assert_int_equal(loom_tensor_byte_size(scalar), kSizedTypes[i].size);
    loom_tensor_release(scalar);
  }
}

static void scalar_tensor_has_no_buffer(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(3);
  float value = 1.0f;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &value, &scalar));
  assert_null(loom_tensor_buffer(scalar));
  loom_tensor_release(scalar);
}

static void scalar_tensor_copies_the_value(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(3);
  int64_t value = 41;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_INT64, &shape, &value, &scalar));
  value = 42;
  assert_int_equal(*(int64_t*)loom_tensor_data(scalar), 41);
  loom_tensor_release(scalar);
}

static void scalar_tensor_holds_a_whole_complex128(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  double _Complex value = 1.5 - 2.25 * I;
  assert_int_equal(sizeof(value), LOOM_TENSOR_MAX_SCALAR_SIZE);
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_COMPLEX128, &shape, &value, &scalar));
  assert_memory_equal(loom_tensor_data(scalar), &value, sizeof(value));
  loom_tensor_release(scalar);
}

static void create_scalar_rejects_the_string_dtype(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  char value[24] = {0};
  loom_tensor_t* scalar = (loom_tensor_t*)&scalar;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_STRING,
                                &shape, value, &scalar),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_scalar: dtype string (7) has no fixed element size");
  assert_null(scalar);
}

static void create_scalar_rejects_a_null_value(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                &shape, NULL, &scalar),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_tensor_create_scalar: value is NULL");
}

static void create_scalar_rejects_a_null_out_tensor(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  float value = 0;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                &shape, &value, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_scalar: out_tensor is NULL");
}

static void create_scalar_rejects_an_unknown_shape(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown();
  float value = 0;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_scalar(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                &unknown, &value, &scalar),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_scalar: shape <unknown> is not fully defined");
}

static void convert_expands_a_scalar_to_every_element(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 3, 4};
  loom_shape_t shape = shape_of(dims, 3);
  // A distinct byte pattern, cut to each dtype's size.
  unsigned char value[LOOM_TENSOR_MAX_SCALAR_SIZE];
  for (size_t i = 0; i < sizeof(value); ++i) value[i] = (unsigned char)(i + 1);
  for (int d = 1; d < LOOM_DTYPE_COUNT; ++d) {
    loom_dtype_t dtype = (loom_dtype_t)d;
    size_t size = loom_dtype_size(dtype);
    if (size == 0) continue;
    loom_tensor_t *scalar = NULL, *dense = NULL;
    LOOM_ASSERT_OK(loom_tensor_create_scalar(loom_allocator_system(), dtype,
                                             &shape, value, &scalar));
    LOOM_ASSERT_OK(
        loom_tensor_convert_to_dense(loom_allocator_system(), scalar, &dense));
    assert_int_equal(loom_tensor_byte_size(dense), 24 * size);
    const unsigned char* data = loom_tensor_data(dense);
    for (int64_t i = 0; i < 24; ++i) {
      assert_memory_equal(data + i * (int64_t)size, value, size);
    }
    loom_tensor_release(dense);
    loom_tensor_release(scalar);
  }
}

static void convert_of_a_scalar_gives_a_new_dense_tensor(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(5);
  float value = 3.0f;
  loom_tensor_t *scalar = NULL, *dense = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &value, &scalar));
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_system(), scalar, &dense));
  assert_ptr_not_equal(dense, scalar);
  assert_int_equal(loom_tensor_kind(dense), LOOM_TENSOR_DENSE);
  assert_int_equal(loom_tensor_dtype(dense), LOOM_DTYPE_FLOAT);
  assert_true(loom_shape_equal(loom_tensor_shape(dense), &shape));
  assert_true(loom_tensor_is_aligned(dense));
  assert_true(loom_tensor_is_forwardable(dense));
  loom_tensor_release(scalar);
  loom_tensor_release(dense);
}

static void convert_of_an_empty_scalar_gives_an_empty_dense_tensor(
    void** state) {
  (void)state;
  loom_shape_t shape = vector_of(0);
  int8_t value = 1;
  loom_tensor_t *scalar = NULL, *dense = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_INT8, &shape, &value, &scalar));
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_system(), scalar, &dense));
  assert_int_equal(loom_tensor_byte_size(dense), 0);
  loom_tensor_release(scalar);
  loom_tensor_release(dense);
}

static void convert_of_a_dense_tensor_returns_it_retained(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT32, &shape);
  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_system(), tensor, &dense));
  assert_ptr_equal(dense, tensor);
  assert_false(loom_tensor_is_forwardable(tensor));  // two references
  loom_tensor_release(tensor);
  assert_true(loom_tensor_is_forwardable(dense));  // still alive, one left
  loom_tensor_release(dense);
}

static void convert_of_a_string_tensor_is_invalid(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* strings = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_system(), &shape, &strings));
  loom_tensor_t* dense = (loom_tensor_t*)&dense;
  LOOM_ASSERT_STATUS(
      loom_tensor_convert_to_dense(loom_allocator_system(), strings, &dense),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_convert_to_dense: a string tensor has no dense form");
  assert_null(dense);
  loom_tensor_release(strings);
}

static void convert_rejects_a_null_tensor(void** state) {
  (void)state;
  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_convert_to_dense(loom_allocator_system(), NULL, &dense),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_convert_to_dense: tensor is NULL");
}

static void convert_rejects_a_null_out_dense(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT32, &shape);
  LOOM_ASSERT_STATUS(
      loom_tensor_convert_to_dense(loom_allocator_system(), tensor, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_convert_to_dense: out_dense is NULL");
  loom_tensor_release(tensor);
}

//===----------------------------------------------------------------------===//
// String tensors
//===----------------------------------------------------------------------===//

static loom_tensor_t* make_strings(int64_t count) {
  loom_shape_t shape = vector_of(count);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_system(), &shape, &tensor));
  return tensor;
}

static void string_tensor_has_string_kind_and_dtype(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(3);
  assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_STRING);
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_STRING);
  assert_int_equal(loom_tensor_num_elements(tensor), 3);
  loom_tensor_release(tensor);
}

static void string_tensor_byte_size_is_elements_times_24(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(3);
  assert_int_equal(loom_tensor_byte_size(tensor), 3 * sizeof(loom_tstring_t));
  loom_tensor_release(tensor);
}

static void string_elements_start_empty_and_small(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(5);
  for (int64_t i = 0; i < 5; ++i) {
    const loom_tstring_t* s = loom_tensor_string_at(tensor, i);
    assert_int_equal(loom_tstring_type(s), LOOM_TSTRING_SMALL);
    assert_int_equal(loom_tstring_size(s), 0);
  }
  loom_tensor_release(tensor);
}

static void string_at_returns_consecutive_elements_of_the_data(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(3);
  loom_tstring_t* first = loom_tensor_data(tensor);
  for (int64_t i = 0; i < 3; ++i) {
    assert_ptr_equal(loom_tensor_string_at(tensor, i), first + i);
  }
  loom_tensor_release(tensor);
}

static void string_at_out_of_range_is_null(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(3);
  assert_null(loom_tensor_string_at(tensor, 3));
  assert_null(loom_tensor_string_at(tensor, -1));
  assert_null(loom_tensor_string_at(tensor, INT64_MAX));
  loom_tensor_release(tensor);
}

static void string_at_of_a_dense_tensor_is_null(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(3);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT8, &shape);
  assert_null(loom_tensor_string_at(tensor, 0));
  assert_null(loom_tensor_string_at(NULL, 0));
  loom_tensor_release(tensor);
}

static void string_elements_keep_what_is_copied_into_them(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(2);
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 0), "x", 1));
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 1), kLong,
                                   strlen(kLong)));
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 0)), "x");
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 1)),
                      kLong);
  loom_tensor_release(tensor);
}

static void large_string_elements_are_freed_with_the_tensor(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(4);
  for (int64_t i = 0; i < 4; i += 2) {
    LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, i), kLong,
                                     strlen(kLong)));
    assert_int_equal(loom_tstring_type(loom_tensor_string_at(tensor, i)),
                     LOOM_TSTRING_LARGE);
  }
  loom_tensor_release(tensor);
  // LeakSanitizer reports the two heap blocks otherwise.
}

static void string_elements_live_until_the_last_reference_goes(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(1);
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 0), kLong,
                                   strlen(kLong)));
  loom_tensor_retain(tensor);
  loom_tensor_release(tensor);
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 0)),
                      kLong);
  loom_tensor_release(tensor);
}

static void empty_string_tensor_has_zero_bytes(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(0);
  assert_int_equal(loom_tensor_byte_size(tensor), 0);
  assert_null(loom_tensor_string_at(tensor, 0));
  loom_tensor_release(tensor);
}

static void create_string_rejects_a_null_shape(void** state) {
  (void)state;
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_string(loom_allocator_system(), NULL, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_tensor_create_string: shape is NULL");
}

static void create_string_rejects_an_unknown_dimension(void** state) {
  (void)state;
  loom_shape_t partial = vector_of(LOOM_UNKNOWN_DIM);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_string(loom_allocator_system(), &partial, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_string: shape [?] is not fully defined");
}

static void create_string_rejects_a_null_out_tensor(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(1);
  LOOM_ASSERT_STATUS(
      loom_tensor_create_string(loom_allocator_system(), &shape, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_string: out_tensor is NULL");
}

static void create_string_rejects_an_overflowing_byte_size(void** state) {
  (void)state;
  loom_shape_t huge = vector_of(INT64_MAX);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_string(loom_allocator_system(), &huge, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT, "elements of 24 bytes overflow");
}

// Elements laid out by the caller; its deallocator frees what they own.
typedef struct caller_strings_t {
  loom_tstring_t elements[3];
  int deallocations;
} caller_strings_t;

static void free_caller_strings(void* data, size_t size, void* arg) {
  caller_strings_t* strings = arg;
  loom_tstring_t* elements = data;
  for (size_t i = 0; i < size / sizeof(loom_tstring_t); ++i) {
    loom_tstring_deinitialize(&elements[i]);
  }
  strings->deallocations++;
}

static loom_buffer_t* wrap_caller_strings(caller_strings_t* strings) {
  for (size_t i = 0; i < ARRAY_SIZE(strings->elements); ++i) {
    loom_tstring_initialize(&strings->elements[i]);
  }
  strings->deallocations = 0;
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), strings->elements,
                                  sizeof(strings->elements),
                                  free_caller_strings, strings, &buffer));
  return buffer;
}

static void string_in_buffer_reads_the_callers_elements(void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  loom_tstring_assign_view(&strings.elements[0], "a", 1);
  LOOM_ASSERT_OK(loom_tstring_copy(&strings.elements[2], kLong, strlen(kLong)));
  loom_shape_t shape = vector_of(3);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_string_in_buffer(loom_allocator_system(),
                                                     &shape, buffer, &tensor));
  assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_STRING);
  assert_ptr_equal(loom_tensor_string_at(tensor, 0), &strings.elements[0]);
  assert_string_equal(loom_tstring_data(loom_tensor_string_at(tensor, 2)),
                      kLong);
  assert_int_equal(loom_tensor_byte_size(tensor), 3 * sizeof(loom_tstring_t));
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void string_in_buffer_leaves_the_elements_to_the_buffers_owner(
    void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  LOOM_ASSERT_OK(loom_tstring_copy(&strings.elements[1], kLong, strlen(kLong)));
  loom_shape_t shape = vector_of(3);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_string_in_buffer(loom_allocator_system(),
                                                     &shape, buffer, &tensor));
  loom_buffer_release(buffer);
  assert_int_equal(strings.deallocations, 0);
  loom_tensor_release(tensor);
  assert_int_equal(strings.deallocations, 1);
}

static void string_in_buffer_may_use_a_prefix_of_the_buffer(void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_string_in_buffer(loom_allocator_system(),
                                                     &shape, buffer, &tensor));
  assert_int_equal(loom_tensor_byte_size(tensor), 2 * sizeof(loom_tstring_t));
  loom_tensor_release(tensor);
  loom_buffer_release(buffer);
}

static void string_in_a_too_small_buffer_names_both_sizes(void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = NULL;
  char expected[160];
  snprintf(expected, sizeof(expected),
           "loom_tensor_create_string_in_buffer: 4 strings need %zu bytes, the "
           "buffer has %zu",
           4 * sizeof(loom_tstring_t), sizeof(strings.elements));
  LOOM_ASSERT_STATUS(loom_tensor_create_string_in_buffer(
                         loom_allocator_system(), &shape, buffer, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT, expected);
  loom_buffer_release(buffer);
}

static void string_in_buffer_rejects_a_null_buffer(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_create_string_in_buffer(
                         loom_allocator_system(), &shape, NULL, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_create_string_in_buffer: buffer is NULL");
}

static void string_in_buffer_rejects_a_null_out_tensor(void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  loom_shape_t shape = vector_of(1);
  LOOM_ASSERT_STATUS(loom_tensor_create_string_in_buffer(
                         loom_allocator_system(), &shape, buffer, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_create_string_in_buffer: out_tensor is NULL");
  loom_buffer_release(buffer);
}

static void string_in_buffer_rejects_an_unknown_rank(void** state) {
  (void)state;
  caller_strings_t strings;
  loom_buffer_t* buffer = wrap_caller_strings(&strings);
  loom_shape_t unknown = loom_shape_unknown();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(
      loom_tensor_create_string_in_buffer(loom_allocator_system(), &unknown,
                                          buffer, &tensor),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_create_string_in_buffer: shape <unknown> is not fully "
      "defined");
  loom_buffer_release(buffer);
}

//===----------------------------------------------------------------------===//
// loom_tensor_is_forwardable
//===----------------------------------------------------------------------===//

static void fresh_dense_tensor_is_forwardable(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(8);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
}

static void retained_tensor_is_not_forwardable(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(8);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  loom_tensor_retain(tensor);
  assert_false(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
}

static void tensor_whose_buffer_is_retained_is_not_forwardable(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(8);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  loom_buffer_retain(loom_tensor_buffer(tensor));
  assert_false(loom_tensor_is_forwardable(tensor));
  loom_buffer_release(loom_tensor_buffer(tensor));
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
}

static void tensor_sharing_its_buffer_is_not_forwardable(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  loom_tensor_t* view = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape,
      loom_tensor_buffer(tensor), 0, &view));
  assert_false(loom_tensor_is_forwardable(tensor));
  assert_false(loom_tensor_is_forwardable(view));
  loom_tensor_release(view);
  assert_true(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
}

static void tensor_over_wrapped_memory_is_not_forwardable(void** state) {
  (void)state;
  static float outside[8];
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), outside,
                                  sizeof(outside), NULL, NULL, &buffer));
  loom_shape_t shape = vector_of(8);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, buffer, 0, &tensor));
  loom_buffer_release(buffer);
  assert_false(loom_tensor_is_forwardable(tensor));
  loom_tensor_release(tensor);
}

static void scalar_tensor_is_not_forwardable(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(3);
  float value = 1.0f;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &value, &scalar));
  assert_false(loom_tensor_is_forwardable(scalar));
  loom_tensor_release(scalar);
}

static void null_tensor_is_not_forwardable(void** state) {
  (void)state;
  assert_false(loom_tensor_is_forwardable(NULL));
}

static void retain_and_release_of_null_do_nothing(void** state) {
  (void)state;
  loom_tensor_retain(NULL);
  loom_tensor_release(NULL);
}

//===----------------------------------------------------------------------===//
// loom_tensor_set_shape
//===----------------------------------------------------------------------===//

static void set_shape_with_the_same_count_changes_the_shape(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 6};
  loom_shape_t shape = shape_of(dims, 2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT16, &shape);
  void* data = loom_tensor_data(tensor);
  const int64_t new_dims[3] = {3, 2, 2};
  loom_shape_t reshaped = shape_of(new_dims, 3);
  LOOM_ASSERT_OK(loom_tensor_set_shape(tensor, &reshaped));
  assert_true(loom_shape_equal(loom_tensor_shape(tensor), &reshaped));
  assert_ptr_equal(loom_tensor_data(tensor), data);
  assert_int_equal(loom_tensor_byte_size(tensor), 12 * sizeof(int16_t));
  loom_tensor_release(tensor);
}

static void set_shape_with_another_count_names_both_shapes(void** state) {
  (void)state;
  const int64_t dims[3] = {3, 2, 2};
  loom_shape_t shape = shape_of(dims, 3);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT16, &shape);
  loom_shape_t bad = vector_of(5);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, &bad),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_set_shape: cannot reshape a tensor of shape "
                     "[3, 2, 2] (12 elements) to [5] (5 elements)");
  assert_true(loom_shape_equal(loom_tensor_shape(tensor), &shape));
  loom_tensor_release(tensor);
}

static void set_shape_of_a_shared_tensor_fails(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  const int64_t dims[2] = {2, 2};
  loom_shape_t reshaped = shape_of(dims, 2);
  loom_tensor_retain(tensor);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, &reshaped),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "loom_tensor_set_shape: the tensor is shared; only its "
                     "sole owner may reshape it");
  assert_true(loom_shape_equal(loom_tensor_shape(tensor), &shape));
  loom_tensor_release(tensor);
  loom_tensor_release(tensor);
}

static void set_shape_rejects_an_unknown_dimension(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  loom_shape_t partial = vector_of(LOOM_UNKNOWN_DIM);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, &partial),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_set_shape: shape [?] is not fully defined");
  loom_tensor_release(tensor);
}

static void set_shape_rejects_a_null_tensor(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(NULL, &shape),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_set_shape: tensor is NULL");
}

static void set_shape_rejects_a_null_shape(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  LOOM_ASSERT_STATUS(loom_tensor_set_shape(tensor, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tensor_set_shape: shape is NULL");
  loom_tensor_release(tensor);
}

static void set_shape_reshapes_a_string_tensor(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(4);
  const int64_t dims[2] = {2, 2};
  loom_shape_t reshaped = shape_of(dims, 2);
  LOOM_ASSERT_OK(loom_tensor_set_shape(tensor, &reshaped));
  assert_non_null(loom_tensor_string_at(tensor, 3));
  loom_tensor_release(tensor);
}

//===----------------------------------------------------------------------===//
// loom_tensor_bitcast_from
//===----------------------------------------------------------------------===//

static loom_tensor_t* make_float_source(void) {
  loom_shape_t shape = vector_of(4);
  loom_tensor_t* source = make_dense(LOOM_DTYPE_FLOAT, &shape);
  float* values = loom_tensor_data(source);
  for (int i = 0; i < 4; ++i) values[i] = (float)i + 0.5f;
  return source;
}

static void bitcast_shares_the_source_buffer(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  const int64_t dims[2] = {2, 2};
  loom_shape_t shape = shape_of(dims, 2);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_INT32, &shape));
  assert_ptr_equal(loom_tensor_data(target), loom_tensor_data(source));
  assert_ptr_equal(loom_tensor_buffer(target), loom_tensor_buffer(source));
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_gives_the_new_dtype_shape_and_byte_size(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  const int64_t dims[2] = {2, 4};
  loom_shape_t shape = shape_of(dims, 2);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_UINT16, &shape));
  assert_int_equal(loom_tensor_dtype(target), LOOM_DTYPE_UINT16);
  assert_true(loom_shape_equal(loom_tensor_shape(target), &shape));
  assert_int_equal(loom_tensor_byte_size(target),
                   loom_tensor_byte_size(source));
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_reinterprets_the_bits(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_INT32, &shape));
  for (int i = 0; i < 4; ++i) {
    int32_t bits;
    memcpy(&bits, (float*)loom_tensor_data(source) + i, sizeof(bits));
    assert_int_equal(((int32_t*)loom_tensor_data(target))[i], bits);
  }
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_releases_the_targets_old_buffer(void** state) {
  (void)state;
  static int32_t old_data[2];
  deallocation_t record = {0, NULL, 0};
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(loom_allocator_system(), old_data,
                                  sizeof(old_data), record_deallocation,
                                  &record, &buffer));
  loom_shape_t two = vector_of(2);
  loom_tensor_t* target = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_INT32, &two, buffer, 0, &target));
  loom_buffer_release(buffer);
  loom_tensor_t* source = make_float_source();
  loom_shape_t four = vector_of(4);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_UINT32, &four));
  assert_int_equal(record.calls, 1);
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_target_keeps_the_data_alive(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_OK(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_FLOAT, &shape));
  loom_tensor_release(source);
  assert_true(((float*)loom_tensor_data(target))[3] == 3.5f);  // not freed
  loom_tensor_release(target);
}

static void bitcast_from_a_zero_sized_dtype_fails(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(16);
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* resource = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_RESOURCE, &scalar, buffer, 0,
      &resource));
  loom_buffer_release(buffer);
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, resource, LOOM_DTYPE_FLOAT, &shape),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_bitcast_from: input tensor has a zero-sized data type "
      "(resource)");
  assert_int_equal(loom_tensor_dtype(target), LOOM_DTYPE_INT8);
  loom_tensor_release(resource);
  loom_tensor_release(target);
}

static void bitcast_to_a_zero_sized_dtype_fails(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_STRING, &shape),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_bitcast_from: output tensor has a zero-sized data type "
      "(string)");
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_to_another_byte_size_names_both_sizes(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t three = vector_of(3);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_FLOAT, &three),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_bitcast_from: input tensor (16 bytes) is not compatible "
      "with output dtype float and shape [3] (12 bytes)");
  assert_ptr_not_equal(loom_tensor_data(target), loom_tensor_data(source));
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_of_a_scalar_tensor_fails(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t shape = vector_of(4);
  float value = 0;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &value, &scalar));
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(scalar, source, LOOM_DTYPE_FLOAT, &shape),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_bitcast_from: both tensors must be dense");
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(source, scalar, LOOM_DTYPE_FLOAT, &shape),
      LOOM_STATUS_INVALID_ARGUMENT, "both tensors must be dense");
  loom_tensor_release(scalar);
  loom_tensor_release(source);
}

static void bitcast_of_a_shared_target_fails(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_tensor_retain(target);
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_INT32, &shape),
      LOOM_STATUS_FAILED_PRECONDITION,
      "loom_tensor_bitcast_from: the tensor is shared; only its sole owner "
      "may bitcast it");
  assert_int_equal(loom_tensor_dtype(target), LOOM_DTYPE_INT8);
  loom_tensor_release(target);
  loom_tensor_release(target);
  loom_tensor_release(source);
}

static void bitcast_rejects_an_unknown_shape(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* target = make_dense(LOOM_DTYPE_INT8, &scalar);
  loom_shape_t unknown = loom_shape_unknown();
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(target, source, LOOM_DTYPE_INT32, &unknown),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_tensor_bitcast_from: shape <unknown> is not fully defined");
  loom_tensor_release(source);
  loom_tensor_release(target);
}

static void bitcast_rejects_null_tensors(void** state) {
  (void)state;
  loom_tensor_t* source = make_float_source();
  loom_shape_t shape = vector_of(4);
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(NULL, source, LOOM_DTYPE_INT32, &shape),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_tensor_bitcast_from: tensor is NULL");
  LOOM_ASSERT_STATUS(
      loom_tensor_bitcast_from(source, NULL, LOOM_DTYPE_INT32, &shape),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_tensor_bitcast_from: source is NULL");
  loom_tensor_release(source);
}

//===----------------------------------------------------------------------===//
// loom_tensor_format
//===----------------------------------------------------------------------===//

static void format_prints_a_dense_tensor_like_tfrt(void** state) {
  (void)state;
  const int64_t dims[2] = {1, 3};
  loom_shape_t shape = shape_of(dims, 2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_FLOAT, &shape);
  float* values = loom_tensor_data(tensor);
  values[0] = 1.0f;
  values[1] = -2.5f;
  values[2] = 0.0f;
  char expected[256];
  snprintf(expected, sizeof(expected),
           "DenseHostTensor dtype = f32, shape = [1, 3], values = [%.6e, "
           "%.6e, %.6e]",
           1.0, -2.5, 0.0);
  char text[256];
  assert_int_equal(loom_tensor_format(tensor, text, sizeof(text)),
                   strlen(expected));
  assert_string_equal(text, expected);
  loom_tensor_release(tensor);
}

static void format_prints_a_scalar_tensor_like_tfrt(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 2};
  loom_shape_t shape = shape_of(dims, 2);
  int32_t value = 7;
  loom_tensor_t* scalar = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_INT32, &shape, &value, &scalar));
  char text[256];
  loom_tensor_format(scalar, text, sizeof(text));
  assert_string_equal(
      text, "ScalarHostTensor dtype = i32, shape = [2, 2], value = 7");
  loom_tensor_release(scalar);
}

static void format_prints_a_string_tensor_like_tfrt(void** state) {
  (void)state;
  loom_tensor_t* tensor = make_strings(2);
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 0), "a", 1));
  LOOM_ASSERT_OK(loom_tstring_copy(loom_tensor_string_at(tensor, 1), "b", 1));
  char text[256];
  loom_tensor_format(tensor, text, sizeof(text));
  assert_string_equal(text,
                      "StringHostTensor shape = [2], values = [\"a\", "
                      "\"b\"]");
  loom_tensor_release(tensor);
}

static void format_stops_after_16_values(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(20);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_INT8, &shape);
  memset(loom_tensor_data(tensor), 1, 20);
  char expected[256] = "DenseHostTensor dtype = i8, shape = [20], values = [";
  for (int i = 0; i < 16; ++i) strcat(expected, i ? ", 1" : "1");
  strcat(expected, ", ...]");
  char text[256];
  loom_tensor_format(tensor, text, sizeof(text));
  assert_string_equal(text, expected);
  loom_tensor_release(tensor);
}

static void format_truncates_and_returns_the_full_length(void** state) {
  (void)state;
  loom_shape_t shape = vector_of(2);
  loom_tensor_t* tensor = make_dense(LOOM_DTYPE_UINT8, &shape);
  memset(loom_tensor_data(tensor), 9, 2);
  const char* full =
      "DenseHostTensor dtype = ui8, shape = [2], values = [9, 9]";
  char text[10];
  assert_int_equal(loom_tensor_format(tensor, text, sizeof(text)),
                   strlen(full));
  assert_string_equal(text, "DenseHost");
  assert_int_equal(loom_tensor_format(tensor, NULL, 0), strlen(full));
  loom_tensor_release(tensor);
}

static void format_prints_zero_sized_dtypes_by_byte_count(void** state) {
  (void)state;
  loom_buffer_t* buffer = make_buffer(12);
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_system(), LOOM_DTYPE_RESOURCE, &scalar, buffer, 0,
      &tensor));
  loom_buffer_release(buffer);
  char text[256];
  loom_tensor_format(tensor, text, sizeof(text));
  assert_string_equal(
      text,
      "DenseHostTensor dtype = resource, shape = [], values = [<12 bytes>]");
  loom_tensor_release(tensor);
}

static void format_of_null_says_so(void** state) {
  (void)state;
  char text[32];
  loom_tensor_format(NULL, text, sizeof(text));
  assert_string_equal(text, "<null tensor>");
}

//===----------------------------------------------------------------------===//
// Concurrent release
//===----------------------------------------------------------------------===//

enum { kDroppers = 4, kSharers = 500 };

typedef struct tensor_race_t {
  loom_tensor_t* tensors[kSharers];
  pthread_barrier_t start;
} tensor_race_t;

static void count_shared_deallocation(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  atomic_fetch_add((atomic_int*)arg, 1);
}

static void* drop_every_tensor(void* arg) {
  tensor_race_t* race = arg;
  pthread_barrier_wait(&race->start);
  for (int i = 0; i < kSharers; ++i) loom_tensor_release(race->tensors[i]);
  return NULL;
}

// Many tensors over one wrapped buffer, each held by every dropper thread:
// the threads race for each tensor's last release, and the last of those
// releases the buffer.
static void racing_last_releases_free_tensors_and_buffer_once(void** state) {
  (void)state;
  static tensor_race_t race;
  static float data[kSharers];
  atomic_int deallocations;
  atomic_init(&deallocations, 0);
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(loom_buffer_wrap(allocator, data, sizeof(data),
                                  count_shared_deallocation, &deallocations,
                                  &buffer));
  loom_shape_t shape = vector_of(1);
  for (int i = 0; i < kSharers; ++i) {
    LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
        allocator, LOOM_DTYPE_FLOAT, &shape, buffer, (size_t)i * sizeof(float),
        &race.tensors[i]));
    for (int d = 1; d < kDroppers; ++d) loom_tensor_retain(race.tensors[i]);
  }
  loom_buffer_release(buffer);  // the tensors hold it now

  pthread_barrier_init(&race.start, NULL, kDroppers);
  pthread_t threads[kDroppers];
  for (int d = 0; d < kDroppers; ++d) {
    assert_int_equal(
        pthread_create(&threads[d], NULL, drop_every_tensor, &race), 0);
  }
  for (int d = 0; d < kDroppers; ++d) pthread_join(threads[d], NULL);
  pthread_barrier_destroy(&race.start);

  assert_int_equal(atomic_load(&deallocations), 1);
  // Tensor headers and the buffer header, each freed exactly once.
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

static loom_status_t dense_create_and_release(loom_allocator_t allocator,
                                              void* context) {
  (void)context;
  const int64_t dims[2] = {4, 4};
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(allocator, LOOM_DTYPE_FLOAT, &shape, &tensor));
  memset(loom_tensor_data(tensor), 0, loom_tensor_byte_size(tensor));
  loom_tensor_release(tensor);
  return loom_ok_status();
}

static void every_dense_allocation_failure_is_reported(void** state) {
  (void)state;
  // One block: the tensor header, the buffer and the data.
  assert_int_equal(loom_test_fault_sweep(dense_create_and_release, NULL,
                                         LOOM_TEST_SWEEP_STRICT),
                   1);
}

static loom_status_t scalar_create_and_release(loom_allocator_t allocator,
                                               void* context) {
  (void)context;
  loom_shape_t shape = loom_shape_scalar();
  double value = 1.0;
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(allocator, LOOM_DTYPE_DOUBLE,
                                                 &shape, &value, &tensor));
  loom_tensor_release(tensor);
  return loom_ok_status();
}

static void every_scalar_allocation_failure_is_reported(void** state) {
  (void)state;
  // The tensor header only.
  assert_int_equal(loom_test_fault_sweep(scalar_create_and_release, NULL,
                                         LOOM_TEST_SWEEP_STRICT),
                   1);
}

// LARGE strings take their bytes from malloc, which the string allocation
// gate fails when the sweep's allocator would: those count too.
static loom_status_t string_create_fill_and_release(loom_allocator_t allocator,
                                                    void* context) {
  (void)context;
  loom_test_gate_strings(&allocator);
  const int64_t dims[2] = {2, 3};
  loom_shape_t shape;
  loom_status_t status = loom_shape_initialize(&shape, dims, 2);
  loom_tensor_t* tensor = NULL;
  if (!status) status = loom_tensor_create_string(allocator, &shape, &tensor);
  for (int64_t i = 0; i < 6 && !status; i += 2) {
    status = loom_tstring_copy(loom_tensor_string_at(tensor, i), kLong,
                               strlen(kLong));
  }
  loom_tensor_release(tensor);
  loom_test_ungate_strings();
  return status;
}

static void every_string_allocation_failure_is_reported(void** state) {
  (void)state;
  // The element buffer, the tensor header and three LARGE strings.
  assert_int_equal(loom_test_fault_sweep(string_create_fill_and_release, NULL,
                                         LOOM_TEST_SWEEP_STRICT),
                   5);
}

static loom_status_t dense_in_buffer_create_and_release(
    loom_allocator_t allocator, void* context) {
  (void)context;
  loom_buffer_t* buffer = NULL;
  LOOM_RETURN_IF_ERROR(loom_buffer_allocate(allocator, 64, 0, &buffer));
  loom_shape_t shape;
  const int64_t dims[1] = {8};
  loom_status_t status = loom_shape_initialize(&shape, dims, 1);
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status = loom_tensor_create_dense_in_buffer(allocator, LOOM_DTYPE_INT32,
                                                &shape, buffer, 32, &tensor);
  }
  loom_buffer_release(buffer);
  loom_tensor_release(tensor);
  return status;
}

static void every_dense_in_buffer_allocation_failure_is_reported(void** state) {
  (void)state;
  // The buffer and the tensor header.
  assert_int_equal(loom_test_fault_sweep(dense_in_buffer_create_and_release,
                                         NULL, LOOM_TEST_SWEEP_STRICT),
                   2);
}

static loom_status_t convert_scalar_and_release(loom_allocator_t allocator,
                                                void* context) {
  (void)context;
  const int64_t dims[2] = {3, 3};
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 2));
  int16_t value = -3;
  loom_tensor_t *scalar = NULL, *dense = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(allocator, LOOM_DTYPE_INT16,
                                                 &shape, &value, &scalar));
  loom_status_t status =
      loom_tensor_convert_to_dense(allocator, scalar, &dense);
  loom_tensor_release(scalar);
  loom_tensor_release(dense);
  return status;
}

static void every_convert_allocation_failure_is_reported(void** state) {
  (void)state;
  // The scalar's header, then the dense tensor's one block.
  assert_int_equal(loom_test_fault_sweep(convert_scalar_and_release, NULL,
                                         LOOM_TEST_SWEEP_STRICT),
                   2);
}

static loom_status_t string_in_buffer_create_and_release(
    loom_allocator_t allocator, void* context) {
  caller_strings_t* strings = context;
  loom_shape_t shape;
  const int64_t dims[1] = {3};
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 1));
  for (size_t i = 0; i < ARRAY_SIZE(strings->elements); ++i) {
    loom_tstring_initialize(&strings->elements[i]);
  }
  // The LARGE string's bytes fail when the sweep's allocator would.
  loom_test_gate_strings(&allocator);
  loom_status_t copied =
      loom_tstring_copy(&strings->elements[0], kLong, strlen(kLong));
  loom_test_ungate_strings();
  LOOM_RETURN_IF_ERROR(copied);
  int before = strings->deallocations;
  loom_buffer_t* buffer = NULL;
  loom_tensor_t* tensor = NULL;
  // On failure the deallocator frees the elements before this returns.
  loom_status_t status =
      loom_buffer_wrap(allocator, strings->elements, sizeof(strings->elements),
                       free_caller_strings, strings, &buffer);
  if (!status) {
    status =
        loom_tensor_create_string_in_buffer(allocator, &shape, buffer, &tensor);
  }
  loom_buffer_release(buffer);
  loom_tensor_release(tensor);
  // The elements are freed exactly once per attempt, success or failure.
  int calls = strings->deallocations - before;
  if (calls != 1) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the deallocator ran %d times", calls);
  }
  return status;
}

static void every_string_in_buffer_allocation_failure_is_reported(
    void** state) {
  (void)state;
  caller_strings_t strings;
  strings.deallocations = 0;
  // The caller's LARGE string, the wrapped buffer's header and the tensor
  // header.
  assert_int_equal(loom_test_fault_sweep(string_in_buffer_create_and_release,
                                         &strings, LOOM_TEST_SWEEP_STRICT),
                   3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dense_tensor_has_the_requested_kind_dtype_and_shape),
      cmocka_unit_test(metadata_holds_dtype_and_shape),
      cmocka_unit_test(dense_data_is_64_byte_aligned),
      cmocka_unit_test(dense_byte_size_is_elements_times_sizeof),
      cmocka_unit_test(dense_data_is_writable_over_its_byte_size),
      cmocka_unit_test(dense_tensor_has_a_buffer_holding_its_data),
      cmocka_unit_test(rank_zero_dense_tensor_has_one_element),
      cmocka_unit_test(empty_dense_tensor_has_zero_bytes),
      cmocka_unit_test(create_dense_uses_the_given_allocator),
      cmocka_unit_test(create_dense_rejects_the_string_dtype),
      cmocka_unit_test(create_dense_rejects_the_resource_dtype),
      cmocka_unit_test(create_dense_rejects_the_variant_dtype),
      cmocka_unit_test(create_dense_rejects_an_invalid_dtype),
      cmocka_unit_test(create_dense_rejects_an_unknown_dimension),
      cmocka_unit_test(create_dense_rejects_an_unknown_rank),
      cmocka_unit_test(create_dense_rejects_a_null_shape),
      cmocka_unit_test(create_dense_rejects_a_null_out_tensor),
      cmocka_unit_test(create_dense_rejects_an_overflowing_element_count),
      cmocka_unit_test(create_dense_rejects_an_overflowing_byte_size),
      cmocka_unit_test(create_dense_reports_an_impossible_allocation),
      cmocka_unit_test(dense_in_buffer_views_the_bytes_at_the_offset),
      cmocka_unit_test(dense_in_buffer_at_an_unaligned_offset_is_not_aligned),
      cmocka_unit_test(dense_in_buffer_keeps_the_buffer_alive),
      cmocka_unit_test(tensors_in_one_buffer_see_each_others_writes),
      cmocka_unit_test(dense_in_a_too_small_buffer_names_both_sizes),
      cmocka_unit_test(dense_past_the_end_from_an_offset_names_the_room_left),
      cmocka_unit_test(dense_in_buffer_rejects_an_offset_past_the_end),
      cmocka_unit_test(empty_dense_at_the_end_of_a_buffer_is_allowed),
      cmocka_unit_test(dense_in_buffer_rejects_the_string_dtype),
      cmocka_unit_test(dense_in_buffer_rejects_an_invalid_dtype),
      cmocka_unit_test(resource_dense_covers_the_rest_of_the_buffer),
      cmocka_unit_test(variant_dense_covers_the_rest_of_the_buffer),
      cmocka_unit_test(dense_in_buffer_rejects_a_null_buffer),
      cmocka_unit_test(dense_in_buffer_rejects_a_null_out_tensor),
      cmocka_unit_test(dense_in_buffer_rejects_an_unknown_dimension),
      cmocka_unit_test(scalar_tensor_holds_the_value),
      cmocka_unit_test(scalar_tensor_has_the_element_count_of_its_shape),
      cmocka_unit_test(scalar_byte_size_is_one_element),
      cmocka_unit_test(scalar_tensor_has_no_buffer),
      cmocka_unit_test(scalar_tensor_copies_the_value),
      cmocka_unit_test(scalar_tensor_holds_a_whole_complex128),
      cmocka_unit_test(create_scalar_rejects_the_string_dtype),
      cmocka_unit_test(create_scalar_rejects_a_null_value),
      cmocka_unit_test(create_scalar_rejects_a_null_out_tensor),
      cmocka_unit_test(create_scalar_rejects_an_unknown_shape),
      cmocka_unit_test(convert_expands_a_scalar_to_every_element),
      cmocka_unit_test(convert_of_a_scalar_gives_a_new_dense_tensor),
      cmocka_unit_test(convert_of_an_empty_scalar_gives_an_empty_dense_tensor),
      cmocka_unit_test(convert_of_a_dense_tensor_returns_it_retained),
      cmocka_unit_test(convert_of_a_string_tensor_is_invalid),
      cmocka_unit_test(convert_rejects_a_null_tensor),
      cmocka_unit_test(convert_rejects_a_null_out_dense),
      cmocka_unit_test(string_tensor_has_string_kind_and_dtype),
      cmocka_unit_test(string_tensor_byte_size_is_elements_times_24),
      cmocka_unit_test(string_elements_start_empty_and_small),
      cmocka_unit_test(string_at_returns_consecutive_elements_of_the_data),
      cmocka_unit_test(string_at_out_of_range_is_null),
      cmocka_unit_test(string_at_of_a_dense_tensor_is_null),
      cmocka_unit_test(string_elements_keep_what_is_copied_into_them),
      cmocka_unit_test(large_string_elements_are_freed_with_the_tensor),
      cmocka_unit_test(string_elements_live_until_the_last_reference_goes),
      cmocka_unit_test(empty_string_tensor_has_zero_bytes),
      cmocka_unit_test(create_string_rejects_a_null_shape),
      cmocka_unit_test(create_string_rejects_an_unknown_dimension),
      cmocka_unit_test(create_string_rejects_a_null_out_tensor),
      cmocka_unit_test(create_string_rejects_an_overflowing_byte_size),
      cmocka_unit_test(string_in_buffer_reads_the_callers_elements),
      cmocka_unit_test(
          string_in_buffer_leaves_the_elements_to_the_buffers_owner),
      cmocka_unit_test(string_in_buffer_may_use_a_prefix_of_the_buffer),
      cmocka_unit_test(string_in_a_too_small_buffer_names_both_sizes),
      cmocka_unit_test(string_in_buffer_rejects_a_null_buffer),
      cmocka_unit_test(string_in_buffer_rejects_a_null_out_tensor),
      cmocka_unit_test(string_in_buffer_rejects_an_unknown_rank),
      cmocka_unit_test(fresh_dense_tensor_is_forwardable),
      cmocka_unit_test(retained_tensor_is_not_forwardable),
      cmocka_unit_test(tensor_whose_buffer_is_retained_is_not_forwardable),
      cmocka_unit_test(tensor_sharing_its_buffer_is_not_forwardable),
      cmocka_unit_test(tensor_over_wrapped_memory_is_not_forwardable),
      cmocka_unit_test(scalar_tensor_is_not_forwardable),
      cmocka_unit_test(null_tensor_is_not_forwardable),
      cmocka_unit_test(retain_and_release_of_null_do_nothing),
      cmocka_unit_test(set_shape_with_the_same_count_changes_the_shape),
      cmocka_unit_test(set_shape_with_another_count_names_both_shapes),
      cmocka_unit_test(set_shape_of_a_shared_tensor_fails),
      cmocka_unit_test(set_shape_rejects_an_unknown_dimension),
      cmocka_unit_test(set_shape_rejects_a_null_tensor),
      cmocka_unit_test(set_shape_rejects_a_null_shape),
      cmocka_unit_test(set_shape_reshapes_a_string_tensor),
      cmocka_unit_test(bitcast_shares_the_source_buffer),
      cmocka_unit_test(bitcast_gives_the_new_dtype_shape_and_byte_size),
      cmocka_unit_test(bitcast_reinterprets_the_bits),
      cmocka_unit_test(bitcast_releases_the_targets_old_buffer),
      cmocka_unit_test(bitcast_target_keeps_the_data_alive),
      cmocka_unit_test(bitcast_from_a_zero_sized_dtype_fails),
      cmocka_unit_test(bitcast_to_a_zero_sized_dtype_fails),
      cmocka_unit_test(bitcast_to_another_byte_size_names_both_sizes),
      cmocka_unit_test(bitcast_of_a_scalar_tensor_fails),
      cmocka_unit_test(bitcast_of_a_shared_target_fails),
      cmocka_unit_test(bitcast_rejects_an_unknown_shape),
      cmocka_unit_test(bitcast_rejects_null_tensors),
      cmocka_unit_test(format_prints_a_dense_tensor_like_tfrt),
      cmocka_unit_test(format_prints_a_scalar_tensor_like_tfrt),
      cmocka_unit_test(format_prints_a_string_tensor_like_tfrt),
      cmocka_unit_test(format_stops_after_16_values),
      cmocka_unit_test(format_truncates_and_returns_the_full_length),
      cmocka_unit_test(format_prints_zero_sized_dtypes_by_byte_count),
      cmocka_unit_test(format_of_null_says_so),
      cmocka_unit_test(every_dense_allocation_failure_is_reported),
      cmocka_unit_test(every_scalar_allocation_failure_is_reported),
      cmocka_unit_test(every_string_allocation_failure_is_reported),
      cmocka_unit_test(every_dense_in_buffer_allocation_failure_is_reported),
      cmocka_unit_test(every_convert_allocation_failure_is_reported),
      cmocka_unit_test(every_string_in_buffer_allocation_failure_is_reported),
      cmocka_unit_test(racing_last_releases_free_tensors_and_buffer_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
