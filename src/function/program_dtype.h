// The spellings of dtypes in programs, MLIR's and TFRT's: builtin types
// (i1, i32, si32, ui8, f16, bf16, f64, complex<f32>) and dialect types
// (!corert.string, !tf.qint8, ...). One table serves the parser's types,
// the kernel families named after a dtype (corert.create_dense_tensor.<T>,
// tfrt.constant.<T>) and the names printed for scalar values.

#ifndef LOOM_FUNCTION_PROGRAM_DTYPE_H_
#define LOOM_FUNCTION_PROGRAM_DTYPE_H_

#include <stdbool.h>
#include <stddef.h>

#include "loom/dtype.h"

typedef struct program_dtype_spelling_t {
  const char* name;
  loom_dtype_t dtype;
  // The spelling printed for the dtype; the others are accepted synonyms
  // (si32 for i32, !tf.string for !corert.string).
  bool canonical;
} program_dtype_spelling_t;

// Every spelling (*out_count of them).
const program_dtype_spelling_t* loom__program_dtype_spellings(
    size_t* out_count);

// The dtype spelled by the `length` bytes at `text`, or LOOM_DTYPE_INVALID.
loom_dtype_t loom__program_dtype_from_spelling(const char* text, size_t length);

// The canonical spelling of `dtype`, or NULL when programs cannot spell it.
const char* loom__program_dtype_spelling(loom_dtype_t dtype);

#endif  // LOOM_FUNCTION_PROGRAM_DTYPE_H_
