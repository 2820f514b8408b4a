#include "nn_train.h"

#include "loom/autodiff.h"
#include "nn_ops.h"

loom_status_t nn_loss(nn_model_t* model, loom_tensor_handle_t* x,
                      loom_tensor_handle_t* labels,
                      loom_tensor_handle_t** out_loss) {
  if (!model || !x || !labels || !out_loss) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_loss: an argument is NULL");
  }
  loom_tensor_handle_t *logits = NULL, *losses = NULL;
  nn_op_list_begin(model->op_list);
  loom_status_t status = nn_model_forward(model, x, &logits);
  if (!status) {
    status = nn_sparse_softmax_xent(model->context, logits, labels, &losses);
  }
  loom_tensor_handle_release(logits);
  if (!status) status = nn_mean_vector(model->context, losses, out_loss);
  loom_tensor_handle_release(losses);
  nn_op_list_end(model->op_list);
  return status;
}

loom_status_t nn_gradients(nn_model_t* model, loom_tensor_handle_t* x,
                           loom_tensor_handle_t* labels,
                           loom_tensor_handle_t** out_gradients,
                           loom_tensor_handle_t** out_loss) {
  return nn_gradients_reporting(model, x, labels, NULL, NULL, out_gradients,
                                out_loss);
}

loom_status_t nn_gradients_reporting(nn_model_t* model, loom_tensor_handle_t* x,
                                     loom_tensor_handle_t* labels,
                                     loom_tape_gradient_ready_fn_t ready,
                                     void* user_data,
                                     loom_tensor_handle_t** out_gradients,
                                     loom_tensor_handle_t** out_loss) {
  if (!model || !x || !labels || !out_gradients) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_gradients: an argument is NULL");
  }
  loom_context_t* context = model->context;
  loom_op_handler_t* tape = NULL;
  LOOM_RETURN_IF_ERROR(loom_tape_create(context, NULL, &tape));
  loom_status_t status = loom_context_enter_scope(context, tape);
  if (status) {
    loom_op_handler_release(tape);
    return status;
  }
  // The tape watches the variables as the forward pass reads them.
  loom_tensor_handle_t* loss = NULL;
  status = nn_loss(model, x, labels, &loss);
  loom_status_t exit_status = loom_context_exit_scope(context);
  if (!status) {
    status = exit_status;
  } else {
    loom_status_free(exit_status);
  }
  if (!status) {
    loom_tensor_handle_t* variables[NN_MODEL_MAX_PARAMS];
    nn_model_variables(model, variables);
    loom_tape_gradient_options_t options;
    loom_tape_gradient_options_initialize(&options);
    options.gradient_ready = ready;
    options.user_data = user_data;
    status = loom_tape_gradient_with_options(
        tape, &loss, 1, variables, model->num_params, NULL,
        LOOM_UNCONNECTED_ZERO, &options, out_gradients);
  }
  loom_op_handler_release(tape);
  if (!status && out_loss) {
    *out_loss = loss;
  } else {
    loom_tensor_handle_release(loss);
  }
  return status;
}

loom_status_t nn_train_step(nn_model_t* model, nn_optimizer_t* optimizer,
                            loom_tensor_handle_t* x,
                            loom_tensor_handle_t* labels,
                            loom_tensor_handle_t** out_loss) {
  if (!optimizer) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_train_step: optimizer is NULL");
  }
  loom_tensor_handle_t* gradients[NN_MODEL_MAX_PARAMS] = {NULL};
  LOOM_RETURN_IF_ERROR(nn_gradients(model, x, labels, gradients, out_loss));
  loom_status_t status = nn_optimizer_apply(optimizer, gradients);
  for (int32_t i = 0; i < model->num_params; ++i) {
    loom_tensor_handle_release(gradients[i]);
  }
  if (status && out_loss) {
    loom_tensor_handle_release(*out_loss);
    *out_loss = NULL;
  }
  return status;
}
