// Tensor creation for Loom's kernel machinery, which has already checked
// what loom_tensor_create_dense would check again.

#ifndef LOOM_TENSOR_TENSOR_INTERNAL_H_
#define LOOM_TENSOR_TENSOR_INTERNAL_H_

#include "loom/tensor.h"

// loom_tensor_create_dense (out_tensor not NULL) with the allocator by
// address: called on every op's hot path with an allocator that lives in a
// context, it is read where it is rather than copied to the stack first.
loom_status_t loom__tensor_create_dense(const loom_allocator_t* allocator,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape,
                                        loom_tensor_t** out_tensor);

// A dense tensor of `dtype` (fixed element size) and the fully defined
// `shape`, whose element count is `count` and data size `bytes` (computed
// without overflow by the caller).
loom_status_t loom__tensor_create_dense_sized(const loom_allocator_t* allocator,
                                              loom_dtype_t dtype,
                                              const loom_shape_t* shape,
                                              int64_t count, size_t bytes,
                                              loom_tensor_t** out_tensor);

#endif  // LOOM_TENSOR_TENSOR_INTERNAL_H_
