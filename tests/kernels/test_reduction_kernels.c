// Reductions, matrix products and softmax beyond what the conformance cases
// reach: the loops at every ISA level this CPU runs (the cases run only the
// widest), results that do not depend on the number of threads, the
// OpenBLAS thread policy, and allocation failures inside the kernels.

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/matmul.h"
#include "kernels/reduction.h"
#include "kernels/softmax.h"
#include "loom/builtin_ops.h"
#include "loom/loom.h"
#include "test_support.h"

static const loom__reduce_table_t* const kReduce[LOOM_ISA_LEVELS] = {
    &loom__reduce_loops_baseline, &loom__reduce_loops_avx2,
    &loom__reduce_loops_avx512};
static const loom__arg_table_t* const kArg[LOOM_ISA_LEVELS] = {
    &loom__arg_loops_baseline, &loom__arg_loops_avx2, &loom__arg_loops_avx512};
static const loom__softmax_loops_t* const kSoftmax[LOOM_ISA_LEVELS] = {
    &loom__softmax_loops_baseline, &loom__softmax_loops_avx2,
    &loom__softmax_loops_avx512};
static const loom__matmul_loops_t* const kMatmul[LOOM_ISA_LEVELS] = {
    &loom__matmul_loops_baseline, &loom__matmul_loops_avx2,
    &loom__matmul_loops_avx512};

static uint64_t g_seed = 12345;

static double next_value(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)((g_seed >> 11) & ((1ull << 52) - 1)) / (double)(1ull << 52) *
             2.0 -
         1.0;
}

// Lengths around the loops' lane counts and blocks, leaving every tail.
static const int64_t kLengths[] = {0,   1,   15,   16,   17,   100,   511,
                                   512, 513, 2047, 2049, 5000, 16384, 40001};

static void float_sums_are_accurate_at_every_level(void** state) {
  (void)state;
  float* x = malloc(40001 * sizeof(float));
  assert_non_null(x);
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    const loom__reduce_loops_t* sum = &(*kReduce[level])[0][LOOM_ELEM_F32];
    for (size_t l = 0; l < sizeof(kLengths) / sizeof(kLengths[0]); ++l) {
      int64_t n = kLengths[l];
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < n; ++i) {
        x[i] = (float)next_value();
        exact += x[i];
        magnitude += fabs(x[i]);
      }
      float acc;
      sum->init(&acc, 1);
      sum->rows(x, n, 1, n, &acc);
      assert_true(fabs(acc - exact) <= 1e-6 * magnitude + 1e-7);
      // The same values as one column of n rows.
      sum->init(&acc, 1);
      sum->columns(x, 1, n, 1, &acc);
      assert_true(fabs(acc - exact) <= 1e-5 * magnitude + 1e-7);
    }
  }
  free(x);
}

static void float_max_sees_nan_and_infinity_in_long_runs(void** state) {
  (void)state;
  enum { kCount = 3000 };
  float* x = malloc(kCount * sizeof(float));
  assert_non_null(x);
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    const loom__reduce_loops_t* max =
        &(*kReduce[level])[LOOM_REDUCE_MAX][LOOM_ELEM_F32];
    const loom__reduce_loops_t* min =
        &(*kReduce[level])[LOOM_REDUCE_MIN][LOOM_ELEM_F32];
    for (int64_t at = 0; at < kCount; at += 997) {
      for (int64_t i = 0; i < kCount; ++i) x[i] = (float)next_value();
      float best;
      max->init(&best, 1);
      max->rows(x, kCount, 1, kCount, &best);
      assert_true(best <= 1.0f && best > 0.9f);
      x[at] = NAN;
      max->init(&best, 1);
      max->rows(x, kCount, 1, kCount, &best);
      assert_true(isnan(best));
      min->init(&best, 1);
      min->rows(x, kCount, 1, kCount, &best);
      assert_true(isnan(best));
      x[at] = -INFINITY;  // no NaN left: the exact minimum, a normal max
      min->init(&best, 1);
      min->rows(x, kCount, 1, kCount, &best);
      assert_true(isinf(best) && best < 0);
      max->init(&best, 1);
      max->rows(x, kCount, 1, kCount, &best);
      assert_true(best <= 1.0f && best > 0.9f);
    }
  }
  free(x);
}

static void integer_columns_match_a_plain_loop_at_every_level(void** state) {
  (void)state;
  enum { kRows = 21, kCols = 37 };
  int32_t x[kRows * kCols];
  for (int i = 0; i < kRows * kCols; ++i) {
    x[i] = (int32_t)(next_value() * 1e9);
  }
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    for (int op = LOOM_REDUCE_SUM; op <= LOOM_REDUCE_MIN; ++op) {
      if (op == LOOM_REDUCE_MEAN) continue;
      const loom__reduce_loops_t* loops = &(*kReduce[level])[op][LOOM_ELEM_I32];
      for (int rows = 0; rows <= kRows; rows += 5) {
        int32_t acc[kCols];
        loops->init(acc, kCols);
        loops->columns(x, kCols, rows, kCols, acc);
        for (int j = 0; j < kCols; ++j) {
          uint32_t want = op == LOOM_REDUCE_PROD ? 1u : 0u;
          int32_t best = op == LOOM_REDUCE_MAX ? INT32_MIN : INT32_MAX;
          for (int r = 0; r < rows; ++r) {
            int32_t v = x[r * kCols + j];
            if (op == LOOM_REDUCE_SUM) want += (uint32_t)v;
            if (op == LOOM_REDUCE_PROD) want *= (uint32_t)v;
            if (op == LOOM_REDUCE_MAX && v > best) best = v;
            if (op == LOOM_REDUCE_MIN && v < best) best = v;
          }
          int32_t expect = op == LOOM_REDUCE_MAX || op == LOOM_REDUCE_MIN
                               ? best
                               : (int32_t)want;
          assert_int_equal(acc[j], expect);
        }
      }
    }
  }
}

static void argmax_takes_the_first_best_and_skips_nan(void** state) {
  (void)state;
  enum { kCount = 1000 };
  float x[kCount];
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    const loom__arg_loops_t* argmax = &(*kArg[level])[LOOM_ARG_MAX][0];
    for (int i = 0; i < kCount; ++i) x[i] = (float)(i % 7);
    x[3] = NAN;
    x[901] = NAN;
    float best;
    int64_t at;
    argmax->init(&best, &at, 1);
    argmax->rows(x, kCount, 1, kCount, 0, &best, &at);
    assert_int_equal(at, 6);  // the first 6; NaN never wins
    for (int i = 0; i < kCount; ++i) x[i] = NAN;
    argmax->init(&best, &at, 1);
    argmax->rows(x, kCount, 1, kCount, 0, &best, &at);
    assert_int_equal(at, 0);
    // Columns: the first row holding each column's best.
    for (int i = 0; i < kCount; ++i) x[i] = (float)((i / 10) % 4);
    float bests[10];
    int64_t where[10];
    argmax->init(bests, where, 10);
    argmax->columns(x, 10, kCount / 10, 10, 0, bests, where);
    for (int j = 0; j < 10; ++j) assert_int_equal(where[j], 3);
  }
}

static void softmax_rows_match_libm_at_every_level(void** state) {
  (void)state;
  enum { kCount = 1031 };
  double x[kCount], y[kCount], want[kCount];
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    for (int n = 1; n <= kCount; n += 103) {
      double m = -INFINITY, s = 0;
      for (int i = 0; i < n; ++i) {
        x[i] = next_value() * 30;
        if (x[i] > m) m = x[i];
      }
      for (int i = 0; i < n; ++i) s += exp(x[i] - m);
      for (int i = 0; i < n; ++i) want[i] = (x[i] - m) - log(s);
      kSoftmax[level]->softmax_f64(x, y, n, 1);
      for (int i = 0; i < n; ++i) {
        assert_true(fabs(y[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])));
      }
      kSoftmax[level]->softmax_f64(x, y, n, 0);
      for (int i = 0; i < n; ++i) {
        assert_true(fabs(y[i] - exp(want[i])) <= 1e-14);
      }
    }
  }
}

static void integer_products_match_a_plain_loop_at_every_level(void** state) {
  (void)state;
  enum { kM = 7, kK = 300, kN = 530 };
  int64_t* a = malloc(kM * kK * sizeof(int64_t));
  int64_t* b = malloc(kK * kN * sizeof(int64_t));
  int64_t* c = malloc(kM * kN * sizeof(int64_t));
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  for (int i = 0; i < kM * kK; ++i) a[i] = (int64_t)(next_value() * 1e12);
  for (int i = 0; i < kK * kN; ++i) b[i] = (int64_t)(next_value() * 1e12);
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    // a as [kK, kM] transposed: op(a)[i, p] = a[p * kM + i].
    kMatmul[level]->gemm_i64(a, 1, kM, b, c, kM, kN, kK);
    for (int i = 0; i < kM; ++i) {
      for (int j = 0; j < kN; ++j) {
        uint64_t want = 0;
        for (int p = 0; p < kK; ++p) {
          want += (uint64_t)a[p * kM + i] * (uint64_t)b[p * kN + j];
        }
        assert_int_equal(c[i * kN + j], (int64_t)want);
      }
    }
  }
  free(a);
  free(b);
  free(c);
}

//===----------------------------------------------------------------------===//
// Through the kernel API
//===----------------------------------------------------------------------===//

static loom_tensor_t* float_tensor(const int64_t* dims, int32_t rank) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < loom_tensor_num_elements(tensor); ++i) {
    data[i] = (float)next_value();
  }
  return tensor;
}

static loom_tensor_t* axes_tensor(const int32_t* axes, int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), axes, (size_t)count * sizeof(int32_t));
  return tensor;
}

// Runs a two-input op on a host with `threads` workers; returns output 0.
static loom_tensor_t* run_two(const char* op, int threads, loom_tensor_t* a,
                              loom_tensor_t* b) {
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = threads;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &host));
  loom_kernel_run_options_t run = {.host = host};
  loom_tensor_retain(a);
  loom_tensor_retain(b);
  loom_tensor_t* inputs[2] = {a, b};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(
      loom_kernel_run(&run, op, inputs, 2, NULL, outputs, 1, &count));
  assert_int_equal(count, 1);
  loom_host_context_destroy(host);
  return outputs[0];
}

static void reductions_do_not_depend_on_the_thread_count(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  static const int64_t kVector[1] = {1 << 20}, kSquare[2] = {1024, 1024},
                       kThin[2] = {1 << 18, 3}, kCube[3] = {64, 64, 256};
  static const int32_t kAxis0[1] = {0}, kAxis1[1] = {1}, kAxes02[2] = {0, 2};
  struct {
    const int64_t* dims;
    int32_t rank;
    const int32_t* axes;
    int64_t num_axes;
  } cases[] = {
      {kVector, 1, kAxis0, 1}, {kSquare, 2, kAxis1, 1}, {kSquare, 2, kAxis0, 1},
      {kThin, 2, kAxis0, 1},   {kCube, 3, kAxes02, 2},
  };
  const char* ops[3] = {"Sum", "Max", "ArgMin"};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    loom_tensor_t* x = float_tensor(cases[c].dims, cases[c].rank);
    loom_tensor_t* axes = axes_tensor(cases[c].axes, cases[c].num_axes);
    for (int o = 0; o < 3; ++o) {
      if (o == 2 && cases[c].num_axes != 1) continue;
      loom_tensor_t* arg = axes;
      loom_tensor_t* scalar = NULL;
      if (o == 2) {  // ArgMin takes a scalar dimension
        loom_shape_t shape = loom_shape_scalar();
        LOOM_ASSERT_OK(loom_tensor_create_dense(
            loom_allocator_system(), LOOM_DTYPE_INT32, &shape, &scalar));
        *(int32_t*)loom_tensor_data(scalar) = cases[c].axes[0];
        arg = scalar;
      }
      loom_tensor_t* serial = run_two(ops[o], 0, x, arg);
      for (int threads = 1; threads <= 3; ++threads) {
        loom_tensor_t* parallel = run_two(ops[o], threads, x, arg);
        assert_int_equal(loom_tensor_byte_size(parallel),
                         loom_tensor_byte_size(serial));
        assert_memory_equal(loom_tensor_data(parallel),
                            loom_tensor_data(serial),
                            loom_tensor_byte_size(serial));
        loom_tensor_release(parallel);
      }
      loom_tensor_release(serial);
      if (scalar) loom_tensor_release(scalar);
    }
    loom_tensor_release(x);
    loom_tensor_release(axes);
  }
}

static void large_products_split_over_the_pool(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  static const int64_t kA[2] = {301, 200}, kB[2] = {200, 250};
  loom_tensor_t* a = float_tensor(kA, 2);
  loom_tensor_t* b = float_tensor(kB, 2);
  loom_tensor_t* serial = run_two("MatMul", 0, a, b);
  loom_tensor_t* parallel = run_two("MatMul", 2, a, b);
  const float* s = loom_tensor_data(serial);
  const float* p = loom_tensor_data(parallel);
  for (int64_t i = 0; i < 301 * 250; ++i)
    assert_true(fabsf(s[i] - p[i]) < 1e-4f);
  loom_tensor_release(serial);
  loom_tensor_release(parallel);
  loom_tensor_release(a);
  loom_tensor_release(b);
}

static void openblas_runs_single_threaded_inside_loom(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  assert_int_equal(openblas_get_num_threads(), 1);
  // Changed behind Loom's back, it is put back before Loom's next GEMM.
  openblas_set_num_threads(2);
  static const int64_t kA[2] = {64, 64};
  loom_tensor_t* a = float_tensor(kA, 2);
  loom_tensor_t* c = run_two("MatMul", 2, a, a);
  assert_int_equal(openblas_get_num_threads(), 1);
  loom_tensor_release(c);
  loom_tensor_release(a);
}

// Sum and ArgMax of inputs large enough for partial results, with every
// allocation of the host and the kernel failing once in turn.
static loom_status_t reduce_with(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 0;  // one thread: the same allocations every run
  options.allocator = allocator;
  loom_host_context_t* host = NULL;
  LOOM_RETURN_IF_ERROR(loom_host_context_create(&options, &host));
  static const int64_t kDims[2] = {1 << 15, 3};
  static const int32_t kAxis[1] = {0};
  loom_tensor_t* x = float_tensor(kDims, 2);
  loom_tensor_t* axes = axes_tensor(kAxis, 1);
  loom_kernel_run_options_t run = {.host = host};
  loom_tensor_t* inputs[2] = {x, axes};
  loom_tensor_t* outputs[1] = {NULL};
  int32_t count = 0;
  loom_status_t status =
      loom_kernel_run(&run, "Sum", inputs, 2, NULL, outputs, 1, &count);
  if (!status) loom_tensor_release(outputs[0]);
  loom_host_context_destroy(host);
  return status;
}

static void reduction_allocation_failures_are_clean(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  assert_true(
      loom_test_fault_sweep(reduce_with, NULL, LOOM_TEST_SWEEP_TOLERANT) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_sums_are_accurate_at_every_level),
      cmocka_unit_test(float_max_sees_nan_and_infinity_in_long_runs),
      cmocka_unit_test(integer_columns_match_a_plain_loop_at_every_level),
      cmocka_unit_test(argmax_takes_the_first_best_and_skips_nan),
      cmocka_unit_test(softmax_rows_match_libm_at_every_level),
      cmocka_unit_test(integer_products_match_a_plain_loop_at_every_level),
      cmocka_unit_test(reductions_do_not_depend_on_the_thread_count),
      cmocka_unit_test(large_products_split_over_the_pool),
      cmocka_unit_test(openblas_runs_single_threaded_inside_loom),
      cmocka_unit_test(reduction_allocation_failures_are_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
