// TF_GetRendezvous: an in-process rendezvous, one per host context (a
// resource of its resource manager), through which kernels on any thread
// hand tensors to each other by key. A key holds a queue: the tensors sent
// and not yet received, or the receives waiting for a tensor (never both).

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "loom/cancellation.h"
#include "loom/host_context.h"
#include "loom/tensor.h"
#include "registry/kernel_context.h"
#include "tensorflow/c/kernels.h"

typedef struct item_t item_t;
typedef struct rendezvous_t rendezvous_t;

// A tensor sent and not yet received, or a receive waiting.
struct item_t {
  item_t* next;
  rendezvous_t* rendezvous;
  char* key;
  size_t key_size;
  bool is_send;
  loom_tensor_t* tensor;  // a send's, one reference
  bool is_dead;
  TF_RendezvousDoneCallbackImpl on_done;  // a receive's
  loom_cancellation_t* cancellation;      // a receive's, retained; may be NULL
  loom_cancellation_token_t token;
};

struct rendezvous_t {
  atomic_int ref_count;
  loom_allocator_t allocator;
  pthread_mutex_t mutex;
  item_t* head;  // in arrival order
  item_t* tail;
  loom_status_t aborted;  // once start_abort ran: its status
};

static void rendezvous_retain(void* resource) {
  atomic_fetch_add_explicit(&((rendezvous_t*)resource)->ref_count, 1,
                            memory_order_relaxed);
}

static void item_free(item_t* item) {
  loom_allocator_t allocator = item->rendezvous->allocator;
  if (item->tensor) loom_tensor_release(item->tensor);
  if (item->cancellation) loom_cancellation_release(item->cancellation);
  loom_allocator_free(allocator, item->key);
  loom_allocator_free(allocator, item);
}

static void finish_receive(item_t* receive, loom_status_t status,
                           const loom_tensor_t* tensor, bool is_dead);

static void rendezvous_release(void* resource) {
  rendezvous_t* r = resource;
  if (atomic_fetch_sub_explicit(&r->ref_count, 1, memory_order_acq_rel) != 1) {
    return;
  }
  // The host context is going: tensors nobody received are dropped, and
  // receives still waiting fail (their cancellation callbacks removed
  // first, so that none runs on a freed receive).
  for (item_t* item = r->head; item;) {
    item_t* next = item->next;
    if (item->is_send) {
      item_free(item);
    } else {
      if (item->cancellation) {
        loom_cancellation_deregister(item->cancellation, item->token);
      }
      finish_receive(item,
                     loom_make_status(LOOM_STATUS_ABORTED,
                                      "the rendezvous was destroyed (its "
                                      "host context was) before a tensor "
                                      "was sent under the key"),
                     NULL, false);
    }
    item = next;
  }
  loom_status_free(r->aborted);
  pthread_mutex_destroy(&r->mutex);
  loom_allocator_free(r->allocator, r);
}

static const loom_resource_type_t kRendezvousType = {
    .name = "Rendezvous",
    .retain = rendezvous_retain,
    .release = rendezvous_release,
};

static loom_status_t rendezvous_create(void* user_data, void** out) {
  loom_allocator_t allocator = *(const loom_allocator_t*)user_data;
  rendezvous_t* r = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*r), (void**)&r));
  memset(r, 0, sizeof(*r));
  atomic_init(&r->ref_count, 1);
  r->allocator = allocator;
  pthread_mutex_init(&r->mutex, NULL);
  *out = r;
  return loom_ok_status();
}

// Unlinks the first item of `key` (any kind); NULL when there is none.
// Under the mutex.
static item_t* unlink_first(rendezvous_t* r, const char* key, size_t size) {
  item_t* previous = NULL;
  for (item_t* item = r->head; item; previous = item, item = item->next) {
    if (item->key_size != size || memcmp(item->key, key, size) != 0) continue;
    if (previous) {
      previous->next = item->next;
    } else {
      r->head = item->next;
    }
    if (r->tail == item) r->tail = previous;
    item->next = NULL;
    return item;
  }
  return NULL;
}

// Unlinks `target` when it is queued. Under the mutex.
static bool unlink_item(rendezvous_t* r, item_t* target) {
  item_t* previous = NULL;
  for (item_t* item = r->head; item; previous = item, item = item->next) {
    if (item != target) continue;
    if (previous) {
      previous->next = item->next;
    } else {
      r->head = item->next;
    }
    if (r->tail == item) r->tail = previous;
    item->next = NULL;
    return true;
  }
  return false;
}

static void append_item(rendezvous_t* r, item_t* item) {
  if (r->tail) {
    r->tail->next = item;
  } else {
    r->head = item;
  }
  r->tail = item;
}

// Runs a receive's done callback with `status` (consumed) or the tensor,
// then frees the receive.
static void finish_receive(item_t* receive, loom_status_t status,
                           const loom_tensor_t* tensor, bool is_dead) {
  TF_Status tf_status;
  loom__tf_status_initialize(&tf_status, receive->rendezvous->allocator);
  loom__tf_status_set(&tf_status, status);
  TF_RendezvousDoneCallback_Params params = {
      .context = receive->on_done.context,
      .status = &tf_status,
      .tensor = status ? NULL : (const TF_Tensor*)tensor,
      .is_dead = status ? false : is_dead,
  };
  if (receive->on_done.callback) {
    receive->on_done.callback(receive->on_done.context, &params);
  }
  loom__tf_status_deinitialize(&tf_status);
  item_free(receive);
}

static loom_status_t check_key(const char* what,
                               const TF_RendezvousParsedKey* key) {
  if (!key || (!key->full_key && key->full_key_size > 0)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: the key is %s",
                            what, key ? "NULL with a non-zero size" : "NULL");
  }
  return loom_ok_status();
}

// A new item holding a copy of the key.
static loom_status_t new_item(rendezvous_t* r,
                              const TF_RendezvousParsedKey* key, item_t** out) {
  item_t* item = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(r->allocator, sizeof(*item), (void**)&item));
  memset(item, 0, sizeof(*item));
  item->rendezvous = r;
  item->key_size = key->full_key_size;
  loom_status_t status = loom_allocator_malloc(
      r->allocator, item->key_size ? item->key_size : 1, (void**)&item->key);
  if (status) {
    loom_allocator_free(r->allocator, item);
    return status;
  }
  if (item->key_size) memcpy(item->key, key->full_key, item->key_size);
  *out = item;
  return loom_ok_status();
}

static void send_func(void* context, TF_RendezvousSend_Params* params) {
  rendezvous_t* r = context;
  if (!params) return;
  loom_status_t status =
      !r ? loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "TF_RendezvousSend: the rendezvous is NULL (from "
                            "TF_GetRendezvous with a NULL context)")
         : check_key("TF_RendezvousSend", params->key);
  if (!status && !params->tensor) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TF_RendezvousSend: key '%.*s': the tensor is "
                              "NULL",
                              (int)params->key->full_key_size,
                              params->key->full_key);
  }
  item_t* send = NULL;
  if (!status) status = new_item(r, params->key, &send);
  if (status) {
    loom__tf_status_set(params->status, status);
    return;
  }
  send->is_send = true;
  send->tensor = (loom_tensor_t*)params->tensor;
  loom_tensor_retain(send->tensor);
  send->is_dead = params->is_dead;
  pthread_mutex_lock(&r->mutex);
  if (r->aborted) {
    status = loom_status_clone(r->aborted);
    pthread_mutex_unlock(&r->mutex);
    item_free(send);
    loom__tf_status_set(params->status, status);
    return;
  }
  item_t* receive = NULL;
  if (r->head) {
    // A waiting receive of this key is first in its queue.
    receive = unlink_first(r, send->key, send->key_size);
    if (receive && receive->is_send) {
      // Sends are queued: put it back in front of the others.
      receive->next = r->head;
      r->head = receive;
      if (!r->tail) r->tail = receive;
      receive = NULL;
    }
  }
  if (!receive) {
    append_item(r, send);
    pthread_mutex_unlock(&r->mutex);
    loom__tf_status_set(params->status, loom_ok_status());
    return;
  }
  pthread_mutex_unlock(&r->mutex);
  // The receive's cancellation callback may be running: wait for it (it
  // finds the receive unlinked and does nothing).
  if (receive->cancellation) {
    loom_cancellation_deregister(receive->cancellation, receive->token);
  }
  loom__tf_status_set(params->status, loom_ok_status());
  finish_receive(receive, loom_ok_status(), send->tensor, send->is_dead);
  item_free(send);
}

// A receive's cancellation callback: fails it when it is still waiting.
static void cancel_receive(void* arg) {
  item_t* receive = arg;
  rendezvous_t* r = receive->rendezvous;
  pthread_mutex_lock(&r->mutex);
  bool waiting = unlink_item(r, receive);
  pthread_mutex_unlock(&r->mutex);
  if (waiting) {
    // TensorFlow's message.
    finish_receive(
        receive,
        loom_make_status(LOOM_STATUS_CANCELLED, "RecvAsync is cancelled."),
        NULL, false);
  }
}

static void fail_done(const TF_RendezvousDoneCallbackImpl* on_done,
                      loom_allocator_t allocator, loom_status_t status) {
  TF_Status tf_status;
  loom__tf_status_initialize(&tf_status, allocator);
  loom__tf_status_set(&tf_status, status);
  TF_RendezvousDoneCallback_Params params = {.context = on_done->context,
                                             .status = &tf_status};
  if (on_done->callback) on_done->callback(on_done->context, &params);
  loom__tf_status_deinitialize(&tf_status);
}

static void async_recv_func(void* context,
                            TF_RendezvousAsyncRecv_Params* params) {
  rendezvous_t* r = context;
  if (!params) return;
  loom_allocator_t allocator = r ? r->allocator : loom_allocator_default();
  loom_status_t status =
      !r ? loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "TF_RendezvousAsyncRecv: the rendezvous is NULL "
                            "(from TF_GetRendezvous with a NULL context)")
         : check_key("TF_RendezvousAsyncRecv", params->key);
  loom_cancellation_t* cancellation =
      params->args ? (loom_cancellation_t*)params->args->cancellation_manager
                   : NULL;
  if (!status && loom_cancellation_is_cancelling(cancellation)) {
    status = loom_make_status(LOOM_STATUS_CANCELLED, "RecvAsync is cancelled.");
  }
  item_t* receive = NULL;
  if (!status) status = new_item(r, params->key, &receive);
  if (status) {
    fail_done(&params->on_done, allocator, status);
    return;
  }
  receive->on_done = params->on_done;
  pthread_mutex_lock(&r->mutex);
  if (r->aborted) {
    status = loom_status_clone(r->aborted);
    pthread_mutex_unlock(&r->mutex);
    finish_receive(receive, status, NULL, false);
    return;
  }
  item_t* send = unlink_first(r, receive->key, receive->key_size);
  if (send && !send->is_send) {
    // Receives are queued: put it back and wait after them.
    send->next = r->head;
    r->head = send;
    if (!r->tail) r->tail = send;
    send = NULL;
  }
  if (send) {
    pthread_mutex_unlock(&r->mutex);
    finish_receive(receive, loom_ok_status(), send->tensor, send->is_dead);
    item_free(send);
    return;
  }
  if (cancellation) {
    loom_cancellation_retain(cancellation);
    receive->cancellation = cancellation;
    receive->token = loom_cancellation_new_token(cancellation);
    if (!loom_cancellation_register(cancellation, receive->token,
                                    cancel_receive, receive)) {
      pthread_mutex_unlock(&r->mutex);
      finish_receive(
          receive,
          loom_make_status(LOOM_STATUS_CANCELLED, "RecvAsync is cancelled."),
          NULL, false);
      return;
    }
  }
  append_item(r, receive);
  pthread_mutex_unlock(&r->mutex);
}

static void start_abort_func(void* context, const TF_Status* tf_status) {
  rendezvous_t* r = context;
  if (!r) return;
  loom_status_t status = loom__tf_status_clone(tf_status);
  if (!status) {
    // TensorFlow requires an error; an OK status aborts as CANCELLED.
    status =
        loom_make_status(LOOM_STATUS_CANCELLED, "the rendezvous was aborted");
  }
  pthread_mutex_lock(&r->mutex);
  if (r->aborted) {
    pthread_mutex_unlock(&r->mutex);
    loom_status_free(status);
    return;
  }
  r->aborted = status;
  item_t* items = r->head;
  r->head = r->tail = NULL;
  pthread_mutex_unlock(&r->mutex);
  for (item_t* item = items; item;) {
    item_t* next = item->next;
    if (item->is_send) {
      item_free(item);
    } else {
      if (item->cancellation) {
        loom_cancellation_deregister(item->cancellation, item->token);
      }
      finish_receive(item, loom_status_clone(status), NULL, false);
    }
    item = next;
  }
}

TF_RendezvousThunk TF_GetRendezvous(TF_OpKernelContext* ctx) {
  loom_kernel_context_t* context = (loom_kernel_context_t*)ctx;
  rendezvous_t* r = NULL;
  if (context && context->host) {
    loom_allocator_t allocator = loom_host_context_allocator(context->host);
    void* resource = NULL;
    loom_status_t status = loom_resource_manager_lookup_or_create(
        loom_host_context_resources(context->host), &kRendezvousType, "",
        "rendezvous", rendezvous_create, &allocator, &resource);
    if (status) {
      loom__kernel_context_fail(context, status);
    } else {
      // The resource manager keeps it while the host context lives.
      r = resource;
      rendezvous_release(r);
    }
  }
  TF_RendezvousThunk thunk = {
      .send = {.context = r, .send_func = send_func},
      .async_recv = {.context = r, .async_recv_func = async_recv_func},
      .start_abort = {.context = r, .start_abort_func = start_abort_func},
  };
  return thunk;
}
