// loom_tensor_t: host tensors (TFRT's HostTensor family).
//
//   DENSE  — row-major elements in a shared loom_buffer_t, 64-byte aligned
//            when Loom allocates it;
//   SCALAR — one value standing for every element of its shape (TFRT's
//            ScalarHostTensor): a broadcast constant with no buffer;
//   STRING — one loom_tstring_t (TF_TString layout) per element.
//
// A tensor is ref-counted and immutable once shared: several tensors may
// share one buffer (a kernel may write into a buffer only when it holds the
// only reference, see loom_buffer_is_unique).

#ifndef LOOM_TENSOR_H_
#define LOOM_TENSOR_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/buffer.h"
#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor_metadata.h"
#include "loom/tstring.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_tensor_t loom_tensor_t;

typedef enum loom_tensor_kind_t {
  LOOM_TENSOR_DENSE = 0,
  LOOM_TENSOR_SCALAR = 1,
  LOOM_TENSOR_STRING = 2,
} loom_tensor_kind_t;

// Largest element a SCALAR tensor holds (complex128).
#define LOOM_TENSOR_MAX_SCALAR_SIZE 16

// A dense tensor with uninitialised, LOOM_DEFAULT_DATA_ALIGNMENT-aligned
// data. The dtype needs a fixed element size (not STRING, RESOURCE or
// VARIANT) and the shape must be fully defined.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_create_dense(loom_allocator_t allocator, loom_dtype_t dtype,
                         const loom_shape_t* shape, loom_tensor_t** out_tensor);

// A dense tensor over buffer bytes [byte_offset, byte_offset + needed),
// taking a new reference to `buffer`. For dtypes without a fixed element
// size (RESOURCE, VARIANT) the tensor covers the rest of the buffer.
// INVALID_ARGUMENT when the buffer is too small (naming both sizes).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tensor_create_dense_in_buffer(
    loom_allocator_t allocator, loom_dtype_t dtype, const loom_shape_t* shape,
    loom_buffer_t* buffer, size_t byte_offset, loom_tensor_t** out_tensor);

// A scalar host tensor: every element of `shape` equals *value, which holds
// loom_dtype_size(dtype) bytes (at most LOOM_TENSOR_MAX_SCALAR_SIZE).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tensor_create_scalar(
    loom_allocator_t allocator, loom_dtype_t dtype, const loom_shape_t* shape,
    const void* value, loom_tensor_t** out_tensor);

// A string tensor of empty strings. Each element's memory is released with
// the tensor's buffer.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_create_string(loom_allocator_t allocator, const loom_shape_t* shape,
                          loom_tensor_t** out_tensor);

// A string tensor over loom_tstring_t elements the caller laid out in
// `buffer` (retained), which must hold at least one element per entry of
// `shape`. Whoever created the buffer frees the elements' memory (its
// deallocator), as with TensorFlow's TF_NewTensor.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tensor_create_string_in_buffer(
    loom_allocator_t allocator, const loom_shape_t* shape,
    loom_buffer_t* buffer, loom_tensor_t** out_tensor);

// A new dense tensor holding the values of `tensor` (a DENSE tensor is
// retained and returned as is; a SCALAR one is expanded). STRING tensors:
// INVALID_ARGUMENT.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_convert_to_dense(loom_allocator_t allocator, loom_tensor_t* tensor,
                             loom_tensor_t** out_dense);

LOOM_API void loom_tensor_retain(loom_tensor_t* tensor);
LOOM_API void loom_tensor_release(loom_tensor_t* tensor);

// True when the caller holds the only reference to the tensor and to its
// buffer (a SCALAR tensor has none), and the buffer's memory is Loom's (not
// wrapped caller memory): the memory may then be reused for a result.
LOOM_API bool loom_tensor_is_forwardable(const loom_tensor_t* tensor);

LOOM_API loom_tensor_kind_t loom_tensor_kind(const loom_tensor_t* tensor);
LOOM_API loom_dtype_t loom_tensor_dtype(const loom_tensor_t* tensor);
LOOM_API const loom_shape_t* loom_tensor_shape(const loom_tensor_t* tensor);
LOOM_API const loom_tensor_metadata_t* loom_tensor_metadata(
    const loom_tensor_t* tensor);
LOOM_API int64_t loom_tensor_num_elements(const loom_tensor_t* tensor);

// Bytes of element data: elements x dtype size for DENSE (or the covered
// buffer bytes for RESOURCE / VARIANT), elements x 24 for STRING, the one
// value for SCALAR.
LOOM_API size_t loom_tensor_byte_size(const loom_tensor_t* tensor);

// The element data (DENSE, STRING), or the single value (SCALAR).
LOOM_API void* loom_tensor_data(const loom_tensor_t* tensor);

// The shared buffer; NULL for SCALAR tensors.
LOOM_API loom_buffer_t* loom_tensor_buffer(const loom_tensor_t* tensor);

// Whether the data pointer is LOOM_DEFAULT_DATA_ALIGNMENT-aligned.
LOOM_API bool loom_tensor_is_aligned(const loom_tensor_t* tensor);

// Element `index` of a STRING tensor; NULL for other kinds or out of range.
LOOM_API loom_tstring_t* loom_tensor_string_at(const loom_tensor_t* tensor,
                                               int64_t index);

// Changes the shape to one with the same element count (a reshape in
// place). INVALID_ARGUMENT for another count; FAILED_PRECONDITION unless the
// caller holds the only reference to the tensor.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_set_shape(loom_tensor_t* tensor, const loom_shape_t* shape);

// Makes `tensor` a view of `source`'s buffer with a new dtype and shape whose
// byte size equals the source's (a bitcast). Both must be DENSE with fixed
// size dtypes; the caller must hold the only reference to `tensor`.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_bitcast_from(loom_tensor_t* tensor, const loom_tensor_t* source,
                         loom_dtype_t dtype, const loom_shape_t* shape);

// Writes the tensor the way TFRT prints host tensors, like snprintf:
//   DenseHostTensor dtype = f32, shape = [1, 3], values = [1.000000e+00, ...]
//   ScalarHostTensor dtype = i32, shape = [2, 2], value = 7
//   StringHostTensor shape = [2], values = ["a", "b"]
// At most 16 values are written, then "...". Returns the full length.
LOOM_API size_t loom_tensor_format(const loom_tensor_t* tensor, char* buffer,
                                   size_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_TENSOR_H_
