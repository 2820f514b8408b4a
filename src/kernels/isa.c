// The SIMD level kernels run at.

#include "kernels/isa.h"

#include <stdatomic.h>

#include "base/cpu_features.h"
#include "loom/macros.h"

static loom__isa_level_t detect_level(void) {
  const loom__cpu_features_t* features = loom__cpu_features();
  if (features->avx512f && features->avx512bw && features->avx512vl &&
      features->avx2 && features->fma) {
    return LOOM_ISA_AVX512;
  }
  if (features->avx2 && features->fma) return LOOM_ISA_AVX2;
  return LOOM_ISA_BASELINE;
}

// The level is fixed for the process (LOOM_MAX_ISA is read once): kept
// after the first call, so a tiny kernel does not pay the detection's
// pthread_once on every call.
loom__isa_level_t loom__isa_level(void) {
  static _Atomic int level = -1;
  int known = atomic_load_explicit(&level, memory_order_relaxed);
  if (LOOM_LIKELY(known >= 0)) return (loom__isa_level_t)known;
  loom__isa_level_t detected = detect_level();
  atomic_store_explicit(&level, (int)detected, memory_order_relaxed);
  return detected;
}
