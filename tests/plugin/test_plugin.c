// Plugins end to end: the example plugins (examples/plugins) loaded with
// loom_plugin_load and TF_LoadLibrary, their ops run through
// loom_kernel_run and their shape functions through
// loom_op_def_infer_shapes, and every way a load can fail, with the
// fixtures of examples/plugins/fixtures.
//
// This executable links the shared libloom, as the plugins do, so both see
// one registry. The registries are process-wide: the group setup loads the
// two example plugins once and the cases run in order.

#include <float.h>
#include <malloc.h>

#include "loom/host_context.h"
#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/op_signature.h"
#include "loom/plugin.h"
#include "loom/shape_inference.h"
#include "loom/tensor.h"
#include "loom/tstring.h"
#include "tensorflow/c/c_api.h"
#include "test_support.h"

static loom_host_context_t* g_host;
static loom_plugin_t* g_bitcast;  // loaded with loom_plugin_load
static TF_Library* g_showcase;    // loaded with TF_LoadLibrary

static int setup(void** state) {
  (void)state;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 2;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &g_host));
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(),
                                  LOOM_PLUGIN_BITCAST_PATH, &g_bitcast));
  TF_Status* status = TF_NewStatus();
  g_showcase = TF_LoadLibrary(LOOM_PLUGIN_SHOWCASE_PATH, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
  assert_non_null(g_showcase);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_plugin_release(g_bitcast);
  TF_DeleteLibraryHandle(g_showcase);
  loom_host_context_destroy(g_host);
  return 0;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static loom_shape_t make_shape(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

// A dense tensor of `dtype` and shape dims[0, rank) holding `bytes` (NULL:
// a deterministic byte pattern).
static loom_tensor_t* make_tensor(loom_dtype_t dtype, const int64_t* dims,
                                  int rank, const void* bytes) {
  loom_shape_t shape = make_shape(dims, rank);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(), dtype,
                                          &shape, &tensor));
  size_t size = loom_tensor_byte_size(tensor);
  unsigned char* data = loom_tensor_data(tensor);
  if (bytes) {
    if (size) memcpy(data, bytes, size);
  } else {
    for (size_t i = 0; i < size; ++i) data[i] = (unsigned char)(i * 37 + 11);
  }
  return tensor;
}

static loom_status_t run_op(const char* op, loom_tensor_t** inputs,
                            int32_t num_inputs, const loom_op_attrs_t* attrs,
                            loom_tensor_t** outputs, int32_t capacity,
                            int32_t* count) {
  loom_kernel_run_options_t options = {g_host, NULL, NULL, NULL, 1};
  return loom_kernel_run(&options, op, inputs, num_inputs, attrs, outputs,
                         capacity, count);
}

// Runs `op`'s shape function for inputs of the given dtypes and shapes,
// with `attrs` completed as loom_kernel_run would.
static loom_status_t infer_shapes(const char* op_name, loom_op_attrs_t* attrs,
                                  const loom_dtype_t* dtypes,
                                  const loom_shape_t* shapes,
                                  int32_t num_inputs, loom_shape_t* outputs,
                                  int32_t num_outputs) {
  const loom_op_def_t* op =
      loom_op_registry_find(loom_op_registry_global(), op_name);
  assert_non_null(op);
  LOOM_RETURN_IF_ERROR(
      loom_op_def_complete_attrs(op, dtypes, num_inputs, attrs));
  return loom_op_def_infer_shapes(op, attrs, shapes, dtypes, NULL, num_inputs,
                                  outputs, num_outputs);
}

static void assert_shape(const loom_shape_t* shape, const int64_t* dims,
                         int rank) {
  assert_int_equal(shape->rank, rank);
  for (int i = 0; i < rank; ++i) assert_int_equal(shape->dims[i], dims[i]);
}

static void attrs_init(loom_op_attrs_t* attrs) {
  loom_op_attrs_initialize(attrs, loom_allocator_system());
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

static void plugins_register_their_ops_and_kernels(void** state) {
  (void)state;
  assert_string_equal(loom_plugin_path(g_bitcast), LOOM_PLUGIN_BITCAST_PATH);
  const char* names[2] = {NULL, NULL};
  assert_int_equal(loom_plugin_op_names(g_bitcast, names, 2), 1);
  assert_string_equal(names[0], "Bitcast");
  loom_op_registry_t* ops = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  const loom_op_def_t* bitcast = loom_op_registry_find(ops, "Bitcast");
  assert_non_null(bitcast);
  assert_int_equal(bitcast->num_inputs, 1);
  assert_int_equal(bitcast->num_outputs, 1);
  assert_non_null(bitcast->shape_fn);
  // Every fixed-size numeric type TensorFlow's Bitcast accepts.
  assert_int_equal(loom_op_def_find_attr(bitcast, "T")->num_allowed_types, 19);
  assert_int_equal(loom_op_def_find_attr(bitcast, "type")->num_allowed_types,
                   19);
  assert_int_equal(loom_kernel_registry_count(kernels, "Bitcast"), 2);

  static const char* const kShowcaseOps[] = {
      "ShowcaseCombine", "ShowcaseCastAsync", "ShowcaseFill",
      "ShowcaseDescribeAttrs"};
  for (int i = 0; i < 4; ++i) {
    assert_non_null(loom_op_registry_find(ops, kShowcaseOps[i]));
    assert_int_equal(loom_kernel_registry_count(kernels, kShowcaseOps[i]), 1);
  }
  const loom_op_def_t* combine = loom_op_registry_find(ops, "ShowcaseCombine");
  const loom_attr_def_t* n = loom_op_def_find_attr(combine, "N");
  assert_true(n->has_minimum);
  assert_int_equal(n->minimum, 2);
  assert_int_equal(loom_op_def_find_attr(combine, "ops")->num_allowed_strings,
                   5);
}

static void missing_file_is_not_found_naming_the_path(void** state) {
  (void)state;
#define MISSING_PATH "/nonexistent/loom/libno_such_plugin.so"
  static const char kPath[] = MISSING_PATH;
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_STATUS(loom_plugin_load(loom_allocator_system(), kPath, &plugin),
                     LOOM_STATUS_NOT_FOUND,
                     "cannot load plugin '" MISSING_PATH "': ");
  assert_null(plugin);
#undef MISSING_PATH

  TF_Status* status = TF_NewStatus();
  assert_null(TF_LoadLibrary(kPath, status));
  assert_int_equal(TF_GetCode(status), TF_NOT_FOUND);
  assert_non_null(strstr(TF_Message(status), kPath));
  TF_DeleteStatus(status);

  LOOM_ASSERT_STATUS(loom_plugin_load(loom_allocator_system(), NULL, &plugin),
                     LOOM_STATUS_INVALID_ARGUMENT, "path is NULL");
}

// As in TensorFlow, a library needs no entry point: one that registers
// nothing loads, with no ops.
static void library_without_entry_point_loads_with_no_ops(void** state) {
  (void)state;
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(),
                                  LOOM_FIXTURE_NO_ENTRY_PATH, &plugin));
  assert_int_equal(loom_plugin_op_names(plugin, NULL, 0), 0);
  loom_plugin_release(plugin);

  TF_Status* status = TF_NewStatus();
  TF_Library* library = TF_LoadLibrary(LOOM_FIXTURE_NO_ENTRY_PATH, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_non_null(library);
  TF_DeleteLibraryHandle(library);
  TF_DeleteStatus(status);
}

// The fixture links against the bitcast plugin: dlsym finds that plugin's
// TF_InitPlugin through it, but only the library's own entry points run,
// so it loads and registers nothing.
static void entry_point_of_a_dependency_does_not_count(void** state) {
  (void)state;
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(),
                                  LOOM_FIXTURE_DEPENDS_PATH, &plugin));
  assert_int_equal(loom_plugin_op_names(plugin, NULL, 0), 0);
  loom_plugin_release(plugin);
  assert_int_equal(
      loom_kernel_registry_count(loom_kernel_registry_global(), "Bitcast"), 2);
}

static void failing_plugin_is_rolled_back(void** state) {
  (void)state;
  loom_op_registry_t* ops = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  // Twice: a complete rollback leaves nothing that would make the second
  // load fail differently (ALREADY_EXISTS).
  for (int attempt = 0; attempt < 2; ++attempt) {
    loom_plugin_t* plugin = NULL;
    loom_status_t status = loom_plugin_load(loom_allocator_system(),
                                            LOOM_FIXTURE_FAILING_PATH, &plugin);
    assert_null(plugin);
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    const char* message = loom_status_message(status);
    assert_non_null(strstr(
        message, "plugin '" LOOM_FIXTURE_FAILING_PATH "' failed to register"));
    assert_non_null(strstr(message,
                           "Op 'FixtureMalformed': input \"x: T\": 'T' is "
                           "neither a type nor a defined attr"));
    loom_status_free(status);

    assert_null(loom_op_registry_find(ops, "FixtureRolledBack"));
    assert_int_equal(loom_kernel_registry_count(kernels, "FixtureRolledBack"),
                     0);
    assert_null(loom_op_registry_find(ops, "FixtureMalformed"));
  }

  TF_Status* status = TF_NewStatus();
  assert_null(TF_LoadLibrary(LOOM_FIXTURE_FAILING_PATH, status));
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_non_null(strstr(TF_Message(status), LOOM_FIXTURE_FAILING_PATH));
  TF_DeleteStatus(status);
  assert_null(loom_op_registry_find(ops, "FixtureRolledBack"));
  assert_int_equal(loom_kernel_registry_count(kernels, "FixtureRolledBack"), 0);

  // Nothing of the rolled-back op can run.
  float value = 1.0f;
  int64_t one = 1;
  loom_tensor_t* inputs[1] = {make_tensor(LOOM_DTYPE_FLOAT, &one, 1, &value)};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      run_op("FixtureRolledBack", inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_NOT_FOUND, "Op type not registered 'FixtureRolledBack'");
}

// Loads `path` (twice natively, once with TF_LoadLibrary): each load must
// fail with `code`, name the library, contain `detail`, and leave none of
// ops[0, num_ops) registered, nor any kernel for them.
static void check_load_rolls_back(const char* path, loom_status_code_t code,
                                  const char* detail, const char* const* ops,
                                  int num_ops) {
  loom_op_registry_t* registry = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  char prefix[512];
  snprintf(prefix, sizeof(prefix), "plugin '%s' failed to register: ", path);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt < 2) {
      loom_plugin_t* plugin = NULL;
      loom_status_t status =
          loom_plugin_load(loom_allocator_system(), path, &plugin);
      assert_null(plugin);
      assert_int_equal(loom_status_code(status), code);
      const char* message = loom_status_message(status);
      if (strncmp(message, prefix, strlen(prefix)) != 0 ||
          !strstr(message, detail)) {
        fail_msg("'%s' does not start with '%s' and contain '%s'", message,
                 prefix, detail);
      }
      loom_status_free(status);
    } else {
      TF_Status* status = TF_NewStatus();
      assert_null(TF_LoadLibrary(path, status));
      assert_int_equal(TF_GetCode(status), (TF_Code)code);
      assert_non_null(strstr(TF_Message(status), prefix));
      assert_non_null(strstr(TF_Message(status), detail));
      TF_DeleteStatus(status);
    }
    for (int i = 0; i < num_ops; ++i) {
      assert_null(loom_op_registry_find(registry, ops[i]));
      assert_int_equal(loom_kernel_registry_count(kernels, ops[i]), 0);
    }
  }
}

// Registrations a plugin makes from a helper thread during its entry point
// belong to the load: the helper's failure fails it, and the rollback
// removes what the helper registered with the rest.
static void registrations_from_a_helper_thread_belong_to_the_load(
    void** state) {
  (void)state;
  static const char* const kOps[] = {"FixtureThreadGood", "FixtureThreadBad",
                                     "FixtureThreadMain"};
  check_load_rolls_back(LOOM_FIXTURE_THREADED_PATH,
                        LOOM_STATUS_INVALID_ARGUMENT,
                        "Op 'FixtureThreadBad': invalid attr spec \"T: "
                        "{float, int33}\": unknown type 'int33'",
                        kOps, 3);
}

// Bytes in use by malloc (0 where an instrumented allocator replaces it).
static size_t heap_in_use(void) {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// A failed load keeps nothing: its definitions, builders and journal are
// freed with the rollback, so that loading failing plugins again and again
// (a retry loop) keeps the process's memory flat.
static void failed_loads_keep_no_memory(void** state) {
  (void)state;
  static const char* const kPaths[] = {
      LOOM_FIXTURE_FAILING_PATH,        LOOM_FIXTURE_BAD_SPEC_PATH,
      LOOM_FIXTURE_BAD_CONSTRAINT_PATH, LOOM_FIXTURE_INIT_KERNEL_FAILS_PATH,
      LOOM_FIXTURE_KERNEL_FAILS_PATH,
  };
  enum { kPaths_ = sizeof(kPaths) / sizeof(kPaths[0]) };
  TF_Status* status = TF_NewStatus();
  size_t before = 0;
  for (int round = 0; round < 320; ++round) {
    // The first rounds warm up (dlopen's and malloc's own bookkeeping).
    if (round == 20) before = heap_in_use();
    for (int i = 0; i < kPaths_; ++i) {
      TF_Library* library = TF_LoadLibrary(kPaths[i], status);
      assert_null(library);
      assert_int_not_equal(TF_GetCode(status), TF_OK);
    }
  }
  size_t after = heap_in_use();
  TF_DeleteStatus(status);
  // 300 rounds of 5 failed loads: a kilobyte kept per load would be 1.5 MB.
  // (The threaded fixture is left out: the allocator caches of the threads
  // it starts take a thousand loads to settle.)
  if (after > before + 64 * 1024) {
    fail_msg("1,500 failed loads grew the heap from %zu to %zu bytes", before,
             after);
  }
}

// A spec that does not parse fails the load even though the plugin never
// looks at the status TF_RegisterOpDefinition set.
static void plugin_with_a_malformed_spec_is_rolled_back(void** state) {
  (void)state;
  static const char* const kOps[] = {"FixtureBadSpecGood", "FixtureBadSpec"};
  check_load_rolls_back(LOOM_FIXTURE_BAD_SPEC_PATH,
                        LOOM_STATUS_INVALID_ARGUMENT,
                        "Op 'FixtureBadSpec': invalid attr spec \"T: {float, "
                        "int33}\": unknown type 'int33'",
                        kOps, 2);
}

// A kernel whose type constraint failed is not registered without it: the
// load fails and the op and the plugin's other kernel are rolled back.
static void plugin_with_a_failed_type_constraint_is_rolled_back(void** state) {
  (void)state;
  static const char* const kOps[] = {"FixtureConstrained"};
  check_load_rolls_back(LOOM_FIXTURE_BAD_CONSTRAINT_PATH,
                        LOOM_STATUS_INVALID_ARGUMENT,
                        "kernel for op 'FixtureConstrained': type constraint "
                        "on attr 'T' names invalid dtype 999",
                        kOps, 1);
}

// TF_InitKernel fails after TF_InitPlugin registered ops and a kernel:
// what both entry points registered is rolled back.
static void failure_in_init_kernel_rolls_back_init_plugin(void** state) {
  (void)state;
  static const char* const kOps[] = {"FixtureLateA", "FixtureLateB"};
  check_load_rolls_back(LOOM_FIXTURE_INIT_KERNEL_FAILS_PATH,
                        LOOM_STATUS_ALREADY_EXISTS,
                        "Op 'FixtureLateA' is already registered", kOps, 2);
}

// A kernel registration fails (its builder could not be created): the op
// and the kernel registered before it are rolled back, and the error says
// why the builder is missing.
static void failed_kernel_registration_rolls_back_ops_and_kernels(
    void** state) {
  (void)state;
  static const char* const kOps[] = {"FixtureKernelFails"};
  check_load_rolls_back(LOOM_FIXTURE_KERNEL_FAILS_PATH,
                        LOOM_STATUS_INVALID_ARGUMENT,
                        "kernel for op 'FixtureKernelFails': exactly one of "
                        "compute and compute_async must be given",
                        kOps, 1);
}

// Loads the fixture with both entry points with allocation n failing (from
// the loader's allocator and the default one, which op and kernel builders
// use); returns the status.
static loom_status_t load_both_with_failure(loom_fault_allocator_t* fault,
                                            int64_t n,
                                            loom_plugin_t** out_plugin) {
  loom_fault_allocator_fail_nth(fault, n);
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  loom_allocator_t previous = loom_allocator_set_default(allocator);
  loom_status_t status = loom_plugin_load(
      allocator, LOOM_FIXTURE_BOTH_ENTRY_POINTS_PATH, out_plugin);
  loom_allocator_set_default(previous);
  return status;
}

// What the fixture's loads allocated from: it holds the definitions of the
// one successful load (and of the rolled-back ones) for the life of the
// process, so it is never destroyed.
static loom_fault_allocator_t* g_load_faults;

// Every allocation of the load failing in turn: the load fails naming the
// library and registers nothing. Definitions rolled back stay allocated
// (another thread may hold a pointer to one), so a failed load may keep at
// most what the successful one keeps; LeakSanitizer (the ASan build) checks
// that the rest was freed. Then the load that succeeds runs TF_InitPlugin
// and TF_InitKernel, once each, in that order.
static void plugin_load_survives_every_allocation_failure(void** state) {
  (void)state;
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &g_load_faults));
  loom_fault_allocator_t* fault = g_load_faults;
  loom_op_registry_t* ops = loom_op_registry_global();
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  int64_t most_kept_by_a_failure = 0;
  int64_t kept_by_the_success = 0;
  int64_t failures = 0;
  loom_plugin_t* plugin = NULL;
  for (int64_t n = 1;; ++n) {
    int64_t injected = loom_fault_allocator_injected_failures(fault);
    int64_t live = loom_fault_allocator_live_count(fault);
    loom_status_t status = load_both_with_failure(fault, n, &plugin);
    if (loom_fault_allocator_injected_failures(fault) == injected) {
      LOOM_ASSERT_OK(status);  // nothing failed
      loom_plugin_release(plugin);
      kept_by_the_success = loom_fault_allocator_live_count(fault) - live;
      break;
    }
    ++failures;
    if (!status) {
      fail_msg("allocation %lld failed but the plugin loaded", (long long)n);
    }
    assert_null(plugin);
    loom_status_free(status);
    assert_null(loom_op_registry_find(ops, "FixtureEntryOrder"));
    assert_null(loom_op_registry_find(ops, "FixtureEntryEcho"));
    assert_int_equal(loom_kernel_registry_count(kernels, "FixtureEntryOrder"),
                     0);
    assert_int_equal(loom_kernel_registry_count(kernels, "FixtureEntryEcho"),
                     0);
    int64_t kept = loom_fault_allocator_live_count(fault) - live;
    if (kept > most_kept_by_a_failure) most_kept_by_a_failure = kept;
  }
  assert_true(failures > 10);
  assert_true(kept_by_the_success > 0);
  assert_true(most_kept_by_a_failure <= kept_by_the_success);

  assert_int_equal(loom_kernel_registry_count(kernels, "FixtureEntryOrder"), 1);
  assert_int_equal(loom_kernel_registry_count(kernels, "FixtureEntryEcho"), 1);
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run_op("FixtureEntryOrder", NULL, 0, NULL, outputs, 1, &count));
  int64_t two = 2;
  assert_shape(loom_tensor_shape(outputs[0]), &two, 1);
  const int32_t* calls = loom_tensor_data(outputs[0]);
  assert_int_equal(calls[0], 1);  // TF_InitPlugin
  assert_int_equal(calls[1], 2);  // TF_InitKernel
  loom_tensor_release(outputs[0]);
}

// Runs Bitcast float[2] -> int32[2] (with `label`, or none) and checks the
// bytes.
static void check_float_to_int32_bitcast(const char* op, const char* label) {
  float values[2] = {1.0f, -0.375f};
  int64_t two = 2;
  loom_tensor_t* inputs[1] = {make_tensor(LOOM_DTYPE_FLOAT, &two, 1, values)};
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_INT32));
  if (label) {
    LOOM_ASSERT_OK(
        loom_op_attrs_set_string(&attrs, "_kernel", label, strlen(label)));
  }
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(run_op(op, inputs, 1, &attrs, outputs, 1, &count));
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(count, 1);
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_INT32);
  int32_t expected[2];
  memcpy(expected, values, sizeof(expected));
  assert_memory_equal(loom_tensor_data(outputs[0]), expected, sizeof(expected));
  loom_tensor_release(outputs[0]);
}

// As TensorFlow's TF_LoadLibrary: loading a loaded library again gives a
// handle to it, and nothing is registered a second time.
static void loading_twice_returns_the_loaded_library(void** state) {
  (void)state;
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(),
                                  LOOM_PLUGIN_BITCAST_PATH, &plugin));
  assert_non_null(plugin);
  assert_string_equal(loom_plugin_path(plugin), LOOM_PLUGIN_BITCAST_PATH);
  loom_plugin_release(plugin);

  TF_Status* status = TF_NewStatus();
  TF_Library* library = TF_LoadLibrary(LOOM_PLUGIN_SHOWCASE_PATH, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_non_null(library);
  TF_DeleteLibraryHandle(library);
  TF_DeleteStatus(status);

  // Nothing was registered twice, and the first loads still work.
  assert_int_equal(loom_kernel_registry_count(kernels, "Bitcast"), 2);
  assert_int_equal(loom_kernel_registry_count(kernels, "ShowcaseFill"), 1);
  check_float_to_int32_bitcast("Bitcast", NULL);
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(run_op("ShowcaseFill", NULL, 0, NULL, outputs, 1, &count));
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_FLOAT);
  assert_int_equal(loom_tensor_shape(outputs[0])->rank, 0);
  assert_true(*(const float*)loom_tensor_data(outputs[0]) == 0.0f);
  loom_tensor_release(outputs[0]);
}

// A kernel-only plugin (TF_InitKernel) loaded twice: only the loader can
// stop its kernel from being registered twice, which would make every
// lookup ambiguous.
static void kernel_only_plugin_loads_once(void** state) {
  (void)state;
  loom_kernel_registry_t* kernels = loom_kernel_registry_global();
  size_t before = loom_kernel_registry_count(kernels, "Bitcast");
  loom_plugin_t* plugin = NULL;
  LOOM_ASSERT_OK(loom_plugin_load(loom_allocator_system(),
                                  LOOM_FIXTURE_KERNEL_ONLY_PATH, &plugin));
  loom_plugin_release(plugin);
  assert_int_equal(loom_kernel_registry_count(kernels, "Bitcast"), before + 1);
  check_float_to_int32_bitcast("Bitcast", "fixture");

  TF_Status* status = TF_NewStatus();
  TF_Library* library = TF_LoadLibrary(LOOM_FIXTURE_KERNEL_ONLY_PATH, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_non_null(library);
  TF_DeleteLibraryHandle(library);
  TF_DeleteStatus(status);
  assert_int_equal(loom_kernel_registry_count(kernels, "Bitcast"), before + 1);
  check_float_to_int32_bitcast("Bitcast", "fixture");
  check_float_to_int32_bitcast("Bitcast", NULL);
}

//===----------------------------------------------------------------------===//
// Bitcast
//===----------------------------------------------------------------------===//

typedef struct bitcast_case_t {
  loom_dtype_t from;
  loom_dtype_t to;
  int in_rank;
  int64_t in_dims[3];
  int out_rank;
  int64_t out_dims[4];
} bitcast_case_t;

static const bitcast_case_t kBitcastCases[] = {
    // Equal sizes: the shape is kept.
    {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32, 2, {2, 3}, 2, {2, 3}},
    {LOOM_DTYPE_UINT16, LOOM_DTYPE_HALF, 1, {5}, 1, {5}},
    {LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT16, 0, {0}, 0, {0}},
    {LOOM_DTYPE_INT64, LOOM_DTYPE_COMPLEX64, 1, {4}, 1, {4}},
    {LOOM_DTYPE_QINT32, LOOM_DTYPE_UINT32, 2, {0, 3}, 2, {0, 3}},
    // A bigger output type: the last dim (the ratio) is dropped.
    {LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, 2, {2, 4}, 1, {2}},
    {LOOM_DTYPE_UINT8, LOOM_DTYPE_UINT64, 2, {1, 8}, 1, {1}},
    {LOOM_DTYPE_INT16, LOOM_DTYPE_COMPLEX128, 2, {3, 8}, 1, {3}},
    {LOOM_DTYPE_HALF, LOOM_DTYPE_DOUBLE, 1, {4}, 0, {0}},
    {LOOM_DTYPE_QUINT8, LOOM_DTYPE_QINT16, 3, {2, 1, 2}, 2, {2, 1}},
    // A smaller output type: a last dim of the ratio is added.
    {LOOM_DTYPE_DOUBLE, LOOM_DTYPE_UINT16, 1, {2}, 2, {2, 4}},
    {LOOM_DTYPE_COMPLEX64, LOOM_DTYPE_FLOAT, 1, {3}, 2, {3, 2}},
    {LOOM_DTYPE_INT32, LOOM_DTYPE_QINT8, 0, {0}, 1, {4}},
    {LOOM_DTYPE_COMPLEX128, LOOM_DTYPE_INT8, 2, {1, 2}, 3, {1, 2, 16}},
    {LOOM_DTYPE_UINT64, LOOM_DTYPE_QUINT16, 1, {0}, 2, {0, 4}},
};

// Runs one case with the kernel that shares the buffer and with the one
// that copies, checking dtype, shape, bytes and (for the first) that the
// output is a view of the input; and checks the shape function agrees.
static void check_bitcast_case(const bitcast_case_t* c) {
  for (int copy = 0; copy < 2; ++copy) {
    loom_tensor_t* input = make_tensor(c->from, c->in_dims, c->in_rank, NULL);
    loom_tensor_retain(input);  // loom_kernel_run consumes one reference
    loom_op_attrs_t attrs;
    attrs_init(&attrs);
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", c->to));
    if (copy) {
      LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "_kernel", "copy", 4));
    }
    loom_tensor_t* inputs[1] = {input};
    loom_tensor_t* outputs[1] = {NULL};
    int32_t count = 0;
    LOOM_ASSERT_OK(run_op("Bitcast", inputs, 1, &attrs, outputs, 1, &count));
    loom_op_attrs_deinitialize(&attrs);
    assert_int_equal(count, 1);
    loom_tensor_t* output = outputs[0];
    assert_int_equal(loom_tensor_dtype(output), c->to);
    assert_shape(loom_tensor_shape(output), c->out_dims, c->out_rank);
    size_t bytes = loom_tensor_byte_size(input);
    assert_int_equal(loom_tensor_byte_size(output), bytes);
    // A bitcast keeps every byte where it was.
    if (bytes) {
      assert_memory_equal(loom_tensor_data(output), loom_tensor_data(input),
                          bytes);
      if (copy) {
        assert_ptr_not_equal(loom_tensor_data(output), loom_tensor_data(input));
      } else {
        assert_ptr_equal(loom_tensor_data(output), loom_tensor_data(input));
      }
    }
    loom_tensor_release(output);
    loom_tensor_release(input);
  }

  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", c->to));
  loom_shape_t in_shape = make_shape(c->in_dims, c->in_rank);
  loom_shape_t out_shape;
  LOOM_ASSERT_OK(
      infer_shapes("Bitcast", &attrs, &c->from, &in_shape, 1, &out_shape, 1));
  assert_shape(&out_shape, c->out_dims, c->out_rank);
  loom_op_attrs_deinitialize(&attrs);
}

static void bitcast_follows_tensorflow_across_dtype_pairs(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kBitcastCases) / sizeof(kBitcastCases[0]);
       ++i) {
    check_bitcast_case(&kBitcastCases[i]);
  }
}

// Typed spot checks: the values each output element must hold, computed
// with memcpy / unions from the input values.
static void bitcast_reinterprets_values(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_tensor_t* outputs[1];
  int32_t count = 0;

  // float -> int32: each int is the float's bit pattern.
  float floats[4] = {1.0f, -2.5f, FLT_MIN, 3.0e38f};
  int64_t four = 4;
  loom_tensor_t* inputs[1] = {make_tensor(LOOM_DTYPE_FLOAT, &four, 1, floats)};
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(run_op("Bitcast", inputs, 1, &attrs, outputs, 1, &count));
  loom_op_attrs_deinitialize(&attrs);
  for (int i = 0; i < 4; ++i) {
    union {
      float f;
      int32_t i;
    } pun;
    pun.f = floats[i];
    assert_int_equal(((const int32_t*)loom_tensor_data(outputs[0]))[i], pun.i);
  }
  loom_tensor_release(outputs[0]);

  // int8[2, 4] -> int32[2]: each int is four consecutive bytes.
  int8_t bytes[8] = {1, 2, 3, 4, -1, -2, -3, -128};
  int64_t dims_2x4[2] = {2, 4};
  inputs[0] = make_tensor(LOOM_DTYPE_INT8, dims_2x4, 2, bytes);
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(run_op("Bitcast", inputs, 1, &attrs, outputs, 1, &count));
  loom_op_attrs_deinitialize(&attrs);
  for (int i = 0; i < 2; ++i) {
    int32_t expected;
    memcpy(&expected, bytes + 4 * i, sizeof(expected));
    assert_int_equal(((const int32_t*)loom_tensor_data(outputs[0]))[i],
                     expected);
  }
  loom_tensor_release(outputs[0]);

  // double[2] -> uint16[2, 4]: each double becomes its four 16-bit words.
  double doubles[2] = {1.5, -1e-300};
  int64_t two = 2;
  inputs[0] = make_tensor(LOOM_DTYPE_DOUBLE, &two, 1, doubles);
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_UINT16));
  LOOM_ASSERT_OK(run_op("Bitcast", inputs, 1, &attrs, outputs, 1, &count));
  loom_op_attrs_deinitialize(&attrs);
  for (int i = 0; i < 2; ++i) {
    uint16_t words[4];
    memcpy(words, &doubles[i], sizeof(words));
    for (int w = 0; w < 4; ++w) {
      assert_int_equal(
          ((const uint16_t*)loom_tensor_data(outputs[0]))[4 * i + w], words[w]);
    }
  }
  loom_tensor_release(outputs[0]);
}

// The fault allocator the C++ plugin was loaded with: the definitions it
// registered were allocated from it and live as long as the process.
static loom_fault_allocator_t* g_cxx_load_allocator;

// The same plugin source compiled as C++ loads and computes the same, and
// TF_DeleteLibraryHandle frees the handle with the allocator it came from
// even after the default changed.
static void cxx_build_of_the_plugin_works(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(),
                                             &g_cxx_load_allocator));
  loom_allocator_t previous = loom_allocator_set_default(
      loom_fault_allocator_allocator(g_cxx_load_allocator));
  TF_Status* status = TF_NewStatus();
  TF_Library* library = TF_LoadLibrary(LOOM_FIXTURE_CXX_PATH, status);
  loom_allocator_set_default(previous);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
  int64_t live = loom_fault_allocator_live_count(g_cxx_load_allocator);
  TF_DeleteLibraryHandle(library);  // the TF_Library and the loom_plugin_t
  assert_int_equal(loom_fault_allocator_live_count(g_cxx_load_allocator),
                   live - 2);
  assert_int_equal(
      loom_kernel_registry_count(loom_kernel_registry_global(), "BitcastCxx"),
      2);

  double doubles[2] = {1.5, -1e-300};
  int64_t two = 2;
  loom_tensor_t* outputs[2] = {NULL, NULL};
  for (int cxx = 0; cxx < 2; ++cxx) {
    loom_tensor_t* inputs[1] = {
        make_tensor(LOOM_DTYPE_DOUBLE, &two, 1, doubles)};
    loom_op_attrs_t attrs;
    attrs_init(&attrs);
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_UINT16));
    int32_t count = 0;
    LOOM_ASSERT_OK(run_op(cxx ? "BitcastCxx" : "Bitcast", inputs, 1, &attrs,
                          &outputs[cxx], 1, &count));
    loom_op_attrs_deinitialize(&attrs);
  }
  int64_t dims_2x4[2] = {2, 4};
  assert_shape(loom_tensor_shape(outputs[1]), dims_2x4, 2);
  assert_memory_equal(loom_tensor_data(outputs[1]),
                      loom_tensor_data(outputs[0]), sizeof(doubles));
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);
}

// Runs Bitcast `from` -> `to` on a tensor of shape dims[0, rank) and
// returns the status.
static loom_status_t run_bitcast(loom_dtype_t from, loom_dtype_t to,
                                 const int64_t* dims, int rank) {
  loom_tensor_t* inputs[1] = {make_tensor(from, dims, rank, NULL)};
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", to));
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  loom_status_t status =
      run_op("Bitcast", inputs, 1, &attrs, outputs, 1, &count);
  loom_op_attrs_deinitialize(&attrs);
  if (!status) loom_tensor_release(outputs[0]);
  return status;
}

static loom_status_t infer_bitcast(loom_dtype_t from, loom_dtype_t to,
                                   const loom_shape_t* shape,
                                   loom_shape_t* out_shape) {
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", to));
  loom_status_t status =
      infer_shapes("Bitcast", &attrs, &from, shape, 1, out_shape, 1);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static void bitcast_rejects_shapes_that_do_not_fit(void** state) {
  (void)state;
  loom_shape_t out;
  int64_t three = 3;
  loom_shape_t vector3 = make_shape(&three, 1);
  loom_shape_t scalar = loom_shape_scalar();

  // The last dim must be the size ratio: in the shape function...
  LOOM_ASSERT_STATUS(
      infer_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, &vector3, &out),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Cannot bitcast from int8 to int32: the last dimension of the input "
      "shape [3] must be 4 (the size ratio)");
  LOOM_ASSERT_STATUS(
      infer_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, &scalar, &out),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Cannot bitcast from int8 to int32: the input must have rank >= 1, its "
      "last dimension being 4 (the size ratio); got a scalar");
  // ... and in the kernel.
  LOOM_ASSERT_STATUS(
      run_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, &three, 1),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Cannot bitcast from int8 to int32: the last dimension of the input "
      "shape [3] must be 4 (the size ratio)");
  LOOM_ASSERT_STATUS(
      run_bitcast(LOOM_DTYPE_HALF, LOOM_DTYPE_COMPLEX128, NULL, 0),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Cannot bitcast from half to complex128: the input must have rank >= "
      "1, its last dimension being 8 (the size ratio); got a scalar");
  int64_t dims_2x3[2] = {2, 3};
  LOOM_ASSERT_STATUS(
      run_bitcast(LOOM_DTYPE_UINT8, LOOM_DTYPE_FLOAT, dims_2x3, 2),
      LOOM_STATUS_INVALID_ARGUMENT, "Op 'Bitcast' (kernel 'BitcastOp')");

  // A broadcast constant (a SCALAR host tensor) is not a buffer to share.
  int64_t dims_2x4[2] = {2, 4};
  loom_shape_t shape_2x4 = make_shape(dims_2x4, 2);
  int8_t byte = 3;
  loom_tensor_t* constant = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_INT8, &shape_2x4, &byte, &constant));
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "type", LOOM_DTYPE_INT32));
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      run_op("Bitcast", &constant, 1, &attrs, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Cannot bitcast from int8 to int32: the input does not hold one element "
      "per entry of its shape (not a dense tensor)");
  loom_op_attrs_deinitialize(&attrs);

  // Adding a dim beyond the inline ranks: the shape function and the
  // kernel, which allocates through TensorFlow's API, make the rank-9
  // output TensorFlow would (its ranks go to 254).
  int64_t ones[LOOM_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
  loom_shape_t full = make_shape(ones, LOOM_MAX_RANK);
  LOOM_ASSERT_OK(infer_bitcast(LOOM_DTYPE_INT32, LOOM_DTYPE_INT8, &full, &out));
  assert_int_equal(out.rank, LOOM_MAX_RANK + 1);
  assert_int_equal(loom_shape_dims(&out)[LOOM_MAX_RANK], 4);
  LOOM_ASSERT_OK(
      run_bitcast(LOOM_DTYPE_INT32, LOOM_DTYPE_INT8, ones, LOOM_MAX_RANK));

  // Types outside the allowed set, and a missing output type.
  LOOM_ASSERT_STATUS(run_bitcast(LOOM_DTYPE_BOOL, LOOM_DTYPE_INT8, &three, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'T' of bool is not in the list of "
                     "allowed values");
  LOOM_ASSERT_STATUS(run_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_STRING, &three, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'type' of string is not in the list");
  loom_tensor_t* inputs[1] = {make_tensor(LOOM_DTYPE_INT8, &three, 1, NULL)};
  LOOM_ASSERT_STATUS(run_op("Bitcast", inputs, 1, NULL, outputs, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'type' (\"type: {bfloat16");
}

static void bitcast_shape_function_handles_unknown_dims(void** state) {
  (void)state;
  loom_shape_t out;
  // Unknown rank: nothing is known about the output.
  loom_shape_t unknown = loom_shape_unknown();
  LOOM_ASSERT_OK(
      infer_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, &unknown, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
  // An unknown last dim is taken to be the ratio.
  int64_t dims[2] = {2, LOOM_UNKNOWN_DIM};
  loom_shape_t partial = make_shape(dims, 2);
  LOOM_ASSERT_OK(
      infer_bitcast(LOOM_DTYPE_INT8, LOOM_DTYPE_INT32, &partial, &out));
  int64_t two = 2;
  assert_shape(&out, &two, 1);
  // Other unknown dims carry over.
  int64_t first_unknown[2] = {LOOM_UNKNOWN_DIM, 4};
  loom_shape_t leading = make_shape(first_unknown, 2);
  LOOM_ASSERT_OK(
      infer_bitcast(LOOM_DTYPE_UINT8, LOOM_DTYPE_FLOAT, &leading, &out));
  int64_t unknown_dim = LOOM_UNKNOWN_DIM;
  assert_shape(&out, &unknown_dim, 1);
  loom_shape_t vector = make_shape(&unknown_dim, 1);
  LOOM_ASSERT_OK(
      infer_bitcast(LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT8, &vector, &out));
  int64_t expected[2] = {LOOM_UNKNOWN_DIM, 8};
  assert_shape(&out, expected, 2);
}

//===----------------------------------------------------------------------===//
// ShowcaseCombine
//===----------------------------------------------------------------------===//

typedef enum combine_op_t { ADD, SUB, MUL, MAX, MIN } combine_op_t;

static double apply_real(combine_op_t op, double a, double b) {
  switch (op) {
    case SUB:
      return a - b;
    case MUL:
      return a * b;
    case MAX:
      return a > b ? a : b;
    case MIN:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

static int64_t apply_int(combine_op_t op, int64_t a, int64_t b) {
  switch (op) {
    case SUB:
      return a - b;
    case MUL:
      return a * b;
    case MAX:
      return a > b ? a : b;
    case MIN:
      return a < b ? a : b;
    default:
      return a + b;
  }
}

static const char* const kOpNames[] = {"add", "sub", "mul", "max", "min"};

static void set_combine_attrs(loom_op_attrs_t* attrs, const combine_op_t* ops,
                              int num_ops, const int64_t* weights,
                              int num_weights, float scale, bool relu) {
  loom_string_view_t names[8];
  for (int i = 0; i < num_ops; ++i) {
    names[i].data = kOpNames[ops[i]];
    names[i].size = strlen(kOpNames[ops[i]]);
  }
  if (num_ops) {
    LOOM_ASSERT_OK(loom_op_attrs_set_string_list(attrs, "ops", names, num_ops));
  }
  if (num_weights) {
    LOOM_ASSERT_OK(loom_op_attrs_set_list(attrs, "weights", LOOM_ATTR_KIND_I64,
                                          weights, num_weights));
  }
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(attrs, "scale", scale));
  LOOM_ASSERT_OK(loom_op_attrs_set_bool(attrs, "relu", relu));
}

enum { kCombineInputs = 3, kLarge = 100003 };

// Big enough for the parallel-for to split the work across the workers.
static void combine_float_runs_in_parallel(void** state) {
  (void)state;
  static const combine_op_t kOps[2] = {SUB, MAX};
  static const int64_t kWeights[3] = {2, 1, -1};
  const float scale = 0.5f;
  float* values[kCombineInputs];
  loom_tensor_t* inputs[kCombineInputs];
  int64_t dims[2] = {kLarge, 1};
  for (int k = 0; k < kCombineInputs; ++k) {
    inputs[k] = make_tensor(LOOM_DTYPE_FLOAT, dims, 2, NULL);
    values[k] = loom_tensor_data(inputs[k]);
    for (int64_t i = 0; i < kLarge; ++i) {
      // Halves of small integers: every step below is exact.
      values[k][i] = (float)((i * (k + 3) + 7 * k) % 41 - 20) * 0.5f;
    }
    loom_tensor_retain(inputs[k]);  // to compute the expectation afterwards
  }
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  set_combine_attrs(&attrs, kOps, 2, kWeights, 3, scale, true);
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "input_shape", dims, 2));
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(run_op("ShowcaseCombine", inputs, kCombineInputs, &attrs,
                        outputs, 2, &count));
  loom_op_attrs_deinitialize(&attrs);
  assert_int_equal(count, 2);
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_FLOAT);
  assert_shape(loom_tensor_shape(outputs[0]), dims, 2);
  assert_int_equal(loom_tensor_dtype(outputs[1]), LOOM_DTYPE_INT64);
  assert_int_equal(loom_tensor_shape(outputs[1])->rank, 0);

  const float* result = loom_tensor_data(outputs[0]);
  int64_t positive = 0;
  for (int64_t i = 0; i < kLarge; ++i) {
    double acc = (double)kWeights[0] * values[0][i];
    for (int k = 1; k < kCombineInputs; ++k) {
      acc = apply_real(kOps[k - 1], acc, (double)kWeights[k] * values[k][i]);
    }
    acc *= scale;
    if (acc < 0) acc = 0;
    float expected = (float)acc;
    if (result[i] != expected) {
      fail_msg("element %lld: %g, expected %g", (long long)i, result[i],
               expected);
    }
    positive += expected > 0;
  }
  assert_true(positive > 0 && positive < kLarge);
  assert_int_equal(*(const int64_t*)loom_tensor_data(outputs[1]), positive);
  for (int k = 0; k < kCombineInputs; ++k) loom_tensor_release(inputs[k]);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);
}

// Runs ShowcaseCombine on two int tensors and checks against `expected`.
static void check_combine_int(loom_dtype_t dtype, const int64_t* a,
                              const int64_t* b, int64_t n, combine_op_t op,
                              float scale, const int64_t* expected) {
  loom_tensor_t* inputs[2];
  const int64_t* sources[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    inputs[k] = make_tensor(dtype, &n, 1, NULL);
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == LOOM_DTYPE_INT32) {
        ((int32_t*)loom_tensor_data(inputs[k]))[i] = (int32_t)sources[k][i];
      } else {
        ((int64_t*)loom_tensor_data(inputs[k]))[i] = sources[k][i];
      }
    }
  }
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  set_combine_attrs(&attrs, &op, 1, NULL, 0, scale, false);
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run_op("ShowcaseCombine", inputs, 2, &attrs, outputs, 2, &count));
  loom_op_attrs_deinitialize(&attrs);
  int64_t positive = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t got = dtype == LOOM_DTYPE_INT32
                      ? ((const int32_t*)loom_tensor_data(outputs[0]))[i]
                      : ((const int64_t*)loom_tensor_data(outputs[0]))[i];
    assert_int_equal(got, expected[i]);
    positive += expected[i] > 0;
  }
  assert_int_equal(*(const int64_t*)loom_tensor_data(outputs[1]), positive);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);
}

static void combine_integers_are_exact_and_saturate(void** state) {
  (void)state;
  int64_t a[5] = {1, -7, 40000, 2000000000, -3};
  int64_t b[5] = {5, 3, 60000, 2000000000, 0};
  int64_t expected[5];
  // int32 products saturate rather than wrap.
  for (int i = 0; i < 5; ++i) {
    int64_t product = apply_int(MUL, a[i], b[i]);
    expected[i] = product > INT32_MAX ? INT32_MAX : product;
  }
  check_combine_int(LOOM_DTYPE_INT32, a, b, 5, MUL, 1.0f, expected);
  // int64 'min', scaled by 3 in double.
  for (int i = 0; i < 5; ++i) {
    expected[i] = (int64_t)((double)apply_int(MIN, a[i], b[i]) * 3.0);
  }
  check_combine_int(LOOM_DTYPE_INT64, a, b, 5, MIN, 3.0f, expected);
  // 'sub' scaled by -0.5 rounds toward zero.
  for (int i = 0; i < 5; ++i) {
    expected[i] = (int64_t)((double)apply_int(SUB, a[i], b[i]) * -0.5);
  }
  check_combine_int(LOOM_DTYPE_INT64, a, b, 5, SUB, -0.5f, expected);
}

static void combine_uses_defaults_and_merges_shapes(void** state) {
  (void)state;
  // Defaults: every op 'add', every weight 1, scale 1, no relu.
  double x[3] = {0.25, -1.5, 2.0};
  double y[3] = {0.5, 1.0, -4.0};
  double z[3] = {-1.0, 0.5, 1.0};
  int64_t three = 3;
  loom_tensor_t* inputs[3] = {make_tensor(LOOM_DTYPE_DOUBLE, &three, 1, x),
                              make_tensor(LOOM_DTYPE_DOUBLE, &three, 1, y),
                              make_tensor(LOOM_DTYPE_DOUBLE, &three, 1, z)};
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run_op("ShowcaseCombine", inputs, 3, NULL, outputs, 2, &count));
  for (int i = 0; i < 3; ++i) {
    double expected = x[i] + y[i] + z[i];
    assert_true(((const double*)loom_tensor_data(outputs[0]))[i] == expected);
  }
  assert_int_equal(*(const int64_t*)loom_tensor_data(outputs[1]), 0);
  loom_tensor_release(outputs[0]);
  loom_tensor_release(outputs[1]);

  // Shape inference merges what each input knows.
  int64_t a_dims[2] = {2, LOOM_UNKNOWN_DIM};
  int64_t b_dims[2] = {LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shapes[3] = {make_shape(a_dims, 2), loom_shape_unknown(),
                            make_shape(b_dims, 2)};
  loom_dtype_t dtypes[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT,
                            LOOM_DTYPE_FLOAT};
  loom_shape_t out[2];
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(
      infer_shapes("ShowcaseCombine", &attrs, dtypes, shapes, 3, out, 2));
  int64_t merged[2] = {2, 3};
  assert_shape(&out[0], merged, 2);
  assert_int_equal(out[1].rank, 0);
  loom_op_attrs_deinitialize(&attrs);

  int64_t c_dims[2] = {4, 3};
  shapes[1] = make_shape(c_dims, 2);
  attrs_init(&attrs);
  LOOM_ASSERT_STATUS(
      infer_shapes("ShowcaseCombine", &attrs, dtypes, shapes, 3, out, 2),
      LOOM_STATUS_INVALID_ARGUMENT,
      "ShowcaseCombine: dimension 0 of input 1 is 4 but 2 in input 0");
  loom_op_attrs_deinitialize(&attrs);
  shapes[1] = make_shape(c_dims, 1);
  attrs_init(&attrs);
  LOOM_ASSERT_STATUS(
      infer_shapes("ShowcaseCombine", &attrs, dtypes, shapes, 3, out, 2),
      LOOM_STATUS_INVALID_ARGUMENT,
      "ShowcaseCombine: input 1 has rank 1 but input 0 has rank 2");
  loom_op_attrs_deinitialize(&attrs);
}

// Runs ShowcaseCombine on `n` float tensors of shape dims[0, rank) (one
// with `odd_dims` when odd_index >= 0) and returns the status.
static loom_status_t run_combine(int n, const int64_t* dims, int rank,
                                 int odd_index, const int64_t* odd_dims,
                                 int odd_rank, loom_op_attrs_t* attrs) {
  loom_tensor_t* inputs[4];
  for (int k = 0; k < n; ++k) {
    inputs[k] = k == odd_index
                    ? make_tensor(LOOM_DTYPE_FLOAT, odd_dims, odd_rank, NULL)
                    : make_tensor(LOOM_DTYPE_FLOAT, dims, rank, NULL);
  }
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  loom_status_t status =
      run_op("ShowcaseCombine", inputs, n, attrs, outputs, 2, &count);
  if (attrs) loom_op_attrs_deinitialize(attrs);
  if (!status) {
    loom_tensor_release(outputs[0]);
    loom_tensor_release(outputs[1]);
  }
  return status;
}

static void combine_reports_bad_attrs_and_inputs(void** state) {
  (void)state;
  int64_t dims[2] = {2, 2};
  int64_t other[2] = {2, 3};
  loom_op_attrs_t attrs;

  LOOM_ASSERT_STATUS(run_combine(1, dims, 2, -1, NULL, 0, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "must be at least minimum 2");

  attrs_init(&attrs);
  combine_op_t ops[3] = {ADD, ADD, ADD};
  set_combine_attrs(&attrs, ops, 3, NULL, 0, 1.0f, false);
  LOOM_ASSERT_STATUS(run_combine(2, dims, 2, -1, NULL, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseCombine: attr 'ops' has 3 entries; expected "
                     "N - 1 = 1 (one per input after the first) or none");

  attrs_init(&attrs);
  loom_string_view_t division = {"div", 3};
  LOOM_ASSERT_OK(loom_op_attrs_set_string_list(&attrs, "ops", &division, 1));
  LOOM_ASSERT_STATUS(run_combine(2, dims, 2, -1, NULL, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'ops' of \"div\" is not in the list of "
                     "allowed values");

  attrs_init(&attrs);
  int64_t weights[1] = {3};
  set_combine_attrs(&attrs, NULL, 0, weights, 1, 1.0f, false);
  LOOM_ASSERT_STATUS(run_combine(2, dims, 2, -1, NULL, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseCombine: attr 'weights' has 1 entries; expected "
                     "N = 2 (one per input) or none");

  LOOM_ASSERT_STATUS(run_combine(3, dims, 2, 2, other, 2, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseCombine: dimension 1 of input 2 is 3 but 2 in "
                     "input 0; all inputs must have the same shape");
  LOOM_ASSERT_STATUS(run_combine(2, dims, 2, 1, other, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseCombine: input 1 has rank 1 but input 0 has "
                     "rank 2; all inputs must have the same shape");

  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(&attrs, "input_shape", dims, 1));
  LOOM_ASSERT_STATUS(run_combine(2, dims, 2, -1, NULL, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseCombine: input 0 has rank 2 but attr "
                     "'input_shape' requires rank 1");

  // A broadcast constant (a SCALAR host tensor) holds one value, not one per
  // element: a kernel must not index it.
  loom_shape_t shape = make_shape(dims, 2);
  float one = 1.0f;
  loom_tensor_t* constant = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_scalar(
      loom_allocator_system(), LOOM_DTYPE_FLOAT, &shape, &one, &constant));
  loom_tensor_t* mixed[2] = {make_tensor(LOOM_DTYPE_FLOAT, dims, 2, NULL),
                             constant};
  loom_tensor_t* results[2] = {NULL, NULL};
  int32_t num_results = 0;
  LOOM_ASSERT_STATUS(
      run_op("ShowcaseCombine", mixed, 2, NULL, results, 2, &num_results),
      LOOM_STATUS_INVALID_ARGUMENT,
      "ShowcaseCombine: input 1 is not a dense tensor");

  // Mixed dtypes are caught by the op's signature (N * T).
  loom_tensor_t* inputs[2] = {make_tensor(LOOM_DTYPE_FLOAT, dims, 2, NULL),
                              make_tensor(LOOM_DTYPE_INT32, dims, 2, NULL)};
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      run_op("ShowcaseCombine", inputs, 2, NULL, outputs, 2, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "input 1 ('values') has dtype int32 but attr 'T' is float");
}

//===----------------------------------------------------------------------===//
// ShowcaseCastAsync
//===----------------------------------------------------------------------===//

static int64_t round_half_away(double x) {
  double whole = (double)(int64_t)x;
  if (x - whole >= 0.5) return (int64_t)whole + 1;
  if (x - whole <= -0.5) return (int64_t)whole - 1;
  return (int64_t)whole;
}

static void cast_async_converts_each_input_on_the_pool(void** state) {
  (void)state;
  float floats[6] = {1.5f, -2.5f, 2.49f, -0.5f, 3.0e9f, -7.75f};
  int64_t ints[3] = {-3, 9007199254740993LL, 42};
  double doubles[2] = {0.5, -1e300};
  static const loom_dtype_t kOutTypes[3] = {LOOM_DTYPE_INT32, LOOM_DTYPE_DOUBLE,
                                            LOOM_DTYPE_INT64};
  int64_t dims_2x3[2] = {2, 3};
  int64_t three = 3;
  int64_t two = 2;
  for (int rounding = 0; rounding < 2; ++rounding) {
    // Many runs: each one finishes on a pool thread.
    for (int run = 0; run < 20; ++run) {
      loom_tensor_t* inputs[3] = {
          make_tensor(LOOM_DTYPE_FLOAT, dims_2x3, 2, floats),
          make_tensor(LOOM_DTYPE_INT64, &three, 1, ints),
          make_tensor(LOOM_DTYPE_DOUBLE, &two, 1, doubles)};
      loom_op_attrs_t attrs;
      attrs_init(&attrs);
      LOOM_ASSERT_OK(loom_op_attrs_set_list(
          &attrs, "out_types", LOOM_ATTR_KIND_DTYPE, kOutTypes, 3));
      if (rounding) {
        LOOM_ASSERT_OK(
            loom_op_attrs_set_string(&attrs, "rounding", "round", 5));
      }
      loom_tensor_t* outputs[3] = {NULL, NULL, NULL};
      int32_t count = 0;
      LOOM_ASSERT_OK(
          run_op("ShowcaseCastAsync", inputs, 3, &attrs, outputs, 3, &count));
      loom_op_attrs_deinitialize(&attrs);
      assert_int_equal(count, 3);

      // float -> int32, saturating.
      assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_INT32);
      assert_shape(loom_tensor_shape(outputs[0]), dims_2x3, 2);
      for (int i = 0; i < 6; ++i) {
        int64_t expected =
            rounding ? round_half_away(floats[i]) : (int64_t)floats[i];
        if (expected > INT32_MAX) expected = INT32_MAX;
        assert_int_equal(((const int32_t*)loom_tensor_data(outputs[0]))[i],
                         expected);
      }
      // int64 -> double.
      for (int i = 0; i < 3; ++i) {
        assert_true(((const double*)loom_tensor_data(outputs[1]))[i] ==
                    (double)ints[i]);
      }
      // double -> int64, saturating.
      assert_int_equal(((const int64_t*)loom_tensor_data(outputs[2]))[0],
                       rounding ? 1 : 0);
      assert_int_equal(((const int64_t*)loom_tensor_data(outputs[2]))[1],
                       INT64_MIN);
      for (int i = 0; i < 3; ++i) loom_tensor_release(outputs[i]);
    }
  }

  // The output shapes follow the inputs'.
  loom_shape_t shapes[2] = {make_shape(dims_2x3, 2), loom_shape_unknown()};
  loom_dtype_t dtypes[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32};
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_list(&attrs, "out_types",
                                        LOOM_ATTR_KIND_DTYPE, dtypes, 2));
  loom_shape_t out[2];
  LOOM_ASSERT_OK(
      infer_shapes("ShowcaseCastAsync", &attrs, dtypes, shapes, 2, out, 2));
  assert_shape(&out[0], dims_2x3, 2);
  assert_int_equal(out[1].rank, LOOM_UNKNOWN_RANK);
  loom_op_attrs_deinitialize(&attrs);
}

static void cast_async_reports_construction_errors(void** state) {
  (void)state;
  int64_t two = 2;
  loom_tensor_t* inputs[2] = {make_tensor(LOOM_DTYPE_FLOAT, &two, 1, NULL),
                              make_tensor(LOOM_DTYPE_INT32, &two, 1, NULL)};
  loom_dtype_t out_types[1] = {LOOM_DTYPE_DOUBLE};
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_list(&attrs, "out_types",
                                        LOOM_ATTR_KIND_DTYPE, out_types, 1));
  loom_tensor_t* outputs[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      run_op("ShowcaseCastAsync", inputs, 2, &attrs, outputs, 2, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "ShowcaseCastAsync: 2 inputs (in_types) but 1 outputs (out_types); "
      "give one output type per input");
  loom_op_attrs_deinitialize(&attrs);

  inputs[0] = make_tensor(LOOM_DTYPE_FLOAT, &two, 1, NULL);
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_list(&attrs, "out_types",
                                        LOOM_ATTR_KIND_DTYPE, out_types, 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "rounding", "up", 2));
  LOOM_ASSERT_STATUS(
      run_op("ShowcaseCastAsync", inputs, 1, &attrs, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "value for attr 'rounding' of \"up\" is not in the list of allowed "
      "values");
  loom_op_attrs_deinitialize(&attrs);
}

//===----------------------------------------------------------------------===//
// ShowcaseFill
//===----------------------------------------------------------------------===//

static loom_status_t run_fill(loom_op_attrs_t* attrs, loom_tensor_t** out) {
  int32_t count = 0;
  loom_status_t status = run_op("ShowcaseFill", NULL, 0, attrs, out, 1, &count);
  if (attrs) loom_op_attrs_deinitialize(attrs);
  return status;
}

static void fill_broadcasts_or_copies_the_tensor_attr(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  loom_tensor_t* output = NULL;
  int64_t dims[2] = {2, 3};

  // One value, broadcast and truncated to int32.
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "dtype", LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "dims", LOOM_ATTR_KIND_I64, dims, 2));
  float scalar_value = -2.75f;
  loom_tensor_t* value = make_tensor(LOOM_DTYPE_FLOAT, NULL, 0, &scalar_value);
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", value));
  loom_tensor_release(value);
  LOOM_ASSERT_OK(run_fill(&attrs, &output));
  assert_int_equal(loom_tensor_dtype(output), LOOM_DTYPE_INT32);
  assert_shape(loom_tensor_shape(output), dims, 2);
  for (int i = 0; i < 6; ++i) {
    assert_int_equal(((const int32_t*)loom_tensor_data(output))[i],
                     (int32_t)scalar_value);
  }
  loom_tensor_release(output);

  // One value per element, converted to double; the default dtype is float.
  int64_t elements[6] = {1, -2, 3, -4, 5, 1LL << 40};
  value = make_tensor(LOOM_DTYPE_INT64, dims, 2, elements);
  for (int as_double = 0; as_double < 2; ++as_double) {
    attrs_init(&attrs);
    if (as_double) {
      LOOM_ASSERT_OK(
          loom_op_attrs_set_dtype(&attrs, "dtype", LOOM_DTYPE_DOUBLE));
    }
    LOOM_ASSERT_OK(
        loom_op_attrs_set_list(&attrs, "dims", LOOM_ATTR_KIND_I64, dims, 2));
    LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", value));
    LOOM_ASSERT_OK(run_fill(&attrs, &output));
    for (int i = 0; i < 6; ++i) {
      if (as_double) {
        assert_true(((const double*)loom_tensor_data(output))[i] ==
                    (double)elements[i]);
      } else {
        assert_true(((const float*)loom_tensor_data(output))[i] ==
                    (float)elements[i]);
      }
    }
    loom_tensor_release(output);
  }

  // Errors: a value of the wrong size, a negative dim, a value type the
  // kernel does not convert.
  attrs_init(&attrs);
  int64_t bigger[2] = {3, 3};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "dims", LOOM_ATTR_KIND_I64, bigger, 2));
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", value));
  loom_tensor_release(value);
  LOOM_ASSERT_STATUS(run_fill(&attrs, &output), LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseFill: attr 'value' has 6 elements; expected 1 "
                     "(broadcast) or 9 (one per element of dims)");

  attrs_init(&attrs);
  int64_t negative[2] = {2, -1};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "dims", LOOM_ATTR_KIND_I64, negative, 2));
  LOOM_ASSERT_STATUS(run_fill(&attrs, &output), LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseFill: dims[1] is -1; dimensions must be >= 0");

  attrs_init(&attrs);
  uint8_t byte = 1;
  value = make_tensor(LOOM_DTYPE_UINT8, NULL, 0, &byte);
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", value));
  loom_tensor_release(value);
  LOOM_ASSERT_STATUS(run_fill(&attrs, &output), LOOM_STATUS_INVALID_ARGUMENT,
                     "ShowcaseFill: attr 'value' must be a dense float, "
                     "double, int32 or int64 tensor");

  // An empty output.
  attrs_init(&attrs);
  int64_t empty[2] = {0, 4};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "dims", LOOM_ATTR_KIND_I64, empty, 2));
  LOOM_ASSERT_OK(run_fill(&attrs, &output));
  assert_shape(loom_tensor_shape(output), empty, 2);
  assert_int_equal(loom_tensor_num_elements(output), 0);
  loom_tensor_release(output);
}

//===----------------------------------------------------------------------===//
// ShowcaseDescribeAttrs
//===----------------------------------------------------------------------===//

// Runs ShowcaseDescribeAttrs with `attrs` (consumed) and checks the
// description the kernel built from them at construction.
static void check_description(loom_op_attrs_t* attrs, const char* expected) {
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run_op("ShowcaseDescribeAttrs", NULL, 0, attrs, outputs, 1, &count));
  loom_op_attrs_deinitialize(attrs);
  assert_int_equal(count, 1);
  assert_int_equal(loom_tensor_dtype(outputs[0]), LOOM_DTYPE_STRING);
  assert_int_equal(loom_tensor_shape(outputs[0])->rank, 0);
  const loom_tstring_t* text = loom_tensor_data(outputs[0]);
  char description[512];
  snprintf(description, sizeof(description), "%.*s",
           (int)loom_tstring_size(text), loom_tstring_data(text));
  assert_string_equal(description, expected);
  loom_tensor_release(outputs[0]);
}

// func, list(float), list(bool), list(shape) and list(tensor) attrs reach
// the plugin's kernel construction, from their defaults or as given.
static void describe_attrs_reads_every_kind_of_attr(void** state) {
  (void)state;
  loom_op_attrs_t attrs;
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_func(&attrs, "callback", "Identity", 8));
  check_description(&attrs,
                    "callback: Identity\n"
                    "thresholds: [0.25, 0.75]\n"
                    "flags: [true, false]\n"
                    "shapes: 3 (3 dims in all)\n"
                    "tensors: []\n");

  attrs_init(&attrs);
  LOOM_ASSERT_OK(
      loom_op_attrs_set_func(&attrs, "callback", "Model/loss_fn", 13));
  float thresholds[3] = {-1.5f, 0.0f, 1e10f};
  LOOM_ASSERT_OK(loom_op_attrs_set_list(&attrs, "thresholds",
                                        LOOM_ATTR_KIND_F32, thresholds, 3));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "flags", LOOM_ATTR_KIND_BOOL, NULL, 0));
  int64_t dims_2x3x4[3] = {2, 3, 4};
  int64_t five = 5;
  loom_shape_t shapes[3] = {make_shape(dims_2x3x4, 3), loom_shape_scalar(),
                            make_shape(&five, 1)};
  LOOM_ASSERT_OK(loom_op_attrs_set_shape_list(&attrs, "shapes", shapes, 3));
  float floats[2] = {1.5f, -2.0f};
  int64_t seven = 7;
  int64_t two = 2;
  uint8_t byte = 9;
  // The kernel prints the values of float, double, int32 and int64 only.
  loom_tensor_t* tensors[3] = {make_tensor(LOOM_DTYPE_FLOAT, &two, 1, floats),
                               make_tensor(LOOM_DTYPE_INT64, NULL, 0, &seven),
                               make_tensor(LOOM_DTYPE_UINT8, NULL, 0, &byte)};
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor_list(&attrs, "tensors", tensors, 3));
  for (int i = 0; i < 3; ++i) loom_tensor_release(tensors[i]);
  check_description(&attrs,
                    "callback: Model/loss_fn\n"
                    "thresholds: [-1.5, 0, 1e+10]\n"
                    "flags: []\n"
                    "shapes: 3 (4 dims in all)\n"
                    "tensors: [float[2] {1.5, -2}, int64[] {7}, "
                    "dtype 4[]]\n");

  // The function has no default: the caller must name one.
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      run_op("ShowcaseDescribeAttrs", NULL, 0, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'ShowcaseDescribeAttrs': attr 'callback' (\"callback: func\") is "
      "not set and has no default");

  // Its output is a scalar for shape inference too.
  attrs_init(&attrs);
  LOOM_ASSERT_OK(loom_op_attrs_set_func(&attrs, "callback", "Identity", 8));
  loom_shape_t out;
  LOOM_ASSERT_OK(
      infer_shapes("ShowcaseDescribeAttrs", &attrs, NULL, NULL, 0, &out, 1));
  assert_int_equal(out.rank, 0);
  loom_op_attrs_deinitialize(&attrs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plugins_register_their_ops_and_kernels),
      cmocka_unit_test(missing_file_is_not_found_naming_the_path),
      cmocka_unit_test(library_without_entry_point_loads_with_no_ops),
      cmocka_unit_test(entry_point_of_a_dependency_does_not_count),
      cmocka_unit_test(failing_plugin_is_rolled_back),
      cmocka_unit_test(plugin_with_a_malformed_spec_is_rolled_back),
      cmocka_unit_test(registrations_from_a_helper_thread_belong_to_the_load),
      cmocka_unit_test(failed_loads_keep_no_memory),
      cmocka_unit_test(plugin_with_a_failed_type_constraint_is_rolled_back),
      cmocka_unit_test(failure_in_init_kernel_rolls_back_init_plugin),
      cmocka_unit_test(failed_kernel_registration_rolls_back_ops_and_kernels),
      cmocka_unit_test(plugin_load_survives_every_allocation_failure),
      cmocka_unit_test(loading_twice_returns_the_loaded_library),
      cmocka_unit_test(kernel_only_plugin_loads_once),
      cmocka_unit_test(bitcast_follows_tensorflow_across_dtype_pairs),
      cmocka_unit_test(bitcast_reinterprets_values),
      cmocka_unit_test(cxx_build_of_the_plugin_works),
      cmocka_unit_test(bitcast_rejects_shapes_that_do_not_fit),
      cmocka_unit_test(bitcast_shape_function_handles_unknown_dims),
      cmocka_unit_test(combine_float_runs_in_parallel),
      cmocka_unit_test(combine_integers_are_exact_and_saturate),
      cmocka_unit_test(combine_uses_defaults_and_merges_shapes),
      cmocka_unit_test(combine_reports_bad_attrs_and_inputs),
      cmocka_unit_test(cast_async_converts_each_input_on_the_pool),
      cmocka_unit_test(cast_async_reports_construction_errors),
      cmocka_unit_test(fill_broadcasts_or_copies_the_tensor_attr),
      cmocka_unit_test(describe_attrs_reads_every_kind_of_attr),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
