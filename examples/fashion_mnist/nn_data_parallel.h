// Data parallelism for the demo: each replica of the model (a component of
// a parallel handler, or an MPI rank) computes the gradients of its shard
// of the global batch; CollectiveReduceV2 (merge Add, final Div) averages
// them across the replicas, so every replica applies the same update as
// one process on the whole batch would (equal shards: the mean of the
// shards' mean losses is the batch's mean loss).
//
// The same code serves both: on a parallel handler (its scope entered
// around the model's creation and every step) the collectives meet between
// component threads; under mpirun (loom_collective_use_mpi) between ranks.

#ifndef LOOM_EXAMPLES_FASHION_MNIST_NN_DATA_PARALLEL_H_
#define LOOM_EXAMPLES_FASHION_MNIST_NN_DATA_PARALLEL_H_

#include <stdint.h>

#include "loom/loom.h"
#include "nn_model.h"
#include "nn_optimizer.h"

// The group the replicas form: every replica passes the same values.
typedef struct nn_replica_group_t {
  int32_t size;           // the number of replicas (>= 1)
  int32_t key;            // the collectives' group key
  float timeout_seconds;  // 0: the backend's default
} nn_replica_group_t;

// The mean of `value` over the replicas (CollectiveReduceV2 with
// instance key `instance_key`), as a new reference in *out.
loom_status_t nn_all_reduce_mean(loom_context_t* context,
                                 const nn_replica_group_t* group,
                                 int32_t instance_key,
                                 loom_tensor_handle_t* value,
                                 loom_tensor_handle_t** out);

typedef struct nn_gradient_buckets_t nn_gradient_buckets_t;

// One data-parallel step: this replica's gradients on its shard (x,
// labels), averaged across the group, then the optimizer's update. The
// loss (also averaged: the global batch's, the same on every replica) in
// *out_loss when it is not NULL. With `buckets` (nn_gradient_buckets.h)
// the gradients are averaged in buckets while the backward pass runs;
// without (NULL), one by one after it. Both give the same update.
loom_status_t nn_train_step_replicated(nn_model_t* model,
                                       nn_optimizer_t* optimizer,
                                       const nn_replica_group_t* group,
                                       nn_gradient_buckets_t* buckets,
                                       loom_tensor_handle_t* x,
                                       loom_tensor_handle_t* labels,
                                       loom_tensor_handle_t** out_loss);

#endif  // LOOM_EXAMPLES_FASHION_MNIST_NN_DATA_PARALLEL_H_
