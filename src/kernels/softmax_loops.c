// Softmax rows, compiled once per ISA level (see isa.h): plain C loops the
// compiler vectorises, and exp on whole vectors of the level, applied to
// blocks: vector_expf.h's for float at AVX-512, SLEEF's otherwise.

#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>

#include "kernels/softmax.h"
#include "kernels/vector_expf.h"

// exp over in[0, n) into out (may alias), W lanes at a time; the tail is
// padded with -inf (whose exp is 0) so every element takes the same path.
#if defined(__AVX512F__)
#define EXPF_LANES 16
#define EXPD_LANES 8
#define VEXPF(p, q) _mm512_storeu_ps(q, loom__expf_avx512(_mm512_loadu_ps(p)))
#define VEXPD(p, q) \
  _mm512_storeu_pd(q, Sleef_expd8_u10avx512f(_mm512_loadu_pd(p)))
#elif defined(__AVX2__)
#define EXPF_LANES 8
#define EXPD_LANES 4
#define VEXPF(p, q) _mm256_storeu_ps(q, Sleef_expf8_u10avx2(_mm256_loadu_ps(p)))
#define VEXPD(p, q) _mm256_storeu_pd(q, Sleef_expd4_u10avx2(_mm256_loadu_pd(p)))
#else
#define EXPF_LANES 4
#define EXPD_LANES 2
#define VEXPF(p, q) _mm_storeu_ps(q, Sleef_expf4_u10sse2(_mm_loadu_ps(p)))
#define VEXPD(p, q) _mm_storeu_pd(q, Sleef_expd2_u10sse2(_mm_loadu_pd(p)))
#endif

// The last n < LANES elements: masked loads (the others read as -inf) and
// stores where the level has them, else through a padded copy.
#if defined(__AVX512F__)
#define VEXPF_TAIL(p, q, n)                                                \
  do {                                                                     \
    __mmask16 mask_ = (__mmask16)((1u << (n)) - 1);                        \
    __m512 v_ = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), mask_, p); \
    _mm512_mask_storeu_ps(q, mask_, loom__expf_avx512(v_));                \
  } while (0)
#define VEXPD_TAIL(p, q, n)                                                 \
  do {                                                                      \
    __mmask8 mask_ = (__mmask8)((1u << (n)) - 1);                           \
    __m512d v_ = _mm512_mask_loadu_pd(_mm512_set1_pd(-INFINITY), mask_, p); \
    _mm512_mask_storeu_pd(q, mask_, Sleef_expd8_u10avx512f(v_));            \
  } while (0)
#else
#define VEXPF_TAIL(p, q, n) VEXP_PADDED(float, EXPF_LANES, VEXPF, p, q, n)
#define VEXPD_TAIL(p, q, n) VEXP_PADDED(double, EXPD_LANES, VEXPD, p, q, n)
#endif
#define VEXP_PADDED(T, LANES, VEXP, p, q, n)             \
  do {                                                   \
    T pad_[LANES];                                       \
    for (int j_ = 0; j_ < LANES; ++j_) {                 \
      pad_[j_] = j_ < (n) ? (p)[j_] : -INFINITY;         \
    }                                                    \
    VEXP(pad_, pad_);                                    \
    for (int j_ = 0; j_ < (n); ++j_) (q)[j_] = pad_[j_]; \
  } while (0)

#define VEXP_LOOP(name, T, LANES, VEXP, VEXP_TAIL)                \
  static void LOOM_ISA_FN(name)(const T* in, T* out, int64_t n) { \
    int64_t i = 0;                                                \
    for (; i + LANES <= n; i += LANES) VEXP(in + i, out + i);     \
    if (i < n) VEXP_TAIL(in + i, out + i, (int)(n - i));          \
  }

VEXP_LOOP(vexp_f32, float, EXPF_LANES, VEXPF, VEXPF_TAIL)
VEXP_LOOP(vexp_f64, double, EXPD_LANES, VEXPD, VEXPD_TAIL)

// Independent lanes for the row reductions (kept in vector registers).
enum { kLanes = 32 };

// The rows: T is float or double; EXP is the block exp above; LOG the
// scalar log.
#define SOFTMAX_LOOPS(suffix, T, LOG)                                       \
  /* The largest element (NaN if any is NaN). */                            \
  static T LOOM_ISA_FN(max_##suffix)(const T* restrict x, int64_t n) {      \
    if (n < kLanes) {                                                       \
      /* A short row (a few classes): the lanes would cost more. */         \
      T m = -INFINITY;                                                      \
      for (int64_t i = 0; i < n; ++i) {                                     \
        m = (x[i] > m || x[i] != x[i]) ? x[i] : m;                          \
      }                                                                     \
      return m;                                                             \
    }                                                                       \
    T lane[kLanes];                                                         \
    for (int j = 0; j < kLanes; ++j) lane[j] = -INFINITY;                   \
    int64_t i = 0;                                                          \
    for (; i + kLanes <= n; i += kLanes) {                                  \
      for (int j = 0; j < kLanes; ++j) {                                    \
        T v = x[i + j];                                                     \
        lane[j] = (v > lane[j] || v != v) ? v : lane[j];                    \
      }                                                                     \
    }                                                                       \
    for (int j = 0; i + j < n; ++j) {                                       \
      T v = x[i + j];                                                       \
      lane[j] = (v > lane[j] || v != v) ? v : lane[j];                      \
    }                                                                       \
    T m = lane[0];                                                          \
    for (int j = 1; j < kLanes; ++j) {                                      \
      m = (lane[j] > m || lane[j] != lane[j]) ? lane[j] : m;                \
    }                                                                       \
    return m;                                                               \
  }                                                                         \
  static T LOOM_ISA_FN(sum_##suffix)(const T* restrict x, int64_t n) {      \
    if (n < kLanes) {                                                       \
      T s = 0;                                                              \
      for (int64_t i = 0; i < n; ++i) s += x[i];                            \
      return s;                                                             \
    }                                                                       \
    T lane[kLanes];                                                         \
    for (int j = 0; j < kLanes; ++j) lane[j] = 0;                           \
    int64_t i = 0;                                                          \
    for (; i + kLanes <= n; i += kLanes) {                                  \
      for (int j = 0; j < kLanes; ++j) lane[j] += x[i + j];                 \
    }                                                                       \
    for (int j = 0; i + j < n; ++j) lane[j] += x[i + j];                    \
    for (int width = kLanes / 2; width > 0; width /= 2) {                   \
      for (int j = 0; j < width; ++j) lane[j] += lane[j + width];           \
    }                                                                       \
    return lane[0];                                                         \
  }                                                                         \
  /* y = x - shift; returns the sum of exp(y) and leaves exp(y) in e. */    \
  /* x and e may be the same row. */                                        \
  static T LOOM_ISA_FN(shifted_exp_##suffix)(const T* x, T* e, int64_t n,   \
                                             T shift) {                     \
    for (int64_t i = 0; i < n; ++i) e[i] = x[i] - shift;                    \
    LOOM_ISA_FN(vexp_##suffix)(e, e, n);                                    \
    return LOOM_ISA_FN(sum_##suffix)(e, n);                                 \
  }                                                                         \
  static void LOOM_ISA_FN(softmax_##suffix)(const T* x, T* y, int64_t n,    \
                                            int take_log) {                 \
    if (n == 0) return;                                                     \
    T m = LOOM_ISA_FN(max_##suffix)(x, n);                                  \
    if (!take_log) {                                                        \
      T s = LOOM_ISA_FN(shifted_exp_##suffix)(x, y, n, m);                  \
      for (int64_t i = 0; i < n; ++i) y[i] /= s;                            \
      return;                                                               \
    }                                                                       \
    /* y may alias x: exp(x - m) goes to y only after its sum is known. */  \
    T s = 0;                                                                \
    T block[256];                                                           \
    for (int64_t i = 0; i < n; i += 256) {                                  \
      int64_t len = n - i < 256 ? n - i : 256;                              \
      s += LOOM_ISA_FN(shifted_exp_##suffix)(x + i, block, len, m);         \
    }                                                                       \
    /* (x - m) - log(s), as TensorFlow: m + log(s) would round. */          \
    T log_sum = LOG(s);                                                     \
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;            \
  }                                                                         \
  static T LOOM_ISA_FN(xent_##suffix)(const T* x, const T* restrict labels, \
                                      T* restrict backprop, int64_t n) {    \
    if (n == 0) return 0;                                                   \
    T m = LOOM_ISA_FN(max_##suffix)(x, n);                                  \
    T s = LOOM_ISA_FN(shifted_exp_##suffix)(x, backprop, n, m);             \
    T log_sum = LOG(s);                                                     \
    T loss = 0;                                                             \
    for (int64_t i = 0; i < n; ++i) {                                       \
      loss += labels[i] * (log_sum - (x[i] - m));                           \
      backprop[i] = backprop[i] / s - labels[i];                            \
    }                                                                       \
    return loss;                                                            \
  }                                                                         \
  static T LOOM_ISA_FN(sparse_xent_##suffix)(                               \
      const T* x, int64_t label, T* restrict backprop, int64_t n) {         \
    T m = LOOM_ISA_FN(max_##suffix)(x, n);                                  \
    T s = LOOM_ISA_FN(shifted_exp_##suffix)(x, backprop, n, m);             \
    for (int64_t i = 0; i < n; ++i) backprop[i] /= s;                       \
    backprop[label] -= 1;                                                   \
    return LOG(s) - (x[label] - m);                                         \
  }

SOFTMAX_LOOPS(f32, float, logf)
SOFTMAX_LOOPS(f64, double, log)

static void LOOM_ISA_FN(sparse_xent_rows_f32)(const float* x,
                                              const int64_t* labels,
                                              float* backprop, float* loss,
                                              int64_t rows, int64_t n) {
  float shifts[LOOM_SOFTMAX_ROWS_CHUNK];
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* br = backprop + r * n;
    shifts[r] = LOOM_ISA_FN(max_f32)(xr, n);
    for (int64_t i = 0; i < n; ++i) br[i] = xr[i] - shifts[r];
  }
  LOOM_ISA_FN(vexp_f32)(backprop, backprop, rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    float* br = backprop + r * n;
    float s = LOOM_ISA_FN(sum_f32)(br, n);
    for (int64_t i = 0; i < n; ++i) br[i] /= s;
    br[labels[r]] -= 1;
    loss[r] = logf(s) - (x[r * n + labels[r]] - shifts[r]);
  }
}

const loom__softmax_loops_t LOOM_ISA_FN(loom__softmax_loops) = {
    .softmax_f32 = LOOM_ISA_FN(softmax_f32),
    .softmax_f64 = LOOM_ISA_FN(softmax_f64),
    .xent_f32 = LOOM_ISA_FN(xent_f32),
    .xent_f64 = LOOM_ISA_FN(xent_f64),
    .sparse_xent_f32 = LOOM_ISA_FN(sparse_xent_f32),
    .sparse_xent_f64 = LOOM_ISA_FN(sparse_xent_f64),
    .sparse_xent_rows_f32 = LOOM_ISA_FN(sparse_xent_rows_f32),
};
