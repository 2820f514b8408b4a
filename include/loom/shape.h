// loom_shape_t: a tensor shape held inline (no heap, plain struct copy),
// with the partially known shapes shape inference works with: an unknown
// dimension is LOOM_UNKNOWN_DIM, an unknown rank is LOOM_UNKNOWN_RANK.
//
// Up to LOOM_MAX_RANK (8) dimensions live in the struct: that keeps tensor
// metadata allocation-free on the dispatch path, and it is the rank Loom's
// built-in kernels take. Shapes of higher rank, up to TensorFlow's limit
// LOOM_MAX_SHAPE_RANK (254), come only from loom_shape_initialize_large:
// their dims spill to an immutable process-wide pool, so that such a shape
// is still a plain struct to copy. Read dims through loom_shape_dims
// wherever a shape may be large; an op whose kernel reads `dims` directly
// refuses inputs above LOOM_MAX_RANK with INVALID_ARGUMENT.

#ifndef LOOM_SHAPE_H_
#define LOOM_SHAPE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

#define LOOM_MAX_RANK 8
#define LOOM_MAX_SHAPE_RANK 254
#define LOOM_UNKNOWN_DIM ((int64_t)-1)
#define LOOM_UNKNOWN_RANK (-1)

typedef struct loom_shape_t {
  int32_t rank;  // LOOM_UNKNOWN_RANK or [0, LOOM_MAX_SHAPE_RANK]
  union {
    int64_t dims[LOOM_MAX_RANK];  // rank <= LOOM_MAX_RANK
    const int64_t* spilled;       // rank > LOOM_MAX_RANK: the pool's copy
  };
} loom_shape_t;

// The shape's dims, [0, rank): inline or spilled.
static inline const int64_t* loom_shape_dims(const loom_shape_t* shape) {
  return shape->rank > LOOM_MAX_RANK ? shape->spilled : shape->dims;
}

// Sets *out_shape to dims[0, rank). Each dim is >= 0 or LOOM_UNKNOWN_DIM.
// INVALID_ARGUMENT (naming the offending dimension) otherwise, or for a rank
// outside [0, LOOM_MAX_RANK].
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_initialize(loom_shape_t* out_shape, const int64_t* dims, int rank);

// As loom_shape_initialize, for a rank up to LOOM_MAX_SHAPE_RANK. Above
// LOOM_MAX_RANK the dims are interned in the process's shape pool (equal
// dims share one copy, kept for the process's life); RESOURCE_EXHAUSTED
// once the pool holds LOOM_SHAPE_POOL_BYTES.
#define LOOM_SHAPE_POOL_BYTES ((size_t)16 << 20)
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_shape_initialize_large(
    loom_shape_t* out_shape, const int64_t* dims, int rank);

// The rank-0 shape.
LOOM_API loom_shape_t loom_shape_scalar(void);

// A shape of unknown rank.
LOOM_API loom_shape_t loom_shape_unknown(void);

LOOM_API bool loom_shape_is_fully_defined(const loom_shape_t* shape);

// The element count of a fully defined shape (1 for scalars); -1 when some
// dimension or the rank is unknown, or when the count overflows int64.
LOOM_API int64_t loom_shape_num_elements(const loom_shape_t* shape);

// Same rank and dims (unknown equals unknown).
LOOM_API bool loom_shape_equal(const loom_shape_t* a, const loom_shape_t* b);

// Could both describe the same tensor (unknown matches anything)?
LOOM_API bool loom_shape_is_compatible(const loom_shape_t* a,
                                       const loom_shape_t* b);

// Writes "[2, 3]", "[?, 3]", "[]" or "<unknown>" like snprintf; returns the
// length the full text needs (up to LOOM_SHAPE_FORMAT_MAX - 1).
#define LOOM_SHAPE_FORMAT_MAX (LOOM_MAX_SHAPE_RANK * 22 + 16)
LOOM_API size_t loom_shape_format(const loom_shape_t* shape, char* buffer,
                                  size_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_SHAPE_H_
