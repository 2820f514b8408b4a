// Table-driven registration for the built-in op library: an op is a name,
// TensorFlow spec strings and a shape function; a kernel is an op, compute
// functions and the dtypes its type attr may take. Both go through the
// public registration API (loom/op_def.h, loom/kernel.h) into the global
// registries, exactly as a plugin's would.

#ifndef LOOM_KERNELS_KERNEL_REGISTRATION_H_
#define LOOM_KERNELS_KERNEL_REGISTRATION_H_

#include <stdbool.h>

#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/shape_inference.h"

enum {
  kBuiltinMaxArgs = 12,
  kBuiltinMaxTypes = 24,
};

typedef struct loom__builtin_op_t {
  const char* name;
  // Spec strings in TensorFlow's mini-language; NULL ends each list.
  const char* inputs[kBuiltinMaxArgs];
  const char* outputs[kBuiltinMaxArgs];
  const char* attrs[kBuiltinMaxArgs];
  loom_shape_fn_t shape_fn;   // NULL: outputs of unknown shape
  const void* shape_fn_data;  // the shape function's user_data (read only)
  bool is_commutative;
  bool is_stateful;
} loom__builtin_op_t;

typedef struct loom__builtin_kernel_t {
  const char* op_name;
  const char* name;  // NULL: "<op_name>Cpu"; set when an op has several
  loom_kernel_compute_fn_t compute;
  loom_kernel_create_fn_t create;   // may be NULL
  loom_kernel_delete_fn_t destroy;  // may be NULL
  // The type attr constrained (NULL: none) and the dtypes allowed; the list
  // ends at the first LOOM_DTYPE_INVALID (0).
  const char* type_attr;
  loom_dtype_t types[kBuiltinMaxTypes];
  // Arguments kept in host memory (NULL-terminated).
  const char* host_memory[4];
  // Reads shapes only through loom_shape_dims: takes inputs above
  // LOOM_MAX_RANK.
  bool any_rank;
} loom__builtin_kernel_t;

// Registers ops[0, count); the first failure is returned, naming the op.
loom_status_t loom__register_builtin_ops(const loom__builtin_op_t* ops,
                                         int count);

// Registers kernels[0, count) for device CPU.
loom_status_t loom__register_builtin_kernels(
    const loom__builtin_kernel_t* kernels, int count);

#endif  // LOOM_KERNELS_KERNEL_REGISTRATION_H_
