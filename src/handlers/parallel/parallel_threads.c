// One thread per component, waiting for batches (parallel_threads.h).

#include "handlers/parallel/parallel_threads.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct worker_t {
  loom__parallel_threads_t* threads;
  pthread_t thread;
  int32_t index;
  bool started;
} worker_t;

struct loom__parallel_threads_t {
  loom_allocator_t allocator;
  int32_t count;
  worker_t* workers;
  pthread_mutex_t run_mutex;  // one batch at a time
  pthread_mutex_t mutex;      // what follows
  pthread_cond_t work;        // a new batch, or shutdown
  pthread_cond_t done;        // the batch is finished
  uint64_t generation;        // batches started
  int32_t remaining;          // components of the batch still running
  bool shutdown;
  loom__parallel_task_fn_t fn;
  void* task;
};

// The threads object whose worker the calling thread is, if any.
static _Thread_local const loom__parallel_threads_t* t_owner;

static void* worker_main(void* opaque) {
  worker_t* worker = opaque;
  loom__parallel_threads_t* threads = worker->threads;
  t_owner = threads;
  uint64_t seen = 0;
  pthread_mutex_lock(&threads->mutex);
  for (;;) {
    while (!threads->shutdown && threads->generation == seen) {
      pthread_cond_wait(&threads->work, &threads->mutex);
    }
    if (threads->shutdown) break;
    seen = threads->generation;
    loom__parallel_task_fn_t fn = threads->fn;
    void* task = threads->task;
    pthread_mutex_unlock(&threads->mutex);
    fn(task, worker->index);
    pthread_mutex_lock(&threads->mutex);
    if (--threads->remaining == 0) pthread_cond_signal(&threads->done);
  }
  pthread_mutex_unlock(&threads->mutex);
  return NULL;
}

loom_status_t loom__parallel_threads_create(
    loom_allocator_t allocator, int32_t count,
    loom__parallel_threads_t** out_threads) {
  *out_threads = NULL;
  loom__parallel_threads_t* threads = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*threads), (void**)&threads));
  threads->allocator = allocator;
  threads->count = count;
  pthread_mutex_init(&threads->run_mutex, NULL);
  pthread_mutex_init(&threads->mutex, NULL);
  pthread_cond_init(&threads->work, NULL);
  pthread_cond_init(&threads->done, NULL);
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(worker_t) * (size_t)count, (void**)&threads->workers);
  for (int32_t k = 0; k < count && !status; ++k) {
    worker_t* worker = &threads->workers[k];
    worker->threads = threads;
    worker->index = k;
    int error = pthread_create(&worker->thread, NULL, worker_main, worker);
    if (error) {
      status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "parallel handler: cannot start component "
                                "thread %d of %d (error %d)",
                                (int)k, (int)count, error);
    } else {
      worker->started = true;
    }
  }
  if (status) {
    loom__parallel_threads_destroy(threads);
    return status;
  }
  *out_threads = threads;
  return loom_ok_status();
}

void loom__parallel_threads_destroy(loom__parallel_threads_t* threads) {
  if (!threads) return;
  pthread_mutex_lock(&threads->mutex);
  threads->shutdown = true;
  pthread_cond_broadcast(&threads->work);
  pthread_mutex_unlock(&threads->mutex);
  for (int32_t k = 0; threads->workers && k < threads->count; ++k) {
    if (threads->workers[k].started) {
      pthread_join(threads->workers[k].thread, NULL);
    }
  }
  pthread_cond_destroy(&threads->done);
  pthread_cond_destroy(&threads->work);
  pthread_mutex_destroy(&threads->mutex);
  pthread_mutex_destroy(&threads->run_mutex);
  loom_allocator_free(threads->allocator, threads->workers);
  loom_allocator_free(threads->allocator, threads);
}

void loom__parallel_threads_run(loom__parallel_threads_t* threads,
                                loom__parallel_task_fn_t fn, void* task) {
  if (t_owner == threads) {
    for (int32_t k = 0; k < threads->count; ++k) fn(task, k);
    return;
  }
  pthread_mutex_lock(&threads->run_mutex);
  pthread_mutex_lock(&threads->mutex);
  threads->fn = fn;
  threads->task = task;
  threads->remaining = threads->count;
  threads->generation++;
  pthread_cond_broadcast(&threads->work);
  while (threads->remaining > 0) {
    pthread_cond_wait(&threads->done, &threads->mutex);
  }
  pthread_mutex_unlock(&threads->mutex);
  pthread_mutex_unlock(&threads->run_mutex);
}
