// Helpers for gradient functions: one-call op execution, constants, and
// the reduction of broadcast gradients.

#include "handlers/autodiff/grad_ops.h"

#include <string.h>

#include "handlers/autodiff/autodiff_internal.h"

//===----------------------------------------------------------------------===//
// Executing ops
//===----------------------------------------------------------------------===//

// An eager op for `op_name` in `eager`: from the backward pass's cache when
// there is one (reset for reuse), else one of the context's idle ops
// (*out_owned: recycled after the call).
static loom_status_t acquire_op(loom_gradient_context_t* context,
                                loom_context_t* eager, const char* op_name,
                                loom_eager_op_t** out_op, bool* out_owned) {
  if (context && context->op_cache) {
    *out_owned = false;
    return loom__grad_op_cache_get(context->op_cache, eager, op_name, out_op);
  }
  *out_owned = true;
  return loom_eager_op_acquire(eager, op_name, out_op);
}

static loom_status_t execute(loom_gradient_context_t* context,
                             loom_context_t* eager, const char* op_name,
                             loom_tensor_handle_t* const* inputs,
                             int32_t num_inputs, const loom__grad_attr_t* attrs,
                             int32_t num_attrs, loom_tensor_handle_t** results,
                             int32_t num_results) {
  for (int32_t i = 0; i < num_results; ++i) results[i] = NULL;
  if (!eager || !op_name || (num_inputs > 0 && !inputs) ||
      (num_attrs > 0 && !attrs) || (num_results > 0 && !results)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_execute: %s",
                            !eager     ? "no eager context"
                            : !op_name ? "op_name is NULL"
                                       : "NULL arrays");
  }
  loom_eager_op_t* op = NULL;
  bool owned = false;
  LOOM_RETURN_IF_ERROR(acquire_op(context, eager, op_name, &op, &owned));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < num_inputs && !status; ++i) {
    if (!inputs[i]) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s (in a gradient function): input %d is NULL",
                                op_name, i);
      break;
    }
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  loom_op_attrs_t* op_attrs = loom_eager_op_attrs(op);
  for (int32_t i = 0; i < num_attrs && !status; ++i) {
    status = loom_op_attrs_set_value(op_attrs, attrs[i].name, &attrs[i].value);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, results, num_results, &count);
  if (!status && count != num_results) {
    loom__grad_release_all(results, count);
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "%s (in a gradient function): %d results, "
                              "expected %d",
                              op_name, count, num_results);
  }
  if (owned) {
    loom_eager_op_recycle(op);
  } else {
    loom__grad_op_cache_put(context->op_cache, op, op_name);
  }
  return status;
}

loom_status_t loom__grad_execute(
    loom_gradient_context_t* context, const char* op_name,
    loom_tensor_handle_t* const* inputs, int32_t num_inputs,
    const loom__grad_attr_t* attrs, int32_t num_attrs,
    loom_tensor_handle_t** results, int32_t num_results) {
  return execute(context, context ? context->eager : NULL, op_name, inputs,
                 num_inputs, attrs, num_attrs, results, num_results);
}

loom_status_t loom__grad_execute_in(loom_context_t* eager, const char* op_name,
                                    loom_tensor_handle_t* const* inputs,
                                    int32_t num_inputs,
                                    const loom__grad_attr_t* attrs,
                                    int32_t num_attrs,
                                    loom_tensor_handle_t** results,
                                    int32_t num_results) {
  return execute(NULL, eager, op_name, inputs, num_inputs, attrs, num_attrs,
                 results, num_results);
}

loom_status_t loom__grad_op(loom_gradient_context_t* context,
                            const char* op_name,
                            loom_tensor_handle_t* const* inputs,
                            int32_t num_inputs, const loom__grad_attr_t* attrs,
                            int32_t num_attrs, loom_tensor_handle_t** out) {
  return loom__grad_execute(context, op_name, inputs, num_inputs, attrs,
                            num_attrs, out, 1);
}

loom_status_t loom__grad_unary(loom_gradient_context_t* context,
                               const char* op_name, loom_tensor_handle_t* x,
                               loom_tensor_handle_t** out) {
  return loom__grad_execute(context, op_name, &x, 1, NULL, 0, out, 1);
}

loom_status_t loom__grad_binary(loom_gradient_context_t* context,
                                const char* op_name, loom_tensor_handle_t* x,
                                loom_tensor_handle_t* y,
                                loom_tensor_handle_t** out) {
  loom_tensor_handle_t* inputs[2] = {x, y};
  return loom__grad_execute(context, op_name, inputs, 2, NULL, 0, out, 1);
}

void loom__grad_release_all(loom_tensor_handle_t** handles, int32_t count) {
  if (!handles) return;
  for (int32_t i = 0; i < count; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

static loom_status_t new_constant(loom_gradient_context_t* context,
                                  loom_tensor_t* tensor,
                                  loom_tensor_handle_t** out) {
  loom_status_t status = loom_context_new_handle(context->eager, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

loom_status_t loom__grad_host_scalar(loom_context_t* eager, loom_dtype_t dtype,
                                     double value, loom_tensor_handle_t** out) {
  *out = NULL;
  if (!eager) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_host_scalar: eager is NULL");
  }
  unsigned char bytes[16];
  memset(bytes, 0, sizeof(bytes));
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: {
      float v = (float)value;
      memcpy(bytes, &v, sizeof(v));
      break;
    }
    case LOOM_DTYPE_DOUBLE:
      memcpy(bytes, &value, sizeof(double));
      break;
    case LOOM_DTYPE_INT32: {
      int32_t v = (int32_t)value;
      memcpy(bytes, &v, sizeof(v));
      break;
    }
    case LOOM_DTYPE_INT64: {
      int64_t v = (int64_t)value;
      memcpy(bytes, &v, sizeof(v));
      break;
    }
    default:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "loom__grad_host_scalar: dtype %s is not "
                              "float, double, int32 or int64",
                              loom_dtype_name(dtype));
  }
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &shape, &tensor));
  memcpy(loom_tensor_data(tensor), bytes, loom_dtype_size(dtype));
  loom_status_t status = loom_context_new_handle(eager, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

loom_status_t loom__grad_scalar(loom_gradient_context_t* context,
                                loom_dtype_t dtype, double value,
                                loom_tensor_handle_t** out) {
  *out = NULL;
  if (!context) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_scalar: context is NULL");
  }
  // Made directly in these types; in float, then cast, in the others.
  loom_dtype_t made = dtype == LOOM_DTYPE_DOUBLE || dtype == LOOM_DTYPE_INT32 ||
                              dtype == LOOM_DTYPE_INT64
                          ? dtype
                          : LOOM_DTYPE_FLOAT;
  loom_tensor_handle_t* handle = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_host_scalar(context->eager, made, value, &handle));
  if (made == dtype) {
    *out = handle;
    return loom_ok_status();
  }
  loom_status_t status =
      loom__grad_op(context, "Cast", &handle, 1,
                    LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", dtype)), out);
  loom_tensor_handle_release(handle);
  return status;
}

loom_status_t loom__grad_int_vector(loom_gradient_context_t* context,
                                    loom_dtype_t dtype, const int64_t* values,
                                    int32_t count, loom_tensor_handle_t** out) {
  *out = NULL;
  if (!context || (count > 0 && !values) || count < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_int_vector: %s",
                            !context ? "context is NULL" : "invalid values");
  }
  if (dtype != LOOM_DTYPE_INT64) dtype = LOOM_DTYPE_INT32;
  int64_t dims[1] = {count};
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &shape, &tensor));
  if (dtype == LOOM_DTYPE_INT64) {
    int64_t* data = loom_tensor_data(tensor);
    for (int32_t i = 0; i < count; ++i) data[i] = values[i];
  } else {
    int32_t* data = loom_tensor_data(tensor);
    for (int32_t i = 0; i < count; ++i) data[i] = (int32_t)values[i];
  }
  return new_constant(context, tensor, out);
}

loom_status_t loom__grad_shape_constant(loom_gradient_context_t* context,
                                        const loom_shape_t* shape,
                                        loom_tensor_handle_t** out) {
  *out = NULL;
  if (!shape || !loom_shape_is_fully_defined(shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_shape_constant: the shape is not "
                            "fully defined");
  }
  return loom__grad_int_vector(context, LOOM_DTYPE_INT32,
                               loom_shape_dims(shape), shape->rank, out);
}

bool loom__grad_output_gradient_is_ones(const loom_gradient_context_t* context,
                                        int32_t k,
                                        const loom_tensor_handle_t* dy) {
  return context && dy && k >= 0 && k < 64 &&
         (context->ones_output_gradients >> k & 1) &&
         context->output_gradients && context->output_gradients[k] == dy;
}

loom_status_t loom__grad_filled(loom_gradient_context_t* context,
                                const loom_tensor_metadata_t* metadata,
                                double value, loom_tensor_handle_t** out) {
  *out = NULL;
  if (!context || !metadata) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_filled: %s is NULL",
                            !context ? "context" : "metadata");
  }
  loom_tensor_handle_t* dims = NULL;
  loom_tensor_handle_t* scalar = NULL;
  loom_status_t status =
      loom__grad_shape_constant(context, &metadata->shape, &dims);
  if (!status) {
    status = loom__grad_scalar(context, metadata->dtype, value, &scalar);
  }
  if (!status) {
    status = loom__grad_binary(context, "Fill", dims, scalar, out);
  }
  loom_tensor_handle_release(dims);
  loom_tensor_handle_release(scalar);
  return status;
}

loom_status_t loom__grad_zeros_like(loom_gradient_context_t* context,
                                    loom_tensor_handle_t* x,
                                    loom_tensor_handle_t** out) {
  return loom__grad_unary(context, "ZerosLike", x, out);
}

loom_status_t loom__grad_ones_like(loom_gradient_context_t* context,
                                   loom_tensor_handle_t* x,
                                   loom_tensor_handle_t** out) {
  return loom__grad_unary(context, "OnesLike", x, out);
}

loom_status_t loom__grad_output_gradient_or_zeros(
    loom_gradient_context_t* context,
    loom_tensor_handle_t* const* output_gradients, int32_t index,
    loom_tensor_handle_t** out) {
  *out = NULL;
  if (output_gradients && output_gradients[index]) {
    loom_tensor_handle_retain(output_gradients[index]);
    *out = output_gradients[index];
    return loom_ok_status();
  }
  const loom_tensor_metadata_t* metadata =
      loom_gradient_context_output_metadata(context, index);
  if (!metadata) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "loom__grad_output_gradient_or_zeros: no output "
                            "%d",
                            index);
  }
  return loom__grad_filled(context, metadata, 0.0, out);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

loom_status_t loom__grad_sum_to_shape(loom_gradient_context_t* context,
                                      loom_tensor_handle_t* gradient,
                                      const int64_t* axes, int32_t num_axes,
                                      const loom_shape_t* shape,
                                      loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* summed = gradient;
  loom_tensor_handle_retain(gradient);
  loom_status_t status = loom_ok_status();
  if (num_axes > 0) {
    loom_tensor_handle_t* axes_handle = NULL;
    status = loom__grad_int_vector(context, LOOM_DTYPE_INT32, axes, num_axes,
                                   &axes_handle);
    loom_tensor_handle_t* reduced = NULL;
    if (!status) {
      status = loom__grad_op(
          context, "Sum", LOOM_GRAD_INPUTS(gradient, axes_handle),
          LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", false)), &reduced);
    }
    loom_tensor_handle_release(axes_handle);
    loom_tensor_handle_release(summed);
    summed = reduced;
  }
  if (!status) {
    loom_tensor_handle_t* dims = NULL;
    status = loom__grad_shape_constant(context, shape, &dims);
    if (!status)
      status = loom__grad_binary(context, "Reshape", summed, dims, out);
    loom_tensor_handle_release(dims);
  }
  loom_tensor_handle_release(summed);
  return status;
}

loom_status_t loom__grad_reduce_to(loom_gradient_context_t* context,
                                   loom_tensor_handle_t* gradient,
                                   const loom_tensor_metadata_t* target,
                                   loom_tensor_handle_t** out) {
  *out = NULL;
  if (!context || !gradient || !target) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_reduce_to: %s is NULL",
                            !context    ? "context"
                            : !gradient ? "gradient"
                                        : "target");
  }
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(gradient, &metadata));
  const loom_shape_t* from = &metadata.shape;
  const loom_shape_t* to = &target->shape;
  if (loom_shape_equal(from, to)) {
    loom_tensor_handle_retain(gradient);
    *out = gradient;
    return loom_ok_status();
  }
  if (from->rank < 0 || to->rank < 0 || from->rank < to->rank ||
      !loom_shape_is_fully_defined(to)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_reduce_to: cannot reduce a gradient "
                            "of rank %d to rank %d",
                            from->rank, to->rank);
  }
  // What BroadcastGradientArgs computes, from the shapes both known here:
  // the leading dimensions the operand lacks and those it broadcast from 1.
  // Shapes of any rank (their dims may be spilled).
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t num_axes = 0;
  int32_t offset = from->rank - to->rank;
  const int64_t* from_dims = loom_shape_dims(from);
  const int64_t* to_dims = loom_shape_dims(to);
  for (int32_t i = 0; i < from->rank; ++i) {
    int32_t j = i - offset;
    if (j < 0 || (to_dims[j] == 1 && from_dims[i] != 1)) {
      axes[num_axes++] = i;
    }
  }
  return loom__grad_sum_to_shape(context, gradient, axes, num_axes, to, out);
}

//===----------------------------------------------------------------------===//
// The op cache of a backward pass
//===----------------------------------------------------------------------===//

// The index of an idle op of `op_name` in `eager` (asked for with this very
// key when `by_key`), or -1.
static int32_t find_cached(const loom__grad_op_cache_t* cache,
                           loom_context_t* eager, const char* op_name,
                           bool by_key) {
  for (int32_t i = cache->count - 1; i >= 0; --i) {
    if ((!by_key || cache->keys[i] == op_name) &&
        loom_eager_op_context(cache->ops[i]) == eager &&
        strcmp(loom_eager_op_name(cache->ops[i]), op_name) == 0) {
      return i;
    }
  }
  return -1;
}

loom_status_t loom__grad_op_cache_get(loom__grad_op_cache_t* cache,
                                      loom_context_t* eager,
                                      const char* op_name,
                                      loom_eager_op_t** out_op) {
  // By the key's address first (the name is still compared: a key that
  // was not a literal may have been freed and its address reused), then by
  // name alone.
  int32_t found = find_cached(cache, eager, op_name, true);
  if (found < 0) found = find_cached(cache, eager, op_name, false);
  if (found < 0) return loom_eager_op_acquire(eager, op_name, out_op);
  *out_op = cache->ops[found];
  int32_t last = --cache->count;
  cache->ops[found] = cache->ops[last];
  cache->keys[found] = cache->keys[last];
  return loom_ok_status();
}

void loom__grad_op_cache_put(loom__grad_op_cache_t* cache, loom_eager_op_t* op,
                             const char* op_name) {
  loom_status_t status = loom_eager_op_reset(op, NULL);
  if (status || cache->count == kGradOpCacheSize) {
    loom_status_free(status);
    loom_eager_op_recycle(op);
    return;
  }
  cache->keys[cache->count] = op_name;
  cache->ops[cache->count++] = op;
}

void loom__grad_op_cache_clear(loom__grad_op_cache_t* cache) {
  // The context keeps them for the next pass.
  for (int32_t i = 0; i < cache->count; ++i) {
    loom_eager_op_recycle(cache->ops[i]);
  }
  cache->count = 0;
}

//===----------------------------------------------------------------------===//
// Shape and layout helpers
//===----------------------------------------------------------------------===//

loom_status_t loom__grad_input_ints(loom_gradient_context_t* context,
                                    int32_t index, int64_t* values,
                                    int32_t capacity, int32_t* out_count) {
  *out_count = 0;
  loom_tensor_handle_t* handle = loom_gradient_context_input(context, index);
  if (!handle) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "loom__grad_input_ints: %s input %d was not kept",
                            loom_gradient_context_op_name(context), index);
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_resolve(context->eager, handle, &tensor));
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  int64_t count = loom_tensor_num_elements(tensor);
  loom_status_t status = loom_ok_status();
  if (dtype != LOOM_DTYPE_INT32 && dtype != LOOM_DTYPE_INT64) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s (gradient): input %d must be int32 or "
                              "int64, not %s",
                              loom_gradient_context_op_name(context), index,
                              loom_dtype_name(dtype));
  } else if (count > capacity) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s (gradient): input %d has %lld values, at "
                              "most %d are supported",
                              loom_gradient_context_op_name(context), index,
                              (long long)count, capacity);
  } else {
    const void* data = loom_tensor_data(tensor);
    for (int64_t i = 0; i < count; ++i) {
      values[i] = dtype == LOOM_DTYPE_INT32 ? ((const int32_t*)data)[i]
                                            : ((const int64_t*)data)[i];
    }
    *out_count = (int32_t)count;
  }
  loom_tensor_release(tensor);
  return status;
}

loom_status_t loom__grad_int_tensor(loom_gradient_context_t* context,
                                    loom_dtype_t dtype, const int64_t* dims,
                                    int32_t rank, const int64_t* values,
                                    loom_tensor_handle_t** out) {
  *out = NULL;
  if (!context || (rank > 0 && !dims)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom__grad_int_tensor: %s is NULL",
                            !context ? "context" : "dims");
  }
  if (dtype != LOOM_DTYPE_INT64) dtype = LOOM_DTYPE_INT32;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &shape, &tensor));
  int64_t count = loom_tensor_num_elements(tensor);
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < count; ++i) {
    if (dtype == LOOM_DTYPE_INT64) {
      ((int64_t*)data)[i] = values[i];
    } else {
      ((int32_t*)data)[i] = (int32_t)values[i];
    }
  }
  return new_constant(context, tensor, out);
}

loom_status_t loom__grad_reshape(loom_gradient_context_t* context,
                                 loom_tensor_handle_t* x, const int64_t* dims,
                                 int32_t rank, loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* shape = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_int_vector(context, LOOM_DTYPE_INT32, dims, rank, &shape));
  loom_status_t status = loom__grad_binary(context, "Reshape", x, shape, out);
  loom_tensor_handle_release(shape);
  return status;
}

loom_status_t loom__grad_transpose(loom_gradient_context_t* context,
                                   loom_tensor_handle_t* x, const int64_t* perm,
                                   int32_t rank, loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* handle = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_int_vector(context, LOOM_DTYPE_INT32, perm, rank, &handle));
  loom_status_t status =
      loom__grad_binary(context, "Transpose", x, handle, out);
  loom_tensor_handle_release(handle);
  return status;
}

loom_status_t loom__grad_sum(loom_gradient_context_t* context,
                             loom_tensor_handle_t* x, const int64_t* axes,
                             int32_t num_axes, bool keep_dims,
                             loom_tensor_handle_t** out) {
  *out = NULL;
  loom_tensor_handle_t* handle = NULL;
  LOOM_RETURN_IF_ERROR(loom__grad_int_vector(context, LOOM_DTYPE_INT32, axes,
                                             num_axes, &handle));
  loom_status_t status = loom__grad_op(
      context, "Sum", LOOM_GRAD_INPUTS(x, handle),
      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", keep_dims)), out);
  loom_tensor_handle_release(handle);
  return status;
}
