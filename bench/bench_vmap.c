// Per-example gradients of a small MLP (examples/dp_sgd/per_example.c),
// microseconds per batch, one thread:
//   vmap_per_example_grads_mlp_b<B>_t1  one vmap over a tape: one batched
//                                       forward and backward pass;
//   loop_per_example_grads_mlp_b<B>_t1  a loop of B tapes, one per example
//                                       (what code without vmap does).
// The references (bench/vmap_reference.py) are PyTorch's loop and
// functorch's vmap(grad(loss)). --quick runs a few repetitions only.

#include <string.h>

#include "bench_timer.h"
#include "loom/loom.h"
#include "nn_ops.h"
#include "per_example.h"

enum { kInputs = 32, kHidden = 64, kClasses = 10 };

typedef struct bench_t {
  loom_context_t* context;
  dp_mlp_t mlp;
  loom_tensor_handle_t *xs, *labels;
  int64_t batch;
  bool vmap;
} bench_t;

static void check(loom_status_t status) {
  if (!status) return;
  char text[512];
  loom_status_format(status, text, sizeof(text));
  fprintf(stderr, "bench_vmap: %s\n", text);
  exit(1);
}

static double measure(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* grads[kMlpParams] = {NULL};
    if (b->vmap) {
      check(dp_per_example_grads_vmap(b->context, &b->mlp, b->xs, b->labels,
                                      0.0f, grads));
    } else {
      check(dp_per_example_grads_loop(b->context, &b->mlp, b->xs, b->labels,
                                      b->batch, grads));
    }
    // The gradients' values, not only their metadata: wait for them.
    check(loom_context_wait(b->context));
    for (int32_t k = 0; k < kMlpParams; ++k) {
      loom_tensor_handle_release(grads[k]);
    }
  }
  return bench_now_ns() - start;
}

int main(int argc, char** argv) {
  bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
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
    b.vmap = true;
    double vmap = bench_median_ns(measure, &b, iterations, repetitions);
    snprintf(name, sizeof(name), "vmap_per_example_grads_mlp_b%lld_t1",
             (long long)b.batch);
    bench_report(name, vmap / 1e3, "us");
    b.vmap = false;
    double loop = bench_median_ns(measure, &b, iterations, repetitions);
    snprintf(name, sizeof(name), "loop_per_example_grads_mlp_b%lld_t1",
             (long long)b.batch);
    bench_report(name, loop / 1e3, "us");
    loom_tensor_handle_release(b.xs);
    loom_tensor_handle_release(b.labels);
  }
  dp_mlp_release(&b.mlp);
  loom_context_destroy(b.context);
  return 0;
}
