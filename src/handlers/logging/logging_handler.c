// The logging handler: prints every op it sees (name, the inputs' dtypes
// and shapes, the attributes it runs with), then runs it on the handler it
// was merged with. A pass-through transformation: its results are that
// handler's tensors.
//
// The op is prepared on the outer handler when it is prepared here, so
// passing it on costs one execute of an already prepared op.
//
// With whole calls set (loom_scope_logging_handler_set_whole_calls), the
// handler takes the function calls it is offered as one op
// (execute_function_call): one line for the call, then its body runs
// without a line per op.

#include <stdatomic.h>
#include <string.h>

#include "frontend/passthrough_handler.h"
#include "loom/handlers.h"
#include "loom/op_signature.h"
#include "loom/tensor_handle.h"

// What a handler and all its merges share.
typedef struct logging_shared_t {
  loom__passthrough_shared_t base;
  FILE* stream;
  _Atomic int64_t count;
  _Atomic bool whole_calls;
} logging_shared_t;

// The handler whose call the calling thread runs (its body's ops are not
// printed), or NULL. Per thread, as a call runs on its caller's thread; a
// nested call of another logging handler saves and restores it.
static _Thread_local const logging_shared_t* g_running_call;

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

typedef struct line_t {
  char text[2048];
  size_t used;
} line_t;

static void append(line_t* line, const char* text) {
  size_t length = strlen(text);
  size_t room = sizeof(line->text) - 1 - line->used;
  if (length > room) length = room;
  memcpy(line->text + line->used, text, length);
  line->used += length;
  line->text[line->used] = '\0';
}

static void append_attrs(line_t* line, const loom_op_attrs_t* attrs) {
  size_t count = loom_op_attrs_count(attrs);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(attrs, i, &name, &value)) continue;
    char text[256];
    loom_attr_value_format(&value, text, sizeof(text));
    append(line, i ? ", " : " ");
    append(line, name);
    append(line, "=");
    append(line, text);
  }
}

static void print_op(logging_shared_t* shared, loom_op_invocation_t* invocation,
                     int64_t index) {
  line_t line;
  line.used = 0;
  line.text[0] = '\0';
  char text[160];
  snprintf(text, sizeof(text), "[%lld] %s(", (long long)index,
           loom_prepared_op_name(invocation->op));
  append(&line, text);
  loom_dtype_t dtypes[64];
  bool all_known = invocation->num_arguments <= 64;
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_metadata_t metadata;
    loom_status_t status = loom_ok_status();
    bool known =
        loom_tensor_handle_metadata_available(invocation->arguments[i]);
    if (known) {
      status = loom_tensor_handle_metadata(invocation->arguments[i], &metadata);
      known = !status;
      loom_status_free(status);
    }
    if (i) append(&line, ", ");
    if (!known) {
      all_known = false;
      append(&line, "?");
      continue;
    }
    if (i < 64) dtypes[i] = metadata.dtype;
    append(&line, loom_dtype_name(metadata.dtype));
    append(&line, " ");
    loom_shape_format(&metadata.shape, text, sizeof(text));
    append(&line, text);
  }
  append(&line, ")");
  // The attributes the op runs with, when they can be completed here.
  const loom_op_def_t* def = loom_prepared_op_def(invocation->op);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, shared->base.allocator);
  loom_status_t status = loom_op_attrs_merge(&attrs, invocation->attrs);
  if (!status && def && all_known) {
    status = loom_op_def_complete_attrs(def, dtypes, invocation->num_arguments,
                                        &attrs);
  }
  append_attrs(&line, status ? invocation->attrs : &attrs);
  loom_status_free(status);
  loom_op_attrs_deinitialize(&attrs);
  append(&line, "\n");
  fputs(line.text, shared->stream);
  fflush(shared->stream);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static logging_shared_t* shared_of(const loom_op_handler_t* handler) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return base->shared;
}

static loom_status_t logging_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  logging_shared_t* shared = base->shared;
  if (g_running_call == shared) {
    return loom__passthrough_forward_prepared(base, invocation);
  }
  int64_t index =
      atomic_fetch_add_explicit(&shared->count, 1, memory_order_relaxed) + 1;
  if (shared->stream) print_op(shared, invocation, index);
  return loom__passthrough_forward_prepared(base, invocation);
}

// One line for a call: "[N] f(float [3]) (function call)".
static void print_call(logging_shared_t* shared,
                       const loom_function_call_t* call, int64_t index) {
  line_t line;
  line.used = 0;
  line.text[0] = '\0';
  char text[300];
  snprintf(text, sizeof(text), "[%lld] %s(", (long long)index,
           call->function_name);
  append(&line, text);
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    if (i) append(&line, ", ");
    loom_tensor_metadata_t metadata;
    loom_status_t status =
        loom_tensor_handle_metadata_available(call->inputs[i])
            ? loom_tensor_handle_metadata(call->inputs[i], &metadata)
            : loom_make_status(LOOM_STATUS_UNAVAILABLE, "not known");
    if (status) {
      loom_status_free(status);
      append(&line, "?");
      continue;
    }
    append(&line, loom_dtype_name(metadata.dtype));
    append(&line, " ");
    loom_shape_format(&metadata.shape, text, sizeof(text));
    append(&line, text);
  }
  append(&line, ") (function call)\n");
  fputs(line.text, shared->stream);
  fflush(shared->stream);
}

static loom_status_t logging_execute_function_call(
    loom_op_handler_t* handler, loom_function_call_t* call,
    loom_tensor_handle_t** results, bool* out_taken) {
  logging_shared_t* shared = shared_of(handler);
  *out_taken = false;
  // A call inside a call taken whole is part of its body.
  if (!atomic_load_explicit(&shared->whole_calls, memory_order_relaxed) ||
      g_running_call == shared) {
    return loom_ok_status();
  }
  int64_t index =
      atomic_fetch_add_explicit(&shared->count, 1, memory_order_relaxed) + 1;
  if (shared->stream) print_call(shared, call, index);
  const logging_shared_t* previous = g_running_call;
  g_running_call = shared;
  loom_status_t status = call->run(call, results);
  g_running_call = previous;
  *out_taken = true;
  return status;
}

static size_t logging_debug_string(const loom_op_handler_t* handler,
                                   char* buffer, size_t capacity) {
  return (size_t)snprintf(buffer, capacity, "logging handler (%lld ops)",
                          (long long)atomic_load(&shared_of(handler)->count));
}

static const loom_op_handler_vtable_t kLoggingVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "LOGGING",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = logging_execute,
    .debug_string = logging_debug_string,
    .execute_function_call = logging_execute_function_call,
};

static const loom__passthrough_type_t kLoggingType = {
    .vtable = &kLoggingVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = loom__passthrough_shared_retain,
    .release_shared = loom__passthrough_shared_release,
};

loom_status_t loom_scope_logging_handler_create(
    loom_context_t* context, FILE* stream, loom_op_handler_t** out_handler) {
  if (!context || !out_handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_scope_logging_handler_create: %s is NULL",
                            !context ? "context" : "out_handler");
  }
  *out_handler = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  logging_shared_t* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom__passthrough_shared_create(
      allocator, sizeof(*shared), (void**)&shared));
  shared->stream = stream;
  atomic_init(&shared->count, 0);
  atomic_init(&shared->whole_calls, false);
  loom_status_t status = loom__passthrough_create(
      &kLoggingType, context, allocator, shared, NULL, out_handler);
  loom__passthrough_shared_release(shared);  // the handler holds it now
  return status;
}

int64_t loom_scope_logging_handler_count(const loom_op_handler_t* handler) {
  if (!loom__passthrough_of(handler, &kLoggingType)) return 0;
  return atomic_load(&shared_of(handler)->count);
}

loom_status_t loom_scope_logging_handler_set_whole_calls(
    loom_op_handler_t* handler, bool whole_calls) {
  if (!loom__passthrough_of(handler, &kLoggingType)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_scope_logging_handler_set_whole_calls: "
                            "%s",
                            handler ? "not a logging handler"
                                    : "handler is "
                                      "NULL");
  }
  atomic_store_explicit(&shared_of(handler)->whole_calls, whole_calls,
                        memory_order_relaxed);
  return loom_ok_status();
}
