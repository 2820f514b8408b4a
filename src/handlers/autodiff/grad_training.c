// The fused optimizer updates (src/kernels/training_ops.c) are not
// differentiable, as in TensorFlow: they have no outputs and change
// variables, so a tape records nothing for them.

#include "handlers/autodiff/gradient_families.h"

static const char* const kNotDifferentiable[] = {
    "ResourceApplyGradientDescent",
    "ResourceApplyMomentum",
    "ResourceApplyKerasMomentum",
    "ResourceApplyAdam",
};

loom_status_t loom__register_training_gradients(void) {
  return loom__register_gradient_family(NULL, 0, kNotDifferentiable,
                                        LOOM__COUNT_OF(kNotDifferentiable));
}
