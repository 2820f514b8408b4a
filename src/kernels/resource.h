// The variables of the variable ops (resource.c): their interface for
// kernels that update them in place, and for TensorFlow's experimental
// kernel API (src/compat/kernels_experimental.c).

#ifndef LOOM_KERNELS_RESOURCE_H_
#define LOOM_KERNELS_RESOURCE_H_

#include "loom/kernel.h"

// The variable a resource tensor refers to, as its handle data: the dtype
// and shape its VarHandleOp declared. False for a tensor that is not a
// variable's resource tensor.
bool loom__resource_tensor_handle_data(const loom_tensor_t* tensor,
                                       loom_tensor_metadata_t* out_data);

// For kernels that update variables in place (training_ops.c): the
// variable a resource input refers to, its lock, and its value.
typedef struct resource_var_t loom__resource_var_t;

// The variable input `index` of the kernel refers to (borrowed for the
// call); INVALID_ARGUMENT naming the op and input when it is not one.
loom_status_t loom__resource_input(loom_kernel_context_t* ctx, int32_t index,
                                   loom__resource_var_t** out_var);

// Locks (unlocks) the distinct variables of vars[0, count), in one global
// order, so that kernels updating several at once never deadlock; a
// variable may appear more than once.
void loom__resource_lock_all(loom__resource_var_t* const* vars, int32_t count);
void loom__resource_unlock_all(loom__resource_var_t* const* vars,
                               int32_t count);

// With `var` locked: its value (borrowed while the lock is held), checked
// for an update as `dtype` through the input named `arg`:
// FAILED_PRECONDITION when the variable was destroyed or never assigned,
// INVALID_ARGUMENT when it holds another dtype.
loom_status_t loom__resource_value(const loom__resource_var_t* var,
                                   loom_dtype_t dtype, const char* arg,
                                   const loom_tensor_t** out_value);

// With `var` locked and its value checked: makes the value a dense tensor
// that nothing else holds, so it may be written in place; a value someone
// holds (a read) is copied first, so that it never changes under them
// (copy-on-write). The tensor is borrowed while the lock is held.
loom_status_t loom__resource_writable_value(loom__resource_var_t* var,
                                            loom_allocator_t allocator,
                                            loom_tensor_t** out_value);

// Keeps `var` alive past the kernel call that found it (a lock holder that
// outlives the input tensor); release drops that reference.
void loom__resource_retain(loom__resource_var_t* var);
void loom__resource_release(loom__resource_var_t* var);

// Locks (unlocks) one variable. Callers locking several take them in
// loom__resource_lock_all's order: by increasing address.
void loom__resource_lock(loom__resource_var_t* var);
void loom__resource_unlock(loom__resource_var_t* var);

// The dtype the variable was declared with (VarHandleOp's dtype).
loom_dtype_t loom__resource_dtype(const loom__resource_var_t* var);

// With `var` locked: makes `value` (a new reference is taken) the
// variable's value, as TensorFlow's TF_AssignVariable does: FAILED_
// PRECONDITION when the variable was destroyed, INVALID_ARGUMENT when
// `value` has another dtype or, with validate_shape, a shape incompatible
// with the declared one or different from the value already assigned.
loom_status_t loom__resource_assign(loom__resource_var_t* var,
                                    loom_tensor_t* value, bool validate_shape);

// With `var` locked and its value checked: replaces the value by `value`
// (a new reference is taken; same dtype and shape), for callers that made
// the writable copy themselves.
void loom__resource_replace_value(loom__resource_var_t* var,
                                  loom_tensor_t* value);

#endif  // LOOM_KERNELS_RESOURCE_H_
