// TensorFlow's op C API (tensorflow/c/ops.h) end to end: building and
// registering op definitions into the process-wide registry, and TF-style
// shape functions run through loom_op_def_infer_shapes. Every case uses its
// own op names: the registry is global and registrations cannot be undone.

#include "loom/op_def.h"
#include "loom/shape_inference.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static const loom_op_def_t* find_op(const char* name) {
  return loom_op_registry_find(loom_op_registry_global(), name);
}

// Registers `builder` (consumed) and fails the test unless that worked.
static void register_ok(TF_OpDefinitionBuilder* builder) {
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) {
    fail_msg("TF_RegisterOpDefinition: %s", TF_Message(status));
  }
  TF_DeleteStatus(status);
}

// Registers `builder` (consumed) and checks it fails with `code` and a
// message containing `substring`.
static void register_fails(TF_OpDefinitionBuilder* builder, TF_Code code,
                           const char* substring) {
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  assert_int_equal(TF_GetCode(status), code);
  if (!strstr(TF_Message(status), substring)) {
    fail_msg("message '%s' does not contain '%s'", TF_Message(status),
             substring);
  }
  TF_DeleteStatus(status);
}

static void assert_tf_status(TF_Status* status, TF_Code code,
                             const char* substring) {
  assert_int_equal(TF_GetCode(status), code);
  if (substring && !strstr(TF_Message(status), substring)) {
    fail_msg("message '%s' does not contain '%s'", TF_Message(status),
             substring);
  }
}

static loom_shape_t shape_of(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

static void assert_shape(const loom_shape_t* shape, const int64_t* dims,
                         int rank) {
  loom_shape_t expected = shape_of(dims, rank);
  if (!loom_shape_equal(shape, &expected)) {
    char got[64], want[64];
    loom_shape_format(shape, got, sizeof(got));
    loom_shape_format(&expected, want, sizeof(want));
    fail_msg("shape %s, expected %s", got, want);
  }
}

// Registers op `name` with one float input per entry of `num_inputs`,
// `num_outputs` float outputs, a type attr "T" (default float) and
// `shape_fn`.
static void register_shape_op(const char* name, int num_inputs, int num_outputs,
                              void (*shape_fn)(TF_ShapeInferenceContext*,
                                               TF_Status*)) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  TF_OpDefinitionBuilderAddAttr(builder, "T: {float, int32} = DT_FLOAT");
  static const char* const kInputs[] = {"a: float", "b: float", "c: float"};
  static const char* const kOutputs[] = {"x: float", "y: float", "z: float"};
  for (int i = 0; i < num_inputs; ++i) {
    TF_OpDefinitionBuilderAddInput(builder, kInputs[i]);
  }
  for (int i = 0; i < num_outputs; ++i) {
    TF_OpDefinitionBuilderAddOutput(builder, kOutputs[i]);
  }
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, shape_fn);
  register_ok(builder);
}

// Runs op `name`'s shape function with attrs {T: t} (LOOM_DTYPE_INVALID:
// no attrs).
static loom_status_t infer_with(const char* name, loom_dtype_t t,
                                const loom_shape_t* inputs, int32_t num_inputs,
                                loom_shape_t* outputs, int32_t num_outputs) {
  const loom_op_def_t* op = find_op(name);
  assert_non_null(op);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  if (t != LOOM_DTYPE_INVALID) {
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "T", t));
  }
  loom_dtype_t dtypes[3] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT,
                            LOOM_DTYPE_FLOAT};
  loom_status_t status = loom_op_def_infer_shapes(
      op, &attrs, inputs, dtypes, NULL, num_inputs, outputs, num_outputs);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static loom_status_t infer(const char* name, const loom_shape_t* inputs,
                           int32_t num_inputs, loom_shape_t* outputs,
                           int32_t num_outputs) {
  return infer_with(name, LOOM_DTYPE_FLOAT, inputs, num_inputs, outputs,
                    num_outputs);
}

//===----------------------------------------------------------------------===//
// Building and registering definitions
//===----------------------------------------------------------------------===//

static void input_and_output_forms_reach_the_definition(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsArgForms");
  assert_non_null(builder);
  TF_OpDefinitionBuilderAddAttr(builder, "T: type");
  TF_OpDefinitionBuilderAddAttr(builder, "N: int");
  TF_OpDefinitionBuilderAddAttr(builder, "Tlist: list(type)");
  TF_OpDefinitionBuilderAddInput(builder, "x: T");
  TF_OpDefinitionBuilderAddInput(builder, "fixed: int64");
  TF_OpDefinitionBuilderAddInput(builder, "many: N * T");
  TF_OpDefinitionBuilderAddInput(builder, "mixed: Tlist");
  TF_OpDefinitionBuilderAddInput(builder, "state: Ref(T)");
  TF_OpDefinitionBuilderAddOutput(builder, "y: T");
  TF_OpDefinitionBuilderAddOutput(builder, "count: int32");
  TF_OpDefinitionBuilderAddOutput(builder, "ys: N * float");
  TF_OpDefinitionBuilderAddOutput(builder, "outs: Tlist");
  TF_OpDefinitionBuilderAddOutput(builder, "out_ref: Ref(int32)");
  register_ok(builder);

  const loom_op_def_t* op = find_op("OpsArgForms");
  assert_non_null(op);
  assert_int_equal(op->num_inputs, 5);
  assert_int_equal(op->num_outputs, 5);
  assert_string_equal(op->inputs[0].name, "x");
  assert_string_equal(op->inputs[0].type_attr, "T");
  assert_false(op->inputs[0].is_ref);
  assert_int_equal(op->inputs[1].dtype, LOOM_DTYPE_INT64);
  assert_null(op->inputs[1].type_attr);
  assert_string_equal(op->inputs[2].number_attr, "N");
  assert_string_equal(op->inputs[2].type_attr, "T");
  assert_string_equal(op->inputs[3].type_list_attr, "Tlist");
  assert_null(op->inputs[3].type_attr);
  assert_true(op->inputs[4].is_ref);
  assert_string_equal(op->inputs[4].type_attr, "T");
  assert_string_equal(op->inputs[4].spec, "state: Ref(T)");
  assert_string_equal(op->outputs[0].type_attr, "T");
  assert_int_equal(op->outputs[1].dtype, LOOM_DTYPE_INT32);
  assert_string_equal(op->outputs[2].number_attr, "N");
  assert_int_equal(op->outputs[2].dtype, LOOM_DTYPE_FLOAT);
  assert_string_equal(op->outputs[3].type_list_attr, "Tlist");
  assert_true(op->outputs[4].is_ref);
  assert_int_equal(op->outputs[4].dtype, LOOM_DTYPE_INT32);
}

static void attr_forms_reach_the_definition(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsAttrForms");
  TF_OpDefinitionBuilderAddAttr(builder, "T: {float, int32}");
  TF_OpDefinitionBuilderAddAttr(builder, "N: int >= 2");
  TF_OpDefinitionBuilderAddAttr(builder, "alpha: float = 0.5");
  TF_OpDefinitionBuilderAddAttr(builder, "flag: bool = true");
  TF_OpDefinitionBuilderAddAttr(builder, "mode: {'fast', 'exact'} = 'exact'");
  TF_OpDefinitionBuilderAddAttr(builder, "out_type: type = DT_INT64");
  TF_OpDefinitionBuilderAddAttr(builder, "sizes: list(int) >= 1 = [3, 4]");
  TF_OpDefinitionBuilderAddAttr(builder, "shape: shape");
  TF_OpDefinitionBuilderAddAttr(builder, "value: tensor");
  TF_OpDefinitionBuilderAddAttr(builder, "f: func");
  TF_OpDefinitionBuilderAddAttr(builder, "label: string = ''");
  register_ok(builder);

  const loom_op_def_t* op = find_op("OpsAttrForms");
  assert_non_null(op);
  assert_int_equal(op->num_attrs, 11);
  const loom_attr_def_t* t = loom_op_def_find_attr(op, "T");
  assert_int_equal(t->kind, LOOM_ATTR_KIND_DTYPE);
  assert_int_equal(t->num_allowed_types, 2);
  assert_true(loom_attr_def_allows_type(t, LOOM_DTYPE_INT32));
  assert_false(loom_attr_def_allows_type(t, LOOM_DTYPE_INT64));
  const loom_attr_def_t* n = loom_op_def_find_attr(op, "N");
  assert_int_equal(n->kind, LOOM_ATTR_KIND_I64);
  assert_true(n->has_minimum);
  assert_int_equal(n->minimum, 2);
  assert_false(n->has_default);
  float alpha = 0;
  LOOM_ASSERT_OK(loom_op_attrs_get_f32(op->defaults, "alpha", &alpha));
  assert_true(alpha == 0.5f);
  bool flag = false;
  LOOM_ASSERT_OK(loom_op_attrs_get_bool(op->defaults, "flag", &flag));
  assert_true(flag);
  const loom_attr_def_t* mode = loom_op_def_find_attr(op, "mode");
  assert_int_equal(mode->kind, LOOM_ATTR_KIND_STRING);
  assert_int_equal(mode->num_allowed_strings, 2);
  loom_dtype_t out_type = LOOM_DTYPE_INVALID;
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(op->defaults, "out_type", &out_type));
  assert_int_equal(out_type, LOOM_DTYPE_INT64);
  const loom_attr_def_t* sizes = loom_op_def_find_attr(op, "sizes");
  assert_true(sizes->is_list);
  assert_true(sizes->has_default);
  loom_attr_value_t value;
  assert_true(loom_op_attrs_get(op->defaults, "sizes", &value));
  assert_int_equal(value.count, 2);
  assert_int_equal(loom_op_def_find_attr(op, "shape")->kind,
                   LOOM_ATTR_KIND_SHAPE);
  assert_int_equal(loom_op_def_find_attr(op, "value")->kind,
                   LOOM_ATTR_KIND_TENSOR);
  assert_int_equal(loom_op_def_find_attr(op, "f")->kind, LOOM_ATTR_KIND_FUNC);
  assert_true(loom_op_def_find_attr(op, "label")->has_default);
}

static void properties_set_true_reach_the_registry(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsPropsTrue");
  TF_OpDefinitionBuilderAddInput(builder, "x: float");
  TF_OpDefinitionBuilderAddInput(builder, "y: float");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  TF_OpDefinitionBuilderSetIsCommutative(builder, true);
  TF_OpDefinitionBuilderSetIsAggregate(builder, true);
  TF_OpDefinitionBuilderSetIsStateful(builder, true);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(builder, true);
  register_ok(builder);
  const loom_op_def_t* op = find_op("OpsPropsTrue");
  assert_non_null(op);
  assert_true(op->is_commutative);
  assert_true(op->is_aggregate);
  assert_true(op->is_stateful);
  assert_true(op->allows_uninitialized_input);
}

static void properties_set_false_reach_the_registry(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsPropsFalse");
  TF_OpDefinitionBuilderAddInput(builder, "x: float");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  // Set, then cleared: the last call wins.
  TF_OpDefinitionBuilderSetIsCommutative(builder, true);
  TF_OpDefinitionBuilderSetIsAggregate(builder, true);
  TF_OpDefinitionBuilderSetIsStateful(builder, true);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(builder, true);
  TF_OpDefinitionBuilderSetIsCommutative(builder, false);
  TF_OpDefinitionBuilderSetIsAggregate(builder, false);
  TF_OpDefinitionBuilderSetIsStateful(builder, false);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(builder, false);
  register_ok(builder);
  const loom_op_def_t* op = find_op("OpsPropsFalse");
  assert_non_null(op);
  assert_false(op->is_commutative);
  assert_false(op->is_aggregate);
  assert_false(op->is_stateful);
  assert_false(op->allows_uninitialized_input);
}

static void deprecation_reaches_the_registry(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsDeprecated");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  TF_OpDefinitionBuilderDeprecated(builder, 7, "Use OpsReplacement");
  register_ok(builder);
  const loom_op_def_t* op = find_op("OpsDeprecated");
  assert_non_null(op);
  assert_int_equal(op->deprecation_version, 7);
  assert_string_equal(op->deprecation_explanation, "Use OpsReplacement");
}

static void undeprecated_op_has_version_zero(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("OpsNotDeprecated");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  register_ok(builder);
  assert_int_equal(find_op("OpsNotDeprecated")->deprecation_version, 0);
}

static void non_positive_deprecation_version_fails_registration(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("OpsBadDeprecation");
  TF_OpDefinitionBuilderDeprecated(builder, 0, "never");
  register_fails(builder, TF_INVALID_ARGUMENT,
                 "Op 'OpsBadDeprecation': deprecation version 0 must be "
                 "positive");
  assert_null(find_op("OpsBadDeprecation"));
}

static void noop_shape_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  (void)ctx;
  TF_SetStatus(status, TF_OK, "");
}

static void shape_function_is_attached_to_the_definition(void** state) {
  (void)state;
  register_shape_op("OpsWithShapeFn", 1, 1, noop_shape_fn);
  assert_non_null(find_op("OpsWithShapeFn")->shape_fn);
}

static void null_shape_function_leaves_none(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsNoShapeFn");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, noop_shape_fn);
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, NULL);
  register_ok(builder);
  const loom_op_def_t* op = find_op("OpsNoShapeFn");
  assert_null(op->shape_fn);
  loom_shape_t output = loom_shape_scalar();
  LOOM_ASSERT_OK(
      infer_with("OpsNoShapeFn", LOOM_DTYPE_INVALID, NULL, 0, &output, 1));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
}

static void malformed_spec_fails_with_the_spec_and_column(void** state) {
  (void)state;
  static const struct {
    const char* op;
    int kind;  // 0 attr, 1 input, 2 output
    const char* spec;
    const char* message;
  } kCases[] = {
      {"OpsBadAttrSpec", 0, "T: {float, int32",
       "Op 'OpsBadAttrSpec': invalid attr spec \"T: {float, int32\": "
       "expected '}' to close the set of allowed values, found the end at "
       "column 17"},
      {"OpsBadInputSpec", 1, "x: Ref(T",
       "Op 'OpsBadInputSpec': input: invalid argument spec \"x: Ref(T\": "
       "expected ')' to close 'Ref(', found the end at column 9"},
      {"OpsBadOutputSpec", 2, "y float",
       "Op 'OpsBadOutputSpec': output: invalid argument spec \"y float\": "
       "expected ':' after the argument name, found 'f' at column 3"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(kCases[i].op);
    TF_OpDefinitionBuilderAddAttr(builder, "T: type");
    if (kCases[i].kind == 0) {
      TF_OpDefinitionBuilderAddAttr(builder, kCases[i].spec);
    } else if (kCases[i].kind == 1) {
      TF_OpDefinitionBuilderAddInput(builder, kCases[i].spec);
    } else {
      TF_OpDefinitionBuilderAddOutput(builder, kCases[i].spec);
    }
    TF_Status* status = TF_NewStatus();
    TF_RegisterOpDefinition(builder, status);
    assert_tf_status(status, TF_INVALID_ARGUMENT, kCases[i].message);
    TF_DeleteStatus(status);
    assert_null(find_op(kCases[i].op));
  }
}

static void first_malformed_spec_is_the_one_reported(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsTwoBadSpecs");
  TF_OpDefinitionBuilderAddInput(builder, "first: ");
  TF_OpDefinitionBuilderAddAttr(builder, "second");
  TF_OpDefinitionBuilderAddOutput(builder, "fine: float");
  register_fails(builder, TF_INVALID_ARGUMENT,
                 "input: invalid argument spec \"first: \": expected a "
                 "type or attr name, found the end at column 8");
}

static void inconsistent_definition_fails_registration(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("OpsUndefinedAttr");
  TF_OpDefinitionBuilderAddInput(builder, "x: T");
  register_fails(builder, TF_INVALID_ARGUMENT,
                 "Op 'OpsUndefinedAttr': input \"x: T\": 'T' is neither a "
                 "type nor a defined attr");
  assert_null(find_op("OpsUndefinedAttr"));
}

static void invalid_op_name_fails_registration(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("9lives");
  assert_non_null(builder);
  // The builder functions accept a builder whose creation failed.
  TF_OpDefinitionBuilderAddAttr(builder, "T: type");
  TF_OpDefinitionBuilderAddInput(builder, "x: T");
  TF_OpDefinitionBuilderAddOutput(builder, "y: T");
  TF_OpDefinitionBuilderSetIsCommutative(builder, true);
  TF_OpDefinitionBuilderSetIsAggregate(builder, true);
  TF_OpDefinitionBuilderSetIsStateful(builder, true);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(builder, true);
  TF_OpDefinitionBuilderDeprecated(builder, 3, "old");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, noop_shape_fn);
  register_fails(builder, TF_INVALID_ARGUMENT, "invalid op name '9lives'");
  assert_null(find_op("9lives"));
}

static void second_registration_is_already_exists(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* first = TF_NewOpDefinitionBuilder("OpsTwice");
  TF_OpDefinitionBuilderAddOutput(first, "y: float");
  register_ok(first);
  TF_OpDefinitionBuilder* second = TF_NewOpDefinitionBuilder("OpsTwice");
  TF_OpDefinitionBuilderAddOutput(second, "y: int32");
  TF_OpDefinitionBuilderAddOutput(second, "z: int32");
  register_fails(second, TF_ALREADY_EXISTS,
                 "Op 'OpsTwice' is already registered");
  // The first definition stays.
  const loom_op_def_t* op = find_op("OpsTwice");
  assert_int_equal(op->num_outputs, 1);
  assert_int_equal(op->outputs[0].dtype, LOOM_DTYPE_FLOAT);
}

static void delete_frees_an_unregistered_builder(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder("OpsDeleted");
  TF_OpDefinitionBuilderAddAttr(builder, "T: type");
  TF_OpDefinitionBuilderAddInput(builder, "x: T");
  TF_OpDefinitionBuilderAddInput(builder, "bad: (");  // an error is held too
  TF_OpDefinitionBuilderDeprecated(builder, 2, "gone");
  TF_DeleteOpDefinitionBuilder(builder);
  TF_DeleteOpDefinitionBuilder(NULL);
  assert_null(find_op("OpsDeleted"));
}

static void registering_a_null_builder_is_invalid_argument(void** state) {
  (void)state;
  register_fails(NULL, TF_INVALID_ARGUMENT,
                 "TF_RegisterOpDefinition: builder is NULL");
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

// What the shape functions below observed.
static struct {
  int64_t num_inputs;
  TF_DataType type;
  int64_t ranks[4];
  int known[4];
  int64_t dims[6];
  int dims_known[6];
} g_seen;

// Output 0 = input 1, output 1 = a scalar, output 2 = [3].
static void copy_scalar_vector_fn(TF_ShapeInferenceContext* ctx,
                                  TF_Status* status) {
  g_seen.num_inputs = TF_ShapeInferenceContextNumInputs(ctx);
  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 1, input, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, input, status);
  }
  TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 1, scalar, status);
  }
  TF_ShapeHandle* vector = TF_ShapeInferenceContextVectorFromSize(ctx, 3);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 2, vector, status);
  }
  TF_DeleteShapeHandle(vector);
  TF_DeleteShapeHandle(scalar);
  TF_DeleteShapeHandle(input);
}

static void shape_function_reads_inputs_and_sets_outputs(void** state) {
  (void)state;
  register_shape_op("OpsCopyShape", 2, 3, copy_scalar_vector_fn);
  int64_t a[1] = {9}, b[2] = {2, 5};
  loom_shape_t inputs[2] = {shape_of(a, 1), shape_of(b, 2)};
  loom_shape_t outputs[3];
  LOOM_ASSERT_OK(infer("OpsCopyShape", inputs, 2, outputs, 3));
  assert_int_equal(g_seen.num_inputs, 2);
  assert_shape(&outputs[0], b, 2);
  assert_shape(&outputs[1], NULL, 0);
  int64_t three[1] = {3};
  assert_shape(&outputs[2], three, 1);
}

static void get_input_bad_index_fn(TF_ShapeInferenceContext* ctx,
                                   TF_Status* status) {
  TF_ShapeHandle* handle = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 1, handle, status);
  TF_DeleteShapeHandle(handle);
}

static void get_input_out_of_range_is_invalid_argument(void** state) {
  (void)state;
  register_shape_op("OpsGetInputRange", 1, 1, get_input_bad_index_fn);
  loom_shape_t inputs[1] = {loom_shape_scalar()};
  loom_shape_t outputs[1];
  LOOM_ASSERT_STATUS(
      infer("OpsGetInputRange", inputs, 1, outputs, 1),
      LOOM_STATUS_INVALID_ARGUMENT,
      "input index 1 is out of range [0, 1) for op 'OpsGetInputRange'");
}

static void set_output_bad_index_fn(TF_ShapeInferenceContext* ctx,
                                    TF_Status* status) {
  TF_ShapeHandle* handle = TF_ShapeInferenceContextScalar(ctx);
  TF_ShapeInferenceContextSetOutput(ctx, 2, handle, status);
  TF_DeleteShapeHandle(handle);
}

static void set_output_out_of_range_is_invalid_argument(void** state) {
  (void)state;
  register_shape_op("OpsSetOutputRange", 0, 1, set_output_bad_index_fn);
  loom_shape_t outputs[1];
  LOOM_ASSERT_STATUS(infer("OpsSetOutputRange", NULL, 0, outputs, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "output index 2 is out of range [0, 1) for op "
                     "'OpsSetOutputRange'");
}

static void null_handle_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeInferenceContextGetInput(ctx, 0, NULL, status);
}

static void null_handle_is_invalid_argument(void** state) {
  (void)state;
  register_shape_op("OpsNullHandle", 1, 1, null_handle_fn);
  loom_shape_t inputs[1] = {loom_shape_scalar()};
  loom_shape_t outputs[1];
  LOOM_ASSERT_STATUS(infer("OpsNullHandle", inputs, 1, outputs, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "TF_ShapeInferenceContextGetInput: NULL context or "
                     "handle");
}

static void shape_algebra_rejects_null_handles(void** state) {
  (void)state;
  // Outside a shape function: the algebra needs no context.
  TF_ShapeHandle* handle = TF_NewShapeHandle();
  TF_Status* status = TF_NewStatus();
  TF_ShapeInferenceContextWithRank(NULL, NULL, 1, handle, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextWithRank: NULL context or handle");
  TF_ShapeInferenceContextWithRankAtLeast(NULL, handle, 1, NULL, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextWithRankAtLeast: NULL");
  TF_ShapeInferenceContextWithRankAtMost(NULL, NULL, 1, handle, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextWithRankAtMost: NULL");
  TF_ShapeInferenceContextSubshape(NULL, NULL, 0, 1, handle, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextSubshape: NULL");
  TF_ShapeInferenceContextConcatenateShapes(NULL, handle, handle, NULL, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextConcatenateShapes: NULL");
  TF_ShapeInferenceContextSetOutput(NULL, 0, handle, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextSetOutput: NULL");
  TF_ShapeInferenceContextSetUnknownShape(NULL, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContextSetUnknownShape: NULL");
  TF_DataType type;
  TF_ShapeInferenceContext_GetAttrType(NULL, "T", &type, status);
  assert_tf_status(status, TF_INVALID_ARGUMENT,
                   "TF_ShapeInferenceContext_GetAttrType: NULL");
  assert_int_equal(TF_ShapeInferenceContextNumInputs(NULL), 0);
  TF_DeleteStatus(status);
  TF_DeleteShapeHandle(handle);
}

static void get_attr_type_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  g_seen.type = (TF_DataType)0;
  TF_ShapeInferenceContext_GetAttrType(ctx, "T", &g_seen.type, status);
}

static void get_attr_type_reads_the_type_attr(void** state) {
  (void)state;
  register_shape_op("OpsGetAttrType", 0, 1, get_attr_type_fn);
  loom_shape_t outputs[1];
  LOOM_ASSERT_OK(
      infer_with("OpsGetAttrType", LOOM_DTYPE_INT32, NULL, 0, outputs, 1));
  assert_int_equal(g_seen.type, TF_INT32);
}

static void get_attr_type_of_a_missing_attr_is_an_error(void** state) {
  (void)state;
  register_shape_op("OpsGetAttrMissing", 0, 1, get_attr_type_fn);
  loom_shape_t outputs[1];
  // No "T" in the attrs: the caller did not complete them.
  LOOM_ASSERT_STATUS(
      infer_with("OpsGetAttrMissing", LOOM_DTYPE_INVALID, NULL, 0, outputs, 1),
      LOOM_STATUS_NOT_FOUND, "Op 'OpsGetAttrMissing': attr 'T' not found");
  assert_int_equal(g_seen.type, 0);
}

static void get_int_attr_as_type_fn(TF_ShapeInferenceContext* ctx,
                                    TF_Status* status) {
  g_seen.type = (TF_DataType)0;
  TF_ShapeInferenceContext_GetAttrType(ctx, "n", &g_seen.type, status);
}

static void get_attr_type_of_a_non_type_attr_is_invalid_argument(void** state) {
  (void)state;
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("OpsGetAttrTypeOfInt");
  TF_OpDefinitionBuilderAddAttr(builder, "n: int = 3");
  TF_OpDefinitionBuilderAddOutput(builder, "z: float");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder,
                                                  get_int_attr_as_type_fn);
  register_ok(builder);
  const loom_op_def_t* op = find_op("OpsGetAttrTypeOfInt");
  loom_shape_t outputs[1];
  // The op's defaults hold n = 3.
  LOOM_ASSERT_STATUS(loom_op_def_infer_shapes(op, op->defaults, NULL, NULL,
                                              NULL, 0, outputs, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'OpsGetAttrTypeOfInt': attr 'n' has type I64, "
                     "expected type");
  assert_int_equal(g_seen.type, 0);  // untouched
}

static void rank_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  for (int i = 0; i < 2; ++i) {
    TF_ShapeHandle* handle = TF_NewShapeHandle();
    TF_ShapeInferenceContextGetInput(ctx, i, handle, status);
    g_seen.ranks[i] = TF_ShapeInferenceContextRank(ctx, handle);
    g_seen.known[i] = TF_ShapeInferenceContextRankKnown(ctx, handle);
    TF_DeleteShapeHandle(handle);
  }
  TF_ShapeHandle* fresh = TF_NewShapeHandle();
  g_seen.ranks[2] = TF_ShapeInferenceContextRank(ctx, fresh);
  g_seen.known[2] = TF_ShapeInferenceContextRankKnown(ctx, fresh);
  TF_DeleteShapeHandle(fresh);
}

static void rank_and_rank_known_describe_the_handle(void** state) {
  (void)state;
  register_shape_op("OpsRank", 2, 1, rank_fn);
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t inputs[2] = {shape_of(dims, 3), loom_shape_unknown()};
  loom_shape_t outputs[1];
  LOOM_ASSERT_OK(infer("OpsRank", inputs, 2, outputs, 1));
  assert_int_equal(g_seen.ranks[0], 3);
  assert_true(g_seen.known[0]);
  assert_int_equal(g_seen.ranks[1], -1);
  assert_false(g_seen.known[1]);
  // A new handle is an unknown shape.
  assert_int_equal(g_seen.ranks[2], -1);
  assert_false(g_seen.known[2]);
}

// The rank check the next shape function applies to input 0, its result
// becoming output 0.
static struct {
  int which;  // 0 WithRank, 1 WithRankAtLeast, 2 WithRankAtMost
  int64_t rank;
} g_rank_check;

static void rank_check_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeHandle* result = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, input, status);
  if (g_rank_check.which == 0) {
    TF_ShapeInferenceContextWithRank(ctx, input, g_rank_check.rank, result,
                                     status);
  } else if (g_rank_check.which == 1) {
    TF_ShapeInferenceContextWithRankAtLeast(ctx, input, g_rank_check.rank,
                                            result, status);
  } else {
    TF_ShapeInferenceContextWithRankAtMost(ctx, input, g_rank_check.rank,
                                           result, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, result, status);
  }
  TF_DeleteShapeHandle(result);
  TF_DeleteShapeHandle(input);
}

static loom_status_t check_rank(const char* op, int which, int64_t rank,
                                loom_shape_t input, loom_shape_t* output) {
  g_rank_check.which = which;
  g_rank_check.rank = rank;
  return infer(op, &input, 1, output, 1);
}

static void with_rank_accepts_only_the_exact_rank(void** state) {
  (void)state;
  register_shape_op("OpsWithRank", 1, 1, rank_check_fn);
  int64_t dims[2] = {4, 5};
  loom_shape_t output;
  LOOM_ASSERT_OK(check_rank("OpsWithRank", 0, 2, shape_of(dims, 2), &output));
  assert_shape(&output, dims, 2);
  LOOM_ASSERT_STATUS(
      check_rank("OpsWithRank", 0, 3, shape_of(dims, 2), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'OpsWithRank': Shape must be rank 3 but is rank 2");
  LOOM_ASSERT_STATUS(
      check_rank("OpsWithRank", 0, 1, shape_of(dims, 2), &output),
      LOOM_STATUS_INVALID_ARGUMENT, "Shape must be rank 1 but is rank 2");
}

static void with_rank_at_least_accepts_higher_ranks(void** state) {
  (void)state;
  register_shape_op("OpsWithRankAtLeast", 1, 1, rank_check_fn);
  int64_t dims[2] = {4, 5};
  loom_shape_t output;
  LOOM_ASSERT_OK(
      check_rank("OpsWithRankAtLeast", 1, 1, shape_of(dims, 2), &output));
  assert_shape(&output, dims, 2);
  LOOM_ASSERT_OK(
      check_rank("OpsWithRankAtLeast", 1, 2, shape_of(dims, 2), &output));
  LOOM_ASSERT_STATUS(
      check_rank("OpsWithRankAtLeast", 1, 3, shape_of(dims, 2), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'OpsWithRankAtLeast': Shape must be at least rank 3 but is rank 2");
}

static void with_rank_at_most_accepts_lower_ranks(void** state) {
  (void)state;
  register_shape_op("OpsWithRankAtMost", 1, 1, rank_check_fn);
  int64_t dims[2] = {4, 5};
  loom_shape_t output;
  LOOM_ASSERT_OK(
      check_rank("OpsWithRankAtMost", 2, 3, shape_of(dims, 2), &output));
  assert_shape(&output, dims, 2);
  LOOM_ASSERT_OK(
      check_rank("OpsWithRankAtMost", 2, 2, shape_of(dims, 2), &output));
  LOOM_ASSERT_STATUS(
      check_rank("OpsWithRankAtMost", 2, 1, shape_of(dims, 2), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Op 'OpsWithRankAtMost': Shape must be at most rank 1 but is rank 2");
}

static void rank_checks_pass_unknown_ranks(void** state) {
  (void)state;
  register_shape_op("OpsRankUnknown", 1, 1, rank_check_fn);
  loom_shape_t output;
  // WithRank makes the rank known, with unknown dims.
  LOOM_ASSERT_OK(
      check_rank("OpsRankUnknown", 0, 3, loom_shape_unknown(), &output));
  int64_t unknown3[3] = {-1, -1, -1};
  assert_shape(&output, unknown3, 3);
  LOOM_ASSERT_OK(
      check_rank("OpsRankUnknown", 1, 5, loom_shape_unknown(), &output));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_OK(
      check_rank("OpsRankUnknown", 2, 0, loom_shape_unknown(), &output));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
}

static void rank_beyond_the_maximum_is_invalid_argument(void** state) {
  (void)state;
  register_shape_op("OpsRankTooHigh", 1, 1, rank_check_fn);
  loom_shape_t output;
  LOOM_ASSERT_STATUS(
      check_rank("OpsRankTooHigh", 0, 255, loom_shape_unknown(), &output),
      LOOM_STATUS_INVALID_ARGUMENT, "WithRank: rank 255 is outside [0, 254]");
  LOOM_ASSERT_STATUS(
      check_rank("OpsRankTooHigh", 1, -1, loom_shape_unknown(), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "WithRankAtLeast: rank -1 is outside [0, 254]");
  LOOM_ASSERT_STATUS(
      check_rank("OpsRankTooHigh", 2, 300, loom_shape_scalar(), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "WithRankAtMost: rank 300 is outside [0, 254]");
}

static void dim_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  static const int64_t kIndices[5] = {0, 2, -1, -3, 3};
  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, input, status);
  TF_DimensionHandle* dim = TF_NewDimensionHandle();
  for (int i = 0; i < 5; ++i) {
    TF_ShapeInferenceContextDim(ctx, input, kIndices[i], dim);
    g_seen.dims[i] = TF_DimensionHandleValue(dim);
    g_seen.dims_known[i] = TF_DimensionHandleValueKnown(dim);
  }
  TF_DeleteDimensionHandle(dim);
  TF_DeleteShapeHandle(input);
}

static void dim_counts_negative_indices_from_the_end(void** state) {
  (void)state;
  register_shape_op("OpsDim", 1, 1, dim_fn);
  int64_t dims[3] = {2, -1, 5};
  loom_shape_t input = shape_of(dims, 3);
  loom_shape_t output;
  LOOM_ASSERT_OK(infer("OpsDim", &input, 1, &output, 1));
  assert_int_equal(g_seen.dims[0], 2);
  assert_true(g_seen.dims_known[0]);
  // Dimension 2 and -1 are the same; -3 is the first.
  assert_int_equal(g_seen.dims[1], 5);
  assert_int_equal(g_seen.dims[2], 5);
  assert_int_equal(g_seen.dims[3], 2);
  // Index 3 is beyond the rank: unknown.
  assert_int_equal(g_seen.dims[4], -1);
  assert_false(g_seen.dims_known[4]);
}

static void dim_of_unknown_rank_or_dim_is_unknown(void** state) {
  (void)state;
  register_shape_op("OpsDimUnknown", 1, 1, dim_fn);
  loom_shape_t input = loom_shape_unknown();
  loom_shape_t output;
  LOOM_ASSERT_OK(infer("OpsDimUnknown", &input, 1, &output, 1));
  for (int i = 0; i < 5; ++i) {
    assert_int_equal(g_seen.dims[i], -1);
    assert_false(g_seen.dims_known[i]);
  }
  int64_t dims[2] = {-1, 4};
  input = shape_of(dims, 2);
  LOOM_ASSERT_OK(infer("OpsDimUnknown", &input, 1, &output, 1));
  assert_false(g_seen.dims_known[0]);
  assert_int_equal(g_seen.dims[0], -1);
  assert_true(g_seen.dims_known[2]);
}

static void new_dimension_handle_is_unknown(void** state) {
  (void)state;
  TF_DimensionHandle* dim = TF_NewDimensionHandle();
  assert_non_null(dim);
  assert_false(TF_DimensionHandleValueKnown(dim));
  assert_int_equal(TF_DimensionHandleValue(dim), -1);
  TF_DeleteDimensionHandle(dim);
  TF_DeleteDimensionHandle(NULL);
  TF_DeleteShapeHandle(NULL);
}

static struct { int64_t start, end; } g_subshape;

static void subshape_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeHandle* result = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, input, status);
  TF_ShapeInferenceContextSubshape(ctx, input, g_subshape.start, g_subshape.end,
                                   result, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, result, status);
  }
  TF_DeleteShapeHandle(result);
  TF_DeleteShapeHandle(input);
}

static loom_status_t subshape(const char* op, int64_t start, int64_t end,
                              loom_shape_t input, loom_shape_t* output) {
  g_subshape.start = start;
  g_subshape.end = end;
  return infer(op, &input, 1, output, 1);
}

static void subshape_takes_a_range_of_dims(void** state) {
  (void)state;
  register_shape_op("OpsSubshape", 1, 1, subshape_fn);
  int64_t dims[4] = {2, 3, 5, 7};
  loom_shape_t output;
  LOOM_ASSERT_OK(subshape("OpsSubshape", 1, -1, shape_of(dims, 4), &output));
  assert_shape(&output, dims + 1, 2);
  // An end beyond the rank is clamped.
  LOOM_ASSERT_OK(subshape("OpsSubshape", -2, 100, shape_of(dims, 4), &output));
  assert_shape(&output, dims + 2, 2);
  LOOM_ASSERT_OK(subshape("OpsSubshape", 2, 2, shape_of(dims, 4), &output));
  assert_shape(&output, NULL, 0);
  LOOM_ASSERT_OK(subshape("OpsSubshape", 0, 3, loom_shape_unknown(), &output));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
}

static void subshape_with_start_after_end_is_invalid_argument(void** state) {
  (void)state;
  register_shape_op("OpsSubshapeReversed", 1, 1, subshape_fn);
  int64_t dims[3] = {2, 3, 5};
  loom_shape_t output;
  LOOM_ASSERT_STATUS(
      subshape("OpsSubshapeReversed", 3, -2, shape_of(dims, 3), &output),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Subshape must have computed start <= end, but is 3 and "
      "1 (computed from start 3 and end -2 over shape with "
      "rank 3)");
}

static void set_unknown_shape_fn(TF_ShapeInferenceContext* ctx,
                                 TF_Status* status) {
  TF_ShapeHandle* scalar = TF_ShapeInferenceContextScalar(ctx);
  for (int i = 0; i < 3; ++i) {
    TF_ShapeInferenceContextSetOutput(ctx, i, scalar, status);
  }
  TF_DeleteShapeHandle(scalar);
  TF_ShapeInferenceContextSetUnknownShape(ctx, status);
}

static void set_unknown_shape_clears_every_output(void** state) {
  (void)state;
  register_shape_op("OpsSetUnknown", 0, 3, set_unknown_shape_fn);
  loom_shape_t outputs[3];
  LOOM_ASSERT_OK(infer("OpsSetUnknown", NULL, 0, outputs, 3));
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(outputs[i].rank, LOOM_UNKNOWN_RANK);
  }
}

static void concatenate_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* first = TF_NewShapeHandle();
  TF_ShapeHandle* second = TF_NewShapeHandle();
  TF_ShapeHandle* result = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, first, status);
  TF_ShapeInferenceContextGetInput(ctx, 1, second, status);
  TF_ShapeInferenceContextConcatenateShapes(ctx, first, second, result, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, result, status);
  }
  TF_DeleteShapeHandle(result);
  TF_DeleteShapeHandle(second);
  TF_DeleteShapeHandle(first);
}

static void concatenate_shapes_appends_the_dims(void** state) {
  (void)state;
  register_shape_op("OpsConcat", 2, 1, concatenate_fn);
  int64_t a[2] = {2, 3}, b[1] = {5}, ab[3] = {2, 3, 5};
  loom_shape_t inputs[2] = {shape_of(a, 2), shape_of(b, 1)};
  loom_shape_t output;
  LOOM_ASSERT_OK(infer("OpsConcat", inputs, 2, &output, 1));
  assert_shape(&output, ab, 3);
  inputs[1] = loom_shape_scalar();
  LOOM_ASSERT_OK(infer("OpsConcat", inputs, 2, &output, 1));
  assert_shape(&output, a, 2);
}

static void concatenate_with_unknown_rank_is_unknown(void** state) {
  (void)state;
  register_shape_op("OpsConcatUnknown", 2, 1, concatenate_fn);
  int64_t a[2] = {2, 3};
  loom_shape_t inputs[2] = {shape_of(a, 2), loom_shape_unknown()};
  loom_shape_t output = loom_shape_scalar();
  LOOM_ASSERT_OK(infer("OpsConcatUnknown", inputs, 2, &output, 1));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
}

// Ranks go to TensorFlow's 254: above 8 the dims are spilled.
static void concatenate_above_rank_8_spills(void** state) {
  (void)state;
  register_shape_op("OpsConcatLong", 2, 1, concatenate_fn);
  int64_t five[5] = {1, 1, 1, 1, 1}, four[4] = {2, 2, 2, 2};
  loom_shape_t inputs[2] = {shape_of(five, 5), shape_of(four, 4)};
  loom_shape_t output;
  LOOM_ASSERT_OK(infer("OpsConcatLong", inputs, 2, &output, 1));
  assert_int_equal(output.rank, 9);
  const int64_t* dims = loom_shape_dims(&output);
  for (int i = 0; i < 9; ++i) assert_int_equal(dims[i], i < 5 ? 1 : 2);
}

static void failing_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  (void)ctx;
  TF_SetStatus(status, TF_FAILED_PRECONDITION, "inputs must agree");
}

static void shape_function_error_comes_back_with_the_op_name(void** state) {
  (void)state;
  register_shape_op("OpsShapeFnFails", 0, 1, failing_fn);
  loom_shape_t output;
  LOOM_ASSERT_STATUS(infer("OpsShapeFnFails", NULL, 0, &output, 1),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "Op 'OpsShapeFnFails': inputs must agree");
}

//===----------------------------------------------------------------------===//
// Allocation failures
//===----------------------------------------------------------------------===//

// Builds OpsFaultRegister with attrs of several kinds, their defaults and
// a shape function, the way a plugin would (looking at the status only at
// the end), and registers it.
static TF_Code build_and_register_op(TF_Status* status) {
  TF_OpDefinitionBuilder* builder =
      TF_NewOpDefinitionBuilder("OpsFaultRegister");
  TF_OpDefinitionBuilderAddAttr(builder, "T: {float, int32} = DT_FLOAT");
  TF_OpDefinitionBuilderAddAttr(builder, "N: int >= 1 = 2");
  TF_OpDefinitionBuilderAddAttr(builder, "names: list(string) = ['a', 'bc']");
  TF_OpDefinitionBuilderAddAttr(builder,
                                "value: tensor = { dtype: DT_FLOAT "
                                "tensor_shape { dim { size: 2 } } "
                                "float_val: 1 }");
  TF_OpDefinitionBuilderAddInput(builder, "xs: N * T");
  TF_OpDefinitionBuilderAddOutput(builder, "y: T");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, noop_shape_fn);
  TF_OpDefinitionBuilderDeprecated(builder, 3, "use OpsOther");
  TF_RegisterOpDefinition(builder, status);
  return TF_GetCode(status);
}

// Op builders allocate from the default allocator. The last run registers
// the op, whose definition then lives in the process-wide registry: the
// fault allocator is never destroyed.
static loom_fault_allocator_t* g_registration_faults;

// Every allocation of an op registration failing in turn: the
// registration reports an error, registers nothing and leaks nothing.
static void allocation_failures_while_registering_an_op_are_reported(
    void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(),
                                             &g_registration_faults));
  loom_fault_allocator_t* fault = g_registration_faults;
  TF_Status* status = TF_NewStatus();
  int64_t failures = 0;
  for (int64_t n = 1;; ++n) {
    loom_fault_allocator_fail_nth(fault, n);
    int64_t injected = loom_fault_allocator_injected_failures(fault);
    loom_allocator_t previous =
        loom_allocator_set_default(loom_fault_allocator_allocator(fault));
    TF_Code code = build_and_register_op(status);
    loom_allocator_set_default(previous);
    if (loom_fault_allocator_injected_failures(fault) == injected) {
      assert_int_equal(code, TF_OK);  // nothing failed: registered
      break;
    }
    ++failures;
    if (code == TF_OK) {
      fail_msg("allocation %lld failed but the op was registered",
               (long long)n);
    }
    assert_null(find_op("OpsFaultRegister"));
    assert_int_equal(loom_fault_allocator_live_count(fault), 0);
  }
  TF_DeleteStatus(status);
  assert_true(failures > 5);
  const loom_op_def_t* op = find_op("OpsFaultRegister");
  assert_non_null(op);
  assert_int_equal(op->num_attrs, 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(input_and_output_forms_reach_the_definition),
      cmocka_unit_test(attr_forms_reach_the_definition),
      cmocka_unit_test(properties_set_true_reach_the_registry),
      cmocka_unit_test(properties_set_false_reach_the_registry),
      cmocka_unit_test(deprecation_reaches_the_registry),
      cmocka_unit_test(undeprecated_op_has_version_zero),
      cmocka_unit_test(non_positive_deprecation_version_fails_registration),
      cmocka_unit_test(shape_function_is_attached_to_the_definition),
      cmocka_unit_test(null_shape_function_leaves_none),
      cmocka_unit_test(malformed_spec_fails_with_the_spec_and_column),
      cmocka_unit_test(first_malformed_spec_is_the_one_reported),
      cmocka_unit_test(inconsistent_definition_fails_registration),
      cmocka_unit_test(invalid_op_name_fails_registration),
      cmocka_unit_test(second_registration_is_already_exists),
      cmocka_unit_test(delete_frees_an_unregistered_builder),
      cmocka_unit_test(registering_a_null_builder_is_invalid_argument),
      cmocka_unit_test(shape_function_reads_inputs_and_sets_outputs),
      cmocka_unit_test(get_input_out_of_range_is_invalid_argument),
      cmocka_unit_test(set_output_out_of_range_is_invalid_argument),
      cmocka_unit_test(null_handle_is_invalid_argument),
      cmocka_unit_test(shape_algebra_rejects_null_handles),
      cmocka_unit_test(get_attr_type_reads_the_type_attr),
      cmocka_unit_test(get_attr_type_of_a_missing_attr_is_an_error),
      cmocka_unit_test(get_attr_type_of_a_non_type_attr_is_invalid_argument),
      cmocka_unit_test(rank_and_rank_known_describe_the_handle),
      cmocka_unit_test(with_rank_accepts_only_the_exact_rank),
      cmocka_unit_test(with_rank_at_least_accepts_higher_ranks),
      cmocka_unit_test(with_rank_at_most_accepts_lower_ranks),
      cmocka_unit_test(rank_checks_pass_unknown_ranks),
      cmocka_unit_test(rank_beyond_the_maximum_is_invalid_argument),
      cmocka_unit_test(dim_counts_negative_indices_from_the_end),
      cmocka_unit_test(dim_of_unknown_rank_or_dim_is_unknown),
      cmocka_unit_test(new_dimension_handle_is_unknown),
      cmocka_unit_test(subshape_takes_a_range_of_dims),
      cmocka_unit_test(subshape_with_start_after_end_is_invalid_argument),
      cmocka_unit_test(set_unknown_shape_clears_every_output),
      cmocka_unit_test(concatenate_shapes_appends_the_dims),
      cmocka_unit_test(concatenate_with_unknown_rank_is_unknown),
      cmocka_unit_test(concatenate_above_rank_8_spills),
      cmocka_unit_test(shape_function_error_comes_back_with_the_op_name),
      cmocka_unit_test(
          allocation_failures_while_registering_an_op_are_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
