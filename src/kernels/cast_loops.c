// Cast loops for every pair of the element-wise dtypes, Cast's truncating
// variants, and the float-class predicates (IsNan, IsInf, IsFinite),
// compiled once per ISA level (see isa.h).

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/elementwise_unary.h"

//===----------------------------------------------------------------------===//
// Float to integer
//===----------------------------------------------------------------------===//
//
// As x86-64 converts, and so as TensorFlow's CPU kernel does (its
// static_cast compiles to these instructions): truncation toward zero; NaN
// and values outside int32 (int64) give INT32_MIN (INT64_MIN), e.g. NaN ->
// -2147483648; narrower integers keep the low bits of the int32 result
// (100000.0 -> int16 -31072); uint32 keeps the low bits of the int64 one;
// uint64 converts values from 2^63 up after subtracting 2^63, and flips the
// top bit back. Written without undefined conversions.

static inline int32_t f32_to_i32(float x) {
  return x >= -2147483648.0f && x < 2147483648.0f ? (int32_t)x : INT32_MIN;
}

static inline int32_t f64_to_i32(double x) {
  return x > -2147483649.0 && x < 2147483648.0 ? (int32_t)x : INT32_MIN;
}

static inline int64_t f32_to_i64(float x) {
  return x >= -9223372036854775808.0f && x < 9223372036854775808.0f ? (int64_t)x
                                                                    : INT64_MIN;
}

static inline int64_t f64_to_i64(double x) {
  return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (int64_t)x
                                                                  : INT64_MIN;
}

static inline uint64_t f32_to_u64(float x) {
  return x >= 9223372036854775808.0f
             ? (uint64_t)f32_to_i64(x - 9223372036854775808.0f) ^
                   0x8000000000000000u
             : (uint64_t)f32_to_i64(x);
}

static inline uint64_t f64_to_u64(double x) {
  return x >= 9223372036854775808.0
             ? (uint64_t)f64_to_i64(x - 9223372036854775808.0) ^
                   0x8000000000000000u
             : (uint64_t)f64_to_i64(x);
}

#define FP_TO_i8(s, x) ((int8_t)s##_to_i32(x))
#define FP_TO_i16(s, x) ((int16_t)s##_to_i32(x))
#define FP_TO_i32(s, x) (s##_to_i32(x))
#define FP_TO_i64(s, x) (s##_to_i64(x))
#define FP_TO_u8(s, x) ((uint8_t)s##_to_i32(x))
#define FP_TO_u16(s, x) ((uint16_t)s##_to_i32(x))
#define FP_TO_u32(s, x) ((uint32_t)s##_to_i64(x))
#define FP_TO_u64(s, x) (s##_to_u64(x))

//===----------------------------------------------------------------------===//
// Casts between the natively typed dtypes
//===----------------------------------------------------------------------===//

// Kinds: F float, I integer, B bool (b8: a byte; nonzero is true).
#define NATIVE_TYPES(X) \
  X(f32, float, F)      \
  X(f64, double, F)     \
  X(i8, int8_t, I)      \
  X(i16, int16_t, I)    \
  X(i32, int32_t, I)    \
  X(i64, int64_t, I)    \
  X(u8, uint8_t, I)     \
  X(u16, uint16_t, I)   \
  X(u32, uint32_t, I)   \
  X(u64, uint64_t, I)   \
  X(b8, uint8_t, B)

#define NATIVE_TYPES_FROM(X, s, S, SK) \
  X(s, S, SK, f32, float, F)           \
  X(s, S, SK, f64, double, F)          \
  X(s, S, SK, i8, int8_t, I)           \
  X(s, S, SK, i16, int16_t, I)         \
  X(s, S, SK, i32, int32_t, I)         \
  X(s, S, SK, i64, int64_t, I)         \
  X(s, S, SK, u8, uint8_t, I)          \
  X(s, S, SK, u16, uint16_t, I)        \
  X(s, S, SK, u32, uint32_t, I)        \
  X(s, S, SK, u64, uint64_t, I)        \
  X(s, S, SK, b8, uint8_t, B)

// Conversions by (source kind, destination kind). Integer to narrower
// integer wraps (two's complement), as TensorFlow's.
#define CONVERT_FF(s, d, D, x) ((D)(x))
#define CONVERT_FI(s, d, D, x) FP_TO_##d(s, x)
#define CONVERT_FB(s, d, D, x) ((uint8_t)((x) != 0))
#define CONVERT_IF(s, d, D, x) ((D)(x))
#define CONVERT_II(s, d, D, x) ((D)(x))
#define CONVERT_IB(s, d, D, x) ((uint8_t)((x) != 0))
#define CONVERT_BF(s, d, D, x) ((D)((x) != 0))
#define CONVERT_BI(s, d, D, x) ((D)((x) != 0))
#define CONVERT_BB(s, d, D, x) ((uint8_t)((x) != 0))

#define CAST_PAIR(s, S, SK, d, D, DK)                                  \
  static void LOOM_ISA_FN(cast_##s##_##d)(const void* in_, void* out_, \
                                          int64_t n) {                 \
    const S* restrict in = in_;                                        \
    D* restrict out = out_;                                            \
    for (int64_t i = 0; i < n; ++i) {                                  \
      S x = in[i];                                                     \
      out[i] = CONVERT_##SK##DK(s, d, D, x);                           \
    }                                                                  \
  }

#define CAST_ROW(s, S, SK) NATIVE_TYPES_FROM(CAST_PAIR, s, S, SK)
NATIVE_TYPES(CAST_ROW)

//===----------------------------------------------------------------------===//
// Casts from and to 16-bit floats: through float, a block at a time
//===----------------------------------------------------------------------===//

// Half and bfloat16 convert to others through float, as Eigen's do (so
// double -> half rounds twice, as TensorFlow's).
#define FROM_HALF(h, to_f32, d, D, DK)                                 \
  static void LOOM_ISA_FN(cast_##h##_##d)(const void* in_, void* out_, \
                                          int64_t n) {                 \
    const uint16_t* in = in_;                                          \
    D* out = out_;                                                     \
    float block[kUnaryBlock];                                          \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                     \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;           \
      to_f32(in + i, block, m);                                        \
      LOOM_ISA_FN(cast_f32_##d)(block, out + i, m);                    \
    }                                                                  \
  }

#define TO_HALF(s, S, SK, h, from_f32)                                 \
  static void LOOM_ISA_FN(cast_##s##_##h)(const void* in_, void* out_, \
                                          int64_t n) {                 \
    const S* in = in_;                                                 \
    uint16_t* out = out_;                                              \
    float block[kUnaryBlock];                                          \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                     \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;           \
      LOOM_ISA_FN(cast_##s##_f32)(in + i, block, m);                   \
      from_f32(block, out + i, m);                                     \
    }                                                                  \
  }

#define FROM_F16(d, D, DK) FROM_HALF(f16, loom__f16_to_f32_block, d, D, DK)
#define FROM_BF16(d, D, DK) FROM_HALF(bf16, loom__bf16_to_f32_block, d, D, DK)
#define TO_F16(s, S, SK) TO_HALF(s, S, SK, f16, loom__f32_to_f16_block)
#define TO_BF16(s, S, SK) TO_HALF(s, S, SK, bf16, loom__f32_to_bf16_block)
NATIVE_TYPES(FROM_F16)
NATIVE_TYPES(FROM_BF16)
NATIVE_TYPES(TO_F16)
NATIVE_TYPES(TO_BF16)

#define HALF_TO_HALF(h1, to_f32, h2, from_f32)                           \
  static void LOOM_ISA_FN(cast_##h1##_##h2)(const void* in_, void* out_, \
                                            int64_t n) {                 \
    const uint16_t* in = in_;                                            \
    uint16_t* out = out_;                                                \
    float block[kUnaryBlock];                                            \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                       \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;             \
      to_f32(in + i, block, m);                                          \
      from_f32(block, out + i, m);                                       \
    }                                                                    \
  }

HALF_TO_HALF(f16, loom__f16_to_f32_block, f16, loom__f32_to_f16_block)
HALF_TO_HALF(f16, loom__f16_to_f32_block, bf16, loom__f32_to_bf16_block)
HALF_TO_HALF(bf16, loom__bf16_to_f32_block, f16, loom__f32_to_f16_block)
HALF_TO_HALF(bf16, loom__bf16_to_f32_block, bf16, loom__f32_to_bf16_block)

//===----------------------------------------------------------------------===//
// Truncating casts (Truncate=true)
//===----------------------------------------------------------------------===//
//
// TensorFlow clears the mantissa bits the destination lacks before it
// converts (NaN aside), so the conversion rounds toward zero.

// In integers throughout: GCC 12 folds `x != x ? x : cleared` to x.
static inline float clear_low_bits_f32(float x, int bits) {
  uint32_t b;
  memcpy(&b, &x, sizeof(b));
  uint32_t cleared = b & (0xffffffffu << bits);
  uint32_t kept = (b & 0x7fffffffu) > 0x7f800000u ? b : cleared;  // NaN
  float y;
  memcpy(&y, &kept, sizeof(y));
  return y;
}

static inline double clear_low_bits_f64(double x, int bits) {
  uint64_t b;
  memcpy(&b, &x, sizeof(b));
  uint64_t cleared = b & (0xffffffffffffffffu << bits);
  uint64_t kept =
      (b & 0x7fffffffffffffffu) > 0x7ff0000000000000u ? b : cleared;  // NaN
  double y;
  memcpy(&y, &kept, sizeof(y));
  return y;
}

// double (53 mantissa bits) -> float (24).
static void LOOM_ISA_FN(truncate_f64_f32)(const void* in_, void* out_,
                                          int64_t n) {
  const double* restrict in = in_;
  float* restrict out = out_;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = (float)clear_low_bits_f64(in[i], 53 - 24);
  }
}

#define TRUNCATE_TO_HALF(name, S, clear, bits, from_f32)                  \
  static void LOOM_ISA_FN(name)(const void* in_, void* out_, int64_t n) { \
    const S* in = in_;                                                    \
    uint16_t* out = out_;                                                 \
    float block[kUnaryBlock];                                             \
    for (int64_t i = 0; i < n; i += kUnaryBlock) {                        \
      int64_t m = n - i < kUnaryBlock ? n - i : kUnaryBlock;              \
      for (int64_t j = 0; j < m; ++j) {                                   \
        block[j] = (float)clear(in[i + j], bits);                         \
      }                                                                   \
      from_f32(block, out + i, m);                                        \
    }                                                                     \
  }

// double -> half (11), float (24) -> half, float -> bfloat16 (8).
TRUNCATE_TO_HALF(truncate_f64_f16, double, clear_low_bits_f64, 53 - 11,
                 loom__f32_to_f16_block)
TRUNCATE_TO_HALF(truncate_f32_f16, float, clear_low_bits_f32, 24 - 11,
                 loom__f32_to_f16_block)
TRUNCATE_TO_HALF(truncate_f32_bf16, float, clear_low_bits_f32, 24 - 8,
                 loom__f32_to_bf16_block)

//===----------------------------------------------------------------------===//
// IsNan, IsInf, IsFinite
//===----------------------------------------------------------------------===//

#define CLASS_LOOP(name, T, expr)                                         \
  static void LOOM_ISA_FN(name)(const void* in_, void* out_, int64_t n) { \
    const T* restrict in = in_;                                           \
    uint8_t* restrict out = out_;                                         \
    for (int64_t i = 0; i < n; ++i) {                                     \
      T x = in[i];                                                        \
      out[i] = (uint8_t)(expr);                                           \
    }                                                                     \
  }

CLASS_LOOP(is_nan_f32, float, x != x)
CLASS_LOOP(is_nan_f64, double, x != x)
CLASS_LOOP(is_nan_f16, uint16_t, (x & 0x7fff) > 0x7c00)
CLASS_LOOP(is_nan_bf16, uint16_t, (x & 0x7fff) > 0x7f80)
CLASS_LOOP(is_inf_f32, float, fabsf(x) == INFINITY)
CLASS_LOOP(is_inf_f64, double, fabs(x) == INFINITY)
CLASS_LOOP(is_inf_f16, uint16_t, (x & 0x7fff) == 0x7c00)
CLASS_LOOP(is_inf_bf16, uint16_t, (x & 0x7fff) == 0x7f80)
CLASS_LOOP(is_finite_f32, float, fabsf(x) < INFINITY)
CLASS_LOOP(is_finite_f64, double, fabs(x) < INFINITY)
CLASS_LOOP(is_finite_f16, uint16_t, (x & 0x7c00) != 0x7c00)
CLASS_LOOP(is_finite_bf16, uint16_t, (x & 0x7f80) != 0x7f80)

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

#define SLOT_f32 LOOM_ELEM_F32
#define SLOT_f64 LOOM_ELEM_F64
#define SLOT_i8 LOOM_ELEM_I8
#define SLOT_i16 LOOM_ELEM_I16
#define SLOT_i32 LOOM_ELEM_I32
#define SLOT_i64 LOOM_ELEM_I64
#define SLOT_u8 LOOM_ELEM_U8
#define SLOT_u16 LOOM_ELEM_U16
#define SLOT_u32 LOOM_ELEM_U32
#define SLOT_u64 LOOM_ELEM_U64
#define SLOT_b8 LOOM_ELEM_BOOL
#define SLOT_f16 LOOM_ELEM_F16
#define SLOT_bf16 LOOM_ELEM_BF16

#define ENTRY(s, d) [SLOT_##s][SLOT_##d] = LOOM_ISA_FN(cast_##s##_##d),
#define NATIVE_ENTRY(s, S, SK, d, D, DK) ENTRY(s, d)
#define NATIVE_ROW(s, S, SK) NATIVE_TYPES_FROM(NATIVE_ENTRY, s, S, SK)
#define HALF_ENTRIES(d, D, DK) \
  ENTRY(f16, d) ENTRY(bf16, d) ENTRY(d, f16) ENTRY(d, bf16)

const loom__cast_table_t LOOM_ISA_FN(loom__cast_loops) = {
    NATIVE_TYPES(NATIVE_ROW)            //
    NATIVE_TYPES(HALF_ENTRIES)          //
    ENTRY(f16, f16) ENTRY(f16, bf16)    //
    ENTRY(bf16, f16) ENTRY(bf16, bf16)  //
};

const loom__cast_table_t LOOM_ISA_FN(loom__cast_truncate_loops) = {
    [LOOM_ELEM_F64][LOOM_ELEM_F32] = LOOM_ISA_FN(truncate_f64_f32),
    [LOOM_ELEM_F64][LOOM_ELEM_F16] = LOOM_ISA_FN(truncate_f64_f16),
    [LOOM_ELEM_F32][LOOM_ELEM_F16] = LOOM_ISA_FN(truncate_f32_f16),
    [LOOM_ELEM_F32][LOOM_ELEM_BF16] = LOOM_ISA_FN(truncate_f32_bf16),
};

#define CLASS_ROW(name)                          \
  {                                              \
    [LOOM_ELEM_F32] = LOOM_ISA_FN(name##_f32),   \
    [LOOM_ELEM_F64] = LOOM_ISA_FN(name##_f64),   \
    [LOOM_ELEM_F16] = LOOM_ISA_FN(name##_f16),   \
    [LOOM_ELEM_BF16] = LOOM_ISA_FN(name##_bf16), \
  }

const loom__float_class_table_t LOOM_ISA_FN(loom__float_class_loops) = {
    [LOOM_FLOAT_CLASS_IS_NAN] = CLASS_ROW(is_nan),
    [LOOM_FLOAT_CLASS_IS_INF] = CLASS_ROW(is_inf),
    [LOOM_FLOAT_CLASS_IS_FINITE] = CLASS_ROW(is_finite),
};
