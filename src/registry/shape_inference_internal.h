// The shape inference context (its fields are read by the TensorFlow shim).

#ifndef LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_
#define LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_

#include "loom/shape_inference.h"

// Shapes come either as arrays of shapes (and dtypes), or — from the core
// runtime, which has them that way — as arrays of tensor metadata, read in
// place rather than copied.
struct loom_shape_inference_context_t {
  const loom_op_def_t* op;
  const loom_op_attrs_t* attrs;
  const loom_shape_t* input_shapes;              // or NULL: input_metadata
  const loom_dtype_t* input_dtypes;              // may be NULL
  const loom_tensor_metadata_t* input_metadata;  // or NULL: the above
  loom_tensor_t* const* input_tensors;           // may be NULL
  int32_t num_inputs;
  loom_shape_t* output_shapes;              // or NULL: output_metadata
  loom_tensor_metadata_t* output_metadata;  // shapes only are written
  int32_t num_outputs;
  // Resources' handle data (loom_op_def_infer_shapes_with_handle_data);
  // NULL when the caller passes (asks for) none.
  const loom_handle_data_t* input_handle_data;
  loom_handle_data_t* output_handle_data;
  // Set when the shape function asked for an input's value: its result
  // then depends on more than the input shapes and the attributes.
  bool read_tensors;
};

static inline const loom_shape_t* loom__shape_context_input(
    const loom_shape_inference_context_t* context, int32_t index) {
  return context->input_metadata ? &context->input_metadata[index].shape
                                 : &context->input_shapes[index];
}

static inline loom_shape_t* loom__shape_context_output(
    loom_shape_inference_context_t* context, int32_t index) {
  return context->output_metadata ? &context->output_metadata[index].shape
                                  : &context->output_shapes[index];
}

// loom_op_def_infer_shapes over tensor metadata: reads input_metadata's
// dtypes and shapes, writes output_metadata's shapes (unknown rank where the
// shape function says nothing). Arguments are the caller's to check.
// *out_read_tensors (may be NULL): whether the shape function read an
// input's value.
loom_status_t loom__op_def_infer_metadata(
    const loom_op_def_t* op, const loom_op_attrs_t* attrs,
    const loom_tensor_metadata_t* input_metadata,
    loom_tensor_t* const* input_tensors, int32_t num_inputs,
    loom_tensor_metadata_t* output_metadata, int32_t num_outputs,
    bool* out_read_tensors);

#endif  // LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_
