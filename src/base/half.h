// 16-bit floats (IEEE half and bfloat16) to and from float, for kernels
// that store them and compute in float, and for printing. Rounding is to
// nearest even; NaN stays NaN; overflow to half gives infinity.

#ifndef LOOM_BASE_HALF_H_
#define LOOM_BASE_HALF_H_

#include <stdint.h>
#include <string.h>

static inline uint32_t loom__float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static inline float loom__bits_float(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static inline float loom__half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    return loom__bits_float(sign | 0x7f800000u | (mantissa << 13));
  }
  return loom__bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static inline uint16_t loom__float_to_half(float value) {
  uint32_t bits = loom__float_bits(value);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {  // inf or NaN (keep NaN quiet and nonzero)
    return (uint16_t)(sign | 0x7c00 | (magnitude > 0x7f800000u ? 0x200 : 0));
  }
  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00);  // overflow
  if (magnitude < 0x38800000u) {
    // Subnormal or zero in half: round magnitude * 2^24 to an integer.
    float scaled = loom__bits_float(magnitude) * 16777216.0f;
    // Adding 2^23 rounds to nearest even in float arithmetic.
    uint32_t rounded = loom__float_bits(scaled + 8388608.0f) - 0x4b000000u;
    return (uint16_t)(sign | rounded);
  }
  // Normal: rebias, then round the 13 dropped bits to nearest even.
  uint32_t half = magnitude - 0x38000000u;
  uint32_t round = 0xfff + ((half >> 13) & 1);
  return (uint16_t)(sign | ((half + round) >> 13));
}

static inline float loom__bfloat16_to_float(uint16_t b) {
  return loom__bits_float((uint32_t)b << 16);
}

static inline uint16_t loom__float_to_bfloat16(float value) {
  uint32_t bits = loom__float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return (uint16_t)((bits >> 16) | 0x40);  // NaN stays NaN
  }
  uint32_t round = 0x7fff + ((bits >> 16) & 1);
  return (uint16_t)((bits + round) >> 16);
}

#endif  // LOOM_BASE_HALF_H_
