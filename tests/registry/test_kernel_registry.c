// The native kernel registry: builders, registration, kernel choice by
// device, type constraints, label and priority, definition queries,
// concurrency and allocation failures; and loom_kernel_run's argument
// checks. Each case works on a private op registry and kernel registry.

#include <pthread.h>
#include <stdatomic.h>

#include "loom/kernel.h"
#include "registry/op_registry_internal.h"
#include "test_support.h"

static loom_op_registry_t* g_ops;
static loom_kernel_registry_t* g_kernels;
// Counts what tensors handed to loom_kernel_run still hold.
static loom_fault_allocator_t* g_counter;

static void add_op(const char* name, const char* const* specs) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  // "a:" attr, "i:" input, "o:" output.
  for (; *specs; ++specs) {
    const char* spec = *specs + 2;
    switch ((*specs)[0]) {
      case 'a':
        LOOM_ASSERT_OK(loom_op_def_builder_add_attr(builder, spec));
        break;
      case 'i':
        LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, spec));
        break;
      default:
        LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, spec));
        break;
    }
  }
  LOOM_ASSERT_OK(loom_op_registry_register(g_ops, builder));
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &g_ops));
  LOOM_ASSERT_OK(
      loom_kernel_registry_create(loom_allocator_system(), &g_kernels));
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &g_counter));
  static const char* const kUnary[] = {"a:T: type", "i:x: T", "o:y: T", NULL};
  static const char* const kPair[] = {"a:T: type", "a:U: type", "i:x: T",
                                      "i:y: U",    "o:z: T",    NULL};
  static const char* const kMulti[] = {"a:Tlist: list(type)", "i:xs: Tlist",
                                       "o:y: float", NULL};
  static const char* const kTwoOut[] = {"i:x: float", "o:a: float",
                                        "o:b: float", NULL};
  static const char* const kSink[] = {"i:x: float", NULL};
  add_op("Unary", kUnary);
  add_op("Pair", kPair);
  add_op("Multi", kMulti);
  add_op("TwoOut", kTwoOut);
  add_op("Sink", kSink);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_fault_allocator_destroy(g_counter);
  loom_kernel_registry_destroy(g_kernels);
  loom_op_registry_destroy(g_ops);
  return 0;
}

static void noop_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  (void)ctx;
}

static void noop_compute_async(void* kernel, loom_kernel_context_t* ctx,
                               loom_kernel_done_t* done) {
  (void)kernel;
  (void)ctx;
  (void)done;
}

static loom_kernel_builder_t* new_builder(const char* op, const char* device) {
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(loom_allocator_system(), op, device,
                                            NULL, noop_compute, NULL, NULL,
                                            &builder));
  return builder;
}

static void constrain(loom_kernel_builder_t* builder, const char* attr,
                      loom_dtype_t dtype) {
  LOOM_ASSERT_OK(loom_kernel_builder_type_constraint(builder, attr, dtype));
}

static void add_kernel(const char* name, loom_kernel_builder_t* builder) {
  LOOM_ASSERT_OK(loom_kernel_registry_register(g_kernels, name, builder));
}

// Looks up op `op` on `device` with attrs {attr: dtype} (attr may be NULL).
static loom_status_t lookup_with(const char* op, const char* device,
                                 const char* attr, loom_dtype_t dtype,
                                 const loom_kernel_def_t** out_kernel) {
  const loom_op_def_t* def = loom_op_registry_find(g_ops, op);
  assert_non_null(def);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  if (attr) LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, attr, dtype));
  loom_status_t status =
      loom_kernel_registry_lookup(g_kernels, def, device, &attrs, out_kernel);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

// The name of the kernel chosen for `op` on the CPU with {T: dtype}.
static const char* chosen(const char* op, loom_dtype_t dtype) {
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(lookup_with(op, LOOM_DEVICE_CPU, "T", dtype, &kernel));
  return loom_kernel_def_name(kernel);
}

//===----------------------------------------------------------------------===//
// Registration and definitions
//===----------------------------------------------------------------------===//

static void registered_kernel_is_found_with_its_definition(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  loom_kernel_builder_priority(builder, 3);
  LOOM_ASSERT_OK(loom_kernel_builder_host_memory(builder, "x"));
  add_kernel("UnaryCpu", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_FLOAT, &kernel));
  assert_non_null(kernel);
  assert_string_equal(loom_kernel_def_name(kernel), "UnaryCpu");
  assert_string_equal(loom_kernel_def_op_name(kernel), "Unary");
  assert_string_equal(loom_kernel_def_device_type(kernel), "CPU");
  assert_int_equal(loom_kernel_def_priority(kernel), 3);
  assert_string_equal(loom_kernel_def_label(kernel), "");
  assert_false(loom_kernel_def_is_async(kernel));
  assert_true(loom_kernel_def_is_host_memory_arg(kernel, "x"));
  assert_false(loom_kernel_def_is_host_memory_arg(kernel, "y"));
  assert_false(loom_kernel_def_is_host_memory_arg(kernel, NULL));
  assert_false(loom_kernel_def_is_host_memory_arg(NULL, "x"));
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Unary"), 1);
}

static void async_kernel_definition_is_async(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      loom_allocator_system(), "Unary", LOOM_DEVICE_CPU, NULL, NULL,
      noop_compute_async, NULL, &builder));
  add_kernel("UnaryAsync", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_FLOAT, &kernel));
  assert_true(loom_kernel_def_is_async(kernel));
}

static void count_counts_the_kernels_of_one_op(void** state) {
  (void)state;
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Unary"), 0);
  add_kernel("UnaryCpu", new_builder("Unary", LOOM_DEVICE_CPU));
  add_kernel("UnaryGpu", new_builder("Unary", "GPU"));
  add_kernel("PairCpu", new_builder("Pair", LOOM_DEVICE_CPU));
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Unary"), 2);
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Pair"), 1);
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Nope"), 0);
  assert_int_equal(loom_kernel_registry_count(NULL, "Unary"), 0);
  assert_int_equal(loom_kernel_registry_count(g_kernels, NULL), 0);
}

static void host_memory_args_are_recorded(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("TwoOut", "GPU");
  static const char* const kArgs[] = {"x", "a", "b", "c", "d", "e"};
  // More than the first array holds: it grows.
  for (int i = 0; i < 6; ++i) {
    LOOM_ASSERT_OK(loom_kernel_builder_host_memory(builder, kArgs[i]));
  }
  add_kernel("TwoOutGpu", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(lookup_with("TwoOut", "GPU", NULL, 0, &kernel));
  for (int i = 0; i < 6; ++i) {
    assert_true(loom_kernel_def_is_host_memory_arg(kernel, kArgs[i]));
  }
  assert_false(loom_kernel_def_is_host_memory_arg(kernel, "f"));
}

static void failed_host_memory_call_leaves_the_builder_unchanged(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      loom_fault_allocator_allocator(fault), "TwoOut", "GPU", NULL,
      noop_compute, NULL, NULL, &builder));
  LOOM_ASSERT_OK(loom_kernel_builder_host_memory(builder, "x"));
  // A name longer than an arena block needs a new block: make that fail.
  char long_name[3000];
  memset(long_name, 'n', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  loom_fault_allocator_fail_nth(fault, 1);
  LOOM_ASSERT_STATUS(loom_kernel_builder_host_memory(builder, long_name),
                     LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  loom_fault_allocator_fail_nth(fault, 0);
  add_kernel("TwoOutGpu", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(lookup_with("TwoOut", "GPU", NULL, 0, &kernel));
  assert_true(loom_kernel_def_is_host_memory_arg(kernel, "x"));
  // Only "x" is recorded: the failed call added no entry.
  assert_false(loom_kernel_def_is_host_memory_arg(kernel, "a"));
  assert_false(loom_kernel_def_is_host_memory_arg(kernel, long_name));
  loom_kernel_registry_destroy(g_kernels);
  LOOM_ASSERT_OK(
      loom_kernel_registry_create(loom_allocator_system(), &g_kernels));
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

//===----------------------------------------------------------------------===//
// Kernel choice
//===----------------------------------------------------------------------===//

static void constraint_with_several_types_allows_each_of_them(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  constrain(builder, "T", LOOM_DTYPE_DOUBLE);
  constrain(builder, "T", LOOM_DTYPE_HALF);
  add_kernel("UnaryFloats", builder);
  assert_string_equal(chosen("Unary", LOOM_DTYPE_FLOAT), "UnaryFloats");
  assert_string_equal(chosen("Unary", LOOM_DTYPE_DOUBLE), "UnaryFloats");
  assert_string_equal(chosen("Unary", LOOM_DTYPE_HALF), "UnaryFloats");
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_INT32, &kernel),
      LOOM_STATUS_NOT_FOUND, "{T=DT_INT32}");
  assert_null(kernel);
}

static void constraints_on_two_attrs_must_both_match(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Pair", LOOM_DEVICE_CPU);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  constrain(builder, "U", LOOM_DTYPE_INT32);
  add_kernel("PairFloatInt", builder);
  const loom_op_def_t* op = loom_op_registry_find(g_ops, "Pair");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "U", LOOM_DTYPE_INT32));
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(loom_kernel_registry_lookup(g_kernels, op, LOOM_DEVICE_CPU,
                                             &attrs, &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "PairFloatInt");
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "U", LOOM_DTYPE_INT64));
  LOOM_ASSERT_STATUS(loom_kernel_registry_lookup(g_kernels, op, LOOM_DEVICE_CPU,
                                                 &attrs, &kernel),
                     LOOM_STATUS_NOT_FOUND,
                     "compatible with attributes {T=DT_FLOAT, U=DT_INT64}");
  loom_op_attrs_deinitialize(&attrs);
}

static loom_status_t lookup_multi(const loom_dtype_t* types, int64_t count,
                                  const loom_kernel_def_t** out_kernel) {
  const loom_op_def_t* op = loom_op_registry_find(g_ops, "Multi");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_list(&attrs, "Tlist", LOOM_ATTR_KIND_DTYPE,
                                        types, count));
  loom_status_t status = loom_kernel_registry_lookup(
      g_kernels, op, LOOM_DEVICE_CPU, &attrs, out_kernel);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static void list_type_constraint_checks_every_element(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Multi", LOOM_DEVICE_CPU);
  constrain(builder, "Tlist", LOOM_DTYPE_FLOAT);
  constrain(builder, "Tlist", LOOM_DTYPE_INT32);
  add_kernel("MultiFloatInt", builder);
  const loom_kernel_def_t* kernel = NULL;
  loom_dtype_t allowed[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32,
                             LOOM_DTYPE_FLOAT};
  LOOM_ASSERT_OK(lookup_multi(allowed, 3, &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "MultiFloatInt");
  loom_dtype_t one_bad[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT64,
                             LOOM_DTYPE_INT32};
  LOOM_ASSERT_STATUS(lookup_multi(one_bad, 3, &kernel), LOOM_STATUS_NOT_FOUND,
                     "Tlist=[DT_FLOAT, DT_INT64, DT_INT32]");
}

static void constraint_on_an_unset_attr_never_matches(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  add_kernel("UnaryFloat", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(lookup_with("Unary", LOOM_DEVICE_CPU, NULL, 0, &kernel),
                     LOOM_STATUS_NOT_FOUND, "compatible with attributes {}");
}

static void kernel_for_another_device_is_not_chosen(void** state) {
  (void)state;
  add_kernel("UnaryGpu", new_builder("Unary", "GPU"));
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_FLOAT, &kernel),
      LOOM_STATUS_NOT_FOUND,
      "No registered 'Unary' kernel for 'CPU' devices compatible with "
      "attributes {T=DT_FLOAT}. Registered:\n  device='GPU'");
  LOOM_ASSERT_OK(lookup_with("Unary", "GPU", "T", LOOM_DTYPE_FLOAT, &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "UnaryGpu");
}

static void highest_priority_wins_in_any_registration_order(void** state) {
  (void)state;
  static const struct {
    const char* name;
    int32_t priority;
  } kKernels[] = {{"Low", -1}, {"High", 7}, {"Default", 0}, {"Mid", 3}};
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
    loom_kernel_builder_priority(builder, kKernels[i].priority);
    add_kernel(kKernels[i].name, builder);
  }
  assert_string_equal(chosen("Unary", LOOM_DTYPE_FLOAT), "High");
  loom_kernel_builder_priority(NULL, 1);  // ignored
}

static void ties_at_the_best_priority_are_ambiguous(void** state) {
  (void)state;
  for (int i = 0; i < 2; ++i) {
    loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
    loom_kernel_builder_priority(builder, 2);
    add_kernel(i == 0 ? "First" : "Second", builder);
  }
  add_kernel("Lower", new_builder("Unary", LOOM_DEVICE_CPU));
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_FLOAT, &kernel),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Multiple kernels for op 'Unary' on device 'CPU' match at priority 2: "
      "'Second' and 'First'");
  assert_null(kernel);
}

static void tie_below_the_best_priority_is_not_ambiguous(void** state) {
  (void)state;
  add_kernel("TiedA", new_builder("Unary", LOOM_DEVICE_CPU));
  add_kernel("TiedB", new_builder("Unary", LOOM_DEVICE_CPU));
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  loom_kernel_builder_priority(builder, 1);
  add_kernel("Best", builder);
  add_kernel("TiedC", new_builder("Unary", LOOM_DEVICE_CPU));
  assert_string_equal(chosen("Unary", LOOM_DTYPE_FLOAT), "Best");
}

static loom_status_t lookup_labelled(const char* label,
                                     const loom_kernel_def_t** out_kernel) {
  const loom_op_def_t* op = loom_op_registry_find(g_ops, "Unary");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  if (label) {
    LOOM_ASSERT_OK(
        loom_op_attrs_set_string(&attrs, "_kernel", label, strlen(label)));
  }
  loom_status_t status = loom_kernel_registry_lookup(
      g_kernels, op, LOOM_DEVICE_CPU, &attrs, out_kernel);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static void label_must_match_the_kernel_attr(void** state) {
  (void)state;
  add_kernel("Plain", new_builder("Unary", LOOM_DEVICE_CPU));
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  LOOM_ASSERT_OK(loom_kernel_builder_label(builder, "fast"));
  loom_kernel_builder_priority(builder, 10);
  add_kernel("Fast", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_OK(lookup_labelled(NULL, &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "Plain");
  LOOM_ASSERT_OK(lookup_labelled("fast", &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "Fast");
  assert_string_equal(loom_kernel_def_label(kernel), "fast");
  // A prefix of the label is another label.
  LOOM_ASSERT_STATUS(lookup_labelled("fas", &kernel), LOOM_STATUS_NOT_FOUND,
                     "No registered 'Unary' kernel");
  // An empty label is no label, as in TensorFlow.
  LOOM_ASSERT_OK(lookup_labelled("", &kernel));
  assert_string_equal(loom_kernel_def_name(kernel), "Plain");
}

static void not_found_lists_every_registered_kernel(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Pair", LOOM_DEVICE_CPU);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  constrain(builder, "T", LOOM_DTYPE_DOUBLE);
  constrain(builder, "U", LOOM_DTYPE_INT32);
  LOOM_ASSERT_OK(loom_kernel_builder_label(builder, "exact"));
  add_kernel("PairExact", builder);
  add_kernel("PairGpu", new_builder("Pair", "GPU"));
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Pair", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_INT8, &kernel),
      LOOM_STATUS_NOT_FOUND,
      "No registered 'Pair' kernel for 'CPU' devices compatible with "
      "attributes {T=DT_INT8}. Registered:\n"
      "  device='GPU'\n"
      "  device='CPU'; label='exact'; T in [float, double]; U in [int32]");
}

static void not_found_without_kernels_says_none_are_registered(void** state) {
  (void)state;
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_FLOAT, &kernel),
      LOOM_STATUS_NOT_FOUND,
      "No registered 'Unary' kernel for 'CPU' devices compatible with "
      "attributes {T=DT_FLOAT}. Registered: <no registered kernels>");
}

static void repeated_type_in_a_constraint_is_kept_once(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  constrain(builder, "T", LOOM_DTYPE_FLOAT);
  add_kernel("UnaryFloat", builder);
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      lookup_with("Unary", LOOM_DEVICE_CPU, "T", LOOM_DTYPE_INT8, &kernel),
      LOOM_STATUS_NOT_FOUND, "device='CPU'; T in [float]");
}

static void every_valid_dtype_fits_in_one_constraint(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  for (int d = 1; d < LOOM_DTYPE_COUNT; ++d) {
    constrain(builder, "T", (loom_dtype_t)d);
  }
  add_kernel("UnaryAny", builder);
  for (int d = 1; d < LOOM_DTYPE_COUNT; ++d) {
    assert_string_equal(chosen("Unary", (loom_dtype_t)d), "UnaryAny");
  }
}

//===----------------------------------------------------------------------===//
// Misuse
//===----------------------------------------------------------------------===//

static void builder_needs_exactly_one_compute_function(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_create(loom_allocator_system(), "Unary",
                                 LOOM_DEVICE_CPU, NULL, NULL, NULL, NULL,
                                 &builder),
      LOOM_STATUS_INVALID_ARGUMENT,
      "kernel for op 'Unary': exactly one of compute and compute_async must "
      "be given");
  assert_null(builder);
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_create(loom_allocator_system(), "Unary",
                                 LOOM_DEVICE_CPU, NULL, noop_compute,
                                 noop_compute_async, NULL, &builder),
      LOOM_STATUS_INVALID_ARGUMENT,
      "exactly one of compute and compute_async must be given");
  assert_null(builder);
}

static void builder_rejects_null_arguments(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_create(loom_allocator_system(), NULL, LOOM_DEVICE_CPU,
                                 NULL, noop_compute, NULL, NULL, &builder),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_builder_create: op_name is NULL");
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_create(loom_allocator_system(), "Unary", NULL, NULL,
                                 noop_compute, NULL, NULL, &builder),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_builder_create: device_type is NULL");
  LOOM_ASSERT_STATUS(loom_kernel_builder_create(loom_allocator_system(),
                                                "Unary", LOOM_DEVICE_CPU, NULL,
                                                noop_compute, NULL, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_builder_create: out_builder is NULL");
  builder = new_builder("Unary", LOOM_DEVICE_CPU);
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_type_constraint(NULL, "T", LOOM_DTYPE_FLOAT),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_builder_type_constraint: builder is NULL");
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_type_constraint(builder, NULL, LOOM_DTYPE_FLOAT),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_builder_type_constraint: attr_name is NULL");
  LOOM_ASSERT_STATUS(loom_kernel_builder_host_memory(builder, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_builder_host_memory: arg_name is NULL");
  LOOM_ASSERT_STATUS(loom_kernel_builder_host_memory(NULL, "x"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_builder_host_memory: builder is NULL");
  LOOM_ASSERT_STATUS(loom_kernel_builder_label(builder, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_builder_label: label is NULL");
  LOOM_ASSERT_STATUS(loom_kernel_builder_label(NULL, "x"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_builder_label: builder is NULL");
  loom_kernel_builder_destroy(builder);
  loom_kernel_builder_destroy(NULL);
}

static void constraint_with_an_invalid_dtype_is_rejected(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = new_builder("Unary", LOOM_DEVICE_CPU);
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_type_constraint(builder, "T", LOOM_DTYPE_INVALID),
      LOOM_STATUS_INVALID_ARGUMENT,
      "kernel for op 'Unary': type constraint on attr 'T' names invalid "
      "dtype 0");
  LOOM_ASSERT_STATUS(loom_kernel_builder_type_constraint(
                         builder, "T", (loom_dtype_t)LOOM_DTYPE_COUNT),
                     LOOM_STATUS_INVALID_ARGUMENT, "names invalid dtype 33");
  LOOM_ASSERT_STATUS(
      loom_kernel_builder_type_constraint(builder, "T", (loom_dtype_t)-4),
      LOOM_STATUS_INVALID_ARGUMENT, "names invalid dtype -4");
  // The failed calls added no constraint.
  add_kernel("UnaryUnconstrained", builder);
  assert_string_equal(chosen("Unary", LOOM_DTYPE_INT8), "UnaryUnconstrained");
}

static void register_consumes_the_builder_even_on_error(void** state) {
  (void)state;
  loom_allocator_t counted = loom_fault_allocator_allocator(g_counter);
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(counted, "Unary", LOOM_DEVICE_CPU,
                                            NULL, noop_compute, NULL, NULL,
                                            &builder));
  LOOM_ASSERT_OK(loom_kernel_builder_host_memory(builder, "x"));
  LOOM_ASSERT_STATUS(loom_kernel_registry_register(NULL, "K", builder),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_registry_register: registry is NULL");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  LOOM_ASSERT_OK(loom_kernel_builder_create(counted, "Unary", LOOM_DEVICE_CPU,
                                            NULL, noop_compute, NULL, NULL,
                                            &builder));
  LOOM_ASSERT_STATUS(loom_kernel_registry_register(g_kernels, NULL, builder),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_registry_register: kernel_name is NULL");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  LOOM_ASSERT_STATUS(loom_kernel_registry_register(g_kernels, "K", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_registry_register: builder is NULL");
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Unary"), 0);
}

static void registry_functions_reject_null_arguments(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_kernel_registry_create(loom_allocator_system(), NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_kernel_registry_create: out_registry is NULL");
  const loom_op_def_t* op = loom_op_registry_find(g_ops, "Unary");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  const loom_kernel_def_t* kernel = NULL;
  LOOM_ASSERT_STATUS(
      loom_kernel_registry_lookup(NULL, op, LOOM_DEVICE_CPU, &attrs, &kernel),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_registry_lookup: NULL argument");
  LOOM_ASSERT_STATUS(loom_kernel_registry_lookup(
                         g_kernels, NULL, LOOM_DEVICE_CPU, &attrs, &kernel),
                     LOOM_STATUS_INVALID_ARGUMENT, "NULL argument");
  LOOM_ASSERT_STATUS(
      loom_kernel_registry_lookup(g_kernels, op, NULL, &attrs, &kernel),
      LOOM_STATUS_INVALID_ARGUMENT, "NULL argument");
  LOOM_ASSERT_STATUS(loom_kernel_registry_lookup(g_kernels, op, LOOM_DEVICE_CPU,
                                                 NULL, &kernel),
                     LOOM_STATUS_INVALID_ARGUMENT, "NULL argument");
  LOOM_ASSERT_STATUS(
      loom_kernel_registry_lookup(g_kernels, op, LOOM_DEVICE_CPU, &attrs, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "NULL argument");
  loom_op_attrs_deinitialize(&attrs);
  loom_kernel_registry_destroy(NULL);
}

//===----------------------------------------------------------------------===//
// Concurrency
//===----------------------------------------------------------------------===//

enum { kLookupThreads = 4, kRegistrations = 200 };

typedef struct concurrency_t {
  atomic_int registering;
  atomic_int lookups;
  atomic_int failures;
} concurrency_t;

static void* register_many(void* arg) {
  concurrency_t* shared = arg;
  char name[32];
  for (int i = 0; i < kRegistrations; ++i) {
    // New ops' buckets, and more kernels for the op being looked up (at a
    // lower priority, so the choice never changes).
    snprintf(name, sizeof(name), "Op%d", i);
    loom_kernel_builder_t* builder = new_builder(name, LOOM_DEVICE_CPU);
    snprintf(name, sizeof(name), "Kernel%d", i);
    if (loom_kernel_registry_register(g_kernels, name, builder)) {
      atomic_fetch_add(&shared->failures, 1);
    }
    builder = new_builder("Unary", LOOM_DEVICE_CPU);
    loom_kernel_builder_priority(builder, -1 - i);
    snprintf(name, sizeof(name), "UnaryLow%d", i);
    if (loom_kernel_registry_register(g_kernels, name, builder)) {
      atomic_fetch_add(&shared->failures, 1);
    }
  }
  atomic_store(&shared->registering, 0);
  return NULL;
}

static void* lookup_many(void* arg) {
  concurrency_t* shared = arg;
  const loom_op_def_t* op = loom_op_registry_find(g_ops, "Unary");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_status_ignore(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  // At least a few lookups after the registrations ended, too.
  int after = 0;
  while (after < 10) {
    if (!atomic_load(&shared->registering)) after++;
    const loom_kernel_def_t* kernel = NULL;
    loom_status_t status = loom_kernel_registry_lookup(
        g_kernels, op, LOOM_DEVICE_CPU, &attrs, &kernel);
    if (status || strcmp(loom_kernel_def_name(kernel), "UnaryTop") != 0) {
      atomic_fetch_add(&shared->failures, 1);
    }
    loom_status_free(status);
    loom_kernel_registry_count(g_kernels, "Unary");
    atomic_fetch_add(&shared->lookups, 1);
  }
  loom_op_attrs_deinitialize(&attrs);
  return NULL;
}

static void lookups_run_concurrently_with_registrations(void** state) {
  (void)state;
  add_kernel("UnaryTop", new_builder("Unary", LOOM_DEVICE_CPU));
  concurrency_t shared;
  atomic_init(&shared.registering, 1);
  atomic_init(&shared.lookups, 0);
  atomic_init(&shared.failures, 0);
  pthread_t lookers[kLookupThreads], registrar;
  for (int i = 0; i < kLookupThreads; ++i) {
    assert_int_equal(pthread_create(&lookers[i], NULL, lookup_many, &shared),
                     0);
  }
  assert_int_equal(pthread_create(&registrar, NULL, register_many, &shared), 0);
  pthread_join(registrar, NULL);
  for (int i = 0; i < kLookupThreads; ++i) pthread_join(lookers[i], NULL);
  assert_int_equal(atomic_load(&shared.failures), 0);
  assert_true(atomic_load(&shared.lookups) >= kLookupThreads * 10);
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Unary"),
                   kRegistrations + 1);
  assert_int_equal(loom_kernel_registry_count(g_kernels, "Op199"), 1);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// A registry with two kernels for one op, one for another; a lookup of each.
static loom_status_t build_register_lookup(loom_allocator_t allocator,
                                           void* context) {
  (void)context;
  loom_kernel_registry_t* registry = NULL;
  LOOM_RETURN_IF_ERROR(loom_kernel_registry_create(allocator, &registry));
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < 3 && !status; ++i) {
    loom_kernel_builder_t* builder = NULL;
    status = loom_kernel_builder_create(allocator, i < 2 ? "Unary" : "Pair",
                                        i == 1 ? "GPU" : LOOM_DEVICE_CPU, NULL,
                                        noop_compute, NULL, NULL, &builder);
    if (status) break;
    status =
        loom_kernel_builder_type_constraint(builder, "T", LOOM_DTYPE_FLOAT);
    if (!status) {
      status =
          loom_kernel_builder_type_constraint(builder, "T", LOOM_DTYPE_DOUBLE);
    }
    if (!status) status = loom_kernel_builder_host_memory(builder, "x");
    if (!status) status = loom_kernel_builder_label(builder, "fast");
    loom_kernel_builder_priority(builder, i);
    if (status) {
      loom_kernel_builder_destroy(builder);
      break;
    }
    status =
        loom_kernel_registry_register(registry, i == 2 ? "P" : "U", builder);
  }
  const char* ops[2] = {"Unary", "Pair"};
  for (int i = 0; i < 2 && !status; ++i) {
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, allocator);
    status = loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_DOUBLE);
    if (!status)
      status = loom_op_attrs_set_string(&attrs, "_kernel", "fast", 4);
    const loom_kernel_def_t* kernel = NULL;
    if (!status) {
      status = loom_kernel_registry_lookup(registry,
                                           loom_op_registry_find(g_ops, ops[i]),
                                           LOOM_DEVICE_CPU, &attrs, &kernel);
    }
    if (!status && !loom_kernel_def_is_host_memory_arg(kernel, "x")) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "wrong kernel");
    }
    loom_op_attrs_deinitialize(&attrs);
  }
  loom_kernel_registry_destroy(registry);
  return status;
}

static void allocation_failures_in_the_registry_are_reported(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(build_register_lookup, NULL,
                                    LOOM_TEST_SWEEP_STRICT) > 10);
}

//===----------------------------------------------------------------------===//
// loom_kernel_run argument checks: every failure releases the inputs.
//===----------------------------------------------------------------------===//

static loom_host_context_t* new_host(void) {
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 0;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &host));
  return host;
}

// A float [2] tensor allocated from the counting allocator.
static loom_tensor_t* counted_tensor(void) {
  int64_t dims[1] = {2};
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_fault_allocator_allocator(g_counter),
                               LOOM_DTYPE_FLOAT, &shape, &tensor));
  return tensor;
}

static loom_kernel_run_options_t private_options(loom_host_context_t* host) {
  loom_kernel_run_options_t options;
  memset(&options, 0, sizeof(options));
  options.host = host;
  options.ops = g_ops;
  options.kernels = g_kernels;
  return options;
}

static int g_sink_computes;

static void count_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  (void)ctx;
  g_sink_computes++;
}

static void kernel_run_uses_the_registries_in_the_options(void** state) {
  (void)state;
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      loom_allocator_system(), "Sink", LOOM_DEVICE_CPU, NULL, count_compute,
      NULL, NULL, &builder));
  add_kernel("SinkKernel", builder);
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  int32_t count = -1;
  g_sink_computes = 0;
  LOOM_ASSERT_OK(
      loom_kernel_run(&options, "Sink", inputs, 1, NULL, NULL, 0, &count));
  assert_int_equal(count, 0);
  assert_int_equal(g_sink_computes, 1);
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  // The global registries know no "Sink" op.
  options.ops = NULL;
  inputs[0] = counted_tensor();
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Sink", inputs, 1, NULL, NULL, 0, &count),
      LOOM_STATUS_NOT_FOUND, "Op type not registered 'Sink'");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_without_options_releases_the_inputs(void** state) {
  (void)state;
  loom_tensor_t* inputs[2] = {counted_tensor(), counted_tensor()};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(NULL, "Pair", inputs, 2, NULL, NULL, 0, &count),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_kernel_run: options is NULL");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
}

static void kernel_run_without_a_host_releases_the_inputs(void** state) {
  (void)state;
  loom_kernel_run_options_t options = private_options(NULL);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_kernel_run: options->host is NULL");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
}

static void kernel_run_with_a_null_input_releases_the_others(void** state) {
  (void)state;
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[2] = {counted_tensor(), NULL};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Pair", inputs, 2, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT, "Op 'Pair': input 1 is NULL");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_with_too_few_output_slots_releases_the_inputs(
    void** state) {
  (void)state;
  add_kernel("TwoOutKernel", new_builder("TwoOut", LOOM_DEVICE_CPU));
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "TwoOut", inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'TwoOut' has 2 outputs, the caller has room for 1");
  assert_null(outputs[0]);
  assert_int_equal(count, 0);
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_of_an_unknown_op_is_not_found(void** state) {
  (void)state;
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Nope", inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_NOT_FOUND, "Op type not registered 'Nope'");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_without_a_kernel_releases_the_inputs(void** state) {
  (void)state;
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_NOT_FOUND,
      "No registered 'Unary' kernel for 'CPU' devices compatible with "
      "attributes {T=DT_FLOAT}");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_with_the_wrong_input_count_releases_the_inputs(
    void** state) {
  (void)state;
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[2] = {counted_tensor(), counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 2, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT, "Op 'Unary' expects 1 inputs, got 2");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  loom_host_context_destroy(host);
}

static void kernel_run_rejects_invalid_arrays(void** state) {
  (void)state;
  loom_host_context_t* host = new_host();
  loom_kernel_run_options_t options = private_options(host);
  loom_tensor_t* inputs[1] = {counted_tensor()};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, NULL, inputs, 1, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_kernel_run: op_name is NULL");
  inputs[0] = counted_tensor();
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 1, NULL, outputs, 1, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_kernel_run: out_num_outputs is NULL");
  inputs[0] = counted_tensor();
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 1, NULL, NULL, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_run: invalid input/output arrays");
  inputs[0] = counted_tensor();
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", inputs, 1, NULL, outputs, -1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_run: invalid input/output arrays");
  assert_int_equal(loom_fault_allocator_live_count(g_counter), 0);
  // A negative count says there is nothing to release.
  LOOM_ASSERT_STATUS(
      loom_kernel_run(&options, "Unary", NULL, -1, NULL, outputs, 1, &count),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_kernel_run: invalid input/output arrays");
  loom_host_context_destroy(host);
}

//===----------------------------------------------------------------------===//
// Rollback
//===----------------------------------------------------------------------===//

// Registers a Unary kernel, made with `allocator`, under a journal and
// rolls it back; `look_up` looks it up in between (as an execution on
// another thread may). Returns the definition looked up, or NULL.
static const loom_kernel_def_t* register_and_roll_back(
    loom_kernel_registry_t* kernels, loom_allocator_t allocator, bool look_up) {
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, loom_allocator_system());
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  loom_kernel_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      allocator, "Unary", "CPU", NULL, noop_compute, NULL, NULL, &builder));
  LOOM_ASSERT_OK(
      loom_kernel_builder_type_constraint(builder, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_kernel_registry_register(kernels, "Rolled", builder));
  loom__registration_journal_swap(previous);
  const loom_kernel_def_t* kernel = NULL;
  if (look_up) {
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, loom_allocator_system());
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
    LOOM_ASSERT_OK(loom_kernel_registry_lookup(
        kernels, loom_op_registry_find(g_ops, "Unary"), "CPU", &attrs,
        &kernel));
    loom_op_attrs_deinitialize(&attrs);
  }
  assert_int_equal(loom_kernel_registry_count(kernels, "Unary"), 1);
  loom__registration_journal_rollback(&journal);
  loom__registration_journal_deinitialize(&journal);
  assert_int_equal(loom_kernel_registry_count(kernels, "Unary"), 0);
  return kernel;
}

// A rolled-back kernel no look-up returned is freed at once (a failed
// plugin load keeps nothing); one a look-up returned stays valid until the
// registry goes, since its holder may still run it.
static void rolled_back_kernels_are_freed_unless_handed_out(void** state) {
  (void)state;
  loom_fault_allocator_t* counter = NULL;
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &counter));
  loom_kernel_registry_t* kernels = NULL;
  LOOM_ASSERT_OK(
      loom_kernel_registry_create(loom_allocator_system(), &kernels));
  loom_allocator_t allocator = loom_fault_allocator_allocator(counter);
  for (int i = 0; i < 3; ++i) {
    assert_null(register_and_roll_back(kernels, allocator, false));
    assert_int_equal(loom_fault_allocator_live_count(counter), 0);
  }
  const loom_kernel_def_t* kept =
      register_and_roll_back(kernels, allocator, true);
  assert_non_null(kept);
  assert_true(loom_fault_allocator_live_count(counter) > 0);
  assert_string_equal(loom_kernel_def_name(kept), "Rolled");
  assert_string_equal(loom_kernel_def_op_name(kept), "Unary");
  // The same op's kernels register and roll back again after it.
  assert_null(register_and_roll_back(kernels, allocator, false));
  loom_kernel_registry_destroy(kernels);
  assert_int_equal(loom_fault_allocator_live_count(counter), 0);
  loom_fault_allocator_destroy(counter);
}

#define REGISTRY_TEST(name) \
  cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      REGISTRY_TEST(registered_kernel_is_found_with_its_definition),
      REGISTRY_TEST(rolled_back_kernels_are_freed_unless_handed_out),
      REGISTRY_TEST(async_kernel_definition_is_async),
      REGISTRY_TEST(count_counts_the_kernels_of_one_op),
      REGISTRY_TEST(host_memory_args_are_recorded),
      REGISTRY_TEST(failed_host_memory_call_leaves_the_builder_unchanged),
      REGISTRY_TEST(constraint_with_several_types_allows_each_of_them),
      REGISTRY_TEST(constraints_on_two_attrs_must_both_match),
      REGISTRY_TEST(list_type_constraint_checks_every_element),
      REGISTRY_TEST(constraint_on_an_unset_attr_never_matches),
      REGISTRY_TEST(kernel_for_another_device_is_not_chosen),
      REGISTRY_TEST(highest_priority_wins_in_any_registration_order),
      REGISTRY_TEST(ties_at_the_best_priority_are_ambiguous),
      REGISTRY_TEST(tie_below_the_best_priority_is_not_ambiguous),
      REGISTRY_TEST(label_must_match_the_kernel_attr),
      REGISTRY_TEST(not_found_lists_every_registered_kernel),
      REGISTRY_TEST(not_found_without_kernels_says_none_are_registered),
      REGISTRY_TEST(repeated_type_in_a_constraint_is_kept_once),
      REGISTRY_TEST(every_valid_dtype_fits_in_one_constraint),
      REGISTRY_TEST(builder_needs_exactly_one_compute_function),
      REGISTRY_TEST(builder_rejects_null_arguments),
      REGISTRY_TEST(constraint_with_an_invalid_dtype_is_rejected),
      REGISTRY_TEST(register_consumes_the_builder_even_on_error),
      REGISTRY_TEST(registry_functions_reject_null_arguments),
      REGISTRY_TEST(lookups_run_concurrently_with_registrations),
      REGISTRY_TEST(allocation_failures_in_the_registry_are_reported),
      REGISTRY_TEST(kernel_run_uses_the_registries_in_the_options),
      REGISTRY_TEST(kernel_run_without_options_releases_the_inputs),
      REGISTRY_TEST(kernel_run_without_a_host_releases_the_inputs),
      REGISTRY_TEST(kernel_run_with_a_null_input_releases_the_others),
      REGISTRY_TEST(kernel_run_with_too_few_output_slots_releases_the_inputs),
      REGISTRY_TEST(kernel_run_of_an_unknown_op_is_not_found),
      REGISTRY_TEST(kernel_run_without_a_kernel_releases_the_inputs),
      REGISTRY_TEST(kernel_run_with_the_wrong_input_count_releases_the_inputs),
      REGISTRY_TEST(kernel_run_rejects_invalid_arrays),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
