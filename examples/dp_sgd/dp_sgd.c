// DP-SGD (Abadi et al., 2016) on a small synthetic problem: each step takes
// the per-example gradients of a batch in one vmap over a gradient tape,
// clips each example's gradient to an L2 norm of at most C (inside the same
// vmap), sums them, adds Gaussian noise of standard deviation sigma * C and
// takes an SGD step with the average. Prints the loss and accuracy as it
// trains.
//
//   dp_sgd [--steps N] [--clip C] [--noise SIGMA] [--quick]

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ops.h"
#include "per_example.h"

enum {
  kInputs = 16,
  kHidden = 32,
  kClasses = 4,
  kExamples = 1024,
  kBatch = 64
};

typedef struct options_t {
  int64_t steps;
  float clip, noise, learning_rate;
} options_t;

static void check(loom_status_t status, const char* what) {
  if (!status) return;
  char text[512];
  loom_status_format(status, text, sizeof(text));
  fprintf(stderr, "dp_sgd: %s: %s\n", what, text);
  exit(1);
}

static uint64_t g_state = 12345;
static double uniform01(void) {
  g_state = g_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(g_state >> 11) / 9007199254740992.0;
}

// Four clusters in 16 dimensions, one per class, with noise.
static void make_data(float* xs, int32_t* labels) {
  float centers[kClasses][kInputs];
  for (int c = 0; c < kClasses; ++c) {
    for (int j = 0; j < kInputs; ++j) {
      centers[c][j] = (float)(2.0 * uniform01() - 1.0);
    }
  }
  for (int i = 0; i < kExamples; ++i) {
    labels[i] = i % kClasses;
    for (int j = 0; j < kInputs; ++j) {
      xs[i * kInputs + j] =
          centers[labels[i]][j] + (float)(1.2 * (uniform01() - 0.5));
    }
  }
}

// param <- param - learning_rate / B * (sum over the batch of the clipped
// per-example gradients + N(0, (noise * clip)^2)).
static void update(loom_context_t* context, const options_t* options,
                   int64_t step, int32_t k, loom_tensor_handle_t** param,
                   loom_tensor_handle_t* per_example) {
  loom_tensor_metadata_t metadata;
  check(loom_tensor_handle_wait_metadata(*param, &metadata), "metadata");
  int32_t rank = metadata.shape.rank;  // 1 or 2
  const int64_t* dims = metadata.shape.dims;
  loom_tensor_handle_t *axis = NULL, *sum = NULL, *shape = NULL, *noise = NULL,
                       *scale = NULL, *step_size = NULL;
  int32_t zero = 0;
  int32_t shape_values[2] = {(int32_t)dims[0], (int32_t)dims[rank - 1]};
  int64_t rank64 = rank;
  check(nn_constant_i32(context, NULL, 0, &zero, &axis), "axis");
  check(nn_binary(context, "Sum", per_example, axis, &sum), "Sum");
  check(nn_constant_i32(context, &rank64, 1, shape_values, &shape), "shape");
  // Gaussian noise: RandomStandardNormal, seeded per step and parameter.
  loom_eager_op_t* op = NULL;
  check(loom_eager_op_create(context, "RandomStandardNormal", &op), "op");
  check(loom_eager_op_add_input(op, shape), "input");
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  check(loom_op_attrs_set_dtype(attrs, "dtype", LOOM_DTYPE_FLOAT), "dtype");
  check(loom_op_attrs_set_i64(attrs, "seed", 1), "seed");
  check(loom_op_attrs_set_i64(attrs, "seed2", step * kMlpParams + k + 1),
        "seed2");
  int32_t count = 0;
  check(loom_eager_op_execute(op, &noise, 1, &count), "RandomStandardNormal");
  loom_eager_op_destroy(op);
  check(nn_scalar_f32(context, options->noise * options->clip, &scale),
        "scale");
  check(nn_binary_take(context, "Mul", noise, scale, &noise), "Mul");
  check(nn_binary_take(context, "AddV2", sum, noise, &sum), "AddV2");
  check(nn_scalar_f32(context, options->learning_rate / (float)kBatch,
                      &step_size),
        "step");
  check(nn_binary_take(context, "Mul", sum, step_size, &sum), "Mul");
  check(nn_binary_take(context, "Sub", *param, sum, param), "Sub");
  loom_tensor_handle_t* temps[] = {axis, shape, scale, step_size, noise, sum};
  for (size_t i = 0; i < sizeof(temps) / sizeof(temps[0]); ++i) {
    loom_tensor_handle_release(temps[i]);
  }
}

// The mean loss and the accuracy over every example.
static void evaluate(loom_context_t* context, const dp_mlp_t* mlp,
                     loom_tensor_handle_t* xs, loom_tensor_handle_t* labels,
                     const int32_t* label_values, float* out_loss,
                     float* out_accuracy) {
  loom_tensor_handle_t* h[8] = {NULL};
  check(nn_matmul(context, xs, mlp->params[0], &h[0]), "MatMul");
  check(nn_bias_add(context, h[0], mlp->params[1], &h[1]), "BiasAdd");
  check(nn_unary(context, "Relu", h[1], &h[2]), "Relu");
  check(nn_matmul(context, h[2], mlp->params[2], &h[3]), "MatMul");
  check(nn_bias_add(context, h[3], mlp->params[3], &h[4]), "BiasAdd");
  check(nn_sparse_softmax_xent(context, h[4], labels, &h[5]), "xent");
  check(nn_mean_vector(context, h[5], &h[6]), "mean");
  check(nn_resolve_scalar_f32(context, h[6], out_loss), "loss");
  check(nn_argmax_rows(context, h[4], &h[7]), "argmax");
  loom_tensor_t* predicted = NULL;
  check(loom_context_resolve(context, h[7], &predicted), "resolve");
  const int32_t* p = loom_tensor_data(predicted);
  int64_t correct = 0;
  for (int i = 0; i < kExamples; ++i) correct += p[i] == label_values[i];
  *out_accuracy = (float)correct / (float)kExamples;
  loom_tensor_release(predicted);
  for (int i = 0; i < 8; ++i) loom_tensor_handle_release(h[i]);
}

int main(int argc, char** argv) {
  options_t options = {
      .steps = 300, .clip = 1.0f, .noise = 1.0f, .learning_rate = 0.5f};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      options.steps = 20;
    } else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      options.steps = atoll(argv[++i]);
    } else if (strcmp(argv[i], "--clip") == 0 && i + 1 < argc) {
      options.clip = (float)atof(argv[++i]);
    } else if (strcmp(argv[i], "--noise") == 0 && i + 1 < argc) {
      options.noise = (float)atof(argv[++i]);
    } else {
      fprintf(stderr,
              "usage: dp_sgd [--steps N] [--clip C] [--noise SIGMA] "
              "[--quick]\n");
      return 2;
    }
  }
  loom_context_t* context = NULL;
  check(loom_context_create(NULL, &context), "context");
  static float xs[kExamples * kInputs];
  static int32_t labels[kExamples];
  make_data(xs, labels);
  loom_tensor_handle_t *all_x = NULL, *all_labels = NULL;
  int64_t x_dims[2] = {kExamples, kInputs}, label_dims[1] = {kExamples};
  check(nn_constant_f32(context, x_dims, 2, xs, &all_x), "data");
  check(nn_constant_i32(context, label_dims, 1, labels, &all_labels), "labels");
  dp_mlp_t mlp;
  check(dp_mlp_init(context, kInputs, kHidden, kClasses, 7, &mlp), "init");
  printf("DP-SGD: batch %d, clip %.2f, noise multiplier %.2f, %lld steps\n",
         kBatch, (double)options.clip, (double)options.noise,
         (long long)options.steps);
  for (int64_t step = 0; step <= options.steps; ++step) {
    if (step % 50 == 0 || step == options.steps) {
      float loss = 0, accuracy = 0;
      evaluate(context, &mlp, all_x, all_labels, labels, &loss, &accuracy);
      printf("step %4lld  loss %.4f  accuracy %.3f\n", (long long)step,
             (double)loss, (double)accuracy);
    }
    if (step == options.steps) break;
    int64_t first = (step * kBatch) % kExamples;
    int64_t batch_dims[2] = {kBatch, kInputs}, batch_label_dims[1] = {kBatch};
    loom_tensor_handle_t *batch_x = NULL, *batch_labels = NULL;
    check(
        nn_constant_f32(context, batch_dims, 2, xs + first * kInputs, &batch_x),
        "batch");
    check(nn_constant_i32(context, batch_label_dims, 1, labels + first,
                          &batch_labels),
          "batch labels");
    loom_tensor_handle_t* grads[kMlpParams] = {NULL};
    check(dp_per_example_grads_vmap(context, &mlp, batch_x, batch_labels,
                                    options.clip, grads),
          "per-example gradients");
    for (int32_t k = 0; k < kMlpParams; ++k) {
      update(context, &options, step, k, &mlp.params[k], grads[k]);
      loom_tensor_handle_release(grads[k]);
    }
    loom_tensor_handle_release(batch_x);
    loom_tensor_handle_release(batch_labels);
  }
  dp_mlp_release(&mlp);
  loom_tensor_handle_release(all_x);
  loom_tensor_handle_release(all_labels);
  loom_context_destroy(context);
  return 0;
}
