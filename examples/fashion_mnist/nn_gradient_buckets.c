#include "nn_gradient_buckets.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "loom/parallel.h"

enum { kMaxWorkers = 64 };

// The parameters of one bucket, in the order they became ready.
typedef struct bucket_t {
  int32_t params[NN_MODEL_MAX_PARAMS];
  int32_t count;
  size_t bytes;
  loom_status_t status;  // the first error of its reduction
} bucket_t;

typedef struct worker_t {
  struct nn_gradient_buckets_t* owner;
  int32_t component;
  int32_t next;  // the next bucket of the step to reduce
  pthread_t thread;
  bool started;
} worker_t;

struct nn_gradient_buckets_t {
  loom_context_t* context;
  nn_replica_group_t group;
  loom_op_handler_t* parallel;  // NULL: one component (this rank's)
  size_t bucket_bytes;
  int32_t num_workers;
  worker_t workers[kMaxWorkers];
  // Parameter i's gradient, component k: [i][k] (set by the thread
  // running the backward pass before its bucket is sent), and its mean
  // (set by worker k before it counts the bucket done).
  loom_tensor_handle_t* parts[NN_MODEL_MAX_PARAMS][kMaxWorkers];
  loom_tensor_handle_t* means[NN_MODEL_MAX_PARAMS][kMaxWorkers];
  bucket_t buckets[NN_MODEL_MAX_PARAMS];
  int32_t num_buckets;  // including the open one (the last, unsent)
  pthread_mutex_t mutex;
  pthread_cond_t sent;  // num_sent grew, or stopping
  pthread_cond_t done;  // num_done grew
  int32_t num_sent;     // buckets handed to the workers this step
  int32_t num_done;     // (bucket, worker) reductions finished this step
  bool stopping;
};

static loom_status_t new_handle(loom_context_t* context, const int64_t* dims,
                                int rank, const float* values,
                                loom_tensor_handle_t** out) {
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      loom_allocator_default(), LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, loom_tensor_byte_size(tensor));
  loom_status_t status = loom_context_new_handle(context, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

// Worker `k`'s part of bucket `index`: its component of the bucket's
// gradients, concatenated, averaged across the replicas, cut back.
static loom_status_t reduce_bucket(nn_gradient_buckets_t* b, int32_t index,
                                   int32_t k) {
  const bucket_t* bucket = &b->buckets[index];
  loom_tensor_t* parts[NN_MODEL_MAX_PARAMS] = {NULL};
  loom_tensor_t* mean = NULL;
  loom_tensor_handle_t *flat = NULL, *reduced = NULL;
  float* packed = NULL;
  int64_t total = 0;
  loom_status_t status = loom_ok_status();
  for (int32_t j = 0; j < bucket->count && !status; ++j) {
    status = loom_context_resolve(b->context, b->parts[bucket->params[j]][k],
                                  &parts[j]);
    if (!status && loom_tensor_dtype(parts[j]) != LOOM_DTYPE_FLOAT) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "nn_gradient_buckets: parameter %d's gradient "
                                "is not a float tensor",
                                (int)bucket->params[j]);
    }
    if (!status) total += loom_tensor_num_elements(parts[j]);
  }
  if (!status) {
    packed = malloc(sizeof(float) * (size_t)(total > 0 ? total : 1));
    if (!packed) {
      status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "nn_gradient_buckets: out of memory");
    }
  }
  if (!status) {
    int64_t offset = 0;
    for (int32_t j = 0; j < bucket->count; ++j) {
      memcpy(packed + offset, loom_tensor_data(parts[j]),
             loom_tensor_byte_size(parts[j]));
      offset += loom_tensor_num_elements(parts[j]);
    }
    status = new_handle(b->context, &total, 1, packed, &flat);
  }
  if (!status) {
    status =
        nn_all_reduce_mean(b->context, &b->group, 1 + index, flat, &reduced);
  }
  if (!status) status = loom_context_resolve(b->context, reduced, &mean);
  int64_t offset = 0;
  for (int32_t j = 0; j < bucket->count && !status; ++j) {
    const loom_shape_t* shape = loom_tensor_shape(parts[j]);
    status = new_handle(b->context, shape->dims, shape->rank,
                        (const float*)loom_tensor_data(mean) + offset,
                        &b->means[bucket->params[j]][k]);
    offset += loom_tensor_num_elements(parts[j]);
  }
  for (int32_t j = 0; j < bucket->count; ++j) {
    if (parts[j]) loom_tensor_release(parts[j]);
  }
  if (mean) loom_tensor_release(mean);
  loom_tensor_handle_release(flat);
  loom_tensor_handle_release(reduced);
  free(packed);
  return status;
}

static void* worker_main(void* arg) {
  worker_t* w = arg;
  nn_gradient_buckets_t* b = w->owner;
  pthread_mutex_lock(&b->mutex);
  for (;;) {
    while (w->next >= b->num_sent && !b->stopping) {
      pthread_cond_wait(&b->sent, &b->mutex);
    }
    if (w->next >= b->num_sent) break;  // stopping
    int32_t index = w->next++;
    pthread_mutex_unlock(&b->mutex);
    loom_status_t status = reduce_bucket(b, index, w->component);
    pthread_mutex_lock(&b->mutex);
    bucket_t* bucket = &b->buckets[index];
    if (status && !bucket->status) {
      bucket->status = status;
    } else {
      loom_status_free(status);
    }
    ++b->num_done;
    pthread_cond_broadcast(&b->done);
  }
  pthread_mutex_unlock(&b->mutex);
  return NULL;
}

loom_status_t nn_gradient_buckets_create(loom_context_t* context,
                                         const nn_replica_group_t* group,
                                         loom_op_handler_t* parallel,
                                         size_t bucket_bytes,
                                         nn_gradient_buckets_t** out_buckets) {
  if (!context || !group || !out_buckets || bucket_bytes == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_gradient_buckets_create: an argument is NULL "
                            "or the bucket size is 0");
  }
  int32_t workers =
      parallel ? loom_parallel_handler_num_components(parallel) : 1;
  if (workers < 1 || workers > kMaxWorkers) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_gradient_buckets_create: %d components (at "
                            "most %d)",
                            (int)workers, kMaxWorkers);
  }
  nn_gradient_buckets_t* b = calloc(1, sizeof(*b));
  if (!b) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "nn_gradient_buckets_create: out of memory");
  }
  b->context = context;
  b->group = *group;
  b->parallel = parallel;
  b->bucket_bytes = bucket_bytes;
  b->num_workers = workers;
  pthread_mutex_init(&b->mutex, NULL);
  pthread_cond_init(&b->sent, NULL);
  pthread_cond_init(&b->done, NULL);
  for (int32_t k = 0; k < workers; ++k) {
    worker_t* w = &b->workers[k];
    *w = (worker_t){.owner = b, .component = k};
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
      nn_gradient_buckets_destroy(b);
      return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "nn_gradient_buckets_create: cannot start a "
                              "reducer thread");
    }
    w->started = true;
  }
  nn_gradient_buckets_begin(b);
  *out_buckets = b;
  return loom_ok_status();
}

// Drops what the last step left (its gradients and unclaimed means).
static void clear_step(nn_gradient_buckets_t* b) {
  for (int32_t i = 0; i < NN_MODEL_MAX_PARAMS; ++i) {
    for (int32_t k = 0; k < b->num_workers; ++k) {
      loom_tensor_handle_release(b->parts[i][k]);
      loom_tensor_handle_release(b->means[i][k]);
      b->parts[i][k] = NULL;
      b->means[i][k] = NULL;
    }
  }
  for (int32_t i = 0; i < b->num_buckets; ++i) {
    loom_status_free(b->buckets[i].status);
  }
  memset(b->buckets, 0, sizeof(b->buckets));
  b->num_buckets = 0;
}

void nn_gradient_buckets_destroy(nn_gradient_buckets_t* b) {
  if (!b) return;
  pthread_mutex_lock(&b->mutex);
  b->stopping = true;
  pthread_cond_broadcast(&b->sent);
  pthread_mutex_unlock(&b->mutex);
  for (int32_t k = 0; k < b->num_workers; ++k) {
    if (b->workers[k].started) pthread_join(b->workers[k].thread, NULL);
  }
  clear_step(b);
  pthread_cond_destroy(&b->done);
  pthread_cond_destroy(&b->sent);
  pthread_mutex_destroy(&b->mutex);
  free(b);
}

void nn_gradient_buckets_begin(nn_gradient_buckets_t* b) {
  pthread_mutex_lock(&b->mutex);
  // A step that failed may have left buckets in flight.
  while (b->num_done < b->num_sent * b->num_workers) {
    pthread_cond_wait(&b->done, &b->mutex);
  }
  clear_step(b);
  b->num_sent = 0;
  b->num_done = 0;
  for (int32_t k = 0; k < b->num_workers; ++k) b->workers[k].next = 0;
  pthread_mutex_unlock(&b->mutex);
}

// Hands the open bucket to the workers.
static void send_open_bucket(nn_gradient_buckets_t* b) {
  pthread_mutex_lock(&b->mutex);
  b->num_sent = b->num_buckets;
  pthread_cond_broadcast(&b->sent);
  pthread_mutex_unlock(&b->mutex);
}

loom_status_t nn_gradient_buckets_add(void* buckets, int32_t index,
                                      loom_tensor_handle_t* gradient) {
  nn_gradient_buckets_t* b = buckets;
  if (index < 0 || index >= NN_MODEL_MAX_PARAMS || !gradient ||
      b->parts[index][0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "nn_gradient_buckets_add: parameter %d has no "
                            "gradient, or has one already",
                            (int)index);
  }
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_metadata(gradient, &metadata));
  if (b->parallel) {
    LOOM_RETURN_IF_ERROR(loom_parallel_unpack(b->parallel, gradient,
                                              b->parts[index], b->num_workers));
  } else {
    loom_tensor_handle_retain(gradient);
    b->parts[index][0] = gradient;
  }
  if (b->num_buckets == b->num_sent) ++b->num_buckets;  // opens one
  bucket_t* bucket = &b->buckets[b->num_buckets - 1];
  bucket->params[bucket->count++] = index;
  bucket->bytes +=
      sizeof(float) * (size_t)loom_shape_num_elements(&metadata.shape);
  if (bucket->bytes >= b->bucket_bytes) send_open_bucket(b);
  return loom_ok_status();
}

loom_status_t nn_gradient_buckets_finish(nn_gradient_buckets_t* b,
                                         int32_t num_params,
                                         loom_tensor_handle_t** out_means) {
  if (b->num_buckets > b->num_sent) send_open_bucket(b);
  pthread_mutex_lock(&b->mutex);
  while (b->num_done < b->num_sent * b->num_workers) {
    pthread_cond_wait(&b->done, &b->mutex);
  }
  pthread_mutex_unlock(&b->mutex);
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; i < b->num_buckets && !status; ++i) {
    if (b->buckets[i].status) status = loom_status_clone(b->buckets[i].status);
  }
  for (int32_t i = 0; i < num_params; ++i) out_means[i] = NULL;
  for (int32_t i = 0; i < num_params && !status; ++i) {
    if (!b->means[i][0]) {
      status = loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                                "nn_gradient_buckets_finish: parameter %d's "
                                "gradient was not added",
                                (int)i);
    } else if (b->parallel) {
      status = loom_parallel_pack(b->parallel, b->means[i], b->num_workers,
                                  &out_means[i]);
    } else {
      out_means[i] = b->means[i][0];
      b->means[i][0] = NULL;
    }
  }
  if (status) {
    for (int32_t i = 0; i < num_params; ++i) {
      loom_tensor_handle_release(out_means[i]);
      out_means[i] = NULL;
    }
  }
  return status;
}
