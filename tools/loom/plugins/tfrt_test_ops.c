// TFRT's test ops and kernels (the `tfrt_test` dialect its own tests use),
// as a Loom program plugin: `loom run --plugin libloom_tfrt_test_ops.so`.
// The ops are here, the kernels in tfrt_test_kernels.c, the element access
// they share in tfrt_test_elements.c.
//
// Ops, native ops of the cpu handler (metadata + dispatch function):
//   tfrt_test.create_dense_tensor {shape, values} tfrt_test.create_from_scalar
//   {shape, value}   tfrt_test.add / add.denseonly   tfrt_test.matmul
//   {transpose_a, transpose_b}   tfrt_test.relu   tfrt_test.equal
//   tfrt_test.cast {type}   tfrt_test.broadcast {shape}   tfrt_test.argmax
//   {axis}   tfrt_test.reduce_mean {axis}   tfrt_test.identity
//   tfrt_test.print (needs a chain: corert.executeop.seq)
//   tfrt_test.print_address (the buffer's address, to observe forwarding)
//   tfrt_test.async.noop / async.noop_no_md (finishes on the thread pool)
//   tfrt_test.error.tensor (fails at dispatch)   tfrt_test.odd_collector
//   (data-dependent shape: no metadata function)
// Kernels:
//   tfrt_test.cancel (chain) -> (i32, chain)      cancels the host
//   tfrt_test.fail () -> i32                       fails
//   tfrt_test.partial_fail () -> (i32, i32)        1 and an error
//   tfrt_test.report_error_async () -> i32         fails on the thread pool
//   tfrt_test.corert.op_attrs_print (opattrs, chain) -> chain
//   tfrt_test.corert.op_attrs_freeze (opattrs, chain) -> (opattrs_ref, chain)
//   tfrt_test.get_string () -> string {value}
//   tfrt_test.print_string (string, chain) -> chain     `string = ...`
//   tfrt_test.append_string (string, string) -> string
//   tfrt_test.string_equal (string, string) -> i1
//   tfrt_test.corert.op_attrs_ref_print (opattrs_ref, chain) -> chain

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loom/cpu_op_handler.h"
#include "loom/program_kernel.h"
#include "loom/tensor_handle.h"
#include "tfrt_test_elements.h"
#include "tfrt_test_kernels.h"

LOOM_PROGRAM_PLUGIN_EXPORT loom_status_t
loom_program_plugin_init(loom_program_executor_t* executor);

static loom_status_t invalid(const char* format, const char* op) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, format, op);
}

static loom_status_t new_dense(const loom_cpu_dispatch_context_t* ctx,
                               loom_dtype_t dtype, const loom_shape_t* shape,
                               loom_tensor_t** out) {
  return loom_tensor_create_dense(ctx->allocator, dtype, shape, out);
}

//===----------------------------------------------------------------------===//
// Metadata functions
//===----------------------------------------------------------------------===//

static loom_status_t check_arity(const char* op, int32_t num_inputs,
                                 int32_t inputs, int32_t num_results,
                                 int32_t results) {
  if (num_inputs != inputs || num_results != results) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s takes %d argument%s and has %d result%s, got "
                            "%d and %d",
                            op, inputs, inputs == 1 ? "" : "s", results,
                            results == 1 ? "" : "s", num_inputs, num_results);
  }
  return loom_ok_status();
}

static loom_status_t shape_from_attr(const loom_op_attrs_t* attrs,
                                     const char* op, loom_shape_t* out) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "shape", &value) || !value.is_list ||
      (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s must have 'shape' attribute", op);
  }
  if (value.count > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: shape rank exceeds %d", op, LOOM_MAX_RANK);
  }
  int64_t dims[LOOM_MAX_RANK];
  for (int64_t i = 0; i < value.count; ++i) {
    dims[i] = value.kind == LOOM_ATTR_KIND_I64
                  ? ((const int64_t*)value.u.list)[i]
                  : ((const int32_t*)value.u.list)[i];
    if (dims[i] < 0 || dims[i] > ((int64_t)1 << 24)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: dimension %lld of 'shape' is out of range",
                              op, (long long)i);
    }
  }
  loom_status_t status = loom_shape_initialize(out, dims, (int)value.count);
  if (!status && loom_shape_num_elements(out) > ((int64_t)1 << 26)) {
    loom_status_free(status);
    return invalid("%s: 'shape' has too many elements", op);
  }
  return status;
}

static loom_dtype_t dtype_of_kind(loom_attr_kind_t kind) {
  switch (kind) {
    case LOOM_ATTR_KIND_BOOL:
      return LOOM_DTYPE_BOOL;
    case LOOM_ATTR_KIND_I32:
      return LOOM_DTYPE_INT32;
    case LOOM_ATTR_KIND_I64:
      return LOOM_DTYPE_INT64;
    case LOOM_ATTR_KIND_F32:
      return LOOM_DTYPE_FLOAT;
    case LOOM_ATTR_KIND_F64:
      return LOOM_DTYPE_DOUBLE;
    default:
      return LOOM_DTYPE_INVALID;
  }
}

static loom_status_t create_dense_md(const loom_tensor_metadata_t* inputs,
                                     int32_t num_inputs,
                                     const loom_op_attrs_t* attrs,
                                     loom_tensor_metadata_t* results,
                                     int32_t num_results) {
  (void)inputs;
  const char* op = "tfrt_test.create_dense_tensor";
  LOOM_RETURN_IF_ERROR(check_arity(op, num_inputs, 0, num_results, 1));
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(shape_from_attr(attrs, op, &shape));
  loom_attr_value_t values;
  if (!loom_op_attrs_get(attrs, "values", &values)) {
    return invalid("%s: missing 'values' attribute", op);
  }
  if (!values.is_list) {
    return invalid("%s: 'values' attribute should be an array of values", op);
  }
  if (values.count != 1 && values.count != loom_shape_num_elements(&shape)) {
    return invalid(
        "%s: size of 'values' must either be 1 or match num of "
        "elements.",
        op);
  }
  loom_dtype_t dtype = dtype_of_kind(values.kind);
  if (!dtype) return invalid("%s unsupported dtype", op);
  results[0].dtype = dtype;
  results[0].shape = shape;
  return loom_ok_status();
}

static loom_status_t create_from_scalar_md(const loom_tensor_metadata_t* inputs,
                                           int32_t num_inputs,
                                           const loom_op_attrs_t* attrs,
                                           loom_tensor_metadata_t* results,
                                           int32_t num_results) {
  (void)inputs;
  const char* op = "tfrt_test.create_from_scalar";
  LOOM_RETURN_IF_ERROR(check_arity(op, num_inputs, 0, num_results, 1));
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(shape_from_attr(attrs, op, &shape));
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "value", &value) || value.is_list) {
    return invalid("%s must have 'value' attribute", op);
  }
  loom_dtype_t dtype = dtype_of_kind(value.kind);
  if (!dtype) return invalid("%s unsupported dtype", op);
  results[0].dtype = dtype;
  results[0].shape = shape;
  return loom_ok_status();
}

// Two inputs of one dtype and shape (test.add's TestAddMD, equal).
static loom_status_t elementwise_md(const loom_tensor_metadata_t* inputs,
                                    int32_t num_inputs,
                                    const loom_op_attrs_t* attrs,
                                    loom_tensor_metadata_t* results,
                                    int32_t num_results) {
  (void)attrs;
  LOOM_RETURN_IF_ERROR(
      check_arity("an element-wise op", num_inputs, 2, num_results, 1));
  if (inputs[0].dtype != inputs[1].dtype) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "incompatible dtypes for element-wise op");
  }
  if (!loom_shape_equal(&inputs[0].shape, &inputs[1].shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "arguments to element-wise op must have "
                            "identical shapes");
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

static loom_status_t unary_md(const loom_tensor_metadata_t* inputs,
                              int32_t num_inputs, const loom_op_attrs_t* attrs,
                              loom_tensor_metadata_t* results,
                              int32_t num_results) {
  (void)attrs;
  LOOM_RETURN_IF_ERROR(
      check_arity("a unary op", num_inputs, 1, num_results, 1));
  results[0] = inputs[0];
  return loom_ok_status();
}

static bool bool_attr(const loom_op_attrs_t* attrs, const char* name) {
  bool value = false;
  loom_status_t status = loom_op_attrs_get_bool(attrs, name, &value);
  loom_status_free(status);
  return value;
}

static loom_status_t matmul_md(const loom_tensor_metadata_t* inputs,
                               int32_t num_inputs, const loom_op_attrs_t* attrs,
                               loom_tensor_metadata_t* results,
                               int32_t num_results) {
  LOOM_RETURN_IF_ERROR(
      check_arity("tfrt_test.matmul", num_inputs, 2, num_results, 1));
  if (inputs[0].dtype != inputs[1].dtype) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "incompatible dtypes for MatMul");
  }
  if (inputs[0].shape.rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "argument 0 of matmul op is not a rank-2 tensor");
  }
  if (inputs[1].shape.rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "argument 1 of matmul op is not a rank-2 tensor");
  }
  bool ta = bool_attr(attrs, "transpose_a");
  bool tb = bool_attr(attrs, "transpose_b");
  int64_t inner_a = inputs[0].shape.dims[ta ? 0 : 1];
  int64_t inner_b = inputs[1].shape.dims[tb ? 1 : 0];
  if (inner_a != inner_b) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "matmul arguments have incompatible shapes");
  }
  int64_t dims[2] = {inputs[0].shape.dims[ta ? 1 : 0],
                     inputs[1].shape.dims[tb ? 0 : 1]};
  results[0].dtype = inputs[0].dtype;
  return loom_shape_initialize(&results[0].shape, dims, 2);
}

static loom_status_t cast_md(const loom_tensor_metadata_t* inputs,
                             int32_t num_inputs, const loom_op_attrs_t* attrs,
                             loom_tensor_metadata_t* results,
                             int32_t num_results) {
  LOOM_RETURN_IF_ERROR(
      check_arity("tfrt_test.cast", num_inputs, 1, num_results, 1));
  loom_attr_value_t type;
  if (!loom_op_attrs_get(attrs, "type", &type) || type.is_list ||
      type.kind != LOOM_ATTR_KIND_STRING) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "missing 'type' attribute");
  }
  if (strcmp(type.u.string.data, "f32") == 0) {
    results[0].dtype = LOOM_DTYPE_FLOAT;
  } else if (strcmp(type.u.string.data, "f16") == 0) {
    results[0].dtype = LOOM_DTYPE_HALF;
  } else if (strcmp(type.u.string.data, "bf16") == 0) {
    results[0].dtype = LOOM_DTYPE_BFLOAT16;
  } else {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "tfrt_test.cast: only casting to f32, f16 and "
                            "bf16 is supported, got type = \"%s\"",
                            type.u.string.data);
  }
  results[0].shape = inputs[0].shape;
  return loom_ok_status();
}

static loom_status_t broadcast_md(const loom_tensor_metadata_t* inputs,
                                  int32_t num_inputs,
                                  const loom_op_attrs_t* attrs,
                                  loom_tensor_metadata_t* results,
                                  int32_t num_results) {
  LOOM_RETURN_IF_ERROR(
      check_arity("tfrt_test.broadcast", num_inputs, 1, num_results, 1));
  loom_shape_t shape;
  loom_status_t status = shape_from_attr(attrs, "tfrt_test.broadcast", &shape);
  if (status) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "missing 'shape' attribute");
  }
  if (shape.rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "result shape must be 2 dimensional (for now)");
  }
  if (inputs[0].shape.rank != 1 || shape.dims[1] != inputs[0].shape.dims[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "input dimension and target shape mismatch");
  }
  results[0].dtype = inputs[0].dtype;
  results[0].shape = shape;
  return loom_ok_status();
}

// The shape without dimension `axis`.
static loom_status_t reduce_md(const loom_tensor_metadata_t* inputs,
                               int32_t num_inputs, const loom_op_attrs_t* attrs,
                               loom_tensor_metadata_t* results,
                               int32_t num_results, loom_dtype_t dtype) {
  LOOM_RETURN_IF_ERROR(
      check_arity("a reduction", num_inputs, 1, num_results, 1));
  int64_t axis = 0;
  loom_status_t status = loom_op_attrs_get_i64(attrs, "axis", &axis);
  if (status) {
    loom_status_free(status);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "missing 'axis' attribute");
  }
  int32_t rank = inputs[0].shape.rank;
  if (axis < 0 || axis >= rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "axis must less than input rank");
  }
  int64_t dims[LOOM_MAX_RANK];
  int32_t out = 0;
  for (int32_t i = 0; i < rank; ++i) {
    if (i != axis) dims[out++] = inputs[0].shape.dims[i];
  }
  results[0].dtype = dtype;
  return loom_shape_initialize(&results[0].shape, dims, out);
}

static loom_status_t argmax_md(const loom_tensor_metadata_t* inputs,
                               int32_t num_inputs, const loom_op_attrs_t* attrs,
                               loom_tensor_metadata_t* results,
                               int32_t num_results) {
  return reduce_md(inputs, num_inputs, attrs, results, num_results,
                   LOOM_DTYPE_INT32);
}

static loom_status_t reduce_mean_md(const loom_tensor_metadata_t* inputs,
                                    int32_t num_inputs,
                                    const loom_op_attrs_t* attrs,
                                    loom_tensor_metadata_t* results,
                                    int32_t num_results) {
  return reduce_md(inputs, num_inputs, attrs, results, num_results,
                   num_inputs == 1 ? inputs[0].dtype : LOOM_DTYPE_INVALID);
}

//===----------------------------------------------------------------------===//
// Dispatch functions
//===----------------------------------------------------------------------===//

static loom_status_t check_dtype(const char* op, loom_dtype_t dtype) {
  if (loom__tfrt_test_is_supported(dtype)) return loom_ok_status();
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED, "%s: %s is not supported",
                          op, loom_dtype_short_name(dtype));
}

static loom_status_t create_dense(const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_attr_value_t values;
  if (!loom_op_attrs_get(ctx->attrs, "values", &values) || !values.is_list) {
    return invalid("%s: missing 'values' attribute",
                   "tfrt_test.create_dense_tensor");
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, md->dtype, &md->shape, &tensor));
  int64_t count = loom_tensor_num_elements(tensor);
  size_t size = loom_dtype_size(md->dtype);
  unsigned char* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    memcpy(data + (size_t)i * size,
           (const unsigned char*)values.u.list +
               (values.count == 1 ? 0 : (size_t)i * size),
           size);
  }
  return loom_cpu_set_result(ctx->results[0], tensor);
}

static loom_status_t create_from_scalar(
    const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_attr_value_t value;
  if (!loom_op_attrs_get(ctx->attrs, "value", &value)) {
    return invalid("%s must have 'value' attribute",
                   "tfrt_test.create_from_scalar");
  }
  unsigned char bytes[16];
  memset(bytes, 0, sizeof(bytes));
  switch (value.kind) {
    case LOOM_ATTR_KIND_BOOL:
      bytes[0] = value.u.b;
      break;
    case LOOM_ATTR_KIND_I32:
      memcpy(bytes, &value.u.i32, sizeof(value.u.i32));
      break;
    case LOOM_ATTR_KIND_I64:
      memcpy(bytes, &value.u.i64, sizeof(value.u.i64));
      break;
    case LOOM_ATTR_KIND_F32:
      memcpy(bytes, &value.u.f32, sizeof(value.u.f32));
      break;
    default:
      memcpy(bytes, &value.u.f64, sizeof(value.u.f64));
      break;
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(ctx->allocator, md->dtype,
                                                 &md->shape, bytes, &tensor));
  return loom_cpu_set_result(ctx->results[0], tensor);
}

// add (scalar + scalar stays scalar) and equal.
static loom_status_t elementwise(const loom_cpu_dispatch_context_t* ctx,
                                 const char* op, bool is_equal) {
  const loom_tensor_t* a = ctx->inputs[0];
  const loom_tensor_t* b = ctx->inputs[1];
  loom_dtype_t dtype = loom_tensor_dtype(a);
  LOOM_RETURN_IF_ERROR(check_dtype(op, dtype));
  loom_tensor_t* out = NULL;
  if (loom_tensor_kind(a) == LOOM_TENSOR_SCALAR &&
      loom_tensor_kind(b) == LOOM_TENSOR_SCALAR) {
    double value =
        is_equal
            ? (double)(loom__tfrt_test_get(a, 0) == loom__tfrt_test_get(b, 0))
            : loom__tfrt_test_add_values(dtype, loom__tfrt_test_get(a, 0),
                                         loom__tfrt_test_get(b, 0));
    unsigned char bytes[16];
    memset(bytes, 0, sizeof(bytes));
    loom__tfrt_test_put(dtype, bytes, 0, value);
    LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(
        ctx->allocator, dtype, loom_tensor_shape(a), bytes, &out));
    return loom_cpu_set_result(ctx->results[0], out);
  }
  LOOM_RETURN_IF_ERROR(new_dense(ctx, dtype, loom_tensor_shape(a), &out));
  int64_t count = loom_tensor_num_elements(out);
  void* data = loom_tensor_data(out);
  for (int64_t i = 0; i < count; ++i) {
    double x = loom__tfrt_test_get(a, i);
    double y = loom__tfrt_test_get(b, i);
    loom__tfrt_test_put(
        dtype, data, i,
        is_equal ? (double)(x == y) : loom__tfrt_test_add_values(dtype, x, y));
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

static loom_status_t add_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  return elementwise(ctx, "tfrt_test.add", false);
}

static loom_status_t equal_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  return elementwise(ctx, "tfrt_test.equal", true);
}

static loom_status_t matmul_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_t* a = ctx->inputs[0];
  const loom_tensor_t* b = ctx->inputs[1];
  loom_dtype_t dtype = loom_tensor_dtype(a);
  LOOM_RETURN_IF_ERROR(check_dtype("tfrt_test.matmul", dtype));
  bool ta = bool_attr(ctx->attrs, "transpose_a");
  bool tb = bool_attr(ctx->attrs, "transpose_b");
  const loom_shape_t* sa = loom_tensor_shape(a);
  const loom_shape_t* sb = loom_tensor_shape(b);
  int64_t m = sa->dims[ta ? 1 : 0];
  int64_t k = sa->dims[ta ? 0 : 1];
  int64_t n = sb->dims[tb ? 0 : 1];
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, dtype, &md->shape, &out));
  void* data = loom_tensor_data(out);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = loom__tfrt_test_get(
            a, ta ? p * sa->dims[1] + i : i * sa->dims[1] + p);
        double y = loom__tfrt_test_get(
            b, tb ? j * sb->dims[1] + p : p * sb->dims[1] + j);
        sum += x * y;
      }
      loom__tfrt_test_put(dtype, data, i * n + j, sum);
    }
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

static loom_status_t relu_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_t* x = ctx->inputs[0];
  loom_dtype_t dtype = loom_tensor_dtype(x);
  LOOM_RETURN_IF_ERROR(check_dtype("tfrt_test.relu", dtype));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, dtype, loom_tensor_shape(x), &out));
  void* data = loom_tensor_data(out);
  for (int64_t i = 0; i < loom_tensor_num_elements(out); ++i) {
    double v = loom__tfrt_test_get(x, i);
    loom__tfrt_test_put(dtype, data, i, v > 0 ? v : 0);
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

static loom_status_t cast_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_t* x = ctx->inputs[0];
  LOOM_RETURN_IF_ERROR(check_dtype("tfrt_test.cast", loom_tensor_dtype(x)));
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, md->dtype, &md->shape, &out));
  for (int64_t i = 0; i < loom_tensor_num_elements(out); ++i) {
    loom__tfrt_test_put(md->dtype, loom_tensor_data(out), i,
                        (float)loom__tfrt_test_get(x, i));
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

static loom_status_t broadcast_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_t* x = ctx->inputs[0];
  loom_dtype_t dtype = loom_tensor_dtype(x);
  LOOM_RETURN_IF_ERROR(check_dtype("tfrt_test.broadcast", dtype));
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, dtype, &md->shape, &out));
  int64_t n = md->shape.dims[1];
  for (int64_t i = 0; i < loom_tensor_num_elements(out); ++i) {
    loom__tfrt_test_put(dtype, loom_tensor_data(out), i,
                        loom__tfrt_test_get(x, i % n));
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

// argmax (first index of the largest value) and reduce_mean along `axis`.
static loom_status_t reduce(const loom_cpu_dispatch_context_t* ctx,
                            bool is_argmax) {
  const loom_tensor_t* x = ctx->inputs[0];
  loom_dtype_t dtype = loom_tensor_dtype(x);
  LOOM_RETURN_IF_ERROR(check_dtype(
      is_argmax ? "tfrt_test.argmax" : "tfrt_test.reduce_mean", dtype));
  int64_t axis = 0;
  LOOM_RETURN_IF_ERROR(loom_op_attrs_get_i64(ctx->attrs, "axis", &axis));
  const loom_shape_t* shape = loom_tensor_shape(x);
  int64_t outer = 1;
  int64_t inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= shape->dims[i];
  for (int32_t i = (int32_t)axis + 1; i < shape->rank; ++i) {
    inner *= shape->dims[i];
  }
  int64_t length = shape->dims[axis];
  const loom_tensor_metadata_t* md = &ctx->result_metadata[0];
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, md->dtype, &md->shape, &out));
  void* data = loom_tensor_data(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double best = -INFINITY;
      int64_t best_index = 0;
      double sum = 0;
      for (int64_t k = 0; k < length; ++k) {
        double v = loom__tfrt_test_get(x, (o * length + k) * inner + i);
        sum += v;
        if (v > best) {
          best = v;
          best_index = k;
        }
      }
      double result =
          is_argmax ? (double)best_index : (length ? sum / (double)length : 0);
      loom__tfrt_test_put(md->dtype, data, o * inner + i, result);
    }
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

static loom_status_t argmax_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  return reduce(ctx, true);
}

static loom_status_t reduce_mean_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  return reduce(ctx, false);
}

// Where a tensor's values are: `DenseHostTensor: buffer=0x...`, to observe
// that an op reused (forwarded) its argument's buffer.
static loom_status_t print_address_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1) {
    return invalid("%s takes one argument", "tfrt_test.print_address");
  }
  const loom_tensor_t* x = ctx->inputs[0];
  const char* kind =
      loom_tensor_kind(x) == LOOM_TENSOR_SCALAR   ? "ScalarHostTensor"
      : loom_tensor_kind(x) == LOOM_TENSOR_STRING ? "StringHostTensor"
                                                  : "DenseHostTensor";
  printf("%s: buffer=%p\n", kind, loom_tensor_data(x));
  fflush(stdout);
  return loom_ok_status();
}

static loom_status_t print_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1) {
    return invalid("%s takes one argument", "tfrt_test.print");
  }
  char small[1024];
  size_t length =
      loom_program_format_tensor(ctx->inputs[0], small, sizeof(small));
  (void)length;  // longer texts are cut (16 values at most are printed)
  printf("%s\n", small);
  fflush(stdout);
  return loom_ok_status();
}

static loom_status_t identity_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1 || ctx->num_results != 1) {
    return invalid("%s takes 1 argument and has 1 result",
                   "tfrt_test.identity");
  }
  loom_tensor_retain(ctx->inputs[0]);
  return loom_cpu_set_result(ctx->results[0], ctx->inputs[0]);
}

typedef struct async_copy_t {
  loom_allocator_t allocator;
  loom_tensor_t* tensor;
  loom_async_value_t* result;
} async_copy_t;

static void async_copy_finish(void* arg) {
  async_copy_t* job = arg;
  loom_status_t status = loom_cpu_set_result(job->result, job->tensor);
  if (status) {
    loom_status_ignore(loom_async_value_set_error(job->result, status));
  }
  loom_async_value_release(job->result);
  loom_allocator_free(job->allocator, job);
}

// Passes the input on from the thread pool, after the dispatch returned.
static loom_status_t async_noop_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1 || ctx->num_results != 1) {
    return invalid("%s takes 1 argument and has 1 result",
                   "tfrt_test.async.noop");
  }
  async_copy_t* job = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(ctx->allocator, sizeof(*job), (void**)&job));
  job->allocator = ctx->allocator;
  job->tensor = ctx->inputs[0];
  job->result = ctx->results[0];
  loom_tensor_retain(job->tensor);
  loom_async_value_retain(job->result);
  loom_status_t status =
      loom_host_context_enqueue(ctx->host, async_copy_finish, job);
  if (status) {
    loom_tensor_release(job->tensor);
    loom_async_value_release(job->result);
    loom_allocator_free(ctx->allocator, job);
  }
  return status;
}

static loom_status_t error_tensor_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  (void)ctx;
  return loom_make_status(LOOM_STATUS_INTERNAL,
                          "error from tfrt_test.error.tensor implementation");
}

static loom_status_t odd_collector_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  if (ctx->num_inputs != 1 || ctx->num_results != 1) {
    return invalid("%s takes 1 argument and has 1 result",
                   "tfrt_test.odd_collector");
  }
  const loom_tensor_t* x = ctx->inputs[0];
  if (loom_tensor_shape(x)->rank != 1) {
    return invalid("%s: expected a 1D tensor input", "tfrt_test.odd_collector");
  }
  if (loom_tensor_dtype(x) != LOOM_DTYPE_INT32) {
    return invalid("%s: expected a i32 element type",
                   "tfrt_test.odd_collector");
  }
  const int32_t* in = loom_tensor_data(x);
  int64_t count = 0;
  for (int64_t i = 0; i < loom_tensor_num_elements(x); ++i) count += in[i] & 1;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(new_dense(ctx, LOOM_DTYPE_INT32, &shape, &out));
  int32_t* data = loom_tensor_data(out);
  int64_t k = 0;
  for (int64_t i = 0; i < loom_tensor_num_elements(x); ++i) {
    if (in[i] & 1) data[k++] = in[i];
  }
  return loom_cpu_set_result(ctx->results[0], out);
}

//===----------------------------------------------------------------------===//
// Op registration
//===----------------------------------------------------------------------===//

typedef struct test_op_t {
  const char* name;
  loom_cpu_dispatch_fn_t dispatch;
  loom_cpu_metadata_fn_t metadata;  // may be NULL
  uint32_t flags;
} test_op_t;

static const test_op_t kOps[] = {
    {.name = "tfrt_test.create_dense_tensor",
     .dispatch = create_dense,
     .metadata = create_dense_md},
    {.name = "tfrt_test.create_from_scalar",
     .dispatch = create_from_scalar,
     .metadata = create_from_scalar_md},
    {.name = "tfrt_test.add",
     .dispatch = add_dispatch,
     .metadata = elementwise_md,
     .flags = LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.add.denseonly",
     .dispatch = add_dispatch,
     .metadata = elementwise_md},
    {.name = "tfrt_test.equal",
     .dispatch = equal_dispatch,
     .metadata = elementwise_md},
    {.name = "tfrt_test.matmul",
     .dispatch = matmul_dispatch,
     .metadata = matmul_md},
    {.name = "tfrt_test.relu", .dispatch = relu_dispatch, .metadata = unary_md},
    {.name = "tfrt_test.cast", .dispatch = cast_dispatch, .metadata = cast_md},
    {.name = "tfrt_test.broadcast",
     .dispatch = broadcast_dispatch,
     .metadata = broadcast_md},
    {.name = "tfrt_test.argmax",
     .dispatch = argmax_dispatch,
     .metadata = argmax_md},
    {.name = "tfrt_test.reduce_mean",
     .dispatch = reduce_mean_dispatch,
     .metadata = reduce_mean_md},
    {.name = "tfrt_test.identity", .dispatch = identity_dispatch},
    {.name = "tfrt_test.print",
     .dispatch = print_dispatch,
     .flags = LOOM_CPU_OP_SIDE_EFFECTING | LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.print_address",
     .dispatch = print_address_dispatch,
     .flags = LOOM_CPU_OP_SIDE_EFFECTING | LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.async.noop",
     .dispatch = async_noop_dispatch,
     .metadata = unary_md,
     .flags = LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.async.noop_no_md",
     .dispatch = async_noop_dispatch,
     .flags = LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.error.tensor",
     .dispatch = error_tensor_dispatch,
     .metadata = unary_md,
     .flags = LOOM_CPU_OP_ALLOWS_SCALAR},
    {.name = "tfrt_test.odd_collector", .dispatch = odd_collector_dispatch},
};

static loom_status_t register_ops(loom_op_handler_t* cpu, void* user_data) {
  (void)user_data;
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(
        cpu, kOps[i].name, kOps[i].dispatch, kOps[i].flags));
    if (kOps[i].metadata) {
      LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_metadata_fn(
          cpu, kOps[i].name, kOps[i].metadata));
    }
  }
  return loom_ok_status();
}

loom_status_t loom_program_plugin_init(loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(loom__tfrt_test_add_kernels(executor));
  return loom_program_executor_add_cpu_ops(executor, register_ops, NULL);
}
