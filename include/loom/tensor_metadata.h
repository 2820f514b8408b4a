// loom_tensor_metadata_t: what is known of a tensor before its data is
// (TFRT's TensorMetadata): its dtype and shape. A plain value.

#ifndef LOOM_TENSOR_METADATA_H_
#define LOOM_TENSOR_METADATA_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/shape.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_tensor_metadata_t {
  loom_dtype_t dtype;
  loom_shape_t shape;
} loom_tensor_metadata_t;

LOOM_API bool loom_tensor_metadata_equal(const loom_tensor_metadata_t* a,
                                         const loom_tensor_metadata_t* b);

// Writes "f32 [2, 3]" like snprintf; returns the length the full text needs.
LOOM_API size_t loom_tensor_metadata_format(
    const loom_tensor_metadata_t* metadata, char* buffer, size_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_TENSOR_METADATA_H_
