// Control flow ops run eagerly (src/function/function_control_flow.c): If,
// StatelessIf, Case, StatelessCase, While and StatelessWhile with function
// attrs, in synchronous and asynchronous contexts; a gradient tape and a
// forward accumulator around them see the calls of the branch or of each
// iteration, and a logging handler the indicator ops around them; a
// condition on the vmap or the parallel handler makes that handler see the
// If itself; and the errors, each message asserted.
//
// Reference values from NumPy (float32), gradients from PyTorch autograd:
//   x = [1.5, -2, 0.5]
//   sin(x) = [0.997495, -0.9092974, 0.47942555]
//   cos(x) = [0.0707372, -0.4161468, 0.87758255]
//   square(x) = [2.25, 4, 0.25]; x**3 = [3.375, -8, 0.125]
//   d sum(sin x)/dx = cos x; d sum(cos x)/dx = -sin x
//   d sum(x*x*x)/dx (three Muls in a loop) = [6.75, 12, 0.75]

#include <math.h>
#include <stdlib.h>

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/handlers.h"
#include "loom/loom.h"
#include "loom/parallel.h"
#include "loom/program.h"
#include "loom/trace.h"
#include "loom/tstring.h"
#include "loom/vmap.h"
#include "test_support.h"

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kSin[3] = {0.997495f, -0.9092974f, 0.47942555f};
static const float kCos[3] = {0.0707372f, -0.4161468f, 0.87758255f};
static const float kNegSin[3] = {-0.997495f, 0.9092974f, -0.47942555f};
static const float kSquare[3] = {2.25f, 4, 0.25f};
static const float kCube[3] = {3.375f, -8, 0.125f};
static const float kCubeGrad[3] = {6.75f, 12, 0.75f};

static loom_context_t* new_context(bool async) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = async;
  loom_context_t* context = NULL;
  LOOM_ASSERT_OK(loom_context_create(&options, &context));
  return context;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

static loom_tensor_handle_t* tensor_of(loom_context_t* context,
                                       loom_dtype_t dtype, const float* values,
                                       int32_t rank, const int64_t* dims) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(), dtype,
                                          &shape, &tensor));
  int64_t n = loom_tensor_num_elements(tensor);
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)values[i];
        break;
      case LOOM_DTYPE_BOOL:
        ((bool*)data)[i] = values[i] != 0;
        break;
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = values[i];
        break;
      default:
        memset((char*)data + i * (int64_t)loom_dtype_size(dtype), 0,
               loom_dtype_size(dtype));
        break;
    }
  }
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* scalar(loom_context_t* context, loom_dtype_t dtype,
                                    float value) {
  return tensor_of(context, dtype, &value, 0, NULL);
}

static loom_tensor_handle_t* string_scalar(loom_context_t* context,
                                           const char* text) {
  loom_shape_t shape = loom_shape_scalar();
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_string(loom_allocator_system(), &shape, &tensor));
  LOOM_ASSERT_OK(
      loom_tstring_copy(loom_tensor_string_at(tensor, 0), text, strlen(text)));
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static loom_tensor_handle_t* vector(loom_context_t* context,
                                    const float* values) {
  int64_t three = 3;
  return tensor_of(context, LOOM_DTYPE_FLOAT, values, 1, &three);
}

// Values within 1e-6 relative of NumPy's (the kernels' sin and cos may
// round differently in the last place).
static void expect_values(loom_context_t* context, loom_tensor_handle_t* handle,
                          const float* expected, int64_t count) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, handle, &tensor));
  assert_int_equal(loom_tensor_num_elements(tensor), count);
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_FLOAT);
  for (int64_t i = 0; i < count; ++i) {
    float actual = ((const float*)loom_tensor_data(tensor))[i];
    if (fabsf(actual - expected[i]) > 1e-6f * fmaxf(1, fabsf(expected[i]))) {
      fail_msg("element %lld: %.9g, expected %.9g", (long long)i, actual,
               expected[i]);
    }
  }
  loom_tensor_release(tensor);
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

// name(x: float) = op(x), op's output argument `output`.
static void add_unary(loom_context_t* context, const char* name, const char* op,
                      const char* output, loom_dtype_t out_dtype) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), name, &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "n", op, inputs, 1, NULL, NULL));
  char source[64];
  snprintf(source, sizeof(source), "n:%s:0", output);
  LOOM_ASSERT_OK(
      loom_function_builder_add_output(b, "r", out_dtype, NULL, source));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(context, function));
  loom_function_release(function);
}

// x**n by a loop over (i, one, n, acc, x): cond i < n, body (i + one, one,
// n, acc * x, x).
static void add_power_loop(loom_context_t* context) {
  static const char* const kNames[] = {"i", "one", "n", "acc", "x"};
  static const loom_dtype_t kTypes[] = {LOOM_DTYPE_INT32, LOOM_DTYPE_INT32,
                                        LOOM_DTYPE_INT32, LOOM_DTYPE_FLOAT,
                                        LOOM_DTYPE_FLOAT};
  for (int f = 0; f < 2; ++f) {
    loom_function_builder_t* b = NULL;
    LOOM_ASSERT_OK(loom_function_builder_create(
        loom_allocator_system(), f == 0 ? "less" : "power_step", &b));
    for (int i = 0; i < 5; ++i) {
      LOOM_ASSERT_OK(
          loom_function_builder_add_input(b, kNames[i], kTypes[i], NULL, NULL));
    }
    if (f == 0) {
      const char* inputs[] = {"i", "n"};
      LOOM_ASSERT_OK(loom_function_builder_add_node(b, "less", "Less", inputs,
                                                    2, NULL, NULL));
      LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_BOOL,
                                                      NULL, "less:z:0"));
    } else {
      const char* inc[] = {"i", "one"};
      const char* mul[] = {"acc", "x"};
      LOOM_ASSERT_OK(loom_function_builder_add_node(b, "inc", "AddV2", inc, 2,
                                                    NULL, NULL));
      LOOM_ASSERT_OK(
          loom_function_builder_add_node(b, "mul", "Mul", mul, 2, NULL, NULL));
      const char* sources[] = {"inc:z:0", "one", "n", "mul:z:0", "x"};
      static const char* const kNext[] = {"i2", "one2", "n2", "acc2", "x2"};
      for (int i = 0; i < 5; ++i) {
        LOOM_ASSERT_OK(loom_function_builder_add_output(b, kNext[i], kTypes[i],
                                                        NULL, sources[i]));
      }
    }
    loom_function_t* function = NULL;
    LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
    LOOM_ASSERT_OK(loom_context_add_function(context, function));
    loom_function_release(function);
  }
}

static void add_functions(loom_context_t* context) {
  add_unary(context, "sin", "Sin", "y", LOOM_DTYPE_FLOAT);
  add_unary(context, "cos", "Cos", "y", LOOM_DTYPE_FLOAT);
  add_unary(context, "square", "Square", "y", LOOM_DTYPE_FLOAT);
  add_unary(context, "shape_of", "Shape", "output", LOOM_DTYPE_INT32);
  add_power_loop(context);
}

static int setup(void** state) {
  (void)state;
  g_context = new_context(false);
  add_functions(g_context);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

//===----------------------------------------------------------------------===//
// Running the ops
//===----------------------------------------------------------------------===//

typedef struct op_setup_t {
  const char* func_attrs[2][2];  // {attr, function}; NULL attr: unused
  const char* const* branches;   // Case
  int32_t num_branches;
  bool set_tout;
  loom_dtype_t tout[5];
  int32_t num_tout;
  const loom_shape_t* output_shapes;
  int32_t num_shapes;
} op_setup_t;

// Runs `op_name` with `setup` on inputs[0, n) into results[0, capacity).
static loom_status_t run(loom_context_t* context, const char* op_name,
                         const op_setup_t* setup,
                         loom_tensor_handle_t* const* inputs, int32_t n,
                         loom_tensor_handle_t** results, int32_t capacity,
                         int32_t* out_count) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, op_name, &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  loom_status_t status = loom_ok_status();
  for (int i = 0; !status && i < 2 && setup->func_attrs[i][0]; ++i) {
    const char* f = setup->func_attrs[i][1];
    status =
        loom_op_attrs_set_func(attrs, setup->func_attrs[i][0], f, strlen(f));
  }
  if (!status && setup->num_branches) {
    loom_string_view_t views[4];
    for (int32_t i = 0; i < setup->num_branches; ++i) {
      views[i] = (loom_string_view_t){.data = setup->branches[i],
                                      .size = strlen(setup->branches[i])};
    }
    loom_attr_value_t list = {.kind = LOOM_ATTR_KIND_FUNC,
                              .is_list = true,
                              .count = setup->num_branches,
                              .u.list = views};
    status = loom_op_attrs_set_value(attrs, "branches", &list);
  }
  if (!status && setup->set_tout) {
    status = loom_op_attrs_set_list(attrs, "Tout", LOOM_ATTR_KIND_DTYPE,
                                    setup->tout, setup->num_tout);
  }
  if (!status && setup->num_shapes) {
    status = loom_op_attrs_set_shape_list(
        attrs, "output_shapes", setup->output_shapes, setup->num_shapes);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, results, capacity, &count);
  if (out_count) *out_count = count;
  loom_eager_op_destroy(op);
  return status;
}

static const op_setup_t kSinOrCos = {
    .func_attrs = {{"then_branch", "sin"}, {"else_branch", "cos"}},
    .set_tout = true,
    .tout = {LOOM_DTYPE_FLOAT},
    .num_tout = 1,
};

// If (or StatelessIf) cond ? sin(x) : cos(x).
static loom_tensor_handle_t* sin_or_cos(loom_context_t* context,
                                        const char* op_name,
                                        loom_tensor_handle_t* cond,
                                        loom_tensor_handle_t* x) {
  loom_tensor_handle_t* inputs[2] = {cond, x};
  loom_tensor_handle_t* r = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(run(context, op_name, &kSinOrCos, inputs, 2, &r, 1, &count));
  assert_int_equal(count, 1);
  return r;
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

static void if_converts_the_condition_as_tensorflow_does(void** state) {
  (void)state;
  loom_context_t* c = g_context;
  loom_tensor_handle_t* x = vector(c, kX);
  int64_t one = 1;
  int64_t zero = 0;
  static const float kZero = 0;
  struct {
    loom_tensor_handle_t* cond;
    bool truth;
  } cases[] = {
      {scalar(c, LOOM_DTYPE_BOOL, 1), true},
      {scalar(c, LOOM_DTYPE_BOOL, 0), false},
      {scalar(c, LOOM_DTYPE_FLOAT, 0), false},
      {scalar(c, LOOM_DTYPE_FLOAT, -0.5f), true},
      {scalar(c, LOOM_DTYPE_INT32, 3), true},
      {string_scalar(c, ""), false},
      {string_scalar(c, "a"), true},
      // Not a scalar: non-empty is true, whatever the values.
      {tensor_of(c, LOOM_DTYPE_FLOAT, &kZero, 1, &one), true},
      {tensor_of(c, LOOM_DTYPE_BOOL, NULL, 1, &zero), false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    const char* op = i % 2 ? "StatelessIf" : "If";
    loom_tensor_handle_t* r = sin_or_cos(c, op, cases[i].cond, x);
    expect_values(c, r, cases[i].truth ? kSin : kCos, 3);
    loom_tensor_handle_release(r);
    loom_tensor_handle_release(cases[i].cond);
  }
  loom_tensor_handle_release(x);
}

//===----------------------------------------------------------------------===//
// Case
//===----------------------------------------------------------------------===//

static void case_runs_the_indexed_branch_or_the_last(void** state) {
  (void)state;
  loom_context_t* c = g_context;
  static const char* const kBranches[] = {"sin", "cos", "square"};
  op_setup_t setup = {
      .branches = kBranches,
      .num_branches = 3,
      .set_tout = true,
      .tout = {LOOM_DTYPE_FLOAT},
      .num_tout = 1,
  };
  loom_tensor_handle_t* x = vector(c, kX);
  struct {
    int32_t index;
    const float* expected;
  } cases[] = {{0, kSin}, {1, kCos}, {2, kSquare}, {3, kSquare}, {-1, kSquare}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    loom_tensor_handle_t* index =
        scalar(c, LOOM_DTYPE_INT32, (float)cases[i].index);
    loom_tensor_handle_t* inputs[2] = {index, x};
    loom_tensor_handle_t* r = NULL;
    LOOM_ASSERT_OK(run(c, i % 2 ? "StatelessCase" : "Case", &setup, inputs, 2,
                       &r, 1, NULL));
    expect_values(c, r, cases[i].expected, 3);
    loom_tensor_handle_release(r);
    loom_tensor_handle_release(index);
  }
  loom_tensor_handle_release(x);
}

//===----------------------------------------------------------------------===//
// While
//===----------------------------------------------------------------------===//

static const op_setup_t kPowerLoop = {
    .func_attrs = {{"cond", "less"}, {"body", "power_step"}},
};

// x**n by the loop; writes the five loop variables.
static loom_status_t power(loom_context_t* context, const char* op_name,
                           loom_tensor_handle_t* x, int32_t n,
                           loom_tensor_handle_t** out) {
  static const float kOnes[3] = {1, 1, 1};
  loom_tensor_handle_t* inputs[5] = {
      scalar(context, LOOM_DTYPE_INT32, 0),
      scalar(context, LOOM_DTYPE_INT32, 1),
      scalar(context, LOOM_DTYPE_INT32, (float)n),
      vector(context, kOnes),
      x,
  };
  int32_t count = 0;
  loom_status_t status =
      run(context, op_name, &kPowerLoop, inputs, 5, out, 5, &count);
  assert_int_equal(count, status ? 0 : 5);
  for (int i = 0; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return status;
}

static void release_all(loom_tensor_handle_t** handles, int32_t count) {
  for (int32_t i = 0; i < count; ++i) loom_tensor_handle_release(handles[i]);
}

static void expect_int(loom_context_t* context, loom_tensor_handle_t* handle,
                       int32_t expected) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(context, handle, &tensor));
  assert_int_equal(*(const int32_t*)loom_tensor_data(tensor), expected);
  loom_tensor_release(tensor);
}

static void while_carries_the_loop_variables(void** state) {
  (void)state;
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* out[5];
  LOOM_ASSERT_OK(power(g_context, "While", x, 3, out));
  expect_int(g_context, out[0], 3);
  expect_values(g_context, out[3], kCube, 3);
  assert_ptr_equal(out[4], x);  // passed through unchanged
  release_all(out, 5);
  // No iteration: the inputs come back.
  LOOM_ASSERT_OK(power(g_context, "StatelessWhile", x, 0, out));
  expect_int(g_context, out[0], 0);
  static const float kOnes[3] = {1, 1, 1};
  expect_values(g_context, out[3], kOnes, 3);
  release_all(out, 5);
  loom_tensor_handle_release(x);
}

//===----------------------------------------------------------------------===//
// Gradients and tangents
//===----------------------------------------------------------------------===//

// The gradient of sum(r) with respect to x, where `body` makes r from x
// under a tape; *out_ops: the ops the tape recorded.
static loom_tensor_handle_t* gradient_of(
    loom_tensor_handle_t* (*body)(loom_tensor_handle_t* x, void* arg),
    void* arg, int64_t* out_ops) {
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  loom_tensor_handle_t* r = body(x, arg);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  *out_ops = statistics.num_ops;
  loom_tensor_handle_t* grad = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &r, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &grad));
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_op_handler_release(tape);
  return grad;
}

static loom_tensor_handle_t* if_body(loom_tensor_handle_t* x, void* arg) {
  loom_tensor_handle_t* cond = scalar(g_context, LOOM_DTYPE_BOOL, *(float*)arg);
  loom_tensor_handle_t* r = sin_or_cos(g_context, "If", cond, x);
  loom_tensor_handle_release(cond);
  return r;
}

static loom_tensor_handle_t* while_body(loom_tensor_handle_t* x, void* arg) {
  (void)arg;
  loom_tensor_handle_t* out[5];
  LOOM_ASSERT_OK(power(g_context, "While", x, 3, out));
  loom_tensor_handle_t* r = out[3];
  out[3] = NULL;
  release_all(out, 5);
  return r;
}

static void a_tape_records_the_ops_that_ran(void** state) {
  (void)state;
  int64_t ops = 0;
  float truth = 1;
  loom_tensor_handle_t* grad = gradient_of(if_body, &truth, &ops);
  expect_values(g_context, grad, kCos, 3);  // PyTorch: d sin = cos
  // IfInput, the call of the branch (one op), IfOutput: not the If.
  assert_int_equal(ops, 3);
  loom_tensor_handle_release(grad);
  truth = 0;
  grad = gradient_of(if_body, &truth, &ops);
  expect_values(g_context, grad, kNegSin, 3);  // PyTorch: d cos = -sin
  assert_int_equal(ops, 3);
  loom_tensor_handle_release(grad);
  grad = gradient_of(while_body, NULL, &ops);
  expect_values(g_context, grad, kCubeGrad, 3);  // PyTorch: 3 x**2
  // The ops touching a tracked tensor: x's WhileInput, the four calls of
  // the condition and the three of the body (each one op), and the five
  // WhileOutputs (every loop variable comes out of a recorded call of the
  // body). Not the While.
  assert_int_equal(ops, 13);
  loom_tensor_handle_release(grad);
}

// A condition made from a watched tensor lives on the accumulator, which
// gives it one value (the primal): the If reads it and runs op by op, and
// the tangent of sin(x) is cos(x) (PyTorch). x * x is non-empty: true.
static void if_on_a_watched_condition(loom_context_t* context,
                                      loom_op_handler_t* accumulator,
                                      loom_tensor_handle_t* watched) {
  loom_tensor_handle_t* pair[2] = {watched, watched};
  loom_tensor_handle_t* cond = NULL;
  LOOM_ASSERT_OK(
      run(context, "Mul", &(op_setup_t){0}, pair, 2, &cond, 1, NULL));
  assert_string_equal(
      loom_op_handler_type_name(loom_tensor_handle_handler(cond)), "FORWARD");
  loom_tensor_handle_t* sin = sin_or_cos(context, "If", cond, watched);
  loom_tensor_handle_release(cond);
  loom_tensor_handle_t* tangent = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_jvp(accumulator, sin,
                                              LOOM_UNCONNECTED_NONE, &tangent));
  expect_values(context, sin, kSin, 3);
  expect_values(context, tangent, kCos, 3);
  loom_tensor_handle_release(tangent);
  loom_tensor_handle_release(sin);
}

static void a_forward_accumulator_sees_the_ops_that_ran(void** state) {
  (void)state;
  static const float kOnes[3] = {1, 1, 1};
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* ones = vector(g_context, kOnes);
  for (int k = 0; k < 2; ++k) {
    loom_op_handler_t* accumulator = NULL;
    LOOM_ASSERT_OK(loom_forward_accumulator_create(g_context, &accumulator));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_context, accumulator));
    loom_tensor_handle_t* watched = NULL;
    LOOM_ASSERT_OK(
        loom_forward_accumulator_watch(accumulator, x, ones, &watched));
    loom_tensor_handle_t* r = NULL;
    if (k == 0) {
      if_on_a_watched_condition(g_context, accumulator, watched);
      float truth = 0;
      r = if_body(watched, &truth);
    } else {
      r = while_body(watched, NULL);
    }
    LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
    loom_tensor_handle_t* tangent = NULL;
    LOOM_ASSERT_OK(loom_forward_accumulator_jvp(
        accumulator, r, LOOM_UNCONNECTED_NONE, &tangent));
    expect_values(g_context, r, k == 0 ? kCos : kCube, 3);
    expect_values(g_context, tangent, k == 0 ? kNegSin : kCubeGrad, 3);
    loom_tensor_handle_release(tangent);
    loom_tensor_handle_release(r);
    loom_tensor_handle_release(watched);
    loom_op_handler_release(accumulator);
  }
  loom_tensor_handle_release(ones);
  loom_tensor_handle_release(x);
}

//===----------------------------------------------------------------------===//
// A condition on a handler
//===----------------------------------------------------------------------===//

// A batched condition lives on the vmap handler, which then sees the If
// itself (and runs each branch taken batched, no example alone); with an
// unbatched condition the If runs op by op and vmap sees the branch's Sin.
static void a_condition_on_a_handler_makes_it_see_the_if(void** state) {
  (void)state;
  loom_context_t* c = g_context;
  loom_tensor_handle_t* x = vector(c, kX);
  int64_t two = 2;
  static const float kTruths[2] = {1, 0};
  loom_tensor_handle_t* conds = tensor_of(c, LOOM_DTYPE_BOOL, kTruths, 1, &two);
  loom_op_handler_t* vmap = NULL;
  LOOM_ASSERT_OK(loom_vmap_create(c, 2, &vmap));
  LOOM_ASSERT_OK(loom_context_enter_scope(c, vmap));
  loom_tensor_handle_t* cond = NULL;
  LOOM_ASSERT_OK(loom_vmap_in(vmap, conds, 0, &cond));
  loom_tensor_handle_t* r = sin_or_cos(c, "If", cond, x);
  loom_tensor_handle_t* batched = NULL;
  LOOM_ASSERT_OK(loom_vmap_out(vmap, r, 0, &batched));
  assert_int_equal(loom_vmap_fallback_count(vmap, "If"), 0);
  loom_tensor_handle_release(r);
  // Unbatched: op by op.
  loom_tensor_handle_t* truth = scalar(c, LOOM_DTYPE_BOOL, 1);
  r = sin_or_cos(c, "If", truth, x);
  assert_int_equal(loom_vmap_fallback_count(vmap, "If"), 0);
  expect_values(c, r, kSin, 3);
  LOOM_ASSERT_OK(loom_context_exit_scope(c));
  float expected[6];
  memcpy(expected, kSin, sizeof(kSin));
  memcpy(expected + 3, kCos, sizeof(kCos));
  expect_values(c, batched, expected, 6);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(truth);
  loom_tensor_handle_release(batched);
  loom_tensor_handle_release(cond);
  loom_tensor_handle_release(conds);
  loom_op_handler_release(vmap);
  loom_tensor_handle_release(x);
}

// A parallel condition whose components differ has no one value: the
// parallel handler sees the If and runs it per component, each running its
// branch op by op.
static void a_parallel_condition_runs_per_component(void** state) {
  (void)state;
  loom_context_t* c = new_context(false);
  add_functions(c);
  LOOM_ASSERT_OK(loom_context_set_cpu_device_count(c, 2));
  const char* devices[] = {"CPU:0", "CPU:1"};
  loom_op_handler_t* parallel = NULL;
  LOOM_ASSERT_OK(loom_parallel_handler_create(c, devices, 2, &parallel));
  loom_tensor_handle_t* truths[2] = {scalar(c, LOOM_DTYPE_BOOL, 1),
                                     scalar(c, LOOM_DTYPE_BOOL, 0)};
  loom_tensor_handle_t* cond = NULL;
  LOOM_ASSERT_OK(loom_parallel_pack(parallel, truths, 2, &cond));
  loom_tensor_handle_t* x = vector(c, kX);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(run(c, "If", &kSinOrCos, (loom_tensor_handle_t*[]){cond, x}, 2,
                     &r, 1, NULL));
  assert_true(loom_parallel_is_parallel_value(r));
  loom_tensor_handle_t* components[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(parallel, r, components, 2));
  expect_values(c, components[0], kSin, 3);
  expect_values(c, components[1], kCos, 3);
  loom_tensor_handle_release(components[0]);
  loom_tensor_handle_release(components[1]);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(cond);
  loom_tensor_handle_release(truths[0]);
  loom_tensor_handle_release(truths[1]);
  loom_op_handler_release(parallel);
  loom_context_destroy(c);
}

//===----------------------------------------------------------------------===//
// Asynchronous contexts
//===----------------------------------------------------------------------===//

static void control_flow_in_an_asynchronous_context(void** state) {
  (void)state;
  loom_context_t* c = new_context(true);
  add_functions(c);
  loom_tensor_handle_t* x = vector(c, kX);
  loom_tensor_handle_t* cond = scalar(c, LOOM_DTYPE_BOOL, 0);
  loom_tensor_handle_t* r = sin_or_cos(c, "If", cond, x);
  expect_values(c, r, kCos, 3);
  loom_tensor_handle_release(r);
  loom_tensor_handle_t* out[5];
  LOOM_ASSERT_OK(power(c, "While", x, 3, out));
  expect_values(c, out[3], kCube, 3);
  release_all(out, 5);
  LOOM_ASSERT_OK(loom_context_wait(c));
  // A condition on a forward accumulator, maybe not computed yet.
  static const float kOnes[3] = {1, 1, 1};
  loom_tensor_handle_t* ones = vector(c, kOnes);
  loom_op_handler_t* accumulator = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_create(c, &accumulator));
  LOOM_ASSERT_OK(loom_context_enter_scope(c, accumulator));
  loom_tensor_handle_t* watched = NULL;
  LOOM_ASSERT_OK(
      loom_forward_accumulator_watch(accumulator, x, ones, &watched));
  if_on_a_watched_condition(c, accumulator, watched);
  LOOM_ASSERT_OK(loom_context_exit_scope(c));
  loom_tensor_handle_release(watched);
  loom_op_handler_release(accumulator);
  loom_tensor_handle_release(ones);
  // A condition whose kernel fails fails the op (it must be read): x[7].
  int64_t one = 1;
  static const float kSeven = 7;
  loom_tensor_handle_t* seven =
      tensor_of(c, LOOM_DTYPE_INT32, &kSeven, 1, &one);
  loom_tensor_handle_t* inputs[2] = {x, seven};
  loom_tensor_handle_t* bad = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(
      run(c, "Gather", &(op_setup_t){0}, inputs, 2, &bad, 1, &count));
  loom_tensor_handle_release(seven);
  LOOM_ASSERT_STATUS(run(c, "If", &kSinOrCos, (loom_tensor_handle_t*[]){bad, x},
                         2, &r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: input 0 ('cond'): Gather: indices[0] = 7 is not in "
                     "[0, 3)");
  loom_context_clear_error(c);
  loom_tensor_handle_release(bad);
  loom_tensor_handle_release(cond);
  loom_tensor_handle_release(x);
  loom_context_destroy(c);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void if_and_case_errors(void** state) {
  (void)state;
  loom_context_t* c = g_context;
  loom_tensor_handle_t* x = vector(c, kX);
  loom_tensor_handle_t* truth = scalar(c, LOOM_DTYPE_BOOL, 1);
  loom_tensor_handle_t* inputs[3] = {truth, x, x};
  loom_tensor_handle_t* r[2] = {NULL, NULL};
  op_setup_t setup = kSinOrCos;
  // Wrong arity: sin takes one input.
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 3, r, 2, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: attr 'then_branch': function 'sin' takes 1 inputs, "
                     "but the op passes it 2");
  // Tout listing two outputs.
  setup.tout[1] = LOOM_DTYPE_FLOAT;
  setup.num_tout = 2;
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 2, r, 2, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: attr 'then_branch': function 'sin' returns 1 "
                     "outputs, expected 2 (attr 'Tout')");
  // Tout's type is not the branch's.
  setup.tout[0] = LOOM_DTYPE_INT32;
  setup.num_tout = 1;
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: attr 'then_branch': function 'sin' output 0 has "
                     "dtype float, but attr 'Tout' element 0 is int32");
  // No Tout.
  setup.set_tout = false;
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'If': attr 'Tout' (\"Tout: list(type) >= 0\") is not "
                     "set and has no default");
  // An unknown branch function.
  setup = kSinOrCos;
  setup.func_attrs[0][1] = "nope";
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_NOT_FOUND,
                     "If: attr 'then_branch': function 'nope' is not in the "
                     "context's function library");
  // A condition that is not convertible.
  loom_tensor_handle_t* half = scalar(c, LOOM_DTYPE_HALF, 0);
  inputs[0] = half;
  LOOM_ASSERT_STATUS(run(c, "If", &kSinOrCos, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: input 0 ('cond'): half cannot be converted to a "
                     "boolean");
  // Too few result slots.
  inputs[0] = truth;
  LOOM_ASSERT_STATUS(run(c, "If", &kSinOrCos, inputs, 2, r, 0, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: Expecting 1 outputs, but *num_retvals is 0");
  // output_shapes of the wrong length.
  setup = kSinOrCos;
  loom_shape_t shapes[2] = {loom_shape_unknown(), loom_shape_unknown()};
  setup.output_shapes = shapes;
  setup.num_shapes = 2;
  LOOM_ASSERT_STATUS(run(c, "If", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "If: attr 'output_shapes' has 2 shapes, but the op has 1 "
                     "outputs");
  // Case: a branch index that is not a scalar, a wrong dtype.
  static const char* const kBranches[] = {"sin", "cos"};
  setup = (op_setup_t){.branches = kBranches,
                       .num_branches = 2,
                       .set_tout = true,
                       .tout = {LOOM_DTYPE_FLOAT},
                       .num_tout = 1};
  int64_t two = 2;
  static const float kIndices[2] = {0, 1};
  loom_tensor_handle_t* indices =
      tensor_of(c, LOOM_DTYPE_INT32, kIndices, 1, &two);
  inputs[0] = indices;
  LOOM_ASSERT_STATUS(run(c, "Case", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Case: branch_index must be scalar, got shape [2]");
  inputs[0] = truth;
  LOOM_ASSERT_STATUS(run(c, "Case", &setup, inputs, 2, r, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'Case': input 0 ('branch_index') has dtype bool, "
                     "expected int32");
  loom_tensor_handle_release(indices);
  loom_tensor_handle_release(half);
  loom_tensor_handle_release(truth);
  loom_tensor_handle_release(x);
}

// sum_step(x: float[3], axis: int32) = (Sum(x, axis), axis): changes the
// shape of its first loop variable.
static void add_sum_step(loom_context_t* context) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "sum_step", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "axis", LOOM_DTYPE_INT32, NULL, NULL));
  const char* inputs[] = {"x", "axis"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "sum", "Sum", inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "s", LOOM_DTYPE_FLOAT,
                                                  NULL, "sum:output:0"));
  LOOM_ASSERT_OK(
      loom_function_builder_add_output(b, "a", LOOM_DTYPE_INT32, NULL, "axis"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(context, function));
  loom_function_release(function);
}

static void while_errors(void** state) {
  (void)state;
  loom_context_t* c = g_context;
  loom_tensor_handle_t* x = vector(c, kX);
  loom_tensor_handle_t* out[5];
  // The body's output dtype is not its loop variable's: Shape gives int32.
  op_setup_t setup = {.func_attrs = {{"cond", "sin"}, {"body", "shape_of"}}};
  LOOM_ASSERT_STATUS(run(c, "While", &setup, &x, 1, out, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "While: attr 'body': function 'shape_of' output 0 has "
                     "dtype int32, but loop variable 0 is float");
  // A condition function with two inputs for one loop variable.
  setup.func_attrs[0][1] = "less";
  LOOM_ASSERT_STATUS(run(c, "While", &setup, &x, 1, out, 1, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "While: attr 'cond': function 'less' takes 5 inputs, but "
                     "the op passes it 1");
  // An unknown condition function.
  setup.func_attrs[0][1] = "missing";
  LOOM_ASSERT_STATUS(run(c, "While", &setup, &x, 1, out, 1, NULL),
                     LOOM_STATUS_NOT_FOUND,
                     "While: attr 'cond': function 'missing' is not in the "
                     "context's function library");
  // The body changes a loop variable's shape.
  add_sum_step(c);
  loom_tensor_handle_t* axis = scalar(c, LOOM_DTYPE_INT32, 0);
  loom_tensor_handle_t* inputs[2] = {x, axis};
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "first", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "axis", LOOM_DTYPE_INT32, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT, NULL, "x"));
  loom_function_t* first = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &first));
  LOOM_ASSERT_OK(loom_context_add_function(c, first));
  loom_function_release(first);
  setup = (op_setup_t){.func_attrs = {{"cond", "first"}, {"body", "sum_step"}}};
  LOOM_ASSERT_STATUS(run(c, "While", &setup, inputs, 2, out, 2, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "While: attr 'body': function 'sum_step' output 0 has "
                     "shape [], but loop variable 0 has shape [3] (set attr "
                     "'output_shapes' to let it change)");
  // output_shapes says [3] for the first.
  int64_t three = 3;
  loom_shape_t shapes[2];
  LOOM_ASSERT_OK(loom_shape_initialize(&shapes[0], &three, 1));
  shapes[1] = loom_shape_scalar();
  setup.output_shapes = shapes;
  setup.num_shapes = 2;
  LOOM_ASSERT_STATUS(run(c, "While", &setup, inputs, 2, out, 2, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "While: attr 'body': function 'sum_step' output 0 has "
                     "shape [], but attr 'output_shapes' element 0 is [3]");
  // A failing body names the op, the attr and the function's node.
  loom_tensor_handle_t* loop[5] = {
      scalar(c, LOOM_DTYPE_INT32, 0), scalar(c, LOOM_DTYPE_INT32, 1),
      scalar(c, LOOM_DTYPE_INT32, 2), vector(c, kX), NULL};
  int64_t two = 2;
  static const float kTwo[2] = {1, 2};
  loop[4] = tensor_of(c, LOOM_DTYPE_FLOAT, kTwo, 1, &two);
  LOOM_ASSERT_STATUS(run(c, "While", &kPowerLoop, loop, 5, out, 5, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "While: attr 'body': function 'power_step': node 'mul' "
                     "(Mul): ");
  release_all(loop, 5);
  loom_tensor_handle_release(axis);
  loom_tensor_handle_release(x);
  LOOM_ASSERT_OK(loom_context_remove_function(c, "sum_step"));
  LOOM_ASSERT_OK(loom_context_remove_function(c, "first"));
}

//===----------------------------------------------------------------------===//
// The indicator ops handlers see
//===----------------------------------------------------------------------===//

// Runs `body` under a logging handler and returns what it printed (free()).
static char* logged(void (*body)(void* arg), void* arg) {
  char* text = NULL;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  assert_non_null(stream);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(
      loom_scope_logging_handler_create(g_context, stream, &logging));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, logging));
  body(arg);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_op_handler_release(logging);
  fclose(stream);
  return text;
}

// Each of names[0, n) appears in `text` as an op ("Name("), in this order.
static void expect_ops_in_order(const char* text, const char* const* names,
                                int32_t n) {
  const char* cursor = text;
  for (int32_t i = 0; i < n; ++i) {
    char op[64];
    snprintf(op, sizeof(op), "] %s(", names[i]);
    const char* found = strstr(cursor, op);
    if (!found)
      fail_msg("no %s after position %d in:\n%s", op, (int)(cursor - text),
               text);
    cursor = found + strlen(op);
  }
}

static int32_t count_ops(const char* text, const char* name) {
  char op[64];
  snprintf(op, sizeof(op), "] %s(", name);
  int32_t count = 0;
  for (const char* p = strstr(text, op); p; p = strstr(p + 1, op)) ++count;
  return count;
}

static void log_if(void* arg) {
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* cond = scalar(g_context, LOOM_DTYPE_BOOL, *(float*)arg);
  loom_tensor_handle_t* r = sin_or_cos(g_context, "If", cond, x);
  expect_values(g_context, r, *(float*)arg ? kSin : kCos, 3);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(cond);
  loom_tensor_handle_release(x);
}

static void log_case(void* arg) {
  (void)arg;
  static const char* const kBranches[] = {"sin", "cos", "square"};
  op_setup_t setup = {
      .branches = kBranches,
      .num_branches = 3,
      .set_tout = true,
      .tout = {LOOM_DTYPE_FLOAT},
      .num_tout = 1,
  };
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* index = scalar(g_context, LOOM_DTYPE_INT32, 2);
  loom_tensor_handle_t* inputs[2] = {index, x};
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(run(g_context, "Case", &setup, inputs, 2, &r, 1, NULL));
  expect_values(g_context, r, kSquare, 3);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(index);
  loom_tensor_handle_release(x);
}

static void log_while(void* arg) {
  (void)arg;
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* out[5];
  LOOM_ASSERT_OK(power(g_context, "While", x, 3, out));
  expect_values(g_context, out[3], kCube, 3);
  release_all(out, 5);
  loom_tensor_handle_release(x);
}

// Under a handler, the values entering and leaving the functions of If,
// Case and While pass through the indicator ops, which the handler sees
// around the functions' ops (each function call marks its own inputs and
// outputs with FunctionInput and FunctionOutput).
static void a_handler_sees_the_indicator_ops(void** state) {
  (void)state;
  float truth = 1;
  char* text = logged(log_if, &truth);
  static const char* const kIf[] = {"IfInput", "FunctionInput", "Sin",
                                    "FunctionOutput", "IfOutput"};
  expect_ops_in_order(text, kIf, 5);
  assert_non_null(strstr(text, "IfInput(float [3]) T=DT_FLOAT, index=0"));
  assert_non_null(strstr(text, "branch=0"));
  assert_int_equal(count_ops(text, "Cos"), 0);
  free(text);
  truth = 0;
  text = logged(log_if, &truth);
  static const char* const kElse[] = {"IfInput", "Cos", "IfOutput"};
  expect_ops_in_order(text, kElse, 3);
  assert_non_null(strstr(text, "branch=1"));
  free(text);

  text = logged(log_case, NULL);
  static const char* const kCase[] = {"CaseInput", "FunctionInput", "Square",
                                      "FunctionOutput", "CaseOutput"};
  expect_ops_in_order(text, kCase, 5);
  assert_non_null(strstr(text, "num_branches=3"));
  assert_non_null(strstr(text, "branch=2"));
  free(text);

  // Five loop variables: five WhileInputs, then three iterations of the
  // condition and the body (and the last condition), then five
  // WhileOutputs.
  text = logged(log_while, NULL);
  static const char* const kWhile[] = {"WhileInput", "Less",       "AddV2",
                                       "Mul",        "Less",       "Less",
                                       "Less",       "WhileOutput"};
  expect_ops_in_order(text, kWhile, 8);
  assert_int_equal(count_ops(text, "WhileInput"), 5);
  assert_int_equal(count_ops(text, "WhileOutput"), 5);
  assert_int_equal(count_ops(text, "Less"), 4);
  assert_int_equal(count_ops(text, "Mul"), 3);
  free(text);
}

//===----------------------------------------------------------------------===//
// Taken whole: gradients and JVPs over the branches' derived functions
//===----------------------------------------------------------------------===//

static const char* const kThreeBranches[] = {"sin", "cos", "square"};

// op_name(selector, x): If over sin and cos, Case over sin, cos and
// square, or (no selector) x**3 by a While.
static loom_tensor_handle_t* select_branch(const char* op_name,
                                           loom_tensor_handle_t* selector,
                                           loom_tensor_handle_t* x) {
  if (strstr(op_name, "While")) {
    loom_tensor_handle_t* out[5];
    LOOM_ASSERT_OK(power(g_context, op_name, x, 3, out));
    loom_tensor_handle_t* r = out[3];
    out[3] = NULL;
    release_all(out, 5);
    return r;
  }
  op_setup_t setup = kSinOrCos;
  if (strstr(op_name, "Case")) {
    setup = (op_setup_t){.branches = kThreeBranches,
                         .num_branches = 3,
                         .set_tout = true,
                         .tout = {LOOM_DTYPE_FLOAT},
                         .num_tout = 1};
  }
  loom_tensor_handle_t* inputs[2] = {selector, x};
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(run(g_context, op_name, &setup, inputs, 2, &r, 1, NULL));
  return r;
}

// Traces name(selector, x) = (op_name(selector, x), its derivative) with a
// tape (forward: an accumulator, tangent ones) inside the trace (a While
// takes no selector). The selector (x for a While) is symbolic, so the
// trace sees the op itself and the tape (the accumulator) records it as
// one op.
static void trace_with_derivative(const char* name, const char* op_name,
                                  bool forward) {
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_context, name, &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, trace));
  int64_t three = 3;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &three, 1));
  loom_shape_t scalar_shape = loom_shape_scalar();
  bool is_case = strstr(op_name, "Case") != NULL;
  loom_tensor_handle_t *selector = NULL, *x = NULL;
  if (!strstr(op_name, "While")) {
    LOOM_ASSERT_OK(loom_trace_add_parameter(
        trace, "selector", is_case ? LOOM_DTYPE_INT32 : LOOM_DTYPE_BOOL,
        &scalar_shape, &selector));
  }
  LOOM_ASSERT_OK(
      loom_trace_add_parameter(trace, "x", LOOM_DTYPE_FLOAT, &shape, &x));
  loom_op_handler_t* differentiator = NULL;
  loom_tensor_handle_t* watched = NULL;
  loom_tensor_handle_t* ones = NULL;
  if (forward) {
    static const float kOnes[3] = {1, 1, 1};
    ones = vector(g_context, kOnes);
    LOOM_ASSERT_OK(loom_forward_accumulator_create(g_context, &differentiator));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_context, differentiator));
    LOOM_ASSERT_OK(
        loom_forward_accumulator_watch(differentiator, x, ones, &watched));
  } else {
    LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &differentiator));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_context, differentiator));
    LOOM_ASSERT_OK(loom_tape_watch(differentiator, x));
    loom_tensor_handle_retain(x);
    watched = x;
  }
  loom_tensor_handle_t* outputs[2] = {NULL, NULL};
  outputs[0] = select_branch(op_name, selector, watched);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  if (forward) {
    LOOM_ASSERT_OK(loom_forward_accumulator_jvp(
        differentiator, outputs[0], LOOM_UNCONNECTED_NONE, &outputs[1]));
    // The value again, outside the accumulator: a value of the trace.
    loom_tensor_handle_release(outputs[0]);
    outputs[0] = select_branch(op_name, selector, x);
  } else {
    LOOM_ASSERT_OK(loom_tape_gradient(differentiator, &outputs[0], 1, &x, 1,
                                      NULL, LOOM_UNCONNECTED_NONE,
                                      &outputs[1]));
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  assert_true(loom_trace_is_symbolic(outputs[1]));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, outputs, 2, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_function_release(function);
  loom_tensor_handle_t* handles[] = {outputs[0], outputs[1], watched,
                                     ones,       selector,   x};
  release_all(handles, 6);
  loom_op_handler_release(differentiator);
  loom_op_handler_release(trace);
}

// Calls name(selector, x) (selector_dtype INVALID: name(x)) and checks
// both results.
static void expect_call(const char* name, loom_dtype_t selector_dtype,
                        float selector, const float* value,
                        const float* derivative) {
  bool selected = selector_dtype != LOOM_DTYPE_INVALID;
  loom_tensor_handle_t* s =
      selected ? scalar(g_context, selector_dtype, selector) : NULL;
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* inputs[2] = {s, x};
  loom_tensor_handle_t* results[2] = {NULL, NULL};
  int32_t count = 0;
  LOOM_ASSERT_OK(run(g_context, name, &(op_setup_t){0}, inputs + !selected,
                     1 + selected, results, 2, &count));
  assert_int_equal(count, 2);
  expect_values(g_context, results[0], value, 3);
  expect_values(g_context, results[1], derivative, 3);
  release_all(results, 2);
  loom_tensor_handle_release(x);
  if (s) loom_tensor_handle_release(s);
}

// PyTorch: d sum(x**2)/dx = 2x.
static const float kTwoX[3] = {3, -4, 1};

static loom_function_stats_t backward_stats(const char* name) {
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_context_find_function(g_context, name, &function));
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  loom_function_release(function);
  return stats;
}

static void a_symbolic_if_differentiates_over_its_branches(void** state) {
  (void)state;
  int64_t built[2], hits[2];
  for (int b = 0; b < 2; ++b) {
    loom_function_stats_t stats = backward_stats(b ? "cos" : "sin");
    built[b] = stats.backward_functions_built;
    hits[b] = stats.backward_function_hits;
  }
  static const char* const kOps[] = {"StatelessIf", "If"};
  for (int forward = 0; forward < 2; ++forward) {
    for (int k = 0; k < 2; ++k) {
      char name[32];
      snprintf(name, sizeof(name), "if_%s_%d", forward ? "jvp" : "grad", k);
      trace_with_derivative(name, kOps[k], forward);
      expect_call(name, LOOM_DTYPE_BOOL, 1, kSin, kCos);
      expect_call(name, LOOM_DTYPE_BOOL, 0, kCos, kNegSin);
      LOOM_ASSERT_OK(loom_context_remove_function(g_context, name));
    }
  }
  // The branches' backward functions are made once per key: the four
  // gradients of the two Ifs (traced, then called twice each) shared one
  // per branch.
  for (int b = 0; b < 2; ++b) {
    loom_function_stats_t stats = backward_stats(b ? "cos" : "sin");
    assert_int_equal(stats.backward_functions_built - built[b], 1);
    assert_int_equal(stats.backward_function_hits - hits[b], 1);
  }
  assert_true(loom_context_has_function(g_context, "sin_jvp_0"));
  assert_true(loom_context_has_function(g_context, "cos_jvp_0"));
}

static void a_symbolic_case_differentiates_over_its_branches(void** state) {
  (void)state;
  static const char* const kOps[] = {"StatelessCase", "Case"};
  for (int forward = 0; forward < 2; ++forward) {
    for (int k = 0; k < 2; ++k) {
      char name[32];
      snprintf(name, sizeof(name), "case_%s_%d", forward ? "jvp" : "grad", k);
      trace_with_derivative(name, kOps[k], forward);
      expect_call(name, LOOM_DTYPE_INT32, 0, kSin, kCos);
      expect_call(name, LOOM_DTYPE_INT32, 1, kCos, kNegSin);
      expect_call(name, LOOM_DTYPE_INT32, 2, kSquare, kTwoX);
      expect_call(name, LOOM_DTYPE_INT32, 7, kSquare, kTwoX);  // the last
      LOOM_ASSERT_OK(loom_context_remove_function(g_context, name));
    }
  }
  assert_true(loom_context_has_function(g_context, "square_backward_0"));
  assert_true(loom_context_has_function(g_context, "square_jvp_0"));
}

// A While on a symbolic loop variable: the gradient reruns the loop keeping
// each iteration's variables, then counts down through the body's backward
// function; the JVP is a While over the body's JVP function.
static void a_symbolic_while_differentiates_through_its_body(void** state) {
  (void)state;
  static const char* const kOps[] = {"StatelessWhile", "While"};
  for (int forward = 0; forward < 2; ++forward) {
    for (int k = 0; k < 2; ++k) {
      char name[32];
      snprintf(name, sizeof(name), "while_%s_%d", forward ? "jvp" : "grad", k);
      trace_with_derivative(name, kOps[k], forward);
      // PyTorch: d sum(x**3)/dx = 3 x**2, and the tangent (ones) the same.
      for (int call = 0; call < 2; ++call) {
        expect_call(name, LOOM_DTYPE_INVALID, 0, kCube, kCubeGrad);
      }
      LOOM_ASSERT_OK(loom_context_remove_function(g_context, name));
    }
  }
  assert_true(loom_context_has_function(g_context, "power_step_record_0"));
  assert_true(loom_context_has_function(g_context, "power_step_reverse_0"));
  assert_true(loom_context_has_function(g_context, "power_step_countdown_0"));
  assert_true(loom_context_has_function(g_context, "less_loopcond_0"));
  assert_true(loom_context_has_function(g_context, "power_step_jvp_0"));
}

// The traced functions with an If's, a While's or a Case's gradient print
// as a program: the If as corert.cond, the While as corert.while, the Case
// as tfrt.case on its index clamped as TensorFlow's Case reads it, their
// functions (the backward and loop functions among them) taking and
// returning a chain; `loom run` gives the values of the calls, and so does
// the program's function imported back into the eager API
// (loom_trace_program_function).
static void traced_gradients_print_as_a_program(void** state) {
  (void)state;
  static const char* const kOps[] = {"StatelessIf", "StatelessWhile",
                                     "StatelessCase"};
  static const char* const kNames[] = {"printed_if", "printed_while",
                                       "printed_case"};
  static const char* const kShows[] = {"= corert.cond %arg0 @sin_backward_",
                                       "= corert.while @less @power_step (",
                                       "= tfrt.case %k"};
  // Per call: the selector (none for the While), the value, the derivative.
  typedef struct {
    float selector;
    const float* value;
    const float* derivative;
  } expected_t;
  static const expected_t kIf[] = {{1, kSin, kCos}, {0, kCos, kNegSin}};
  static const expected_t kWhile[] = {{0, kCube, kCubeGrad}};
  static const expected_t kCase[] = {{0, kSin, kCos},
                                     {1, kCos, kNegSin},
                                     {2, kSquare, kTwoX},
                                     {7, kSquare, kTwoX},
                                     {-1, kSquare, kTwoX}};
  const expected_t* const calls[] = {kIf, kWhile, kCase};
  static const int kNumCalls[] = {2, 1, 5};
  static const loom_dtype_t kSelector[] = {LOOM_DTYPE_BOOL, LOOM_DTYPE_INVALID,
                                           LOOM_DTYPE_INT32};
  for (int k = 0; k < 3; ++k) {
    trace_with_derivative(kNames[k], kOps[k], false);
    loom_function_t* function = NULL;
    LOOM_ASSERT_OK(loom_context_find_function(g_context, kNames[k], &function));
    char* text = NULL;
    size_t size = 0;
    LOOM_ASSERT_OK(loom_trace_print_program(
        g_context, function, loom_allocator_system(), &text, &size));
    loom_function_release(function);
    assert_non_null(strstr(text, kShows[k]));
    // The program's function back in the eager API, under another name.
    loom_program_t* program = NULL;
    loom_program_location_t where;
    LOOM_ASSERT_OK(loom_program_parse(loom_allocator_system(), "printed.mlir",
                                      text, size, &program, &where));
    bool selected = kSelector[k] != LOOM_DTYPE_INVALID;
    int64_t three = 3;
    loom_shape_t shapes[2] = {loom_shape_scalar(), loom_shape_scalar()};
    LOOM_ASSERT_OK(loom_shape_initialize(&shapes[1], &three, 1));
    loom_dtype_t dtypes[2] = {kSelector[k], LOOM_DTYPE_FLOAT};
    char imported[32];
    snprintf(imported, sizeof(imported), "imported_%d", k);
    loom_function_t* back = NULL;
    LOOM_ASSERT_OK(loom_trace_program_function(
        g_context, program, kNames[k], imported, dtypes + !selected,
        shapes + !selected, 1 + selected, &back));
    loom_program_destroy(program);
    for (int c = 0; c < kNumCalls[k]; ++c) {
      const expected_t* e = &calls[k][c];
      for (int way = 0; way < 2; ++way) {
        loom_tensor_handle_t* arguments[2] = {
            selected ? scalar(g_context, kSelector[k], e->selector) : NULL,
            vector(g_context, kX)};
        loom_tensor_handle_t* results[2] = {NULL, NULL};
        if (way == 0) {
          loom_test_run_program(g_context, "printed.mlir", text, size,
                                kNames[k], arguments + !selected, 1 + selected,
                                results, 2);
        } else {
          int32_t count = 0;
          LOOM_ASSERT_OK(run(g_context, imported, &(op_setup_t){0},
                             arguments + !selected, 1 + selected, results, 2,
                             &count));
          release_all(arguments, 2);
        }
        expect_values(g_context, results[0], e->value, 3);
        expect_values(g_context, results[1], e->derivative, 3);
        release_all(results, 2);
      }
    }
    loom_function_release(back);
    loom_allocator_free(loom_allocator_system(), text);
    LOOM_ASSERT_OK(loom_context_remove_function(g_context, imported));
    LOOM_ASSERT_OK(loom_context_remove_function(g_context, kNames[k]));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(if_converts_the_condition_as_tensorflow_does),
      cmocka_unit_test(case_runs_the_indexed_branch_or_the_last),
      cmocka_unit_test(while_carries_the_loop_variables),
      cmocka_unit_test(a_tape_records_the_ops_that_ran),
      cmocka_unit_test(a_forward_accumulator_sees_the_ops_that_ran),
      cmocka_unit_test(a_condition_on_a_handler_makes_it_see_the_if),
      cmocka_unit_test(a_parallel_condition_runs_per_component),
      cmocka_unit_test(control_flow_in_an_asynchronous_context),
      cmocka_unit_test(if_and_case_errors),
      cmocka_unit_test(while_errors),
      cmocka_unit_test(a_handler_sees_the_indicator_ops),
      cmocka_unit_test(a_symbolic_if_differentiates_over_its_branches),
      cmocka_unit_test(a_symbolic_case_differentiates_over_its_branches),
      cmocka_unit_test(a_symbolic_while_differentiates_through_its_body),
      cmocka_unit_test(traced_gradients_print_as_a_program),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
