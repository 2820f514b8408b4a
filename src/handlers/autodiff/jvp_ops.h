// Helpers for the built-in JVP functions: run the forward op again on
// tangents, add tangents that may be absent (zero), and give a tangent the
// shape of an output it was broadcast to.

#ifndef LOOM_HANDLERS_AUTODIFF_JVP_OPS_H_
#define LOOM_HANDLERS_AUTODIFF_JVP_OPS_H_

#include "loom/autodiff.h"

// Executes the forward op of `context` again, with its attributes, on its
// inputs where replacements[j] is NULL and on replacements[j] elsewhere;
// writes all its results (new references).
LOOM_MUST_USE_RESULT loom_status_t loom__jvp_rerun(
    loom_gradient_context_t* context, loom_tensor_handle_t* const* replacements,
    loom_tensor_handle_t** results);

// a + b, where either may be NULL (zero); both are consumed. *out is NULL
// when both are.
LOOM_MUST_USE_RESULT loom_status_t
loom__jvp_add(loom_gradient_context_t* context, loom_tensor_handle_t* a,
              loom_tensor_handle_t* b, loom_tensor_handle_t** out);

// `tangent` (consumed) broadcast to the shape of forward output `index`
// (itself when it has that shape already).
LOOM_MUST_USE_RESULT loom_status_t loom__jvp_fit_output(
    loom_gradient_context_t* context, loom_tensor_handle_t* tangent,
    int32_t index, loom_tensor_handle_t** out);

// Zeros shaped like forward input `index`.
LOOM_MUST_USE_RESULT loom_status_t
loom__jvp_zeros_like_input(loom_gradient_context_t* context, int32_t index,
                           loom_tensor_handle_t** out);

#endif  // LOOM_HANDLERS_AUTODIFF_JVP_OPS_H_
