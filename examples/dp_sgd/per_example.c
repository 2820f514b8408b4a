// Per-example gradients of a small MLP: vmap over a tape, or a loop.

#include "per_example.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_ops.h"

#define RETURN_IF_ERROR(expr)       \
  do {                              \
    loom_status_t status_ = (expr); \
    if (status_) return status_;    \
  } while (0)

static void release_all(loom_tensor_handle_t** handles, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

void dp_mlp_param_shape(const dp_mlp_t* mlp, int32_t k, int64_t* dims,
                        int32_t* rank) {
  switch (k) {
    case 0:
      dims[0] = mlp->inputs, dims[1] = mlp->hidden, *rank = 2;
      break;
    case 1:
      dims[0] = mlp->hidden, *rank = 1;
      break;
    case 2:
      dims[0] = mlp->hidden, dims[1] = mlp->classes, *rank = 2;
      break;
    default:
      dims[0] = mlp->classes, *rank = 1;
      break;
  }
}

loom_status_t dp_mlp_init(loom_context_t* context, int64_t inputs,
                          int64_t hidden, int64_t classes, int64_t seed,
                          dp_mlp_t* out) {
  memset(out, 0, sizeof(*out));
  out->inputs = inputs;
  out->hidden = hidden;
  out->classes = classes;
  uint64_t state = (uint64_t)seed * 2654435761u + 1;
  for (int32_t k = 0; k < kMlpParams; ++k) {
    int64_t dims[2];
    int32_t rank = 0;
    dp_mlp_param_shape(out, k, dims, &rank);
    int64_t n = rank == 2 ? dims[0] * dims[1] : dims[0];
    float* values = calloc((size_t)n, sizeof(float));
    if (!values) {
      dp_mlp_release(out);
      return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "dp_mlp_init: out of memory");
    }
    float scale = (float)(1.0 / sqrt((double)dims[0]));
    for (int64_t i = 0; k % 2 == 0 && i < n; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(state >> 11) / 9007199254740992.0;
      values[i] = scale * (float)(2.0 * u - 1.0);
    }
    loom_status_t status =
        nn_constant_f32(context, dims, rank, values, &out->params[k]);
    free(values);
    if (status) {
      dp_mlp_release(out);
      return status;
    }
  }
  return loom_ok_status();
}

void dp_mlp_release(dp_mlp_t* mlp) {
  release_all(mlp->params, kMlpParams);
}

loom_status_t dp_mlp_example_loss(loom_context_t* context, const dp_mlp_t* mlp,
                                  loom_tensor_handle_t* x,
                                  loom_tensor_handle_t* label,
                                  loom_tensor_handle_t** out_loss) {
  // One example as a batch of one row: x [1, inputs], label [1].
  loom_tensor_handle_t* h[8] = {NULL};
  int64_t row[2] = {1, mlp->inputs}, one = 1;
  loom_status_t status = nn_reshape(context, x, row, 2, &h[0]);
  if (!status) status = nn_matmul(context, h[0], mlp->params[0], &h[1]);
  if (!status) status = nn_bias_add(context, h[1], mlp->params[1], &h[2]);
  if (!status) status = nn_unary(context, "Relu", h[2], &h[3]);
  if (!status) status = nn_matmul(context, h[3], mlp->params[2], &h[4]);
  if (!status) status = nn_bias_add(context, h[4], mlp->params[3], &h[5]);
  if (!status) status = nn_reshape(context, label, &one, 1, &h[6]);
  if (!status) status = nn_sparse_softmax_xent(context, h[5], h[6], &h[7]);
  if (!status) status = nn_reshape(context, h[7], NULL, 0, out_loss);
  release_all(h, 8);
  return status;
}

// Runs `op_name` with one int attribute into `outputs`.
static loom_status_t run_with_int(loom_context_t* context, const char* op_name,
                                  loom_tensor_handle_t* const* inputs,
                                  int32_t n, const char* attr, int64_t value,
                                  loom_tensor_handle_t** outputs, int32_t m) {
  loom_eager_op_t* op = NULL;
  RETURN_IF_ERROR(loom_eager_op_create(context, op_name, &op));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < n && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!status) {
    status = loom_op_attrs_set_i64(loom_eager_op_attrs(op), attr, value);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, outputs, m, &count);
  loom_eager_op_destroy(op);
  return status;
}

// grads[k] <- grads[k] * min(1, clip / ||g||), the norm over every
// parameter of one example (run in the vmap's scope: per example).
static loom_status_t clip(loom_context_t* context, float clip_norm,
                          loom_tensor_handle_t** grads) {
  loom_tensor_handle_t* total = NULL;
  loom_status_t status = loom_ok_status();
  for (int32_t k = 0; k < kMlpParams && !status; ++k) {
    loom_tensor_handle_t *square = NULL, *sum = NULL, *axes = NULL;
    loom_tensor_metadata_t metadata;
    status = loom_tensor_handle_wait_metadata(grads[k], &metadata);
    static const int32_t kAxes[2] = {0, 1};  // every axis of a parameter
    int64_t count = status ? 0 : metadata.shape.rank;
    if (!status) status = nn_constant_i32(context, &count, 1, kAxes, &axes);
    if (!status) status = nn_unary(context, "Square", grads[k], &square);
    if (!status) status = nn_binary(context, "Sum", square, axes, &sum);
    if (!status && total) {
      status = nn_binary_take(context, "AddV2", total, sum, &total);
      if (status) total = NULL;  // taken
    } else if (!status) {
      total = sum;
      sum = NULL;
    }
    loom_tensor_handle_t* temps[3] = {square, sum, axes};
    release_all(temps, 3);
  }
  loom_tensor_handle_t *norm = NULL, *bound = NULL, *ratio = NULL, *one = NULL,
                       *factor = NULL, *epsilon = NULL;
  if (!status) status = nn_scalar_f32(context, 1e-6f, &epsilon);
  if (!status) status = nn_unary(context, "Sqrt", total, &norm);
  if (!status) {
    status = nn_binary_take(context, "AddV2", norm, epsilon, &norm);
    if (status) norm = NULL;  // taken
  }
  if (!status) status = nn_scalar_f32(context, clip_norm, &bound);
  if (!status) status = nn_binary(context, "RealDiv", bound, norm, &ratio);
  if (!status) status = nn_scalar_f32(context, 1.0f, &one);
  if (!status) status = nn_binary(context, "Minimum", ratio, one, &factor);
  for (int32_t k = 0; k < kMlpParams && !status; ++k) {
    status = nn_binary_take(context, "Mul", grads[k], factor, &grads[k]);
    if (status) grads[k] = NULL;  // taken
  }
  loom_tensor_handle_t* temps[7] = {total, norm,   bound,  ratio,
                                    one,   factor, epsilon};
  release_all(temps, 7);
  return status;
}

loom_status_t dp_per_example_grads_vmap(loom_context_t* context,
                                        const dp_mlp_t* mlp,
                                        loom_tensor_handle_t* xs,
                                        loom_tensor_handle_t* labels,
                                        float clip_norm,
                                        loom_tensor_handle_t** grads) {
  for (int32_t k = 0; k < kMlpParams; ++k) grads[k] = NULL;
  loom_op_handler_t* vmap = NULL;
  loom_op_handler_t* tape = NULL;
  RETURN_IF_ERROR(
      loom_vmap_create(context, LOOM_VMAP_BATCH_SIZE_UNKNOWN, &vmap));
  loom_tensor_handle_t *x = NULL, *label = NULL, *loss = NULL;
  loom_tensor_handle_t* example[kMlpParams] = {NULL};
  loom_status_t status = loom_context_enter_scope(context, vmap);
  bool in_vmap = !status;
  if (!status) status = loom_vmap_in(vmap, xs, 0, &x);
  if (!status) status = loom_vmap_in(vmap, labels, 0, &label);
  // A tape inside the vmap: the weights are unbatched, their gradients
  // per example.
  if (!status) status = loom_tape_create(context, NULL, &tape);
  if (!status) status = loom_context_enter_scope(context, tape);
  if (!status) {
    for (int32_t k = 0; k < kMlpParams && !status; ++k) {
      status = loom_tape_watch(tape, mlp->params[k]);
    }
    if (!status) status = dp_mlp_example_loss(context, mlp, x, label, &loss);
    loom_status_ignore(loom_context_exit_scope(context));
  }
  if (!status) {
    status = loom_tape_gradient(tape, &loss, 1, mlp->params, kMlpParams, NULL,
                                LOOM_UNCONNECTED_ZERO, example);
  }
  if (!status && clip_norm > 0) status = clip(context, clip_norm, example);
  for (int32_t k = 0; k < kMlpParams && !status; ++k) {
    status = loom_vmap_out(vmap, example[k], 0, &grads[k]);
  }
  if (in_vmap) loom_status_ignore(loom_context_exit_scope(context));
  if (status) release_all(grads, kMlpParams);
  release_all(example, kMlpParams);
  loom_tensor_handle_t* temps[3] = {x, label, loss};
  release_all(temps, 3);
  if (tape) loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
  return status;
}

loom_status_t dp_per_example_grads_loop(
    loom_context_t* context, const dp_mlp_t* mlp, loom_tensor_handle_t* xs,
    loom_tensor_handle_t* labels, int64_t batch, loom_tensor_handle_t** grads) {
  for (int32_t k = 0; k < kMlpParams; ++k) grads[k] = NULL;
  size_t n = (size_t)(batch > 0 ? batch : 1);
  loom_tensor_handle_t** rows = calloc(n, sizeof(*rows));
  loom_tensor_handle_t** row_labels = calloc(n, sizeof(*row_labels));
  loom_tensor_handle_t** per = calloc(n * kMlpParams, sizeof(*per));
  loom_status_t status = loom_ok_status();
  if (!rows || !row_labels || !per) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "dp_per_example_grads_loop: out of memory");
  }
  if (!status) {
    status = run_with_int(context, "Unpack", &xs, 1, "num", batch, rows,
                          (int32_t)batch);
  }
  if (!status) {
    status = run_with_int(context, "Unpack", &labels, 1, "num", batch,
                          row_labels, (int32_t)batch);
  }
  for (int64_t e = 0; e < batch && !status; ++e) {
    loom_op_handler_t* tape = NULL;
    loom_tensor_handle_t* loss = NULL;
    loom_tensor_handle_t* example[kMlpParams] = {NULL};
    status = loom_tape_create(context, NULL, &tape);
    if (!status) status = loom_context_enter_scope(context, tape);
    if (!status) {
      for (int32_t k = 0; k < kMlpParams && !status; ++k) {
        status = loom_tape_watch(tape, mlp->params[k]);
      }
      if (!status) {
        status =
            dp_mlp_example_loss(context, mlp, rows[e], row_labels[e], &loss);
      }
      loom_status_ignore(loom_context_exit_scope(context));
    }
    if (!status) {
      status = loom_tape_gradient(tape, &loss, 1, mlp->params, kMlpParams, NULL,
                                  LOOM_UNCONNECTED_ZERO, example);
    }
    for (int32_t k = 0; k < kMlpParams; ++k) {
      per[(size_t)k * n + (size_t)e] = example[k];
    }
    loom_tensor_handle_release(loss);
    if (tape) loom_op_handler_release(tape);
  }
  for (int32_t k = 0; k < kMlpParams && !status; ++k) {
    status = run_with_int(context, "Pack", per + (size_t)k * n, (int32_t)batch,
                          "axis", 0, &grads[k], 1);
  }
  if (status) release_all(grads, kMlpParams);
  if (per) release_all(per, (int32_t)(n * kMlpParams));
  if (rows) release_all(rows, (int32_t)n);
  if (row_labels) release_all(row_labels, (int32_t)n);
  free(rows);
  free(row_labels);
  free(per);
  return status;
}
