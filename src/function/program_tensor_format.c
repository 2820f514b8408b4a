// Printing tensors as TFRT's programs print them (corert.print_tensorhandle):
// Loom's host tensor text, except that f16 and bf16 values are their bits,
// `fp16(15360)` and `bf16(16256)`, as TFRT's placeholder types print, that
// the unsigned dtypes are named as TFRT names them (u8, u16, u32, u64), and
// that a dense tensor of more than 16 elements ends as TFRT's
// DenseHostTensor::Print ends it: `, ... ]`.

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "function/program_executor.h"
#include "loom/program_kernel.h"
#include "loom/tensor.h"

enum { kMaxPrintedValues = 16 };  // as loom_tensor_format and TFRT

// snprintf at *length; *length counts what did not fit too.
static void append(char* buffer, size_t capacity, size_t* length,
                   const char* format, ...) LOOM_PRINTF_FORMAT(4, 5);
static void append(char* buffer, size_t capacity, size_t* length,
                   const char* format, ...) {
  va_list args;
  va_start(args, format);
  size_t at = *length < capacity ? *length : capacity;
  int written = vsnprintf(buffer ? buffer + at : NULL,
                          buffer ? capacity - at : 0, format, args);
  va_end(args);
  if (written > 0) *length += (size_t)written;
}

static bool is_unsigned(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_UINT8 || dtype == LOOM_DTYPE_UINT16 ||
         dtype == LOOM_DTYPE_UINT32 || dtype == LOOM_DTYPE_UINT64;
}

// loom_tensor_format's text with TFRT's names of the unsigned dtypes (u8,
// not ui8) and TFRT's end of a truncated list of values (`, ... ]`).
static size_t format_tfrt(const loom_tensor_t* tensor, char* buffer,
                          size_t capacity) {
  size_t length = loom_tensor_format(tensor, NULL, 0);
  char* text = NULL;
  // One byte more: the space TFRT puts before the closing bracket.
  loom_status_t status = loom_allocator_malloc(loom_allocator_default(),
                                               length + 2, (void**)&text);
  if (status) {
    // Out of memory: Loom's text rather than nothing.
    loom_status_free(status);
    return loom_tensor_format(tensor, buffer, capacity);
  }
  loom_tensor_format(tensor, text, length + 1);
  char* name = strstr(text, "dtype = ui");
  if (name) {
    memmove(name + 9, name + 10, strlen(name + 10) + 1);
    length--;
  }
  static const char kTruncated[] = ", ...]";
  size_t tail = sizeof(kTruncated) - 1;
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_DENSE && length >= tail &&
      strcmp(text + length - tail, kTruncated) == 0) {
    memcpy(text + length - 1, " ]", 3);
    length++;
  }
  if (buffer && capacity) {
    size_t copied = length < capacity - 1 ? length : capacity - 1;
    memcpy(buffer, text, copied);
    buffer[copied] = '\0';
  }
  loom_allocator_free(loom_allocator_default(), text);
  return length;
}

size_t loom_program_format_tensor(const loom_tensor_t* tensor, char* buffer,
                                  size_t capacity) {
  loom_dtype_t dtype = tensor ? loom_tensor_dtype(tensor) : LOOM_DTYPE_INVALID;
  loom_tensor_kind_t kind =
      tensor ? loom_tensor_kind(tensor) : LOOM_TENSOR_DENSE;
  if (kind != LOOM_TENSOR_DENSE && kind != LOOM_TENSOR_SCALAR) {
    return loom_tensor_format(tensor, buffer, capacity);
  }
  if (dtype != LOOM_DTYPE_HALF && dtype != LOOM_DTYPE_BFLOAT16) {
    if (is_unsigned(dtype) ||
        (tensor && kind == LOOM_TENSOR_DENSE &&
         loom_tensor_num_elements(tensor) > kMaxPrintedValues)) {
      return format_tfrt(tensor, buffer, capacity);
    }
    return loom_tensor_format(tensor, buffer, capacity);
  }
  if (buffer && capacity) buffer[0] = '\0';
  if (!buffer) capacity = 0;
  const char* name = dtype == LOOM_DTYPE_HALF ? "fp16" : "bf16";
  char shape[LOOM_MAX_RANK * 22 + 16];
  loom_shape_format(loom_tensor_shape(tensor), shape, sizeof(shape));
  const uint16_t* data = loom_tensor_data(tensor);
  size_t length = 0;
  if (kind == LOOM_TENSOR_SCALAR) {
    uint16_t bits = 0;
    memcpy(&bits, data, sizeof(bits));
    append(buffer, capacity, &length,
           "ScalarHostTensor dtype = %s, shape = %s, value = %s(%u)",
           loom_dtype_short_name(dtype), shape, name, (unsigned)bits);
    return length;
  }
  append(buffer, capacity, &length,
         "DenseHostTensor dtype = %s, shape = %s, values = [",
         loom_dtype_short_name(dtype), shape);
  int64_t count = loom_tensor_num_elements(tensor);
  for (int64_t i = 0; i < count; ++i) {
    if (i == kMaxPrintedValues) {
      append(buffer, capacity, &length, ", ... ");
      break;
    }
    uint16_t bits = 0;
    memcpy(&bits, data + i, sizeof(bits));
    append(buffer, capacity, &length, "%s%s(%u)", i ? ", " : "", name,
           (unsigned)bits);
  }
  append(buffer, capacity, &length, "]");
  return length;
}
