// Registers the built-in op library once per process.

#include "loom/builtin_ops.h"

#include <pthread.h>

#include "kernels/builtin_families.h"
#include "registry/op_registry_internal.h"

// Once per process: the built-ins register, as plugins do, into the global
// registries, which TensorFlow's registration API makes process-wide.
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static loom_status_t g_result;

typedef loom_status_t (*family_fn_t)(void);

static const family_fn_t kFamilies[] = {
    loom__register_binary_arithmetic, loom__register_comparison_ops,
    loom__register_select_ops,        loom__register_unary_ops,
    loom__register_cast_ops,          loom__register_reduction_ops,
    loom__register_linalg_ops,        loom__register_softmax_ops,
    loom__register_array_ops,         loom__register_nn_ops,
    loom__register_random_ops,        loom__register_resource_ops,
    loom__register_training_ops,      loom__register_check_numerics_ops,
    loom__register_copy_ops,          loom__register_logging_ops,
    loom__register_nn_activation_ops, loom__register_scan_ops,
    loom__register_nd_indexing_ops,   loom__register_top_k_ops,
    loom__register_matrix_ops,        loom__register_unique_ops,
    loom__register_collective_ops,    loom__register_einsum_ops,
};

static void register_all(void) {
  // The first context may be made by a plugin as it loads: its rollback
  // must not take the built-ins with it.
  loom__registration_journal_exempt_begin();
  for (size_t i = 0; i < sizeof(kFamilies) / sizeof(kFamilies[0]); ++i) {
    g_result = kFamilies[i]();
    if (g_result) break;
  }
  loom__registration_journal_exempt_end();
}

loom_status_t loom_builtin_ops_register(void) {
  pthread_once(&g_once, register_all);
  return loom_status_clone(g_result);
}
