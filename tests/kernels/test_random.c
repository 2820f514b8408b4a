// RandomUniform, RandomStandardNormal, TruncatedNormal: shapes, seeding,
// determinism, and the distributions' moments.

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/half.h"
#include "loom/loom.h"
#include "test_support.h"

static loom_context_t* g_context;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_create(NULL, &g_context));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

static loom_tensor_handle_t* shape_vector(const int64_t* dims, int rank) {
  int64_t length = rank;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &length, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT64, &shape, &tensor));
  for (int i = 0; i < rank; ++i)
    ((int64_t*)loom_tensor_data(tensor))[i] = dims[i];
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// A new op (the caller destroys it) drawing `dtype` with the given seeds.
static loom_eager_op_t* random_op(const char* name, loom_dtype_t dtype,
                                  int64_t seed, int64_t seed2) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype", dtype));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(loom_eager_op_attrs(op), "seed", seed));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_i64(loom_eager_op_attrs(op), "seed2", seed2));
  return op;
}

// Runs `op` on `shape` and returns its tensor as doubles (malloc'd).
static double* draw(loom_eager_op_t* op, loom_tensor_handle_t* shape,
                    int64_t* out_count) {
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shape));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &count));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, result, &tensor));
  int64_t n = loom_tensor_num_elements(tensor);
  double* values = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; ++i) {
    const void* data = loom_tensor_data(tensor);
    switch (loom_tensor_dtype(tensor)) {
      case LOOM_DTYPE_FLOAT:
        values[i] = ((const float*)data)[i];
        break;
      case LOOM_DTYPE_DOUBLE:
        values[i] = ((const double*)data)[i];
        break;
      case LOOM_DTYPE_HALF:
        values[i] = loom__half_to_float(((const uint16_t*)data)[i]);
        break;
      default:
        values[i] = loom__bfloat16_to_float(((const uint16_t*)data)[i]);
        break;
    }
  }
  *out_count = n;
  loom_tensor_release(tensor);
  loom_tensor_handle_release(result);
  // Ready for another call with the same op.
  LOOM_ASSERT_OK(loom_eager_op_reset(op, NULL));
  return values;
}

static void moments(const double* values, int64_t n, double* mean,
                    double* variance) {
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < n; ++i) sum += values[i];
  *mean = sum / (double)n;
  for (int64_t i = 0; i < n; ++i) {
    squares += (values[i] - *mean) * (values[i] - *mean);
  }
  *variance = squares / (double)n;
}

static void set_seeds(loom_eager_op_t* op, loom_dtype_t dtype, int64_t seed,
                      int64_t seed2) {
  LOOM_ASSERT_OK(
      loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype", dtype));
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(loom_eager_op_attrs(op), "seed", seed));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_i64(loom_eager_op_attrs(op), "seed2", seed2));
}

static void uniform_has_the_shape_asked_and_values_in_0_1(void** state) {
  (void)state;
  static const loom_dtype_t kDtypes[] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                                         LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16};
  for (size_t d = 0; d < 4; ++d) {
    int64_t dims[2] = {3, 50000};
    loom_tensor_handle_t* shape = shape_vector(dims, 2);
    loom_eager_op_t* op = random_op("RandomUniform", kDtypes[d], 7, 11);
    int64_t n = 0;
    double* values = draw(op, shape, &n);
    assert_int_equal(n, 3 * 50000);
    // [0, 1), 1 excluded for every dtype, as TensorFlow's (half and
    // bfloat16 draw their own significand bits, never a rounded float).
    for (int64_t i = 0; i < n; ++i) {
      assert_true(values[i] >= 0.0 && values[i] < 1.0);
    }
    double mean, variance;
    moments(values, n, &mean, &variance);
    // U(0, 1): mean 1/2, variance 1/12; 150k draws put both well inside.
    assert_true(fabs(mean - 0.5) < 0.01);
    assert_true(fabs(variance - 1.0 / 12.0) < 0.005);
    free(values);
    loom_eager_op_destroy(op);
    loom_tensor_handle_release(shape);
  }
}

static void normal_has_mean_0_and_variance_1(void** state) {
  (void)state;
  int64_t dims[1] = {200001};
  loom_tensor_handle_t* shape = shape_vector(dims, 1);
  loom_eager_op_t* op =
      random_op("RandomStandardNormal", LOOM_DTYPE_DOUBLE, 3, 4);
  int64_t n = 0;
  double* values = draw(op, shape, &n);
  double mean, variance;
  moments(values, n, &mean, &variance);
  assert_true(fabs(mean) < 0.01);
  assert_true(fabs(variance - 1.0) < 0.02);
  free(values);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shape);
}

static void truncated_normal_stays_within_two_deviations(void** state) {
  (void)state;
  int64_t dims[1] = {100000};
  loom_tensor_handle_t* shape = shape_vector(dims, 1);
  loom_eager_op_t* op = random_op("TruncatedNormal", LOOM_DTYPE_FLOAT, 5, 6);
  int64_t n = 0;
  double* values = draw(op, shape, &n);
  assert_int_equal(n, 100000);
  for (int64_t i = 0; i < n; ++i) assert_true(fabs(values[i]) <= 2.0);
  double mean, variance;
  moments(values, n, &mean, &variance);
  // A normal truncated at +-2 has variance about 0.774.
  assert_true(fabs(mean) < 0.01);
  assert_true(fabs(variance - 0.774) < 0.02);
  free(values);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shape);
}

static void same_seeds_replay_the_same_sequence(void** state) {
  (void)state;
  int64_t dims[1] = {70000};  // several groups: the threaded path
  loom_tensor_handle_t* shape = shape_vector(dims, 1);
  loom_eager_op_t* a = random_op("RandomUniform", LOOM_DTYPE_FLOAT, 42, 1);
  loom_eager_op_t* b = random_op("RandomUniform", LOOM_DTYPE_FLOAT, 42, 1);
  int64_t n = 0;
  double* a1 = draw(a, shape, &n);
  set_seeds(a, LOOM_DTYPE_FLOAT, 42, 1);
  double* a2 = draw(a, shape, &n);
  double* b1 = draw(b, shape, &n);
  set_seeds(b, LOOM_DTYPE_FLOAT, 42, 1);
  double* b2 = draw(b, shape, &n);
  // Each op has its generator: its stream advances with every call, and
  // another op with the same seeds replays the same stream.
  assert_memory_not_equal(a1, a2, sizeof(double) * (size_t)n);
  assert_memory_equal(a1, b1, sizeof(double) * (size_t)n);
  assert_memory_equal(a2, b2, sizeof(double) * (size_t)n);
  free(a1);
  free(a2);
  free(b1);
  free(b2);
  loom_eager_op_destroy(a);
  loom_eager_op_destroy(b);
  loom_tensor_handle_release(shape);
}

// Philox is counter-based: the values depend on the element count and
// the seeds, not on the rank (a shape above rank 8 spills its dims).
static void ranks_above_8_draw_the_values_of_rank_1(void** state) {
  (void)state;
  static const char* const kOps[3] = {"RandomUniform", "RandomStandardNormal",
                                      "TruncatedNormal"};
  int64_t flat[1] = {600};
  int64_t rank10[10] = {2, 1, 3, 1, 1, 2, 1, 5, 1, 10};
  int64_t rank20[20];
  for (int i = 0; i < 20; ++i) rank20[i] = 1;
  rank20[18] = 20;
  rank20[19] = 30;
  loom_tensor_handle_t* shapes[3] = {shape_vector(flat, 1),
                                     shape_vector(rank10, 10),
                                     shape_vector(rank20, 20)};
  const int64_t* dims[3] = {flat, rank10, rank20};
  const int ranks[3] = {1, 10, 20};
  for (int o = 0; o < 3; ++o) {
    double* first = NULL;
    for (int s = 0; s < 3; ++s) {
      loom_eager_op_t* op = random_op(kOps[o], LOOM_DTYPE_DOUBLE, 11, 3);
      LOOM_ASSERT_OK(loom_eager_op_add_input(op, shapes[s]));
      loom_tensor_handle_t* result = NULL;
      int32_t count = 0;
      LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &count));
      loom_tensor_t* tensor = NULL;
      LOOM_ASSERT_OK(loom_context_resolve(g_context, result, &tensor));
      const loom_shape_t* shape = loom_tensor_shape(tensor);
      assert_int_equal(shape->rank, ranks[s]);
      for (int i = 0; i < ranks[s]; ++i) {
        assert_int_equal(loom_shape_dims(shape)[i], dims[s][i]);
      }
      const double* values = loom_tensor_data(tensor);
      assert_int_equal(loom_tensor_num_elements(tensor), 600);
      for (int i = 0; i < 600; ++i) {
        assert_true(isfinite(values[i]));
        if (o == 0) assert_true(values[i] >= 0 && values[i] < 1);
        if (o == 2) assert_true(fabs(values[i]) <= 2);
      }
      if (s == 0) {
        first = malloc(sizeof(double) * 600);
        memcpy(first, values, sizeof(double) * 600);
      } else {
        assert_memory_equal(first, values, sizeof(double) * 600);
      }
      loom_tensor_release(tensor);
      loom_tensor_handle_release(result);
      loom_eager_op_destroy(op);
    }
    free(first);
  }
  for (int s = 0; s < 3; ++s) loom_tensor_handle_release(shapes[s]);
}

static void a_shape_of_255_dims_is_an_error(void** state) {
  (void)state;
  int64_t dims[255];
  for (int i = 0; i < 255; ++i) dims[i] = 1;
  loom_tensor_handle_t* shape = shape_vector(dims, 255);
  loom_eager_op_t* op = random_op("TruncatedNormal", LOOM_DTYPE_FLOAT, 1, 1);
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shape));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &result, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "TruncatedNormal: shape has 255 dimensions, more than "
                     "254");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shape);
}

static void different_seeds_give_different_values(void** state) {
  (void)state;
  int64_t dims[1] = {1000};
  loom_tensor_handle_t* shape = shape_vector(dims, 1);
  loom_eager_op_t* a =
      random_op("RandomStandardNormal", LOOM_DTYPE_FLOAT, 1, 2);
  loom_eager_op_t* b =
      random_op("RandomStandardNormal", LOOM_DTYPE_FLOAT, 2, 1);
  int64_t n = 0;
  double* x = draw(a, shape, &n);
  double* y = draw(b, shape, &n);
  assert_memory_not_equal(x, y, sizeof(double) * (size_t)n);
  free(x);
  free(y);
  loom_eager_op_destroy(a);
  loom_eager_op_destroy(b);
  loom_tensor_handle_release(shape);
}

static void empty_shapes_and_scalars_work(void** state) {
  (void)state;
  int64_t zero[1] = {0};
  loom_tensor_handle_t* empty = shape_vector(zero, 1);
  loom_tensor_handle_t* scalar = shape_vector(NULL, 0);
  loom_eager_op_t* op = random_op("RandomUniform", LOOM_DTYPE_FLOAT, 1, 1);
  int64_t n = -1;
  double* values = draw(op, empty, &n);
  assert_int_equal(n, 0);
  free(values);
  set_seeds(op, LOOM_DTYPE_FLOAT, 1, 1);
  values = draw(op, scalar, &n);
  assert_int_equal(n, 1);
  free(values);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(empty);
  loom_tensor_handle_release(scalar);
}

static void a_negative_dimension_is_an_error(void** state) {
  (void)state;
  int64_t dims[2] = {2, -3};
  loom_tensor_handle_t* shape = shape_vector(dims, 2);
  loom_eager_op_t* op = random_op("RandomUniform", LOOM_DTYPE_FLOAT, 1, 1);
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shape));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &result, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "RandomUniform: dimension 1 of shape is -3");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shape);
}

static void integer_dtypes_are_not_allowed(void** state) {
  (void)state;
  int64_t dims[1] = {2};
  loom_tensor_handle_t* shape = shape_vector(dims, 1);
  loom_eager_op_t* op = random_op("RandomUniform", LOOM_DTYPE_INT32, 1, 1);
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, shape));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &result, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "not in the list of allowed");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(shape);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(uniform_has_the_shape_asked_and_values_in_0_1),
      cmocka_unit_test(normal_has_mean_0_and_variance_1),
      cmocka_unit_test(truncated_normal_stays_within_two_deviations),
      cmocka_unit_test(same_seeds_replay_the_same_sequence),
      cmocka_unit_test(ranks_above_8_draw_the_values_of_rank_1),
      cmocka_unit_test(a_shape_of_255_dims_is_an_error),
      cmocka_unit_test(different_seeds_give_different_values),
      cmocka_unit_test(empty_shapes_and_scalars_work),
      cmocka_unit_test(a_negative_dimension_is_an_error),
      cmocka_unit_test(integer_dtypes_are_not_allowed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
