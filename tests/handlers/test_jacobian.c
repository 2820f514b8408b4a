// Jacobians and Hessians (loom/jacobian.h) of small functions against
// PyTorch's torch.autograd.functional.jacobian and hessian (f64; the values
// below are written by /usr/bin/python3 with torch, the script in the
// comment), the launches of one batched backward pass, and the errors.
//
// import torch; torch.set_default_dtype(torch.float64)
// from torch.autograd.functional import jacobian, hessian
// W = torch.tensor([[0.5,-0.3,0.8,0.1],[-0.7,0.2,0.4,-0.6],[0.3,0.9,-0.5,0.2]])
// x4 = torch.tensor([0.3,-0.2,0.5,0.1])
// x23 = torch.tensor([[0.5,-1.0,1.5],[2.0,-0.5,0.25]])
// xs = torch.tensor([0.2,-0.4,1.1,0.3])
// jacobian(lambda x: torch.tanh(W @ x), x4)          # kTanhJacobian
// jacobian(lambda x: (x**3).sum(), x23)              # kCubeGradient
// hessian(lambda x: (x**3).sum(), x23)               # kCubeHessian
// jacobian(lambda x: torch.softmax(x, -1), xs)       # kSoftmaxJacobian
// hessian(lambda x: torch.tanh(W @ x).sum(), x4)     # kTanhSumHessian

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff_test_util.h"
#include "loom/jacobian.h"

#define D LOOM_DTYPE_DOUBLE
#define I LOOM_DTYPE_INT32

// shape [3, 4]
static const double kTanhJacobian[] = {
    0.3481289480798277,  -0.20887736884789662, 0.5570063169277243,
    0.06962578961596554, -0.6915978591229918,  0.1975993883208548,
    0.3951987766417096,  -0.5927981649625643,  0.27126163971644207,
    0.8137849191493262,  -0.45210273286073677, 0.18084109314429472};
// shape [2, 3]
static const double kCubeGradient[] = {0.75, 3.0, 6.75, 12.0, 0.75, 0.1875};
// shape [2, 3, 2, 3]
static const double kCubeHessian[] = {
    3.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -6.0, 0.0, 0.0,  -0.0, 0.0,
    0.0, -0.0, 9.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 12.0, -0.0, 0.0,
    0.0, -0.0, 0.0, 0.0, -3.0, 0.0, 0.0, -0.0, 0.0, 0.0,  -0.0, 1.5};
// shape [4, 4]
static const double kSoftmaxJacobian[] = {
    0.15731476077077322,  -0.020988057199847625, -0.09406194656018724,
    -0.04226475701073838, -0.020988057199847625, 0.09580573842991266,
    -0.05162229078588525, -0.02319539044417981,  -0.09406194656018724,
    -0.05162229078588525, 0.24963876518197708,   -0.10395452783590466,
    -0.04226475701073838, -0.02319539044417981,  -0.10395452783590466,
    0.16941467529082282};
// shape [4, 4]
static const double kTanhSumHessian[] = {
    -0.0354106430325323,  0.23593325003285115,  -0.4515554710426706,
    0.08613470195313971,  0.23593325003285118,  0.3929582879196011,
    -0.05036403949638943, 0.09779403640226106,  -0.4515554710426706,
    -0.05036403949638943, -0.31660404569154327, -0.16932477671352852,
    0.08613470195313974,  0.09779403640226104,  -0.16932477671352852,
    0.09264935527289919};

static const double kW[12] = {0.5, -0.3, 0.8, 0.1, -0.7, 0.2,
                              0.4, -0.6, 0.3, 0.9, -0.5, 0.2};
static const double kX4[4] = {0.3, -0.2, 0.5, 0.1};
static const double kX23[6] = {0.5, -1.0, 1.5, 2.0, -0.5, 0.25};
static const double kXs[4] = {0.2, -0.4, 1.1, 0.3};

// tanh(W x): W [3, 4] (user_data), x [4] as [4, 1] for a MatMul.
static loom_status_t tanh_wx(loom_context_t* context, handle_t* x,
                             void* user_data, handle_t** out) {
  (void)context;
  handle_t* w = user_data;
  handle_t* column_shape = make(I, (int64_t[]){2}, 1, (double[]){4, 1});
  handle_t* vector_shape = make(I, (int64_t[]){1}, 1, (double[]){3});
  handle_t* column = bin("Reshape", x, column_shape);
  handle_t* product = bin("MatMul", w, column);
  handle_t* vector = bin("Reshape", product, vector_shape);
  *out = op1("Tanh", LOOM_GRAD_INPUTS(vector), LOOM_GRAD_NO_ATTRS);
  handle_t* all[] = {column_shape, vector_shape, column, product, vector};
  loom__grad_release_all(all, 5);
  return loom_ok_status();
}

// sum(tanh(W x)).
static loom_status_t tanh_sum(loom_context_t* context, handle_t* x,
                              void* user_data, handle_t** out) {
  handle_t* y = NULL;
  LOOM_RETURN_IF_ERROR(tanh_wx(context, x, user_data, &y));
  handle_t* axes = make(I, (int64_t[]){1}, 1, (double[]){0});
  *out = bin("Sum", y, axes);
  loom_tensor_handle_release(axes);
  loom_tensor_handle_release(y);
  return loom_ok_status();
}

// sum(x^3) over every axis of x [2, 3].
static loom_status_t cube_sum(loom_context_t* context, handle_t* x,
                              void* user_data, handle_t** out) {
  (void)context;
  (void)user_data;
  handle_t* square = bin("Mul", x, x);
  handle_t* cube = bin("Mul", square, x);
  handle_t* axes = make(I, (int64_t[]){2}, 1, (double[]){0, 1});
  *out = bin("Sum", cube, axes);
  handle_t* all[] = {square, cube, axes};
  loom__grad_release_all(all, 3);
  return loom_ok_status();
}

static loom_status_t softmax(loom_context_t* context, handle_t* x,
                             void* user_data, handle_t** out) {
  (void)context;
  (void)user_data;
  *out = op1("Softmax", LOOM_GRAD_INPUTS(x), LOOM_GRAD_NO_ATTRS);
  return loom_ok_status();
}

typedef loom_status_t (*transform_fn_t)(loom_context_t*, loom_tensor_fn_t,
                                        void*, handle_t*, handle_t**);

// transform(fn) at x against `expected` (of shape dims[0, rank)).
static void check(const char* what, transform_fn_t transform,
                  loom_tensor_fn_t fn, void* user_data, handle_t* x,
                  const double* expected, const int64_t* dims, int rank) {
  handle_t* jacobian = NULL;
  LOOM_ASSERT_OK(transform(g_ctx, fn, user_data, x, &jacobian));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(jacobian, &metadata));
  assert_int_equal(metadata.shape.rank, rank);
  for (int d = 0; d < rank; ++d) {
    assert_int_equal(metadata.shape.dims[d], dims[d]);
  }
  double got[64];
  int64_t n = read_values(jacobian, got, 64);
  for (int64_t i = 0; i < n; ++i) {
    expect_close(got[i], expected[i], 1e-12, what, i);
  }
  loom_tensor_handle_release(jacobian);
}

static void test_jacobians_against_pytorch(void** state) {
  (void)state;
  handle_t* w = make(D, (int64_t[]){3, 4}, 2, kW);
  handle_t* x4 = make(D, (int64_t[]){4}, 1, kX4);
  handle_t* x23 = make(D, (int64_t[]){2, 3}, 2, kX23);
  handle_t* xs = make(D, (int64_t[]){4}, 1, kXs);
  const int64_t tanh_dims[2] = {3, 4}, square[2] = {4, 4};
  const int64_t cube_dims[4] = {2, 3, 2, 3};
  check("jacrev tanh(W x)", loom_jacrev, tanh_wx, w, x4, kTanhJacobian,
        tanh_dims, 2);
  check("jacfwd tanh(W x)", loom_jacfwd, tanh_wx, w, x4, kTanhJacobian,
        tanh_dims, 2);
  check("jacrev sum(x^3)", loom_jacrev, cube_sum, NULL, x23, kCubeGradient,
        cube_dims, 2);
  check("jacfwd sum(x^3)", loom_jacfwd, cube_sum, NULL, x23, kCubeGradient,
        cube_dims, 2);
  check("jacrev softmax", loom_jacrev, softmax, NULL, xs, kSoftmaxJacobian,
        square, 2);
  check("jacfwd softmax", loom_jacfwd, softmax, NULL, xs, kSoftmaxJacobian,
        square, 2);
  check("hessian sum(x^3)", loom_hessian, cube_sum, NULL, x23, kCubeHessian,
        cube_dims, 4);
  check("hessian sum(tanh(W x))", loom_hessian, tanh_sum, w, x4,
        kTanhSumHessian, square, 2);
  handle_t* all[] = {w, x4, x23, xs};
  loom__grad_release_all(all, 4);
}

// tanh(x) * x, element-wise.
static loom_status_t tanh_times_x(loom_context_t* context, handle_t* x,
                                  void* user_data, handle_t** out) {
  (void)context;
  (void)user_data;
  handle_t* t = op1("Tanh", LOOM_GRAD_INPUTS(x), LOOM_GRAD_NO_ATTRS);
  *out = bin("Mul", t, x);
  loom_tensor_handle_release(t);
  return loom_ok_status();
}

// The ops `transform` executes for tanh(x) * x at x of n elements.
static int64_t ops_for(transform_fn_t transform, int64_t n) {
  double values[16];
  for (int64_t i = 0; i < n; ++i) values[i] = 0.1 * (double)i - 0.3;
  handle_t* x = make(D, &n, 1, values);
  LOOM_ASSERT_OK(loom_context_wait(g_ctx));
  loom_runtime_t* runtime = loom_context_runtime(g_ctx);
  int64_t before = loom_runtime_statistics(runtime).ops_executed;
  handle_t* jacobian = NULL;
  LOOM_ASSERT_OK(transform(g_ctx, tanh_times_x, NULL, x, &jacobian));
  LOOM_ASSERT_OK(loom_context_wait(g_ctx));
  int64_t ops = loom_runtime_statistics(runtime).ops_executed - before;
  // The Jacobian is diagonal: tanh(x) + x (1 - tanh(x)^2).
  static double got[16 * 16 * 16];
  int64_t count = read_values(jacobian, got, 16 * 16 * 16);
  for (int64_t i = 0; i < n && count == n * n; ++i) {
    double t = tanh(values[i]);
    expect_close(got[i * n + i], t + values[i] * (1 - t * t), 1e-12, "diagonal",
                 i);
  }
  loom_tensor_handle_release(jacobian);
  loom_tensor_handle_release(x);
  return ops;
}

// One batched pass: the ops do not grow with the number of rows (jacrev)
// or columns (jacfwd), as they would with a loop or a vmap fallback.
static void test_one_batched_pass(void** state) {
  (void)state;
  assert_int_equal(ops_for(loom_jacrev, 2), ops_for(loom_jacrev, 16));
  assert_int_equal(ops_for(loom_jacfwd, 2), ops_for(loom_jacfwd, 16));
  assert_int_equal(ops_for(loom_hessian, 2), ops_for(loom_hessian, 16));
}

static loom_status_t fails(loom_context_t* context, handle_t* x,
                           void* user_data, handle_t** out) {
  (void)context;
  (void)x;
  (void)user_data;
  *out = NULL;
  return loom_make_status(LOOM_STATUS_ABORTED, "the function failed");
}

static loom_status_t returns_nothing(loom_context_t* context, handle_t* x,
                                     void* user_data, handle_t** out) {
  (void)context;
  (void)x;
  (void)user_data;
  *out = NULL;
  return loom_ok_status();
}

// Returns an int32 tensor.
static loom_status_t returns_ints(loom_context_t* context, handle_t* x,
                                  void* user_data, handle_t** out) {
  (void)context;
  (void)x;
  (void)user_data;
  *out = make(I, (int64_t[]){2}, 1, (double[]){1, 2});
  return loom_ok_status();
}

static void test_errors(void** state) {
  (void)state;
  handle_t* x = make(D, (int64_t[]){2}, 1, (double[]){1, 2});
  handle_t* ints = make(I, (int64_t[]){2}, 1, (double[]){1, 2});
  handle_t* out = NULL;
  loom_op_handler_t* scope = loom_context_scope_handler(g_ctx);
  LOOM_ASSERT_STATUS(loom_jacrev(NULL, softmax, NULL, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_jacrev: context is NULL");
  LOOM_ASSERT_STATUS(loom_jacfwd(g_ctx, NULL, NULL, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "loom_jacfwd: fn is NULL");
  LOOM_ASSERT_STATUS(loom_hessian(g_ctx, softmax, NULL, NULL, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "loom_hessian: x is NULL");
  LOOM_ASSERT_STATUS(loom_jacrev(g_ctx, softmax, NULL, x, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_jacrev: the output pointer is NULL");
  LOOM_ASSERT_STATUS(loom_jacrev(g_ctx, softmax, NULL, ints, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_jacrev: x has dtype int32; expected float or "
                     "double");
  transform_fn_t transforms[3] = {loom_jacrev, loom_jacfwd, loom_hessian};
  for (int k = 0; k < 3; ++k) {
    LOOM_ASSERT_STATUS(transforms[k](g_ctx, fails, NULL, x, &out),
                       LOOM_STATUS_ABORTED, "the function failed");
    LOOM_ASSERT_STATUS(transforms[k](g_ctx, returns_nothing, NULL, x, &out),
                       LOOM_STATUS_INVALID_ARGUMENT,
                       "the function returned OK without a tensor");
    LOOM_ASSERT_STATUS(transforms[k](g_ctx, returns_ints, NULL, x, &out),
                       LOOM_STATUS_INVALID_ARGUMENT,
                       "y has dtype int32; expected float or double");
    assert_null(out);
    // The scopes are left as they were.
    assert_ptr_equal(loom_context_scope_handler(g_ctx), scope);
  }
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(ints);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jacobians_against_pytorch),
      cmocka_unit_test(test_one_batched_pass),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
