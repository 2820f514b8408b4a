// The neural-network kernels through Execute on the cpu handler, at 1 and
// 2 threads, on a batch of 32 images of 32x32 with 64 channels (float32;
// --quick: a batch of 4). Prints "name median unit" lines, milliseconds
// per op:
//
//   kernels_nn_conv3x3_nhwc_t<N>         Conv2D, 3x3 filter to 64 channels,
//                                        SAME, stride 1, NHWC (the headline
//                                        comparison, against PyTorch's conv2d);
//   kernels_nn_conv3x3_nchw_t<N>         the same in NCHW;
//   kernels_nn_conv3x3_input_grad_t<N>   Conv2DBackpropInput of it (NHWC);
//   kernels_nn_conv3x3_filter_grad_t<N>  Conv2DBackpropFilter of it;
//   kernels_nn_maxpool3x3_nhwc_t<N>      MaxPool 3x3, stride 1, SAME;
//   kernels_nn_avgpool3x3_nhwc_t<N>      AvgPool, the same window;
//   kernels_nn_batchnorm_infer_nhwc_t<N> FusedBatchNormV3, inference;
//   kernels_nn_batchnorm_train_nhwc_t<N> FusedBatchNormV3, training.
//
// "t1" runs on a host without workers (the caller computes), "t2" on one
// worker and the caller. OpenBLAS's tuning variables (OPENBLAS_CORETYPE,
// OPENBLAS_L2_SIZE) are read when the library loads, so when either is set
// the program re-executes itself without them: the figures are those of
// OpenBLAS's own choice for this CPU, as PyTorch's are.
//
//   bench_kernels_nn [--quick] [--only TEXT]

#include <string.h>
#include <unistd.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

static const char* g_only = NULL;
static uint64_t g_seed = 0x9e3779b97f4a7c15ull;

static float next_uniform(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((g_seed >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static loom_tensor_handle_t* make_handle(loom_runtime_t* runtime,
                                         loom_dtype_t dtype,
                                         const int64_t* dims, int32_t rank,
                                         float offset) {
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_system(), dtype, &shape,
                                    &tensor));
  int64_t n = loom_tensor_num_elements(tensor);
  if (dtype == LOOM_DTYPE_FLOAT) {
    float* data = loom_tensor_data(tensor);
    for (int64_t i = 0; i < n; ++i) data[i] = next_uniform() + offset;
  } else {
    memset(loom_tensor_data(tensor), 0, loom_tensor_byte_size(tensor));
  }
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* make_sizes(loom_runtime_t* runtime,
                                        const int64_t* values) {
  int64_t four = 4;
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, &four, 1));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_INT32,
                                    &shape, &tensor));
  int32_t* data = loom_tensor_data(tensor);
  for (int i = 0; i < 4; ++i) data[i] = (int32_t)values[i];
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

enum { kMaxArgs = 5, kMaxResults = 6 };

typedef struct op_bench_t {
  loom_prepared_op_t* op;
  loom_tensor_handle_t* args[kMaxArgs];
  int32_t num_args;
  int32_t num_results;
  loom_op_attrs_t attrs;
} op_bench_t;

static double measure_op(void* arg, int64_t iterations) {
  op_bench_t* bench = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[kMaxArgs];
    for (int32_t a = 0; a < bench->num_args; ++a) {
      loom_tensor_handle_retain(bench->args[a]);
      args[a] = bench->args[a];
    }
    loom_tensor_handle_t* results[kMaxResults] = {NULL};
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

// Runs `op_name` on args (consumed) with attrs (consumed) and reports
// milliseconds per op.
static void run_op(loom_runtime_t* runtime, const char* name,
                   const char* op_name, loom_tensor_handle_t** args,
                   int32_t num_args, int32_t num_results,
                   loom_op_attrs_t* attrs, int repetitions) {
  op_bench_t bench = {.num_args = num_args, .num_results = num_results};
  memcpy(bench.args, args, (size_t)num_args * sizeof(args[0]));
  loom_op_attrs_initialize(&bench.attrs, loom_allocator_system());
  CHECK_OK(loom_op_attrs_merge(&bench.attrs, attrs));
  loom_op_attrs_deinitialize(attrs);
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name,
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  double ns = bench_median_ns(measure_op, &bench, 1, repetitions);
  bench_report(name, ns / 1e6, "ms");
  loom_prepared_op_release(bench.op);
  loom_op_attrs_deinitialize(&bench.attrs);
  for (int32_t a = 0; a < num_args; ++a) loom_tensor_handle_release(args[a]);
}

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only);
}

static void window_attrs(loom_op_attrs_t* attrs, const int64_t* ksize,
                         const char* format) {
  static const int64_t kOnes[4] = {1, 1, 1, 1};
  loom_op_attrs_initialize(attrs, loom_allocator_system());
  CHECK_OK(
      loom_op_attrs_set_list(attrs, "strides", LOOM_ATTR_KIND_I64, kOnes, 4));
  if (ksize) {
    CHECK_OK(
        loom_op_attrs_set_list(attrs, "ksize", LOOM_ATTR_KIND_I64, ksize, 4));
  }
  CHECK_OK(loom_op_attrs_set_string(attrs, "padding", "SAME", 4));
  CHECK_OK(
      loom_op_attrs_set_string(attrs, "data_format", format, strlen(format)));
}

static void run_all(loom_runtime_t* runtime, int threads, int64_t batch,
                    int repetitions) {
  char name[128];
  const int64_t side = 32, depth = 64;
  int64_t nhwc[4] = {batch, side, side, depth};
  int64_t nchw[4] = {batch, depth, side, side};
  int64_t filter[4] = {3, 3, depth, depth};
  loom_op_attrs_t attrs;

  // Convolutions.
  static const char* kFormats[2] = {"NHWC", "NCHW"};
  for (int f = 0; f < 2; ++f) {
    snprintf(name, sizeof(name), "kernels_nn_conv3x3_%s_t%d",
             f ? "nchw" : "nhwc", threads);
    if (!wanted(name)) continue;
    loom_tensor_handle_t* args[2] = {
        make_handle(runtime, LOOM_DTYPE_FLOAT, f ? nchw : nhwc, 4, 0),
        make_handle(runtime, LOOM_DTYPE_FLOAT, filter, 4, 0)};
    window_attrs(&attrs, NULL, kFormats[f]);
    run_op(runtime, name, "Conv2D", args, 2, 1, &attrs, repetitions);
  }
  snprintf(name, sizeof(name), "kernels_nn_conv3x3_input_grad_t%d", threads);
  if (wanted(name)) {
    loom_tensor_handle_t* args[3] = {
        make_sizes(runtime, nhwc),
        make_handle(runtime, LOOM_DTYPE_FLOAT, filter, 4, 0),
        make_handle(runtime, LOOM_DTYPE_FLOAT, nhwc, 4, 0)};
    window_attrs(&attrs, NULL, "NHWC");
    run_op(runtime, name, "Conv2DBackpropInput", args, 3, 1, &attrs,
           repetitions);
  }
  snprintf(name, sizeof(name), "kernels_nn_conv3x3_filter_grad_t%d", threads);
  if (wanted(name)) {
    loom_tensor_handle_t* args[3] = {
        make_handle(runtime, LOOM_DTYPE_FLOAT, nhwc, 4, 0),
        make_sizes(runtime, filter),
        make_handle(runtime, LOOM_DTYPE_FLOAT, nhwc, 4, 0)};
    window_attrs(&attrs, NULL, "NHWC");
    run_op(runtime, name, "Conv2DBackpropFilter", args, 3, 1, &attrs,
           repetitions);
  }

  // Pooling.
  static const int64_t kWindow[4] = {1, 3, 3, 1};
  static const char* kPools[2][2] = {{"maxpool", "MaxPool"},
                                     {"avgpool", "AvgPool"}};
  for (int p = 0; p < 2; ++p) {
    snprintf(name, sizeof(name), "kernels_nn_%s3x3_nhwc_t%d", kPools[p][0],
             threads);
    if (!wanted(name)) continue;
    loom_tensor_handle_t* args[1] = {
        make_handle(runtime, LOOM_DTYPE_FLOAT, nhwc, 4, 0)};
    window_attrs(&attrs, kWindow, "NHWC");
    run_op(runtime, name, kPools[p][1], args, 1, 1, &attrs, repetitions);
  }

  // Batch normalisation.
  for (int training = 0; training < 2; ++training) {
    snprintf(name, sizeof(name), "kernels_nn_batchnorm_%s_nhwc_t%d",
             training ? "train" : "infer", threads);
    if (!wanted(name)) continue;
    int64_t channels = depth, none = 0;
    loom_tensor_handle_t* args[5] = {
        make_handle(runtime, LOOM_DTYPE_FLOAT, nhwc, 4, 0),
        make_handle(runtime, LOOM_DTYPE_FLOAT, &channels, 1, 1.0f),
        make_handle(runtime, LOOM_DTYPE_FLOAT, &channels, 1, 0),
        make_handle(runtime, LOOM_DTYPE_FLOAT, training ? &none : &channels, 1,
                    0),
        make_handle(runtime, LOOM_DTYPE_FLOAT, training ? &none : &channels, 1,
                    2.0f)};
    loom_op_attrs_initialize(&attrs, loom_allocator_system());
    CHECK_OK(loom_op_attrs_set_bool(&attrs, "is_training", training != 0));
    CHECK_OK(loom_op_attrs_set_f32(&attrs, "epsilon", 0.001f));
    run_op(runtime, name, "FusedBatchNormV3", args, 5, 6, &attrs, repetitions);
  }
}

int main(int argc, char** argv) {
  if (getenv("OPENBLAS_CORETYPE") || getenv("OPENBLAS_L2_SIZE")) {
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");  // carry on with the variables gone
  }
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) g_only = argv[++i];
  }
  int64_t batch = quick ? 4 : 32;
  int repetitions = quick ? 1 : 9;
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
    run_all(runtime, threads, batch, repetitions);
    loom_runtime_destroy(runtime);
    loom_host_context_destroy(host);
  }
  return 0;
}
