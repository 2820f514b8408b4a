// The parallel handler (loom/parallel.h) and CollectiveReduceV2: pack,
// unpack and broadcast round trips; element-wise ops, MatMul and function
// calls (whole) per component with different component values; collectives
// between the components and between threads; the gradient of a broadcast
// summed back (the op-handler design's CopyOnGrad example) and of pack and
// unpack; and the errors (CopyOff of a parallel value, component counts, shapes
// in a collective). Collectives between threads: test_collective_ops. Reference
// values come from NumPy (the expressions are given beside them).

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "handlers/parallel/parallel_internal.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "parallel_fixture.h"

typedef loom_tensor_handle_t handle_t;

static loom_test_parallel_t g;  // over CPU:0, CPU:1

static int setup(void** state) {
  (void)state;
  return loom_test_parallel_setup(3, &g);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_parallel_teardown(&g);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static handle_t* vec3(const char* device, float a, float b, float c) {
  const int64_t dims[] = {3};
  const float values[] = {a, b, c};
  return loom_test_tensor_on(g.context, device, values, 1, dims);
}

// Runs `name` on inputs[0, n) with string attributes attrs[0, 2 * m)
// (name, value pairs); returns its status and its one result.
static loom_status_t run(const char* name, handle_t* const* inputs, int n,
                         const char* const* attrs, int m, handle_t** out) {
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(g.context, name, &op);
  for (int i = 0; i < n && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  for (int j = 0; j < m && !status; ++j) {
    status =
        loom_op_attrs_set_string(loom_eager_op_attrs(op), attrs[2 * j],
                                 attrs[2 * j + 1], strlen(attrs[2 * j + 1]));
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

static handle_t* run_ok(const char* name, handle_t* const* inputs, int n) {
  handle_t* out = NULL;
  LOOM_ASSERT_OK(run(name, inputs, n, NULL, 0, &out));
  return out;
}

//===----------------------------------------------------------------------===//
// Pack, unpack, broadcast
//===----------------------------------------------------------------------===//

static void pack_unpack_round_trip(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:0", 4, 5, 6);  // packing moves it to CPU:1
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  assert_true(loom_parallel_is_parallel_value(x));
  assert_string_equal(loom_context_device_name(g.context, x),
                      "/job:localhost/replica:0/task:0/device:PARALLEL:0");
  assert_string_equal(loom_op_handler_type_name(loom_tensor_handle_handler(x)),
                      "PARALLEL");
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(x, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_FLOAT);
  assert_int_equal(metadata.shape.rank, 1);
  assert_int_equal(metadata.shape.dims[0], 3);
  const float c0[] = {1, 2, 3}, c1[] = {4, 5, 6};
  loom_test_parallel_expect(&g, x, c0, c1, 3);
  char text[256];
  loom_tensor_handle_debug_string(x, text, sizeof(text));
  assert_non_null(strstr(text, "ParallelValue({"));
  assert_non_null(strstr(text, "device:CPU:1"));
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

// CopyOn of a CPU tensor broadcasts it; every component holds the same
// value, so it may be copied off again.
static void broadcast_round_trip(void** state) {
  (void)state;
  handle_t* c = vec3("CPU:0", 0.5, -1, 2);
  handle_t* x = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(g.context, c, g.handler, &x));
  assert_true(loom_parallel_is_parallel_value(x));
  const float values[] = {0.5, -1, 2};
  loom_test_parallel_expect(&g, x, values, values, 3);
  loom_tensor_t* off = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g.context, x, &off));
  assert_float_equal(((const float*)loom_tensor_data(off))[1], -1.0f, 0);
  loom_tensor_release(off);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(c);
}

//===----------------------------------------------------------------------===//
// Ops per component
//===----------------------------------------------------------------------===//

// In the handler's scope, x * c + x with x = pack([1, 2, 3], [4, 5, 6])
// and c = [0.5, -1, 2] on the CPU (broadcast).
static void elementwise_ops_per_component(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  handle_t* c = vec3("CPU:0", 0.5, -1, 2);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  handle_t* xc = run_ok("Mul", (handle_t*[]){x, c}, 2);
  handle_t* y = run_ok("AddV2", (handle_t*[]){xc, x}, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  assert_true(loom_parallel_is_parallel_value(y));
  // numpy: x0 * c + x0, x1 * c + x1
  const float y0[] = {1.5, 0, 9}, y1[] = {6, 0, 18};
  loom_test_parallel_expect(&g, y, y0, y1, 3);
  handle_t* all[] = {x0, x1, x, c, xc, y};
  for (int i = 0; i < 6; ++i) loom_tensor_handle_release(all[i]);
}

// A call of f(x, y) = x * y + x with x a parallel value runs whole once
// per component, each component thread calling the function on its
// device; y (a CPU tensor) goes to every component.
static void a_call_runs_whole_per_component(void** state) {
  (void)state;
  loom_function_t* f = loom_test_mul_add_function("parallel_mul_add", NULL);
  LOOM_ASSERT_OK(loom_context_add_function(g.context, f));
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  handle_t* c = vec3("CPU:0", 0.5, -1, 2);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  handle_t* y = run_ok("parallel_mul_add", (handle_t*[]){x, c}, 2);
  handle_t* z = run_ok("parallel_mul_add", (handle_t*[]){y, c}, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  assert_true(loom_parallel_is_parallel_value(z));
  // numpy: y = x * c + x; z = y * c + y
  const float y0[] = {1.5, 0, 9}, y1[] = {6, 0, 18};
  const float z0[] = {2.25, 0, 27}, z1[] = {9, 0, 54};
  loom_test_parallel_expect(&g, y, y0, y1, 3);
  loom_test_parallel_expect(&g, z, z0, z1, 3);
  // Both calls were taken whole: the body's ops did not reach the
  // handler one by one.
  assert_int_equal(loom__parallel_of(g.handler)->calls_taken, 2);
  // A tape around the scope records the call (it takes calls first) and
  // its gradient runs per component: numpy: dy/dx = c + 1.
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  handle_t* w = run_ok("parallel_mul_add", (handle_t*[]){x, c}, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &w, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  const float d[] = {1.5, 0, 3};
  loom_test_parallel_expect(&g, w, y0, y1, 3);
  loom_test_parallel_expect(&g, dx, d, d, 3);
  loom_tensor_handle_release(w);
  loom_tensor_handle_release(dx);
  loom_op_handler_release(tape);
  LOOM_ASSERT_OK(loom_context_remove_function(g.context, "parallel_mul_add"));
  loom_function_release(f);
  handle_t* all[] = {x0, x1, x, c, y, z};
  for (int i = 0; i < 6; ++i) loom_tensor_handle_release(all[i]);
}

// MatMul of a = pack(a0, a1) (2 x 3) by b (3 x 2, broadcast), placed on
// the handler by its input (no scope).
static void matmul_per_component(void** state) {
  (void)state;
  const int64_t a_dims[] = {2, 3}, b_dims[] = {3, 2};
  const float a0_values[] = {0, 1, 2, 3, 4, 5};  // arange(6)
  const float a1_values[] = {-1.25, -0.75, -0.25, 0.25, 0.75, 1.25};
  const float b_values[] = {1, 2, 0, -1, 3, 0.5};
  handle_t* a0 = loom_test_tensor_on(g.context, "CPU:0", a0_values, 2, a_dims);
  handle_t* a1 = loom_test_tensor_on(g.context, "CPU:1", a1_values, 2, a_dims);
  handle_t* b = loom_test_tensor_on(g.context, "CPU:0", b_values, 2, b_dims);
  handle_t* a = loom_test_parallel_pack2(&g, a0, a1);
  handle_t* y = run_ok("MatMul", (handle_t*[]){a, b}, 2);
  // numpy: a0 @ b, a1 @ b
  const float y0[] = {6, 0, 18, 4.5}, y1[] = {-2, -1.875, 4, 0.375};
  loom_test_parallel_expect(&g, y, y0, y1, 4);
  handle_t* all[] = {a0, a1, b, a, y};
  for (int i = 0; i < 5; ++i) loom_tensor_handle_release(all[i]);
}

typedef struct caller_t {
  handle_t* x;
  float scale;
  int failures;
} caller_t;

// Placed by its input (no scope: scopes are per thread), x * scale twenty
// times over, checked each time.
static void* caller_main(void* opaque) {
  caller_t* caller = opaque;
  handle_t* s = vec3("CPU:0", caller->scale, caller->scale, caller->scale);
  for (int i = 0; i < 20; ++i) {
    handle_t* y = NULL;
    handle_t* inputs[] = {caller->x, s};
    loom_status_t status = run("Mul", inputs, 2, NULL, 0, &y);
    handle_t* parts[2] = {NULL, NULL};
    if (!status) status = loom_parallel_unpack(g.handler, y, parts, 2);
    loom_tensor_t* value = NULL;
    if (!status) status = loom_context_resolve(g.context, parts[1], &value);
    // numpy: [4, 5, 6] * scale, element 2
    if (status || ((const float*)loom_tensor_data(value))[2] !=
                      (float)(6 * caller->scale)) {
      caller->failures++;
    }
    loom_status_free(status);
    loom_tensor_release(value);
    loom_tensor_handle_release(parts[0]);
    loom_tensor_handle_release(parts[1]);
    loom_tensor_handle_release(y);
  }
  loom_tensor_handle_release(s);
  return NULL;
}

// Two threads run ops on the same handler at once: their batches take
// turns on the component threads.
static void callers_on_several_threads(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  caller_t callers[2] = {{x, 2, 0}, {x, -0.5, 0}};
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) {
    assert_int_equal(
        pthread_create(&threads[t], NULL, caller_main, &callers[t]), 0);
  }
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  assert_int_equal(callers[0].failures, 0);
  assert_int_equal(callers[1].failures, 0);
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

// An op that fails with its result slot holding the handle of an input
// the caller gave up (x = f(x) through the eager API): the slot is the
// handler's to write, never to release, on failure as on success.
static void failing_op_leaves_a_result_slot_it_did_not_write(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:0", 4, 5, 6);
  handle_t* y = loom_test_parallel_pack2(&g, x0, x1);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g.context, "MatMul", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_release(y);  // the op holds the only references
  int32_t count = 0;
  // MatMul of vectors fails on every component.
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &y, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT, "MatMul");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(x0);
  loom_tensor_handle_release(x1);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// Sum, mean, max and min of pack([1, 2, 3], [4, 5, 6]) between the two
// components: every component gets the reduction.
static void collective_reduce_between_components(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  static const struct {
    const char* merge;
    const char* final_op;
    float expected[3];
  } kCases[] = {
      {"Add", "Id", {5, 7, 9}},         // numpy: x0 + x1
      {"Add", "Div", {2.5, 3.5, 4.5}},  // numpy: (x0 + x1) / 2
      {"Max", "Id", {4, 5, 6}},         // numpy: maximum(x0, x1)
      {"Min", "Id", {1, 2, 3}},         // numpy: minimum(x0, x1)
  };
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  for (int i = 0; i < 4; ++i) {
    handle_t* y = NULL;
    LOOM_ASSERT_OK(loom_test_collective_reduce(g.context, x, 2, 1, 100 + i,
                                               kCases[i].merge,
                                               kCases[i].final_op, 10, &y));
    assert_true(loom_parallel_is_parallel_value(y));
    loom_test_parallel_expect(&g, y, kCases[i].expected, kCases[i].expected, 3);
    loom_tensor_handle_release(y);
  }
  // The same keys again: a new round.
  handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_test_collective_reduce(g.context, x, 2, 1, 100, "Add",
                                             "Id", 10, &y));
  loom_test_parallel_expect(&g, y, kCases[0].expected, kCases[0].expected, 3);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

// An op without inputs (VarHandleOp) runs per component too: a parallel
// value of two variables, which take and give different values.
static void variables_per_component(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g.context, "VarHandleOp", &op));
  const int64_t dims[] = {3};
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(
      loom_op_attrs_set_shape(loom_eager_op_attrs(op), "shape", dims, 1));
  handle_t* variable = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &variable, 1, &count));
  assert_true(loom_parallel_is_parallel_value(variable));
  LOOM_ASSERT_OK(loom_eager_op_reset(op, "AssignVariableOp"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, variable));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_execute(op, NULL, 0, &count));
  LOOM_ASSERT_OK(loom_eager_op_reset(op, "ReadVariableOp"));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, variable));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                         LOOM_DTYPE_FLOAT));
  handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &y, 1, &count));
  loom_eager_op_destroy(op);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  const float y0[] = {1, 2, 3}, y1[] = {4, 5, 6};
  loom_test_parallel_expect(&g, y, y0, y1, 3);
  handle_t* all[] = {x0, x1, x, variable, y};
  for (int i = 0; i < 5; ++i) loom_tensor_handle_release(all[i]);
}

// Collective `op_name` of `x` (group_key 2) between the components, with
// merge_op Add and final_op Id when it has them; its status.
static loom_status_t run_collective(const char* op_name, handle_t* x,
                                    int32_t instance_key, handle_t** out) {
  bool reduces = strcmp(op_name, "CollectiveReduceScatterV2") == 0;
  return loom_test_collective(g.context, op_name, x, 2, 2, instance_key,
                              reduces ? "Add" : NULL, reduces ? "Id" : NULL, 10,
                              out);
}

static handle_t* gather(handle_t* x, int32_t instance_key) {
  handle_t* y = NULL;
  LOOM_ASSERT_OK(run_collective("CollectiveGatherV2", x, instance_key, &y));
  return y;
}

// Reduce-scatter and all-to-all of pack([1, 2, 3, 4], [10, 20, 30, 40]):
// each component gets its part (its rank: its device's order).
static void reduce_scatter_and_all_to_all_between_components(void** state) {
  (void)state;
  const int64_t dims[] = {4};
  const float v0[] = {1, 2, 3, 4}, v1[] = {10, 20, 30, 40};
  handle_t* x0 = loom_test_tensor_on(g.context, "CPU:0", v0, 1, dims);
  handle_t* x1 = loom_test_tensor_on(g.context, "CPU:1", v1, 1, dims);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  handle_t* odd0 = vec3("CPU:0", 1, 2, 3);
  handle_t* odd1 = vec3("CPU:1", 4, 5, 6);
  handle_t* odd = loom_test_parallel_pack2(&g, odd0, odd1);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  handle_t *scattered = NULL, *exchanged = NULL, *failed = NULL;
  LOOM_ASSERT_OK(run_collective("CollectiveReduceScatterV2", x, 3, &scattered));
  LOOM_ASSERT_OK(run_collective("CollectiveAllToAllV2", x, 4, &exchanged));
  LOOM_ASSERT_STATUS(
      run_collective("CollectiveReduceScatterV2", odd, 5, &failed),
      LOOM_STATUS_INVALID_ARGUMENT,
      "CollectiveReduceScatterV2 (group_key 2, instance_key 5): input must "
      "have rank >= 1 and dim 0 a multiple of group_size 2 (it is cut into "
      "that many parts), got rank 1, dim 0 3");
  assert_null(failed);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  // numpy: s = x0 + x1; s[:2], s[2:]
  const float s0[] = {11, 22}, s1[] = {33, 44};
  loom_test_parallel_expect(&g, scattered, s0, s1, 2);
  // numpy: concatenate([x0[:2], x1[:2]]), concatenate([x0[2:], x1[2:]])
  const float e0[] = {1, 2, 10, 20}, e1[] = {3, 4, 30, 40};
  loom_test_parallel_expect(&g, exchanged, e0, e1, 4);
  handle_t* all[] = {x0, x1, x, odd0, odd1, odd, scattered, exchanged};
  for (int i = 0; i < 8; ++i) loom_tensor_handle_release(all[i]);
}

// A gather concatenates the components' values in the order of their
// devices: CPU:0's first, whichever component runs there.
static void gather_between_components_in_device_order(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  handle_t* y = gather(x, 1);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  const float both[] = {1, 2, 3, 4, 5, 6};  // numpy: concatenate([x0, x1])
  loom_test_parallel_expect(&g, y, both, both, 6);
  // Components on CPU:2 and CPU:0: CPU:0's value (component 1's) first.
  loom_op_handler_t* saved = g.handler;
  const char* devices[] = {"CPU:2", "CPU:0"};
  LOOM_ASSERT_OK(
      loom_parallel_handler_create(g.context, devices, 2, &g.handler));
  handle_t* a0 = vec3("CPU:2", 1, 2, 3);
  handle_t* a1 = vec3("CPU:0", 4, 5, 6);
  handle_t* a = loom_test_parallel_pack2(&g, a0, a1);
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  handle_t* b = gather(a, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g.handler, b, parts, 2));
  const float swapped[] = {4, 5, 6, 1, 2, 3};  // concatenate([a1, a0])
  loom_test_expect_near(g.context, parts[0], "CPU:2", swapped, 6);
  loom_test_expect_near(g.context, parts[1], "CPU:0", swapped, 6);
  handle_t* all[] = {x0, x1, x, y, a0, a1, a, b, parts[0], parts[1]};
  for (int i = 0; i < 10; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(g.handler);
  g.handler = saved;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

// The design's example: a tape inside the parallel scope sees the ops
// un-replicated; `a` on the CPU is broadcast (CopyOn) and its gradient
// summed back (CopyOnGrad) onto the CPU:
//   a = 2.; with parallel: with tape: watch(a); b = fill([], 3.);
//   watch(b); c = a * b; first_c = unpack(c)[0]
//   tape.gradient(first_c, [a, b]) -> 3., ParallelValue(2., 0.)
static void copy_on_grad_sums_back_to_the_cpu(void** state) {
  (void)state;
  handle_t* a = loom_test_scalar(g.context, 2.0f);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, a));
  handle_t* dims = NULL;
  {
    loom_tensor_t* empty = NULL;
    const int64_t zero[] = {0};
    loom_shape_t shape;
    LOOM_ASSERT_OK(loom_shape_initialize(&shape, zero, 1));
    LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                            LOOM_DTYPE_INT32, &shape, &empty));
    LOOM_ASSERT_OK(loom_context_new_handle(g.context, empty, &dims));
    loom_tensor_release(empty);
  }
  handle_t* three = loom_test_scalar(g.context, 3.0f);
  handle_t* b = run_ok("Fill", (handle_t*[]){dims, three}, 2);
  assert_true(loom_parallel_is_parallel_value(b));
  LOOM_ASSERT_OK(loom_tape_watch(tape, b));
  handle_t* c = run_ok("Mul", (handle_t*[]){a, b}, 2);
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g.handler, c, parts, 2));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  handle_t* sources[2] = {a, b};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &parts[0], 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  // numpy: dc = [1, 0]; a_grad = sum(dc * b) = 3; b_grad = dc * a = [2, 0]
  assert_ptr_equal(loom_tensor_handle_handler(grads[0]),
                   loom_tensor_handle_handler(a));
  const float a_grad[] = {3}, b_grad0[] = {2}, b_grad1[] = {0};
  loom_test_expect_near(g.context, grads[0], "CPU:0", a_grad, 1);
  assert_true(loom_parallel_is_parallel_value(grads[1]));
  loom_test_parallel_expect(&g, grads[1], b_grad0, b_grad1, 1);
  handle_t* all[] = {a,        dims,     three,    b,       c,
                     parts[0], parts[1], grads[0], grads[1]};
  for (int i = 0; i < 9; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(tape);
}

// Different components: a = [1, 2, 3] on the CPU, b = pack([0.5, 1, 2],
// [3, -1, 4]); loss = unpack(Sum((a * b)^2))[1]:
//   numpy: da = 2 * a * b1**2 = [18, 4, 96]; db = [0, 0, 0],
//   2 * a**2 * b1 = [6, -8, 72].
// The loss above with the tape entered inside the parallel scope, or
// (tape_outside) around it: a tape outside records the ops run inside as
// one inside does (the scopes keep the tape on top of the placing
// handler), so the gradients are the same.
static void expect_pack_unpack_gradients(bool tape_outside) {
  handle_t* a = vec3("CPU:0", 1, 2, 3);
  handle_t* b0 = vec3("CPU:0", 0.5, 1, 2);
  handle_t* b1 = vec3("CPU:1", 3, -1, 4);
  handle_t* b = loom_test_parallel_pack2(&g, b0, b1);
  handle_t* axis = loom_test_int32_scalar(g.context, 0);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));
  loom_op_handler_t* scopes[2] = {g.handler, tape};
  if (tape_outside) {
    scopes[0] = tape;
    scopes[1] = g.handler;
  }
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, scopes[0]));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, scopes[1]));
  LOOM_ASSERT_OK(loom_tape_watch(tape, a));
  LOOM_ASSERT_OK(loom_tape_watch(tape, b));
  handle_t* ab = run_ok("Mul", (handle_t*[]){a, b}, 2);
  handle_t* sq = run_ok("Mul", (handle_t*[]){ab, ab}, 2);
  handle_t* sum = run_ok("Sum", (handle_t*[]){sq, axis}, 2);
  assert_true(loom_parallel_is_parallel_value(sum));
  handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(g.handler, sum, parts, 2));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  assert_true(statistics.num_ops >= 3);
  handle_t* sources[2] = {a, b};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &parts[1], 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  assert_non_null(grads[0]);
  assert_non_null(grads[1]);
  const float da[] = {18, 4, 96}, db0[] = {0, 0, 0}, db1[] = {6, -8, 72};
  loom_test_expect_near(g.context, grads[0], "CPU:0", da, 3);
  loom_test_parallel_expect(&g, grads[1], db0, db1, 3);
  handle_t* all[] = {a,  b0,  b1,       b,        axis,     ab,
                     sq, sum, parts[0], parts[1], grads[0], grads[1]};
  for (int i = 0; i < 12; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(tape);
}

static void gradient_through_pack_and_unpack(void** state) {
  (void)state;
  expect_pack_unpack_gradients(false);
}

static void a_tape_outside_a_parallel_scope_records_its_ops(void** state) {
  (void)state;
  expect_pack_unpack_gradients(true);
}

// A tape entered OUTSIDE a device scope records the ops placed on the
// device: loss = sum(a * a * b) run on CPU:1 (a, b on CPU:0), then
// loss + loss on the CPU, in the tape's scope. PyTorch: a = [1, 2, 3],
// b = [0.5, 1, 2]: loss = 22.5, dloss/da = 2ab = [1, 4, 12],
// dloss/db = a^2 = [1, 4, 9].
static void a_tape_outside_a_device_scope_records_its_ops(void** state) {
  (void)state;
  handle_t* a = vec3("CPU:0", 1, 2, 3);
  handle_t* b = vec3("CPU:0", 0.5, 1, 2);
  handle_t* axis = loom_test_int32_scalar(g.context, 0);
  loom_op_handler_t* device = loom_context_find_handler(g.context, "CPU:1");
  assert_non_null(device);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g.context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, a));
  LOOM_ASSERT_OK(loom_tape_watch(tape, b));
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, device));
  handle_t* aa = run_ok("Mul", (handle_t*[]){a, a}, 2);
  handle_t* aab = run_ok("Mul", (handle_t*[]){aa, b}, 2);
  handle_t* loss = run_ok("Sum", (handle_t*[]){aab, axis}, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  // The result on CPU:1 used after the device scope, still in the tape's.
  handle_t* twice = run_ok("AddV2", (handle_t*[]){loss, loss}, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  const float loss_value[] = {22.5f}, twice_value[] = {45};
  loom_test_expect_near(g.context, loss, "CPU:1", loss_value, 1);
  loom_test_expect_near(g.context, twice, "CPU:0", twice_value, 1);
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  assert_int_equal(statistics.num_ops, 4);
  handle_t* sources[2] = {a, b};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &twice, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  assert_non_null(grads[0]);
  assert_non_null(grads[1]);
  // Twice PyTorch's gradients of the loss.
  const float da[] = {2, 8, 24}, db[] = {2, 8, 18};
  loom_test_expect_near(g.context, grads[0], NULL, da, 3);
  loom_test_expect_near(g.context, grads[1], NULL, db, 3);
  // Leaving the scopes leaves the stack as it was: ops run on the CPU.
  assert_null(loom_context_scope_handler(g.context));
  handle_t* all[] = {a, b, axis, aa, aab, loss, twice, grads[0], grads[1]};
  for (int i = 0; i < 9; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(tape);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void copy_off_of_a_parallel_value_fails(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(g.context, x, &tensor),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "CopyOff: cannot copy a parallel value off parallel "
                     "handler '/job:localhost/replica:0/task:0/device:"
                     "PARALLEL:0' (2 components)");
  assert_null(tensor);
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

static void mismatched_component_counts_fail(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  const char* devices[] = {"CPU:0", "CPU:1", "CPU:2"};
  loom_op_handler_t* three = NULL;
  LOOM_ASSERT_OK(loom_parallel_handler_create(g.context, devices, 3, &three));
  assert_int_equal(loom_parallel_handler_num_components(three), 3);
  // A parallel value goes to another handler only through a copy off.
  handle_t* moved = NULL;
  LOOM_ASSERT_STATUS(loom_context_copy_to(g.context, x, three, &moved),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "CopyOff: cannot copy a parallel value off parallel "
                     "handler '/job:localhost/replica:0/task:0/device:"
                     "PARALLEL:0' (2 components): its components differ");
  assert_null(moved);
  handle_t* packed = NULL;
  handle_t* parts[] = {x0, x1};
  char expected[256];
  snprintf(expected, sizeof(expected),
           "loom_parallel_pack: 2 values for parallel handler '%s' of 3 "
           "components",
           loom_context_handler_name(g.context, three));
  LOOM_ASSERT_STATUS(loom_parallel_pack(three, parts, 2, &packed),
                     LOOM_STATUS_INVALID_ARGUMENT, expected);
  handle_t* out[3] = {NULL, NULL, NULL};
  LOOM_ASSERT_STATUS(loom_parallel_unpack(three, x, out, 3),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the value lives on '/job:localhost/replica:0/task:0/"
                     "device:PARALLEL:0', not on parallel handler");
  const char* bad[] = {"CPU:0", "CPU:0"};
  loom_op_handler_t* none = NULL;
  LOOM_ASSERT_STATUS(loom_parallel_handler_create(g.context, bad, 2, &none),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "devices[1] 'CPU:0' repeats devices[0] 'CPU:0'");
  const char* missing[] = {"CPU:0", "GPU:0"};
  LOOM_ASSERT_STATUS(loom_parallel_handler_create(g.context, missing, 2, &none),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "devices[1] 'GPU:0' is not a device of the context");
  assert_null(none);
  loom_op_handler_release(three);
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

static void collective_with_mismatched_shapes_fails(void** state) {
  (void)state;
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  const int64_t dims[] = {2};
  const float values[] = {4, 5};
  handle_t* x1 = loom_test_tensor_on(g.context, "CPU:1", values, 1, dims);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(x, &metadata));
  assert_int_equal(metadata.shape.dims[0], LOOM_UNKNOWN_DIM);
  handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_STATUS(
      loom_test_collective_reduce(g.context, x, 2, 3, 9, "Add", "Id", 10, &y),
      LOOM_STATUS_INVALID_ARGUMENT,
      "CollectiveReduceV2 (group_key 3, instance_key 9): a "
      "participant's input is float");
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  loom_tensor_handle_release(y);
  handle_t* all[] = {x0, x1, x};
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(all[i]);
}

// An asynchronous context: component ops run ahead; a collective's
// participants wait on the context's pool.
static void asynchronous_context(void** state) {
  (void)state;
  loom_test_parallel_t saved = g;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = true;
  options.num_cpu_devices = 2;
  LOOM_ASSERT_OK(loom_context_create(&options, &g.context));
  const char* devices[] = {"CPU:0", "CPU:1"};
  LOOM_ASSERT_OK(
      loom_parallel_handler_create(g.context, devices, 2, &g.handler));
  handle_t* x0 = vec3("CPU:0", 1, 2, 3);
  handle_t* x1 = vec3("CPU:1", 4, 5, 6);
  handle_t* x = loom_test_parallel_pack2(&g, x0, x1);
  handle_t* xx = run_ok("Mul", (handle_t*[]){x, x}, 2);
  handle_t* y = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g.context, g.handler));
  LOOM_ASSERT_OK(loom_test_collective_reduce(g.context, xx, 2, 1, 500, "Add",
                                             "Id", 10, &y));
  LOOM_ASSERT_OK(loom_context_exit_scope(g.context));
  // numpy: x0**2 + x1**2
  const float sum[] = {17, 29, 45};
  loom_test_parallel_expect(&g, y, sum, sum, 3);
  // Every component holds the sum: the value copies off (once computed).
  loom_test_expect_near(g.context, y, NULL, sum, 3);
  loom_tensor_t* value = NULL;
  LOOM_ASSERT_STATUS(loom_context_resolve(g.context, xx, &value),
                     LOOM_STATUS_INVALID_ARGUMENT, "its components differ");
  handle_t* all[] = {x0, x1, x, xx, y};
  for (int i = 0; i < 5; ++i) loom_tensor_handle_release(all[i]);
  loom_op_handler_release(g.handler);
  loom_context_destroy(g.context);
  g = saved;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pack_unpack_round_trip),
      cmocka_unit_test(broadcast_round_trip),
      cmocka_unit_test(elementwise_ops_per_component),
      cmocka_unit_test(matmul_per_component),
      cmocka_unit_test(a_call_runs_whole_per_component),
      cmocka_unit_test(variables_per_component),
      cmocka_unit_test(callers_on_several_threads),
      cmocka_unit_test(collective_reduce_between_components),
      cmocka_unit_test(gather_between_components_in_device_order),
      cmocka_unit_test(reduce_scatter_and_all_to_all_between_components),
      cmocka_unit_test(copy_on_grad_sums_back_to_the_cpu),
      cmocka_unit_test(gradient_through_pack_and_unpack),
      cmocka_unit_test(a_tape_outside_a_parallel_scope_records_its_ops),
      cmocka_unit_test(a_tape_outside_a_device_scope_records_its_ops),
      cmocka_unit_test(copy_off_of_a_parallel_value_fails),
      cmocka_unit_test(mismatched_component_counts_fail),
      cmocka_unit_test(collective_with_mismatched_shapes_fails),
      cmocka_unit_test(asynchronous_context),
      cmocka_unit_test(failing_op_leaves_a_result_slot_it_did_not_write),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
