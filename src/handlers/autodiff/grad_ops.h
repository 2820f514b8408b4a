// Helpers for gradient and JVP functions: execute one op from inside a
// gradient function (its inputs, a few attributes, its results) in one
// call, make constants, zeros and ones, and reduce a broadcast gradient to
// an input's shape.
//
//   loom_tensor_handle_t* dx = NULL;
//   LOOM_RETURN_IF_ERROR(loom__grad_op(
//       ctx, "MatMul", LOOM_GRAD_INPUTS(dy, w),
//       LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("transpose_b", true)), &dx));
//
// Ops run in the gradient context's eager context, so they are placed with
// the forward op's handlers and recorded by any tape around the backward
// pass. Every result is a new reference; on error nothing is returned.

#ifndef LOOM_HANDLERS_AUTODIFF_GRAD_OPS_H_
#define LOOM_HANDLERS_AUTODIFF_GRAD_OPS_H_

#include "base/small_vector.h"
#include "loom/autodiff.h"
#include "loom/tensor_handle.h"

// Stack-or-heap arrays of handles and of metadata, one element per input or
// output of an op (metadata: per input and output), for the functions that
// handle one op at a time.
LOOM_DEFINE_SMALL_VECTOR(loom__handle_vector, loom_tensor_handle_t*, 8)
LOOM_DEFINE_SMALL_VECTOR(loom__metadata_vector, loom_tensor_metadata_t, 16)

// One attribute of an op a gradient function executes.
typedef struct loom__grad_attr_t {
  const char* name;
  loom_attr_value_t value;
} loom__grad_attr_t;

#define LOOM_GRAD_BOOL(n, v) \
  ((loom__grad_attr_t){(n), {.kind = LOOM_ATTR_KIND_BOOL, .u.b = (v)}})
#define LOOM_GRAD_INT(n, v) \
  ((loom__grad_attr_t){(n), {.kind = LOOM_ATTR_KIND_I64, .u.i64 = (v)}})
#define LOOM_GRAD_FLOAT(n, v) \
  ((loom__grad_attr_t){(n), {.kind = LOOM_ATTR_KIND_F32, .u.f32 = (v)}})
#define LOOM_GRAD_TYPE(n, v) \
  ((loom__grad_attr_t){(n), {.kind = LOOM_ATTR_KIND_DTYPE, .u.dtype = (v)}})
// `values`: int64_t[count].
#define LOOM_GRAD_INTS(n, values, c)                \
  ((loom__grad_attr_t){(n),                         \
                       {.kind = LOOM_ATTR_KIND_I64, \
                        .is_list = true,            \
                        .count = (c),               \
                        .u.list = (values)}})
#define LOOM_GRAD_STRING(n, s)                         \
  ((loom__grad_attr_t){(n),                            \
                       {.kind = LOOM_ATTR_KIND_STRING, \
                        .u.string = {(s), __builtin_strlen(s)}}})
// `dims`: int64_t[rank].
#define LOOM_GRAD_SHAPE(n, dims, r) \
  ((loom__grad_attr_t){             \
      (n), {.kind = LOOM_ATTR_KIND_SHAPE, .u.shape = {(r), (dims)}}})
// A value read from another set (the forward op's attributes).
#define LOOM_GRAD_VALUE(n, v) ((loom__grad_attr_t){(n), (v)})

// Argument-list builders: `inputs, count` and `attrs, count`.
#define LOOM_GRAD_INPUTS(...)                                    \
  ((loom_tensor_handle_t*[]){__VA_ARGS__}),                      \
      (int32_t)(sizeof((loom_tensor_handle_t*[]){__VA_ARGS__}) / \
                sizeof(loom_tensor_handle_t*))
#define LOOM_GRAD_ATTRS(...)                                       \
  ((const loom__grad_attr_t[]){__VA_ARGS__}),                      \
      (int32_t)(sizeof((const loom__grad_attr_t[]){__VA_ARGS__}) / \
                sizeof(loom__grad_attr_t))
#define LOOM_GRAD_NO_ATTRS NULL, 0

// The metadata of `handle`, waiting for it when it is not known yet.
static inline loom_status_t loom__grad_metadata(
    loom_tensor_handle_t* handle, loom_tensor_metadata_t* out_metadata) {
  if (loom_tensor_handle_metadata_available(handle)) {
    return loom_tensor_handle_metadata(handle, out_metadata);
  }
  return loom_tensor_handle_wait_metadata(handle, out_metadata);
}

// Executes `op_name` on inputs[0, num_inputs) with the attributes (the
// others are inferred or defaulted) and writes its `num_results` results
// (the op must have exactly that many). `context` may be NULL: the ops then
// run in `eager` (loom__grad_execute_in) — for code outside a gradient
// function.
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_execute(loom_gradient_context_t* context, const char* op_name,
                   loom_tensor_handle_t* const* inputs, int32_t num_inputs,
                   const loom__grad_attr_t* attrs, int32_t num_attrs,
                   loom_tensor_handle_t** results, int32_t num_results);
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_execute_in(loom_context_t* eager, const char* op_name,
                      loom_tensor_handle_t* const* inputs, int32_t num_inputs,
                      const loom__grad_attr_t* attrs, int32_t num_attrs,
                      loom_tensor_handle_t** results, int32_t num_results);

// The same for an op with one result.
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_op(loom_gradient_context_t* context, const char* op_name,
              loom_tensor_handle_t* const* inputs, int32_t num_inputs,
              const loom__grad_attr_t* attrs, int32_t num_attrs,
              loom_tensor_handle_t** out);
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_unary(loom_gradient_context_t* context, const char* op_name,
                 loom_tensor_handle_t* x, loom_tensor_handle_t** out);
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_binary(loom_gradient_context_t* context, const char* op_name,
                  loom_tensor_handle_t* x, loom_tensor_handle_t* y,
                  loom_tensor_handle_t** out);

// Constants (CPU tensors; an op on another handler copies them on).
// A scalar of `dtype` (a floating or integer type) holding `value`.
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_scalar(loom_gradient_context_t* context, loom_dtype_t dtype,
                  double value, loom_tensor_handle_t** out);
// The same made without any op, for dtype float, double, int32 or int64
// (INVALID_ARGUMENT otherwise), on `eager`'s CPU device.
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_host_scalar(loom_context_t* eager, loom_dtype_t dtype, double value,
                       loom_tensor_handle_t** out);
// A vector of int32 (or int64 when `dtype` is INT64) values.
LOOM_MUST_USE_RESULT loom_status_t loom__grad_int_vector(
    loom_gradient_context_t* context, loom_dtype_t dtype, const int64_t* values,
    int32_t count, loom_tensor_handle_t** out);
// A shape as an int32 vector (fully defined shapes only).
LOOM_MUST_USE_RESULT loom_status_t loom__grad_shape_constant(
    loom_gradient_context_t* context, const loom_shape_t* shape,
    loom_tensor_handle_t** out);
// Whether `dy`, output k's gradient, is the handle the tape passed as the
// tape's seed of ones alone: all ones with a zero derivative, so its value
// may be used without an op on it.
bool loom__grad_output_gradient_is_ones(const loom_gradient_context_t* context,
                                        int32_t k,
                                        const loom_tensor_handle_t* dy);

// A tensor of `metadata`'s dtype and shape filled with `value`.
LOOM_MUST_USE_RESULT loom_status_t loom__grad_filled(
    loom_gradient_context_t* context, const loom_tensor_metadata_t* metadata,
    double value, loom_tensor_handle_t** out);

// ZerosLike / OnesLike of a tensor (ops: they follow its handler).
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_zeros_like(loom_gradient_context_t* context, loom_tensor_handle_t* x,
                      loom_tensor_handle_t** out);
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_ones_like(loom_gradient_context_t* context, loom_tensor_handle_t* x,
                     loom_tensor_handle_t** out);

// The output gradient `index`, or zeros shaped like forward output `index`
// when none flows into it (a new reference either way).
LOOM_MUST_USE_RESULT loom_status_t loom__grad_output_gradient_or_zeros(
    loom_gradient_context_t* context,
    loom_tensor_handle_t* const* output_gradients, int32_t index,
    loom_tensor_handle_t** out);

// Reduces `gradient`, shaped like the broadcast result of a binary op, to
// the shape of an operand of shape `target` (TensorFlow's
// BroadcastGradientArgs + Sum + Reshape): the broadcast dimensions are
// summed away. `gradient` itself (retained) when the shapes are equal.
LOOM_MUST_USE_RESULT loom_status_t loom__grad_reduce_to(
    loom_gradient_context_t* context, loom_tensor_handle_t* gradient,
    const loom_tensor_metadata_t* target, loom_tensor_handle_t** out);

// Sum over `axes` (keep_dims false) and a reshape to `shape`.
LOOM_MUST_USE_RESULT loom_status_t loom__grad_sum_to_shape(
    loom_gradient_context_t* context, loom_tensor_handle_t* gradient,
    const int64_t* axes, int32_t num_axes, const loom_shape_t* shape,
    loom_tensor_handle_t** out);

// Releases handles[0, count) and sets them to NULL (NULLs are skipped).
void loom__grad_release_all(loom_tensor_handle_t** handles, int32_t count);

// Helpers for shape and layout arithmetic in gradient functions.

// The values of forward input `index`, an int32 or int64 tensor of any
// rank with at most `capacity` elements (an axis list, a permutation, ...),
// read on the host: into values[0, *out_count).
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_input_ints(loom_gradient_context_t* context, int32_t index,
                      int64_t* values, int32_t capacity, int32_t* out_count);
// An int32 (or int64) constant of shape dims[0, rank) holding `values`.
LOOM_MUST_USE_RESULT loom_status_t loom__grad_int_tensor(
    loom_gradient_context_t* context, loom_dtype_t dtype, const int64_t* dims,
    int32_t rank, const int64_t* values, loom_tensor_handle_t** out);
// Reshape of `x` to dims[0, rank).
LOOM_MUST_USE_RESULT loom_status_t loom__grad_reshape(
    loom_gradient_context_t* context, loom_tensor_handle_t* x,
    const int64_t* dims, int32_t rank, loom_tensor_handle_t** out);
// Transpose of `x` by perm[0, rank).
LOOM_MUST_USE_RESULT loom_status_t loom__grad_transpose(
    loom_gradient_context_t* context, loom_tensor_handle_t* x,
    const int64_t* perm, int32_t rank, loom_tensor_handle_t** out);
// Sum of `x` over axes[0, num_axes).
LOOM_MUST_USE_RESULT loom_status_t
loom__grad_sum(loom_gradient_context_t* context, loom_tensor_handle_t* x,
               const int64_t* axes, int32_t num_axes, bool keep_dims,
               loom_tensor_handle_t** out);

#endif  // LOOM_HANDLERS_AUTODIFF_GRAD_OPS_H_
