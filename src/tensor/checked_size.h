// Checked size arithmetic: the one way shape functions and kernel plans
// compute element counts, byte sizes, offsets and window sizes. User
// values (a Reshape target, a padding, a stride) reach these sums and
// products unfiltered, so a wrap is a wrong shape, a short buffer or a
// division by zero; with these helpers it is an INVALID_ARGUMENT that names
// the op, the argument and the values instead.
//
// Each helper returns true when the result is exact and fits int64_t (and,
// for sizes, is not negative), false otherwise; the caller turns false into
// loom__size_overflow_error(...). They inline to the compiler's overflow
// builtins: one instruction and a branch on the fast path.

#ifndef LOOM_TENSOR_CHECKED_SIZE_H_
#define LOOM_TENSOR_CHECKED_SIZE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/macros.h"
#include "loom/status.h"

// *out = a * b.
static inline LOOM_MUST_USE_RESULT bool loom__size_mul(int64_t a, int64_t b,
                                                       int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// *out = a + b.
static inline LOOM_MUST_USE_RESULT bool loom__size_add(int64_t a, int64_t b,
                                                       int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// *out = a - b.
static inline LOOM_MUST_USE_RESULT bool loom__size_sub(int64_t a, int64_t b,
                                                       int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}

// *out = dims[0] * ... * dims[n - 1] (1 for n == 0). Every dim must be
// >= 0. A zero dim makes the product 0 wherever it sits, even after dims
// whose partial product alone would overflow, as TensorFlow counts the
// elements of [2^62, 4, 0].
static inline LOOM_MUST_USE_RESULT bool loom__size_product(const int64_t* dims,
                                                           int n,
                                                           int64_t* out) {
  int64_t product = 1;
  bool overflow = false;
  for (int i = 0; i < n; ++i) {
    if (dims[i] < 0) return false;
    if (dims[i] == 0) {
      for (int j = i + 1; j < n; ++j) {
        if (dims[j] < 0) return false;
      }
      *out = 0;
      return true;
    }
    overflow |= __builtin_mul_overflow(product, dims[i], &product);
  }
  *out = product;
  return !overflow;
}

// *out = values[0] + ... + values[n - 1], each >= 0.
static inline LOOM_MUST_USE_RESULT bool loom__size_sum(const int64_t* values,
                                                       int n, int64_t* out) {
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    if (values[i] < 0 || __builtin_add_overflow(sum, values[i], &sum)) {
      return false;
    }
  }
  *out = sum;
  return true;
}

// count * element_size as a byte count that fits size_t (and int64_t, so
// offsets computed from it stay signed-safe).
static inline LOOM_MUST_USE_RESULT bool loom__size_bytes(int64_t count,
                                                         size_t element_size,
                                                         size_t* out) {
  int64_t bytes;
  if (count < 0 || element_size > (size_t)INT64_MAX ||
      __builtin_mul_overflow(count, (int64_t)element_size, &bytes)) {
    return false;
  }
  *out = (size_t)bytes;
  return (int64_t)*out == bytes;
}

// The extent a dilated window covers: (window - 1) * dilation + 1, for
// window >= 1 and dilation >= 1.
static inline LOOM_MUST_USE_RESULT bool loom__window_extent(int64_t window,
                                                            int64_t dilation,
                                                            int64_t* out) {
  int64_t span;
  return window >= 1 && dilation >= 1 &&
         !__builtin_mul_overflow(window - 1, dilation, &span) &&
         !__builtin_add_overflow(span, 1, out);
}

// How a window sweeps its input, as TensorFlow's "VALID" and "SAME"
// paddings and the explicit paddings of "EXPLICIT".
typedef enum loom_window_padding_t {
  LOOM_WINDOW_VALID = 0,
  LOOM_WINDOW_SAME = 1,
  LOOM_WINDOW_EXPLICIT = 2,
} loom_window_padding_t;

// The output size of a window of `window` elements, dilated by `dilation`
// and moved by `stride`, over `input` elements, and the padding it takes
// before the first element (*pad_before; may be NULL). For EXPLICIT,
// pad_before and pad_after are the user's (>= 0); for VALID and SAME they
// are ignored. Requires input >= 0 and window, dilation, stride >= 1.
// Follows TensorFlow's GetWindowedOutputSizeVerbose: VALID gives
// ceil((input - extent + 1) / stride) and is an error (false) when the
// window does not fit; SAME gives ceil(input / stride).
LOOM_MUST_USE_RESULT bool loom__window_output_size(
    int64_t input, int64_t window, int64_t dilation, int64_t stride,
    loom_window_padding_t padding, int64_t explicit_before,
    int64_t explicit_after, int64_t* out_size, int64_t* pad_before);

// INVALID_ARGUMENT "<op>: <argument> <detail>: the size overflows int64"
// (detail is a printf format for the values, e.g. "[%lld, %lld]"). Records
// the caller's location.
#define loom__size_overflow_error(op, argument, ...)                 \
  loom__size_overflow_error_at(__FILE__, __LINE__, (op), (argument), \
                               __VA_ARGS__)

LOOM_MUST_USE_RESULT loom_status_t loom__size_overflow_error_at(
    const char* file, int line, const char* op, const char* argument,
    const char* format, ...) LOOM_PRINTF_FORMAT(5, 6);

// *out = dims[0] * ... * dims[n - 1] as loom__size_product; when that
// fails, INVALID_ARGUMENT "<op>: <argument> [d0, d1, ...]: the size
// overflows int64" quoting the dims. `out` may be NULL (only the check).
// Records the caller's location.
#define loom__size_product_checked(op, argument, dims, n, out)                \
  loom__size_product_checked_at(__FILE__, __LINE__, (op), (argument), (dims), \
                                (n), (dims), (n), (out))

// As loom__size_product_checked, but the message quotes quoted[0,
// quoted_count), the user's values the dims were computed from (a Tile's
// multiples rather than its output shape).
#define loom__size_product_checked_quoting(op, argument, dims, n, quoted,     \
                                           quoted_count, out)                 \
  loom__size_product_checked_at(__FILE__, __LINE__, (op), (argument), (dims), \
                                (n), (quoted), (quoted_count), (out))

LOOM_MUST_USE_RESULT loom_status_t loom__size_product_checked_at(
    const char* file, int line, const char* op, const char* argument,
    const int64_t* dims, int n, const int64_t* quoted, int quoted_count,
    int64_t* out);

// Formats dims[0, n) as "[a, b, c]" into buffer (cut with "..." beyond
// capacity), for the values an overflow message quotes. Returns buffer.
const char* loom__format_int64s(const int64_t* values, int n, char* buffer,
                                size_t capacity);

#endif  // LOOM_TENSOR_CHECKED_SIZE_H_
