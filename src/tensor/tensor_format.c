// Printing host tensors in TFRT's form.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "loom/tensor.h"

#include "base/half.h"
#include "base/text.h"

enum { kMaxPrintedValues = 16 };

static void append_element(loom__text_t* text, loom_dtype_t dtype,
                           const unsigned char* data, int64_t index) {
  size_t size = loom_dtype_size(dtype);
  const unsigned char* at = data + (size_t)index * size;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: {
      float v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%.6e", (double)v);
      break;
    }
    case LOOM_DTYPE_DOUBLE: {
      double v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%.6e", v);
      break;
    }
    case LOOM_DTYPE_HALF: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%.6e", (double)loom__half_to_float(v));
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      uint32_t bits = (uint32_t)v << 16;
      float f;
      memcpy(&f, &bits, sizeof(f));
      loom__text_append(text, "%.6e", (double)f);
      break;
    }
    case LOOM_DTYPE_BOOL:
      loom__text_append(text, "%d", at[0] ? 1 : 0);
      break;
    case LOOM_DTYPE_INT8:
      loom__text_append(text, "%d", (int)(int8_t)at[0]);
      break;
    case LOOM_DTYPE_UINT8:
      loom__text_append(text, "%u", (unsigned)at[0]);
      break;
    case LOOM_DTYPE_INT16: {
      int16_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%d", (int)v);
      break;
    }
    case LOOM_DTYPE_UINT16: {
      uint16_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%u", (unsigned)v);
      break;
    }
    case LOOM_DTYPE_INT32: {
      int32_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%" PRId32, v);
      break;
    }
    case LOOM_DTYPE_UINT32: {
      uint32_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%" PRIu32, v);
      break;
    }
    case LOOM_DTYPE_INT64: {
      int64_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%" PRId64, v);
      break;
    }
    case LOOM_DTYPE_UINT64: {
      uint64_t v;
      memcpy(&v, at, sizeof(v));
      loom__text_append(text, "%" PRIu64, v);
      break;
    }
    case LOOM_DTYPE_COMPLEX64: {
      float v[2];
      memcpy(v, at, sizeof(v));
      loom__text_append(text, "(%.6e,%.6e)", (double)v[0], (double)v[1]);
      break;
    }
    case LOOM_DTYPE_COMPLEX128: {
      double v[2];
      memcpy(v, at, sizeof(v));
      loom__text_append(text, "(%.6e,%.6e)", v[0], v[1]);
      break;
    }
    default: {
      loom__text_append(text, "0x");
      for (size_t i = 0; i < size; ++i)
        loom__text_append(text, "%02x", at[size - 1 - i]);
      break;
    }
  }
}

size_t loom_tensor_format(const loom_tensor_t* tensor, char* buffer,
                          size_t capacity) {
  loom__text_t text = {
      .buffer = buffer, .capacity = buffer ? capacity : 0, .length = 0};
  if (text.capacity) buffer[0] = '\0';
  if (!tensor) {
    loom__text_append(&text, "<null tensor>");
    return text.length;
  }
  char shape[LOOM_SHAPE_FORMAT_MAX];
  loom_shape_format(loom_tensor_shape(tensor), shape, sizeof(shape));
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  int64_t count = loom_tensor_num_elements(tensor);
  switch (loom_tensor_kind(tensor)) {
    case LOOM_TENSOR_SCALAR:
      loom__text_append(&text,
                        "ScalarHostTensor dtype = %s, shape = %s, value = ",
                        loom_dtype_short_name(dtype), shape);
      append_element(&text, dtype, loom_tensor_data(tensor), 0);
      return text.length;
    case LOOM_TENSOR_STRING:
      loom__text_append(&text, "StringHostTensor shape = %s, values = [",
                        shape);
      for (int64_t i = 0; i < count; ++i) {
        if (i == kMaxPrintedValues) {
          loom__text_append(&text, ", ...");
          break;
        }
        const loom_tstring_t* s = loom_tensor_string_at(tensor, i);
        loom__text_append(&text, "%s\"%.*s\"", i ? ", " : "",
                          (int)loom_tstring_size(s), loom_tstring_data(s));
      }
      loom__text_append(&text, "]");
      return text.length;
    case LOOM_TENSOR_DENSE:
    default:
      break;
  }
  loom__text_append(&text, "DenseHostTensor dtype = %s, shape = %s, values = [",
                    loom_dtype_short_name(dtype), shape);
  if (loom_dtype_size(dtype) == 0) {
    loom__text_append(&text, "<%zu bytes>]", loom_tensor_byte_size(tensor));
    return text.length;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (i == kMaxPrintedValues) {
      loom__text_append(&text, ", ...");
      break;
    }
    if (i) loom__text_append(&text, ", ");
    append_element(&text, dtype, loom_tensor_data(tensor), i);
  }
  loom__text_append(&text, "]");
  return text.length;
}
