// The vmap handler: the kernels a batched op launches (one, whatever the
// batch; the fallback one per example), nested vmaps, batch sizes 1 and 0,
// per-example gradients (a tape inside the vmap) and gradients of a vmap (a
// tape around it) against loops with the untransformed function in f32 and
// f64, the errors of the API, and the table of rules against the registered
// ops. (The batching rules: test_vmap_rules.)

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/vmap/vmap_internal.h"
#include "loom/function.h"
#include "vmap_test_util.h"

//===----------------------------------------------------------------------===//
// Kernel launches: a batched rule runs its op once, whatever the batch
//===----------------------------------------------------------------------===//

static int64_t ops_executed(void) {
  LOOM_ASSERT_OK(loom_context_wait(g_ctx));
  return loom_runtime_statistics(loom_context_runtime(g_ctx)).ops_executed;
}

// The kernels one op under a vmap of `b` examples launches (its inputs
// already entered, batch first).
static int64_t launches(const char* op, int64_t b, bool fallback) {
  int64_t xd[3] = {b, 4, 3}, wd[2] = {3, 5};
  handle_t* xs = make(D, xd, 3, NULL);
  handle_t* w = make(D, wd, 2, NULL);
  loom_op_handler_t* vmap = new_vmap(b);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  int64_t before = ops_executed();
  handle_t* y = fallback ? un_op(op, x) : bin(op, x, w);
  int64_t after = ops_executed();
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_op_handler_release(vmap);
  loom_tensor_handle_release(w);
  loom_tensor_handle_release(xs);
  return after - before;
}

static void test_batched_rule_launches_once(void** state) {
  (void)state;
  // MatMul -> one BatchMatMulV2, for 2 examples as for 64.
  assert_int_equal(launches("MatMul", 2, false), 1);
  assert_int_equal(launches("MatMul", 64, false), 1);
  // The fallback: an Unpack, one op per example, a Pack.
  assert_int_equal(launches("ShapeN", 2, true), 2 + 2);
  assert_int_equal(launches("ShapeN", 16, true), 16 + 2);
}

//===----------------------------------------------------------------------===//
// Nested vmaps, batch sizes 1 and 0
//===----------------------------------------------------------------------===//

// xs [2, 3, 4]: the outer vmap maps over axis 0, the inner one over axis 1
// of xs (axis 0 of an outer example); each inner example [4] is multiplied
// by w [4, 2] and summed: [2, 3] results against NumPy's
// (xs @ w).sum(-1) (written out by /usr/bin/python3, below).
static void test_nested_vmap(void** state) {
  (void)state;
  int64_t xd[3] = {2, 3, 4}, wd[2] = {4, 2};
  double xv[24], wv[8];
  for (int i = 0; i < 24; ++i) xv[i] = (double)(i % 7) - 3.0;
  for (int i = 0; i < 8; ++i) wv[i] = 0.5 * (double)i - 1.0;
  // python3 -c "import numpy as np; x=(np.arange(24)%7-3.).reshape(2,3,4);
  //   w=(0.5*np.arange(8)-1).reshape(4,2); print((x@w).sum(-1).ravel())"
  const double expected[6] = {1., -6.5, 7., -18., 13., -15.5};
  handle_t* xs = make(D, xd, 3, xv);
  handle_t* w = make(D, wd, 2, wv);
  loom_op_handler_t* outer = new_vmap(2);
  loom_op_handler_t* inner = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
  handle_t* xo = vin(outer, xs, 0);  // [3, 4] per outer example
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  handle_t* xi = vin(inner, xo, 0);  // [4] per inner example
  assert_int_equal(loom_vmap_batch_size(inner), 3);
  handle_t* row = make(I, (int64_t[]){2}, 1, (double[]){1, 4});
  handle_t* x2 = bin("Reshape", xi, row);
  handle_t* y = bin("MatMul", x2, w);  // [1, 2]
  int64_t axes_dims[1] = {2};
  handle_t* axes = make(I, axes_dims, 1, (double[]){0, 1});
  handle_t* s = bin("Sum", y, axes);  // scalar
  handle_t* so = vout(inner, s, 0);   // [3] per outer example
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* result = vout(outer, so, 0);  // [2, 3]
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double got[6];
  assert_int_equal(read_values(result, got, 6), 6);
  for (int i = 0; i < 6; ++i)
    expect_close(got[i], expected[i], 1e-12, "nested", i);
  handle_t* all[] = {xs, w, xo, xi, row, x2, y, axes, s, so, result};
  loom__grad_release_all(all, 11);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
}

static void test_batch_sizes_one_and_zero(void** state) {
  (void)state;
  // B = 1: Squeeze without a list squeezes one example's 1s, never the
  // batch.
  int64_t d1[3] = {1, 1, 3};
  handle_t* xs = make(D, d1, 3, (double[]){1, 2, 3});
  loom_op_handler_t* vmap = new_vmap(1);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);     // [1, 3]
  handle_t* y = un_op("Squeeze", x);  // [3]
  handle_t* ys = vout(vmap, y, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(ys, &metadata));
  assert_int_equal(metadata.shape.rank, 2);
  assert_int_equal(metadata.shape.dims[0], 1);
  assert_int_equal(metadata.shape.dims[1], 3);
  handle_t* one[] = {xs, x, y, ys};
  loom__grad_release_all(one, 4);
  loom_op_handler_release(vmap);

  // B = 0: rules run on empty batches (a Reshape with -1 too); the
  // fallback says it cannot.
  int64_t d0[3] = {0, 2, 3};
  xs = make(D, d0, 3, NULL);
  vmap = new_vmap(0);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  x = vin(vmap, xs, 0);
  handle_t* e = un_op("Exp", x);
  handle_t* shape = make(I, (int64_t[]){1}, 1, (double[]){-1});
  handle_t* r = bin("Reshape", e, shape);  // [6] per example
  handle_t* rs = vout(vmap, r, 1);
  handle_t* fallback[1] = {NULL};
  loom_status_t status =
      loom__grad_execute_in(g_ctx, "ShapeN", &x, 1, NULL, 0, fallback, 1);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(rs, &metadata));
  assert_int_equal(metadata.shape.rank, 2);
  assert_int_equal(metadata.shape.dims[0], 6);
  assert_int_equal(metadata.shape.dims[1], 0);
  // The error is the op's: on its result, or the call's.
  if (!status && fallback[0]) {
    status = loom_tensor_handle_wait_metadata(fallback[0], &metadata);
  }
  LOOM_ASSERT_STATUS(status, LOOM_STATUS_UNIMPLEMENTED,
                     "ShapeN has no batching rule");
  loom_tensor_handle_release(fallback[0]);
  handle_t* zero[] = {xs, x, e, shape, r, rs};
  loom__grad_release_all(zero, 6);
  loom_op_handler_release(vmap);
}

//===----------------------------------------------------------------------===//
// With the gradient tape
//===----------------------------------------------------------------------===//

enum { kB = 4, kIn = 3, kOut = 2 };

// One example's loss: sum(tanh(x w + b)^2), x [3] reshaped to [1, 3].
static handle_t* loss_of(loom_dtype_t dtype, handle_t* x, handle_t* w,
                         handle_t* b) {
  handle_t* shape = make(I, (int64_t[]){2}, 1, (double[]){1, kIn});
  handle_t* x2 = bin("Reshape", x, shape);
  handle_t* h = bin("MatMul", x2, w);
  handle_t* z = bin("BiasAdd", h, b);
  handle_t* y = un_op("Tanh", z);
  handle_t* sq = un_op("Square", y);
  handle_t* axes = make(I, (int64_t[]){2}, 1, (double[]){0, 1});
  handle_t* loss = bin("Sum", sq, axes);
  (void)dtype;
  handle_t* all[] = {shape, x2, h, z, y, sq, axes};
  loom__grad_release_all(all, 7);
  return loss;
}

typedef struct model_t {
  double xs[kB * kIn], w[kIn * kOut], b[kOut];
} model_t;

static void model_init(model_t* m) {
  for (int i = 0; i < kB * kIn; ++i) m->xs[i] = uniform(-1, 1);
  for (int i = 0; i < kIn * kOut; ++i) m->w[i] = uniform(-1, 1);
  for (int i = 0; i < kOut; ++i) m->b[i] = uniform(-0.5, 0.5);
}

// The loop: per-example losses and gradients (dx [B, 3], dw [B, 3, 2]) of
// the untransformed function, each example on its own tape.
static void loop_gradients(loom_dtype_t dtype, const model_t* m, double* losses,
                           double* dx, double* dw) {
  int64_t wd[2] = {kIn, kOut}, bd[1] = {kOut}, xd[1] = {kIn};
  for (int e = 0; e < kB; ++e) {
    handle_t* x = make(dtype, xd, 1, m->xs + e * kIn);
    handle_t* w = make(dtype, wd, 2, m->w);
    handle_t* b = make(dtype, bd, 1, m->b);
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, x));
    LOOM_ASSERT_OK(loom_tape_watch(tape, w));
    handle_t* loss = loss_of(dtype, x, w, b);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* sources[2] = {x, w};
    handle_t* grads[2] = {NULL, NULL};
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 2, NULL,
                                      LOOM_UNCONNECTED_ZERO, grads));
    losses[e] = read_scalar(loss);
    assert_int_equal(read_values(grads[0], dx + e * kIn, kIn), kIn);
    assert_int_equal(read_values(grads[1], dw + e * kIn * kOut, kIn * kOut),
                     kIn * kOut);
    loom_op_handler_release(tape);
    handle_t* all[] = {x, w, b, loss, grads[0], grads[1]};
    loom__grad_release_all(all, 6);
  }
}

static void expect_all_close(const double* got, const double* expected, int n,
                             double tolerance, const char* what) {
  for (int i = 0; i < n; ++i)
    expect_close(got[i], expected[i], tolerance, what, i);
}

// A tape inside the vmap: per-example gradients in one batched backward
// pass.
static void per_example_gradients(loom_dtype_t dtype) {
  model_t m;
  model_init(&m);
  double losses[kB], dx[kB * kIn], dw[kB * kIn * kOut];
  loop_gradients(dtype, &m, losses, dx, dw);
  int64_t xsd[2] = {kB, kIn}, wd[2] = {kIn, kOut}, bd[1] = {kOut};
  handle_t* xs = make(dtype, xsd, 2, m.xs);
  handle_t* w = make(dtype, wd, 2, m.w);
  handle_t* b = make(dtype, bd, 1, m.b);
  loom_op_handler_t* vmap = new_vmap(kB);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  handle_t* loss = loss_of(dtype, x, w, b);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* sources[2] = {x, w};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, grads));
  handle_t* losses_v = vout(vmap, loss, 0);
  handle_t* dx_v = vout(vmap, grads[0], 0);
  handle_t* dw_v = vout(vmap, grads[1], 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double got[kB * kIn * kOut];
  double tolerance = dtype == F ? 1e-5 : 1e-12;
  assert_int_equal(read_values(losses_v, got, kB), kB);
  expect_all_close(got, losses, kB, tolerance, "per-example loss");
  assert_int_equal(read_values(dx_v, got, kB * kIn), kB * kIn);
  expect_all_close(got, dx, kB * kIn, tolerance, "per-example dx");
  assert_int_equal(read_values(dw_v, got, kB * kIn * kOut), kB * kIn * kOut);
  expect_all_close(got, dw, kB * kIn * kOut, tolerance, "per-example dw");
  // One batched backward pass: every op had a rule.
  assert_int_equal(total_fallbacks(vmap), 0);
  loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
  handle_t* all[] = {xs,       w,        b,        x,    loss,
                     grads[0], grads[1], losses_v, dx_v, dw_v};
  loom__grad_release_all(all, 10);
}

static void test_per_example_gradients_f32(void** state) {
  (void)state;
  per_example_gradients(F);
}

static void test_per_example_gradients_f64(void** state) {
  (void)state;
  per_example_gradients(D);
}

// One example's loss of a small CNN: L2Loss(MaxPool(Relu(Conv2D(x, w)))),
// x [1, 6, 6, 2], w [3, 3, 2, 4].
static handle_t* cnn_loss(handle_t* x, handle_t* w) {
  static const int64_t kOnes[4] = {1, 1, 1, 1}, kPool2[4] = {1, 2, 2, 1};
  handle_t* conv = op1("Conv2D", LOOM_GRAD_INPUTS(x, w),
                       LOOM_GRAD_ATTRS(LOOM_GRAD_INTS("strides", kOnes, 4),
                                       LOOM_GRAD_STRING("padding", "SAME")));
  handle_t* relu = un_op("Relu", conv);
  handle_t* pool = op1("MaxPool", LOOM_GRAD_INPUTS(relu),
                       LOOM_GRAD_ATTRS(LOOM_GRAD_INTS("ksize", kPool2, 4),
                                       LOOM_GRAD_INTS("strides", kPool2, 4),
                                       LOOM_GRAD_STRING("padding", "VALID")));
  handle_t* loss = un_op("L2Loss", pool);
  handle_t* all[] = {conv, relu, pool};
  loom__grad_release_all(all, 3);
  return loss;
}

// Per-example gradients of a CNN (a tape inside the vmap) against a loop
// of plain tapes: the convolution's gradients (the filter's grouped over
// the batch), MaxPoolGrad and L2Loss all batched, no fallback.
static void test_per_example_cnn_gradients(void** state) {
  (void)state;
  enum { kExamples = 3, kX = 6 * 6 * 2, kW = 3 * 3 * 2 * 4 };
  double xs[kExamples * kX], wv[kW];
  for (int i = 0; i < kExamples * kX; ++i) xs[i] = uniform(-1, 1);
  for (int i = 0; i < kW; ++i) wv[i] = uniform(-0.5, 0.5);
  int64_t xd[5] = {kExamples, 1, 6, 6, 2}, wd[4] = {3, 3, 2, 4};
  // The loop.
  double dx[kExamples * kX], dw[kExamples * kW];
  for (int e = 0; e < kExamples; ++e) {
    handle_t* x = make(D, xd + 1, 4, xs + e * kX);
    handle_t* w = make(D, wd, 4, wv);
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, x));
    LOOM_ASSERT_OK(loom_tape_watch(tape, w));
    handle_t* loss = cnn_loss(x, w);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* sources[2] = {x, w};
    handle_t* grads[2] = {NULL, NULL};
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 2, NULL,
                                      LOOM_UNCONNECTED_ZERO, grads));
    assert_int_equal(read_values(grads[0], dx + e * kX, kX), kX);
    assert_int_equal(read_values(grads[1], dw + e * kW, kW), kW);
    loom_op_handler_release(tape);
    handle_t* all[] = {x, w, loss, grads[0], grads[1]};
    loom__grad_release_all(all, 5);
  }
  // The vmap.
  handle_t* xb = make(D, xd, 5, xs);
  handle_t* w = make(D, wd, 4, wv);
  loom_op_handler_t* vmap = new_vmap(kExamples);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xb, 0);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  handle_t* loss = cnn_loss(x, w);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* sources[2] = {x, w};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, grads));
  handle_t* dx_v = vout(vmap, grads[0], 0);
  handle_t* dw_v = vout(vmap, grads[1], 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double got[kExamples * kX];
  assert_int_equal(read_values(dx_v, got, kExamples * kX), kExamples * kX);
  expect_all_close(got, dx, kExamples * kX, 1e-12, "per-example CNN dx");
  assert_int_equal(read_values(dw_v, got, kExamples * kW), kExamples * kW);
  expect_all_close(got, dw, kExamples * kW, 1e-12, "per-example CNN dw");
  assert_int_equal(total_fallbacks(vmap), 0);
  loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
  handle_t* all[] = {xb, w, x, loss, grads[0], grads[1], dx_v, dw_v};
  loom__grad_release_all(all, 8);
}

// A tape around the vmap: the gradient of the summed batched losses is the
// sum of the per-example gradients.
static void gradient_of_vmap(loom_dtype_t dtype) {
  model_t m;
  model_init(&m);
  double losses[kB], dx[kB * kIn], dw[kB * kIn * kOut];
  loop_gradients(dtype, &m, losses, dx, dw);
  double dw_sum[kIn * kOut] = {0};
  for (int e = 0; e < kB; ++e) {
    for (int j = 0; j < kIn * kOut; ++j) dw_sum[j] += dw[e * kIn * kOut + j];
  }
  int64_t xsd[2] = {kB, kIn}, wd[2] = {kIn, kOut}, bd[1] = {kOut};
  handle_t* xs = make(dtype, xsd, 2, m.xs);
  handle_t* w = make(dtype, wd, 2, m.w);
  handle_t* b = make(dtype, bd, 1, m.b);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, xs));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  loom_op_handler_t* vmap = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  handle_t* loss = loss_of(dtype, x, w, b);
  handle_t* ls = vout(vmap, loss, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* axis = make(I, NULL, 0, (double[]){0});
  handle_t* total = bin("Sum", ls, axis);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* sources[2] = {xs, w};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &total, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, grads));
  double got[kB * kIn];
  double tolerance = dtype == F ? 1e-5 : 1e-12;
  assert_int_equal(read_values(ls, got, kB), kB);
  expect_all_close(got, losses, kB, tolerance, "losses");
  assert_int_equal(read_values(grads[0], got, kB * kIn), kB * kIn);
  expect_all_close(got, dx, kB * kIn, tolerance, "dxs");
  assert_int_equal(read_values(grads[1], got, kIn * kOut), kIn * kOut);
  expect_all_close(got, dw_sum, kIn * kOut, tolerance, "dw");
  assert_int_equal(total_fallbacks(vmap), 0);
  loom_op_handler_release(vmap);
  loom_op_handler_release(tape);
  handle_t* all[] = {xs, w, b, x, loss, ls, axis, total, grads[0], grads[1]};
  loom__grad_release_all(all, 10);
}

static void test_gradient_of_vmap_f32(void** state) {
  (void)state;
  gradient_of_vmap(F);
}

static void test_gradient_of_vmap_f64(void** state) {
  (void)state;
  gradient_of_vmap(D);
}

// The same on an asynchronous context with two threads: ops return before
// their values exist, and the rules wait only for metadata and for the
// small integer inputs they read (axes, shapes).
static void test_async_context(void** state) {
  (void)state;
  loom_context_t* sync = g_ctx;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = true;
  options.num_threads = 2;
  LOOM_ASSERT_OK(loom_context_create(&options, &g_ctx));
  test_nested_vmap(NULL);
  per_example_gradients(D);
  gradient_of_vmap(F);
  LOOM_ASSERT_OK(loom_context_wait(g_ctx));
  loom_context_destroy(g_ctx);
  g_ctx = sync;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void test_errors(void** state) {
  (void)state;
  loom_op_handler_t* vmap = NULL;
  LOOM_ASSERT_STATUS(loom_vmap_create(NULL, 2, &vmap),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_vmap_create: context is NULL");
  LOOM_ASSERT_STATUS(loom_vmap_create(g_ctx, -5, &vmap),
                     LOOM_STATUS_INVALID_ARGUMENT, "batch_size is -5");
  vmap = new_vmap(3);
  int64_t dims[2] = {4, 2};
  handle_t* xs = make(D, dims, 2, NULL);
  handle_t* out = NULL;
  LOOM_ASSERT_STATUS(loom_vmap_in(loom_context_cpu(g_ctx), xs, 0, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_vmap_in: the handler is not a vmap handler");
  LOOM_ASSERT_STATUS(loom_vmap_in(vmap, NULL, 0, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_vmap_in: batched is NULL");
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  // Mismatched batch sizes.
  LOOM_ASSERT_STATUS(loom_vmap_in(vmap, xs, 0, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "dimension 0 of the [4, 2] tensor has size 4; the "
                     "vmap's batch size is 3");
  LOOM_ASSERT_STATUS(loom_vmap_in(vmap, xs, 2, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "in_axis 2 is out of range for a tensor of rank 2");
  int64_t good[2] = {2, 3};
  handle_t* ys = make(D, good, 2, NULL);
  LOOM_ASSERT_STATUS(
      loom_vmap_in(vmap, ys, -2, &out), LOOM_STATUS_INVALID_ARGUMENT,
      "in_axis -2 is out of range for a tensor of rank 2 "
      "(expected LOOM_VMAP_UNBATCHED (-1) or an axis in [0, 2))");
  handle_t* y = vin(vmap, ys, 1);  // [2] per example
  handle_t* u = vin(vmap, ys, LOOM_VMAP_UNBATCHED);
  // CopyOff of a batched value names the handler; an unbatched one is its
  // value.
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(g_ctx, y, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "CopyOff of a tensor of vmap handler 'VMAP' that is "
                     "batched (batch size 3, axis 1)");
  LOOM_ASSERT_OK(loom_context_resolve(g_ctx, u, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), 6);
  loom_tensor_release(tensor);
  LOOM_ASSERT_STATUS(loom_vmap_out(vmap, y, LOOM_VMAP_UNBATCHED, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "out_axis is LOOM_VMAP_UNBATCHED but the tensor is "
                     "batched (axis 1)");
  LOOM_ASSERT_STATUS(loom_vmap_out(vmap, y, 3, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "out_axis 3 is out of range for a result of rank 2");
  // A rule's error is the op's, naming it and one example's values.
  handle_t* axes = make(I, (int64_t[]){1}, 1, (double[]){5});
  handle_t* sum[1] = {NULL};
  loom_status_t status = loom__grad_execute_in(
      g_ctx, "Sum", (handle_t*[]){y, axes}, 2, NULL, 0, sum, 1);
  if (!status && sum[0]) {
    status =
        loom_tensor_handle_wait_metadata(sum[0], &(loom_tensor_metadata_t){0});
  }
  LOOM_ASSERT_STATUS(status, LOOM_STATUS_INVALID_ARGUMENT,
                     "Sum: axis 5 is out of range for an input of rank 1 "
                     "(under vmap)");
  loom_tensor_handle_release(sum[0]);
  loom_tensor_handle_release(axes);
  // An unbatched value goes out as it is, or broadcast.
  handle_t* same = vout(vmap, u, LOOM_VMAP_UNBATCHED);
  assert_ptr_equal(same, ys);
  handle_t* broadcast = vout(vmap, u, 2);
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(broadcast, &metadata));
  assert_int_equal(metadata.shape.rank, 3);
  assert_int_equal(metadata.shape.dims[2], 3);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* all[] = {xs, ys, y, u, same, broadcast};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(vmap);
}

// An op whose result slot holds the handle of an input the caller gave up
// (x = f(x) written with the eager API, as "take" helpers do): the slot is
// the handler's to write, never to release.
static void test_result_slot_holding_a_consumed_input(void** state) {
  (void)state;
  int64_t xd[2] = {4, 3};
  handle_t* xs =
      make(F, xd, 2, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  handle_t* one = make(F, NULL, 0, (double[]){1});
  loom_op_handler_t* vmap = new_vmap(4);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  handle_t* y = un_op("Exp", x);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, "AddV2", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, one));
  loom_tensor_handle_release(y);  // the op holds the only reference
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &y, 1, &count));  // y = y + 1
  loom_eager_op_destroy(op);
  handle_t* z = bin("Mul", y, one);
  handle_t* zs = vout(vmap, z, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double v[12];
  assert_int_equal(read_values(zs, v, 12), 12);
  for (int i = 0; i < 12; ++i) {
    expect_close(v[i], exp((double)(i + 1)) + 1.0, 1e-6, "exp(x) + 1", i);
  }
  handle_t* all[] = {xs, one, x, y, z, zs};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(vmap);
}

//===----------------------------------------------------------------------===//
// Random ops: the randomness option
//===----------------------------------------------------------------------===//

static loom_op_handler_t* new_random_vmap(loom_vmap_randomness_t randomness) {
  loom_vmap_options_t options;
  loom_vmap_options_initialize(&options);
  options.randomness = randomness;
  loom_op_handler_t* vmap = NULL;
  LOOM_ASSERT_OK(loom_vmap_create_with_options(g_ctx, &options, &vmap));
  assert_int_equal(loom_vmap_randomness(vmap), randomness);
  return vmap;
}

// `op` (seeded) drawing `shape` under the vmap: its status (the call's, or
// its result's).
static loom_status_t draw(const char* op, handle_t* shape, handle_t** out) {
  *out = NULL;
  loom_status_t status = loom__grad_execute_in(
      g_ctx, op, &shape, 1,
      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", LOOM_DTYPE_DOUBLE),
                      LOOM_GRAD_INT("seed", 7), LOOM_GRAD_INT("seed2", 3)),
      out, 1);
  if (!status && *out) {
    status =
        loom_tensor_handle_wait_metadata(*out, &(loom_tensor_metadata_t){0});
  }
  return status;
}

// xs [4, 3] entered at axis 0; y = x + r for r drawn by `op` (shape [3])
// under `randomness`; returns ys - xs, [4, 3] in `values`, and the ops the
// draw launched.
static int64_t draw_per_example(const char* op,
                                loom_vmap_randomness_t randomness,
                                double* values) {
  int64_t dims[2] = {4, 3};
  handle_t* xs = make(D, dims, 2, NULL);
  handle_t* shape = make(I, (int64_t[]){1}, 1, (double[]){3});
  loom_op_handler_t* vmap = new_random_vmap(randomness);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  int64_t before = ops_executed();
  handle_t* r = NULL;
  LOOM_ASSERT_OK(draw(op, shape, &r));
  int64_t launched = ops_executed() - before;
  handle_t* y = bin("AddV2", x, r);
  handle_t* ys = vout(vmap, y, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(read_values(ys, values, 12), 12);
  assert_int_equal(loom_vmap_fallback_count(vmap, op), 0);
  handle_t* all[] = {xs, shape, x, r, y, ys};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(vmap);
  return launched;
}

static void test_randomness(void** state) {
  (void)state;
  double v[12];
  // same: one draw of [3], shared by every example.
  assert_int_equal(
      draw_per_example("RandomUniform", LOOM_VMAP_RANDOMNESS_SAME, v), 1);
  for (int e = 1; e < 4; ++e) {
    for (int j = 0; j < 3; ++j) assert_true(v[e * 3 + j] == v[j]);
  }
  // different: one op drawing [4, 3]; the examples differ.
  static const char* const kOps[] = {"RandomUniform", "RandomStandardNormal",
                                     "TruncatedNormal"};
  for (int k = 0; k < 3; ++k) {
    assert_int_equal(
        draw_per_example(kOps[k], LOOM_VMAP_RANDOMNESS_DIFFERENT, v), 1);
    for (int e = 1; e < 4; ++e) {
      bool differs = false;
      for (int j = 0; j < 3; ++j) differs = differs || v[e * 3 + j] != v[j];
      if (!differs)
        fail_msg("%s: example %d drew example 0's numbers", kOps[k], e);
    }
    if (k == 0) {
      for (int i = 0; i < 12; ++i) assert_true(v[i] >= 0.0 && v[i] < 1.0);
    }
  }

  // error (the default): the op and the option are named.
  loom_op_handler_t* vmap = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  assert_int_equal(loom_vmap_randomness(vmap), LOOM_VMAP_RANDOMNESS_ERROR);
  handle_t* shape = make(I, (int64_t[]){1}, 1, (double[]){3});
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* r = NULL;
  LOOM_ASSERT_STATUS(draw("TruncatedNormal", shape, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "vmap: TruncatedNormal draws random numbers and the "
                     "vmap's randomness option is LOOM_VMAP_RANDOMNESS_ERROR "
                     "(the default); set loom_vmap_options_t.randomness to "
                     "LOOM_VMAP_RANDOMNESS_SAME");
  loom_tensor_handle_release(r);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_op_handler_release(vmap);

  // different before the batch size is known.
  vmap = new_random_vmap(LOOM_VMAP_RANDOMNESS_DIFFERENT);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  LOOM_ASSERT_STATUS(draw("RandomUniform", shape, &r),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "vmap: RandomUniform draws a random number per example "
                     "(LOOM_VMAP_RANDOMNESS_DIFFERENT) but the vmap's batch "
                     "size is not known yet");
  loom_tensor_handle_release(r);
  // A batched shape: one draw per example (the fallback).
  handle_t* shapes = make(I, (int64_t[]){2, 1}, 2, (double[]){2, 2});
  handle_t* s = vin(vmap, shapes, 0);
  LOOM_ASSERT_OK(draw("RandomUniform", s, &r));
  handle_t* rs = vout(vmap, r, 0);
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(rs, &metadata));
  assert_int_equal(metadata.shape.rank, 2);
  assert_int_equal(metadata.shape.dims[0], 2);
  assert_int_equal(metadata.shape.dims[1], 2);
  assert_int_equal(loom_vmap_fallback_count(vmap, "RandomUniform"), 1);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* all[] = {shape, shapes, s, r, rs};
  loom__grad_release_all(all, 5);
  loom_op_handler_release(vmap);

  // The options are checked.
  loom_vmap_options_t options;
  loom_vmap_options_initialize(&options);
  options.randomness = (loom_vmap_randomness_t)7;
  LOOM_ASSERT_STATUS(
      loom_vmap_create_with_options(g_ctx, &options, &vmap),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_vmap_create: randomness is 7; expected "
      "LOOM_VMAP_RANDOMNESS_ERROR (0), LOOM_VMAP_RANDOMNESS_DIFFERENT (1) or "
      "LOOM_VMAP_RANDOMNESS_SAME (2)");
  options.struct_size = 4;
  LOOM_ASSERT_STATUS(loom_vmap_create_with_options(g_ctx, &options, &vmap),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_vmap_create: options->struct_size is 4");
  LOOM_ASSERT_OK(loom_vmap_create_with_options(g_ctx, NULL, &vmap));
  assert_int_equal(loom_vmap_batch_size(vmap), LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  loom_op_handler_release(vmap);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

static void test_every_op_has_a_rule_or_a_reason(void** state) {
  (void)state;
  for (size_t i = 1; i < loom__vmap_rule_count(); ++i) {
    if (strcmp(loom__vmap_rule_at(i - 1)->op_name,
               loom__vmap_rule_at(i)->op_name) >= 0) {
      fail_msg("the rules are not sorted at %s",
               loom__vmap_rule_at(i)->op_name);
    }
  }
  // The ops that call functions (PartitionedCall, If, ...) are registered
  // with a context's function library.
  LOOM_ASSERT_OK(loom_context_enable_functions(g_ctx));
  loom_op_registry_t* registry = loom_op_registry_global();
  size_t count = loom_op_registry_list(registry, NULL, 0);
  const char** names = calloc(count, sizeof(*names));
  assert_non_null(names);
  assert_int_equal(loom_op_registry_list(registry, names, count), count);
  int missing = 0, rules = 0, reasons = 0;
  for (size_t i = 0; i < count; ++i) {
    const char* description = NULL;
    loom_vmap_support_t support = loom_vmap_op_support(names[i], &description);
    if (support == LOOM_VMAP_UNLISTED) {
      print_error("no batching rule and no reason: %s\n", names[i]);
      ++missing;
      continue;
    }
    assert_non_null(description);
    if (support == LOOM_VMAP_RULE) ++rules;
    if (support == LOOM_VMAP_FALLBACK) ++reasons;
  }
  print_message("%d ops with a batching rule, %d without (reasons given)\n",
                rules, reasons);
  free(names);
  assert_int_equal(missing, 0);
  // Every rule is for a registered op.
  for (size_t i = 0; i < loom__vmap_rule_count(); ++i) {
    const char* name = loom__vmap_rule_at(i)->op_name;
    if (!loom_op_registry_find(registry, name)) {
      fail_msg("a rule for %s, which is not registered", name);
    }
  }
}

//===----------------------------------------------------------------------===//
// Examples of rank 8: batched values of rank 9, above the inline dims
//===----------------------------------------------------------------------===//

// xs = (np.arange(12) * 0.5).reshape(2, 1, 2, 1, 1, 1, 1, 1, 3); each
// example e of rank 8 is squared, its dims reversed and summed over its
// axis 0: NumPy's np.transpose(xs * xs, (0, 8, 7, ..., 1)).sum(axis=1)
// (/usr/bin/python3) is [1.25, 12.5, 37.25, 75.5], shaped
// [2, 1, 1, 1, 1, 1, 2, 1].
static void test_examples_of_rank_8(void** state) {
  (void)state;
  static const int64_t kXs[9] = {2, 1, 2, 1, 1, 1, 1, 1, 3};
  double values[12];
  for (int i = 0; i < 12; ++i) values[i] = i * 0.5;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize_large(&shape, kXs, 9));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_allocator_default(), D, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(values));
  handle_t* xs = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &xs));
  loom_tensor_release(tensor);
  loom_op_handler_t* vmap = new_vmap(2);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(x, &metadata));
  assert_int_equal(metadata.shape.rank, 8);
  assert_int_equal(loom_shape_dims(&metadata.shape)[7], 3);
  handle_t* square = bin("Mul", x, x);
  static const double kPerm[8] = {7, 6, 5, 4, 3, 2, 1, 0};
  int64_t eight = 8;
  handle_t* perm = make(I, &eight, 1, kPerm);
  handle_t* reversed = bin("Transpose", square, perm);
  static const double kZero = 0;
  handle_t* axis = make(I, NULL, 0, &kZero);
  handle_t* sum = bin("Sum", reversed, axis);
  handle_t* out = vout(vmap, sum, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(out, &metadata));
  static const int64_t kSums[8] = {2, 1, 1, 1, 1, 1, 2, 1};
  assert_int_equal(metadata.shape.rank, 8);
  for (int d = 0; d < 8; ++d) {
    assert_int_equal(loom_shape_dims(&metadata.shape)[d], kSums[d]);
  }
  static const double kExpected[4] = {1.25, 12.5, 37.25, 75.5};
  double got[4];
  assert_int_equal(read_values(out, got, 4), 4);
  expect_all_close(got, kExpected, 4, 1e-12, "sums");
  handle_t* all[] = {xs, x, square, perm, reversed, axis, sum, out};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    loom_tensor_handle_release(all[i]);
  }
  loom_op_handler_release(vmap);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batched_rule_launches_once),
      cmocka_unit_test(test_nested_vmap),
      cmocka_unit_test(test_batch_sizes_one_and_zero),
      cmocka_unit_test(test_per_example_gradients_f32),
      cmocka_unit_test(test_per_example_gradients_f64),
      cmocka_unit_test(test_per_example_cnn_gradients),
      cmocka_unit_test(test_gradient_of_vmap_f32),
      cmocka_unit_test(test_gradient_of_vmap_f64),
      cmocka_unit_test(test_async_context),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_randomness),
      cmocka_unit_test(test_result_slot_holding_a_consumed_input),
      cmocka_unit_test(test_every_op_has_a_rule_or_a_reason),
      cmocka_unit_test(test_examples_of_rank_8),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
