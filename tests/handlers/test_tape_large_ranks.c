// The gradient tape over tensors above rank 8: AddV2 and Mul with
// broadcasting, Transpose, Reshape and Sum at ranks 10 and 12, whose
// gradients use BroadcastGradientArgs' rule, Reshape, Sum and Fill of
// those ranks. Reference: PyTorch's autograd (/usr/bin/python3), in f64.

#include "autodiff_test_util.h"
#include "loom/handlers.h"

// PyTorch:
//   x = (arange(12) * 0.25 - 1).reshape(2,1,3,1,1,1,1,1,2,1)
//   y = (arange(6) * 0.5 + 0.5).reshape(1,1,3,1,1,1,1,1,1,2)
//   z = (x + y) * x;  t = z.permute(8,9,2,3,4,5,6,7,0,1)
//   r = t.reshape(2,2,1,3,1,1,1,1,1,1,2,1);  s = r.sum(dim=(1, 3))
//   loss = (s * s).sum();  loss.backward()
static const double kLoss[1] = {1031.625};
static const double kDx[12] = {3.75,  -2.25, -2.25, 3.75,  -8.25, 9.75,
                               136.5, 229.5, 292.5, 433.5, 448.5, 637.5};
static const double kDy[6] = {58.125,  58.125,  103.125,
                              103.125, 148.125, 148.125};

static const int64_t kXDims[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 1};
static const int64_t kYDims[10] = {1, 1, 3, 1, 1, 1, 1, 1, 1, 2};

// A f64 tensor handle of any rank holding values[i] = i * scale + offset.
static handle_t* arange(const int64_t* dims, int rank, double scale,
                        double offset) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_DOUBLE, &shape, &tensor));
  double* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < loom_shape_num_elements(&shape); ++i) {
    data[i] = (double)i * scale + offset;
  }
  handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static handle_t* int_vector(const int64_t* values, int64_t n) {
  double d[16];
  for (int64_t i = 0; i < n; ++i) d[i] = (double)values[i];
  return make(LOOM_DTYPE_INT32, &n, 1, d);
}

static int32_t rank_of(handle_t* h) {
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(h, &metadata));
  return metadata.shape.rank;
}

static void expect_values(handle_t* h, const double* expected, int64_t n,
                          const char* what) {
  double actual[16];
  assert_int_equal(read_values(h, actual, 16), n);
  for (int64_t i = 0; i < n; ++i) {
    expect_close(actual[i], expected[i], 1e-12, what, i);
  }
}

static void gradients_at_ranks_10_and_12_match_pytorch(void** state) {
  (void)state;
  handle_t* x = arange(kXDims, 10, 0.25, -1.0);
  handle_t* y = arange(kYDims, 10, 0.5, 0.5);
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, &options, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_tape_watch(tape, y));
  handle_t* sum = bin("AddV2", x, y);
  handle_t* z = bin("Mul", sum, x);
  static const int64_t kPerm[10] = {8, 9, 2, 3, 4, 5, 6, 7, 0, 1};
  handle_t* perm = int_vector(kPerm, 10);
  handle_t* t = bin("Transpose", z, perm);
  static const int64_t kShape12[12] = {2, 2, 1, 3, 1, 1, 1, 1, 1, 1, 2, 1};
  handle_t* shape = int_vector(kShape12, 12);
  handle_t* r = bin("Reshape", t, shape);
  assert_int_equal(rank_of(r), 12);
  static const int64_t kAxes[2] = {1, 3};
  handle_t* axes = int_vector(kAxes, 2);
  handle_t* s = op1("Sum", LOOM_GRAD_INPUTS(r, axes),
                    LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", false)));
  handle_t* squares = bin("Mul", s, s);
  static const int64_t kAll[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  handle_t* all_axes = int_vector(kAll, 10);
  handle_t* loss = op1("Sum", LOOM_GRAD_INPUTS(squares, all_axes),
                       LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", false)));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  expect_values(loss, kLoss, 1, "loss");
  handle_t* sources[2] = {x, y};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  assert_int_equal(rank_of(grads[0]), 10);
  assert_int_equal(rank_of(grads[1]), 10);
  expect_values(grads[0], kDx, 12, "dloss/dx");
  expect_values(grads[1], kDy, 6, "dloss/dy");
  handle_t* all[] = {x,    y, sum,     z,        perm, t,        shape,   r,
                     axes, s, squares, all_axes, loss, grads[0], grads[1]};
  loom__grad_release_all(all, (int32_t)(sizeof(all) / sizeof(all[0])));
  loom_op_handler_release(tape);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          gradients_at_ranks_10_and_12_match_pytorch, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
