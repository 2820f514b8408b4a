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
#include "loom/parallel.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

static loom_context_t* g_ctx;
static loom_op_handler_t* g_parallel;  // over CPU:0, CPU:1

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_create(NULL, &g_ctx));
  LOOM_ASSERT_OK(loom_context_set_cpu_device_count(g_ctx, 2));
  const char* devices[] = {"CPU:0", "CPU:1"};
  LOOM_ASSERT_OK(loom_parallel_handler_create(g_ctx, devices, 2, &g_parallel));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_op_handler_release(g_parallel);
  loom_context_destroy(g_ctx);
  return 0;
}

// A float vector of n values on `device`.
static handle_t* vec(const char* device, const float* values, int64_t n) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &n, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(float) * (size_t)n);
  handle_t* cpu = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &cpu));
  loom_tensor_release(tensor);
  handle_t* out = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(
      g_ctx, cpu, loom_context_find_handler(g_ctx, device), &out));
  loom_tensor_handle_release(cpu);
  return out;
}

static handle_t* pack2(handle_t* a, handle_t* b) {
  handle_t* parts[2] = {a, b};
  handle_t* value = NULL;
  LOOM_ASSERT_OK(loom_parallel_pack(g_parallel, parts, 2, &value));
  return value;
}

static handle_t* binary(const char* name, handle_t* a, handle_t* b) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, name, &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, b));
  handle_t* out = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &out, 1, &count));
  loom_eager_op_destroy(op);
  return out;
}

// `op` (group 2, group_key 5) of x with string attributes merge_op and
// final_op when given.
static handle_t* collective(const char* op_name, const char* merge,
                            const char* final_op, int32_t instance_key,
                            handle_t* x) {
  handle_t* inputs[] = {x, loom_test_int32_scalar(g_ctx, 2),
                        loom_test_int32_scalar(g_ctx, 5),
                        loom_test_int32_scalar(g_ctx, instance_key)};
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, op_name, &op));
  for (int i = 0; i < 4; ++i) {
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, inputs[i]));
  }
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  if (merge) {
    LOOM_ASSERT_OK(
        loom_op_attrs_set_string(attrs, "merge_op", merge, strlen(merge)));
    LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "final_op", final_op,
                                            strlen(final_op)));
  }
  LOOM_ASSERT_OK(loom_op_attrs_set_f32(attrs, "timeout_seconds", 10));
  handle_t* y = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &y, 1, &count));
  loom_eager_op_destroy(op);
  for (int i = 1; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return y;
}

static void expect_vec(handle_t* handle, const float* expected, int64_t n) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_ctx, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), n);
  const float* got = loom_tensor_data(tensor);
  for (int64_t i = 0; i < n; ++i) {
    if (got[i] < expected[i] - 1e-5f || got[i] > expected[i] + 1e-5f) {
      fail_msg("element %lld: got %g, expected %g", (long long)i,
               (double)got[i], (double)expected[i]);
    }
  }
  loom_tensor_release(tensor);
}

typedef struct case_t {
  const char* op;
  const char* merge;  // NULL: the op has no merge_op and final_op
  const char* final_op;
  int32_t instance_key;
  int64_t n;      // elements of x_k and c_k
  int64_t n_out;  // elements of y_k and w_k
  float x0[4], x1[4], c0[4], c1[4], w0[4], w1[4];
  float grad0[4], grad1[4];  // torch
} case_t;

// The forward pass of `c` under a tape watching x = pack(x_0, x_1), then
// the gradient of s_0 + s_1 with respect to x, unpacked into grads (the
// gradients of x_0 and x_1); returns its status.
static loom_status_t collective_gradient(const case_t* c, handle_t** grads) {
  handle_t* h[16] = {NULL};
  h[0] = vec("CPU:0", c->x0, c->n);
  h[1] = vec("CPU:1", c->x1, c->n);
  h[2] = vec("CPU:0", c->c0, c->n);
  h[3] = vec("CPU:1", c->c1, c->n);
  h[4] = vec("CPU:0", c->w0, c->n_out);
  h[5] = vec("CPU:1", c->w1, c->n_out);
  h[6] = pack2(h[2], h[3]);
  h[7] = pack2(h[4], h[5]);
  h[8] = pack2(h[0], h[1]);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, g_parallel));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, h[8]));
  h[9] = binary("Mul", h[8], h[6]);
  h[10] = collective(c->op, c->merge, c->final_op, c->instance_key, h[9]);
  h[11] = binary("Mul", h[10], h[10]);
  h[12] = binary("Mul", h[11], h[7]);
  h[13] = loom_test_int32_scalar(g_ctx, 0);
  h[14] = binary("Sum", h[12], h[13]);
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g_parallel, h[14], parts, 2));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  grads[0] = grads[1] = NULL;
  handle_t* grad = NULL;
  loom_status_t status = loom_tape_gradient(tape, parts, 2, &h[8], 1, NULL,
                                            LOOM_UNCONNECTED_NONE, &grad);
  if (!status) {
    assert_true(loom_parallel_is_parallel_value(grad));
    LOOM_ASSERT_OK(loom_parallel_unpack(g_parallel, grad, grads, 2));
  }
  loom_tensor_handle_release(grad);
  for (int i = 0; i < 15; ++i) loom_tensor_handle_release(h[i]);
  loom_tensor_handle_release(parts[0]);
  loom_tensor_handle_release(parts[1]);
  loom_op_handler_release(tape);
  return status;
}

static void expect_case(const case_t* c) {
  handle_t* grads[2];
  LOOM_ASSERT_OK(collective_gradient(c, grads));
  expect_vec(grads[0], c->grad0, c->n);
  expect_vec(grads[1], c->grad1, c->n);
  assert_non_null(strstr(loom_context_device_name(g_ctx, grads[1]), "CPU:1"));
  loom_tensor_handle_release(grads[0]);
  loom_tensor_handle_release(grads[1]);
}

// Sum: y0 = y1 = x0 * c0 + x1 * c1.
static void gradient_of_all_reduce_sum_sums_the_gradients(void** state) {
  (void)state;
  static const case_t c = {.op = "CollectiveReduceV2",
                           .merge = "Add",
                           .final_op = "Id",
                           .instance_key = 1,
                           .n = 3,
                           .n_out = 3,
                           .x0 = {1, 2, 3},
                           .x1 = {4, 5, -5},
                           .c0 = {2, 3, 4},
                           .c1 = {0.5f, -1, 2},
                           .w0 = {1, 1, 1},
                           .w1 = {1, 1, 1},
                           .grad0 = {32, 12, 32},
                           .grad1 = {8, -4, 16}};
  expect_case(&c);
}

// Mean: y0 = y1 = (x0 * c0 + x1 * c1) / 2.
static void gradient_of_all_reduce_mean_averages_the_gradients(void** state) {
  (void)state;
  static const case_t c = {.op = "CollectiveReduceV2",
                           .merge = "Add",
                           .final_op = "Div",
                           .instance_key = 2,
                           .n = 3,
                           .n_out = 3,
                           .x0 = {1, 2, 3},
                           .x1 = {4, 5, -5},
                           .c0 = {2, 3, 4},
                           .c1 = {0.5f, -1, 2},
                           .w0 = {1, 1, 1},
                           .w1 = {1, 1, 1},
                           .grad0 = {8, 3, 8},
                           .grad1 = {2, -1, 4}};
  expect_case(&c);
}

// Gather: y0 = y1 = cat([z0, z1]).
static void gradient_of_gather_is_a_reduce_scatter(void** state) {
  (void)state;
  static const case_t c = {.op = "CollectiveGatherV2",
                           .instance_key = 3,
                           .n = 2,
                           .n_out = 4,
                           .x0 = {1, 2},
                           .x1 = {3, -1},
                           .c0 = {2, 0.5f},
                           .c1 = {1, 3},
                           .w0 = {1, 2, 3, 4},
                           .w1 = {0.5f, -1, 2, 1},
                           .grad0 = {12, 1},
                           .grad1 = {30, -90}};
  expect_case(&c);
}

// Reduce-scatter: y0, y1 = (z0 + z1).chunk(2) (Div: / 2 first).
static void gradient_of_reduce_scatter_is_a_gather(void** state) {
  (void)state;
  static const case_t sum = {.op = "CollectiveReduceScatterV2",
                             .merge = "Add",
                             .final_op = "Id",
                             .instance_key = 4,
                             .n = 4,
                             .n_out = 2,
                             .x0 = {1, 2, 3, -1},
                             .x1 = {3, -1, 2, 2},
                             .c0 = {2, 0.5f, 1, 1},
                             .c1 = {1, 3, -1, 2},
                             .w0 = {1, 2},
                             .w1 = {0.5f, -1},
                             .grad0 = {20, -4, 1, -6},
                             .grad1 = {10, -24, -1, -12}};
  expect_case(&sum);
  case_t mean = sum;
  mean.final_op = "Div";
  mean.instance_key = 5;
  const float grad0[] = {5, -1, 0.25f, -1.5f}, grad1[] = {2.5f, -6, -0.25f, -3};
  memcpy(mean.grad0, grad0, sizeof(grad0));
  memcpy(mean.grad1, grad1, sizeof(grad1));
  expect_case(&mean);
}

// All-to-all: y0 = cat([z0[:2], z1[:2]]), y1 = cat([z0[2:], z1[2:]]).
static void gradient_of_all_to_all_is_an_all_to_all(void** state) {
  (void)state;
  static const case_t c = {.op = "CollectiveAllToAllV2",
                           .instance_key = 6,
                           .n = 4,
                           .n_out = 4,
                           .x0 = {1, 2, 3, -1},
                           .x1 = {3, -1, 2, 2},
                           .c0 = {2, 0.5f, 1, 1},
                           .c1 = {1, 3, -1, 2},
                           .w0 = {1, 2, 3, 4},
                           .w1 = {0.5f, -1, 2, 1},
                           .grad0 = {8, 2, 3, 2},
                           .grad1 = {18, -72, 8, 16}};
  expect_case(&c);
}

// Max has no gradient here: a clear error, nothing left behind.
static void gradient_of_all_reduce_max_is_unimplemented(void** state) {
  (void)state;
  static const case_t c = {.op = "CollectiveReduceV2",
                           .merge = "Max",
                           .final_op = "Id",
                           .instance_key = 7,
                           .n = 3,
                           .n_out = 3,
                           .x0 = {1, 2, 3},
                           .x1 = {4, 5, -5},
                           .c0 = {2, 3, 4},
                           .c1 = {0.5f, -1, 2},
                           .w0 = {1, 1, 1},
                           .w1 = {1, 1, 1}};
  handle_t* grads[2];
  LOOM_ASSERT_STATUS(collective_gradient(&c, grads), LOOM_STATUS_UNIMPLEMENTED,
                     "the gradient of CollectiveReduceV2 with merge_op Max: "
                     "only Add (with final_op Id or Div) has one");
  assert_null(grads[0]);
  assert_null(grads[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gradient_of_all_reduce_sum_sums_the_gradients),
      cmocka_unit_test(gradient_of_all_reduce_mean_averages_the_gradients),
      cmocka_unit_test(gradient_of_gather_is_a_reduce_scatter),
      cmocka_unit_test(gradient_of_reduce_scatter_is_a_gather),
      cmocka_unit_test(gradient_of_all_to_all_is_an_all_to_all),
      cmocka_unit_test(gradient_of_all_reduce_max_is_unimplemented),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
