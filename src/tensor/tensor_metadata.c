// Tensor metadata: dtype + shape.

#include "loom/tensor_metadata.h"

#include <stdio.h>

bool loom_tensor_metadata_equal(const loom_tensor_metadata_t* a,
                                const loom_tensor_metadata_t* b) {
  return a->dtype == b->dtype && loom_shape_equal(&a->shape, &b->shape);
}

size_t loom_tensor_metadata_format(const loom_tensor_metadata_t* metadata,
                                   char* buffer, size_t capacity) {
  char shape[LOOM_SHAPE_FORMAT_MAX];
  loom_shape_format(&metadata->shape, shape, sizeof(shape));
  int length = snprintf(buffer, capacity, "%s %s",
                        loom_dtype_short_name(metadata->dtype), shape);
  return length < 0 ? 0 : (size_t)length;
}
