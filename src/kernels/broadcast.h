// NumPy broadcasting for the element-wise kernels: the broadcast shape of
// operands, and an iteration plan that walks the output once with a stride
// per operand (0 where it is broadcast), never materialising a copy.
//
// A plan collapses adjacent dimensions that every operand walks
// contiguously (or broadcasts together), so most element-wise work ends up
// as a few long inner loops: e.g. [1000, 1000] + [1000] is 1000 rows of a
// contiguous 1000 + contiguous 1000.
//
// Shapes above LOOM_MAX_RANK are folded first, as TensorFlow's BCast does:
// adjacent dims that every operand broadcasts the same way become one. When
// more than LOOM_MAX_RANK such groups remain, the outer ones are walked by
// the caller around the plan of the inner ones (loom__broadcast_peel_t).

#ifndef LOOM_KERNELS_BROADCAST_H_
#define LOOM_KERNELS_BROADCAST_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/shape.h"
#include "loom/status.h"

enum { kBroadcastMaxOperands = 4 };

// The broadcast of shapes a and b (fully defined, of any rank) for `op`.
// INVALID_ARGUMENT as TensorFlow words it: "Incompatible shapes: [2,3] vs.
// [4]"; or, when the broadcast has more elements than int64 counts,
// "<op>: shapes [4294967296, 1] vs. [1, 4294967296]: the size overflows
// int64".
loom_status_t loom__broadcast_shapes(const char* op, const loom_shape_t* a,
                                     const loom_shape_t* b,
                                     loom_shape_t* out_shape);

// Whether shapes a and b (fully defined) broadcast: per dim, equal or one
// of them 1 (however many elements the result would have).
bool loom__broadcast_compatible(const loom_shape_t* a, const loom_shape_t* b);

typedef struct loom__broadcast_plan_t {
  int32_t num_operands;
  int32_t rank;                 // >= 1 after collapsing
  int64_t dims[LOOM_MAX_RANK];  // outermost first
  // Element strides of each operand along each dim (0: broadcast).
  int64_t strides[kBroadcastMaxOperands][LOOM_MAX_RANK];
  int64_t inner;  // dims[rank - 1]: elements per inner loop
  int64_t outer;  // inner loops in all (product of the other dims)
} loom__broadcast_plan_t;

// Plans the walk of `output` (fully defined, its element count within
// int64, rank <= LOOM_MAX_RANK) over operands[0, n), each of which
// broadcasts to it (checked by the caller, e.g. with
// loom__broadcast_shapes). n <= kBroadcastMaxOperands. An empty output gets
// the plan of one empty loop (outer * inner == 0), whatever its other dims.
void loom__broadcast_plan_init(loom__broadcast_plan_t* plan,
                               const loom_shape_t* output,
                               const loom_shape_t* const* operands, int32_t n);

// The outer dims that a walk of more than LOOM_MAX_RANK folded dims
// leaves to a loop around its plan, outermost first: per dim its size, the
// element stride of each operand (0: broadcast) and of the output.
typedef struct loom__broadcast_peel_t {
  int32_t rank;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int64_t strides[kBroadcastMaxOperands][LOOM_MAX_SHAPE_RANK];
  int64_t out_strides[LOOM_MAX_SHAPE_RANK];
} loom__broadcast_peel_t;

// Folds the walk of `output` over operands[0, n) (as for
// loom__broadcast_plan_init, of any rank): dims of size 1 in the output are
// dropped and adjacent dims along which each operand either walks or
// broadcasts alike are merged. Sets *folded_output and folded[0, n), all of
// one rank, to the innermost LOOM_MAX_RANK folded dims (at most); when more
// remain, the outer ones go to *peel (allocated with
// loom_allocator_default(); the caller frees it), else *peel is NULL.
loom_status_t loom__broadcast_fold(const loom_shape_t* output,
                                   const loom_shape_t* const* operands,
                                   int32_t n, loom_shape_t* folded_output,
                                   loom_shape_t* folded,
                                   loom__broadcast_peel_t** peel);

// loom__broadcast_plan_init for shapes of any rank: those above
// LOOM_MAX_RANK are folded first (loom__broadcast_fold: the plan walks the
// inner dims, *peel the outer ones when there are more than LOOM_MAX_RANK);
// others go straight to the plan (*peel NULL).
loom_status_t loom__broadcast_plan_init_any_rank(
    loom__broadcast_plan_t* plan, const loom_shape_t* output,
    const loom_shape_t* const* operands, int32_t n,
    loom__broadcast_peel_t** peel);

// Element offsets of each operand at the start of inner loop `row`
// (0 <= row < outer).
void loom__broadcast_plan_offsets(const loom__broadcast_plan_t* plan,
                                  int64_t row, int64_t* offsets);

#endif  // LOOM_KERNELS_BROADCAST_H_
