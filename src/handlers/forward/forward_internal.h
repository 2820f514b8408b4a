// Shared by the files of src/handlers/forward/:
//   forward.c        the forward accumulator handler and its API;
//   jvp_fallback.c   JVPs of ops with a gradient function but no JVP
//                    function, by transposing the gradient;
//   jvp_ops.c        helpers for JVP functions;
//   jvp_<family>.c   the built-in JVP functions (registered with the
//                    gradient families, see
//                    handlers/autodiff/gradient_families.h).

#ifndef LOOM_HANDLERS_FORWARD_FORWARD_INTERNAL_H_
#define LOOM_HANDLERS_FORWARD_FORWARD_INTERNAL_H_

#include "loom/autodiff.h"

// The tangents of the outputs of the op `context` describes, computed from
// its gradient function `gradient` (the double-transpose trick): with u a
// watched dummy upstream gradient, VJP(u) = gradient(u) is linear in u, and
// J v is the gradient of <VJP(u), v> with respect to u, which a tape
// around the gradient function computes. input_tangents[j] may be NULL
// (zero); output_tangents[k] receives a new reference or stays NULL.
LOOM_MUST_USE_RESULT loom_status_t loom__forward_jvp_by_transposition(
    const loom_gradient_def_t* gradient, loom_gradient_context_t* context,
    loom_tensor_handle_t* const* input_tangents,
    loom_tensor_handle_t** output_tangents);

#endif  // LOOM_HANDLERS_FORWARD_FORWARD_INTERNAL_H_
