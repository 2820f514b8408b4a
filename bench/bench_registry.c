// Registry costs: looking up an op definition by name and choosing the
// kernel for an op and dtype among many registered kernels. Prints one
// "name median unit" line per figure.

#include <stdio.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

enum { kOps = 200 };

static void compute_nothing(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  (void)ctx;
}

typedef struct lookup_bench_t {
  loom_op_registry_t* ops;
  loom_kernel_registry_t* kernels;
  const loom_op_def_t* op;
  loom_op_attrs_t attrs;
  char names[kOps][32];
} lookup_bench_t;

static double measure_op_lookup(void* arg, int64_t iterations) {
  lookup_bench_t* bench = arg;
  const loom_op_def_t* found = NULL;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    found = loom_op_registry_find(bench->ops, bench->names[i % kOps]);
  }
  double elapsed = bench_now_ns() - start;
  if (!found) exit(2);
  return elapsed;
}

static double measure_kernel_lookup(void* arg, int64_t iterations) {
  lookup_bench_t* bench = arg;
  const loom_kernel_def_t* kernel = NULL;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    CHECK_OK(loom_kernel_registry_lookup(
        bench->kernels, bench->op, LOOM_DEVICE_CPU, &bench->attrs, &kernel));
  }
  double elapsed = bench_now_ns() - start;
  if (!kernel) exit(2);
  return elapsed;
}

int main(int argc, char** argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int64_t iterations = quick ? 2000 : 200000;
  int repetitions = quick ? 3 : 15;
  loom_allocator_t allocator = loom_allocator_system();

  static lookup_bench_t bench;
  CHECK_OK(loom_op_registry_create(allocator, &bench.ops));
  CHECK_OK(loom_kernel_registry_create(allocator, &bench.kernels));
  // 200 binary ops, each with kernels for 6 dtypes: a registry the size of
  // a real op library.
  static const loom_dtype_t kTypes[] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                                        LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,
                                        LOOM_DTYPE_HALF,  LOOM_DTYPE_BFLOAT16};
  for (int i = 0; i < kOps; ++i) {
    snprintf(bench.names[i], sizeof(bench.names[i]), "BenchOp%d", i);
    loom_op_def_builder_t* builder = NULL;
    CHECK_OK(loom_op_def_builder_create(allocator, bench.names[i], &builder));
    CHECK_OK(loom_op_def_builder_add_input(builder, "x: T"));
    CHECK_OK(loom_op_def_builder_add_input(builder, "y: T"));
    CHECK_OK(loom_op_def_builder_add_output(builder, "z: T"));
    CHECK_OK(loom_op_def_builder_add_attr(builder, "T: numbertype"));
    CHECK_OK(loom_op_registry_register(bench.ops, builder));
    for (size_t t = 0; t < sizeof(kTypes) / sizeof(kTypes[0]); ++t) {
      loom_kernel_builder_t* kernel = NULL;
      CHECK_OK(loom_kernel_builder_create(
          allocator, bench.names[i], LOOM_DEVICE_CPU, NULL, compute_nothing,
          NULL, NULL, &kernel));
      CHECK_OK(loom_kernel_builder_type_constraint(kernel, "T", kTypes[t]));
      char kernel_name[64];
      snprintf(kernel_name, sizeof(kernel_name), "%s_%s", bench.names[i],
               loom_dtype_name(kTypes[t]));
      CHECK_OK(
          loom_kernel_registry_register(bench.kernels, kernel_name, kernel));
    }
  }
  bench.op = loom_op_registry_find(bench.ops, "BenchOp117");
  loom_op_attrs_initialize(&bench.attrs, allocator);
  CHECK_OK(loom_op_attrs_set_dtype(&bench.attrs, "T", LOOM_DTYPE_INT64));

  bench_report(
      "op_registry_find_by_name",
      bench_median_ns(measure_op_lookup, &bench, iterations, repetitions),
      "ns/lookup");
  bench_report(
      "kernel_registry_lookup_op_dtype",
      bench_median_ns(measure_kernel_lookup, &bench, iterations, repetitions),
      "ns/lookup");

  loom_op_attrs_deinitialize(&bench.attrs);
  loom_kernel_registry_destroy(bench.kernels);
  loom_op_registry_destroy(bench.ops);
  return 0;
}
