// TF_Tensor: TensorFlow's tensor C API over Loom host tensors.

#include <stdlib.h>

#include "loom/tensor.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"
#include "test_support.h"

typedef struct deallocation_t {
  int calls;
  void* data;
  size_t len;
} deallocation_t;

static void record(void* data, size_t len, void* arg) {
  deallocation_t* d = arg;
  d->calls++;
  d->data = data;
  d->len = len;
}

static void new_tensor_shares_aligned_data(void** state) {
  (void)state;
  float* data = aligned_alloc(64, 64 * sizeof(float));
  for (int i = 0; i < 6; ++i) data[i] = (float)i;
  int64_t dims[2] = {2, 3};
  deallocation_t d = {0, NULL, 0};
  TF_Tensor* t =
      TF_NewTensor(TF_FLOAT, dims, 2, data, 6 * sizeof(float), record, &d);
  assert_non_null(t);
  assert_ptr_equal(TF_TensorData(t), data);
  assert_int_equal(TF_TensorType(t), TF_FLOAT);
  assert_int_equal(TF_NumDims(t), 2);
  assert_int_equal(TF_Dim(t, 0), 2);
  assert_int_equal(TF_Dim(t, 1), 3);
  assert_int_equal(TF_Dim(t, 2), -1);
  assert_int_equal(TF_Dim(t, -1), -1);
  assert_int_equal(TF_TensorByteSize(t), 6 * sizeof(float));
  assert_int_equal(TF_TensorElementCount(t), 6);
  assert_true(TF_TensorIsAligned(t));
  // Caller memory is never handed out for reuse.
  assert_null(TF_TensorMaybeMove(t));
  assert_int_equal(d.calls, 0);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);
  assert_ptr_equal(d.data, data);
  assert_int_equal(d.len, 6 * sizeof(float));
  free(data);
}

static void mismatched_length_returns_null_and_deallocates(void** state) {
  (void)state;
  static char storage[64];
  int64_t dims[1] = {4};
  const size_t kWrongLengths[] = {15, 17, 0};
  for (size_t i = 0; i < sizeof(kWrongLengths) / sizeof(kWrongLengths[0]);
       ++i) {
    deallocation_t d = {0, NULL, 0};
    assert_null(
        TF_NewTensor(TF_INT32, dims, 1, storage, kWrongLengths[i], record, &d));
    assert_int_equal(d.calls, 1);
    assert_ptr_equal(d.data, storage);
    assert_int_equal(d.len, kWrongLengths[i]);
  }
}

static void invalid_dims_or_dtype_return_null_and_deallocate(void** state) {
  (void)state;
  static char storage[64];
  deallocation_t d = {0, NULL, 0};
  int64_t negative[1] = {-3};
  assert_null(TF_NewTensor(TF_FLOAT, negative, 1, storage, 0, record, &d));
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  assert_null(TF_NewTensor(TF_FLOAT, nine, 9, storage, 4, record, &d));
  int64_t one[1] = {1};
  assert_null(TF_NewTensor((TF_DataType)0, one, 1, storage, 4, record, &d));
  assert_null(TF_NewTensor((TF_DataType)99, one, 1, storage, 4, record, &d));
  assert_int_equal(d.calls, 4);
}

static void unaligned_data_is_copied_and_released_at_once(void** state) {
  (void)state;
  char* block = aligned_alloc(64, 128);
  double* unaligned = (double*)(block + 8);
  unaligned[0] = 1.25;
  unaligned[1] = -7.5;
  int64_t dims[1] = {2};
  deallocation_t d = {0, NULL, 0};
  TF_Tensor* t = TF_NewTensor(TF_DOUBLE, dims, 1, unaligned, 2 * sizeof(double),
                              record, &d);
  assert_non_null(t);
  assert_int_equal(d.calls, 1);  // the copy was made, the original released
  assert_ptr_not_equal(TF_TensorData(t), unaligned);
  assert_true(TF_TensorIsAligned(t));
  assert_true(((double*)TF_TensorData(t))[0] == 1.25);
  assert_true(((double*)TF_TensorData(t))[1] == -7.5);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);
  free(block);
}

static void allocate_tensor_is_aligned_and_movable(void** state) {
  (void)state;
  int64_t dims[3] = {2, 2, 2};
  TF_Tensor* t = TF_AllocateTensor(TF_INT64, dims, 3, 8 * sizeof(int64_t));
  assert_non_null(t);
  assert_true(TF_TensorIsAligned(t));
  assert_int_equal(TF_TensorByteSize(t), 8 * sizeof(int64_t));
  assert_ptr_equal(TF_TensorMaybeMove(t), t);
  TF_Tensor* shared = (TF_Tensor*)t;
  loom_tensor_retain((loom_tensor_t*)shared);
  assert_null(TF_TensorMaybeMove(t));
  TF_DeleteTensor(shared);
  TF_DeleteTensor(t);
  assert_null(TF_AllocateTensor(TF_INT64, dims, 3, 63));
  TF_DeleteTensor(NULL);
}

static void rank_zero_and_empty_tensors(void** state) {
  (void)state;
  TF_Tensor* scalar = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  assert_non_null(scalar);
  assert_int_equal(TF_NumDims(scalar), 0);
  assert_int_equal(TF_TensorElementCount(scalar), 1);
  TF_DeleteTensor(scalar);
  int64_t dims[2] = {3, 0};
  TF_Tensor* empty = TF_AllocateTensor(TF_FLOAT, dims, 2, 0);
  assert_non_null(empty);
  assert_int_equal(TF_TensorElementCount(empty), 0);
  assert_int_equal(TF_TensorByteSize(empty), 0);
  TF_DeleteTensor(empty);
}

static void string_tensors_hold_tstrings(void** state) {
  (void)state;
  int64_t dims[1] = {2};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, 2 * sizeof(TF_TString));
  assert_non_null(t);
  assert_int_equal(TF_TensorByteSize(t), 2 * sizeof(TF_TString));
  TF_TString* strings = TF_TensorData(t);
  assert_int_equal(TF_StringGetSize(&strings[0]), 0);
  TF_StringCopy(&strings[1], "a string stored on the heap, freed later", 40);
  assert_int_equal(TF_StringGetSize(&strings[1]), 40);
  TF_DeleteTensor(t);
  assert_null(TF_AllocateTensor(TF_STRING, dims, 1, 24));
}

static void resource_tensors_take_any_length(void** state) {
  (void)state;
  TF_Tensor* t = TF_AllocateTensor(TF_RESOURCE, NULL, 0, 37);
  assert_non_null(t);
  assert_int_equal(TF_TensorByteSize(t), 37);
  TF_DeleteTensor(t);
}

static void set_shape_changes_dims_with_the_same_count(void** state) {
  (void)state;
  int64_t dims[2] = {2, 6};
  TF_Tensor* t = TF_AllocateTensor(TF_UINT8, dims, 2, 12);
  int64_t reshaped[3] = {3, 2, 2};
  TF_SetShape(t, reshaped, 3);
  assert_int_equal(TF_NumDims(t), 3);
  assert_int_equal(TF_Dim(t, 0), 3);
  int64_t wrong[1] = {5};
  TF_SetShape(t, wrong, 1);
  assert_int_equal(TF_NumDims(t), 3);  // unchanged
  TF_SetShape(NULL, wrong, 1);
  TF_DeleteTensor(t);
}

static void bitcast_shares_data(void** state) {
  (void)state;
  int64_t dims[1] = {4};
  TF_Tensor* from = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  float* values = TF_TensorData(from);
  for (int i = 0; i < 4; ++i) values[i] = (float)i * 1.5f;
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  int64_t new_dims[2] = {2, 2};
  TF_TensorBitcastFrom(from, TF_UINT32, to, new_dims, 2, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_ptr_equal(TF_TensorData(to), TF_TensorData(from));
  assert_int_equal(TF_TensorType(to), TF_UINT32);
  assert_int_equal(TF_NumDims(to), 2);
  uint32_t bits;
  memcpy(&bits, &values[3], sizeof(bits));
  assert_int_equal(((uint32_t*)TF_TensorData(to))[3], bits);

  int64_t three[1] = {3};
  TF_TensorBitcastFrom(from, TF_FLOAT, to, three, 1, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_non_null(strstr(TF_Message(status), "is not compatible"));
  TF_TensorBitcastFrom(from, TF_STRING, to, new_dims, 2, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_non_null(
      strstr(TF_Message(status), "output tensor has a zero-sized data type"));
  TF_Tensor* resource = TF_AllocateTensor(TF_RESOURCE, NULL, 0, 16);
  TF_TensorBitcastFrom(resource, TF_FLOAT, to, dims, 1, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_non_null(
      strstr(TF_Message(status), "input tensor has a zero-sized data type"));
  TF_TensorBitcastFrom(NULL, TF_FLOAT, to, dims, 1, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  TF_DeleteTensor(resource);
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

//===----------------------------------------------------------------------===//
// Allocation failures through the default allocator
//===----------------------------------------------------------------------===//

typedef struct sweep_t {
  int deallocations;
} sweep_t;

static void count(void* data, size_t len, void* arg) {
  (void)data;
  (void)len;
  ((sweep_t*)arg)->deallocations++;
}

static loom_status_t use_tf_tensors(loom_allocator_t allocator, void* context) {
  sweep_t* sweep = context;
  loom_allocator_t previous = loom_allocator_set_default(allocator);
  loom_status_t status = loom_ok_status();
  int64_t dims[1] = {8};
  TF_Tensor* allocated = TF_AllocateTensor(TF_FLOAT, dims, 1, 32);
  if (!allocated) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "allocate");
  }
  static float data[8] __attribute__((aligned(64)));
  int before = sweep->deallocations;
  TF_Tensor* wrapped =
      TF_NewTensor(TF_FLOAT, dims, 1, data, sizeof(data), count, sweep);
  if (!wrapped && !status) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "wrap");
  }
  TF_DeleteTensor(allocated);
  TF_DeleteTensor(wrapped);
  loom_allocator_set_default(previous);
  // TF_NewTensor calls the deallocator exactly once, whether it succeeded.
  int calls = sweep->deallocations - before;
  if (calls != 1) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the deallocator ran %d times", calls);
  }
  return status;
}

static void every_allocation_failure_returns_null_without_leaks(void** state) {
  (void)state;
  sweep_t sweep = {0};
  assert_int_equal(
      loom_test_fault_sweep(use_tf_tensors, &sweep, LOOM_TEST_SWEEP_STRICT), 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_tensor_shares_aligned_data),
      cmocka_unit_test(mismatched_length_returns_null_and_deallocates),
      cmocka_unit_test(invalid_dims_or_dtype_return_null_and_deallocate),
      cmocka_unit_test(unaligned_data_is_copied_and_released_at_once),
      cmocka_unit_test(allocate_tensor_is_aligned_and_movable),
      cmocka_unit_test(rank_zero_and_empty_tensors),
      cmocka_unit_test(string_tensors_hold_tstrings),
      cmocka_unit_test(resource_tensors_take_any_length),
      cmocka_unit_test(set_shape_changes_dims_with_the_same_count),
      cmocka_unit_test(bitcast_shares_data),
      cmocka_unit_test(every_allocation_failure_returns_null_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
