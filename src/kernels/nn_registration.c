// The neural-network family's registration: one call per group, each
// group's ops and kernels in nn_<group>_registration.c.

#include "kernels/builtin_families.h"
#include "kernels/nn_internal.h"

loom_status_t loom__register_nn_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_nn_conv_ops());
  LOOM_RETURN_IF_ERROR(loom__register_nn_pool_ops());
  return loom__register_nn_batchnorm_ops();
}
