// Gradients all-reduced in buckets while the backward pass runs (as
// PyTorch's DistributedDataParallel does): the tape reports each
// parameter's gradient as soon as it is final (the last layer's first,
// loom_tape_gradient_with_options), nn_gradient_buckets_add collects them
// into buckets of about `bucket_bytes`, and a full bucket is handed to
// reducer threads at once: they concatenate its gradients into one flat
// tensor, average it across the replicas with one CollectiveReduceV2
// (instance key 1 + the bucket's index in the step) and cut the result
// back into the parameters' shapes, while this thread goes on with the
// backward pass. nn_gradient_buckets_finish sends the last, partial bucket
// and waits for them all.
//
// One reducer thread per component of the parallel handler (each runs its
// component's part of every collective: the in-process backend meets them),
// or one under MPI. The buckets of a step are reduced in the order they
// fill, which is the same on every replica (the backward pass visits the
// same ops), as the MPI backend needs. The sums are those of the
// unbucketed step element for element, so the results are the same.

#ifndef LOOM_EXAMPLES_FASHION_MNIST_NN_GRADIENT_BUCKETS_H_
#define LOOM_EXAMPLES_FASHION_MNIST_NN_GRADIENT_BUCKETS_H_

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"
#include "nn_data_parallel.h"
#include "nn_model.h"

// The default bucket size: 1 MiB (the MLP's gradients fit in one; the
// demo's --bucket-kib makes them smaller).
#define NN_GRADIENT_BUCKETS_DEFAULT_BYTES ((size_t)1 << 20)

typedef struct nn_gradient_buckets_t nn_gradient_buckets_t;

// Starts the reducer threads for `group`: one per component of `parallel`
// (the handler the gradients are parallel values of), or one when it is
// NULL (MPI: the gradients are this rank's). `bucket_bytes` > 0.
loom_status_t nn_gradient_buckets_create(loom_context_t* context,
                                         const nn_replica_group_t* group,
                                         loom_op_handler_t* parallel,
                                         size_t bucket_bytes,
                                         nn_gradient_buckets_t** out_buckets);

// Stops and joins the threads (no step in progress).
void nn_gradient_buckets_destroy(nn_gradient_buckets_t* buckets);

// Starts a step's buckets (the previous step has finished).
void nn_gradient_buckets_begin(nn_gradient_buckets_t* buckets);

// A loom_tape_gradient_ready_fn_t (user_data: the buckets): adds parameter
// `index`'s final gradient (a float tensor, retained) to the open bucket
// and sends the bucket when it reaches the bucket size.
loom_status_t nn_gradient_buckets_add(void* buckets, int32_t index,
                                      loom_tensor_handle_t* gradient);

// Sends the open bucket, waits for every bucket of the step, and writes
// the mean of parameter i's gradient to out_means[i] (a new reference, on
// the parallel handler with one) for i < num_params; every parameter must
// have been added. The first error of any bucket, else OK.
loom_status_t nn_gradient_buckets_finish(nn_gradient_buckets_t* buckets,
                                         int32_t num_params,
                                         loom_tensor_handle_t** out_means);

#endif  // LOOM_EXAMPLES_FASHION_MNIST_NN_GRADIENT_BUCKETS_H_
