// The ops and kernels of fused batch normalisation: FusedBatchNormV3 and
// FusedBatchNormGradV3.

#include "kernels/kernel_registration.h"
#include "kernels/nn_internal.h"

static const loom__builtin_op_t kOps[] = {
    {.name = "FusedBatchNormV3",
     .inputs = {"x: T", "scale: U", "offset: U", "mean: U", "variance: U"},
     .outputs = {"y: T", "batch_mean: U", "batch_variance: U",
                 "reserve_space_1: U", "reserve_space_2: U",
                 "reserve_space_3: U"},
     .attrs = {"T: {half, bfloat16, float, double}",
               "U: {bfloat16, float, double}", "epsilon: float = 0.0001",
               "exponential_avg_factor: float = 1.0",
               "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'",
               "is_training: bool = true"},
     .shape_fn = loom__nn_batchnorm_shape_fn},
    {.name = "FusedBatchNormGradV3",
     .inputs = {"y_backprop: T", "x: T", "scale: float", "reserve_space_1: U",
                "reserve_space_2: U", "reserve_space_3: U"},
     .outputs = {"x_backprop: T", "scale_backprop: U", "offset_backprop: U",
                 "reserve_space_4: U", "reserve_space_5: U"},
     .attrs = {"T: {half, bfloat16, float}", "U: {float}",
               "epsilon: float = 0.0001",
               "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'",
               "is_training: bool = true"},
     .shape_fn = loom__nn_batchnorm_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "FusedBatchNormV3",
     .compute = loom__nn_batchnorm_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF,
               LOOM_DTYPE_BFLOAT16}},
    {.op_name = "FusedBatchNormGradV3",
     .compute = loom__nn_batchnorm_grad_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16}},
};

loom_status_t loom__register_nn_batchnorm_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
