// TFRT's CooHostTensor for programs: made by coo.convert_dht_to_coo, read
// by the other coo kernels, printed by tfrt_dht.print_tensor.

#include "function/coo_tensor.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "loom/macros.h"

loom_status_t loom__coo_tensor_create(loom_allocator_t allocator,
                                      loom_dtype_t dtype,
                                      const loom_shape_t* shape,
                                      loom_tensor_t* indices,
                                      loom_tensor_t* values,
                                      loom_program_coo_tensor_t** out) {
  *out = NULL;
  loom_program_coo_tensor_t* coo = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*coo), (void**)&coo));
  atomic_init(&coo->ref_count, 1);
  coo->allocator = allocator;
  coo->dtype = dtype;
  coo->shape = *shape;
  coo->indices = indices;
  coo->values = values;
  loom_tensor_retain(indices);
  loom_tensor_retain(values);
  *out = coo;
  return loom_ok_status();
}

void loom__coo_tensor_retain(loom_program_coo_tensor_t* coo) {
  atomic_fetch_add_explicit(&coo->ref_count, 1, memory_order_relaxed);
}

void loom__coo_tensor_release(loom_program_coo_tensor_t* coo) {
  if (!coo || atomic_fetch_sub_explicit(&coo->ref_count, 1,
                                        memory_order_acq_rel) != 1) {
    return;
  }
  loom_tensor_release(coo->indices);
  loom_tensor_release(coo->values);
  loom_allocator_free(coo->allocator, coo);
}

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

// One element as TFRT's FormatDType prints it: integers (and i1) as
// numbers, f32 and f64 as `%e`, f16 and bf16 as their bits.
static void append_element(char* buffer, size_t capacity, size_t* length,
                           loom_dtype_t dtype, const void* data, int64_t k) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL:
      append(buffer, capacity, length, "%d", ((const bool*)data)[k] ? 1 : 0);
      break;
    case LOOM_DTYPE_INT8:
      append(buffer, capacity, length, "%d", ((const int8_t*)data)[k]);
      break;
    case LOOM_DTYPE_INT16:
      append(buffer, capacity, length, "%d", ((const int16_t*)data)[k]);
      break;
    case LOOM_DTYPE_INT32:
      append(buffer, capacity, length, "%" PRId32, ((const int32_t*)data)[k]);
      break;
    case LOOM_DTYPE_INT64:
      append(buffer, capacity, length, "%" PRId64, ((const int64_t*)data)[k]);
      break;
    case LOOM_DTYPE_UINT8:
      append(buffer, capacity, length, "%u", ((const uint8_t*)data)[k]);
      break;
    case LOOM_DTYPE_UINT16:
      append(buffer, capacity, length, "%u", ((const uint16_t*)data)[k]);
      break;
    case LOOM_DTYPE_UINT32:
      append(buffer, capacity, length, "%" PRIu32, ((const uint32_t*)data)[k]);
      break;
    case LOOM_DTYPE_UINT64:
      append(buffer, capacity, length, "%" PRIu64, ((const uint64_t*)data)[k]);
      break;
    case LOOM_DTYPE_HALF:
      append(buffer, capacity, length, "fp16(%u)",
             (unsigned)((const uint16_t*)data)[k]);
      break;
    case LOOM_DTYPE_BFLOAT16:
      append(buffer, capacity, length, "bf16(%u)",
             (unsigned)((const uint16_t*)data)[k]);
      break;
    case LOOM_DTYPE_FLOAT:
      append(buffer, capacity, length, "%e", (double)((const float*)data)[k]);
      break;
    case LOOM_DTYPE_DOUBLE:
      append(buffer, capacity, length, "%e", ((const double*)data)[k]);
      break;
    default:
      append(buffer, capacity, length, "?");
      break;
  }
}

size_t loom__coo_tensor_format(const loom_program_coo_tensor_t* coo,
                               char* buffer, size_t capacity) {
  if (buffer && capacity) buffer[0] = '\0';
  if (!buffer) capacity = 0;
  char shape[LOOM_MAX_RANK * 22 + 16];
  loom_shape_format(&coo->shape, shape, sizeof(shape));
  // TFRT's names: u8, not ui8.
  const char* name = loom_dtype_short_name(coo->dtype);
  bool is_unsigned = name[0] == 'u' && name[1] == 'i';
  size_t length = 0;
  append(buffer, capacity, &length,
         "CooHostTensor dtype = %s%s, shape = %s, indices = [",
         is_unsigned ? "u" : "", is_unsigned ? name + 2 : name, shape);
  const int64_t* indices = loom_tensor_data(coo->indices);
  int64_t num_indices = loom_tensor_num_elements(coo->indices);
  for (int64_t i = 0; i < num_indices; ++i) {
    append(buffer, capacity, &length, "%s%" PRId64, i ? ", " : "", indices[i]);
  }
  append(buffer, capacity, &length, "], values = [");
  const void* values = loom_tensor_data(coo->values);
  int64_t num_values = loom_tensor_num_elements(coo->values);
  for (int64_t i = 0; i < num_values; ++i) {
    if (i) append(buffer, capacity, &length, ", ");
    append_element(buffer, capacity, &length, coo->dtype, values, i);
  }
  append(buffer, capacity, &length, "]");
  return length;
}
