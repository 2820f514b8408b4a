// float pow on whole AVX-512 vectors, for the element-wise binary loops
// compiled per ISA level (isa.h): Pow of float (and of half and bfloat16,
// which go through float) at the AVX-512 level.
//
// Each half of the 16 lanes is computed in double, so that the float
// result is rounded once from a value within about 2^-28 (relative) of the
// true power: within 0.54 ulp (0.537 the most seen over 80 M random
// operand pairs against libm's double pow), where SLEEF's u10 powf is
// within 1.
//
// pow(x, y) = 2^(y log2 x). With x = 2^k z, z in [0.699, 1.398) and c the
// centre of z's sixteenth of that range (by the top four mantissa bits),
// log2 x = k + log2 c + log2(1 + r), r = z / c - 1, |r| < 0.0297. The
// table holds 1 / c rounded to double and log2 c of that rounded value, so
// r = z * (1 / c) - 1 (one fma, exact enough) carries no error of its own;
// the sixteenth around 1 has c = 1, so that log2 x keeps its relative
// accuracy near x = 1 (where y may be large). log2(1 + r) = r P(r), P of
// degree 5 from our own fit (relative error 2^-38 on the interval).
//
// 2^t, t = y log2 x: t = n + s with n a multiple of 1/16 and |s| <= 1/32;
// 2^t = 2^floor(n) 2^(n - floor(n)) 2^s, the middle factor from a table,
// 2^s = 1 + s R(s), R of degree 2 from our own fit (2^-23 relative,
// 2^-28.7 on the result), and 2^floor(n) by vscalefpd, which overflows to inf
// and underflows to 0 as the power does.
//
// The vector path computes pow(|x|, y). One test per vector sends the
// rare others to a cold function: a negative x's power is negated for an
// odd integral y and NaN for a non-integral one; lanes of x zero,
// subnormal, infinite or NaN, or y infinite or NaN, are recomputed by
// libm's double pow rounded to float, which gives IEEE pow's special
// values.

#ifndef LOOM_KERNELS_VECTOR_POWF_H_
#define LOOM_KERNELS_VECTOR_POWF_H_

#if defined(__AVX512F__)
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "kernels/vector_pow.h"

// 1 / c for each sixteenth of [0.699, 1.398) (bits 0x3f330000 on).
static const double loom__powf_inv_c[16] __attribute__((aligned(64))) = {
    0x1.661ec6a5122f9p+0, 0x1.571ed3c506b3ap+0, 0x1.49539e3b2d067p+0,
    0x1.3c995a47babe7p+0, 0x1.30d190130d190p+0, 0x1.25e22708092f1p+0,
    0x1.1bb4a4046ed29p+0, 0x1.12358e75d3033p+0, 0x1.0953f39010954p+0,
    0x1.0000000000000p+0, 0x1.e573ac901e574p-1, 0x1.ca4b3055ee191p-1,
    0x1.b2036406c80d9p-1, 0x1.9c2d14ee4a102p-1, 0x1.886e5f0abb04ap-1,
    0x1.767dce434a9b1p-1,
};

// log2 c, with c = 1 / loom__powf_inv_c[i] exactly.
static const double loom__powf_log2_c[16] __attribute__((aligned(64))) = {
    -0x1.efec61b011f85p-2, -0x1.b0b67f4f46812p-2,
    -0x1.7418acebbf18fp-2, -0x1.39de8e1559f6ep-2,
    -0x1.01d9bbcfa61d4p-2, -0x1.97c1cb13c7ec0p-3,
    -0x1.2f9e32d5bfdd1p-3, -0x1.960caf9abb7c1p-4,
    -0x1.a6f9c377dd31dp-5, 0.0,
    0x1.3aa2fdd27f1bfp-4,  0x1.476a9f983f74dp-3,
    0x1.e840be74e6a4dp-3,  0x1.406463b1b0448p-2,
    0x1.88e9c72e0b224p-2,  0x1.ce0a4923a587dp-2,
};

// log2(1 + r) / r, |r| < 0.0297: coefficients of r^0 to r^5.
#define LOOM_POWF_LOG_C0 0x1.71547652bcfbbp+0
#define LOOM_POWF_LOG_C1 -0x1.71547652d299ep-1
#define LOOM_POWF_LOG_C2 0x1.ec7097c2f4104p-2
#define LOOM_POWF_LOG_C3 -0x1.71546e90823c4p-2
#define LOOM_POWF_LOG_C4 0x1.27bdf947fdc1cp-2
#define LOOM_POWF_LOG_C5 -0x1.ecff13231ddfbp-3
// (2^s - 1) / s, |s| <= 1/32: coefficients of s^0 to s^2.
#define LOOM_POWF_EXP_C0 0x1.62e42ff3bc36fp-1
#define LOOM_POWF_EXP_C1 0x1.ebff9177c7f6ap-3
#define LOOM_POWF_EXP_C2 0x1.c6b08d6dc17ecp-5

// Eight lanes in double: z (the reduced mantissa), k, index (its low four
// bits pick the sixteenth) and y.
static inline __m256 loom__powf_half_avx512(__m256 z, __m256i k, __m256i index,
                                            __m256 y) {
  const __m512d one = _mm512_set1_pd(1.0);
  __m512i i = _mm512_cvtepu32_epi64(index);
  __m512d inv_c = _mm512_permutex2var_pd(_mm512_load_pd(loom__powf_inv_c), i,
                                         _mm512_load_pd(loom__powf_inv_c + 8));
  __m512d log2_c =
      _mm512_permutex2var_pd(_mm512_load_pd(loom__powf_log2_c), i,
                             _mm512_load_pd(loom__powf_log2_c + 8));
  __m512d r = _mm512_fmsub_pd(_mm512_cvtps_pd(z), inv_c, one);
  __m512d p = _mm512_set1_pd(LOOM_POWF_LOG_C5);
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(LOOM_POWF_LOG_C4));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(LOOM_POWF_LOG_C3));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(LOOM_POWF_LOG_C2));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(LOOM_POWF_LOG_C1));
  p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(LOOM_POWF_LOG_C0));
  __m512d log2_x =
      _mm512_fmadd_pd(p, r, _mm512_add_pd(_mm512_cvtepi32_pd(k), log2_c));
  __m512d t = _mm512_mul_pd(log2_x, _mm512_cvtps_pd(y));
  // t = n + s, n a multiple of 1/16, |s| <= 1/32; adding 1.5 * 2^48 puts
  // 16 n mod 16 in the low four bits.
  __m512d n = _mm512_roundscale_pd(
      t, (4 << 4) | _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d s = _mm512_sub_pd(t, n);
  __m512i j = _mm512_castpd_si512(_mm512_add_pd(t, _mm512_set1_pd(0x1.8p48)));
  // 2^(j / 16), from double pow's table (vector_pow.h).
  __m512d entry = _mm512_permutex2var_pd(_mm512_load_pd(loom__pow_exp2_hi), j,
                                         _mm512_load_pd(loom__pow_exp2_hi + 8));
  __m512d q = _mm512_set1_pd(LOOM_POWF_EXP_C2);
  q = _mm512_fmadd_pd(q, s, _mm512_set1_pd(LOOM_POWF_EXP_C1));
  q = _mm512_fmadd_pd(q, s, _mm512_set1_pd(LOOM_POWF_EXP_C0));
  q = _mm512_mul_pd(q, s);
  // vscalefpd multiplies by 2^floor(n), overflowing to inf and
  // underflowing to 0 as the power does.
  return _mm512_cvtpd_ps(_mm512_scalef_pd(_mm512_fmadd_pd(entry, q, entry), n));
}

// The lanes of x negative or not normal, or of y not finite (rare): the
// sign of a negative x's power, and libm's pow for the special operands.
static __attribute__((noinline, cold)) __m512 loom__powf_unusual_avx512(
    __m512 x, __m512 y, __m512 result) {
  const __m512i ix = _mm512_castps_si512(x);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  __mmask16 negative = _mm512_cmplt_epi32_mask(ix, _mm512_setzero_si512());
  // An integral y is odd when its truncation to int32 is (y of 2^31 and
  // above converts to 0x80000000: even, as every float from 2^24 on).
  __mmask16 integral = _mm512_cmp_ps_mask(
      _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), y,
      _CMP_EQ_OQ);
  __mmask16 odd =
      _mm512_test_epi32_mask(_mm512_cvttps_epi32(y), _mm512_set1_epi32(1));
  result = _mm512_castsi512_ps(_mm512_mask_xor_epi32(
      _mm512_castps_si512(result), negative & integral & odd,
      _mm512_castps_si512(result), _mm512_set1_epi32((int)0x80000000)));
  result = _mm512_mask_mov_ps(result, negative & ~integral,
                              _mm512_set1_ps(__builtin_nanf("")));
  // |x| zero, subnormal, infinite or NaN; y infinite or NaN.
  __mmask16 special =
      _mm512_cmpge_epu32_mask(_mm512_sub_epi32(_mm512_and_si512(ix, magnitude),
                                               _mm512_set1_epi32(0x00800000)),
                              _mm512_set1_epi32(0x7f000000)) |
      _mm512_cmpge_epu32_mask(
          _mm512_and_si512(_mm512_castps_si512(y), magnitude),
          _mm512_set1_epi32(0x7f800000));
  if (special) {
    float xs[16], ys[16], rs[16];
    _mm512_storeu_ps(xs, x);
    _mm512_storeu_ps(ys, y);
    _mm512_storeu_ps(rs, result);
    for (int j = 0; j < 16; ++j) {
      if (special & (1u << j)) {
        rs[j] = (float)pow((double)xs[j], (double)ys[j]);
      }
    }
    result = _mm512_loadu_ps(rs);
  }
  return result;
}

static inline __m512 loom__powf_avx512(__m512 x, __m512 y) {
  const __m512i ix = _mm512_castps_si512(x);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
  const __m512i ax = _mm512_and_si512(ix, magnitude);
  // x negative or not normal (unsigned: the sign bit makes it large); y
  // not finite.
  __mmask16 unusual = _mm512_cmpge_epu32_mask(
                          _mm512_sub_epi32(ix, _mm512_set1_epi32(0x00800000)),
                          _mm512_set1_epi32(0x7f000000)) |
                      _mm512_cmpge_epu32_mask(
                          _mm512_and_si512(_mm512_castps_si512(y), magnitude),
                          _mm512_set1_epi32(0x7f800000));
  // |x| = 2^k z with z in [0.699, 1.398): the offset's exponent field is k.
  __m512i offset = _mm512_sub_epi32(ax, _mm512_set1_epi32(0x3f330000));
  __m512i k = _mm512_srai_epi32(offset, 23);
  __m512 z = _mm512_castsi512_ps(_mm512_sub_epi32(
      ax, _mm512_and_si512(offset, _mm512_set1_epi32((int)0xff800000))));
  __m512i index = _mm512_srli_epi32(offset, 19);
  __m256 lo = loom__powf_half_avx512(
      _mm512_castps512_ps256(z), _mm512_castsi512_si256(k),
      _mm512_castsi512_si256(index), _mm512_castps512_ps256(y));
  __m256 hi = loom__powf_half_avx512(
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(z), 1)),
      _mm512_extracti64x4_epi64(k, 1), _mm512_extracti64x4_epi64(index, 1),
      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(y), 1)));
  __m512 result = _mm512_castpd_ps(_mm512_insertf64x4(
      _mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
  if (unusual) result = loom__powf_unusual_avx512(x, y, result);
  return result;
}
#endif  // __AVX512F__

#endif  // LOOM_KERNELS_VECTOR_POWF_H_
