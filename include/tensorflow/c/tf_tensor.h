/* TF_Tensor: dense and string tensors of TensorFlow's C API, as provided by
 * Loom (a TF_Tensor is a Loom host tensor). Valid C11 and C++. */

#ifndef TENSORFLOW_C_TF_TENSOR_H_
#define TENSORFLOW_C_TF_TENSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocator attributes for tensor allocation. */
typedef struct TF_AllocatorAttributes {
  size_t struct_size;
  /* 1 for host (CPU) memory, else 0. */
  unsigned char on_host;
} TF_AllocatorAttributes;

#define TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_AllocatorAttributes, on_host)

/* A multi-dimensional array of one element type, row-major. TF_STRING
 * tensors hold one TF_TString (tensorflow/c/tf_tstring.h) per element. */
typedef struct TF_Tensor TF_Tensor;

/* A tensor over data[0, len), released with (*deallocator)(data, len,
 * deallocator_arg) once the tensor and everything sharing it are gone.
 * Returns NULL, after calling the deallocator, when len does not equal the
 * element count times TF_DataTypeSize(dtype) (for types of fixed size) or
 * when dims are invalid. Data that is not 64-byte aligned is copied into
 * aligned memory and the deallocator is called at once. */
TF_CAPI_EXPORT extern TF_Tensor* TF_NewTensor(
    TF_DataType dtype, const int64_t* dims, int num_dims, void* data,
    size_t len, void (*deallocator)(void* data, size_t len, void* arg),
    void* deallocator_arg);

/* A tensor with uninitialised, aligned memory of `len` bytes (TF_STRING
 * tensors get empty strings). NULL on a size mismatch, as TF_NewTensor, or
 * when memory is exhausted. */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTensor(TF_DataType dtype,
                                                   const int64_t* dims,
                                                   int num_dims, size_t len);

/* Returns `tensor` itself when the caller holds the only reference to its
 * memory and that memory is the library's (so it may be reused); otherwise
 * NULL, leaving `tensor` untouched. */
TF_CAPI_EXPORT extern TF_Tensor* TF_TensorMaybeMove(TF_Tensor* tensor);

/* Destroys a tensor; NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteTensor(TF_Tensor* tensor);

TF_CAPI_EXPORT extern TF_DataType TF_TensorType(const TF_Tensor* tensor);

/* Sets the shape; the element count must stay the same (otherwise the call
 * has no effect). */
TF_CAPI_EXPORT extern void TF_SetShape(TF_Tensor* tensor, const int64_t* dims,
                                       int num_dims);

TF_CAPI_EXPORT extern int TF_NumDims(const TF_Tensor* tensor);

/* REQUIRES: 0 <= dim_index < TF_NumDims(tensor); -1 otherwise. */
TF_CAPI_EXPORT extern int64_t TF_Dim(const TF_Tensor* tensor, int dim_index);

TF_CAPI_EXPORT extern size_t TF_TensorByteSize(const TF_Tensor* tensor);

TF_CAPI_EXPORT extern void* TF_TensorData(const TF_Tensor* tensor);

TF_CAPI_EXPORT extern int64_t TF_TensorElementCount(const TF_Tensor* tensor);

/* Makes `to` share `from`'s data with dtype `type` and shape new_dims.
 * INVALID_ARGUMENT unless both types have a size and the byte sizes match. */
TF_CAPI_EXPORT extern void TF_TensorBitcastFrom(const TF_Tensor* from,
                                                TF_DataType type, TF_Tensor* to,
                                                const int64_t* new_dims,
                                                int num_new_dims,
                                                TF_Status* status);

/* Whether the data is 64-byte aligned. */
TF_CAPI_EXPORT extern bool TF_TensorIsAligned(const TF_Tensor* tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TENSORFLOW_C_TF_TENSOR_H_ */
