// Comparison and logical loops (bool results), compiled once per ISA level
// (see isa.h). 16-bit floats are widened to float a block at a time.

#include <stdbool.h>
#include <stdint.h>

#include "kernels/elementwise.h"
#include "kernels/elementwise_half.h"

// Both contiguous, one broadcast, or general strides; no `restrict` (a
// bool output may be a forwarded bool input).
#define COMPARE_LOOP(name, T, expr)                                         \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const T* a = a_;                                                        \
    const T* b = b_;                                                        \
    bool* out = out_;                                                       \
    if (sa == 1 && sb == 1) {                                               \
      for (int64_t i = 0; i < n; ++i) {                                     \
        T x = a[i], y = b[i];                                               \
        out[i] = (expr);                                                    \
      }                                                                     \
    } else if (sa == 1 && sb == 0) {                                        \
      const T y = b[0];                                                     \
      for (int64_t i = 0; i < n; ++i) {                                     \
        T x = a[i];                                                         \
        out[i] = (expr);                                                    \
      }                                                                     \
    } else if (sa == 0 && sb == 1) {                                        \
      const T x = a[0];                                                     \
      for (int64_t i = 0; i < n; ++i) {                                     \
        T y = b[i];                                                         \
        out[i] = (expr);                                                    \
      }                                                                     \
    } else {                                                                \
      for (int64_t i = 0; i < n; ++i) {                                     \
        T x = a[i * sa], y = b[i * sb];                                     \
        out[i] = (expr);                                                    \
      }                                                                     \
    }                                                                       \
  }

#define COMPARE_LOOPS(suffix, T)                  \
  COMPARE_LOOP(less_##suffix, T, x < y)           \
  COMPARE_LOOP(less_equal_##suffix, T, x <= y)    \
  COMPARE_LOOP(greater_##suffix, T, x > y)        \
  COMPARE_LOOP(greater_equal_##suffix, T, x >= y) \
  COMPARE_LOOP(equal_##suffix, T, x == y)         \
  COMPARE_LOOP(not_equal_##suffix, T, x != y)

COMPARE_LOOPS(f32, float)
COMPARE_LOOPS(f64, double)
COMPARE_LOOPS(i32, int32_t)
COMPARE_LOOPS(i64, int64_t)
COMPARE_LOOPS(u8, uint8_t)
COMPARE_LOOPS(i8, int8_t)
COMPARE_LOOPS(i16, int16_t)
COMPARE_LOOPS(u16, uint16_t)
COMPARE_LOOPS(u32, uint32_t)
COMPARE_LOOPS(u64, uint64_t)

// Bools are bytes holding 0 or 1.
COMPARE_LOOP(equal_bool, uint8_t, x == y)
COMPARE_LOOP(not_equal_bool, uint8_t, x != y)
COMPARE_LOOP(logical_and_bool, uint8_t, (x & y) != 0)
COMPARE_LOOP(logical_or_bool, uint8_t, (x | y) != 0)

#define HALF_COMPARE(name, f32_loop, widen)                                 \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, void* out_, int64_t n) {        \
    const uint16_t* a = a_;                                                 \
    const uint16_t* b = b_;                                                 \
    bool* out = out_;                                                       \
    float xa[kHalfBlock], xb[kHalfBlock];                                   \
    for (int64_t i = 0; i < n; i += kHalfBlock) {                           \
      int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;                  \
      int64_t ea = widen(a + i * sa, sa, xa, m);                            \
      int64_t eb = widen(b + i * sb, sb, xb, m);                            \
      LOOM_ISA_FN(f32_loop)(xa, ea, xb, eb, out + i, m);                    \
    }                                                                       \
  }

#define HALF_COMPARES(op)                            \
  HALF_COMPARE(op##_f16, op##_f32, loom__widen_half) \
  HALF_COMPARE(op##_bf16, op##_f32, loom__widen_bfloat16)

HALF_COMPARES(less)
HALF_COMPARES(less_equal)
HALF_COMPARES(greater)
HALF_COMPARES(greater_equal)
HALF_COMPARES(equal)
HALF_COMPARES(not_equal)

#define ROW(op)                            \
  [LOOM_ELEM_F32] = LOOM_ISA_FN(op##_f32), \
  [LOOM_ELEM_F64] = LOOM_ISA_FN(op##_f64), \
  [LOOM_ELEM_I32] = LOOM_ISA_FN(op##_i32), \
  [LOOM_ELEM_I64] = LOOM_ISA_FN(op##_i64), \
  [LOOM_ELEM_U8] = LOOM_ISA_FN(op##_u8),   \
  [LOOM_ELEM_I8] = LOOM_ISA_FN(op##_i8),   \
  [LOOM_ELEM_I16] = LOOM_ISA_FN(op##_i16), \
  [LOOM_ELEM_U16] = LOOM_ISA_FN(op##_u16), \
  [LOOM_ELEM_U32] = LOOM_ISA_FN(op##_u32), \
  [LOOM_ELEM_U64] = LOOM_ISA_FN(op##_u64), \
  [LOOM_ELEM_F16] = LOOM_ISA_FN(op##_f16), \
  [LOOM_ELEM_BF16] = LOOM_ISA_FN(op##_bf16)

const loom__compare_table_t LOOM_ISA_FN(loom__compare_loops) = {
    [LOOM_COMPARE_LESS] = {ROW(less)},
    [LOOM_COMPARE_LESS_EQUAL] = {ROW(less_equal)},
    [LOOM_COMPARE_GREATER] = {ROW(greater)},
    [LOOM_COMPARE_GREATER_EQUAL] = {ROW(greater_equal)},
    [LOOM_COMPARE_EQUAL] = {ROW(equal), [LOOM_ELEM_BOOL] =
                                            LOOM_ISA_FN(equal_bool)},
    [LOOM_COMPARE_NOT_EQUAL] = {ROW(not_equal), [LOOM_ELEM_BOOL] = LOOM_ISA_FN(
                                                    not_equal_bool)},
    [LOOM_COMPARE_LOGICAL_AND] = {[LOOM_ELEM_BOOL] =
                                      LOOM_ISA_FN(logical_and_bool)},
    [LOOM_COMPARE_LOGICAL_OR] = {[LOOM_ELEM_BOOL] =
                                     LOOM_ISA_FN(logical_or_bool)},
};
