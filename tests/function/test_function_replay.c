// Function calls offered to a handler as one op (src/function/
// function_replay.c, loom/op_handler.h's execute_function_call): a
// gradient tape records a call as one node, keeps what it needs per replay
// key (the pattern of inputs it tracks) so that the tapes of later steps
// share it, and computes the same gradients as the body's ops run eagerly;
// a logging handler set to log whole calls prints a call as one line.
//
// Reference values from NumPy (float32):
//   x = [1.5, -2, 0.5], y = [0.25, 4, -3]
//   f(x, y) = x*y + x = [1.875, -10, -1]
//   d(sum f)/dx = y + 1 = [1.25, 5, -2]; d(sum f)/dy = x
//   x2 = [[1, 2]], y2 = [[3, 4]]: d/dx = y2 + 1 = [[4, 5]]
//   v = [2, -1, 0.5]: the JVP along x, v * (y + 1) = [2.5, -5, -1]

#include <stdlib.h>

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/handlers.h"
#include "loom/loom.h"
#include "loom/trace.h"
#include "test_support.h"

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kF[3] = {1.875f, -10, -1};
static const float kDx[3] = {1.25f, 5, -2};

static loom_tensor_handle_t* tensor_of(const float* values, int32_t rank,
                                       const int64_t* dims) {
  return loom_test_tensor(g_context, LOOM_DTYPE_FLOAT, values, rank, dims);
}

static loom_tensor_handle_t* vector(const float* values) {
  int64_t three = 3;
  return tensor_of(values, 1, &three);
}

static void expect_values(loom_tensor_handle_t* handle, const float* expected,
                          int64_t count) {
  loom_test_expect_values(g_context, handle, expected, count);
}

// The values of two handles are equal.
static void expect_same(loom_tensor_handle_t* a, loom_tensor_handle_t* b) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, b, &tensor));
  expect_values(a, (const float*)loom_tensor_data(tensor),
                loom_tensor_num_elements(tensor));
  loom_tensor_release(tensor);
}

// f(x, y) = x * y + x.
static loom_function_t* add_f(const char* name) {
  loom_function_t* function = loom_test_mul_add_function(name, NULL);
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  return function;
}

// Runs op `name` on x and y into *out.
static loom_status_t call2(const char* name, loom_tensor_handle_t* x,
                           loom_tensor_handle_t* y,
                           loom_tensor_handle_t** out) {
  return loom_test_run2(g_context, name, NULL, x, y, out);
}

static loom_function_stats_t stats_of(const loom_function_t* function) {
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  return stats;
}

// One training step: a new tape watching x (and y when `watch_y`), r =
// op(x, y) (a call of f, or `eager` false: f's ops run eagerly), the
// gradients of sum(r) with respect to x and y into grads[0, 2);
// *out_ops: the ops the tape recorded.
static void step(bool through_call, loom_tensor_handle_t* x,
                 loom_tensor_handle_t* y, bool watch_y,
                 loom_tensor_handle_t** grads, int64_t* out_ops) {
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  if (watch_y) LOOM_ASSERT_OK(loom_tape_watch(tape, y));
  loom_tensor_handle_t* r = NULL;
  if (through_call) {
    LOOM_ASSERT_OK(call2("f", x, y, &r));
  } else {
    loom_tensor_handle_t* product = NULL;
    LOOM_ASSERT_OK(call2("Mul", x, y, &product));
    LOOM_ASSERT_OK(call2("AddV2", product, x, &r));
    loom_tensor_handle_release(product);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  *out_ops = statistics.num_ops;
  loom_tensor_handle_t* sources[2] = {x, y};
  grads[0] = grads[1] = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &r, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  loom_tensor_handle_release(r);
  loom_op_handler_release(tape);
}

static void release_pair(loom_tensor_handle_t** handles) {
  loom_tensor_handle_release(handles[0]);
  loom_tensor_handle_release(handles[1]);
}

// Two steps, each with a new tape watching x: the second call finds the
// replay the first made; each records the call as one node, and the
// gradients are those of f's ops run eagerly (y + 1, NumPy).
static void tapes_of_two_steps_share_one_replay(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  loom_tensor_handle_t* eager[2];
  int64_t eager_ops = 0;
  step(false, x, y, false, eager, &eager_ops);
  assert_int_equal(eager_ops, 2);  // Mul, AddV2
  expect_values(eager[0], kDx, 3);
  assert_null(eager[1]);  // y is not watched
  for (int s = 0; s < 2; ++s) {
    loom_tensor_handle_t* called[2];
    int64_t ops = 0;
    step(true, x, y, false, called, &ops);
    assert_int_equal(ops, 1);  // the call
    expect_same(called[0], eager[0]);
    assert_null(called[1]);
    release_pair(called);
    loom_function_stats_t stats = stats_of(f);
    assert_int_equal(stats.replays_built, 1);
    assert_int_equal(stats.replay_hits, s);
    // The gradient is a backward function, traced at the first step and
    // called at the second.
    assert_int_equal(stats.backward_functions_built, 1);
    assert_int_equal(stats.backward_function_hits, s);
    assert_true(loom_context_has_function(g_context, "f_backward_0"));
  }
  release_pair(eager);
  // Watching y as well is another key: another replay, the gradients of
  // both inputs (x for y, NumPy).
  loom_tensor_handle_t* both[2];
  int64_t ops = 0;
  step(true, x, y, true, both, &ops);
  expect_values(both[0], kDx, 3);
  expect_values(both[1], kX, 3);
  release_pair(both);
  assert_int_equal(stats_of(f).replays_built, 2);
  assert_int_equal(stats_of(f).replay_hits, 1);
  assert_int_equal(stats_of(f).backward_functions_built, 2);
  // Inputs of another shape are another key too.
  static const float kX2[2] = {1, 2};
  static const float kY2[2] = {3, 4};
  static const float kDx2[2] = {4, 5};
  int64_t dims[2] = {1, 2};
  loom_tensor_handle_t* x2 = tensor_of(kX2, 2, dims);
  loom_tensor_handle_t* y2 = tensor_of(kY2, 2, dims);
  step(true, x2, y2, false, both, &ops);
  expect_values(both[0], kDx2, 2);
  release_pair(both);
  assert_int_equal(stats_of(f).replays_built, 3);
  assert_int_equal(stats_of(f).backward_functions_built, 3);
  assert_int_equal(stats_of(f).backward_function_hits, 1);
  loom_tensor_handle_release(x2);
  loom_tensor_handle_release(y2);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  // The backward functions leave the library with f.
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  assert_false(loom_context_has_function(g_context, "f_backward_0"));
  assert_false(loom_context_has_function(g_context, "f_backward_2"));
  loom_function_release(f);
}

// A backward function removed by name is made again at the next gradient.
static void a_removed_backward_function_is_made_again(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  loom_tensor_handle_t* grads[2];
  int64_t ops = 0;
  step(true, x, y, false, grads, &ops);
  release_pair(grads);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f_backward_0"));
  step(true, x, y, false, grads, &ops);
  expect_values(grads[0], kDx, 3);
  release_pair(grads);
  assert_int_equal(stats_of(f).backward_functions_built, 2);
  assert_int_equal(stats_of(f).backward_function_hits, 0);
  assert_true(loom_context_has_function(g_context, "f_backward_0"));
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  assert_false(loom_context_has_function(g_context, "f_backward_0"));
  loom_function_release(f);
}

// An outer tape watching y records the call's gradient (a call of its
// backward function, as one op), which gives a second derivative: d/dy of
// d(sum f)/dx = d(y + 1)/dy = 1.
static void a_call_has_second_derivatives(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  loom_op_handler_t* outer = NULL;
  loom_op_handler_t* inner = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &outer));
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &inner));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, outer));
  LOOM_ASSERT_OK(loom_tape_watch(outer, y));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, inner));
  LOOM_ASSERT_OK(loom_tape_watch(inner, x));
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(call2("f", x, y, &r));
  expect_values(r, kF, 3);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_t* dx = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(inner, &r, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dx));
  expect_values(dx, kDx, 3);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_t* dxdy = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(outer, &dx, 1, &y, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dxdy));
  static const float kOnes[3] = {1, 1, 1};  // d(y + 1)/dy
  expect_values(dxdy, kOnes, 3);
  // The inner gradient called f's backward function, which the outer tape
  // recorded as one call: its gradient is a backward function in turn.
  assert_int_equal(stats_of(f).backward_functions_built, 1);
  assert_true(loom_context_has_function(g_context, "f_backward_0"));
  assert_true(loom_context_has_function(g_context, "f_backward_0_backward_0"));
  loom_tensor_handle_release(dxdy);
  loom_tensor_handle_release(dx);
  loom_tensor_handle_release(r);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  assert_false(loom_context_has_function(g_context, "f_backward_0_backward_0"));
  loom_function_release(f);
}

// s(x, y) = sum(x * y, axis 0): the axes a constant node of the body.
static loom_function_t* add_sum_of_products(void) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "s", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* mul_inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "mul", "Mul", mul_inputs, 2,
                                                NULL, NULL));
  const float zero = 0;  // converted to int32
  int64_t one = 1;
  loom_tensor_handle_t* axes =
      loom_test_tensor(g_context, LOOM_DTYPE_INT32, &zero, 1, &one);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_context, axes, &tensor));
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_tensor(&attrs, "value", tensor));
  LOOM_ASSERT_OK(loom_op_attrs_set_dtype(&attrs, "dtype", LOOM_DTYPE_INT32));
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "axes", "Const", NULL, 0,
                                                &attrs, NULL));
  loom_op_attrs_deinitialize(&attrs);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(axes);
  const char* sum_inputs[] = {"mul:z:0", "axes:output:0"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "sum", "Sum", sum_inputs, 2,
                                                NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "sum:output:0"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  return function;
}

// A body whose gradient reads a constant of the body (Sum's axes) has a
// backward function too: d(sum x*y)/dx = y (NumPy).
static void a_reduction_of_the_body_has_a_backward_function(void** state) {
  (void)state;
  loom_function_t* s = add_sum_of_products();
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  for (int step = 0; step < 2; ++step) {
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, x));
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(call2("s", x, y, &r));
    LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
    loom_tensor_handle_t* dx = NULL;
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &r, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &dx));
    expect_values(dx, kY, 3);
    loom_tensor_handle_release(dx);
    loom_tensor_handle_release(r);
    loom_op_handler_release(tape);
  }
  assert_int_equal(stats_of(s).backward_functions_built, 1);
  assert_int_equal(stats_of(s).backward_function_hits, 1);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "s"));
  loom_function_release(s);
}

// A tape in a trace takes the gradient of a call: the trace records a call
// of f's backward function, and the traced function computes d(sum f)/dx
// (y + 1, NumPy) at every call without making another.
static void a_tape_in_a_trace_calls_the_backward_function(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, "grad_f", &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  int64_t three = 3;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &three, 1));
  loom_tensor_handle_t* x = NULL;
  loom_tensor_handle_t* y = NULL;
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "y", LOOM_DTYPE_FLOAT, &shape, &y));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(call2("f", x, y, &r));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &r, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_function_t* grad_f = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &dx, 1, &grad_f));
  assert_int_equal(stats_of(f).backward_functions_built, 1);
  assert_true(loom_context_has_function(g_context, "f_backward_0"));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, grad_f));
  loom_tensor_handle_t* xv = vector(kX);
  loom_tensor_handle_t* yv = vector(kY);
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_t* got = NULL;
    LOOM_ASSERT_OK(call2("grad_f", xv, yv, &got));
    expect_values(got, kDx, 3);
    loom_tensor_handle_release(got);
  }
  assert_int_equal(stats_of(f).backward_functions_built, 1);
  loom_tensor_handle_release(xv);
  loom_tensor_handle_release(yv);
  loom_tensor_handle_release(dx);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(tape);
  loom_op_handler_release(trace);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "grad_f"));
  loom_function_release(grad_f);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  loom_function_release(f);
}

// A forward accumulator takes a call whose input carries a tangent whole:
// the call's JVP function, traced at the first call, gives f and its
// tangent v * (y + 1) (NumPy), and the next call calls it again.
static void a_forward_accumulator_calls_the_jvp_function(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  static const float kV[3] = {2, -1, 0.5f};
  static const float kJvp[3] = {2.5f, -5, -1};  // v * (y + 1)
  loom_tensor_handle_t* v = vector(kV);
  for (int i = 0; i < 2; ++i) {
    loom_op_handler_t* accumulator = NULL;
    LOOM_ASSERT_OK(loom_forward_accumulator_create(g_context, &accumulator));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_context, accumulator));
    loom_tensor_handle_t* watched = NULL;
    LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, v, &watched));
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(call2("f", watched, y, &r));
    LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
    loom_tensor_handle_t* tangent = NULL;
    LOOM_ASSERT_OK(loom_forward_accumulator_jvp(
        accumulator, r, LOOM_UNCONNECTED_NONE, &tangent));
    expect_values(tangent, kJvp, 3);
    expect_values(r, kF, 3);
    loom_tensor_handle_release(tangent);
    loom_tensor_handle_release(r);
    loom_tensor_handle_release(watched);
    loom_op_handler_release(accumulator);
    assert_true(loom_context_has_function(g_context, "f_jvp_0"));
    assert_false(loom_context_has_function(g_context, "f_jvp_1"));
  }
  loom_tensor_handle_release(v);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  assert_false(loom_context_has_function(g_context, "f_jvp_0"));
  loom_function_release(f);
}

// Runs f under a logging handler (whole calls or not) and returns what it
// printed (free()).
static char* logged(bool whole_calls) {
  char* text = NULL;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  assert_non_null(stream);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_create(g_context, stream, &logging));
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_set_whole_calls(logging, whole_calls));
  loom_tensor_handle_t* x = vector(kX);
  loom_tensor_handle_t* y = vector(kY);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, logging));
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(call2("f", x, y, &r));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  expect_values(r, kF, 3);
  // Whole: the call. Else two FunctionInputs, Mul, AddV2, FunctionOutput.
  assert_int_equal(loom_scope_logging_handler_count(logging),
                   whole_calls ? 1 : 5);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(logging);
  fclose(stream);
  return text;
}

static void a_logging_handler_logs_a_call_whole_or_its_body(void** state) {
  (void)state;
  loom_function_t* f = add_f("f");
  char* text = logged(true);
  assert_string_equal(text, "[1] f(float [3], float [3]) (function call)\n");
  free(text);
  // By default the body, between the call's indicator ops.
  text = logged(false);
  const char* mul = strstr(text, "] Mul(float [3], float [3])");
  assert_non_null(mul);
  assert_non_null(strstr(text, "] FunctionInput(float [3])"));
  assert_true(strstr(text, "] FunctionInput(float [3])") < mul);
  assert_non_null(strstr(mul, "] AddV2(float [3], float [3])"));
  free(text);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  loom_function_release(f);
}

static void whole_call_errors(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_scope_logging_handler_set_whole_calls(NULL, true),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_scope_logging_handler_set_whole_calls: handler is "
                     "NULL");
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_STATUS(loom_scope_logging_handler_set_whole_calls(tape, true),
                     LOOM_STATUS_INVALID_ARGUMENT, "not a logging handler");
  loom_op_handler_release(tape);
}

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tapes_of_two_steps_share_one_replay),
      cmocka_unit_test(a_removed_backward_function_is_made_again),
      cmocka_unit_test(a_call_has_second_derivatives),
      cmocka_unit_test(a_tape_in_a_trace_calls_the_backward_function),
      cmocka_unit_test(a_reduction_of_the_body_has_a_backward_function),
      cmocka_unit_test(a_forward_accumulator_calls_the_jvp_function),
      cmocka_unit_test(a_logging_handler_logs_a_call_whole_or_its_body),
      cmocka_unit_test(whole_call_errors),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
