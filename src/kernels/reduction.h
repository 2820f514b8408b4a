// Reductions (Sum, Mean, Prod, Max, Min, All, Any) and arg-reductions
// (ArgMax, ArgMin): the loop tables built per ISA level
// (reduction_loops.c) and what the driver in reduction.c needs of them.
//
// The driver reduces a tensor whose dims it has simplified into alternating
// runs of kept and reduced dims, so every loop below works on one of two
// shapes: rows (the reduced elements are contiguous: reduce each row) or
// columns (the kept elements are contiguous: fold whole rows together).
// Loops accumulate into an accumulator type per (op, dtype) — float for
// f16/bf16, a 64-bit integer for the Mean of narrow integers — and a last
// loop converts accumulators into the output dtype.

#ifndef LOOM_KERNELS_REDUCTION_H_
#define LOOM_KERNELS_REDUCTION_H_

#include <stddef.h>
#include <stdint.h>

#include "kernels/elementwise.h"
#include "kernels/isa.h"

typedef enum loom__reduce_op_t {
  LOOM_REDUCE_SUM = 0,
  LOOM_REDUCE_MEAN,
  LOOM_REDUCE_PROD,
  LOOM_REDUCE_MAX,
  LOOM_REDUCE_MIN,
  LOOM_REDUCE_ALL,  // bool only
  LOOM_REDUCE_ANY,  // bool only
  LOOM_REDUCE_OPS,
} loom__reduce_op_t;

typedef struct loom__reduce_loops_t {
  size_t acc_size;  // bytes per accumulator; 0: no loops for this entry
  // Sums of floats whose rounding error grows with the count: the driver
  // folds partial results in a cascade instead of one long chain.
  int cascade;
  // acc[i] = identity, i < n.
  void (*init)(void* acc, int64_t n);
  // acc[i] = op(acc[i], reduce(x[i * stride, i * stride + len))), i < rows.
  // Long rows are summed pairwise.
  void (*rows)(const void* x, int64_t stride, int64_t rows, int64_t len,
               void* acc);
  // acc[j] = op(acc[j], x[r * stride + j]), r < rows, j < k.
  void (*columns)(const void* x, int64_t stride, int64_t rows, int64_t k,
                  void* acc);
  // acc[i] = op(acc[i], src[i]), i < n.
  void (*combine)(void* acc, const void* src, int64_t n);
  // out[i] = acc[i] in the output dtype, i < n; `count` is the number of
  // elements reduced into each (Mean divides by it).
  void (*finish)(const void* acc, int64_t n, int64_t count, void* out);
} loom__reduce_loops_t;

typedef loom__reduce_loops_t loom__reduce_table_t[LOOM_REDUCE_OPS]
                                                 [LOOM_ELEM_SLOTS];

extern const loom__reduce_table_t loom__reduce_loops_baseline;
extern const loom__reduce_table_t loom__reduce_loops_avx2;
extern const loom__reduce_table_t loom__reduce_loops_avx512;

// ArgMax / ArgMin with TensorFlow's CPU semantics (Eigen's arg reducers run
// in index order): the first index whose value is strictly greater
// (smaller) than every earlier one, starting from the dtype's lowest
// (highest) value at index 0. Ties give the first occurrence; NaN never
// compares greater, so it is skipped (index 0 when nothing beats the
// start).
typedef enum loom__arg_op_t {
  LOOM_ARG_MAX = 0,
  LOOM_ARG_MIN,
  LOOM_ARG_OPS,
} loom__arg_op_t;

typedef struct loom__arg_loops_t {
  size_t value_size;  // bytes per running best value; 0: no loops
  // best[i] = the start value, index[i] = 0, i < n.
  void (*init)(void* best, int64_t* index, int64_t n);
  // For each row i < rows: the contiguous elements x[i * stride + l],
  // l < len, at positions first + l, update (best[i], index[i]).
  void (*rows)(const void* x, int64_t stride, int64_t rows, int64_t len,
               int64_t first, void* best, int64_t* index);
  // Rows r < rows of k contiguous elements x[r * stride + j] at positions
  // first + r update (best[j], index[j]), j < k.
  void (*columns)(const void* x, int64_t stride, int64_t rows, int64_t k,
                  int64_t first, void* best, int64_t* index);
  // (best, index)[i] = the later candidate (src, src_index)[i] when it beats
  // the earlier one, i < n: merges parts of one reduction in order.
  void (*combine)(void* best, int64_t* index, const void* src,
                  const int64_t* src_index, int64_t n);
} loom__arg_loops_t;

typedef loom__arg_loops_t loom__arg_table_t[LOOM_ARG_OPS][LOOM_ELEM_SLOTS];

extern const loom__arg_table_t loom__arg_loops_baseline;
extern const loom__arg_table_t loom__arg_loops_avx2;
extern const loom__arg_table_t loom__arg_loops_avx512;

// The loops for (op, dtype) at this CPU's level; NULL when there are none.
const loom__reduce_loops_t* loom__reduce_loops(loom__reduce_op_t op,
                                               loom_dtype_t dtype);
const loom__arg_loops_t* loom__arg_loops(loom__arg_op_t op, loom_dtype_t dtype);

#endif  // LOOM_KERNELS_REDUCTION_H_
