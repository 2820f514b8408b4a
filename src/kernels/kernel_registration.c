// Registration of the built-in op library through the public API.

#include "kernels/kernel_registration.h"

#include <stdio.h>

#include "kernels/shape_fns.h"
#include "registry/kernel_registry_internal.h"

static loom_status_t register_op(loom_op_registry_t* registry,
                                 const loom__builtin_op_t* op) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), op->name, &builder));
  loom_status_t status = loom_ok_status();
  for (int i = 0; !status && i < kBuiltinMaxArgs && op->attrs[i]; ++i) {
    status = loom_op_def_builder_add_attr(builder, op->attrs[i]);
  }
  for (int i = 0; !status && i < kBuiltinMaxArgs && op->inputs[i]; ++i) {
    status = loom_op_def_builder_add_input(builder, op->inputs[i]);
  }
  for (int i = 0; !status && i < kBuiltinMaxArgs && op->outputs[i]; ++i) {
    status = loom_op_def_builder_add_output(builder, op->outputs[i]);
  }
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  loom_op_def_builder_set_is_commutative(builder, op->is_commutative);
  loom_op_def_builder_set_is_stateful(builder, op->is_stateful);
  if (op->shape_fn) {
    loom_op_def_builder_set_shape_fn(builder, op->shape_fn,
                                     (void*)op->shape_fn_data);
  }
  // The shared shape functions have metadata functions: Execute then
  // computes those ops' shapes without a context.
  if (op->shape_fn == loom__shape_fn_broadcast) {
    loom_op_def_builder_set_metadata_fn(builder, loom__metadata_fn_broadcast);
  } else if (op->shape_fn == loom__shape_fn_unchanged) {
    loom_op_def_builder_set_metadata_fn(builder, loom__metadata_fn_unchanged);
  }
  return loom_op_registry_register(registry, builder);
}

loom_status_t loom__register_builtin_ops(const loom__builtin_op_t* ops,
                                         int count) {
  loom_op_registry_t* registry = loom_op_registry_global();
  if (!registry) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "the op registry could not be created");
  }
  for (int i = 0; i < count; ++i) {
    loom_status_t status = register_op(registry, &ops[i]);
    if (status) {
      return loom_status_annotate(status, "registering built-in op '%s'",
                                  ops[i].name);
    }
  }
  return loom_ok_status();
}

static loom_status_t register_kernel(loom_kernel_registry_t* registry,
                                     const loom__builtin_kernel_t* kernel) {
  loom_kernel_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(loom_kernel_builder_create(
      loom_allocator_system(), kernel->op_name, LOOM_DEVICE_CPU, kernel->create,
      kernel->compute, NULL, kernel->destroy, &builder));
  loom_status_t status = loom_ok_status();
  for (int i = 0; !status && kernel->type_attr && i < kBuiltinMaxTypes &&
                  kernel->types[i] != LOOM_DTYPE_INVALID;
       ++i) {
    status = loom_kernel_builder_type_constraint(builder, kernel->type_attr,
                                                 kernel->types[i]);
  }
  for (int i = 0; !status && i < 4 && kernel->host_memory[i]; ++i) {
    status = loom_kernel_builder_host_memory(builder, kernel->host_memory[i]);
  }
  if (kernel->any_rank) loom__kernel_builder_set_any_rank(builder);
  if (status) {
    loom_kernel_builder_destroy(builder);
    return status;
  }
  char name[128];
  if (kernel->name) {
    snprintf(name, sizeof(name), "%s", kernel->name);
  } else {
    snprintf(name, sizeof(name), "%sCpu", kernel->op_name);
  }
  return loom_kernel_registry_register(registry, name, builder);
}

loom_status_t loom__register_builtin_kernels(
    const loom__builtin_kernel_t* kernels, int count) {
  loom_kernel_registry_t* registry = loom_kernel_registry_global();
  if (!registry) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "the kernel registry could not be created");
  }
  for (int i = 0; i < count; ++i) {
    loom_status_t status = register_kernel(registry, &kernels[i]);
    if (status) {
      return loom_status_annotate(status, "registering the kernel of '%s'",
                                  kernels[i].op_name);
    }
  }
  return loom_ok_status();
}
