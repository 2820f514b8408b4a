// Per-example gradients by vmap (examples/dp_sgd/per_example.c),
// microseconds, one thread:
//   vmap_per_example_grads_mlp_b<B>_t1  per-example gradients of a small
//                                       MLP (32-64-10): one vmap over a
//                                       tape, one batched forward and
//                                       backward pass;
//   loop_per_example_grads_mlp_b<B>_t1  the same by a loop of B tapes, one
//                                       per example (code without vmap);
//   vmap_per_example_grads_mlp784_b128_t1  per-example gradients of a
//                                       784-256-10 MLP over 128 examples;
//   batch_grads_mlp784_b128_t1          Loom's ordinary gradient of the
//                                       same batch's summed loss (one tape
//                                       over the batched forward pass);
//   f_tiny_t1                           one call of a tiny function,
//                                       f(x) = sum(tanh(w * x)), x and w
//                                       [16];
//   vmap_grad_tiny_b64_t1               vmap(grad f) over 64 examples (in,
//                                       tape, f, gradient, out);
//   vmap_f_tiny_b64_t1                  vmap(f) over 64 examples, f's ops
//                                       run eagerly in the scope;
//   vmap_call_f_tiny_b64_t1             the same with f a traced function
//                                       called in the scope (its batched
//                                       function, made at the first call);
//   f_call_tiny_t1                      one call of f as a traced function;
//   vmap_grad_call_f_tiny_b64_t1        vmap(grad f) with f called as a
//                                       traced function (the tape records
//                                       one call; the call and its
//                                       backward function run as batched
//                                       functions).
// The references (bench/vmap_reference.py) are PyTorch's loop and
// functorch's vmap(grad(loss)) and vmap(f). --quick runs a few repetitions
// only;
// --tiny f|vmap|vmapf|vmapcall|call|vmapgradcall N runs only N calls of
// the tiny workload (f, vmap(grad f), vmap(f), vmap of f called, f called,
// vmap(grad f) of f called: for profiling with callgrind, the difference
// of two N is the per-call cost);
// --mlp784 vmap|batch N only N steps of the 784-256-10 MLP's per-example
// (or batch) gradients, the same way.

#include <stdlib.h>
#include <string.h>

#include "bench_timer.h"
#include "loom/loom.h"
#include "nn_ops.h"
#include "per_example.h"

enum { kInputs = 32, kHidden = 64, kClasses = 10 };

typedef enum bench_mode_t {
  kModeVmap = 0,  // per-example gradients by vmap
  kModeLoop,      // per-example gradients by a loop of tapes
  kModeBatch,     // the gradient of the batch's summed loss
} bench_mode_t;

typedef struct bench_t {
  loom_context_t* context;
  dp_mlp_t mlp;
  loom_tensor_handle_t *xs, *labels;
  int64_t batch;
  bench_mode_t mode;
} bench_t;

static void check(loom_status_t status) {
  if (!status) return;
  char text[512];
  loom_status_format(status, text, sizeof(text));
  fprintf(stderr, "bench_vmap: %s\n", text);
  exit(1);
}

static void release_all(loom_tensor_handle_t** handles, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

// The gradients of the batch's summed loss (what a training step without
// per-example gradients computes).
static void batch_grads(bench_t* b, loom_tensor_handle_t** grads) {
  loom_context_t* c = b->context;
  loom_op_handler_t* tape = NULL;
  check(loom_tape_create(c, NULL, &tape));
  check(loom_context_enter_scope(c, tape));
  for (int32_t k = 0; k < kMlpParams; ++k) {
    check(loom_tape_watch(tape, b->mlp.params[k]));
  }
  loom_tensor_handle_t* h[6] = {NULL};
  check(nn_matmul(c, b->xs, b->mlp.params[0], &h[0]));
  check(nn_bias_add(c, h[0], b->mlp.params[1], &h[1]));
  check(nn_unary(c, "Relu", h[1], &h[2]));
  check(nn_matmul(c, h[2], b->mlp.params[2], &h[3]));
  check(nn_bias_add(c, h[3], b->mlp.params[3], &h[4]));
  check(nn_sparse_softmax_xent(c, h[4], b->labels, &h[5]));
  check(loom_context_exit_scope(c));
  check(loom_tape_gradient(tape, &h[5], 1, b->mlp.params, kMlpParams, NULL,
                           LOOM_UNCONNECTED_ZERO, grads));
  release_all(h, 6);
  loom_op_handler_release(tape);
}

static double measure(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* grads[kMlpParams] = {NULL};
    if (b->mode == kModeVmap) {
      check(dp_per_example_grads_vmap(b->context, &b->mlp, b->xs, b->labels,
                                      0.0f, grads));
    } else if (b->mode == kModeLoop) {
      check(dp_per_example_grads_loop(b->context, &b->mlp, b->xs, b->labels,
                                      b->batch, grads));
    } else {
      batch_grads(b, grads);
    }
    // The gradients' values, not only their metadata: wait for them.
    check(loom_context_wait(b->context));
    for (int32_t k = 0; k < kMlpParams; ++k) {
      loom_tensor_handle_release(grads[k]);
    }
  }
  return bench_now_ns() - start;
}

// A tiny function: f(x) = sum(tanh(w * x)) over x [16] (one example), w
// [16] shared by the examples.
enum { kTinyBatch = 64, kTinyWidth = 16 };
typedef enum tiny_mode_t {
  kTinyF = 0,         // f(x)
  kTinyVmapGrad,      // vmap(grad f)
  kTinyVmapF,         // vmap(f), f's ops in the scope
  kTinyVmapCall,      // vmap(f), f called as a function
  kTinyCall,          // f(x), f called as a function
  kTinyVmapGradCall,  // vmap(grad f), f called as a function
} tiny_mode_t;

typedef struct tiny_t {
  loom_context_t* context;
  loom_tensor_handle_t *x, *xs, *w, *axes;
  tiny_mode_t mode;
} tiny_t;

static loom_tensor_handle_t* tiny_f(tiny_t* t, loom_tensor_handle_t* x) {
  loom_tensor_handle_t *product = NULL, *tanh = NULL, *sum = NULL;
  check(nn_binary(t->context, "Mul", t->w, x, &product));
  check(nn_unary(t->context, "Tanh", product, &tanh));
  check(nn_binary(t->context, "Sum", tanh, t->axes, &sum));
  loom_tensor_handle_release(product);
  loom_tensor_handle_release(tanh);
  return sum;
}

// f(x), eagerly or (`call`) as the traced function "tiny_f".
static loom_tensor_handle_t* tiny_f_or_call(tiny_t* t, loom_tensor_handle_t* x,
                                            bool call) {
  if (!call) return tiny_f(t, x);
  loom_tensor_handle_t* y = NULL;
  check(nn_unary(t->context, "tiny_f", x, &y));
  return y;
}

// vmap(grad f) over xs [64, 16]: the per-example gradients, [64, 16]; f's
// ops run in the scopes or (`call`) f is called as a function.
static loom_tensor_handle_t* tiny_vmap_grad(tiny_t* t, bool call) {
  loom_context_t* c = t->context;
  loom_op_handler_t *vmap = NULL, *tape = NULL;
  check(loom_vmap_create(c, LOOM_VMAP_BATCH_SIZE_UNKNOWN, &vmap));
  check(loom_context_enter_scope(c, vmap));
  loom_tensor_handle_t *x = NULL, *grad = NULL, *out = NULL;
  check(loom_vmap_in(vmap, t->xs, 0, &x));
  check(loom_tape_create(c, NULL, &tape));
  check(loom_context_enter_scope(c, tape));
  check(loom_tape_watch(tape, x));
  loom_tensor_handle_t* y = tiny_f_or_call(t, x, call);
  check(loom_context_exit_scope(c));
  check(loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_ZERO,
                           &grad));
  check(loom_vmap_out(vmap, grad, 0, &out));
  check(loom_context_exit_scope(c));
  loom_tensor_handle_t* all[3] = {x, y, grad};
  release_all(all, 3);
  loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
  return out;
}

// vmap(f) over xs [64, 16], f's ops in the scope or (`call`) f called as
// the function "tiny_f": [64].
static loom_tensor_handle_t* tiny_vmap_f(tiny_t* t, bool call) {
  loom_context_t* c = t->context;
  loom_op_handler_t* vmap = NULL;
  check(loom_vmap_create(c, LOOM_VMAP_BATCH_SIZE_UNKNOWN, &vmap));
  check(loom_context_enter_scope(c, vmap));
  loom_tensor_handle_t *x = NULL, *y = NULL, *out = NULL;
  check(loom_vmap_in(vmap, t->xs, 0, &x));
  y = tiny_f_or_call(t, x, call);
  check(loom_vmap_out(vmap, y, 0, &out));
  check(loom_context_exit_scope(c));
  loom_tensor_handle_t* all[2] = {x, y};
  release_all(all, 2);
  loom_op_handler_release(vmap);
  return out;
}

static double measure_tiny(void* arg, int64_t iterations) {
  tiny_t* t = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* y = NULL;
    switch (t->mode) {
      case kTinyF:
      case kTinyCall:
        y = tiny_f_or_call(t, t->x, t->mode == kTinyCall);
        break;
      case kTinyVmapGrad:
      case kTinyVmapGradCall:
        y = tiny_vmap_grad(t, t->mode == kTinyVmapGradCall);
        break;
      case kTinyVmapF:
      case kTinyVmapCall:
        y = tiny_vmap_f(t, t->mode == kTinyVmapCall);
        break;
    }
    check(loom_context_wait(t->context));
    loom_tensor_handle_release(y);
  }
  return bench_now_ns() - start;
}

// The tiny workload's inputs: xs [64, 16], x = xs[0], w [16], the axes of
// Sum.
static tiny_t tiny_initialize(loom_context_t* context) {
  static float xs[kTinyBatch * kTinyWidth];
  static float w[kTinyWidth];
  for (int i = 0; i < kTinyBatch * kTinyWidth; ++i) {
    xs[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  }
  for (int i = 0; i < kTinyWidth; ++i) w[i] = (float)(i % 5) * 0.25f - 0.5f;
  tiny_t t = {.context = context};
  int64_t x_dims[2] = {kTinyBatch, kTinyWidth}, one = 1;
  check(nn_constant_f32(context, x_dims + 1, 1, w, &t.w));
  static const int32_t kAxis[1] = {0};
  check(nn_constant_f32(context, x_dims, 2, xs, &t.xs));
  check(nn_constant_f32(context, x_dims + 1, 1, xs, &t.x));
  check(nn_constant_i32(context, &one, 1, kAxis, &t.axes));
  // f traced into the function "tiny_f".
  if (!loom_context_has_function(context, "tiny_f")) {
    loom_op_handler_t* trace = NULL;
    check(loom_trace_create(context, "tiny_f", &trace));
    check(loom_context_enter_scope(context, trace));
    loom_shape_t shape;
    check(loom_shape_initialize(&shape, x_dims + 1, 1));
    loom_tensor_handle_t* x = NULL;
    check(loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
    loom_tensor_handle_t* y = tiny_f(&t, x);
    check(loom_context_exit_scope(context));
    loom_function_t* f = NULL;
    check(loom_trace_finish(trace, &y, 1, &f));
    check(loom_context_add_function(context, f));
    loom_function_release(f);
    loom_tensor_handle_t* all[2] = {x, y};
    release_all(all, 2);
    loom_op_handler_release(trace);
  }
  return t;
}

static void tiny_deinitialize(tiny_t* t) {
  loom_tensor_handle_t* all[4] = {t->x, t->xs, t->w, t->axes};
  release_all(all, 4);
}

static void bench_tiny(loom_context_t* context, bool quick, int repetitions) {
  tiny_t t = tiny_initialize(context);
  int64_t iterations = quick ? 20 : 2000;
  t.mode = kTinyF;
  bench_report("f_tiny_t1",
               bench_median_ns(measure_tiny, &t, iterations, repetitions) / 1e3,
               "us");
  t.mode = kTinyVmapGrad;
  bench_report(
      "vmap_grad_tiny_b64_t1",
      bench_median_ns(measure_tiny, &t, iterations / 10 + 1, repetitions) / 1e3,
      "us");
  t.mode = kTinyVmapF;
  bench_report(
      "vmap_f_tiny_b64_t1",
      bench_median_ns(measure_tiny, &t, iterations / 10 + 1, repetitions) / 1e3,
      "us");
  t.mode = kTinyVmapCall;
  bench_report(
      "vmap_call_f_tiny_b64_t1",
      bench_median_ns(measure_tiny, &t, iterations / 10 + 1, repetitions) / 1e3,
      "us");
  t.mode = kTinyCall;
  bench_report("f_call_tiny_t1",
               bench_median_ns(measure_tiny, &t, iterations, repetitions) / 1e3,
               "us");
  t.mode = kTinyVmapGradCall;
  bench_report(
      "vmap_grad_call_f_tiny_b64_t1",
      bench_median_ns(measure_tiny, &t, iterations / 10 + 1, repetitions) / 1e3,
      "us");
  tiny_deinitialize(&t);
}

// The 784-256-10 MLP and a batch of 128 examples for it.
enum { kBatch784 = 128, kPixels = 784 };

static void mlp784_initialize(loom_context_t* context, bench_t* b) {
  *b = (bench_t){.context = context, .batch = kBatch784};
  check(dp_mlp_init(context, kPixels, 256, kClasses, 3, &b->mlp));
  float* xs = malloc(sizeof(float) * kBatch784 * kPixels);
  int32_t labels[kBatch784];
  if (!xs) check(loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "xs"));
  for (int64_t i = 0; i < kBatch784 * kPixels; ++i) {
    xs[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
  }
  for (int64_t i = 0; i < kBatch784; ++i) labels[i] = (int32_t)(i % kClasses);
  int64_t x_dims[2] = {kBatch784, kPixels}, batch = kBatch784;
  check(nn_constant_f32(context, x_dims, 2, xs, &b->xs));
  check(nn_constant_i32(context, &batch, 1, labels, &b->labels));
  free(xs);
}

static void mlp784_deinitialize(bench_t* b) {
  loom_tensor_handle_release(b->xs);
  loom_tensor_handle_release(b->labels);
  dp_mlp_release(&b->mlp);
}

// Per-example gradients of the 784-256-10 MLP over 128 examples, by vmap
// and, for comparison, the batch's ordinary gradient.
static void bench_mlp784(loom_context_t* context, bool quick, int repetitions) {
  bench_t b;
  mlp784_initialize(context, &b);
  int64_t iterations = quick ? 1 : 5;
  b.mode = kModeVmap;
  bench_report("vmap_per_example_grads_mlp784_b128_t1",
               bench_median_ns(measure, &b, iterations, repetitions) / 1e3,
               "us");
  b.mode = kModeBatch;
  bench_report("batch_grads_mlp784_b128_t1",
               bench_median_ns(measure, &b, iterations * 4, repetitions) / 1e3,
               "us");
  mlp784_deinitialize(&b);
}

// Runs `iterations` calls of f (or of vmap(grad f)) of bench_tiny, untimed.
static void run_tiny(loom_context_t* context, tiny_mode_t mode,
                     int64_t iterations) {
  tiny_t t = tiny_initialize(context);
  t.mode = mode;
  measure_tiny(&t, iterations);
  tiny_deinitialize(&t);
}

int main(int argc, char** argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (argc == 4 && strcmp(argv[1], "--tiny") == 0) {
    loom_context_options_t options;
    loom_context_options_initialize(&options);
    options.num_threads = 1;
    loom_context_t* context = NULL;
    check(loom_context_create(&options, &context));
    static const char* const kModes[] = {"f",        "vmap", "vmapf",
                                         "vmapcall", "call", "vmapgradcall"};
    tiny_mode_t mode = kTinyF;
    for (int m = 0; m < (int)(sizeof(kModes) / sizeof(kModes[0])); ++m) {
      if (strcmp(argv[2], kModes[m]) == 0) mode = (tiny_mode_t)m;
    }
    run_tiny(context, mode, atoll(argv[3]));
    loom_context_destroy(context);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "--mlp784") == 0) {
    loom_context_options_t options;
    loom_context_options_initialize(&options);
    options.num_threads = 1;
    loom_context_t* context = NULL;
    check(loom_context_create(&options, &context));
    bench_t b;
    mlp784_initialize(context, &b);
    b.mode = strcmp(argv[2], "vmap") == 0 ? kModeVmap : kModeBatch;
    measure(&b, atoll(argv[3]));
    mlp784_deinitialize(&b);
    loom_context_destroy(context);
    return 0;
  }
  int repetitions = quick ? 3 : 11;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 1;
  bench_t b;
  memset(&b, 0, sizeof(b));
  check(loom_context_create(&options, &b.context));
  check(dp_mlp_init(b.context, kInputs, kHidden, kClasses, 3, &b.mlp));
  static const int64_t kBatches[2] = {8, 64};
  for (int j = 0; j < 2; ++j) {
    b.batch = kBatches[j];
    static float xs[64 * kInputs];
    static int32_t labels[64];
    for (int64_t i = 0; i < b.batch * kInputs; ++i) {
      xs[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    }
    for (int64_t i = 0; i < b.batch; ++i) labels[i] = (int32_t)(i % kClasses);
    int64_t x_dims[2] = {b.batch, kInputs};
    check(nn_constant_f32(b.context, x_dims, 2, xs, &b.xs));
    check(nn_constant_i32(b.context, &b.batch, 1, labels, &b.labels));
    int64_t iterations = quick ? 2 : (b.batch == 8 ? 200 : 40);
    char name[96];
    b.mode = kModeVmap;
    double vmap = bench_median_ns(measure, &b, iterations, repetitions);
    snprintf(name, sizeof(name), "vmap_per_example_grads_mlp_b%lld_t1",
             (long long)b.batch);
    bench_report(name, vmap / 1e3, "us");
    b.mode = kModeLoop;
    double loop = bench_median_ns(measure, &b, iterations, repetitions);
    snprintf(name, sizeof(name), "loop_per_example_grads_mlp_b%lld_t1",
             (long long)b.batch);
    bench_report(name, loop / 1e3, "us");
    loom_tensor_handle_release(b.xs);
    loom_tensor_handle_release(b.labels);
  }
  dp_mlp_release(&b.mlp);
  bench_tiny(b.context, quick, repetitions);
  bench_mlp784(b.context, quick, quick ? 3 : 5);
  loom_context_destroy(b.context);
  return 0;
}
