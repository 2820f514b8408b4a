// TF_Tensor over loom_tensor_t: a TF_Tensor* is a loom_tensor_t* (DENSE or
// STRING), owned by the caller.

#include "tensorflow/c/tf_tensor.h"

#include <stdint.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "loom/tensor.h"

static loom_tensor_t* to_loom(const TF_Tensor* tensor) {
  return (loom_tensor_t*)tensor;
}

static TF_Tensor* to_tf(loom_tensor_t* tensor) {
  return (TF_Tensor*)tensor;
}

// Checks dtype and dims and computes the byte size the data must have
// (SIZE_MAX for types of no fixed size, which accept any length).
static bool describe(TF_DataType dtype, const int64_t* dims, int num_dims,
                     loom_shape_t* out_shape, size_t* out_expected_len) {
  if (!loom_dtype_is_valid((loom_dtype_t)dtype)) return false;
  loom_status_t status = loom_shape_initialize_large(out_shape, dims, num_dims);
  if (status || !loom_shape_is_fully_defined(out_shape)) {
    loom_status_free(status);
    return false;
  }
  int64_t count = loom_shape_num_elements(out_shape);
  if (count < 0) return false;
  size_t element_size = dtype == TF_STRING
                            ? sizeof(loom_tstring_t)
                            : loom_dtype_size((loom_dtype_t)dtype);
  if (element_size == 0) {
    *out_expected_len = SIZE_MAX;
    return true;
  }
  if ((uint64_t)count > SIZE_MAX / element_size) return false;
  *out_expected_len = (size_t)count * element_size;
  return true;
}

static TF_Tensor* tensor_in_buffer(TF_DataType dtype, const loom_shape_t* shape,
                                   loom_buffer_t* buffer) {
  loom_allocator_t allocator = loom_allocator_default();
  loom_tensor_t* tensor = NULL;
  loom_status_t status =
      dtype == TF_STRING
          ? loom_tensor_create_string_in_buffer(allocator, shape, buffer,
                                                &tensor)
          : loom_tensor_create_dense_in_buffer(allocator, (loom_dtype_t)dtype,
                                               shape, buffer, 0, &tensor);
  loom_buffer_release(buffer);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return to_tf(tensor);
}

TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims,
                        void* data, size_t len,
                        void (*deallocator)(void* data, size_t len, void* arg),
                        void* deallocator_arg) {
  loom_shape_t shape;
  size_t expected = 0;
  if (!describe(dtype, dims, num_dims, &shape, &expected) ||
      (expected != SIZE_MAX && len != expected) || (!data && len)) {
    if (deallocator) deallocator(data, len, deallocator_arg);
    return NULL;
  }
  loom_allocator_t allocator = loom_allocator_default();
  loom_buffer_t* buffer = NULL;
  loom_status_t status;
  bool copy = dtype != TF_STRING && dtype != TF_RESOURCE &&
              dtype != TF_VARIANT &&
              ((uintptr_t)data % LOOM_DEFAULT_DATA_ALIGNMENT) != 0;
  if (copy) {
    // Unaligned data is copied so kernels can rely on alignment.
    status = loom_buffer_allocate(allocator, len, 0, &buffer);
    if (!status) memcpy(loom_buffer_data(buffer), data, len);
    if (deallocator) deallocator(data, len, deallocator_arg);
  } else {
    status = loom_buffer_wrap(allocator, data, len, deallocator,
                              deallocator_arg, &buffer);
  }
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return tensor_in_buffer(dtype, &shape, buffer);
}

TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims,
                             int num_dims, size_t len) {
  loom_shape_t shape;
  size_t expected = 0;
  if (!describe(dtype, dims, num_dims, &shape, &expected) ||
      (expected != SIZE_MAX && len != expected)) {
    return NULL;
  }
  loom_allocator_t allocator = loom_allocator_default();
  loom_tensor_t* tensor = NULL;
  loom_status_t status;
  if (dtype == TF_STRING) {
    status = loom_tensor_create_string(allocator, &shape, &tensor);
  } else if (expected != SIZE_MAX) {
    status = loom_tensor_create_dense(allocator, (loom_dtype_t)dtype, &shape,
                                      &tensor);
  } else {
    loom_buffer_t* buffer = NULL;
    status = loom_buffer_allocate(allocator, len, 0, &buffer);
    if (!status) return tensor_in_buffer(dtype, &shape, buffer);
  }
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return to_tf(tensor);
}

TF_Tensor* TF_TensorMaybeMove(TF_Tensor* tensor) {
  return loom_tensor_is_forwardable(to_loom(tensor)) ? tensor : NULL;
}

void TF_DeleteTensor(TF_Tensor* tensor) {
  loom_tensor_release(to_loom(tensor));
}

TF_DataType TF_TensorType(const TF_Tensor* tensor) {
  return (TF_DataType)loom_tensor_dtype(to_loom(tensor));
}

void TF_SetShape(TF_Tensor* tensor, const int64_t* dims, int num_dims) {
  if (!tensor) return;
  loom_shape_t shape;
  loom_status_t status = loom_shape_initialize_large(&shape, dims, num_dims);
  if (!status) status = loom_tensor_set_shape(to_loom(tensor), &shape);
  loom_status_ignore(status);
}

int TF_NumDims(const TF_Tensor* tensor) {
  return loom_tensor_shape(to_loom(tensor))->rank;
}

int64_t TF_Dim(const TF_Tensor* tensor, int dim_index) {
  const loom_shape_t* shape = loom_tensor_shape(to_loom(tensor));
  if (dim_index < 0 || dim_index >= shape->rank) return -1;
  return loom_shape_dims(shape)[dim_index];
}

size_t TF_TensorByteSize(const TF_Tensor* tensor) {
  return loom_tensor_byte_size(to_loom(tensor));
}

void* TF_TensorData(const TF_Tensor* tensor) {
  return loom_tensor_data(to_loom(tensor));
}

int64_t TF_TensorElementCount(const TF_Tensor* tensor) {
  return loom_tensor_num_elements(to_loom(tensor));
}

void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type,
                          TF_Tensor* to, const int64_t* new_dims,
                          int num_new_dims, TF_Status* status) {
  loom_shape_t shape;
  loom_status_t result = loom_ok_status();
  if (!from || !to) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TF_TensorBitcastFrom: %s is NULL",
                              !from ? "from" : "to");
  } else {
    result = loom_shape_initialize_large(&shape, new_dims, num_new_dims);
  }
  if (!result) {
    result = loom_tensor_bitcast_from(to_loom(to), to_loom(from),
                                      (loom_dtype_t)type, &shape);
  }
  loom__tf_status_set(status, result);
}

bool TF_TensorIsAligned(const TF_Tensor* tensor) {
  return loom_tensor_is_aligned(to_loom(tensor));
}
