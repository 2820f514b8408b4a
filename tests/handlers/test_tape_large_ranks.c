// The gradient tape over tensors above rank 8: AddV2 and Mul with
// broadcasting, Transpose, Reshape and Sum at ranks 10 and 12, whose
// gradients use BroadcastGradientArgs' rule, Reshape, Sum and Fill of
// those ranks; then Tile, Pad, ReverseV2, Softmax, Cumsum, GatherV2, Split,
// BatchMatMulV2 and LogSoftmax in one chain at rank 10. Reference:
// PyTorch's autograd (/usr/bin/python3), in f64.

#include "autodiff_test_util.h"
#include "loom/autodiff.h"
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

// PyTorch:
//   x = (arange(24) * 0.25 - 1).reshape(2,1,3,1,1,1,1,1,2,2)
//   a = x.repeat(1,2,1,1,1,1,1,1,1,1)                  # Tile
//   b = F.pad(a, (0,1, 0,0, ..., 1,0, 0,0, 0,0))        # dim 2 (1,0), 9 (0,1)
//   c = flip(b, (2, 9));  d = softmax(c, -1);  e = cumsum(d, 2)
//   g = index_select(e, 8, [1, 0, 1]);  h0, h1 = split(g, 1, dim=1)
//   m = matmul(h0, h1);  l = log_softmax(m, -1);  loss = (l * l).sum()
static const double kChainLoss[1] = {317.87795045117605};
static const double kChainDx[24] = {
    -0.561145069644496,  9.152444841243122,   -2.652336965509042,
    15.297145910678465,  -3.3044841195008114, 12.775803520784255,
    -7.592923211816559,  18.0924300501295,    -6.923352354803418,
    12.510552760086625,  -11.86909887313623,  17.163829041344652,
    -23.804793284596727, 34.22634512424327,   -24.425524712947297,
    30.607417467368943,  -29.700406820451683, 34.34096406802337,
    -28.43433327133646,  31.06719504029415,   -31.61639598104857,
    33.397253830414115,  -29.576759988150087, 30.574356892908934};

static void a_chain_of_rank_10_ops_matches_pytorch(void** state) {
  (void)state;
  static const int64_t kX[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 2};
  handle_t* x = arange(kX, 10, 0.25, -1.0);
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, &options, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  static const int64_t kMultiples[10] = {1, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  handle_t* multiples = int_vector(kMultiples, 10);
  handle_t* a = bin("Tile", x, multiples);
  static const int64_t kPaddings[20] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                                        0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static const int64_t kPaddingsDims[2] = {10, 2};
  double paddings_values[20];
  for (int i = 0; i < 20; ++i) paddings_values[i] = (double)kPaddings[i];
  handle_t* paddings =
      make(LOOM_DTYPE_INT32, kPaddingsDims, 2, paddings_values);
  handle_t* b = bin("Pad", a, paddings);
  static const int64_t kFlip[2] = {2, 9};
  handle_t* flip = int_vector(kFlip, 2);
  handle_t* c = bin("ReverseV2", b, flip);
  handle_t* d = op1("Softmax", LOOM_GRAD_INPUTS(c), LOOM_GRAD_NO_ATTRS);
  static const double kTwo = 2, kEight = 8, kOne = 1;
  handle_t* two_i = make(LOOM_DTYPE_INT32, NULL, 0, &kTwo);
  handle_t* e = bin("Cumsum", d, two_i);
  static const int64_t kPicks[3] = {1, 0, 1};
  handle_t* picks = int_vector(kPicks, 3);
  handle_t* eight_i = make(LOOM_DTYPE_INT32, NULL, 0, &kEight);
  handle_t* g =
      op1("GatherV2", LOOM_GRAD_INPUTS(e, picks, eight_i), LOOM_GRAD_NO_ATTRS);
  handle_t* one_i = make(LOOM_DTYPE_INT32, NULL, 0, &kOne);
  handle_t* halves[2] = {NULL, NULL};
  run("Split", LOOM_GRAD_INPUTS(one_i, g),
      LOOM_GRAD_ATTRS(LOOM_GRAD_INT("num_split", 2)), halves, 2);
  handle_t* m = bin("BatchMatMulV2", halves[0], halves[1]);
  handle_t* l = op1("LogSoftmax", LOOM_GRAD_INPUTS(m), LOOM_GRAD_NO_ATTRS);
  handle_t* squares = bin("Mul", l, l);
  static const int64_t kAll[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  handle_t* all_axes = int_vector(kAll, 10);
  handle_t* loss = op1("Sum", LOOM_GRAD_INPUTS(squares, all_axes),
                       LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", false)));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(rank_of(m), 10);
  expect_values(loss, kChainLoss, 1, "loss");
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dx));
  assert_int_equal(rank_of(dx), 10);
  double actual[24];
  assert_int_equal(read_values(dx, actual, 24), 24);
  for (int64_t i = 0; i < 24; ++i) {
    expect_close(actual[i], kChainDx[i], 1e-10, "dloss/dx", i);
  }
  handle_t* all[] = {x,       multiples, a,         paddings,  b,     flip,
                     c,       d,         two_i,     e,         picks, eight_i,
                     g,       one_i,     halves[0], halves[1], m,     l,
                     squares, all_axes,  loss,      dx};
  loom__grad_release_all(all, (int32_t)(sizeof(all) / sizeof(all[0])));
  loom_op_handler_release(tape);
}

// Forward mode over rank 10 (Tile, ReverseV2, Softmax, Cumsum, Mul, Sum).
// PyTorch: torch.autograd.functional.jvp of
//   f(x) = (e * e * c).sum(), c = flip(x.repeat(1,2,1,...,1), (2, 9)),
//   e = cumsum(softmax(c, -1), 2)
// at x = (arange(24) * 0.25 - 1).reshape(kX), v = (arange(24) * 0.1 - 0.5).
static void forward_mode_takes_rank_10(void** state) {
  (void)state;
  static const int64_t kX[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 2};
  handle_t* x = arange(kX, 10, 0.25, -1.0);
  handle_t* v = arange(kX, 10, 0.1, -0.5);
  loom_op_handler_t* accumulator = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_create(g_ctx, &accumulator));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* xf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, v, &xf));
  static const int64_t kMultiples[10] = {1, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  handle_t* multiples = int_vector(kMultiples, 10);
  handle_t* a = bin("Tile", xf, multiples);
  static const int64_t kFlip[2] = {2, 9};
  handle_t* flip = int_vector(kFlip, 2);
  handle_t* c = bin("ReverseV2", a, flip);
  handle_t* d = op1("Softmax", LOOM_GRAD_INPUTS(c), LOOM_GRAD_NO_ATTRS);
  static const double kTwo = 2;
  handle_t* two = make(LOOM_DTYPE_INT32, NULL, 0, &kTwo);
  handle_t* e = bin("Cumsum", d, two);
  handle_t* ee = bin("Mul", e, e);
  handle_t* eec = bin("Mul", ee, c);
  static const int64_t kAll[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  handle_t* all_axes = int_vector(kAll, 10);
  handle_t* out = op1("Sum", LOOM_GRAD_INPUTS(eec, all_axes),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_BOOL("keep_dims", false)));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* tangent = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_jvp(accumulator, out,
                                              LOOM_UNCONNECTED_ZERO, &tangent));
  static const double kOut[1] = {75.86978986542361};
  static const double kTangent[1] = {26.24423418233712};
  expect_values(out, kOut, 1, "f(x)");
  expect_values(tangent, kTangent, 1, "jvp");
  handle_t* all[] = {x,   v, xf, multiples, a,        flip, c,      d,
                     two, e, ee, eec,       all_axes, out,  tangent};
  loom__grad_release_all(all, (int32_t)(sizeof(all) / sizeof(all[0])));
  loom_op_handler_release(accumulator);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(
          gradients_at_ranks_10_and_12_match_pytorch, setup, teardown),
      cmocka_unit_test_setup_teardown(a_chain_of_rank_10_ops_matches_pytorch,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(forward_mode_takes_rank_10, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
