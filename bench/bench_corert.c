// Core-runtime dispatch cost: a tiny f32 add through Execute on the cpu
// handler, the way an eager front end calls it. Prints one
// "name median unit" line per figure:
//
//   corert_add_<shape>_<path>   ns per op, where <path> is
//     tf        AddV2-style op registered with TensorFlow's ops.h and
//               kernels.h (the path the built-in kernels take), inline;
//     native    a TFRT-style native op (metadata fn + dispatch fn), inline;
//     enqueued  the tf op dispatched on the thread pool and awaited;
//     logging   the tf op through the logging handler with output off;
//   corert_add_2x2_forwarded    z = z + y repeated: every op reuses its
//                 input's buffer (corert_forwarded_buffers_per_op says so);
//   corert_allocator_requests_per_op, corert_malloc_calls_per_op
//                 memory traffic per tf op after warm-up: requests to
//                 Loom's caching allocator, and those that reached malloc;
//   corert_tensor_handle_size   bytes of one tensor handle.

#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

//===----------------------------------------------------------------------===//
// The op, through TensorFlow's C API
//===----------------------------------------------------------------------===//

static void same_shape_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, shape, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, shape, status);
  }
  TF_DeleteShapeHandle(shape);
}

// As TensorFlow's binary kernels: reuse an input's buffer for the output
// when nothing else holds it (asked before taking the inputs, which would
// hold them), else allocate.
static void add_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_Tensor* y = NULL;
  TF_Tensor* z = NULL;
  TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) {
    int64_t dims[8];
    int rank = TF_NumDims(x);
    for (int i = 0; i < rank; ++i) dims[i] = TF_Dim(x, i);
    TF_DeleteTensor(x);  // so that the input may be forwarded
    x = NULL;
    static const int candidates[2] = {0, 1};
    z = TF_ForwardInputOrAllocateOutput(ctx, candidates, 2, 0, dims, rank, NULL,
                                        status);
  }
  if (TF_GetCode(status) == TF_OK) TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) TF_GetInput(ctx, 1, &y, status);
  if (TF_GetCode(status) == TF_OK) {
    const float* a = TF_TensorData(x);
    const float* b = TF_TensorData(y);
    float* c = TF_TensorData(z);
    int64_t n = TF_TensorElementCount(z);
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteTensor(z);
  TF_DeleteStatus(status);
}

static void register_tf_add(void) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* op = TF_NewOpDefinitionBuilder("BenchAdd");
  TF_OpDefinitionBuilderAddInput(op, "x: T");
  TF_OpDefinitionBuilderAddInput(op, "y: T");
  TF_OpDefinitionBuilderAddOutput(op, "z: T");
  TF_OpDefinitionBuilderAddAttr(op, "T: {float, double}");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(op, same_shape_fn);
  TF_RegisterOpDefinition(op, status);
  if (TF_GetCode(status) != TF_OK) {
    fprintf(stderr, "registering BenchAdd: %s\n", TF_Message(status));
    exit(1);
  }
  TF_KernelBuilder* kernel =
      TF_NewKernelBuilder("BenchAdd", "CPU", NULL, add_compute, NULL);
  TF_KernelBuilder_TypeConstraint(kernel, "T", TF_FLOAT, status);
  TF_RegisterKernelBuilder("BenchAddCpu", kernel, status);
  if (TF_GetCode(status) != TF_OK) {
    fprintf(stderr, "registering the BenchAdd kernel: %s\n",
            TF_Message(status));
    exit(1);
  }
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// The op, native (TFRT's CpuOpRegistry)
//===----------------------------------------------------------------------===//

static loom_status_t native_add_metadata(const loom_tensor_metadata_t* inputs,
                                         int32_t num_inputs,
                                         const loom_op_attrs_t* attrs,
                                         loom_tensor_metadata_t* results,
                                         int32_t num_results) {
  (void)attrs;
  if (num_inputs != 2 || num_results != 1 ||
      inputs[0].dtype != inputs[1].dtype ||
      !loom_shape_equal(&inputs[0].shape, &inputs[1].shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "bench.add: mismatched arguments");
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

static loom_status_t native_add(const loom_cpu_dispatch_context_t* ctx) {
  loom_tensor_t* z = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(ctx->allocator, ctx->result_metadata[0].dtype,
                               &ctx->result_metadata[0].shape, &z));
  const float* a = loom_tensor_data(ctx->inputs[0]);
  const float* b = loom_tensor_data(ctx->inputs[1]);
  float* c = loom_tensor_data(z);
  int64_t n = loom_tensor_num_elements(z);
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  return loom_cpu_set_result(ctx->results[0], z);
}

//===----------------------------------------------------------------------===//
// Measurements
//===----------------------------------------------------------------------===//

typedef struct bench_t {
  loom_runtime_t* runtime;
  loom_prepared_op_t* op;
  loom_tensor_handle_t* x;
  loom_tensor_handle_t* y;
  bool await_result;
} bench_t;

static double measure_execute(void* arg, int64_t iterations) {
  bench_t* bench = arg;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[2] = {bench->x, bench->y};
    loom_tensor_handle_retain(bench->x);
    loom_tensor_handle_retain(bench->y);
    loom_tensor_handle_t* result = NULL;
    loom_location_t location = {(uint64_t)i};
    CHECK_OK(loom_runtime_execute_prepared(bench->op, location, args, 2, &attrs,
                                           &result, 1, NULL));
    if (bench->await_result) {
      loom_tensor_t* tensor = NULL;
      CHECK_OK(loom_tensor_handle_resolve(result, &tensor));
      loom_tensor_release(tensor);
    }
    loom_tensor_handle_release(result);
  }
  double elapsed = bench_now_ns() - start;
  loom_op_attrs_deinitialize(&attrs);
  return elapsed;
}

// z = z + y, repeated: each result is the next op's only reference, so the
// kernel forwards its buffer every time.
static double measure_chain(void* arg, int64_t iterations) {
  bench_t* bench = arg;
  loom_tensor_handle_t* z = bench->x;
  loom_tensor_handle_retain(z);
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[2] = {z, bench->y};
    loom_tensor_handle_retain(bench->y);
    loom_location_t location = {(uint64_t)i};
    CHECK_OK(loom_runtime_execute_prepared(bench->op, location, args, 2, NULL,
                                           &z, 1, NULL));
  }
  double elapsed = bench_now_ns() - start;
  loom_tensor_handle_release(z);
  return elapsed;
}

static loom_tensor_handle_t* make_input(loom_runtime_t* runtime,
                                        const loom_shape_t* shape,
                                        float value) {
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                    shape, &tensor));
  float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < loom_tensor_num_elements(tensor); ++i) {
    data[i] = value;
  }
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// --only <text>: run only the cases whose name contains <text> (for
// profiling one path under callgrind).
static const char* g_only = NULL;

static void run_case(loom_runtime_t* runtime, const char* name,
                     const char* op_name, loom_op_handler_t* handler,
                     const loom_shape_t* shape, bool await_result,
                     int64_t iterations, int repetitions) {
  if (g_only && !strstr(name, g_only)) return;
  bench_t bench = {.runtime = runtime, .await_result = await_result};
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name, handler, &bench.op));
  bench.x = make_input(runtime, shape, 1.0f);
  bench.y = make_input(runtime, shape, 2.0f);
  double ns = bench_median_ns(measure_execute, &bench, iterations, repetitions);
  bench_report(name, ns, "ns/op");
  loom_tensor_handle_release(bench.x);
  loom_tensor_handle_release(bench.y);
  loom_prepared_op_release(bench.op);
}

static loom_runtime_t* create_runtime(loom_host_context_t* host,
                                      int64_t inline_limit) {
  loom_runtime_options_t options;
  loom_runtime_options_initialize(&options, host);
  options.inline_element_limit = inline_limit;
  loom_runtime_t* runtime = NULL;
  CHECK_OK(loom_runtime_create(&options, &runtime));
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  CHECK_OK(loom_cpu_op_handler_add_op(cpu, "bench.add", native_add, 0));
  CHECK_OK(loom_cpu_op_handler_add_metadata_fn(cpu, "bench.add",
                                               native_add_metadata));
  return runtime;
}

// Memory traffic per op after warm-up, on a runtime with the default
// (caching) allocator: requests to the allocator, and those that reached
// malloc.
static void report_allocations(loom_runtime_t* runtime,
                               const loom_shape_t* shape) {
  bench_t bench = {.runtime = runtime};
  CHECK_OK(loom_runtime_prepare_op(runtime, "BenchAdd",
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  bench.x = make_input(runtime, shape, 1.0f);
  bench.y = make_input(runtime, shape, 2.0f);
  measure_execute(&bench, 1000);  // warm-up
  enum { kCounted = 100000 };
  loom_allocator_cache_statistics_t before = loom_allocator_cache_statistics();
  measure_execute(&bench, kCounted);
  loom_allocator_cache_statistics_t after = loom_allocator_cache_statistics();
  bench_report("corert_allocator_requests_per_op",
               (double)(after.requests - before.requests) / kCounted,
               "requests/op");
  bench_report(
      "corert_malloc_calls_per_op",
      (double)(after.system_allocations - before.system_allocations) / kCounted,
      "calls/op");
  bench_report("corert_tensor_handle_size", (double)loom_tensor_handle_size(),
               "bytes");
  loom_tensor_handle_release(bench.x);
  loom_tensor_handle_release(bench.y);
  loom_prepared_op_release(bench.op);
}

int main(int argc, char** argv) {
  int64_t iterations = 200000;
  int repetitions = 9;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      iterations = 2000;
      repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    }
  }
  register_tf_add();
  loom_host_context_t* host = NULL;
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  CHECK_OK(loom_host_context_create(&host_options, &host));
  loom_runtime_t* runtime = create_runtime(host, 0);
  loom_runtime_t* enqueuing = create_runtime(host, -1);
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  loom_op_handler_t* logging = NULL;
  CHECK_OK(loom_dispatch_logging_handler_create(runtime, cpu, NULL, false,
                                                &logging));

  const int64_t dims_1[] = {1};
  const int64_t dims_2x2[] = {2, 2};
  struct {
    const char* name;
    loom_shape_t shape;
  } shapes[2];
  shapes[0].name = "1";
  shapes[1].name = "2x2";
  CHECK_OK(loom_shape_initialize(&shapes[0].shape, dims_1, 1));
  CHECK_OK(loom_shape_initialize(&shapes[1].shape, dims_2x2, 2));
  // Bring the clock and the caches up before the first measured case
  // (not under --only: instruction counts per op are then the measured
  // cases' alone).
  if (!g_only) {
    bench_t warm = {.runtime = runtime};
    CHECK_OK(loom_runtime_prepare_op(runtime, "BenchAdd", cpu, &warm.op));
    warm.x = make_input(runtime, &shapes[0].shape, 1.0f);
    warm.y = make_input(runtime, &shapes[0].shape, 2.0f);
    measure_execute(&warm, iterations);
    loom_tensor_handle_release(warm.x);
    loom_tensor_handle_release(warm.y);
    loom_prepared_op_release(warm.op);
  }
  for (int s = 0; s < 2; ++s) {
    char name[64];
    const loom_shape_t* shape = &shapes[s].shape;
    snprintf(name, sizeof(name), "corert_add_%s_tf", shapes[s].name);
    run_case(runtime, name, "BenchAdd", cpu, shape, false, iterations,
             repetitions);
    snprintf(name, sizeof(name), "corert_add_%s_native", shapes[s].name);
    run_case(runtime, name, "bench.add", cpu, shape, false, iterations,
             repetitions);
    snprintf(name, sizeof(name), "corert_add_%s_enqueued", shapes[s].name);
    run_case(enqueuing, name, "BenchAdd",
             loom_runtime_get_op_handler(enqueuing, "cpu"), shape, true,
             iterations / 10, repetitions);
    snprintf(name, sizeof(name), "corert_add_%s_logging", shapes[s].name);
    run_case(runtime, name, "BenchAdd", logging, shape, false, iterations,
             repetitions);
  }
  if (!g_only) report_allocations(runtime, &shapes[1].shape);
  if (!g_only || strstr("corert_add_2x2_forwarded", g_only)) {
    bench_t bench = {.runtime = runtime};
    CHECK_OK(loom_runtime_prepare_op(runtime, "BenchAdd", cpu, &bench.op));
    bench.x = make_input(runtime, &shapes[1].shape, 1.0f);
    bench.y = make_input(runtime, &shapes[1].shape, 2.0f);
    loom_kernel_statistics_t before = loom_kernel_statistics();
    double ns = bench_median_ns(measure_chain, &bench, iterations, repetitions);
    loom_kernel_statistics_t after = loom_kernel_statistics();
    int64_t ops = iterations / 10 + 1 + iterations * (int64_t)repetitions;
    bench_report("corert_add_2x2_forwarded", ns, "ns/op");
    bench_report("corert_forwarded_buffers_per_op",
                 (double)(after.forwarded_buffers - before.forwarded_buffers) /
                     (double)ops,
                 "buffers/op");
    loom_tensor_handle_release(bench.x);
    loom_tensor_handle_release(bench.y);
    loom_prepared_op_release(bench.op);
  }
  loom_op_handler_release(logging);
  loom_runtime_destroy(enqueuing);
  loom_runtime_destroy(runtime);
  loom_host_context_destroy(host);
  return 0;
}
