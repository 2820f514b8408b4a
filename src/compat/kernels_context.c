// The parts of TensorFlow's kernel C API that concern devices, graphs and
// the executor, which Loom's host kernels do not have: each answers as
// TensorFlow does for a CPU kernel outside any graph, or reports why it
// cannot (kernels.h states which).

#include <string.h>

#include "compat/tf_status_internal.h"
#include "registry/kernel_context.h"
#include "registry/op_registry_internal.h"
#include "tensorflow/c/kernels.h"

static loom_kernel_context_t* context_of(TF_OpKernelContext* ctx) {
  return (loom_kernel_context_t*)ctx;
}

static const char* op_name_of(TF_OpKernelContext* ctx) {
  return ctx ? context_of(ctx)->op->name : "(no kernel context)";
}

static TF_StringView view_of(const char* text) {
  TF_StringView view = {text, strlen(text)};
  return view;
}

void TF_RegisterKernelBuilderWithKernelDef(const char* serialized_kernel_def,
                                           const char* name,
                                           TF_KernelBuilder* builder,
                                           TF_Status* status) {
  if (!serialized_kernel_def) {
    TF_RegisterKernelBuilder(name, builder, status);
    return;
  }
  // The builder is ours either way: free it, as a failed registration does.
  TF_DeleteKernelBuilder(builder);
  loom_status_t result = loom_make_status(
      LOOM_STATUS_UNIMPLEMENTED,
      "TF_RegisterKernelBuilderWithKernelDef: kernel '%s': a serialized "
      "KernelDef is not supported; pass NULL and describe the kernel with "
      "the TF_KernelBuilder_* calls",
      name ? name : "(null)");
  // While a plugin loads, a failed registration fails the load.
  loom__registration_journal_report(result);
  loom__tf_status_set(status, result);
}

TF_Buffer* TF_OpKernelConstruction_GetNodeDef(TF_OpKernelConstruction* ctx,
                                              TF_Status* status) {
  loom_kernel_construction_t* construction = (loom_kernel_construction_t*)ctx;
  loom__tf_status_set(
      status,
      loom_make_status(
          LOOM_STATUS_UNIMPLEMENTED,
          "TF_OpKernelConstruction_GetNodeDef: op '%s' is not a "
          "graph node in Loom and has no NodeDef",
          construction ? construction->op->name : "(no kernel construction)"));
  return NULL;
}

SP_Stream TF_GetStream(TF_OpKernelContext* ctx, TF_Status* status) {
  (void)ctx;
  // TensorFlow's words for a CPU kernel, the only kind Loom runs.
  TF_SetStatus(status, TF_FAILED_PRECONDITION,
               "Accessing device stream is not supported for a CPU device.");
  return NULL;
}

// TensorFlow's MessageToBuffer refuses a buffer that already holds data.
static bool fill_empty_message(const char* function, TF_OpKernelContext* ctx,
                               TF_Buffer* buffer, TF_Status* status) {
  if (!ctx || !buffer) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                                 function, !ctx ? "ctx" : "buffer"));
    return false;
  }
  if (buffer->data) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "%s: op '%s': passing a non-empty TF_Buffer "
                                 "is invalid",
                                 function, op_name_of(ctx)));
    return false;
  }
  buffer->length = 0;
  loom__tf_status_set(status, loom_ok_status());
  return true;
}

void TF_GetSerializedFunctionDefLibrary(
    TF_OpKernelContext* ctx, TF_Buffer* serialized_function_def_library,
    TF_Status* status) {
  fill_empty_message("TF_GetSerializedFunctionDefLibrary", ctx,
                     serialized_function_def_library, status);
}

void TF_GetSerializedConfigProto(TF_OpKernelContext* ctx,
                                 TF_Buffer* serialized_config_proto,
                                 TF_Status* status) {
  fill_empty_message("TF_GetSerializedConfigProto", ctx,
                     serialized_config_proto, status);
}

void TF_GetSerializedResourceHandleProto(
    TF_OpKernelContext* ctx, int i, TF_Buffer* serialized_resource_handle_proto,
    TF_Status* status) {
  (void)serialized_resource_handle_proto;
  if (!ctx) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_GetSerializedResourceHandleProto: "
                                         "ctx is NULL"));
    return;
  }
  loom_kernel_context_t* context = context_of(ctx);
  if (i < 0 || i >= context->num_inputs) {
    loom__tf_status_set(
        status,
        loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                         "TF_GetSerializedResourceHandleProto: op '%s': input "
                         "index %d is outside [0, %d)",
                         context->op->name, i, context->num_inputs));
    return;
  }
  loom__tf_status_set(
      status,
      loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                       "TF_GetSerializedResourceHandleProto: op '%s', input "
                       "%d: Loom's resource tensors have no "
                       "ResourceHandleProto form",
                       context->op->name, i));
}

uint64_t TF_GetFrameId(TF_OpKernelContext* ctx) {
  (void)ctx;
  return 0;
}

int64_t TF_GetIterId(TF_OpKernelContext* ctx) {
  (void)ctx;
  return 0;
}

int TF_GetDeviceId(TF_OpKernelContext* ctx) {
  (void)ctx;
  return 0;
}

int TF_GetGraphDefVersion(TF_OpKernelContext* ctx) {
  (void)ctx;
  return 0;
}

TF_StringView TF_GetResourceMgrDefaultContainerName(TF_OpKernelContext* ctx) {
  (void)ctx;
  return view_of("localhost");
}

TF_StringView TF_GetOpKernelRequestedInput(TF_OpKernelContext* ctx,
                                           size_t index) {
  (void)ctx;
  (void)index;
  return view_of("");
}

void TF_IncNumDeferredOps(TF_OpKernelContext* context) {
  (void)context;
}

void TF_DecNumDeferredOps(TF_OpKernelContext* context) {
  (void)context;
}
