// Integer matrix products and 16-bit float conversions, compiled once per
// ISA level (see isa.h).

#include <stdint.h>
#include <string.h>

#include "base/half.h"
#include "kernels/matmul.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// Blocking of the integer products: a panel of kBlockK rows of b (and the
// matching columns of a) by kBlockN columns stays in cache while every row
// of c takes its share.
enum { kBlockK = 128, kBlockN = 512 };

// c = a . b, the inner loop running along rows of b and c so it
// vectorises; T's products wrap (computed in the unsigned type U).
#define INT_GEMM(name, T, U)                                              \
  static void LOOM_ISA_FN(name)(const T* a, int64_t a_row, int64_t a_col, \
                                const T* b, T* c, int64_t m, int64_t n,   \
                                int64_t k) {                              \
    memset(c, 0, (size_t)(m * n) * sizeof(T));                            \
    for (int64_t j0 = 0; j0 < n; j0 += kBlockN) {                         \
      int64_t nj = n - j0 < kBlockN ? n - j0 : kBlockN;                   \
      for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {                       \
        int64_t np = k - p0 < kBlockK ? k - p0 : kBlockK;                 \
        for (int64_t i = 0; i < m; ++i) {                                 \
          U* restrict crow = (U*)(c + i * n + j0);                        \
          for (int64_t p = p0; p < p0 + np; ++p) {                        \
            const U s = (U)a[i * a_row + p * a_col];                      \
            const U* restrict brow = (const U*)(b + p * n + j0);          \
            for (int64_t j = 0; j < nj; ++j) crow[j] += s * brow[j];      \
          }                                                               \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  }

INT_GEMM(gemm_i32, int32_t, uint32_t)
INT_GEMM(gemm_i64, int64_t, uint64_t)

static void LOOM_ISA_FN(half_to_float)(const uint16_t* in, float* out,
                                       int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128((const __m128i*)(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = loom__half_to_float(in[i]);
}

static void LOOM_ISA_FN(float_to_half)(const float* in, uint16_t* out,
                                       int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128((__m128i*)(out + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = loom__float_to_half(in[i]);
}

static void LOOM_ISA_FN(bfloat16_to_float)(const uint16_t* restrict in,
                                           float* restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = loom__bfloat16_to_float(in[i]);
}

static void LOOM_ISA_FN(float_to_bfloat16)(const float* restrict in,
                                           uint16_t* restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, &in[i], sizeof(bits));
    uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    uint32_t nan = (bits >> 16) | 0x40u;
    out[i] = (uint16_t)((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

#define BIAS_ROWS(name, T)                                             \
  static void LOOM_ISA_FN(name)(T* restrict c, const T* restrict bias, \
                                int64_t rows, int64_t n) {             \
    for (int64_t i = 0; i < rows; ++i) {                               \
      T* restrict row = c + i * n;                                     \
      for (int64_t j = 0; j < n; ++j) row[j] += bias[j];               \
    }                                                                  \
  }

BIAS_ROWS(bias_rows_f32, float)

// A select the compiler vectorises (NaN stays NaN: x * alpha).
#define LEAKY_RELU(name, T)                                          \
  static void LOOM_ISA_FN(name)(T* restrict x, int64_t n, T alpha) { \
    for (int64_t i = 0; i < n; ++i) {                                \
      T v = x[i];                                                    \
      x[i] = v < 0 ? v * alpha : v;                                  \
    }                                                                \
  }

LEAKY_RELU(leaky_relu_f32, float)

const loom__matmul_loops_t LOOM_ISA_FN(loom__matmul_loops) = {
    .gemm_i32 = LOOM_ISA_FN(gemm_i32),
    .gemm_i64 = LOOM_ISA_FN(gemm_i64),
    .half_to_float = LOOM_ISA_FN(half_to_float),
    .float_to_half = LOOM_ISA_FN(float_to_half),
    .bfloat16_to_float = LOOM_ISA_FN(bfloat16_to_float),
    .float_to_bfloat16 = LOOM_ISA_FN(float_to_bfloat16),
    .bias_rows_f32 = LOOM_ISA_FN(bias_rows_f32),
    .leaky_relu_f32 = LOOM_ISA_FN(leaky_relu_f32),
};
