// Shape arithmetic inlined where tensors are made on every op's hot path.

#ifndef LOOM_TENSOR_SHAPE_INTERNAL_H_
#define LOOM_TENSOR_SHAPE_INTERNAL_H_

#include <stdbool.h>

#include "loom/shape.h"

// loom_shape_num_elements: -1 for an unknown rank or dimension, or a count
// that overflows int64_t.
static inline int64_t loom__shape_num_elements(const loom_shape_t* shape) {
  if (shape->rank < 0) return -1;
  int64_t count = 1;
  bool overflow = false;
  for (int i = 0; i < shape->rank; ++i) {
    int64_t dim = shape->dims[i];
    if (dim <= 0) {
      if (dim < 0) return -1;
      // An empty dimension makes the count 0 wherever it sits, even after
      // dimensions whose product alone would overflow, unless a later one
      // is unknown.
      for (int j = i + 1; j < shape->rank; ++j) {
        if (shape->dims[j] < 0) return -1;
      }
      return 0;
    }
    overflow |= __builtin_mul_overflow(count, dim, &count);
  }
  return overflow ? -1 : count;
}

#endif  // LOOM_TENSOR_SHAPE_INTERNAL_H_
