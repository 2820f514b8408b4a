// Kernel definitions as the registry stores them, shared with the kernel
// context and runner.

#ifndef LOOM_REGISTRY_KERNEL_REGISTRY_INTERNAL_H_
#define LOOM_REGISTRY_KERNEL_REGISTRY_INTERNAL_H_

#include <stdatomic.h>

#include "base/arena.h"
#include "loom/kernel.h"

typedef struct loom__type_constraint_t {
  const char* attr_name;
  loom_dtype_t types[32];
  int32_t num_types;
} loom__type_constraint_t;

struct loom_kernel_def_t {
  loom_allocator_t allocator;  // of the arrays below (the builder's)
  uint64_t id;
  const char* name;
  const char* op_name;
  const char* device_type;
  const char* label;  // "" when none
  int32_t priority;
  loom_kernel_create_fn_t create;
  loom_kernel_compute_fn_t compute;
  loom_kernel_compute_async_fn_t compute_async;
  loom_kernel_delete_fn_t destroy;
  loom__type_constraint_t* constraints;
  int32_t num_constraints;
  const char** host_memory_args;
  int32_t num_host_memory_args;
  loom__arena_t arena;
  // The kernel reads shapes only through loom_shape_dims (or TensorFlow's
  // TF_Dim): it takes inputs above LOOM_MAX_RANK, which the cpu handler
  // refuses for every other kernel.
  bool any_rank;
  bool registered;
  // Whether a look-up returned the definition: then its holder (a cached
  // kernel specialisation) may still use it, and it stays allocated after
  // it is unregistered. One never handed out is freed when it is.
  atomic_bool handed_out;
  struct loom_kernel_def_t* next;         // all kernels, newest first
  struct loom_kernel_def_t* next_for_op;  // the same op's kernels
};

struct loom_kernel_builder_t {
  loom_allocator_t allocator;
  loom_kernel_def_t def;
  int32_t constraints_capacity;
  int32_t host_memory_capacity;
};

// Removes a kernel registered under `id` (plugin rollback). A definition a
// look-up returned stays allocated until the registry is destroyed; one
// never handed out is freed.
void loom__kernel_registry_unregister(loom_kernel_registry_t* registry,
                                      uint64_t id);

// Calls `visit` on every registered kernel of `op_name` (NULL: of every
// op), newest first, with the registry's read lock held: `visit` must not
// call the registry, and may use `def` only until it returns. Stops at and
// returns the first error.
LOOM_MUST_USE_RESULT loom_status_t loom__kernel_registry_visit(
    loom_kernel_registry_t* registry, const char* op_name,
    loom_status_t (*visit)(const loom_kernel_def_t* def, void* user_data),
    void* user_data);

// Marks the builder's kernel as taking inputs of any rank (any_rank).
void loom__kernel_builder_set_any_rank(loom_kernel_builder_t* builder);

#endif  // LOOM_REGISTRY_KERNEL_REGISTRY_INTERNAL_H_
