// A handler loaded from a plugin (examples/plugins/counter): the plugin's
// entry points, its handler in a scope, its handler-specific op, and the
// loader's errors. Linked with the shared libloom, as the plugin is.

#include <stdlib.h>

#include "loom/loom.h"
#include "test_support.h"

typedef struct fixture_t {
  loom_context_t* context;
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

static void add(fixture_t* f, loom_tensor_handle_t* x) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AddV2", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  loom_tensor_handle_t* z = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &z, 1, &count));
  loom_tensor_handle_release(z);
  loom_eager_op_destroy(op);
}

// Runs the handler's own op; its status, and the count in *out.
static loom_status_t counter_read(fixture_t* f, const char* device,
                                  int64_t* out) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "CounterRead", &op));
  LOOM_ASSERT_OK(loom_eager_op_set_device(op, device));
  loom_tensor_handle_t* count = NULL;
  int32_t n = 0;
  loom_status_t status = loom_eager_op_execute(op, &count, 1, &n);
  if (!status) {
    loom_tensor_t* tensor = NULL;
    LOOM_ASSERT_OK(loom_context_resolve(f->context, count, &tensor));
    *out = *(int64_t*)loom_tensor_data(tensor);
    loom_tensor_release(tensor);
  }
  loom_tensor_handle_release(count);
  loom_eager_op_destroy(op);
  return status;
}

static void a_plugin_provides_a_handler(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* counter = NULL;
  const char* name = NULL;
  LOOM_ASSERT_OK(loom_context_load_handler(f->context, LOOM_HANDLER_PLUGIN_PATH,
                                           "start=10", &counter, &name));
  assert_string_equal(name, "/job:localhost/replica:0/task:0/device:COUNTER:0");
  LOOM_ASSERT_OK(loom_context_enter_scope(f->context, counter));
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 1.0f);
  for (int i = 0; i < 3; ++i) add(f, x);
  int64_t count = 0;
  LOOM_ASSERT_OK(counter_read(f, NULL, &count));  // in the scope
  assert_int_equal(count, 13);
  LOOM_ASSERT_OK(loom_context_exit_scope(f->context));
  add(f, x);  // outside the scope: not counted
  LOOM_ASSERT_OK(counter_read(f, name, &count));  // placed on it by name
  assert_int_equal(count, 13);
  // Elsewhere the op has no kernel, and the error says so.
  LOOM_ASSERT_STATUS(counter_read(f, NULL, &count), LOOM_STATUS_NOT_FOUND,
                     "No registered 'CounterRead' kernel for 'CPU' devices "
                     "compatible with attributes {}. Registered: <no "
                     "registered kernels>");
  loom_tensor_handle_release(x);
  // Loading it again makes a second handler of the same type.
  loom_op_handler_t* second = NULL;
  LOOM_ASSERT_OK(loom_context_load_handler(f->context, LOOM_HANDLER_PLUGIN_PATH,
                                           NULL, &second, &name));
  assert_string_equal(name, "/job:localhost/replica:0/task:0/device:COUNTER:1");
  loom_op_handler_release(second);
  LOOM_ASSERT_STATUS(
      loom_context_load_handler(f->context, LOOM_HANDLER_PLUGIN_PATH, "bad",
                                &second, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "counter handler: unknown options 'bad' (expected 'start=N')");
  assert_null(second);
  loom_op_handler_release(counter);
}

static void handler_plugin_errors(void** state) {
  fixture_t* f = *state;
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_STATUS(loom_context_load_handler(f->context, "/no/such/lib.so",
                                               NULL, &handler, NULL),
                     LOOM_STATUS_NOT_FOUND,
                     "cannot load plugin '/no/such/lib.so'");
  LOOM_ASSERT_STATUS(
      loom_context_load_handler(f->context, LOOM_PLAIN_PLUGIN_PATH, NULL,
                                &handler, NULL),
      LOOM_STATUS_NOT_FOUND, "does not export LoomCreateOpHandler");
  LOOM_ASSERT_STATUS(loom_context_load_handler(NULL, "x", NULL, &handler, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_context_load_handler: context is NULL");
  assert_null(handler);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_plugin_provides_a_handler, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(handler_plugin_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
