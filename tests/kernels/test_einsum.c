// Einsum beyond what the conformance cases (NumPy's values) see: the op
// definition TensorFlow's attributes complete, the shape function with
// unknown dims and ranks and its errors, equations the kernel construction
// rejects, an output whose size overflows int64, and every allocation of
// the kernel failing in turn.

#include <string.h>

#include "loom/loom.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static loom_tensor_t* make_f32(int rank, const int64_t* dims) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < loom_tensor_num_elements(tensor); ++i) {
    data[i] = (float)(i % 7) - 3.0f;
  }
  return tensor;
}

static void set_equation(loom_op_attrs_t* attrs, const char* equation,
                         int64_t n) {
  loom_op_attrs_initialize(attrs, loom_allocator_default());
  LOOM_ASSERT_OK(
      loom_op_attrs_set_string(attrs, "equation", equation, strlen(equation)));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(attrs, "N", n));
}

// Runs Einsum's shape function on `shapes` (float inputs).
static loom_status_t infer(const char* equation, const loom_shape_t* shapes,
                           int32_t n, loom_shape_t* out) {
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_op_registry_lookup(loom_op_registry_global(), "Einsum", &op));
  loom_op_attrs_t attrs;
  set_equation(&attrs, equation, n);
  loom_dtype_t dtypes[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
  loom_status_t status = loom_op_def_complete_attrs(op, dtypes, n, &attrs);
  if (!status) {
    status =
        loom_op_def_infer_shapes(op, &attrs, shapes, dtypes, NULL, n, out, 1);
  }
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static loom_shape_t shape_of(int rank, int64_t d0, int64_t d1, int64_t d2) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = rank;
  shape.dims[0] = d0;
  shape.dims[1] = d1;
  shape.dims[2] = d2;
  return shape;
}

// TensorFlow's registration: inputs: N * T, output: T, equation: string,
// N: int >= 1, T: type (any).
static void op_definition_is_tensorflows(void** state) {
  (void)state;
  const loom_op_def_t* op = NULL;
  LOOM_ASSERT_OK(
      loom_op_registry_lookup(loom_op_registry_global(), "Einsum", &op));
  assert_int_equal(op->num_inputs, 1);
  assert_int_equal(op->num_outputs, 1);
  loom_op_attrs_t attrs;
  set_equation(&attrs, "ij,jk->ik", 2);
  loom_dtype_t dtypes[2] = {LOOM_DTYPE_COMPLEX64, LOOM_DTYPE_COMPLEX64};
  LOOM_ASSERT_OK(loom_op_def_complete_attrs(op, dtypes, 2, &attrs));
  loom_dtype_t t = LOOM_DTYPE_INVALID;
  LOOM_ASSERT_OK(loom_op_attrs_get_dtype(&attrs, "T", &t));
  assert_int_equal(t, LOOM_DTYPE_COMPLEX64);
  loom_op_attrs_deinitialize(&attrs);
  // N >= 1.
  set_equation(&attrs, "->", 0);
  LOOM_ASSERT_STATUS(loom_op_def_complete_attrs(op, dtypes, 0, &attrs),
                     LOOM_STATUS_INVALID_ARGUMENT, "N");
  loom_op_attrs_deinitialize(&attrs);
}

static void shape_function_keeps_unknown_dims_unknown(void** state) {
  (void)state;
  loom_shape_t out;
  // Unknown contracted dim: the output is still [2, 5].
  loom_shape_t mm[2] = {shape_of(2, 2, -1, 0), shape_of(2, 4, 5, 0)};
  LOOM_ASSERT_OK(infer("ij,jk->ik", mm, 2, &out));
  assert_int_equal(out.rank, 2);
  assert_int_equal(out.dims[0], 2);
  assert_int_equal(out.dims[1], 5);
  // An unknown free dim stays unknown; the other input may know it.
  loom_shape_t bt[2] = {shape_of(3, -1, 3, 4), shape_of(3, 6, 4, -1)};
  LOOM_ASSERT_OK(infer("bij,bjk->bki", bt, 2, &out));
  assert_int_equal(out.rank, 3);
  assert_int_equal(out.dims[0], 6);
  assert_int_equal(out.dims[1], -1);
  assert_int_equal(out.dims[2], 3);
  // Ellipsis dims broadcast; an unknown one facing 1 stays unknown.
  loom_shape_t el[2] = {shape_of(3, -1, 3, 4), shape_of(3, 1, 4, 5)};
  LOOM_ASSERT_OK(infer("...ij,...jk->...ik", el, 2, &out));
  assert_int_equal(out.rank, 3);
  assert_int_equal(out.dims[0], -1);
  assert_int_equal(out.dims[1], 3);
  assert_int_equal(out.dims[2], 5);
  // An unknown rank: an unknown output.
  loom_shape_t ur[1] = {loom_shape_unknown()};
  LOOM_ASSERT_OK(infer("ij->ji", ur, 1, &out));
  assert_int_equal(out.rank, -1);
}

static void shape_function_reports_tensorflows_errors(void** state) {
  (void)state;
  loom_shape_t out;
  loom_shape_t mm[2] = {shape_of(2, 2, 3, 0), shape_of(2, 4, 5, 0)};
  LOOM_ASSERT_STATUS(infer("ij,jk->ik", mm, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Expected dimension 3 at axis 0 of the input shaped "
                     "[4,5] but got dimension 4");
  LOOM_ASSERT_STATUS(infer("ij,jk", mm, 2, &out), LOOM_STATUS_INVALID_ARGUMENT,
                     "Expecting exactly one '->' in einsum equation: ij,jk");
  LOOM_ASSERT_STATUS(infer("ij->ik", mm, 1, &out), LOOM_STATUS_INVALID_ARGUMENT,
                     "output label 'k' appears in no input subscript");
  LOOM_ASSERT_STATUS(infer("ij,jk->ik", mm, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Expected 2 inputs but got: 1");
  // The output's element count must fit int64.
  int64_t big = (int64_t)1 << 40;
  loom_shape_t outer[2] = {shape_of(1, big, 0, 0), shape_of(1, big, 0, 0)};
  LOOM_ASSERT_STATUS(infer("i,j->ij", outer, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "Einsum: output");
  // Ranks above LOOM_MAX_RANK (shapes that spill).
  int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
  loom_shape_t spilled[1];
  LOOM_ASSERT_OK(loom_shape_initialize_large(&spilled[0], nine, 9));
  LOOM_ASSERT_OK(infer("...->...", spilled, 1, &out));
  assert_int_equal(out.rank, 9);
  assert_int_equal(loom_shape_dims(&out)[8], 2);
  LOOM_ASSERT_STATUS(infer("abcdefghij->a", spilled, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Expected input 0 to have rank 10 but got: 9");
  // More axes than a shape holds: 255 labels.
  char equation[300];
  memset(equation, 'a', 255);
  memcpy(equation + 255, "->a", 4);
  LOOM_ASSERT_STATUS(infer(equation, mm, 1, &out), LOOM_STATUS_INVALID_ARGUMENT,
                     "a subscript names more than 254 axes");
  // An output of 255 axes from an input of 254.
  int64_t ones[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  loom_shape_t widest[1];
  LOOM_ASSERT_OK(
      loom_shape_initialize_large(&widest[0], ones, LOOM_MAX_SHAPE_RANK));
  LOOM_ASSERT_STATUS(infer("a...->...aa", widest, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Einsum: the output would have more than 254 dimensions");
  // More distinct labels than TensorFlow's 52 letters.
  static const char kMany[] =
      "abcdefghijklmnopqrstuvwxyz,ABCDEFGHIJKLMNOPQRSTUVWXYZ0->a";
  LOOM_ASSERT_STATUS(infer(kMany, mm, 2, &out), LOOM_STATUS_INVALID_ARGUMENT,
                     "Einsum: more than 52 distinct labels in einsum "
                     "equation");
}

static loom_status_t run(loom_host_context_t* host, const char* equation,
                         loom_tensor_t* a, loom_tensor_t* b,
                         loom_tensor_t** out) {
  loom_op_attrs_t attrs;
  set_equation(&attrs, equation, b ? 2 : 1);
  loom_kernel_run_options_t options = {.host = host};
  loom_tensor_t* inputs[2] = {a, b};
  int32_t produced = 0;
  *out = NULL;
  loom_status_t status = loom_kernel_run(&options, "Einsum", inputs, b ? 2 : 1,
                                         &attrs, out, 1, &produced);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

// loom_kernel_run skips the shape function: the kernel's construction and
// compute check the same things.
static void kernel_checks_the_equation_and_shapes(void** state) {
  (void)state;
  const int64_t d23[] = {2, 3}, d45[] = {4, 5};
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_STATUS(run(g_host, "ij,,jk->ik", make_f32(2, d23), NULL, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Expecting 1 or 2 input subscripts in equation "
                     "'ij,,jk->ik' but got: 3");
  LOOM_ASSERT_STATUS(
      run(g_host, "ij,jk->ik", make_f32(2, d23), make_f32(2, d45), &out),
      LOOM_STATUS_INVALID_ARGUMENT,
      "Expected dimension 3 at axis 0 of the input shaped [4,5]");
  LOOM_ASSERT_STATUS(run(g_host, "ij->i-j", make_f32(2, d23), NULL, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "misplaced ',', '-' or '>' in einsum equation: ij->i-j");
  assert_null(out);
}

// Products through scratch (operands that need a pass, an output in
// another order), and a rank-24 transpose no label of which folds (its
// working arrays outgrow the kernel's stack block), with every allocation
// failing once in turn.
static loom_status_t einsum_with(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 0;
  options.allocator = allocator;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  const int64_t a_dims[] = {3, 4, 5}, b_dims[] = {5, 3, 6};
  loom_tensor_t* out = NULL;
  loom_status_t status =
      run(host, "ijk,kil->lji", make_f32(3, a_dims), make_f32(3, b_dims), &out);
  loom_tensor_release(out);
  out = NULL;
  int64_t wide[24];
  for (int i = 0; i < 24; ++i) wide[i] = i % 5 == 0 ? 2 : 1;
  if (!status) {
    status = run(host, "abcdefghijklmnopqrstuvwx->xwvutsrqponmlkjihgfedcba",
                 make_f32(24, wide), NULL, &out);
  }
  if (!status) {
    // NumPy: np.transpose((np.arange(32) % 7 - 3).reshape(wide)).ravel()
    // starts -3, -1, -2, 0.
    static const float kFirst[4] = {-3, -1, -2, 0};
    assert_int_equal(loom_tensor_shape(out)->rank, 24);
    const float* values = loom_tensor_data(out);
    for (int i = 0; i < 4; ++i) assert_true(values[i] == kFirst[i]);
  }
  loom_tensor_release(out);
  loom_host_context_destroy(host);
  return status;
}

static void allocation_failures_are_clean(void** state) {
  (void)state;
  assert_true(
      loom_test_fault_sweep(einsum_with, NULL, LOOM_TEST_SWEEP_TOLERANT) > 0);
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &g_host));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_host_context_destroy(g_host);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(op_definition_is_tensorflows),
      cmocka_unit_test(shape_function_keeps_unknown_dims_unknown),
      cmocka_unit_test(shape_function_reports_tensorflows_errors),
      cmocka_unit_test(kernel_checks_the_equation_and_shapes),
      cmocka_unit_test(allocation_failures_are_clean),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
