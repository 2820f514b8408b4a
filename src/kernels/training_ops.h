// The fused optimizer updates of training_ops.c: their loops, built per
// ISA level (training_ops_loops.c). Each loop updates the elements
// [begin, end) of a variable and its slots in place, with TensorFlow's
// formulas evaluated in its order (no fused multiply-add), so every level
// gives the same bits.

#ifndef LOOM_KERNELS_TRAINING_OPS_H_
#define LOOM_KERNELS_TRAINING_OPS_H_

#include <stdint.h>

#include "kernels/isa.h"

typedef enum loom__train_op_t {
  // var -= lr * grad
  LOOM_TRAIN_GRADIENT_DESCENT = 0,
  // accum = accum * momentum + grad; var -= accum * lr (Nesterov:
  // var -= grad * lr + accum * momentum * lr)
  LOOM_TRAIN_MOMENTUM,
  LOOM_TRAIN_MOMENTUM_NESTEROV,
  // accum = accum * momentum - grad * lr; var += accum (Nesterov:
  // var += accum * momentum - grad * lr)
  LOOM_TRAIN_KERAS_MOMENTUM,
  LOOM_TRAIN_KERAS_MOMENTUM_NESTEROV,
  // m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
  // var -= m * alpha / (sqrt(v) + epsilon) (Nesterov: (grad * (1 - beta1)
  // + beta1 * m) in place of m)
  LOOM_TRAIN_ADAM,
  LOOM_TRAIN_ADAM_NESTEROV,
  LOOM_TRAIN_OPS,
} loom__train_op_t;

// The variable dtypes (float computes the 16-bit ones).
typedef enum loom__train_type_t {
  LOOM_TRAIN_F32 = 0,
  LOOM_TRAIN_F64,
  LOOM_TRAIN_F16,
  LOOM_TRAIN_BF16,
  LOOM_TRAIN_TYPES,
} loom__train_type_t;

// Scalars by position: gradient descent {lr}; momentum {lr, momentum};
// Adam {alpha, beta1, 1 - beta1, 1 - beta2, epsilon}, alpha = lr *
// sqrt(1 - beta2_power) / (1 - beta1_power).
enum { kTrainMaxScalars = 5 };

typedef struct loom__train_args_t {
  void* var;
  void* slot1;  // accum, or m; NULL for gradient descent
  void* slot2;  // v; NULL unless Adam
  const void* grad;
  // The scalars in the compute type: f32 for float and the 16-bit types,
  // f64 for double.
  float f32[kTrainMaxScalars];
  double f64[kTrainMaxScalars];
} loom__train_args_t;

typedef void (*loom__train_loop_fn_t)(const loom__train_args_t* args,
                                      int64_t begin, int64_t end);

typedef loom__train_loop_fn_t loom__train_table_t[LOOM_TRAIN_OPS]
                                                 [LOOM_TRAIN_TYPES];

extern const loom__train_table_t loom__train_loops_baseline;
extern const loom__train_table_t loom__train_loops_avx2;
extern const loom__train_table_t loom__train_loops_avx512;

#endif  // LOOM_KERNELS_TRAINING_OPS_H_
