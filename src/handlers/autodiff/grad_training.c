// The fused optimizer updates (src/kernels/training_ops.c) are not
// differentiable, as in TensorFlow: they have no outputs and change
// variables, so a tape records nothing for them.

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

static const char* const kNotDifferentiable[] = {
    "ResourceApplyGradientDescent",
    "ResourceApplyMomentum",
    "ResourceApplyKerasMomentum",
    "ResourceApplyAdam",
};

loom_status_t loom__register_training_gradients(void) {
  return loom__grad_register_not_differentiable(
      kNotDifferentiable,
      (int32_t)(sizeof(kNotDifferentiable) / sizeof(kNotDifferentiable[0])));
}
