// The op-handler design's re-entered tape (its section "Re-entering a
// merged handler stack"): one tape entered three times, on the CPU, inside
// a parallel handler's scope and on the CPU again, records one
// computation across the handlers; the gradient runs each backward op on
// the handler its forward op ran on: the parallel square's gradient comes
// back to the CPU through CopyOnGrad (its two CopyOn inputs' contributions
// summed on the CPU), and Sin's gradient runs on the CPU.
//
//   with tape: watch(w); x = sin(w)              # CPU
//   with parallel: with tape:
//     y = x * x; y0, y1 = unpack(y)              # parallel, then CPU:0/1
//   with tape: z = y0 + y0                       # CPU:0
//   tape.gradient(z, w)                          # on the CPU
//
// Reference values: PyTorch, component 0 written out:
//   w = torch.tensor(0.75, dtype=torch.float64, requires_grad=True)
//   x = torch.sin(w); y0 = x * x; z = y0 + y0
//   torch.autograd.grad(z, w) == 1.9949899732081087

#include <string.h>

#include "loom/autodiff.h"
#include "loom/loom.h"
#include "loom/parallel.h"
#include "parallel_fixture.h"

typedef loom_tensor_handle_t handle_t;

static loom_test_parallel_t g;  // over CPU:0, CPU:1

static int setup(void** state) {
  (void)state;
  return loom_test_parallel_setup(2, &g);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_parallel_teardown(&g);
}

static handle_t* run(const char* name, handle_t* a, handle_t* b) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g.context, name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  if (b) LOOM_ASSERT_OK(loom_eager_op_add_input(op, b));
  handle_t* out = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &out, 1, &count));
  loom_eager_op_destroy(op);
  return out;
}

static void one_tape_entered_on_the_cpu_and_inside_parallel(void** state) {
  (void)state;
  static const float kW[1] = {0.75f};
  handle_t* w = loom_test_tensor(g.context, LOOM_DTYPE_DOUBLE, kW, 0, NULL);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));

  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  handle_t* x = run("Sin", w, NULL);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));

  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  handle_t* y = run("Mul", x, x);
  assert_true(loom_parallel_is_parallel_value(y));
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g.handler, y, parts, 2));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));

  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  handle_t* z = run("AddV2", parts[0], parts[0]);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));

  handle_t* grad = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &z, 1, &w, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &grad));
  assert_non_null(grad);
  assert_false(loom_parallel_is_parallel_value(grad));
  assert_ptr_equal(loom_tensor_handle_handler(grad),
                   loom_tensor_handle_handler(w));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g.context, grad, &tensor));
  double got = *(const double*)loom_tensor_data(tensor);
  assert_true(got > 1.9949899732081087 - 1e-12 &&
              got < 1.9949899732081087 + 1e-12);
  loom_tensor_release(tensor);
  handle_t* all[] = {w, x, y, parts[0], parts[1], z, grad};
  for (int i = 0; i < 7; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(tape);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_tape_entered_on_the_cpu_and_inside_parallel),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
