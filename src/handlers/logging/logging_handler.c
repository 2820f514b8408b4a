// The logging handler: prints every op it sees (name, the inputs' dtypes
// and shapes, the attributes it runs with), then runs it on the handler it
// was merged with. A pass-through transformation: its results are that
// handler's tensors.
//
// The op is prepared on the outer handler when it is prepared here, so
// passing it on costs one execute of an already prepared op.

#include <stdatomic.h>
#include <string.h>

#include "base/ref_count.h"
#include "loom/handlers.h"
#include "loom/op_signature.h"
#include "loom/tensor_handle.h"

// What a handler and all its merges share.
typedef struct logging_shared_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  FILE* stream;
  _Atomic int64_t count;
} logging_shared_t;

typedef struct logging_state_t {
  loom_allocator_t allocator;
  loom_context_t* context;
  logging_shared_t* shared;  // retained
  loom_op_handler_t* outer;  // retained; NULL: the context's CPU
} logging_state_t;

static const loom_op_handler_vtable_t kLoggingVtable;

static void shared_release(logging_shared_t* shared) {
  if (shared && loom__ref_count_dec(&shared->ref_count)) {
    loom_allocator_free(shared->allocator, shared);
  }
}

static loom_op_handler_t* outer_of(const logging_state_t* state) {
  return state->outer ? state->outer : loom_context_cpu(state->context);
}

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

static void print_op(logging_state_t* state, loom_op_invocation_t* invocation,
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
  loom_op_attrs_initialize(&attrs, state->shared->allocator);
  loom_status_t status = loom_op_attrs_merge(&attrs, invocation->attrs);
  if (!status && def && all_known) {
    status = loom_op_def_complete_attrs(def, dtypes, invocation->num_arguments,
                                        &attrs);
  }
  append_attrs(&line, status ? invocation->attrs : &attrs);
  loom_status_free(status);
  loom_op_attrs_deinitialize(&attrs);
  append(&line, "\n");
  fputs(line.text, state->shared->stream);
  fflush(state->shared->stream);
}

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t logging_prepare(loom_op_handler_t* handler,
                                     const char* op_name,
                                     const loom_op_def_t* op,
                                     void** out_op_data) {
  (void)op;
  logging_state_t* state = loom_op_handler_state(handler);
  loom_prepared_op_t* outer_op = NULL;
  LOOM_RETURN_IF_ERROR(loom_runtime_prepare_op_shared(
      loom_op_handler_runtime(handler), op_name, outer_of(state), &outer_op));
  *out_op_data = outer_op;
  return loom_ok_status();
}

static void logging_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

static loom_status_t logging_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  logging_state_t* state = loom_op_handler_state(handler);
  int64_t index = atomic_fetch_add_explicit(&state->shared->count, 1,
                                            memory_order_relaxed) +
                  1;
  if (state->shared->stream) print_op(state, invocation, index);
  LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
      state->context, outer_of(state), invocation));
  return loom_op_invocation_forward(invocation,
                                    loom_prepared_op_data(invocation->op));
}

static void logging_destroy(void* opaque) {
  logging_state_t* state = opaque;
  loom_op_handler_release(state->outer);
  shared_release(state->shared);
  loom_allocator_free(state->allocator, state);
}

static bool logging_takes_foreign_inputs(const loom_op_handler_t* handler,
                                         const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;  // they go to the outer handler, not onto this one
}

static size_t logging_debug_string(const loom_op_handler_t* handler,
                                   char* buffer, size_t capacity) {
  logging_state_t* state = loom_op_handler_state(handler);
  return (size_t)snprintf(buffer, capacity, "logging handler (%lld ops)",
                          (long long)atomic_load(&state->shared->count));
}

static loom_status_t make_handler(loom_context_t* context,
                                  logging_shared_t* shared,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out);

static loom_status_t logging_merge(loom_op_handler_t* handler,
                                   loom_op_handler_t* outer,
                                   loom_op_handler_t** out_merged) {
  logging_state_t* state = loom_op_handler_state(handler);
  return make_handler(state->context, state->shared, outer, out_merged);
}

static const loom_op_handler_vtable_t kLoggingVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "LOGGING",
    .prepare = logging_prepare,
    .release_op_data = logging_release_op_data,
    .execute = logging_execute,
    .destroy = logging_destroy,
    .merge = logging_merge,
    .takes_foreign_inputs = logging_takes_foreign_inputs,
    .debug_string = logging_debug_string,
};

static loom_status_t make_handler(loom_context_t* context,
                                  logging_shared_t* shared,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out) {
  logging_state_t* state = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(shared->allocator, sizeof(*state), (void**)&state));
  state->allocator = shared->allocator;
  state->context = context;
  state->shared = shared;
  loom__ref_count_inc(&shared->ref_count);
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_op_handler_create(
      loom_context_runtime(context), &kLoggingVtable, state, NULL, out);
  if (status) logging_destroy(state);
  return status;
}

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
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*shared), (void**)&shared));
  loom__ref_count_init(&shared->ref_count);
  shared->allocator = allocator;
  shared->stream = stream;
  atomic_init(&shared->count, 0);
  loom_status_t status = make_handler(context, shared, NULL, out_handler);
  shared_release(shared);  // the handler holds it now
  return status;
}

int64_t loom_scope_logging_handler_count(const loom_op_handler_t* handler) {
  if (!handler || loom_op_handler_vtable(handler)->execute != logging_execute) {
    return 0;
  }
  logging_state_t* state = loom_op_handler_state(handler);
  return atomic_load(&state->shared->count);
}
