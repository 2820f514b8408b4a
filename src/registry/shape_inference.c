// Running shape functions, and the shape algebra they use.

#include "loom/shape_inference.h"

#include <inttypes.h>
#include <string.h>

#include "registry/shape_inference_internal.h"
#include "tensor/checked_size.h"
#include "tensor/shape_internal.h"

const loom_op_def_t* loom_shape_inference_context_op(
    const loom_shape_inference_context_t* context) {
  return context->op;
}

const loom_op_attrs_t* loom_shape_inference_context_attrs(
    const loom_shape_inference_context_t* context) {
  return context->attrs;
}

int32_t loom_shape_inference_context_num_inputs(
    const loom_shape_inference_context_t* context) {
  return context->num_inputs;
}

int32_t loom_shape_inference_context_num_outputs(
    const loom_shape_inference_context_t* context) {
  return context->num_outputs;
}

loom_status_t loom_shape_inference_context_input(
    const loom_shape_inference_context_t* context, int32_t index,
    loom_shape_t* out_shape) {
  if (!context || !out_shape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "shape inference: input: NULL argument");
  }
  if (index < 0 || index >= context->num_inputs) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "Op '%s': input index %d is outside [0, %d)",
                            context->op->name, index, context->num_inputs);
  }
  *out_shape = *loom__shape_context_input(context, index);
  return loom_ok_status();
}

loom_dtype_t loom_shape_inference_context_input_dtype(
    const loom_shape_inference_context_t* context, int32_t index) {
  if (!context || index < 0 || index >= context->num_inputs) {
    return LOOM_DTYPE_INVALID;
  }
  if (context->input_metadata) return context->input_metadata[index].dtype;
  return context->input_dtypes ? context->input_dtypes[index]
                               : LOOM_DTYPE_INVALID;
}

const loom_tensor_t* loom_shape_inference_context_input_tensor(
    const loom_shape_inference_context_t* context, int32_t index) {
  if (!context || index < 0 || index >= context->num_inputs) return NULL;
  // The context is the caller's own, built for this one call.
  ((loom_shape_inference_context_t*)context)->read_tensors = true;
  if (!context->input_tensors) return NULL;
  return context->input_tensors[index];
}

loom_status_t loom_shape_inference_context_set_output(
    loom_shape_inference_context_t* context, int32_t index,
    const loom_shape_t* shape) {
  if (!context || !shape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "shape inference: set_output: NULL argument");
  }
  if (index < 0 || index >= context->num_outputs) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "Op '%s': output index %d is outside [0, %d)",
                            context->op->name, index, context->num_outputs);
  }
  // A shape function (maybe a plugin's) must not hand out a shape whose
  // rank or dims later code would index out of bounds.
  bool valid = shape->rank >= LOOM_UNKNOWN_RANK && shape->rank <= LOOM_MAX_RANK;
  for (int32_t i = 0; valid && i < shape->rank; ++i) {
    valid = shape->dims[i] >= LOOM_UNKNOWN_DIM;
  }
  // A spilled shape (an input's passed on) is valid when the pool made it.
  bool spilled = shape->rank > LOOM_MAX_RANK &&
                 shape->rank <= LOOM_MAX_SHAPE_RANK &&
                 loom__shape_pool_owns(shape->spilled, shape->rank);
  if (spilled) {
    valid = true;
  } else if (!valid) {
    loom_shape_t checked;
    loom_status_t status =
        loom_shape_initialize(&checked, shape->dims, shape->rank);
    return loom_status_annotate(status, "Op '%s': output %d", context->op->name,
                                index);
  }
  // Nor one no tensor can have: more elements than int64 counts (a shape
  // function that sums or multiplies user values without checking).
  int64_t count;
  const int64_t* dims = loom_shape_dims(shape);
  if (loom_shape_is_fully_defined(shape) &&
      !loom__size_product(dims, shape->rank, &count)) {
    char text[256];
    return loom__size_overflow_error(
        context->op->name, "output", "%d of shape %s", (int)index,
        loom__format_int64s(dims, shape->rank, text, sizeof(text)));
  }
  *loom__shape_context_output(context, index) = *shape;
  return loom_ok_status();
}

bool loom_shape_inference_context_input_handle_data(
    const loom_shape_inference_context_t* context, int32_t index,
    loom_handle_data_t* out_data) {
  if (!context || !out_data || !context->input_handle_data || index < 0 ||
      index >= context->num_inputs) {
    return false;
  }
  const loom_handle_data_t* data = &context->input_handle_data[index];
  if (data->dtype == LOOM_DTYPE_INVALID) return false;
  *out_data = *data;
  return true;
}

loom_status_t loom_shape_inference_context_set_output_handle_data(
    loom_shape_inference_context_t* context, int32_t index,
    const loom_handle_data_t* data) {
  if (!context || !data) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "shape inference: set_output_handle_data: NULL "
                            "argument");
  }
  if (index < 0 || index >= context->num_outputs) {
    return loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                            "Op '%s': output index %d is outside [0, %d)",
                            context->op->name, index, context->num_outputs);
  }
  const loom_shape_t* shape = &data->shape;
  if (shape->rank < LOOM_UNKNOWN_RANK || shape->rank > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Op '%s': handle data of output %d has rank %d, "
                            "outside [-1, %d]",
                            context->op->name, index, shape->rank,
                            LOOM_MAX_SHAPE_RANK);
  }
  const int64_t* dims = loom_shape_dims(shape);
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (dims[i] < LOOM_UNKNOWN_DIM) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Op '%s': handle data of output %d has dim %d "
                              "of %lld",
                              context->op->name, index, i, (long long)dims[i]);
    }
  }
  if (context->output_handle_data) context->output_handle_data[index] = *data;
  return loom_ok_status();
}

// Whether `message` already says "Op '<name>'" or starts with "<name>: ",
// as the checked-size errors do (the op name alone is not enough: an op
// named "Shape" has messages saying "Shape must be ...").
static bool mentions_op(const char* message, const char* name) {
  size_t length = strlen(name);
  if (strncmp(message, name, length) == 0 && message[length] == ':') {
    return true;
  }
  for (const char* at = strstr(message, "Op '"); at;
       at = strstr(at + 1, "Op '")) {
    if (strncmp(at + 4, name, length) == 0 && at[4 + length] == '\'') {
      return true;
    }
  }
  return false;
}

static loom_status_t run_shape_fn(loom_shape_inference_context_t* context) {
  const loom_op_def_t* op = context->op;
  for (int32_t i = 0; i < context->num_outputs; ++i) {
    // Dims are unused at unknown rank.
    loom__shape_context_output(context, i)->rank = LOOM_UNKNOWN_RANK;
    if (context->output_handle_data) {
      context->output_handle_data[i] = (loom_handle_data_t){
          .dtype = LOOM_DTYPE_INVALID,
          .shape = loom_shape_unknown(),
      };
    }
  }
  if (!op->shape_fn) return loom_ok_status();
  loom_status_t status = op->shape_fn(context, op->shape_fn_user_data);
  // Messages from shape functions do not know the op; add it once.
  if (status && !mentions_op(loom_status_message(status), op->name)) {
    status = loom_status_annotate(status, "Op '%s'", op->name);
  }
  return status;
}

loom_status_t loom_op_def_infer_shapes(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_shape_t* input_shapes, const loom_dtype_t* input_dtypes,
    loom_tensor_t* const* input_tensors, int32_t num_inputs,
    loom_shape_t* output_shapes, int32_t num_outputs) {
  if (!op || !attrs || (num_inputs > 0 && !input_shapes) ||
      (num_outputs > 0 && !output_shapes) || num_inputs < 0 ||
      num_outputs < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_infer_shapes: invalid arguments");
  }
  loom_shape_inference_context_t context = {.op = op,
                                            .attrs = attrs,
                                            .input_shapes = input_shapes,
                                            .input_dtypes = input_dtypes,
                                            .input_tensors = input_tensors,
                                            .num_inputs = num_inputs,
                                            .output_shapes = output_shapes,
                                            .num_outputs = num_outputs};
  return run_shape_fn(&context);
}

loom_status_t loom_op_def_infer_shapes_with_handle_data(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_shape_t* input_shapes, const loom_dtype_t* input_dtypes,
    loom_tensor_t* const* input_tensors,
    const loom_handle_data_t* input_handle_data, int32_t num_inputs,
    loom_shape_t* output_shapes, loom_handle_data_t* output_handle_data,
    int32_t num_outputs) {
  if (!op || !attrs || (num_inputs > 0 && !input_shapes) ||
      (num_outputs > 0 && !output_shapes) || num_inputs < 0 ||
      num_outputs < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_infer_shapes_with_handle_data: "
                            "invalid arguments");
  }
  loom_shape_inference_context_t context = {
      .op = op,
      .attrs = attrs,
      .input_shapes = input_shapes,
      .input_dtypes = input_dtypes,
      .input_tensors = input_tensors,
      .num_inputs = num_inputs,
      .output_shapes = output_shapes,
      .num_outputs = num_outputs,
      .input_handle_data = input_handle_data,
      .output_handle_data = output_handle_data,
  };
  return run_shape_fn(&context);
}

loom_status_t loom__op_def_infer_metadata(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_tensor_metadata_t* input_metadata,
    loom_tensor_t* const* input_tensors, int32_t num_inputs,
    loom_tensor_metadata_t* output_metadata, int32_t num_outputs,
    bool* out_read_tensors) {
  loom_shape_inference_context_t context = {.op = op,
                                            .attrs = attrs,
                                            .input_metadata = input_metadata,
                                            .input_tensors = input_tensors,
                                            .num_inputs = num_inputs,
                                            .output_metadata = output_metadata,
                                            .num_outputs = num_outputs};
  loom_status_t status = run_shape_fn(&context);
  if (out_read_tensors) *out_read_tensors = context.read_tensors;
  return status;
}

//===----------------------------------------------------------------------===//
// Shape algebra
//===----------------------------------------------------------------------===//

// A shape of `rank` unknown dims (checked by check_rank_argument; above
// LOOM_MAX_RANK they are interned).
static loom_status_t unknown_dims(int64_t rank, loom_shape_t* out_shape) {
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < rank; ++i) dims[i] = LOOM_UNKNOWN_DIM;
  return loom_shape_initialize_large(out_shape, dims, (int)rank);
}

static loom_status_t check_rank_argument(int64_t rank, const char* function) {
  if (rank < 0 || rank > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: rank %" PRId64 " is outside [0, %d]", function,
                            rank, LOOM_MAX_SHAPE_RANK);
  }
  return loom_ok_status();
}

loom_status_t loom_shape_with_rank(const loom_shape_t* shape, int64_t rank,
                                   loom_shape_t* out_shape) {
  LOOM_RETURN_IF_ERROR(check_rank_argument(rank, "WithRank"));
  if (shape->rank < 0) return unknown_dims(rank, out_shape);
  if (shape->rank != rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Shape must be rank %" PRId64 " but is rank %d",
                            rank, shape->rank);
  }
  *out_shape = *shape;
  return loom_ok_status();
}

loom_status_t loom_shape_with_rank_at_least(const loom_shape_t* shape,
                                            int64_t rank,
                                            loom_shape_t* out_shape) {
  LOOM_RETURN_IF_ERROR(check_rank_argument(rank, "WithRankAtLeast"));
  if (shape->rank >= 0 && shape->rank < rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Shape must be at least rank %" PRId64
                            " but is rank %d",
                            rank, shape->rank);
  }
  *out_shape = *shape;
  return loom_ok_status();
}

loom_status_t loom_shape_with_rank_at_most(const loom_shape_t* shape,
                                           int64_t rank,
                                           loom_shape_t* out_shape) {
  LOOM_RETURN_IF_ERROR(check_rank_argument(rank, "WithRankAtMost"));
  if (shape->rank > rank) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Shape must be at most rank %" PRId64
                            " but is rank %d",
                            rank, shape->rank);
  }
  *out_shape = *shape;
  return loom_ok_status();
}

loom_status_t loom_shape_subshape(const loom_shape_t* shape, int64_t start,
                                  int64_t end, loom_shape_t* out_shape) {
  if (shape->rank < 0) {
    *out_shape = loom_shape_unknown();
    return loom_ok_status();
  }
  int64_t rank = shape->rank;
  int64_t s = start, e = end;
  if (s > rank) s = rank;
  if (e > rank) e = rank;
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  if (s < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Subshape start out of bounds: %" PRId64
                            ", for shape with rank %" PRId64,
                            start, rank);
  }
  if (e < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Subshape end out of bounds: %" PRId64
                            ", for shape with rank %" PRId64,
                            end, rank);
  }
  if (s > e) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Subshape must have computed start <= end, but is %" PRId64
        " and %" PRId64 " (computed from start %" PRId64 " and end %" PRId64
        " over shape with rank %" PRId64 ")",
        s, e, start, end, rank);
  }
  return loom_shape_initialize_large(out_shape, loom_shape_dims(shape) + s,
                                     (int)(e - s));
}

loom_status_t loom_shape_concatenate(const loom_shape_t* first,
                                     const loom_shape_t* second,
                                     loom_shape_t* out_shape) {
  if (first->rank < 0 || second->rank < 0) {
    *out_shape = loom_shape_unknown();
    return loom_ok_status();
  }
  if (first->rank + second->rank > LOOM_MAX_SHAPE_RANK) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "concatenating shapes of rank %d and %d exceeds the maximum rank %d",
        first->rank, second->rank, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  memcpy(dims, loom_shape_dims(first), sizeof(int64_t) * (size_t)first->rank);
  memcpy(dims + first->rank, loom_shape_dims(second),
         sizeof(int64_t) * (size_t)second->rank);
  return loom_shape_initialize_large(out_shape, dims,
                                     first->rank + second->rank);
}

int64_t loom_shape_dim(const loom_shape_t* shape, int64_t index) {
  if (shape->rank < 0) return LOOM_UNKNOWN_DIM;
  if (index < 0) index += shape->rank;
  if (index < 0 || index >= shape->rank) return LOOM_UNKNOWN_DIM;
  return loom_shape_dims(shape)[index];
}
