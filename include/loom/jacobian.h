// Jacobians and Hessians of eager functions (JAX's jacrev, jacfwd and
// hessian; torch.autograd.functional.jacobian and hessian), built from the
// gradient tape, the forward accumulator and vmap:
//
//   static loom_status_t f(loom_context_t* ctx, loom_tensor_handle_t* x,
//                          void* user_data, loom_tensor_handle_t** out_y) {
//     ... *out_y = y, computed from x with eager ops in the current scope ...
//   }
//   loom_tensor_handle_t* jacobian;  // y.shape + x.shape
//   LOOM_RETURN_IF_ERROR(loom_jacrev(ctx, f, NULL, x, &jacobian));
//
// Each is one batched pass, not a loop over rows or columns: jacrev runs
// f once under a tape and its backward pass once under a vmap over the
// basis vectors of y's space (one output gradient per element of y);
// jacfwd runs f once under a forward accumulator whose tangent is mapped
// over the basis vectors of x's space. The basis is materialized, so the
// cost in memory is that of the Jacobian: meant for small functions.
// jacrev suits functions with fewer outputs than inputs, jacfwd the others.

#ifndef LOOM_JACOBIAN_H_
#define LOOM_JACOBIAN_H_

#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"

LOOM_EXTERN_C_BEGIN

// A function of one tensor: computes *out_y (a new reference) from `x`
// (borrowed) with eager ops on `context`, in the current scope (the
// transformations' handlers are entered around it). It may be called more
// than once, and nested (a Hessian differentiates a Jacobian).
typedef loom_status_t (*loom_tensor_fn_t)(loom_context_t* context,
                                          loom_tensor_handle_t* x,
                                          void* user_data,
                                          loom_tensor_handle_t** out_y);

// The Jacobian of `fn` at `x` (a float or double tensor), shaped y.shape +
// x.shape, by reverse mode: one forward pass, one backward pass batched
// over y's m elements. *out_jacobian is a new reference. INVALID_ARGUMENT
// for a NULL argument, an x or y that is not float or double, or a
// function that returns OK without a tensor; the function's errors are
// returned as they are.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_jacrev(loom_context_t* context, loom_tensor_fn_t fn, void* user_data,
            loom_tensor_handle_t* x, loom_tensor_handle_t** out_jacobian);

// The same by forward mode: one forward pass whose tangents are batched
// over x's n elements.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_jacfwd(loom_context_t* context, loom_tensor_fn_t fn, void* user_data,
            loom_tensor_handle_t* x, loom_tensor_handle_t** out_jacobian);

// The Hessian of `fn` at `x`: jacfwd of jacrev (forward over reverse),
// shaped y.shape + x.shape + x.shape (x.shape + x.shape for a scalar y).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_hessian(loom_context_t* context, loom_tensor_fn_t fn, void* user_data,
             loom_tensor_handle_t* x, loom_tensor_handle_t** out_hessian);

LOOM_EXTERN_C_END

#endif  // LOOM_JACOBIAN_H_
