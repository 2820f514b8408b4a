// The ops and kernels of the pooling group: MaxPool, AvgPool, MaxPoolGrad,
// MaxPoolGradGrad and AvgPoolGrad.

#include "kernels/kernel_registration.h"
#include "kernels/nn_internal.h"

static const loom__builtin_op_t kOps[] = {
    {.name = "MaxPool",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double, int32, int64, uint8, "
               "int16, int8, uint16, qint8} = DT_FLOAT",
               "ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID', 'EXPLICIT'}",
               "explicit_paddings: list(int) = []",
               "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"},
     .shape_fn = loom__nn_pool_shape_fn},
    {.name = "AvgPool",
     .inputs = {"value: T"},
     .outputs = {"output: T"},
     .attrs = {"ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID'}",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
               "T: {half, bfloat16, float, double}"},
     .shape_fn = loom__nn_pool_shape_fn},
    {.name = "MaxPoolGrad",
     .inputs = {"orig_input: T", "orig_output: T", "grad: T"},
     .outputs = {"output: T"},
     .attrs = {"ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID', 'EXPLICIT'}",
               "explicit_paddings: list(int) = []",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
               "T: realnumbertype = DT_FLOAT"},
     .shape_fn = loom__nn_max_pool_grad_shape_fn},
    {.name = "MaxPoolGradGrad",
     .inputs = {"orig_input: T", "orig_output: T", "grad: T"},
     .outputs = {"output: T"},
     .attrs = {"ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID'}",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "T: realnumbertype"},
     .shape_fn = loom__nn_max_pool_grad_grad_shape_fn},
    {.name = "AvgPoolGrad",
     .inputs = {"orig_input_shape: int32", "grad: T"},
     .outputs = {"output: T"},
     .attrs = {"ksize: list(int) >= 4", "strides: list(int) >= 4",
               "padding: {'SAME', 'VALID'}",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
               "T: {half, bfloat16, float, double}"},
     .shape_fn = loom__nn_avg_pool_grad_shape_fn},
};

#define FLOAT_TYPES \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "MaxPool",
     .compute = loom__nn_pool_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES, LOOM_DTYPE_INT8, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT16,
               LOOM_DTYPE_UINT16, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64}},
    {.op_name = "AvgPool",
     .compute = loom__nn_pool_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "MaxPoolGrad",
     .compute = loom__nn_pool_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "MaxPoolGradGrad",
     .compute = loom__nn_pool_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES}},
    {.op_name = "AvgPoolGrad",
     .compute = loom__nn_pool_compute,
     .type_attr = "T",
     .types = {FLOAT_TYPES},
     .host_memory = {"orig_input_shape"}},
};

loom_status_t loom__register_nn_pool_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
