// The op registry: lookup, listing, unregistering, the global registry,
// concurrent registration and lookup (run under TSan), registrations a
// load's journal records and those it must not, and allocation failures.

#include <pthread.h>

#include "loom/op_def.h"
#include "registry/op_registry_internal.h"
#include "test_support.h"

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

static loom_op_registry_t* new_registry(void) {
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  assert_non_null(registry);
  return registry;
}

// Registers `name` as `x: T -> y: T` with `T: type`.
static loom_status_t register_simple(loom_op_registry_t* registry,
                                     const char* name) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  loom_status_t status = loom_op_def_builder_add_attr(builder, "T: type");
  if (!status) status = loom_op_def_builder_add_input(builder, "x: T");
  if (!status) status = loom_op_def_builder_add_output(builder, "y: T");
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  return loom_op_registry_register(registry, builder);
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

static void lookup_returns_the_registered_definition(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_OK(register_simple(registry, "Relu"));
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(loom_op_registry_lookup(registry, "Relu", &op));
  assert_string_equal(op->name, "Relu");
  assert_int_equal(op->num_inputs, 1);
  assert_string_equal(op->inputs[0].type_attr, "T");
  assert_ptr_equal(loom_op_registry_find(registry, "Relu"), op);
  loom_op_registry_destroy(registry);
}

static void lookup_of_an_unknown_op_is_not_found(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_OK(register_simple(registry, "Relu"));
  const loom_op_def_t* op = (const loom_op_def_t*)&op;
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(registry, "Relu6", &op),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'Relu6'");
  assert_null(op);
  // Names are case-sensitive, and a prefix is not a match.
  assert_null(loom_op_registry_find(registry, "relu"));
  assert_null(loom_op_registry_find(registry, "Rel"));
  assert_null(loom_op_registry_find(registry, ""));
  loom_op_registry_destroy(registry);
}

static void lookup_rejects_null_arguments(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(NULL, "Relu", &op),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_lookup: registry is NULL");
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(registry, NULL, &op),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_lookup: name is NULL");
  LOOM_ASSERT_STATUS(loom_op_registry_lookup(registry, "Relu", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_lookup: out_op is NULL");
  assert_null(loom_op_registry_find(NULL, "Relu"));
  assert_null(loom_op_registry_find(registry, NULL));
  loom_op_registry_destroy(registry);
}

//===----------------------------------------------------------------------===//
// Listing
//===----------------------------------------------------------------------===//

static void list_returns_names_in_sorted_order(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  static const char* kNames[] = {"Mul", "Add", "Sub", "AddN", "_Arg"};
  for (size_t i = 0; i < COUNT_OF(kNames); ++i) {
    LOOM_ASSERT_OK(register_simple(registry, kNames[i]));
  }
  const char* listed[8] = {0};
  assert_int_equal(loom_op_registry_list(registry, listed, 8), 5);
  assert_string_equal(listed[0], "Add");
  assert_string_equal(listed[1], "AddN");
  assert_string_equal(listed[2], "Mul");
  assert_string_equal(listed[3], "Sub");
  assert_string_equal(listed[4], "_Arg");  // strcmp order: '_' after 'Z'
  assert_null(listed[5]);
  loom_op_registry_destroy(registry);
}

static void list_with_a_small_capacity_writes_the_first_names(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  static const char* kNames[] = {"Mul", "Add", "Sub", "AddN"};
  for (size_t i = 0; i < COUNT_OF(kNames); ++i) {
    LOOM_ASSERT_OK(register_simple(registry, kNames[i]));
  }
  const char* two[3] = {0};
  assert_int_equal(loom_op_registry_list(registry, two, 2), 4);  // the total
  assert_string_equal(two[0], "Add");
  assert_string_equal(two[1], "AddN");
  assert_null(two[2]);  // nothing written past the capacity
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 4);
  assert_int_equal(loom_op_registry_list(NULL, two, 2), 0);
  loom_op_registry_destroy(registry);
}

static void list_of_an_empty_registry_is_empty(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  const char* names[1] = {0};
  assert_int_equal(loom_op_registry_list(registry, names, 1), 0);
  assert_null(names[0]);
  loom_op_registry_destroy(registry);
}

static void list_without_memory_still_lists_sorted_names(void** state) {
  (void)state;
  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_fault_allocator_allocator(fault),
                                         &registry));
  static const char* kNames[] = {"Sub", "Mul", "Add", "Div", "AddN"};
  for (size_t i = 0; i < COUNT_OF(kNames); ++i) {
    LOOM_ASSERT_OK(register_simple(registry, kNames[i]));
  }
  const char* listed[5] = {0};
  int64_t injected = loom_fault_allocator_injected_failures(fault);
  loom_fault_allocator_fail_nth(fault, 1);  // the list's scratch array
  assert_int_equal(loom_op_registry_list(registry, listed, 3), 5);
  assert_int_equal(loom_fault_allocator_injected_failures(fault), injected + 1);
  assert_string_equal(listed[0], "Add");
  assert_string_equal(listed[1], "AddN");
  assert_string_equal(listed[2], "Div");
  assert_null(listed[3]);
  loom_fault_allocator_fail_nth(fault, 1);
  assert_int_equal(loom_op_registry_list(registry, listed, 5), 5);
  assert_string_equal(listed[3], "Mul");
  assert_string_equal(listed[4], "Sub");
  loom_op_registry_destroy(registry);
  assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  loom_fault_allocator_destroy(fault);
}

//===----------------------------------------------------------------------===//
// Unregistering
//===----------------------------------------------------------------------===//

static void unregister_removes_the_op_but_keeps_its_definition(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_OK(register_simple(registry, "Gone"));
  LOOM_ASSERT_OK(register_simple(registry, "Stays"));
  const loom_op_def_t* old = loom_op_registry_find(registry, "Gone");
  LOOM_ASSERT_OK(loom_op_registry_unregister(registry, "Gone"));
  assert_null(loom_op_registry_find(registry, "Gone"));
  const char* names[2] = {0};
  assert_int_equal(loom_op_registry_list(registry, names, 2), 1);
  assert_string_equal(names[0], "Stays");
  // Still readable (ASan would catch a use after free).
  assert_string_equal(old->name, "Gone");
  assert_string_equal(old->inputs[0].spec, "x: T");
  assert_string_equal(old->attrs[0].name, "T");
  assert_int_equal(loom_op_attrs_count(old->defaults), 0);
  loom_op_registry_destroy(registry);
}

static void unregistered_name_can_be_registered_again(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_OK(register_simple(registry, "Again"));
  const loom_op_def_t* old = loom_op_registry_find(registry, "Again");
  LOOM_ASSERT_OK(loom_op_registry_unregister(registry, "Again"));
  LOOM_ASSERT_OK(register_simple(registry, "Again"));
  const loom_op_def_t* again = loom_op_registry_find(registry, "Again");
  assert_non_null(again);
  assert_ptr_not_equal(again, old);
  assert_string_equal(old->name, "Again");
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 1);
  LOOM_ASSERT_STATUS(register_simple(registry, "Again"),
                     LOOM_STATUS_ALREADY_EXISTS,
                     "Op 'Again' is already registered");
  loom_op_registry_destroy(registry);
}

static void unregister_of_an_unknown_op_is_not_found(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_STATUS(loom_op_registry_unregister(registry, "Never"),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'Never'");
  LOOM_ASSERT_OK(register_simple(registry, "Once"));
  LOOM_ASSERT_OK(loom_op_registry_unregister(registry, "Once"));
  LOOM_ASSERT_STATUS(loom_op_registry_unregister(registry, "Once"),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'Once'");
  loom_op_registry_destroy(registry);
}

static void unregister_rejects_null_arguments(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_STATUS(loom_op_registry_unregister(NULL, "X"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_unregister: registry is NULL");
  LOOM_ASSERT_STATUS(loom_op_registry_unregister(registry, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_unregister: name is NULL");
  loom_op_registry_destroy(registry);
}

//===----------------------------------------------------------------------===//
// Creation, registration arguments, the global registry
//===----------------------------------------------------------------------===//

static void create_rejects_a_null_out_pointer(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_op_registry_create(loom_allocator_system(), NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_create: out_registry is NULL");
  loom_op_registry_destroy(NULL);  // a no-op
}

static void register_rejects_null_and_still_consumes_the_builder(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), "Orphan", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_attr(builder, "s: string = 'x'"));
  LOOM_ASSERT_STATUS(loom_op_registry_register(NULL, builder),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_register: registry is NULL");
  // LeakSanitizer checks that the builder was freed.
  loom_op_registry_t* registry = new_registry();
  LOOM_ASSERT_STATUS(loom_op_registry_register(registry, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_registry_register: builder is NULL");
  loom_op_registry_destroy(registry);
}

static void global_registry_is_a_singleton(void** state) {
  (void)state;
  loom_op_registry_t* global = loom_op_registry_global();
  assert_non_null(global);
  assert_ptr_equal(loom_op_registry_global(), global);
  LOOM_ASSERT_OK(register_simple(global, "LoomTestGlobalOp"));
  assert_non_null(
      loom_op_registry_find(loom_op_registry_global(), "LoomTestGlobalOp"));
  LOOM_ASSERT_OK(loom_op_registry_unregister(global, "LoomTestGlobalOp"));
}

static void* get_global(void* arg) {
  (void)arg;
  return loom_op_registry_global();
}

static void global_registry_is_shared_by_threads(void** state) {
  (void)state;
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(pthread_create(&threads[i], NULL, get_global, NULL), 0);
  }
  for (int i = 0; i < 4; ++i) {
    void* seen = NULL;
    pthread_join(threads[i], &seen);
    assert_ptr_equal(seen, loom_op_registry_global());
  }
}

static void separate_registries_are_independent(void** state) {
  (void)state;
  loom_op_registry_t* a = new_registry();
  loom_op_registry_t* b = new_registry();
  LOOM_ASSERT_OK(register_simple(a, "Shared"));
  LOOM_ASSERT_OK(register_simple(b, "Shared"));
  assert_ptr_not_equal(loom_op_registry_find(a, "Shared"),
                       loom_op_registry_find(b, "Shared"));
  loom_op_registry_destroy(a);
  assert_string_equal(loom_op_registry_find(b, "Shared")->name, "Shared");
  loom_op_registry_destroy(b);
}

//===----------------------------------------------------------------------===//
// Concurrency (TSan checks the races; the assertions check the results)
//===----------------------------------------------------------------------===//

enum { kThreads = 4, kOpsPerThread = 150 };

typedef struct worker_t {
  loom_op_registry_t* registry;
  int id;
  int failures;
  int registered;
} worker_t;

static void* register_and_look_up(void* arg) {
  worker_t* worker = arg;
  char name[32];
  const char* listed[4];
  for (int i = 0; i < kOpsPerThread; ++i) {
    snprintf(name, sizeof(name), "Thread%dOp%d", worker->id, i);
    loom_status_t status = register_simple(worker->registry, name);
    if (status) {
      worker->failures++;
      loom_status_free(status);
    }
    const loom_op_def_t* own = loom_op_registry_find(worker->registry, name);
    if (!own || strcmp(own->name, name) != 0 || own->num_inputs != 1) {
      worker->failures++;
    }
    // Ops of the next thread, registered or not yet: either absent or whole.
    snprintf(name, sizeof(name), "Thread%dOp%d", (worker->id + 1) % kThreads,
             i);
    const loom_op_def_t* other = loom_op_registry_find(worker->registry, name);
    if (other && (strcmp(other->name, name) != 0 || other->num_outputs != 1)) {
      worker->failures++;
    }
    if (loom_op_registry_list(worker->registry, listed, 4) < (size_t)i + 1) {
      worker->failures++;
    }
  }
  return NULL;
}

static void concurrent_registration_and_lookup_see_whole_ops(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  pthread_t threads[kThreads];
  worker_t workers[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    workers[i] = (worker_t){registry, i, 0, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, register_and_look_up, &workers[i]),
        0);
  }
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(workers[i].failures, 0);
  }
  assert_int_equal(loom_op_registry_list(registry, NULL, 0),
                   kThreads * kOpsPerThread);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kOpsPerThread; ++i) {
      char name[32];
      snprintf(name, sizeof(name), "Thread%dOp%d", t, i);
      assert_non_null(loom_op_registry_find(registry, name));
    }
  }
  loom_op_registry_destroy(registry);
}

static void* register_contended(void* arg) {
  worker_t* worker = arg;
  for (int i = 0; i < 50; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "Contended%d", i);
    loom_status_t status = register_simple(worker->registry, name);
    if (!status) {
      worker->registered++;
    } else if (loom_status_code(status) != LOOM_STATUS_ALREADY_EXISTS) {
      worker->failures++;
    }
    loom_status_free(status);
  }
  return NULL;
}

static void concurrent_registration_of_one_name_succeeds_once(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  pthread_t threads[kThreads];
  worker_t workers[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    workers[i] = (worker_t){registry, i, 0, 0};
    assert_int_equal(
        pthread_create(&threads[i], NULL, register_contended, &workers[i]), 0);
  }
  int registered = 0;
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    assert_int_equal(workers[i].failures, 0);
    registered += workers[i].registered;
  }
  assert_int_equal(registered, 50);
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 50);
  loom_op_registry_destroy(registry);
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Creates a registry, builds an op with attrs of every default kind (lists
// and tensors included), registers it, looks it up and destroys it all.
static loom_status_t full_lifecycle(loom_allocator_t allocator, void* context) {
  (void)context;
  static const char* kAttrs[] = {
      "T: {float, int32} = DT_FLOAT",
      "N: int >= 1 = 2",
      "alpha: float = 0.2",
      "flag: bool = true",
      "shape: list(int) = [1, 2, 3]",
      "names: list(string) = ['a', \"b\\n\"]",
      "types: list(type) = [DT_INT8, half]",
      "dims: shape = { dim { size: 2 } dim { size: -1 } }",
      "shapes: list(shape) = [[1], { unknown_rank: true }]",
      ("value: tensor = { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
       "float_val: 1 }"),
      "values: list(tensor) = [{ dtype: DT_INT32 int_val: 3 }]",
      "body: func = { name: \"f\" }",
      "padding: {'SAME', 'VALID'} = 'SAME'",
      "Tout: list(type)",
  };
  loom_op_registry_t* registry = NULL;
  LOOM_RETURN_IF_ERROR(loom_op_registry_create(allocator, &registry));
  loom_op_def_builder_t* builder = NULL;
  loom_status_t status =
      loom_op_def_builder_create(allocator, "Everything", &builder);
  for (size_t i = 0; !status && i < COUNT_OF(kAttrs); ++i) {
    status = loom_op_def_builder_add_attr(builder, kAttrs[i]);
  }
  if (!status) status = loom_op_def_builder_add_input(builder, "xs: N * T");
  if (!status) status = loom_op_def_builder_add_input(builder, "r: resource");
  if (!status) status = loom_op_def_builder_add_output(builder, "y: T");
  if (!status) status = loom_op_def_builder_add_output(builder, "z: Tout");
  if (!status) status = loom_op_def_builder_set_deprecated(builder, 3, "no");
  if (status) {
    loom_op_def_builder_destroy(builder);
  } else {
    status = loom_op_registry_register(registry, builder);
  }
  const loom_op_def_t* op = NULL;
  if (!status) status = loom_op_registry_lookup(registry, "Everything", &op);
  if (!status && (op->num_attrs != 14 || !op->is_stateful ||
                  loom_op_attrs_count(op->defaults) != 13)) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "wrong definition");
  }
  loom_op_registry_destroy(registry);
  return status;
}

static void every_allocation_failure_is_reported_without_leaks(void** state) {
  (void)state;
  int64_t allocations =
      loom_test_fault_sweep(full_lifecycle, NULL, LOOM_TEST_SWEEP_STRICT);
  assert_true(allocations > 20);
}

// Registers "Temp" (made with `allocator`) in `registry` and unregisters
// it; looks it up in between when `look_up`. Returns what the look-up gave.
static const loom_op_def_t* register_and_unregister(
    loom_op_registry_t* registry, loom_allocator_t allocator, bool look_up) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(allocator, "Temp", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_attr(builder, "T: {float, int32}"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, "x: T"));
  LOOM_ASSERT_OK(loom_op_registry_register(registry, builder));
  const loom_op_def_t* def =
      look_up ? loom_op_registry_find(registry, "Temp") : NULL;
  LOOM_ASSERT_OK(loom_op_registry_unregister(registry, "Temp"));
  assert_null(loom_op_registry_find(registry, "Temp"));
  return def;
}

// An unregistered definition no look-up returned is freed (a failed plugin
// load keeps nothing); one handed out stays valid until the registry goes.
static void unregistered_ops_are_freed_unless_handed_out(void** state) {
  (void)state;
  loom_fault_allocator_t* counter = NULL;
  LOOM_ASSERT_OK(
      loom_fault_allocator_create(loom_allocator_system(), &counter));
  loom_allocator_t allocator = loom_fault_allocator_allocator(counter);
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(allocator, &registry));
  assert_null(register_and_unregister(registry, allocator, false));
  int64_t settled = loom_fault_allocator_live_count(counter);  // the map's
  for (int i = 0; i < 3; ++i) {
    assert_null(register_and_unregister(registry, allocator, false));
    assert_int_equal(loom_fault_allocator_live_count(counter), settled);
  }
  const loom_op_def_t* kept =
      register_and_unregister(registry, allocator, true);
  assert_non_null(kept);
  assert_true(loom_fault_allocator_live_count(counter) > settled);
  assert_string_equal(kept->name, "Temp");
  assert_int_equal(kept->num_inputs, 1);
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 0);
  loom_op_registry_destroy(registry);
  assert_int_equal(loom_fault_allocator_live_count(counter), 0);
  loom_fault_allocator_destroy(counter);
}

// Many definitions of one name, each handed out and then unregistered:
// every one stays valid, and a look-up finds the one registered now (the
// unregistered ones have left the name's hash chain).
static void reregistered_names_keep_every_handed_out_definition(void** state) {
  (void)state;
  loom_allocator_t allocator = loom_allocator_system();
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(allocator, &registry));
  enum { kRounds = 200 };
  const loom_op_def_t* kept[kRounds];
  for (int i = 0; i < kRounds; ++i) {
    kept[i] = register_and_unregister(registry, allocator, true);
    assert_non_null(kept[i]);
  }
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(allocator, "Temp", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, "a: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, "b: float"));
  LOOM_ASSERT_OK(loom_op_registry_register(registry, builder));
  const loom_op_def_t* current = loom_op_registry_find(registry, "Temp");
  assert_non_null(current);
  assert_int_equal(current->num_inputs, 2);
  for (int i = 0; i < kRounds; ++i) {
    assert_ptr_not_equal(kept[i], current);
    assert_string_equal(kept[i]->name, "Temp");
    assert_int_equal(kept[i]->num_inputs, 1);
  }
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 1);
  loom_op_registry_destroy(registry);
}

//===----------------------------------------------------------------------===//
// Journals
//===----------------------------------------------------------------------===//

typedef struct journal_thread_t {
  loom_op_registry_t* registry;
  loom_status_t status;
} journal_thread_t;

static void* register_journalled(void* arg) {
  journal_thread_t* thread = arg;
  thread->status = register_simple(thread->registry, "JournalThread");
  return NULL;
}

// Registrations a thread makes between exempt_begin and exempt_end (the
// process's own ops, made on first use) are not the load's: its rollback
// leaves them. Exemptions nest, and hold for the calling thread only: a
// helper thread's registration meanwhile is still the load's.
static void exempt_registrations_survive_the_rollback(void** state) {
  (void)state;
  loom_op_registry_t* registry = new_registry();
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, loom_allocator_system());
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  LOOM_ASSERT_OK(register_simple(registry, "Journalled"));
  loom__registration_journal_exempt_begin();
  LOOM_ASSERT_OK(register_simple(registry, "ExemptOuter"));
  loom__registration_journal_exempt_begin();
  LOOM_ASSERT_OK(register_simple(registry, "ExemptInner"));
  loom__registration_journal_exempt_end();
  LOOM_ASSERT_OK(register_simple(registry, "ExemptOuterAgain"));
  journal_thread_t thread = {.registry = registry};
  pthread_t handle;
  assert_int_equal(pthread_create(&handle, NULL, register_journalled, &thread),
                   0);
  pthread_join(handle, NULL);
  LOOM_ASSERT_OK(thread.status);
  loom__registration_journal_exempt_end();
  LOOM_ASSERT_OK(register_simple(registry, "JournalledAgain"));
  loom__registration_journal_swap(previous);
  assert_int_equal(journal.count, 3);
  loom__registration_journal_rollback(&journal);
  loom__registration_journal_deinitialize(&journal);
  static const char* const kKept[] = {"ExemptOuter", "ExemptInner",
                                      "ExemptOuterAgain"};
  static const char* const kGone[] = {"Journalled", "JournalThread",
                                      "JournalledAgain"};
  for (size_t i = 0; i < COUNT_OF(kKept); ++i) {
    assert_non_null(loom_op_registry_find(registry, kKept[i]));
    assert_null(loom_op_registry_find(registry, kGone[i]));
  }
  assert_int_equal(loom_op_registry_list(registry, NULL, 0), 3);
  loom_op_registry_destroy(registry);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lookup_returns_the_registered_definition),
      cmocka_unit_test(unregistered_ops_are_freed_unless_handed_out),
      cmocka_unit_test(reregistered_names_keep_every_handed_out_definition),
      cmocka_unit_test(lookup_of_an_unknown_op_is_not_found),
      cmocka_unit_test(lookup_rejects_null_arguments),
      cmocka_unit_test(list_returns_names_in_sorted_order),
      cmocka_unit_test(list_with_a_small_capacity_writes_the_first_names),
      cmocka_unit_test(list_of_an_empty_registry_is_empty),
      cmocka_unit_test(list_without_memory_still_lists_sorted_names),
      cmocka_unit_test(unregister_removes_the_op_but_keeps_its_definition),
      cmocka_unit_test(unregistered_name_can_be_registered_again),
      cmocka_unit_test(unregister_of_an_unknown_op_is_not_found),
      cmocka_unit_test(unregister_rejects_null_arguments),
      cmocka_unit_test(create_rejects_a_null_out_pointer),
      cmocka_unit_test(register_rejects_null_and_still_consumes_the_builder),
      cmocka_unit_test(global_registry_is_a_singleton),
      cmocka_unit_test(global_registry_is_shared_by_threads),
      cmocka_unit_test(separate_registries_are_independent),
      cmocka_unit_test(concurrent_registration_and_lookup_see_whole_ops),
      cmocka_unit_test(concurrent_registration_of_one_name_succeeds_once),
      cmocka_unit_test(exempt_registrations_survive_the_rollback),
      cmocka_unit_test(every_allocation_failure_is_reported_without_leaks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
