// TensorFlow's serialized FunctionDef as a Loom function
// (tf_function_def.c).

#ifndef LOOM_COMPAT_TF_FUNCTION_DEF_H_
#define LOOM_COMPAT_TF_FUNCTION_DEF_H_

#include <stddef.h>

#include "loom/function.h"

// Decodes data[0, size) (a tensorflow.FunctionDef) into a new function.
// INVALID_ARGUMENT for bytes that are not a FunctionDef and for what
// loom_function_builder_* refuse (naming the function and the node);
// UNIMPLEMENTED for list arguments and attr values Loom does not decode.
LOOM_MUST_USE_RESULT loom_status_t loom__tf_function_from_def(
    const void* data, size_t size, loom_function_t** out_function);

#endif  // LOOM_COMPAT_TF_FUNCTION_DEF_H_
