// Cancellation of chosen work: a token-keyed list of callbacks under a
// mutex, run once by the thread that starts cancelling.

#include "loom/cancellation.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "base/ref_count.h"

typedef struct callback_t {
  loom_cancellation_token_t token;
  loom_cancellation_fn_t fn;
  void* arg;
} callback_t;

enum { kStateIdle = 0, kStateCancelling = 1, kStateCancelled = 2 };

struct loom_cancellation_t {
  loom_allocator_t allocator;
  loom__ref_count_t ref_count;
  _Atomic int state;
  _Atomic int64_t next_token;
  pthread_mutex_t mutex;
  pthread_cond_t done;  // signalled when the callbacks have all run
  callback_t* callbacks;
  int32_t count;
  int32_t capacity;
};

loom_status_t loom_cancellation_create(loom_allocator_t allocator,
                                       loom_cancellation_t** out_cancellation) {
  if (!out_cancellation) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_cancellation_create: out_cancellation is "
                            "NULL");
  }
  *out_cancellation = NULL;
  loom_cancellation_t* cancellation = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(allocator, sizeof(*cancellation),
                                             (void**)&cancellation));
  cancellation->allocator = allocator;
  loom__ref_count_init(&cancellation->ref_count);
  atomic_init(&cancellation->state, kStateIdle);
  atomic_init(&cancellation->next_token, 0);
  pthread_mutex_init(&cancellation->mutex, NULL);
  pthread_cond_init(&cancellation->done, NULL);
  *out_cancellation = cancellation;
  return loom_ok_status();
}

void loom_cancellation_retain(loom_cancellation_t* cancellation) {
  if (cancellation) loom__ref_count_inc(&cancellation->ref_count);
}

void loom_cancellation_release(loom_cancellation_t* cancellation) {
  if (!cancellation || !loom__ref_count_dec(&cancellation->ref_count)) return;
  pthread_cond_destroy(&cancellation->done);
  pthread_mutex_destroy(&cancellation->mutex);
  loom_allocator_free(cancellation->allocator, cancellation->callbacks);
  loom_allocator_free(cancellation->allocator, cancellation);
}

void loom_cancellation_start(loom_cancellation_t* cancellation) {
  if (!cancellation) return;
  pthread_mutex_lock(&cancellation->mutex);
  if (atomic_load(&cancellation->state) != kStateIdle) {
    pthread_mutex_unlock(&cancellation->mutex);
    return;
  }
  atomic_store(&cancellation->state, kStateCancelling);
  // The list is ours now: registration refuses from here on and
  // deregistration waits, so it can be walked without the lock (a callback
  // may call back into the cancellation).
  callback_t* callbacks = cancellation->callbacks;
  int32_t count = cancellation->count;
  cancellation->callbacks = NULL;
  cancellation->count = cancellation->capacity = 0;
  pthread_mutex_unlock(&cancellation->mutex);
  for (int32_t i = 0; i < count; ++i) callbacks[i].fn(callbacks[i].arg);
  loom_allocator_free(cancellation->allocator, callbacks);
  pthread_mutex_lock(&cancellation->mutex);
  atomic_store(&cancellation->state, kStateCancelled);
  pthread_cond_broadcast(&cancellation->done);
  pthread_mutex_unlock(&cancellation->mutex);
}

bool loom_cancellation_is_cancelled(const loom_cancellation_t* cancellation) {
  return cancellation &&
         atomic_load_explicit(&cancellation->state, memory_order_acquire) ==
             kStateCancelled;
}

bool loom_cancellation_is_cancelling(const loom_cancellation_t* cancellation) {
  return cancellation &&
         atomic_load_explicit(&cancellation->state, memory_order_acquire) ==
             kStateCancelling;
}

loom_status_t loom_cancellation_error(const char* what) {
  // TensorFlow's words for an op stopped by its cancellation manager.
  return what ? loom_make_status(LOOM_STATUS_CANCELLED,
                                 "%s: Operation was cancelled", what)
              : loom_make_status(LOOM_STATUS_CANCELLED,
                                 "Operation was cancelled");
}

loom_cancellation_token_t loom_cancellation_new_token(
    loom_cancellation_t* cancellation) {
  if (!cancellation) return -1;
  return atomic_fetch_add(&cancellation->next_token, 1);
}

static int32_t find_locked(const loom_cancellation_t* cancellation,
                           loom_cancellation_token_t token) {
  for (int32_t i = 0; i < cancellation->count; ++i) {
    if (cancellation->callbacks[i].token == token) return i;
  }
  return -1;
}

bool loom_cancellation_register(loom_cancellation_t* cancellation,
                                loom_cancellation_token_t token,
                                loom_cancellation_fn_t fn, void* arg) {
  if (!cancellation || !fn || token < 0) return false;
  bool registered = false;
  pthread_mutex_lock(&cancellation->mutex);
  if (atomic_load(&cancellation->state) == kStateIdle &&
      find_locked(cancellation, token) < 0) {
    if (cancellation->count == cancellation->capacity) {
      int32_t capacity =
          cancellation->capacity ? 2 * cancellation->capacity : 4;
      callback_t* grown = NULL;
      loom_status_t status = loom_allocator_malloc(
          cancellation->allocator, sizeof(*grown) * (size_t)capacity,
          (void**)&grown);
      if (status) {
        loom_status_free(status);
      } else {
        if (cancellation->count) {
          memcpy(grown, cancellation->callbacks,
                 sizeof(*grown) * (size_t)cancellation->count);
        }
        loom_allocator_free(cancellation->allocator, cancellation->callbacks);
        cancellation->callbacks = grown;
        cancellation->capacity = capacity;
      }
    }
    if (cancellation->count < cancellation->capacity) {
      cancellation->callbacks[cancellation->count++] =
          (callback_t){.token = token, .fn = fn, .arg = arg};
      registered = true;
    }
  }
  pthread_mutex_unlock(&cancellation->mutex);
  return registered;
}

static bool remove_callback(loom_cancellation_t* cancellation,
                            loom_cancellation_token_t token, bool wait) {
  if (!cancellation) return false;
  pthread_mutex_lock(&cancellation->mutex);
  if (atomic_load(&cancellation->state) != kStateIdle) {
    while (wait && atomic_load(&cancellation->state) != kStateCancelled) {
      pthread_cond_wait(&cancellation->done, &cancellation->mutex);
    }
    pthread_mutex_unlock(&cancellation->mutex);
    return false;
  }
  int32_t index = find_locked(cancellation, token);
  if (index >= 0) {
    cancellation->callbacks[index] =
        cancellation->callbacks[--cancellation->count];
  }
  pthread_mutex_unlock(&cancellation->mutex);
  return index >= 0;
}

bool loom_cancellation_deregister(loom_cancellation_t* cancellation,
                                  loom_cancellation_token_t token) {
  return remove_callback(cancellation, token, true);
}

bool loom_cancellation_try_deregister(loom_cancellation_t* cancellation,
                                      loom_cancellation_token_t token) {
  return remove_callback(cancellation, token, false);
}
