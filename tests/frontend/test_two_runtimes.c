// An embedder running two runtimes in one process: each context (with its
// own host context and runtime) keeps its variables, counters, registries,
// scopes and errors to itself, and either may go while the other keeps
// working, also with the two running side by side on two threads (run
// under ThreadSanitizer).

#include <pthread.h>
#include <stdlib.h>

#include "loom/handlers.h"
#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static loom_context_t* new_context(bool async) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = async;
  options.num_threads = 1;
  loom_context_t* context = NULL;
  LOOM_ASSERT_OK(loom_context_create(&options, &context));
  return context;
}

// A dense float tensor of shape [] holding `value`.
static loom_status_t dense_scalar(loom_allocator_t allocator, float value,
                                  loom_tensor_t** out_tensor) {
  loom_shape_t shape = loom_shape_scalar();
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(allocator, LOOM_DTYPE_FLOAT,
                                                &shape, out_tensor));
  *(float*)loom_tensor_data(*out_tensor) = value;
  return loom_ok_status();
}

// A float scalar handle in `context`; statuses rather than assertions, for
// the threads.
static loom_status_t make_scalar(loom_context_t* context, float value,
                                 loom_tensor_handle_t** out_handle) {
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(dense_scalar(loom_allocator_default(), value, &tensor));
  loom_status_t status = loom_context_new_handle(context, tensor, out_handle);
  loom_tensor_release(tensor);
  return status;
}

static loom_tensor_handle_t* scalar(loom_context_t* context, float value) {
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(make_scalar(context, value, &handle));
  return handle;
}

// Runs `name` on inputs[0, n) with attr "dtype" set to float when
// `with_dtype`; the result, if `out`, in *out.
static loom_status_t run(loom_context_t* context, const char* name,
                         loom_tensor_handle_t* const* inputs, int n,
                         bool with_dtype, loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < n && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!status && with_dtype) {
    status = loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                     LOOM_DTYPE_FLOAT);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out, out ? 1 : 0, &count);
  loom_eager_op_destroy(op);
  return status;
}

// VarHandleOp for a float scalar named `shared_name`.
static loom_status_t new_var(loom_context_t* context, const char* shared_name,
                             loom_tensor_handle_t** out_var) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  loom_status_t status =
      loom_op_attrs_set_dtype(attrs, "dtype", LOOM_DTYPE_FLOAT);
  if (!status) status = loom_op_attrs_set_shape(attrs, "shape", NULL, 0);
  if (!status) {
    status = loom_op_attrs_set_string(attrs, "shared_name", shared_name,
                                      strlen(shared_name));
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out_var, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

static loom_tensor_handle_t* var(loom_context_t* context,
                                 const char* shared_name) {
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(new_var(context, shared_name, &handle));
  return handle;
}

static void assign(loom_context_t* context, loom_tensor_handle_t* variable,
                   float value) {
  loom_tensor_handle_t* inputs[2] = {variable, scalar(context, value)};
  LOOM_ASSERT_OK(run(context, "AssignVariableOp", inputs, 2, false, NULL));
  loom_tensor_handle_release(inputs[1]);
}

static loom_status_t read_value(loom_context_t* context,
                                loom_tensor_handle_t* variable,
                                float* out_value) {
  loom_tensor_handle_t* value = NULL;
  LOOM_RETURN_IF_ERROR(
      run(context, "ReadVariableOp", &variable, 1, true, &value));
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_context_resolve(context, value, &tensor);
  if (!status) *out_value = *(const float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(value);
  return status;
}

static float read_float(loom_context_t* context,
                        loom_tensor_handle_t* variable) {
  float value = 0;
  LOOM_ASSERT_OK(read_value(context, variable, &value));
  return value;
}

// x + x, resolved.
static float add(loom_context_t* context, float x) {
  loom_tensor_handle_t* inputs[2] = {scalar(context, x), NULL};
  inputs[1] = inputs[0];
  loom_tensor_handle_t* sum = NULL;
  LOOM_ASSERT_OK(run(context, "AddV2", inputs, 2, false, &sum));
  loom_tensor_handle_release(inputs[0]);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, sum, &tensor));
  float value = *(const float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(sum);
  return value;
}

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

static void variables_of_one_name_are_each_contexts_own(void** state) {
  (void)state;
  loom_context_t* a = new_context(false);
  loom_context_t* b = new_context(false);
  loom_tensor_handle_t* in_a = var(a, "weights");
  loom_tensor_handle_t* in_b = var(b, "weights");
  assign(a, in_a, 1.0f);
  assign(b, in_b, 2.0f);
  // The name finds the context's own variable again.
  loom_tensor_handle_t* again_a = var(a, "weights");
  loom_tensor_handle_t* again_b = var(b, "weights");
  assert_true(read_float(a, again_a) == 1.0f);
  assert_true(read_float(b, again_b) == 2.0f);
  // Destroying A's leaves B's, and its name.
  LOOM_ASSERT_OK(run(a, "DestroyResourceOp", &in_a, 1, false, NULL));
  loom_tensor_handle_t* fresh_a = var(a, "weights");
  float value = 0;
  LOOM_ASSERT_STATUS(read_value(a, fresh_a, &value),
                     LOOM_STATUS_FAILED_PRECONDITION, "uninitialized");
  loom_tensor_handle_t* still_b = var(b, "weights");
  assert_true(read_float(b, still_b) == 2.0f);
  loom_tensor_handle_t* all[] = {in_a,    in_b,    again_a,
                                 again_b, fresh_a, still_b};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    loom_tensor_handle_release(all[i]);
  }
  loom_context_destroy(a);
  loom_context_destroy(b);
}

// A resource for the managers themselves: a count of references.
typedef struct counted_t {
  int references;
  int id;
} counted_t;

static void counted_retain(void* resource) {
  ((counted_t*)resource)->references++;
}

static void counted_release(void* resource) {
  counted_t* counted = resource;
  if (--counted->references == 0) free(counted);
}

static const loom_resource_type_t kCountedType = {
    .name = "Counted",
    .retain = counted_retain,
    .release = counted_release,
};

static int g_created;

static loom_status_t create_counted(void* user_data, void** out_resource) {
  counted_t* counted = calloc(1, sizeof(*counted));
  if (!counted) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "no memory");
  }
  counted->references = 1;
  counted->id = *(const int*)user_data;
  g_created++;
  *out_resource = counted;
  return loom_ok_status();
}

static counted_t* lookup(loom_host_context_t* host, const char* name, int id) {
  void* resource = NULL;
  LOOM_ASSERT_OK(loom_resource_manager_lookup_or_create(
      loom_host_context_resources(host), &kCountedType, "c", name,
      create_counted, &id, &resource));
  return resource;
}

static void host_contexts_have_their_own_resource_managers(void** state) {
  (void)state;
  loom_host_context_t* a = NULL;
  loom_host_context_t* b = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &a));
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &b));
  assert_ptr_not_equal(loom_host_context_resources(a),
                       loom_host_context_resources(b));
  g_created = 0;
  counted_t* in_a = lookup(a, "r", 1);
  counted_t* in_b = lookup(b, "r", 2);
  counted_t* again = lookup(a, "r", 3);
  assert_int_equal(g_created, 2);
  assert_ptr_equal(again, in_a);
  assert_int_equal(in_a->id, 1);
  assert_int_equal(in_b->id, 2);
  assert_int_equal(in_a->references, 3);  // the manager's and two lookups'
  // Unique ids count per manager.
  assert_int_equal(
      loom_resource_manager_unique_id(loom_host_context_resources(a)), 0);
  assert_int_equal(
      loom_resource_manager_unique_id(loom_host_context_resources(a)), 1);
  assert_int_equal(
      loom_resource_manager_unique_id(loom_host_context_resources(b)), 0);
  // Removal is from one manager only, once.
  assert_false(loom_resource_manager_remove(loom_host_context_resources(b),
                                            &kCountedType, in_a));
  assert_true(loom_resource_manager_remove(loom_host_context_resources(a),
                                           &kCountedType, in_a));
  assert_false(loom_resource_manager_remove(loom_host_context_resources(a),
                                            &kCountedType, in_a));
  assert_int_equal(in_a->references, 2);
  counted_release(again);
  counted_release(in_a);
  // A host context that goes drops its manager's references; ours stay.
  loom_host_context_destroy(b);
  assert_int_equal(in_b->references, 1);
  counted_release(in_b);
  loom_host_context_destroy(a);
}

static void a_missing_creator_or_type_hook_is_refused(void** state) {
  (void)state;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &host));
  loom_resource_type_t incomplete = {.name = "Incomplete"};
  void* resource = NULL;
  LOOM_ASSERT_STATUS(loom_resource_manager_lookup_or_create(
                         loom_host_context_resources(host), &incomplete, "",
                         "x", create_counted, NULL, &resource),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the resource type is incomplete");
  LOOM_ASSERT_STATUS(loom_resource_manager_lookup_or_create(
                         loom_host_context_resources(host), &kCountedType, "",
                         "x", NULL, NULL, &resource),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "create or out_resource is NULL");
  assert_null(resource);
  loom_host_context_destroy(host);
}

//===----------------------------------------------------------------------===//
// Counters
//===----------------------------------------------------------------------===//

static void counters_are_each_runtimes_and_hosts_own(void** state) {
  (void)state;
  loom_context_t* a = new_context(false);
  loom_context_t* b = new_context(false);
  loom_runtime_statistics_t runtime_a =
      loom_runtime_statistics(loom_context_runtime(a));
  loom_runtime_statistics_t runtime_b =
      loom_runtime_statistics(loom_context_runtime(b));
  loom_kernel_statistics_t kernels_a =
      loom_host_context_kernel_statistics(loom_context_host(a));
  loom_kernel_statistics_t kernels_b =
      loom_host_context_kernel_statistics(loom_context_host(b));
  loom_kernel_statistics_t total = loom_kernel_statistics();
  assert_true(add(a, 1.5f) == 3.0f);
  loom_runtime_statistics_t after_a =
      loom_runtime_statistics(loom_context_runtime(a));
  loom_kernel_statistics_t kernels_after_a =
      loom_host_context_kernel_statistics(loom_context_host(a));
  assert_int_equal(after_a.ops_executed, runtime_a.ops_executed + 1);
  assert_int_equal(
      loom_runtime_statistics(loom_context_runtime(b)).ops_executed,
      runtime_b.ops_executed);
  // The sum's output: allocated, or forwarded from an input A made.
  int64_t outputs_a = kernels_after_a.allocated_outputs +
                      kernels_after_a.forwarded_buffers -
                      kernels_a.allocated_outputs - kernels_a.forwarded_buffers;
  assert_int_equal(outputs_a, 1);
  loom_kernel_statistics_t kernels_after_b =
      loom_host_context_kernel_statistics(loom_context_host(b));
  assert_int_equal(kernels_after_b.allocated_outputs,
                   kernels_b.allocated_outputs);
  assert_int_equal(kernels_after_b.forwarded_buffers,
                   kernels_b.forwarded_buffers);
  // The process's totals include A's, and keep them once A is gone.
  loom_context_destroy(a);
  loom_kernel_statistics_t total_after = loom_kernel_statistics();
  assert_true(total_after.allocated_outputs + total_after.forwarded_buffers >=
              total.allocated_outputs + total.forwarded_buffers + 1);
  assert_true(add(b, 2.0f) == 4.0f);
  loom_context_destroy(b);
}

//===----------------------------------------------------------------------===//
// Registries
//===----------------------------------------------------------------------===//

// Twice: y = 2 x, for float tensors.
static void twice_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  const loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* y = NULL;
  loom_status_t status =
      loom_kernel_context_allocate_output(ctx, 0, loom_tensor_shape(x), &y);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  const float* in = loom_tensor_data(x);
  float* out = loom_tensor_data(y);
  for (int64_t i = 0; i < loom_tensor_num_elements(x); ++i) out[i] = 2 * in[i];
}

typedef struct private_registries_t {
  loom_op_registry_t* ops;
  loom_kernel_registry_t* kernels;
} private_registries_t;

static private_registries_t registries_with_twice(void) {
  private_registries_t registries = {NULL, NULL};
  LOOM_ASSERT_OK(
      loom_op_registry_create(loom_allocator_system(), &registries.ops));
  LOOM_ASSERT_OK(loom_kernel_registry_create(loom_allocator_system(),
                                             &registries.kernels));
  loom_op_def_builder_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), "Twice", &op));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(op, "x: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(op, "y: float"));
  LOOM_ASSERT_OK(loom_op_registry_register(registries.ops, op));
  loom_kernel_builder_t* kernel = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      loom_allocator_system(), "Twice", LOOM_DEVICE_CPU, NULL, twice_compute,
      NULL, NULL, &kernel));
  LOOM_ASSERT_OK(
      loom_kernel_registry_register(registries.kernels, "TwiceOp", kernel));
  return registries;
}

// Executes `op_name` on `x` through `runtime`'s CPU; *out_y its result.
static loom_status_t execute(loom_runtime_t* runtime, const char* op_name,
                             loom_host_context_t* host, float x,
                             loom_tensor_handle_t** out_y) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(dense_scalar(loom_host_context_allocator(host), x, &tensor));
  loom_op_handler_t* cpu = loom_runtime_get_op_handler(runtime, "cpu");
  loom_tensor_handle_t* args[1] = {NULL};
  LOOM_ASSERT_OK(loom_tensor_handle_create(cpu, tensor, &args[0]));
  loom_tensor_release(tensor);
  loom_location_t location = {0};
  return loom_runtime_execute(runtime, op_name, cpu, location, args, 1, NULL,
                              out_y, 1, NULL);
}

static float resolved(loom_tensor_handle_t* handle) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_resolve(handle, &tensor));
  float value = *(const float*)loom_tensor_data(tensor);
  loom_tensor_release(tensor);
  return value;
}

static void registries_given_to_a_runtime_are_its_own(void** state) {
  (void)state;
  private_registries_t registries = registries_with_twice();
  loom_host_context_t* host_a = NULL;
  loom_host_context_t* host_b = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &host_a));
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &host_b));
  loom_runtime_options_t options;
  loom_runtime_options_initialize(&options, host_a);
  options.ops = registries.ops;
  options.kernels = registries.kernels;
  options.synchronous = true;
  loom_runtime_t* a = NULL;
  LOOM_ASSERT_OK(loom_runtime_create(&options, &a));
  loom_runtime_options_initialize(&options, host_b);
  options.synchronous = true;
  loom_runtime_t* b = NULL;
  LOOM_ASSERT_OK(loom_runtime_create(&options, &b));
  assert_ptr_equal(loom_runtime_ops(a), registries.ops);
  assert_ptr_equal(loom_runtime_ops(b), loom_op_registry_global());

  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(execute(a, "Twice", host_a, 3.0f, &y));
  assert_true(resolved(y) == 6.0f);
  loom_tensor_handle_release(y);
  // B's registries (the global ones) have no Twice; A's no built-ins.
  LOOM_ASSERT_STATUS(execute(b, "Twice", host_b, 3.0f, &y),
                     LOOM_STATUS_UNIMPLEMENTED,
                     "Twice was not supported by NullOpHandler");
  loom_tensor_handle_release(y);
  LOOM_ASSERT_STATUS(execute(a, "Neg", host_a, 3.0f, &y),
                     LOOM_STATUS_UNIMPLEMENTED,
                     "Neg was not supported by NullOpHandler");
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(execute(b, "Neg", host_b, 3.0f, &y));
  assert_true(resolved(y) == -3.0f);
  loom_tensor_handle_release(y);

  // A goes; B runs on.
  loom_runtime_destroy(a);
  loom_host_context_destroy(host_a);
  LOOM_ASSERT_OK(execute(b, "Neg", host_b, 4.0f, &y));
  assert_true(resolved(y) == -4.0f);
  loom_tensor_handle_release(y);
  loom_runtime_destroy(b);
  loom_host_context_destroy(host_b);
  loom_kernel_registry_destroy(registries.kernels);
  loom_op_registry_destroy(registries.ops);
}

//===----------------------------------------------------------------------===//
// Scopes and errors
//===----------------------------------------------------------------------===//

static void a_scope_entered_in_one_context_is_not_the_others(void** state) {
  (void)state;
  loom_context_t* a = new_context(false);
  loom_context_t* b = new_context(false);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(loom_scope_logging_handler_create(a, NULL, &logging));
  LOOM_ASSERT_OK(loom_context_enter_scope(a, logging));
  assert_non_null(loom_context_scope_handler(a));
  assert_null(loom_context_scope_handler(b));
  assert_true(add(b, 1.0f) == 2.0f);
  assert_int_equal(loom_scope_logging_handler_count(logging), 0);
  assert_true(add(a, 1.0f) == 2.0f);
  assert_int_equal(loom_scope_logging_handler_count(logging), 1);
  // So is this thread's executor mode.
  loom_context_set_thread_async(b, true);
  assert_true(loom_context_thread_is_async(b));
  assert_false(loom_context_thread_is_async(a));
  LOOM_ASSERT_OK(loom_context_exit_scope(a));
  LOOM_ASSERT_STATUS(loom_context_exit_scope(b),
                     LOOM_STATUS_FAILED_PRECONDITION, NULL);
  loom_op_handler_release(logging);
  loom_context_destroy(a);
  loom_context_destroy(b);
}

static void errors_stay_in_the_context_that_had_them(void** state) {
  (void)state;
  loom_context_t* a = new_context(true);
  loom_context_t* b = new_context(true);
  // A kernel error (the variable was never assigned): reported at A's
  // next wait, never at B's.
  loom_tensor_handle_t* unset = var(a, "unset");
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(run(a, "ReadVariableOp", &unset, 1, true, &value));
  loom_tensor_handle_t* other = var(b, "unset");
  assign(b, other, 5.0f);
  LOOM_ASSERT_STATUS(loom_context_wait(a), LOOM_STATUS_FAILED_PRECONDITION,
                     "uninitialized");
  LOOM_ASSERT_OK(loom_context_wait(b));
  assert_true(read_float(b, other) == 5.0f);
  loom_context_clear_error(a);
  LOOM_ASSERT_OK(loom_context_wait(a));
  loom_tensor_handle_release(value);
  loom_tensor_handle_release(other);
  loom_tensor_handle_release(unset);
  loom_context_destroy(a);
  loom_context_destroy(b);
}

static void a_synchronous_error_is_returned_by_its_own_context(void** state) {
  (void)state;
  loom_context_t* a = new_context(false);
  loom_context_t* b = new_context(false);
  loom_tensor_handle_t* in_a = var(a, "v");
  loom_tensor_handle_t* in_b = var(b, "v");
  // An op without results fails in its kernel: the error comes back from
  // A's execute, and B's next op of the same kind succeeds.
  loom_tensor_handle_t* delta = scalar(a, 1.0f);
  loom_tensor_handle_t* inputs[2] = {in_a, delta};
  LOOM_ASSERT_STATUS(run(a, "AssignAddVariableOp", inputs, 2, true, NULL),
                     LOOM_STATUS_FAILED_PRECONDITION, "uninitialized");
  assign(b, in_b, 1.0f);
  loom_tensor_handle_t* delta_b = scalar(b, 1.0f);
  inputs[0] = in_b;
  inputs[1] = delta_b;
  LOOM_ASSERT_OK(run(b, "AssignAddVariableOp", inputs, 2, true, NULL));
  assert_true(read_float(b, in_b) == 2.0f);
  loom_tensor_handle_release(delta_b);
  loom_tensor_handle_release(delta);
  loom_tensor_handle_release(in_a);
  loom_tensor_handle_release(in_b);
  loom_context_destroy(a);
  loom_context_destroy(b);
}

//===----------------------------------------------------------------------===//
// Lifetimes
//===----------------------------------------------------------------------===//

static void destroying_one_leaves_the_other_working(void** state) {
  (void)state;
  loom_context_t* a = new_context(false);
  loom_context_t* b = new_context(false);
  loom_tensor_handle_t* in_a = var(a, "w");
  loom_tensor_handle_t* in_b = var(b, "w");
  assign(a, in_a, 1.0f);
  assign(b, in_b, 2.0f);
  assert_ptr_equal(loom_context_of_handle(in_a), a);
  assert_ptr_equal(loom_context_of_handle(in_b), b);
  loom_context_destroy(a);
  // A's handle outlives A, which handles no longer find.
  assert_null(loom_context_of_handle(in_a));
  assert_ptr_equal(loom_context_of_handle(in_b), b);
  assert_true(read_float(b, in_b) == 2.0f);
  loom_tensor_handle_t* again = var(b, "w");
  assert_true(read_float(b, again) == 2.0f);
  assert_true(add(b, 3.0f) == 6.0f);
  loom_tensor_handle_release(again);
  loom_tensor_handle_release(in_a);
  loom_tensor_handle_release(in_b);
  loom_context_destroy(b);
}

enum { kSteps = 300 };

typedef struct side_t {
  pthread_barrier_t* start;
  loom_status_t status;  // the thread's failure, read after join
  float final_value;
} side_t;

// A thread's own context: a variable of the name the other thread uses
// too, stepped kSteps times, then the context goes (while the other thread
// may still run).
static void* run_side(void* arg) {
  side_t* side = arg;
  loom_context_t* context = NULL;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 1;
  pthread_barrier_wait(side->start);
  loom_status_t status = loom_context_create(&options, &context);
  loom_tensor_handle_t* counter = NULL;
  loom_tensor_handle_t* zero = NULL;
  loom_tensor_handle_t* one = NULL;
  if (!status) status = new_var(context, "counter", &counter);
  if (!status) status = make_scalar(context, 0.0f, &zero);
  if (!status) status = make_scalar(context, 1.0f, &one);
  if (!status) {
    loom_tensor_handle_t* inputs[2] = {counter, zero};
    status = run(context, "AssignVariableOp", inputs, 2, false, NULL);
  }
  for (int i = 0; i < kSteps && !status; ++i) {
    // Found by name each step, as a graph re-run would.
    loom_tensor_handle_t* found = NULL;
    status = new_var(context, "counter", &found);
    loom_tensor_handle_t* inputs[2] = {found, one};
    if (!status) {
      status = run(context, "AssignAddVariableOp", inputs, 2, true, NULL);
    }
    loom_tensor_handle_release(found);
  }
  if (!status) status = read_value(context, counter, &side->final_value);
  loom_tensor_handle_release(zero);
  loom_tensor_handle_release(one);
  loom_tensor_handle_release(counter);
  loom_context_destroy(context);
  side->status = status;
  return NULL;
}

static void two_contexts_on_two_threads_do_not_meet(void** state) {
  (void)state;
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, 2);
  side_t sides[2] = {{.start = &start}, {.start = &start}};
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, run_side, &sides[i]), 0);
  }
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSERT_OK(sides[i].status);
    // Each saw its own counter only.
    assert_true(sides[i].final_value == (float)kSteps);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(variables_of_one_name_are_each_contexts_own),
      cmocka_unit_test(host_contexts_have_their_own_resource_managers),
      cmocka_unit_test(a_missing_creator_or_type_hook_is_refused),
      cmocka_unit_test(counters_are_each_runtimes_and_hosts_own),
      cmocka_unit_test(registries_given_to_a_runtime_are_its_own),
      cmocka_unit_test(a_scope_entered_in_one_context_is_not_the_others),
      cmocka_unit_test(errors_stay_in_the_context_that_had_them),
      cmocka_unit_test(a_synchronous_error_is_returned_by_its_own_context),
      cmocka_unit_test(destroying_one_leaves_the_other_working),
      cmocka_unit_test(two_contexts_on_two_threads_do_not_meet),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
