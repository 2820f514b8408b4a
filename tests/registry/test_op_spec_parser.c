// The op spec mini-language, driven through the public builder and a
// private registry: every attr type and argument form, defaults in
// TensorFlow's text form, registration-time validation, op properties, and
// precise errors (the spec quoted, the column of the problem) for malformed
// specs.

#include <math.h>
#include <stdlib.h>

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

#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

typedef enum spec_kind_t { ATTR, INPUT, OUTPUT } spec_kind_t;

typedef struct spec_t {
  spec_kind_t kind;
  const char* text;
} spec_t;

static loom_status_t add_spec(loom_op_def_builder_t* builder, spec_kind_t kind,
                              const char* text) {
  switch (kind) {
    case ATTR:
      return loom_op_def_builder_add_attr(builder, text);
    case INPUT:
      return loom_op_def_builder_add_input(builder, text);
    default:
      return loom_op_def_builder_add_output(builder, text);
  }
}

// Builds op `name` from `specs` and registers it in g_registry.
static loom_status_t build(const char* name, const spec_t* specs,
                           size_t count) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(loom_allocator_system(), name, &builder));
  for (size_t i = 0; i < count; ++i) {
    loom_status_t status = add_spec(builder, specs[i].kind, specs[i].text);
    if (status) {
      loom_op_def_builder_destroy(builder);
      return status;
    }
  }
  return loom_op_registry_register(g_registry, builder);
}

static const loom_op_def_t* build_ok(const char* name, const spec_t* specs,
                                     size_t count) {
  LOOM_ASSERT_OK(build(name, specs, count));
  const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
  assert_non_null(op);
  return op;
}

// Registers op `name` with the single attr `spec` and returns that attr.
static const loom_attr_def_t* attr_of(const char* name, const char* spec) {
  spec_t specs[1] = {{ATTR, spec}};
  const loom_op_def_t* op = build_ok(name, specs, 1);
  assert_int_equal(op->num_attrs, 1);
  return &op->attrs[0];
}

// The default of `attr` in registered op `op_name` (a view into the op).
static loom_attr_value_t default_of(const char* op_name, const char* attr) {
  const loom_op_def_t* op = loom_op_registry_find(g_registry, op_name);
  assert_non_null(op);
  assert_true(loom_op_def_find_attr(op, attr)->has_default);
  loom_attr_value_t value;
  if (!loom_op_attrs_get(op->defaults, attr, &value)) {
    fail_msg("op '%s' has no default for attr '%s'", op_name, attr);
  }
  return value;
}

static loom_attr_value_t element_of(const loom_attr_value_t* list,
                                    int64_t index) {
  loom_attr_value_t element;
  LOOM_ASSERT_OK(loom_attr_value_list_element(list, index, &element));
  return element;
}

// Asserts that `attr` allows exactly the types in `expected`.
static void assert_allowed_types(const loom_attr_def_t* attr,
                                 const loom_dtype_t* expected, size_t count) {
  assert_int_equal(attr->num_allowed_types, count);
  for (size_t i = 0; i < count; ++i) {
    if (!loom_attr_def_allows_type(attr, expected[i])) {
      fail_msg("'%s' does not allow %s", attr->spec,
               loom_dtype_name(expected[i]));
    }
  }
}

//===----------------------------------------------------------------------===//
// Attr types
//===----------------------------------------------------------------------===//

static void scalar_attr_types_parse_to_their_kinds(void** state) {
  (void)state;
  static const struct {
    const char* spec;
    loom_attr_kind_t kind;
  } kCases[] = {
      {"a: string", LOOM_ATTR_KIND_STRING}, {"a: int", LOOM_ATTR_KIND_I64},
      {"a: float", LOOM_ATTR_KIND_F32},     {"a: bool", LOOM_ATTR_KIND_BOOL},
      {"a: type", LOOM_ATTR_KIND_DTYPE},    {"a: shape", LOOM_ATTR_KIND_SHAPE},
      {"a: tensor", LOOM_ATTR_KIND_TENSOR}, {"a: func", LOOM_ATTR_KIND_FUNC},
  };
  for (size_t i = 0; i < COUNT_OF(kCases); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "ScalarType%zu", i);
    const loom_attr_def_t* attr = attr_of(name, kCases[i].spec);
    assert_string_equal(attr->name, "a");
    assert_int_equal(attr->kind, kCases[i].kind);
    assert_false(attr->is_list);
    assert_false(attr->has_default);
    assert_false(attr->has_minimum);
    assert_int_equal(attr->num_allowed_types, 0);
    assert_int_equal(attr->num_allowed_strings, 0);
    assert_string_equal(attr->spec, kCases[i].spec);
  }
}

static void list_attr_types_parse_to_lists_of_their_kinds(void** state) {
  (void)state;
  static const struct {
    const char* spec;
    loom_attr_kind_t kind;
  } kCases[] = {
      {"a: list(string)", LOOM_ATTR_KIND_STRING},
      {"a: list(int)", LOOM_ATTR_KIND_I64},
      {"a: list(float)", LOOM_ATTR_KIND_F32},
      {"a: list(bool)", LOOM_ATTR_KIND_BOOL},
      {"a: list(type)", LOOM_ATTR_KIND_DTYPE},
      {"a: list(shape)", LOOM_ATTR_KIND_SHAPE},
      {"a: list(tensor)", LOOM_ATTR_KIND_TENSOR},
      {"a: list(func)", LOOM_ATTR_KIND_FUNC},
  };
  for (size_t i = 0; i < COUNT_OF(kCases); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "ListType%zu", i);
    const loom_attr_def_t* attr = attr_of(name, kCases[i].spec);
    assert_int_equal(attr->kind, kCases[i].kind);
    assert_true(attr->is_list);
    assert_false(attr->has_minimum);
  }
}

static void whitespace_between_tokens_is_ignored(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("Spaced", "  a  :  list (  { float ,int32 } )  >=  2  ");
  assert_string_equal(attr->name, "a");
  assert_true(attr->is_list);
  assert_int_equal(attr->num_allowed_types, 2);
  assert_int_equal(attr->minimum, 2);
  assert_string_equal(attr->spec,
                      "  a  :  list (  { float ,int32 } )  >=  2  ");
}

static void allowed_type_set_keeps_its_types_in_order(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("TypeSet", "T: {float, int32}");
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_DTYPE);
  assert_false(attr->is_list);
  assert_int_equal(attr->num_allowed_types, 2);
  assert_int_equal(attr->allowed_types[0], LOOM_DTYPE_FLOAT);
  assert_int_equal(attr->allowed_types[1], LOOM_DTYPE_INT32);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_INT32));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_INT64));
}

static void allowed_type_set_accepts_enum_names_and_drops_repeats(
    void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("EnumSet", "T: {DT_HALF, bfloat16, half, DT_COMPLEX128}");
  assert_int_equal(attr->num_allowed_types, 3);
  assert_int_equal(attr->allowed_types[0], LOOM_DTYPE_HALF);
  assert_int_equal(attr->allowed_types[1], LOOM_DTYPE_BFLOAT16);
  assert_int_equal(attr->allowed_types[2], LOOM_DTYPE_COMPLEX128);
}

static void allowed_string_set_unescapes_both_quote_styles(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("StringSet", "padding: {\"SAME\", 'VALID', \"a\\nb\"}");
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_STRING);
  assert_int_equal(attr->num_allowed_types, 0);
  assert_int_equal(attr->num_allowed_strings, 3);
  assert_string_equal(attr->allowed_strings[0].data, "SAME");
  assert_int_equal(attr->allowed_strings[0].size, 4);
  assert_string_equal(attr->allowed_strings[1].data, "VALID");
  assert_string_equal(attr->allowed_strings[2].data, "a\nb");
  assert_int_equal(attr->allowed_strings[2].size, 3);
}

static void realnumbertype_has_tensorflows_members(void** state) {
  (void)state;
  static const loom_dtype_t kReal[] = {
      LOOM_DTYPE_FLOAT,  LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
      LOOM_DTYPE_INT64,  LOOM_DTYPE_UINT8,  LOOM_DTYPE_INT16,
      LOOM_DTYPE_INT8,   LOOM_DTYPE_UINT16, LOOM_DTYPE_HALF,
      LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64, LOOM_DTYPE_BFLOAT16};
  const loom_attr_def_t* attr = attr_of("RealGroup", "T: realnumbertype");
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_DTYPE);
  assert_allowed_types(attr, kReal, COUNT_OF(kReal));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_COMPLEX64));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_QINT8));
}

static void numbertype_has_tensorflows_members(void** state) {
  (void)state;
  static const loom_dtype_t kNumber[] = {
      LOOM_DTYPE_FLOAT,      LOOM_DTYPE_DOUBLE,  LOOM_DTYPE_INT64,
      LOOM_DTYPE_INT32,      LOOM_DTYPE_UINT8,   LOOM_DTYPE_UINT16,
      LOOM_DTYPE_INT16,      LOOM_DTYPE_INT8,    LOOM_DTYPE_COMPLEX64,
      LOOM_DTYPE_COMPLEX128, LOOM_DTYPE_QINT8,   LOOM_DTYPE_QUINT8,
      LOOM_DTYPE_QINT32,     LOOM_DTYPE_HALF,    LOOM_DTYPE_UINT32,
      LOOM_DTYPE_UINT64,     LOOM_DTYPE_BFLOAT16};
  const loom_attr_def_t* attr = attr_of("NumberGroup", "T: numbertype");
  assert_allowed_types(attr, kNumber, COUNT_OF(kNumber));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_BOOL));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_QINT16));
}

static void quantizedtype_has_tensorflows_members(void** state) {
  (void)state;
  static const loom_dtype_t kQuantized[] = {
      LOOM_DTYPE_QINT8, LOOM_DTYPE_QUINT8, LOOM_DTYPE_QINT16,
      LOOM_DTYPE_QUINT16, LOOM_DTYPE_QINT32};
  const loom_attr_def_t* attr = attr_of("QuantizedGroup", "T: quantizedtype");
  assert_allowed_types(attr, kQuantized, COUNT_OF(kQuantized));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_INT8));
}

// TensorFlow's op_def_builder accepts these spellings too.
static void numerictype_spellings_are_the_number_groups(void** state) {
  (void)state;
  const loom_attr_def_t* numeric = attr_of("NumericGroup", "T: numerictype");
  const loom_attr_def_t* number = attr_of("NumberGroup2", "T: numbertype");
  assert_int_equal(numeric->kind, LOOM_ATTR_KIND_DTYPE);
  assert_allowed_types(numeric, number->allowed_types,
                       (size_t)number->num_allowed_types);
  const loom_attr_def_t* real_numeric =
      attr_of("RealNumericGroup", "T: list(realnumerictype)");
  const loom_attr_def_t* real = attr_of("RealGroup2", "T: realnumbertype");
  assert_true(real_numeric->is_list);
  assert_allowed_types(real_numeric, real->allowed_types,
                       (size_t)real->num_allowed_types);
  assert_int_equal(
      attr_of("NumericInSet", "T: {numerictype, bool}")->num_allowed_types, 18);
}

static void groups_combine_with_types_in_a_set(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("GroupInSet", "T: {numbertype, string}");
  assert_int_equal(attr->num_allowed_types, 18);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_STRING));
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_COMPLEX128));
  assert_false(loom_attr_def_allows_type(attr, LOOM_DTYPE_BOOL));
  // A group overlapping a type already listed adds each type once.
  attr = attr_of("OverlappingGroup", "T: {float, realnumbertype}");
  assert_int_equal(attr->num_allowed_types, 12);
}

static void groups_and_sets_work_inside_lists(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("ListOfGroup", "T: list(numbertype)");
  assert_true(attr->is_list);
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_DTYPE);
  assert_int_equal(attr->num_allowed_types, 17);
  attr = attr_of("ListOfSet", "T: list({float, int64})");
  assert_true(attr->is_list);
  assert_int_equal(attr->num_allowed_types, 2);
  assert_int_equal(attr->allowed_types[1], LOOM_DTYPE_INT64);
  attr = attr_of("ListOfStrings", "s: list({'a', 'b'})");
  assert_true(attr->is_list);
  assert_int_equal(attr->kind, LOOM_ATTR_KIND_STRING);
  assert_int_equal(attr->num_allowed_strings, 2);
}

static void attr_without_a_set_allows_every_type(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("AnyType", "T: type");
  assert_int_equal(attr->num_allowed_types, 0);
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_VARIANT));
  assert_true(loom_attr_def_allows_type(attr, LOOM_DTYPE_QUINT16));
  assert_false(loom_attr_def_allows_type(NULL, LOOM_DTYPE_FLOAT));
}

//===----------------------------------------------------------------------===//
// Minimums
//===----------------------------------------------------------------------===//

static void int_minimum_is_a_value(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("IntMin", "N: int >= 2");
  assert_true(attr->has_minimum);
  assert_int_equal(attr->minimum, 2);
  attr = attr_of("NegativeMin", "axis: int >= -1");
  assert_true(attr->has_minimum);
  assert_int_equal(attr->minimum, -1);
}

static void list_minimum_is_a_length(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("ListMin", "shape: list(int) >= 1");
  assert_true(attr->is_list);
  assert_true(attr->has_minimum);
  assert_int_equal(attr->minimum, 1);
  attr = attr_of("TypeListMin", "T: list(type) >= 0");
  assert_true(attr->has_minimum);
  assert_int_equal(attr->minimum, 0);
}

//===----------------------------------------------------------------------===//
// Defaults
//===----------------------------------------------------------------------===//

static void int_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "zero: int = 0"},
      {ATTR, "positive: int = 42"},
      {ATTR, "negative: int = -42"},
      {ATTR, "plus: int = +7"},
      {ATTR, "max: int = 9223372036854775807"},
      {ATTR, "min: int = -9223372036854775808"},
  };
  build_ok("IntDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t value = default_of("IntDefaults", "negative");
  assert_int_equal(value.kind, LOOM_ATTR_KIND_I64);
  assert_false(value.is_list);
  assert_int_equal(value.u.i64, -42);
  assert_int_equal(default_of("IntDefaults", "zero").u.i64, 0);
  assert_int_equal(default_of("IntDefaults", "positive").u.i64, 42);
  assert_int_equal(default_of("IntDefaults", "plus").u.i64, 7);
  assert_true(default_of("IntDefaults", "max").u.i64 == INT64_MAX);
  assert_true(default_of("IntDefaults", "min").u.i64 == INT64_MIN);
}

static void float_defaults_parse_including_inf_and_nan(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "small: float = 1e-3"},  {ATTR, "half: float = 2.5"},
      {ATTR, "neg: float = -0.25"},   {ATTR, "whole: float = 3"},
      {ATTR, "suffix: float = 1.5f"}, {ATTR, "inf: float = inf"},
      {ATTR, "ninf: float = -inf"},   {ATTR, "nan: float = nan"},
  };
  build_ok("FloatDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t small = default_of("FloatDefaults", "small");
  assert_int_equal(small.kind, LOOM_ATTR_KIND_F32);
  assert_true(small.u.f32 == 1e-3f);
  assert_true(default_of("FloatDefaults", "half").u.f32 == 2.5f);
  assert_true(default_of("FloatDefaults", "neg").u.f32 == -0.25f);
  assert_true(default_of("FloatDefaults", "whole").u.f32 == 3.0f);
  assert_true(default_of("FloatDefaults", "suffix").u.f32 == 1.5f);
  float inf = default_of("FloatDefaults", "inf").u.f32;
  assert_true(isinf(inf) && inf > 0);
  float ninf = default_of("FloatDefaults", "ninf").u.f32;
  assert_true(isinf(ninf) && ninf < 0);
  assert_true(isnan(default_of("FloatDefaults", "nan").u.f32));
}

static void bool_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{ATTR, "yes: bool = true"},
                                  {ATTR, "no: bool = false"}};
  build_ok("BoolDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t yes = default_of("BoolDefaults", "yes");
  assert_int_equal(yes.kind, LOOM_ATTR_KIND_BOOL);
  assert_true(yes.u.b);
  assert_false(default_of("BoolDefaults", "no").u.b);
}

static void string_defaults_unescape_c_escapes(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR,
       "s: string = \"nl\\n tab\\t quote\\\" hex\\x41 oct\\101 back\\\\ "
       "apos\\' cr\\r q\\?\""},
      {ATTR, "single: string = 'it\\'s \"q\"'"},
      {ATTR, "empty: string = \"\""},
      {ATTR, "nul: string = \"a\\000b\""},
  };
  build_ok("StringDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t s = default_of("StringDefaults", "s");
  assert_int_equal(s.kind, LOOM_ATTR_KIND_STRING);
  static const char kExpected[] =
      "nl\n tab\t quote\" hexA octA back\\ apos' cr\r q?";
  assert_int_equal(s.u.string.size, sizeof(kExpected) - 1);
  assert_string_equal(s.u.string.data, kExpected);
  assert_string_equal(default_of("StringDefaults", "single").u.string.data,
                      "it's \"q\"");
  assert_string_equal(default_of("StringDefaults", "empty").u.string.data, "");
  loom_attr_value_t nul = default_of("StringDefaults", "nul");
  assert_int_equal(nul.u.string.size, 3);
  assert_memory_equal(nul.u.string.data, "a\0b", 3);
}

static void type_defaults_accept_enum_and_plain_names(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "a: type = DT_FLOAT"},
      {ATTR, "b: type = float"},
      {ATTR, "c: type = DT_BFLOAT16"},
      {ATTR, "d: {int32, int64} = int64"},
  };
  build_ok("TypeDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t a = default_of("TypeDefaults", "a");
  assert_int_equal(a.kind, LOOM_ATTR_KIND_DTYPE);
  assert_int_equal(a.u.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(default_of("TypeDefaults", "b").u.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(default_of("TypeDefaults", "c").u.dtype,
                   LOOM_DTYPE_BFLOAT16);
  assert_int_equal(default_of("TypeDefaults", "d").u.dtype, LOOM_DTYPE_INT64);
}

static void shape_defaults_parse_tensorflow_text(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "dims: shape = { dim { size: 2 } dim { size: -1 } }"},
      {ATTR, "unknown: shape = { unknown_rank: true }"},
      {ATTR, "scalar: shape = {}"},
      {ATTR, "brackets: shape = [2, 3]"},
      {ATTR, "question: shape = [?, 4]"},
      {ATTR, "empty: shape = []"},
      {ATTR, "named: shape = { dim: { size: 4 name: \"batch\" }, dim { } }"},
      {ATTR, "known: shape = { unknown_rank: false dim { size: 5 } }"},
  };
  build_ok("ShapeDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t dims = default_of("ShapeDefaults", "dims");
  assert_int_equal(dims.kind, LOOM_ATTR_KIND_SHAPE);
  assert_int_equal(dims.u.shape.rank, 2);
  assert_int_equal(dims.u.shape.dims[0], 2);
  assert_int_equal(dims.u.shape.dims[1], LOOM_UNKNOWN_DIM);
  assert_int_equal(default_of("ShapeDefaults", "unknown").u.shape.rank,
                   LOOM_UNKNOWN_RANK);
  assert_int_equal(default_of("ShapeDefaults", "scalar").u.shape.rank, 0);
  loom_attr_value_t brackets = default_of("ShapeDefaults", "brackets");
  assert_int_equal(brackets.u.shape.rank, 2);
  assert_int_equal(brackets.u.shape.dims[0], 2);
  assert_int_equal(brackets.u.shape.dims[1], 3);
  loom_attr_value_t question = default_of("ShapeDefaults", "question");
  assert_int_equal(question.u.shape.dims[0], LOOM_UNKNOWN_DIM);
  assert_int_equal(question.u.shape.dims[1], 4);
  assert_int_equal(default_of("ShapeDefaults", "empty").u.shape.rank, 0);
  // A dim without a size has size 0, as in TensorShapeProto.
  loom_attr_value_t named = default_of("ShapeDefaults", "named");
  assert_int_equal(named.u.shape.rank, 2);
  assert_int_equal(named.u.shape.dims[0], 4);
  assert_int_equal(named.u.shape.dims[1], 0);
  loom_attr_value_t known = default_of("ShapeDefaults", "known");
  assert_int_equal(known.u.shape.rank, 1);
  assert_int_equal(known.u.shape.dims[0], 5);
}

static void tensor_default_broadcasts_a_single_value(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR,
       "t: tensor = { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } "
       "float_val: 1.5 }"},
  };
  build_ok("TensorBroadcast", kSpecs, 1);
  loom_attr_value_t value = default_of("TensorBroadcast", "t");
  assert_int_equal(value.kind, LOOM_ATTR_KIND_TENSOR);
  loom_tensor_t* tensor = value.u.tensor;
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_FLOAT);
  assert_int_equal(loom_tensor_shape(tensor)->rank, 1);
  assert_int_equal(loom_tensor_shape(tensor)->dims[0], 2);
  const float* data = loom_tensor_data(tensor);
  assert_true(data[0] == 1.5f);
  assert_true(data[1] == 1.5f);
}

static void tensor_default_takes_one_value_per_element(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR,
       "ints: tensor = { dtype: DT_INT32 tensor_shape { dim { size: 3 } } "
       "int_val: 7 int_val: -8 int_val: 2147483647 }"},
      {ATTR,
       "doubles: tensor = { dtype: DT_DOUBLE tensor_shape [2, 1] "
       "double_val: 0.25, double_val: -inf }"},
      {ATTR,
       "bools: tensor = { dtype: DT_BOOL tensor_shape { dim { size: 2 } } "
       "bool_val: true bool_val: false }"},
  };
  build_ok("TensorEach", kSpecs, COUNT_OF(kSpecs));
  loom_tensor_t* ints = default_of("TensorEach", "ints").u.tensor;
  const int32_t* i = loom_tensor_data(ints);
  assert_int_equal(i[0], 7);
  assert_int_equal(i[1], -8);
  assert_int_equal(i[2], INT32_MAX);
  loom_tensor_t* doubles = default_of("TensorEach", "doubles").u.tensor;
  assert_int_equal(loom_tensor_shape(doubles)->rank, 2);
  const double* d = loom_tensor_data(doubles);
  assert_true(d[0] == 0.25);
  assert_true(isinf(d[1]) && d[1] < 0);
  loom_tensor_t* bools = default_of("TensorEach", "bools").u.tensor;
  const bool* b = loom_tensor_data(bools);
  assert_true(b[0]);
  assert_false(b[1]);
}

static void tensor_default_without_values_is_zero(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "scalar: tensor = { dtype: DT_DOUBLE }"},
      {ATTR,
       "vector: tensor = { dtype: DT_UINT16 tensor_shape { dim { size: 4 } } "
       "}"},
  };
  build_ok("TensorZero", kSpecs, COUNT_OF(kSpecs));
  loom_tensor_t* scalar = default_of("TensorZero", "scalar").u.tensor;
  assert_int_equal(loom_tensor_shape(scalar)->rank, 0);
  assert_int_equal(loom_tensor_num_elements(scalar), 1);
  assert_true(((const double*)loom_tensor_data(scalar))[0] == 0.0);
  loom_tensor_t* vector = default_of("TensorZero", "vector").u.tensor;
  const uint16_t* data = loom_tensor_data(vector);
  for (int k = 0; k < 4; ++k) assert_int_equal(data[k], 0);
}

static void tensor_default_keeps_int64_values_exact(void** state) {
  (void)state;
  // 2^53 + 1 is not a double: integer fields must not pass through one.
  static const spec_t kSpecs[] = {
      {ATTR, "big: tensor = { dtype: DT_INT64 int64_val: 9007199254740993 }"},
      {ATTR, "top: tensor = { dtype: DT_UINT8 int_val: 255 }"},
      {ATTR, "whole: tensor = { dtype: DT_INT16 float_val: -3.0 }"},
  };
  build_ok("TensorExact", kSpecs, COUNT_OF(kSpecs));
  loom_tensor_t* big = default_of("TensorExact", "big").u.tensor;
  assert_true(((const int64_t*)loom_tensor_data(big))[0] == 9007199254740993LL);
  loom_tensor_t* top = default_of("TensorExact", "top").u.tensor;
  assert_int_equal(((const uint8_t*)loom_tensor_data(top))[0], 255);
  loom_tensor_t* whole = default_of("TensorExact", "whole").u.tensor;
  assert_int_equal(((const int16_t*)loom_tensor_data(whole))[0], -3);
}

static void func_defaults_parse(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "f: func = { name: \"body\" }"},
      {ATTR, "g: func = \"cond\""},
  };
  build_ok("FuncDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t f = default_of("FuncDefaults", "f");
  assert_int_equal(f.kind, LOOM_ATTR_KIND_FUNC);
  assert_string_equal(f.u.string.data, "body");
  assert_int_equal(f.u.string.size, 4);
  assert_string_equal(default_of("FuncDefaults", "g").u.string.data, "cond");
}

static void list_defaults_parse_for_every_kind(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "ints: list(int) = [1, -2, 3]"},
      {ATTR, "empty: list(int) = []"},
      {ATTR, "types: list(type) = [DT_INT32, DT_FLOAT]"},
      {ATTR, "strings: list(string) = [\"a\", \"b\"]"},
      {ATTR, "floats: list(float) = [0.5, 1]"},
      {ATTR, "bools: list(bool) = [true, false]"},
      {ATTR, "shapes: list(shape) = [[1], { unknown_rank: true }]"},
      {ATTR, "funcs: list(func) = [{ name: \"f\" }, \"g\"]"},
      {ATTR,
       "tensors: list(tensor) = [{ dtype: DT_INT32 int_val: 3 }, "
       "{ dtype: DT_BOOL bool_val: true }]"},
  };
  build_ok("ListDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t ints = default_of("ListDefaults", "ints");
  assert_true(ints.is_list);
  assert_int_equal(ints.kind, LOOM_ATTR_KIND_I64);
  assert_int_equal(ints.count, 3);
  assert_int_equal(((const int64_t*)ints.u.list)[0], 1);
  assert_int_equal(((const int64_t*)ints.u.list)[1], -2);
  assert_int_equal(((const int64_t*)ints.u.list)[2], 3);
  loom_attr_value_t empty = default_of("ListDefaults", "empty");
  assert_true(empty.is_list);
  assert_int_equal(empty.count, 0);
  loom_attr_value_t types = default_of("ListDefaults", "types");
  assert_int_equal(types.count, 2);
  assert_int_equal(((const loom_dtype_t*)types.u.list)[0], LOOM_DTYPE_INT32);
  assert_int_equal(((const loom_dtype_t*)types.u.list)[1], LOOM_DTYPE_FLOAT);
  loom_attr_value_t strings = default_of("ListDefaults", "strings");
  assert_int_equal(strings.count, 2);
  assert_string_equal(element_of(&strings, 0).u.string.data, "a");
  assert_string_equal(element_of(&strings, 1).u.string.data, "b");
  loom_attr_value_t floats = default_of("ListDefaults", "floats");
  assert_true(((const float*)floats.u.list)[0] == 0.5f);
  assert_true(((const float*)floats.u.list)[1] == 1.0f);
  loom_attr_value_t bools = default_of("ListDefaults", "bools");
  assert_true(((const bool*)bools.u.list)[0]);
  assert_false(((const bool*)bools.u.list)[1]);
  loom_attr_value_t shapes = default_of("ListDefaults", "shapes");
  assert_int_equal(shapes.count, 2);
  loom_attr_value_t first = element_of(&shapes, 0);
  assert_int_equal(first.u.shape.rank, 1);
  assert_int_equal(first.u.shape.dims[0], 1);
  assert_int_equal(element_of(&shapes, 1).u.shape.rank, LOOM_UNKNOWN_RANK);
  loom_attr_value_t funcs = default_of("ListDefaults", "funcs");
  assert_int_equal(funcs.kind, LOOM_ATTR_KIND_FUNC);
  assert_string_equal(element_of(&funcs, 0).u.string.data, "f");
  assert_string_equal(element_of(&funcs, 1).u.string.data, "g");
  loom_attr_value_t tensors = default_of("ListDefaults", "tensors");
  assert_int_equal(tensors.count, 2);
  loom_tensor_t* const* t = tensors.u.list;
  assert_int_equal(((const int32_t*)loom_tensor_data(t[0]))[0], 3);
  assert_int_equal(loom_tensor_dtype(t[1]), LOOM_DTYPE_BOOL);
}

static void failed_spec_keeps_an_earlier_default_of_the_same_name(
    void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "KeepsDefault", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_attr(builder, "a: int = 1"));
  LOOM_ASSERT_STATUS(loom_op_def_builder_add_attr(builder, "a: int = 2 junk"),
                     LOOM_STATUS_INVALID_ARGUMENT, "unexpected 'junk'");
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  assert_int_equal(default_of("KeepsDefault", "a").u.i64, 1);
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

static const spec_t kArgAttrs[] = {
    {ATTR, "T: type"}, {ATTR, "N: int"}, {ATTR, "Tlist: list(type)"}};

// Registers an op with kArgAttrs and one input `spec`; returns the input.
static const loom_arg_def_t* input_of(const char* name, const char* spec) {
  spec_t specs[4] = {kArgAttrs[0], kArgAttrs[1], kArgAttrs[2], {INPUT, spec}};
  const loom_op_def_t* op = build_ok(name, specs, 4);
  assert_int_equal(op->num_inputs, 1);
  assert_string_equal(op->inputs[0].spec, spec);
  return &op->inputs[0];
}

static void type_attr_argument_names_its_attr(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("ArgTypeAttr", "x: T");
  assert_string_equal(arg->name, "x");
  assert_string_equal(arg->type_attr, "T");
  assert_int_equal(arg->dtype, LOOM_DTYPE_INVALID);
  assert_null(arg->type_list_attr);
  assert_null(arg->number_attr);
  assert_false(arg->is_ref);
}

static void fixed_type_argument_has_its_dtype(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("ArgFixed", "x: float");
  assert_int_equal(arg->dtype, LOOM_DTYPE_FLOAT);
  assert_null(arg->type_attr);
  assert_null(arg->number_attr);
  arg = input_of("ArgFixedEnum", "x: DT_INT64");
  assert_int_equal(arg->dtype, LOOM_DTYPE_INT64);
}

static void length_times_type_attr_argument(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("ArgNT", "xs: N * T");
  assert_string_equal(arg->number_attr, "N");
  assert_string_equal(arg->type_attr, "T");
  assert_int_equal(arg->dtype, LOOM_DTYPE_INVALID);
}

static void length_times_fixed_type_argument(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("ArgNFloat", "xs: N*float");
  assert_string_equal(arg->number_attr, "N");
  assert_int_equal(arg->dtype, LOOM_DTYPE_FLOAT);
  assert_null(arg->type_attr);
}

static void list_type_attr_argument_becomes_type_list_attr(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("ArgList", "xs: Tlist");
  assert_string_equal(arg->type_list_attr, "Tlist");
  assert_null(arg->type_attr);
  assert_null(arg->number_attr);
}

static void ref_wraps_every_argument_form(void** state) {
  (void)state;
  const loom_arg_def_t* arg = input_of("RefType", "x: Ref(T)");
  assert_true(arg->is_ref);
  assert_string_equal(arg->type_attr, "T");
  arg = input_of("RefFixed", "x: Ref(float)");
  assert_true(arg->is_ref);
  assert_int_equal(arg->dtype, LOOM_DTYPE_FLOAT);
  arg = input_of("RefLength", "x: Ref( N * T )");
  assert_true(arg->is_ref);
  assert_string_equal(arg->number_attr, "N");
  arg = input_of("RefList", "x: Ref(Tlist)");
  assert_true(arg->is_ref);
  assert_string_equal(arg->type_list_attr, "Tlist");
}

static void resource_input_makes_the_op_stateful(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{INPUT, "handle: resource"}};
  const loom_op_def_t* op = build_ok("ReadsResource", kSpecs, 1);
  assert_int_equal(op->inputs[0].dtype, LOOM_DTYPE_RESOURCE);
  assert_true(op->is_stateful);
}

static void resource_output_makes_the_op_stateful(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{OUTPUT, "resource: resource"}};
  const loom_op_def_t* op = build_ok("MakesResource", kSpecs, 1);
  assert_true(op->is_stateful);
}

static void ordinary_arguments_leave_the_op_stateless(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{INPUT, "x: float"}, {OUTPUT, "y: string"}};
  const loom_op_def_t* op = build_ok("Stateless", kSpecs, 2);
  assert_false(op->is_stateful);
}

static void length_attrs_used_by_arguments_get_a_minimum_of_one(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "T: type"},         {ATTR, "N: int"},
      {ATTR, "Tin: list(type)"}, {ATTR, "Tout: list(type)"},
      {ATTR, "M: int"},          {ATTR, "Unused: list(type)"},
      {INPUT, "xs: N * T"},      {INPUT, "ys: Tin"},
      {OUTPUT, "zs: Tout"},      {OUTPUT, "ws: M * float"},
  };
  const loom_op_def_t* op = build_ok("ImplicitMinimum", kSpecs, 10);
  static const char* kUsed[] = {"N", "Tin", "Tout", "M"};
  for (size_t i = 0; i < COUNT_OF(kUsed); ++i) {
    const loom_attr_def_t* attr = loom_op_def_find_attr(op, kUsed[i]);
    assert_true(attr->has_minimum);
    assert_int_equal(attr->minimum, 1);
  }
  assert_false(loom_op_def_find_attr(op, "T")->has_minimum);
  assert_false(loom_op_def_find_attr(op, "Unused")->has_minimum);
}

static void explicit_minimum_of_zero_is_kept(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "N: int >= 0"}, {ATTR, "T: type"}, {ATTR, "L: list(type) >= 0"},
      {INPUT, "xs: N * T"},  {INPUT, "ys: L"},
  };
  const loom_op_def_t* op = build_ok("ExplicitMinimum", kSpecs, 5);
  assert_true(loom_op_def_find_attr(op, "N")->has_minimum);
  assert_int_equal(loom_op_def_find_attr(op, "N")->minimum, 0);
  assert_int_equal(loom_op_def_find_attr(op, "L")->minimum, 0);
}

static void arguments_keep_declaration_order(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {OUTPUT, "z: float"}, {INPUT, "b: int32"}, {ATTR, "T: type"},
      {INPUT, "a: T"},      {OUTPUT, "y: T"},
  };
  const loom_op_def_t* op = build_ok("Order", kSpecs, COUNT_OF(kSpecs));
  assert_int_equal(op->num_inputs, 2);
  assert_string_equal(op->inputs[0].name, "b");
  assert_string_equal(op->inputs[1].name, "a");
  assert_int_equal(op->num_outputs, 2);
  assert_string_equal(op->outputs[0].name, "z");
  assert_string_equal(op->outputs[1].name, "y");
  assert_int_equal(op->num_attrs, 1);
}

//===----------------------------------------------------------------------===//
// Lookups on a definition
//===----------------------------------------------------------------------===//

static void find_functions_locate_attrs_and_arguments(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "T: type"}, {ATTR, "axis: int = 0"}, {INPUT, "x: T"},
      {INPUT, "y: T"},   {OUTPUT, "z: T"},
  };
  const loom_op_def_t* op = build_ok("Lookups", kSpecs, COUNT_OF(kSpecs));
  assert_ptr_equal(loom_op_def_find_attr(op, "axis"), &op->attrs[1]);
  assert_int_equal(loom_op_def_find_input(op, "x"), 0);
  assert_int_equal(loom_op_def_find_input(op, "y"), 1);
  assert_int_equal(loom_op_def_find_output(op, "z"), 0);
}

static void find_functions_report_absence(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {{ATTR, "T: type"}, {INPUT, "x: T"}};
  const loom_op_def_t* op = build_ok("Absent", kSpecs, 2);
  assert_null(loom_op_def_find_attr(op, "x"));  // an input, not an attr
  assert_null(loom_op_def_find_attr(op, NULL));
  assert_null(loom_op_def_find_attr(NULL, "T"));
  assert_int_equal(loom_op_def_find_input(op, "T"), -1);
  assert_int_equal(loom_op_def_find_output(op, "x"), -1);
  assert_int_equal(loom_op_def_find_input(op, NULL), -1);
  assert_int_equal(loom_op_def_find_output(NULL, "x"), -1);
}

//===----------------------------------------------------------------------===//
// Properties
//===----------------------------------------------------------------------===//

static void properties_default_to_false(void** state) {
  (void)state;
  const loom_op_def_t* op = build_ok("Plain", NULL, 0);
  assert_false(op->is_commutative);
  assert_false(op->is_aggregate);
  assert_false(op->is_stateful);
  assert_false(op->allows_uninitialized_input);
  assert_int_equal(op->deprecation_version, 0);
  assert_null(op->shape_fn);
  assert_int_equal(op->num_inputs, 0);
  assert_int_equal(op->num_outputs, 0);
  assert_int_equal(op->num_attrs, 0);
  assert_non_null(op->defaults);
  assert_int_equal(loom_op_attrs_count(op->defaults), 0);
}

static void properties_honour_true_and_false(void** state) {
  (void)state;
  // Each setter is called with true and then with `value`: the last wins.
  for (int value = 0; value <= 1; ++value) {
    char name[32];
    snprintf(name, sizeof(name), "Properties%d", value);
    loom_op_def_builder_t* builder = NULL;
    LOOM_ASSERT_OK(
        loom_op_def_builder_create(loom_allocator_system(), name, &builder));
    loom_op_def_builder_set_is_commutative(builder, true);
    loom_op_def_builder_set_is_aggregate(builder, true);
    loom_op_def_builder_set_is_stateful(builder, true);
    loom_op_def_builder_set_allows_uninitialized_input(builder, true);
    loom_op_def_builder_set_is_commutative(builder, value);
    loom_op_def_builder_set_is_aggregate(builder, value);
    loom_op_def_builder_set_is_stateful(builder, value);
    loom_op_def_builder_set_allows_uninitialized_input(builder, value);
    LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
    const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
    assert_int_equal(op->is_commutative, value);
    assert_int_equal(op->is_aggregate, value);
    assert_int_equal(op->is_stateful, value);
    assert_int_equal(op->allows_uninitialized_input, value);
  }
}

static void property_setters_ignore_a_null_builder(void** state) {
  (void)state;
  loom_op_def_builder_set_is_commutative(NULL, true);
  loom_op_def_builder_set_is_aggregate(NULL, true);
  loom_op_def_builder_set_is_stateful(NULL, true);
  loom_op_def_builder_set_allows_uninitialized_input(NULL, true);
  loom_op_def_builder_set_shape_fn(NULL, NULL, NULL);
  loom_op_def_builder_destroy(NULL);
}

static void deprecation_records_version_and_explanation(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "Deprecated", &builder));
  LOOM_ASSERT_OK(
      loom_op_def_builder_set_deprecated(builder, 26, "Use AddV2 instead"));
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Deprecated");
  assert_int_equal(op->deprecation_version, 26);
  assert_string_equal(op->deprecation_explanation, "Use AddV2 instead");
}

static void deprecation_without_explanation_gets_an_empty_one(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "DeprecatedQuietly", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_set_deprecated(builder, 1, NULL));
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  const loom_op_def_t* op =
      loom_op_registry_find(g_registry, "DeprecatedQuietly");
  assert_int_equal(op->deprecation_version, 1);
  assert_string_equal(op->deprecation_explanation, "");
}

static void deprecation_needs_a_positive_version(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "BadDeprecation", &builder));
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_set_deprecated(builder, 0, "x"),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'BadDeprecation': deprecation version 0 must be positive");
  LOOM_ASSERT_STATUS(loom_op_def_builder_set_deprecated(builder, -3, "x"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "deprecation version -3 must be positive");
  LOOM_ASSERT_STATUS(loom_op_def_builder_set_deprecated(NULL, 3, "x"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_def_builder_set_deprecated: builder is NULL");
  // The failed calls left the op undeprecated.
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  assert_int_equal(
      loom_op_registry_find(g_registry, "BadDeprecation")->deprecation_version,
      0);
}

static loom_status_t noop_shape_fn(loom_shape_inference_context_t* context,
                                   void* user_data) {
  (void)context;
  (void)user_data;
  return loom_ok_status();
}

static void shape_fn_and_user_data_are_stored(void** state) {
  (void)state;
  static int user_data;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "WithShapeFn", &builder));
  loom_op_def_builder_set_shape_fn(builder, noop_shape_fn, &user_data);
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "WithShapeFn");
  assert_ptr_equal(op->shape_fn, noop_shape_fn);
  assert_ptr_equal(op->shape_fn_user_data, &user_data);
}

//===----------------------------------------------------------------------===//
// Malformed specs: the spec, the problem and its 1-based column
//===----------------------------------------------------------------------===//

typedef struct spec_error_t {
  spec_kind_t kind;
  const char* spec;
  const char* problem;
  int column;
} spec_error_t;

// Each spec fails with exactly
//   Op '<op>': invalid attr spec "<spec>": <problem> at column <column>
//   Op '<op>': input: invalid argument spec "<spec>": <problem> at ...
// and leaves the builder as it was (it then registers with nothing).
static void check_spec_errors(const char* prefix, const spec_error_t* cases,
                              size_t count) {
  for (size_t i = 0; i < count; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "%s%zu", prefix, i);
    size_t capacity = strlen(cases[i].spec) + strlen(cases[i].problem) + 128;
    char* expected = malloc(capacity);
    assert_non_null(expected);
    // Specs past 80 bytes are quoted cut, with "..." (these are ASCII).
    char spec[96];
    snprintf(spec, sizeof(spec), "%.80s%s", cases[i].spec,
             strlen(cases[i].spec) > 80 ? "..." : "");
    if (cases[i].kind == ATTR) {
      snprintf(expected, capacity,
               "Op '%s': invalid attr spec \"%s\": %s at column %d", name, spec,
               cases[i].problem, cases[i].column);
    } else {
      snprintf(expected, capacity,
               "Op '%s': %s: invalid argument spec \"%s\": %s at column %d",
               name, cases[i].kind == INPUT ? "input" : "output", spec,
               cases[i].problem, cases[i].column);
    }
    loom_op_def_builder_t* builder = NULL;
    LOOM_ASSERT_OK(
        loom_op_def_builder_create(loom_allocator_system(), name, &builder));
    loom_status_t status = add_spec(builder, cases[i].kind, cases[i].spec);
    if (loom_status_code(status) != LOOM_STATUS_INVALID_ARGUMENT ||
        strcmp(loom_status_message(status), expected) != 0) {
      fail_msg("spec '%s':\n  got      '%s'\n  expected '%s'", cases[i].spec,
               status ? loom_status_message(status) : "OK", expected);
    }
    loom_status_free(status);
    free(expected);
    LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
    const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
    assert_int_equal(op->num_attrs + op->num_inputs + op->num_outputs, 0);
    assert_int_equal(loom_op_attrs_count(op->defaults), 0);
  }
}

static void malformed_attr_types_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "T: {float, int33}", "unknown type 'int33'", 12},
      {ATTR, "T type", "expected ':' after the attr name, found 't'", 3},
      {ATTR, "T: blob", "unknown attr type 'blob'", 4},
      {ATTR, "T: {}", "an allowed-value set must not be empty", 5},
      {ATTR, "T: { }", "an allowed-value set must not be empty", 6},
      {ATTR, "a: list(list(int))", "lists of lists are not supported", 9},
      {ATTR, "a: list int", "expected '(' after 'list', found 'i'", 9},
      {ATTR, "a: list(int", "expected ')' to close 'list(', found the end", 12},
      {ATTR, "T: {float, int32",
       "expected '}' to close the set of allowed values, found the end", 17},
      {ATTR, "T: {float,}", "expected a type, found '}'", 11},
      {ATTR, "a: {\"x\", float}",
       "expected a quoted string in a set of strings", 10},
      {ATTR, "a: {float, \"x\"}", "expected a type, found '\"'", 12},
      {ATTR, "", "expected an attr name, found the end", 1},
      {ATTR, "1x: int", "expected an attr name, found '1'", 1},
      {ATTR, "_x: int", "an attr name must start with a letter", 1},
      {ATTR, "a:", "expected an attr type, found the end", 3},
      {ATTR, "a: int extra", "unexpected 'extra'", 8},
  };
  check_spec_errors("BadAttrType", kCases, COUNT_OF(kCases));
}

static void malformed_minimums_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "f: float >= 2",
       "only int and list attrs can have a minimum ('>=')", 10},
      {ATTR, "T: type >= 1",
       "only int and list attrs can have a minimum ('>=')", 9},
      {ATTR, "a: list(int) >= -1", "a list length minimum must be >= 0", 17},
      {ATTR, "a: int >= x", "expected an integer, found 'x'", 11},
      {ATTR, "a: int >=", "expected a number, found the end", 10},
  };
  check_spec_errors("BadMinimum", kCases, COUNT_OF(kCases));
}

static void malformed_scalar_defaults_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "a: int = 3 4", "unexpected '4'", 12},
      {ATTR, "a: int = 99999999999999999999",
       "integer '99999999999999999999' out of range", 10},
      {ATTR, "a: int = -99999999999999999999",
       "integer '-99999999999999999999' out of range", 10},
      {ATTR, "a: int = 1e3", "expected an integer, found '1e3'", 10},
      {ATTR, "a: int = 2.0", "expected an integer, found '2.0'", 10},
      {ATTR, "a: int =", "expected a number, found the end", 9},
      {ATTR, "a: int = ", "expected a number, found the end", 10},
      {ATTR, "a: int = [1]", "expected a number, found '['", 10},
      {ATTR,
       "a: int = 1234567890123456789012345678901234567890123456789012345678901"
       "234567890",
       "number too long", 10},
      {ATTR, "a: float = x1", "expected a number, found 'x1'", 12},
      {ATTR, "a: float = 1.5.2", "expected a number, found '1.5.2'", 12},
      {ATTR, "a: float = infinite", "expected a number, found 'infinite'", 12},
      {ATTR, "a: bool = yes", "expected true or false", 11},
      {ATTR, "a: bool = 1", "expected true or false", 11},
      {ATTR, "a: bool = true false", "unexpected 'false'", 16},
      {ATTR, "a: type = DT_NOPE", "unknown type 'DT_NOPE'", 11},
      {ATTR, "a: type = \"float\"", "expected a type, found '\"'", 11},
  };
  check_spec_errors("BadScalarDefault", kCases, COUNT_OF(kCases));
}

static void malformed_strings_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "s: string = \"open", "unterminated string", 13},
      {ATTR, "s: string = 'mixed\"", "unterminated string", 13},
      {ATTR, "s: string = \"end\\", "unterminated string", 13},
      {ATTR, "s: string = \"bad \\q\"", "invalid escape '\\q'", 18},
      {ATTR, "s: string = \"\\x4g\"", "invalid \\x escape", 14},
      {ATTR, "s: string = \"\\x\"", "invalid \\x escape", 14},
      {ATTR, "s: string = \"ok\\777\"", "octal escape '\\777' exceeds 0xff",
       16},
      {ATTR, "s: string = abc", "expected a quoted string", 13},
      {ATTR, "s: string = \"a\" \"b\"", "unexpected '\"b\"'", 17},
  };
  check_spec_errors("BadString", kCases, COUNT_OF(kCases));
}

static void malformed_list_defaults_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "a: list(int) = 1",
       "expected '[' to start a list default, found '1'", 16},
      {ATTR, "a: list(int) = [1, 2",
       "expected ']' to close the list default, found the end", 21},
      {ATTR, "a: list(int) = [1,,2]", "expected a number, found ','", 19},
      {ATTR, "a: list(int) = [1 2]",
       "expected ']' to close the list default, found '2'", 19},
      {ATTR, "a: list(type) = [float, DT_BAD]", "unknown type 'DT_BAD'", 25},
  };
  check_spec_errors("BadList", kCases, COUNT_OF(kCases));
}

static void list_default_beyond_256_elements_is_rejected(void** state) {
  (void)state;
  char spec[1024] = "a: list(int) = [";
  for (int i = 0; i < 257; ++i) strcat(spec, i ? ",0" : "0");
  strcat(spec, "]");
  // The 257th element starts after "a: list(int) = [" and 256 "0,".
  const spec_error_t kCase = {ATTR, spec, "more than 256 list elements",
                              16 + 256 * 2 + 1};
  check_spec_errors("LongList", &kCase, 1);
}

static void tensor_default_beyond_4096_values_is_rejected(void** state) {
  (void)state;
  static const char kPrefix[] = "t: tensor = { dtype: DT_FLOAT ";
  static const char kValue[] = "float_val: 0 ";
  size_t length = strlen(kPrefix) + 4097 * strlen(kValue) + 2;
  char* spec = malloc(length);
  assert_non_null(spec);
  strcpy(spec, kPrefix);
  for (int i = 0; i < 4097; ++i) strcat(spec, kValue);
  strcat(spec, "}");
  // The 4097th value's field starts after the prefix and 4096 values.
  const spec_error_t kCase = {
      ATTR, spec, "more than 4096 tensor values",
      (int)(strlen(kPrefix) + 4096 * strlen(kValue)) + 1};
  check_spec_errors("ManyValues", &kCase, 1);
  free(spec);
}

static void set_beyond_64_allowed_strings_is_rejected(void** state) {
  (void)state;
  char spec[1024] = "s: {";
  for (int i = 0; i < 65; ++i) {
    char item[16];
    snprintf(item, sizeof(item), "%s'%02d'", i ? ", " : "", i);
    strcat(spec, item);
  }
  strcat(spec, "}");
  // The 65th string follows "s: {" and 64 items of 4 or 6 characters.
  const spec_error_t kCase = {ATTR, spec, "more than 64 allowed strings",
                              4 + 4 + 63 * 6 + 2 + 1};
  check_spec_errors("ManyStrings", &kCase, 1);
}

static void malformed_shape_defaults_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "s: shape = 3", "expected '{' to start a shape, found '3'", 12},
      {ATTR, "s: shape = [2, -2]", "dimension -2 is below -1", 16},
      {ATTR, "s: shape = [1, 2",
       "expected ']' to close the shape, found the end", 17},
      {ATTR, "s: shape = { dim { size: -5 } }", "dimension -5 is below -1", 26},
      {ATTR, "s: shape = { dim { length: 2 } }", "unknown dim field 'length'",
       20},
      {ATTR, "s: shape = { rank: 2 }", "unknown shape field 'rank'", 14},
      {ATTR, "s: shape = { unknown_rank: true dim { size: 1 } }",
       "a shape of unknown rank has no dims", 33},
      {ATTR, "s: shape = { dim { size: 1 } unknown_rank: true }",
       "a shape of unknown rank has no dims", 30},
      {ATTR, "s: shape = { dim { size: 1 }", "expected '}'", 29},
      {ATTR, "s: shape = { dim { size: 1 ",
       "expected a field name, found the end", 28},
      {ATTR, "s: shape = { dim { size: 1", "expected '}' to close 'dim'", 27},
      {ATTR, "s: shape = { dim size: 1 }",
       "expected '{' after 'dim', found 's'", 18},
  };
  check_spec_errors("BadShape", kCases, COUNT_OF(kCases));
}

// Defaults take TensorFlow's ranks, up to 254 (spilled past 8).
static void shape_defaults_take_ranks_up_to_254(void** state) {
  (void)state;
  static const spec_t kSpecs[] = {
      {ATTR, "nine: shape = [1, 2, 3, 4, 5, 6, 7, 8, 9]"},
      {ATTR,
       "ten: shape = { dim { size: 10 } dim { size: 9 } dim { size: 8 } "
       "dim { size: 7 } dim { size: 6 } dim { size: 5 } dim { size: 4 } "
       "dim { size: 3 } dim { size: 2 } dim { size: -1 } }"},
  };
  build_ok("LargeShapeDefaults", kSpecs, COUNT_OF(kSpecs));
  loom_attr_value_t nine = default_of("LargeShapeDefaults", "nine");
  assert_int_equal(nine.u.shape.rank, 9);
  for (int i = 0; i < 9; ++i) {
    assert_int_equal(nine.u.shape.dims[i], i + 1);
  }
  loom_attr_value_t ten = default_of("LargeShapeDefaults", "ten");
  assert_int_equal(ten.u.shape.rank, 10);
  for (int i = 0; i < 9; ++i) {
    assert_int_equal(ten.u.shape.dims[i], 10 - i);
  }
  assert_int_equal(ten.u.shape.dims[9], LOOM_UNKNOWN_DIM);

  // 255 dims, in both forms: the error is at the 255th.
  enum { kDims = LOOM_MAX_SHAPE_RANK + 1 };
  char brackets[16 + 2 * kDims];
  int n = snprintf(brackets, sizeof(brackets), "s: shape = [");
  for (int i = 0; i < kDims; ++i) {
    n += snprintf(brackets + n, sizeof(brackets) - (size_t)n, "1%s",
                  i + 1 < kDims ? "," : "]");
  }
  char protos[16 + 7 * kDims];
  int m = snprintf(protos, sizeof(protos), "s: shape = { ");
  for (int i = 0; i < kDims; ++i) {
    m += snprintf(protos + m, sizeof(protos) - (size_t)m, "dim {} ");
  }
  snprintf(protos + m, sizeof(protos) - (size_t)m, "}");
  const spec_error_t kCases[] = {
      {ATTR, brackets, "shape rank exceeds 254", 12 + 2 * (kDims - 1) + 1},
      {ATTR, protos, "shape rank exceeds 254", 14 + 7 * (kDims - 1)},
  };
  check_spec_errors("HugeShape", kCases, COUNT_OF(kCases));
}

static void malformed_tensor_defaults_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "t: tensor = [1]", "expected '{' to start a tensor, found '['",
       13},
      {ATTR, "t: tensor = { dtype: DT_STRING }",
       "a tensor default needs a dtype of float, double, an integer type or "
       "bool",
       22},
      {ATTR, "t: tensor = { float_val: 1 }",
       "a tensor default needs a dtype of float, double, an integer type or "
       "bool",
       13},
      {ATTR, "t: tensor = { dtype: DT_HALF }",
       "a tensor default needs a dtype of float, double, an integer type or "
       "bool",
       22},
      {ATTR, "t: tensor = { dtype: DT_FLOAT tensor_shape [?] }",
       "a tensor default needs a fully defined shape", 44},
      {ATTR, "t: tensor = { dtype: DT_FLOAT tensor_shape [65537] }",
       "a tensor default holds at most 65536 elements, not a tensor of shape "
       "[65537]",
       44},
      {ATTR,
       "t: tensor = { dtype: DT_UINT8 tensor_shape [4294967296, 4294967296] }",
       "a tensor default holds at most 65536 elements, not a tensor of shape "
       "[4294967296, 4294967296]",
       44},
      {ATTR,
       "t: tensor = { dtype: DT_FLOAT tensor_shape [3] float_val: 1 "
       "float_val: 2 }",
       "2 values for a tensor of 3 elements", 59},
      {ATTR, "t: tensor = { dtype: DT_UINT8 int_val: 256 }",
       "tensor value 256 is out of range for uint8", 40},
      {ATTR, "t: tensor = { dtype: DT_UINT32 int_val: -1 }",
       "tensor value -1 is out of range for uint32", 41},
      {ATTR, "t: tensor = { dtype: DT_INT32 float_val: 1.5 }",
       "tensor value 1.5 is not a valid int32", 42},
      {ATTR, "t: tensor = { dtype: DT_INT32 float_val: 1e30 }",
       "tensor value 1e+30 is not a valid int32", 42},
      {ATTR, "t: tensor = { dtype: DT_INT64 float_val: nan }",
       "tensor value nan is not a valid int64", 42},
      {ATTR, "t: tensor = { dtype: DT_INT32 int_val: 1.5 }",
       "expected an integer, found '1.5'", 40},
      {ATTR, "t: tensor = { dtype: DT_FLOAT foo: 1 }",
       "unknown tensor field 'foo'", 31},
      {ATTR, "t: tensor = { dtype: DT_FLOAT", "expected '}'", 30},
      {ATTR, "t: tensor = { dtype: DT_BOOL bool_val: 2 }",
       "expected true or false", 40},
  };
  check_spec_errors("BadTensor", kCases, COUNT_OF(kCases));
}

static void malformed_func_defaults_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {ATTR, "f: func = { fn: \"x\" }", "expected 'name' in a function value",
       13},
      {ATTR, "f: func = { name: x }", "expected a quoted string", 19},
      {ATTR, "f: func = { name: \"x\"",
       "expected '}' to close the function value, found the end", 22},
      {ATTR, "f: func = body", "expected a quoted string", 11},
  };
  check_spec_errors("BadFunc", kCases, COUNT_OF(kCases));
}

static void malformed_argument_specs_report_the_column(void** state) {
  (void)state;
  static const spec_error_t kCases[] = {
      {INPUT, "X: float",
       "argument names use lower-case letters, digits and '_', starting with "
       "a letter",
       1},
      {INPUT, "xY: float",
       "argument names use lower-case letters, digits and '_', starting with "
       "a letter",
       2},
      {INPUT, "_x: float",
       "argument names use lower-case letters, digits and '_', starting with "
       "a letter",
       1},
      {INPUT, "", "expected an argument name, found the end", 1},
      {INPUT, "x float", "expected ':' after the argument name, found 'f'", 3},
      {INPUT, "x:", "expected a type or attr name, found the end", 3},
      {INPUT, "x: 3", "expected a type or attr name, found '3'", 4},
      {INPUT, "x: int32 * float",
       "the length in 'N * T' must be an int attr, not a type", 4},
      {INPUT, "x: Ref(int32 * T)",
       "the length in 'N * T' must be an int attr, not a type", 8},
      {INPUT, "x: N *", "expected a type or attr name, found the end", 7},
      {INPUT, "x: Ref(T", "expected ')' to close 'Ref(', found the end", 9},
      {INPUT, "x: Ref(T]", "expected ')' to close 'Ref(', found ']'", 9},
      {OUTPUT, "y: T extra", "unexpected 'extra'", 6},
      {OUTPUT, "y: N * T * U", "unexpected '* U'", 10},
  };
  check_spec_errors("BadArg", kCases, COUNT_OF(kCases));
}

// The message of adding attr `spec` to a new builder (which must fail).
static char* attr_spec_error(const char* spec) {
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(), "Utf8Spec",
                                            &builder));
  loom_status_t status = add_spec(builder, ATTR, spec);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  char* message = strdup(loom_status_message(status));
  loom_status_free(status);
  loom_op_def_builder_destroy(builder);
  return message;
}

// Errors quote whole UTF-8 characters (never half a sequence), count the
// column in characters, and cut a long spec with "...".
static void spec_errors_keep_utf8_characters_whole(void** state) {
  (void)state;
  // "ï" is two bytes; the column counts it once.
  char* message = attr_spec_error("T: {float, \u00efnt32}");
  assert_string_equal(message,
                      "Op 'Utf8Spec': invalid attr spec \"T: {float, "
                      "\u00efnt32}\": expected a type, found '\u00ef' "
                      "at column 12");
  free(message);
  message = attr_spec_error("\u20acuro: int");  // '€' is three bytes
  assert_non_null(strstr(message, "found '\u20ac' at column 1"));
  free(message);
  // A byte that starts no character is shown escaped.
  message = attr_spec_error("T: \xff");
  assert_non_null(strstr(message, "found '\\xff' at column 4"));
  free(message);

  // 78 bytes of ASCII, then "é" (2 bytes, ends at 80) and "ü" (past 80).
  char spec[256];
  memcpy(spec, "x: string = '", 13);
  memset(spec + 13, 'a', 65);
  snprintf(spec + 78, sizeof(spec) - 78, "\u00e9\u00fc' extra");
  message = attr_spec_error(spec);
  char expected[128];
  memcpy(expected, spec, 78);
  snprintf(expected + 78, sizeof(expected) - 78,
           "\u00e9...\": unexpected 'extra' at column 83");
  assert_non_null(strstr(message, expected));
  assert_null(strstr(message, "\u00fc"));
  free(message);
  // 79 bytes of ASCII: "é" would end past 80, so the cut comes before it.
  memset(spec + 13, 'a', 66);
  snprintf(spec + 79, sizeof(spec) - 79, "\u00e9' extra");
  message = attr_spec_error(spec);
  memcpy(expected, spec, 79);
  snprintf(expected + 79, sizeof(expected) - 79, "...\": unexpected 'extra'");
  assert_non_null(strstr(message, expected));
  assert_null(strstr(message, "\u00e9"));
  free(message);
  // The unexpected rest of a long spec is cut too.
  memset(spec, 'b', 200);
  memcpy(spec, "x: int = 1 ", 11);
  spec[200] = '\0';
  message = attr_spec_error(spec);
  assert_true(strlen(message) < 300);
  assert_non_null(strstr(message, "bbb...' at column 12"));
  free(message);
}

static void null_specs_and_builders_are_rejected(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(), "NullSpec",
                                            &builder));
  LOOM_ASSERT_STATUS(loom_op_def_builder_add_attr(builder, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_def_builder_add_attr: spec is NULL");
  LOOM_ASSERT_STATUS(loom_op_def_builder_add_input(builder, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_def_builder_add_input: spec is NULL");
  LOOM_ASSERT_STATUS(loom_op_def_builder_add_output(NULL, "y: float"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_op_def_builder_add_output: builder is NULL");
  loom_op_def_builder_destroy(builder);
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), "X", NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_op_def_builder_create: out_builder is NULL");
}

//===----------------------------------------------------------------------===//
// Registration-time validation
//===----------------------------------------------------------------------===//

typedef struct registration_error_t {
  spec_t specs[3];
  size_t count;
  const char* message;
} registration_error_t;

// Each definition, registered as "<prefix><index>", fails with
// INVALID_ARGUMENT and exactly `message`; the op stays unregistered.
static void check_registration_errors(const char* prefix,
                                      const registration_error_t* cases,
                                      size_t count) {
  for (size_t i = 0; i < count; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "%s%zu", prefix, i);
    const char* expected = cases[i].message;
    loom_status_t status = build(name, cases[i].specs, cases[i].count);
    if (loom_status_code(status) != LOOM_STATUS_INVALID_ARGUMENT ||
        strcmp(loom_status_message(status), expected) != 0) {
      fail_msg("case %zu:\n  got      '%s'\n  expected '%s'", i,
               status ? loom_status_message(status) : "OK", expected);
    }
    loom_status_free(status);
    assert_null(loom_op_registry_find(g_registry, name));
  }
}

static void arguments_must_reference_defined_attrs(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{INPUT, "x: T"}},
       1,
       "Op 'Undefined0': input \"x: T\": 'T' is neither a type nor a defined "
       "attr"},
      {{{OUTPUT, "y: Tout"}},
       1,
       "Op 'Undefined1': output \"y: Tout\": 'Tout' is neither a type nor a "
       "defined attr"},
      {{{INPUT, "x: N * float"}},
       1,
       "Op 'Undefined2': input \"x: N * float\": the length attr 'N' is not "
       "defined"},
  };
  check_registration_errors("Undefined", kCases, COUNT_OF(kCases));
}

static void type_references_must_be_type_attrs(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "T: int"}, {INPUT, "x: T"}},
       2,
       "Op 'NotAType0': input \"x: T\": attr 'T' is used as a type, so it "
       "must be 'type' or 'list(type)', not \"T: int\""},
      {{{ATTR, "T: list(int)"}, {OUTPUT, "y: T"}},
       2,
       "Op 'NotAType1': output \"y: T\": attr 'T' is used as a type, so it "
       "must be 'type' or 'list(type)', not \"T: list(int)\""},
  };
  check_registration_errors("NotAType", kCases, COUNT_OF(kCases));
}

static void lengths_must_be_int_attrs(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "N: type"}, {INPUT, "x: N * float"}},
       2,
       "Op 'BadLength0': input \"x: N * float\": the length attr 'N' must be "
       "an int attr, not \"N: type\""},
      {{{ATTR, "N: list(int)"}, {INPUT, "x: N * float"}},
       2,
       "Op 'BadLength1': input \"x: N * float\": the length attr 'N' must be "
       "an int attr, not \"N: list(int)\""},
      {{{ATTR, "N: float"}, {OUTPUT, "y: N * float"}},
       2,
       "Op 'BadLength2': output \"y: N * float\": the length attr 'N' must "
       "be an int attr, not \"N: float\""},
  };
  check_registration_errors("BadLength", kCases, COUNT_OF(kCases));
}

static void list_type_attr_cannot_take_a_length(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "L: list(type)"}, {ATTR, "N: int"}, {INPUT, "x: N * L"}},
       3,
       "Op 'ListWithLength0': input \"x: N * L\": a list(type) attr ('L') "
       "cannot be repeated by a length"},
  };
  check_registration_errors("ListWithLength", kCases, COUNT_OF(kCases));
}

static void length_attr_minimum_cannot_be_negative(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "N: int >= -3"}, {INPUT, "x: N * float"}},
       2,
       "Op 'NegativeLength0': input \"x: N * float\": attr 'N' is used as a "
       "length, so its minimum must be >= 0"},
  };
  check_registration_errors("NegativeLength", kCases, COUNT_OF(kCases));
}

static void names_must_be_unique_across_attrs_and_arguments(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "x: int"}, {INPUT, "x: float"}},
       2,
       "Op 'Duplicate0': duplicate name 'x' (in \"x: float\")"},
      {{{INPUT, "x: float"}, {OUTPUT, "x: int32"}},
       2,
       "Op 'Duplicate1': duplicate name 'x' (in \"x: int32\")"},
      {{{ATTR, "a: int"}, {ATTR, "a: float = 1"}},
       2,
       "Op 'Duplicate2': duplicate name 'a' (in \"a: float = 1\")"},
      {{{INPUT, "x: float"}, {INPUT, "x: float"}},
       2,
       "Op 'Duplicate3': duplicate name 'x' (in \"x: float\")"},
  };
  check_registration_errors("Duplicate", kCases, COUNT_OF(kCases));
}

static void defaults_must_be_allowed_values(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "T: {float} = DT_INT32"}},
       1,
       "default of attr \"T: {float} = DT_INT32\": Op 'NotAllowed0': value "
       "for attr 'T' of int32 is not in the list of allowed values: float"},
      {{{ATTR, "T: list({float, half}) = [float, int8]"}},
       1,
       "default of attr \"T: list({float, half}) = [float, int8]\": Op "
       "'NotAllowed1': value for attr 'T' of int8 is not in the list of "
       "allowed values: float, half"},
      {{{ATTR, "p: {'A', 'B'} = 'C'"}},
       1,
       "default of attr \"p: {'A', 'B'} = 'C'\": Op 'NotAllowed2': value for "
       "attr 'p' of \"C\" is not in the list of allowed values (spec \"p: "
       "{'A', 'B'} = 'C'\")"},
  };
  check_registration_errors("NotAllowed", kCases, COUNT_OF(kCases));
}

static void defaults_must_reach_the_minimum(void** state) {
  (void)state;
  static const registration_error_t kCases[] = {
      {{{ATTR, "N: int >= 2 = 1"}},
       1,
       "default of attr \"N: int >= 2 = 1\": Op 'BelowMinimum0': value for "
       "attr 'N' of 1 must be at least minimum 2"},
      {{{ATTR, "N: int = 0"}, {INPUT, "x: N * float"}},
       2,
       "default of attr \"N: int = 0\": Op 'BelowMinimum1': value for attr "
       "'N' of 0 must be at least minimum 1"},
      {{{ATTR, "l: list(int) >= 2 = [7]"}},
       1,
       "default of attr \"l: list(int) >= 2 = [7]\": Op 'BelowMinimum2': "
       "length for attr 'l' of 1 must be at least minimum 2"},
  };
  check_registration_errors("BelowMinimum", kCases, COUNT_OF(kCases));
}

static void registering_a_name_twice_already_exists(void** state) {
  (void)state;
  static const spec_t kFirst[] = {{INPUT, "x: float"}};
  LOOM_ASSERT_OK(build("Twice", kFirst, 1));
  LOOM_ASSERT_STATUS(build("Twice", NULL, 0), LOOM_STATUS_ALREADY_EXISTS,
                     "Op 'Twice' is already registered");
  // The first definition stays.
  assert_int_equal(loom_op_registry_find(g_registry, "Twice")->num_inputs, 1);
}

static void invalid_op_names_are_rejected(void** state) {
  (void)state;
  static const char* kNames[] = {"9Lives", "a b",         "",
                                 "Add+",   "Caf\xc3\xa9", ".x"};
  for (size_t i = 0; i < COUNT_OF(kNames); ++i) {
    char expected[128];
    snprintf(expected, sizeof(expected),
             "invalid op name '%s': use letters, digits, '_', '.', '>' and "
             "'-', starting with a letter or '_'",
             kNames[i]);
    loom_op_def_builder_t* builder = (loom_op_def_builder_t*)&builder;
    LOOM_ASSERT_STATUS(loom_op_def_builder_create(loom_allocator_system(),
                                                  kNames[i], &builder),
                       LOOM_STATUS_INVALID_ARGUMENT, expected);
    assert_null(builder);
  }
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_STATUS(
      loom_op_def_builder_create(loom_allocator_system(), NULL, &builder),
      LOOM_STATUS_INVALID_ARGUMENT, "loom_op_def_builder_create: name is NULL");
}

static void tensorflow_and_dialect_op_names_are_accepted(void** state) {
  (void)state;
  // TensorFlow's CamelCase, internal "_" names and "Namespace>Op"; TFRT's
  // dialect-prefixed names.
  static const char* kNames[] = {"AddV2", "_Recv", "Outer>Inner",
                                 "tfrt_test.add"};
  for (size_t i = 0; i < COUNT_OF(kNames); ++i) {
    LOOM_ASSERT_OK(build(kNames[i], NULL, 0));
    assert_string_equal(loom_op_registry_find(g_registry, kNames[i])->name,
                        kNames[i]);
  }
}

static void failed_registration_leaves_the_name_free(void** state) {
  (void)state;
  static const spec_t kBad[] = {{INPUT, "x: T"}};
  LOOM_ASSERT_STATUS(build("Retry", kBad, 1), LOOM_STATUS_INVALID_ARGUMENT,
                     "'T' is neither a type nor a defined attr");
  static const spec_t kGood[] = {{ATTR, "T: type"}, {INPUT, "x: T"}};
  LOOM_ASSERT_OK(build("Retry", kGood, 2));
  assert_int_equal(loom_op_registry_find(g_registry, "Retry")->num_attrs, 1);
}

//===----------------------------------------------------------------------===//
// loom_attr_def_check_value
//===----------------------------------------------------------------------===//

static loom_attr_value_t scalar_value(loom_attr_kind_t kind) {
  loom_attr_value_t value;
  memset(&value, 0, sizeof(value));
  value.kind = kind;
  value.count = 1;
  return value;
}

static loom_attr_value_t list_value(loom_attr_kind_t kind, const void* list,
                                    int64_t count) {
  loom_attr_value_t value;
  memset(&value, 0, sizeof(value));
  value.kind = kind;
  value.is_list = true;
  value.count = count;
  value.u.list = list;
  return value;
}

static void check_value_rejects_a_kind_mismatch(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckKind", "k: list(int)");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckKind");
  loom_attr_value_t value = scalar_value(LOOM_ATTR_KIND_F32);
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckKind': attr 'k' expects a list(int) value, got "
                     "float");
  int64_t ints[1] = {1};
  value = scalar_value(LOOM_ATTR_KIND_I64);
  value.u.i64 = ints[0];
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'k' expects a list(int) value, got int");
  const loom_attr_def_t* scalar = attr_of("CheckScalar", "s: shape");
  value = list_value(LOOM_ATTR_KIND_SHAPE, NULL, 0);
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(NULL, scalar, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op '?': attr 's' expects a shape value, got list(shape)");
}

static void check_value_accepts_other_int_and_float_widths(void** state) {
  (void)state;
  const loom_attr_def_t* ints = attr_of("CheckWidthsI", "k: list(int)");
  int32_t narrow[2] = {1, 2};
  loom_attr_value_t value = list_value(LOOM_ATTR_KIND_I32, narrow, 2);
  LOOM_ASSERT_OK(loom_attr_def_check_value(NULL, ints, &value));
  const loom_attr_def_t* real = attr_of("CheckWidthsF", "f: float");
  value = scalar_value(LOOM_ATTR_KIND_F64);
  value.u.f64 = 0.5;
  LOOM_ASSERT_OK(loom_attr_def_check_value(NULL, real, &value));
  // But not the other way round, nor across kinds.
  const loom_attr_def_t* flag = attr_of("CheckWidthsB", "b: bool");
  value = scalar_value(LOOM_ATTR_KIND_I32);
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(NULL, flag, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "attr 'b' expects a bool value, got I32");
}

static void check_value_enforces_int_minimums(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckMinimum", "N: int >= 2");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckMinimum");
  loom_attr_value_t value = scalar_value(LOOM_ATTR_KIND_I64);
  value.u.i64 = 2;
  LOOM_ASSERT_OK(loom_attr_def_check_value(op, attr, &value));
  value.u.i64 = 1;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckMinimum': value for attr 'N' of 1 must be at "
                     "least minimum 2");
  value = scalar_value(LOOM_ATTR_KIND_I32);
  value.u.i32 = -7;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'N' of -7 must be at least minimum 2");
}

static void check_value_enforces_list_length_minimums(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckLength", "l: list(float) >= 2");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckLength");
  float values[2] = {1, 2};
  loom_attr_value_t value = list_value(LOOM_ATTR_KIND_F32, values, 2);
  LOOM_ASSERT_OK(loom_attr_def_check_value(op, attr, &value));
  value.count = 1;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckLength': length for attr 'l' of 1 must be at "
                     "least minimum 2");
}

static void check_value_enforces_allowed_types(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckTypes", "T: {float, int32}");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckTypes");
  loom_attr_value_t value = scalar_value(LOOM_ATTR_KIND_DTYPE);
  value.u.dtype = LOOM_DTYPE_INT32;
  LOOM_ASSERT_OK(loom_attr_def_check_value(op, attr, &value));
  value.u.dtype = LOOM_DTYPE_INT64;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckTypes': value for attr 'T' of int64 is not in "
                     "the list of allowed values: float, int32");
  // A scalar is checked whatever its `count` says.
  value.count = 0;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'T' of int64 is not in the list of "
                     "allowed values");
}

static void check_value_checks_every_list_element(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("CheckElements", "T: list({float, double})");
  loom_dtype_t types[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                           LOOM_DTYPE_HALF};
  loom_attr_value_t value = list_value(LOOM_ATTR_KIND_DTYPE, types, 2);
  LOOM_ASSERT_OK(loom_attr_def_check_value(NULL, attr, &value));
  value.count = 3;
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(NULL, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "value for attr 'T' of half is not in the list of allowed "
                     "values: float, double");
}

static void check_value_enforces_allowed_strings(void** state) {
  (void)state;
  const loom_attr_def_t* attr =
      attr_of("CheckStrings", "padding: {'SAME', 'VALID'}");
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "CheckStrings");
  loom_attr_value_t value = scalar_value(LOOM_ATTR_KIND_STRING);
  value.u.string = (loom_string_view_t){"VALID", 5};
  LOOM_ASSERT_OK(loom_attr_def_check_value(op, attr, &value));
  // A prefix of an allowed string is not allowed.
  value.u.string = (loom_string_view_t){"VALID", 4};
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(op, attr, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'CheckStrings': value for attr 'padding' of \"VALI\" "
                     "is not in the list of allowed values (spec \"padding: "
                     "{'SAME', 'VALID'}\")");
}

static void check_value_rejects_null_arguments(void** state) {
  (void)state;
  const loom_attr_def_t* attr = attr_of("CheckNull", "a: int");
  loom_attr_value_t value = scalar_value(LOOM_ATTR_KIND_I64);
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(NULL, NULL, &value),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_attr_def_check_value: attr is NULL");
  LOOM_ASSERT_STATUS(loom_attr_def_check_value(NULL, attr, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_attr_def_check_value: value is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      // Attr types.
      cmocka_unit_test(scalar_attr_types_parse_to_their_kinds),
      cmocka_unit_test(list_attr_types_parse_to_lists_of_their_kinds),
      cmocka_unit_test(whitespace_between_tokens_is_ignored),
      cmocka_unit_test(allowed_type_set_keeps_its_types_in_order),
      cmocka_unit_test(allowed_type_set_accepts_enum_names_and_drops_repeats),
      cmocka_unit_test(allowed_string_set_unescapes_both_quote_styles),
      cmocka_unit_test(realnumbertype_has_tensorflows_members),
      cmocka_unit_test(numerictype_spellings_are_the_number_groups),
      cmocka_unit_test(numbertype_has_tensorflows_members),
      cmocka_unit_test(quantizedtype_has_tensorflows_members),
      cmocka_unit_test(groups_combine_with_types_in_a_set),
      cmocka_unit_test(groups_and_sets_work_inside_lists),
      cmocka_unit_test(attr_without_a_set_allows_every_type),
      cmocka_unit_test(int_minimum_is_a_value),
      cmocka_unit_test(list_minimum_is_a_length),
      // Defaults.
      cmocka_unit_test(int_defaults_parse),
      cmocka_unit_test(float_defaults_parse_including_inf_and_nan),
      cmocka_unit_test(bool_defaults_parse),
      cmocka_unit_test(string_defaults_unescape_c_escapes),
      cmocka_unit_test(type_defaults_accept_enum_and_plain_names),
      cmocka_unit_test(shape_defaults_parse_tensorflow_text),
      cmocka_unit_test(tensor_default_broadcasts_a_single_value),
      cmocka_unit_test(tensor_default_takes_one_value_per_element),
      cmocka_unit_test(tensor_default_without_values_is_zero),
      cmocka_unit_test(tensor_default_keeps_int64_values_exact),
      cmocka_unit_test(func_defaults_parse),
      cmocka_unit_test(list_defaults_parse_for_every_kind),
      cmocka_unit_test(failed_spec_keeps_an_earlier_default_of_the_same_name),
      // Arguments.
      cmocka_unit_test(type_attr_argument_names_its_attr),
      cmocka_unit_test(fixed_type_argument_has_its_dtype),
      cmocka_unit_test(length_times_type_attr_argument),
      cmocka_unit_test(length_times_fixed_type_argument),
      cmocka_unit_test(list_type_attr_argument_becomes_type_list_attr),
      cmocka_unit_test(ref_wraps_every_argument_form),
      cmocka_unit_test(resource_input_makes_the_op_stateful),
      cmocka_unit_test(resource_output_makes_the_op_stateful),
      cmocka_unit_test(ordinary_arguments_leave_the_op_stateless),
      cmocka_unit_test(length_attrs_used_by_arguments_get_a_minimum_of_one),
      cmocka_unit_test(explicit_minimum_of_zero_is_kept),
      cmocka_unit_test(arguments_keep_declaration_order),
      cmocka_unit_test(find_functions_locate_attrs_and_arguments),
      cmocka_unit_test(find_functions_report_absence),
      // Properties.
      cmocka_unit_test(properties_default_to_false),
      cmocka_unit_test(properties_honour_true_and_false),
      cmocka_unit_test(property_setters_ignore_a_null_builder),
      cmocka_unit_test(deprecation_records_version_and_explanation),
      cmocka_unit_test(deprecation_without_explanation_gets_an_empty_one),
      cmocka_unit_test(deprecation_needs_a_positive_version),
      cmocka_unit_test(shape_fn_and_user_data_are_stored),
      // Malformed specs.
      cmocka_unit_test(malformed_attr_types_report_the_column),
      cmocka_unit_test(malformed_minimums_report_the_column),
      cmocka_unit_test(malformed_scalar_defaults_report_the_column),
      cmocka_unit_test(malformed_strings_report_the_column),
      cmocka_unit_test(malformed_list_defaults_report_the_column),
      cmocka_unit_test(list_default_beyond_256_elements_is_rejected),
      cmocka_unit_test(tensor_default_beyond_4096_values_is_rejected),
      cmocka_unit_test(set_beyond_64_allowed_strings_is_rejected),
      cmocka_unit_test(malformed_shape_defaults_report_the_column),
      cmocka_unit_test(shape_defaults_take_ranks_up_to_254),
      cmocka_unit_test(malformed_tensor_defaults_report_the_column),
      cmocka_unit_test(malformed_func_defaults_report_the_column),
      cmocka_unit_test(malformed_argument_specs_report_the_column),
      cmocka_unit_test(spec_errors_keep_utf8_characters_whole),
      cmocka_unit_test(null_specs_and_builders_are_rejected),
      // Registration.
      cmocka_unit_test(arguments_must_reference_defined_attrs),
      cmocka_unit_test(type_references_must_be_type_attrs),
      cmocka_unit_test(lengths_must_be_int_attrs),
      cmocka_unit_test(list_type_attr_cannot_take_a_length),
      cmocka_unit_test(length_attr_minimum_cannot_be_negative),
      cmocka_unit_test(names_must_be_unique_across_attrs_and_arguments),
      cmocka_unit_test(defaults_must_be_allowed_values),
      cmocka_unit_test(defaults_must_reach_the_minimum),
      cmocka_unit_test(registering_a_name_twice_already_exists),
      cmocka_unit_test(invalid_op_names_are_rejected),
      cmocka_unit_test(tensorflow_and_dialect_op_names_are_accepted),
      cmocka_unit_test(failed_registration_leaves_the_name_free),
      // check_value.
      cmocka_unit_test(check_value_rejects_a_kind_mismatch),
      cmocka_unit_test(check_value_accepts_other_int_and_float_widths),
      cmocka_unit_test(check_value_enforces_int_minimums),
      cmocka_unit_test(check_value_enforces_list_length_minimums),
      cmocka_unit_test(check_value_enforces_allowed_types),
      cmocka_unit_test(check_value_checks_every_list_element),
      cmocka_unit_test(check_value_enforces_allowed_strings),
      cmocka_unit_test(check_value_rejects_null_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
