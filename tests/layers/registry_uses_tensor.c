// Compiled by the test layer_includes with the registry layer's include
// path: the registry may use the tensor and host layers.

#include "host/async_value_internal.h"
#include "registry/op_def_internal.h"
#include "tensor/tensor_internal.h"
