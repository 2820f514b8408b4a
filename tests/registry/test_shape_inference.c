// Shape inference: running native shape functions, and the shape algebra.

#include "loom/shape_inference.h"
#include "test_support.h"

static loom_op_registry_t* g_registry;

static loom_shape_t shape_of(const int64_t* dims, int rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  return shape;
}

// MatMul-like: [m, k] x [k, n] -> [m, n], checked.
static loom_status_t matmul_shape(loom_shape_inference_context_t* ctx,
                                  void* user_data) {
  (void)user_data;
  loom_shape_t a, b, a2, b2;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(ctx, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(ctx, 1, &b));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&a, 2, &a2));
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&b, 2, &b2));
  int64_t k1 = loom_shape_dim(&a2, 1), k2 = loom_shape_dim(&b2, 0);
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Matrix size-incompatible: %lld vs %lld",
                            (long long)k1, (long long)k2);
  }
  int64_t dims[2] = {loom_shape_dim(&a2, 0), loom_shape_dim(&b2, 1)};
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&out, dims, 2));
  assert_int_equal(loom_shape_inference_context_num_inputs(ctx), 2);
  assert_int_equal(loom_shape_inference_context_num_outputs(ctx), 2);
  assert_string_equal(loom_shape_inference_context_op(ctx)->name, "Mm");
  assert_non_null(loom_shape_inference_context_attrs(ctx));
  assert_int_equal(loom_shape_inference_context_input_dtype(ctx, 0),
                   LOOM_DTYPE_FLOAT);
  assert_null(loom_shape_inference_context_input_tensor(ctx, 0));
  return loom_shape_inference_context_set_output(ctx, 0, &out);
  // Output 1 is left unset: it must come back unknown.
}

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &g_registry));
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), "Mm", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, "a: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(builder, "b: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, "c: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, "unset: float"));
  loom_op_def_builder_set_shape_fn(builder, matmul_shape, NULL);
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  LOOM_ASSERT_OK(
      loom_op_def_builder_create(loom_allocator_system(), "NoFn", &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, "y: float"));
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_op_registry_destroy(g_registry);
  return 0;
}

static loom_status_t infer(const loom_shape_t* inputs, loom_shape_t* outputs) {
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "Mm");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_dtype_t dtypes[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT};
  loom_status_t status =
      loom_op_def_infer_shapes(op, &attrs, inputs, dtypes, NULL, 2, outputs, 2);
  loom_op_attrs_deinitialize(&attrs);
  return status;
}

static void shape_function_computes_outputs(void** state) {
  (void)state;
  int64_t a[2] = {3, 4}, b[2] = {4, 5};
  loom_shape_t inputs[2] = {shape_of(a, 2), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_OK(infer(inputs, outputs));
  int64_t expected[2] = {3, 5};
  loom_shape_t want = shape_of(expected, 2);
  assert_true(loom_shape_equal(&outputs[0], &want));
  assert_int_equal(outputs[1].rank, LOOM_UNKNOWN_RANK);
}

static void unknown_inputs_give_partial_outputs(void** state) {
  (void)state;
  int64_t b[2] = {4, 5};
  loom_shape_t inputs[2] = {loom_shape_unknown(), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_OK(infer(inputs, outputs));
  assert_int_equal(outputs[0].rank, 2);
  assert_int_equal(outputs[0].dims[0], LOOM_UNKNOWN_DIM);
  assert_int_equal(outputs[0].dims[1], 5);
}

static void shape_function_errors_name_the_op(void** state) {
  (void)state;
  int64_t a[2] = {3, 4}, b[2] = {2, 5}, c[3] = {1, 2, 3};
  loom_shape_t mismatched[2] = {shape_of(a, 2), shape_of(b, 2)};
  loom_shape_t outputs[2];
  LOOM_ASSERT_STATUS(infer(mismatched, outputs), LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Mm': Matrix size-incompatible: 4 vs 2");
  loom_shape_t rank3[2] = {shape_of(c, 3), shape_of(b, 2)};
  LOOM_ASSERT_STATUS(infer(rank3, outputs), LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Mm': Shape must be rank 2 but is rank 3");
}

static void op_without_shape_function_gives_unknown(void** state) {
  (void)state;
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "NoFn");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_shape_t output = loom_shape_scalar();
  LOOM_ASSERT_OK(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 0, &output, 1));
  assert_int_equal(output.rank, LOOM_UNKNOWN_RANK);
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 2, &output, 1),
      LOOM_STATUS_INVALID_ARGUMENT, "invalid arguments");
  loom_op_attrs_deinitialize(&attrs);
}

static loom_status_t bad_index_shape(loom_shape_inference_context_t* ctx,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t shape;
  loom_status_t status = loom_shape_inference_context_input(ctx, 5, &shape);
  if (!status) return loom_make_status(LOOM_STATUS_INTERNAL, "no error");
  loom_status_free(status);
  shape = loom_shape_scalar();
  return loom_shape_inference_context_set_output(ctx, 3, &shape);
}

static void out_of_range_indices_are_errors(void** state) {
  (void)state;
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(), "BadIndex",
                                            &builder));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(builder, "y: float"));
  loom_op_def_builder_set_shape_fn(builder, bad_index_shape, NULL);
  LOOM_ASSERT_OK(loom_op_registry_register(g_registry, builder));
  const loom_op_def_t* op = loom_op_registry_find(g_registry, "BadIndex");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_shape_t output;
  LOOM_ASSERT_STATUS(
      loom_op_def_infer_shapes(op, &attrs, NULL, NULL, NULL, 0, &output, 1),
      LOOM_STATUS_OUT_OF_RANGE,
      "Op 'BadIndex': output index 3 is outside [0, 1)");
  loom_op_attrs_deinitialize(&attrs);
}

static void rank_assertions_follow_tensorflow(void** state) {
  (void)state;
  int64_t dims[3] = {1, 2, 3};
  loom_shape_t rank3 = shape_of(dims, 3), unknown = loom_shape_unknown(), out;
  LOOM_ASSERT_OK(loom_shape_with_rank(&rank3, 3, &out));
  assert_true(loom_shape_equal(&out, &rank3));
  LOOM_ASSERT_STATUS(loom_shape_with_rank(&rank3, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be rank 2 but is rank 3");
  LOOM_ASSERT_OK(loom_shape_with_rank(&unknown, 2, &out));
  assert_int_equal(out.rank, 2);
  assert_int_equal(out.dims[0], LOOM_UNKNOWN_DIM);
  LOOM_ASSERT_OK(loom_shape_with_rank_at_least(&rank3, 2, &out));
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_least(&rank3, 4, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be at least rank 4 but is rank 3");
  LOOM_ASSERT_OK(loom_shape_with_rank_at_least(&unknown, 4, &out));
  LOOM_ASSERT_OK(loom_shape_with_rank_at_most(&rank3, 3, &out));
  LOOM_ASSERT_STATUS(loom_shape_with_rank_at_most(&rank3, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Shape must be at most rank 1 but is rank 3");
  LOOM_ASSERT_STATUS(loom_shape_with_rank(&rank3, 9, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "WithRank: rank 9 is outside [0, 8]");
}

static void subshape_handles_negative_and_clamped_indices(void** state) {
  (void)state;
  int64_t dims[4] = {2, 3, 5, 7};
  loom_shape_t shape = shape_of(dims, 4), out;
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 1, 3, &out));
  assert_int_equal(out.rank, 2);
  assert_int_equal(out.dims[0], 3);
  assert_int_equal(out.dims[1], 5);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, -2, 100, &out));
  assert_int_equal(out.rank, 2);
  assert_int_equal(out.dims[1], 7);
  LOOM_ASSERT_OK(loom_shape_subshape(&shape, 0, -1, &out));
  assert_int_equal(out.rank, 3);
  LOOM_ASSERT_STATUS(loom_shape_subshape(&shape, 3, 1, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Subshape must have computed start <= end, but is 3 and 1 "
                     "(computed from start 3 and end 1 over shape with rank "
                     "4)");
  loom_shape_t unknown = loom_shape_unknown();
  LOOM_ASSERT_OK(loom_shape_subshape(&unknown, 0, 2, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
}

static void concatenate_appends_dims(void** state) {
  (void)state;
  int64_t a_dims[2] = {2, 3}, b_dims[1] = {4};
  loom_shape_t a = shape_of(a_dims, 2), b = shape_of(b_dims, 1), out;
  LOOM_ASSERT_OK(loom_shape_concatenate(&a, &b, &out));
  int64_t want_dims[3] = {2, 3, 4};
  loom_shape_t want = shape_of(want_dims, 3);
  assert_true(loom_shape_equal(&out, &want));
  loom_shape_t unknown = loom_shape_unknown();
  LOOM_ASSERT_OK(loom_shape_concatenate(&a, &unknown, &out));
  assert_int_equal(out.rank, LOOM_UNKNOWN_RANK);
  int64_t five[5] = {1, 1, 1, 1, 1};
  loom_shape_t big = shape_of(five, 5);
  LOOM_ASSERT_STATUS(loom_shape_concatenate(&big, &big, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "concatenating shapes of rank 5 and 5 exceeds the maximum "
                     "rank 8");
}

static void dim_counts_negative_indices_from_the_end(void** state) {
  (void)state;
  int64_t dims[3] = {4, 5, 6};
  loom_shape_t shape = shape_of(dims, 3), unknown = loom_shape_unknown();
  assert_int_equal(loom_shape_dim(&shape, 0), 4);
  assert_int_equal(loom_shape_dim(&shape, -1), 6);
  assert_int_equal(loom_shape_dim(&shape, -3), 4);
  assert_int_equal(loom_shape_dim(&shape, 3), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&shape, -4), LOOM_UNKNOWN_DIM);
  assert_int_equal(loom_shape_dim(&unknown, 0), LOOM_UNKNOWN_DIM);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shape_function_computes_outputs),
      cmocka_unit_test(unknown_inputs_give_partial_outputs),
      cmocka_unit_test(shape_function_errors_name_the_op),
      cmocka_unit_test(op_without_shape_function_gives_unknown),
      cmocka_unit_test(out_of_range_indices_are_errors),
      cmocka_unit_test(rank_assertions_follow_tensorflow),
      cmocka_unit_test(subshape_handles_negative_and_clamped_indices),
      cmocka_unit_test(concatenate_appends_dims),
      cmocka_unit_test(dim_counts_negative_indices_from_the_end),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
