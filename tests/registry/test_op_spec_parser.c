// The op spec mini-language: every attr and argument form, defaults in
// TensorFlow's text form, and precise errors for malformed specs.

#include <math.h>

#include "loom/op_def.h"
#include "test_support.h"

static loom_op_registry_t* g_registry;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &g_registry));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_op_registry_destroy(g_registry);
  return 0;
}

typedef struct spec_t {
  const char* kind;  // "attr", "input", "output"
  const char* text;
} spec_t;

// Builds and registers an op named `name` from `specs`; returns the status.
static loom_status_t build(const char* name, const spec_t* specs, int count) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  for (int i = 0; i < count; ++i) {
    loom_status_t status;
    if (strcmp(specs[i].kind, "attr") == 0) {
      status = loom_op_def_builder_add_attr(builder, specs[i].text);
    } else if (strcmp(specs[i].kind, "input") == 0) {
      status = loom_op_def_builder_add_input(builder, specs[i].text);
    } else {
      status = loom_op_def_builder_add_output(builder, specs[i].text);
    }
    if (status) {
      loom_op_def_builder_destroy(builder);
      return status;
    }
  }
  return loom_op_registry_register(g_registry, builder);
}

static const loom_op_def_t* build_ok(const char* name, const spec_t* specs,
                                     int count) {
  LOOM_ASSERT_OK(build(name, specs, count));
  const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
  assert_non_null(op);
  return op;
}

// Registers a one-attr op and returns that attr.
static const loom_attr_def_t* attr_of(const char* name, const char* spec) {
  spec_t specs[1] = {{"attr", spec}};
  const loom_op_def_t* op = build_ok(name, specs, 1);
  assert_int_equal(op->num_attrs, 1);
  return &op->attrs[0];
}

static loom_attr_value_t default_of(const char* op_name, const char* attr) {
  const loom_op_def_t* op = loom_op_registry_find(g_registry, op_name);
  loom_attr_value_t value;
  assert_true(loom_op_attrs_get(op->defaults, attr, &value));
  return value;
}

static void every_attr_type_parses(void** state) {
  (void)state;
  static const struct {
    const char* spec;
    loom_attr_kind_t kind;
    bool is_list;
  } kCases[] = {
      {"a: string", LOOM_ATTR_KIND_STRING, false},
      {"a: int", LOOM_ATTR_KIND_I64, false},
      {"a: float", LOOM_ATTR_KIND_F32, false},
      {"a: bool", LOOM_ATTR_KIND_BOOL, false},
      {"a: type", LOOM_ATTR_KIND_DTYPE, false},
      {"a: shape", LOOM_ATTR_KIND_SHAPE, false},
      {"a: tensor", LOOM_ATTR_KIND_TENSOR, false},
      {"a: func", LOOM_ATTR_KIND_FUNC, false},
      {"a: list(string)", LOOM_ATTR_KIND_STRING, true},
      {"a: list(int)", LOOM_ATTR_KIND_I64, true},
      {"a: list(float)", LOOM_ATTR_KIND_F32, true},
      {"a: list(bool)", LOOM_ATTR_KIND_BOOL, true},
      {"a: list(type)", LOOM_ATTR_KIND_DTYPE, true},
      {"a: list(shape)", LOOM_ATTR_KIND_SHAPE, true},
      {"a: list(tensor)", LOOM_ATTR_KIND_TENSOR, true},
      {"a: list(func)", LOOM_ATTR_KIND_FUNC, true},
      {"  a  :  list ( int )  ", LOOM_ATTR_KIND_I64, true},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "AttrType%zu", i);
    const loom_attr_def_t* attr = attr_of(name, kCases[i].spec);
    assert_string_equal(attr->name, "a");
    assert_int_equal(attr->kind, kCases[i].kind);
    assert_int_equal(attr->is_list, kCases[i].is_list);
    assert_false(attr->has_default);
    assert_false(attr->has_minimum);
    assert_string_equal(attr->spec, kCases[i].spec);
  }
}

static void allowed_type_sets_and_groups(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("TypeSet", "T: {float, int32}");
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_DTYPE);
  assert_int_equal(attr->num_allowed_types, 2);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_FLOAT));
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_INT32));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_INT64));

  static const loom_dtype_t kReal[] = {
      LOOM_DTYPE_FLOAT,  LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
      LOOM_DTYPE_INT64,  LOOM_DTYPE_UINT8,  LOOM_DTYPE_INT16,
      LOOM_DTYPE_INT8,   LOOM_DTYPE_UINT16, LOOM_DTYPE_HALF,
      LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64, LOOM_DTYPE_BFLOAT16};
  attr = attr_of("RealGroup", "T: realnumbertype");
  assert_int_equal(attr->num_allowed_types, 12);
  for (size_t i = 0; i < 12; ++i) {
    assert_true(loom_attr_def_allows_type(attr, kReal[i]));
  }
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_COMPLEX64));

  static const loom_dtype_t kNumber[] = {
      LOOM_DTYPE_FLOAT,      LOOM_DTYPE_DOUBLE,  LOOM_DTYPE_INT64,
      LOOM_DTYPE_INT32,      LOOM_DTYPE_UINT8,   LOOM_DTYPE_UINT16,
      LOOM_DTYPE_INT16,      LOOM_DTYPE_INT8,    LOOM_DTYPE_COMPLEX64,
      LOOM_DTYPE_COMPLEX128, LOOM_DTYPE_QINT8,   LOOM_DTYPE_QUINT8,
      LOOM_DTYPE_QINT32,     LOOM_DTYPE_HALF,    LOOM_DTYPE_UINT32,
      LOOM_DTYPE_UINT64,     LOOM_DTYPE_BFLOAT16};
  attr = attr_of("NumberGroup", "T: numbertype");
  assert_int_equal(attr->num_allowed_types, 17);
  for (size_t i = 0; i < 17; ++i) {
    assert_true(loom_attr_def_allows_type(attr, kNumber[i]));
  }
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_BOOL));

  attr = attr_of("QuantizedGroup", "T: quantizedtype");
  assert_int_equal(attr->num_allowed_types, 5);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_QINT16));
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_QUINT16));

  attr = attr_of("GroupInSet", "T: {quantizedtype, string, bool}");
  assert_int_equal(attr->num_allowed_types, 7);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_STRING));

  attr = attr_of("ListOfSet", "T: list({float, int64})");
  assert_true(attr->is_list);
  assert_int_equal(attr->num_allowed_types, 2);
  attr = attr_of("ListOfGroup", "T: list(realnumbertype)");
  assert_int_equal(attr->num_allowed_types, 12);
}

static void allowed_string_sets(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("StringSet", "padding: {\"SAME\", 'VALID', \"a\\nb\"}");
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_STRING);
  assert_int_equal(attr->num_allowed_strings, 3);
  assert_string_equal(attr->allowed_strings[0].data, "SAME");
  assert_string_equal(attr->allowed_strings[1].data, "VALID");
  assert_string_equal(attr->allowed_strings[2].data, "a\nb");
}

static void minimums_are_recorded(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("IntMin", "N: int >= 2");
  assert_true(attr->has_minimum);
  assert_int_equal(attr->minimum, 2);
  attr = attr_of("NegativeMin", "axis: int >= -1");
  assert_int_equal(attr->minimum, -1);
  attr = attr_of("ListMin", "shape: list(int) >= 1");
  assert_true(attr->is_list);
  assert_int_equal(attr->minimum, 1);
}

static void scalar_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr", "i: int = -42"},
      {"attr", "f: float = 1e-3"},
      {"attr", "g: float = 2.5"},
      {"attr", "h: float = -inf"},
      {"attr", "n: float = nan"},
      {"attr", "b: bool = true"},
      {"attr", "c: bool = false"},
      {"attr", "s: string = \"tab\\there \\\"q\\\" \\x41\\101\""},
      {"attr", "q: string = 'single'"},
      {"attr", "t: type = DT_FLOAT"},
      {"attr", "u: type = int64"},
      {"attr", "fn: func = { name: \"body\" }"},
  };
  build_ok("ScalarDefaults", kSpecs, sizeof(kSpecs) / sizeof(kSpecs[0]));
  assert_int_equal(default_of("ScalarDefaults", "i").u.i64, -42);
  assert_true(default_of("ScalarDefaults", "f").u.f32 == 1e-3f);
  assert_true(default_of("ScalarDefaults", "g").u.f32 == 2.5f);
  assert_true(isinf(default_of("ScalarDefaults", "h").u.f32));
  assert_true(default_of("ScalarDefaults", "h").u.f32 < 0);
  assert_true(isnan(default_of("ScalarDefaults", "n").u.f32));
  assert_true(default_of("ScalarDefaults", "b").u.b);
  assert_false(default_of("ScalarDefaults", "c").u.b);
  assert_string_equal(default_of("ScalarDefaults", "s").u.string.data,
                      "tab\there \"q\" AA");
  assert_string_equal(default_of("ScalarDefaults", "q").u.string.data,
                      "single");
  assert_int_equal(default_of("ScalarDefaults", "t").u.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(default_of("ScalarDefaults", "u").u.dtype, LOOM_DTYPE_INT64);
  loom_attr_value_t fn = default_of("ScalarDefaults", "fn");
  assert_int_equal(fn.kind, LOOM_ATTR_KIND_FUNC);
  assert_string_equal(fn.u.string.data, "body");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "ScalarDefaults");
  assert_true(loom_op_def_find_attr(op, "i")->has_default);
}

static void shape_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr", "a: shape = { dim { size: 2 } dim { size: -1 } }"},
      {"attr", "b: shape = { unknown_rank: true }"},
      {"attr", "c: shape = {}"},
      {"attr", "d: shape = [2, 3]"},
      {"attr", "e: shape = { dim: { size: 4 name: \"batch\" }, dim { } }"},
  };
  build_ok("ShapeDefaults", kSpecs, sizeof(kSpecs) / sizeof(kSpecs[0]));
  loom_attr_value_t a = default_of("ShapeDefaults", "a");
  assert_int_equal(a.u.shape.rank, 2);
  assert_int_equal(a.u.shape.dims[0], 2);
  assert_int_equal(a.u.shape.dims[1], -1);
  assert_int_equal(default_of("ShapeDefaults", "b").u.shape.rank, -1);
  assert_int_equal(default_of("ShapeDefaults", "c").u.shape.rank, 0);
  loom_attr_value_t d = default_of("ShapeDefaults", "d");
  assert_int_equal(d.u.shape.rank, 2);
  assert_int_equal(d.u.shape.dims[1], 3);
  loom_attr_value_t e = default_of("ShapeDefaults", "e");
  assert_int_equal(e.u.shape.rank, 2);
  assert_int_equal(e.u.shape.dims[0], 4);
  assert_int_equal(e.u.shape.dims[1], 0);
}

static void tensor_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr",
       "one: tensor = { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } "
       "float_val: 1.5 }"},
      {"attr",
       "each: tensor = { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
       "int_val: 7 int_val: -8 }"},
      {"attr", "zero: tensor = { dtype: DT_DOUBLE }"},
  };
  build_ok("TensorDefaults", kSpecs, sizeof(kSpecs) / sizeof(kSpecs[0]));
  loom_tensor_t* one = default_of("TensorDefaults", "one").u.tensor;
  assert_int_equal(loom_tensor_num_elements(one), 3);
  for (int i = 0; i < 3; ++i) {
    assert_true(((float*)loom_tensor_data(one))[i] == 1.5f);
  }
  loom_tensor_t* each = default_of("TensorDefaults", "each").u.tensor;
  assert_int_equal(((int32_t*)loom_tensor_data(each))[0], 7);
  assert_int_equal(((int32_t*)loom_tensor_data(each))[1], -8);
  loom_tensor_t* zero = default_of("TensorDefaults", "zero").u.tensor;
  assert_int_equal(loom_tensor_num_elements(zero), 1);
  assert_true(((double*)loom_tensor_data(zero))[0] == 0.0);
}

static void list_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr", "ints: list(int) = [1, -2, 3]"},
      {"attr", "empty: list(int) = []"},
      {"attr", "types: list(type) = [DT_INT32, float]"},
      {"attr", "strings: list(string) = [\"a\", 'bc']"},
      {"attr", "floats: list(float) = [0.5, 1]"},
      {"attr", "bools: list(bool) = [true, false]"},
      {"attr", "shapes: list(shape) = [[1], { unknown_rank: true }]"},
  };
  build_ok("ListDefaults", kSpecs, sizeof(kSpecs) / sizeof(kSpecs[0]));
  loom_attr_value_t ints = default_of("ListDefaults", "ints");
  assert_true(ints.is_list);
  assert_int_equal(ints.count, 3);
  assert_int_equal(((const int64_t*)ints.u.list)[1], -2);
  assert_int_equal(default_of("ListDefaults", "empty").count, 0);
  loom_attr_value_t types = default_of("ListDefaults", "types");
  assert_int_equal(((const loom_dtype_t*)types.u.list)[1], LOOM_DTYPE_FLOAT);
  loom_attr_value_t strings = default_of("ListDefaults", "strings");
  loom_attr_value_t element;
  LOOM_ASSERT_OK(loom_attr_value_list_element(&strings, 1, &element));
  assert_string_equal(element.u.string.data, "bc");
  loom_attr_value_t floats = default_of("ListDefaults", "floats");
  assert_true(((const float*)floats.u.list)[1] == 1.0f);
  loom_attr_value_t bools = default_of("ListDefaults", "bools");
  assert_true(((const bool*)bools.u.list)[0]);
  loom_attr_value_t shapes = default_of("ListDefaults", "shapes");
  LOOM_ASSERT_OK(loom_attr_value_list_element(&shapes, 1, &element));
  assert_int_equal(element.u.shape.rank, -1);
}

static void argument_forms_resolve(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr", "T: type"},
      {"attr", "N: int"},
      {"attr", "Tlist: list(type)"},
      {"input", "x: T"},
      {"input", "y: float"},
      {"input", "many: N * T"},
      {"input", "fixed_many: N * int32"},
      {"input", "mixed: Tlist"},
      {"input", "ref: Ref(T)"},
      {"output", "z: T"},
  };
  const loom_op_def_t* op =
      build_ok("ArgForms", kSpecs, sizeof(kSpecs) / sizeof(kSpecs[0]));
  assert_int_equal(op->num_inputs, 6);
  assert_int_equal(op->num_outputs, 1);
  const loom_arg_def_t* in = op->inputs;
  assert_string_equal(in[0].type_attr, "T");
  assert_int_equal(in[1].dtype, LOOM_DTYPE_FLOAT);
  assert_null(in[1].type_attr);
  assert_string_equal(in[2].number_attr, "N");
  assert_string_equal(in[2].type_attr, "T");
  assert_string_equal(in[3].number_attr, "N");
  assert_int_equal(in[3].dtype, LOOM_DTYPE_INT32);
  assert_string_equal(in[4].type_list_attr, "Tlist");
  assert_null(in[4].type_attr);
  assert_true(in[5].is_ref);
  assert_string_equal(in[5].type_attr, "T");
  assert_int_equal(loom_op_def_find_input(op, "mixed"), 4);
  assert_int_equal(loom_op_def_find_output(op, "z"), 0);
  assert_int_equal(loom_op_def_find_input(op, "z"), -1);
  // Attrs used as lengths get a minimum of 1.
  assert_true(loom_op_def_find_attr(op, "N")->has_minimum);
  assert_int_equal(loom_op_def_find_attr(op, "N")->minimum, 1);
  assert_int_equal(loom_op_def_find_attr(op, "Tlist")->minimum, 1);
  assert_false(loom_op_def_find_attr(op, "T")->has_minimum);
  assert_false(op->is_stateful);
}

static void explicit_minimum_is_kept(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {"attr", "N: int >= 0"},
      {"attr", "T: type"},
      {"input", "x: N * T"},
  };
  const loom_op_def_t* op = build_ok("ExplicitMinimum", kSpecs, 3);
  assert_int_equal(loom_op_def_find_attr(op, "N")->minimum, 0);
}

static void resource_input_makes_the_op_stateful(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{"input", "handle: resource"}};
  const loom_op_def_t* op = build_ok("ReadsResource", kSpecs, 1);
  assert_true(op->is_stateful);
  assert_int_equal(op->inputs[0].dtype, LOOM_DTYPE_RESOURCE);
}

static void properties_honour_true_and_false(void** state) {
  (void)state;
  for (int value = 0; value <= 1; ++value) {
    char name[32];
    snprintf(name, sizeof(name), "Properties%d", value);
    loom_op_def_builder_t* builder = NULL;
    LOOM_ASSERT_OK(
        loom_op_def_builder_create(loom_allocator_system(), name, &builder));
    loom_op_def_builder_set_is_commutative(builder, value);
    loom_op_def_builder_set_is_aggregate(builder, value);
    loom_op_def_builder_set_is_stateful(builder, value);
    loom_op_def_builder_set_allows_uninitialized_input(builder, value);
    LOOM_ASSERT_OK(loom_op_def_builder_set_deprecated(builder, 7, "use B"));
    LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
    const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
    assert_int_equal(op->is_commutative, value);
    assert_int_equal(op->is_aggregate, value);
    assert_int_equal(op->is_stateful, value);
    assert_int_equal(op->allows_uninitialized_input, value);
    assert_int_equal(op->deprecation_version, 7);
    assert_string_equal(op->deprecation_explanation, "use B");
  }
}

static void deprecation_needs_a_positive_version(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "Deprecated", &builder));
  LOOM_ASSERT_STATUS(loom_op_def_builder_set_deprecated(builder, 0, "x"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Deprecated': deprecation version 0 must be positive");
  loom_op_def_builder_destroy(builder);
}

//===----------------------------------------------------------------------===//
// Malformed specs
//===----------------------------------------------------------------------===//

typedef struct bad_spec_t {
  const char* kind;
  const char* spec;
  const char* message;
} bad_spec_t;

static void malformed_specs_name_the_spec_and_column(void** state) {
  (void)state;
  static const bad_spec_t kCases[] = {
      {"attr", "T: {float, int33}",
       "invalid attr spec \"T: {float, int33}\": unknown type 'int33' at "
       "column 12"},
      {"attr", "T type",
       "expected ':' after the attr name, found 't' at "
       "column 3"},
      {"attr", "T: blob", "unknown attr type 'blob' at column 4"},
      {"attr", "T: {}", "an allowed-value set must not be empty at column 5"},
      {"attr", "s: string = \"open", "unterminated string at column 13"},
      {"attr", "s: string = \"bad \\q\"", "invalid escape '\\q' at column 18"},
      {"attr", "f: float >= 2", "only int and list attrs can have a minimum"},
      {"attr", "a: int = 3 4", "unexpected '4' at column 12"},
      {"attr", "a: list(list(int))",
       "lists of lists are not supported at "
       "column 9"},
      {"attr", "a: int = 99999999999999999999",
       "integer "
       "'99999999999999999999' out of "
       "range"},
      {"attr", "a: int = x", "expected an integer, found 'x' at column 10"},
      {"attr", "a: bool = yes", "expected true or false at column 11"},
      {"attr", "a: list(int) = [1, 2",
       "expected ']' to close the list "
       "default, found the end at column 21"},
      {"attr", "a: list(int) >= -1", "a list length minimum must be >= 0"},
      {"attr", "a: {\"x\", float}",
       "expected a quoted string in a set of "
       "strings at column 10"},
      {"attr", "", "expected an attr name, found the end at column 1"},
      {"attr", "a: tensor = { dtype: DT_STRING }",
       "a tensor default needs a dtype of float, double, an integer type or "
       "bool"},
      {"input", "X: float",
       "argument names use lower-case letters, digits "
       "and '_', starting with a letter at column 1"},
      {"input", "x: float * T",
       "the length in 'N * T' must be an int attr, "
       "not a type"},
      {"input", "x: Ref(T",
       "expected ')' to close 'Ref(', found the end at "
       "column 9"},
      {"input", "x:",
       "expected a type or attr name, found the end at column "
       "3"},
      {"output", "y: T extra", "unexpected 'extra' at column 6"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "Malformed%zu", i);
    spec_t spec = {kCases[i].kind, kCases[i].spec};
    loom_status_t status = build(name, &spec, 1);
    if (!status || !strstr(loom_status_message(status), kCases[i].message) ||
        !strstr(loom_status_message(status), name)) {
      fail_msg("spec \"%s\": got '%s', expected '%s'", kCases[i].spec,
               loom_status_message(status), kCases[i].message);
    }
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    loom_status_free(status);
    assert_null(loom_op_registry_find(g_registry, name));
  }
}

static void inconsistent_definitions_are_rejected_at_registration(
    void** state) {
  (void)state;
  static const struct {
    spec_t specs[3];
    int count;
    const char* message;
  } kCases[] = {
      {{{"input", "x: T"}},
       1,
       "input \"x: T\": 'T' is neither a type nor a defined attr"},
      {{{"attr", "T: int"}, {"input", "x: T"}},
       2,
       "attr 'T' is used as a type, so it must be 'type' or 'list(type)', "
       "not \"T: int\""},
      {{{"attr", "N: type"}, {"input", "x: N * float"}},
       2,
       "the length attr 'N' must be an int attr, not \"N: type\""},
      {{{"input", "x: N * float"}}, 1, "the length attr 'N' is not defined"},
      {{{"attr", "L: list(type)"}, {"attr", "N: int"}, {"input", "x: N * L"}},
       3,
       "a list(type) attr ('L') cannot be repeated by a length"},
      {{{"attr", "x: int"}, {"input", "x: float"}},
       2,
       "duplicate name 'x' (in \"x: float\")"},
      {{{"input", "x: float"}, {"output", "x: float"}},
       2,
       "duplicate name 'x'"},
      {{{"attr", "T: {float} = DT_INT32"}},
       1,
       "value for attr 'T' of int32 is not in the list of allowed values: "
       "float"},
      {{{"attr", "N: int >= 2 = 1"}},
       1,
       "value for attr 'N' of 1 must be at least minimum 2"},
      {{{"attr", "N: int = 0"}, {"input", "x: N * float"}},
       2,
       "value for attr 'N' of 0 must be at least minimum 1"},
      {{{"attr", "p: {'A', 'B'} = 'C'"}},
       1,
       "value for attr 'p' of \"C\" is not in the list of allowed values"},
      {{{"attr", "N: int >= -3"}, {"input", "x: N * float"}},
       2,
       "'N' is used as a length, so its minimum must be >= 0"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "Inconsistent%zu", i);
    loom_status_t status = build(name, kCases[i].specs, kCases[i].count);
    if (!status || !strstr(loom_status_message(status), kCases[i].message)) {
      fail_msg("case %zu: got '%s', expected '%s'", i,
               loom_status_message(status), kCases[i].message);
    }
    assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
    loom_status_free(status);
    assert_null(loom_op_registry_find(g_registry, name));
  }
}

static void registering_a_name_twice_already_exists(void** state) {
  (void)state;
  LOOM_ASSERT_OK(build("Twice", NULL, 0));
  LOOM_ASSERT_STATUS(build("Twice", NULL, 0), LOOM_STATUS_ALREADY_EXISTS,
                     "Op 'Twice' is already registered");
}

static void invalid_op_names_are_rejected(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), "9Lives", &builder),
      LOOM_STATUS_INVALID_ARGUMENT, "invalid op name '9Lives'");
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), "a b", &builder),
      LOOM_STATUS_INVALID_ARGUMENT, "invalid op name 'a b'");
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), "", &builder),
      LOOM_STATUS_INVALID_ARGUMENT, "invalid op name ''");
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), NULL, &builder),
      LOOM_STATUS_INVALID_ARGUMENT, "name is NULL");
  // Dialect-prefixed names, as TFRT programs use them, are fine.
  LOOM_ASSERT_OK(build("tfrt_test.add", NULL, 0));
}

static void check_value_reports_kind_mismatches(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckKind", "k: list(int)");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckKind");
  loom_attr_value_t value;
  memset(&value, 0, sizeof(value));
  value.kind = LOOM_ATTR_KIND_F32;
  value.count = 1;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckKind': attr 'k' expects a list(int) value, got "
                     "float");
  int32_t narrow[2] = {1, 2};
  value.kind = LOOM_ATTR_KIND_I32;  // int accepts Loom's i32
  value.is_list = true;
  value.count = 2;
  value.u.list = narrow;
  LOOM_ASSERT_OK(loom_attr_def_check_value(op, attr, &value));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_attr_type_parses),
      cmocka_unit_test(allowed_type_sets_and_groups),
      cmocka_unit_test(allowed_string_sets),
      cmocka_unit_test(minimums_are_recorded),
      cmocka_unit_test(scalar_defaults_parse),
      cmocka_unit_test(shape_defaults_parse),
      cmocka_unit_test(tensor_defaults_parse),
      cmocka_unit_test(list_defaults_parse),
      cmocka_unit_test(argument_forms_resolve),
      cmocka_unit_test(explicit_minimum_is_kept),
      cmocka_unit_test(resource_input_makes_the_op_stateful),
      cmocka_unit_test(properties_honour_true_and_false),
      cmocka_unit_test(deprecation_needs_a_positive_version),
      cmocka_unit_test(malformed_specs_name_the_spec_and_column),
      cmocka_unit_test(inconsistent_definitions_are_rejected_at_registration),
      cmocka_unit_test(registering_a_name_twice_already_exists),
      cmocka_unit_test(invalid_op_names_are_rejected),
      cmocka_unit_test(check_value_reports_kind_mismatches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
