// The sparse host tensors of TFRT's coo kernels (TFRT's CooHostTensor): a
// dense shape, and the coordinates and values of its non-zero elements.

#ifndef LOOM_FUNCTION_COO_TENSOR_H_
#define LOOM_FUNCTION_COO_TENSOR_H_

#include <stdatomic.h>
#include <stddef.h>

#include "loom/allocator.h"
#include "loom/program.h"
#include "loom/tensor.h"

struct loom_program_coo_tensor_t {
  atomic_int ref_count;
  loom_allocator_t allocator;
  loom_dtype_t dtype;
  loom_shape_t shape;      // the dense tensor's
  loom_tensor_t* indices;  // int64 [count, rank], one row per element
  loom_tensor_t* values;   // dtype [count]
};

// A COO tensor of `shape` holding `indices` and `values` (retained; the
// caller checked their dtypes and shapes). One reference for the caller.
loom_status_t loom__coo_tensor_create(loom_allocator_t allocator,
                                      loom_dtype_t dtype,
                                      const loom_shape_t* shape,
                                      loom_tensor_t* indices,
                                      loom_tensor_t* values,
                                      loom_program_coo_tensor_t** out);
void loom__coo_tensor_retain(loom_program_coo_tensor_t* coo);
void loom__coo_tensor_release(loom_program_coo_tensor_t* coo);

// TFRT's text of a CooHostTensor: `CooHostTensor dtype = i32, shape = [3,
// 2], indices = [0, 0, ...], values = [4, ...]`, every element. Writes at
// most `capacity` bytes (NUL-terminated); returns the full length.
size_t loom__coo_tensor_format(const loom_program_coo_tensor_t* coo,
                               char* buffer, size_t capacity);

#endif  // LOOM_FUNCTION_COO_TENSOR_H_
