// TensorFlow's experimental kernel C API (tensorflow/c/kernels_experimental.h)
// on Loom: the calls with which C-API kernels (TensorFlow's own training
// kernels, pluggable-device plugins) read, lock and update resource
// variables. Loom has resource variables (VarHandleOp, a DT_RESOURCE input
// holds the handle) but no reference variables (TF1 `Variable` ops) and no
// DT_VARIANT tensors: the calls for those report UNIMPLEMENTED (see
// docs/compat.md for the list).
//
// Errors are reported in `status` and, as TensorFlow's OP_REQUIRES do,
// also fail the kernel context: a kernel that returns on the error fails
// its op with that message.
//
// copyFunc, the kernel's copy callback, copies `source` into `dest` (same
// dtype and shape). As in TensorFlow, the callbacks own the tensors they
// are given and free them with TF_DeleteTensor.

#ifndef TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_
#define TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api_macros.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

// The locks TF_MaybeLockVariableInputMutexesInOrder took; freed by
// TF_ReleaseVariableInputLockHolder.
typedef struct TF_VariableInputLockHolder TF_VariableInputLockHolder;

// Assigns input `value_index` to the variable of resource input
// `input_index`. The variable keeps the value tensor (no copy). Fails with
// INVALID_ARGUMENT when the value's dtype is not the variable's or, with
// validate_shape, when the variable is initialized with another shape
// ("Trying to assign to variable with tensor with wrong shape. Expected
// [2] got [3]") or its declared shape does not admit the value's.
TF_CAPI_EXPORT extern void TF_AssignVariable(
    TF_OpKernelContext* ctx, int input_index, int value_index,
    bool validate_shape,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    TF_Status* status);

// Assignment to a reference variable: UNIMPLEMENTED, Loom has none.
TF_CAPI_EXPORT extern void TF_AssignRefVariable(
    TF_OpKernelContext* ctx, int input_ref_index, int output_ref_index,
    int value_index, bool use_locking, bool validate_shape,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    TF_Status* status);

// Updates the variable of resource input `input_index` with input
// `value_index` under the variable's lock: makes the variable's value
// writable (a value someone else holds is first copied with copyFunc) and
// calls updateFunc(ctx, variable tensor, value tensor, Op), which writes
// the variable tensor in place and frees both tensors with TF_DeleteTensor.
// The shapes must be equal ("Cannot update variable with shape [2] using a
// Tensor with shape [3], shapes must be equal."). isVariantType must be 0.
TF_CAPI_EXPORT extern void TF_AssignUpdateVariable(
    TF_OpKernelContext* ctx, int input_index, int value_index, int Op,
    int isVariantType,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    void (*updateFunc)(TF_OpKernelContext* ctx, TF_Tensor* tensor,
                       TF_Tensor* value, int Op),
    TF_Status* status);

// Locks the variables of the resource inputs among inputs[0, len), each
// once, in a fixed order (the one Loom's own training kernels use, so that
// kernels updating several variables never deadlock), and returns the
// holder in *lockHolder. Inputs that are not resources have nothing to
// lock. Loom's variable lock is exclusive: do_lock = false (TensorFlow's
// shared lock) locks exclusively too. `sparse` and copyFunc are accepted
// and unused (Loom has no copy-on-read mode).
TF_CAPI_EXPORT extern void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext* ctx, bool do_lock, bool sparse, const int* const inputs,
    size_t len,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    TF_VariableInputLockHolder** lockHolder, TF_Status* status);

// The tensor of input `input`: for a resource input, the variable's value,
// made writable first (a value someone else holds, a read, is copied with
// copyFunc, or with memcpy when copyFunc is NULL) so that the kernel may
// update it in place; lock_held says whether the caller holds the
// variable's lock (otherwise it is taken for the call). For other inputs,
// the input tensor. The caller owns *out (TF_DeleteTensor).
// FAILED_PRECONDITION for a variable never assigned or destroyed.
TF_CAPI_EXPORT extern void TF_GetInputTensorFromVariable(
    TF_OpKernelContext* ctx, int input, bool lock_held, bool isVariantType,
    bool sparse,
    void (*copyFunc)(TF_OpKernelContext* ctx, TF_Tensor* source,
                     TF_Tensor* dest),
    TF_Tensor** out, TF_Status* status);

// A no-op for a resource input, as in TensorFlow; a reference input does
// not exist in Loom: fails the kernel context with UNIMPLEMENTED.
TF_CAPI_EXPORT extern void TF_OpKernelContext_ForwardRefInputToRefOutput(
    TF_OpKernelContext* ctx, int32_t input_index, int32_t output_index);

// Unlocks and frees what TF_MaybeLockVariableInputMutexesInOrder returned
// (NULL is ignored).
TF_CAPI_EXPORT extern void TF_ReleaseVariableInputLockHolder(
    TF_VariableInputLockHolder* lockHolder);

// The input named `inputName` in the op definition (caller owns *tensor):
// INVALID_ARGUMENT "Unknown input name: x" for a name the op does not
// have, and for a list input.
TF_CAPI_EXPORT extern void TF_GetInputByName(TF_OpKernelContext* ctx,
                                             const char* inputName,
                                             TF_Tensor** tensor,
                                             TF_Status* status);

// Reads the shape attr `attr_name` into dims[0, num_dims): the shape must
// be fully defined and of rank num_dims ("Expected rank is 2 but actual
// rank is 3" otherwise).
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensorShape(
    TF_OpKernelConstruction* ctx, const char* attr_name, int64_t* dims,
    size_t num_dims, TF_Status* status);

// Whether input i is a reference input: always false in Loom (OUT_OF_RANGE
// for an index outside the inputs).
TF_CAPI_EXPORT extern bool TF_IsRefInput(TF_OpKernelContext* ctx, int i,
                                         TF_Status* status);

// AddN and ZerosLike over DT_VARIANT tensors: UNIMPLEMENTED, Loom has no
// DT_VARIANT tensors.
TF_CAPI_EXPORT extern void TF_AddNVariant(
    TF_OpKernelContext* ctx,
    void (*binary_add_func)(TF_OpKernelContext* ctx, TF_Tensor* a, TF_Tensor* b,
                            TF_Tensor* out),
    TF_Status* status);

TF_CAPI_EXPORT extern void TF_ZerosLikeVariant(
    TF_OpKernelContext* ctx,
    void (*zeros_like_func)(TF_OpKernelContext* ctx, TF_Tensor* input,
                            TF_Tensor* out),
    TF_Status* status);

// Declared here by TensorFlow; its functions are in
// tensorflow/c/experimental/next_pluggable_device/c_api.h.
typedef struct TF_CoordinationServiceAgent TF_CoordinationServiceAgent;

#ifdef __cplusplus
} /* end extern "C" */
#endif

#endif  // TENSORFLOW_C_KERNELS_EXPERIMENTAL_H_
