// The op data a vmap or a tape prepares over the CPU is kept per thread
// (src/frontend/passthrough_op_cache.h): a new vmap or tape finds its ops
// ready, until a registry changes (then the ops are prepared again and a
// kernel registered meanwhile runs), and threads running vmap(grad f) at
// once each keep their own.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "loom/runtime.h"
#include "tensorflow/c/kernels.h"
#include "vmap_test_util.h"

#define ASSERT_TF_OK(status)                                       \
  do {                                                             \
    if (TF_GetCode(status) != TF_OK) {                             \
      fail_msg("expected OK, got %d: %s", (int)TF_GetCode(status), \
               TF_Message(status));                                \
    }                                                              \
  } while (0)

// The data of `op_name` prepared on `handler` (the prepared op released:
// the data outlives it while a cache or another prepared op holds it; the
// pointer is only compared).
static const void* op_data_on(loom_op_handler_t* handler, const char* op_name) {
  loom_prepared_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op(loom_context_runtime(g_ctx), op_name,
                                         handler, &op));
  const void* data = loom_prepared_op_data(op);
  loom_prepared_op_release(op);
  return data;
}

static void test_new_vmaps_and_tapes_share_op_data(void** state) {
  (void)state;
  loom_op_handler_t* first = new_vmap(3);
  loom_op_handler_t* second = new_vmap(3);
  // Held by the first prepared op's data while the second is prepared.
  loom_prepared_op_t* held = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op(loom_context_runtime(g_ctx), "Sin",
                                         first, &held));
  assert_ptr_equal(loom_prepared_op_data(held), op_data_on(second, "Sin"));
  assert_ptr_not_equal(op_data_on(second, "Cos"), op_data_on(second, "Sin"));
  loom_op_handler_t *tape_a = NULL, *tape_b = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape_a));
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape_b));
  assert_ptr_equal(op_data_on(tape_a, "Mul"), op_data_on(tape_b, "Mul"));
  loom_op_handler_release(tape_a);
  loom_op_handler_release(tape_b);
  loom_prepared_op_release(held);
  loom_op_handler_release(second);
  loom_op_handler_release(first);
}

// An override of Neg on the CPU: every output element is 7.
static void compute_sevens(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  int64_t dims[8];
  int rank = TF_OK == TF_GetCode(status) ? TF_NumDims(input) : 0;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= dims[d] = TF_Dim(input, d);
  TF_Tensor* output = NULL;
  if (TF_GetCode(status) == TF_OK) {
    output = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, rank,
                               (size_t)count * sizeof(float), status);
  }
  if (TF_GetCode(status) == TF_OK) {
    float* out = TF_TensorData(output);
    for (int64_t i = 0; i < count; ++i) out[i] = 7.0f;
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(output);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

// Neg of each example of xs [2, 3] in a new vmap; the values out.
static void vmap_neg(handle_t* xs, double* out) {
  loom_op_handler_t* vmap = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  handle_t* y = un_op("Neg", x);
  handle_t* ys = vout(vmap, y, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(read_values(ys, out, 6), 6);
  loom_tensor_handle_release(ys);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(vmap);
}

static void test_a_kernel_registered_between_calls_runs(void** state) {
  (void)state;
  static const double kXs[6] = {0.5, -1.25, 2.0, 3.5, -0.75, 1.5};
  // np.negative(xs)
  static const double kNeg[6] = {-0.5, 1.25, -2.0, -3.5, 0.75, -1.5};
  int64_t dims[2] = {2, 3};
  handle_t* xs = make(F, dims, 2, kXs);
  double got[6];
  vmap_neg(xs, got);
  for (int i = 0; i < 6; ++i) expect_close(got[i], kNeg[i], 0.0, "neg", i);
  loom_op_handler_t* probe = new_vmap(2);
  const void* before = op_data_on(probe, "Neg");
  // Held, so that the data prepared after the registration is new memory.
  loom_prepared_op_t* held = NULL;
  LOOM_ASSERT_OK(loom_runtime_prepare_op(loom_context_runtime(g_ctx), "Neg",
                                         probe, &held));
  assert_ptr_equal(loom_prepared_op_data(held), before);

  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder("Neg", "CPU", NULL, compute_sevens, NULL);
  TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
  ASSERT_TF_OK(status);
  TF_KernelBuilder_Priority(builder, 1000);
  TF_RegisterKernelBuilder("NegSevens", builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);

  // The vmap's ops are prepared again, and the new kernel runs.
  assert_ptr_not_equal(op_data_on(probe, "Neg"), before);
  vmap_neg(xs, got);
  for (int i = 0; i < 6; ++i)
    expect_close(got[i], 7.0, 0.0, "overridden neg", i);
  loom_prepared_op_release(held);
  loom_op_handler_release(probe);
  loom_tensor_handle_release(xs);
}

// vmap(grad f) of f(x) = sum(sin(x) * x) over xs [2, 3] (float64), `calls`
// times, each with a new vmap and tape, against
// np.cos(xs) * xs + np.sin(xs).
static void vmap_grad_calls(int calls) {
  static const double kXs[6] = {0.5, -1.25, 2.0, 3.5, -0.75, 1.5};
  static const double kGrad[6] = {0.9182168195493894,  -1.3431375723496721,
                                  0.0770037537313969,  -3.628381633207407,
                                  -1.2304054116786998, 1.1036007891056088};
  int64_t dims[2] = {2, 3}, one = 1;
  static const double kAxis[1] = {0};
  handle_t* xs = make(D, dims, 2, kXs);
  handle_t* axes = make(I, &one, 1, kAxis);
  for (int call = 0; call < calls; ++call) {
    loom_op_handler_t* vmap = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
    handle_t* x = vin(vmap, xs, 0);
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, x));
    handle_t* s = un_op("Sin", x);
    handle_t* p = bin("Mul", s, x);
    handle_t* y = bin("Sum", p, axes);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* grad = NULL;
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_ZERO, &grad));
    handle_t* grads = vout(vmap, grad, 0);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    double got[6];
    assert_int_equal(read_values(grads, got, 6), 6);
    for (int i = 0; i < 6; ++i)
      expect_close(got[i], kGrad[i], 1e-12, "grad", i);
    handle_t* all[6] = {x, s, p, y, grad, grads};
    for (int i = 0; i < 6; ++i) loom_tensor_handle_release(all[i]);
    loom_op_handler_release(tape);
    loom_op_handler_release(vmap);
  }
  loom_tensor_handle_release(axes);
  loom_tensor_handle_release(xs);
}

static void* vmap_grad_thread(void* arg) {
  (void)arg;
  vmap_grad_calls(20);
  return NULL;
}

static void test_threads_run_vmap_grad_at_once(void** state) {
  (void)state;
  enum { kThreads = 4 };
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    assert_int_equal(pthread_create(&threads[t], NULL, vmap_grad_thread, NULL),
                     0);
  }
  vmap_grad_calls(20);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_new_vmaps_and_tapes_share_op_data),
      cmocka_unit_test(test_threads_run_vmap_grad_at_once),
      // Last: it overrides Neg's kernel for the rest of the process.
      cmocka_unit_test(test_a_kernel_registered_between_calls_runs),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
