// Element access for the tfrt_test ops (tfrt_test_elements.h): the dtypes
// they support, reading and writing an element as a double, half and
// bfloat16 conversions.

#include "tfrt_test_elements.h"

#include <string.h>

bool loom__tfrt_test_is_supported(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE ||
         dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_INT64 ||
         dtype == LOOM_DTYPE_BOOL || dtype == LOOM_DTYPE_INT8 ||
         dtype == LOOM_DTYPE_INT16 || dtype == LOOM_DTYPE_UINT8 ||
         dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16;
}

// float to IEEE half, rounding to nearest even.
static uint16_t to_half(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000;
  int32_t exponent = (int32_t)((bits >> 23) & 0xff) - 112;
  uint32_t mantissa = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff) {
    return (uint16_t)(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  }
  if (exponent >= 31) return (uint16_t)(sign | 0x7c00);
  if (exponent <= 0) {
    if (exponent < -10) return (uint16_t)sign;
    mantissa |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exponent);
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
  return (uint16_t)half;
}

static float from_half(uint16_t half) {
  uint32_t sign = (uint32_t)(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (!mantissa) {
    bits = sign;
  } else {
    // Subnormal: normalize.
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      exponent--;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

// float to bfloat16, rounding to nearest even (NaN stays NaN).
static uint16_t to_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000) return (uint16_t)((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return (uint16_t)(bits >> 16);
}

static float from_bf16(uint16_t value) {
  uint32_t bits = (uint32_t)value << 16;
  float f;
  memcpy(&f, &bits, sizeof(f));
  return f;
}

// Element i of a dense or scalar tensor (a scalar tensor repeats its value).
double loom__tfrt_test_get(const loom_tensor_t* tensor, int64_t i) {
  const void* data = loom_tensor_data(tensor);
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR) i = 0;
  switch (loom_tensor_dtype(tensor)) {
    case LOOM_DTYPE_FLOAT:
      return ((const float*)data)[i];
    case LOOM_DTYPE_DOUBLE:
      return ((const double*)data)[i];
    case LOOM_DTYPE_INT32:
      return ((const int32_t*)data)[i];
    case LOOM_DTYPE_INT64:
      return (double)((const int64_t*)data)[i];
    case LOOM_DTYPE_INT16:
      return ((const int16_t*)data)[i];
    case LOOM_DTYPE_INT8:
      return ((const int8_t*)data)[i];
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_BOOL:
      return ((const uint8_t*)data)[i];
    case LOOM_DTYPE_HALF:
      return from_half(((const uint16_t*)data)[i]);
    case LOOM_DTYPE_BFLOAT16:
      return from_bf16(((const uint16_t*)data)[i]);
    default:
      return 0;
  }
}

void loom__tfrt_test_put(loom_dtype_t dtype, void* data, int64_t i,
                         double value) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      ((float*)data)[i] = (float)value;
      break;
    case LOOM_DTYPE_DOUBLE:
      ((double*)data)[i] = value;
      break;
    case LOOM_DTYPE_INT32:
      ((int32_t*)data)[i] = (int32_t)value;
      break;
    case LOOM_DTYPE_INT64:
      ((int64_t*)data)[i] = (int64_t)value;
      break;
    case LOOM_DTYPE_INT16:
      ((int16_t*)data)[i] = (int16_t)value;
      break;
    case LOOM_DTYPE_INT8:
      ((int8_t*)data)[i] = (int8_t)value;
      break;
    case LOOM_DTYPE_UINT8:
      ((uint8_t*)data)[i] = (uint8_t)value;
      break;
    case LOOM_DTYPE_BOOL:
      ((uint8_t*)data)[i] = value != 0;
      break;
    case LOOM_DTYPE_HALF:
      ((uint16_t*)data)[i] = to_half((float)value);
      break;
    case LOOM_DTYPE_BFLOAT16:
      ((uint16_t*)data)[i] = to_bf16((float)value);
      break;
    default:
      break;
  }
}

// Integer add that wraps instead of overflowing.
double loom__tfrt_test_add_values(loom_dtype_t dtype, double a, double b) {
  if (dtype == LOOM_DTYPE_INT32) {
    return (double)(int32_t)((uint32_t)(int32_t)a + (uint32_t)(int32_t)b);
  }
  if (dtype == LOOM_DTYPE_INT64) {
    return (double)(int64_t)((uint64_t)(int64_t)a + (uint64_t)(int64_t)b);
  }
  return a + b;
}
