// Shape inference: running an op's shape function (TFRT's metadata
// function) and the shape algebra shape functions use. Everything here is
// synchronous and touches no tensor data.

#ifndef LOOM_SHAPE_INFERENCE_H_
#define LOOM_SHAPE_INFERENCE_H_

#include <stdint.h>

#include "loom/dtype.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/tensor_metadata.h"

LOOM_EXTERN_C_BEGIN

// Runs op's shape function for one invocation. `attrs` must be complete
// (loom_op_def_complete_attrs). input_tensors (may be NULL, or hold NULLs)
// offers the values of inputs known now, for data-dependent shapes.
// Outputs the function leaves unset, and all outputs of an op without a
// shape function, get an unknown shape. Errors from the shape function are
// returned annotated with the op name.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_op_def_infer_shapes(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_shape_t* input_shapes, const loom_dtype_t* input_dtypes,
    loom_tensor_t* const* input_tensors, int32_t num_inputs,
    loom_shape_t* output_shapes, int32_t num_outputs);

// A resource's handle data (TensorFlow's "handle data", kept for resource
// tensors): the dtype and shape of the value the resource holds — for a
// variable, VarHandleOp's `dtype` and `shape` attrs. dtype
// LOOM_DTYPE_INVALID: not known (the shape may then be anything).
typedef loom_tensor_metadata_t loom_handle_data_t;

// loom_op_def_infer_shapes that also passes resources' handle data along:
// input_handle_data (may be NULL: none known) offers the inputs', and
// output_handle_data (may be NULL) receives the outputs' (dtype
// LOOM_DTYPE_INVALID where the shape function sets none). Static shape
// inference (tracing, function bodies) uses it, so that a variable read
// (ReadVariableOp) has the variable's shape; eager execution does not, as
// an assign without validate_shape may change a variable's shape.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_op_def_infer_shapes_with_handle_data(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_shape_t* input_shapes, const loom_dtype_t* input_dtypes,
    loom_tensor_t* const* input_tensors,
    const loom_handle_data_t* input_handle_data, int32_t num_inputs,
    loom_shape_t* output_shapes, loom_handle_data_t* output_handle_data,
    int32_t num_outputs);

// What a shape function sees.
LOOM_API const loom_op_def_t* loom_shape_inference_context_op(
    const loom_shape_inference_context_t* context);
LOOM_API const loom_op_attrs_t* loom_shape_inference_context_attrs(
    const loom_shape_inference_context_t* context);
LOOM_API int32_t loom_shape_inference_context_num_inputs(
    const loom_shape_inference_context_t* context);
LOOM_API int32_t loom_shape_inference_context_num_outputs(
    const loom_shape_inference_context_t* context);
// OUT_OF_RANGE for a bad index.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_shape_inference_context_input(
    const loom_shape_inference_context_t* context, int32_t index,
    loom_shape_t* out_shape);
LOOM_API loom_dtype_t loom_shape_inference_context_input_dtype(
    const loom_shape_inference_context_t* context, int32_t index);
// The input's value when known now, else NULL.
LOOM_API const loom_tensor_t* loom_shape_inference_context_input_tensor(
    const loom_shape_inference_context_t* context, int32_t index);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_inference_context_set_output(loom_shape_inference_context_t* context,
                                        int32_t index,
                                        const loom_shape_t* shape);
// Whether input `index` (a resource) has known handle data, written to
// *out_data (false for a bad index or when the caller passed none).
LOOM_API bool loom_shape_inference_context_input_handle_data(
    const loom_shape_inference_context_t* context, int32_t index,
    loom_handle_data_t* out_data);
// Sets output `index`'s handle data (a resource the op makes); ignored when
// the caller does not ask for handle data. OUT_OF_RANGE for a bad index,
// INVALID_ARGUMENT for an invalid shape.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_inference_context_set_output_handle_data(
    loom_shape_inference_context_t* context, int32_t index,
    const loom_handle_data_t* data);

// Shape algebra, with TensorFlow's semantics and messages, for ranks up to
// LOOM_MAX_SHAPE_RANK (results above LOOM_MAX_RANK are spilled, loom/shape.h).
// An unknown rank passes every rank check and yields a shape of the asserted
// rank with unknown dims.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_shape_with_rank(
    const loom_shape_t* shape, int64_t rank, loom_shape_t* out_shape);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_shape_with_rank_at_least(
    const loom_shape_t* shape, int64_t rank, loom_shape_t* out_shape);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_shape_with_rank_at_most(
    const loom_shape_t* shape, int64_t rank, loom_shape_t* out_shape);
// Dimensions [start, end); negative indices count from the end; indices
// beyond the rank are clamped to it.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_subshape(const loom_shape_t* shape, int64_t start, int64_t end,
                    loom_shape_t* out_shape);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_shape_concatenate(const loom_shape_t* first, const loom_shape_t* second,
                       loom_shape_t* out_shape);
// Dimension `index` (negative: from the end); LOOM_UNKNOWN_DIM when the
// rank is unknown or the index is out of range.
LOOM_API int64_t loom_shape_dim(const loom_shape_t* shape, int64_t index);

LOOM_EXTERN_C_END

#endif  // LOOM_SHAPE_INFERENCE_H_
