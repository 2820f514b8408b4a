// Shape inference: running native shape functions (what they see, what
// comes back, how errors are reported), and the shape algebra with
// TensorFlow's semantics and messages.

#include "loom/shape_inference.h"
#include "test_support.h"

static loom_op_registry_t* g_registry;

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

// Registers op `name` with the given specs and shape function.
static const loom_op_def_t* define(const char* name, const char* const* attrs,
                                   const char* const* inputs,
                                   const char* const* outputs,
                                   loom_shape_fn_t shape_fn, void* user_data) {
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
  if (shape_fn) loom_op_def_builder_set_shape_fn(builder, shape_fn, user_data);
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  return loom_op_registry_find(g_registry, name);
}

// MatMul-like: [m, k] x [k, n] -> [m, n], checked; output 1 left unset.
static loom_status_t matmul_shape(loom_shape_inference_context_t* context,
                                  void* user_data) {
  (void)user_data;
  loom_shape_t a, b;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &b));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&a, 2, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&b, 2, &b));
  int64_t k1 = loom_shape_dim(&a, 1), k2 = loom_shape_dim(&b, 0);
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Matrix size-incompatible: %lld vs %lld",
                            (long long)k1, (long long)k2);
  }
  int64_t dims[2] = {loom_shape_dim(&a, 0), loom_shape_dim(&b, 1)};
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&out, dims, 2));
  return loom_shape_inference_context_set_output(context, 0, &out);
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &g_registry));
  define("MatMul", NULL, (const char*[]){"a: float", "b: float", NULL},
         (const char*[]){"product: float", "unset: float", NULL}, matmul_shape,
         NULL);
  define("NoShapeFn", NULL, NULL, (const char*[]){"y: float", "z: int32", NULL},
         NULL, NULL);
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

// Runs op `name` (no attrs) on `num_inputs` float inputs of `inputs`.
static loom_status_t infer(const char* name, const loom_shape_t* inputs,
                           int32_t num_inputs, loom_shape_t* outputs,
                           int32_t num_outputs) {
  const loom_op_def_t* op = loom_op_registry_find(g_registry, name);
  assert_non_null(op);
  loom_op_attrs_t attrs = new_attrs();
  loom_dtype_t dtypes[4] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT,
                            LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
  loom_status_t status = loom_op_def_infer_shapes(
      op, &attrs, inputs, dtypes, NULL, num_inputs, outputs, num_outputs);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

//===----------------------------------------------------------------------===//
// Running shape functions
//===----------------------------------------------------------------------===//

static void shape_function_computes_outputs(void** state) {
  (void)state;
  int64_t a[2] = {3, 4}, b[2] = {4, 5};
  loom_shape_t inputs[2] = {shape_of(a, 2), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_OK(infer("MatMul", inputs, 2, outputs, 2));
  assert_shape(&outputs[0], (int64_t[]){3, 5}, 2);
}

static void outputs_left_unset_are_unknown(void** state) {
  (void)state;
  int64_t a[2] = {3, 4}, b[2] = {4, 5};
  loom_shape_t inputs[2] = {shape_of(a, 2), shape_of(b, 2)};
  loom_shape_t outputs[2];
  outputs[1] = shape_of(a, 2);  // whatever was there before is replaced
  LOOM_ASSERT_OK(infer("MatMul", inputs, 2, outputs, 2));
  assert_int_equal(outputs[1].rank, LOOM_UNKNOWN_RANK);
}

static void unknown_inputs_give_partially_known_outputs(void** state) {
  (void)state;
  int64_t b[2] = {LOOM_UNKNOWN_DIM, 5};
  loom_shape_t inputs[2] = {loom_shape_unknown(), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_OK(infer("MatMul", inputs, 2, outputs, 2));
  assert_shape(&outputs[0], (int64_t[]){LOOM_UNKNOWN_DIM, 5}, 2);
}

static void op_without_shape_function_gives_unknown_outputs(void** state) {
  (void)state;
  loom_shape_t outputs[2] = {loom_shape_scalar(), loom_shape_scalar()};
  LOOM_ASSERT_OK(infer("NoShapeFn", NULL, 0, outputs, 2));
  assert_int_equal(outputs[0].rank, LOOM_UNKNOWN_RANK);
  assert_int_equal(outputs[1].rank, LOOM_UNKNOWN_RANK);
}

typedef struct seen_t {
  const loom_op_def_t* op;
  const loom_op_attrs_t* attrs;
  int32_t num_inputs, num_outputs;
  loom_dtype_t dtypes[3];
  int64_t axis;
  loom_status_t null_input;
  loom_status_t null_output;
  const loom_tensor_t* tensors[3];
} seen_t;

// Records what the context shows into the seen_t passed as user data.
static loom_status_t record_context(loom_shape_inference_context_t* context,
                                    void* user_data) {
  seen_t* seen = user_data;
  seen->op = loom_shape_inference_context_op(context);
  seen->attrs = loom_shape_inference_context_attrs(context);
  seen->num_inputs = loom_shape_inference_context_num_inputs(context);
  seen->num_outputs = loom_shape_inference_context_num_outputs(context);
  for (int32_t i = 0; i < 3; ++i) {
    seen->dtypes[i] = loom_shape_inference_context_input_dtype(context, i - 1);
    seen->tensors[i] = loom_shape_inference_context_input_tensor(context, i);
  }
  LOOM_RETURN_IF_ERROR(loom_op_attrs_get_i64(seen->attrs, "axis", &seen->axis));
  seen->null_input = loom_shape_inference_context_input(context, 0, NULL);
  seen->null_output = loom_shape_inference_context_set_output(context, 0, NULL);
  return loom_ok_status();
}

static void shape_function_sees_the_op_attrs_dtypes_and_user_data(
    void** state) {
  (void)state;
  static seen_t seen;
  const loom_op_def_t* op =
      define("Recorder", (const char*[]){"axis: int", NULL},
             (const char*[]){"x: int8", "y: bool", NULL},
             (const char*[]){"z: float", NULL}, record_context, &seen);
  loom_op_attrs_t attrs = new_attrs();
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "axis", -2));
  loom_shape_t inputs[2] = {loom_shape_scalar(), loom_shape_scalar()};
  loom_dtype_t dtypes[2] = {LOOM_DTYPE_INT8, LOOM_DTYPE_BOOL};
  loom_shape_t output;
  LOOM_ASSERT_OK(loom_op_def_infer_shapes(op, &attrs, inputs, dtypes, NULL, 2,
                                          &output, 1));
  assert_ptr_equal(seen.op, op);
  assert_ptr_equal(seen.attrs, &attrs);
  assert_int_equal(seen.axis, -2);
  assert_int_equal(seen.num_inputs, 2);
  assert_int_equal(seen.num_outputs, 1);
  assert_int_equal(seen.dtypes[0], LOOM_DTYPE_INVALID);  // index -1
  assert_int_equal(seen.dtypes[1], LOOM_DTYPE_INT8);
  assert_int_equal(seen.dtypes[2], LOOM_DTYPE_BOOL);
  // No input values were offered.
  assert_null(seen.tensors[0]);
  assert_null(seen.tensors[1]);
  LOOM_ASSERT_STATUS(seen.null_input, LOOM_STATUS_INVALID_ARGUMENT,
                     "shape inference: input: NULL argument");
  LOOM_ASSERT_STATUS(seen.null_output, LOOM_STATUS_INVALID_ARGUMENT,
                     "shape inference: set_output: NULL argument");
  // Without dtypes, every input dtype is unknown.
  LOOM_ASSERT_OK(
      loom_op_def_infer_shapes(op, &attrs, inputs, NULL, NULL, 2, &output, 1));
  assert_int_equal(seen.dtypes[1], LOOM_DTYPE_INVALID);
  loom_status_free(seen.null_input);
  loom_status_free(seen.null_output);
  loom_op_attrs_deinitialize(&attrs);
}

// Reshape-like: the output shape is the value of input 1, when known.
static loom_status_t reshape_shape(loom_shape_inference_context_t* context,
                                   void* user_data) {
  (void)user_data;
  const loom_tensor_t* value =
      loom_shape_inference_context_input_tensor(context, 1);
  if (!value) return loom_ok_status();  // stays unknown
  const int64_t* dims = loom_tensor_data(value);
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize(&out, dims, (int)loom_tensor_num_elements(value)));
  return loom_shape_inference_context_set_output(context, 0, &out);
}

static void shape_function_reads_input_values_when_known(void** state) {
  (void)state;
  const loom_op_def_t* op = define(
      "Reshape", NULL, (const char*[]){"tensor: float", "shape: int64", NULL},
      (const char*[]){"output: float", NULL}, reshape_shape, NULL);
  int64_t vector[1] = {2};
  loom_shape_t shape = shape_of(vector, 1);
  loom_tensor_t* value = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT64, &shape, &value));
  ((int64_t*)loom_tensor_data(value))[0] = 6;
  ((int64_t*)loom_tensor_data(value))[1] = 7;
  loom_tensor_t* tensors[2] = {NULL, value};
  loom_shape_t inputs[2] = {loom_shape_unknown(), shape};
  loom_op_attrs_t attrs = new_attrs();
  loom_shape_t output;
  LOOM_ASSERT_OK(loom_op_def_infer_shapes(op, &attrs, inputs, NULL, tensors, 2,
                                          &output, 1));
  assert_shape(&output, (int64_t[]){6, 7}, 2);
  LOOM_ASSERT_OK(
      loom_op_def_infer_shapes(op, &attrs, inputs, NULL, NULL, 2, &output, 1));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
  loom_op_attrs_deinitialize(&attrs);
  loom_tensor_release(value);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void shape_function_errors_are_annotated_with_the_op_name(void** state) {
  (void)state;
  int64_t a[2] = {3, 4}, b[2] = {2, 5}, c[3] = {1, 2, 3};
  loom_shape_t mismatched[2] = {shape_of(a, 2), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_STATUS(infer("MatMul", mismatched, 2, outputs, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'MatMul': Matrix size-incompatible: 4 vs 2");
  loom_shape_t rank3[2] = {shape_of(c, 3), shape_of(b, 2)};
  LOOM_ASSERT_STATUS(infer("MatMul", rank3, 2, outputs, 2),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'MatMul': Shape must be rank 2 but is rank 3");
}

static loom_status_t rank_two_shape(loom_shape_inference_context_t* context,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t input;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  return loom_shape_with_rank(&input, 2, &input);
}

static void op_named_in_the_message_is_still_annotated(void** state) {
  (void)state;
  // The message mentions "Shape" but not the op: it still needs the name.
  define("Shape", NULL, (const char*[]){"input: float", NULL},
         (const char*[]){"output: int32", NULL}, rank_two_shape, NULL);
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t input = shape_of(dims, 3);
  loom_shape_t output;
  loom_status_t status = infer("Shape", &input, 1, &output, 1);
  assert_string_equal(loom_status_message(status),
                      "Op 'Shape': Shape must be rank 2 but is rank 3");
  loom_status_free(status);
}

static loom_status_t bad_input_index(loom_shape_inference_context_t* context,
                                     void* user_data) {
  int32_t index = *(const int32_t*)user_data;
  loom_shape_t shape;
  return loom_shape_inference_context_input(context, index, &shape);
}

static void input_index_out_of_range_is_an_error(void** state) {
  (void)state;
  static int32_t index;
  define("BadInput", NULL, (const char*[]){"x: float", "y: float", NULL}, NULL,
         bad_input_index, &index);
  loom_shape_t inputs[2] = {loom_shape_scalar(), loom_shape_scalar()};
  index = 2;
  loom_status_t status = infer("BadInput", inputs, 2, NULL, 0);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_OUT_OF_RANGE);
  // Already naming the op, the message is not annotated again.
  assert_string_equal(loom_status_message(status),
                      "Op 'BadInput': input index 2 is outside [0, 2)");
  loom_status_free(status);
  index = -1;
  LOOM_ASSERT_STATUS(infer("BadInput", inputs, 2, NULL, 0),
                     LOOM_STATUS_OUT_OF_RANGE,
                     "Op 'BadInput': input index -1 is outside [0, 2)");
}

static loom_status_t bad_output_index(loom_shape_inference_context_t* context,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t shape = loom_shape_scalar();
  return loom_shape_inference_context_set_output(context, 3, &shape);
}

static void output_index_out_of_range_is_an_error(void** state) {
  (void)state;
  define("BadOutput", NULL, NULL, (const char*[]){"y: float", NULL},
         bad_output_index, NULL);
  loom_shape_t output;
  loom_status_t status = infer("BadOutput", NULL, 0, &output, 1);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_OUT_OF_RANGE);
  assert_string_equal(loom_status_message(status),
                      "Op 'BadOutput': output index 3 is outside [0, 1)");
  loom_status_free(status);
}

// Sets output 0 to the loom_shape_t passed as user data, unchecked.
static loom_status_t set_raw_output(loom_shape_inference_context_t* context,
                                    void* user_data) {
  return loom_shape_inference_context_set_output(context, 0, user_data);
}

static void invalid_output_shapes_are_rejected(void** state) {
  (void)state;
  static loom_shape_t raw;
  define("RawOutput", NULL, NULL, (const char*[]){"y: float", NULL},
         set_raw_output, &raw);
  loom_shape_t output;
  memset(&raw, 0, sizeof(raw));
  raw.rank = LOOM_MAX_RANK + 1;
  LOOM_ASSERT_STATUS(infer("RawOutput", NULL, 0, &output, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'RawOutput': output 0: shape rank 9 is outside [0, "
                     "8]");
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);  // not the bad shape
  raw.rank = -2;
  LOOM_ASSERT_STATUS(infer("RawOutput", NULL, 0, &output, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'RawOutput': output 0: shape rank -2 is outside [0, "
                     "8]");
  raw.rank = 2;
  raw.dims[0] = 4;
  raw.dims[1] = -2;
  LOOM_ASSERT_STATUS(infer("RawOutput", NULL, 0, &output, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'RawOutput': output 0: shape dimension 1 is -2; "
                     "dimensions must be >= 0 or -1 (unknown)");
  raw.dims[1] = LOOM_UNKNOWN_DIM;
  LOOM_ASSERT_OK(infer("RawOutput", NULL, 0, &output, 1));
  assert_shape(&output, (int64_t[]){4, LOOM_UNKNOWN_DIM}, 2);
  // No tensor has more elements than int64 counts; an empty one may have
  // dims whose other product would.
  raw.dims[0] = raw.dims[1] = (int64_t)1 << 32;
  LOOM_ASSERT_STATUS(infer("RawOutput", NULL, 0, &output, 1),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "RawOutput: output 0 of shape [4294967296, 4294967296]: "
                     "the size overflows int64");
  raw.rank = 3;
  raw.dims[2] = 0;
  LOOM_ASSERT_OK(infer("RawOutput", NULL, 0, &output, 1));
  assert_shape(&output, (int64_t[]){(int64_t)1 << 32, (int64_t)1 << 32, 0}, 3);
}

static void infer_shapes_rejects_bad_arguments(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "NoShapeFn");
  loom_op_attrs_t attrs = new_attrs();
  loom_shape_t shapes[2];
  static const char kMessage[] = "loom_op_def_infer_shapes: invalid arguments";
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(NULL, &attrs, NULL, NULL, NULL, 0, shapes, 2),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, NULL, NULL, NULL, NULL, 0, shapes, 2),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 1, shapes, 2),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 0, NULL, 2),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, shapes, NULL, NULL, -1, shapes, 2),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 0, shapes, -1),
      LOOM_STATUS_INVALID_ARGUMENT, kMessage);
  loom_op_attrs_deinitialize(&attrs);
}

//===----------------------------------------------------------------------===//
// Rank assertions
//===----------------------------------------------------------------------===//

static void with_rank_passes_a_shape_of_that_rank(void** state) {
  (void)state;
  int64_t dims[3] = {1, LOOM_UNKNOWN_DIM, 3};
  loom_shape_t shape = shape_of(dims, 3), out;
  LOOM_ASSERT_OK(loom_shape_with_rank(&shape, 3, &out));
  assert_shape(&out, dims, 3);
  loom_shape_t scalar = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_shape_with_rank(&scalar, 0, &out));
  assert_int_equal(out.rank, 0);
}

static void with_rank_reports_another_rank(void** state) {
  (void)state;
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t shape = shape_of(dims, 3), out;
  LOOM_ASSERT_STATUS(loom_shape_with_rank(&shape, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be rank 2 but is rank 3");
  loom_shape_t scalar = loom_shape_scalar();
  LOOM_ASSERT_STATUS(loom_shape_with_rank(&scalar, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be rank 1 but is rank 0");
}

static void with_rank_gives_unknown_dims_for_an_unknown_rank(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown(), out;
  LOOM_ASSERT_OK(loom_shape_with_rank(&unknown, 2, &out));
  assert_shape(&out, (int64_t[]){LOOM_UNKNOWN_DIM, LOOM_UNKNOWN_DIM}, 2);
}

static void with_rank_at_least_checks_the_minimum(void** state) {
  (void)state;
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t shape = shape_of(dims, 3), out;
  LOOM_ASSERT_OK(loom_shape_with_rank_at_least(&shape, 2, &out));
  assert_shape(&out, dims, 3);
  LOOM_ASSERT_OK(loom_shape_with_rank_at_least(&shape, 3, &out));
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_least(&shape, 4, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be at least rank 4 but is rank 3");
}

static void with_rank_at_most_checks_the_maximum(void** state) {
  (void)state;
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t shape = shape_of(dims, 3), out;
  LOOM_ASSERT_OK(loom_shape_with_rank_at_most(&shape, 8, &out));
  assert_shape(&out, dims, 3);
  LOOM_ASSERT_OK(loom_shape_with_rank_at_most(&shape, 3, &out));
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_most(&shape, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be at most rank 1 but is rank 3");
}

static void rank_bounds_pass_an_unknown_rank_unchanged(void** state) {
  (void)state;
  // As TensorFlow: the rank is still unknown, only bounded.
  loom_shape_t unknown = loom_shape_unknown(), out = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_shape_with_rank_at_least(&unknown, 4, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
  out = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_shape_with_rank_at_most(&unknown, 0, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
}

static void rank_arguments_outside_0_to_254_are_rejected(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown(), out;
  LOOM_ASSERT_STATUS(loom_shape_with_rank(&unknown, 255, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "WithRank: rank 255 is outside [0, 254]");
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_least(&unknown, -1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "WithRankAtLeast: rank -1 is outside [0, 254]");
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_most(&unknown, 1000, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "WithRankAtMost: rank 1000 is outside [0, 254]");
}

// TensorFlow's ranks go to 254: an unknown rank asserted to 12 is 12
// unknown dims (spilled).
static void with_rank_above_8_gives_unknown_dims(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown(), out;
  LOOM_ASSERT_OK(loom_shape_with_rank(&unknown, 12, &out));
  assert_int_equal(out.rank, 12);
  for (int i = 0; i < 12; ++i) {
    assert_int_equal(loom_shape_dims(&out)[i], LOOM_UNKNOWN_DIM);
  }
}

//===----------------------------------------------------------------------===//
// Subshape, concatenate, dim
//===----------------------------------------------------------------------===//

static const int64_t kDims4[4] = {2, 3, 5, 7};

static void subshape_takes_a_range_of_dims(void** state) {
  (void)state;
  loom_shape_t shape = shape_of(kDims4, 4), out;
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 1, 3, &out));
  assert_shape(&out, (int64_t[]){3, 5}, 2);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 0, 4, &out));
  assert_shape(&out, kDims4, 4);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 2, 2, &out));
  assert_int_equal(out.rank, 0);
}

static void subshape_counts_negative_indices_from_the_end(void** state) {
  (void)state;
  loom_shape_t shape = shape_of(kDims4, 4), out;
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 0, -1, &out));
  assert_shape(&out, (int64_t[]){2, 3, 5}, 3);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, -2, 4, &out));
  assert_shape(&out, (int64_t[]){5, 7}, 2);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, -4, -3, &out));
  assert_shape(&out, (int64_t[]){2}, 1);
}

static void subshape_clamps_indices_beyond_the_rank(void** state) {
  (void)state;
  loom_shape_t shape = shape_of(kDims4, 4), out;
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 1, 100, &out));
  assert_shape(&out, (int64_t[]){3, 5, 7}, 3);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 9, INT64_MAX, &out));
  assert_int_equal(out.rank, 0);
}

static void subshape_with_start_after_end_is_an_error(void** state) {
  (void)state;
  loom_shape_t shape = shape_of(kDims4, 4), out;
  LOOM_ASSERT_STATUS(loom_shape_subshape(&shape, 3, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Subshape must have computed start <= end, but is 3 and 1 "
                     "(computed from start 3 and end 1 over shape with rank "
                     "4)");
  LOOM_ASSERT_STATUS(loom_shape_subshape(&shape, -1, -2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Subshape must have computed start <= end, but is 3 and 2 "
                     "(computed from start -1 and end -2 over shape with rank "
                     "4)");
}

static void subshape_indices_before_the_start_are_out_of_bounds(void** state) {
  (void)state;
  loom_shape_t shape = shape_of(kDims4, 4), out;
  LOOM_ASSERT_STATUS(loom_shape_subshape(&shape, -5, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Subshape start out of bounds: -5, for shape with rank 4");
  LOOM_ASSERT_STATUS(loom_shape_subshape(&shape, 0, -10, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Subshape end out of bounds: -10, for shape with rank 4");
}

static void subshape_of_an_unknown_rank_is_unknown(void** state) {
  (void)state;
  loom_shape_t unknown = loom_shape_unknown(), out = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_shape_subshape(&unknown, 0, 2, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
}

static void concatenate_appends_dims(void** state) {
  (void)state;
  int64_t a_dims[2] = {2, LOOM_UNKNOWN_DIM}, b_dims[1] = {4};
  loom_shape_t a = shape_of(a_dims, 2), b = shape_of(b_dims, 1), out;
  LOOM_ASSERT_OK(loom_shape_concatenate(&a, &b, &out));
  assert_shape(&out, (int64_t[]){2, LOOM_UNKNOWN_DIM, 4}, 3);
  loom_shape_t scalar = loom_shape_scalar();
  LOOM_ASSERT_OK(loom_shape_concatenate(&scalar, &b, &out));
  assert_shape(&out, b_dims, 1);
}

static void concatenate_with_an_unknown_rank_is_unknown(void** state) {
  (void)state;
  int64_t dims[2] = {2, 3};
  loom_shape_t known = shape_of(dims, 2), unknown = loom_shape_unknown(), out;
  LOOM_ASSERT_OK(loom_shape_concatenate(&known, &unknown, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_OK(loom_shape_concatenate(&unknown, &known, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
}

static void concatenate_and_subshape_go_above_rank_8(void** state) {
  (void)state;
  int64_t five_dims[5] = {1, 2, 3, 4, 5};
  int64_t four_dims[4] = {6, LOOM_UNKNOWN_DIM, 8, 9};
  loom_shape_t five = shape_of(five_dims, 5), four = shape_of(four_dims, 4);
  loom_shape_t nine, out;
  LOOM_ASSERT_OK(loom_shape_concatenate(&five, &four, &nine));
  assert_int_equal(nine.rank, 9);
  assert_int_equal(loom_shape_dim(&nine, 6), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&nine, -1), 9);
  LOOM_ASSERT_OK(loom_shape_subshape(&nine, 4, 9, &out));
  assert_shape(&out, (int64_t[]){5, 6, LOOM_UNKNOWN_DIM, 8, 9}, 5);
  LOOM_ASSERT_OK(loom_shape_subshape(&nine, 0, -1, &out));
  assert_int_equal(out.rank, 8);
  assert_int_equal(out.dims[7], 8);
  // Past TensorFlow's limit of 254.
  int64_t ones[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  loom_shape_t most;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&most, ones, 250));
  LOOM_ASSERT_STATUS(loom_shape_concatenate(&most, &five, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "concatenating shapes of rank 250 and 5 exceeds the "
                     "maximum rank 254");
}

static void dim_returns_a_dimension(void** state) {
  (void)state;
  int64_t dims[3] = {4, LOOM_UNKNOWN_DIM, 6};
  loom_shape_t shape = shape_of(dims, 3);
  assert_int_equal(loom_shape_dim(&shape, 0), 4);
  assert_int_equal(loom_shape_dim(&shape, 1), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&shape, 2), 6);
}

static void dim_counts_negative_indices_from_the_end(void** state) {
  (void)state;
  int64_t dims[3] = {4, 5, 6};
  loom_shape_t shape = shape_of(dims, 3);
  assert_int_equal(loom_shape_dim(&shape, -1), 6);
  assert_int_equal(loom_shape_dim(&shape, -3), 4);
}

static void dim_out_of_range_or_of_unknown_rank_is_unknown(void** state) {
  (void)state;
  int64_t dims[3] = {4, 5, 6};
  loom_shape_t shape = shape_of(dims, 3), unknown = loom_shape_unknown();
  loom_shape_t scalar = loom_shape_scalar();
  assert_int_equal(loom_shape_dim(&shape, 3), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&shape, -4), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&shape, INT64_MIN), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&unknown, 0), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&scalar, 0), LOOM_UNKNOWN_DIM);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shape_function_computes_outputs),
      cmocka_unit_test(outputs_left_unset_are_unknown),
      cmocka_unit_test(unknown_inputs_give_partially_known_outputs),
      cmocka_unit_test(op_without_shape_function_gives_unknown_outputs),
      cmocka_unit_test(shape_function_sees_the_op_attrs_dtypes_and_user_data),
      cmocka_unit_test(shape_function_reads_input_values_when_known),
      cmocka_unit_test(shape_function_errors_are_annotated_with_the_op_name),
      cmocka_unit_test(op_named_in_the_message_is_still_annotated),
      cmocka_unit_test(input_index_out_of_range_is_an_error),
      cmocka_unit_test(output_index_out_of_range_is_an_error),
      cmocka_unit_test(invalid_output_shapes_are_rejected),
      cmocka_unit_test(infer_shapes_rejects_bad_arguments),
      cmocka_unit_test(with_rank_passes_a_shape_of_that_rank),
      cmocka_unit_test(with_rank_reports_another_rank),
      cmocka_unit_test(with_rank_gives_unknown_dims_for_an_unknown_rank),
      cmocka_unit_test(with_rank_at_least_checks_the_minimum),
      cmocka_unit_test(with_rank_at_most_checks_the_maximum),
      cmocka_unit_test(rank_bounds_pass_an_unknown_rank_unchanged),
      cmocka_unit_test(rank_arguments_outside_0_to_254_are_rejected),
      cmocka_unit_test(with_rank_above_8_gives_unknown_dims),
      cmocka_unit_test(subshape_takes_a_range_of_dims),
      cmocka_unit_test(subshape_counts_negative_indices_from_the_end),
      cmocka_unit_test(subshape_clamps_indices_beyond_the_rank),
      cmocka_unit_test(subshape_with_start_after_end_is_an_error),
      cmocka_unit_test(subshape_indices_before_the_start_are_out_of_bounds),
      cmocka_unit_test(subshape_of_an_unknown_rank_is_unknown),
      cmocka_unit_test(concatenate_appends_dims),
      cmocka_unit_test(concatenate_with_an_unknown_rank_is_unknown),
      cmocka_unit_test(concatenate_and_subshape_go_above_rank_8),
      cmocka_unit_test(dim_returns_a_dimension),
      cmocka_unit_test(dim_counts_negative_indices_from_the_end),
      cmocka_unit_test(dim_out_of_range_or_of_unknown_rank_is_unknown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
