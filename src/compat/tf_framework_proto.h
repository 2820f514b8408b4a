// Loom's op and kernel definitions as TensorFlow's serialized OpList
// (op_def.proto) and KernelList (kernel_def.proto): the bytes
// TF_GetOpList, TF_GetAllOpList, TF_GetAllRegisteredKernels and
// TF_GetRegisteredKernelsForOp return. The messages are in
// tf_framework.proto, compiled with protoc-c.

#ifndef LOOM_COMPAT_TF_FRAMEWORK_PROTO_H_
#define LOOM_COMPAT_TF_FRAMEWORK_PROTO_H_

#include <stddef.h>

#include "loom/kernel.h"
#include "loom/op_def.h"

// Serializes ops[0, count) as a tensorflow.OpList. On success *out_data is
// a tagged block from `allocator` (base/tagged_block.h; free it with
// loom__tagged_block_free) holding *out_length bytes.
LOOM_MUST_USE_RESULT loom_status_t loom__tf_encode_op_list(
    loom_allocator_t allocator, const loom_op_def_t* const* ops, size_t count,
    void** out_data, size_t* out_length);

// Serializes the kernels registered in `registry` for `op_name` (NULL: for
// every op), in registration order, as a tensorflow.KernelList, returned
// as loom__tf_encode_op_list returns its bytes.
LOOM_MUST_USE_RESULT loom_status_t loom__tf_encode_kernel_list(
    loom_allocator_t allocator, loom_kernel_registry_t* registry,
    const char* op_name, void** out_data, size_t* out_length);

#endif  // LOOM_COMPAT_TF_FRAMEWORK_PROTO_H_
