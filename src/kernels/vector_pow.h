// double pow on whole vectors, for the element-wise binary loops compiled
// per ISA level (isa.h): Pow of double at the AVX2 and AVX-512 levels.
//
// pow(x, y) = exp(y log x), with log x and its product by y carried in
// double-double, so that the result is rounded about once from a value
// within about 2^-60 (relative) of the true power: faithfully rounded, and
// the correctly rounded result in all but about 0.7% of random operand
// pairs (libm's pow against which it was measured, which is correctly
// rounded in all but rare cases, differs from it there by one ulp). SLEEF's
// u10 pow, which it replaces, is within 1 ulp and takes twice the time.
//
// log x: x = 2^k z, z in [0.698, 1.396), and c the centre of z's sixteenth
// of that range (by the top four mantissa bits of the offset from the
// range's start); the sixteenth around 1 has c = 1. The table holds 1 / c
// rounded to double and log c of that rounded value in double-double, so
// that log z = log c + log1p(r) with r = z (1 / c) - 1 exactly: z (1 / c)
// is split into its rounded product and that product's error (one fma),
// and the product less 1 is exact, so r is a double-double. log1p(r) is
// its Taylor series to r^13 (|r| < 0.03: the first term left out is below
// 2^-69 of the result), its term -r^2 / 2 exact. The sum k ln2 + log c + r
// - r^2 / 2 goes through error-free additions, the rest added to its low
// part, so log x keeps about 2^-64 (relative).
//
// exp t, t = y log x (double-double): t = n ln2 / 16 + s with n an integer
// and |s| <= ln2 / 32; exp t = 2^floor(n / 16) 2^((n mod 16) / 16) e^s,
// the middle factor from a double-double table, e^s its Taylor series to
// s^9, and 2^floor(n / 16) an exponent written into a double.
//
// The vector path computes pow for x positive and normal, y finite and
// |y log x| <= 708 (normal results). One test per vector sends the rare
// other lanes (x negative, zero, subnormal, infinite or NaN, y infinite or
// NaN, results that overflow or go subnormal) to libm's pow, which gives
// IEEE pow's special values.

#ifndef LOOM_KERNELS_VECTOR_POW_H_
#define LOOM_KERNELS_VECTOR_POW_H_

#if defined(__AVX2__)
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

// The start of z's range, [0.698, 1.396): placed so that 1 lies two thirds
// of the way into its sixteenth (in bits), [0.979, 1.021), whose |r| is
// then no larger than the others'.
#define LOOM_POW_RANGE_START 0x3fe6555555555555LL

// 1 / c for each sixteenth of the range.
static const double loom__pow_inv_c[16] __attribute__((aligned(64))) = {
    0x1.66c612afa64e8p+0, 0x1.57b864407292dp+0, 0x1.49e112e63a6a9p+0,
    0x1.3d1c13d1c13d2p+0, 0x1.314abba098a56p+0, 0x1.2652c7480c437p+0,
    0x1.1c1d986a8b193p+0, 0x1.12979907269d5p+0, 0x1.09afbd94109b0p+0,
    0x1.0000000000000p+0, 0x1.e6a74981446f9p-1, 0x1.cb5d4ef409920p-1,
    0x1.b2f9341b2f935p-1, 0x1.9d0ac19d0ac1ap-1, 0x1.89374bc6a7efap-1,
    0x1.7734c36b7b1d5p-1,
};

// log c, c = 1 / loom__pow_inv_c[i] exactly: high and low parts.
static const double loom__pow_log_c_hi[16] __attribute__((aligned(64))) = {
    -0x1.599d63116b995p-2, -0x1.2db8ec8e8a67cp-2,
    -0x1.03a25dcb05094p-2, -0x1.b66a7745e6789p-3,
    -0x1.68a266e2f7507p-3, -0x1.1db2fe6229aecp-3,
    -0x1.aad19489c6be4p-4, -0x1.1f2b355e8f77dp-4,
    -0x1.303f467128554p-5, 0.0,
    0x1.9fed48a0a9c41p-5,  0x1.bc5632de898cbp-4,
    0x1.4de7b857bcc6ep-3,  0x1.b7dc1d0462b52p-3,
    0x1.0e4cfbea84ee6p-2,  0x1.3e4f3c1b236a4p-2,
};
static const double loom__pow_log_c_lo[16] __attribute__((aligned(64))) = {
    0x1.c832d0e82b7c9p-56,  0x1.8144ddac66d71p-58,
    0x1.d981ef61fec2bp-57,  0x1.55d98bf49f3a0p-59,
    -0x1.d21ae0c63fd93p-57, -0x1.a60cbbae69befp-57,
    0x1.38ed9d97e8bc5p-58,  -0x1.b89600db7ebc0p-61,
    0x1.2be99a3167614p-59,  0.0,
    0x1.3a5cc004ea66fp-59,  -0x1.60761054d1275p-58,
    -0x1.e932c4b51598fp-60, -0x1.001cb28d7785ap-57,
    0x1.7c11b5bfe9fa2p-57,  0x1.411e01049965ep-57,
};

// 2^(j / 16): high and low parts.
static const double loom__pow_exp2_hi[16] __attribute__((aligned(64))) = {
    0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0,
    0x1.2387a6e756238p+0, 0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0,
    0x1.4bfdad5362a27p+0, 0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0,
    0x1.7a11473eb0187p+0, 0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0,
    0x1.ae89f995ad3adp+0, 0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0,
    0x1.ea4afa2a490dap+0,
};
static const double loom__pow_exp2_lo[16] __attribute__((aligned(64))) = {
    0.0,
    0x1.8a62e4adc610bp-54,
    -0x1.19041b9d78a76p-55,
    0x1.9b07eb6c70573p-54,
    0x1.6f46ad23182e4p-55,
    0x1.ada0911f09ebcp-55,
    0x1.d4397afec42e2p-56,
    0x1.6324c054647adp-54,
    -0x1.bdd3413b26456p-54,
    -0x1.41577ee04992fp-55,
    0x1.6e9f156864b27p-54,
    0x1.c7c46b071f2bep-56,
    0x1.7a1cd345dcc81p-54,
    0x1.11065895048ddp-55,
    0x1.2ed02d75b3707p-55,
    -0x1.e9c23179c2893p-54,
};

// ln 2 in two parts, the high one of 42 bits (k ln2_hi is exact for the
// exponents of doubles), and ln 2 / 16 likewise with 38 bits (n of up to
// 2^15 times it is exact).
#define LOOM_POW_LN2_HI 0x1.62e42fefa3800p-1
#define LOOM_POW_LN2_LO 0x1.ef35793c76730p-45
#define LOOM_POW_LN2_16_HI 0x1.62e42fefa0000p-5
#define LOOM_POW_LN2_16_LO 0x1.cf79abc9e3b3ap-44
#define LOOM_POW_INV_LN2_16 0x1.71547652b82fep+4
// |t| above this: a result that overflows or is subnormal (libm's).
#define LOOM_POW_T_LIMIT 708.0

// log1p(r) = r - r^2 / 2 + r^3 (A3 + A4 r + ... + A13 r^10): the Taylor
// coefficients (-1)^(k+1) / k.
#define LOOM_POW_A3 0x1.5555555555555p-2
#define LOOM_POW_A4 -0x1.0000000000000p-2
#define LOOM_POW_A5 0x1.999999999999ap-3
#define LOOM_POW_A6 -0x1.5555555555555p-3
#define LOOM_POW_A7 0x1.2492492492492p-3
#define LOOM_POW_A8 -0x1.0000000000000p-3
#define LOOM_POW_A9 0x1.c71c71c71c71cp-4
#define LOOM_POW_A10 -0x1.999999999999ap-4
#define LOOM_POW_A11 0x1.745d1745d1746p-4
#define LOOM_POW_A12 -0x1.5555555555555p-4
#define LOOM_POW_A13 0x1.3b13b13b13b14p-4
// e^s = 1 + s + s^2 (E2 + E3 s + ... + E9 s^7): 1 / k!.
#define LOOM_POW_E2 0x1.0000000000000p-1
#define LOOM_POW_E3 0x1.5555555555555p-3
#define LOOM_POW_E4 0x1.5555555555555p-5
#define LOOM_POW_E5 0x1.1111111111111p-7
#define LOOM_POW_E6 0x1.6c16c16c16c17p-10
#define LOOM_POW_E7 0x1.a01a01a01a01ap-13
#define LOOM_POW_E8 0x1.a01a01a01a01ap-16
#define LOOM_POW_E9 0x1.71de3a556c734p-19

// The lanes the vector path leaves (`lanes` of `count`, a bit each):
// libm's pow, which gives IEEE pow's special values.
static __attribute__((noinline, cold)) void loom__pow_f64_lanes(
    const double* x, const double* y, double* result, int count,
    unsigned lanes) {
  for (int j = 0; j < count; ++j) {
    if (lanes & (1u << j)) result[j] = pow(x[j], y[j]);
  }
}

// Recomputes the `mask` lanes of `result` (a vector of `lanes` doubles) by
// loom__pow_f64_lanes, through arrays (STOREU and LOADU: the ISA's).
#define LOOM_POW_REDO_LANES(lanes, mask, x, y, result, STOREU, LOADU) \
  do {                                                                \
    double xs_[lanes], ys_[lanes], rs_[lanes];                        \
    STOREU(xs_, x);                                                   \
    STOREU(ys_, y);                                                   \
    STOREU(rs_, result);                                              \
    loom__pow_f64_lanes(xs_, ys_, rs_, lanes, mask);                  \
    (result) = LOADU(rs_);                                            \
  } while (0)

// The steps of both widths, on V (a vector of doubles), with the ISA's
// operations as macros: ADD, SUB, MUL, FMA (a b + c), FMS (a b - c).
#define LOOM_POW_TWO_SUM(a, b, hi, lo)             \
  do {                                             \
    V s_ = ADD(a, b);                              \
    V bb_ = SUB(s_, a);                            \
    (lo) = ADD(SUB(a, SUB(s_, bb_)), SUB(b, bb_)); \
    (hi) = s_;                                     \
  } while (0)

// log x as (l_hi, l_lo) from k (as a double), z, and the table entries.
#define LOOM_POW_LOG(k, z, inv_c, log_c_hi, log_c_lo, l_hi, l_lo)      \
  do {                                                                 \
    /* r = z inv_c - 1 = r_hi + r_lo exactly. */                       \
    V p_hi = MUL(z, inv_c);                                            \
    V p_lo = FMS(z, inv_c, p_hi);                                      \
    V a = SUB(p_hi, SET1(1.0));                                        \
    V r_hi = ADD(a, p_lo);                                             \
    V r_lo = SUB(p_lo, SUB(r_hi, a));                                  \
    V q = SET1(LOOM_POW_A13);                                          \
    q = FMA(q, r_hi, SET1(LOOM_POW_A12));                              \
    q = FMA(q, r_hi, SET1(LOOM_POW_A11));                              \
    q = FMA(q, r_hi, SET1(LOOM_POW_A10));                              \
    q = FMA(q, r_hi, SET1(LOOM_POW_A9));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A8));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A7));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A6));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A5));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A4));                               \
    q = FMA(q, r_hi, SET1(LOOM_POW_A3));                               \
    V r2 = MUL(r_hi, r_hi);                                            \
    q = MUL(MUL(r2, r_hi), q);                                         \
    /* -r^2 / 2, the largest term after r, exactly: h + h_lo. */       \
    V half_r = MUL(r_hi, SET1(-0.5));                                  \
    V h = MUL(half_r, r_hi);                                           \
    V h_lo = FMS(half_r, r_hi, h);                                     \
    /* k ln2 + log c + r_hi + h, the big terms added exactly. */       \
    V s1, e1, s2, e2, s3, e3;                                          \
    LOOM_POW_TWO_SUM(MUL(k, SET1(LOOM_POW_LN2_HI)), log_c_hi, s1, e1); \
    LOOM_POW_TWO_SUM(s1, r_hi, s2, e2);                                \
    LOOM_POW_TWO_SUM(s2, h, s3, e3);                                   \
    /* The small terms; r_lo / (1 + r_hi) ~ r_lo (1 - r_hi). */        \
    V small = ADD(ADD(e1, e2), ADD(e3, h_lo));                         \
    small = FMA(k, SET1(LOOM_POW_LN2_LO), small);                      \
    small = ADD(small, log_c_lo);                                      \
    small = ADD(small, SUB(r_lo, MUL(r_lo, r_hi)));                    \
    small = ADD(small, q);                                             \
    (l_hi) = ADD(s3, small);                                           \
    (l_lo) = SUB(small, SUB(l_hi, s3));                                \
  } while (0)

// e^s, |s| <= ln2 / 32, less 1: s + s^2 (E2 + ... + E9 s^7).
#define LOOM_POW_EXPM1(s, out)                             \
  do {                                                     \
    /* By Estrin's scheme: E2 + E3 s + ... + E9 s^7. */    \
    V s2_ = MUL(s, s);                                     \
    V s4_ = MUL(s2_, s2_);                                 \
    V c23_ = FMA(SET1(LOOM_POW_E3), s, SET1(LOOM_POW_E2)); \
    V c45_ = FMA(SET1(LOOM_POW_E5), s, SET1(LOOM_POW_E4)); \
    V c67_ = FMA(SET1(LOOM_POW_E7), s, SET1(LOOM_POW_E6)); \
    V c89_ = FMA(SET1(LOOM_POW_E9), s, SET1(LOOM_POW_E8)); \
    V c2_5_ = FMA(c45_, s2_, c23_);                        \
    V c6_9_ = FMA(c89_, s2_, c67_);                        \
    (out) = FMA(s2_, FMA(c6_9_, s4_, c2_5_), s);           \
  } while (0)

// e^t for t = t_hi + t_lo, |t| <= LOOM_POW_T_LIMIT, into `out`, with the
// ISA's LOOKUP(table, index bits) and its 64-bit integer operations
// (VI, TO_INT, TO_DOUBLE, IADD, ISET1, ISRLI, ISLLI).
#define LOOM_POW_EXP(t_hi, t_lo, out)                                       \
  do {                                                                      \
    /* n = round(t 16 / ln2): adding 1.5 * 2^52 puts it in the low bits. */ \
    V shifted = FMA(t_hi, SET1(LOOM_POW_INV_LN2_16), SET1(0x1.8p52));       \
    V n = SUB(shifted, SET1(0x1.8p52));                                     \
    VI n_bits = TO_INT(shifted);                                            \
    V s = FMA(n, SET1(-LOOM_POW_LN2_16_HI), t_hi);                          \
    s = ADD(FMA(n, SET1(-LOOM_POW_LN2_16_LO), s), t_lo);                    \
    V e;                                                                    \
    LOOM_POW_EXPM1(s, e);                                                   \
    V table_hi = LOOKUP(loom__pow_exp2_hi, n_bits);                         \
    V table_lo = LOOKUP(loom__pow_exp2_lo, n_bits);                         \
    V mantissa = ADD(FMA(table_hi, e, table_lo), table_hi);                 \
    /* 2^floor(n / 16): n + 16 * 1023 is positive (|t| <= 708), so the      \
       logical shift is the floor. */                                       \
    VI biased = ISRLI(                                                      \
        IADD(IADD(n_bits, TO_INT(SET1(-0x1.8p52))), ISET1(16 * 1023)), 4);  \
    (out) = MUL(mantissa, TO_DOUBLE(ISLLI(biased, 52)));                    \
  } while (0)

#if defined(__AVX512F__)
#define V __m512d
#define SET1 _mm512_set1_pd
#define ADD _mm512_add_pd
#define SUB _mm512_sub_pd
#define MUL _mm512_mul_pd
#define FMA _mm512_fmadd_pd
#define FMS _mm512_fmsub_pd
#define VI __m512i
#define TO_INT _mm512_castpd_si512
#define TO_DOUBLE _mm512_castsi512_pd
#define IADD _mm512_add_epi64
#define ISET1 _mm512_set1_epi64
#define ISRLI _mm512_srli_epi64
#define ISLLI _mm512_slli_epi64
#define LOOKUP loom__pow_lookup_avx512

static inline __m512d loom__pow_lookup_avx512(const double* table,
                                              __m512i index) {
  return _mm512_permutex2var_pd(_mm512_load_pd(table), index,
                                _mm512_load_pd(table + 8));
}

static inline __m512d loom__pow_f64_avx512(__m512d x, __m512d y) {
  const __m512i ix = _mm512_castpd_si512(x);
  // x positive and normal: its bits less the smallest normal's, unsigned,
  // below those of infinity less the same.
  __mmask8 unusual =
      _mm512_cmpge_epu64_mask(
          _mm512_sub_epi64(ix, _mm512_set1_epi64(0x0010000000000000LL)),
          _mm512_set1_epi64(0x7fe0000000000000LL)) |
      _mm512_cmpge_epu64_mask(
          _mm512_and_si512(_mm512_castpd_si512(y),
                           _mm512_set1_epi64(0x7fffffffffffffffLL)),
          _mm512_set1_epi64(0x7ff0000000000000LL));
  // x = 2^k z, z in [0.698, 1.396): k is the offset's exponent field.
  __m512i offset =
      _mm512_sub_epi64(ix, _mm512_set1_epi64(LOOM_POW_RANGE_START));
  __m512d k = _mm512_cvtepi64_pd(_mm512_srai_epi64(offset, 52));
  __m512i index = _mm512_srli_epi64(offset, 48);  // low four bits used
  __m512d z = _mm512_castsi512_pd(_mm512_sub_epi64(
      ix, _mm512_and_si512(offset,
                           _mm512_set1_epi64((int64_t)0xfff0000000000000ULL))));
  V l_hi, l_lo;
  LOOM_POW_LOG(k, z, loom__pow_lookup_avx512(loom__pow_inv_c, index),
               loom__pow_lookup_avx512(loom__pow_log_c_hi, index),
               loom__pow_lookup_avx512(loom__pow_log_c_lo, index), l_hi, l_lo);
  // t = y log x.
  V t_hi = MUL(y, l_hi);
  V t_lo = FMA(y, l_lo, FMS(y, l_hi, t_hi));
  unusual |= _mm512_cmp_pd_mask(_mm512_abs_pd(t_hi), SET1(LOOM_POW_T_LIMIT),
                                _CMP_NLE_UQ);
  V result;
  LOOM_POW_EXP(t_hi, t_lo, result);
  if (unusual) {
    LOOM_POW_REDO_LANES(8, unusual, x, y, result, _mm512_storeu_pd,
                        _mm512_loadu_pd);
  }
  return result;
}

#undef V
#undef SET1
#undef ADD
#undef SUB
#undef MUL
#undef FMA
#undef FMS
#undef VI
#undef TO_INT
#undef TO_DOUBLE
#undef IADD
#undef ISET1
#undef ISRLI
#undef ISLLI
#undef LOOKUP
#else  // AVX2
#define V __m256d
#define SET1 _mm256_set1_pd
#define ADD _mm256_add_pd
#define SUB _mm256_sub_pd
#define MUL _mm256_mul_pd
#define FMA _mm256_fmadd_pd
#define FMS _mm256_fmsub_pd
#define VI __m256i
#define TO_INT _mm256_castpd_si256
#define TO_DOUBLE _mm256_castsi256_pd
#define IADD _mm256_add_epi64
#define ISET1 _mm256_set1_epi64x
#define ISRLI _mm256_srli_epi64
#define ISLLI _mm256_slli_epi64
#define LOOKUP loom__pow_lookup_avx2

static inline __m256d loom__pow_lookup_avx2(const double* table,
                                            __m256i index) {
  return _mm256_i64gather_pd(
      table, _mm256_and_si256(index, _mm256_set1_epi64x(15)), 8);
}

static inline __m256d loom__pow_f64_avx2(__m256d x, __m256d y) {
  const __m256i ix = _mm256_castpd_si256(x);
  // AVX2 compares 64-bit integers signed only: flipping the top bit makes
  // the unsigned comparisons of the AVX-512 path signed ones.
  const __m256i flip = _mm256_set1_epi64x((int64_t)0x8000000000000000ULL);
  __m256i x_rel = _mm256_xor_si256(
      _mm256_sub_epi64(ix, _mm256_set1_epi64x(0x0010000000000000LL)), flip);
  __m256i y_abs = _mm256_and_si256(_mm256_castpd_si256(y),
                                   _mm256_set1_epi64x(0x7fffffffffffffffLL));
  __m256i bad = _mm256_or_si256(
      _mm256_cmpgt_epi64(
          x_rel,
          _mm256_xor_si256(_mm256_set1_epi64x(0x7fe0000000000000LL - 1), flip)),
      _mm256_cmpgt_epi64(y_abs, _mm256_set1_epi64x(0x7fefffffffffffffLL)));
  __m256i offset =
      _mm256_sub_epi64(ix, _mm256_set1_epi64x(LOOM_POW_RANGE_START));
  // k = offset >> 52 (arithmetic), for the lanes x is normal and positive:
  // the offset then lies within +-2^62, and adding 1.5 * 2^52 to the
  // exponent field's value converts it.
  __m256i k_field = _mm256_add_epi64(
      _mm256_srli_epi64(
          _mm256_add_epi64(offset, _mm256_set1_epi64x(0x4000000000000000LL)),
          52),
      _mm256_castpd_si256(SET1(0x1.8p52)));
  __m256d k =
      SUB(SUB(_mm256_castsi256_pd(k_field), SET1(0x1.8p52)), SET1(1024.0));
  __m256i index = _mm256_srli_epi64(offset, 48);
  __m256d z = _mm256_castsi256_pd(_mm256_sub_epi64(
      ix, _mm256_and_si256(
              offset, _mm256_set1_epi64x((int64_t)0xfff0000000000000ULL))));
  V l_hi, l_lo;
  LOOM_POW_LOG(k, z, loom__pow_lookup_avx2(loom__pow_inv_c, index),
               loom__pow_lookup_avx2(loom__pow_log_c_hi, index),
               loom__pow_lookup_avx2(loom__pow_log_c_lo, index), l_hi, l_lo);
  V t_hi = MUL(y, l_hi);
  V t_lo = FMA(y, l_lo, FMS(y, l_hi, t_hi));
  __m256d t_abs = _mm256_andnot_pd(SET1(-0.0), t_hi);
  bad = _mm256_or_si256(bad, _mm256_castpd_si256(_mm256_cmp_pd(
                                 t_abs, SET1(LOOM_POW_T_LIMIT), _CMP_NLE_UQ)));
  V result;
  LOOM_POW_EXP(t_hi, t_lo, result);
  int unusual = _mm256_movemask_pd(_mm256_castsi256_pd(bad));
  if (unusual) {
    LOOM_POW_REDO_LANES(4, (unsigned)unusual, x, y, result, _mm256_storeu_pd,
                        _mm256_loadu_pd);
  }
  return result;
}

#undef V
#undef SET1
#undef ADD
#undef SUB
#undef MUL
#undef FMA
#undef FMS
#undef VI
#undef TO_INT
#undef TO_DOUBLE
#undef IADD
#undef ISET1
#undef ISRLI
#undef ISLLI
#undef LOOKUP
#endif  // __AVX512F__

#endif  // __AVX2__

#endif  // LOOM_KERNELS_VECTOR_POW_H_
