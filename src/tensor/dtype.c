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
    [LOOM_DTYPE_INVALID] = {.name = "invalid",
                            .short_name = "invalid",
                            .size = 0,
                            .classes = 0},
    [LOOM_DTYPE_FLOAT] = {.name = "float",
                          .short_name = "f32",
                          .size = 4,
                          .classes = kFloating},
    [LOOM_DTYPE_DOUBLE] = {.name = "double",
                           .short_name = "f64",
                           .size = 8,
                           .classes = kFloating},
    [LOOM_DTYPE_INT32] = {.name = "int32",
                          .short_name = "i32",
                          .size = 4,
                          .classes = kInteger},
    [LOOM_DTYPE_UINT8] = {.name = "uint8",
                          .short_name = "ui8",
                          .size = 1,
                          .classes = kInteger | kUnsigned},
    [LOOM_DTYPE_INT16] = {.name = "int16",
                          .short_name = "i16",
                          .size = 2,
                          .classes = kInteger},
    [LOOM_DTYPE_INT8] = {.name = "int8",
                         .short_name = "i8",
                         .size = 1,
                         .classes = kInteger},
    [LOOM_DTYPE_STRING] = {.name = "string",
                           .short_name = "string",
                           .size = 0,
                           .classes = 0},
    [LOOM_DTYPE_COMPLEX64] = {.name = "complex64",
                              .short_name = "complex64",
                              .size = 8,
                              .classes = kComplex},
    [LOOM_DTYPE_INT64] = {.name = "int64",
                          .short_name = "i64",
                          .size = 8,
                          .classes = kInteger},
    [LOOM_DTYPE_BOOL] = {.name = "bool",
                         .short_name = "i1",
                         .size = 1,
                         .classes = 0},
    [LOOM_DTYPE_QINT8] = {.name = "qint8",
                          .short_name = "qi8",
                          .size = 1,
                          .classes = kQuantized},
    [LOOM_DTYPE_QUINT8] = {.name = "quint8",
                           .short_name = "qui8",
                           .size = 1,
                           .classes = kQuantized | kUnsigned},
    [LOOM_DTYPE_QINT32] = {.name = "qint32",
                           .short_name = "qi32",
                           .size = 4,
                           .classes = kQuantized},
    [LOOM_DTYPE_BFLOAT16] = {.name = "bfloat16",
                             .short_name = "bf16",
                             .size = 2,
                             .classes = kFloating},
    [LOOM_DTYPE_QINT16] = {.name = "qint16",
                           .short_name = "qi16",
                           .size = 2,
                           .classes = kQuantized},
    [LOOM_DTYPE_QUINT16] = {.name = "quint16",
                            .short_name = "qui16",
                            .size = 2,
                            .classes = kQuantized | kUnsigned},
    [LOOM_DTYPE_UINT16] = {.name = "uint16",
                           .short_name = "ui16",
                           .size = 2,
                           .classes = kInteger | kUnsigned},
    [LOOM_DTYPE_COMPLEX128] = {.name = "complex128",
                               .short_name = "complex128",
                               .size = 16,
                               .classes = kComplex},
    [LOOM_DTYPE_HALF] = {.name = "half",
                         .short_name = "f16",
                         .size = 2,
                         .classes = kFloating},
    [LOOM_DTYPE_RESOURCE] = {.name = "resource",
                             .short_name = "resource",
                             .size = 0,
                             .classes = 0},
    [LOOM_DTYPE_VARIANT] = {.name = "variant",
                            .short_name = "variant",
                            .size = 0,
                            .classes = 0},
    [LOOM_DTYPE_UINT32] = {.name = "uint32",
                           .short_name = "ui32",
                           .size = 4,
                           .classes = kInteger | kUnsigned},
    [LOOM_DTYPE_UINT64] = {.name = "uint64",
                           .short_name = "ui64",
                           .size = 8,
                           .classes = kInteger | kUnsigned},
    [LOOM_DTYPE_FLOAT8_E5M2] = {.name = "float8_e5m2",
                                .short_name = "f8E5M2",
                                .size = 1,
                                .classes = kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3FN] = {.name = "float8_e4m3fn",
                                  .short_name = "f8E4M3FN",
                                  .size = 1,
                                  .classes = kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3FNUZ] = {.name = "float8_e4m3fnuz",
                                    .short_name = "f8E4M3FNUZ",
                                    .size = 1,
                                    .classes = kFloating},
    [LOOM_DTYPE_FLOAT8_E4M3B11FNUZ] = {.name = "float8_e4m3b11fnuz",
                                       .short_name = "f8E4M3B11FNUZ",
                                       .size = 1,
                                       .classes = kFloating},
    [LOOM_DTYPE_FLOAT8_E5M2FNUZ] = {.name = "float8_e5m2fnuz",
                                    .short_name = "f8E5M2FNUZ",
                                    .size = 1,
                                    .classes = kFloating},
    [LOOM_DTYPE_INT4] = {.name = "int4",
                         .short_name = "i4",
                         .size = 1,
                         .classes = kInteger},
    [LOOM_DTYPE_UINT4] = {.name = "uint4",
                          .short_name = "ui4",
                          .size = 1,
                          .classes = kInteger | kUnsigned},
    [LOOM_DTYPE_INT2] = {.name = "int2",
                         .short_name = "i2",
                         .size = 1,
                         .classes = kInteger},
    [LOOM_DTYPE_UINT2] = {.name = "uint2",
                          .short_name = "ui2",
                          .size = 1,
                          .classes = kInteger | kUnsigned},
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
