// Helpers shared by the vmap tests: making a vmap, entering and taking out
// tensors, random values.

#ifndef LOOM_TESTS_HANDLERS_VMAP_TEST_UTIL_H_
#define LOOM_TESTS_HANDLERS_VMAP_TEST_UTIL_H_

#include "autodiff_test_util.h"
#include "loom/vmap.h"

#define F LOOM_DTYPE_FLOAT
#define D LOOM_DTYPE_DOUBLE
#define I LOOM_DTYPE_INT32
#define U LOOM_VMAP_UNBATCHED

static inline loom_op_handler_t* new_vmap(int64_t batch_size) {
  loom_op_handler_t* vmap = NULL;
  LOOM_ASSERT_OK(loom_vmap_create(g_ctx, batch_size, &vmap));
  return vmap;
}

static inline handle_t* vin(loom_op_handler_t* vmap, handle_t* x,
                            int64_t axis) {
  handle_t* out = NULL;
  LOOM_ASSERT_OK(loom_vmap_in(vmap, x, axis, &out));
  return out;
}

static inline handle_t* vout(loom_op_handler_t* vmap, handle_t* y,
                             int64_t axis) {
  handle_t* out = NULL;
  LOOM_ASSERT_OK(loom_vmap_out(vmap, y, axis, &out));
  return out;
}

static inline handle_t* un_op(const char* name, handle_t* a) {
  return op1(name, LOOM_GRAD_INPUTS(a), LOOM_GRAD_NO_ATTRS);
}

static uint64_t g_seed = 77;
static inline double uniform(double lo, double hi) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  double u = (double)(g_seed >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}

// The sum of every op's fallbacks on `vmap` (the registered ops').
static inline int64_t total_fallbacks(loom_op_handler_t* vmap) {
  loom_op_registry_t* registry = loom_op_registry_global();
  size_t count = loom_op_registry_list(registry, NULL, 0);
  const char** names = (const char**)calloc(count, sizeof(*names));
  assert_non_null(names);
  count = loom_op_registry_list(registry, names, count);
  int64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    int64_t n = loom_vmap_fallback_count(vmap, names[i]);
    if (n) print_message("fallback: %s x %lld\n", names[i], (long long)n);
    total += n;
  }
  free(names);
  return total;
}

#endif  // LOOM_TESTS_HANDLERS_VMAP_TEST_UTIL_H_
