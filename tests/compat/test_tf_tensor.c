// TF_Tensor: TensorFlow's tensor C API over Loom host tensors.

#include <stdalign.h>

#include "loom/tensor.h"
#include "string_allocation_gate.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"
#include "test_support.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char kLong[] = "a string long enough to live on the heap";

typedef struct deallocation_t {
  int calls;
  void* data;
  size_t len;
  void* arg;
} deallocation_t;

// The deallocator under test: records its arguments; `arg` is the record.
static void record(void* data, size_t len, void* arg) {
  deallocation_t* d = arg;
  d->calls++;
  d->data = data;
  d->len = len;
  d->arg = arg;
}

// 64-byte aligned storage the tests wrap (static: never freed by mistake).
static alignas(64) unsigned char g_storage[256];

// Checks a TF_Status's code and that its message contains `substring`.
#define ASSERT_TF_STATUS(s, code, substring)                           \
  do {                                                                 \
    assert_int_equal(TF_GetCode(s), (code));                           \
    if (!strstr(TF_Message(s), (substring))) {                         \
      fail_msg("message '%s' lacks '%s'", TF_Message(s), (substring)); \
    }                                                                  \
  } while (0)

//===----------------------------------------------------------------------===//
// TF_NewTensor
//===----------------------------------------------------------------------===//

static void new_tensor_shares_64_byte_aligned_data(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  deallocation_t d = {0};
  TF_Tensor* t =
      TF_NewTensor(TF_FLOAT, dims, 2, g_storage, 6 * sizeof(float), record, &d);
  assert_non_null(t);
  assert_ptr_equal(TF_TensorData(t), g_storage);
  assert_true(TF_TensorIsAligned(t));
  TF_DeleteTensor(t);
}

static void new_tensor_reports_type_dims_and_sizes(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  TF_Tensor* t = TF_NewTensor(TF_INT64, dims, 2, g_storage, 6 * sizeof(int64_t),
                              NULL, NULL);
  assert_non_null(t);
  assert_int_equal(TF_TensorType(t), TF_INT64);
  assert_int_equal(TF_NumDims(t), 2);
  assert_int_equal(TF_Dim(t, 0), 2);
  assert_int_equal(TF_Dim(t, 1), 3);
  assert_int_equal(TF_TensorByteSize(t), 6 * sizeof(int64_t));
  assert_int_equal(TF_TensorElementCount(t), 6);
  TF_DeleteTensor(t);
}

static void new_tensor_deallocates_once_on_delete(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  deallocation_t d = {0};
  TF_Tensor* t = TF_NewTensor(TF_INT32, dims, 1, g_storage, 4 * sizeof(int32_t),
                              record, &d);
  assert_int_equal(d.calls, 0);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);
  assert_ptr_equal(d.data, g_storage);
  assert_int_equal(d.len, 4 * sizeof(int32_t));
  assert_ptr_equal(d.arg, &d);
}

static void new_tensor_deallocates_when_the_last_sharer_goes(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  deallocation_t d = {0};
  TF_Tensor* t =
      TF_NewTensor(TF_FLOAT, dims, 1, g_storage, 4 * sizeof(float), record, &d);
  TF_Tensor* shared = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  TF_TensorBitcastFrom(t, TF_UINT32, shared, dims, 1, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 0);
  TF_DeleteTensor(shared);
  assert_int_equal(d.calls, 1);
  TF_DeleteStatus(status);
}

static void new_tensor_with_a_short_length_returns_null_and_deallocates(
    void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_INT32, dims, 1, g_storage, 15, record, &d));
  assert_int_equal(d.calls, 1);
  assert_ptr_equal(d.data, g_storage);
  assert_int_equal(d.len, 15);
  assert_ptr_equal(d.arg, &d);
}

static void new_tensor_with_a_long_length_returns_null_and_deallocates(
    void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_INT32, dims, 1, g_storage, 17, record, &d));
  assert_int_equal(d.calls, 1);
  assert_int_equal(d.len, 17);
}

static void new_tensor_with_zero_length_for_elements_returns_null(
    void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_INT32, dims, 1, g_storage, 0, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_with_a_negative_dim_returns_null_and_deallocates(
    void** state) {
  (void)state;
  const int64_t dims[1] = {-3};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, dims, 1, g_storage, 0, record, &d));
  assert_int_equal(d.calls, 1);
  assert_ptr_equal(d.data, g_storage);
}

static void new_tensor_with_an_unknown_dim_returns_null_and_deallocates(
    void** state) {
  (void)state;
  const int64_t dims[1] = {-1};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, dims, 1, g_storage, 4, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_of_rank_255_returns_null_and_deallocates(void** state) {
  (void)state;
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, dims, LOOM_MAX_SHAPE_RANK + 1, g_storage,
                           4, record, &d));
  assert_int_equal(d.calls, 1);
}

// TensorFlow's ranks go to 254; Loom spills dims beyond 8 (loom/shape.h).
static void tensors_of_ranks_9_to_254_keep_their_dims(void** state) {
  (void)state;
  const int ranks[3] = {9, 17, LOOM_MAX_SHAPE_RANK};
  for (int r = 0; r < 3; ++r) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int i = 0; i < ranks[r]; ++i) dims[i] = 1;
    dims[0] = 2;
    dims[ranks[r] - 1] = 3;
    TF_Tensor* t =
        TF_AllocateTensor(TF_FLOAT, dims, ranks[r], 6 * sizeof(float));
    assert_non_null(t);
    assert_int_equal(TF_NumDims(t), ranks[r]);
    assert_int_equal(TF_Dim(t, 0), 2);
    assert_int_equal(TF_Dim(t, ranks[r] - 1), 3);
    assert_int_equal(TF_Dim(t, ranks[r] / 2), 1);
    assert_int_equal(TF_Dim(t, ranks[r]), -1);
    assert_int_equal(TF_TensorElementCount(t), 6);
    assert_int_equal(TF_TensorByteSize(t), 6 * sizeof(float));
    // The same dims again: the same shape, made without a second copy.
    TF_Tensor* again =
        TF_AllocateTensor(TF_FLOAT, dims, ranks[r], 6 * sizeof(float));
    assert_non_null(again);
    assert_true(loom_shape_equal(loom_tensor_shape((loom_tensor_t*)t),
                                 loom_tensor_shape((loom_tensor_t*)again)));
    TF_DeleteTensor(again);
    TF_DeleteTensor(t);
  }
}

static void new_tensor_of_negative_rank_returns_null_and_deallocates(
    void** state) {
  (void)state;
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, NULL, -1, g_storage, 4, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_with_null_dims_returns_null_and_deallocates(
    void** state) {
  (void)state;
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, NULL, 1, g_storage, 4, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_of_dtype_0_returns_null_and_deallocates(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  deallocation_t d = {0};
  assert_null(TF_NewTensor((TF_DataType)0, dims, 1, g_storage, 4, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_of_a_dtype_past_the_enum_returns_null(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  deallocation_t d = {0};
  assert_null(TF_NewTensor((TF_DataType)99, dims, 1, g_storage, 4, record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_tensor_with_null_data_and_a_length_returns_null(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_FLOAT, dims, 1, NULL, 4, record, &d));
  assert_int_equal(d.calls, 1);
  assert_null(d.data);
}

static void new_tensor_errors_need_no_deallocator(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  assert_null(TF_NewTensor(TF_INT32, dims, 1, g_storage, 3, NULL, NULL));
}

static void new_empty_tensor_accepts_null_data(void** state) {
  (void)state;
  const int64_t dims[2] = {3, 0};
  deallocation_t d = {0};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 2, NULL, 0, record, &d);
  assert_non_null(t);
  assert_int_equal(TF_TensorElementCount(t), 0);
  assert_int_equal(TF_TensorByteSize(t), 0);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);
}

static void new_tensor_copies_unaligned_data(void** state) {
  (void)state;
  double* unaligned = (double*)(g_storage + 8);
  unaligned[0] = 1.25;
  unaligned[1] = -7.5;
  const int64_t dims[1] = {2};
  deallocation_t d = {0};
  TF_Tensor* t = TF_NewTensor(TF_DOUBLE, dims, 1, unaligned, 2 * sizeof(double),
                              record, &d);
  assert_non_null(t);
  assert_ptr_not_equal(TF_TensorData(t), unaligned);
  assert_memory_equal(TF_TensorData(t), unaligned, 2 * sizeof(double));
  TF_DeleteTensor(t);
}

static void new_tensor_deallocates_unaligned_data_at_once(void** state) {
  (void)state;
  void* unaligned = g_storage + 4;
  const int64_t dims[1] = {3};
  deallocation_t d = {0};
  TF_Tensor* t =
      TF_NewTensor(TF_FLOAT, dims, 1, unaligned, 3 * sizeof(float), record, &d);
  assert_int_equal(d.calls, 1);
  assert_ptr_equal(d.data, unaligned);
  assert_int_equal(d.len, 3 * sizeof(float));
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);  // not again
}

static void new_tensor_copy_of_unaligned_data_is_aligned(void** state) {
  (void)state;
  const int64_t dims[1] = {3};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 1, g_storage + 4,
                              3 * sizeof(float), NULL, NULL);
  assert_true(TF_TensorIsAligned(t));
  assert_int_equal((uintptr_t)TF_TensorData(t) % 64, 0);
  TF_DeleteTensor(t);
}

static void new_tensor_of_callers_strings_uses_them_in_place(void** state) {
  (void)state;
  TF_TString strings[2];
  TF_StringInit(&strings[0]);
  TF_StringInit(&strings[1]);
  TF_StringCopy(&strings[1], "b", 1);
  const int64_t dims[1] = {2};
  TF_Tensor* t =
      TF_NewTensor(TF_STRING, dims, 1, strings, sizeof(strings), NULL, NULL);
  assert_non_null(t);
  assert_int_equal(TF_TensorType(t), TF_STRING);
  assert_ptr_equal(TF_TensorData(t), strings);
  assert_int_equal(TF_TensorByteSize(t), sizeof(strings));
  TF_DeleteTensor(t);
}

static void new_tensor_of_strings_with_a_wrong_length_returns_null(
    void** state) {
  (void)state;
  TF_TString strings[2];
  const int64_t dims[1] = {2};
  deallocation_t d = {0};
  assert_null(TF_NewTensor(TF_STRING, dims, 1, strings, sizeof(strings) - 1,
                           record, &d));
  assert_int_equal(d.calls, 1);
}

static void new_resource_tensor_takes_any_length(void** state) {
  (void)state;
  deallocation_t d = {0};
  TF_Tensor* t = TF_NewTensor(TF_RESOURCE, NULL, 0, g_storage, 37, record, &d);
  assert_non_null(t);
  assert_int_equal(TF_TensorByteSize(t), 37);
  assert_ptr_equal(TF_TensorData(t), g_storage);
  TF_DeleteTensor(t);
  assert_int_equal(d.calls, 1);
}

//===----------------------------------------------------------------------===//
// TF_AllocateTensor
//===----------------------------------------------------------------------===//

static void allocated_tensor_is_aligned(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 2, 3};
  TF_Tensor* t = TF_AllocateTensor(TF_INT8, dims, 3, 12);
  assert_non_null(t);
  assert_true(TF_TensorIsAligned(t));
  assert_int_equal((uintptr_t)TF_TensorData(t) % 64, 0);
  TF_DeleteTensor(t);
}

static void allocated_tensor_has_the_requested_byte_size(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 2, 2};
  TF_Tensor* t = TF_AllocateTensor(TF_INT64, dims, 3, 8 * sizeof(int64_t));
  assert_int_equal(TF_TensorByteSize(t), 8 * sizeof(int64_t));
  assert_int_equal(TF_TensorType(t), TF_INT64);
  memset(TF_TensorData(t), 0, TF_TensorByteSize(t));  // all writable
  TF_DeleteTensor(t);
}

static void allocate_tensor_with_a_wrong_length_returns_null(void** state) {
  (void)state;
  const int64_t dims[3] = {2, 2, 2};
  assert_null(TF_AllocateTensor(TF_INT64, dims, 3, 8 * sizeof(int64_t) - 1));
  assert_null(TF_AllocateTensor(TF_INT64, dims, 3, 8 * sizeof(int64_t) + 1));
}

static void allocate_tensor_with_bad_dims_returns_null(void** state) {
  (void)state;
  const int64_t negative[1] = {-2};
  int64_t ones[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  assert_null(TF_AllocateTensor(TF_FLOAT, negative, 1, 0));
  assert_null(TF_AllocateTensor(TF_FLOAT, ones, LOOM_MAX_SHAPE_RANK + 1,
                                sizeof(float)));
  assert_null(TF_AllocateTensor((TF_DataType)0, NULL, 0, 0));
}

static void allocated_string_tensor_holds_empty_24_byte_strings(void** state) {
  (void)state;
  const int64_t dims[1] = {3};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, 3 * sizeof(TF_TString));
  assert_non_null(t);
  assert_int_equal(sizeof(TF_TString), 24);
  assert_int_equal(TF_TensorByteSize(t), 3 * sizeof(TF_TString));
  const TF_TString* strings = TF_TensorData(t);
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(TF_StringGetType(&strings[i]), TF_TSTR_SMALL);
    assert_int_equal(TF_StringGetSize(&strings[i]), 0);
  }
  TF_DeleteTensor(t);
}

static void allocated_string_tensor_frees_large_strings(void** state) {
  (void)state;
  const int64_t dims[1] = {2};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, 2 * sizeof(TF_TString));
  TF_TString* strings = TF_TensorData(t);
  TF_StringCopy(&strings[0], kLong, strlen(kLong));
  TF_StringCopy(&strings[1], kLong, strlen(kLong));
  assert_int_equal(TF_StringGetType(&strings[1]), TF_TSTR_LARGE);
  TF_DeleteTensor(t);  // LeakSanitizer reports the strings otherwise
}

static void allocate_string_tensor_with_a_wrong_length_returns_null(
    void** state) {
  (void)state;
  const int64_t dims[1] = {2};
  assert_null(TF_AllocateTensor(TF_STRING, dims, 1, sizeof(TF_TString)));
}

static void allocated_resource_tensor_takes_any_length(void** state) {
  (void)state;
  TF_Tensor* t = TF_AllocateTensor(TF_RESOURCE, NULL, 0, 37);
  assert_non_null(t);
  assert_int_equal(TF_TensorByteSize(t), 37);
  assert_int_equal(TF_TensorType(t), TF_RESOURCE);
  TF_DeleteTensor(t);
}

//===----------------------------------------------------------------------===//
// TF_TensorMaybeMove
//===----------------------------------------------------------------------===//

static void allocated_tensor_can_be_moved(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  assert_ptr_equal(TF_TensorMaybeMove(t), t);
  TF_DeleteTensor(t);
}

static void allocated_string_tensor_can_be_moved(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, sizeof(TF_TString));
  assert_ptr_equal(TF_TensorMaybeMove(t), t);
  TF_DeleteTensor(t);
}

static void shared_tensor_cannot_be_moved(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  // A TF_Tensor is a Loom tensor: a second reference shares it.
  loom_tensor_retain((loom_tensor_t*)t);
  assert_null(TF_TensorMaybeMove(t));
  TF_DeleteTensor(t);
  assert_ptr_equal(TF_TensorMaybeMove(t), t);
  TF_DeleteTensor(t);
}

static void tensor_over_callers_memory_cannot_be_moved(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 1, g_storage, 16, NULL, NULL);
  assert_null(TF_TensorMaybeMove(t));
  TF_DeleteTensor(t);
}

static void copy_of_unaligned_data_can_be_moved(void** state) {
  (void)state;
  const int64_t dims[1] = {4};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 1, g_storage + 4, 16, NULL, NULL);
  assert_ptr_equal(TF_TensorMaybeMove(t), t);
  TF_DeleteTensor(t);
}

//===----------------------------------------------------------------------===//
// Shape accessors
//===----------------------------------------------------------------------===//

static void rank_zero_tensor_has_one_element(void** state) {
  (void)state;
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
  assert_non_null(t);
  assert_int_equal(TF_NumDims(t), 0);
  assert_int_equal(TF_TensorElementCount(t), 1);
  assert_int_equal(TF_TensorByteSize(t), sizeof(float));
  TF_DeleteTensor(t);
}

static void empty_tensor_has_no_elements_or_bytes(void** state) {
  (void)state;
  const int64_t dims[2] = {3, 0};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 2, 0);
  assert_non_null(t);
  assert_int_equal(TF_NumDims(t), 2);
  assert_int_equal(TF_Dim(t, 0), 3);
  assert_int_equal(TF_Dim(t, 1), 0);
  assert_int_equal(TF_TensorElementCount(t), 0);
  assert_int_equal(TF_TensorByteSize(t), 0);
  TF_DeleteTensor(t);
}

static void dim_out_of_range_is_minus_one(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 3};
  TF_Tensor* t = TF_AllocateTensor(TF_UINT8, dims, 2, 6);
  assert_int_equal(TF_Dim(t, 2), -1);
  assert_int_equal(TF_Dim(t, -1), -1);
  TF_Tensor* scalar = TF_AllocateTensor(TF_UINT8, NULL, 0, 1);
  assert_int_equal(TF_Dim(scalar, 0), -1);
  TF_DeleteTensor(scalar);
  TF_DeleteTensor(t);
}

static void tensor_type_is_the_allocated_dtype(void** state) {
  (void)state;
  const TF_DataType kTypes[] = {TF_FLOAT,  TF_DOUBLE,   TF_INT32,
                                TF_BOOL,   TF_HALF,     TF_INT4,
                                TF_UINT64, TF_BFLOAT16, TF_COMPLEX128};
  for (size_t i = 0; i < ARRAY_SIZE(kTypes); ++i) {
    TF_Tensor* t =
        TF_AllocateTensor(kTypes[i], NULL, 0, TF_DataTypeSize(kTypes[i]));
    assert_non_null(t);
    assert_int_equal(TF_TensorType(t), kTypes[i]);
    TF_DeleteTensor(t);
  }
}

static void delete_of_null_is_a_no_op(void** state) {
  (void)state;
  TF_DeleteTensor(NULL);
}

//===----------------------------------------------------------------------===//
// TF_SetShape
//===----------------------------------------------------------------------===//

static void set_shape_with_the_same_count_changes_the_dims(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 6};
  TF_Tensor* t = TF_AllocateTensor(TF_UINT8, dims, 2, 12);
  void* data = TF_TensorData(t);
  const int64_t reshaped[3] = {3, 2, 2};
  TF_SetShape(t, reshaped, 3);
  assert_int_equal(TF_NumDims(t), 3);
  assert_int_equal(TF_Dim(t, 0), 3);
  assert_int_equal(TF_Dim(t, 1), 2);
  assert_int_equal(TF_Dim(t, 2), 2);
  assert_ptr_equal(TF_TensorData(t), data);
  TF_DeleteTensor(t);
}

static void set_shape_with_another_count_leaves_the_shape(void** state) {
  (void)state;
  const int64_t dims[2] = {2, 6};
  TF_Tensor* t = TF_AllocateTensor(TF_UINT8, dims, 2, 12);
  const int64_t wrong[1] = {5};
  TF_SetShape(t, wrong, 1);
  assert_int_equal(TF_NumDims(t), 2);
  assert_int_equal(TF_Dim(t, 0), 2);
  assert_int_equal(TF_Dim(t, 1), 6);
  TF_DeleteTensor(t);
}

static void set_shape_with_invalid_dims_leaves_the_shape(void** state) {
  (void)state;
  const int64_t dims[1] = {1};
  TF_Tensor* t = TF_AllocateTensor(TF_UINT8, dims, 1, 1);
  const int64_t negative[1] = {-1};
  int64_t ones[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  TF_SetShape(t, negative, 1);
  TF_SetShape(t, ones, LOOM_MAX_SHAPE_RANK + 1);
  TF_SetShape(t, NULL, 2);
  assert_int_equal(TF_NumDims(t), 1);
  assert_int_equal(TF_Dim(t, 0), 1);
  TF_DeleteTensor(t);
}

static void set_shape_of_null_is_ignored(void** state) {
  (void)state;
  const int64_t dims[1] = {5};
  TF_SetShape(NULL, dims, 1);
}

//===----------------------------------------------------------------------===//
// TF_TensorBitcastFrom
//===----------------------------------------------------------------------===//

static TF_Tensor* make_float_source(void) {
  const int64_t dims[1] = {4};
  TF_Tensor* from = TF_AllocateTensor(TF_FLOAT, dims, 1, 4 * sizeof(float));
  float* values = TF_TensorData(from);
  for (int i = 0; i < 4; ++i) values[i] = (float)i * 1.5f;
  return from;
}

static void bitcast_shares_the_data(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[2] = {2, 2};
  TF_TensorBitcastFrom(from, TF_UINT32, to, dims, 2, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_ptr_equal(TF_TensorData(to), TF_TensorData(from));
  uint32_t bits;
  memcpy(&bits, (float*)TF_TensorData(from) + 3, sizeof(bits));
  assert_int_equal(((uint32_t*)TF_TensorData(to))[3], bits);
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_gives_the_new_type_and_dims(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[3] = {2, 2, 2};
  TF_TensorBitcastFrom(from, TF_INT16, to, dims, 3, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(TF_TensorType(to), TF_INT16);
  assert_int_equal(TF_NumDims(to), 3);
  assert_int_equal(TF_Dim(to, 2), 2);
  assert_int_equal(TF_TensorByteSize(to), TF_TensorByteSize(from));
  assert_int_equal(TF_TensorType(from), TF_FLOAT);  // the source is unchanged
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_success_clears_a_previous_error(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  TF_SetStatus(status, TF_INTERNAL, "stale");
  const int64_t dims[1] = {4};
  TF_TensorBitcastFrom(from, TF_INT32, to, dims, 1, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_string_equal(TF_Message(status), "");
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_from_a_zero_sized_type_is_invalid(void** state) {
  (void)state;
  TF_Tensor* resource = TF_AllocateTensor(TF_RESOURCE, NULL, 0, 16);
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[1] = {4};
  TF_TensorBitcastFrom(resource, TF_FLOAT, to, dims, 1, status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "input tensor has a zero-sized data type");
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(resource);
}

static void bitcast_to_a_zero_sized_type_is_invalid(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[1] = {4};
  TF_TensorBitcastFrom(from, TF_STRING, to, dims, 1, status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "output tensor has a zero-sized data type");
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_to_incompatible_sizes_is_invalid(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[1] = {3};
  TF_TensorBitcastFrom(from, TF_FLOAT, to, dims, 1, status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "input tensor (16 bytes) is not compatible with output "
                   "dtype float and shape [3] (12 bytes)");
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void failed_bitcast_leaves_the_target_unchanged(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  void* data = TF_TensorData(to);
  TF_Status* status = TF_NewStatus();
  const int64_t dims[1] = {3};
  TF_TensorBitcastFrom(from, TF_FLOAT, to, dims, 1, status);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_int_equal(TF_TensorType(to), TF_INT8);
  assert_int_equal(TF_NumDims(to), 0);
  assert_ptr_equal(TF_TensorData(to), data);
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_with_invalid_dims_is_invalid(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  TF_Status* status = TF_NewStatus();
  int64_t ones[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  ones[LOOM_MAX_SHAPE_RANK] = 4;
  TF_TensorBitcastFrom(from, TF_FLOAT, to, ones, LOOM_MAX_SHAPE_RANK + 1,
                       status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "shape rank 255 is outside [0, 254]");
  TF_DeleteStatus(status);
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

static void bitcast_of_null_tensors_is_invalid(void** state) {
  (void)state;
  TF_Tensor* t = make_float_source();
  TF_Status* status = TF_NewStatus();
  const int64_t dims[1] = {4};
  TF_TensorBitcastFrom(NULL, TF_FLOAT, t, dims, 1, status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "TF_TensorBitcastFrom: from is NULL");
  TF_TensorBitcastFrom(t, TF_FLOAT, NULL, dims, 1, status);
  ASSERT_TF_STATUS(status, TF_INVALID_ARGUMENT,
                   "TF_TensorBitcastFrom: to is NULL");
  TF_DeleteStatus(status);
  TF_DeleteTensor(t);
}

static void bitcast_with_a_null_status_still_bitcasts(void** state) {
  (void)state;
  TF_Tensor* from = make_float_source();
  TF_Tensor* to = TF_AllocateTensor(TF_INT8, NULL, 0, 1);
  const int64_t dims[1] = {4};
  TF_TensorBitcastFrom(from, TF_INT32, to, dims, 1, NULL);
  assert_int_equal(TF_TensorType(to), TF_INT32);
  TF_TensorBitcastFrom(from, TF_INT32, to, dims, 0, NULL);  // error dropped
  TF_DeleteTensor(to);
  TF_DeleteTensor(from);
}

//===----------------------------------------------------------------------===//
// Allocation failures through the default allocator
//===----------------------------------------------------------------------===//

typedef TF_Tensor* (*tf_maker_fn_t)(void* context);

typedef struct tf_sweep_t {
  tf_maker_fn_t make;
  int deallocations;      // calls to count_deallocation
  int expected_per_call;  // 1 for TF_NewTensor, 0 for TF_AllocateTensor
} tf_sweep_t;

static void count_deallocation(void* data, size_t len, void* arg) {
  (void)data;
  (void)len;
  ((tf_sweep_t*)arg)->deallocations++;
}

// Makes a tensor with `allocator` as the default (and gating the C heap of
// LARGE strings); NULL becomes an error. The
// deallocator must have run exactly expected_per_call times once the tensor
// is gone, whether it was made or not.
static loom_status_t make_and_delete(loom_allocator_t allocator,
                                     void* context) {
  tf_sweep_t* sweep = context;
  int before = sweep->deallocations;
  loom_allocator_t previous = loom_allocator_set_default(allocator);
  loom_test_gate_strings(&allocator);
  TF_Tensor* t = sweep->make(sweep);
  TF_DeleteTensor(t);
  loom_test_ungate_strings();
  loom_allocator_set_default(previous);
  int calls = sweep->deallocations - before;
  if (calls != sweep->expected_per_call) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the deallocator ran %d times", calls);
  }
  if (!t) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "NULL tensor");
  }
  return loom_ok_status();
}

static int64_t sweep(tf_maker_fn_t make, int expected_per_call) {
  tf_sweep_t context = {make, 0, expected_per_call};
  return loom_test_fault_sweep(make_and_delete, &context,
                               LOOM_TEST_SWEEP_STRICT);
}

static TF_Tensor* allocate_floats(void* context) {
  (void)context;
  const int64_t dims[2] = {4, 8};
  return TF_AllocateTensor(TF_FLOAT, dims, 2, 32 * sizeof(float));
}

static TF_Tensor* allocate_strings(void* context) {
  (void)context;
  const int64_t dims[1] = {3};
  TF_Tensor* t = TF_AllocateTensor(TF_STRING, dims, 1, 3 * sizeof(TF_TString));
  if (t) {
    TF_TString* strings = TF_TensorData(t);
    TF_StringCopy(&strings[1], kLong, strlen(kLong));
    // TF_StringCopy reports no error: out of memory, it leaves the string
    // as it was (empty).
    if (TF_StringGetSize(&strings[1]) != strlen(kLong)) {
      assert_int_equal(TF_StringGetSize(&strings[1]), 0);
      TF_DeleteTensor(t);
      return NULL;
    }
  }
  return t;
}

static TF_Tensor* allocate_resource(void* context) {
  (void)context;
  return TF_AllocateTensor(TF_RESOURCE, NULL, 0, 40);
}

static TF_Tensor* wrap_aligned(void* context) {
  const int64_t dims[1] = {8};
  return TF_NewTensor(TF_FLOAT, dims, 1, g_storage, 8 * sizeof(float),
                      count_deallocation, context);
}

static TF_Tensor* copy_unaligned(void* context) {
  const int64_t dims[1] = {8};
  return TF_NewTensor(TF_FLOAT, dims, 1, g_storage + 4, 8 * sizeof(float),
                      count_deallocation, context);
}

static TF_Tensor* wrap_strings(void* context) {
  static TF_TString strings[2];
  TF_StringInit(&strings[0]);
  TF_StringInit(&strings[1]);
  const int64_t dims[1] = {2};
  return TF_NewTensor(TF_STRING, dims, 1, strings, sizeof(strings),
                      count_deallocation, context);
}

static void every_allocate_tensor_failure_returns_null(void** state) {
  (void)state;
  // One block: the tensor header, the buffer and the data.
  assert_int_equal(sweep(allocate_floats, 0), 1);
}

static void every_allocate_string_tensor_failure_returns_null(void** state) {
  (void)state;
  // The tensor's two blocks, then the LARGE string's bytes (malloc'ed, the
  // sweep failing them through the string allocation gate).
  assert_int_equal(sweep(allocate_strings, 0), 3);
}

static void every_allocate_resource_tensor_failure_returns_null(void** state) {
  (void)state;
  assert_int_equal(sweep(allocate_resource, 0), 2);
}

static void every_new_tensor_failure_returns_null_and_deallocates_once(
    void** state) {
  (void)state;
  // The wrapping buffer's header and the tensor header.
  assert_int_equal(sweep(wrap_aligned, 1), 2);
}

static void every_new_tensor_copy_failure_returns_null_and_deallocates_once(
    void** state) {
  (void)state;
  // The aligned copy and the tensor header.
  assert_int_equal(sweep(copy_unaligned, 1), 2);
}

static void every_new_string_tensor_failure_returns_null_and_deallocates(
    void** state) {
  (void)state;
  assert_int_equal(sweep(wrap_strings, 1), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(new_tensor_shares_64_byte_aligned_data),
      cmocka_unit_test(new_tensor_reports_type_dims_and_sizes),
      cmocka_unit_test(new_tensor_deallocates_once_on_delete),
      cmocka_unit_test(new_tensor_deallocates_when_the_last_sharer_goes),
      cmocka_unit_test(
          new_tensor_with_a_short_length_returns_null_and_deallocates),
      cmocka_unit_test(
          new_tensor_with_a_long_length_returns_null_and_deallocates),
      cmocka_unit_test(new_tensor_with_zero_length_for_elements_returns_null),
      cmocka_unit_test(
          new_tensor_with_a_negative_dim_returns_null_and_deallocates),
      cmocka_unit_test(
          new_tensor_with_an_unknown_dim_returns_null_and_deallocates),
      cmocka_unit_test(new_tensor_of_rank_255_returns_null_and_deallocates),
      cmocka_unit_test(tensors_of_ranks_9_to_254_keep_their_dims),
      cmocka_unit_test(
          new_tensor_of_negative_rank_returns_null_and_deallocates),
      cmocka_unit_test(new_tensor_with_null_dims_returns_null_and_deallocates),
      cmocka_unit_test(new_tensor_of_dtype_0_returns_null_and_deallocates),
      cmocka_unit_test(new_tensor_of_a_dtype_past_the_enum_returns_null),
      cmocka_unit_test(new_tensor_with_null_data_and_a_length_returns_null),
      cmocka_unit_test(new_tensor_errors_need_no_deallocator),
      cmocka_unit_test(new_empty_tensor_accepts_null_data),
      cmocka_unit_test(new_tensor_copies_unaligned_data),
      cmocka_unit_test(new_tensor_deallocates_unaligned_data_at_once),
      cmocka_unit_test(new_tensor_copy_of_unaligned_data_is_aligned),
      cmocka_unit_test(new_tensor_of_callers_strings_uses_them_in_place),
      cmocka_unit_test(new_tensor_of_strings_with_a_wrong_length_returns_null),
      cmocka_unit_test(new_resource_tensor_takes_any_length),
      cmocka_unit_test(allocated_tensor_is_aligned),
      cmocka_unit_test(allocated_tensor_has_the_requested_byte_size),
      cmocka_unit_test(allocate_tensor_with_a_wrong_length_returns_null),
      cmocka_unit_test(allocate_tensor_with_bad_dims_returns_null),
      cmocka_unit_test(allocated_string_tensor_holds_empty_24_byte_strings),
      cmocka_unit_test(allocated_string_tensor_frees_large_strings),
      cmocka_unit_test(allocate_string_tensor_with_a_wrong_length_returns_null),
      cmocka_unit_test(allocated_resource_tensor_takes_any_length),
      cmocka_unit_test(allocated_tensor_can_be_moved),
      cmocka_unit_test(allocated_string_tensor_can_be_moved),
      cmocka_unit_test(shared_tensor_cannot_be_moved),
      cmocka_unit_test(tensor_over_callers_memory_cannot_be_moved),
      cmocka_unit_test(copy_of_unaligned_data_can_be_moved),
      cmocka_unit_test(rank_zero_tensor_has_one_element),
      cmocka_unit_test(empty_tensor_has_no_elements_or_bytes),
      cmocka_unit_test(dim_out_of_range_is_minus_one),
      cmocka_unit_test(tensor_type_is_the_allocated_dtype),
      cmocka_unit_test(delete_of_null_is_a_no_op),
      cmocka_unit_test(set_shape_with_the_same_count_changes_the_dims),
      cmocka_unit_test(set_shape_with_another_count_leaves_the_shape),
      cmocka_unit_test(set_shape_with_invalid_dims_leaves_the_shape),
      cmocka_unit_test(set_shape_of_null_is_ignored),
      cmocka_unit_test(bitcast_shares_the_data),
      cmocka_unit_test(bitcast_gives_the_new_type_and_dims),
      cmocka_unit_test(bitcast_success_clears_a_previous_error),
      cmocka_unit_test(bitcast_from_a_zero_sized_type_is_invalid),
      cmocka_unit_test(bitcast_to_a_zero_sized_type_is_invalid),
      cmocka_unit_test(bitcast_to_incompatible_sizes_is_invalid),
      cmocka_unit_test(failed_bitcast_leaves_the_target_unchanged),
      cmocka_unit_test(bitcast_with_invalid_dims_is_invalid),
      cmocka_unit_test(bitcast_of_null_tensors_is_invalid),
      cmocka_unit_test(bitcast_with_a_null_status_still_bitcasts),
      cmocka_unit_test(every_allocate_tensor_failure_returns_null),
      cmocka_unit_test(every_allocate_string_tensor_failure_returns_null),
      cmocka_unit_test(every_allocate_resource_tensor_failure_returns_null),
      cmocka_unit_test(
          every_new_tensor_failure_returns_null_and_deallocates_once),
      cmocka_unit_test(
          every_new_tensor_copy_failure_returns_null_and_deallocates_once),
      cmocka_unit_test(
          every_new_string_tensor_failure_returns_null_and_deallocates),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
