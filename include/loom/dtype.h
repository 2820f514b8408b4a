// loom_dtype_t: element types. The values equal TensorFlow's TF_DataType,
// so conversion between the two is a cast.

#ifndef LOOM_DTYPE_H_
#define LOOM_DTYPE_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/macros.h"
#include "loom/status.h"

LOOM_EXTERN_C_BEGIN

typedef enum loom_dtype_t {
  LOOM_DTYPE_INVALID = 0,
  LOOM_DTYPE_FLOAT = 1,
  LOOM_DTYPE_DOUBLE = 2,
  LOOM_DTYPE_INT32 = 3,
  LOOM_DTYPE_UINT8 = 4,
  LOOM_DTYPE_INT16 = 5,
  LOOM_DTYPE_INT8 = 6,
  LOOM_DTYPE_STRING = 7,
  LOOM_DTYPE_COMPLEX64 = 8,
  LOOM_DTYPE_INT64 = 9,
  LOOM_DTYPE_BOOL = 10,
  LOOM_DTYPE_QINT8 = 11,
  LOOM_DTYPE_QUINT8 = 12,
  LOOM_DTYPE_QINT32 = 13,
  LOOM_DTYPE_BFLOAT16 = 14,
  LOOM_DTYPE_QINT16 = 15,
  LOOM_DTYPE_QUINT16 = 16,
  LOOM_DTYPE_UINT16 = 17,
  LOOM_DTYPE_COMPLEX128 = 18,
  LOOM_DTYPE_HALF = 19,
  LOOM_DTYPE_RESOURCE = 20,
  LOOM_DTYPE_VARIANT = 21,
  LOOM_DTYPE_UINT32 = 22,
  LOOM_DTYPE_UINT64 = 23,
  LOOM_DTYPE_FLOAT8_E5M2 = 24,
  LOOM_DTYPE_FLOAT8_E4M3FN = 25,
  LOOM_DTYPE_FLOAT8_E4M3FNUZ = 26,
  LOOM_DTYPE_FLOAT8_E4M3B11FNUZ = 27,
  LOOM_DTYPE_FLOAT8_E5M2FNUZ = 28,
  LOOM_DTYPE_INT4 = 29,
  LOOM_DTYPE_UINT4 = 30,
  LOOM_DTYPE_INT2 = 31,
  LOOM_DTYPE_UINT2 = 32,
} loom_dtype_t;

// One past the largest value.
#define LOOM_DTYPE_COUNT 33

// True for every named value above except INVALID.
LOOM_API bool loom_dtype_is_valid(loom_dtype_t dtype);

// Bytes per element as TensorFlow's TF_DataTypeSize counts them: 0 for
// STRING, RESOURCE, VARIANT and invalid values; 1 for the 4- and 2-bit
// integer types (stored one per byte).
LOOM_API size_t loom_dtype_size(loom_dtype_t dtype);

// TensorFlow's name ("float", "int32", "bfloat16", ...); "invalid" for
// values outside the enum.
LOOM_API const char* loom_dtype_name(loom_dtype_t dtype);

// MLIR / TFRT's name ("f32", "i32", "ui8", "i1", "bf16", "complex64",
// "string", ...); "invalid" for values outside the enum.
LOOM_API const char* loom_dtype_short_name(loom_dtype_t dtype);

// Parses either name form. NOT_FOUND (naming the text) when unknown.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_dtype_from_name(const char* name, loom_dtype_t* out_dtype);

// Classes used by type constraints ("numbertype", "realnumbertype", ...).
LOOM_API bool loom_dtype_is_floating(loom_dtype_t dtype);  // incl. f16/bf16/f8
LOOM_API bool loom_dtype_is_integer(loom_dtype_t dtype);   // signed+unsigned
LOOM_API bool loom_dtype_is_unsigned(loom_dtype_t dtype);
LOOM_API bool loom_dtype_is_complex(loom_dtype_t dtype);
LOOM_API bool loom_dtype_is_quantized(loom_dtype_t dtype);

LOOM_EXTERN_C_END

#endif  // LOOM_DTYPE_H_
