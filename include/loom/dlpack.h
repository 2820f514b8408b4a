// DLPack exchange of host tensors, without copies.
//
// A managed tensor is DLPack's DLManagedTensor in its unversioned (pre-1.0)
// ABI, the one NumPy's and PyTorch's from_dlpack and __dlpack__ exchange.
// It is passed as void*, as TensorFlow's C API passes it, so that neither
// this header nor its users need DLPack's header.

#ifndef LOOM_DLPACK_H_
#define LOOM_DLPACK_H_

#include "loom/macros.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

// DLPack's device type of host memory (kDLCPU): every tensor Loom exports
// is on it, device id 0.
#define LOOM_DLPACK_DEVICE_CPU 1

// Exports `tensor`, a dense or scalar host tensor of a dtype DLPack has a
// code for, as a new managed tensor sharing its memory: compact row-major,
// with its shape and strides, holding a reference to the tensor until its
// deleter runs. INVALID_ARGUMENT for other tensors and dtypes.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_to_dlpack(loom_tensor_t* tensor, void** out_managed);

// Calls a managed tensor's deleter; nothing for NULL or no deleter.
LOOM_API void loom_dlpack_delete(void* managed);

// How an imported tensor gives its managed tensor back: called once, when
// the last reference to the memory goes, on whichever thread drops it.
typedef void (*loom_dlpack_release_fn_t)(void* managed);

// A dense host tensor over a managed tensor's memory, without a copy. The
// memory must be on the CPU and compact row-major (strides NULL or those of
// the shape; dims of size 1 may have any stride), of a dtype Loom has, one
// lane. On success the tensor owns `managed` and hands it back through
// `release` (NULL: loom_dlpack_delete); on failure the caller keeps it.
// Loom treats the memory as immutable.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tensor_from_dlpack(void* managed, loom_dlpack_release_fn_t release,
                        loom_tensor_t** out_tensor);

LOOM_EXTERN_C_END

#endif  // LOOM_DLPACK_H_
