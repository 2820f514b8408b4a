#include "nn_data_parallel.h"

#include <string.h>

#include "nn_gradient_buckets.h"
#include "nn_ops.h"
#include "nn_train.h"

static loom_status_t int32_scalar(loom_context_t* context, int32_t value,
                                  loom_tensor_handle_t** out) {
  return nn_constant_i32(context, NULL, 0, &value, out);
}

loom_status_t nn_all_reduce_mean(loom_context_t* context,
                                 const nn_replica_group_t* group,
                                 int32_t instance_key,
                                 loom_tensor_handle_t* value,
                                 loom_tensor_handle_t** out) {
  if (!context || !group || !value || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_all_reduce_mean: an argument is NULL");
  }
  *out = NULL;
  loom_tensor_handle_t* keys[3] = {NULL, NULL, NULL};
  loom_status_t status = int32_scalar(context, group->size, &keys[0]);
  if (!status) status = int32_scalar(context, group->key, &keys[1]);
  if (!status) status = int32_scalar(context, instance_key, &keys[2]);
  loom_eager_op_t* op = NULL;
  if (!status)
    status = loom_eager_op_create(context, "CollectiveReduceV2", &op);
  if (!status) status = loom_eager_op_add_input(op, value);
  for (int i = 0; i < 3 && !status; ++i) {
    status = loom_eager_op_add_input(op, keys[i]);
  }
  loom_op_attrs_t* attrs = status ? NULL : loom_eager_op_attrs(op);
  if (!status) status = loom_op_attrs_set_string(attrs, "merge_op", "Add", 3);
  if (!status) status = loom_op_attrs_set_string(attrs, "final_op", "Div", 3);
  if (!status) {
    status =
        loom_op_attrs_set_f32(attrs, "timeout_seconds", group->timeout_seconds);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(keys[i]);
  return status;
}

loom_status_t nn_train_step_replicated(nn_model_t* model,
                                       nn_optimizer_t* optimizer,
                                       const nn_replica_group_t* group,
                                       nn_gradient_buckets_t* buckets,
                                       loom_tensor_handle_t* x,
                                       loom_tensor_handle_t* labels,
                                       loom_tensor_handle_t** out_loss) {
  if (!model || !optimizer || !group) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_train_step_replicated: an argument is NULL");
  }
  if (out_loss) *out_loss = NULL;
  loom_tensor_handle_t* local[NN_MODEL_MAX_PARAMS] = {NULL};
  loom_tensor_handle_t* mean[NN_MODEL_MAX_PARAMS] = {NULL};
  loom_tensor_handle_t* loss = NULL;
  loom_status_t status;
  if (buckets) {
    // The buckets' instances are 1 + their index (at most one per
    // parameter), the loss's 0.
    nn_gradient_buckets_begin(buckets);
    status = nn_gradients_reporting(model, x, labels, nn_gradient_buckets_add,
                                    buckets, local, &loss);
    // Waits for the buckets sent, also after an error.
    loom_status_t finished =
        nn_gradient_buckets_finish(buckets, model->num_params, mean);
    if (status) {
      loom_status_free(finished);
    } else {
      status = finished;
    }
  } else {
    status = nn_gradients(model, x, labels, local, &loss);
    // Instance 0 is the loss, 1 + i parameter i's gradient: every replica
    // runs them in this order.
    for (int32_t i = 0; i < model->num_params && !status; ++i) {
      status =
          nn_all_reduce_mean(model->context, group, 1 + i, local[i], &mean[i]);
    }
  }
  if (!status) status = nn_optimizer_apply(optimizer, mean);
  if (!status && out_loss) {
    status = nn_all_reduce_mean(model->context, group, 0, loss, out_loss);
  }
  for (int32_t i = 0; i < model->num_params; ++i) {
    loom_tensor_handle_release(local[i]);
    loom_tensor_handle_release(mean[i]);
  }
  loom_tensor_handle_release(loss);
  return status;
}
