// Static shapes of a function body (function_shapes.c): each node's shape
// function run in body order over the dtypes, shapes and resources' handle
// data of the values it reads, calls of other functions of the library
// inferred the same way. Used at trace time (a call node's results in a
// trace, the shapes a printed program notes), never per call.

#ifndef LOOM_FUNCTION_FUNCTION_SHAPES_H_
#define LOOM_FUNCTION_FUNCTION_SHAPES_H_

#include "function/function_internal.h"
#include "loom/eager.h"
#include "loom/shape_inference.h"

// What is known of a value of the body before it runs.
typedef struct loom__function_static_value_t {
  loom_dtype_t dtype;
  loom_shape_t shape;              // may be (partly) unknown
  loom_handle_data_t handle_data;  // dtype LOOM_DTYPE_INVALID: unknown
  loom_tensor_t* tensor;           // its value when known (borrowed), or NULL
} loom__function_static_value_t;

// The body's static values: per node, its results (count -1: not known,
// the node could not be inferred, nor what reads it).
typedef struct loom__function_shapes_t loom__function_shapes_t;

// Infers the body of `function` called in `context` on inputs[0,
// num_inputs): the call's inputs, without the values the function captured
// and binds itself (their values are read from the function). An input
// shape is refined by the declared one. Shapes stay unknown where nothing
// can tell: an op without a shape function, a node of an unknown op, a
// function with attrs, calls nested deeper than
// LOOM_FUNCTION_MAX_CALL_DEPTH. INVALID_ARGUMENT naming the function, the
// input or node and the shapes when an input's shape contradicts the
// declared one or a node's shape function fails for these shapes (the call
// would fail the same way). *out_shapes is destroyed by the caller.
LOOM_MUST_USE_RESULT loom_status_t loom__function_shapes_infer(
    loom_context_t* context, const loom_function_t* function,
    const loom__function_static_value_t* inputs, int32_t num_inputs,
    loom__function_shapes_t** out_shapes);

void loom__function_shapes_destroy(loom__function_shapes_t* shapes);

// The results of node `node`: their number (-1: unknown) and *out_values
// (valid while `shapes` lives).
int32_t loom__function_shapes_node(const loom__function_shapes_t* shapes,
                                   int32_t node,
                                   const loom__function_static_value_t** out);

// Output `index` of the function (dtype from the signature, the shape
// unknown when not inferred; tensor NULL).
loom__function_static_value_t loom__function_shapes_output(
    const loom__function_shapes_t* shapes, int32_t index);

#endif  // LOOM_FUNCTION_FUNCTION_SHAPES_H_
