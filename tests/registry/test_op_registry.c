// The op registry: lookup, listing, unregistering, the global registry,
// concurrent use, and allocation failures.

#include <pthread.h>

#include "loom/op_def.h"
#include "test_support.h"

static loom_status_t register_simple(loom_op_registry_t* registry,
                                     const char* name) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  loom_status_t status = loom_op_def_builder_add_input(builder, "x: T");
  if (!status) status = loom_op_def_builder_add_attr(builder, "T: type");
  if (!status) status = loom_op_def_builder_add_output(builder, "y: T");
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  return loom_op_registry_register(registry, builder);
}

static void lookup_finds_registered_ops(void** state) {
  (void)state;
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  LOOM_ASSERT_OK(register_simple(registry, "Relu"));
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(loom_op_registry_lookup(registry, "Relu", &op));
  assert_string_equal(op->name, "Relu");
  assert_ptr_equal(loom_op_registry_find(registry, "Relu"), op);
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(registry, "Relu6", &op),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'Relu6'");
  assert_null(loom_op_registry_find(registry, "Relu6"));
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(NULL, "Relu", &op),
                     LOOM_STATUS_INVALID_ARGUMENT, "registry is NULL");
  loom_op_registry_destroy(registry);
}

static void list_is_sorted_and_bounded(void** state) {
  (void)state;
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  const char* names[] = {"Mul", "Add", "Sub", "AddN"};
  for (int i = 0; i < 4; ++i)
    LOOM_ASSERT_OK(register_simple(registry, names[i]));
  const char* listed[8] = {0};
  assert_int_equal(loom_op_registry_list(registry, listed, 8), 4);
  assert_string_equal(listed[0], "Add");
  assert_string_equal(listed[1], "AddN");
  assert_string_equal(listed[2], "Mul");
  assert_string_equal(listed[3], "Sub");
  const char* two[2] = {0};
  assert_int_equal(loom_op_registry_list(registry, two, 2), 4);
  assert_string_equal(two[1], "AddN");
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 4);
  loom_op_registry_destroy(registry);
}

static void unregister_keeps_old_pointers_valid(void** state) {
  (void)state;
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  LOOM_ASSERT_OK(register_simple(registry, "Gone"));
  const loom_op_def_t* old = loom_op_registry_find(registry, "Gone");
  LOOM_ASSERT_OK(loom_op_registry_unregister(registry, "Gone"));
  assert_null(loom_op_registry_find(registry, "Gone"));
  assert_string_equal(old->name, "Gone");  // still readable
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 0);
  LOOM_ASSERT_STATUS(loom_op_registry_unregister(registry, "Gone"),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'Gone'");
  LOOM_ASSERT_OK(register_simple(registry, "Gone"));  // the name is free
  assert_ptr_not_equal(loom_op_registry_find(registry, "Gone"), old);
  loom_op_registry_destroy(registry);
}

static void global_registry_is_a_singleton(void** state) {
  (void)state;
  assert_non_null(loom_op_registry_global());
  assert_ptr_equal(loom_op_registry_global(), loom_op_registry_global());
}

static void register_rejects_null_and_consumes_the_builder(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), "Orphan", &builder));
  LOOM_ASSERT_STATUS(loom_op_registry_register(NULL, builder),
                     LOOM_STATUS_INVALID_ARGUMENT, "registry is NULL");
  // (LeakSanitizer checks the builder was freed.)
}

typedef struct worker_t {
  loom_op_registry_t* registry;
  int id;
  int failures;
} worker_t;

static void* register_and_lookup(void* arg) {
  worker_t* worker = arg;
  char name[32];
  for (int i = 0; i < 200; ++i) {
    snprintf(name, sizeof(name), "Thread%dOp%d", worker->id, i);
    loom_status_t status = register_simple(worker->registry, name);
    if (status) {
      worker->failures++;
      loom_status_free(status);
    }
    // Look up ops of every thread, registered or not yet.
    snprintf(name, sizeof(name), "Thread%dOp%d", (worker->id + 1) % 4, i);
    const loom_op_def_t* op = loom_op_registry_find(worker->registry, name);
    if (op && strcmp(op->name, name) != 0) worker->failures++;
  }
  return NULL;
}

static void concurrent_registration_and_lookup(void** state) {
  (void)state;
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  pthread_t threads[4];
  worker_t workers[4];
  for (int i = 0; i < 4; ++i) {
    workers[i] = (worker_t){registry, i, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, register_and_lookup, &workers[i]), 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(workers[i].failures, 0);
  }
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 800);
  loom_op_registry_destroy(registry);
}

static loom_status_t full_lifecycle(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_op_registry_t* registry = NULL;
  LOOM_RETURN_IF_ERROR(loom_op_registry_create(allocator, &registry));
  loom_op_def_builder_t* builder = NULL;
  loom_status_t status =
      loom_op_def_builder_create(allocator, "Everything", &builder);
  static const char* kAttrs[] = {
      "T: {float, int32} = DT_FLOAT",
      "N: int >= 1 = 2",
      "shape: list(int) = [1, 2, 3]",
      "names: list(string) = ['a', 'b']",
      "value: tensor = { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
      "float_val: 1 }",
      "padding: {'SAME', 'VALID'} = 'SAME'",
  };
  for (size_t i = 0; !status && i < sizeof(kAttrs) / sizeof(kAttrs[0]); ++i) {
    status = loom_op_def_builder_add_attr(builder, kAttrs[i]);
  }
  if (!status) status = loom_op_def_builder_add_input(builder, "xs: N * T");
  if (!status) status = loom_op_def_builder_add_output(builder, "y: T");
  if (status) {
    loom_op_def_builder_destroy(builder);
  } else {
    status = loom_op_registry_register(registry, builder);
  }
  const loom_op_def_t* op = NULL;
  if (!status) status = loom_op_registry_lookup(registry, "Everything", &op);
  loom_op_registry_destroy(registry);
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  assert_true(
      loom_test_fault_sweep(full_lifecycle, NULL, LOOM_TEST_SWEEP_STRICT) > 10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lookup_finds_registered_ops),
      cmocka_unit_test(list_is_sorted_and_bounded),
      cmocka_unit_test(unregister_keeps_old_pointers_valid),
      cmocka_unit_test(global_registry_is_a_singleton),
      cmocka_unit_test(register_rejects_null_and_consumes_the_builder),
      cmocka_unit_test(concurrent_registration_and_lookup),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
