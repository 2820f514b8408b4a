// The copies of TensorFlow's op-handler design as ops: CopyOn moves a
// tensor onto a handler, CopyOff off it; CopyOnGrad and CopyOffGrad are
// their gradients (and each other's: the copies are linear). A
// transformation handler implements them in its execute hook; on the CPU
// device they are the identity (host tensors are shared, not copied).

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"

static void identity_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_status_t status =
      loom_kernel_context_set_output(ctx, 0, loom_kernel_context_input(ctx, 0));
  if (status) loom_kernel_context_fail(ctx, status);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "CopyOn",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "CopyOnGrad",
     .inputs = {"dcopied: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "original_device: string = ''"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "CopyOff",
     .inputs = {"handler_tensor: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "new_device: string = ''"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "CopyOffGrad",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = loom__shape_fn_unchanged},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "CopyOn", .compute = identity_compute, .any_rank = true},
    {.op_name = "CopyOnGrad", .compute = identity_compute, .any_rank = true},
    {.op_name = "CopyOff", .compute = identity_compute, .any_rank = true},
    {.op_name = "CopyOffGrad", .compute = identity_compute, .any_rank = true},
};

loom_status_t loom__register_copy_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_builtin_ops(kOps, 4));
  return loom__register_builtin_kernels(kKernels, 4);
}
