// The variables of the variable ops (resource.c): their interface for
// kernels that update them in place.

#ifndef LOOM_KERNELS_RESOURCE_H_
#define LOOM_KERNELS_RESOURCE_H_

#include "loom/kernel.h"

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

#endif  // LOOM_KERNELS_RESOURCE_H_
