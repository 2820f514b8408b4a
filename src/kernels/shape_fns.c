// Shape functions shared by the built-in ops.

#include "kernels/shape_fns.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/broadcast.h"

loom_status_t loom__shape_fn_unchanged(loom_shape_inference_context_t* context,
                                       void* user_data) {
  (void)user_data;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &shape));
  return loom_shape_inference_context_set_output(context, 0, &shape);
}

loom_status_t loom__shape_fn_broadcast(loom_shape_inference_context_t* context,
                                       void* user_data) {
  (void)user_data;
  loom_shape_t a, b;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &b));
  if (loom_shape_is_fully_defined(&a) && loom_shape_is_fully_defined(&b)) {
    loom_shape_t out;
    LOOM_RETURN_IF_ERROR(loom__broadcast_shapes(
        loom_shape_inference_context_op(context)->name, &a, &b, &out));
    return loom_shape_inference_context_set_output(context, 0, &out);
  }
  if (a.rank < 0 || b.rank < 0) {
    loom_shape_t unknown = loom_shape_unknown();
    return loom_shape_inference_context_set_output(context, 0, &unknown);
  }
  // Partly known: a dim is known when both are, or one is known and not 1.
  int32_t rank = a.rank > b.rank ? a.rank : b.rank;
  loom_shape_t out = loom_shape_scalar();
  out.rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a.rank), ib = i - (rank - b.rank);
    int64_t da = ia >= 0 ? a.dims[ia] : 1;
    int64_t db = ib >= 0 ? b.dims[ib] : 1;
    int64_t dim = LOOM_UNKNOWN_DIM;
    if (da >= 0 && db >= 0) {
      if (da != db && da != 1 && db != 1) {
        return loom__broadcast_shapes(  // the error
            loom_shape_inference_context_op(context)->name, &a, &b, &out);
      }
      dim = da == 1 ? db : da;
    } else if (da > 1) {
      dim = da;
    } else if (db > 1) {
      dim = db;
    }
    out.dims[i] = dim;
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// Identity's input may be of any rank: its dims may be spilled.
static inline bool fully_known(const loom_shape_t* shape) {
  if (shape->rank < 0) return false;
  const int64_t* dims = loom_shape_dims(shape);
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (dims[i] < 0) return false;
  }
  return true;
}

bool loom__metadata_fn_unchanged(const loom_tensor_metadata_t* inputs,
                                 int32_t num_inputs,
                                 loom_tensor_metadata_t* outputs,
                                 int32_t num_outputs) {
  if (num_inputs < 1 || num_outputs != 1 || !fully_known(&inputs[0].shape)) {
    return false;
  }
  outputs[0].shape = inputs[0].shape;
  return true;
}

bool loom__metadata_fn_broadcast(const loom_tensor_metadata_t* inputs,
                                 int32_t num_inputs,
                                 loom_tensor_metadata_t* outputs,
                                 int32_t num_outputs) {
  if (num_inputs < 2 || num_outputs != 1) return false;
  const loom_shape_t* a = &inputs[0].shape;
  const loom_shape_t* b = &inputs[1].shape;
  if (a->rank == b->rank && a->rank >= 0) {
    // Equal shapes, the common case: one pass.
    int32_t i = 0;
    while (i < a->rank && a->dims[i] == b->dims[i] && a->dims[i] >= 0) ++i;
    if (i == a->rank) {
      outputs[0].shape = *a;
      return true;
    }
  }
  if (!fully_known(a) || !fully_known(b)) return false;
  // Shapes that do not broadcast: the shape function words the error.
  loom_status_t status = loom__broadcast_shapes("", a, b, &outputs[0].shape);
  if (status) {
    loom_status_free(status);
    return false;
  }
  return true;
}

const char* loom__shape_debug_string(const loom_shape_t* shape, char* buffer,
                                     size_t capacity) {
  if (capacity == 0) return buffer;
  if (shape->rank < 0) {
    snprintf(buffer, capacity, "<unknown>");
    return buffer;
  }
  // Errors of the ops that take any rank print spilled shapes too.
  const int64_t* dims = loom_shape_dims(shape);
  size_t used = 0;
  buffer[0] = '\0';
  used += (size_t)snprintf(buffer, capacity, "[");
  for (int32_t i = 0; i < shape->rank && used < capacity; ++i) {
    if (dims[i] < 0) {
      used +=
          (size_t)snprintf(buffer + used, capacity - used, "%s?", i ? "," : "");
    } else {
      used += (size_t)snprintf(buffer + used, capacity - used, "%s%" PRId64,
                               i ? "," : "", dims[i]);
    }
  }
  if (used < capacity) snprintf(buffer + used, capacity - used, "]");
  return buffer;
}
