// Shape arithmetic inlined where tensors are made on every op's hot path.

#ifndef LOOM_TENSOR_SHAPE_INTERNAL_H_
#define LOOM_TENSOR_SHAPE_INTERNAL_H_

#include <stdbool.h>

#include "loom/shape.h"

// loom_shape_num_elements: -1 for an unknown rank or dimension, or a count
// that overflows int64_t.
static inline int64_t loom__shape_num_elements(const loom_shape_t* shape) {
  if (shape->rank < 0) return -1;
  const int64_t* dims = loom_shape_dims(shape);
  int64_t count = 1;
  bool overflow = false;
  for (int i = 0; i < shape->rank; ++i) {
    int64_t dim = dims[i];
    if (dim <= 0) {
      if (dim < 0) return -1;
      // An empty dimension makes the count 0 wherever it sits, even after
      // dimensions whose product alone would overflow, unless a later one
      // is unknown.
      for (int j = i + 1; j < shape->rank; ++j) {
        if (dims[j] < 0) return -1;
      }
      return 0;
    }
    overflow |= __builtin_mul_overflow(count, dim, &count);
  }
  return overflow ? -1 : count;
}

// The pool's copy of dims[0, rank) (shape_pool.c): the same dims give the
// same pointer. RESOURCE_EXHAUSTED once it holds LOOM_SHAPE_POOL_BYTES.
loom_status_t loom__shape_pool_intern(const int64_t* dims, int rank,
                                      const int64_t** out_dims);

// Whether `dims` is the pool's copy of dims of that rank: a shape that
// claims to be spilled (from code that may be a plugin's) is checked by
// address, without reading through the pointer.
bool loom__shape_pool_owns(const int64_t* dims, int rank);

#endif  // LOOM_TENSOR_SHAPE_INTERNAL_H_
