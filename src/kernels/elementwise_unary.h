// Element-wise unary kernels (math, activations, rounding, LogicalNot), their
// gradient helpers, Cast and the float-class predicates: loop signatures,
// loop tables per ISA level, and the drivers that forward buffers and split
// work over the thread pool.
//
// Every loop here walks dense, contiguous data: out[i] = f(in[i]) (or
// f(a[i], b[i]) for the gradients) for i in [0, n). Loops may be called with
// out == in (a forwarded buffer): element i is read before it is written.

#ifndef LOOM_KERNELS_ELEMENTWISE_UNARY_H_
#define LOOM_KERNELS_ELEMENTWISE_UNARY_H_

#include <stdbool.h>
#include <stdint.h>

#include "kernels/elementwise.h"
#include "kernels/isa.h"
#include "loom/dtype.h"
#include "loom/kernel.h"

typedef void (*loom__unary_loop_fn_t)(const void* in, void* out, int64_t n);
typedef void (*loom__unary_grad_loop_fn_t)(const void* a, const void* b,
                                           void* out, int64_t n);

typedef enum loom__unary_op_t {
  LOOM_UNARY_NEG = 0,
  LOOM_UNARY_ABS,
  LOOM_UNARY_SIGN,
  LOOM_UNARY_EXP,
  LOOM_UNARY_EXPM1,
  LOOM_UNARY_LOG,
  LOOM_UNARY_LOG1P,
  LOOM_UNARY_SQRT,
  LOOM_UNARY_RSQRT,
  LOOM_UNARY_SQUARE,
  LOOM_UNARY_RECIPROCAL,
  LOOM_UNARY_SIN,
  LOOM_UNARY_COS,
  LOOM_UNARY_TANH,
  LOOM_UNARY_SIGMOID,
  LOOM_UNARY_RELU,
  LOOM_UNARY_RELU6,
  LOOM_UNARY_ELU,
  LOOM_UNARY_SELU,
  LOOM_UNARY_SOFTPLUS,
  LOOM_UNARY_SOFTSIGN,
  LOOM_UNARY_ERF,
  LOOM_UNARY_FLOOR,
  LOOM_UNARY_CEIL,
  LOOM_UNARY_ROUND,  // half to even
  LOOM_UNARY_LOGICAL_NOT,
  LOOM_UNARY_OPS,
} loom__unary_op_t;

// Gradient helpers, with TensorFlow's argument order: (y, dy) for the
// functions of the output (TanhGrad, SigmoidGrad, RsqrtGrad, SqrtGrad,
// ReciprocalGrad), (gradients, features) for ReluGrad, Relu6Grad,
// SoftplusGrad and SoftsignGrad, (gradients, outputs) for EluGrad and SeluGrad.
typedef enum loom__unary_grad_op_t {
  LOOM_UNARY_GRAD_RELU = 0,
  LOOM_UNARY_GRAD_RELU6,
  LOOM_UNARY_GRAD_TANH,
  LOOM_UNARY_GRAD_SIGMOID,
  LOOM_UNARY_GRAD_RSQRT,
  LOOM_UNARY_GRAD_SQRT,
  LOOM_UNARY_GRAD_RECIPROCAL,
  LOOM_UNARY_GRAD_ELU,
  LOOM_UNARY_GRAD_SELU,
  LOOM_UNARY_GRAD_SOFTPLUS,
  LOOM_UNARY_GRAD_SOFTSIGN,
  LOOM_UNARY_GRAD_OPS,
} loom__unary_grad_op_t;

// Float-class predicates (float dtypes to bool).
typedef enum loom__float_class_t {
  LOOM_FLOAT_CLASS_IS_NAN = 0,
  LOOM_FLOAT_CLASS_IS_INF,
  LOOM_FLOAT_CLASS_IS_FINITE,
  LOOM_FLOAT_CLASSES,
} loom__float_class_t;

typedef loom__unary_loop_fn_t loom__unary_table_t[LOOM_UNARY_OPS]
                                                 [LOOM_ELEM_SLOTS];
typedef loom__unary_grad_loop_fn_t loom__unary_grad_table_t[LOOM_UNARY_GRAD_OPS]
                                                           [LOOM_ELEM_SLOTS];
// [source slot][destination slot]
typedef loom__unary_loop_fn_t loom__cast_table_t[LOOM_ELEM_SLOTS]
                                                [LOOM_ELEM_SLOTS];
typedef loom__unary_loop_fn_t loom__float_class_table_t[LOOM_FLOAT_CLASSES]
                                                       [LOOM_ELEM_SLOTS];

// One table of each per ISA level (elementwise_unary_loops.c and
// cast_loops.c, built per level); NULL entries: no loop.
extern const loom__unary_table_t loom__unary_loops_baseline;
extern const loom__unary_table_t loom__unary_loops_avx2;
extern const loom__unary_table_t loom__unary_loops_avx512;
extern const loom__unary_grad_table_t loom__unary_grad_loops_baseline;
extern const loom__unary_grad_table_t loom__unary_grad_loops_avx2;
extern const loom__unary_grad_table_t loom__unary_grad_loops_avx512;
extern const loom__cast_table_t loom__cast_loops_baseline;
extern const loom__cast_table_t loom__cast_loops_avx2;
extern const loom__cast_table_t loom__cast_loops_avx512;
// Cast with Truncate=true: only the narrowing float pairs TensorFlow
// truncates (double->float, double->half, float->half, float->bfloat16).
extern const loom__cast_table_t loom__cast_truncate_loops_baseline;
extern const loom__cast_table_t loom__cast_truncate_loops_avx2;
extern const loom__cast_table_t loom__cast_truncate_loops_avx512;
extern const loom__float_class_table_t loom__float_class_loops_baseline;
extern const loom__float_class_table_t loom__float_class_loops_avx2;
extern const loom__float_class_table_t loom__float_class_loops_avx512;

// The loops for this CPU's level, or NULL.
loom__unary_loop_fn_t loom__unary_loop(loom__unary_op_t op, loom_dtype_t dtype);
loom__unary_grad_loop_fn_t loom__unary_grad_loop(loom__unary_grad_op_t op,
                                                 loom_dtype_t dtype);
loom__unary_loop_fn_t loom__cast_loop(loom_dtype_t src, loom_dtype_t dst,
                                      bool truncate);
loom__unary_loop_fn_t loom__float_class_loop(loom__float_class_t predicate,
                                             loom_dtype_t dtype);

// Runs `loop` from input 0 to output 0 (of the op's output dtype and input
// 0's shape), reusing input 0's buffer when it has the output's dtype and
// nobody else holds it, split over the thread pool when large.
// cost_per_element: nanoseconds-ish per element. Failures go to ctx.
void loom__unary_compute(loom_kernel_context_t* ctx, loom__unary_loop_fn_t loop,
                         int64_t cost_per_element);

// As loom__unary_compute for two inputs of one dtype and element count
// (checked by the caller); either input's buffer may become the output.
void loom__unary_grad_compute(loom_kernel_context_t* ctx,
                              loom__unary_grad_loop_fn_t loop,
                              int64_t cost_per_element);

//===----------------------------------------------------------------------===//
// Helpers for the per-ISA loop files (compiled with LOOM_ISA set)
//===----------------------------------------------------------------------===//

#ifdef LOOM_ISA

#include <string.h>

#include "base/half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// 16-bit floats are computed in float, a block at a time.
enum { kUnaryBlock = 256 };

static inline void loom__f16_to_f32_block(const uint16_t* in, float* out,
                                          int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    __m256i h = _mm256_loadu_si256((const __m256i*)(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128((const __m128i*)(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = loom__half_to_float(in[i]);
}

static inline void loom__f32_to_f16_block(const float* in, uint16_t* out,
                                          int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    __m256i h =
        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256((__m256i*)(out + i), h);
  }
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i*)(out + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = loom__float_to_half(in[i]);
}

static inline void loom__bf16_to_f32_block(const uint16_t* in, float* out,
                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = (uint32_t)in[i] << 16;
    memcpy(&out[i], &bits, sizeof(bits));
  }
}

// Round to nearest even; NaN stays a (quiet) NaN. Branch-free, so that
// the block loop vectorises.
static inline uint16_t loom__f32_to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  uint32_t quiet = (bits >> 16) | 0x40u;
  return (uint16_t)((bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

static inline void loom__f32_to_bf16_block(const float* in, uint16_t* out,
                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = loom__f32_to_bf16(in[i]);
}

#endif  // LOOM_ISA

#endif  // LOOM_KERNELS_ELEMENTWISE_UNARY_H_
