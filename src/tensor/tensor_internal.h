// The tensor layer's internals for Loom's own hot paths: the tensor header,
// an inline release, and dense creation with the allocator by address.

#ifndef LOOM_TENSOR_TENSOR_INTERNAL_H_
#define LOOM_TENSOR_TENSOR_INTERNAL_H_

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ref_count.h"
#include "loom/tensor.h"
#include "tensor/buffer_internal.h"

struct loom_tensor_t {
  loom__ref_count_t ref_count;
  loom_tensor_kind_t kind;
  loom_tensor_metadata_t metadata;
  loom_allocator_t allocator;  // frees a tensor that has no home (below)
  loom_buffer_t* buffer;       // NULL for SCALAR
  // A dense tensor allocated with its data lives in its buffer's block and
  // holds one reference to that buffer here (shared with `buffer` while
  // both are the same): the block goes when the last of them does.
  loom_buffer_t* home;
  void* data;
  size_t byte_size;
  int64_t num_elements;  // of metadata.shape, kept with it
  alignas(16) unsigned char scalar[LOOM_TENSOR_MAX_SCALAR_SIZE];
};

// Frees a tensor whose last reference is gone.
void loom__tensor_destroy(loom_tensor_t* tensor);

// loom_tensor_release for a tensor known not to be NULL, inline where every
// op's results are released: a dense tensor in its own buffer's block
// (kernels' results) goes with one inline buffer release.
static inline void loom__tensor_release(loom_tensor_t* tensor) {
  if (!loom__ref_count_dec(&tensor->ref_count)) return;
  loom_buffer_t* home = tensor->home;
  if (LOOM_LIKELY(home != NULL && tensor->buffer == home)) {
    loom__buffer_release(home);  // may free the tensor with its block
    return;
  }
  loom__tensor_destroy(tensor);
}

// loom_tensor_create_dense (out_tensor not NULL) with the allocator by
// address: called on every op's hot path with an allocator that lives in a
// context, it is read where it is rather than copied to the stack first.
loom_status_t loom__tensor_create_dense(const loom_allocator_t* allocator,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape,
                                        loom_tensor_t** out_tensor);

// loom__tensor_create_dense for a shape whose element count the caller
// has (`count`, which must be the shape's).
loom_status_t loom__tensor_create_dense_counted(
    const loom_allocator_t* allocator, loom_dtype_t dtype,
    const loom_shape_t* shape, int64_t count, loom_tensor_t** out_tensor);

#endif  // LOOM_TENSOR_TENSOR_INTERNAL_H_
