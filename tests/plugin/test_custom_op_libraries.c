// Custom-op libraries built the way TensorFlow builds them (tests/plugin/
// custom_ops): no entry point, ops and kernels registered by static
// initialisers while dlopen runs, loaded with TF_LoadLibrary; a load that
// fails half way is rolled back before the library is unmapped; loading
// twice is a no-op.
//
// This executable links the shared libloom, as the libraries do, so both
// see one registry. The registries are process-wide: the cases run in
// order.

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "loom/host_context.h"
#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/plugin.h"
#include "loom/tensor.h"
#include "tensorflow/c/c_api.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 1;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &g_host));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_host_context_destroy(g_host);
  return 0;
}

// Runs `op` on one float vector and returns the status; on success the
// output's values are in out[0, count).
static loom_status_t run_float_op(const char* op, const float* values,
                                  int64_t count, float* out) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* input = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &input));
  memcpy(loom_tensor_data(input), values, sizeof(float) * (size_t)count);
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t num_outputs = 0;
  loom_kernel_run_options_t options = {g_host, NULL, NULL, NULL, 1};
  loom_status_t status =
      loom_kernel_run(&options, op, inputs, 1, NULL, outputs, 1, &num_outputs);
  if (!status) {
    assert_int_equal(num_outputs, 1);
    assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_FLOAT);
    assert_int_equal(loom_tensor_shape(outputs[0])->rank, 1);
    assert_int_equal(loom_tensor_shape(outputs[0])->dims[0], count);
    memcpy(out, loom_tensor_data(outputs[0]), sizeof(float) * (size_t)count);
    loom_tensor_release(outputs[0]);
  }
  return status;
}

static TF_Library* load_ok(const char* path) {
  TF_Status* status = TF_NewStatus();
  TF_Library* library = TF_LoadLibrary(path, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
  assert_non_null(library);
  return library;
}

// Asserts that the library at `path` lists exactly ops[0, count).
static void assert_library_ops(const char* path, const char* const* ops,
                               size_t count) {
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(), path, &plugin));
  const char* names[8] = {NULL};
  assert_int_equal(loom_plugin_op_names(plugin, names, 8), count);
  for (size_t i = 0; i < count; ++i) assert_string_equal(names[i], ops[i]);
  loom_plugin_release(plugin);
}

static bool is_mapped(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle) dlclose(handle);
  return handle != NULL;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

// A C library whose constructor registers two ops and a kernel loads with
// no entry point, and its kernel runs.
static void c_constructor_library_loads_without_entry_point(void** state) {
  (void)state;
  assert_false(is_mapped(LOOM_CUSTOM_OPS_CTOR_PATH));
  TF_Library* library = load_ok(LOOM_CUSTOM_OPS_CTOR_PATH);
  loom_op_registry_t* ops = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  assert_non_null(loom_op_registry_find(ops, "CtorAddDelta"));
  assert_non_null(loom_op_registry_find(ops, "CtorGather"));
  assert_int_equal(loom_kernel_registry_count(kernels, "CtorAddDelta"), 1);
  static const char* const kOps[] = {"CtorAddDelta", "CtorGather"};
  assert_library_ops(LOOM_CUSTOM_OPS_CTOR_PATH, kOps, 2);
  TF_DeleteLibraryHandle(library);
  // The handle is gone, the library and its kernel stay.
  assert_true(is_mapped(LOOM_CUSTOM_OPS_CTOR_PATH));

  // np.array([1, -2.5, 3e-8], np.float32) + np.float32(0.5)
  static const float kX[3] = {1.0f, -2.5f, 3e-8f};
  static const float kExpected[3] = {1.5f, -2.0f, 0.50000006f};
  float y[3];
  LOOM_ASSERT_OK(run_float_op("CtorAddDelta", kX, 3, y));
  assert_memory_equal(y, kExpected, sizeof(y));
}

// A C++ library whose static object's constructor registers the op and its
// kernel loads the same way.
static void cxx_static_object_library_loads(void** state) {
  (void)state;
  TF_Library* library = load_ok(LOOM_CUSTOM_OPS_STATIC_OBJECT_PATH);
  TF_DeleteLibraryHandle(library);
  assert_int_equal(loom_kernel_registry_count(loom_kernel_registry_global(),
                                              "StaticObjectNegate"),
                   1);
  static const char* const kOps[] = {"StaticObjectNegate"};
  assert_library_ops(LOOM_CUSTOM_OPS_STATIC_OBJECT_PATH, kOps, 1);
  static const float kX[2] = {1.25f, -0.0f};
  static const float kExpected[2] = {-1.25f, 0.0f};  // -np.array(kX)
  float y[2];
  LOOM_ASSERT_OK(run_float_op("StaticObjectNegate", kX, 2, y));
  assert_memory_equal(y, kExpected, sizeof(y));
}

// As TensorFlow: loading a loaded library again, by its path or another
// path to the same file, returns a handle and registers nothing again.
static void loading_twice_is_a_no_op(void** state) {
  (void)state;
  char link[] = "/tmp/loom_custom_ops_link_XXXXXX";
  assert_non_null(mkdtemp(link));
  char linked_path[sizeof(link) + 32];
  snprintf(linked_path, sizeof(linked_path), "%s/libctor.so", link);
  assert_int_equal(symlink(LOOM_CUSTOM_OPS_CTOR_PATH, linked_path), 0);

  const char* paths[] = {LOOM_CUSTOM_OPS_CTOR_PATH, linked_path};
  for (int i = 0; i < 2; ++i) {
    TF_Library* library = load_ok(paths[i]);
    TF_DeleteLibraryHandle(library);
    assert_int_equal(loom_kernel_registry_count(loom_kernel_registry_global(),
                                                "CtorAddDelta"),
                     1);
    static const char* const kOps[] = {"CtorAddDelta", "CtorGather"};
    assert_library_ops(paths[i], kOps, 2);
  }
  unlink(linked_path);
  rmdir(link);
  float x = 2.0f;
  float y = 0.0f;
  LOOM_ASSERT_OK(run_float_op("CtorAddDelta", &x, 1, &y));
  assert_true(y == 2.5f);
}

// Loads `path`, which must fail with the half-way library's error and leave
// nothing of it registered; `detail` is the message after the library's
// name.
static void check_fails_halfway(const char* path, const char* prefix) {
  TF_Status* status = TF_NewStatus();
  assert_null(TF_LoadLibrary(path, status));
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  char expected[1024];
  snprintf(expected, sizeof(expected),
           "%splugin '%s' failed to register: Op 'CtorHalfBad': invalid attr "
           "spec \"T: {float, int33}\": unknown type 'int33'",
           prefix, path);
  if (!strstr(TF_Message(status), expected)) {
    fail_msg("'%s' does not contain '%s'", TF_Message(status), expected);
  }
  TF_DeleteStatus(status);

  loom_op_registry_t* ops = loom_op_registry_global();
  assert_null(loom_op_registry_find(ops, "CtorHalfGood"));
  assert_null(loom_op_registry_find(ops, "CtorHalfBad"));
  assert_int_equal(
      loom_kernel_registry_count(loom_kernel_registry_global(), "CtorHalfGood"),
      0);
  float x = 1.0f;
  float y = 0.0f;
  LOOM_ASSERT_STATUS(run_float_op("CtorHalfGood", &x, 1, &y),
                     LOOM_STATUS_NOT_FOUND,
                     "Op type not registered 'CtorHalfGood'");
}

// A library whose constructor registers an op and its kernel and then
// fails: the load fails, what it registered is rolled back, then the
// library is unmapped; its op is not registered (not a crash in unmapped
// code). A retry maps it afresh, runs the constructor again and fails the
// same way.
static void library_failing_halfway_is_rolled_back_then_unmapped(void** state) {
  (void)state;
  for (int attempt = 0; attempt < 2; ++attempt) {
    unsetenv("LOOM_FIXTURE_CTOR_FAILS_HALFWAY_UNMAPPED");
    check_fails_halfway(LOOM_CUSTOM_OPS_FAILS_HALFWAY_PATH, "");
    assert_false(is_mapped(LOOM_CUSTOM_OPS_FAILS_HALFWAY_PATH));
    const char* unmapped = getenv("LOOM_FIXTURE_CTOR_FAILS_HALFWAY_UNMAPPED");
    assert_non_null(unmapped);
    assert_string_equal(unmapped, "1");
  }
}

// The same library linked with -z nodelete cannot be unmapped: rolled back,
// it stays mapped, and since its constructor does not run again a retry
// reports the first error rather than succeed with nothing registered.
static void failed_library_that_stays_mapped_fails_again(void** state) {
  (void)state;
  check_fails_halfway(LOOM_CUSTOM_OPS_NODELETE_PATH, "");
  assert_true(is_mapped(LOOM_CUSTOM_OPS_NODELETE_PATH));
  assert_null(getenv("LOOM_FIXTURE_NODELETE_UNMAPPED"));
  char prefix[1024];
  snprintf(prefix, sizeof(prefix),
           "plugin '%s' stays mapped after a failed load, and its static "
           "initialisers do not run again: ",
           LOOM_CUSTOM_OPS_NODELETE_PATH);
  for (int attempt = 0; attempt < 2; ++attempt) {
    check_fails_halfway(LOOM_CUSTOM_OPS_NODELETE_PATH, prefix);
  }
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_STATUS(loom_plugin_load(loom_allocator_system(),
                                      LOOM_CUSTOM_OPS_NODELETE_PATH, &plugin),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "stays mapped after a failed load");
  assert_null(plugin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(c_constructor_library_loads_without_entry_point),
      cmocka_unit_test(cxx_static_object_library_loads),
      cmocka_unit_test(loading_twice_is_a_no_op),
      cmocka_unit_test(library_failing_halfway_is_rolled_back_then_unmapped),
      cmocka_unit_test(failed_library_that_stays_mapped_fails_again),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
