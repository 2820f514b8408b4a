// Reductions, matrix products and softmax through the core runtime, at 1
// and 2 threads, beside OpenBLAS called directly. Prints one
// "name median unit" line per figure (microseconds per op):
//
//   reduce_<what>_t<N>      Sum / Max / ArgMax over 16 M floats: the whole
//                           vector, the rows or the columns of 4096x4096,
//                           axes [0, 2] of 256x256x256;
//   matmul_<n>_f32_t<N>     MatMul of two n x n float matrices;
//   batch_matmul_..._t<N>   BatchMatMulV2 of 64 products of 128x128;
//   einsum_matmul_1024_f32_t<N>
//                           Einsum "ij,jk->ik" of two 1024 x 1024 floats;
//   einsum_attention_..._t<N>
//                           Einsum "bhqd,bhkd->bhqk" (attention scores) of
//                           [8,8,256,64] by [8,8,256,64];
//   openblas_sgemm_<n>_f32_t<N>
//                           cblas_sgemm on the same data with OpenBLAS's
//                           own threads set to N (what Loom is held to);
//   softmax_..., log_softmax_..., sparse_xent_..._t<N>
//                           rows of 1000 classes, 4096 of them.
//
// Large inputs are backed by transparent huge pages (madvise), as NumPy's
// arrays are, so both sides read memory the same way.
//
// "t1" runs on a host without workers (everything on the calling thread),
// "t2" on a host with two workers. Inside Loom's kernels OpenBLAS is always
// single-threaded; the pool is the only owner of the cores.
//
//   bench_kernels_reduce_matmul [--quick] [--only TEXT]

#include <cblas.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

static const char* g_only = NULL;
static bool g_quick = false;

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;

static float next_uniform(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((g_seed >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static loom_tensor_t* make_tensor(loom_dtype_t dtype, const int64_t* dims,
                                  int32_t rank) {
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_system(), dtype, &shape,
                                    &tensor));
  size_t bytes = loom_tensor_byte_size(tensor);
  if (bytes >= (4u << 20)) {
    uintptr_t data = (uintptr_t)loom_tensor_data(tensor);
    uintptr_t first = (data + 4095) & ~(uintptr_t)4095;
    uintptr_t last = (data + bytes) & ~(uintptr_t)4095;
    madvise((void*)first, last - first, MADV_HUGEPAGE);
  }
  int64_t n = loom_tensor_num_elements(tensor);
  if (dtype == LOOM_DTYPE_FLOAT) {
    float* data = loom_tensor_data(tensor);
    for (int64_t i = 0; i < n; ++i) data[i] = next_uniform();
  } else {
    memset(loom_tensor_data(tensor), 0, loom_tensor_byte_size(tensor));
  }
  return tensor;
}

static loom_tensor_handle_t* make_handle(loom_runtime_t* runtime,
                                         loom_tensor_t* tensor) {
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* make_indices(loom_runtime_t* runtime,
                                          const int32_t* values, int32_t count,
                                          bool scalar) {
  int64_t dims[1] = {count};
  loom_tensor_t* tensor = make_tensor(LOOM_DTYPE_INT32, dims, scalar ? 0 : 1);
  memcpy(loom_tensor_data(tensor), values, (size_t)count * sizeof(int32_t));
  return make_handle(runtime, tensor);
}

typedef struct op_bench_t {
  loom_prepared_op_t* op;
  loom_tensor_handle_t* args[2];
  int32_t num_args;
  int32_t num_results;
  loom_op_attrs_t attrs;
} op_bench_t;

static double measure_op(void* arg, int64_t iterations) {
  op_bench_t* bench = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[2];
    for (int32_t a = 0; a < bench->num_args; ++a) {
      loom_tensor_handle_retain(bench->args[a]);
      args[a] = bench->args[a];
    }
    loom_tensor_handle_t* results[2] = {NULL, NULL};
    loom_location_t location = {(uint64_t)i};
    CHECK_OK(loom_runtime_execute_prepared(bench->op, location, args,
                                           bench->num_args, &bench->attrs,
                                           results, bench->num_results, NULL));
    for (int32_t r = 0; r < bench->num_results; ++r) {
      loom_tensor_t* value = NULL;
      CHECK_OK(loom_tensor_handle_resolve(results[r], &value));
      loom_tensor_release(value);
      loom_tensor_handle_release(results[r]);
    }
  }
  return bench_now_ns() - start;
}

// Runs `op_name` on the given handles (consumed) and reports microseconds.
static void run_op(loom_runtime_t* runtime, const char* name,
                   const char* op_name, loom_tensor_handle_t* a,
                   loom_tensor_handle_t* b, int32_t num_results,
                   loom_op_attrs_t* attrs, int repetitions) {
  op_bench_t bench = {
      .args = {a, b}, .num_args = b ? 2 : 1, .num_results = num_results};
  loom_op_attrs_initialize(&bench.attrs, loom_allocator_system());
  if (attrs) CHECK_OK(loom_op_attrs_merge(&bench.attrs, attrs));
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name,
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  double ns = bench_median_ns(measure_op, &bench, 1, repetitions);
  bench_report(name, ns / 1000.0, "us");
  loom_prepared_op_release(bench.op);
  loom_op_attrs_deinitialize(&bench.attrs);
  loom_tensor_handle_release(a);
  if (b) loom_tensor_handle_release(b);
}

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only);
}

static void reductions(loom_runtime_t* runtime, int threads, int repetitions) {
  int64_t n = g_quick ? 1 << 20 : 1 << 24;
  int64_t side = g_quick ? 1024 : 4096;
  int64_t cube = g_quick ? 64 : 256;
  char name[128];
  static const int32_t kAxis0[1] = {0}, kAxis1[1] = {1}, kAxes02[2] = {0, 2};
  struct {
    const char* what;
    const char* op;
    int rank;
    const int32_t* axes;
    int32_t num_axes;
    bool scalar_axis;
  } cases[] = {
      {.what = "sum_16m_f32",
       .op = "Sum",
       .rank = 1,
       .axes = kAxis0,
       .num_axes = 1},
      {.what = "sum_rows_4k_f32",
       .op = "Sum",
       .rank = 2,
       .axes = kAxis1,
       .num_axes = 1},
      {.what = "sum_columns_4k_f32",
       .op = "Sum",
       .rank = 2,
       .axes = kAxis0,
       .num_axes = 1},
      {.what = "sum_axes02_256_f32",
       .op = "Sum",
       .rank = 3,
       .axes = kAxes02,
       .num_axes = 2},
      {.what = "max_16m_f32",
       .op = "Max",
       .rank = 1,
       .axes = kAxis0,
       .num_axes = 1},
      {.what = "mean_rows_4k_f32",
       .op = "Mean",
       .rank = 2,
       .axes = kAxis1,
       .num_axes = 1},
      {.what = "argmax_rows_4k_f32",
       .op = "ArgMax",
       .rank = 2,
       .axes = kAxis1,
       .num_axes = 1,
       .scalar_axis = true},
      {.what = "argmax_columns_4k_f32",
       .op = "ArgMax",
       .rank = 2,
       .axes = kAxis0,
       .num_axes = 1,
       .scalar_axis = true},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    snprintf(name, sizeof(name), "reduce_%s_t%d", cases[c].what, threads);
    if (!wanted(name)) continue;
    int64_t dims[3] = {n, 0, 0};
    if (cases[c].rank == 2) dims[0] = dims[1] = side;
    if (cases[c].rank == 3) dims[0] = dims[1] = dims[2] = cube;
    loom_tensor_handle_t* x = make_handle(
        runtime, make_tensor(LOOM_DTYPE_FLOAT, dims, cases[c].rank));
    loom_tensor_handle_t* axes = make_indices(
        runtime, cases[c].axes, cases[c].num_axes, cases[c].scalar_axis);
    run_op(runtime, name, cases[c].op, x, axes, 1, NULL, repetitions);
  }
}

// MatMul of two size x size matrices beside cblas_sgemm on the same data
// with OpenBLAS's own threads set to `threads` (the figure Loom's MatMul
// is held to). The two alternate sample by sample, so a busy machine
// slows both alike. Restores Loom's policy (one OpenBLAS thread) after.
static void matmul_and_openblas(loom_runtime_t* runtime, int64_t figure,
                                int64_t size, int threads, int repetitions) {
  char loom_name[128], blas_name[128];
  snprintf(loom_name, sizeof(loom_name), "matmul_%lld_f32_t%d",
           (long long)figure, threads);
  snprintf(blas_name, sizeof(blas_name), "openblas_sgemm_%lld_f32_t%d",
           (long long)figure, threads);
  bool want_loom = wanted(loom_name), want_blas = wanted(blas_name);
  if (!want_loom && !want_blas) return;
  int64_t dims[2] = {size, size};
  loom_tensor_t* a = make_tensor(LOOM_DTYPE_FLOAT, dims, 2);
  loom_tensor_t* b = make_tensor(LOOM_DTYPE_FLOAT, dims, 2);
  loom_tensor_t* c = make_tensor(LOOM_DTYPE_FLOAT, dims, 2);
  const float* fa = loom_tensor_data(a);
  const float* fb = loom_tensor_data(b);
  float* fc = loom_tensor_data(c);
  op_bench_t bench = {
      .args = {make_handle(runtime, a), make_handle(runtime, b)},
      .num_args = 2,
      .num_results = 1};
  loom_op_attrs_initialize(&bench.attrs, loom_allocator_system());
  CHECK_OK(loom_runtime_prepare_op(runtime, "MatMul",
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  double loom_samples[16], blas_samples[16];
  int n = (int)size;
  for (int r = -1; r < repetitions; ++r) {  // r = -1: warm-up
    double loom_ns = want_loom ? measure_op(&bench, 1) : 0;
    double start = bench_now_ns();
    if (want_blas) {
      openblas_set_num_threads(threads);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, fa,
                  n, fb, n, 0.0f, fc, n);
      openblas_set_num_threads(1);
    }
    double blas_ns = bench_now_ns() - start;
    if (r >= 0) {
      loom_samples[r] = loom_ns;
      blas_samples[r] = blas_ns;
    }
  }
  qsort(loom_samples, (size_t)repetitions, sizeof(double),
        bench_compare_doubles);
  qsort(blas_samples, (size_t)repetitions, sizeof(double),
        bench_compare_doubles);
  if (want_loom) {
    bench_report(loom_name, loom_samples[repetitions / 2] / 1000.0, "us");
  }
  if (want_blas) {
    bench_report(blas_name, blas_samples[repetitions / 2] / 1000.0, "us");
  }
  loom_prepared_op_release(bench.op);
  loom_op_attrs_deinitialize(&bench.attrs);
  loom_tensor_handle_release(bench.args[0]);
  loom_tensor_handle_release(bench.args[1]);
  loom_tensor_release(c);
}

static void products(loom_runtime_t* runtime, int threads, int repetitions) {
  char name[128];
  int64_t sizes[2] = {1024, 2048};
  for (int s = 0; s < 2; ++s) {
    int64_t size = g_quick ? sizes[s] / 8 : sizes[s];
    matmul_and_openblas(runtime, sizes[s], size, threads, repetitions);
  }
  snprintf(name, sizeof(name), "batch_matmul_64x128_f32_t%d", threads);
  if (wanted(name)) {
    int64_t dims[3] = {64, 128, 128};
    loom_tensor_handle_t* a =
        make_handle(runtime, make_tensor(LOOM_DTYPE_FLOAT, dims, 3));
    loom_tensor_handle_t* b =
        make_handle(runtime, make_tensor(LOOM_DTYPE_FLOAT, dims, 3));
    run_op(runtime, name, "BatchMatMulV2", a, b, 1, NULL, repetitions);
  }
}

// Einsum equations that are one batched product: a plain matrix product
// and attention scores (B read transposed in place).
static void einsums(loom_runtime_t* runtime, int threads, int repetitions) {
  static const struct {
    const char* what;
    const char* equation;
    int32_t rank;
    int64_t a[4], b[4];
  } kCases[] = {
      {.what = "matmul_1024",
       .equation = "ij,jk->ik",
       .rank = 2,
       .a = {1024, 1024},
       .b = {1024, 1024}},
      {.what = "attention_8x8x256x64",
       .equation = "bhqd,bhkd->bhqk",
       .rank = 4,
       .a = {8, 8, 256, 64},
       .b = {8, 8, 256, 64}},
  };
  char name[128];
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    snprintf(name, sizeof(name), "einsum_%s_f32_t%d", kCases[c].what, threads);
    if (!wanted(name)) continue;
    // --quick: the matrices' sides, or the batch, divided by 8.
    int64_t a[4], b[4];
    for (int32_t i = 0; i < kCases[c].rank; ++i) {
      bool cut = g_quick && (kCases[c].rank == 2 || i == 0);
      a[i] = cut ? kCases[c].a[i] / 8 : kCases[c].a[i];
      b[i] = cut ? kCases[c].b[i] / 8 : kCases[c].b[i];
    }
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, loom_allocator_system());
    CHECK_OK(loom_op_attrs_set_string(&attrs, "equation", kCases[c].equation,
                                      strlen(kCases[c].equation)));
    CHECK_OK(loom_op_attrs_set_i64(&attrs, "N", 2));
    run_op(
        runtime, name, "Einsum",
        make_handle(runtime, make_tensor(LOOM_DTYPE_FLOAT, a, kCases[c].rank)),
        make_handle(runtime, make_tensor(LOOM_DTYPE_FLOAT, b, kCases[c].rank)),
        1, &attrs, repetitions);
    loom_op_attrs_deinitialize(&attrs);
  }
}

static void softmaxes(loom_runtime_t* runtime, int threads, int repetitions) {
  char name[128];
  int64_t dims[2] = {g_quick ? 256 : 4096, 1000};
  const char* ops[3] = {"Softmax", "LogSoftmax",
                        "SparseSoftmaxCrossEntropyWithLogits"};
  const char* names[3] = {"softmax", "log_softmax", "sparse_xent"};
  for (int o = 0; o < 3; ++o) {
    snprintf(name, sizeof(name), "%s_4096x1000_f32_t%d", names[o], threads);
    if (!wanted(name)) continue;
    loom_tensor_handle_t* x =
        make_handle(runtime, make_tensor(LOOM_DTYPE_FLOAT, dims, 2));
    loom_tensor_handle_t* labels = NULL;
    if (o == 2) {
      loom_tensor_t* tensor = make_tensor(LOOM_DTYPE_INT64, dims, 1);
      int64_t* data = loom_tensor_data(tensor);
      for (int64_t i = 0; i < dims[0]; ++i) data[i] = (i * 7919) % dims[1];
      labels = make_handle(runtime, tensor);
    }
    run_op(runtime, name, ops[o], x, labels, o == 2 ? 2 : 1, NULL, repetitions);
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) g_quick = true;
    if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) g_only = argv[++i];
  }
  int repetitions = g_quick ? 1 : 9;
  for (int threads = 1; threads <= 2; ++threads) {
    loom_host_context_options_t host_options;
    loom_host_context_options_initialize(&host_options);
    host_options.num_threads = threads - 1;  // the caller is the other one
    loom_host_context_t* host = NULL;
    CHECK_OK(loom_host_context_create(&host_options, &host));
    loom_runtime_options_t options;
    loom_runtime_options_initialize(&options, host);
    loom_runtime_t* runtime = NULL;
    CHECK_OK(loom_runtime_create(&options, &runtime));
    reductions(runtime, threads, repetitions);
    products(runtime, threads, g_quick ? 1 : 9);
    einsums(runtime, threads, g_quick ? 1 : 9);
    softmaxes(runtime, threads, repetitions);
    loom_runtime_destroy(runtime);
    loom_host_context_destroy(host);
  }
  return 0;
}
