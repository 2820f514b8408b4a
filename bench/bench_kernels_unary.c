// Element-wise unary kernels on 16 M float32 values (1 M with --quick),
// through Execute on the cpu handler, at 1 and 2 threads. Prints
// "name median unit" lines, in millions of elements per second:
//
//   kernels_unary_<op>_f32_t<threads>        the result reuses the input's
//       buffer (the input handle is handed over, as a chain of ops does):
//       the counterpart of NumPy's and PyTorch's out= variants;
//   kernels_unary_<op>_f32_t<threads>_alloc  the input is kept, so every
//       op allocates its output (fresh pages from the system at this size).
//
// <op>: exp, tanh, sigmoid (the headline ops), log, erf, relu. The
// input is restored (untimed) before each in-place op, so every op sees
// the same values. kernels_unary_forwarded_per_op checks that the in-place
// figures did reuse their buffers (1.0).

#include <math.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

typedef struct bench_t {
  loom_runtime_t* runtime;
  loom_prepared_op_t* op;
  int64_t n;
  const float* pristine;  // the input values
  loom_tensor_handle_t* handle;
} bench_t;

static loom_tensor_handle_t* make_handle(loom_runtime_t* runtime,
                                         const float* values, int64_t n) {
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, &n, 1));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_FLOAT,
                                    &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, (size_t)n * sizeof(float));
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// Runs the op on bench->handle, waits for the result and returns it.
static loom_tensor_handle_t* run_op(bench_t* bench,
                                    loom_tensor_handle_t* input) {
  loom_tensor_handle_t* result = NULL;
  loom_location_t location = {0};
  CHECK_OK(loom_runtime_execute_prepared(bench->op, location, &input, 1, NULL,
                                         &result, 1, NULL));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_handle_resolve(result, &tensor));
  loom_tensor_release(tensor);
  return result;
}

// In place: each op receives the only reference to its input and so
// writes its result over it; the values are put back between ops.
static double measure_in_place(void* arg, int64_t iterations) {
  bench_t* bench = arg;
  double elapsed = 0;
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_t* tensor = NULL;
    CHECK_OK(loom_tensor_handle_resolve(bench->handle, &tensor));
    memcpy(loom_tensor_data(tensor), bench->pristine,
           (size_t)bench->n * sizeof(float));
    loom_tensor_release(tensor);
    double start = bench_now_ns();
    bench->handle = run_op(bench, bench->handle);  // ownership moves in
    elapsed += bench_now_ns() - start;
  }
  return elapsed;
}

// Allocating: the input stays held, every op gets a new output.
static double measure_alloc(void* arg, int64_t iterations) {
  bench_t* bench = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_retain(bench->handle);
    loom_tensor_handle_release(run_op(bench, bench->handle));
  }
  return bench_now_ns() - start;
}

static const char* g_only = NULL;

static void run_case(loom_runtime_t* runtime, const char* op_name,
                     const char* label, int threads, bool in_place,
                     const float* values, int64_t n, int64_t iterations,
                     int repetitions) {
  char name[128];
  snprintf(name, sizeof(name), "kernels_unary_%s_f32_t%d%s", label, threads,
           in_place ? "" : "_alloc");
  if (g_only && !strstr(name, g_only)) return;
  bench_t bench = {.runtime = runtime, .n = n, .pristine = values};
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name,
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  bench.handle = make_handle(runtime, values, n);
  loom_kernel_statistics_t before = loom_kernel_statistics();
  double ns = bench_median_ns(in_place ? measure_in_place : measure_alloc,
                              &bench, iterations, repetitions);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  bench_report(name, (double)n * 1e3 / ns, "Melem/s");
  if (in_place && threads == 1 && strcmp(label, "exp") == 0) {
    int64_t ops = iterations / 10 + 1 + iterations * (int64_t)repetitions;
    bench_report("kernels_unary_forwarded_per_op",
                 (double)(after.forwarded_buffers - before.forwarded_buffers) /
                     (double)ops,
                 "buffers/op");
  }
  loom_tensor_handle_release(bench.handle);
  loom_prepared_op_release(bench.op);
}

int main(int argc, char** argv) {
  int64_t n = 16 << 20;
  int64_t iterations = 4;
  int repetitions = 7;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      n = 1 << 20;
      iterations = 2;
      repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    }
  }
  // Values in [-4, 4) (log: (0, 8)), a fixed pseudo-random sequence.
  float* values = malloc((size_t)n * sizeof(float));
  float* positive = malloc((size_t)n * sizeof(float));
  if (!values || !positive) return 1;
  uint32_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    values[i] = (float)(state >> 8) * (8.0f / 16777216.0f) - 4.0f;
    positive[i] = values[i] + 4.0f + 1e-3f;
  }
  static const struct {
    const char* op;
    const char* label;
    bool positive;
  } kOps[] = {
      {.op = "Exp", .label = "exp"},
      {.op = "Tanh", .label = "tanh"},
      {.op = "Sigmoid", .label = "sigmoid"},
      {.op = "Log", .label = "log", .positive = true},
      {.op = "Erf", .label = "erf"},
      {.op = "Relu", .label = "relu"},
  };
  // 1 thread: no workers (the caller runs everything); 2: one worker and
  // the caller.
  for (int threads = 1; threads <= 2; ++threads) {
    loom_host_context_options_t host_options;
    loom_host_context_options_initialize(&host_options);
    host_options.num_threads = threads - 1;
    loom_host_context_t* host = NULL;
    CHECK_OK(loom_host_context_create(&host_options, &host));
    loom_runtime_options_t options;
    loom_runtime_options_initialize(&options, host);
    loom_runtime_t* runtime = NULL;
    CHECK_OK(loom_runtime_create(&options, &runtime));
    for (size_t k = 0; k < sizeof(kOps) / sizeof(kOps[0]); ++k) {
      const float* input = kOps[k].positive ? positive : values;
      run_case(runtime, kOps[k].op, kOps[k].label, threads, true, input, n,
               iterations, repetitions);
      run_case(runtime, kOps[k].op, kOps[k].label, threads, false, input, n,
               iterations, repetitions);
    }
    loom_runtime_destroy(runtime);
    loom_host_context_destroy(host);
  }
  free(values);
  free(positive);
  return 0;
}
