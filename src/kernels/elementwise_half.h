// 16-bit float storage for the element-wise loops: blocks of half or
// bfloat16 elements widened to float and narrowed back, for *_loops.c files
// (built once per ISA level). Half uses F16C where the level has it
// (AVX2 and AVX-512 builds), bfloat16 is plain C the compiler vectorises.
// Rounding is to nearest even, as base/half.h.

#ifndef LOOM_KERNELS_ELEMENTWISE_HALF_H_
#define LOOM_KERNELS_ELEMENTWISE_HALF_H_

#include <stdint.h>
#include <string.h>

#include "base/half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// Elements per block: the f32 copies stay in L1 next to the 16-bit data.
enum { kHalfBlock = 512 };

static inline void loom__half_to_float_n(const uint16_t* in, float* out,
                                         int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    __m256i h = _mm256_loadu_si256((const __m256i*)(in + i));
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128((const __m128i*)(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = loom__half_to_float(in[i]);
}

static inline void loom__float_to_half_n(const float* in, uint16_t* out,
                                         int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    __m256i h =
        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256((__m256i*)(out + i), h);
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128((__m128i*)(out + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = loom__float_to_half(in[i]);
}

static inline void loom__bfloat16_to_float_n(const uint16_t* in, float* out,
                                             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = (uint32_t)in[i] << 16;
    memcpy(&out[i], &bits, sizeof(bits));  // a move; keeps types apart
  }
}

// Branch-free so that it vectorises: NaN keeps its top bits (quietened),
// everything else rounds to nearest even.
static inline void loom__float_to_bfloat16_n(const float* in, uint16_t* out,
                                             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    memcpy(&b, &in[i], sizeof(b));
    uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
    uint32_t nan = (b >> 16) | 0x40u;
    out[i] = (uint16_t)((b & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

// Widens n elements of a half / bfloat16 operand with element stride
// `stride` (0: one broadcast element) into `block`; returns the stride the
// float copy has (0 or 1).
static inline int64_t loom__widen_half(const uint16_t* in, int64_t stride,
                                       float* block, int64_t n) {
  if (stride == 0) {
    block[0] = loom__half_to_float(in[0]);
    return 0;
  }
  if (stride == 1) {
    loom__half_to_float_n(in, block, n);
  } else {
    for (int64_t i = 0; i < n; ++i)
      block[i] = loom__half_to_float(in[i * stride]);
  }
  return 1;
}

static inline int64_t loom__widen_bfloat16(const uint16_t* in, int64_t stride,
                                           float* block, int64_t n) {
  if (stride == 0) {
    block[0] = loom__bfloat16_to_float(in[0]);
    return 0;
  }
  if (stride == 1) {
    loom__bfloat16_to_float_n(in, block, n);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      block[i] = loom__bfloat16_to_float(in[i * stride]);
    }
  }
  return 1;
}

#endif  // LOOM_KERNELS_ELEMENTWISE_HALF_H_
