// The shape inference context (its fields are read by the TensorFlow shim).

#ifndef LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_
#define LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_

#include "loom/shape_inference.h"

struct loom_shape_inference_context_t {
  const loom_op_def_t* op;
  const loom_op_attrs_t* attrs;
  const loom_shape_t* input_shapes;
  const loom_dtype_t* input_dtypes;     // may be NULL
  loom_tensor_t* const* input_tensors;  // may be NULL
  int32_t num_inputs;
  loom_shape_t* output_shapes;
  int32_t num_outputs;
};

#endif  // LOOM_REGISTRY_SHAPE_INFERENCE_INTERNAL_H_
