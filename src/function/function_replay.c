// A function's replays (TensorFlow's op-handler design, "Replay before
// function execution"): a call whose ops would be placed on a handler with
// the execute_function_call hook is offered to it as one op. When the
// handler also summarises inputs (function_input_summary), the call has a
// key — each input's dtype, shape and summary — and a replay: the entry of
// the function's cache for that key, made when the handler first keeps
// data there (set_replay_data): what it derives once per key (a tape: what
// its gradient of the call needs), so that the calls of later steps, under
// new handlers of the same type, find it ready. A call the handler takes
// that finds its replay is a hit.

#include "function/function_replay.h"

#include <pthread.h>
#include <string.h>

#include "frontend/eager_op_internal.h"
#include "function/function_capture.h"
#include "function/function_internal.h"

typedef struct replay_t {
  struct replay_t* next;
  int32_t num_inputs;
  loom_tensor_metadata_t* metadata;  // per input
  loom_function_input_summary_t* summaries;
  void* data;  // the handler's
  void (*release)(void* data);
} replay_t;

struct loom__function_replays_t {
  loom_allocator_t allocator;
  pthread_mutex_t mutex;  // everything below
  replay_t* first;
  int32_t count;
};

typedef struct offered_t {
  loom_function_call_t call;
  loom_function_t* function;
  // The call's key (NULL: the handler gives no summaries: no replay) and
  // the replay found for it when the call was offered.
  struct loom__function_replays_t* replays;
  loom_tensor_metadata_t* metadata;
  loom_function_input_summary_t* summaries;
  replay_t* replay;
  loom__function_run_fn_t run;
  void* run_state;
} offered_t;

static void free_replay(loom_allocator_t allocator, replay_t* replay) {
  if (replay->release) replay->release(replay->data);
  loom_allocator_free(allocator, replay->metadata);
  loom_allocator_free(allocator, replay->summaries);
  loom_allocator_free(allocator, replay);
}

void loom__function_release_replays(loom_function_t* function) {
  struct loom__function_replays_t* replays =
      atomic_load_explicit(&function->replays, memory_order_acquire);
  if (!replays) return;
  for (replay_t* r = replays->first; r;) {
    replay_t* next = r->next;
    free_replay(replays->allocator, r);
    r = next;
  }
  pthread_mutex_destroy(&replays->mutex);
  loom_allocator_free(replays->allocator, replays);
}

static loom_status_t replays_of(loom_function_t* function,
                                struct loom__function_replays_t** out) {
  struct loom__function_replays_t* replays =
      atomic_load_explicit(&function->replays, memory_order_acquire);
  if (replays) {
    *out = replays;
    return loom_ok_status();
  }
  loom_allocator_t allocator = function->allocator;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*replays), (void**)&replays));
  replays->allocator = allocator;
  pthread_mutex_init(&replays->mutex, NULL);
  struct loom__function_replays_t* expected = NULL;
  if (!atomic_compare_exchange_strong_explicit(&function->replays, &expected,
                                               replays, memory_order_acq_rel,
                                               memory_order_acquire)) {
    pthread_mutex_destroy(&replays->mutex);
    loom_allocator_free(allocator, replays);
    replays = expected;  // made by another thread meanwhile
  }
  *out = replays;
  return loom_ok_status();
}

static bool same_metadata(const loom_tensor_metadata_t* a,
                          const loom_tensor_metadata_t* b) {
  return a->dtype == b->dtype && loom_shape_equal(&a->shape, &b->shape);
}

static bool matches(const replay_t* replay, int32_t n,
                    const loom_tensor_metadata_t* metadata,
                    const loom_function_input_summary_t* summaries) {
  if (replay->num_inputs != n) return false;
  for (int32_t i = 0; i < n; ++i) {
    if (!same_metadata(&replay->metadata[i], &metadata[i]) ||
        replay->summaries[i].kind != summaries[i].kind ||
        replay->summaries[i].bits != summaries[i].bits) {
      return false;
    }
  }
  return true;
}

// The replay of key (metadata, summaries), or NULL (lock held).
static replay_t* find_locked(struct loom__function_replays_t* replays,
                             int32_t n, const loom_tensor_metadata_t* metadata,
                             const loom_function_input_summary_t* summaries) {
  for (replay_t* r = replays->first; r; r = r->next) {
    if (matches(r, n, metadata, summaries)) return r;
  }
  return NULL;
}

// A new replay of key (metadata, summaries) holding `data` (lock held);
// NULL when the cache is full or memory runs out.
static replay_t* add_locked(struct loom__function_replays_t* replays, int32_t n,
                            const loom_tensor_metadata_t* metadata,
                            const loom_function_input_summary_t* summaries) {
  if (replays->count >= kFunctionMaxReplays) return NULL;
  loom_allocator_t allocator = replays->allocator;
  replay_t* replay = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*replay), (void**)&replay);
  if (!status) {
    replay->num_inputs = n;
    status =
        loom_allocator_calloc(allocator, sizeof(*metadata) * ((size_t)n + 1),
                              (void**)&replay->metadata);
  }
  if (!status) {
    status =
        loom_allocator_calloc(allocator, sizeof(*summaries) * ((size_t)n + 1),
                              (void**)&replay->summaries);
  }
  if (status) {
    loom_status_free(status);
    if (replay) free_replay(allocator, replay);
    return NULL;
  }
  memcpy(replay->metadata, metadata, sizeof(*metadata) * (size_t)n);
  memcpy(replay->summaries, summaries, sizeof(*summaries) * (size_t)n);
  replay->next = replays->first;
  replays->first = replay;
  replays->count++;
  return replay;
}

static loom_status_t run_offered(loom_function_call_t* call,
                                 loom_tensor_handle_t** results) {
  offered_t* offered = call->internal;
  if (!results) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': run: no results array",
                            call->function_name);
  }
  return offered->run(offered->run_state, results);
}

static bool set_replay_data(loom_function_call_t* call, void* data,
                            void (*release)(void* data)) {
  offered_t* offered = call ? call->internal : NULL;
  if (!offered || !offered->replays) return false;
  struct loom__function_replays_t* replays = offered->replays;
  int32_t n = call->num_inputs;
  pthread_mutex_lock(&replays->mutex);
  // Another call of the key may have made it meanwhile.
  replay_t* replay =
      find_locked(replays, n, offered->metadata, offered->summaries);
  bool set = false;
  if (!replay) {
    replay = add_locked(replays, n, offered->metadata, offered->summaries);
    set = replay != NULL;
    if (set) {
      atomic_fetch_add_explicit(&offered->function->replays_built, 1,
                                memory_order_relaxed);
    }
  } else {
    set = replay->data == NULL;
  }
  if (set) {
    replay->data = data;
    replay->release = release;
    call->replay_data = data;
  }
  pthread_mutex_unlock(&replays->mutex);
  return set;
}

loom_status_t loom__function_offer_call(
    loom_eager_op_t* op, loom_function_t* function, int32_t num_results,
    loom_op_handler_t* handler, loom__function_run_fn_t run, void* run_state,
    loom_tensor_handle_t** results, bool* out_taken) {
  *out_taken = false;
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
  int32_t n = loom_eager_op_num_inputs(op);
  for (int32_t i = 0; i < n; ++i) {
    // A missing input: the op-by-op call reports it.
    if (!op->inputs[i]) return loom_ok_status();
  }
  offered_t offered = {
      .call =
          {
              .struct_size = sizeof(loom_function_call_t),
              .function_name = function->name,
              .stateful = function->stateful,
              .inputs = op->inputs,
              .num_inputs = n,
              .num_captured = loom__function_num_captures(function),
              .num_outputs = num_results,
              .run = run_offered,
              .set_replay_data = set_replay_data,
          },
      .function = function,
      .run = run,
      .run_state = run_state,
  };
  offered.call.internal = &offered;
  loom_allocator_t allocator = loom_allocator_system();
  loom_status_t status = loom_ok_status();
  if (vtable->function_input_summary) {
    status = replays_of(function, &offered.replays);
    if (!status) {
      status = loom_allocator_calloc(
          allocator, sizeof(*offered.metadata) * ((size_t)n + 1),
          (void**)&offered.metadata);
    }
    if (!status) {
      status = loom_allocator_calloc(
          allocator, sizeof(*offered.summaries) * ((size_t)n + 1),
          (void**)&offered.summaries);
    }
    for (int32_t i = 0; !status && i < n; ++i) {
      status =
          loom_tensor_handle_wait_metadata(op->inputs[i], &offered.metadata[i]);
      if (!status) {
        status = vtable->function_input_summary(handler, op->inputs[i],
                                                &offered.summaries[i]);
      }
    }
    if (!status) {
      pthread_mutex_lock(&offered.replays->mutex);
      offered.replay =
          find_locked(offered.replays, n, offered.metadata, offered.summaries);
      if (offered.replay) offered.call.replay_data = offered.replay->data;
      pthread_mutex_unlock(&offered.replays->mutex);
    } else {
      status = loom_status_annotate(status, "function '%s'", function->name);
    }
  }
  if (!status) {
    status = vtable->execute_function_call(handler, &offered.call, results,
                                           out_taken);
  }
  if (!status && *out_taken && offered.replay) {
    atomic_fetch_add_explicit(&function->replay_hits, 1, memory_order_relaxed);
  }
  loom_allocator_free(allocator, offered.metadata);
  loom_allocator_free(allocator, offered.summaries);
  return status;
}
