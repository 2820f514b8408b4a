// The variable ops (src/kernels/resource.c) through the eager API:
// resource tensors, assign and read, copy-on-write, updates in place,
// destruction, shared names, and every error message.

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

static loom_tensor_handle_t* tensor_handle(fixture_t* f, loom_dtype_t dtype,
                                           const int64_t* dims, int rank,
                                           const void* values) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, loom_tensor_byte_size(tensor));
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(f->context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* scalar(fixture_t* f, float value) {
  return tensor_handle(f, LOOM_DTYPE_FLOAT, NULL, 0, &value);
}

// Runs `name` on inputs[0, n) with `dtype` set (unless INVALID); returns
// the status and the result, if any, in *out.
static loom_status_t run(fixture_t* f, const char* name,
                         loom_tensor_handle_t* const* inputs, int n,
                         loom_dtype_t dtype, loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, name, &op));
  for (int i = 0; i < n; ++i)
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, inputs[i]));
  if (dtype != LOOM_DTYPE_INVALID) {
    LOOM_ASSERT_OK(
        loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype", dtype));
  }
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  loom_status_t status =
      loom_eager_op_execute(op, &result, out ? 1 : 0, &count);
  loom_eager_op_destroy(op);
  if (out) *out = result;
  return status;
}

static loom_tensor_handle_t* new_var(fixture_t* f, loom_dtype_t dtype,
                                     const char* shared_name) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, "dtype", dtype));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(attrs, "shape", NULL, 0));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "container", "localhost", 9));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "shared_name", shared_name,
                                          strlen(shared_name)));
  loom_tensor_handle_t* var = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &var, 1, &count));
  loom_eager_op_destroy(op);
  return var;
}

static void assign(fixture_t* f, loom_tensor_handle_t* var,
                   loom_tensor_handle_t* value) {
  loom_tensor_handle_t* inputs[2] = {var, value};
  LOOM_ASSERT_OK(
      run(f, "AssignVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL));
}

static loom_tensor_t* read_tensor(fixture_t* f, loom_tensor_handle_t* var,
                                  loom_dtype_t dtype) {
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(run(f, "ReadVariableOp", &var, 1, dtype, &value));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(f->context, value, &tensor));
  loom_tensor_handle_release(value);
  return tensor;
}

static float read_float(fixture_t* f, loom_tensor_handle_t* var) {
  loom_tensor_t* tensor = read_tensor(f, var, LOOM_DTYPE_FLOAT);
  float value = *(float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return value;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

static void var_handle_makes_a_resource_scalar(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_FLOAT, "");
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(var, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_RESOURCE);
  assert_int_equal(metadata.shape.rank, 0);
  loom_tensor_handle_t* initialized = NULL;
  LOOM_ASSERT_OK(
      run(f, "VarIsInitializedOp", &var, 1, LOOM_DTYPE_INVALID, &initialized));
  loom_tensor_t* flag = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(f->context, initialized, &flag));
  assert_false(*(bool*)loom_tensor_data(flag));
  loom_tensor_release(flag);
  loom_tensor_handle_release(initialized);
  loom_tensor_handle_t* value = scalar(f, 4.0f);
  assign(f, var, value);
  LOOM_ASSERT_OK(
      run(f, "VarIsInitializedOp", &var, 1, LOOM_DTYPE_INVALID, &initialized));
  LOOM_ASSERT_OK(loom_context_resolve(f->context, initialized, &flag));
  assert_true(*(bool*)loom_tensor_data(flag));
  loom_tensor_release(flag);
  loom_tensor_handle_release(initialized);
  assert_true(read_float(f, var) == 4.0f);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(var);
}

static void reads_do_not_see_later_updates(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_FLOAT, "");
  float values[3] = {1, 2, 3};
  int64_t dims[1] = {3};
  loom_tensor_handle_t* value =
      tensor_handle(f, LOOM_DTYPE_FLOAT, dims, 1, values);
  assign(f, var, value);
  loom_tensor_handle_release(value);
  loom_tensor_t* before = read_tensor(f, var, LOOM_DTYPE_FLOAT);
  float ones[3] = {1, 1, 1};
  loom_tensor_handle_t* delta =
      tensor_handle(f, LOOM_DTYPE_FLOAT, dims, 1, ones);
  loom_tensor_handle_t* inputs[2] = {var, delta};
  LOOM_ASSERT_OK(
      run(f, "AssignAddVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL));
  // The tensor read before the update is unchanged (copy-on-write).
  const float* old = loom_tensor_data(before);
  assert_true(old[0] == 1 && old[2] == 3);
  loom_tensor_t* after = read_tensor(f, var, LOOM_DTYPE_FLOAT);
  const float* updated = loom_tensor_data(after);
  assert_true(updated[0] == 2 && updated[2] == 4);
  assert_ptr_not_equal(loom_tensor_data(before), loom_tensor_data(after));
  // Nobody else holds the value now: the next update writes in place.
  void* data = loom_tensor_data(after);
  loom_tensor_release(after);
  loom_tensor_release(before);
  LOOM_ASSERT_OK(
      run(f, "AssignSubVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL));
  after = read_tensor(f, var, LOOM_DTYPE_FLOAT);
  assert_ptr_equal(loom_tensor_data(after), data);
  assert_true(((const float*)loom_tensor_data(after))[1] == 2);
  loom_tensor_release(after);
  loom_tensor_handle_release(delta);
  loom_tensor_handle_release(var);
}

static void updates_of_integer_and_complex_variables(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_INT32, "");
  int32_t start = INT32_MAX;
  loom_tensor_handle_t* value =
      tensor_handle(f, LOOM_DTYPE_INT32, NULL, 0, &start);
  assign(f, var, value);
  int32_t one = 1;
  loom_tensor_handle_t* delta =
      tensor_handle(f, LOOM_DTYPE_INT32, NULL, 0, &one);
  loom_tensor_handle_t* inputs[2] = {var, delta};
  LOOM_ASSERT_OK(
      run(f, "AssignAddVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL));
  loom_tensor_t* t = read_tensor(f, var, LOOM_DTYPE_INT32);
  assert_int_equal(*(int32_t*)loom_tensor_data(t), INT32_MIN);  // wraps
  loom_tensor_release(t);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(delta);
  loom_tensor_handle_release(var);

  var = new_var(f, LOOM_DTYPE_COMPLEX64, "");
  float c[2] = {1.0f, -2.0f};
  value = tensor_handle(f, LOOM_DTYPE_COMPLEX64, NULL, 0, c);
  assign(f, var, value);
  inputs[0] = var;
  inputs[1] = value;
  LOOM_ASSERT_OK(
      run(f, "AssignSubVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL));
  t = read_tensor(f, var, LOOM_DTYPE_COMPLEX64);
  assert_true(((float*)loom_tensor_data(t))[0] == 0.0f);
  assert_true(((float*)loom_tensor_data(t))[1] == 0.0f);
  loom_tensor_release(t);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(var);
}

// VarHandleOp with `dtype` and shape dims[0, rank); its status.
static loom_status_t run_var_handle(fixture_t* f, loom_dtype_t dtype,
                                    const int64_t* dims, int32_t rank) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, "dtype", dtype));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(attrs, "shape", dims, rank));
  loom_tensor_handle_t* var = NULL;
  int32_t count = 0;
  loom_status_t status = loom_eager_op_execute(op, &var, 1, &count);
  loom_tensor_handle_release(var);
  loom_eager_op_destroy(op);
  return status;
}

static void var_handle_rejects_an_invalid_shape_or_dtype(void** state) {
  fixture_t* f = *state;
  const int64_t bad_dims[2] = {3, -2};
  LOOM_ASSERT_STATUS(run_var_handle(f, LOOM_DTYPE_FLOAT, bad_dims, 2),
                     LOOM_STATUS_INVALID_ARGUMENT, "VarHandleOp: attr 'shape'");
  LOOM_ASSERT_STATUS(run_var_handle(f, (loom_dtype_t)999, NULL, 0),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "VarHandleOp: attr 'dtype' is");
  LOOM_ASSERT_STATUS(run_var_handle(f, (loom_dtype_t)999, NULL, 0),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "(999), not the dtype of a variable");
  LOOM_ASSERT_STATUS(run_var_handle(f, LOOM_DTYPE_RESOURCE, NULL, 0),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "VarHandleOp: attr 'dtype' is");
  // Unknown dimensions (-1) and an unknown rank are fine.
  const int64_t partial[2] = {-1, 4};
  LOOM_ASSERT_OK(run_var_handle(f, LOOM_DTYPE_FLOAT, partial, 2));
  LOOM_ASSERT_OK(run_var_handle(f, LOOM_DTYPE_FLOAT, NULL, -1));
}

static void variable_errors_name_the_problem(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_FLOAT, "");
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_STATUS(
      run(f, "ReadVariableOp", &var, 1, LOOM_DTYPE_FLOAT, &value),
      LOOM_STATUS_FAILED_PRECONDITION,
      "ReadVariableOp: Attempting to use uninitialized value "
      "_AnonymousVar");
  loom_tensor_handle_t* two = scalar(f, 2.0f);
  loom_tensor_handle_t* inputs[2] = {var, two};
  LOOM_ASSERT_STATUS(
      run(f, "AssignAddVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL),
      LOOM_STATUS_FAILED_PRECONDITION, "Attempting to use uninitialized value");
  assign(f, var, two);
  float pair[2] = {1, 2};
  int64_t dims[1] = {2};
  loom_tensor_handle_t* vector =
      tensor_handle(f, LOOM_DTYPE_FLOAT, dims, 1, pair);
  inputs[1] = vector;
  LOOM_ASSERT_STATUS(
      run(f, "AssignAddVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "AssignAddVariableOp: Cannot update variable with shape "
      "[] using a Tensor with shape [2], shapes must be equal.");
  // The declared shape is checked when asked to.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "AssignVariableOp", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, var));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, vector));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_bool(loom_eager_op_attrs(op), "validate_shape", true));
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, NULL, 0, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Trying to assign to variable with tensor with wrong "
                     "shape. Expected [] got [2]");
  loom_eager_op_destroy(op);
  int32_t i = 3;
  loom_tensor_handle_t* integer =
      tensor_handle(f, LOOM_DTYPE_INT32, NULL, 0, &i);
  inputs[1] = integer;
  LOOM_ASSERT_STATUS(
      run(f, "AssignVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Trying to assign variable with wrong dtype. Expected "
      "float got int32");
  LOOM_ASSERT_STATUS(
      run(f, "AssignAddVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Trying to assign variable with wrong dtype. Expected "
      "float got int32");
  LOOM_ASSERT_STATUS(
      run(f, "ReadVariableOp", &var, 1, LOOM_DTYPE_DOUBLE, &value),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Trying to read variable with wrong dtype. Expected "
      "float got double");
  // Not a resource at all.
  LOOM_ASSERT_STATUS(
      run(f, "ReadVariableOp", &two, 1, LOOM_DTYPE_FLOAT, &value),
      LOOM_STATUS_INVALID_ARGUMENT, "ReadVariableOp");
  loom_tensor_handle_release(integer);
  loom_tensor_handle_release(vector);
  loom_tensor_handle_release(two);
  loom_tensor_handle_release(var);
}

static void a_forged_resource_tensor_is_refused(void** state) {
  fixture_t* f = *state;
  // A RESOURCE tensor whose bytes are not a variable.
  loom_buffer_t* buffer = NULL;
  LOOM_ASSERT_OK(
      loom_buffer_allocate(loom_allocator_default(), 64, 0, &buffer));
  memset(loom_buffer_data(buffer), 0x5a, 64);
  loom_shape_t scalar_shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense_in_buffer(
      loom_allocator_default(), LOOM_DTYPE_RESOURCE, &scalar_shape, buffer, 0,
      &tensor));
  loom_buffer_release(buffer);
  loom_tensor_handle_t* forged = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(f->context, tensor, &forged));
  loom_tensor_release(tensor);
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_STATUS(
      run(f, "ReadVariableOp", &forged, 1, LOOM_DTYPE_FLOAT, &value),
      LOOM_STATUS_INVALID_ARGUMENT,
      "ReadVariableOp: input 0 is a resource tensor that does "
      "not refer to a variable (make it with VarHandleOp)");
  loom_tensor_handle_release(forged);
}

static void destroyed_variables_are_gone(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_FLOAT, "");
  loom_tensor_handle_t* one = scalar(f, 1.0f);
  assign(f, var, one);
  LOOM_ASSERT_OK(
      run(f, "DestroyResourceOp", &var, 1, LOOM_DTYPE_INVALID, NULL));
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_STATUS(
      run(f, "ReadVariableOp", &var, 1, LOOM_DTYPE_FLOAT, &value),
      LOOM_STATUS_FAILED_PRECONDITION, "Could not find variable _AnonymousVar");
  loom_tensor_handle_t* inputs[2] = {var, one};
  LOOM_ASSERT_STATUS(
      run(f, "AssignVariableOp", inputs, 2, LOOM_DTYPE_INVALID, NULL),
      LOOM_STATUS_FAILED_PRECONDITION,
      "This could mean that the variable has been deleted. "
      "Debug info: container=localhost");
  // A second destroy is fine unless lookup errors are wanted.
  LOOM_ASSERT_OK(
      run(f, "DestroyResourceOp", &var, 1, LOOM_DTYPE_INVALID, NULL));
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(f->context, "DestroyResourceOp", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, var));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(loom_eager_op_attrs(op),
                                        "ignore_lookup_error", false));
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, NULL, 0, &count),
                     LOOM_STATUS_NOT_FOUND, "Resource localhost/_AnonymousVar");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(one);
  loom_tensor_handle_release(var);
}

static void shared_names_find_the_same_variable(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* a = new_var(f, LOOM_DTYPE_FLOAT, "weights");
  loom_tensor_handle_t* seven = scalar(f, 7.0f);
  assign(f, a, seven);
  loom_tensor_handle_t* b = new_var(f, LOOM_DTYPE_FLOAT, "weights");
  assert_true(read_float(f, b) == 7.0f);
  // Another context has its own variables.
  loom_context_t* other = NULL;
  LOOM_ASSERT_OK(loom_context_create(NULL, &other));
  loom_context_t* mine = f->context;
  f->context = other;
  loom_tensor_handle_t* c = new_var(f, LOOM_DTYPE_FLOAT, "weights");
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_STATUS(run(f, "ReadVariableOp", &c, 1, LOOM_DTYPE_FLOAT, &value),
                     LOOM_STATUS_FAILED_PRECONDITION, "uninitialized");
  loom_tensor_handle_release(c);
  loom_context_destroy(other);
  f->context = mine;
  // Destroying it removes the name: a new handle is a new variable.
  LOOM_ASSERT_OK(run(f, "DestroyResourceOp", &a, 1, LOOM_DTYPE_INVALID, NULL));
  loom_tensor_handle_t* d = new_var(f, LOOM_DTYPE_FLOAT, "weights");
  LOOM_ASSERT_STATUS(run(f, "ReadVariableOp", &d, 1, LOOM_DTYPE_FLOAT, &value),
                     LOOM_STATUS_FAILED_PRECONDITION, "uninitialized");
  loom_tensor_handle_release(d);
  loom_tensor_handle_release(seven);
  loom_tensor_handle_release(a);
  loom_tensor_handle_release(b);
}

static void variables_outlive_their_context(void** state) {
  fixture_t* f = *state;
  loom_tensor_handle_t* var = new_var(f, LOOM_DTYPE_FLOAT, "kept");
  loom_tensor_handle_t* one = scalar(f, 1.0f);
  assign(f, var, one);
  loom_tensor_handle_release(one);
  loom_context_destroy(f->context);
  LOOM_ASSERT_OK(loom_context_create(NULL, &f->context));
  loom_tensor_handle_t* inputs[1] = {var};
  loom_tensor_handle_t* value = NULL;
  // The resource tensor still refers to the variable.
  LOOM_ASSERT_OK(run(f, "ReadVariableOp", inputs, 1, LOOM_DTYPE_FLOAT, &value));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(f->context, value, &tensor));
  assert_true(*(float*)loom_tensor_data(tensor) == 1.0f);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(var);
}

int main(void) {
#define TEST(test) cmocka_unit_test_setup_teardown(test, setup, teardown)
  const struct CMUnitTest tests[] = {
      TEST(var_handle_makes_a_resource_scalar),
      TEST(reads_do_not_see_later_updates),
      TEST(updates_of_integer_and_complex_variables),
      TEST(variable_errors_name_the_problem),
      TEST(var_handle_rejects_an_invalid_shape_or_dtype),
      TEST(a_forged_resource_tensor_is_refused),
      TEST(destroyed_variables_are_gone),
      TEST(shared_names_find_the_same_variable),
      TEST(variables_outlive_their_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
