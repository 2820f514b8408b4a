// One training step: the forward pass and the loss recorded by a gradient
// tape (loom/autodiff.h), the gradients of the loss with respect to the
// model's variables, and the optimizer's update.

#ifndef LOOM_EXAMPLES_FASHION_MNIST_NN_TRAIN_H_
#define LOOM_EXAMPLES_FASHION_MNIST_NN_TRAIN_H_

#include "loom/autodiff.h"
#include "loom/loom.h"
#include "nn_model.h"
#include "nn_optimizer.h"

// The mean softmax cross-entropy of the logits of x against int32 labels
// [batch] (no tape involved: for evaluation and checks).
loom_status_t nn_loss(nn_model_t* model, loom_tensor_handle_t* x,
                      loom_tensor_handle_t* labels,
                      loom_tensor_handle_t** out_loss);

// The gradients of nn_loss with respect to each of the model's variables
// (new references, in parameter order) and the loss (may be NULL).
loom_status_t nn_gradients(nn_model_t* model, loom_tensor_handle_t* x,
                           loom_tensor_handle_t* labels,
                           loom_tensor_handle_t** out_gradients,
                           loom_tensor_handle_t** out_loss);

// nn_gradients, calling `ready` (may be NULL) with parameter i's gradient
// as soon as the backward pass has finished it (the last layer's first:
// loom_tape_gradient_with_options); an error it returns stops the step.
loom_status_t nn_gradients_reporting(nn_model_t* model, loom_tensor_handle_t* x,
                                     loom_tensor_handle_t* labels,
                                     loom_tape_gradient_ready_fn_t ready,
                                     void* user_data,
                                     loom_tensor_handle_t** out_gradients,
                                     loom_tensor_handle_t** out_loss);

// nn_gradients, then the optimizer's update. *out_loss (may be NULL): the
// batch's loss before the update.
loom_status_t nn_train_step(nn_model_t* model, nn_optimizer_t* optimizer,
                            loom_tensor_handle_t* x,
                            loom_tensor_handle_t* labels,
                            loom_tensor_handle_t** out_loss);

#endif  // LOOM_EXAMPLES_FASHION_MNIST_NN_TRAIN_H_
