// Metadata functions (loom_op_def_builder_set_metadata_fn): Execute takes
// the result shapes from an op's metadata function when it decides, and
// from the shape function (with its errors) when it does not.

#include <stdatomic.h>

#include "corert_test_ops.h"

// MetadataProbe(x: float) -> y: float, y = x. Its metadata function decides
// for vectors only; its shape function is the reference for everything.
static atomic_int g_metadata_calls;
static atomic_int g_shape_calls;

static bool probe_metadata(const loom_tensor_metadata_t* inputs,
                           int32_t num_inputs, loom_tensor_metadata_t* outputs,
                           int32_t num_outputs) {
  atomic_fetch_add(&g_metadata_calls, 1);
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].shape.rank != 1) {
    return false;
  }
  outputs[0].shape = inputs[0].shape;
  return true;
}

static loom_status_t probe_shape(loom_shape_inference_context_t* context,
                                 void* user_data) {
  (void)user_data;
  atomic_fetch_add(&g_shape_calls, 1);
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &shape));
  if (shape.rank > 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "MetadataProbe takes at most two dimensions");
  }
  return loom_shape_inference_context_set_output(context, 0, &shape);
}

static void probe_compute(void* kernel, loom_kernel_context_t* context) {
  (void)kernel;
  loom_tensor_t* x = loom_kernel_context_input(context, 0);
  loom_tensor_t* y = NULL;
  loom_status_t status =
      loom_kernel_context_allocate_output(context, 0, loom_tensor_shape(x), &y);
  if (status) {
    loom_kernel_context_fail(context, status);
    return;
  }
  memcpy(loom_tensor_data(y), loom_tensor_data(x),
         sizeof(float) * (size_t)loom_tensor_num_elements(x));
}

static int register_probe(void** state) {
  static bool registered = false;
  if (!registered) {
    loom_op_def_builder_t* op = NULL;
    LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                              "MetadataProbe", &op));
    LOOM_ASSERT_OK(loom_op_def_builder_add_input(op, "x: float"));
    LOOM_ASSERT_OK(loom_op_def_builder_add_output(op, "y: float"));
    loom_op_def_builder_set_shape_fn(op, probe_shape, NULL);
    loom_op_def_builder_set_metadata_fn(op, probe_metadata);
    LOOM_ASSERT_OK(loom_op_registry_register(loom_op_registry_global(), op));
    loom_kernel_builder_t* kernel = NULL;
    LOOM_ASSERT_OK(loom_kernel_builder_create(
        loom_allocator_system(), "MetadataProbe", LOOM_DEVICE_CPU, NULL,
        probe_compute, NULL, NULL, &kernel));
    LOOM_ASSERT_OK(loom_kernel_registry_register(loom_kernel_registry_global(),
                                                 "MetadataProbeCpu", kernel));
    registered = true;
  }
  return corert_test_setup(state);
}

static void expect_shape(loom_tensor_handle_t* handle, const int64_t* dims,
                         int rank) {
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_metadata(handle, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  loom_shape_t expected;
  LOOM_ASSERT_OK(loom_shape_initialize(&expected, dims, rank));
  assert_true(loom_shape_equal(&metadata.shape, &expected));
}

static loom_tensor_handle_t* run_probe(corert_test_env_t* env,
                                       const int64_t* dims, int rank,
                                       loom_status_t* out_status) {
  float values[6] = {1, 2, 3, 4, 5, 6};
  loom_tensor_handle_t* args[1] = {
      corert_test_handle(env, LOOM_DTYPE_FLOAT, dims, rank, values)};
  loom_tensor_handle_t* result = NULL;
  *out_status =
      loom_runtime_execute(env->runtime, "MetadataProbe", env->cpu,
                           CORERT_TEST_HERE(), args, 1, NULL, &result, 1, NULL);
  return result;
}

static void execute_takes_shapes_from_a_deciding_metadata_fn(void** state) {
  corert_test_env_t* env = *state;
  int metadata_before = atomic_load(&g_metadata_calls);
  int shape_before = atomic_load(&g_shape_calls);
  const int64_t dims[1] = {6};
  loom_status_t status = NULL;
  loom_tensor_handle_t* y = run_probe(env, dims, 1, &status);
  LOOM_ASSERT_OK(status);
  expect_shape(y, dims, 1);
  const float expected[6] = {1, 2, 3, 4, 5, 6};
  corert_test_expect_values(y, LOOM_DTYPE_FLOAT, expected, 6);
  assert_int_equal(atomic_load(&g_metadata_calls), metadata_before + 1);
  assert_int_equal(atomic_load(&g_shape_calls), shape_before);
  loom_tensor_handle_release(y);
}

static void execute_runs_the_shape_fn_when_the_metadata_fn_declines(
    void** state) {
  corert_test_env_t* env = *state;
  int metadata_before = atomic_load(&g_metadata_calls);
  int shape_before = atomic_load(&g_shape_calls);
  const int64_t dims[2] = {2, 3};
  loom_status_t status = NULL;
  loom_tensor_handle_t* y = run_probe(env, dims, 2, &status);
  LOOM_ASSERT_OK(status);
  expect_shape(y, dims, 2);
  assert_int_equal(atomic_load(&g_metadata_calls), metadata_before + 1);
  assert_true(atomic_load(&g_shape_calls) > shape_before);
  loom_tensor_handle_release(y);
}

static void shape_fn_errors_stay_the_shape_fns(void** state) {
  corert_test_env_t* env = *state;
  const int64_t dims[3] = {1, 2, 3};
  loom_status_t status = NULL;
  loom_tensor_handle_t* y = run_probe(env, dims, 3, &status);
  assert_non_null(status);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(loom_status_message(status),
                         "MetadataProbe takes at most two dimensions"));
  loom_status_free(status);
  loom_tensor_handle_release(y);
}

static void builtin_broadcast_metadata_agrees_with_its_shape_fn(void** state) {
  // AddV2 has the built-in broadcast metadata function: equal shapes,
  // broadcasts and rejected shapes give what the shape function gives.
  corert_test_env_t* env = *state;
  const loom_op_def_t* def = NULL;
  LOOM_ASSERT_OK(
      loom_op_registry_lookup(loom_op_registry_global(), "AddV2", &def));
  assert_non_null(def->metadata_fn);
  static const struct {
    int64_t a[3];
    int ra;
    int64_t b[3];
    int rb;
    int64_t out[3];
    int rout;  // -1: the shapes do not broadcast
  } kCases[] = {
      {{2, 3}, 2, {2, 3}, 2, {2, 3}, 2},       {{2, 3}, 2, {3}, 1, {2, 3}, 2},
      {{4, 1, 3}, 3, {5, 1}, 2, {4, 5, 3}, 3}, {{1}, 1, {}, 0, {1}, 1},
      {{0, 3}, 2, {1, 3}, 2, {0, 3}, 2},       {{2, 3}, 2, {4}, 1, {0}, -1},
  };
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    float values[60] = {0};
    loom_tensor_handle_t* args[2] = {
        corert_test_handle(env, LOOM_DTYPE_FLOAT, kCases[c].a, kCases[c].ra,
                           values),
        corert_test_handle(env, LOOM_DTYPE_FLOAT, kCases[c].b, kCases[c].rb,
                           values)};
    loom_tensor_metadata_t inputs[2];
    LOOM_ASSERT_OK(loom_tensor_handle_metadata(args[0], &inputs[0]));
    LOOM_ASSERT_OK(loom_tensor_handle_metadata(args[1], &inputs[1]));
    loom_tensor_metadata_t decided;
    bool decides = def->metadata_fn(inputs, 2, &decided, 1);
    loom_tensor_handle_t* sum = NULL;
    loom_status_t status =
        loom_runtime_execute(env->runtime, "AddV2", env->cpu,
                             CORERT_TEST_HERE(), args, 2, NULL, &sum, 1, NULL);
    if (kCases[c].rout < 0) {
      assert_false(decides);
      assert_non_null(status);
      assert_non_null(
          strstr(loom_status_message(status), "Incompatible shapes"));
      loom_status_free(status);
    } else {
      LOOM_ASSERT_OK(status);
      assert_true(decides);
      expect_shape(sum, kCases[c].out, kCases[c].rout);
      loom_shape_t expected;
      LOOM_ASSERT_OK(
          loom_shape_initialize(&expected, kCases[c].out, kCases[c].rout));
      assert_true(loom_shape_equal(&decided.shape, &expected));
    }
    loom_tensor_handle_release(sum);
  }
}

// The registered def keeps the function; a NULL builder is ignored (the
// builder setters' rule), and an op registered without one has none.
static void the_def_keeps_its_metadata_fn(void** state) {
  (void)state;
  loom_op_def_builder_set_metadata_fn(NULL, probe_metadata);
  const loom_op_def_t* probe =
      loom_op_registry_find(loom_op_registry_global(), "MetadataProbe");
  assert_non_null(probe);
  assert_ptr_equal(probe->metadata_fn, probe_metadata);
  const loom_op_def_t* matmul =
      loom_op_registry_find(loom_op_registry_global(), "MatMul");
  assert_non_null(matmul);
  assert_null(matmul->metadata_fn);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          execute_takes_shapes_from_a_deciding_metadata_fn, register_probe,
          corert_test_teardown),
      cmocka_unit_test_setup_teardown(
          execute_runs_the_shape_fn_when_the_metadata_fn_declines,
          register_probe, corert_test_teardown),
      cmocka_unit_test_setup_teardown(shape_fn_errors_stay_the_shape_fns,
                                      register_probe, corert_test_teardown),
      cmocka_unit_test_setup_teardown(
          builtin_broadcast_metadata_agrees_with_its_shape_fn, register_probe,
          corert_test_teardown),
      cmocka_unit_test_setup_teardown(the_def_keeps_its_metadata_fn,
                                      register_probe, corert_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
