// Planned calls of eager functions (loom_function_stats_t): a call with
// only the CPU active runs the body prepared at the first call, giving the
// op-by-op values; new input shapes and registry changes make the plan
// again; a tape around a call still records the body; dead, duplicate and
// constant nodes leave the plan; errors stay those of the op-by-op path.
//
// Reference values from NumPy (float32):
//   x = [1.5, -2, 0.5], y = [0.25, 4, -3]: x*y+x = [1.875, -10, -1]
//   x2 = [2, -1], y2 = [3, 0.5]: x2*y2+x2 = [8, -1.5]
//   (x*y + x*y) * (2 + 3) = [3.75, -80, -15]
// and from PyTorch, for the traced step (v0 = [1, 2, 3]; v += d(x*x)/dx
// per call): v = [4, -2, 4], [7, -6, 5], [10, -10, 6].

#include <stdio.h>
#include <string.h>

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/loom.h"
#include "loom/trace.h"
#include "test_support.h"

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kF[3] = {1.875f, -10, -1};
static const float kX2[2] = {2, -1};
static const float kY2[2] = {3, 0.5f};
static const float kF2[2] = {8, -1.5f};
static const float kG[3] = {3.75f, -80, -15};

static int setup(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  LOOM_ASSERT_OK(loom_context_create(&options, &g_context));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

static loom_tensor_handle_t* tensor_of(loom_dtype_t dtype, const float* values,
                                       int64_t count) {
  return loom_test_tensor(g_context, dtype, values, 1, &count);
}

static loom_tensor_handle_t* scalar(float value) {
  return loom_test_tensor(g_context, LOOM_DTYPE_FLOAT, &value, 0, NULL);
}

static void expect_values(loom_tensor_handle_t* handle, const float* expected,
                          int64_t count) {
  loom_test_expect_values(g_context, handle, expected, count);
}

// Adds node `name` = op(a, b) to `b`.
static void add_binary(loom_function_builder_t* b, const char* name,
                       const char* op, const char* x, const char* y) {
  const char* inputs[] = {x, y};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, name, op, inputs, 2, NULL, NULL));
}

// f(x, y) = x * y + x, added to the context; returns it (a reference).
static loom_function_t* add_f(const char* name) {
  loom_function_t* function = loom_test_mul_add_function(name, NULL);
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  return function;
}

static loom_status_t call2(const char* name, loom_tensor_handle_t* x,
                           loom_tensor_handle_t* y,
                           loom_tensor_handle_t** out) {
  return loom_test_run2(g_context, name, NULL, x, y, out);
}

// Runs op `name` on x and y (may be NULL) with attr dtype float when
// `dtype`; *out (may be NULL) receives its result.
static void run(const char* name, loom_tensor_handle_t* x,
                loom_tensor_handle_t* y, bool dtype,
                loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, name, &op));
  if (dtype) {
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(loom_eager_op_attrs(op), "dtype",
                                           LOOM_DTYPE_FLOAT));
  }
  if (x) LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  if (y) LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* result = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &result, 1, &count));
  loom_eager_op_destroy(op);
  if (out) {
    *out = result;
  } else {
    loom_tensor_handle_release(result);
  }
}

static loom_function_stats_t stats_of(const loom_function_t* function) {
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  return stats;
}

static void second_call_runs_the_plan(void** state) {
  (void)state;
  loom_function_t* f = add_f("planned");
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  for (int i = 0; i < 3; ++i) {
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(call2("planned", x, y, &r));
    expect_values(r, kF, 3);
    loom_tensor_handle_release(r);
  }
  loom_function_stats_t stats = stats_of(f);
  assert_int_equal(stats.plans_built, 1);
  assert_int_equal(stats.planned_calls, 2);
  assert_int_equal(stats.planned_nodes, 2);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(f);
}

static void new_shapes_and_registry_changes_make_the_plan_again(void** state) {
  (void)state;
  loom_function_t* f = add_f("replanned");
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  loom_tensor_handle_t* x2 = tensor_of(LOOM_DTYPE_FLOAT, kX2, 2);
  loom_tensor_handle_t* y2 = tensor_of(LOOM_DTYPE_FLOAT, kY2, 2);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(call2("replanned", x, y, &r));
  expect_values(r, kF, 3);
  loom_tensor_handle_release(r);
  LOOM_ASSERT_OK(call2("replanned", x2, y2, &r));
  expect_values(r, kF2, 2);
  loom_tensor_handle_release(r);
  assert_int_equal(stats_of(f).plans_built, 2);
  assert_int_equal(stats_of(f).planned_calls, 0);
  LOOM_ASSERT_OK(call2("replanned", x2, y2, &r));
  loom_tensor_handle_release(r);
  assert_int_equal(stats_of(f).planned_calls, 1);
  // Registering an op may change any kernel or definition.
  loom_op_registry_t* registry = NULL;
  LOOM_ASSERT_OK(loom_op_registry_create(loom_allocator_system(), &registry));
  loom_op_def_builder_t* builder = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "PlanTestOp", &builder));
  LOOM_ASSERT_OK(loom_op_registry_register(registry, builder));
  LOOM_ASSERT_OK(call2("replanned", x2, y2, &r));
  expect_values(r, kF2, 2);
  loom_tensor_handle_release(r);
  assert_int_equal(stats_of(f).plans_built, 3);
  assert_int_equal(stats_of(f).planned_calls, 1);
  loom_op_registry_destroy(registry);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x2);
  loom_tensor_handle_release(y2);
  loom_function_release(f);
}

// A tape takes a call of tracked inputs whole and runs it beneath itself,
// on the CPU: the call runs its plan. A call the tape leaves (no tracked
// input) runs op by op through the tape.
static void a_tape_around_a_call_runs_its_plan_beneath(void** state) {
  (void)state;
  loom_function_t* f = add_f("taped");
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(call2("taped", x, y, &r));  // makes the plan
  loom_tensor_handle_release(r);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(call2("taped", x, y, &r));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  assert_int_equal(statistics.num_ops, 1);  // the call, as one op
  assert_int_equal(stats_of(f).planned_calls, 1);
  loom_tensor_handle_release(r);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(call2("taped", y, y, &r));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_int_equal(stats_of(f).planned_calls, 1);
  loom_tensor_handle_release(r);
  loom_op_handler_release(tape);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(f);
}

// g(x, y) = (x*y + x*y) * (2 + 3), with a dead node x - y.
static void dead_duplicate_and_constant_nodes_leave_the_plan(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "g", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  add_binary(b, "mul1", "Mul", "x", "y");
  add_binary(b, "mul2", "Mul", "x", "y");
  add_binary(b, "sum", "AddV2", "mul1:z:0", "mul2:z:0");
  add_binary(b, "dead", "Sub", "x", "y");
  const float constants[2] = {2, 3};
  const char* names[2] = {"two", "three"};
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* value = scalar(constants[i]);
    loom_tensor_t* tensor = NULL;
    LOOM_ASSERT_OK(loom_context_resolve(g_context, value, &tensor));
    loom_op_attrs_t attrs;
    loom_op_attrs_initialize(&attrs, loom_allocator_system());
    LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", tensor));
    LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "dtype", LOOM_DTYPE_FLOAT));
    LOOM_ASSERT_OK(loom_function_builder_add_node(b, names[i], "Const", NULL, 0,
                                                  &attrs, NULL));
    loom_op_attrs_deinitialize(&attrs);
    loom_tensor_release(tensor);
    loom_tensor_handle_release(value);
  }
  add_binary(b, "five", "AddV2", "two:output:0", "three:output:0");
  add_binary(b, "out", "Mul", "sum:z:0", "five:z:0");
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "out:z:0"));
  loom_function_t* g = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &g));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, g));
  assert_int_equal(loom_function_num_nodes(g), 8);
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(call2("g", x, y, &r));
    expect_values(r, kG, 3);
    loom_tensor_handle_release(r);
  }
  // mul1, sum and out remain.
  assert_int_equal(stats_of(g).planned_nodes, 3);
  assert_int_equal(stats_of(g).planned_calls, 1);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(g);
}

static void errors_of_a_planned_function_stay_clear(void** state) {
  (void)state;
  loom_function_t* f = add_f("checked");
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  loom_tensor_handle_t* xd = tensor_of(LOOM_DTYPE_DOUBLE, kX, 3);
  loom_tensor_handle_t* r = NULL;
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSERT_OK(call2("checked", x, y, &r));
    loom_tensor_handle_release(r);
  }
  LOOM_ASSERT_STATUS(call2("checked", x, NULL, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'checked' expects 2 inputs, got 1");
  LOOM_ASSERT_STATUS(call2("checked", x, xd, &r), LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'checked': input 1 ('y') has dtype double, expected "
                     "float");
  assert_null(r);
  // A kernel's error names the node: shapes [3] and [2] do not broadcast.
  loom_tensor_handle_t* y2 = tensor_of(LOOM_DTYPE_FLOAT, kY2, 2);
  LOOM_ASSERT_STATUS(call2("checked", x, y2, &r), LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'checked': node 'mul' (Mul)");
  assert_int_equal(stats_of(f).planned_calls, 1);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(y2);
  loom_tensor_handle_release(xd);
  loom_function_release(f);
}

// A kernel's error in a planned call: f(x, y) = CheckNumericsV2(x / y)
// with a zero in y (x / y = [6, -inf, -1/6]).
static void a_kernel_error_in_a_planned_call_names_the_node(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "numerics", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  add_binary(b, "div", "RealDiv", "x", "y");
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_string(&attrs, "message", "bad", 3));
  const char* check_inputs[] = {"div:z:0"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "check", "CheckNumericsV2",
                                                check_inputs, 1, &attrs, NULL));
  loom_op_attrs_deinitialize(&attrs);
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "check:output:0"));
  loom_function_t* f = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &f));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, f));
  static const float kZero[3] = {0.25f, 0, -3};
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  loom_tensor_handle_t* zero = tensor_of(LOOM_DTYPE_FLOAT, kZero, 3);
  loom_tensor_handle_t* r = NULL;
  for (int i = 0; i < 2; ++i) {
    LOOM_ASSERT_OK(call2("numerics", x, y, &r));
    loom_tensor_handle_release(r);
  }
  LOOM_ASSERT_STATUS(call2("numerics", x, zero, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "CheckNumericsV2: bad : Tensor had -Inf values");
  assert_null(r);
  LOOM_ASSERT_STATUS(call2("numerics", x, zero, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'numerics': node 'check' (CheckNumericsV2)");
  LOOM_ASSERT_OK(call2("numerics", x, y, &r));
  loom_tensor_handle_release(r);
  assert_int_equal(stats_of(f).planned_calls, 4);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(zero);
  loom_function_release(f);
}

// step(x): s = x * x under a tape inside the trace, v += ds/dx; returns
// v read after the update. The planned calls update the captured variable as
// eager ops would.
static void a_traced_step_gives_the_eager_values(void** state) {
  (void)state;
  static const float kV0[3] = {1, 2, 3};
  loom_tensor_handle_t* v0 = tensor_of(LOOM_DTYPE_FLOAT, kV0, 3);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "VarHandleOp", &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  int64_t three = 3;
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(attrs, "dtype", LOOM_DTYPE_FLOAT));
  LOOM_ASSERT_OK(loom_op_attrs_set_shape(attrs, "shape", &three, 1));
  LOOM_ASSERT_OK(loom_op_attrs_set_string(attrs, "shared_name", "plan_v", 6));
  loom_tensor_handle_t* variable = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &variable, 1, &count));
  loom_eager_op_destroy(op);
  run("AssignVariableOp", variable, v0, true, NULL);

  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "step", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &three, 1));
  loom_tensor_handle_t* x = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  loom_tensor_handle_t *value = NULL, *s = NULL, *grad = NULL;
  run("Mul", x, x, false, &s);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &s, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &grad));
  run("AssignAddVariableOp", variable, grad, true, NULL);
  run("ReadVariableOp", variable, NULL, true, &value);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* step = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &value, 1, &step));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, step));
  loom_tensor_handle_t* handles[] = {value, s, grad, x};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    loom_tensor_handle_release(handles[i]);
  }
  loom_op_handler_release(tape);
  loom_op_handler_release(trace);

  static const float kS[3][3] = {{4, -2, 4}, {7, -6, 5}, {10, -10, 6}};
  loom_tensor_handle_t* input = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  for (int k = 0; k < 3; ++k) {
    loom_tensor_handle_t* r = NULL;
    run("step", input, NULL, false, &r);
    expect_values(r, kS[k], 3);
    loom_tensor_handle_release(r);
  }
  assert_int_equal(stats_of(step).planned_calls, 2);
  loom_function_release(step);
  loom_tensor_handle_release(input);
  loom_tensor_handle_release(variable);
  loom_tensor_handle_release(v0);
}

// loom_function_stats_t as a caller built against its first version saw
// it (before the replay and frame counts).
typedef struct stats_v1_t {
  size_t struct_size;
  int64_t planned_calls;
  int64_t plans_built;
  int32_t planned_nodes;
} stats_v1_t;

// A caller's struct_size says which fields it has: an older, smaller
// struct gets the fields it holds and nothing past them; the current one
// gets all; a size below the first version's (0 included) or a NULL is
// INVALID_ARGUMENT naming the argument and the sizes; a size past the
// current struct (a newer caller) gets the fields this library knows.
static void stats_fill_only_the_fields_the_caller_has(void** state) {
  (void)state;
  loom_function_t* f = add_f("versioned");
  loom_tensor_handle_t* x = tensor_of(LOOM_DTYPE_FLOAT, kX, 3);
  loom_tensor_handle_t* y = tensor_of(LOOM_DTYPE_FLOAT, kY, 3);
  for (int i = 0; i < 3; ++i) {
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(call2("versioned", x, y, &r));
    loom_tensor_handle_release(r);
  }
  loom_function_stats_t current = stats_of(f);
  assert_int_equal(current.struct_size, sizeof(loom_function_stats_t));
  assert_int_equal(current.planned_calls, 2);
  assert_int_equal(current.frame_calls, 2);

  // The first version, as its own (smaller) struct.
  assert_true(sizeof(stats_v1_t) >= LOOM_FUNCTION_STATS_V1_SIZE);
  assert_true(sizeof(stats_v1_t) < sizeof(loom_function_stats_t));
  struct {
    stats_v1_t stats;
    unsigned char after[64];
  } v1;
  memset(&v1, 0xab, sizeof(v1));
  v1.stats.struct_size = sizeof(stats_v1_t);
  LOOM_ASSERT_OK(
      loom_function_get_stats(f, (loom_function_stats_t*)(void*)&v1.stats));
  assert_int_equal(v1.stats.struct_size, sizeof(stats_v1_t));
  assert_int_equal(v1.stats.planned_calls, 2);
  assert_int_equal(v1.stats.plans_built, 1);
  assert_int_equal(v1.stats.planned_nodes, 2);
  for (size_t i = 0; i < sizeof(v1.after); ++i) {
    assert_int_equal(v1.after[i], 0xab);
  }

  // The second version: the replay counts, not the frame's.
  loom_function_stats_t v2;
  memset(&v2, 0xcd, sizeof(v2));
  v2.struct_size = LOOM_FUNCTION_STATS_V2_SIZE;
  LOOM_ASSERT_OK(loom_function_get_stats(f, &v2));
  assert_int_equal(v2.planned_calls, 2);
  assert_int_equal(v2.replays_built, 0);
  assert_int_equal(v2.replay_hits, 0);
  int64_t untouched;
  memset(&untouched, 0xcd, sizeof(untouched));
  assert_true(v2.frame_calls == untouched);
  assert_true(v2.buffers_allocated == untouched);

  // The third version: the frame's counts, not the backward functions'.
  loom_function_stats_t v3;
  memset(&v3, 0xcd, sizeof(v3));
  v3.struct_size = LOOM_FUNCTION_STATS_V3_SIZE;
  LOOM_ASSERT_OK(loom_function_get_stats(f, &v3));
  assert_int_equal(v3.frame_calls, 2);
  assert_true(v3.backward_functions_built == untouched);
  assert_true(v3.backward_function_hits == untouched);

  // A newer caller's struct: every field this library knows.
  loom_function_stats_t newer;
  memset(&newer, 0, sizeof(newer));
  newer.struct_size = sizeof(newer) + 16;
  LOOM_ASSERT_OK(loom_function_get_stats(f, &newer));
  assert_int_equal(newer.frame_calls, 2);
  assert_int_equal(newer.buffers_allocated, current.buffers_allocated);
  assert_int_equal(newer.backward_functions_built, 0);

  loom_function_stats_t bad = {.struct_size = 0};
  char expected[256];
  snprintf(expected, sizeof(expected),
           "loom_function_get_stats: out_stats->struct_size is 0, below the "
           "first version's %zu (set it to sizeof(loom_function_stats_t), "
           "%zu)",
           (size_t)LOOM_FUNCTION_STATS_V1_SIZE, sizeof(loom_function_stats_t));
  LOOM_ASSERT_STATUS(loom_function_get_stats(f, &bad),
                     LOOM_STATUS_INVALID_ARGUMENT, expected);
  assert_int_equal(bad.planned_calls, 0);
  bad.struct_size = 12;
  LOOM_ASSERT_STATUS(loom_function_get_stats(f, &bad),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "out_stats->struct_size is 12, below the first "
                     "version's");
  assert_int_equal(bad.planned_calls, 0);
  LOOM_ASSERT_STATUS(loom_function_get_stats(f, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_function_get_stats: out_stats is NULL");
  LOOM_ASSERT_STATUS(loom_function_get_stats(NULL, &current),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_function_get_stats: function is NULL");
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "versioned"));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_function_release(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(second_call_runs_the_plan),
      cmocka_unit_test(stats_fill_only_the_fields_the_caller_has),
      cmocka_unit_test(new_shapes_and_registry_changes_make_the_plan_again),
      cmocka_unit_test(a_tape_around_a_call_runs_its_plan_beneath),
      cmocka_unit_test(dead_duplicate_and_constant_nodes_leave_the_plan),
      cmocka_unit_test(errors_of_a_planned_function_stay_clear),
      cmocka_unit_test(a_traced_step_gives_the_eager_values),
      cmocka_unit_test(a_kernel_error_in_a_planned_call_names_the_node),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
