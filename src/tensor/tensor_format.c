// Printing host tensors in TFRT's form.

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loom/tensor.h"

#include "base/half.h"

enum { kMaxPrintedValues = 16 };

typedef struct text_t {
  char* buffer;
  size_t capacity;
  size_t length;
} text_t;

static void append(text_t* text, const char* format, ...)
    LOOM_PRINTF_FORMAT(2, 3);

static void append(text_t* text, const char* format, ...) {
  va_list args;
  va_start(args, format);
  size_t room =
      text->length < text->capacity ? text->capacity - text->length : 0;
  int written =
      vsnprintf(room ? text->buffer + text->length : NULL, room, format, args);
  va_end(args);
  if (written > 0) text->length += (size_t)written;
}

static void append_element(text_t* text, loom_dtype_t dtype,
                           const unsigned char* data, int64_t index) {
  size_t size = loom_dtype_size(dtype);
  const unsigned char* at = data + (size_t)index * size;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: {
      float v;
      memcpy(&v, at, sizeof(v));
      append(text, "%.6e", (double)v);
      break;
    }
    case LOOM_DTYPE_DOUBLE: {
      double v;
      memcpy(&v, at, sizeof(v));
      append(text, "%.6e", v);
      break;
    }
    case LOOM_DTYPE_HALF: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%.6e", (double)loom__half_to_float(v));
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      uint32_t bits = (uint32_t)v << 16;
      float f;
      memcpy(&f, &bits, sizeof(f));
      append(text, "%.6e", (double)f);
      break;
    }
    case LOOM_DTYPE_BOOL:
      append(text, "%d", at[0] ? 1 : 0);
      break;
    case LOOM_DTYPE_INT8:
      append(text, "%d", (int)(int8_t)at[0]);
      break;
    case LOOM_DTYPE_UINT8:
      append(text, "%u", (unsigned)at[0]);
      break;
    case LOOM_DTYPE_INT16: {
      int16_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%d", (int)v);
      break;
    }
    case LOOM_DTYPE_UINT16: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%u", (unsigned)v);
      break;
    }
    case LOOM_DTYPE_INT32: {
      int32_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%" PRId32, v);
      break;
    }
    case LOOM_DTYPE_UINT32: {
      uint32_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%" PRIu32, v);
      break;
    }
    case LOOM_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%" PRId64, v);
      break;
    }
    case LOOM_DTYPE_UINT64: {
      uint64_t v;
      memcpy(&v, at, sizeof(v));
      append(text, "%" PRIu64, v);
      break;
    }
    case LOOM_DTYPE_COMPLEX64: {
      float v[2];
      memcpy(v, at, sizeof(v));
      append(text, "(%.6e,%.6e)", (double)v[0], (double)v[1]);
      break;
    }
    case LOOM_DTYPE_COMPLEX128: {
      double v[2];
      memcpy(v, at, sizeof(v));
      append(text, "(%.6e,%.6e)", v[0], v[1]);
      break;
    }
    default: {
      append(text, "0x");
      for (size_t i = 0; i < size; ++i) append(text, "%02x", at[size - 1 - i]);
      break;
    }
  }
}

size_t loom_tensor_format(const loom_tensor_t* tensor, char* buffer,
                          size_t capacity) {
  text_t text = {
      .buffer = buffer, .capacity = buffer ? capacity : 0, .length = 0};
  if (text.capacity) buffer[0] = '\0';
  if (!tensor) {
    append(&text, "<null tensor>");
    return text.length;
  }
  char shape[LOOM_MAX_RANK * 22 + 16];
  loom_shape_format(loom_tensor_shape(tensor), shape, sizeof(shape));
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  int64_t count = loom_tensor_num_elements(tensor);
  switch (loom_tensor_kind(tensor)) {
    case LOOM_TENSOR_SCALAR:
      append(&text, "ScalarHostTensor dtype = %s, shape = %s, value = ",
             loom_dtype_short_name(dtype), shape);
      append_element(&text, dtype, loom_tensor_data(tensor), 0);
      return text.length;
    case LOOM_TENSOR_STRING:
      append(&text, "StringHostTensor shape = %s, values = [", shape);
      for (int64_t i = 0; i < count; ++i) {
        if (i == kMaxPrintedValues) {
          append(&text, ", ...");
          break;
        }
        const loom_tstring_t* s = loom_tensor_string_at(tensor, i);
        append(&text, "%s\"%.*s\"", i ? ", " : "", (int)loom_tstring_size(s),
               loom_tstring_data(s));
      }
      append(&text, "]");
      return text.length;
    case LOOM_TENSOR_DENSE:
    default:
      break;
  }
  append(&text, "DenseHostTensor dtype = %s, shape = %s, values = [",
         loom_dtype_short_name(dtype), shape);
  if (loom_dtype_size(dtype) == 0) {
    append(&text, "<%zu bytes>]", loom_tensor_byte_size(tensor));
    return text.length;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (i == kMaxPrintedValues) {
      append(&text, ", ...");
      break;
    }
    if (i) append(&text, ", ");
    append_element(&text, dtype, loom_tensor_data(tensor), i);
  }
  append(&text, "]");
  return text.length;
}
