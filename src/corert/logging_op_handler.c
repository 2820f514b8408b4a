// The logging pseudo handler: prints each dispatch, then executes the op on
// the handler it wraps.

#include <inttypes.h>

#include "corert/corert_internal.h"
#include "loom/host_context.h"

typedef struct logging_state_t {
  loom_allocator_t allocator;
  loom_op_handler_t* wrapped;
  FILE* stream;
  bool print_tensors;
  _Atomic int64_t next_index;
  pthread_mutex_t mutex;  // keeps one dispatch's lines together
} logging_state_t;

static loom_status_t logging_prepare(loom_op_handler_t* handler,
                                     const char* op_name,
                                     const loom_op_def_t* op,
                                     void** out_op_data) {
  (void)op;
  logging_state_t* state = handler->state;
  loom_prepared_op_t* inner = NULL;
  LOOM_RETURN_IF_ERROR(loom_runtime_prepare_op_shared(handler->runtime, op_name,
                                                      state->wrapped, &inner));
  *out_op_data = inner;
  return loom_ok_status();
}

static void logging_release_op_data(loom_op_handler_t* handler, void* op_data) {
  (void)handler;
  loom_prepared_op_release(op_data);
}

static void print_handle(FILE* stream, loom_runtime_t* runtime,
                         const char* label, int32_t index,
                         loom_tensor_handle_t* handle) {
  if (!handle) {
    fprintf(stream, "  %s %d: <none>\n", label, index);
    return;
  }
  loom_async_value_t* value = loom_tensor_handle_value(handle);
  loom_status_ignore(loom_host_context_await(runtime->host, &value, 1));
  if (loom_async_value_is_error(value)) {
    fprintf(stream, "  %s %d: <<error: %s>>\n", label, index,
            loom_status_message(loom_async_value_error(value)));
    return;
  }
  char text[1024];
  loom_tensor_format(loom__tensor_of_value(value), text, sizeof(text));
  fprintf(stream, "  %s %d: %s\n", label, index, text);
}

static loom_status_t logging_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  logging_state_t* state = handler->state;
  loom_prepared_op_t* inner = invocation->op->data;
  int64_t index = atomic_fetch_add(&state->next_index, 1);
  if (state->stream) {
    pthread_mutex_lock(&state->mutex);
    // TFRT's counts: "1 argument, 2 results".
    fprintf(state->stream,
            "[%" PRId64 "] dispatch '%s' %d argument%s, %d result%s, ", index,
            invocation->op->name, invocation->num_arguments,
            invocation->num_arguments == 1 ? "" : "s", invocation->num_results,
            invocation->num_results == 1 ? "" : "s");
    if (!invocation->attrs || loom_op_attrs_count(invocation->attrs) == 0) {
      fprintf(state->stream, "no attributes\n");
    } else {
      char attrs[2048];
      loom_op_attrs_print(invocation->attrs, attrs, sizeof(attrs));
      fputs(attrs, state->stream);
    }
    if (state->print_tensors) {
      for (int32_t i = 0; i < invocation->num_arguments; ++i) {
        print_handle(state->stream, handler->runtime, "Arg", i,
                     invocation->arguments[i]);
      }
    }
    pthread_mutex_unlock(&state->mutex);
  }
  loom_status_t status = loom_runtime_execute_prepared(
      inner, invocation->location, invocation->arguments,
      invocation->num_arguments, invocation->attrs, invocation->results,
      invocation->num_results, invocation->chain);
  if (state->stream && state->print_tensors) {
    pthread_mutex_lock(&state->mutex);
    for (int32_t i = 0; i < invocation->num_results; ++i) {
      print_handle(state->stream, handler->runtime, "Result", i,
                   invocation->results[i]);
    }
    pthread_mutex_unlock(&state->mutex);
  }
  return status;
}

static const char* logging_device_name(const loom_op_handler_t* handler) {
  logging_state_t* state = handler->state;
  return loom_op_handler_device_name(state->wrapped);
}

static void logging_destroy(void* opaque) {
  logging_state_t* state = opaque;
  loom_op_handler_release(state->wrapped);
  pthread_mutex_destroy(&state->mutex);
  loom_allocator_free(state->allocator, state);
}

static const loom_op_handler_vtable_t kLoggingVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "logging",
    .prepare = logging_prepare,
    .release_op_data = logging_release_op_data,
    .execute = logging_execute,
    .device_name = logging_device_name,
    .destroy = logging_destroy,
};

loom_status_t loom_dispatch_logging_handler_create(
    loom_runtime_t* runtime, loom_op_handler_t* wrapped, FILE* stream,
    bool print_tensors, loom_op_handler_t** out_handler) {
  if (!runtime || !wrapped || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_dispatch_logging_handler_create: %s is NULL",
                            !runtime   ? "runtime"
                            : !wrapped ? "wrapped"
                                       : "out_handler");
  }
  *out_handler = NULL;
  logging_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(runtime->allocator, sizeof(*state),
                                             (void**)&state));
  state->allocator = runtime->allocator;
  state->wrapped = wrapped;
  state->stream = stream;
  state->print_tensors = print_tensors;
  atomic_init(&state->next_index, 0);
  pthread_mutex_init(&state->mutex, NULL);
  loom_status_t status = loom_op_handler_create(runtime, &kLoggingVtable, state,
                                                NULL, out_handler);
  if (status) {
    pthread_mutex_destroy(&state->mutex);
    loom_allocator_free(runtime->allocator, state);
    return status;
  }
  loom_op_handler_retain(wrapped);
  return loom_ok_status();
}
