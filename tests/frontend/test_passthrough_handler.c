// The pass-through handler base (src/frontend/passthrough_handler.h): ops
// run on the outer handler, merges share the shared state, handler op data
// wraps the op prepared on the outer handler and is shared only where the
// type accepts it, notes left on an invocation reach the handlers below,
// and every error path frees what it made.

#include <stdlib.h>

#include "frontend/passthrough_handler.h"
#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

//===----------------------------------------------------------------------===//
// A test type: counts what it sees in its shared state
//===----------------------------------------------------------------------===//

typedef struct counter_t {
  loom__passthrough_shared_t base;
  int references;  // held by states and by the test
  int initialized;
  int deinitialized;
  int executed;
  bool fail_initialize;  // the next initialize fails
  bool reusable;         // op_data_reusable's answer
  bool fail_after;       // execute fails the results after the op ran
  const void* note;      // what the last op's note with kNoteKey said
} counter_t;

// Its op data: the outer op, and the op's name length.
typedef struct counter_op_t {
  loom__passthrough_op_t base;
  size_t name_length;
} counter_op_t;

static const char kNoteKey = 0;

static void counter_retain(void* shared) {
  ((counter_t*)shared)->references++;
}

static void counter_release(void* shared) {
  ((counter_t*)shared)->references--;
}

static loom_status_t counter_initialize(loom__passthrough_t* base) {
  counter_t* counter = base->shared;
  counter->initialized++;
  if (!counter->fail_initialize) return loom_ok_status();
  counter->fail_initialize = false;
  return loom_make_status(LOOM_STATUS_UNAVAILABLE, "initialize refused");
}

static void counter_deinitialize(loom__passthrough_t* base) {
  ((counter_t*)base->shared)->deinitialized++;
}

// Prepares any op but Neg, which it refuses.
static loom_status_t counter_prepare_op(loom__passthrough_t* base,
                                        const char* op_name,
                                        const loom_op_def_t* op_def,
                                        loom__passthrough_op_t* data) {
  (void)base;
  (void)op_def;
  if (strcmp(op_name, "Neg") == 0) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED, "no Neg here");
  }
  ((counter_op_t*)data)->name_length = strlen(op_name);
  return loom_ok_status();
}

static bool counter_op_data_reusable(const loom__passthrough_t* base,
                                     const loom__passthrough_op_t* data) {
  (void)data;
  return ((const counter_t*)base->shared)->reusable;
}

static loom_status_t counter_execute(loom_op_handler_t* handler,
                                     loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  counter_t* counter = base->shared;
  const counter_op_t* data = loom_prepared_op_data(invocation->op);
  assert_int_equal(data->name_length,
                   strlen(loom_prepared_op_name(invocation->op)));
  counter->executed++;
  counter->note = loom_op_invocation_note(invocation, &kNoteKey);
  loom_status_t status =
      loom__passthrough_forward(base, invocation, data->base.outer_op);
  if (status || !counter->fail_after) return status;
  return loom__passthrough_fail_results(
      invocation, base->effective_outer,
      loom_make_status(LOOM_STATUS_DATA_LOSS, "failed after the op"));
}

static const loom_op_handler_vtable_t kCounterVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "COUNTER",
    LOOM__PASSTHROUGH_HOOKS,
    .reuse_op_data = loom__passthrough_reuse_op_data,
    .execute = counter_execute,
};

static const loom__passthrough_type_t kCounterType = {
    .vtable = &kCounterVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = counter_retain,
    .release_shared = counter_release,
    .initialize = counter_initialize,
    .deinitialize = counter_deinitialize,
    .op_data_size = sizeof(counter_op_t),
    .prepare_op = counter_prepare_op,
    .op_data_reusable = counter_op_data_reusable,
};

//===----------------------------------------------------------------------===//
// Two more: one that only forwards, one that leaves a note
//===----------------------------------------------------------------------===//

static const loom_op_handler_vtable_t kPlainVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "PLAIN",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = loom__passthrough_execute,
};

static const loom__passthrough_type_t kPlainType = {
    .vtable = &kPlainVtable,
    .state_size = sizeof(loom__passthrough_t),
};

// Leaves the note kNoteKey: its shared state.
static loom_status_t note_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  const loom__passthrough_t* base = loom_op_handler_state(handler);
  return loom__passthrough_forward_noted(base, invocation, &kNoteKey,
                                         base->shared);
}

static const loom_op_handler_vtable_t kNoteVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "NOTE",
    LOOM__PASSTHROUGH_HOOKS,
    .execute = note_execute,
};

static const loom__passthrough_type_t kNoteType = {
    .vtable = &kNoteVtable,
    .state_size = sizeof(loom__passthrough_t),
    .retain_shared = loom__passthrough_shared_retain,
    .release_shared = loom__passthrough_shared_release,
};

//===----------------------------------------------------------------------===//
// Fixture and helpers
//===----------------------------------------------------------------------===//

static loom_context_t* g_ctx;

static int setup(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  LOOM_ASSERT_OK(loom_context_create(&options, &g_ctx));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_ctx);
  return 0;
}

static loom_op_handler_t* make(const loom__passthrough_type_t* type,
                               void* shared) {
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_OK(loom__passthrough_create(type, g_ctx, loom_allocator_default(),
                                          shared, NULL, &handler));
  return handler;
}

static handle_t* scalar(float value) {
  return loom_test_scalar(g_ctx, value);
}

static float value_of(handle_t* handle) {
  return loom_test_scalar_value(g_ctx, handle);
}

// Runs `op_name` on x (and x again when `binary`) in the current scope.
static loom_status_t run(const char* op_name, handle_t* x, bool binary,
                         handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, op_name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  if (binary) LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  int32_t count = 0;
  *out = NULL;
  loom_status_t status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void ops_run_on_the_outer_handler(void** state) {
  (void)state;
  loom_op_handler_t* plain = make(&kPlainType, NULL);
  assert_non_null(loom__passthrough_of(plain, &kPlainType));
  assert_null(loom__passthrough_of(plain, &kCounterType));
  assert_null(loom__passthrough_of(loom_context_cpu(g_ctx), &kPlainType));
  assert_null(loom__passthrough_of(NULL, &kPlainType));
  handle_t* x = scalar(3.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, plain));
  handle_t* y = NULL;
  LOOM_ASSERT_OK(run("Neg", x, false, &y));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(g_ctx));
  assert_true(value_of(y) == -3.0f);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(plain);
}

static void merges_share_the_state_and_run_on_their_outer(void** state) {
  (void)state;
  counter_t counter = {.reusable = true};
  loom_op_handler_t* handler = make(&kCounterType, &counter);
  loom_op_handler_t* plain = make(&kPlainType, NULL);
  assert_int_equal(counter.references, 1);
  handle_t* x = scalar(2.0f);
  // The counter merged onto the plain handler: a second state.
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, plain));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, handler));
  loom_op_handler_t* merged = loom_context_scope_handler(g_ctx);
  assert_ptr_not_equal(merged, handler);
  loom__passthrough_t* base = loom__passthrough_of(merged, &kCounterType);
  assert_non_null(base);
  assert_ptr_equal(base->shared, &counter);
  assert_non_null(base->outer);
  assert_ptr_equal(base->effective_outer, base->outer);
  assert_int_equal(counter.references, 2);
  assert_int_equal(counter.initialized, 2);
  handle_t* y = NULL;
  LOOM_ASSERT_OK(run("AddV2", x, true, &y));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(counter.executed, 1);
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(g_ctx));
  assert_true(value_of(y) == 4.0f);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(plain);
  loom_op_handler_release(handler);
  // The merge goes with the context's records of it, the handler with the
  // last reference to it: every state releases the shared state once.
  loom_context_destroy(g_ctx);
  setup(NULL);
  assert_int_equal(counter.references, 0);
  assert_int_equal(counter.deinitialized, counter.initialized);
}

static void prepare_errors_reach_the_caller(void** state) {
  (void)state;
  counter_t counter = {.reusable = true};
  loom_op_handler_t* handler = make(&kCounterType, &counter);
  handle_t* x = scalar(1.0f);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, handler));
  handle_t* y = NULL;
  LOOM_ASSERT_STATUS(run("Neg", x, false, &y), LOOM_STATUS_UNIMPLEMENTED,
                     "no Neg here");
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(run("Mul", x, true, &y));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(counter.executed, 1);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(handler);
  assert_int_equal(counter.references, 0);
}

static void initialize_failure_destroys_the_new_handler(void** state) {
  (void)state;
  counter_t counter = {.fail_initialize = true};
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_STATUS(
      loom__passthrough_create(&kCounterType, g_ctx, loom_allocator_default(),
                               &counter, NULL, &handler),
      LOOM_STATUS_UNAVAILABLE, "initialize refused");
  assert_null(handler);
  assert_int_equal(counter.initialized, 1);
  assert_int_equal(counter.deinitialized, 1);
  assert_int_equal(counter.references, 0);
}

static void op_data_is_shared_only_where_the_type_accepts_it(void** state) {
  (void)state;
  counter_t counter = {.reusable = true};
  loom_runtime_t* runtime = loom_context_runtime(g_ctx);
  loom_op_handler_t* a = make(&kCounterType, &counter);
  loom_op_handler_t* b = make(&kCounterType, &counter);
  loom_prepared_op_t* op_a = NULL;
  loom_prepared_op_t* op_b = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op(runtime, "AddV2", a, &op_a));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(op_a, b, &op_b));
  assert_ptr_equal(loom_prepared_op_data(op_b), loom_prepared_op_data(op_a));
  loom_prepared_op_release(op_b);
  counter.reusable = false;
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(op_a, b, &op_b));
  assert_ptr_not_equal(loom_prepared_op_data(op_b),
                       loom_prepared_op_data(op_a));
  loom_prepared_op_release(op_b);
  // A handler on another outer handler prepares its own.
  counter.reusable = true;
  loom_op_handler_t* plain = make(&kPlainType, NULL);
  loom_op_handler_t* merged = NULL;
  LOOM_ASSERT_OK(loom_op_handler_vtable(b)->merge(b, plain, &merged));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(op_a, merged, &op_b));
  assert_ptr_not_equal(loom_prepared_op_data(op_b),
                       loom_prepared_op_data(op_a));
  loom_prepared_op_release(op_b);
  loom_prepared_op_release(op_a);
  loom_op_handler_release(merged);
  loom_op_handler_release(plain);
  loom_op_handler_release(b);
  loom_op_handler_release(a);
  assert_int_equal(counter.references, 0);
}

static void notes_reach_the_handlers_below(void** state) {
  (void)state;
  counter_t counter = {.reusable = true};
  loom_op_handler_t* handler = make(&kCounterType, &counter);
  void* first = NULL;
  void* second = NULL;
  LOOM_ASSERT_OK(loom__passthrough_shared_create(
      loom_allocator_default(), sizeof(loom__passthrough_shared_t), &first));
  LOOM_ASSERT_OK(loom__passthrough_shared_create(
      loom_allocator_default(), sizeof(loom__passthrough_shared_t), &second));
  loom_op_handler_t* outer_note = make(&kNoteType, first);
  loom_op_handler_t* inner_note = make(&kNoteType, second);
  handle_t* x = scalar(1.0f);
  handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, handler));
  LOOM_ASSERT_OK(run("AddV2", x, true, &y));
  loom_tensor_handle_release(y);
  assert_null(counter.note);  // none without a note handler
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer_note));
  LOOM_ASSERT_OK(run("AddV2", x, true, &y));
  loom_tensor_handle_release(y);
  assert_ptr_equal(counter.note, first);
  // The note left last, by the scope entered first, comes first.
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner_note));
  LOOM_ASSERT_OK(run("AddV2", x, true, &y));
  loom_tensor_handle_release(y);
  assert_ptr_equal(counter.note, first);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  // Taken off once the op has passed.
  LOOM_ASSERT_OK(run("AddV2", x, true, &y));
  loom_tensor_handle_release(y);
  assert_null(counter.note);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_tensor_handle_release(x);
  loom_op_handler_release(inner_note);
  loom_op_handler_release(outer_note);
  loom__passthrough_shared_release(second);
  loom__passthrough_shared_release(first);
  loom_op_handler_release(handler);
}

static void fail_results_replaces_the_results_with_errors(void** state) {
  (void)state;
  counter_t counter = {.fail_after = true};
  loom_op_handler_t* handler = make(&kCounterType, &counter);
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op(loom_context_runtime(g_ctx), "AddV2",
                                         handler, &op));
  handle_t* arguments[2] = {scalar(1.0f), scalar(2.0f)};
  handle_t* y = NULL;
  LOOM_ASSERT_STATUS(
      loom_runtime_execute_prepared(op, (loom_location_t){0}, arguments, 2,
                                    NULL, &y, 1, NULL),
      LOOM_STATUS_DATA_LOSS, "failed after the op");
  assert_int_equal(counter.executed, 1);
  assert_non_null(y);
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(g_ctx));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(g_ctx, y, &tensor),
                     LOOM_STATUS_DATA_LOSS, "failed after the op");
  loom_context_clear_error(g_ctx);
  loom_tensor_handle_release(y);
  loom_prepared_op_release(op);
  loom_op_handler_release(handler);
  assert_int_equal(counter.references, 0);
}

// Makes a counter handler and a merge of it with `allocator`, runs an op
// on the merge, and releases everything.
static loom_status_t create_merge_and_run(loom_allocator_t allocator,
                                          void* context) {
  (void)context;
  void* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom__passthrough_shared_create(
      allocator, sizeof(loom__passthrough_shared_t), &shared));
  loom_op_handler_t* handler = NULL;
  loom_op_handler_t* plain = NULL;
  loom_op_handler_t* merged = NULL;
  loom_prepared_op_t* op = NULL;
  loom_status_t status = loom__passthrough_create(&kNoteType, g_ctx, allocator,
                                                  shared, NULL, &handler);
  loom__passthrough_shared_release(shared);
  if (!status) {
    status = loom__passthrough_create(&kPlainType, g_ctx, allocator, NULL, NULL,
                                      &plain);
  }
  if (!status) {
    status = loom_op_handler_vtable(handler)->merge(handler, plain, &merged);
  }
  if (!status) {
    status = loom_runtime_prepare_op(loom_context_runtime(g_ctx), "Neg", merged,
                                     &op);
  }
  if (!status) {
    handle_t* arguments[1] = {scalar(5.0f)};
    handle_t* result = NULL;
    status = loom_runtime_execute_prepared(op, (loom_location_t){0}, arguments,
                                           1, NULL, &result, 1, NULL);
    if (!status) assert_true(value_of(result) == -5.0f);
    loom_tensor_handle_release(result);
  }
  loom_prepared_op_release(op);
  loom_op_handler_release(merged);
  loom_op_handler_release(plain);
  loom_op_handler_release(handler);
  return status;
}

static void every_allocation_failure_is_reported_and_freed(void** state) {
  (void)state;
  loom_test_fault_sweep(create_merge_and_run, NULL, LOOM_TEST_SWEEP_STRICT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(ops_run_on_the_outer_handler, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          merges_share_the_state_and_run_on_their_outer, setup, teardown),
      cmocka_unit_test_setup_teardown(prepare_errors_reach_the_caller, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          initialize_failure_destroys_the_new_handler, setup, teardown),
      cmocka_unit_test_setup_teardown(
          op_data_is_shared_only_where_the_type_accepts_it, setup, teardown),
      cmocka_unit_test_setup_teardown(notes_reach_the_handlers_below, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          fail_results_replaces_the_results_with_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(
          every_allocation_failure_is_reported_and_freed, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
