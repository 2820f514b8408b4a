// Constants: Const, Fill, ZerosLike, OnesLike, Range. Their outputs are
// new tensors made from attrs, shapes or scalars, never views of an input.

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Const
//===----------------------------------------------------------------------===//

static loom_status_t const_value(const loom_op_attrs_t* attrs,
                                 loom_tensor_t** out_value) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "value", &value) ||
      value.kind != LOOM_ATTR_KIND_TENSOR || value.is_list || !value.u.tensor) {
    return loom__array_invalid("Const needs a tensor attr 'value'");
  }
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  LOOM_RETURN_IF_ERROR(loom_op_attrs_get_dtype(attrs, "dtype", &dtype));
  if (loom_tensor_dtype(value.u.tensor) != dtype) {
    return loom__array_invalid(
        "Type mismatch between value (%s) and dtype (%s)",
        loom_dtype_name(loom_tensor_dtype(value.u.tensor)),
        loom_dtype_name(dtype));
  }
  *out_value = value.u.tensor;
  return loom_ok_status();
}

static loom_status_t const_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  loom_tensor_t* value = NULL;
  LOOM_RETURN_IF_ERROR(
      const_value(loom_shape_inference_context_attrs(c), &value));
  return loom_shape_inference_context_set_output(c, 0,
                                                 loom_tensor_shape(value));
}

// The kernel holds the value as a dense (or string) tensor.
static void* const_create(loom_kernel_construction_t* ctx) {
  loom_tensor_t* value = NULL;
  loom_status_t status =
      const_value(loom_kernel_construction_attrs(ctx), &value);
  loom_tensor_t* held = NULL;
  if (!status && loom_tensor_kind(value) == LOOM_TENSOR_SCALAR) {
    status =
        loom_tensor_convert_to_dense(loom_allocator_default(), value, &held);
  } else if (!status) {
    loom_tensor_retain(value);
    held = value;
  }
  if (status) loom_kernel_construction_fail(ctx, status);
  return held;
}

static void const_delete(void* kernel) {
  loom_tensor_release(kernel);
}

static void const_compute(void* kernel, loom_kernel_context_t* ctx) {
  loom_status_t status = loom_kernel_context_set_output(ctx, 0, kernel);
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// Fill, ZerosLike, OnesLike
//===----------------------------------------------------------------------===//

// The shape a dims vector describes.
static loom_status_t shape_from_dims(const loom_tensor_t* dims,
                                     loom_shape_t* out) {
  int64_t n = loom_tensor_num_elements(dims);
  if (n > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid("a shape of %" PRId64
                               " dimensions exceeds the maximum rank %d",
                               n, LOOM_MAX_SHAPE_RANK);
  }
  int64_t values[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < n; ++i) {
    values[i] = loom__array_index_at(dims, i);
    if (values[i] < 0) {
      return loom__array_invalid("Fill dimensions must be >= 0");
    }
  }
  LOOM_RETURN_IF_ERROR(loom__size_product_checked_quoting(
      "Fill", "dims", values, (int)n, values, (int)n, NULL));
  return loom_shape_initialize_large(out, values, (int)n);
}

static loom_status_t fill_check(const loom_shape_t* dims,
                                const loom_shape_t* value) {
  char text[128];
  if (dims->rank >= 0 && dims->rank != 1) {
    return loom__array_invalid(
        "dims must be a vector, got shape %s",
        loom__shape_debug_string(dims, text, sizeof(text)));
  }
  if (value->rank > 0) {
    return loom__array_invalid(
        "value must be a scalar, got shape %s",
        loom__shape_debug_string(value, text, sizeof(text)));
  }
  return loom_ok_status();
}

static loom_status_t fill_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  loom_shape_t dims_shape, value_shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &dims_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &value_shape));
  LOOM_RETURN_IF_ERROR(fill_check(&dims_shape, &value_shape));
  const loom_tensor_t* dims = loom_shape_inference_context_input_tensor(c, 0);
  if (dims) {
    LOOM_RETURN_IF_ERROR(shape_from_dims(dims, &out));
  } else if (dims_shape.rank == 1 && dims_shape.dims[0] >= 0 &&
             dims_shape.dims[0] <= LOOM_MAX_SHAPE_RANK) {
    LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(dims_shape.dims[0], &out));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static void fill_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* dims = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* value = loom_kernel_context_input(ctx, 1);
  loom_shape_t shape;
  loom_tensor_t* out = NULL;
  loom_status_t status =
      fill_check(loom_tensor_shape(dims), loom_tensor_shape(value));
  if (!status) status = shape_from_dims(dims, &shape);
  if (!status) {
    status = loom_kernel_context_allocate_output(ctx, 0, &shape, &out);
  }
  if (!status) {
    status = loom__array_fill(
        loom__array_pool(ctx), loom_tensor_dtype(out), loom_tensor_data(out),
        loom_tensor_num_elements(out), loom_tensor_data(value));
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

// One element of `dtype` equal to 0 or 1.
static void constant_element(loom_dtype_t dtype, bool one, void* out) {
  memset(out, 0, 16);
  if (!one || dtype == LOOM_DTYPE_STRING) return;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
    case LOOM_DTYPE_COMPLEX64: {
      float v = 1.0f;
      memcpy(out, &v, sizeof(v));
      break;
    }
    case LOOM_DTYPE_DOUBLE:
    case LOOM_DTYPE_COMPLEX128: {
      double v = 1.0;
      memcpy(out, &v, sizeof(v));
      break;
    }
    case LOOM_DTYPE_HALF: {
      uint16_t v = 0x3c00;
      memcpy(out, &v, sizeof(v));
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t v = 0x3f80;
      memcpy(out, &v, sizeof(v));
      break;
    }
    default:
      // Integers and bool: 1 in the lowest byte (little-endian x86-64).
      ((unsigned char*)out)[0] = 1;
      break;
  }
}

static void like_compute(loom_kernel_context_t* ctx, bool one) {
  loom_tensor_t* in = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* out = NULL;
  static const int32_t kCandidates[1] = {0};
  loom_status_t status = loom_kernel_context_forward_or_allocate(
      ctx, kCandidates, 1, 0, loom_tensor_shape(in), NULL, &out);
  if (!status) {
    _Alignas(16) unsigned char value[sizeof(loom_tstring_t)];
    loom_dtype_t dtype = loom_tensor_dtype(out);
    constant_element(dtype, one, value);
    if (dtype == LOOM_DTYPE_STRING) {
      loom_tstring_initialize((loom_tstring_t*)value);
    }
    status =
        loom__array_fill(loom__array_pool(ctx), dtype, loom_tensor_data(out),
                         loom_tensor_num_elements(out), value);
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

static void zeros_like_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  like_compute(ctx, false);
}

static void ones_like_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  like_compute(ctx, true);
}

//===----------------------------------------------------------------------===//
// Range
//===----------------------------------------------------------------------===//

static bool is_integral(loom_dtype_t dtype) {
  return loom_dtype_is_integer(dtype);
}

// Formats element 0 of a Range scalar as TensorFlow prints it.
static const char* scalar_text(const loom_tensor_t* t, char* buffer,
                               size_t capacity) {
  if (is_integral(loom_tensor_dtype(t))) {
    snprintf(buffer, capacity, "%" PRId64, loom__array_index_at(t, 0));
  } else {
    snprintf(buffer, capacity, "%g", loom__array_real_at(t, 0));
  }
  return buffer;
}

static loom_status_t range_check_scalar(const loom_shape_t* shape,
                                        const char* name) {
  if (shape->rank < 0) return loom_ok_status();
  if (shape->rank == 0 || (shape->rank == 1 && shape->dims[0] == 1)) {
    return loom_ok_status();
  }
  char text[128];
  return loom__array_invalid(
      "%s must be a scalar, not shape %s", name,
      loom__shape_debug_string(shape, text, sizeof(text)));
}

// The element count of Range(start, limit, delta).
static loom_status_t range_size(const loom_tensor_t* start,
                                const loom_tensor_t* limit,
                                const loom_tensor_t* delta, int64_t* out_size) {
  char a[64], b[64];
  if (is_integral(loom_tensor_dtype(start))) {
    int64_t s = loom__array_index_at(start, 0);
    int64_t l = loom__array_index_at(limit, 0);
    int64_t d = loom__array_index_at(delta, 0);
    if (d == 0) return loom__array_invalid("Requires delta != 0: 0");
    if (d > 0 && s > l) {
      return loom__array_invalid(
          "Requires start <= limit when delta > 0: %s/%s",
          scalar_text(start, a, sizeof(a)), scalar_text(limit, b, sizeof(b)));
    }
    if (d < 0 && s < l) {
      return loom__array_invalid(
          "Requires start >= limit when delta < 0: %s/%s",
          scalar_text(start, a, sizeof(a)), scalar_text(limit, b, sizeof(b)));
    }
    // |limit - start| and |delta| in uint64, where they always fit; a
    // count above INT64_MAX (INT64_MIN to INT64_MAX by 1) has no shape.
    uint64_t span =
        d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
    uint64_t step = d > 0 ? (uint64_t)d : (uint64_t)0 - (uint64_t)d;
    uint64_t count = span / step + (span % step != 0);
    if (count > (uint64_t)INT64_MAX) {
      return loom__size_overflow_error(
          "Range", "start, limit and delta",
          "(%" PRId64 ", %" PRId64 ", %" PRId64 ")", s, l, d);
    }
    *out_size = (int64_t)count;
    return loom_ok_status();
  }
  double s = loom__array_real_at(start, 0);
  double l = loom__array_real_at(limit, 0);
  double d = loom__array_real_at(delta, 0);
  if (d == 0) return loom__array_invalid("Requires delta != 0: 0");
  if (d > 0 && s > l) {
    return loom__array_invalid("Requires start <= limit when delta > 0: %s/%s",
                               scalar_text(start, a, sizeof(a)),
                               scalar_text(limit, b, sizeof(b)));
  }
  if (d < 0 && s < l) {
    return loom__array_invalid("Requires start >= limit when delta < 0: %s/%s",
                               scalar_text(start, a, sizeof(a)),
                               scalar_text(limit, b, sizeof(b)));
  }
  double size = ceil(fabs((l - s) / d));
  if (!(size < 9.2e18)) {
    return loom__array_invalid("Requires ((limit - start) / delta) <= %" PRId64,
                               INT64_MAX);
  }
  *out_size = (int64_t)size;
  return loom_ok_status();
}

static loom_status_t range_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  static const char* const kNames[3] = {"start", "limit", "delta"};
  const loom_tensor_t* values[3];
  bool known = true;
  for (int32_t i = 0; i < 3; ++i) {
    loom_shape_t shape;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, i, &shape));
    LOOM_RETURN_IF_ERROR(range_check_scalar(&shape, kNames[i]));
    values[i] = loom_shape_inference_context_input_tensor(c, i);
    known = known && values[i];
  }
  loom_shape_t out = loom_shape_scalar();
  out.rank = 1;
  out.dims[0] = LOOM_UNKNOWN_DIM;
  if (known) {
    LOOM_RETURN_IF_ERROR(
        range_size(values[0], values[1], values[2], &out.dims[0]));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

#define RANGE_FILL(T, V)                           \
  do {                                             \
    T* d = data;                                   \
    for (int64_t i = 0; i < n; ++i) d[i] = (T)(V); \
  } while (0)

static void range_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  static const char* const kNames[3] = {"start", "limit", "delta"};
  loom_tensor_t* in[3];
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < 3 && !status; ++i) {
    in[i] = loom_kernel_context_input(ctx, i);
    status = range_check_scalar(loom_tensor_shape(in[i]), kNames[i]);
  }
  int64_t n = 0;
  if (!status) status = range_size(in[0], in[1], in[2], &n);
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 1;
  shape.dims[0] = n;
  loom_tensor_t* out = NULL;
  if (!status)
    status = loom_kernel_context_allocate_output(ctx, 0, &shape, &out);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  void* data = loom_tensor_data(out);
  int64_t si = loom__array_index_at(in[0], 0);
  int64_t di = loom__array_index_at(in[2], 0);
  double sf = loom__array_real_at(in[0], 0);
  double df = loom__array_real_at(in[2], 0);
  switch (loom_tensor_dtype(out)) {
    case LOOM_DTYPE_FLOAT:
      RANGE_FILL(float, sf + (double)i * df);
      break;
    case LOOM_DTYPE_DOUBLE:
      RANGE_FILL(double, sf + (double)i * df);
      break;
    case LOOM_DTYPE_HALF: {
      uint16_t* d = data;
      for (int64_t i = 0; i < n; ++i) {
        d[i] = loom__float_to_half((float)(sf + (double)i * df));
      }
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t* d = data;
      for (int64_t i = 0; i < n; ++i) {
        d[i] = loom__float_to_bfloat16((float)(sf + (double)i * df));
      }
      break;
    }
    case LOOM_DTYPE_INT8:
      RANGE_FILL(int8_t, si + i * di);
      break;
    case LOOM_DTYPE_INT16:
      RANGE_FILL(int16_t, si + i * di);
      break;
    case LOOM_DTYPE_INT32:
      RANGE_FILL(int32_t, si + i * di);
      break;
    case LOOM_DTYPE_INT64:
      RANGE_FILL(int64_t, (int64_t)((uint64_t)si + (uint64_t)i * (uint64_t)di));
      break;
    case LOOM_DTYPE_UINT16:
      RANGE_FILL(uint16_t, si + i * di);
      break;
    case LOOM_DTYPE_UINT32:
      RANGE_FILL(uint32_t, si + i * di);
      break;
    default:
      loom_kernel_context_fail(
          ctx, loom__array_invalid("Range: unsupported dtype %s",
                                   loom_dtype_name(loom_tensor_dtype(out))));
      break;
  }
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Const",
     .outputs = {"output: dtype"},
     .attrs = {"value: tensor", "dtype: type"},
     .shape_fn = const_shape_fn},
    {.name = "Fill",
     .inputs = {"dims: index_type", "value: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "index_type: {int32, int64} = DT_INT32"},
     .shape_fn = fill_shape_fn},
    {.name = "ZerosLike",
     .inputs = {"x: T"},
     .outputs = {"y: T"},
     .attrs = {"T: type"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "OnesLike",
     .inputs = {"x: T"},
     .outputs = {"y: T"},
     .attrs = {"T: {bfloat16, half, float, double, int8, uint8, int16, "
               "uint16, int32, uint32, int64, uint64, complex64, complex128, "
               "bool}"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "Range",
     .inputs = {"start: Tidx", "limit: Tidx", "delta: Tidx"},
     .outputs = {"output: Tidx"},
     .attrs = {"Tidx: {bfloat16, half, float, double, int8, int16, int32, "
               "int64, uint16, uint32} = DT_INT32"},
     .shape_fn = range_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Const",
     .compute = const_compute,
     .create = const_create,
     .destroy = const_delete,
     .type_attr = "dtype",
     .types = {LOOM_ARRAY_ALL_TYPES}},
    {.op_name = "Fill",
     .any_rank = true,
     .compute = fill_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"dims"}},
    {.op_name = "ZerosLike",
     .any_rank = true,
     .compute = zeros_like_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES}},
    {.op_name = "OnesLike",
     .any_rank = true,
     .compute = ones_like_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_POD_TYPES}},
    {.op_name = "Range",
     .compute = range_compute,
     .type_attr = "Tidx",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF,
               LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT8, LOOM_DTYPE_INT16,
               LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT16,
               LOOM_DTYPE_UINT32},
     .host_memory = {"start", "limit", "delta", "output"}},
};

loom_status_t loom__register_array_constant_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
