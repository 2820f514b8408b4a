// Einsum's batching rule (src/handlers/vmap/vmap_rules.c): a label of its
// own for the batch, prepended to the batched operands' subscripts and to
// the output's. Each equation runs under a vmap of two examples, its
// operands batched along various axes or unbatched, in f32 and f64, against
// NumPy's einsum of each example, stacked. The operands' values are
// ((7 i + 5 k) % 13 - 6) / 4 for element i (row-major, of the tensor given
// to loom_vmap_in) of operand k; the expected values come from
//
//   import numpy as np
//   def val(shape, k):
//       i = np.arange(int(np.prod(shape)))
//       return ((((i * 7 + k * 5) % 13) - 6) * 0.25).reshape(shape)
//   xs = [val(s, k) for k, (s, a) in enumerate(operands)]
//   np.stack([np.einsum(eq, *[np.take(x, b, axis=a) if a is not None else x
//                             for x, (s, a) in zip(xs, operands)])
//             for b in range(2)]).ravel()
//
// (exact in binary: quarters summed over a few terms). An equation the op
// rejects takes the per-example fallback, which reports the op's error.

#include <stdlib.h>
#include <string.h>

#include "vmap_test_util.h"

enum { kB = 2, kMaxOut = 32 };

typedef struct operand_t {
  int rank;
  int64_t dims[9];  // of the tensor given to loom_vmap_in
  int axis;         // in_axis, or U
} operand_t;

typedef struct einsum_case_t {
  const char* equation;
  int num_operands;
  operand_t operands[2];
  int num_expected;
  double expected[kMaxOut];
} einsum_case_t;

static const einsum_case_t kCases[] = {
    {"ij,jk->ik",
     2,
     {{3, {kB, 2, 3}, 0}, {2, {3, 4}, U}},
     16,
     {-0.5, -1.625, -1.125, 2.625, 0.1875, 1.4375, 0.25, -0.125, 0.0625, -2.0,
      0.0, 0.375, 0.75, 1.0625, 1.375, -2.375}},
    {"ij,jk->ik",
     2,
     {{3, {2, kB, 3}, 1}, {3, {kB, 3, 2}, 0}},
     8,
     {0.0625, -1.0625, 0.0625, -2.0, 0.25, -0.125, 1.9375, -1.8125}},
    {"ii->i", 1, {{3, {3, 3, kB}, 2}}, 6, {-1.5, -0.5, 0.5, 0.25, 1.25, -1.0}},
    {"...ij->...ji",
     1,
     {{4, {kB, 2, 2, 3}, 0}},
     24,
     {-1.5, 0.5,   0.25, -1.0, -1.25, 0.75,  -0.75, 1.25,
      1.0,  -0.25, -0.5, 1.5,  0.0,   -1.25, -1.5,  0.5,
      0.25, -1.0,  0.75, -0.5, -0.75, 1.25,  1.0,   -0.25}},
    {"i,i->", 2, {{2, {kB, 4}, 0}, {2, {4, kB}, 1}}, 2, {0.3125, -2.6875}},
    {"ij->", 1, {{3, {kB, 2, 3}, 0}}, 2, {-2.25, 2.25}},
    // 'a' is taken: the batch gets another label.
    {"aij,ajk->aik",
     2,
     {{4, {kB, 2, 2, 3}, 0}, {3, {2, 3, 2}, U}},
     16,
     {0.0625, -1.0625, 0.0625, 1.3125, -0.125, 0.25, 1.9375, -1.8125, 0.0625,
      1.9375, 0.0625, -1.375, 0.8125, -0.6875, 0.4375, -0.3125}},
    {"ij,j->i",
     2,
     {{2, {2, 3}, U}, {2, {kB, 3}, 0}},
     4,
     {0.75, -1.625, 3.875, -1.9375}},
    {"ij,kj->ikj",
     2,
     {{3, {kB, 2, 3}, 0}, {2, {2, 3}, U}},
     24,
     {0.375, 0.375, 0.0,     2.25,    0.0625, 1.5625, -0.125,  -1.5,
      0.0,   -0.75, -0.25,   -0.9375, 0.1875, 1.5,    0.0,     1.125,
      0.25,  0.625, -0.3125, -0.375,  0.0,    -1.875, -0.0625, -1.875}},
    // Rank-8 operands: the batched einsum takes rank 9.
    {"abcdefgh,hi->abcdefgi",
     2,
     {{9, {2, 1, 1, kB, 1, 1, 1, 2, 3}, 3}, {3, {3, kB, 2}, 1}},
     16,
     {-0.5, -1.625, 0.1875, 1.4375, -0.1875, 1.6875, -0.3125, -1.75, 0.0, 0.375,
      1.375, -2.375, 0.625, -0.875, 0.375, -0.375}},
};

static handle_t* operand_values(loom_dtype_t dtype, const operand_t* operand,
                                int k) {
  double values[64];
  int64_t n = 1;
  for (int d = 0; d < operand->rank; ++d) n *= operand->dims[d];
  assert_true(n <= 64);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = (double)((i * 7 + k * 5) % 13 - 6) * 0.25;
  }
  return make(dtype, operand->dims, operand->rank, values);
}

// Runs Einsum with `equation` on the operands in the vmap's scope: the
// batched result ([B, ...]) or the error.
static loom_status_t run_einsum(loom_op_handler_t* vmap, const char* equation,
                                handle_t* const* operands, int n,
                                handle_t** out) {
  *out = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* y = NULL;
  loom_status_t status = loom__grad_execute_in(
      g_ctx, "Einsum", operands, n,
      LOOM_GRAD_ATTRS(LOOM_GRAD_STRING("equation", equation)), &y, 1);
  if (!status) status = loom_vmap_out(vmap, y, 0, out);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  return status;
}

static void check_case(const einsum_case_t* c, loom_dtype_t dtype) {
  loom_op_handler_t* vmap = new_vmap(kB);
  handle_t* given[2] = {NULL, NULL};
  handle_t* entered[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  for (int k = 0; k < c->num_operands; ++k) {
    given[k] = operand_values(dtype, &c->operands[k], k);
    entered[k] = vin(vmap, given[k], c->operands[k].axis);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* ys = NULL;
  LOOM_ASSERT_OK(run_einsum(vmap, c->equation, entered, c->num_operands, &ys));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(ys, &metadata));
  assert_int_equal(metadata.dtype, dtype);
  assert_int_equal(loom_shape_dims(&metadata.shape)[0], kB);
  double got[kMaxOut];
  assert_int_equal(read_values(ys, got, kMaxOut), c->num_expected);
  for (int i = 0; i < c->num_expected; ++i) {
    expect_close(got[i], c->expected[i], 0, c->equation, i);
  }
  // One Einsum over the batch, never one per example.
  assert_int_equal(loom_vmap_fallback_count(vmap, "Einsum"), 0);
  loom_tensor_handle_release(ys);
  loom__grad_release_all(entered, c->num_operands);
  loom__grad_release_all(given, c->num_operands);
  loom_op_handler_release(vmap);
}

static void einsum_matches_numpy_f32(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    check_case(&kCases[i], F);
  }
}

static void einsum_matches_numpy_f64(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    check_case(&kCases[i], D);
  }
}

// The rule describes itself in the table.
static void einsum_has_a_rule(void** state) {
  (void)state;
  const char* description = NULL;
  assert_int_equal(loom_vmap_op_support("Einsum", &description),
                   LOOM_VMAP_RULE);
  assert_non_null(strstr(description, "label"));
}

// An equation without "->" is the op's error, reported as the op reports
// it (through the per-example fallback, which counts it).
static void a_rejected_equation_is_the_ops_error(void** state) {
  (void)state;
  int64_t dims[2] = {kB, 3};
  handle_t* xs = make(F, dims, 2, NULL);
  loom_op_handler_t* vmap = new_vmap(kB);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* ys = NULL;
  loom_status_t status = run_einsum(vmap, "ij", &x, 1, &ys);
  assert_null(ys);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(loom_status_message(status),
                         "Expecting exactly one '->' in einsum equation: ij"));
  loom_status_free(status);
  assert_int_equal(loom_vmap_fallback_count(vmap, "Einsum"), 1);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(xs);
  loom_op_handler_release(vmap);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(einsum_matches_numpy_f32),
      cmocka_unit_test(einsum_matches_numpy_f64),
      cmocka_unit_test(einsum_has_a_rule),
      cmocka_unit_test(a_rejected_equation_is_the_ops_error),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
