// loom_shape_t: a tensor shape held inline (no heap, plain struct copy),
// with the partially known shapes shape inference works with: an unknown
// dimension is LOOM_UNKNOWN_DIM, an unknown rank is LOOM_UNKNOWN_RANK.
//
// Ranks above LOOM_MAX_RANK are rejected with INVALID_ARGUMENT: an inline
// shape keeps tensor metadata allocation-free on the dispatch path, and
// eight dimensions cover the models Loom targets.

#ifndef LOOM_SHAPE_H_
#define LOOM_SHAPE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

#define LOOM_MAX_RANK 8
#define LOOM_UNKNOWN_DIM ((int64_t)-1)
#define LOOM_UNKNOWN_RANK (-1)

typedef struct loom_shape_t {
  int32_t rank;  // LOOM_UNKNOWN_RANK or [0, LOOM_MAX_RANK]
  int64_t dims[LOOM_MAX_RANK];
} loom_shape_t;

// Sets *out_shape to dims[0, rank). Each dim is >= 0 or LOOM_UNKNOWN_DIM.
// INVALID_ARGUMENT (naming the offending dimension) otherwise, or for a rank
// outside [0, LOOM_MAX_RANK].
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_initialize(loom_shape_t* out_shape, const int64_t* dims, int rank);

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
// length the full text needs.
LOOM_API size_t loom_shape_format(const loom_shape_t* shape, char* buffer,
                                  size_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_SHAPE_H_
