// Per-example gradients of a small MLP, the core of DP-SGD (Abadi et al.,
// "Deep Learning with Differential Privacy", 2016): by one vmap over a
// gradient tape (one batched backward pass), or by a loop of tapes, one per
// example (what code without vmap does). Shared by the DP-SGD example
// (dp_sgd.c) and its benchmark (bench/bench_vmap.c).

#ifndef LOOM_EXAMPLES_DP_SGD_PER_EXAMPLE_H_
#define LOOM_EXAMPLES_DP_SGD_PER_EXAMPLE_H_

#include <stdint.h>

#include "loom/loom.h"

enum { kMlpParams = 4 };

// inputs -> hidden (ReLU) -> classes, softmax cross-entropy, float:
// params w1 [inputs, hidden], b1 [hidden], w2 [hidden, classes],
// b2 [classes].
typedef struct dp_mlp_t {
  int64_t inputs, hidden, classes;
  loom_tensor_handle_t* params[kMlpParams];
} dp_mlp_t;

// Random weights (uniform, scaled by 1 / sqrt(fan-in)), zero biases.
loom_status_t dp_mlp_init(loom_context_t* context, int64_t inputs,
                          int64_t hidden, int64_t classes, int64_t seed,
                          dp_mlp_t* out);
void dp_mlp_release(dp_mlp_t* mlp);

// The shape of parameter k.
void dp_mlp_param_shape(const dp_mlp_t* mlp, int32_t k, int64_t* dims,
                        int32_t* rank);

// One example's loss (x [inputs], an int32 scalar label), with eager ops
// in the current scope.
loom_status_t dp_mlp_example_loss(loom_context_t* context, const dp_mlp_t* mlp,
                                  loom_tensor_handle_t* x,
                                  loom_tensor_handle_t* label,
                                  loom_tensor_handle_t** out_loss);

// The gradients of each example's loss: grads[k] is [B, shape of param k]
// (new references), for xs [B, inputs] and labels [B] (int32). When
// `clip_norm` > 0, each example's gradient is scaled to an L2 norm (over
// all parameters) of at most clip_norm, inside the same vmap.
loom_status_t dp_per_example_grads_vmap(loom_context_t* context,
                                        const dp_mlp_t* mlp,
                                        loom_tensor_handle_t* xs,
                                        loom_tensor_handle_t* labels,
                                        float clip_norm,
                                        loom_tensor_handle_t** grads);

// The same (without clipping) by a loop of B tapes, stacked with Pack.
loom_status_t dp_per_example_grads_loop(
    loom_context_t* context, const dp_mlp_t* mlp, loom_tensor_handle_t* xs,
    loom_tensor_handle_t* labels, int64_t batch, loom_tensor_handle_t** grads);

#endif  // LOOM_EXAMPLES_DP_SGD_PER_EXAMPLE_H_
