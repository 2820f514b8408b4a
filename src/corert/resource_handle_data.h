// Resources' handle data (loom/shape_inference.h) read from resource
// tensors, for the layers above the kernels that infer shapes statically:
// a trace capturing a variable's handle, a function body's shapes.

#ifndef LOOM_CORERT_RESOURCE_HANDLE_DATA_H_
#define LOOM_CORERT_RESOURCE_HANDLE_DATA_H_

#include <stdbool.h>

#include "loom/shape_inference.h"
#include "loom/tensor.h"

// The handle data of `tensor` when it is a variable's resource tensor (the
// dtype and shape its VarHandleOp declared); false otherwise (NULL, another
// dtype, a resource of another kind).
bool loom__resource_handle_data(const loom_tensor_t* tensor,
                                loom_handle_data_t* out_data);

#endif  // LOOM_CORERT_RESOURCE_HANDLE_DATA_H_
