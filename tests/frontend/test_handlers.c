// Front-end op handlers: stacking order, merges and re-entry, copies on
// and off with their gradients, lifetimes in every release order, the
// logging and numerics handlers (natively and through TensorFlow's API).

#include <stdlib.h>

#include "loom/function.h"
#include "loom/handlers.h"
#include "loom/loom.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Two test handlers: a pass-through one that records the ops it sees, and
// one that wraps tensors (its own representation: the handle below it).
//===----------------------------------------------------------------------===//

typedef struct trace_t {
  char text[4096];
} trace_t;

static void record(trace_t* trace, char tag, const char* op_name) {
  size_t used = strlen(trace->text);
  snprintf(trace->text + used, sizeof(trace->text) - used, "%c:%s ", tag,
           op_name);
}

typedef struct tag_state_t {
  loom_context_t* context;
  trace_t* trace;
  char tag;
  bool wraps;                // keeps its results as its own tensors
  loom_op_handler_t* outer;  // retained; NULL: the CPU
  int* destroyed;            // counts states freed
} tag_state_t;

static loom_status_t make_tag(loom_context_t* context, trace_t* trace, char tag,
                              bool wraps, int* destroyed,
                              loom_op_handler_t* outer,
                              loom_op_handler_t** out);

static loom_op_handler_t* outer_of(const tag_state_t* state) {
  return state->outer ? state->outer : loom_context_cpu(state->context);
}

static loom_status_t tag_prepare(loom_op_handler_t* handler,
                                 const char* op_name, const loom_op_def_t* op,
                                 void** out_op_data) {
  (void)op;
  tag_state_t* state = loom_op_handler_state(handler);
  return loom_runtime_prepare_op(loom_op_handler_runtime(handler), op_name,
                                 outer_of(state),
                                 (loom_prepared_op_t**)out_op_data);
}

static void tag_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

static loom_status_t tag_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation) {
  tag_state_t* state = loom_op_handler_state(handler);
  const char* name = loom_prepared_op_name(invocation->op);
  record(state->trace, state->tag, name);
  // Our own tensors go down as the handles they wrap; the others as the
  // outer handler needs them.
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    if (loom_tensor_handle_handler(argument) != handler) continue;
    loom_tensor_handle_t* inner = loom_tensor_handle_representation(argument);
    loom_tensor_handle_retain(inner);
    loom_tensor_handle_release(argument);
    invocation->arguments[i] = inner;
  }
  LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
      state->context, outer_of(state), invocation));
  loom_status_t status = loom_op_invocation_forward(
      invocation, loom_prepared_op_data(invocation->op));
  if (status || !state->wraps || strcmp(name, "CopyOff") == 0) return status;
  for (int32_t i = 0; i < invocation->num_results; ++i) {
    loom_tensor_handle_t* inner = invocation->results[i];
    loom_tensor_metadata_t metadata;
    loom_status_t known = loom_tensor_handle_metadata(inner, &metadata);
    loom_status_t wrapped = loom_tensor_handle_create_representation(
        handler, known ? NULL : &metadata, inner, &invocation->results[i]);
    loom_status_free(known);
    if (wrapped) {
      invocation->results[i] = inner;
      return wrapped;
    }
  }
  return loom_ok_status();
}

static void tag_destroy(void* opaque) {
  tag_state_t* state = opaque;
  if (state->destroyed) (*state->destroyed)++;
  loom_op_handler_release(state->outer);
  free(state);
}

static loom_status_t tag_merge(loom_op_handler_t* handler,
                               loom_op_handler_t* outer,
                               loom_op_handler_t** out_merged) {
  tag_state_t* state = loom_op_handler_state(handler);
  return make_tag(state->context, state->trace, state->tag, state->wraps,
                  state->destroyed, outer, out_merged);
}

static void tag_release_representation(loom_op_handler_t* handler,
                                       void* representation) {
  (void)handler;
  loom_tensor_handle_release(representation);
}

static bool tag_takes_foreign_inputs(const loom_op_handler_t* handler,
                                     const char* op_name) {
  (void)op_name;
  tag_state_t* state = loom_op_handler_state(handler);
  return !state->wraps;  // a wrapping handler takes inputs with CopyOn
}

static const loom_op_handler_vtable_t kTagVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "TAG",
    .prepare = tag_prepare,
    .release_op_data = tag_release_op_data,
    .execute = tag_execute,
    .destroy = tag_destroy,
    .merge = tag_merge,
    .release_representation = tag_release_representation,
    .takes_foreign_inputs = tag_takes_foreign_inputs,
};

static loom_status_t make_tag(loom_context_t* context, trace_t* trace, char tag,
                              bool wraps, int* destroyed,
                              loom_op_handler_t* outer,
                              loom_op_handler_t** out) {
  tag_state_t* state = calloc(1, sizeof(*state));
  state->context = context;
  state->trace = trace;
  state->tag = tag;
  state->wraps = wraps;
  state->destroyed = destroyed;
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_op_handler_create(loom_context_runtime(context),
                                                &kTagVtable, state, NULL, out);
  if (status) tag_destroy(state);
  return status;
}

//===----------------------------------------------------------------------===//
// Fixture and helpers
//===----------------------------------------------------------------------===//

typedef struct fixture_t {
  loom_context_t* context;
  trace_t trace;
  int destroyed;
} fixture_t;

static int setup_with(void** state, bool async) {
  fixture_t* f = calloc(1, sizeof(*f));
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = async;
  LOOM_ASSERT_OK(loom_context_create(&options, &f->context));
  *state = f;
  return 0;
}

static int setup(void** state) {
  return setup_with(state, false);
}
static int setup_async(void** state) {
  return setup_with(state, true);
}

static int teardown(void** state) {
  fixture_t* f = *state;
  loom_context_destroy(f->context);
  free(f);
  return 0;
}

static loom_op_handler_t* tag(fixture_t* f, char letter, bool wraps) {
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_OK(make_tag(f->context, &f->trace, letter, wraps, &f->destroyed,
                          NULL, &handler));
  return handler;
}

static loom_tensor_handle_t* scalar(fixture_t* f, float value) {
  return loom_test_scalar(f->context, value);
}

static float value_of(fixture_t* f, loom_tensor_handle_t* handle) {
  return loom_test_scalar_value(f->context, handle);
}

// Runs a binary op; returns its status, the result in *out (may be NULL).
static loom_status_t try_binary(fixture_t* f, const char* op_name,
                                loom_tensor_handle_t* x,
                                loom_tensor_handle_t* y,
                                loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, op_name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  loom_status_t status = loom_eager_op_execute(op, &z, 1, &count);
  loom_eager_op_destroy(op);
  if (out) {
    *out = z;
  } else {
    loom_tensor_handle_release(z);
  }
  return status;
}

static loom_tensor_handle_t* binary(fixture_t* f, const char* op_name,
                                    loom_tensor_handle_t* x,
                                    loom_tensor_handle_t* y) {
  loom_tensor_handle_t* z = NULL;
  LOOM_ASSERT_OK(try_binary(f, op_name, x, y, &z));
  return z;
}

//===----------------------------------------------------------------------===//
// Stacking, merges, re-entry
//===----------------------------------------------------------------------===//

static void three_handlers_see_an_op_innermost_first(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = tag(f, 'a', false);
  loom_op_handler_t* b = tag(f, 'b', false);
  loom_op_handler_t* c = tag(f, 'c', false);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, b));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, c));
  loom_tensor_handle_t* x = scalar(f, 2.0f);
  loom_tensor_handle_t* y = binary(f, "Mul", x, x);
  // Pass-through handlers take inputs as they are: no copies.
  assert_string_equal(f->trace.text, "c:Mul b:Mul a:Mul ");
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(f->context));
  assert_true(value_of(f, y) == 4.0f);
  // Each merge is a device of the handler's type with its own index.
  const char* names[16];
  size_t count = loom_context_list_handlers(f->context, names, 16);
  assert_int_equal(count, 4);  // CPU:0 and three merges
  assert_string_equal(names[1], "/job:localhost/replica:0/task:0/device:TAG:0");
  assert_string_equal(names[3], "/job:localhost/replica:0/task:0/device:TAG:2");
  for (int i = 0; i < 3; ++i)
    LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
  loom_op_handler_release(c);
  // Unused merges went with their scopes; the handlers with the last ref.
  assert_int_equal(loom_context_list_handlers(f->context, names, 16), 1);
  assert_int_equal(f->destroyed, 6);
}

static void merging_the_same_pair_gives_the_same_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = tag(f, 'a', false);
  loom_op_handler_t* b = tag(f, 'b', false);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, b));
  loom_op_handler_t* first = loom_context_scope_handler(f->context);
  loom_op_handler_retain(first);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, b));
  assert_ptr_equal(loom_context_scope_handler(f->context), first);
  // Re-entering what is open does nothing; re-entering the merge inside a
  // opens only b.
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, first));
  assert_ptr_equal(loom_context_scope_handler(f->context), first);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  assert_null(loom_context_scope_handler(f->context));
  // Entering the merge from outside re-opens a, then b.
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, first));
  assert_ptr_equal(loom_context_scope_handler(f->context), first);
  loom_tensor_handle_t* x = scalar(f, 1.0f);
  loom_tensor_handle_release(binary(f, "AddV2", x, x));
  assert_string_equal(f->trace.text, "b:AddV2 a:AddV2 ");
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_STATUS(loom_context_exit_scope(f->context),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "loom_context_exit_scope: no handler scope is open on "
                     "this thread");
  loom_tensor_handle_release(x);
  loom_op_handler_release(first);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
}

static void a_tensor_places_its_op_on_its_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* w = tag(f, 'w', true);
  loom_op_handler_t* v = tag(f, 'v', true);
  loom_tensor_handle_t* x = scalar(f, 3.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  loom_tensor_handle_t* on_w = binary(f, "AddV2", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, v));
  loom_tensor_handle_t* on_v = binary(f, "AddV2", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  f->trace.text[0] = '\0';
  // Outside any scope the input's handler runs the op; the CPU input is
  // copied on.
  loom_tensor_handle_t* z = binary(f, "Mul", on_w, x);
  assert_string_equal(f->trace.text, "w:CopyOn w:Mul ");
  assert_true(value_of(f, z) == 18.0f);
  LOOM_ASSERT_STATUS(try_binary(f, "AddV2", on_w, on_v, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "AddV2: inputs are placed on two different op handlers, "
                     "'/job:localhost/replica:0/task:0/device:TAG:0' and "
                     "'/job:localhost/replica:0/task:0/device:TAG:1'");
  loom_tensor_handle_release(z);
  loom_tensor_handle_release(on_w);
  loom_tensor_handle_release(on_v);
  loom_tensor_handle_release(x);
  loom_op_handler_release(w);
  loom_op_handler_release(v);
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

static void copies_on_and_off_and_their_gradients(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* w = tag(f, 'w', true);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  loom_op_handler_t* merged = loom_context_scope_handler(f->context);
  loom_tensor_handle_t* x = scalar(f, 5.0f);
  loom_tensor_handle_t* on = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(f->context, x, merged, &on));
  assert_ptr_equal(loom_tensor_handle_handler(on), merged);
  assert_null(loom_tensor_handle_value(on));  // a representation
  loom_tensor_handle_t* off = NULL;
  LOOM_ASSERT_OK(
      loom_context_copy_to(f->context, on, loom_context_cpu(f->context), &off));
  assert_ptr_equal(loom_tensor_handle_handler(off),
                   loom_context_cpu(f->context));
  assert_string_equal(f->trace.text, "w:CopyOn w:CopyOff ");
  assert_true(value_of(f, off) == 5.0f);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  // The gradients are ops too: on a device they are the identity.
  const char* grads[2] = {"CopyOnGrad", "CopyOffGrad"};
  for (int i = 0; i < 2; ++i) {
    loom_eager_op_t* op = NULL;
    LOOM_ASSERT_OK(loom_eager_op_create(f->context, grads[i], &op));
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
    loom_tensor_handle_t* g = NULL;
    int32_t count = 0;
    LOOM_ASSERT_OK(loom_eager_op_execute(op, &g, 1, &count));
    assert_true(value_of(f, g) == 5.0f);
    loom_tensor_handle_release(g);
    loom_eager_op_destroy(op);
  }
  loom_tensor_handle_release(on);
  loom_tensor_handle_release(off);
  loom_tensor_handle_release(x);
  loom_op_handler_release(w);
}

static void static_values_and_debug_strings(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* x = scalar(f, 2.0f);
  loom_tensor_t* value = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_static_value(x, &value));
  assert_true(*(float*)loom_tensor_data(value) == 2.0f);
  loom_tensor_release(value);
  char text[256];
  loom_tensor_handle_debug_string(x, text, sizeof(text));
  assert_non_null(strstr(text, "DenseHostTensor dtype = f32, shape = []"));
  loom_op_handler_t* w = tag(f, 'w', true);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  loom_tensor_handle_t* y = binary(f, "AddV2", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_STATUS(loom_tensor_handle_static_value(y, &value),
                     LOOM_STATUS_NOT_FOUND,
                     "op handler 'TAG' has no static values");
  loom_tensor_handle_debug_string(y, text, sizeof(text));
  assert_string_equal(text, "<float [] tensor on TAG>");
  LOOM_ASSERT_STATUS(loom_tensor_handle_static_value(NULL, &value),
                     LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle");
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(w);
}

//===----------------------------------------------------------------------===//
// Lifetimes: release handlers, scopes, tensors and contexts in any order
//===----------------------------------------------------------------------===//

enum { kHandler, kScope, kTensor, kContext };

static void release_in_order(void** state, const int order[4]) {
  fixture_t* f = *state;
  loom_op_handler_t* w = tag(f, 'w', true);
  loom_tensor_handle_t* x = scalar(f, 1.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  loom_tensor_handle_t* y = binary(f, "AddV2", x, x);
  loom_tensor_handle_release(x);
  assert_true(value_of(f, y) == 2.0f);
  for (int i = 0; i < 4; ++i) {
    switch (order[i]) {
      case kHandler:
        loom_op_handler_release(w);
        break;
      case kScope:
        if (f->context) LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
        break;
      case kTensor:
        loom_tensor_handle_release(y);
        break;
      case kContext:
        loom_context_destroy(f->context);
        f->context = NULL;
        break;
    }
  }
  assert_int_equal(f->destroyed, 2);  // the handler and its merge
}

static void lifetime_handler_scope_tensor_context(void** state) {
  const int order[4] = {kHandler, kScope, kTensor, kContext};
  release_in_order(state, order);
}

static void lifetime_tensor_scope_handler_context(void** state) {
  const int order[4] = {kTensor, kScope, kHandler, kContext};
  release_in_order(state, order);
}

static void lifetime_context_first_then_tensor_and_handler(void** state) {
  const int order[4] = {kContext, kTensor, kHandler, kScope};
  release_in_order(state, order);
}

static void lifetime_context_then_handler_then_tensor(void** state) {
  const int order[4] = {kContext, kHandler, kTensor, kScope};
  release_in_order(state, order);
}

//===----------------------------------------------------------------------===//
// The logging handler
//===----------------------------------------------------------------------===//

static void logging_prints_each_op_and_passes_it_on(void** state) {
  fixture_t* f = *state;
  char* text = NULL;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_create(f->context, stream, &logging));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, logging));
  loom_tensor_handle_t* x = scalar(f, 1.5f);
  loom_tensor_handle_t* y = binary(f, "AddV2", x, x);
  // The result is the outer handler's tensor (pass-through).
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(f->context));
  assert_true(value_of(f, y) == 3.0f);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_tensor_handle_release(binary(f, "Mul", y, y));  // not logged
  fflush(stream);
  assert_string_equal(text, "[1] AddV2(float [], float []) T=DT_FLOAT\n");
  assert_int_equal(loom_scope_logging_handler_count(logging), 1);
  fclose(stream);
  free(text);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(logging);
  LOOM_ASSERT_STATUS(loom_scope_logging_handler_create(NULL, NULL, &logging),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_scope_logging_handler_create: context is NULL");
}

static void logging_stacked_on_a_wrapping_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* w = tag(f, 'w', true);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(loom_scope_logging_handler_create(f->context, NULL, &logging));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, logging));
  loom_tensor_handle_t* x = scalar(f, 2.0f);
  loom_tensor_handle_t* y = binary(f, "Mul", x, x);
  // Logging sees the op first and hands it to w, which copies the CPU
  // inputs on and wraps the result.
  assert_string_equal(f->trace.text, "w:CopyOn w:CopyOn w:Mul ");
  assert_int_equal(loom_scope_logging_handler_count(logging), 1);
  assert_string_equal(loom_op_handler_type_name(loom_tensor_handle_handler(y)),
                      "TAG");
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  assert_true(value_of(f, y) == 4.0f);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(logging);
  loom_op_handler_release(w);
}

static void logging_through_the_tensorflow_api(void** state) {
  fixture_t* f = *state;
  char* text = NULL;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_create(f->context, stream, &logging));
  const char* name = NULL;
  LOOM_ASSERT_OK(
      loom_context_add_handler(f->context, "LOGGING", logging, &name));
  assert_string_equal(name, "/job:localhost/replica:0/task:0/device:LOGGING:0");
  TFE_Context* ctx = (TFE_Context*)f->context;
  TF_Status* status = TF_NewStatus();
  loom_tensor_handle_t* x = scalar(f, 1.0f);
  // Placed on the handler's device name.
  TFE_Op* op = TFE_NewOp(ctx, "AddV2", status);
  TFE_OpSetDevice(op, "LOGGING:0", status);
  TFE_OpAddInput(op, (TFE_TensorHandle*)x, status);
  TFE_OpAddInput(op, (TFE_TensorHandle*)x, status);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &result, &num_retvals, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TFE_DeleteTensorHandle(result);
  // Inside its scope, as a language binding's `with` would open it.
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, logging));
  TFE_OpReset(op, "Mul", NULL, status);
  TFE_OpAddInput(op, (TFE_TensorHandle*)x, status);
  TFE_OpAddInput(op, (TFE_TensorHandle*)x, status);
  TFE_Execute(op, &result, &num_retvals, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TFE_DeleteTensorHandle(result);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  fflush(stream);
  assert_string_equal(text,
                      "[1] AddV2(float [], float []) T=DT_FLOAT\n"
                      "[2] Mul(float [], float []) T=DT_FLOAT\n");
  fclose(stream);
  free(text);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
  loom_tensor_handle_release(x);
  loom_op_handler_release(logging);
}

//===----------------------------------------------------------------------===//
// The numerics handler
//===----------------------------------------------------------------------===//

static void numerics_turns_inf_and_nan_into_errors(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* numerics = NULL;
  LOOM_ASSERT_OK(loom_numerics_handler_create(f->context, &numerics));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, numerics));
  loom_tensor_handle_t* one = scalar(f, 1.0f);
  loom_tensor_handle_t* zero = scalar(f, 0.0f);
  loom_tensor_handle_t* two = scalar(f, 2.0f);
  loom_tensor_handle_t* half = binary(f, "RealDiv", one, two);
  assert_true(value_of(f, half) == 0.5f);
  loom_tensor_handle_release(two);
  LOOM_ASSERT_STATUS(try_binary(f, "RealDiv", one, zero, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Detected Infinity or NaN in output 0 of "
                     "eagerly-executing op \"RealDiv\" (# of outputs: 1) : "
                     "Tensor had +Inf values");
  LOOM_ASSERT_STATUS(try_binary(f, "RealDiv", zero, zero, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "Tensor had NaN values");
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  // Outside the scope nothing is checked.
  loom_tensor_handle_t* inf = binary(f, "RealDiv", one, zero);
  loom_tensor_handle_release(inf);
  loom_tensor_handle_release(half);
  loom_tensor_handle_release(one);
  loom_tensor_handle_release(zero);
  loom_op_handler_release(numerics);
}

// A call of a stateless function under the handler runs its checked
// function (the body replayed once with a CheckNumericsV2 after each
// floating-point result, then called planned): the same values and the
// same errors as the body checked op by op.
static void numerics_checks_calls_in_their_checked_function(void** state) {
  fixture_t* f = *state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "div", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "div", "RealDiv", inputs, 2,
                                                NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "div:z:0"));
  loom_function_t* div = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &div));
  LOOM_ASSERT_OK(loom_context_add_function(f->context, div));
  loom_op_handler_t* numerics = NULL;
  LOOM_ASSERT_OK(loom_numerics_handler_create(f->context, &numerics));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, numerics));
  loom_tensor_handle_t* one = scalar(f, 1.0f);
  loom_tensor_handle_t* zero = scalar(f, 0.0f);
  loom_tensor_handle_t* two = scalar(f, 2.0f);
  for (int i = 0; i < 3; ++i) {
    loom_tensor_handle_t* half = binary(f, "div", one, two);
    assert_true(value_of(f, half) == 0.5f);
    loom_tensor_handle_release(half);
  }
  LOOM_ASSERT_STATUS(try_binary(f, "div", one, zero, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Detected Infinity or NaN in output 0 of "
                     "eagerly-executing op \"RealDiv\" (# of outputs: 1) : "
                     "Tensor had +Inf values");
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  // One checked function for the key (float scalars), planned after its
  // first call.
  assert_true(loom_context_has_function(f->context, "div_checked_0"));
  assert_false(loom_context_has_function(f->context, "div_checked_1"));
  loom_function_t* checked = NULL;
  LOOM_ASSERT_OK(
      loom_context_find_function(f->context, "div_checked_0", &checked));
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(checked, &stats));
  assert_true(stats.planned_calls >= 2);
  loom_function_release(checked);
  LOOM_ASSERT_OK(loom_context_remove_function(f->context, "div"));
  assert_false(loom_context_has_function(f->context, "div_checked_0"));
  loom_tensor_handle_t* all[] = {one, zero, two};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
  loom_function_release(div);
  loom_op_handler_release(numerics);
}

static void numerics_errors_arrive_with_async_results(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* numerics = NULL;
  LOOM_ASSERT_OK(loom_numerics_handler_create(f->context, &numerics));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, numerics));
  loom_tensor_handle_t* one = scalar(f, 1.0f);
  loom_tensor_handle_t* zero = scalar(f, 0.0f);
  loom_tensor_handle_t* inf = NULL;
  LOOM_ASSERT_OK(try_binary(f, "RealDiv", one, zero, &inf));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(f->context, inf, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT, "Tensor had +Inf values");
  LOOM_ASSERT_STATUS(loom_context_wait(f->context),
                     LOOM_STATUS_INVALID_ARGUMENT, "\"RealDiv\"");
  loom_context_clear_error(f->context);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_tensor_handle_release(inf);
  loom_tensor_handle_release(one);
  loom_tensor_handle_release(zero);
  loom_op_handler_release(numerics);
}

int main(void) {
#define TEST(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
#define ASYNC(test) cmocka_unit_test_setup_teardown(test, setup_async, teardown)
  const struct CMUnitTest tests[] = {
      TEST(three_handlers_see_an_op_innermost_first),
      TEST(merging_the_same_pair_gives_the_same_handler),
      TEST(a_tensor_places_its_op_on_its_handler),
      TEST(copies_on_and_off_and_their_gradients),
      TEST(static_values_and_debug_strings),
      TEST(lifetime_handler_scope_tensor_context),
      TEST(lifetime_tensor_scope_handler_context),
      TEST(lifetime_context_first_then_tensor_and_handler),
      TEST(lifetime_context_then_handler_then_tensor),
      TEST(logging_prints_each_op_and_passes_it_on),
      TEST(logging_stacked_on_a_wrapping_handler),
      TEST(logging_through_the_tensorflow_api),
      TEST(numerics_turns_inf_and_nan_into_errors),
      TEST(numerics_checks_calls_in_their_checked_function),
      ASYNC(numerics_errors_arrive_with_async_results),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
