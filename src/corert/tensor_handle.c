// Tensor handles: metadata + an async host tensor + the handler.

#include <string.h>

#include "corert/corert_internal.h"
#include "host/async_value_internal.h"
#include "loom/host_context.h"
#include "tensor/tensor_internal.h"

static void destroy_tensor_payload(void* payload) {
  loom_tensor_release(*(loom_tensor_t**)payload);
}

const loom_async_value_type_t loom_async_value_type_tensor = {
    .name = "tensor",
    .payload_size = sizeof(loom_tensor_t*),
    .destroy_payload = destroy_tensor_payload,
};

loom_status_t loom__tensor_error_value(loom_allocator_t allocator,
                                       loom_status_t error,
                                       loom_async_value_t** out_value) {
  return loom_async_value_create_error(allocator, &loom_async_value_type_tensor,
                                       error, out_value);
}

static loom_allocator_t handler_allocator(loom_op_handler_t* handler) {
  return handler->runtime->allocator;
}

static void initialize_handle(loom_tensor_handle_t* handle,
                              loom_op_handler_t* handler,
                              loom_async_value_t* value, bool embedded) {
  loom__ref_count_init(&handle->ref_count);
  handle->metadata_available = false;
  handle->value_embedded = embedded;
  handle->handler = handler;
  loom_op_handler_retain(handler);
  handle->value = value;
  handle->representation = NULL;
  atomic_init(&handle->tag, 0);
}

static loom_status_t new_handle(loom_op_handler_t* handler,
                                loom_async_value_t* value,
                                loom_tensor_handle_t** out_handle) {
  loom_tensor_handle_t* handle = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(handler_allocator(handler),
                                             sizeof(*handle), (void**)&handle));
  loom_async_value_retain(value);
  initialize_handle(handle, handler, value, false);
  *out_handle = handle;
  return loom_ok_status();
}

// Out of line on purpose: inlined into the cpu handler's short path (as
// link-time optimization may choose to), the tiny native op of
// bench_corert ran about 3 ns slower at the same instruction count.
__attribute__((noinline)) loom_status_t loom__tensor_handle_create_pending(
    loom_op_handler_t* handler, const loom_tensor_metadata_t* metadata,
    loom_tensor_handle_t** out_handle, loom_async_value_t** out_value) {
  loom_tensor_handle_t* handle = NULL;
  loom_async_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(loom__async_value_create_with_prefix(
      handler_allocator(handler), &loom_async_value_type_tensor,
      sizeof(*handle), &value, (void**)&handle));
  // The handle owns the value's first reference; the value owns the block.
  initialize_handle(handle, handler, value, true);
  if (metadata) {
    handle->metadata = *metadata;
    handle->metadata_available = true;
  }
  *out_handle = handle;
  *out_value = value;
  return loom_ok_status();
}

loom_status_t loom_tensor_handle_create(loom_op_handler_t* handler,
                                        loom_tensor_t* tensor,
                                        loom_tensor_handle_t** out_handle) {
  if (!handler || !tensor || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_handle_create: %s is NULL",
                            !handler  ? "handler"
                            : !tensor ? "tensor"
                                      : "out_handle");
  }
  *out_handle = NULL;
  loom_async_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(loom__tensor_handle_create_pending(
      handler, loom_tensor_metadata(tensor), out_handle, &value));
  loom_tensor_retain(tensor);
  *(loom_tensor_t**)loom_async_value_payload(value) = tensor;
  loom_status_ignore(loom_async_value_set_available(value));
  return loom_ok_status();
}

loom_status_t loom_tensor_handle_create_async(
    loom_op_handler_t* handler, const loom_tensor_metadata_t* metadata,
    loom_async_value_t* value, loom_tensor_handle_t** out_handle) {
  if (!handler || !value || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_handle_create_async: %s is NULL",
                            !handler ? "handler"
                            : !value ? "value"
                                     : "out_handle");
  }
  *out_handle = NULL;
  if (loom_async_value_type(value) != &loom_async_value_type_tensor) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_tensor_handle_create_async: the value is of type '%s', not "
        "'tensor'",
        loom_async_value_type(value)->name);
  }
  LOOM_RETURN_IF_ERROR(new_handle(handler, value, out_handle));
  if (metadata) {
    (*out_handle)->metadata = *metadata;
    (*out_handle)->metadata_available = true;
  }
  return loom_ok_status();
}

loom_status_t loom_tensor_handle_create_error(
    loom_op_handler_t* handler, loom_status_t error,
    loom_tensor_handle_t** out_handle) {
  if (!handler || !out_handle || !error) {
    loom_status_free(error);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_handle_create_error: %s",
                            !handler      ? "handler is NULL"
                            : !out_handle ? "out_handle is NULL"
                                          : "the error status is OK");
  }
  *out_handle = NULL;
  loom_async_value_t* value = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__tensor_error_value(handler_allocator(handler), error, &value));
  loom_status_t status = new_handle(handler, value, out_handle);
  loom_async_value_release(value);
  return status;
}

bool loom__tensor_handle_take_tensor(loom_tensor_handle_t* handle) {
  loom_async_value_t* value = handle->value;
  if (!loom__ref_count_is_one(&handle->ref_count) ||
      !loom__async_value_is_unique(value)) {
    return false;
  }
  *(loom_tensor_t**)loom_async_value_payload(value) = NULL;  // moves out
  loom_tensor_handle_release(handle);
  return true;
}

void loom_tensor_handle_retain(loom_tensor_handle_t* handle) {
  if (handle) loom__ref_count_inc(&handle->ref_count);
}

bool loom_tensor_handle_is_unique(const loom_tensor_handle_t* handle) {
  return handle && loom__ref_count_is_one(&handle->ref_count);
}

loom_status_t loom_tensor_handle_create_representation(
    loom_op_handler_t* handler, const loom_tensor_metadata_t* metadata,
    void* representation, loom_tensor_handle_t** out_handle) {
  if (!handler || !out_handle) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_tensor_handle_create_representation: %s is NULL",
        !handler ? "handler" : "out_handle");
  }
  *out_handle = NULL;
  if (!handler->vtable->release_representation) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_tensor_handle_create_representation: handler '%s' has no "
        "release_representation hook",
        handler->vtable->type_name);
  }
  loom_tensor_handle_t* handle = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(handler_allocator(handler),
                                             sizeof(*handle), (void**)&handle));
  initialize_handle(handle, handler, NULL, false);
  handle->representation = representation;
  if (metadata) {
    handle->metadata = *metadata;
    handle->metadata_available = true;
  }
  *out_handle = handle;
  return loom_ok_status();
}

void* loom_tensor_handle_representation(const loom_tensor_handle_t* handle) {
  return handle ? handle->representation : NULL;
}

void loom_tensor_handle_release(loom_tensor_handle_t* handle) {
  if (!handle || !loom__ref_count_dec(&handle->ref_count)) return;
  loom_op_handler_t* handler = handle->handler;
  loom_async_value_t* value = handle->value;
  if (!value) {
    handler->vtable->release_representation(handler, handle->representation);
  }
  if (!handle->value_embedded) {
    loom_allocator_free(handler_allocator(handler), handle);
  }
  if (value) {  // an embedded value frees the handle
    loom_tensor_t* tensor = loom__async_value_release_taking_pointer(value);
    if (tensor) loom__tensor_release(tensor);
  }
  loom_op_handler_release(handler);
}

loom_op_handler_t* loom_tensor_handle_handler(
    const loom_tensor_handle_t* handle) {
  return handle ? handle->handler : NULL;
}

loom_async_value_t* loom_tensor_handle_value(
    const loom_tensor_handle_t* handle) {
  return handle ? handle->value : NULL;
}

bool loom_tensor_handle_metadata_available(const loom_tensor_handle_t* handle) {
  if (!handle) return false;
  return handle->metadata_available ||
         (handle->value && loom_async_value_is_available(handle->value));
}

loom_status_t loom_tensor_handle_metadata(const loom_tensor_handle_t* handle,
                                          loom_tensor_metadata_t* out) {
  if (!handle || !out) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_handle_metadata: %s is NULL",
                            !handle ? "handle" : "out_metadata");
  }
  if (handle->metadata_available) {
    *out = handle->metadata;
    return loom_ok_status();
  }
  if (!handle->value) {
    loom_op_handler_t* handler = handle->handler;
    if (handler->vtable->tensor_metadata) {
      return handler->vtable->tensor_metadata(handler, handle, out);
    }
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "the tensor's metadata is not known yet");
  }
  switch (loom_async_value_state(handle->value)) {
    case LOOM_ASYNC_VALUE_AVAILABLE:
      *out = *loom_tensor_metadata(loom__tensor_of_value(handle->value));
      return loom_ok_status();
    case LOOM_ASYNC_VALUE_ERROR:
      return loom_status_clone(loom_async_value_error(handle->value));
    default:
      return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                              "the tensor's metadata is not known yet");
  }
}

loom_status_t loom_tensor_handle_resolve(loom_tensor_handle_t* handle,
                                         loom_tensor_t** out_tensor) {
  if (!handle || !out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_handle_resolve: %s is NULL",
                            !handle ? "handle" : "out_tensor");
  }
  *out_tensor = NULL;
  if (!handle->value) {
    return loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "the tensor lives on op handler '%s' as its own representation: "
        "copy it off the handler to resolve it",
        handle->handler->vtable->type_name);
  }
  LOOM_RETURN_IF_ERROR(loom_host_context_await(handle->handler->runtime->host,
                                               &handle->value, 1));
  if (loom_async_value_is_error(handle->value)) {
    return loom_status_clone(loom_async_value_error(handle->value));
  }
  loom_tensor_t* tensor = loom__tensor_of_value(handle->value);
  loom_tensor_retain(tensor);
  *out_tensor = tensor;
  return loom_ok_status();
}

uint64_t loom_tensor_handle_tag(const loom_tensor_handle_t* handle) {
  if (!handle) return 0;
  return atomic_load_explicit(&((loom_tensor_handle_t*)handle)->tag,
                              memory_order_relaxed);
}

bool loom_tensor_handle_exchange_tag(loom_tensor_handle_t* handle,
                                     uint64_t* expected, uint64_t desired) {
  if (!handle || !expected) return false;
  return atomic_compare_exchange_strong_explicit(&handle->tag, expected,
                                                 desired, memory_order_relaxed,
                                                 memory_order_relaxed);
}

size_t loom_tensor_handle_size(void) {
  return sizeof(loom_tensor_handle_t);
}
