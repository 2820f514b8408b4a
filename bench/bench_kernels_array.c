// Data-movement kernels on sizes where memory bandwidth is the limit:
// Transpose, ConcatV2, Gather/GatherV2 and StridedSlice through Execute on
// the cpu handler (synchronous, output allocation included), at 1 and 2
// threads. Prints "name median unit" lines:
//
//   array_<case>_t<threads>   microseconds per op
//
// bench/kernels_array_reference.py measures the same operations in NumPy
// and PyTorch; bench/kernels_array.pairs pairs the figures.
//
//   bench_kernels_array [--quick] [--only <text>] [--cpu-time]
//
// --cpu-time measures the process's CPU time instead of wall-clock time:
// steadier on a busy machine, comparable for the 1-thread figures only.

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

enum { kMaxInputs = 4 };

typedef struct array_case_t {
  loom_prepared_op_t* op;
  loom_tensor_handle_t* inputs[kMaxInputs];
  int32_t num_inputs;
  loom_op_attrs_t attrs;
} array_case_t;

static bool g_cpu_time = false;

static double now_ns(void) {
  if (!g_cpu_time) return bench_now_ns();
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double measure(void* arg, int64_t iterations) {
  array_case_t* c = arg;
  double start = now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[kMaxInputs];
    for (int32_t k = 0; k < c->num_inputs; ++k) {
      loom_tensor_handle_retain(c->inputs[k]);
      args[k] = c->inputs[k];
    }
    loom_tensor_handle_t* result = NULL;
    loom_location_t location = {(uint64_t)i};
    CHECK_OK(loom_runtime_execute_prepared(c->op, location, args, c->num_inputs,
                                           &c->attrs, &result, 1, NULL));
    loom_tensor_t* tensor = NULL;
    CHECK_OK(loom_tensor_handle_resolve(result, &tensor));
    loom_tensor_release(tensor);
    loom_tensor_handle_release(result);
  }
  return now_ns() - start;
}

// A float32 tensor of `shape` holding a pattern, as a handle on `cpu`.
static loom_tensor_handle_t* f32_input(loom_op_handler_t* cpu, int rank,
                                       const int64_t* dims) {
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_FLOAT,
                                    &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  int64_t n = loom_tensor_num_elements(tensor);
  for (int64_t i = 0; i < n; ++i) data[i] = (float)(i % 1000);
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(cpu, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// An int32 vector: `values` of them, or (values == NULL) `count` random
// indices in [0, limit).
static loom_tensor_handle_t* i32_input(loom_op_handler_t* cpu,
                                       const int32_t* values, int64_t count,
                                       int64_t limit) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 1;
  shape.dims[0] = count;
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_INT32,
                                    &shape, &tensor));
  int32_t* data = loom_tensor_data(tensor);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < count; ++i) {
    if (values) {
      data[i] = values[i];
    } else {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      data[i] = (int32_t)(state % (uint64_t)limit);
    }
  }
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(cpu, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* i32_scalar(loom_op_handler_t* cpu, int32_t v) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_INT32,
                                    &shape, &tensor));
  *(int32_t*)loom_tensor_data(tensor) = v;
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(cpu, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static const char* g_only = NULL;
static int64_t g_iterations = 10;
static int g_repetitions = 7;

// Runs one case (its inputs are consumed) and prints its figure.
static void run(loom_runtime_t* runtime, const char* name, int threads,
                const char* op_name, array_case_t* c) {
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name, cpu, &c->op));
  double ns = bench_median_ns(measure, c, g_iterations, g_repetitions);
  char figure[160];
  snprintf(figure, sizeof(figure), "array_%s_t%d", name, threads);
  bench_report(figure, ns / 1000.0, "us/op");
  for (int32_t k = 0; k < c->num_inputs; ++k) {
    loom_tensor_handle_release(c->inputs[k]);
  }
  loom_op_attrs_deinitialize(&c->attrs);
  loom_prepared_op_release(c->op);
}

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only);
}

static void run_all(loom_runtime_t* runtime, int threads) {
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  array_case_t c;
  // Transposes: 2-D, the last two dims of a batch, and a full reversal.
  if (wanted("transpose_2d")) {
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[] = {4096, 4096};
    const int32_t perm[] = {1, 0};
    c.inputs[0] = f32_input(cpu, 2, dims);
    c.inputs[1] = i32_input(cpu, perm, 2, 0);
    c.num_inputs = 2;
    run(runtime, "transpose_2d_f32_4096x4096", threads, "Transpose", &c);
  }
  if (wanted("transpose_batched")) {
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[] = {64, 512, 512};
    const int32_t perm[] = {0, 2, 1};
    c.inputs[0] = f32_input(cpu, 3, dims);
    c.inputs[1] = i32_input(cpu, perm, 3, 0);
    c.num_inputs = 2;
    run(runtime, "transpose_batched_f32_64x512x512", threads, "Transpose", &c);
  }
  if (wanted("transpose_3d")) {
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[] = {256, 256, 256};
    const int32_t perm[] = {2, 1, 0};
    c.inputs[0] = f32_input(cpu, 3, dims);
    c.inputs[1] = i32_input(cpu, perm, 3, 0);
    c.num_inputs = 2;
    run(runtime, "transpose_3d_f32_256x256x256_210", threads, "Transpose", &c);
  }
  // Concatenation along the outer and the inner axis.
  for (int axis = 0; axis < 2; ++axis) {
    char name[64];
    snprintf(name, sizeof(name), "concat_axis%d_f32_2x%s", axis,
             axis == 0 ? "2048x4096" : "4096x2048");
    if (!wanted(name)) continue;
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[2][2] = {{2048, 4096}, {4096, 2048}};
    c.inputs[0] = f32_input(cpu, 2, dims[axis]);
    c.inputs[1] = f32_input(cpu, 2, dims[axis]);
    c.inputs[2] = i32_scalar(cpu, axis);
    c.num_inputs = 3;
    run(runtime, name, threads, "ConcatV2", &c);
  }
  // Gathers: rows of an embedding table, and single elements.
  if (wanted("gather_rows")) {
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[] = {100000, 128};
    c.inputs[0] = f32_input(cpu, 2, dims);
    c.inputs[1] = i32_input(cpu, NULL, 50000, 100000);
    c.num_inputs = 2;
    run(runtime, "gather_rows_f32_100000x128_50000", threads, "Gather", &c);
  }
  if (wanted("gather_elements")) {
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    const int64_t dims[] = {1 << 22};
    c.inputs[0] = f32_input(cpu, 1, dims);
    c.inputs[1] = i32_input(cpu, NULL, 1 << 22, 1 << 22);
    c.inputs[2] = i32_scalar(cpu, 0);
    c.num_inputs = 3;
    run(runtime, "gather_elements_f32_4M", threads, "GatherV2", &c);
  }
  // Strided slices: the interior of a matrix (row copies), every other
  // element of every other row, a reversed vector.
  struct {
    const char* name;
    int rank;
    int64_t dims[2];
    int32_t begin[2], end[2], strides[2];
    int64_t begin_mask, end_mask;
  } slices[] = {
      {.name = "strided_slice_interior_f32_4096x4096",
       .rank = 2,
       .dims = {4096, 4096},
       .begin = {1, 1},
       .end = {-1, -1},
       .strides = {1, 1},
       .begin_mask = 0,
       .end_mask = 0},
      {.name = "strided_slice_step2_f32_4096x4096",
       .rank = 2,
       .dims = {4096, 4096},
       .begin = {0, 0},
       .end = {0, 0},
       .strides = {2, 2},
       .begin_mask = 3,
       .end_mask = 3},
      {.name = "strided_slice_reverse_f32_16M",
       .rank = 1,
       .dims = {1 << 24, 0},
       .begin = {0, 0},
       .end = {0, 0},
       .strides = {-1, 0},
       .begin_mask = 1,
       .end_mask = 1},
  };
  for (size_t s = 0; s < sizeof(slices) / sizeof(slices[0]); ++s) {
    if (!wanted(slices[s].name)) continue;
    memset(&c, 0, sizeof(c));
    loom_op_attrs_initialize(&c.attrs, loom_allocator_default());
    int rank = slices[s].rank;
    c.inputs[0] = f32_input(cpu, rank, slices[s].dims);
    c.inputs[1] = i32_input(cpu, slices[s].begin, rank, 0);
    c.inputs[2] = i32_input(cpu, slices[s].end, rank, 0);
    c.inputs[3] = i32_input(cpu, slices[s].strides, rank, 0);
    c.num_inputs = 4;
    CHECK_OK(
        loom_op_attrs_set_i64(&c.attrs, "begin_mask", slices[s].begin_mask));
    CHECK_OK(loom_op_attrs_set_i64(&c.attrs, "end_mask", slices[s].end_mask));
    run(runtime, slices[s].name, threads, "StridedSlice", &c);
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_iterations = 2;
      g_repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else if (strcmp(argv[i], "--cpu-time") == 0) {
      g_cpu_time = true;
    }
  }
  for (int threads = 1; threads <= 2; ++threads) {
    // The calling thread works too: threads - 1 workers.
    loom_host_context_options_t host_options;
    loom_host_context_options_initialize(&host_options);
    host_options.num_threads = threads - 1;
    loom_host_context_t* host = NULL;
    CHECK_OK(loom_host_context_create(&host_options, &host));
    loom_runtime_options_t options;
    loom_runtime_options_initialize(&options, host);
    options.synchronous = true;
    loom_runtime_t* runtime = NULL;
    CHECK_OK(loom_runtime_create(&options, &runtime));
    run_all(runtime, threads);
    loom_runtime_destroy(runtime);
    loom_host_context_destroy(host);
  }
  return 0;
}
