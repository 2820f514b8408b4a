// Helpers the built-in kernels share (kernels_common.h).

#include "function/kernels_common.h"

#include <stdio.h>

#include "base/half.h"
#include "base/small_vector.h"
#include "tensor/checked_size.h"

void loom__kernel_set_or_fail(loom_program_frame_t* frame,
                              loom_status_t status) {
  if (status) loom_program_frame_fail(frame, status);
}

bool loom__kernel_check(loom_program_frame_t* frame, int32_t index,
                        loom_program_value_kind_t kind) {
  loom_status_t status = loom_program_frame_check_kind(frame, index, kind);
  if (!status) return true;
  loom_program_frame_fail(frame, status);
  return false;
}

loom_status_t loom__kernel_missing_attr(const loom_program_frame_t* frame,
                                        const char* name, const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "'%s' needs a '%s' attribute (%s)",
                          loom_program_frame_op_name(frame), name, what);
}

// Reads a list of integers (I32 or I64) as a shape.
loom_status_t loom__kernel_shape_attr(const loom_program_frame_t* frame,
                                      const char* name, loom_shape_t* out) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), name, &value) ||
      !value.is_list ||
      (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32)) {
    return loom__kernel_missing_attr(frame, name, "a list of integers");
  }
  if (value.count > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': shape rank %lld exceeds %d",
                            loom_program_frame_op_name(frame),
                            (long long)value.count, LOOM_MAX_RANK);
  }
  int64_t dims[LOOM_MAX_RANK];
  for (int64_t i = 0; i < value.count; ++i) {
    dims[i] = value.kind == LOOM_ATTR_KIND_I64
                  ? ((const int64_t*)value.u.list)[i]
                  : ((const int32_t*)value.u.list)[i];
  }
  loom_status_t status = loom_shape_initialize(out, dims, (int)value.count);
  if (!status && !loom_shape_is_fully_defined(out)) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "dimensions must not be negative");
  }
  int64_t count = 0;
  if (!status && (!loom__size_product(out->dims, out->rank, &count) ||
                  count > ((int64_t)1 << 28))) {
    char text[256];
    loom_shape_format(out, text, sizeof(text));
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "shape %s has more than 2^28 elements", text);
  }
  if (status) {
    return loom_status_annotate(status, "'%s': attribute '%s'",
                                loom_program_frame_op_name(frame), name);
  }
  return loom_ok_status();
}

const char* loom__kernel_string_attr(const loom_program_frame_t* frame,
                                     const char* name) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), name, &value) ||
      value.is_list || value.kind != LOOM_ATTR_KIND_STRING) {
    return NULL;
  }
  return value.u.string.data;
}

loom_status_t loom__kernel_add(loom_program_executor_t* executor,
                               const char* name, loom_program_kernel_fn_t fn,
                               void* user_data, int32_t num_arguments,
                               int32_t num_results) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = fn,
                                   .user_data = user_data,
                                   .num_arguments = num_arguments,
                                   .num_results = num_results};
  return loom_program_executor_add_kernel(executor, &def);
}

// A double as int64, saturating (a cast of a value out of range, or of a
// NaN, is undefined behaviour).
static int64_t saturate_to_int64(double x) {
  if (x != x) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)x;
}

void loom__kernel_attr_number(const loom_attr_value_t* value, int64_t index,
                              double* f, int64_t* i) {
  const void* data = value->is_list ? value->u.list : (const void*)&value->u;
  if (!value->is_list) index = 0;
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      *i = ((const bool*)data)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_I32:
      *i = ((const int32_t*)data)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_I64:
      *i = ((const int64_t*)data)[index];
      *f = (double)*i;
      return;
    case LOOM_ATTR_KIND_F32:
      *f = ((const float*)data)[index];
      *i = saturate_to_int64(*f);
      return;
    default:
      *f = ((const double*)data)[index];
      *i = saturate_to_int64(*f);
      return;
  }
}

void loom__kernel_store_number(loom_dtype_t dtype, void* data, int64_t k,
                               double f, int64_t i) {
  switch (dtype) {
    case LOOM_DTYPE_BOOL:
      ((uint8_t*)data)[k] = i != 0;
      break;
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_UINT8:
      ((uint8_t*)data)[k] = (uint8_t)i;
      break;
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_UINT16:
      ((uint16_t*)data)[k] = (uint16_t)i;
      break;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT32:
      ((uint32_t*)data)[k] = (uint32_t)i;
      break;
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT64:
      ((uint64_t*)data)[k] = (uint64_t)i;
      break;
    case LOOM_DTYPE_HALF:
      ((uint16_t*)data)[k] = loom__float_to_half((float)f);
      break;
    case LOOM_DTYPE_BFLOAT16:
      ((uint16_t*)data)[k] = loom__float_to_bfloat16((float)f);
      break;
    case LOOM_DTYPE_FLOAT:
      ((float*)data)[k] = (float)f;
      break;
    default:
      ((double*)data)[k] = f;
      break;
  }
}

enum { kInlineText = 1024 };
LOOM_DEFINE_SMALL_VECTOR(text_vector, char, kInlineText)

void loom__kernel_print_tensor(loom_program_frame_t* frame,
                               const loom_tensor_t* tensor) {
  loom_allocator_t allocator = frame->executor->allocator;
  text_vector_t text;
  text_vector_initialize(&text);
  loom_status_free(
      text_vector_resize_uninitialized(&text, allocator, kInlineText));
  size_t length = loom_program_format_tensor(tensor, text_vector_data(&text),
                                             text_vector_size(&text));
  if (length >= text_vector_size(&text)) {
    loom_status_t status =
        text_vector_resize_uninitialized(&text, allocator, length + 1);
    if (!status) {
      loom_program_format_tensor(tensor, text_vector_data(&text), length + 1);
    }
    loom_status_free(status);
  }
  fprintf(loom_program_frame_output(frame), "%s\n", text_vector_data(&text));
  text_vector_deinitialize(&text, allocator);
}
