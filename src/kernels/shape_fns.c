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
  const int64_t* a_dims = loom_shape_dims(&a);
  const int64_t* b_dims = loom_shape_dims(&b);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a.rank), ib = i - (rank - b.rank);
    int64_t da = ia >= 0 ? a_dims[ia] : 1;
    int64_t db = ib >= 0 ? b_dims[ib] : 1;
    int64_t dim = LOOM_UNKNOWN_DIM;
    if (da >= 0 && db >= 0) {
      if (da != db && da != 1 && db != 1) {
        loom_shape_t out;
        return loom__broadcast_shapes(  // the error
            loom_shape_inference_context_op(context)->name, &a, &b, &out);
      }
      dim = da == 1 ? db : da;
    } else if (da > 1) {
      dim = da;
    } else if (db > 1) {
      dim = db;
    }
    dims[i] = dim;
  }
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, dims, rank));
  return loom_shape_inference_context_set_output(context, 0, &out);
}

loom_status_t loom__same_shape_error(const char* op, const loom_shape_t* a,
                                     const loom_shape_t* b) {
  char ta[LOOM_SHAPE_FORMAT_MAX], tb[LOOM_SHAPE_FORMAT_MAX];
  // TensorFlow's wording (OpKernelContext::ValidateInputsAreSameShape).
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Inputs to operation %s of type %s must have the "
                          "same size and shape.  Input 0: %s != input 1: %s",
                          op, op, loom__shape_debug_string(a, ta, sizeof(ta)),
                          loom__shape_debug_string(b, tb, sizeof(tb)));
}

loom_status_t loom__shape_fn_merge_inputs(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom_shape_t a, b;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &b));
  if (a.rank < 0) {
    return loom_shape_inference_context_set_output(context, 0, &b);
  }
  if (b.rank < 0) {
    return loom_shape_inference_context_set_output(context, 0, &a);
  }
  const char* op = loom_shape_inference_context_op(context)->name;
  loom_shape_t out;
  bool merged = false;
  LOOM_RETURN_IF_ERROR(loom__shape_merge(&a, &b, &out, &merged));
  if (!merged) return loom__same_shape_error(op, &a, &b);
  return loom_shape_inference_context_set_output(context, 0, &out);
}

loom_status_t loom__shape_merge(const loom_shape_t* a, const loom_shape_t* b,
                                loom_shape_t* out_shape, bool* out_merged) {
  *out_merged = false;
  if (a->rank != b->rank) return loom_ok_status();
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  int64_t large[LOOM_MAX_SHAPE_RANK];
  loom_shape_t out = *a;
  int64_t* dims = a->rank > LOOM_MAX_RANK ? large : out.dims;
  for (int32_t i = 0; i < a->rank; ++i) {
    if (a_dims[i] >= 0 && b_dims[i] >= 0 && a_dims[i] != b_dims[i]) {
      return loom_ok_status();
    }
    dims[i] = a_dims[i] >= 0 ? a_dims[i] : b_dims[i];
  }
  if (a->rank > LOOM_MAX_RANK) {
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, large, a->rank));
  }
  *out_shape = out;
  *out_merged = true;
  return loom_ok_status();
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
  if (a->rank == b->rank && a->rank >= 0 && a->rank <= LOOM_MAX_RANK) {
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
