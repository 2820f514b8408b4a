// What the CPU Loom runs on can execute, detected once at run time.
//
// Loom's default build targets baseline x86-64; kernels that have wider SIMD
// variants pick one through these flags. LOOM_MAX_ISA (sse2, avx, avx2,
// avx512) caps what is reported, to test the narrower paths on a wide
// machine or to keep away from instructions a tool cannot decode.

#ifndef LOOM_BASE_CPU_FEATURES_H_
#define LOOM_BASE_CPU_FEATURES_H_

#include <stdbool.h>

typedef struct loom__cpu_features_t {
  bool sse4_2;
  bool avx;
  bool avx2;
  bool fma;
  bool f16c;
  bool avx512f;
  bool avx512bw;
  bool avx512vl;
} loom__cpu_features_t;

// Detected on first use; thread-safe.
const loom__cpu_features_t* loom__cpu_features(void);

// The features a given LOOM_MAX_ISA value allows out of `detected`; an
// unknown or NULL cap allows everything. Exposed for tests.
loom__cpu_features_t loom__cpu_features_capped(loom__cpu_features_t detected,
                                               const char* max_isa);

#endif  // LOOM_BASE_CPU_FEATURES_H_
