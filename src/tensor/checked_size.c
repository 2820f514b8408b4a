// The out-of-line parts of checked_size.h: the window arithmetic of
// convolutions and pools, and the overflow message.

#include "tensor/checked_size.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "base/text.h"

// (span + stride) / stride, TensorFlow's count of windows over an input
// `span` elements longer than the window (negative: shorter), written so
// that no stride, however large, overflows it: negative when the window
// does not fit even once.
static int64_t windows_in_span(int64_t span, int64_t stride) {
  return span >= 0 ? span / stride + 1 : (span + stride) / stride;
}

bool loom__window_output_size(int64_t input, int64_t window, int64_t dilation,
                              int64_t stride, loom_window_padding_t padding,
                              int64_t explicit_before, int64_t explicit_after,
                              int64_t* out_size, int64_t* pad_before) {
  int64_t extent;
  if (input < 0 || stride < 1 ||
      !loom__window_extent(window, dilation, &extent)) {
    return false;
  }
  int64_t size, before = 0;
  switch (padding) {
    case LOOM_WINDOW_VALID: {
      size = windows_in_span(input - extent, stride);
      break;
    }
    case LOOM_WINDOW_SAME: {
      // ceil(input / stride), padded so the last window ends at the input's
      // end; the odd element of padding goes after.
      size = input / stride + (input % stride != 0);
      int64_t covered, needed;
      if (size > 0) {
        if (!loom__size_mul(size - 1, stride, &covered) ||
            !loom__size_add(covered, extent, &covered) ||
            !loom__size_sub(covered, input, &needed)) {
          return false;
        }
        before = needed > 0 ? needed / 2 : 0;
      }
      break;
    }
    case LOOM_WINDOW_EXPLICIT: {
      int64_t span;
      if (explicit_before < 0 || explicit_after < 0 ||
          !loom__size_add(input, explicit_before, &span) ||
          !loom__size_add(span, explicit_after, &span) ||
          !loom__size_sub(span, extent, &span)) {
        return false;
      }
      size = windows_in_span(span, stride);
      before = explicit_before;
      break;
    }
    default:
      return false;
  }
  if (size < 0) return false;
  *out_size = size;
  if (pad_before) *pad_before = before;
  return true;
}

loom_status_t loom__size_overflow_error_at(const char* file, int line,
                                           const char* op, const char* argument,
                                           const char* format, ...) {
  char detail[256];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof(detail), format, args);
  va_end(args);
  return loom_status_make_at(LOOM_STATUS_INVALID_ARGUMENT, file, line,
                             "%s: %s %s: the size overflows int64", op,
                             argument, detail);
}

loom_status_t loom__size_product_checked_at(const char* file, int line,
                                            const char* op,
                                            const char* argument,
                                            const int64_t* dims, int n,
                                            const int64_t* quoted,
                                            int quoted_count, int64_t* out) {
  int64_t product;
  if (loom__size_product(dims, n, &product)) {
    if (out) *out = product;
    return loom_ok_status();
  }
  char text[256];
  return loom__size_overflow_error_at(
      file, line, op, argument, "%s",
      loom__format_int64s(quoted, quoted_count, text, sizeof(text)));
}

const char* loom__format_int64s(const int64_t* values, int n, char* buffer,
                                size_t capacity) {
  loom__text_t text = {.buffer = buffer, .capacity = capacity};
  loom__text_append(&text, "[");
  for (int i = 0; i < n; ++i) {
    loom__text_append(&text, "%s%" PRId64, i ? ", " : "", values[i]);
  }
  loom__text_append(&text, "]");
  // Cut text ends in "...": a reader sees that values are missing.
  if (text.length >= capacity && capacity >= 4) {
    snprintf(buffer + capacity - 4, 4, "...");
  }
  return buffer;
}
