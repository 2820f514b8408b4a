// MatMul and BatchMatMulV2: the loops built per ISA level (matmul_loops.c)
// for what OpenBLAS does not cover — integer products and the 16-bit float
// conversions around sgemm — and the OpenBLAS thread policy.

#ifndef LOOM_KERNELS_MATMUL_H_
#define LOOM_KERNELS_MATMUL_H_

#include <stdint.h>

#include "kernels/isa.h"

typedef struct loom__matmul_loops_t {
  // c[i, j] = sum_p a[i * a_row + p * a_col] * b[p * n + j] for i < m,
  // j < n (c row-major, b row-major k x n); integer products wrap.
  void (*gemm_i32)(const int32_t* a, int64_t a_row, int64_t a_col,
                   const int32_t* b, int32_t* c, int64_t m, int64_t n,
                   int64_t k);
  void (*gemm_i64)(const int64_t* a, int64_t a_row, int64_t a_col,
                   const int64_t* b, int64_t* c, int64_t m, int64_t n,
                   int64_t k);
  // 16-bit floats to and from float (round to nearest even).
  void (*half_to_float)(const uint16_t* in, float* out, int64_t n);
  void (*float_to_half)(const float* in, uint16_t* out, int64_t n);
  void (*bfloat16_to_float)(const uint16_t* in, float* out, int64_t n);
  void (*float_to_bfloat16)(const float* in, uint16_t* out, int64_t n);
} loom__matmul_loops_t;

extern const loom__matmul_loops_t loom__matmul_loops_baseline;
extern const loom__matmul_loops_t loom__matmul_loops_avx2;
extern const loom__matmul_loops_t loom__matmul_loops_avx512;

// The loops of this CPU's level.
const loom__matmul_loops_t* loom__matmul_loops(void);

// Loom's pool owns the cores: OpenBLAS runs single-threaded inside Loom's
// kernels, which split large products over the pool themselves (no
// parallel region inside another). Sets OpenBLAS's thread count to 1 when
// it is not: once when the linear-algebra family registers, and again
// before each product, should the embedding program have changed it.
// Thread-safe.
void loom__blas_single_threaded(void);

#endif  // LOOM_KERNELS_MATMUL_H_
