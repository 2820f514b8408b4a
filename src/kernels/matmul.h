// MatMul and BatchMatMulV2: the loops built per ISA level (matmul_loops.c)
// for what OpenBLAS does not cover — integer products and the 16-bit float
// conversions around sgemm — and the OpenBLAS thread policy.

#ifndef LOOM_KERNELS_MATMUL_H_
#define LOOM_KERNELS_MATMUL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kernels/isa.h"
#include "loom/kernel.h"
#include "loom/shape.h"
#include "loom/shape_inference.h"

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
  // _FusedMatMul's epilogue: c[i, j] += bias[j] over `rows` rows of n; and
  // x = x < 0 ? x * alpha : x (TensorFlow's fused LeakyRelu), in place.
  void (*bias_rows_f32)(float* c, const float* bias, int64_t rows, int64_t n);
  void (*leaky_relu_f32)(float* x, int64_t n, float alpha);
  // Products with k = 1 (outer products): c[i, j] = a[i] * b[j] for i < m,
  // j < n (c row-major; the one column of op(A) and the one row of op(B)
  // are contiguous in either layout). Each element is one rounded product,
  // as a GEMM with k = 1 computes it. `stream`: c bypasses the caches
  // (non-temporal stores), for an output larger than they are.
  void (*outer_f32)(const float* a, const float* b, float* c, int64_t m,
                    int64_t n, bool stream);
  void (*outer_f64)(const double* a, const double* b, double* c, int64_t m,
                    int64_t n, bool stream);
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

// Work fused into a product (_FusedMatMul's bias and activation): run on
// each block of rows of C as soon as its product is computed, while it is
// in cache — `rows` full rows of n elements at `c`, in the type the product
// is computed in (float for float, half and bfloat16, rounded to 16 bits
// after the epilogue; double for double). Blocks are disjoint and may run
// concurrently on the pool's threads. With k = 0 it runs once over the
// whole (zero) product.
typedef struct loom__matmul_epilogue_t {
  void (*fn)(const void* state, void* c, int64_t rows, int64_t n);
  const void* state;
} loom__matmul_epilogue_t;

// The shape of op(a) . op(b) under MatMul's rules (two matrices, inner
// dims equal), with TensorFlow's messages; overflow errors name `op_name`.
loom_status_t loom__matmul_output_shape(const char* op_name,
                                        const loom_shape_t* a,
                                        const loom_shape_t* b, bool transpose_a,
                                        bool transpose_b, loom_shape_t* out);

// MatMul's and BatchMatMulV2's shape function (by the op's name: MatMul's
// rules for MatMul and _FusedMatMul).
loom_status_t loom__matmul_shape_fn(loom_shape_inference_context_t* context,
                                    void* user_data);

// _FusedMatMul (matmul_fused.c); registered with the linear-algebra family.
loom_status_t loom__register_fused_matmul_ops(void);

// MatMul's kernel body: output 0 = op(input 0) . op(input 1), then
// `epilogue` (NULL: none; floating-point dtypes only) over it. Failures go
// to `ctx`.
void loom__matmul_compute(loom_kernel_context_t* ctx, bool transpose_a,
                          bool transpose_b,
                          const loom__matmul_epilogue_t* epilogue);

// C[i] = op(A[i]) . op(B[i]) for i < batch, on dense row-major operands in
// the kernel's memory: A holds batch matrices of m x k (k x m when
// transpose_a), B of k x n (n x k when transpose_b), C batch of m x n.
// dtype is float, double, int32 or int64 (integer products wrap; with an
// integer dtype transpose_b must be false). Runs as MatMul does (OpenBLAS,
// large products split over the kernel's pool). Errors name `op_name`.
loom_status_t loom__matmul_batched(loom_kernel_context_t* ctx,
                                   const char* op_name, loom_dtype_t dtype,
                                   const void* a, bool transpose_a,
                                   const void* b, bool transpose_b, void* c,
                                   int64_t batch, int64_t m, int64_t n,
                                   int64_t k);

#endif  // LOOM_KERNELS_MATMUL_H_
