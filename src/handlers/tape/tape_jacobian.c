// The Jacobian of a target with respect to a source, one gradient per
// element of the target (a one-hot seed each), packed and reshaped to the
// target's shape followed by the source's.

#include <string.h>

#include "handlers/tape/tape_internal.h"

loom_status_t loom_tape_jacobian(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* target,
                                 loom_tensor_handle_t* source,
                                 loom_tensor_handle_t** out_jacobian) {
  tape_t* tape = loom__tape_of(handler);
  if (!tape) return loom__tape_not_a_tape("loom_tape_jacobian", handler);
  if (!target || !source || !out_jacobian) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: %s is NULL",
                            !target   ? "target"
                            : !source ? "source"
                                      : "out_jacobian");
  }
  *out_jacobian = NULL;
  if (!tape->options.persistent) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "loom_tape_jacobian: the tape must be persistent "
                            "(it computes one gradient per element of the "
                            "target)");
  }
  loom_tensor_metadata_t target_metadata, source_metadata;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(target, &target_metadata));
  LOOM_RETURN_IF_ERROR(
      loom_tensor_handle_wait_metadata(source, &source_metadata));
  loom_dtype_t dtype = target_metadata.dtype;
  if ((dtype != LOOM_DTYPE_FLOAT && dtype != LOOM_DTYPE_DOUBLE) ||
      source_metadata.dtype == LOOM_DTYPE_RESOURCE ||
      !loom_shape_is_fully_defined(&target_metadata.shape) ||
      target_metadata.shape.rank + source_metadata.shape.rank > LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: needs a float or double "
                            "target and a tensor source whose ranks add up "
                            "to at most %d",
                            LOOM_MAX_RANK);
  }
  int64_t count = loom_shape_num_elements(&target_metadata.shape);
  if (count > (1 << 20)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tape_jacobian: the target has %lld "
                            "elements; the row-by-row Jacobian is meant for "
                            "small cases",
                            (long long)count);
  }
  loom_context_t* eager = tape->context;
  loom_tensor_handle_t** rows = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      tape->allocator, sizeof(*rows) * (size_t)(count + 1), (void**)&rows));
  loom_status_t status = loom_ok_status();
  size_t element = loom_dtype_size(dtype);
  for (int64_t i = 0; i < count && !status; ++i) {
    loom_tensor_t* one_hot = NULL;
    status = loom_tensor_create_dense(tape->allocator, dtype,
                                      &target_metadata.shape, &one_hot);
    if (status) break;
    memset(loom_tensor_data(one_hot), 0, element * (size_t)count);
    if (dtype == LOOM_DTYPE_FLOAT) {
      ((float*)loom_tensor_data(one_hot))[i] = 1.0f;
    } else {
      ((double*)loom_tensor_data(one_hot))[i] = 1.0;
    }
    loom_tensor_handle_t* seed = NULL;
    status = loom_context_new_handle(eager, one_hot, &seed);
    loom_tensor_release(one_hot);
    if (!status) {
      status = loom_tape_gradient(handler, &target, 1, &source, 1, &seed,
                                  LOOM_UNCONNECTED_ZERO, &rows[i]);
    }
    loom_tensor_handle_release(seed);
  }
  loom_shape_t shape = target_metadata.shape;
  for (int32_t d = 0; d < source_metadata.shape.rank; ++d) {
    shape.dims[shape.rank++] = source_metadata.shape.dims[d];
  }
  loom_gradient_context_t context;
  loom__gradient_context_initialize(&context, eager, "Pack", NULL, NULL, 0,
                                    NULL, NULL, 0, NULL, NULL);
  if (!status && count == 0) {
    loom_tensor_metadata_t metadata = {.dtype = source_metadata.dtype,
                                       .shape = shape};
    status = loom__grad_filled(&context, &metadata, 0.0, out_jacobian);
  } else if (!status) {
    loom_tensor_handle_t* packed = NULL;
    status = loom__grad_execute(
        &context, "Pack", rows, (int32_t)count,
        LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", count), LOOM_GRAD_INT("axis", 0)),
        &packed, 1);
    loom_tensor_handle_t* dims = NULL;
    if (!status) status = loom__grad_shape_constant(&context, &shape, &dims);
    if (!status) {
      status =
          loom__grad_binary(&context, "Reshape", packed, dims, out_jacobian);
    }
    loom_tensor_handle_release(dims);
    loom_tensor_handle_release(packed);
  }
  loom__grad_release_all(rows, (int32_t)count);
  loom_allocator_free(tape->allocator, rows);
  return status;
}
