// Run-time SIMD selection for the kernel library.
//
// A kernel's inner loops are written once, in plain C the compiler
// vectorises, in a file compiled three times (src/CMakeLists.txt:
// loom_add_isa_variants): for baseline x86-64, for AVX2+FMA and for
// AVX-512. Each build names its functions with LOOM_ISA_FN(name) and fills
// a table; the kernel picks the table of the widest level the CPU offers
// (loom/cpu_features, capped by LOOM_MAX_ISA), so the default build runs
// everywhere — under valgrind too — and uses what the machine has.

#ifndef LOOM_KERNELS_ISA_H_
#define LOOM_KERNELS_ISA_H_

typedef enum loom__isa_level_t {
  LOOM_ISA_BASELINE = 0,
  LOOM_ISA_AVX2 = 1,
  LOOM_ISA_AVX512 = 2,
  LOOM_ISA_LEVELS = 3,
} loom__isa_level_t;

// The widest level this CPU runs (detected once).
loom__isa_level_t loom__isa_level(void);

#define LOOM_ISA_CONCAT2(a, b) a##_##b
#define LOOM_ISA_CONCAT(a, b) LOOM_ISA_CONCAT2(a, b)
// Inside a variant file: `name` suffixed with the variant (add_f32_avx2).
#define LOOM_ISA_FN(name) LOOM_ISA_CONCAT(name, LOOM_ISA)

#endif  // LOOM_KERNELS_ISA_H_
