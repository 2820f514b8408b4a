// One training step of the demo's models (examples/fashion_mnist: the
// forward pass recorded by a gradient tape, the gradients, Adam's update of
// the resource variables) timed at 1 and 2 threads, beside the GEMM floor
// of the same step. Prints one "name median unit" line per figure
// (microseconds per step):
//
//   train_mlp784_b128_t<N>   MLP 784-256-10 on a batch of 128: compute-bound;
//   train_mlp784_b128_gemm_floor_t<N>
//                            the step's five matrix products (two forward,
//                            three backward; the input needs no gradient)
//                            as cblas_sgemm calls with OpenBLAS's threads
//                            set to N, timed in the same run: the time the
//                            step's FLOPs take at OpenBLAS's rate;
//   openblas_sgemm_rate_mlp784_b128_t<N>
//                            that rate, GFLOP/s;
//   train_tiny_b<B>_t<N>     MLP 16-32-4 on a batch of 1 or 32:
//                            overhead-bound (about 30 ops a step);
//   train_tiny_sgd_b<B>_t<N> the same with SGD (momentum 0.9) for Adam;
//   train_tiny_traced_b<B>_t<N>
//                            that SGD step traced once into a function
//                            (loom/trace.h: forward, the tape's gradient
//                            and the variables' update, all recorded) and
//                            called per step.
//
// bench/train_reference.py times the same steps in PyTorch.
//
//   bench_train [--quick] [--only TEXT] [--cpu-time]
//
// --cpu-time measures the process's CPU time instead of the wall clock:
// steadier on a machine shared with other work (at 2 threads it adds up
// the threads' time, the cost rather than the latency).

#include <cblas.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"
#include "loom/trace.h"
#include "nn_model.h"
#include "nn_ops.h"
#include "nn_optimizer.h"
#include "nn_train.h"

static const char* g_only = NULL;
static bool g_quick = false;

static bool g_cpu_time = false;

static double now_ns(void) {
  if (!g_cpu_time) return bench_now_ns();
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only) != NULL;
}

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;

static float next_uniform(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((g_seed >> 40) & 0xffffff) / 16777216.0f;
}

typedef struct step_bench_t {
  nn_model_t* model;
  nn_optimizer_t* optimizer;
  loom_tensor_handle_t* x;
  loom_tensor_handle_t* labels;
  loom_eager_op_t* call;  // the traced step on x and labels, or NULL
} step_bench_t;

static double measure_steps(void* arg, int64_t iterations) {
  step_bench_t* b = arg;
  double start = now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    if (b->call) {
      loom_tensor_handle_t* loss = NULL;
      int32_t count = 0;
      CHECK_OK(loom_eager_op_execute(b->call, &loss, 1, &count));
      loom_tensor_handle_release(loss);
      continue;
    }
    CHECK_OK(nn_train_step(b->model, b->optimizer, b->x, b->labels, NULL));
  }
  return now_ns() - start;
}

// Traces one training step of `b` into function "train_step" (the
// variables and the optimizer's slots are captured) and makes b->call.
static void trace_step(loom_context_t* context, step_bench_t* b) {
  loom_op_handler_t* trace = NULL;
  CHECK_OK(loom_trace_create(context, "train_step", &trace));
  loom_tensor_handle_t *x = NULL, *labels = NULL, *loss = NULL;
  CHECK_OK(loom_trace_add_parameter_value(trace, "x", b->x, &x));
  CHECK_OK(loom_trace_add_parameter_value(trace, "labels", b->labels, &labels));
  CHECK_OK(loom_context_enter_scope(context, trace));
  CHECK_OK(nn_train_step(b->model, b->optimizer, x, labels, &loss));
  CHECK_OK(loom_context_exit_scope(context));
  loom_function_t* function = NULL;
  CHECK_OK(loom_trace_finish(trace, &loss, 1, &function));
  CHECK_OK(loom_context_add_function(context, function));
  loom_function_release(function);
  loom_tensor_handle_release(loss);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(labels);
  loom_op_handler_release(trace);
  CHECK_OK(loom_eager_op_create(context, "train_step", &b->call));
  CHECK_OK(loom_eager_op_add_input(b->call, b->x));
  CHECK_OK(loom_eager_op_add_input(b->call, b->labels));
}

typedef enum step_kind_t {
  STEP_ADAM,
  STEP_SGD,
  STEP_SGD_TRACED,
} step_kind_t;

// Times training steps of an MLP inputs-hidden-classes on a fixed batch.
static void train_mlp(const char* name, int threads, int64_t inputs,
                      int64_t hidden, int64_t classes, int64_t batch,
                      int64_t iterations, int repetitions, step_kind_t kind) {
  if (!wanted(name)) return;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = threads - 1;  // the caller is the other one
  loom_context_t* context = NULL;
  CHECK_OK(loom_context_create(&options, &context));
  step_bench_t b = {0};
  CHECK_OK(nn_model_create_mlp(context, inputs, hidden, classes, 1, &b.model));
  nn_optimizer_options_t optimizer_options;
  nn_optimizer_options_initialize(&optimizer_options, kind == STEP_ADAM
                                                          ? NN_OPTIMIZER_ADAM
                                                          : NN_OPTIMIZER_SGD);
  CHECK_OK(nn_optimizer_create(b.model, &optimizer_options, &b.optimizer));
  float* values = malloc(sizeof(float) * (size_t)(batch * inputs));
  int32_t* labels = malloc(sizeof(int32_t) * (size_t)batch);
  for (int64_t i = 0; i < batch * inputs; ++i) values[i] = next_uniform();
  for (int64_t i = 0; i < batch; ++i) labels[i] = (int32_t)(i % classes);
  int64_t x_dims[2] = {batch, inputs}, label_dims[1] = {batch};
  CHECK_OK(nn_constant_f32(context, x_dims, 2, values, &b.x));
  CHECK_OK(nn_constant_i32(context, label_dims, 1, labels, &b.labels));
  free(values);
  free(labels);
  if (kind == STEP_SGD_TRACED) trace_step(context, &b);
  double ns = bench_median_ns(measure_steps, &b, iterations, repetitions);
  bench_report(name, ns / 1000.0, "us");
  loom_eager_op_destroy(b.call);
  loom_tensor_handle_release(b.x);
  loom_tensor_handle_release(b.labels);
  nn_optimizer_destroy(b.optimizer);
  nn_model_destroy(b.model);
  loom_context_destroy(context);
}

// The five products of an MLP step (batch B, inputs I, hidden H, classes
// C) as cblas_sgemm calls: the GEMM floor of the step.
typedef struct gemm_bench_t {
  int b, i, h, c;
  float *x, *w1, *hid, *w2, *logits, *dlogits, *dw2, *dhid, *dw1;
} gemm_bench_t;

static double measure_gemms(void* arg, int64_t iterations) {
  gemm_bench_t* g = arg;
  double start = now_ns();
  for (int64_t n = 0; n < iterations; ++n) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->b, g->h, g->i,
                1.0f, g->x, g->i, g->w1, g->h, 0.0f, g->hid, g->h);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->b, g->c, g->h,
                1.0f, g->hid, g->h, g->w2, g->c, 0.0f, g->logits, g->c);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g->h, g->c, g->b, 1.0f,
                g->hid, g->h, g->dlogits, g->c, 0.0f, g->dw2, g->c);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g->b, g->h, g->c, 1.0f,
                g->dlogits, g->c, g->w2, g->c, 0.0f, g->dhid, g->h);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g->i, g->h, g->b, 1.0f,
                g->x, g->i, g->dhid, g->h, 0.0f, g->dw1, g->h);
  }
  return now_ns() - start;
}

static float* random_floats(int64_t count) {
  float* data = malloc(sizeof(float) * (size_t)count);
  for (int64_t i = 0; i < count; ++i) data[i] = next_uniform() - 0.5f;
  return data;
}

static void gemm_floor(int threads, int b, int i, int h, int c,
                       int64_t iterations, int repetitions) {
  char floor_name[96], rate_name[96];
  snprintf(floor_name, sizeof(floor_name), "train_mlp784_b128_gemm_floor_t%d",
           threads);
  snprintf(rate_name, sizeof(rate_name), "openblas_sgemm_rate_mlp784_b128_t%d",
           threads);
  if (!wanted(floor_name) && !wanted(rate_name)) return;
  gemm_bench_t g = {.b = b, .i = i, .h = h, .c = c};
  g.x = random_floats((int64_t)b * i);
  g.w1 = random_floats((int64_t)i * h);
  g.hid = random_floats((int64_t)b * h);
  g.w2 = random_floats((int64_t)h * c);
  g.logits = random_floats((int64_t)b * c);
  g.dlogits = random_floats((int64_t)b * c);
  g.dw2 = random_floats((int64_t)h * c);
  g.dhid = random_floats((int64_t)b * h);
  g.dw1 = random_floats((int64_t)i * h);
  openblas_set_num_threads(threads);
  double ns = bench_median_ns(measure_gemms, &g, iterations, repetitions);
  openblas_set_num_threads(1);
  double flops = 2.0 * b * ((double)i * h * 2 + (double)h * c * 3);
  bench_report(floor_name, ns / 1000.0, "us");
  bench_report(rate_name, flops / ns, "GFLOP/s");
  free(g.x);
  free(g.w1);
  free(g.hid);
  free(g.w2);
  free(g.logits);
  free(g.dlogits);
  free(g.dw2);
  free(g.dhid);
  free(g.dw1);
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) g_quick = true;
    if (strcmp(argv[i], "--cpu-time") == 0) g_cpu_time = true;
    if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) g_only = argv[++i];
  }
  int repetitions = g_quick ? 1 : 9;
  for (int threads = 1; threads <= 2; ++threads) {
    char name[96];
    snprintf(name, sizeof(name), "train_mlp784_b128_t%d", threads);
    train_mlp(name, threads, 784, 256, 10, 128, g_quick ? 2 : 40, repetitions,
              STEP_ADAM);
    gemm_floor(threads, 128, 784, 256, 10, g_quick ? 2 : 200, repetitions);
    int64_t batches[2] = {1, 32};
    static const char* const kKinds[3] = {"", "_sgd", "_traced"};
    for (int k = 0; k < 2; ++k) {
      for (int kind = STEP_ADAM; kind <= STEP_SGD_TRACED; ++kind) {
        snprintf(name, sizeof(name), "train_tiny%s_b%lld_t%d", kKinds[kind],
                 (long long)batches[k], threads);
        train_mlp(name, threads, 16, 32, 4, batches[k], g_quick ? 10 : 2000,
                  repetitions, (step_kind_t)kind);
      }
    }
  }
  return 0;
}
