// The dtype spelling table (program_dtype.h).

#include "function/program_dtype.h"

#include <string.h>

static const program_dtype_spelling_t kSpellings[] = {
    {.name = "i1", .dtype = LOOM_DTYPE_BOOL, .canonical = true},
    {.name = "i8", .dtype = LOOM_DTYPE_INT8, .canonical = true},
    {.name = "si8", .dtype = LOOM_DTYPE_INT8},
    {.name = "i16", .dtype = LOOM_DTYPE_INT16, .canonical = true},
    {.name = "si16", .dtype = LOOM_DTYPE_INT16},
    {.name = "i32", .dtype = LOOM_DTYPE_INT32, .canonical = true},
    {.name = "si32", .dtype = LOOM_DTYPE_INT32},
    {.name = "i64", .dtype = LOOM_DTYPE_INT64, .canonical = true},
    {.name = "si64", .dtype = LOOM_DTYPE_INT64},
    {.name = "ui8", .dtype = LOOM_DTYPE_UINT8, .canonical = true},
    {.name = "ui16", .dtype = LOOM_DTYPE_UINT16, .canonical = true},
    {.name = "ui32", .dtype = LOOM_DTYPE_UINT32, .canonical = true},
    {.name = "ui64", .dtype = LOOM_DTYPE_UINT64, .canonical = true},
    {.name = "f16", .dtype = LOOM_DTYPE_HALF, .canonical = true},
    {.name = "bf16", .dtype = LOOM_DTYPE_BFLOAT16, .canonical = true},
    {.name = "f32", .dtype = LOOM_DTYPE_FLOAT, .canonical = true},
    {.name = "f64", .dtype = LOOM_DTYPE_DOUBLE, .canonical = true},
    {.name = "complex<f32>", .dtype = LOOM_DTYPE_COMPLEX64, .canonical = true},
    {.name = "complex<f64>", .dtype = LOOM_DTYPE_COMPLEX128, .canonical = true},
    {.name = "!corert.string", .dtype = LOOM_DTYPE_STRING, .canonical = true},
    {.name = "!tf.string", .dtype = LOOM_DTYPE_STRING},
    {.name = "!tfrt.string", .dtype = LOOM_DTYPE_STRING},
    {.name = "!corert.quint8", .dtype = LOOM_DTYPE_QUINT8, .canonical = true},
    {.name = "!corert.quint16", .dtype = LOOM_DTYPE_QUINT16, .canonical = true},
    {.name = "!corert.qint8", .dtype = LOOM_DTYPE_QINT8, .canonical = true},
    {.name = "!corert.qint16", .dtype = LOOM_DTYPE_QINT16, .canonical = true},
    {.name = "!corert.qint32", .dtype = LOOM_DTYPE_QINT32, .canonical = true},
    {.name = "!tf.quint8", .dtype = LOOM_DTYPE_QUINT8},
    {.name = "!tf.quint16", .dtype = LOOM_DTYPE_QUINT16},
    {.name = "!tf.qint8", .dtype = LOOM_DTYPE_QINT8},
    {.name = "!tf.qint16", .dtype = LOOM_DTYPE_QINT16},
    {.name = "!tf.qint32", .dtype = LOOM_DTYPE_QINT32},
};

enum { kNumSpellings = sizeof(kSpellings) / sizeof(kSpellings[0]) };

const program_dtype_spelling_t* loom__program_dtype_spellings(
    size_t* out_count) {
  *out_count = kNumSpellings;
  return kSpellings;
}

loom_dtype_t loom__program_dtype_from_spelling(const char* text,
                                               size_t length) {
  for (size_t i = 0; i < kNumSpellings; ++i) {
    if (strlen(kSpellings[i].name) == length &&
        memcmp(kSpellings[i].name, text, length) == 0) {
      return kSpellings[i].dtype;
    }
  }
  return LOOM_DTYPE_INVALID;
}

const char* loom__program_dtype_spelling(loom_dtype_t dtype) {
  for (size_t i = 0; i < kNumSpellings; ++i) {
    if (kSpellings[i].canonical && kSpellings[i].dtype == dtype) {
      return kSpellings[i].name;
    }
  }
  return NULL;
}
