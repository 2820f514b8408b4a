// TensorFlow's functions in the eager C API: TF_Function (a FunctionDef
// imported), TFE_ContextAddFunctionDef / AddFunction / HasFunction /
// RemoveFunction over the context's function library (loom/function.h).

#include <string.h>

#include "compat/tf_function_def.h"
#include "compat/tf_status_internal.h"
#include "loom/function.h"
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/eager/c_api.h"

struct TF_Function {
  loom_function_t* function;
  void* bytes;  // the FunctionDef it was imported from
  size_t size;
};

static loom_status_t null_argument(const char* function, const char* name) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                          function, name);
}

TF_Function* TF_FunctionImportFunctionDef(const void* proto, size_t proto_len,
                                          TF_Status* status) {
  loom_function_t* function = NULL;
  loom_status_t result =
      loom__tf_function_from_def(proto, proto_len, &function);
  TF_Function* imported = NULL;
  if (!result) {
    result = loom_allocator_calloc(loom_allocator_system(), sizeof(*imported),
                                   (void**)&imported);
  }
  if (!result) {
    result = loom_allocator_malloc(loom_allocator_system(),
                                   proto_len ? proto_len : 1, &imported->bytes);
  }
  if (result) {
    if (imported) loom_allocator_free(loom_allocator_system(), imported);
    loom_function_release(function);
    loom__tf_status_set(status, result);
    return NULL;
  }
  if (proto_len) memcpy(imported->bytes, proto, proto_len);
  imported->size = proto_len;
  imported->function = function;
  loom__tf_status_set(status, loom_ok_status());
  return imported;
}

void TF_DeleteFunction(TF_Function* func) {
  if (!func) return;
  loom_function_release(func->function);
  loom_allocator_free(loom_allocator_system(), func->bytes);
  loom_allocator_free(loom_allocator_system(), func);
}

const char* TF_FunctionName(TF_Function* func) {
  return func ? loom_function_name(func->function) : NULL;
}

static void free_bytes(void* data, size_t length) {
  (void)length;
  loom_allocator_free(loom_allocator_system(), data);
}

void TF_FunctionToFunctionDef(TF_Function* func, TF_Buffer* output_func_def,
                              TF_Status* status) {
  if (!func || !output_func_def) {
    loom__tf_status_set(status,
                        null_argument("TF_FunctionToFunctionDef",
                                      !func ? "func" : "output_func_def"));
    return;
  }
  void* copy = NULL;
  loom_status_t result = loom_allocator_malloc(
      loom_allocator_system(), func->size ? func->size : 1, &copy);
  if (result) {
    loom__tf_status_set(status, result);
    return;
  }
  if (func->size) memcpy(copy, func->bytes, func->size);
  if (output_func_def->data_deallocator) {
    output_func_def->data_deallocator((void*)output_func_def->data,
                                      output_func_def->length);
  }
  output_func_def->data = copy;
  output_func_def->length = func->size;
  output_func_def->data_deallocator = free_bytes;
  loom__tf_status_set(status, loom_ok_status());
}

void TFE_ContextAddFunctionDef(TFE_Context* ctx,
                               const char* serialized_function_def, size_t size,
                               TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status,
                        null_argument("TFE_ContextAddFunctionDef", "ctx"));
    return;
  }
  loom_function_t* function = NULL;
  loom_status_t result =
      loom__tf_function_from_def(serialized_function_def, size, &function);
  if (!result) {
    result = loom_context_add_function((loom_context_t*)ctx, function);
  }
  loom_function_release(function);
  loom__tf_status_set(status, result);
}

void TFE_ContextAddFunction(TFE_Context* ctx, TF_Function* function,
                            TF_Status* status) {
  if (!ctx || !function) {
    loom__tf_status_set(status, null_argument("TFE_ContextAddFunction",
                                              !ctx ? "ctx" : "function"));
    return;
  }
  loom__tf_status_set(status, loom_context_add_function((loom_context_t*)ctx,
                                                        function->function));
}

void TFE_ContextRemoveFunction(TFE_Context* ctx, const char* name,
                               TF_Status* status) {
  if (!ctx || !name) {
    loom__tf_status_set(status, null_argument("TFE_ContextRemoveFunction",
                                              !ctx ? "ctx" : "name"));
    return;
  }
  loom__tf_status_set(status,
                      loom_context_remove_function((loom_context_t*)ctx, name));
}

unsigned char TFE_ContextHasFunction(TFE_Context* ctx, const char* name) {
  return loom_context_has_function((loom_context_t*)ctx, name) ? 1 : 0;
}
