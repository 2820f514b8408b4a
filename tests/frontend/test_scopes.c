// The eager front end: execution, placement, handler scopes, merges and
// copies, with a small wrapping handler defined here (each of its tensors
// holds the handle of the handler below it, as a gradient tape's would).

#include <stdlib.h>

#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// A wrapping transformation handler
//===----------------------------------------------------------------------===//

typedef struct wrap_state_t {
  loom_context_t* context;
  loom_op_handler_t* outer;  // retained; NULL before a merge
  char tag;                  // a letter, to tell handlers apart in traces
  char* trace;               // ops seen, appended as "<tag>:<op> "
  size_t trace_size;
} wrap_state_t;

static const loom_op_handler_vtable_t kWrapVtable;

static void trace(wrap_state_t* state, const char* op_name) {
  size_t length = strlen(state->trace);
  snprintf(state->trace + length, state->trace_size - length, "%c:%s ",
           state->tag, op_name);
}

static loom_status_t wrap_prepare(loom_op_handler_t* handler,
                                  const char* op_name, const loom_op_def_t* op,
                                  void** out_op_data) {
  (void)handler;
  (void)op;
  *out_op_data = strdup(op_name);
  return loom_ok_status();
}

static void wrap_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  free(data);
}

// Wraps `inner` (consumed) as a tensor of `handler`.
static loom_status_t wrap(loom_op_handler_t* handler,
                          loom_tensor_handle_t* inner,
                          loom_tensor_handle_t** out) {
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_metadata(inner, &metadata);
  loom_status_free(status);
  status = loom_tensor_handle_create_representation(
      handler, status ? NULL : &metadata, inner, out);
  if (status) loom_tensor_handle_release(inner);
  return status;
}

// The inner handle of one of our tensors (or of one from a handler we were
// merged on top of: it is already below us).
static loom_tensor_handle_t* unwrap(loom_op_handler_t* handler,
                                    loom_tensor_handle_t* handle) {
  if (loom_tensor_handle_handler(handle) == handler) {
    loom_tensor_handle_t* inner = loom_tensor_handle_representation(handle);
    loom_tensor_handle_retain(inner);
    return inner;
  }
  loom_tensor_handle_retain(handle);
  return handle;
}

static loom_status_t wrap_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  wrap_state_t* state = loom_op_handler_state(handler);
  const char* op_name = loom_prepared_op_data(invocation->op);
  trace(state, op_name);
  int32_t n = invocation->num_arguments;
  int32_t m = invocation->num_results;
  loom_tensor_handle_t* args[8];
  loom_tensor_handle_t* inner_results[8] = {NULL};
  for (int32_t i = 0; i < n; ++i) {
    args[i] = unwrap(handler, invocation->arguments[i]);
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  // Every op, the copies included, runs on the handler below with the
  // inner handles; the results are wrapped, except CopyOff's, which leave.
  bool copy_off = strcmp(op_name, "CopyOff") == 0;
  loom_status_t status = loom_runtime_execute(
      loom_op_handler_runtime(handler), op_name, state->outer,
      invocation->location, args, n, invocation->attrs, inner_results, m, NULL);
  for (int32_t i = 0; i < m; ++i) {
    invocation->results[i] = NULL;
    if (status || copy_off) {
      invocation->results[i] = inner_results[i];
      continue;
    }
    loom_status_t wrapped =
        wrap(handler, inner_results[i], &invocation->results[i]);
    if (wrapped && !status) status = wrapped;
  }
  return status;
}

static void wrap_destroy(void* opaque) {
  wrap_state_t* state = opaque;
  loom_op_handler_release(state->outer);
  free(state);
}

static loom_status_t make_wrap(loom_context_t* context, char tag, char* trace,
                               size_t trace_size, loom_op_handler_t* outer,
                               loom_op_handler_t** out);

static loom_status_t wrap_merge(loom_op_handler_t* handler,
                                loom_op_handler_t* outer,
                                loom_op_handler_t** out_merged) {
  wrap_state_t* state = loom_op_handler_state(handler);
  return make_wrap(state->context, state->tag, state->trace, state->trace_size,
                   outer, out_merged);
}

static void wrap_release_representation(loom_op_handler_t* handler,
                                        void* representation) {
  (void)handler;
  loom_tensor_handle_release(representation);
}

static const loom_op_handler_vtable_t kWrapVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "WRAP",
    .prepare = wrap_prepare,
    .release_op_data = wrap_release_op_data,
    .execute = wrap_execute,
    .destroy = wrap_destroy,
    .merge = wrap_merge,
    .release_representation = wrap_release_representation,
};

static loom_status_t make_wrap(loom_context_t* context, char tag, char* trace,
                               size_t trace_size, loom_op_handler_t* outer,
                               loom_op_handler_t** out) {
  wrap_state_t* state = calloc(1, sizeof(*state));
  state->context = context;
  state->tag = tag;
  state->trace = trace;
  state->trace_size = trace_size;
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_op_handler_create(loom_context_runtime(context),
                                                &kWrapVtable, state, NULL, out);
  if (status) wrap_destroy(state);
  return status;
}

//===----------------------------------------------------------------------===//
// Fixtures
//===----------------------------------------------------------------------===//

typedef struct fixture_t {
  loom_context_t* context;
  char trace[4096];
} fixture_t;

static int setup(void** state) {
  fixture_t* f = calloc(1, sizeof(*f));
  LOOM_ASSERT_OK(loom_context_create(NULL, &f->context));
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture_t* f = *state;
  loom_context_destroy(f->context);
  free(f);
  return 0;
}

// Runs a binary op on x and y (kept) and returns its result.
static loom_tensor_handle_t* binary(fixture_t* f, const char* op_name,
                                    loom_tensor_handle_t* x,
                                    loom_tensor_handle_t* y) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, op_name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  assert_int_equal(count, 1);
  loom_eager_op_destroy(op);
  return z;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void execute_runs_on_the_cpu_outside_any_scope(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.5f);
  loom_tensor_handle_t* y = loom_test_scalar(f->context, 2.0f);
  loom_tensor_handle_t* z = binary(f, "AddV2", x, y);
  assert_ptr_equal(loom_tensor_handle_handler(z), loom_context_cpu(f->context));
  assert_true(loom_test_scalar_value(f->context, z) == 1.5f + 2.0f);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(z);
}

static void unknown_op_is_not_found(void** state) {
  fixture_t* f = *state;
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_STATUS(loom_eager_op_create(f->context, "NoSuchOp", &op),
                     LOOM_STATUS_NOT_FOUND, "NoSuchOp");
  assert_null(op);
}

static void null_input_is_an_invalid_handle(void** state) {
  fixture_t* f = *state;
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AddV2", &op));
  LOOM_ASSERT_STATUS(loom_eager_op_add_input(op, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "Invalid handle");
  loom_eager_op_destroy(op);
}

static void synchronous_kernel_errors_come_back_from_execute(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.0f);
  loom_shape_t shape;
  int64_t dims[1] = {3};
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  int64_t dims2[1] = {2};
  loom_shape_t shape2;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape2, dims2, 1));
  loom_tensor_t* tensor2 = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape2, &tensor2));
  loom_tensor_handle_t* a = NULL;
  loom_tensor_handle_t* b = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(f->context, tensor, &a));
  LOOM_ASSERT_OK(loom_context_new_handle(f->context, tensor2, &b));
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AddV2", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, b));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Incompatible shapes: [3] vs. [2]");
  assert_int_equal(count, 0);
  loom_eager_op_destroy(op);
  loom_tensor_release(tensor);
  loom_tensor_release(tensor2);
  loom_tensor_handle_release(a);
  loom_tensor_handle_release(b);
  loom_tensor_handle_release(x);
}

static void ops_in_a_scope_run_on_its_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* w = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &w));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 3.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, w));
  loom_op_handler_t* merged = loom_context_scope_handler(f->context);
  assert_non_null(merged);
  assert_ptr_not_equal(merged, w);  // a merge of w onto the CPU
  loom_tensor_handle_t* y = binary(f, "Mul", x, x);
  assert_ptr_equal(loom_tensor_handle_handler(y), merged);
  // The CPU input went on first: a CopyOn, then the op.
  assert_string_equal(f->trace, "a:CopyOn a:CopyOn a:Mul ");
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  // Outside the scope, an op on y still goes to y's handler.
  loom_tensor_handle_t* z = binary(f, "AddV2", y, x);
  assert_ptr_equal(loom_tensor_handle_handler(z), merged);
  assert_true(loom_test_scalar_value(f->context, z) == 3.0f * 3.0f + 3.0f);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(z);
  loom_op_handler_release(w);
}

static void the_scope_entered_last_sees_an_op_first(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* handlers[3];
  const char tags[3] = {'a', 'b', 'c'};
  for (int i = 0; i < 3; ++i) {
    LOOM_ASSERT_OK(make_wrap(f->context, tags[i], f->trace, sizeof(f->trace),
                             NULL, &handlers[i]));
  }
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 2.0f);
  for (int i = 0; i < 3; ++i) {
    LOOM_ASSERT_OK(loom_context_enter_scope(f->context, handlers[i]));
  }
  f->trace[0] = '\0';
  loom_tensor_handle_t* y = binary(f, "Mul", x, x);
  // c is innermost: it sees the copies and the op first, then b, then a.
  assert_non_null(strstr(f->trace, "c:Mul b:Mul a:Mul"));
  assert_true(loom_test_scalar_value(f->context, y) == 4.0f);
  for (int i = 0; i < 3; ++i)
    LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_STATUS(loom_context_exit_scope(f->context),
                     LOOM_STATUS_FAILED_PRECONDITION, "no handler scope");
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  for (int i = 0; i < 3; ++i) loom_op_handler_release(handlers[i]);
}

static void reentering_a_merged_handler_gives_the_same_merge(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = NULL;
  loom_op_handler_t* b = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &a));
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'b', f->trace, sizeof(f->trace), NULL, &b));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, b));
  loom_op_handler_t* ab = loom_context_scope_handler(f->context);
  loom_op_handler_retain(ab);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  assert_null(loom_context_scope_handler(f->context));
  // Entering the merge re-opens a, then b: the same merged handler.
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, ab));
  assert_ptr_equal(loom_context_scope_handler(f->context), ab);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  // Inside a, entering the merge opens only b.
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, ab));
  assert_ptr_equal(loom_context_scope_handler(f->context), ab);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  const char* name = loom_context_handler_name(f->context, ab);
  assert_non_null(name);
  assert_non_null(strstr(name, "/job:localhost/replica:0/task:0/device:WRAP:"));
  loom_op_handler_release(ab);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
}

static void inputs_on_two_handlers_are_an_error_naming_both(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = NULL;
  loom_op_handler_t* b = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &a));
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'b', f->trace, sizeof(f->trace), NULL, &b));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  loom_tensor_handle_t* on_a = binary(f, "Mul", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, b));
  loom_tensor_handle_t* on_b = binary(f, "Mul", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AddV2", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, on_a));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, on_b));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "inputs are placed on two different op handlers, "
                     "'/job:localhost/replica:0/task:0/device:WRAP:");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(on_a);
  loom_tensor_handle_release(on_b);
  loom_tensor_handle_release(x);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
}

// Tensors of two CPU devices meet in one op as TensorFlow's do (host
// memory: nothing is copied): on the device of the scope, else on the
// default device. (A device and a transformation handler do not:
// inputs_on_two_handlers_are_an_error_naming_both.)
static void tensors_of_two_cpu_devices_meet_on_the_default_device(
    void** state) {
  fixture_t* f = *state;
  LOOM_ASSERT_OK(loom_context_set_cpu_device_count(f->context, 3));
  loom_op_handler_t* cpu1 = loom_context_find_handler(f->context, "CPU:1");
  loom_op_handler_t* cpu2 = loom_context_find_handler(f->context, "CPU:2");
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 2.0f);
  loom_tensor_handle_t *on1 = NULL, *on2 = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(f->context, x, cpu1, &on1));
  LOOM_ASSERT_OK(loom_context_copy_to(f->context, x, cpu2, &on2));
  loom_tensor_handle_t* y = binary(f, "Mul", on1, on2);
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(f->context));
  assert_true(loom_test_scalar_value(f->context, y) == 4.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, cpu2));
  loom_tensor_handle_t* z = binary(f, "AddV2", on1, on1);
  assert_ptr_equal(loom_tensor_handle_handler(z), cpu2);
  assert_true(loom_test_scalar_value(f->context, z) == 4.0f);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_tensor_handle_t* all[] = {x, on1, on2, y, z};
  for (int i = 0; i < 5; ++i) loom_tensor_handle_release(all[i]);
}

// An explicit device places the op, and the transformations open in the
// scope still see it (a tape records ops whatever their device, as
// TensorFlow's does): the op runs on them merged onto the device, here the
// scope's own merge. A device that does not exist is an error.
static void an_explicit_device_places_the_op_under_the_scope(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &a));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  loom_op_handler_t* merged = loom_context_scope_handler(f->context);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AddV2", &op));
  LOOM_ASSERT_OK(loom_eager_op_set_device(op, "CPU:0"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  f->trace[0] = '\0';
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  assert_ptr_equal(loom_tensor_handle_handler(z), merged);
  assert_non_null(strstr(f->trace, "a:AddV2"));
  assert_true(loom_test_scalar_value(f->context, z) == 2.0f);
  LOOM_ASSERT_OK(loom_eager_op_set_device(op, "/device:GPU:3"));
  loom_tensor_handle_release(z);
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &z, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Could not satisfy device specification "
                     "'/device:GPU:3'. enable_soft_placement=0. Supported "
                     "device types [CPU]. All available devices "
                     "[/job:localhost/replica:0/task:0/device:CPU:0");
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  loom_tensor_handle_release(x);
  loom_op_handler_release(a);
}

static void resolving_copies_off_the_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &a));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 5.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  loom_tensor_handle_t* y = binary(f, "AddV2", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  f->trace[0] = '\0';
  assert_true(loom_test_scalar_value(f->context, y) == 10.0f);
  assert_string_equal(f->trace, "a:CopyOff ");
  // The bare handle has no value to resolve directly.
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_tensor_handle_resolve(y, &tensor),
                     LOOM_STATUS_FAILED_PRECONDITION, "copy it off");
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(a);
}

static void handlers_and_tensors_may_go_in_any_order(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* a = NULL;
  LOOM_ASSERT_OK(
      make_wrap(f->context, 'a', f->trace, sizeof(f->trace), NULL, &a));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, a));
  loom_tensor_handle_t* y = binary(f, "AddV2", x, x);
  // Release the handler and leave the scope while y still lives on it.
  loom_op_handler_release(a);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  assert_true(loom_test_scalar_value(f->context, y) == 2.0f);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(execute_runs_on_the_cpu_outside_any_scope,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(unknown_op_is_not_found, setup, teardown),
      cmocka_unit_test_setup_teardown(null_input_is_an_invalid_handle, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          synchronous_kernel_errors_come_back_from_execute, setup, teardown),
      cmocka_unit_test_setup_teardown(ops_in_a_scope_run_on_its_handler, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(the_scope_entered_last_sees_an_op_first,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          reentering_a_merged_handler_gives_the_same_merge, setup, teardown),
      cmocka_unit_test_setup_teardown(
          inputs_on_two_handlers_are_an_error_naming_both, setup, teardown),
      cmocka_unit_test_setup_teardown(
          tensors_of_two_cpu_devices_meet_on_the_default_device, setup,
          teardown),
      cmocka_unit_test_setup_teardown(
          an_explicit_device_places_the_op_under_the_scope, setup, teardown),
      cmocka_unit_test_setup_teardown(resolving_copies_off_the_handler, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(handlers_and_tensors_may_go_in_any_order,
                                      setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
