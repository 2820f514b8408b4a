// Index tuples of the N-d indexing ops (GatherNd, ScatterNd,
// TensorScatterUpdate): an integer tensor of shape [..., depth] whose
// innermost vectors each pick a slice of a target shape by its leading
// `depth` dims. Shared here: reading the tuples, turning them into slice
// numbers with a bounds check, and TensorFlow's message for the first bad
// one.

#ifndef LOOM_KERNELS_ND_INDEX_H_
#define LOOM_KERNELS_ND_INDEX_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/op_attrs.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor.h"

// The tuples of `indices` into the leading `depth` dims of `target`.
typedef struct loom__nd_index_t {
  const loom_tensor_t* indices;
  int64_t count;   // tuples: the elements of indices.shape[:-1]
  int32_t depth;   // indices.shape[-1]
  int64_t slices;  // product of target dims [0, depth) (fits: checked)
  // Slice-number strides of those dims (a depth may reach the target's
  // rank, up to LOOM_MAX_SHAPE_RANK).
  int64_t strides[LOOM_MAX_SHAPE_RANK];
  const int64_t* dims;  // target dims
} loom__nd_index_t;

// Prepares `index` for `indices` (rank >= 1, depth <= target rank); false
// when the product of the indexed dims overflows int64 (only possible for
// an empty target: then no tuple can be in bounds).
bool loom__nd_index_init(loom__nd_index_t* index, const loom_tensor_t* indices,
                         const loom_shape_t* target);

// The slice number of tuple `i`, or -1 when a coordinate is out of bounds.
int64_t loom__nd_index_slice(const loom__nd_index_t* index, int64_t i);

// The first tuple out of bounds, or -1.
int64_t loom__nd_index_first_bad(const loom__nd_index_t* index);

// INVALID_ARGUMENT "indices[1,0] = [5, 0] does not index into <what>
// [4,3]<suffix>": TensorFlow's text for tuple `bad` (its position in
// indices.shape[:-1], its coordinates, the target's shape).
loom_status_t loom__nd_index_error(const loom__nd_index_t* index, int64_t bad,
                                   const char* what, const loom_shape_t* target,
                                   const char* suffix);

// Reads the op's `bad_indices_policy` attr: *out_ignore is true for
// "IGNORE" (bad tuples are skipped), false for "", "DEFAULT" and "ERROR"
// (they are errors); another value is INVALID_ARGUMENT.
loom_status_t loom__nd_index_policy(const loom_op_attrs_t* attrs,
                                    bool* out_ignore);

// Registration of GatherNd (gather_nd.c) and of ScatterNd and
// TensorScatterUpdate (scatter_nd.c).
loom_status_t loom__register_gather_nd_ops(void);
loom_status_t loom__register_scatter_nd_ops(void);

#endif  // LOOM_KERNELS_ND_INDEX_H_
