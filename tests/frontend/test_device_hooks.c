// The hooks of a device that runs ops itself (execute_eager_op, pins_op,
// tensor_dtype), natively: the device here boxes CPU tensors and counts
// what it sees. TensorFlow's custom devices are built on these hooks
// (tests/compat/test_eager_custom_device.c).

#include <stdlib.h>

#include "loom/loom.h"
#include "test_support.h"

typedef struct box_state_t {
  bool pin;       // what pins_op answers
  int asked;      // pins_op calls
  int executed;   // execute_eager_op calls
  int copied_on;  // CopyOn invocations
  char last_op[64];
} box_state_t;

// A boxed tensor's representation: the CPU handle it holds (retained).
static loom_status_t box(loom_op_handler_t* handler,
                         loom_tensor_handle_t* inner,
                         loom_tensor_handle_t** out) {
  loom_tensor_handle_retain(inner);
  loom_status_t status =
      loom_tensor_handle_create_representation(handler, NULL, inner, out);
  if (status) loom_tensor_handle_release(inner);
  return status;
}

static loom_status_t box_prepare(loom_op_handler_t* handler,
                                 const char* op_name, const loom_op_def_t* op,
                                 void** out_op_data) {
  (void)handler;
  (void)op_name;
  (void)op;
  *out_op_data = NULL;
  return loom_ok_status();
}

// What reaches execute: the front end's copies on and off.
static loom_status_t box_execute(loom_op_handler_t* handler,
                                 loom_op_invocation_t* invocation) {
  box_state_t* state = loom_op_handler_state(handler);
  const char* name = loom_prepared_op_name(invocation->op);
  loom_tensor_handle_t* argument = invocation->arguments[0];
  loom_status_t status = loom_ok_status();
  if (strcmp(name, "CopyOn") == 0) {
    state->copied_on++;
    status = box(handler, argument, &invocation->results[0]);
  } else if (strcmp(name, "CopyOff") == 0) {
    invocation->results[0] = loom_tensor_handle_representation(argument);
    loom_tensor_handle_retain(invocation->results[0]);
  } else {
    status = loom_make_status(LOOM_STATUS_UNIMPLEMENTED, "%s", name);
  }
  if (status) return loom_op_invocation_fail(invocation, status, false);
  loom_tensor_handle_release(argument);
  invocation->arguments[0] = NULL;
  return loom_ok_status();
}

// Every op placed here: an identity of its first input, boxed.
static loom_status_t box_execute_eager_op(loom_op_handler_t* handler,
                                          loom_eager_op_t* op, int32_t expected,
                                          loom_tensor_handle_t** results,
                                          int32_t capacity,
                                          int32_t* out_count) {
  box_state_t* state = loom_op_handler_state(handler);
  state->executed++;
  snprintf(state->last_op, sizeof(state->last_op), "%s",
           loom_eager_op_name(op));
  assert_int_equal(expected, 1);
  assert_true(capacity >= 1);
  loom_tensor_handle_t* input = loom_eager_op_input(op, 0);
  if (loom_tensor_handle_handler(input) == handler) {
    input = loom_tensor_handle_representation(input);
  }
  *out_count = 1;
  return box(handler, input, &results[0]);
}

static loom_status_t box_pins_op(loom_op_handler_t* handler,
                                 loom_eager_op_t* op, bool* out_pin) {
  (void)op;
  box_state_t* state = loom_op_handler_state(handler);
  state->asked++;
  *out_pin = state->pin;
  return loom_ok_status();
}

static loom_dtype_t box_tensor_dtype(const loom_op_handler_t* handler,
                                     const loom_tensor_handle_t* handle) {
  (void)handler;
  return loom_tensor_handle_dtype(loom_tensor_handle_representation(handle));
}

static void box_release_representation(loom_op_handler_t* handler,
                                       void* representation) {
  (void)handler;
  loom_tensor_handle_release(representation);
}

static const loom_op_handler_vtable_t kBoxVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "BOX",
    .prepare = box_prepare,
    .execute = box_execute,
    .destroy = free,
    .release_representation = box_release_representation,
    .execute_eager_op = box_execute_eager_op,
    .pins_op = box_pins_op,
    .tensor_dtype = box_tensor_dtype,
};

typedef struct fixture_t {
  loom_context_t* context;
  loom_op_handler_t* device;  // retained
  const char* name;
  box_state_t* state;  // the device's
} fixture_t;

static int setup(void** state) {
  fixture_t* f = calloc(1, sizeof(*f));
  LOOM_ASSERT_OK(loom_context_create(NULL, &f->context));
  f->state = calloc(1, sizeof(*f->state));
  f->state->pin = true;
  LOOM_ASSERT_OK(loom_op_handler_create(loom_context_runtime(f->context),
                                        &kBoxVtable, f->state, NULL,
                                        &f->device));
  LOOM_ASSERT_OK(
      loom_context_add_handler(f->context, "BOX", f->device, &f->name));
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture_t* f = *state;
  loom_op_handler_release(f->device);
  loom_context_destroy(f->context);
  free(f);
  return 0;
}

// Identity of `x`, placed on `device` (NULL: no explicit placement).
static loom_tensor_handle_t* identity(fixture_t* f, loom_tensor_handle_t* x,
                                      const char* device) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "Identity", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_set_device(op, device));
  loom_tensor_handle_t* y = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &y, 1, &count));
  assert_int_equal(count, 1);
  loom_eager_op_destroy(op);
  return y;
}

// A scalar copied onto the device.
static loom_tensor_handle_t* on_device(fixture_t* f, float value) {
  loom_tensor_handle_t* x = loom_test_scalar(f->context, value);
  loom_tensor_handle_t* boxed = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(f->context, x, f->device, &boxed));
  loom_tensor_handle_release(x);
  return boxed;
}

static void an_op_placed_on_the_device_runs_whole_there(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* x = loom_test_scalar(f->context, 3.0f);
  loom_tensor_handle_t* y = identity(f, x, f->name);
  assert_int_equal(f->state->executed, 1);
  assert_string_equal(f->state->last_op, "Identity");
  assert_int_equal(f->state->copied_on, 0);  // the input came as it was
  assert_int_equal(f->state->asked, 0);      // placed explicitly
  assert_ptr_equal(loom_tensor_handle_handler(y), f->device);
  assert_true(loom_test_scalar_value(f->context, y) == 3.0f);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

static void a_copy_onto_the_device_is_a_copy_on(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* boxed = on_device(f, 5.0f);
  assert_int_equal(f->state->copied_on, 1);
  assert_ptr_equal(loom_tensor_handle_handler(boxed), f->device);
  // Without metadata, the dtype comes from the device.
  assert_false(loom_tensor_handle_metadata_available(boxed));
  assert_int_equal(loom_tensor_handle_dtype(boxed), LOOM_DTYPE_FLOAT);
  assert_true(loom_test_scalar_value(f->context, boxed) == 5.0f);
  loom_tensor_handle_release(boxed);
}

static void pins_op_decides_where_an_input_places_an_op(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* boxed = on_device(f, 7.0f);
  loom_tensor_handle_t* y = identity(f, boxed, NULL);
  assert_int_equal(f->state->asked, 1);
  assert_int_equal(f->state->executed, 1);
  assert_ptr_equal(loom_tensor_handle_handler(y), f->device);
  loom_tensor_handle_release(y);
  // Declined: the op runs on the CPU, its input copied off the device.
  f->state->pin = false;
  y = identity(f, boxed, NULL);
  assert_int_equal(f->state->asked, 2);
  assert_int_equal(f->state->executed, 1);
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(f->context));
  assert_true(loom_test_scalar_value(f->context, y) == 7.0f);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(boxed);
}

int main(void) {
#define TEST(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
  const struct CMUnitTest tests[] = {
      TEST(an_op_placed_on_the_device_runs_whole_there),
      TEST(a_copy_onto_the_device_is_a_copy_on),
      TEST(pins_op_decides_where_an_input_places_an_op),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
