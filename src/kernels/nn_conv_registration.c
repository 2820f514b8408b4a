// The ops and kernels of the convolution group: Conv2D,
// Conv2DBackpropInput and Conv2DBackpropFilter.

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/matmul.h"
#include "kernels/nn_conv.h"

#define CONV_ATTRS                                       \
  "strides: list(int)", "use_cudnn_on_gpu: bool = true", \
      "padding: {'SAME', 'VALID', 'EXPLICIT'}",          \
      "explicit_paddings: list(int) = []",               \
      "data_format: {'NHWC', 'NCHW'} = 'NHWC'",          \
      "dilations: list(int) = [1, 1, 1, 1]"

static const loom__builtin_op_t kOps[] = {
    {.name = "Conv2D",
     .inputs = {"input: T", "filter: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double, int32}", CONV_ATTRS},
     .shape_fn = loom__nn_conv2d_shape_fn},
    {.name = "Conv2DBackpropInput",
     .inputs = {"input_sizes: int32", "filter: T", "out_backprop: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double, int32}", CONV_ATTRS},
     .shape_fn = loom__nn_conv_backprop_shape_fn},
    {.name = "Conv2DBackpropFilter",
     .inputs = {"input: T", "filter_sizes: int32", "out_backprop: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double}", CONV_ATTRS},
     .shape_fn = loom__nn_conv_backprop_shape_fn},
};

#define CONV_TYPES \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Conv2D",
     .compute = loom__nn_conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES}},
    {.op_name = "Conv2DBackpropInput",
     .compute = loom__nn_conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES},
     .host_memory = {"input_sizes"}},
    {.op_name = "Conv2DBackpropFilter",
     .compute = loom__nn_conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES},
     .host_memory = {"filter_sizes"}},
};

loom_status_t loom__register_nn_conv_ops(void) {
  loom__blas_single_threaded();
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
