// Integer matrix products and 16-bit float conversions, compiled once per
// ISA level (see isa.h).

#include <stdint.h>
#include <string.h>

#include "base/half.h"
#include "kernels/matmul.h"

#include <immintrin.h>

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

// Outer products. The row loop writes whole rows; with `stream` the
// aligned middle of each row goes out in non-temporal stores (x86-64 has
// SSE2 at every level; AVX levels store 32 bytes at a time), then one
// fence orders them before the caller's release of the output.
#if defined(__AVX__)
#define OUTER_STREAM_F32(p, v) _mm256_stream_ps((p), _mm256_mul_ps(s, (v)))
#define OUTER_STREAM_F64(p, v) _mm256_stream_pd((p), _mm256_mul_pd(s, (v)))
#define OUTER_VEC_F32 __m256
#define OUTER_VEC_F64 __m256d
#define OUTER_SET_F32 _mm256_set1_ps
#define OUTER_SET_F64 _mm256_set1_pd
#define OUTER_LOAD_F32 _mm256_loadu_ps
#define OUTER_LOAD_F64 _mm256_loadu_pd
#define OUTER_BYTES 32
#else
#define OUTER_STREAM_F32(p, v) _mm_stream_ps((p), _mm_mul_ps(s, (v)))
#define OUTER_STREAM_F64(p, v) _mm_stream_pd((p), _mm_mul_pd(s, (v)))
#define OUTER_VEC_F32 __m128
#define OUTER_VEC_F64 __m128d
#define OUTER_SET_F32 _mm_set1_ps
#define OUTER_SET_F64 _mm_set1_pd
#define OUTER_LOAD_F32 _mm_loadu_ps
#define OUTER_LOAD_F64 _mm_loadu_pd
#define OUTER_BYTES 16
#endif

#define OUTER(name, T, SUFFIX)                                            \
  static void LOOM_ISA_FN(name)(const T* restrict a, const T* restrict b, \
                                T* restrict c, int64_t m, int64_t n,      \
                                bool stream) {                            \
    enum { kLanes = OUTER_BYTES / sizeof(T) };                            \
    for (int64_t i = 0; i < m; ++i) {                                     \
      const T ai = a[i];                                                  \
      T* restrict row = c + i * n;                                        \
      int64_t j = 0;                                                      \
      if (stream) {                                                       \
        for (; j < n && ((uintptr_t)(row + j) % OUTER_BYTES) != 0; ++j) { \
          row[j] = ai * b[j];                                             \
        }                                                                 \
        const OUTER_VEC_##SUFFIX s = OUTER_SET_##SUFFIX(ai);              \
        for (; j + kLanes <= n; j += kLanes) {                            \
          OUTER_STREAM_##SUFFIX(row + j, OUTER_LOAD_##SUFFIX(b + j));     \
        }                                                                 \
      }                                                                   \
      for (; j < n; ++j) row[j] = ai * b[j];                              \
    }                                                                     \
    if (stream) _mm_sfence();                                             \
  }

OUTER(outer_f32, float, F32)
OUTER(outer_f64, double, F64)

const loom__matmul_loops_t LOOM_ISA_FN(loom__matmul_loops) = {
    .gemm_i32 = LOOM_ISA_FN(gemm_i32),
    .gemm_i64 = LOOM_ISA_FN(gemm_i64),
    .half_to_float = LOOM_ISA_FN(half_to_float),
    .float_to_half = LOOM_ISA_FN(float_to_half),
    .bfloat16_to_float = LOOM_ISA_FN(bfloat16_to_float),
    .float_to_bfloat16 = LOOM_ISA_FN(float_to_bfloat16),
    .bias_rows_f32 = LOOM_ISA_FN(bias_rows_f32),
    .leaky_relu_f32 = LOOM_ISA_FN(leaky_relu_f32),
    .outer_f32 = LOOM_ISA_FN(outer_f32),
    .outer_f64 = LOOM_ISA_FN(outer_f64),
};
