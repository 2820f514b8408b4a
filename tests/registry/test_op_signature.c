// Binding op definitions to invocations: attr inference and completion,
// flattened argument types, argument ranges.

#include "loom/op_signature.h"
#include "test_support.h"

static loom_op_registry_t* g_registry;

static const loom_op_def_t* define(const char* name, const char* const* attrs,
                                   const char* const* inputs,
                                   const char* const* outputs) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  for (; attrs && *attrs; ++attrs) {
    LOOM_ASSERT_OK(loom_op_def_builder_add_attr(builder, *attrs));
  }
  for (; inputs && *inputs; ++inputs) {
    LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, *inputs));
  }
  for (; outputs && *outputs; ++outputs) {
    LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, *outputs));
  }
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  return loom_op_registry_find(g_registry, name);
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &g_registry));
  static const char* kAddAttrs[] = {"T: {float, int32, int64}", NULL};
  static const char* kAddInputs[] = {"x: T", "y: T", NULL};
  static const char* kAddOutputs[] = {"z: T", NULL};
  define("Add", kAddAttrs, kAddInputs, kAddOutputs);
  static const char* kAddNAttrs[] = {"N: int", "T: type", NULL};
  static const char* kAddNInputs[] = {"inputs: N * T", NULL};
  static const char* kAddNOutputs[] = {"sum: T", NULL};
  define("AddN", kAddNAttrs, kAddNInputs, kAddNOutputs);
  static const char* kListAttrs[] = {"Tin: list(type)", "Tout: list(type)",
                                     "scale: float = 2", NULL};
  static const char* kListInputs[] = {"args: Tin", "flag: bool", NULL};
  static const char* kListOutputs[] = {"results: Tout", NULL};
  define("Call", kListAttrs, kListInputs, kListOutputs);
  static const char* kTwoAttrs[] = {"N: int", "M: int", NULL};
  static const char* kTwoInputs[] = {"a: N * float", "b: M * float", NULL};
  define("TwoVariadic", kTwoAttrs, kTwoInputs, NULL);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_op_registry_destroy(g_registry);
  return 0;
}

static loom_op_attrs_t new_attrs(void) {
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  return attrs;
}

static void type_attr_is_inferred_from_inputs(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Add");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t inputs[2] = {LOOM_DTYPE_INT64, LOOM_DTYPE_INT64};
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, inputs, 2, &attrs));
  loom_dtype_t t;
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(&attrs, "T", &t));
  assert_int_equal(t, LOOM_DTYPE_INT64);
  loom_op_attrs_deinitialize(&attrs);
}

static void inputs_sharing_an_attr_must_agree(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Add");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t inputs[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32};
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, inputs, 2, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Add': input 1 ('y') has dtype int32 but attr 'T' "
                     "is float");
  loom_op_attrs_deinitialize(&attrs);
  attrs = new_attrs();
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_INT32));
  loom_dtype_t floats[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, floats, 2, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "input 0 ('x') has dtype float but attr 'T' is int32");
  loom_op_attrs_deinitialize(&attrs);
}

static void inferred_type_must_be_allowed(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Add");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t inputs[2] = {LOOM_DTYPE_BOOL, LOOM_DTYPE_BOOL};
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, inputs, 2, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'T' of bool is not in the list of allowed "
                     "values: float, int32, int64");
  loom_op_attrs_deinitialize(&attrs);
}

static void length_attr_is_inferred(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "AddN");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t inputs[3] = {LOOM_DTYPE_DOUBLE, LOOM_DTYPE_DOUBLE,
                            LOOM_DTYPE_DOUBLE};
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, inputs, 3, &attrs));
  int64_t n = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_i64(&attrs, "N", &n));
  assert_int_equal(n, 3);
  loom_dtype_t outputs[1];
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_op_def_flat_types(op, &attrs, true, outputs, 1, &count));
  assert_int_equal(count, 1);
  assert_int_equal(outputs[0], LOOM_DTYPE_DOUBLE);
  int32_t start = -1, stop = -1;
  LOOM_ASSERT_OK(
      loom_op_def_arg_range(op, &attrs, false, "inputs", &start, &stop));
  assert_int_equal(start, 0);
  assert_int_equal(stop, 3);
  loom_op_attrs_deinitialize(&attrs);
}

static void zero_length_violates_the_implicit_minimum(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "AddN");
  loom_op_attrs_t attrs = new_attrs();
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, NULL, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'N' (\"N: int\") is not set and has no default");
  loom_op_attrs_deinitialize(&attrs);
  attrs = new_attrs();
  loom_dtype_t none[1];
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, none, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'N' of 0 must be at least minimum 1");
  loom_op_attrs_deinitialize(&attrs);
}

static void list_attrs_and_defaults_complete(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Call");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t tout[2] = {LOOM_DTYPE_INT8, LOOM_DTYPE_HALF};
  LOOM_ASSERT_OK(
      loom_op_attrs_set_list(&attrs, "Tout", LOOM_ATTR_KIND_DTYPE, tout, 2));
  loom_dtype_t inputs[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT32,
                            LOOM_DTYPE_BOOL};
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, inputs, 3, &attrs));
  loom_attr_value_t tin;
  assert_true(loom_op_attrs_get(&attrs, "Tin", &tin));
  assert_int_equal(tin.count, 2);
  assert_int_equal(((const loom_dtype_t*)tin.u.list)[1], LOOM_DTYPE_INT32);
  float scale = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_f32(&attrs, "scale", &scale));
  assert_true(scale == 2.0f);
  loom_dtype_t flat[4];
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_op_def_flat_types(op, &attrs, false, flat, 4, &count));
  assert_int_equal(count, 3);
  assert_int_equal(flat[2], LOOM_DTYPE_BOOL);
  LOOM_ASSERT_OK(loom_op_def_flat_types(op, &attrs, true, flat, 1, &count));
  assert_int_equal(count, 2);  // the total, beyond the capacity
  assert_int_equal(flat[0], LOOM_DTYPE_INT8);
  int32_t start = 0, stop = 0;
  LOOM_ASSERT_OK(
      loom_op_def_arg_range(op, &attrs, false, "flag", &start, &stop));
  assert_int_equal(start, 2);
  assert_int_equal(stop, 3);
  LOOM_ASSERT_STATUS(
      loom_op_def_arg_range(op, &attrs, false, "nope", &start, &stop),
      LOOM_STATUS_NOT_FOUND, "Op 'Call' has no input named 'nope'");
  loom_op_attrs_deinitialize(&attrs);
}

static void wrong_input_counts_are_reported(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Add");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t three[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT,
                           LOOM_DTYPE_FLOAT};
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, three, 3, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Add' expects 2 inputs, got 3");
  loom_op_attrs_deinitialize(&attrs);
  attrs = new_attrs();
  const loom_op_def_t* two = loom_op_registry_find(g_registry, "TwoVariadic");
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(two, three, 3, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "cannot infer the lengths of 2 variadic inputs from 3 "
                     "tensors");
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "N", 1));
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(two, three, 3, &attrs));
  int64_t m = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_i64(&attrs, "M", &m));
  assert_int_equal(m, 2);
  loom_op_attrs_deinitialize(&attrs);
}

static void unknown_lengths_block_flattening(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "AddN");
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t flat[1];
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_op_def_flat_types(op, &attrs, false, flat, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'AddN': the length of input 'inputs' is unknown (attr "
                     "'N' is not set)");
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "N", 2));
  LOOM_ASSERT_STATUS(loom_op_def_flat_types(op, &attrs, false, flat, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the dtype of input 'inputs' is unknown (attr 'T' is not "
                     "set)");
  loom_op_attrs_deinitialize(&attrs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(type_attr_is_inferred_from_inputs),
      cmocka_unit_test(inputs_sharing_an_attr_must_agree),
      cmocka_unit_test(inferred_type_must_be_allowed),
      cmocka_unit_test(length_attr_is_inferred),
      cmocka_unit_test(zero_length_violates_the_implicit_minimum),
      cmocka_unit_test(list_attrs_and_defaults_complete),
      cmocka_unit_test(wrong_input_counts_are_reported),
      cmocka_unit_test(unknown_lengths_block_flattening),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
