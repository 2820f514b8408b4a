// TensorFlow's eager cancellation managers: a TFE_CancellationManager is a
// loom_cancellation_t.

#include "compat/tf_status_internal.h"
#include "loom/cancellation.h"
#include "loom/eager.h"
#include "tensorflow/c/eager/c_api_experimental.h"

static loom_cancellation_t* unwrap(TFE_CancellationManager* manager) {
  return (loom_cancellation_t*)manager;
}

TFE_CancellationManager* TFE_NewCancellationManager(void) {
  loom_cancellation_t* cancellation = NULL;
  loom_status_t status =
      loom_cancellation_create(loom_allocator_default(), &cancellation);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return (TFE_CancellationManager*)cancellation;
}

bool TFE_CancellationManagerIsCancelled(TFE_CancellationManager* manager) {
  return loom_cancellation_is_cancelled(unwrap(manager));
}

bool TFE_CancellationManagerIsCancelling(TFE_CancellationManager* manager) {
  return loom_cancellation_is_cancelling(unwrap(manager));
}

void TFE_CancellationManagerStartCancel(TFE_CancellationManager* manager) {
  loom_cancellation_start(unwrap(manager));
}

TFE_CancellationToken TFE_CancellationManagerGetToken(
    TFE_CancellationManager* manager) {
  return loom_cancellation_new_token(unwrap(manager));
}

bool TFE_CancellationManagerRegisterCallback(
    TFE_CancellationManager* manager, TFE_CancellationToken token,
    const TFE_CancelCallback* c_callback, const char* callback_name) {
  (void)callback_name;
  if (!c_callback || !c_callback->callback) return false;
  return loom_cancellation_register(unwrap(manager), token,
                                    c_callback->callback, c_callback->context);
}

bool TFE_CancellationManagerDeregisterCallback(TFE_CancellationManager* manager,
                                               TFE_CancellationToken token) {
  return loom_cancellation_deregister(unwrap(manager), token);
}

bool TFE_CancellationManagerTryDeregisterCallback(
    TFE_CancellationManager* manager, TFE_CancellationToken token) {
  return loom_cancellation_try_deregister(unwrap(manager), token);
}

void TFE_DeleteCancellationManager(TFE_CancellationManager* manager) {
  loom_cancellation_release(unwrap(manager));
}

void TFE_OpSetCancellationManager(TFE_Op* op,
                                  TFE_CancellationManager* cancellation_manager,
                                  TF_Status* status) {
  loom__tf_status_set(
      status, op ? loom_eager_op_set_cancellation((loom_eager_op_t*)op,
                                                  unwrap(cancellation_manager))
                 : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                    "TFE_OpSetCancellationManager: op is "
                                    "NULL"));
}
