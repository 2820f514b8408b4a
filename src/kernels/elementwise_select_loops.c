// Loops of Select / SelectV2, ClipByValue and the sums of BiasAddGrad,
// compiled once per ISA level (see isa.h).

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/elementwise_half.h"

//===----------------------------------------------------------------------===//
// Select: by element size (the dtype does not matter)
//===----------------------------------------------------------------------===//

// a: the condition (bools), b: then, c: else. The output may be b or c
// exactly (a forwarded buffer).
#define SELECT_LOOP(name, T)                                                \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, const void* c_, int64_t sc,     \
                                void* out_, int64_t n) {                    \
    const uint8_t* cond = a_;                                               \
    const T* t = b_;                                                        \
    const T* e = c_;                                                        \
    T* out = out_;                                                          \
    if (sa == 0) { /* one condition for the whole run: a copy */            \
      const T* from = cond[0] ? t : e;                                      \
      int64_t stride = cond[0] ? sb : sc;                                   \
      if (stride == 1) {                                                    \
        if (from != out) memmove(out, from, (size_t)n * sizeof(T));         \
      } else {                                                              \
        for (int64_t i = 0; i < n; ++i) out[i] = from[i * stride];          \
      }                                                                     \
    } else if (sa == 1 && sb == 1 && sc == 1) {                             \
      for (int64_t i = 0; i < n; ++i) out[i] = cond[i] ? t[i] : e[i];       \
    } else {                                                                \
      for (int64_t i = 0; i < n; ++i) {                                     \
        out[i] = cond[i * sa] ? t[i * sb] : e[i * sc];                      \
      }                                                                     \
    }                                                                       \
  }

SELECT_LOOP(select_1, uint8_t)
SELECT_LOOP(select_2, uint16_t)
SELECT_LOOP(select_4, uint32_t)
SELECT_LOOP(select_8, uint64_t)

//===----------------------------------------------------------------------===//
// ClipByValue
//===----------------------------------------------------------------------===//

// TensorFlow's order: min with clip_value_max, then max with
// clip_value_min (so min wins when min > max); a NaN t stays NaN.
#define CLIP(t, lo, hi) clip_max_(clip_min_(t, hi), lo)
#define clip_min_(x, y) ((y) < (x) ? (y) : (x))
#define clip_max_(x, y) ((x) < (y) ? (y) : (x))

#define CLIP_LOOP(name, T)                                                  \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, const void* c_, int64_t sc,     \
                                void* out_, int64_t n) {                    \
    const T* t = a_;                                                        \
    const T* lo = b_;                                                       \
    const T* hi = c_;                                                       \
    T* out = out_;                                                          \
    if (sa == 1 && sb == 0 && sc == 0) {                                    \
      const T l = lo[0], h = hi[0];                                         \
      for (int64_t i = 0; i < n; ++i) out[i] = CLIP(t[i], l, h);            \
    } else if (sa == 1 && sb == 1 && sc == 1) {                             \
      for (int64_t i = 0; i < n; ++i) out[i] = CLIP(t[i], lo[i], hi[i]);    \
    } else {                                                                \
      for (int64_t i = 0; i < n; ++i) {                                     \
        out[i] = CLIP(t[i * sa], lo[i * sb], hi[i * sc]);                   \
      }                                                                     \
    }                                                                       \
  }

CLIP_LOOP(clip_f32, float)
CLIP_LOOP(clip_f64, double)
CLIP_LOOP(clip_i32, int32_t)
CLIP_LOOP(clip_i64, int64_t)
CLIP_LOOP(clip_u8, uint8_t)
CLIP_LOOP(clip_i8, int8_t)
CLIP_LOOP(clip_i16, int16_t)
CLIP_LOOP(clip_u16, uint16_t)
CLIP_LOOP(clip_u32, uint32_t)
CLIP_LOOP(clip_u64, uint64_t)

// 16-bit floats: the result is one of the inputs, so widening, clipping in
// float and narrowing is exact.
#define HALF_CLIP(name, widen, narrow)                                      \
  static void LOOM_ISA_FN(name)(const void* a_, int64_t sa, const void* b_, \
                                int64_t sb, const void* c_, int64_t sc,     \
                                void* out_, int64_t n) {                    \
    const uint16_t* a = a_;                                                 \
    const uint16_t* b = b_;                                                 \
    const uint16_t* c = c_;                                                 \
    uint16_t* out = out_;                                                   \
    float xa[kHalfBlock], xb[kHalfBlock], xc[kHalfBlock], xr[kHalfBlock];   \
    for (int64_t i = 0; i < n; i += kHalfBlock) {                           \
      int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;                  \
      int64_t ea = widen(a + i * sa, sa, xa, m);                            \
      int64_t eb = widen(b + i * sb, sb, xb, m);                            \
      int64_t ec = widen(c + i * sc, sc, xc, m);                            \
      LOOM_ISA_FN(clip_f32)(xa, ea, xb, eb, xc, ec, xr, m);                 \
      narrow(xr, out + i, m);                                               \
    }                                                                       \
  }

HALF_CLIP(clip_f16, loom__widen_half, loom__float_to_half_n)
HALF_CLIP(clip_bf16, loom__widen_bfloat16, loom__float_to_bfloat16_n)

//===----------------------------------------------------------------------===//
// Sums (BiasAddGrad): float accumulators for the 16-bit floats, integers
// wrap
//===----------------------------------------------------------------------===//

#define ACCUMULATE(suffix, T, ACC, W)                                       \
  static void LOOM_ISA_FN(accumulate_##suffix)(void* acc_, const void* in_, \
                                               int64_t n) {                 \
    ACC* acc = acc_;                                                        \
    const T* in = in_;                                                      \
    for (int64_t i = 0; i < n; ++i) acc[i] = (ACC)((W)acc[i] + (W)in[i]);   \
  }                                                                         \
  static void LOOM_ISA_FN(sum_##suffix)(const void* in_, int64_t n,         \
                                        void* acc_) {                       \
    const T* in = in_;                                                      \
    /* Independent partial sums, so the loop vectorises. */                 \
    W partial[16] = {0};                                                    \
    int64_t i = 0;                                                          \
    for (; i + 16 <= n; i += 16) {                                          \
      for (int j = 0; j < 16; ++j) partial[j] += (W)in[i + j];              \
    }                                                                       \
    W total = 0;                                                            \
    for (int j = 0; j < 16; ++j) total += partial[j];                       \
    for (; i < n; ++i) total += (W)in[i];                                   \
    *(ACC*)acc_ = (ACC)((W) * (ACC*)acc_ + total);                          \
  }                                                                         \
  static void LOOM_ISA_FN(narrow_##suffix)(const void* acc, void* out,      \
                                           int64_t n) {                     \
    memcpy(out, acc, (size_t)n * sizeof(T));                                \
  }

ACCUMULATE(f32, float, float, float)
ACCUMULATE(f64, double, double, double)
ACCUMULATE(i32, int32_t, int32_t, uint32_t)
ACCUMULATE(i64, int64_t, int64_t, uint64_t)
ACCUMULATE(u8, uint8_t, uint8_t, uint32_t)
ACCUMULATE(i8, int8_t, int8_t, uint32_t)
ACCUMULATE(i16, int16_t, int16_t, uint32_t)
ACCUMULATE(u16, uint16_t, uint16_t, uint32_t)
ACCUMULATE(u32, uint32_t, uint32_t, uint32_t)
ACCUMULATE(u64, uint64_t, uint64_t, uint64_t)

#define HALF_ACCUMULATE(suffix, widen, narrow_n)                           \
  static void LOOM_ISA_FN(accumulate_##suffix)(void* acc, const void* in_, \
                                               int64_t n) {                \
    const uint16_t* in = in_;                                              \
    float block[kHalfBlock];                                               \
    for (int64_t i = 0; i < n; i += kHalfBlock) {                          \
      int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;                 \
      widen(in + i, 1, block, m);                                          \
      LOOM_ISA_FN(accumulate_f32)((float*)acc + i, block, m);              \
    }                                                                      \
  }                                                                        \
  static void LOOM_ISA_FN(sum_##suffix)(const void* in_, int64_t n,        \
                                        void* acc) {                       \
    const uint16_t* in = in_;                                              \
    float block[kHalfBlock];                                               \
    for (int64_t i = 0; i < n; i += kHalfBlock) {                          \
      int64_t m = n - i < kHalfBlock ? n - i : kHalfBlock;                 \
      widen(in + i, 1, block, m);                                          \
      LOOM_ISA_FN(sum_f32)(block, m, acc);                                 \
    }                                                                      \
  }                                                                        \
  static void LOOM_ISA_FN(narrow_##suffix)(const void* acc, void* out,     \
                                           int64_t n) {                    \
    narrow_n(acc, out, n);                                                 \
  }

HALF_ACCUMULATE(f16, loom__widen_half, loom__float_to_half_n)
HALF_ACCUMULATE(bf16, loom__widen_bfloat16, loom__float_to_bfloat16_n)

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

const loom__select_loops_t LOOM_ISA_FN(loom__select_loops) = {
    .select = {LOOM_ISA_FN(select_1), LOOM_ISA_FN(select_2),
               LOOM_ISA_FN(select_4), LOOM_ISA_FN(select_8)},
    .clip = {ROW(clip)},
    .accumulate = {ROW(accumulate)},
    .sum = {ROW(sum)},
    .narrow = {ROW(narrow)},
};
