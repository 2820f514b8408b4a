// jacrev, jacfwd and hessian (loom/jacobian.h): a vmap over the basis
// vectors of one space, with a tape (reverse mode: the basis is the output
// gradient) or a forward accumulator (forward mode: the basis is the
// tangent) inside it. The function's ops see only unbatched tensors and run
// once; the backward (or tangent) ops see the batched basis and run once
// over the whole batch, by the vmap's rules.

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/jacobian.h"
#include "loom/vmap.h"
#include "tensor/checked_size.h"

static loom_status_t check_arguments(const char* function,
                                     loom_context_t* context,
                                     loom_tensor_fn_t fn,
                                     loom_tensor_handle_t* x, void* out) {
  const char* missing = !context ? "context"
                        : !fn    ? "fn"
                        : !x     ? "x"
                        : !out   ? "the output pointer"
                                 : NULL;
  if (missing) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            function, missing);
  }
  return loom_ok_status();
}

// The metadata of a tensor that must be float or double (`what`: "x", "y").
static loom_status_t float_metadata(const char* function, const char* what,
                                    loom_tensor_handle_t* handle,
                                    loom_tensor_metadata_t* out) {
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(handle, out));
  if (out->dtype != LOOM_DTYPE_FLOAT && out->dtype != LOOM_DTYPE_DOUBLE) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %s has dtype %s; expected float or double",
                            function, what, loom_dtype_name(out->dtype));
  }
  return loom_ok_status();
}

// The identity of `n` rows as [n, shape...] of `dtype`: row k is the k-th
// basis vector of a space of that shape.
static loom_status_t basis(const char* function, loom_context_t* context,
                           loom_dtype_t dtype, const loom_shape_t* shape,
                           loom_tensor_handle_t** out) {
  *out = NULL;
  int64_t n = loom_shape_num_elements(shape);
  int64_t count = 0, bytes = 0;
  if (shape->rank + 1 > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: a tensor of rank %d has a Jacobian of rank "
                            "above %d",
                            function, shape->rank, LOOM_MAX_RANK);
  }
  if (n < 0 || !loom__size_mul(n, n, &count) ||
      !loom__size_mul(count, (int64_t)loom_dtype_size(dtype), &bytes)) {
    return loom__size_overflow_error(function, "x",
                                     "a basis of %lld vectors of %lld elements",
                                     (long long)n, (long long)n);
  }
  int64_t dims[LOOM_MAX_RANK];
  dims[0] = n;
  for (int32_t d = 0; d < shape->rank; ++d) dims[d + 1] = shape->dims[d];
  loom_shape_t basis_shape;
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize(&basis_shape, dims, shape->rank + 1));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &basis_shape, &tensor));
  void* data = loom_tensor_data(tensor);
  if (bytes) memset(data, 0, (size_t)bytes);
  for (int64_t k = 0; k < n; ++k) {
    if (dtype == LOOM_DTYPE_DOUBLE) {
      ((double*)data)[k * n + k] = 1.0;
    } else {
      ((float*)data)[k * n + k] = 1.0f;
    }
  }
  loom_status_t status = loom_context_new_handle(context, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

// Calls the function; OK without a tensor is an error.
static loom_status_t call_fn(const char* function, loom_context_t* context,
                             loom_tensor_fn_t fn, void* user_data,
                             loom_tensor_handle_t* x,
                             loom_tensor_handle_t** out_y) {
  *out_y = NULL;
  LOOM_RETURN_IF_ERROR(fn(context, x, user_data, out_y));
  if (!*out_y) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the function returned OK without a tensor",
                            function);
  }
  return loom_ok_status();
}

// `value` reshaped to the dims of `first` then those of `second`.
static loom_status_t reshape_to(const char* function, loom_context_t* context,
                                loom_tensor_handle_t* value,
                                const loom_shape_t* first,
                                const loom_shape_t* second,
                                loom_tensor_handle_t** out) {
  *out = NULL;
  if (first->rank + second->rank > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: a Jacobian of ranks %d + %d is above rank %d",
                            function, first->rank, second->rank, LOOM_MAX_RANK);
  }
  int64_t dims[LOOM_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < first->rank; ++d) dims[rank++] = first->dims[d];
  for (int32_t d = 0; d < second->rank; ++d) dims[rank++] = second->dims[d];
  int64_t length = rank;
  loom_shape_t vector;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&vector, &length, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      loom_allocator_default(), LOOM_DTYPE_INT64, &vector, &tensor));
  if (rank) memcpy(loom_tensor_data(tensor), dims, sizeof(int64_t) * rank);
  loom_tensor_handle_t* shape = NULL;
  loom_status_t status = loom_context_new_handle(context, tensor, &shape);
  loom_tensor_release(tensor);
  if (status) return status;
  loom_tensor_handle_t* inputs[2] = {value, shape};
  status =
      loom__grad_execute_in(context, "Reshape", inputs, 2, NULL, 0, out, 1);
  loom_tensor_handle_release(shape);
  return status;
}

loom_status_t loom_jacrev(loom_context_t* context, loom_tensor_fn_t fn,
                          void* user_data, loom_tensor_handle_t* x,
                          loom_tensor_handle_t** out_jacobian) {
  static const char kFunction[] = "loom_jacrev";
  LOOM_RETURN_IF_ERROR(
      check_arguments(kFunction, context, fn, x, out_jacobian));
  *out_jacobian = NULL;
  loom_tensor_metadata_t x_metadata, y_metadata;
  LOOM_RETURN_IF_ERROR(float_metadata(kFunction, "x", x, &x_metadata));
  loom_op_handler_t* vmap = NULL;
  loom_op_handler_t* tape = NULL;
  loom_tensor_handle_t *y = NULL, *e = NULL, *seed = NULL, *gradient = NULL,
                       *rows = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_vmap_create(context, LOOM_VMAP_BATCH_SIZE_UNKNOWN, &vmap));
  loom_status_t status = loom_context_enter_scope(context, vmap);
  if (status) {
    loom_op_handler_release(vmap);
    return status;
  }
  // The function under a tape in the vmap's scope: its ops are unbatched
  // and run once; their gradients run on the vmap.
  status = loom_tape_create(context, NULL, &tape);
  if (!status) status = loom_context_enter_scope(context, tape);
  if (!status) {
    status = loom_tape_watch(tape, x);
    if (!status) status = call_fn(kFunction, context, fn, user_data, x, &y);
    loom_status_ignore(loom_context_exit_scope(context));
  }
  if (!status) status = float_metadata(kFunction, "y", y, &y_metadata);
  // One output gradient per element of y: the rows of the Jacobian.
  if (!status) {
    status = basis(kFunction, context, y_metadata.dtype, &y_metadata.shape, &e);
  }
  if (!status) status = loom_vmap_in(vmap, e, 0, &seed);
  if (!status) {
    status = loom_tape_gradient(tape, &y, 1, &x, 1, &seed,
                                LOOM_UNCONNECTED_ZERO, &gradient);
  }
  if (!status) status = loom_vmap_out(vmap, gradient, 0, &rows);
  loom_status_ignore(loom_context_exit_scope(context));
  if (!status) {
    status = reshape_to(kFunction, context, rows, &y_metadata.shape,
                        &x_metadata.shape, out_jacobian);
  }
  loom_tensor_handle_t* all[] = {y, e, seed, gradient, rows};
  loom__grad_release_all(all, 5);
  if (tape) loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
  return status;
}

loom_status_t loom_jacfwd(loom_context_t* context, loom_tensor_fn_t fn,
                          void* user_data, loom_tensor_handle_t* x,
                          loom_tensor_handle_t** out_jacobian) {
  static const char kFunction[] = "loom_jacfwd";
  LOOM_RETURN_IF_ERROR(
      check_arguments(kFunction, context, fn, x, out_jacobian));
  *out_jacobian = NULL;
  loom_tensor_metadata_t x_metadata, y_metadata;
  LOOM_RETURN_IF_ERROR(float_metadata(kFunction, "x", x, &x_metadata));
  loom_op_handler_t* vmap = NULL;
  loom_op_handler_t* accumulator = NULL;
  loom_tensor_handle_t *e = NULL, *tangent = NULL, *primal = NULL, *y = NULL,
                       *jvp = NULL, *columns = NULL;
  // One tangent per element of x: the columns of the Jacobian.
  LOOM_RETURN_IF_ERROR(
      basis(kFunction, context, x_metadata.dtype, &x_metadata.shape, &e));
  loom_status_t status =
      loom_vmap_create(context, LOOM_VMAP_BATCH_SIZE_UNKNOWN, &vmap);
  bool in_vmap = false;
  if (!status) status = loom_context_enter_scope(context, vmap);
  in_vmap = !status;
  if (!status) status = loom_vmap_in(vmap, e, 0, &tangent);
  if (!status) status = loom_forward_accumulator_create(context, &accumulator);
  if (!status) status = loom_context_enter_scope(context, accumulator);
  if (!status) {
    status = loom_forward_accumulator_watch(accumulator, x, tangent, &primal);
    if (!status) {
      status = call_fn(kFunction, context, fn, user_data, primal, &y);
    }
    loom_status_ignore(loom_context_exit_scope(context));
  }
  if (!status) status = float_metadata(kFunction, "y", y, &y_metadata);
  if (!status) {
    status = loom_forward_accumulator_jvp(accumulator, y, LOOM_UNCONNECTED_ZERO,
                                          &jvp);
  }
  if (!status) {
    status = loom_vmap_out(vmap, jvp, y_metadata.shape.rank, &columns);
  }
  if (in_vmap) loom_status_ignore(loom_context_exit_scope(context));
  if (!status) {
    status = reshape_to(kFunction, context, columns, &y_metadata.shape,
                        &x_metadata.shape, out_jacobian);
  }
  loom_tensor_handle_t* all[] = {e, tangent, primal, y, jvp, columns};
  loom__grad_release_all(all, 6);
  if (accumulator) loom_op_handler_release(accumulator);
  if (vmap) loom_op_handler_release(vmap);
  return status;
}

typedef struct hessian_fn_t {
  loom_tensor_fn_t fn;
  void* user_data;
} hessian_fn_t;

static loom_status_t jacrev_of(loom_context_t* context, loom_tensor_handle_t* x,
                               void* user_data, loom_tensor_handle_t** out) {
  const hessian_fn_t* inner = user_data;
  return loom_jacrev(context, inner->fn, inner->user_data, x, out);
}

loom_status_t loom_hessian(loom_context_t* context, loom_tensor_fn_t fn,
                           void* user_data, loom_tensor_handle_t* x,
                           loom_tensor_handle_t** out_hessian) {
  LOOM_RETURN_IF_ERROR(
      check_arguments("loom_hessian", context, fn, x, out_hessian));
  hessian_fn_t inner = {.fn = fn, .user_data = user_data};
  return loom_jacfwd(context, jacrev_of, &inner, x, out_hessian);
}
