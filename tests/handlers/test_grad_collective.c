// Gradients of the collectives (src/handlers/autodiff/grad_collective.c)
// on the in-process backend, between the two components of a parallel
// handler over CPU:0 and CPU:1: x = pack(x_0, x_1) watched, y =
// collective(x * c) per component, each component's loss s_k = Sum(y * y *
// w_k), and the gradients of s_0 + s_1 with respect to x_0 and x_1. Reference
// values from PyTorch on the same computation in one process, the collective
// written out (tests beside each case):
//   y0, y1 = f(x0 * c0, x1 * c1)
//   L = (y0 * y0 * w0).sum() + (y1 * y1 * w1).sum()
//   torch.autograd.grad(L, [x0, x1])

#include <string.h>

#include "loom/autodiff.h"
#include "loom/loom.h"
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

static handle_t* vec(const char* device, const float* values, int64_t n) {
  return loom_test_tensor_on(g.context, device, values, 1, &n);
}

static handle_t* binary(const char* name, handle_t* a, handle_t* b) {
  handle_t* out = NULL;
  LOOM_ASSERT_OK(loom_test_run2(g.context, name, NULL, a, b, &out));
  return out;
}

// x_k and c_k of a case, n elements each.
typedef struct inputs_t {
  int64_t n;
  float x0[4], x1[4], c0[4], c1[4];
} inputs_t;

typedef struct case_t {
  const char* name;  // the behaviour, the cmocka test's name
  const char* op;
  const char* merge;  // NULL: the op has no merge_op and final_op
  const char* final_op;
  int32_t instance_key;
  const inputs_t* in;
  int64_t n_out;  // elements of y_k and w_k
  float w0[4], w1[4];
  float grad0[4], grad1[4];  // torch
  const char* error;         // not NULL: the gradient's UNIMPLEMENTED message
} case_t;

// The forward pass of `c` under a tape watching x = pack(x_0, x_1) (group
// 2, group_key 5), then the gradient of s_0 + s_1 with respect to x into
// *grad (NULL on failure); returns its status.
static loom_status_t collective_gradient(const case_t* c, handle_t** grad) {
  handle_t* h[16] = {NULL};
  const inputs_t* in = c->in;
  h[0] = vec("CPU:0", in->x0, in->n);
  h[1] = vec("CPU:1", in->x1, in->n);
  h[2] = vec("CPU:0", in->c0, in->n);
  h[3] = vec("CPU:1", in->c1, in->n);
  h[4] = vec("CPU:0", c->w0, c->n_out);
  h[5] = vec("CPU:1", c->w1, c->n_out);
  h[6] = loom_test_parallel_pack2(&g, h[2], h[3]);
  h[7] = loom_test_parallel_pack2(&g, h[4], h[5]);
  h[8] = loom_test_parallel_pack2(&g, h[0], h[1]);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, h[8]));
  h[9] = binary("Mul", h[8], h[6]);
  LOOM_ASSERT_OK(loom_test_collective(g.context, c->op, h[9], 2, 5,
                                      c->instance_key, c->merge, c->final_op,
                                      10, &h[10]));
  h[11] = binary("Mul", h[10], h[10]);
  h[12] = binary("Mul", h[11], h[7]);
  h[13] = loom_test_int32_scalar(g.context, 0);
  h[14] = binary("Sum", h[12], h[13]);
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g.handler, h[14], parts, 2));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  *grad = NULL;
  loom_status_t status = loom_tape_gradient(tape, parts, 2, &h[8], 1, NULL,
                                            LOOM_UNCONNECTED_NONE, grad);
  for (int i = 0; i < 15; ++i) loom_tensor_handle_release(h[i]);
  loom_tensor_handle_release(parts[0]);
  loom_tensor_handle_release(parts[1]);
  loom_op_handler_release(tape);
  return status;
}

// Runs the case in *state: the gradient's components on CPU:0 and CPU:1
// equal torch's, or the gradient fails with the case's message and leaves
// nothing behind.
static void run_case(void** state) {
  const case_t* c = *state;
  handle_t* grad = NULL;
  if (c->error) {
    LOOM_ASSERT_STATUS(collective_gradient(c, &grad), LOOM_STATUS_UNIMPLEMENTED,
                       c->error);
    assert_null(grad);
    return;
  }
  LOOM_ASSERT_OK(collective_gradient(c, &grad));
  assert_true(loom_parallel_is_parallel_value(grad));
  loom_test_parallel_expect(&g, grad, c->grad0, c->grad1, c->in->n);
  loom_tensor_handle_release(grad);
}

static const inputs_t kThree = {.n = 3,
                                .x0 = {1, 2, 3},
                                .x1 = {4, 5, -5},
                                .c0 = {2, 3, 4},
                                .c1 = {0.5f, -1, 2}};
static const inputs_t kTwo = {
    .n = 2, .x0 = {1, 2}, .x1 = {3, -1}, .c0 = {2, 0.5f}, .c1 = {1, 3}};
static const inputs_t kFour = {.n = 4,
                               .x0 = {1, 2, 3, -1},
                               .x1 = {3, -1, 2, 2},
                               .c0 = {2, 0.5f, 1, 1},
                               .c1 = {1, 3, -1, 2}};

static const case_t kCases[] = {
    // Sum: y0 = y1 = x0 * c0 + x1 * c1.
    {.name = "gradient_of_all_reduce_sum_sums_the_gradients",
     .op = "CollectiveReduceV2",
     .merge = "Add",
     .final_op = "Id",
     .instance_key = 1,
     .in = &kThree,
     .n_out = 3,
     .w0 = {1, 1, 1},
     .w1 = {1, 1, 1},
     .grad0 = {32, 12, 32},
     .grad1 = {8, -4, 16}},
    // Mean: y0 = y1 = (x0 * c0 + x1 * c1) / 2.
    {.name = "gradient_of_all_reduce_mean_averages_the_gradients",
     .op = "CollectiveReduceV2",
     .merge = "Add",
     .final_op = "Div",
     .instance_key = 2,
     .in = &kThree,
     .n_out = 3,
     .w0 = {1, 1, 1},
     .w1 = {1, 1, 1},
     .grad0 = {8, 3, 8},
     .grad1 = {2, -1, 4}},
    // Gather: y0 = y1 = cat([z0, z1]).
    {.name = "gradient_of_gather_is_a_reduce_scatter",
     .op = "CollectiveGatherV2",
     .instance_key = 3,
     .in = &kTwo,
     .n_out = 4,
     .w0 = {1, 2, 3, 4},
     .w1 = {0.5f, -1, 2, 1},
     .grad0 = {12, 1},
     .grad1 = {30, -90}},
    // Reduce-scatter: y0, y1 = (z0 + z1).chunk(2).
    {.name = "gradient_of_reduce_scatter_is_a_gather",
     .op = "CollectiveReduceScatterV2",
     .merge = "Add",
     .final_op = "Id",
     .instance_key = 4,
     .in = &kFour,
     .n_out = 2,
     .w0 = {1, 2},
     .w1 = {0.5f, -1},
     .grad0 = {20, -4, 1, -6},
     .grad1 = {10, -24, -1, -12}},
    // The same, Div: ((z0 + z1) / 2).chunk(2).
    {.name = "gradient_of_reduce_scatter_mean_is_a_gather_halved",
     .op = "CollectiveReduceScatterV2",
     .merge = "Add",
     .final_op = "Div",
     .instance_key = 5,
     .in = &kFour,
     .n_out = 2,
     .w0 = {1, 2},
     .w1 = {0.5f, -1},
     .grad0 = {5, -1, 0.25f, -1.5f},
     .grad1 = {2.5f, -6, -0.25f, -3}},
    // All-to-all: y0 = cat([z0[:2], z1[:2]]), y1 = cat([z0[2:], z1[2:]]).
    {.name = "gradient_of_all_to_all_is_an_all_to_all",
     .op = "CollectiveAllToAllV2",
     .instance_key = 6,
     .in = &kFour,
     .n_out = 4,
     .w0 = {1, 2, 3, 4},
     .w1 = {0.5f, -1, 2, 1},
     .grad0 = {8, 2, 3, 2},
     .grad1 = {18, -72, 8, 16}},
    // Max has no gradient here: a clear error, nothing left behind.
    {.name = "gradient_of_all_reduce_max_is_unimplemented",
     .op = "CollectiveReduceV2",
     .merge = "Max",
     .final_op = "Id",
     .instance_key = 7,
     .in = &kThree,
     .n_out = 3,
     .w0 = {1, 1, 1},
     .w1 = {1, 1, 1},
     .error = "the gradient of CollectiveReduceV2 with merge_op Max: only Add "
              "(with final_op Id or Div) has one"},
};

int main(void) {
  enum { kNumCases = sizeof(kCases) / sizeof(kCases[0]) };
  struct CMUnitTest tests[kNumCases];
  for (int i = 0; i < kNumCases; ++i) {
    tests[i] = (struct CMUnitTest){.name = kCases[i].name,
                                   .test_func = run_case,
                                   .initial_state = (void*)&kCases[i]};
  }
  return cmocka_run_group_tests(tests, setup, teardown);
}
