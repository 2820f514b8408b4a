// Custom-op libraries built the way TensorFlow builds them (tests/plugin/
// custom_ops): no entry point, ops and kernels registered by static
// initialisers while dlopen runs, loaded with TF_LoadLibrary; a load that
// fails half way is rolled back before the library is unmapped; loading
// twice is a no-op; TensorFlow's serialized op and kernel lists
// (TF_GetOpList, TF_GetAllOpList, TF_GetRegisteredKernelsForOp,
// TF_GetAllRegisteredKernels), decoded with protobuf-c and, when
// python3-protobuf is there, with Python's protobuf too.
//
// This executable links the shared libloom, as the libraries do, so both
// see one registry. The registries are process-wide: the cases run in
// order.

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loom/builtin_ops.h"
#include "loom/fault_allocator.h"
#include "loom/host_context.h"
#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/plugin.h"
#include "loom/tensor.h"
#include "tensorflow/c/c_api.h"
#include "test_support.h"
#include "tf_framework.pb-c.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  return loom_test_host_setup(1, &g_host);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_host_teardown(&g_host);
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
  assert_null(loom_op_registry_find(ops, "CtorHalfHelper"));
  assert_int_equal(
      loom_kernel_registry_count(loom_kernel_registry_global(), "CtorHalfGood"),
      0);
  float x = 1.0f;
  float y = 0.0f;
  LOOM_ASSERT_STATUS(run_float_op("CtorHalfGood", &x, 1, &y),
                     LOOM_STATUS_NOT_FOUND,
                     "Op type not registered 'CtorHalfGood'");
}

// A library whose constructor registers an op and its kernel, then fails
// in a helper thread it starts: the load fails, what the constructor and
// its thread registered is rolled back, then the library is unmapped; its op is
// not registered (not a crash in unmapped code). A retry maps it afresh, runs
// the constructor again and fails the same way.
static void library_failing_halfway_is_rolled_back_then_unmapped(void** state) {
  (void)state;
  for (int attempt = 0; attempt < 2; ++attempt) {
    unsetenv("LOOM_FIXTURE_CTOR_FAILS_HALFWAY_UNMAPPED");
    check_fails_halfway(LOOM_CUSTOM_OPS_FAILS_HALFWAY_PATH, "");
    assert_false(is_mapped(LOOM_CUSTOM_OPS_FAILS_HALFWAY_PATH));
    const char* unmapped = getenv("LOOM_FIXTURE_CTOR_FAILS_HALFWAY_UNMAPPED");
    assert_non_null(unmapped);
    // Its kernel was gone before the library was.
    assert_string_equal(unmapped, "rolled back");
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

//===----------------------------------------------------------------------===//
// Serialized op and kernel lists
//===----------------------------------------------------------------------===//

static const Tensorflow__OpDef__AttrDef* find_attr(const Tensorflow__OpDef* op,
                                                   const char* name) {
  for (size_t i = 0; i < op->n_attr; ++i) {
    if (strcmp(op->attr[i]->name, name) == 0) return op->attr[i];
  }
  fail_msg("op %s has no attr %s", op->name, name);
  return NULL;
}

static void check_arg(const Tensorflow__OpDef__ArgDef* arg, const char* name,
                      int type, const char* type_attr, const char* number_attr,
                      const char* type_list_attr, bool is_ref) {
  assert_string_equal(arg->name, name);
  assert_int_equal(arg->type, type);
  assert_string_equal(arg->type_attr, type_attr);
  assert_string_equal(arg->number_attr, number_attr);
  assert_string_equal(arg->type_list_attr, type_list_attr);
  assert_int_equal(arg->is_ref, is_ref);
}

// Runs tests/plugin/check_op_list.py on `bytes`: Python's protobuf decodes
// them and compares with what TensorFlow prints for these ops.
static void check_with_python(const void* bytes, size_t length) {
  char path[] = "/tmp/loom_op_list_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, bytes, length), (ssize_t)length);
  close(fd);
  char command[2048];
  snprintf(command, sizeof(command), "/usr/bin/python3 %s %s %s",
           LOOM_CHECK_OP_LIST_SCRIPT, LOOM_TF_FRAMEWORK_DESCRIPTOR, path);
  int result = system(command);
  unlink(path);
  assert_true(WIFEXITED(result));
  if (WEXITSTATUS(result) == 77) {
    print_message("python3-protobuf is not installed: decoded in C only\n");
    return;
  }
  assert_int_equal(WEXITSTATUS(result), 0);
}

// TF_GetOpList lists exactly the library's ops, with their arguments,
// attrs, defaults, allowed values and properties.
static void op_list_of_a_library_lists_exactly_its_ops(void** state) {
  (void)state;
  TF_Library* library = load_ok(LOOM_CUSTOM_OPS_CTOR_PATH);
  TF_Buffer buffer = TF_GetOpList(library);
  assert_non_null(buffer.data);
  assert_null(buffer.data_deallocator);  // the handle's
  TF_Buffer again = TF_GetOpList(library);
  assert_ptr_equal(again.data, buffer.data);

  Tensorflow__OpList* list =
      tensorflow__op_list__unpack(NULL, buffer.length, buffer.data);
  assert_non_null(list);
  assert_int_equal(list->n_op, 2);

  const Tensorflow__OpDef* add = list->op[0];
  assert_string_equal(add->name, "CtorAddDelta");
  assert_int_equal(add->n_input_arg, 1);
  assert_int_equal(add->n_output_arg, 1);
  check_arg(add->input_arg[0], "x", TF_FLOAT, "", "", "", false);
  check_arg(add->output_arg[0], "y", TF_FLOAT, "", "", "", false);
  assert_int_equal(add->n_attr, 1);
  const Tensorflow__OpDef__AttrDef* delta = find_attr(add, "delta");
  assert_string_equal(delta->type, "float");
  assert_int_equal(delta->default_value->value_case,
                   TENSORFLOW__ATTR_VALUE__VALUE_F);
  assert_true(delta->default_value->f == 0.5f);
  assert_null(delta->allowed_values);
  assert_false(add->is_stateful);
  assert_null(add->deprecation);

  const Tensorflow__OpDef* gather = list->op[1];
  assert_string_equal(gather->name, "CtorGather");
  assert_int_equal(gather->n_input_arg, 3);
  check_arg(gather->input_arg[0], "values", 0, "T", "N", "", false);
  check_arg(gather->input_arg[1], "extras", 0, "", "", "Textra", false);
  check_arg(gather->input_arg[2], "ref_count", TF_INT64, "", "", "", true);
  assert_int_equal(gather->n_output_arg, 1);
  check_arg(gather->output_arg[0], "out", 0, "T", "", "", false);
  assert_int_equal(gather->n_attr, 7);

  const Tensorflow__OpDef__AttrDef* n = find_attr(gather, "N");
  assert_string_equal(n->type, "int");
  assert_true(n->has_minimum);
  assert_int_equal(n->minimum, 2);
  assert_null(n->default_value);

  const Tensorflow__OpDef__AttrDef* t = find_attr(gather, "T");
  assert_string_equal(t->type, "type");
  assert_int_equal(t->default_value->value_case,
                   TENSORFLOW__ATTR_VALUE__VALUE_TYPE);
  assert_int_equal(t->default_value->type, TF_INT32);
  assert_int_equal(t->allowed_values->value_case,
                   TENSORFLOW__ATTR_VALUE__VALUE_LIST);
  assert_int_equal(t->allowed_values->list->n_type, 2);
  assert_int_equal(t->allowed_values->list->type[0], TF_FLOAT);
  assert_int_equal(t->allowed_values->list->type[1], TF_INT32);

  const Tensorflow__OpDef__AttrDef* textra = find_attr(gather, "Textra");
  assert_string_equal(textra->type, "list(type)");
  assert_true(textra->has_minimum);
  assert_int_equal(textra->minimum, 0);

  const Tensorflow__OpDef__AttrDef* mode = find_attr(gather, "mode");
  assert_string_equal(mode->type, "string");
  assert_int_equal(mode->default_value->s.len, 3);
  assert_memory_equal(mode->default_value->s.data, "max", 3);
  const Tensorflow__AttrValue__ListValue* modes = mode->allowed_values->list;
  assert_int_equal(modes->n_s, 2);
  assert_memory_equal(modes->s[0].data, "sum", 3);
  assert_memory_equal(modes->s[1].data, "max", 3);

  const Tensorflow__OpDef__AttrDef* axes = find_attr(gather, "axes");
  assert_string_equal(axes->type, "list(int)");
  assert_int_equal(axes->default_value->value_case,
                   TENSORFLOW__ATTR_VALUE__VALUE_LIST);
  assert_int_equal(axes->default_value->list->n_i, 2);
  assert_int_equal(axes->default_value->list->i[0], 1);
  assert_int_equal(axes->default_value->list->i[1], -2);

  const Tensorflow__OpDef__AttrDef* keep = find_attr(gather, "keep");
  assert_string_equal(keep->type, "bool");
  assert_int_equal(keep->default_value->value_case,
                   TENSORFLOW__ATTR_VALUE__VALUE_B);
  assert_true(keep->default_value->b);

  const Tensorflow__OpDef__AttrDef* shape = find_attr(gather, "shape");
  assert_string_equal(shape->type, "shape");
  const Tensorflow__TensorShapeProto* dims = shape->default_value->shape;
  assert_false(dims->unknown_rank);
  assert_int_equal(dims->n_dim, 2);
  assert_int_equal(dims->dim[0]->size, 2);
  assert_int_equal(dims->dim[1]->size, -1);

  assert_true(gather->is_stateful);
  assert_true(gather->allows_uninitialized_input);
  assert_false(gather->is_commutative);
  assert_false(gather->is_aggregate);
  assert_non_null(gather->deprecation);
  assert_int_equal(gather->deprecation->version, 7);
  assert_string_equal(gather->deprecation->explanation, "use CtorAddDelta");
  tensorflow__op_list__free_unpacked(list, NULL);

  check_with_python(buffer.data, buffer.length);
  TF_DeleteLibraryHandle(library);

  // The C++ library's list holds its one op; a library registering nothing
  // has an empty list.
  library = load_ok(LOOM_CUSTOM_OPS_STATIC_OBJECT_PATH);
  buffer = TF_GetOpList(library);
  list = tensorflow__op_list__unpack(NULL, buffer.length, buffer.data);
  assert_non_null(list);
  assert_int_equal(list->n_op, 1);
  assert_string_equal(list->op[0]->name, "StaticObjectNegate");
  tensorflow__op_list__free_unpacked(list, NULL);
  TF_DeleteLibraryHandle(library);

  buffer = TF_GetOpList(NULL);
  assert_null(buffer.data);
  assert_int_equal(buffer.length, 0);
}

// TF_GetAllOpList holds every registered op, sorted: the built-in ones
// (every kind of attr default Loom's own ops use encodes), the libraries'
// and nothing of the failed ones.
static void all_op_list_holds_every_registered_op(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  TF_Buffer* buffer = TF_GetAllOpList();
  assert_non_null(buffer);
  Tensorflow__OpList* list =
      tensorflow__op_list__unpack(NULL, buffer->length, buffer->data);
  assert_non_null(list);
  size_t registered = loom_op_registry_list(loom_op_registry_global(), NULL, 0);
  assert_int_equal(list->n_op, registered);
  int found = 0;
  for (size_t i = 0; i < list->n_op; ++i) {
    const char* name = list->op[i]->name;
    if (i) assert_true(strcmp(list->op[i - 1]->name, name) < 0);
    if (strcmp(name, "CtorAddDelta") == 0 || strcmp(name, "CtorGather") == 0 ||
        strcmp(name, "StaticObjectNegate") == 0) {
      ++found;
    }
    assert_string_not_equal(name, "CtorHalfGood");
  }
  assert_int_equal(found, 3);
  assert_true(list->n_op > 100);
  tensorflow__op_list__free_unpacked(list, NULL);
  TF_DeleteBuffer(buffer);
}

// The kernel lists: a kernel's op, device, priority, label, type
// constraints and host-memory arguments.
static void registered_kernels_are_listed(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_Buffer* buffer = TF_GetRegisteredKernelsForOp("CtorGather", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  Tensorflow__KernelList* list =
      tensorflow__kernel_list__unpack(NULL, buffer->length, buffer->data);
  assert_non_null(list);
  assert_int_equal(list->n_kernel, 1);
  const Tensorflow__KernelDef* kernel = list->kernel[0];
  assert_string_equal(kernel->op, "CtorGather");
  assert_string_equal(kernel->device_type, "CPU");
  assert_string_equal(kernel->label, "fast");
  assert_int_equal(kernel->priority, 0);
  assert_int_equal(kernel->n_constraint, 1);
  assert_string_equal(kernel->constraint[0]->name, "T");
  const Tensorflow__AttrValue__ListValue* types =
      kernel->constraint[0]->allowed_values->list;
  assert_int_equal(types->n_type, 1);
  assert_int_equal(types->type[0], TF_FLOAT);
  assert_int_equal(kernel->n_host_memory_arg, 1);
  assert_string_equal(kernel->host_memory_arg[0], "ref_count");
  tensorflow__kernel_list__free_unpacked(list, NULL);
  TF_DeleteBuffer(buffer);

  buffer = TF_GetRegisteredKernelsForOp("CtorAddDelta", status);
  list = tensorflow__kernel_list__unpack(NULL, buffer->length, buffer->data);
  assert_int_equal(list->n_kernel, 1);
  assert_int_equal(list->kernel[0]->priority, 3);
  assert_string_equal(list->kernel[0]->label, "");
  assert_int_equal(list->kernel[0]->n_constraint, 0);
  tensorflow__kernel_list__free_unpacked(list, NULL);
  TF_DeleteBuffer(buffer);

  // An op with no kernels (or no op at all): an empty list, as TensorFlow.
  buffer = TF_GetRegisteredKernelsForOp("NoSuchOpAnywhere", status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  assert_int_equal(buffer->length, 0);
  TF_DeleteBuffer(buffer);

  assert_null(TF_GetRegisteredKernelsForOp(NULL, status));
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_string_equal(TF_Message(status),
                      "TF_GetRegisteredKernelsForOp: name is NULL");

  buffer = TF_GetAllRegisteredKernels(status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  list = tensorflow__kernel_list__unpack(NULL, buffer->length, buffer->data);
  assert_non_null(list);
  // Registration order: the C library's kernels before the C++ one's.
  size_t add = list->n_kernel, negate = list->n_kernel;
  for (size_t i = 0; i < list->n_kernel; ++i) {
    if (strcmp(list->kernel[i]->op, "CtorAddDelta") == 0) add = i;
    if (strcmp(list->kernel[i]->op, "StaticObjectNegate") == 0) negate = i;
    assert_string_not_equal(list->kernel[i]->op, "CtorHalfGood");
  }
  assert_true(add < negate && negate < list->n_kernel);
  tensorflow__kernel_list__free_unpacked(list, NULL);
  TF_DeleteBuffer(buffer);
  TF_DeleteStatus(status);
}

// Calls `list` (with `status`) with the n-th allocation of the default
// allocator failing, for every n until none fails: a failure returns NULL
// (or an error status) and leaks nothing; the success decodes.
static void check_allocation_failures(TF_Buffer* (*list)(TF_Status*),
                                      bool is_op_list) {
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  TF_Status* status = TF_NewStatus();
  int failures = 0;
  for (int64_t n = 1;; ++n) {
    loom_fault_allocator_fail_nth(fault, n);
    int64_t injected = loom_fault_allocator_injected_failures(fault);
    loom_allocator_t previous =
        loom_allocator_set_default(loom_fault_allocator_allocator(fault));
    TF_Buffer* buffer = list(status);
    loom_allocator_set_default(previous);
    if (loom_fault_allocator_injected_failures(fault) == injected) {
      assert_non_null(buffer);
      assert_true(buffer->length > 0);
      if (is_op_list) {
        Tensorflow__OpList* ops =
            tensorflow__op_list__unpack(NULL, buffer->length, buffer->data);
        assert_non_null(ops);
        tensorflow__op_list__free_unpacked(ops, NULL);
      }
      TF_DeleteBuffer(buffer);
      break;
    }
    ++failures;
    if (buffer) fail_msg("allocation %lld failed, yet a list", (long long)n);
    if (!is_op_list) {
      assert_int_equal(TF_GetCode(status), TF_RESOURCE_EXHAUSTED);
    }
    assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  }
  assert_true(failures >= 3);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  TF_DeleteStatus(status);
  loom_fault_allocator_destroy(fault);
}

static TF_Buffer* all_op_list(TF_Status* status) {
  (void)status;
  return TF_GetAllOpList();
}

static TF_Buffer* gather_kernels(TF_Status* status) {
  return TF_GetRegisteredKernelsForOp("CtorGather", status);
}

static void lists_survive_every_allocation_failure(void** state) {
  (void)state;
  check_allocation_failures(all_op_list, true);
  check_allocation_failures(gather_kernels, false);
  check_allocation_failures(TF_GetAllRegisteredKernels, false);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(c_constructor_library_loads_without_entry_point),
      cmocka_unit_test(cxx_static_object_library_loads),
      cmocka_unit_test(loading_twice_is_a_no_op),
      cmocka_unit_test(library_failing_halfway_is_rolled_back_then_unmapped),
      cmocka_unit_test(failed_library_that_stays_mapped_fails_again),
      cmocka_unit_test(op_list_of_a_library_lists_exactly_its_ops),
      cmocka_unit_test(all_op_list_holds_every_registered_op),
      cmocka_unit_test(registered_kernels_are_listed),
      cmocka_unit_test(lists_survive_every_allocation_failure),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
