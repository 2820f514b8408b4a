// Shape functions shared by the built-in ops (TFRT's metadata functions).

#ifndef LOOM_KERNELS_SHAPE_FNS_H_
#define LOOM_KERNELS_SHAPE_FNS_H_

#include <stddef.h>

#include "loom/op_def.h"
#include "loom/shape_inference.h"

// Output 0 is input 0's shape.
loom_status_t loom__shape_fn_unchanged(loom_shape_inference_context_t* context,
                                       void* user_data);

// Output 0 is the NumPy broadcast of inputs 0 and 1 (unknown dims and ranks
// allowed: what cannot be known stays unknown).
loom_status_t loom__shape_fn_broadcast(loom_shape_inference_context_t* context,
                                       void* user_data);

// Output 0 is inputs 0 and 1 merged: they must agree where both are known
// (the gradients whose inputs TensorFlow requires to have one shape).
loom_status_t loom__shape_fn_merge_inputs(
    loom_shape_inference_context_t* context, void* user_data);

// a and b (both of known rank, any rank) merged into *out_shape: each dim
// the known one of the pair. *out_merged is false (nothing set) when the
// ranks differ or known dims disagree.
loom_status_t loom__shape_merge(const loom_shape_t* a, const loom_shape_t* b,
                                loom_shape_t* out_shape, bool* out_merged);

// TensorFlow's INVALID_ARGUMENT for `op`'s inputs a and b of different
// shapes (OpKernelContext::ValidateInputsAreSameShape's wording).
loom_status_t loom__same_shape_error(const char* op, const loom_shape_t* a,
                                     const loom_shape_t* b);

// Their metadata functions (loom_metadata_fn_t): the same shapes for fully
// known inputs, without a shape inference context.
bool loom__metadata_fn_unchanged(const loom_tensor_metadata_t* inputs,
                                 int32_t num_inputs,
                                 loom_tensor_metadata_t* outputs,
                                 int32_t num_outputs);
bool loom__metadata_fn_broadcast(const loom_tensor_metadata_t* inputs,
                                 int32_t num_inputs,
                                 loom_tensor_metadata_t* outputs,
                                 int32_t num_outputs);

// Writes `shape` as TensorFlow's TensorShape::DebugString does ("[2,3]",
// "[?,3]", "[]", "<unknown>"), the form TensorFlow's messages quote, cut
// to `capacity`; returns `buffer`.
const char* loom__shape_debug_string(const loom_shape_t* shape, char* buffer,
                                     size_t capacity);

#endif  // LOOM_KERNELS_SHAPE_FNS_H_
