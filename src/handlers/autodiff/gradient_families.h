// The built-in gradient (and JVP) functions, one registration function per
// op family (grad_<family>.c). The registry calls each of them once, before
// the first loom_gradient_find / loom_gradient_register of the process.
//
// A family's function registers its definitions with loom_gradient_register
// and loom_jvp_register (calling them from here does not wait for the
// registration in progress) and returns the first error, if any.

#ifndef LOOM_HANDLERS_AUTODIFF_GRADIENT_FAMILIES_H_
#define LOOM_HANDLERS_AUTODIFF_GRADIENT_FAMILIES_H_

#include "loom/autodiff.h"
#include "loom/status.h"

// One row of a family's table of gradient functions: what it registers as
// a loom_gradient_def_t.
typedef struct loom__gradient_row_t {
  const char* op;
  loom_gradient_fn_t fn;
  const void* data;  // the function's user_data (one formula, several ops)
  uint64_t inputs;   // inputs_used: the forward inputs fn reads
  uint64_t outputs;  // outputs_used: the forward outputs fn reads
  uint32_t flags;    // LOOM_GRADIENT_COLLECTIVE, or 0
} loom__gradient_row_t;

// Registers a family: the gradient functions rows[0, num_rows), then the
// ops not_differentiable[0, num_not_differentiable) as not differentiable
// (a NULL function). Stops at the first error.
LOOM_MUST_USE_RESULT loom_status_t loom__register_gradient_family(
    const loom__gradient_row_t* rows, size_t num_rows,
    const char* const* not_differentiable, size_t num_not_differentiable);

#define LOOM__COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

// loom__register_gradient_family of two arrays.
#define LOOM__REGISTER_GRADIENT_FAMILY(rows, not_differentiable) \
  loom__register_gradient_family((rows), LOOM__COUNT_OF(rows),   \
                                 (not_differentiable),           \
                                 LOOM__COUNT_OF(not_differentiable))

// grad_core.c: what an MLP or CNN training step needs (arithmetic with
// broadcasting, MatMul, BiasAdd, Relu, reductions, Reshape, cross-entropy,
// Conv2D, MaxPool, variables, casts, copies) and the ops marked not
// differentiable (shapes, comparisons, indices, random ops, handles).
loom_status_t loom__register_core_gradients(void);
// grad_math.c: the other element-wise and reduction ops.
loom_status_t loom__register_math_gradients(void);
// grad_array.c: shape, slicing, gathering and layout ops.
loom_status_t loom__register_array_gradients(void);
// grad_nn.c: the other neural-network ops.
loom_status_t loom__register_nn_gradients(void);
// grad_indexing.c: GatherNd, ScatterNd, TensorScatterUpdate, TopKV2 and
// the matrix band and diagonal ops.
loom_status_t loom__register_indexing_gradients(void);
// grad_scan.c: Cumsum and Cumprod.
loom_status_t loom__register_scan_gradients(void);
// grad_einsum.c: Einsum.
loom_status_t loom__register_einsum_gradients(void);
// grad_training.c: the fused optimizer updates (not differentiable).
loom_status_t loom__register_training_gradients(void);
// grad_collective.c: the collectives (all-reduce sum and mean, gather,
// reduce-scatter, all-to-all).
loom_status_t loom__register_collective_gradients(void);
// jvp_<family>.c: the built-in JVP functions (forward mode runs them).
loom_status_t loom__register_linear_jvps(void);
loom_status_t loom__register_elementwise_jvps(void);
loom_status_t loom__register_nn_jvps(void);
loom_status_t loom__register_pool_jvps(void);
loom_status_t loom__register_batch_norm_jvps(void);

// Every family, in the order the registry runs them (core first: a family
// registering an op core already has gets ALREADY_EXISTS).
#define LOOM_GRADIENT_FAMILIES(X)        \
  X(loom__register_core_gradients)       \
  X(loom__register_math_gradients)       \
  X(loom__register_array_gradients)      \
  X(loom__register_nn_gradients)         \
  X(loom__register_indexing_gradients)   \
  X(loom__register_scan_gradients)       \
  X(loom__register_einsum_gradients)     \
  X(loom__register_training_gradients)   \
  X(loom__register_collective_gradients) \
  X(loom__register_linear_jvps)          \
  X(loom__register_elementwise_jvps)     \
  X(loom__register_nn_jvps)              \
  X(loom__register_pool_jvps)            \
  X(loom__register_batch_norm_jvps)

// A family of a layer above this one (the trace layer's control flow
// derivatives), run after the built-in ones. Installed by a constructor,
// before any look-up; nothing is allocated until the registry first runs
// its families (a library loaded and unloaded without use keeps no
// memory). At most kLateFamilies.
enum { kLateFamilies = 4 };
void loom__gradient_add_late_family(loom_status_t (*family)(void));

#endif  // LOOM_HANDLERS_AUTODIFF_GRADIENT_FAMILIES_H_
