// The dtype table: sizes, names and classes, indexed by the TF_DataType
// value.

#include "loom/dtype.h"

#include <string.h>

enum {
  kFloating = 1 << 0,
  kInteger = 1 << 1,
  kUnsigned = 1 << 2,
  kComplex = 1 << 3,
  kQuantized = 1 << 4,
};

typedef struct dtype_info_t {
  const char* name;
  const char* short_name;
  unsigned char size;
  unsigned char classes;
} dtype_info_t;

static const dtype_info_t kInfo[LOOM_DTYPE_COUNT] = {
    [LOOM_DTYPE_INVALID] = {"invalid", "invalid", 0, 0},
    [LOOM_DTYPE_FLOAT] = {"float", "f32", 4, kFloating},
    [LOOM_DTYPE_DOUBLE] = {"double", "f64", 8, kFloating},
    [LOOM_DTYPE_INT32] = {"int32", "i32", 4, kInteger},
    [LOOM_DTYPE_UINT8] = {"uint8", "ui8", 1, kInteger | kUnsigned},
    [LOOM_DTYPE_INT16] = {"int16", "i16", 2, kInteger},
    [LOOM_DTYPE_INT8] = {"int8", "i8", 1, kInteger},
    [LOOM_DTYPE_STRING] = {"string", "string", 0, 0},
    [LOOM_DTYPE_COMPLEX64] = {"complex64", "complex64", 8, kComplex},
    [LOOM_DTYPE_INT64] = {"int64", "i64", 8, kInteger},
    [LOOM_DTYPE_BOOL] = {"bool", "i1", 1, 0},
    [LOOM_DTYPE_QINT8] = {"qint8", "qi8", 1, kQuantized},
    [LOOM_DTYPE_QUINT8] = {"quint8", "qui8", 1, kQuantized | kUnsigned},
    [LOOM_DTYPE_QINT32] = {"qint32", "qi32", 4, kQuantized},
    [LOOM_DTYPE_BFLOAT16] = {"bfloat16", "bf16", 2, kFloating},
    [LOOM_DTYPE_QINT16] = {"qint16", "qi16", 2, kQuantized},
    [LOOM_DTYPE_QUINT16] = {"quint16", "qui16", 2, kQuantized | kUnsigned},
    [LOOM_DTYPE_UINT16] = {"uint16", "ui16", 2, kInteger | kUnsigned},
    [LOOM_DTYPE_COMPLEX128] = {"complex128", "complex128", 16, kComplex},
    [LOOM_DTYPE_HALF] = {"half", "f16", 2, kFloating},
    [LOOM_DTYPE_RESOURCE] = {"resource", "resource", 0, 0},
    [LOOM_DTYPE_VARIANT] = {"variant", "variant", 0, 0},
    [LOOM_DTYPE_UINT32] = {"uint32", "ui32", 4, kInteger | kUnsigned},
    [LOOM_DTYPE_UINT64] = {"uint64", "ui64", 8, kInteger | kUnsigned},
    [LOOM_DTYPE_FLOAT8_E5M2] = {"float8_e5m2", "f8E5M2", 1, kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3FN] = {"float8_e4m3fn", "f8E4M3FN", 1, kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3FNUZ] = {"float8_e4m3fnuz", "f8E4M3FNUZ", 1,
                                    kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3B11FNUZ] = {"float8_e4m3b11fnuz", "f8E4M3B11FNUZ", 1,
                                       kFloating},
    [LOOM_DTYPE_FLOAT8_E5M2FNUZ] = {"float8_e5m2fnuz", "f8E5M2FNUZ", 1,
                                    kFloating},
    [LOOM_DTYPE_INT4] = {"int4", "i4", 1, kInteger},
    [LOOM_DTYPE_UINT4] = {"uint4", "ui4", 1, kInteger | kUnsigned},
    [LOOM_DTYPE_INT2] = {"int2", "i2", 1, kInteger},
    [LOOM_DTYPE_UINT2] = {"uint2", "ui2", 1, kInteger | kUnsigned},
};

static const dtype_info_t* info(loom_dtype_t dtype) {
  if ((int)dtype <= 0 || (int)dtype >= LOOM_DTYPE_COUNT) return &kInfo[0];
  return &kInfo[dtype];
}

bool loom_dtype_is_valid(loom_dtype_t dtype) {
  return (int)dtype > 0 && (int)dtype < LOOM_DTYPE_COUNT;
}

size_t loom_dtype_size(loom_dtype_t dtype) {
  return info(dtype)->size;
}

const char* loom_dtype_name(loom_dtype_t dtype) {
  return info(dtype)->name;
}

const char* loom_dtype_short_name(loom_dtype_t dtype) {
  return info(dtype)->short_name;
}

loom_status_t loom_dtype_from_name(const char* name, loom_dtype_t* out_dtype) {
  if (!name || !out_dtype) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_dtype_from_name: %s is NULL",
                            !name ? "name" : "out_dtype");
  }
  *out_dtype = LOOM_DTYPE_INVALID;
  for (int i = 1; i < LOOM_DTYPE_COUNT; ++i) {
    if (strcmp(name, kInfo[i].name) == 0 ||
        strcmp(name, kInfo[i].short_name) == 0) {
      *out_dtype = (loom_dtype_t)i;
      return loom_ok_status();
    }
  }
  // TensorFlow's own aliases.
  if (strcmp(name, "float32") == 0) {
    *out_dtype = LOOM_DTYPE_FLOAT;
  } else if (strcmp(name, "float64") == 0) {
    *out_dtype = LOOM_DTYPE_DOUBLE;
  } else if (strcmp(name, "float16") == 0) {
    *out_dtype = LOOM_DTYPE_HALF;
  } else {
    return loom_make_status(LOOM_STATUS_NOT_FOUND, "unknown dtype '%s'", name);
  }
  return loom_ok_status();
}

bool loom_dtype_is_floating(loom_dtype_t dtype) {
  return info(dtype)->classes & kFloating;
}
bool loom_dtype_is_integer(loom_dtype_t dtype) {
  return info(dtype)->classes & kInteger;
}
bool loom_dtype_is_unsigned(loom_dtype_t dtype) {
  return info(dtype)->classes & kUnsigned;
}
bool loom_dtype_is_complex(loom_dtype_t dtype) {
  return info(dtype)->classes & kComplex;
}
bool loom_dtype_is_quantized(loom_dtype_t dtype) {
  return info(dtype)->classes & kQuantized;
}
