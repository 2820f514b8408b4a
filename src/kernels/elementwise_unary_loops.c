// Element-wise unary loops and gradient helpers, compiled once per ISA level
// (see isa.h). Simple maps are plain C the compiler vectorises; the
// transcendental functions work on whole vectors: SLEEF's variant of this
// level (u10: at most 1 ulp), except float tanh (a rational fit below) and
// float exp at AVX-512 (vector_expf.h); 16-bit floats are widened to float
// a block at a time, computed there, and rounded back.

#include <math.h>
#include <sleef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/elementwise_unary.h"
#include "kernels/vector_expf.h"

//===----------------------------------------------------------------------===//
// Vectors of this level
//===----------------------------------------------------------------------===//

#if defined(__AVX512F__)
#define VBYTES 64
typedef __m512 vf32_t;
typedef __m512d vf64_t;
#define SLEEF_F32(name) Sleef_##name##f16_u10avx512f
#define SLEEF35_F32(name) Sleef_##name##f16_u35avx512f
#define SLEEF_F64(name) Sleef_##name##d8_u10avx512f
#define VSQRT_F32 _mm512_sqrt_ps
#define VSQRT_F64 _mm512_sqrt_pd
#define VMIN_F32 _mm512_min_ps
#define VMAX_F32 _mm512_max_ps
#define EXP_F32 loom__expf_avx512
#elif defined(__AVX2__)
#define VBYTES 32
typedef __m256 vf32_t;
typedef __m256d vf64_t;
#define SLEEF_F32(name) Sleef_##name##f8_u10avx2
#define SLEEF35_F32(name) Sleef_##name##f8_u35avx2
#define SLEEF_F64(name) Sleef_##name##d4_u10avx2
#define VSQRT_F32 _mm256_sqrt_ps
#define VSQRT_F64 _mm256_sqrt_pd
#define VMIN_F32 _mm256_min_ps
#define VMAX_F32 _mm256_max_ps
#define EXP_F32 Sleef_expf8_u10avx2
#else
#define VBYTES 16
typedef __m128 vf32_t;
typedef __m128d vf64_t;
#define SLEEF_F32(name) Sleef_##name##f4_u10sse2
#define SLEEF35_F32(name) Sleef_##name##f4_u35sse2
#define SLEEF_F64(name) Sleef_##name##d2_u10sse2
#define VSQRT_F32 _mm_sqrt_ps
#define VSQRT_F64 _mm_sqrt_pd
#define VMIN_F32 _mm_min_ps
#define VMAX_F32 _mm_max_ps
#define EXP_F32 Sleef_expf4_u10sse2
#endif

// What comparing two vectors gives (GCC vector extensions): all ones where
// true.
typedef int32_t vm32_t __attribute__((vector_size(VBYTES)));
typedef int64_t vm64_t __attribute__((vector_size(VBYTES)));

static inline vf32_t select_f32(vm32_t mask, vf32_t a, vf32_t b) {
  return (vf32_t)(((vm32_t)a & mask) | ((vm32_t)b & ~mask));
}

static inline vf64_t select_f64(vm64_t mask, vf64_t a, vf64_t b) {
  return (vf64_t)(((vm64_t)a & mask) | ((vm64_t)b & ~mask));
}

// out[i] = fn(in[i]) a vector at a time; the tail goes through a
// zero-padded vector.
#define VECTOR_LOOP(name, T, V, fn)                                       \
  static void LOOM_ISA_FN(name)(const void* in_, void* out_, int64_t n) { \
    const T* in = in_;                                                    \
    T* out = out_;                                                        \
    enum { kLanes = VBYTES / sizeof(T) };                                 \
    int64_t i = 0;                                                        \
    for (; i + kLanes <= n; i += kLanes) {                                \
      V x;                                                                \
      memcpy(&x, in + i, sizeof(x));                                      \
      x = fn(x);                                                          \
      memcpy(out + i, &x, sizeof(x));                                     \
    }                                                                     \
    if (i < n) {                                                          \
      V x;                                                                \
      memset(&x, 0, sizeof(x));                                           \
      memcpy(&x, in + i, (size_t)(n - i) * sizeof(T));                    \
      x = fn(x);                                                          \
      memcpy(out + i, &x, (size_t)(n - i) * sizeof(T));                   \
    }                                                                     \
  }

#define VECTOR_LOOP2(name, T, V, fn)                                        \
  static void LOOM_ISA_FN(name)(const void* a_, const void* b_, void* out_, \
                                int64_t n) {                                \
    const T* a = a_;                                                        \
    const T* b = b_;                                                        \
    T* out = out_;                                                          \
    enum { kLanes = VBYTES / sizeof(T) };                                   \
    int64_t i = 0;                                                          \
    for (; i + kLanes <= n; i += kLanes) {                                  \
      V x, y;                                                               \
      memcpy(&x, a + i, sizeof(x));                                         \
      memcpy(&y, b + i, sizeof(y));                                         \
      x = fn(x, y);                                                         \
      memcpy(out + i, &x, sizeof(x));                                       \
    }                                                                       \
    if (i < n) {                                                            \
      V x, y;                                                               \
      memset(&x, 0, sizeof(x));                                             \
      memset(&y, 0, sizeof(y));                                             \
      memcpy(&x, a + i, (size_t)(n - i) * sizeof(T));                       \
      memcpy(&y, b + i, (size_t)(n - i) * sizeof(T));                       \
      x = fn(x, y);                                                         \
      memcpy(out + i, &x, (size_t)(n - i) * sizeof(T));                     \
    }                                                                       \
  }

//===----------------------------------------------------------------------===//
// Plain loops
//===----------------------------------------------------------------------===//

#define MAP_LOOP(name, T, OUT, expr)                                      \
  static void LOOM_ISA_FN(name)(const void* in_, void* out_, int64_t n) { \
    const T* restrict in = in_;                                           \
    OUT* restrict out = out_;                                             \
    for (int64_t i = 0; i < n; ++i) {                                     \
      T x = in[i];                                                        \
      out[i] = (expr);                                                    \
    }                                                                     \
  }

#define MAP2_LOOP(name, T, expr)                                            \
  static void LOOM_ISA_FN(name)(const void* a_, const void* b_, void* out_, \
                                int64_t n) {                                \
    const T* restrict a = a_;                                               \
    const T* restrict b = b_;                                               \
    T* restrict out = out_;                                                 \
    for (int64_t i = 0; i < n; ++i) {                                       \
      T x = a[i], y = b[i];                                                 \
      out[i] = (expr);                                                      \
    }                                                                       \
  }

//===----------------------------------------------------------------------===//
// Float math
//===----------------------------------------------------------------------===//

// Round half to even without the rounding-mode instructions baseline
// x86-64 lacks: adding 2^23 (2^52) leaves no fraction bits, and the FPU
// rounds the sum to nearest even. Larger magnitudes are integers already.
static inline float round_even_f32(float x) {
  float a = fabsf(x);
  float r = a < 8388608.0f ? (a + 8388608.0f) - 8388608.0f : a;
  return copysignf(r, x);
}

static inline double round_even_f64(double x) {
  double a = fabs(x);
  double r = a < 4503599627370496.0
                 ? (a + 4503599627370496.0) - 4503599627370496.0
                 : a;
  return copysign(r, x);
}

static inline float floor_f32(float x) {
  float r = round_even_f32(x);
  return r - (r > x ? 1.0f : 0.0f);
}

static inline double floor_f64(double x) {
  double r = round_even_f64(x);
  return r - (r > x ? 1.0 : 0.0);
}

// sign(x) is x for zeros and NaN, as NumPy's.
// (One ordered comparison: valgrind mis-emulates the cmpneqps/cmpordps
// pair GCC makes of `x > 0 ? 1 : x < 0 ? -1 : x`.)
#define FLOAT_SIGN(x, ABS, COPYSIGN) (ABS(x) > 0 ? COPYSIGN(1, x) : (x))

// SELU's constants, as TensorFlow's.
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_SCALE_ALPHA 1.7580993408473768599402175208123

// Softplus returns x where log1p(exp(x)) == x in the type: above
// -(log(epsilon) + 2), as TensorFlow's.
#define SOFTPLUS_LIMIT_F32 13.942385152878742f
#define SOFTPLUS_LIMIT_F64 34.04365338911715

// EXP: vector_expf.h's for float at AVX-512, else SLEEF's. SLEEF: the u10
// functions (within 1 ulp); SLEEF35: the u35 ones (within 3.5 ulp) where
// they are 2-3 times faster (float log, sin, cos):
// still well inside float's tolerance of 1e-6 relative, and about what
// TensorFlow's own Eigen approximations give.
#define FLOAT_VECTOR_FNS(suffix, T, V, M, EXP, SLEEF, SLEEF35, VSQRT, select, \
                         LIMIT)                                               \
  static inline V v_exp_##suffix(V x) {                                       \
    return EXP(x);                                                            \
  }                                                                           \
  static inline V v_expm1_##suffix(V x) {                                     \
    return SLEEF(expm1)(x);                                                   \
  }                                                                           \
  static inline V v_log_##suffix(V x) {                                       \
    return SLEEF35(log)(x);                                                   \
  }                                                                           \
  static inline V v_log1p_##suffix(V x) {                                     \
    return SLEEF(log1p)(x);                                                   \
  }                                                                           \
  static inline V v_sin_##suffix(V x) {                                       \
    return SLEEF35(sin)(x);                                                   \
  }                                                                           \
  static inline V v_cos_##suffix(V x) {                                       \
    return SLEEF35(cos)(x);                                                   \
  }                                                                           \
  static inline V v_erf_##suffix(V x) {                                       \
    return SLEEF(erf)(x);                                                     \
  }                                                                           \
  static inline V v_sqrt_##suffix(V x) {                                      \
    return VSQRT(x);                                                          \
  }                                                                           \
  static inline V v_rsqrt_##suffix(V x) {                                     \
    return (T)1 / VSQRT(x);                                                   \
  }                                                                           \
  static inline V v_sigmoid_##suffix(V x) {                                   \
    return (T)1 / ((T)1 + EXP(-x));                                           \
  }                                                                           \
  static inline V v_elu_##suffix(V x) {                                       \
    return select((M)(x < (T)0), SLEEF(expm1)(x), x);                         \
  }                                                                           \
  static inline V v_selu_##suffix(V x) {                                      \
    return select((M)(x < (T)0), (T)SELU_SCALE_ALPHA * SLEEF(expm1)(x),       \
                  (T)SELU_SCALE * x);                                         \
  }                                                                           \
  static inline V v_softplus_##suffix(V x) {                                  \
    return select((M)(x > LIMIT), x, SLEEF(log1p)(EXP(x)));                   \
  }                                                                           \
  /* gradients / (exp(-features) + 1) */                                      \
  static inline V v_softplus_grad_##suffix(V g, V f) {                        \
    return g / (EXP(-f) + (T)1);                                              \
  }

FLOAT_VECTOR_FNS(f32, float, vf32_t, vm32_t, EXP_F32, SLEEF_F32, SLEEF35_F32,
                 VSQRT_F32, select_f32, SOFTPLUS_LIMIT_F32)
FLOAT_VECTOR_FNS(f64, double, vf64_t, vm64_t, SLEEF_F64(exp), SLEEF_F64,
                 SLEEF_F64, VSQRT_F64, select_f64, SOFTPLUS_LIMIT_F64)

// float: tanh x = x P(x^2) / Q(x^2) for |x| <= 8, P of degree 3 and Q of
// degree 4 (monic), a rational minimax fit of ours (3.8e-7 relative) held
// to 1 + 1.5e-7 at 8, so that clamping the result to [-1, 1] makes tanh
// exactly +-1 from 8 on (tanh 8 is 1 - 2.3e-7; from about 9, float's tanh
// is exactly 1, as TensorFlow's and NumPy's are). At most 5.4e-7 relative once
// rounded in float, with or without fused multiply-adds; eight multiplications
// and a division, about twice SLEEF's tanhf. Both clamps keep NaN: minps/maxps
// return their second operand when either is NaN.
static inline vf32_t v_tanh_f32(vf32_t x) {
  vf32_t one = {0};
  one += 1.0f;
  vf32_t limit = one * 8.0f;
  x = VMAX_F32(-limit, VMIN_F32(limit, x));
  vf32_t u = x * x;
  vf32_t p = u * 47.54956163121313f + 12653.723750297924f;
  p = p * u + 561593.38604221109f;
  p = p * u + 4360200.7792122718f;
  vf32_t q = u + 1010.6205108448556f;
  q = q * u + 102965.94549721223f;
  q = q * u + 2014986.5461450131f;
  q = q * u + 4360201.5903426241f;
  return VMAX_F32(-one, VMIN_F32(one, x * p / q));
}

static inline vf64_t v_tanh_f64(vf64_t x) {
  return SLEEF_F64(tanh)(x);
}

#define FLOAT_LOOPS(suffix, T, V, FLOOR, ABS, COPYSIGN)                \
  MAP_LOOP(neg_##suffix, T, T, -x)                                     \
  MAP_LOOP(abs_##suffix, T, T, ABS(x))                                 \
  MAP_LOOP(sign_##suffix, T, T, FLOAT_SIGN(x, ABS, COPYSIGN))          \
  MAP_LOOP(square_##suffix, T, T, x* x)                                \
  MAP_LOOP(reciprocal_##suffix, T, T, (T)1 / x)                        \
  MAP_LOOP(relu_##suffix, T, T, x < 0 ? (T)0 : x)                      \
  MAP_LOOP(relu6_##suffix, T, T, x<0 ? (T)0 : x> 6 ? (T)6 : x)         \
  MAP_LOOP(floor_##suffix, T, T, FLOOR(x))                             \
  MAP_LOOP(ceil_##suffix, T, T, -FLOOR(-x))                            \
  MAP_LOOP(round_##suffix, T, T, round_even_##suffix(x))               \
  VECTOR_LOOP(exp_##suffix, T, V, v_exp_##suffix)                      \
  VECTOR_LOOP(expm1_##suffix, T, V, v_expm1_##suffix)                  \
  VECTOR_LOOP(log_##suffix, T, V, v_log_##suffix)                      \
  VECTOR_LOOP(log1p_##suffix, T, V, v_log1p_##suffix)                  \
  VECTOR_LOOP(sin_##suffix, T, V, v_sin_##suffix)                      \
  VECTOR_LOOP(cos_##suffix, T, V, v_cos_##suffix)                      \
  VECTOR_LOOP(tanh_##suffix, T, V, v_tanh_##suffix)                    \
  VECTOR_LOOP(erf_##suffix, T, V, v_erf_##suffix)                      \
  VECTOR_LOOP(sqrt_##suffix, T, V, v_sqrt_##suffix)                    \
  VECTOR_LOOP(rsqrt_##suffix, T, V, v_rsqrt_##suffix)                  \
  VECTOR_LOOP(sigmoid_##suffix, T, V, v_sigmoid_##suffix)              \
  VECTOR_LOOP(elu_##suffix, T, V, v_elu_##suffix)                      \
  VECTOR_LOOP(selu_##suffix, T, V, v_selu_##suffix)                    \
  VECTOR_LOOP(softplus_##suffix, T, V, v_softplus_##suffix)            \
  MAP_LOOP(softsign_##suffix, T, T, x / ((T)1 + ABS(x)))               \
  /* Gradients, with TensorFlow's formulas (x, y: the two inputs). */  \
  MAP2_LOOP(relu_grad_##suffix, T, x*(T)(y > 0))                       \
  MAP2_LOOP(relu6_grad_##suffix, T, x*(T)((y > 0) & (y < 6)))          \
  MAP2_LOOP(tanh_grad_##suffix, T, y*((T)1 - x * x))                   \
  MAP2_LOOP(sigmoid_grad_##suffix, T, y* x*((T)1 - x))                 \
  MAP2_LOOP(rsqrt_grad_##suffix, T, (T)-0.5 * (y * x) * (x * x))       \
  MAP2_LOOP(sqrt_grad_##suffix, T, (T)0.5 * y / x)                     \
  MAP2_LOOP(reciprocal_grad_##suffix, T, -y* x* x)                     \
  MAP2_LOOP(elu_grad_##suffix, T, y < 0 ? (y + (T)1) * x : x)          \
  MAP2_LOOP(selu_grad_##suffix, T,                                     \
            y < 0 ? x * (y + (T)SELU_SCALE_ALPHA) : x * (T)SELU_SCALE) \
  VECTOR_LOOP2(softplus_grad_##suffix, T, V, v_softplus_grad_##suffix) \
  MAP2_LOOP(softsign_grad_##suffix, T, x / (((T)1 + ABS(y)) * ((T)1 + ABS(y))))

FLOAT_LOOPS(f32, float, vf32_t, floor_f32, fabsf, copysignf)
FLOAT_LOOPS(f64, double, vf64_t, floor_f64, fabs, copysign)

//===----------------------------------------------------------------------===//
// 16-bit floats: computed in float
//===----------------------------------------------------------------------===//

#define HALF_WRAP(name, suffix, to_f32, from_f32)                       \
  static void LOOM_ISA_FN(name##_##suffix)(const void* in_, void* out_, \
                                           int64_t n) {                 \
    const uint16_t* in = in_;                                           \
    uint16_t* out = out_;                                               \
    float a[kUnaryBlock], b[kUnaryBlock];                               \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                      \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;            \
      to_f32(in + i, a, m);                                             \
      LOOM_ISA_FN(name##_f32)(a, b, m);                                 \
      from_f32(b, out + i, m);                                          \
    }                                                                   \
  }

#define HALF_WRAP2(name, suffix, to_f32, from_f32)                         \
  static void LOOM_ISA_FN(name##_##suffix)(const void* a_, const void* b_, \
                                           void* out_, int64_t n) {        \
    const uint16_t* a = a_;                                                \
    const uint16_t* b = b_;                                                \
    uint16_t* out = out_;                                                  \
    float x[kUnaryBlock], y[kUnaryBlock], z[kUnaryBlock];                  \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                         \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;               \
      to_f32(a + i, x, m);                                                 \
      to_f32(b + i, y, m);                                                 \
      LOOM_ISA_FN(name##_f32)(x, y, z, m);                                 \
      from_f32(z, out + i, m);                                             \
    }                                                                      \
  }

#define HALF_LOOPS(suffix, to_f32, from_f32)            \
  HALF_WRAP(neg, suffix, to_f32, from_f32)              \
  HALF_WRAP(abs, suffix, to_f32, from_f32)              \
  HALF_WRAP(sign, suffix, to_f32, from_f32)             \
  HALF_WRAP(square, suffix, to_f32, from_f32)           \
  HALF_WRAP(reciprocal, suffix, to_f32, from_f32)       \
  HALF_WRAP(relu, suffix, to_f32, from_f32)             \
  HALF_WRAP(relu6, suffix, to_f32, from_f32)            \
  HALF_WRAP(floor, suffix, to_f32, from_f32)            \
  HALF_WRAP(ceil, suffix, to_f32, from_f32)             \
  HALF_WRAP(round, suffix, to_f32, from_f32)            \
  HALF_WRAP(exp, suffix, to_f32, from_f32)              \
  HALF_WRAP(expm1, suffix, to_f32, from_f32)            \
  HALF_WRAP(log, suffix, to_f32, from_f32)              \
  HALF_WRAP(log1p, suffix, to_f32, from_f32)            \
  HALF_WRAP(sin, suffix, to_f32, from_f32)              \
  HALF_WRAP(cos, suffix, to_f32, from_f32)              \
  HALF_WRAP(tanh, suffix, to_f32, from_f32)             \
  HALF_WRAP(erf, suffix, to_f32, from_f32)              \
  HALF_WRAP(sqrt, suffix, to_f32, from_f32)             \
  HALF_WRAP(rsqrt, suffix, to_f32, from_f32)            \
  HALF_WRAP(sigmoid, suffix, to_f32, from_f32)          \
  HALF_WRAP(elu, suffix, to_f32, from_f32)              \
  HALF_WRAP(selu, suffix, to_f32, from_f32)             \
  HALF_WRAP(softplus, suffix, to_f32, from_f32)         \
  HALF_WRAP(softsign, suffix, to_f32, from_f32)         \
  HALF_WRAP2(relu_grad, suffix, to_f32, from_f32)       \
  HALF_WRAP2(relu6_grad, suffix, to_f32, from_f32)      \
  HALF_WRAP2(tanh_grad, suffix, to_f32, from_f32)       \
  HALF_WRAP2(sigmoid_grad, suffix, to_f32, from_f32)    \
  HALF_WRAP2(rsqrt_grad, suffix, to_f32, from_f32)      \
  HALF_WRAP2(sqrt_grad, suffix, to_f32, from_f32)       \
  HALF_WRAP2(reciprocal_grad, suffix, to_f32, from_f32) \
  HALF_WRAP2(elu_grad, suffix, to_f32, from_f32)        \
  HALF_WRAP2(selu_grad, suffix, to_f32, from_f32)       \
  HALF_WRAP2(softplus_grad, suffix, to_f32, from_f32)   \
  HALF_WRAP2(softsign_grad, suffix, to_f32, from_f32)

HALF_LOOPS(f16, loom__f16_to_f32_block, loom__f32_to_f16_block)
HALF_LOOPS(bf16, loom__bf16_to_f32_block, loom__f32_to_bf16_block)

//===----------------------------------------------------------------------===//
// Integers (wrapping two's complement arithmetic, as TensorFlow's)
//===----------------------------------------------------------------------===//

// U: an unsigned type at least as wide as T and as unsigned int, so that
// the arithmetic neither overflows nor promotes to int.
#define SIGNED_LOOPS(suffix, T, U)                             \
  MAP_LOOP(neg_##suffix, T, T, (T)((U)0 - (U)x))               \
  MAP_LOOP(abs_##suffix, T, T, x < 0 ? (T)((U)0 - (U)x) : x)   \
  MAP_LOOP(sign_##suffix, T, T, (T)((x > 0) - (x < 0)))        \
  MAP_LOOP(square_##suffix, T, T, (T)((U)x * (U)x))            \
  MAP_LOOP(relu_##suffix, T, T, x < 0 ? (T)0 : x)              \
  MAP_LOOP(relu6_##suffix, T, T, x<0 ? (T)0 : x> 6 ? (T)6 : x) \
  MAP_LOOP(round_##suffix, T, T, x)                            \
  MAP2_LOOP(relu_grad_##suffix, T, y > 0 ? x : (T)0)           \
  MAP2_LOOP(relu6_grad_##suffix, T, ((y > 0) & (y < 6)) ? x : (T)0)

#define UNSIGNED_LOOPS(suffix, T, U)                 \
  MAP_LOOP(square_##suffix, T, T, (T)((U)x * (U)x))  \
  MAP_LOOP(relu_##suffix, T, T, x)                   \
  MAP_LOOP(relu6_##suffix, T, T, x > 6 ? (T)6 : x)   \
  MAP2_LOOP(relu_grad_##suffix, T, y > 0 ? x : (T)0) \
  MAP2_LOOP(relu6_grad_##suffix, T, ((y > 0) & (y < 6)) ? x : (T)0)

SIGNED_LOOPS(i8, int8_t, uint32_t)
SIGNED_LOOPS(i16, int16_t, uint32_t)
SIGNED_LOOPS(i32, int32_t, uint32_t)
SIGNED_LOOPS(i64, int64_t, uint64_t)
UNSIGNED_LOOPS(u8, uint8_t, uint32_t)
UNSIGNED_LOOPS(u16, uint16_t, uint32_t)
UNSIGNED_LOOPS(u32, uint32_t, uint32_t)
UNSIGNED_LOOPS(u64, uint64_t, uint64_t)

// Booleans are bytes holding 0 or 1; anything else nonzero reads as true.
MAP_LOOP(logical_not_bool, uint8_t, uint8_t, (uint8_t)(x == 0))

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

#define ROW_FLOATS(op)                     \
  [LOOM_ELEM_F32] = LOOM_ISA_FN(op##_f32), \
  [LOOM_ELEM_F64] = LOOM_ISA_FN(op##_f64), \
  [LOOM_ELEM_F16] = LOOM_ISA_FN(op##_f16), \
  [LOOM_ELEM_BF16] = LOOM_ISA_FN(op##_bf16)
#define ROW_SIGNED(op)                     \
  [LOOM_ELEM_I8] = LOOM_ISA_FN(op##_i8),   \
  [LOOM_ELEM_I16] = LOOM_ISA_FN(op##_i16), \
  [LOOM_ELEM_I32] = LOOM_ISA_FN(op##_i32), \
  [LOOM_ELEM_I64] = LOOM_ISA_FN(op##_i64)
#define ROW_UNSIGNED(op)                   \
  [LOOM_ELEM_U8] = LOOM_ISA_FN(op##_u8),   \
  [LOOM_ELEM_U16] = LOOM_ISA_FN(op##_u16), \
  [LOOM_ELEM_U32] = LOOM_ISA_FN(op##_u32), \
  [LOOM_ELEM_U64] = LOOM_ISA_FN(op##_u64)

const loom__unary_table_t LOOM_ISA_FN(loom__unary_loops) = {
    [LOOM_UNARY_NEG] = {ROW_FLOATS(neg), ROW_SIGNED(neg)},
    [LOOM_UNARY_ABS] = {ROW_FLOATS(abs), ROW_SIGNED(abs)},
    [LOOM_UNARY_SIGN] = {ROW_FLOATS(sign), ROW_SIGNED(sign)},
    [LOOM_UNARY_EXP] = {ROW_FLOATS(exp)},
    [LOOM_UNARY_EXPM1] = {ROW_FLOATS(expm1)},
    [LOOM_UNARY_LOG] = {ROW_FLOATS(log)},
    [LOOM_UNARY_LOG1P] = {ROW_FLOATS(log1p)},
    [LOOM_UNARY_SQRT] = {ROW_FLOATS(sqrt)},
    [LOOM_UNARY_RSQRT] = {ROW_FLOATS(rsqrt)},
    [LOOM_UNARY_SQUARE] = {ROW_FLOATS(square), ROW_SIGNED(square),
                           ROW_UNSIGNED(square)},
    [LOOM_UNARY_RECIPROCAL] = {ROW_FLOATS(reciprocal)},
    [LOOM_UNARY_SIN] = {ROW_FLOATS(sin)},
    [LOOM_UNARY_COS] = {ROW_FLOATS(cos)},
    [LOOM_UNARY_TANH] = {ROW_FLOATS(tanh)},
    [LOOM_UNARY_SIGMOID] = {ROW_FLOATS(sigmoid)},
    [LOOM_UNARY_RELU] = {ROW_FLOATS(relu), ROW_SIGNED(relu),
                         ROW_UNSIGNED(relu)},
    [LOOM_UNARY_RELU6] = {ROW_FLOATS(relu6), ROW_SIGNED(relu6),
                          ROW_UNSIGNED(relu6)},
    [LOOM_UNARY_ELU] = {ROW_FLOATS(elu)},
    [LOOM_UNARY_SELU] = {ROW_FLOATS(selu)},
    [LOOM_UNARY_SOFTPLUS] = {ROW_FLOATS(softplus)},
    [LOOM_UNARY_SOFTSIGN] = {ROW_FLOATS(softsign)},
    [LOOM_UNARY_ERF] = {ROW_FLOATS(erf)},
    [LOOM_UNARY_FLOOR] = {ROW_FLOATS(floor)},
    [LOOM_UNARY_CEIL] = {ROW_FLOATS(ceil)},
    [LOOM_UNARY_ROUND] = {ROW_FLOATS(round), ROW_SIGNED(round)},
    [LOOM_UNARY_LOGICAL_NOT] = {[LOOM_ELEM_BOOL] =
                                    LOOM_ISA_FN(logical_not_bool)},
};

const loom__unary_grad_table_t LOOM_ISA_FN(loom__unary_grad_loops) = {
    [LOOM_UNARY_GRAD_RELU] = {ROW_FLOATS(relu_grad), ROW_SIGNED(relu_grad),
                              ROW_UNSIGNED(relu_grad)},
    [LOOM_UNARY_GRAD_RELU6] = {ROW_FLOATS(relu6_grad), ROW_SIGNED(relu6_grad),
                               ROW_UNSIGNED(relu6_grad)},
    [LOOM_UNARY_GRAD_TANH] = {ROW_FLOATS(tanh_grad)},
    [LOOM_UNARY_GRAD_SIGMOID] = {ROW_FLOATS(sigmoid_grad)},
    [LOOM_UNARY_GRAD_RSQRT] = {ROW_FLOATS(rsqrt_grad)},
    [LOOM_UNARY_GRAD_SQRT] = {ROW_FLOATS(sqrt_grad)},
    [LOOM_UNARY_GRAD_RECIPROCAL] = {ROW_FLOATS(reciprocal_grad)},
    [LOOM_UNARY_GRAD_ELU] = {ROW_FLOATS(elu_grad)},
    [LOOM_UNARY_GRAD_SELU] = {ROW_FLOATS(selu_grad)},
    [LOOM_UNARY_GRAD_SOFTPLUS] = {ROW_FLOATS(softplus_grad)},
    [LOOM_UNARY_GRAD_SOFTSIGN] = {ROW_FLOATS(softsign_grad)},
};
