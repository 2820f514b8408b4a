// Helpers shared by the autodiff tests (tests/handlers): a one-thread
// eager context per test, small tensors, running one op, reading values.
// Static inline so that each test uses what it needs.

#ifndef LOOM_TESTS_HANDLERS_AUTODIFF_TEST_UTIL_H_
#define LOOM_TESTS_HANDLERS_AUTODIFF_TEST_UTIL_H_

#include <math.h>

#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

static loom_context_t* g_ctx;

static inline int setup(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 1;
  loom_status_t status = loom_context_create(&options, &g_ctx);
  if (status) {
    loom_status_free(status);
    return -1;
  }
  return 0;
}

static inline int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_ctx);
  g_ctx = NULL;
  return 0;
}

static inline handle_t* make(loom_dtype_t dtype, const int64_t* dims, int rank,
                             const double* values) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  int64_t n = loom_shape_num_elements(&shape);
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < n; ++i) {
    double v = values ? values[i] : 0.0;
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)v;
        break;
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = v;
        break;
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)v;
        break;
      case LOOM_DTYPE_INT64:
        ((int64_t*)data)[i] = (int64_t)v;
        break;
      default:
        fail_msg("unsupported dtype");
    }
  }
  handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static inline handle_t* scalar(double v) {
  return make(LOOM_DTYPE_DOUBLE, NULL, 0, &v);
}

// Reads up to `capacity` values; returns the element count.
static inline int64_t read_values(handle_t* handle, double* out,
                                  int64_t capacity) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_ctx, handle, &tensor));
  loom_tensor_t* dense = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense));
  loom_tensor_release(tensor);
  int64_t n = loom_tensor_num_elements(dense);
  assert_true(n <= capacity);
  for (int64_t i = 0; i < n; ++i) {
    switch (loom_tensor_dtype(dense)) {
      case LOOM_DTYPE_FLOAT:
        out[i] = ((float*)loom_tensor_data(dense))[i];
        break;
      case LOOM_DTYPE_DOUBLE:
        out[i] = ((double*)loom_tensor_data(dense))[i];
        break;
      case LOOM_DTYPE_INT32:
        out[i] = ((int32_t*)loom_tensor_data(dense))[i];
        break;
      case LOOM_DTYPE_INT64:
        out[i] = (double)((int64_t*)loom_tensor_data(dense))[i];
        break;
      default:
        fail_msg("unsupported dtype");
    }
  }
  loom_tensor_release(dense);
  return n;
}

static inline double read_scalar(handle_t* handle) {
  double v = 0;
  assert_int_equal(read_values(handle, &v, 1), 1);
  return v;
}

// Runs an op in the current scope; fails the test on error.
static inline void run(const char* name, handle_t* const* inputs, int32_t n,
                       const loom__grad_attr_t* attrs, int32_t num_attrs,
                       handle_t** results, int32_t num_results) {
  LOOM_ASSERT_OK(loom__grad_execute_in(g_ctx, name, inputs, n, attrs, num_attrs,
                                       results, num_results));
}

static inline handle_t* op1(const char* name, handle_t* const* inputs,
                            int32_t n, const loom__grad_attr_t* attrs,
                            int32_t num_attrs) {
  handle_t* out = NULL;
  run(name, inputs, n, attrs, num_attrs, &out, 1);
  return out;
}

static inline handle_t* bin(const char* name, handle_t* a, handle_t* b) {
  return op1(name, LOOM_GRAD_INPUTS(a, b), LOOM_GRAD_NO_ATTRS);
}

static inline void expect_close(double actual, double expected,
                                double tolerance, const char* what,
                                int64_t index) {
  double error = fabs(actual - expected);
  double scale = fabs(expected) > 1.0 ? fabs(expected) : 1.0;
  if (!(error <= tolerance * scale)) {
    fail_msg("%s[%lld]: got %.12g, expected %.12g", what, (long long)index,
             actual, expected);
  }
}

#endif  // LOOM_TESTS_HANDLERS_AUTODIFF_TEST_UTIL_H_
