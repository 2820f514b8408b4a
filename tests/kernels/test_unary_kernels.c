// The unary and cast loops at every ISA level this CPU runs (the
// conformance cases run only the widest): 16-bit float conversions
// against base/half.h, the transcendental loops against libm with lengths
// that leave vector tails, and buffer reuse through the kernel API.

#include <math.h>
#include <stdlib.h>

#include "base/half.h"
#include "kernels/elementwise_unary.h"
#include "loom/loom.h"
#include "test_support.h"

static const loom__unary_table_t* const kUnary[LOOM_ISA_LEVELS] = {
    &loom__unary_loops_baseline, &loom__unary_loops_avx2,
    &loom__unary_loops_avx512};
static const loom__unary_grad_table_t* const kGrad[LOOM_ISA_LEVELS] = {
    &loom__unary_grad_loops_baseline, &loom__unary_grad_loops_avx2,
    &loom__unary_grad_loops_avx512};
static const loom__cast_table_t* const kCast[LOOM_ISA_LEVELS] = {
    &loom__cast_loops_baseline, &loom__cast_loops_avx2,
    &loom__cast_loops_avx512};

static bool half_is_nan(uint16_t h) {
  return (h & 0x7fff) > 0x7c00;
}
static bool bfloat16_is_nan(uint16_t b) {
  return (b & 0x7fff) > 0x7f80;
}

static void half_conversions_match_the_reference_at_every_level(void** state) {
  (void)state;
  enum { kCount = 65536 };
  uint16_t* bits = malloc(kCount * sizeof(uint16_t));
  uint16_t* back = malloc(kCount * sizeof(uint16_t));
  float* wide = malloc(kCount * sizeof(float));
  assert_non_null(bits);
  assert_non_null(back);
  assert_non_null(wide);
  for (int i = 0; i < kCount; ++i) bits[i] = (uint16_t)i;
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    const loom__cast_table_t* cast = kCast[level];
    // Every half to float and back.
    (*cast)[LOOM_ELEM_F16][LOOM_ELEM_F32](bits, wide, kCount);
    (*cast)[LOOM_ELEM_F32][LOOM_ELEM_F16](wide, back, kCount);
    for (int i = 0; i < kCount; ++i) {
      float want = loom__half_to_float(bits[i]);
      if (isnan(want)) {
        assert_true(isnan(wide[i]));
        assert_true(half_is_nan(back[i]));
      } else {
        assert_true(wide[i] == want && signbit(wide[i]) == signbit(want));
        assert_int_equal(back[i], bits[i]);
      }
    }
    // Every bfloat16 likewise.
    (*cast)[LOOM_ELEM_BF16][LOOM_ELEM_F32](bits, wide, kCount);
    (*cast)[LOOM_ELEM_F32][LOOM_ELEM_BF16](wide, back, kCount);
    for (int i = 0; i < kCount; ++i) {
      if (bfloat16_is_nan(bits[i])) {
        assert_true(bfloat16_is_nan(back[i]));
      } else {
        assert_int_equal(back[i], bits[i]);
      }
    }
  }
  free(bits);
  free(back);
  free(wide);
}

// Float bit patterns spread over the whole range (subnormals, overflow,
// ties), rounded to half and bfloat16 as base/half.h rounds them.
static void float_rounding_to_16_bits_matches_the_reference(void** state) {
  (void)state;
  enum { kCount = 1 << 17 };
  float* values = malloc(kCount * sizeof(float));
  uint16_t* half = malloc(kCount * sizeof(uint16_t));
  uint16_t* bf16 = malloc(kCount * sizeof(uint16_t));
  assert_non_null(values);
  assert_non_null(half);
  assert_non_null(bf16);
  uint32_t pattern = 0;
  for (int i = 0; i < kCount; ++i) {
    // Half of them exact ties for half (13 dropped bits 0x1000).
    uint32_t bits = (i & 1) ? (pattern & ~0x1fffu) | 0x1000u : pattern;
    values[i] = loom__bits_float(bits);
    pattern += 0x8001u * 0x3u + (uint32_t)i;
  }
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    (*kCast[level])[LOOM_ELEM_F32][LOOM_ELEM_F16](values, half, kCount);
    (*kCast[level])[LOOM_ELEM_F32][LOOM_ELEM_BF16](values, bf16, kCount);
    for (int i = 0; i < kCount; ++i) {
      if (isnan(values[i])) {
        assert_true(half_is_nan(half[i]));
        assert_true(bfloat16_is_nan(bf16[i]));
      } else {
        assert_int_equal(half[i], loom__float_to_half(values[i]));
        assert_int_equal(bf16[i], loom__float_to_bfloat16(values[i]));
      }
    }
  }
  free(values);
  free(half);
  free(bf16);
}

typedef struct float_op_t {
  loom__unary_op_t op;
  double (*reference)(double);
  double low, high;
} float_op_t;

static double sigmoid(double x) {
  return 1 / (1 + exp(-x));
}
static double rsqrt(double x) {
  return 1 / sqrt(x);
}
static double elu(double x) {
  return x < 0 ? expm1(x) : x;
}

static const float_op_t kFloatOps[] = {
    {LOOM_UNARY_EXP, exp, -20, 20},
    {LOOM_UNARY_EXPM1, expm1, -5, 5},
    {LOOM_UNARY_LOG, log, 1e-3, 1e3},
    {LOOM_UNARY_LOG1P, log1p, -0.9, 9},
    {LOOM_UNARY_SIN, sin, -20, 20},
    {LOOM_UNARY_COS, cos, -20, 20},
    {LOOM_UNARY_TANH, tanh, -9, 9},
    {LOOM_UNARY_ERF, erf, -4, 4},
    {LOOM_UNARY_SQRT, sqrt, 0, 100},
    {LOOM_UNARY_RSQRT, rsqrt, 1e-3, 100},
    {LOOM_UNARY_SIGMOID, sigmoid, -30, 30},
    {LOOM_UNARY_ELU, elu, -5, 5},
};

// Lengths that leave a tail at every vector width, in place and not.
static void float_loops_match_libm_at_every_level(void** state) {
  (void)state;
  enum { kCount = 1037 };
  float xf[kCount], yf[kCount];
  double xd[kCount], yd[kCount];
  for (size_t k = 0; k < sizeof(kFloatOps) / sizeof(kFloatOps[0]); ++k) {
    const float_op_t* op = &kFloatOps[k];
    for (int i = 0; i < kCount; ++i) {
      xd[i] = op->low + (op->high - op->low) * (i + 0.5) / kCount;
      xf[i] = (float)xd[i];
      xd[i] = xf[i];
    }
    for (int level = 0; level <= (int)loom__isa_level(); ++level) {
      for (int in_place = 0; in_place < 2; ++in_place) {
        float* out_f = in_place ? xf : yf;
        double* out_d = in_place ? xd : yd;
        float saved_f[kCount];
        double saved_d[kCount];
        memcpy(saved_f, xf, sizeof(xf));
        memcpy(saved_d, xd, sizeof(xd));
        (*kUnary[level])[op->op][LOOM_ELEM_F32](xf, out_f, kCount);
        (*kUnary[level])[op->op][LOOM_ELEM_F64](xd, out_d, kCount);
        for (int i = 0; i < kCount; ++i) {
          double want = op->reference(saved_d[i]);
          double tolerance_f = 1e-6 * fabs(want) + 1e-30;
          double tolerance_d = 1e-13 * fabs(want) + 1e-300;
          if (fabs(out_f[i] - want) > tolerance_f ||
              fabs(out_d[i] - want) > tolerance_d) {
            fail_msg(
                "op %d level %d element %d (%.9g): %.9g / %.17g, "
                "expected %.17g",
                (int)op->op, level, i, saved_d[i], out_f[i], out_d[i], want);
          }
        }
        memcpy(xf, saved_f, sizeof(xf));
        memcpy(xd, saved_d, sizeof(xd));
      }
    }
  }
}

static void softplus_grad_matches_libm_at_every_level(void** state) {
  (void)state;
  enum { kCount = 517 };
  float g[kCount], f[kCount], out[kCount];
  for (int i = 0; i < kCount; ++i) {
    g[i] = (float)(i % 7) - 3.0f;
    f[i] = -20.0f + 40.0f * (float)i / kCount;
  }
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    (*kGrad[level])[LOOM_UNARY_GRAD_SOFTPLUS][LOOM_ELEM_F32](g, f, out, kCount);
    for (int i = 0; i < kCount; ++i) {
      double want = g[i] / (exp(-(double)f[i]) + 1);
      assert_true(fabs(out[i] - want) <= 1e-6 * fabs(want) + 1e-30);
    }
  }
}

//===----------------------------------------------------------------------===//
// Through the kernel API
//===----------------------------------------------------------------------===//

static loom_host_context_t* g_host;

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

static loom_tensor_t* make_vector(loom_dtype_t dtype, int64_t n) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &n, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  return tensor;
}

static loom_tensor_t* run(const char* op, loom_tensor_t* input,
                          const loom_op_attrs_t* attrs) {
  loom_kernel_run_options_t options = {.host = g_host};
  loom_tensor_t* output = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(
      loom_kernel_run(&options, op, &input, 1, attrs, &output, 1, &count));
  assert_int_equal(count, 1);
  return output;
}

// Large enough for the thread pool; the only reference is handed over.
static void exp_writes_over_an_input_nobody_else_holds(void** state) {
  (void)state;
  enum { kCount = 100003 };
  loom_tensor_t* x = make_vector(LOOM_DTYPE_FLOAT, kCount);
  float* data = loom_tensor_data(x);
  for (int i = 0; i < kCount; ++i) data[i] = (float)(i % 1000) * 0.01f - 5;
  loom_kernel_statistics_t before = loom_kernel_statistics();
  loom_tensor_t* y = run("Exp", x, NULL);
  loom_kernel_statistics_t after = loom_kernel_statistics();
  assert_ptr_equal(loom_tensor_data(y), data);
  assert_int_equal(after.forwarded_buffers - before.forwarded_buffers, 1);
  for (int i = 0; i < kCount; ++i) {
    double want = exp((double)((float)(i % 1000) * 0.01f - 5));
    assert_true(fabs(data[i] - want) <= 1e-6 * want);
  }
  loom_tensor_release(y);
}

static void exp_keeps_an_input_someone_else_holds(void** state) {
  (void)state;
  loom_tensor_t* x = make_vector(LOOM_DTYPE_FLOAT, 3);
  float* data = loom_tensor_data(x);
  data[0] = 0;
  data[1] = 1;
  data[2] = -1;
  loom_tensor_retain(x);
  loom_tensor_t* y = run("Exp", x, NULL);
  assert_ptr_not_equal(loom_tensor_data(y), data);
  assert_true(data[1] == 1.0f);
  assert_true(((float*)loom_tensor_data(y))[0] == 1.0f);
  loom_tensor_release(y);
  loom_tensor_release(x);
}

static void cast_to_the_input_dtype_returns_the_input(void** state) {
  (void)state;
  loom_tensor_t* x = make_vector(LOOM_DTYPE_INT32, 4);
  loom_tensor_retain(x);
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_default());
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "DstT", LOOM_DTYPE_INT32));
  loom_tensor_t* y = run("Cast", x, &attrs);
  assert_ptr_equal(y, x);
  loom_op_attrs_deinitialize(&attrs);
  loom_tensor_release(y);
  loom_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(half_conversions_match_the_reference_at_every_level),
      cmocka_unit_test(float_rounding_to_16_bits_matches_the_reference),
      cmocka_unit_test(float_loops_match_libm_at_every_level),
      cmocka_unit_test(softplus_grad_matches_libm_at_every_level),
      cmocka_unit_test(exp_writes_over_an_input_nobody_else_holds),
      cmocka_unit_test(exp_keeps_an_input_someone_else_holds),
      cmocka_unit_test(cast_to_the_input_dtype_returns_the_input),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
