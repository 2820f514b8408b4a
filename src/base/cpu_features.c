// Run-time CPU feature detection (GCC/Clang's __builtin_cpu_supports).

#include "base/cpu_features.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

loom__cpu_features_t loom__cpu_features_capped(loom__cpu_features_t detected,
                                               const char* max_isa) {
  if (!max_isa) return detected;
  loom__cpu_features_t capped = detected;
  if (strcmp(max_isa, "avx512") == 0) return detected;
  capped.avx512f = capped.avx512bw = capped.avx512vl = false;
  if (strcmp(max_isa, "avx2") == 0) return capped;
  capped.avx2 = capped.fma = false;
  if (strcmp(max_isa, "avx") == 0) return capped;
  capped.avx = capped.f16c = false;
  if (strcmp(max_isa, "sse4.2") == 0 || strcmp(max_isa, "sse4_2") == 0) {
    return capped;
  }
  if (strcmp(max_isa, "sse2") == 0) {
    capped.sse4_2 = false;
    return capped;
  }
  return detected;  // unknown value: no cap
}

// The machine's, probed once per process.
static loom__cpu_features_t g_features;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void detect(void) {
  loom__cpu_features_t detected;
  memset(&detected, 0, sizeof(detected));
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  detected.sse4_2 = __builtin_cpu_supports("sse4.2");
  detected.avx = __builtin_cpu_supports("avx");
  detected.avx2 = __builtin_cpu_supports("avx2");
  detected.fma = __builtin_cpu_supports("fma");
  detected.avx512f = __builtin_cpu_supports("avx512f");
  detected.avx512bw = __builtin_cpu_supports("avx512bw");
  detected.avx512vl = __builtin_cpu_supports("avx512vl");
  // F16C is not in GCC 12's list; AVX2 machines have it.
  detected.f16c = detected.avx2;
#endif
  g_features = loom__cpu_features_capped(detected, getenv("LOOM_MAX_ISA"));
}

const loom__cpu_features_t* loom__cpu_features(void) {
  pthread_once(&g_once, detect);
  return &g_features;
}
