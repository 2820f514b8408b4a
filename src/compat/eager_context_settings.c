// TensorFlow's experimental context settings: logical CPU devices, soft and
// logged placement, steps, run metadata, and the cluster calls a
// single-process runtime answers with FAILED_PRECONDITION or UNIMPLEMENTED.

#include <stdlib.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "frontend/frontend_internal.h"
#include "loom/eager.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"

static loom_context_t* unwrap(TFE_Context* ctx) {
  return (loom_context_t*)ctx;
}

static loom_status_t null_context(const char* function) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: ctx is NULL",
                          function);
}

void TFE_SetLogicalCpuDevices(TFE_Context* ctx, int num_cpus,
                              const char* prefix, TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status, null_context("TFE_SetLogicalCpuDevices"));
    return;
  }
  // Loom's devices live in this process: the local task's prefix only.
  if (prefix && *prefix &&
      strcmp(prefix, "/job:localhost/replica:0/task:0") != 0) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_SetLogicalCpuDevices: prefix '%s' is "
                                 "not this process's task "
                                 "'/job:localhost/replica:0/task:0'",
                                 prefix));
    return;
  }
  loom__tf_status_set(status,
                      loom_context_set_cpu_device_count(unwrap(ctx), num_cpus));
}

void TFE_ContextSetSoftDevicePlacement(TFE_Context* ctx, unsigned char enable,
                                       TF_Status* status) {
  loom_context_set_soft_placement(unwrap(ctx), enable != 0);
  loom__tf_status_set(status, ctx ? loom_ok_status()
                                  : null_context("TFE_ContextSetSoftDevice"
                                                 "Placement"));
}

void TFE_ContextSetLogDevicePlacement(TFE_Context* ctx, unsigned char enable,
                                      TF_Status* status) {
  loom_context_set_log_placement(unwrap(ctx), enable != 0);
  loom__tf_status_set(status, ctx ? loom_ok_status()
                                  : null_context("TFE_ContextSetLogDevice"
                                                 "Placement"));
}

// Accepted: eager ops already run as TFRT's op-by-op runtime runs them, and
// there is no compiler to rewrite for.
void TFE_ContextSetRunEagerOpAsFunction(TFE_Context* ctx, unsigned char enable,
                                        TF_Status* status) {
  (void)enable;
  loom__tf_status_set(status,
                      ctx ? loom_ok_status()
                          : null_context("TFE_ContextSetRunEagerOpAsFunction"));
}

void TFE_ContextSetJitCompileRewrite(TFE_Context* ctx, unsigned char enable,
                                     TF_Status* status) {
  (void)enable;
  loom__tf_status_set(
      status,
      ctx ? loom_ok_status() : null_context("TFE_ContextSetJitCompileRewrite"));
}

// Steps group the ops of one training step in TensorFlow's step
// containers; Loom keeps no per-step state.
void TFE_ContextStartStep(TFE_Context* ctx) {
  (void)ctx;
}
void TFE_ContextEndStep(TFE_Context* ctx) {
  (void)ctx;
}

uint64_t TFE_GetContextId(TFE_Context* ctx) {
  return ctx ? unwrap(ctx)->id : 0;
}

// Run metadata: Loom collects no step statistics, so the exported
// RunMetadata is the empty message.
void TFE_ContextEnableRunMetadata(TFE_Context* ctx) {
  (void)ctx;
}
void TFE_ContextDisableRunMetadata(TFE_Context* ctx) {
  (void)ctx;
}

static void set_empty(TF_Buffer* buf) {
  if (buf->data_deallocator) {
    buf->data_deallocator((void*)buf->data, buf->length);
  }
  buf->data = NULL;
  buf->length = 0;
  buf->data_deallocator = NULL;
}

void TFE_ContextExportRunMetadata(TFE_Context* ctx, TF_Buffer* buf,
                                  TF_Status* status) {
  if (!ctx || !buf) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "TFE_ContextExportRunMetadata: %s is NULL",
                                 !ctx ? "ctx" : "buf"));
    return;
  }
  set_empty(buf);
  loom__tf_status_set(status, loom_ok_status());
}

// Only TFRT's debug builds record them in TensorFlow: the empty list.
void TFE_GetExecutedOpNames(TFE_Context* ctx, TF_Buffer* buf,
                            TF_Status* status) {
  if (!ctx || !buf) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TFE_GetExecutedOpNames: %s is NULL",
                                         !ctx ? "ctx" : "buf"));
    return;
  }
  set_empty(buf);
  loom__tf_status_set(status, loom_ok_status());
}

//===----------------------------------------------------------------------===//
// Clusters
//===----------------------------------------------------------------------===//

// TensorFlow's words when a context has no coordination service.
static void no_coordination(TF_Status* status) {
  loom__tf_status_set(status,
                      loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                                       "Coordination service agent is not "
                                       "enabled."));
}

void TFE_InsertConfigKeyValue(TFE_Context* ctx, const char* key,
                              const char* value, TF_Status* status) {
  (void)ctx, (void)key, (void)value;
  no_coordination(status);
}

void TFE_GetConfigKeyValue(TFE_Context* ctx, const char* key,
                           TF_Buffer* value_buf, TF_Status* status) {
  (void)ctx, (void)key, (void)value_buf;
  no_coordination(status);
}

void TFE_DeleteConfigKeyValue(TFE_Context* ctx, const char* key,
                              TF_Status* status) {
  (void)ctx, (void)key;
  no_coordination(status);
}

void TFE_ReportErrorToCluster(TFE_Context* ctx, int error_code,
                              const char* error_message, TF_Status* status) {
  (void)ctx, (void)error_code, (void)error_message;
  no_coordination(status);
}

static void single_process(TF_Status* status, const char* function) {
  loom__tf_status_set(status,
                      loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                       "%s: Loom's eager contexts run in one "
                                       "process; there are no remote workers",
                                       function));
}

void TFE_ContextSetServerDef(TFE_Context* ctx, int keep_alive_secs,
                             const void* proto, size_t proto_len,
                             TF_Status* status) {
  (void)ctx, (void)keep_alive_secs, (void)proto, (void)proto_len;
  single_process(status, "TFE_ContextSetServerDef");
}

void TFE_ContextUpdateServerDef(TFE_Context* ctx, int keep_alive_secs,
                                const void* proto, size_t proto_len,
                                TF_Status* status) {
  (void)ctx, (void)keep_alive_secs, (void)proto, (void)proto_len;
  single_process(status, "TFE_ContextUpdateServerDef");
}

bool TFE_ContextCheckAlive(TFE_Context* ctx, const char* worker_name,
                           TF_Status* status) {
  (void)ctx, (void)worker_name;
  single_process(status, "TFE_ContextCheckAlive");
  return false;
}
