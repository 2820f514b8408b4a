// Softmax, LogSoftmax and the softmax cross entropies: the per-row loops
// built per ISA level (softmax_loops.c, exp from SLEEF at that level).
// Every row is shifted by its maximum first, so exp never overflows.

#ifndef LOOM_KERNELS_SOFTMAX_H_
#define LOOM_KERNELS_SOFTMAX_H_

#include <stdint.h>

#include "kernels/isa.h"

typedef struct loom__softmax_loops_t {
  // y = softmax(x) (log: log_softmax(x)) over the n contiguous elements of
  // one row; y may be x.
  void (*softmax_f32)(const float* x, float* y, int64_t n, int log);
  void (*softmax_f64)(const double* x, double* y, int64_t n, int log);
  // One row of SoftmaxCrossEntropyWithLogits: returns the loss
  // sum(labels * (log(sum(exp(x - max))) - (x - max))) and writes
  // backprop = softmax(x) - labels.
  float (*xent_f32)(const float* x, const float* labels, float* backprop,
                    int64_t n);
  double (*xent_f64)(const double* x, const double* labels, double* backprop,
                     int64_t n);
  // One row of SparseSoftmaxCrossEntropyWithLogits with class `label`
  // (0 <= label < n).
  float (*sparse_xent_f32)(const float* x, int64_t label, float* backprop,
                           int64_t n);
  double (*sparse_xent_f64)(const double* x, int64_t label, double* backprop,
                            int64_t n);
  // sparse_xent_f32 for rows[0, rows) of n elements each, contiguous
  // (rows <= LOOM_SOFTMAX_ROWS_CHUNK): the exps of all rows in one pass, for
  // rows of a few classes. Same results as row by row.
  void (*sparse_xent_rows_f32)(const float* x, const int64_t* labels,
                               float* backprop, float* loss, int64_t rows,
                               int64_t n);
} loom__softmax_loops_t;

enum { LOOM_SOFTMAX_ROWS_CHUNK = 64 };

extern const loom__softmax_loops_t loom__softmax_loops_baseline;
extern const loom__softmax_loops_t loom__softmax_loops_avx2;
extern const loom__softmax_loops_t loom__softmax_loops_avx512;

// The loops of this CPU's level.
const loom__softmax_loops_t* loom__softmax_loops(void);

#endif  // LOOM_KERNELS_SOFTMAX_H_
