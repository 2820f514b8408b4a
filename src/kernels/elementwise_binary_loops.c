// Element-wise binary loops, compiled once per ISA level (see isa.h): plain
// C loops with the common stride patterns split out, so the compiler
// vectorises each for the level's instruction set; SLEEF's vector pow and
// fmod of the level (pow of our own where we have one: float at the
// AVX-512 level, vector_powf.h; double at the AVX2 and AVX-512 levels,
// vector_pow.h); 16-bit floats widened to float a block at a time.

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/elementwise.h"
#include "kernels/elementwise_half.h"
#include "kernels/vector_pow.h"
#include "kernels/vector_powf.h"
#include "loom/macros.h"

#include <immintrin.h>
#include <sleef.h>

// Three versions of every loop: both operands contiguous, one broadcast
// (stride 0), or general strides. No `restrict`: the output may be an input
// (a forwarded buffer); the compiler's overlap check lets exact aliasing
// take the vector path.
#define STRIDED_LOOPS(T, BODY)        \
  if (sa == 1 && sb == 1) {           \
    for (int64_t i = 0; i < n; ++i) { \
      T x = a[i], y = b[i];           \
      BODY;                           \
    }                                 \
  } else if (sa == 1 && sb == 0) {    \
    const T y = b[0];                 \
    for (int64_t i = 0; i < n; ++i) { \
      T x = a[i];                     \
      BODY;                           \
    }                                 \
  } else if (sa == 0 && sb == 1) {    \
    const T x = a[0];                 \
    for (int64_t i = 0; i < n; ++i) { \
      T y = b[i];                     \
      BODY;                           \
    }                                 \
  } else {                            \
    for (int64_t i = 0; i < n; ++i) { \
      T x = a[i * sa], y = b[i * sb]; \
      BODY;                           \
    }                                 \
  }

#define BINARY_LOOP(name, T, OUT, expr)                                     \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const T* a = a_;                                                        \
    const T* b = b_;                                                        \
    OUT* out = out_;                                                        \
    STRIDED_LOOPS(T, out[i] = (expr))                                       \
  }

// A loop that flags invalid elements (`bad`, in terms of x and y).
#define CHECKED_LOOP(name, T, bad_expr, expr)                               \
  static bool LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const T* a = a_;                                                        \
    const T* b = b_;                                                        \
    T* out = out_;                                                          \
    int bad = 0;                                                            \
    STRIDED_LOOPS(T, bad |= (bad_expr); out[i] = (expr))                    \
    return !bad;                                                            \
  }

// NaN-propagating max/min, as TensorFlow's Maximum and Minimum.
#define FMAX(x, y) ((x) != (x) || (x) > (y) ? (x) : (y))
#define FMIN(x, y) ((x) != (x) || (x) < (y) ? (x) : (y))
#define IMAX(x, y) ((x) > (y) ? (x) : (y))
#define IMIN(x, y) ((x) < (y) ? (x) : (y))

// Integer add, sub and mul wrap (two's complement) as TensorFlow's do;
// computed in an unsigned type at least as wide as int (W), so that
// overflow is defined.
#define WRAP(T, W, op) ((T)((W)(x)op(W)(y)))

// floor and trunc are single instructions from SSE4.1 on (the AVX2 and
// AVX-512 builds); the baseline build calls libm for them.
#define FLOAT_LOOPS(suffix, T, floor_fn, trunc_fn)      \
  BINARY_LOOP(add_##suffix, T, T, x + y)                \
  BINARY_LOOP(sub_##suffix, T, T, x - y)                \
  BINARY_LOOP(mul_##suffix, T, T, x* y)                 \
  BINARY_LOOP(div_##suffix, T, T, x / y)                \
  BINARY_LOOP(max_##suffix, T, T, FMAX(x, y))           \
  BINARY_LOOP(min_##suffix, T, T, FMIN(x, y))           \
  BINARY_LOOP(sqdiff_##suffix, T, T, (x - y) * (x - y)) \
  BINARY_LOOP(floordiv_##suffix, T, T, floor_fn(x / y)) \
  BINARY_LOOP(truncdiv_##suffix, T, T, trunc_fn(x / y))

FLOAT_LOOPS(f32, float, floorf, truncf)
FLOAT_LOOPS(f64, double, floor, trunc)

//===----------------------------------------------------------------------===//
// pow and fmod through SLEEF's vector functions of this level
//===----------------------------------------------------------------------===//

#if defined(__AVX512F__)
#define LANES_F32 16
#define LANES_F64 8
#define LOAD_F32 _mm512_loadu_ps
#define LOAD_F64 _mm512_loadu_pd
#define STORE_F32 _mm512_storeu_ps
#define STORE_F64 _mm512_storeu_pd
#define POW_F32 loom__powf_avx512
#define POW_F64 loom__pow_f64_avx512
#define FMOD_F32 fmod_f32_avx512
#define FMOD_F64 Sleef_fmodd8_avx512f

// fmod of eight floats in double precision, as the AVX2 level's fmod_f32_avx2
// (the same argument makes it exact); false in *ok for lanes it does not serve
// (a quotient of 2^27 or more, b zero or infinite, a infinite or NaN).
static inline __m256 fmod_f32_half_avx512(__m256 a, __m256 b, __mmask8* ok) {
  __m512d ad = _mm512_cvtps_pd(a);
  __m512d bd = _mm512_cvtps_pd(b);
  __m512d q = _mm512_div_pd(ad, bd);
  // Ordered comparisons: false for NaN.
  *ok = _mm512_cmp_pd_mask(_mm512_abs_pd(q), _mm512_set1_pd(134217728.0),
                           _CMP_LT_OQ) &
        _mm512_cmp_pd_mask(_mm512_abs_pd(bd), _mm512_set1_pd(__builtin_inf()),
                           _CMP_LT_OQ);
  q = _mm512_roundscale_pd(q, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  return _mm512_cvtpd_ps(_mm512_fnmadd_pd(q, bd, ad));
}

// fmod of sixteen floats: the double-precision path, or SLEEF's (which
// iterates per exponent) when a lane needs it. The result takes a's sign
// (fmod's, -0 included).
static inline __m512 fmod_f32_avx512(__m512 a, __m512 b) {
  __mmask8 ok_lo, ok_hi;
  __m256 lo = fmod_f32_half_avx512(_mm512_castps512_ps256(a),
                                   _mm512_castps512_ps256(b), &ok_lo);
  __m256 hi = fmod_f32_half_avx512(
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)),
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(b), 1)), &ok_hi);
  if ((ok_lo & ok_hi) != 0xff) return Sleef_fmodf16_avx512f(a, b);
  __m512 r = _mm512_castpd_ps(_mm512_insertf64x4(
      _mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
  const __m512i sign = _mm512_set1_epi32((int)0x80000000);
  // r's magnitude, a's sign: bits of r outside `sign`, of a inside.
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
      sign, _mm512_castps_si512(r), _mm512_castps_si512(a), 0xac));
}

// TensorFlow's FloorMod of sixteen floats: fmod moved to the divisor's
// sign (r + b where r is not zero and its sign differs from b's), in the
// vector step, so that no scalar pass follows.
static inline __m512 floormod_f32_avx512_vec(__m512 a, __m512 b) {
  __m512 r = fmod_f32_avx512(a, b);
  const __m512 zero = _mm512_setzero_ps();
  __mmask16 differ = _mm512_cmp_ps_mask(b, zero, _CMP_LT_OQ) ^
                     _mm512_cmp_ps_mask(r, zero, _CMP_LT_OQ);
  __mmask16 fix = differ & _mm512_cmp_ps_mask(r, zero, _CMP_NEQ_OQ);
  return _mm512_mask_add_ps(r, fix, r, b);
}
#define FLOORMOD_F32 floormod_f32_avx512_vec
#define FLOORMOD_F32_POST PLAIN
#elif defined(__AVX2__)
#define LANES_F32 8
#define LANES_F64 4
#define LOAD_F32 _mm256_loadu_ps
#define LOAD_F64 _mm256_loadu_pd
#define STORE_F32 _mm256_storeu_ps
#define STORE_F64 _mm256_storeu_pd
#define POW_F32 Sleef_powf8_u10avx2
#define POW_F64 loom__pow_f64_avx2
#define FMOD_F32 fmod_f32_avx2
#define FMOD_F64 Sleef_fmodd4_avx2

// fmod of eight floats in double precision: r = a - trunc(a / b) * b. For
// finite b and |a / b| < 2^27 this is exact: the double quotient of two
// floats that is not an integer lies at least 2^-52 (relative) from every
// integer, so its rounding cannot cross one and trunc is the true
// quotient's; q * b takes at most 51 bits and a - q * b, a multiple of the
// smaller operand's ulp below |b|, at most 24. The result takes a's sign
// (fmod's, -0 included). Other lanes (a huge quotient, b zero or infinite,
// a infinite or NaN) go through SLEEF's loop, which iterates per exponent.
static inline __m256 fmod_f32_avx2(__m256 a, __m256 b) {
  const __m256d limit = _mm256_set1_pd(134217728.0);  // 2^27
  const __m256d inf = _mm256_set1_pd(__builtin_inf());
  const __m256d magnitude =
      _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  __m256d a_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(a));
  __m256d a_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));
  __m256d b_lo = _mm256_cvtps_pd(_mm256_castps256_ps128(b));
  __m256d b_hi = _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1));
  __m256d q_lo = _mm256_div_pd(a_lo, b_lo);
  __m256d q_hi = _mm256_div_pd(a_hi, b_hi);
  // Ordered comparisons: false for NaN.
  __m256d ok_lo = _mm256_and_pd(
      _mm256_cmp_pd(_mm256_and_pd(q_lo, magnitude), limit, _CMP_LT_OQ),
      _mm256_cmp_pd(_mm256_and_pd(b_lo, magnitude), inf, _CMP_LT_OQ));
  __m256d ok_hi = _mm256_and_pd(
      _mm256_cmp_pd(_mm256_and_pd(q_hi, magnitude), limit, _CMP_LT_OQ),
      _mm256_cmp_pd(_mm256_and_pd(b_hi, magnitude), inf, _CMP_LT_OQ));
  if (_mm256_movemask_pd(_mm256_and_pd(ok_lo, ok_hi)) != 0xf) {
    return Sleef_fmodf8_avx2(a, b);
  }
  q_lo = _mm256_round_pd(q_lo, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  q_hi = _mm256_round_pd(q_hi, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  __m256d r_lo = _mm256_sub_pd(a_lo, _mm256_mul_pd(q_lo, b_lo));
  __m256d r_hi = _mm256_sub_pd(a_hi, _mm256_mul_pd(q_hi, b_hi));
  __m256 r = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(r_lo)),
                                  _mm256_cvtpd_ps(r_hi), 1);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  return _mm256_or_ps(_mm256_andnot_ps(sign, r), _mm256_and_ps(sign, a));
}

// TensorFlow's FloorMod of eight floats: fmod moved to the divisor's sign
// (r + b where r is not zero and its sign differs from b's), in the vector
// step, so that no scalar pass follows.
static inline __m256 floormod_f32_avx2_vec(__m256 a, __m256 b) {
  __m256 r = fmod_f32_avx2(a, b);
  const __m256 zero = _mm256_setzero_ps();
  __m256 differ = _mm256_xor_ps(_mm256_cmp_ps(b, zero, _CMP_LT_OQ),
                                _mm256_cmp_ps(r, zero, _CMP_LT_OQ));
  __m256 fix = _mm256_and_ps(differ, _mm256_cmp_ps(r, zero, _CMP_NEQ_OQ));
  return _mm256_blendv_ps(r, _mm256_add_ps(r, b), fix);
}
#define FLOORMOD_F32 floormod_f32_avx2_vec
#define FLOORMOD_F32_POST PLAIN
#else
#define LANES_F32 4
#define LANES_F64 2
#define LOAD_F32 _mm_loadu_ps
#define LOAD_F64 _mm_loadu_pd
#define STORE_F32 _mm_storeu_ps
#define STORE_F64 _mm_storeu_pd
#define POW_F32 Sleef_powf4_u10sse2
#define POW_F64_SLEEF Sleef_powd2_u10sse2
#define VECTOR_F64 __m128d
#define ANY_INF_F64(r)                                              \
  _mm_movemask_pd(_mm_cmpeq_pd(_mm_andnot_pd(_mm_set1_pd(-0.0), r), \
                               _mm_set1_pd(__builtin_inf())))
#define FMOD_F32 Sleef_fmodf4_sse2
#define FMOD_F64 Sleef_fmodd2_sse2
#endif

enum { kVectorBlock = 256 };

#ifndef POW_F64  // SSE2: SLEEF's
// SLEEF's double pow overflows to inf a little early, for results within
// about 2^-28 (relative) of the largest double: lanes whose result is
// infinite while both operands are finite are recomputed by libm.
static __attribute__((noinline, cold)) VECTOR_F64 pow_f64_overflow(
    VECTOR_F64 x_, VECTOR_F64 y_, VECTOR_F64 r_) {
  double x[LANES_F64], y[LANES_F64], r[LANES_F64];
  STORE_F64(x, x_);
  STORE_F64(y, y_);
  STORE_F64(r, r_);
  for (int j = 0; j < LANES_F64; ++j) {
    if (isinf(r[j]) && isfinite(x[j]) && isfinite(y[j])) r[j] = pow(x[j], y[j]);
  }
  return LOAD_F64(r);
}

static inline VECTOR_F64 pow_f64_vec(VECTOR_F64 x, VECTOR_F64 y) {
  VECTOR_F64 r = POW_F64_SLEEF(x, y);
  if (LOOM_UNLIKELY(ANY_INF_F64(r))) r = pow_f64_overflow(x, y, r);
  return r;
}
#define POW_F64 pow_f64_vec
#endif

// TensorFlow's FloorMod for floats: fmod, moved to the divisor's sign.
#define FLOOR_MOD_FIX(x, y, r) \
  ((r) != 0 && (((y) < 0) != ((r) < 0)) ? (r) + (y) : (r))
#define PLAIN(x, y, r) (r)

// Whether `post` is PLAIN: the results then go straight to the output.
#define POST_IS_PLAIN(post) POST_IS_PLAIN_(post)
#define POST_IS_PLAIN_(post) PLAIN_##post
#define PLAIN_PLAIN 1
#define PLAIN_FLOOR_MOD_FIX 0

// Reads contiguous operands in place and gathers the others (a broadcast
// value once) into a block, applies the vector function lane group by lane
// group (the tail through a padded copy), then `post` element by element.
// Without a post step the results are stored to the output directly; the
// output may still be an input, as each lane group is read before its
// lanes are written.
#define SLEEF_LOOP(name, T, lanes, load, store, fn, post)                   \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const T* a = a_;                                                        \
    const T* b = b_;                                                        \
    T* out = out_;                                                          \
    T xa[kVectorBlock], xb[kVectorBlock], xr[kVectorBlock];                 \
    if (sa == 0) {                                                          \
      for (int j = 0; j < kVectorBlock; ++j) xa[j] = a[0];                  \
    }                                                                       \
    if (sb == 0) {                                                          \
      for (int j = 0; j < kVectorBlock; ++j) xb[j] = b[0];                  \
    }                                                                       \
    for (int64_t i = 0; i < n; i += kVectorBlock) {                         \
      int64_t m = n - i < kVectorBlock ? n - i : kVectorBlock;              \
      const T* pa = xa;                                                     \
      const T* pb = xb;                                                     \
      T* pr = POST_IS_PLAIN(post) ? out + i : xr;                           \
      if (sa == 1) {                                                        \
        pa = a + i;                                                         \
      } else if (sa != 0) {                                                 \
        for (int64_t j = 0; j < m; ++j) xa[j] = a[(i + j) * sa];            \
      }                                                                     \
      if (sb == 1) {                                                        \
        pb = b + i;                                                         \
      } else if (sb != 0) {                                                 \
        for (int64_t j = 0; j < m; ++j) xb[j] = b[(i + j) * sb];            \
      }                                                                     \
      int64_t full = m / lanes * lanes;                                     \
      for (int64_t j = 0; j < full; j += lanes) {                           \
        store(pr + j, fn(load(pa + j), load(pb + j)));                      \
      }                                                                     \
      if (full < m) {                                                       \
        T ta[lanes], tb[lanes], tr[lanes];                                  \
        for (int64_t j = 0; j < lanes; ++j) {                               \
          ta[j] = full + j < m ? pa[full + j] : (T)1;                       \
          tb[j] = full + j < m ? pb[full + j] : (T)1;                       \
        }                                                                   \
        store(tr, fn(load(ta), load(tb)));                                  \
        for (int64_t j = full; j < m; ++j) pr[j] = tr[j - full];            \
      }                                                                     \
      if (!POST_IS_PLAIN(post)) {                                           \
        for (int64_t j = 0; j < m; ++j) {                                   \
          out[i + j] = post(pa[j], pb[j], xr[j]);                           \
        }                                                                   \
      }                                                                     \
    }                                                                       \
  }

SLEEF_LOOP(pow_f32, float, LANES_F32, LOAD_F32, STORE_F32, POW_F32, PLAIN)
SLEEF_LOOP(pow_f64, double, LANES_F64, LOAD_F64, STORE_F64, POW_F64, PLAIN)
SLEEF_LOOP(truncmod_f32, float, LANES_F32, LOAD_F32, STORE_F32, FMOD_F32, PLAIN)
SLEEF_LOOP(truncmod_f64, double, LANES_F64, LOAD_F64, STORE_F64, FMOD_F64,
           PLAIN)
#ifndef FLOORMOD_F32  // the fix element by element after the vector fmod
#define FLOORMOD_F32 FMOD_F32
#define FLOORMOD_F32_POST FLOOR_MOD_FIX
#endif
SLEEF_LOOP(floormod_f32, float, LANES_F32, LOAD_F32, STORE_F32, FLOORMOD_F32,
           FLOORMOD_F32_POST)
SLEEF_LOOP(floormod_f64, double, LANES_F64, LOAD_F64, STORE_F64, FMOD_F64,
           FLOOR_MOD_FIX)

//===----------------------------------------------------------------------===//
// Streaming stores: for outputs too big to stay in the cache, written
// without first reading each line (a third less memory traffic than plain
// stores). The driver picks these for fresh outputs above a threshold.
//===----------------------------------------------------------------------===//

#if defined(__AVX512F__)
#define STREAM_OPS(suffix, T, VT, lanes, w)                                  \
  STREAM_LOOP(add_##suffix, T, VT, lanes, _mm512_loadu_##w, _mm512_set1_##w, \
              _mm512_stream_##w, _mm512_add_##w)                             \
  STREAM_LOOP(sub_##suffix, T, VT, lanes, _mm512_loadu_##w, _mm512_set1_##w, \
              _mm512_stream_##w, _mm512_sub_##w)                             \
  STREAM_LOOP(mul_##suffix, T, VT, lanes, _mm512_loadu_##w, _mm512_set1_##w, \
              _mm512_stream_##w, _mm512_mul_##w)                             \
  STREAM_LOOP(div_##suffix, T, VT, lanes, _mm512_loadu_##w, _mm512_set1_##w, \
              _mm512_stream_##w, _mm512_div_##w)
#define STREAM_F32 STREAM_OPS(f32, float, __m512, 16, ps)
#define STREAM_F64 STREAM_OPS(f64, double, __m512d, 8, pd)
#elif defined(__AVX2__)
#define STREAM_OPS(suffix, T, VT, lanes, w)                                  \
  STREAM_LOOP(add_##suffix, T, VT, lanes, _mm256_loadu_##w, _mm256_set1_##w, \
              _mm256_stream_##w, _mm256_add_##w)                             \
  STREAM_LOOP(sub_##suffix, T, VT, lanes, _mm256_loadu_##w, _mm256_set1_##w, \
              _mm256_stream_##w, _mm256_sub_##w)                             \
  STREAM_LOOP(mul_##suffix, T, VT, lanes, _mm256_loadu_##w, _mm256_set1_##w, \
              _mm256_stream_##w, _mm256_mul_##w)                             \
  STREAM_LOOP(div_##suffix, T, VT, lanes, _mm256_loadu_##w, _mm256_set1_##w, \
              _mm256_stream_##w, _mm256_div_##w)
#define STREAM_F32 STREAM_OPS(f32, float, __m256, 8, ps)
#define STREAM_F64 STREAM_OPS(f64, double, __m256d, 4, pd)
#else
#define STREAM_OPS(suffix, T, VT, lanes, w)                            \
  STREAM_LOOP(add_##suffix, T, VT, lanes, _mm_loadu_##w, _mm_set1_##w, \
              _mm_stream_##w, _mm_add_##w)                             \
  STREAM_LOOP(sub_##suffix, T, VT, lanes, _mm_loadu_##w, _mm_set1_##w, \
              _mm_stream_##w, _mm_sub_##w)                             \
  STREAM_LOOP(mul_##suffix, T, VT, lanes, _mm_loadu_##w, _mm_set1_##w, \
              _mm_stream_##w, _mm_mul_##w)                             \
  STREAM_LOOP(div_##suffix, T, VT, lanes, _mm_loadu_##w, _mm_set1_##w, \
              _mm_stream_##w, _mm_div_##w)
#define STREAM_F32 STREAM_OPS(f32, float, __m128, 4, ps)
#define STREAM_F64 STREAM_OPS(f64, double, __m128d, 2, pd)
#endif

// Contiguous or broadcast operands; the plain loop takes the unaligned head
// and the tail, and any other stride pattern. Streaming stores are weakly
// ordered: the fence makes them visible before the block is reported done.
#define STREAM_LOOP(name, T, VT, lanes, load, set1, stream, vop)           \
  static void LOOM_ISA_FN(stream_##name)(const void* a_, int64_t sa,       \
                                         const void* b_, int64_t sb,       \
                                         void* out_, int64_t n) {          \
    const T* a = a_;                                                       \
    const T* b = b_;                                                       \
    T* out = out_;                                                         \
    if (sa < 0 || sa > 1 || sb < 0 || sb > 1 || (sa == 0 && sb == 0)) {    \
      LOOM_ISA_FN(name)(a_, sa, b_, sb, out_, n);                          \
      return;                                                              \
    }                                                                      \
    int64_t head =                                                         \
        (int64_t)((lanes - ((uintptr_t)out / sizeof(T)) % lanes) % lanes); \
    if (head > n) head = n;                                                \
    LOOM_ISA_FN(name)(a, sa, b, sb, out, head);                            \
    const VT xs = set1(a[0]), ys = set1(b[0]);                             \
    int64_t i = head;                                                      \
    if (sa && sb) {                                                        \
      for (; i + lanes <= n; i += lanes) {                                 \
        stream(out + i, vop(load(a + i), load(b + i)));                    \
      }                                                                    \
    } else if (sa) {                                                       \
      for (; i + lanes <= n; i += lanes)                                   \
        stream(out + i, vop(load(a + i), ys));                             \
    } else {                                                               \
      for (; i + lanes <= n; i += lanes)                                   \
        stream(out + i, vop(xs, load(b + i)));                             \
    }                                                                      \
    _mm_sfence();                                                          \
    LOOM_ISA_FN(name)(a + i * sa, sa, b + i * sb, sb, out + i, n - i);     \
  }

STREAM_F32
STREAM_F64

//===----------------------------------------------------------------------===//
// 16-bit floats: widened to float a block at a time, computed by the float
// loop, rounded back
//===----------------------------------------------------------------------===//

#define HALF_LOOP(name, f32_loop, widen, narrow)                            \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const uint16_t* a = a_;                                                 \
    const uint16_t* b = b_;                                                 \
    uint16_t* out = out_;                                                   \
    float xa[kHalfBlock], xb[kHalfBlock], xr[kHalfBlock];                   \
    for (int64_t i = 0; i < n; i += kHalfBlock) {                           \
      int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;                  \
      int64_t ea = widen(a + i * sa, sa, xa, m);                            \
      int64_t eb = widen(b + i * sb, sb, xb, m);                            \
      LOOM_ISA_FN(f32_loop)(xa, ea, xb, eb, xr, m);                         \
      narrow(xr, out + i, m);                                               \
    }                                                                       \
  }

#define HALF_LOOPS(op)                                                   \
  HALF_LOOP(op##_f16, op##_f32, loom__widen_half, loom__float_to_half_n) \
  HALF_LOOP(op##_bf16, op##_f32, loom__widen_bfloat16,                   \
            loom__float_to_bfloat16_n)

HALF_LOOPS(add)
HALF_LOOPS(sub)
HALF_LOOPS(mul)
HALF_LOOPS(div)
HALF_LOOPS(max)
HALF_LOOPS(min)
HALF_LOOPS(sqdiff)
HALF_LOOPS(floordiv)
HALF_LOOPS(truncdiv)
HALF_LOOPS(floormod)
HALF_LOOPS(truncmod)
HALF_LOOPS(pow)

//===----------------------------------------------------------------------===//
// Integers
//===----------------------------------------------------------------------===//

#define INT_LOOPS(suffix, T, W)                  \
  BINARY_LOOP(add_##suffix, T, T, WRAP(T, W, +)) \
  BINARY_LOOP(sub_##suffix, T, T, WRAP(T, W, -)) \
  BINARY_LOOP(mul_##suffix, T, T, WRAP(T, W, *)) \
  BINARY_LOOP(max_##suffix, T, T, IMAX(x, y))    \
  BINARY_LOOP(min_##suffix, T, T, IMIN(x, y))    \
  BINARY_LOOP(sqdiff_##suffix, T, T, (T)(((W)(x) - (W)(y)) * ((W)(x) - (W)(y))))

INT_LOOPS(i32, int32_t, uint32_t)
INT_LOOPS(i64, int64_t, uint64_t)
INT_LOOPS(u8, uint8_t, uint32_t)
INT_LOOPS(i8, int8_t, uint32_t)
INT_LOOPS(i16, int16_t, uint32_t)
INT_LOOPS(u16, uint16_t, uint32_t)
INT_LOOPS(u32, uint32_t, uint32_t)
INT_LOOPS(u64, uint64_t, uint64_t)

// Division of types up to 32 bits goes through double, which is exact for
// them and vectorises: a non-integer quotient of 32-bit operands lies at
// least 2^-32 (relative) from the next integer, far above double's
// rounding error. TensorFlow's conventions: a zero divisor fails the op
// (its result is 0), x / -1 wraps (INT_MIN / -1 == INT_MIN), FloorMod has
// the divisor's sign, TruncateMod the dividend's.
#define SMALL_DIVISION(suffix, T, W, is_signed)                   \
  static inline T safe_divisor_##suffix(T y) {                    \
    return y == 0 || (is_signed && y == (T)-1) ? (T)1 : y;        \
  }                                                               \
  static inline T safe_dividend_##suffix(T x, T y) {              \
    return is_signed && y == (T)-1 ? (T)((W)0 - (W)x) : x;        \
  }                                                               \
  static inline T trunc_div_##suffix(T x, T y) {                  \
    T d = safe_divisor_##suffix(y);                               \
    return (T)((double)safe_dividend_##suffix(x, y) / (double)d); \
  }                                                               \
  static inline T floor_div_##suffix(T x, T y) {                  \
    T d = safe_divisor_##suffix(y);                               \
    double t = (double)safe_dividend_##suffix(x, y) / (double)d;  \
    T q = (T)t;                                                   \
    return (double)q > t ? (T)(q - 1) : q;                        \
  }                                                               \
  static inline T trunc_mod_##suffix(T x, T y) {                  \
    T d = safe_divisor_##suffix(y);                               \
    T x1 = safe_dividend_##suffix(x, y);                          \
    T q = (T)((double)x1 / (double)d);                            \
    return (T)((W)x1 - (W)q * (W)d);                              \
  }                                                               \
  static inline T floor_mod_##suffix(T x, T y) {                  \
    T d = safe_divisor_##suffix(y);                               \
    T x1 = safe_dividend_##suffix(x, y);                          \
    return (T)((W)x1 - (W)floor_div_##suffix(x, y) * (W)d);       \
  }

SMALL_DIVISION(i32, int32_t, uint32_t, 1)
SMALL_DIVISION(u8, uint8_t, uint32_t, 0)
SMALL_DIVISION(i8, int8_t, uint32_t, 1)
SMALL_DIVISION(i16, int16_t, uint32_t, 1)
SMALL_DIVISION(u16, uint16_t, uint32_t, 0)
SMALL_DIVISION(u32, uint32_t, uint32_t, 0)

// 64-bit division is the CPU's (no vector form); same conventions.
static inline int64_t trunc_div_i64(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return (int64_t)(0 - (uint64_t)x);
  return x / y;
}

static inline int64_t trunc_mod_i64(int64_t x, int64_t y) {
  if (y == 0 || y == -1) return 0;
  return x % y;
}

static inline int64_t floor_div_i64(int64_t x, int64_t y) {
  int64_t r = trunc_mod_i64(x, y);
  int64_t q = trunc_div_i64(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? q - 1 : q;
}

static inline int64_t floor_mod_i64(int64_t x, int64_t y) {
  int64_t r = trunc_mod_i64(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

static inline uint64_t trunc_div_u64(uint64_t x, uint64_t y) {
  return y == 0 ? 0 : x / y;
}

static inline uint64_t trunc_mod_u64(uint64_t x, uint64_t y) {
  return y == 0 ? 0 : x % y;
}

#define floor_div_u64 trunc_div_u64
#define floor_mod_u64 trunc_mod_u64

#define DIVISION_LOOPS(suffix, T)                                      \
  CHECKED_LOOP(div_##suffix, T, y == 0, trunc_div_##suffix(x, y))      \
  CHECKED_LOOP(floordiv_##suffix, T, y == 0, floor_div_##suffix(x, y)) \
  CHECKED_LOOP(floormod_##suffix, T, y == 0, floor_mod_##suffix(x, y)) \
  CHECKED_LOOP(truncmod_##suffix, T, y == 0, trunc_mod_##suffix(x, y))

DIVISION_LOOPS(i32, int32_t)
DIVISION_LOOPS(i64, int64_t)
DIVISION_LOOPS(u8, uint8_t)
DIVISION_LOOPS(i8, int8_t)
DIVISION_LOOPS(i16, int16_t)
DIVISION_LOOPS(u16, uint16_t)
DIVISION_LOOPS(u32, uint32_t)
DIVISION_LOOPS(u64, uint64_t)

// Integer powers by squaring, wrapping; a negative exponent fails the op.
#define INT_POW(suffix, T, W)                    \
  static inline T int_pow_##suffix(T x, T y) {   \
    if (y < 0) return 0;                         \
    W base = (W)x, result = 1;                   \
    for (uint64_t e = (uint64_t)y; e; e >>= 1) { \
      if (e & 1) result = (W)(result * base);    \
      base = (W)(base * base);                   \
    }                                            \
    return (T)result;                            \
  }                                              \
  CHECKED_LOOP(pow_##suffix, T, y < 0, int_pow_##suffix(x, y))

INT_POW(i32, int32_t, uint32_t)
INT_POW(i64, int64_t, uint64_t)
INT_POW(i8, int8_t, uint32_t)
INT_POW(i16, int16_t, uint32_t)

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

#define ROW_FLOAT(op)                      \
  [LOOM_ELEM_F32] = LOOM_ISA_FN(op##_f32), \
  [LOOM_ELEM_F64] = LOOM_ISA_FN(op##_f64), \
  [LOOM_ELEM_F16] = LOOM_ISA_FN(op##_f16), \
  [LOOM_ELEM_BF16] = LOOM_ISA_FN(op##_bf16)
#define ROW_INT(op)                        \
  [LOOM_ELEM_I32] = LOOM_ISA_FN(op##_i32), \
  [LOOM_ELEM_I64] = LOOM_ISA_FN(op##_i64), \
  [LOOM_ELEM_U8] = LOOM_ISA_FN(op##_u8),   \
  [LOOM_ELEM_I8] = LOOM_ISA_FN(op##_i8),   \
  [LOOM_ELEM_I16] = LOOM_ISA_FN(op##_i16), \
  [LOOM_ELEM_U16] = LOOM_ISA_FN(op##_u16), \
  [LOOM_ELEM_U32] = LOOM_ISA_FN(op##_u32), \
  [LOOM_ELEM_U64] = LOOM_ISA_FN(op##_u64)

const loom__binary_table_t LOOM_ISA_FN(loom__binary_loops) = {
    [LOOM_BINARY_ADD] = {ROW_FLOAT(add), ROW_INT(add)},
    [LOOM_BINARY_SUB] = {ROW_FLOAT(sub), ROW_INT(sub)},
    [LOOM_BINARY_MUL] = {ROW_FLOAT(mul), ROW_INT(mul)},
    [LOOM_BINARY_REAL_DIV] = {ROW_FLOAT(div)},
    [LOOM_BINARY_MAXIMUM] = {ROW_FLOAT(max), ROW_INT(max)},
    [LOOM_BINARY_MINIMUM] = {ROW_FLOAT(min), ROW_INT(min)},
    [LOOM_BINARY_SQUARED_DIFFERENCE] = {ROW_FLOAT(sqdiff), ROW_INT(sqdiff)},
    [LOOM_BINARY_DIV] = {ROW_FLOAT(div)},
    [LOOM_BINARY_FLOOR_DIV] = {ROW_FLOAT(floordiv)},
    [LOOM_BINARY_FLOOR_MOD] = {ROW_FLOAT(floormod)},
    [LOOM_BINARY_TRUNCATE_DIV] = {ROW_FLOAT(truncdiv)},
    [LOOM_BINARY_TRUNCATE_MOD] = {ROW_FLOAT(truncmod)},
    [LOOM_BINARY_POW] = {ROW_FLOAT(pow)},
};

#define ROW_STREAM(op)                                                \
  [LOOM_ELEM_F32] = LOOM_ISA_FN(stream_##op##_f32), [LOOM_ELEM_F64] = \
                                                        LOOM_ISA_FN(  \
                                                            stream_##op##_f64)

const loom__binary_table_t LOOM_ISA_FN(loom__binary_stream_loops) = {
    [LOOM_BINARY_ADD] = {ROW_STREAM(add)},
    [LOOM_BINARY_SUB] = {ROW_STREAM(sub)},
    [LOOM_BINARY_MUL] = {ROW_STREAM(mul)},
    [LOOM_BINARY_REAL_DIV] = {ROW_STREAM(div)},
    [LOOM_BINARY_DIV] = {ROW_STREAM(div)},
};

const loom__binary_checked_table_t LOOM_ISA_FN(loom__binary_checked_loops) = {
    [LOOM_BINARY_DIV] = {ROW_INT(div)},
    [LOOM_BINARY_FLOOR_DIV] = {ROW_INT(floordiv)},
    [LOOM_BINARY_FLOOR_MOD] = {ROW_INT(floormod)},
    [LOOM_BINARY_TRUNCATE_DIV] = {ROW_INT(div)},
    [LOOM_BINARY_TRUNCATE_MOD] = {ROW_INT(truncmod)},
    [LOOM_BINARY_POW] = {[LOOM_ELEM_I32] = LOOM_ISA_FN(pow_i32),
                         [LOOM_ELEM_I64] = LOOM_ISA_FN(pow_i64),
                         [LOOM_ELEM_I8] = LOOM_ISA_FN(pow_i8),
                         [LOOM_ELEM_I16] = LOOM_ISA_FN(pow_i16)},
};
