// Assert (TensorFlow's signature and message): fails with INVALID_ARGUMENT
// "assertion failed: [v0] [v1] ..." when its condition is false, each data
// tensor summarised as TensorFlow's Tensor::SummarizeValue does (its first
// `summarize` elements, nested in brackets by dimension, "..." where it
// stops). Stateful, so that it is never pruned or folded away.

#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "base/text.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/tensor.h"
#include "loom/tstring.h"

// The shortest of "%.6g" and "%.9g" that reads back as the same float
// (TensorFlow's FloatToBuffer); "%.15g" and "%.17g" for doubles.
static void append_float(loom__text_t* text, float value) {
  char buffer[32];
  snprintf(buffer, sizeof(buffer), "%.*g", FLT_DIG, (double)value);
  if (!isnan(value) && strtof(buffer, NULL) != value) {
    snprintf(buffer, sizeof(buffer), "%.*g", FLT_DIG + 3, (double)value);
  }
  loom__text_append(text, "%s", buffer);
}

static void append_double(loom__text_t* text, double value) {
  char buffer[40];
  snprintf(buffer, sizeof(buffer), "%.*g", DBL_DIG, value);
  if (!isnan(value) && strtod(buffer, NULL) != value) {
    snprintf(buffer, sizeof(buffer), "%.*g", DBL_DIG + 2, value);
  }
  loom__text_append(text, "%s", buffer);
}

// A string element C-escaped as absl::Utf8SafeCEscape does: the usual
// backslash escapes, other control bytes in octal, bytes >= 0x80 as they
// are.
static void append_escaped(loom__text_t* text, const loom_tstring_t* str) {
  const unsigned char* data = (const unsigned char*)loom_tstring_data(str);
  size_t size = loom_tstring_size(str);
  for (size_t i = 0; i < size; ++i) {
    unsigned char c = data[i];
    switch (c) {
      case '\n':
        loom__text_append(text, "\\n");
        break;
      case '\r':
        loom__text_append(text, "\\r");
        break;
      case '\t':
        loom__text_append(text, "\\t");
        break;
      case '"':
        loom__text_append(text, "\\\"");
        break;
      case '\'':
        loom__text_append(text, "\\'");
        break;
      case '\\':
        loom__text_append(text, "\\\\");
        break;
      default:
        if (c < 0x80 && !isprint(c)) {
          loom__text_append(text, "\\%03o", (unsigned)c);
        } else {
          loom__text_append(text, "%c", (char)c);
        }
    }
  }
}

// Whether Loom can print `dtype`'s elements (TensorFlow prints "?" for the
// others: complex numbers, resources, variants).
static bool printable(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
    case LOOM_DTYPE_DOUBLE:
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_BFLOAT16:
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_UINT16:
    case LOOM_DTYPE_UINT32:
    case LOOM_DTYPE_UINT64:
    case LOOM_DTYPE_BOOL:
    case LOOM_DTYPE_STRING:
      return true;
    default:
      return false;
  }
}

static void append_element(loom__text_t* text, const loom_tensor_t* t,
                           int64_t i) {
  const void* data = loom_tensor_data(t);
  // A SCALAR tensor's one value stands for every element.
  if (loom_tensor_kind(t) == LOOM_TENSOR_SCALAR) i = 0;
  switch (loom_tensor_dtype(t)) {
    case LOOM_DTYPE_FLOAT:
      append_float(text, ((const float*)data)[i]);
      break;
    case LOOM_DTYPE_DOUBLE:
      append_double(text, ((const double*)data)[i]);
      break;
    case LOOM_DTYPE_HALF:
      append_float(text, loom__half_to_float(((const uint16_t*)data)[i]));
      break;
    case LOOM_DTYPE_BFLOAT16:
      append_float(text, loom__bfloat16_to_float(((const uint16_t*)data)[i]));
      break;
    case LOOM_DTYPE_INT8:
      loom__text_append(text, "%d", ((const int8_t*)data)[i]);
      break;
    case LOOM_DTYPE_INT16:
      loom__text_append(text, "%d", ((const int16_t*)data)[i]);
      break;
    case LOOM_DTYPE_INT32:
      loom__text_append(text, "%" PRId32, ((const int32_t*)data)[i]);
      break;
    case LOOM_DTYPE_INT64:
      loom__text_append(text, "%" PRId64, ((const int64_t*)data)[i]);
      break;
    case LOOM_DTYPE_UINT8:
      loom__text_append(text, "%u", ((const uint8_t*)data)[i]);
      break;
    case LOOM_DTYPE_UINT16:
      loom__text_append(text, "%u", ((const uint16_t*)data)[i]);
      break;
    case LOOM_DTYPE_UINT32:
      loom__text_append(text, "%" PRIu32, ((const uint32_t*)data)[i]);
      break;
    case LOOM_DTYPE_UINT64:
      loom__text_append(text, "%" PRIu64, ((const uint64_t*)data)[i]);
      break;
    case LOOM_DTYPE_BOOL:
      loom__text_append(text, "%d", ((const uint8_t*)data)[i] ? 1 : 0);
      break;
    case LOOM_DTYPE_STRING:
      append_escaped(text, &((const loom_tstring_t*)data)[i]);
      break;
    default:
      loom__text_append(text, "?");
  }
}

// TensorFlow's PrintOneDim: dims [dim, rank) of the elements from *index
// on, bracketed per dimension but the last, until `limit` elements are out.
static void append_dim(loom__text_t* text, const loom_tensor_t* t, int32_t dim,
                       int64_t limit, int64_t* index) {
  if (*index >= limit) return;
  const loom_shape_t* shape = loom_tensor_shape(t);
  int64_t count = loom_shape_dims(shape)[dim];
  if (dim == shape->rank - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*index >= limit) {
        if (dim != 0) loom__text_append(text, "...");
        return;
      }
      if (i > 0) loom__text_append(text, " ");
      append_element(text, t, (*index)++);
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    bool opened = *index < limit;
    if (opened) loom__text_append(text, "[");
    append_dim(text, t, dim + 1, limit, index);
    if (opened || *index < limit) loom__text_append(text, "]");
  }
}

// Tensor::SummarizeValue(max_entries) with print_v2 false; max_entries < 0
// prints every element.
static void summarize(loom__text_t* text, const loom_tensor_t* t,
                      int64_t max_entries) {
  int64_t count = loom_tensor_num_elements(t);
  if (max_entries < 0) max_entries = count;
  int64_t limit = max_entries < count ? max_entries : count;
  const loom_shape_t* shape = loom_tensor_shape(t);
  if (!printable(loom_tensor_dtype(t)) || shape->rank == 0) {
    for (int64_t i = 0; i < limit; ++i) {
      if (i > 0) loom__text_append(text, " ");
      append_element(text, t, i);
    }
  } else {
    int64_t index = 0;
    append_dim(text, t, 0, limit, &index);
  }
  if (count > limit) loom__text_append(text, "...");
}

static void assertion_text(loom__text_t* text, loom_kernel_context_t* ctx,
                           int64_t max_entries) {
  loom__text_append(text, "assertion failed: ");
  int32_t n = loom_kernel_context_num_inputs(ctx);
  for (int32_t i = 1; i < n; ++i) {
    loom__text_append(text, "[");
    summarize(text, loom_kernel_context_input(ctx, i), max_entries);
    loom__text_append(text, "]");
    if (i < n - 1) loom__text_append(text, " ");
  }
}

static loom_status_t assert_run(loom_kernel_context_t* ctx) {
  loom_tensor_t* condition = loom_kernel_context_input(ctx, 0);
  const loom_shape_t* shape = loom_tensor_shape(condition);
  // TensorFlow's legacy scalars: [] and [1].
  if (shape->rank > 1 || (shape->rank == 1 && shape->dims[0] != 1)) {
    char dims[LOOM_SHAPE_FORMAT_MAX];
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "In[0] should be a scalar: %s",
        loom__shape_debug_string(shape, dims, sizeof(dims)));
  }
  if (((const uint8_t*)loom_tensor_data(condition))[0]) {
    return loom_ok_status();
  }
  int64_t max_entries = 3;
  loom_status_t status = loom_op_attrs_get_i64(loom_kernel_context_attrs(ctx),
                                               "summarize", &max_entries);
  if (status) return status;
  loom__text_t measure = {.buffer = NULL, .capacity = 0};
  assertion_text(&measure, ctx, max_entries);
  char* message = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_kernel_context_allocator(ctx),
                                             measure.length + 1,
                                             (void**)&message));
  loom__text_t text = {.buffer = message, .capacity = measure.length + 1};
  assertion_text(&text, ctx, max_entries);
  status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s", message);
  loom_allocator_free(loom_kernel_context_allocator(ctx), message);
  return status;
}

static void assert_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_status_t status = assert_run(ctx);
  if (status) loom_kernel_context_fail(ctx, status);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "Assert",
     .inputs = {"condition: bool", "data: T"},
     .attrs = {"T: list(type)", "summarize: int = 3"},
     .is_stateful = true},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Assert",
     .compute = assert_compute,
     .host_memory = {"condition", "data"},
     .any_rank = true},
};

loom_status_t loom__register_logging_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
