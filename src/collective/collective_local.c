// The in-process collective backend: participants in this process meet at
// an instance found by (group key, instance key). Each merges its input
// into the instance's accumulator as it arrives (under the backend's
// lock); the last one applies the final op and wakes the others, which
// copy the result out. A broadcast meets the same way: its one sender's
// input is the result. A gather's participants each put their input in a
// slot of their own; the last one orders the slots by the participants'
// device names (the components of a parallel handler run on CPU:0,
// CPU:1, ...: their order) into the result. An instance whose
// participants disagree, or one of whose participants gives up waiting,
// fails every participant.
//
// An instance lives until its round is over (see leave_locked); then a new
// participant with the same keys starts a new instance, so keys may be
// reused round after round.

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collective/collective.h"
#include "loom/allocator.h"
#include "loom/shape.h"

typedef enum kind_t {
  KIND_ALL_REDUCE = 0,
  KIND_BROADCAST,
  KIND_ALL_GATHER,
  KIND_REDUCE_SCATTER,
  KIND_ALL_TO_ALL,
} kind_t;

// Whether participants have ranks (their devices' order) in the kind.
static bool is_ordered(kind_t kind) {
  return kind == KIND_ALL_GATHER || kind == KIND_REDUCE_SCATTER ||
         kind == KIND_ALL_TO_ALL;
}

// Whether each participant's input has a slot of its own (else the
// accumulator holds one tensor).
static bool has_slots(kind_t kind) {
  return kind == KIND_ALL_GATHER || kind == KIND_ALL_TO_ALL;
}

static const char* kind_name(kind_t kind) {
  switch (kind) {
    case KIND_ALL_REDUCE:
      return "an all-reduce";
    case KIND_BROADCAST:
      return "a broadcast";
    case KIND_ALL_GATHER:
      return "a gather";
    case KIND_REDUCE_SCATTER:
      return "a reduce-scatter";
    case KIND_ALL_TO_ALL:
      return "an all-to-all";
  }
  return "?";
}

typedef struct instance_t {
  struct instance_t* next;
  int32_t group_key;
  int32_t instance_key;
  int32_t group_size;
  loom_dtype_t dtype;
  loom_shape_t shape;
  int64_t num_elements;
  void* accumulator;  // the reduction so far, or one slot per participant
  kind_t kind;
  // Of an ordered kind: the device of each participant (by arrival: its
  // slot), and once complete the slot of each rank and the rank of each
  // slot.
  char** devices;
  int32_t* slot_of_rank;
  int32_t* rank_of_slot;
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
  if (instance->devices) {
    for (int32_t i = 0; i < instance->group_size; ++i) {
      free(instance->devices[i]);
    }
    free(instance->devices);
  }
  free(instance->slot_of_rank);
  free(instance->rank_of_slot);
  free(instance);
}

static loom_status_t create_locked(const loom__collective_reduce_t* request,
                                   kind_t kind, instance_t** out) {
  const loom_tensor_t* input = request->input;
  size_t bytes = loom_tensor_byte_size(input);
  size_t slots = has_slots(kind) ? (size_t)request->group_size : 1;
  instance_t* instance = calloc(1, sizeof(*instance));
  void* accumulator = bytes <= SIZE_MAX / slots && bytes * slots > 0
                          ? malloc(bytes * slots)
                          : malloc(1);
  char** devices = is_ordered(kind)
                       ? calloc((size_t)request->group_size, sizeof(char*))
                       : NULL;
  if (!instance || !accumulator || (is_ordered(kind) && !devices)) {
    free(instance);
    free(accumulator);
    free(devices);
    return instance_error(request, LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory for the reduction");
  }
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&instance->cond, &attr);
  pthread_condattr_destroy(&attr);
  instance->kind = kind;
  instance->devices = devices;
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
                                  kind_t kind) {
  const loom_tensor_t* input = request->input;
  char what[512];
  if (kind != instance->kind) {
    snprintf(what, sizeof(what),
             "a participant runs %s, another %s, with the same keys",
             kind_name(kind), kind_name(instance->kind));
    return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
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

// Compares device names with their numbers as numbers ("CPU:2" before
// "CPU:10").
static int compare_devices(const char* a, const char* b) {
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      while (*a == '0') ++a;
      while (*b == '0') ++b;
      size_t na = 0, nb = 0;
      while (isdigit((unsigned char)a[na])) ++na;
      while (isdigit((unsigned char)b[nb])) ++nb;
      if (na != nb) return na < nb ? -1 : 1;
      int order = strncmp(a, b, na);
      if (order) return order;
      a += na;
      b += nb;
      continue;
    }
    if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    ++a;
    ++b;
  }
  return *a ? 1 : (*b ? -1 : 0);
}

// The last participant of an ordered kind: the participants' ranks, by
// their devices, or the error for all.
static loom_status_t rank_participants_locked(
    instance_t* instance, const loom__collective_reduce_t* request) {
  int32_t n = instance->group_size;
  int32_t* order = malloc(sizeof(int32_t) * (size_t)n);
  int32_t* ranks = malloc(sizeof(int32_t) * (size_t)n);
  if (!order || !ranks) {
    free(order);
    free(ranks);
    return instance_error(request, LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory for the participants' ranks");
  }
  // Insertion sort: groups are small.
  for (int32_t i = 0; i < n; ++i) {
    int32_t j = i;
    while (j > 0 && compare_devices(instance->devices[order[j - 1]],
                                    instance->devices[i]) > 0) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = i;
  }
  for (int32_t r = 0; r < n; ++r) ranks[order[r]] = r;
  for (int32_t r = 1; r < n; ++r) {
    if (compare_devices(instance->devices[order[r - 1]],
                        instance->devices[order[r]]) == 0) {
      char what[512];
      snprintf(what, sizeof(what),
               "two participants of %s run on device '%s': the in-process "
               "backend orders them by their devices, so each must have its "
               "own (as the components of a parallel handler do)",
               kind_name(instance->kind), instance->devices[order[r]]);
      free(order);
      free(ranks);
      return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
    }
  }
  instance->slot_of_rank = order;
  instance->rank_of_slot = ranks;
  return loom_ok_status();
}

// A participant's contribution to an instance it joined without error;
// *out_slot: its arrival index.
static loom_status_t contribute_locked(instance_t* instance,
                                       const loom__collective_reduce_t* request,
                                       bool is_sender, int32_t* out_slot) {
  const void* input = loom_tensor_data(request->input);
  size_t bytes = loom_tensor_byte_size(request->input);
  int32_t slot = instance->arrived;
  *out_slot = slot;
  if (is_ordered(instance->kind)) {
    if (!request->device) {
      char what[192];
      snprintf(what, sizeof(what),
               "a participant of %s runs outside any device: the in-process "
               "backend orders the participants by their devices",
               kind_name(instance->kind));
      return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
    }
    instance->devices[slot] = strdup(request->device);
    if (!instance->devices[slot]) {
      return instance_error(request, LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory for the participants' devices");
    }
  }
  if (instance->kind == KIND_BROADCAST) {
    if (is_sender && instance->senders++ == 0) {
      memcpy(instance->accumulator, input, bytes);
    }
  } else if (has_slots(instance->kind)) {
    memcpy((char*)instance->accumulator + (size_t)slot * bytes, input, bytes);
  } else if (slot == 0) {
    memcpy(instance->accumulator, input, bytes);
  } else {
    merge_into(instance->dtype, request->merge, instance->accumulator, input,
               instance->num_elements);
  }
  if (++instance->arrived < instance->group_size) return loom_ok_status();
  if (instance->kind == KIND_BROADCAST && instance->senders != 1) {
    char what[128];
    snprintf(what, sizeof(what), "a broadcast needs exactly one sender, got %d",
             (int)instance->senders);
    return instance_error(request, LOOM_STATUS_INVALID_ARGUMENT, what);
  }
  if (is_ordered(instance->kind)) {
    LOOM_RETURN_IF_ERROR(rank_participants_locked(instance, request));
  }
  if ((instance->kind == KIND_ALL_REDUCE ||
       instance->kind == KIND_REDUCE_SCATTER) &&
      request->final_op == LOOM__COLLECTIVE_FINAL_DIV) {
    divide(instance->dtype, instance->accumulator, instance->num_elements,
           instance->group_size);
  }
  instance->complete = true;
  pthread_cond_broadcast(&instance->cond);
  return loom_ok_status();
}

// The result for the participant in `slot` of a complete instance.
static void copy_result_locked(const instance_t* instance, int32_t slot,
                               loom_tensor_t* output) {
  char* out = loom_tensor_data(output);
  const char* from = instance->accumulator;
  size_t out_bytes = loom_tensor_byte_size(output);
  int32_t n = instance->group_size;
  switch (instance->kind) {
    case KIND_ALL_REDUCE:
    case KIND_BROADCAST:
      memcpy(out, from, out_bytes);
      break;
    case KIND_ALL_GATHER: {
      size_t bytes = out_bytes / (size_t)n;  // one input
      for (int32_t r = 0; r < n; ++r) {
        memcpy(out + (size_t)r * bytes,
               from + (size_t)instance->slot_of_rank[r] * bytes, bytes);
      }
      break;
    }
    case KIND_REDUCE_SCATTER:
      // The output is this rank's part of the reduction.
      memcpy(out, from + (size_t)instance->rank_of_slot[slot] * out_bytes,
             out_bytes);
      break;
    case KIND_ALL_TO_ALL: {
      // Part j of the output: this rank's part of rank j's input.
      size_t part = out_bytes / (size_t)n;
      size_t mine = (size_t)instance->rank_of_slot[slot];
      for (int32_t j = 0; j < n; ++j) {
        memcpy(
            out + (size_t)j * part,
            from + (size_t)instance->slot_of_rank[j] * out_bytes + mine * part,
            part);
      }
      break;
    }
  }
}

// A collective of `kind`; a broadcast's sender is_sender.
static loom_status_t local_run(const loom__collective_reduce_t* request,
                               kind_t kind, bool is_sender,
                               loom_tensor_t* output) {
  pthread_mutex_lock(&g_mutex);
  instance_t* instance = find_locked(request);
  loom_status_t status = loom_ok_status();
  if (!instance) status = create_locked(request, kind, &instance);
  if (status) {
    pthread_mutex_unlock(&g_mutex);
    return status;
  }
  instance->present++;
  instance->joined++;
  int32_t slot = 0;
  if (!instance->error) {
    loom_status_t error = check_locked(instance, request, kind);
    if (!error) error = contribute_locked(instance, request, is_sender, &slot);
    if (error) {
      instance->error = error;
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
    copy_result_locked(instance, slot, output);
  }
  leave_locked(instance);
  pthread_mutex_unlock(&g_mutex);
  return status;
}

static loom_status_t local_all_gather(void* state,
                                      const loom__collective_reduce_t* request,
                                      loom_tensor_t* output) {
  (void)state;
  return local_run(request, KIND_ALL_GATHER, false, output);
}

static loom_status_t local_reduce_scatter(
    void* state, const loom__collective_reduce_t* request,
    loom_tensor_t* output) {
  (void)state;
  return local_run(request, KIND_REDUCE_SCATTER, false, output);
}

static loom_status_t local_all_to_all(void* state,
                                      const loom__collective_reduce_t* request,
                                      loom_tensor_t* output) {
  (void)state;
  return local_run(request, KIND_ALL_TO_ALL, false, output);
}

static loom_status_t local_all_reduce(void* state,
                                      const loom__collective_reduce_t* request,
                                      loom_tensor_t* output) {
  (void)state;
  return local_run(request, KIND_ALL_REDUCE, false, output);
}

static loom_status_t local_broadcast(void* state,
                                     const loom__collective_reduce_t* request,
                                     bool is_sender, loom_tensor_t* data) {
  (void)state;
  return local_run(request, KIND_BROADCAST, is_sender, data);
}

static const loom__collective_backend_t kLocalBackend = {
    .name = "local",
    .all_reduce = local_all_reduce,
    .all_gather = local_all_gather,
    .broadcast = local_broadcast,
    .reduce_scatter = local_reduce_scatter,
    .all_to_all = local_all_to_all,
    .state = NULL,
};

const loom__collective_backend_t* loom__collective_local_backend(void) {
  return &kLocalBackend;
}
