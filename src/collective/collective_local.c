// The in-process collective backend: participants in this process meet at
// an instance found by (group key, instance key). Each merges its input
// into the instance's accumulator as it arrives (under the backend's
// lock); the last one applies the final op and wakes the others, which
// copy the result out. A broadcast meets the same way: its one sender's
// input is the result. An instance whose participants disagree, or one of
// whose participants gives up waiting, fails every participant.
//
// An instance lives until its round is over (see leave_locked); then a new
// participant with the same keys starts a new instance, so keys may be
// reused round after round.

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collective/collective.h"
#include "loom/allocator.h"
#include "loom/shape.h"

typedef struct instance_t {
  struct instance_t* next;
  int32_t group_key;
  int32_t instance_key;
  int32_t group_size;
  loom_dtype_t dtype;
  loom_shape_t shape;
  int64_t num_elements;
  void* accumulator;  // the reduction so far
  bool broadcast;     // else an all-reduce
  int32_t senders;    // of a broadcast
  int32_t arrived;    // inputs merged
  int32_t present;    // participants inside
  int32_t joined;     // participants that came, all told
  bool complete;      // the result is ready
  bool timed_out;     // a participant gave up: the group is abandoned
  loom_status_t error;
  pthread_cond_t cond;
} instance_t;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static instance_t* g_instances;

static loom_status_t instance_error(const loom__collective_reduce_t* request,
                                    loom_status_code_t code, const char* what) {
  return loom_make_status(code, "%s (group_key %d, instance_key %d): %s",
                          request->op_name, (int)request->group_key,
                          (int)request->instance_key, what);
}

// The instance of the request's keys still waiting for participants, or
// NULL.
static instance_t* find_locked(const loom__collective_reduce_t* request) {
  for (instance_t* instance = g_instances; instance;
       instance = instance->next) {
    if (instance->group_key == request->group_key &&
        instance->instance_key == request->instance_key &&
        !instance->complete && !instance->timed_out &&
        instance->joined < instance->group_size) {
      return instance;
    }
  }
  return NULL;
}

static void unlink_and_free_locked(instance_t* instance) {
  for (instance_t** link = &g_instances; *link; link = &(*link)->next) {
    if (*link != instance) continue;
    *link = instance->next;
    break;
  }
  pthread_cond_destroy(&instance->cond);
  loom_status_free(instance->error);
  free(instance->accumulator);
  free(instance);
}

static loom_status_t create_locked(const loom__collective_reduce_t* request,
                                   bool broadcast, instance_t** out) {
  const loom_tensor_t* input = request->input;
  size_t bytes = loom_tensor_byte_size(input);
  instance_t* instance = calloc(1, sizeof(*instance));
  void* accumulator = malloc(bytes ? bytes : 1);
  if (!instance || !accumulator) {
    free(instance);
    free(accumulator);
    return instance_error(request, LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory for the reduction");
  }
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&instance->cond, &attr);
  pthread_condattr_destroy(&attr);
  instance->broadcast = broadcast;
  instance->group_key = request->group_key;
  instance->instance_key = request->instance_key;
  instance->group_size = request->group_size;
  instance->dtype = loom_tensor_dtype(input);
  instance->shape = *loom_tensor_shape(input);
  instance->num_elements = loom_tensor_num_elements(input);
  instance->accumulator = accumulator;
  instance->next = g_instances;
  g_instances = instance;
  *out = instance;
  return loom_ok_status();
}

// Whether the request fits the instance; else the error (for all).
static loom_status_t check_locked(const instance_t* instance,
                                  const loom__collective_reduce_t* request,
                                  bool broadcast) {
  const loom_tensor_t* input = request->input;
  char what[512];
  if (broadcast != instance->broadcast) {
    return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT,
                          "a participant runs a broadcast, another an "
                          "all-reduce, with the same keys");
  }
  if (request->group_size != instance->group_size) {
    snprintf(what, sizeof(what),
             "a participant has group_size %d, another %d: all must agree",
             (int)request->group_size, (int)instance->group_size);
    return instance_error(request, LOOM_STATUS_INTERNAL, what);
  }
  if (loom_tensor_dtype(input) != instance->dtype ||
      !loom_shape_equal(loom_tensor_shape(input), &instance->shape)) {
    char got[96], want[96];
    loom_shape_format(loom_tensor_shape(input), got, sizeof(got));
    loom_shape_format(&instance->shape, want, sizeof(want));
    snprintf(what, sizeof(what),
             "a participant's input is %s %s, another's %s %s: all inputs "
             "must have the same dtype and shape",
             loom_dtype_name(loom_tensor_dtype(input)), got,
             loom_dtype_name(instance->dtype), want);
    return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
  }
  return loom_ok_status();
}

#define MERGE_LOOP(type)                                        \
  do {                                                          \
    type* acc = accumulator;                                    \
    const type* x = input;                                      \
    switch (merge) {                                            \
      case LOOM__COLLECTIVE_MERGE_MIN:                          \
        for (int64_t i = 0; i < n; ++i) {                       \
          if (x[i] < acc[i]) acc[i] = x[i];                     \
        }                                                       \
        break;                                                  \
      case LOOM__COLLECTIVE_MERGE_MAX:                          \
        for (int64_t i = 0; i < n; ++i) {                       \
          if (x[i] > acc[i]) acc[i] = x[i];                     \
        }                                                       \
        break;                                                  \
      case LOOM__COLLECTIVE_MERGE_MUL:                          \
        for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] * x[i]; \
        break;                                                  \
      case LOOM__COLLECTIVE_MERGE_ADD:                          \
        for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] + x[i]; \
        break;                                                  \
    }                                                           \
  } while (0)

static void merge_into(loom_dtype_t dtype, loom__collective_merge_t merge,
                       void* accumulator, const void* input, int64_t n) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      MERGE_LOOP(float);
      break;
    case LOOM_DTYPE_DOUBLE:
      MERGE_LOOP(double);
      break;
    case LOOM_DTYPE_INT32:
      MERGE_LOOP(int32_t);
      break;
    case LOOM_DTYPE_INT64:
      MERGE_LOOP(int64_t);
      break;
    default:
      break;  // refused before
  }
}

#undef MERGE_LOOP

static void divide(loom_dtype_t dtype, void* data, int64_t n, int32_t by) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      for (int64_t i = 0; i < n; ++i) ((float*)data)[i] /= (float)by;
      break;
    case LOOM_DTYPE_DOUBLE:
      for (int64_t i = 0; i < n; ++i) ((double*)data)[i] /= (double)by;
      break;
    case LOOM_DTYPE_INT32:
      for (int64_t i = 0; i < n; ++i) ((int32_t*)data)[i] /= by;
      break;
    case LOOM_DTYPE_INT64:
      for (int64_t i = 0; i < n; ++i) ((int64_t*)data)[i] /= by;
      break;
    default:
      break;
  }
}

static struct timespec deadline_after(double seconds) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double whole = (double)(int64_t)seconds;
  int64_t nanos = (int64_t)((seconds - whole) * 1e9) + now.tv_nsec;
  now.tv_sec += (time_t)whole + (time_t)(nanos / 1000000000);
  now.tv_nsec = (long)(nanos % 1000000000);
  return now;
}

// Leaves the instance: the last one out frees it once it is over — its
// result given, or failed and every participant come to hear it (a
// participant still to come of a group that failed on a mismatch fails
// too), or abandoned by a participant that timed out.
static void leave_locked(instance_t* instance) {
  if (--instance->present > 0) return;
  if (instance->complete || instance->timed_out ||
      (instance->error && instance->joined >= instance->group_size)) {
    unlink_and_free_locked(instance);
  }
}

// An all-reduce, or (broadcast) a broadcast from the one participant
// that is_sender.
static loom_status_t local_run(const loom__collective_reduce_t* request,
                               bool broadcast, bool is_sender,
                               loom_tensor_t* output) {
  const void* input = loom_tensor_data(request->input);
  pthread_mutex_lock(&g_mutex);
  instance_t* instance = find_locked(request);
  loom_status_t status = loom_ok_status();
  if (!instance) status = create_locked(request, broadcast, &instance);
  if (status) {
    pthread_mutex_unlock(&g_mutex);
    return status;
  }
  instance->present++;
  instance->joined++;
  if (!instance->error) {
    loom_status_t mismatch = check_locked(instance, request, broadcast);
    if (mismatch) {
      instance->error = mismatch;
      pthread_cond_broadcast(&instance->cond);
    }
  }
  if (!instance->error) {
    if (broadcast) {
      if (is_sender && instance->senders++ == 0) {
        memcpy(instance->accumulator, input,
               loom_tensor_byte_size(request->input));
      }
    } else if (instance->arrived == 0) {
      memcpy(instance->accumulator, input,
             loom_tensor_byte_size(request->input));
    } else {
      merge_into(instance->dtype, request->merge, instance->accumulator, input,
                 instance->num_elements);
    }
    if (++instance->arrived == instance->group_size) {
      if (broadcast && instance->senders != 1) {
        char what[128];
        snprintf(what, sizeof(what),
                 "a broadcast needs exactly one sender, got %d",
                 (int)instance->senders);
        instance->error =
            instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
      } else if (!broadcast &&
                 request->final_op == LOOM__COLLECTIVE_FINAL_DIV) {
        divide(instance->dtype, instance->accumulator, instance->num_elements,
               instance->group_size);
      }
      if (!instance->error) instance->complete = true;
      pthread_cond_broadcast(&instance->cond);
    }
  }
  struct timespec deadline = deadline_after(request->timeout_seconds);
  while (!instance->complete && !instance->error) {
    if (request->timeout_seconds <= 0) {
      pthread_cond_wait(&instance->cond, &g_mutex);
      continue;
    }
    if (pthread_cond_timedwait(&instance->cond, &g_mutex, &deadline) ==
        ETIMEDOUT) {
      if (instance->complete || instance->error) break;
      char what[160];
      snprintf(what, sizeof(what),
               "timed out after %g seconds with %d of %d participants "
               "arrived",
               request->timeout_seconds, (int)instance->arrived,
               (int)instance->group_size);
      instance->error =
          instance_error(request, LOOM_STATUS_DEADLINE_EXCEEDED, what);
      instance->timed_out = true;
      pthread_cond_broadcast(&instance->cond);
    }
  }
  if (instance->error) {
    status = loom_status_clone(instance->error);
  } else {
    memcpy(loom_tensor_data(output), instance->accumulator,
           loom_tensor_byte_size(output));
  }
  leave_locked(instance);
  pthread_mutex_unlock(&g_mutex);
  return status;
}

// Threads of a process have no rank to order a gather by (the kernel does
// not know its component's index).
static loom_status_t local_all_gather(void* state,
                                      const loom__collective_reduce_t* request,
                                      loom_tensor_t* output) {
  (void)state;
  (void)output;
  return instance_error(request, LOOM_STATUS_UNIMPLEMENTED,
                        "the in-process backend has no gather yet (its "
                        "participants have no ranks to order it by); run it "
                        "between MPI ranks (loom_collective_use_mpi)");
}

static loom_status_t local_all_reduce(void* state,
                                      const loom__collective_reduce_t* request,
                                      loom_tensor_t* output) {
  (void)state;
  return local_run(request, false, false, output);
}

static loom_status_t local_broadcast(void* state,
                                     const loom__collective_reduce_t* request,
                                     bool is_sender, loom_tensor_t* data) {
  (void)state;
  return local_run(request, true, is_sender, data);
}

static const loom__collective_backend_t kLocalBackend = {
    .name = "local",
    .all_reduce = local_all_reduce,
    .all_gather = local_all_gather,
    .broadcast = local_broadcast,
    .state = NULL,
};

const loom__collective_backend_t* loom__collective_local_backend(void) {
  return &kLocalBackend;
}
