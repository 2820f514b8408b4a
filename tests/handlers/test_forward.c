// The forward accumulator: JVPs of single ops (direct rules and the
// transposed-gradient fallback) against f64 central differences,
// Hessian-vector products forward-over-reverse and reverse-over-forward
// against differences of gradients, nested accumulators (second
// derivatives, no perturbation confusion), tapes and accumulators mixed,
// tensors copied off, and the errors of the API. (Every case of the
// gradient conformance set is also run in forward mode by test_gradients
// --forward.)

#include <math.h>
#include <stdlib.h>

#include "autodiff_test_util.h"
#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/grad_ops.h"
#include "handlers/forward/forward_internal.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static handle_t* un(const char* name, handle_t* a) {
  return op1(name, LOOM_GRAD_INPUTS(a), LOOM_GRAD_NO_ATTRS);
}

static uint64_t g_seed = 2024;
static double uniform(double lo, double hi) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  double u = (double)(g_seed >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}

static loom_op_handler_t* new_accumulator(void) {
  loom_op_handler_t* accumulator = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_create(g_ctx, &accumulator));
  return accumulator;
}

static handle_t* jvp_of(loom_op_handler_t* accumulator, handle_t* handle) {
  handle_t* tangent = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_jvp(accumulator, handle,
                                              LOOM_UNCONNECTED_ZERO, &tangent));
  return tangent;
}

//===----------------------------------------------------------------------===//
// Single ops against finite differences
//===----------------------------------------------------------------------===//

enum { kRandom = 0, kPositive, kFixed, kDistribution };
enum { kMaxElements = 256, kMaxOutputs = 4 };

typedef struct fd_input_t {
  loom_dtype_t dtype;
  int rank;
  int64_t dims[4];
  int kind;
  bool differentiable;
  double values[8];  // kFixed
} fd_input_t;

typedef struct fd_case_t {
  const char* name;
  const char* op;
  int num_inputs;
  fd_input_t inputs[3];
  int num_attrs;
  loom__grad_attr_t attrs[4];
  int num_outputs;
} fd_case_t;

#define D LOOM_DTYPE_DOUBLE
#define RND(r, ...)                       \
  {                                       \
    D, r, {__VA_ARGS__}, kRandom, true, { \
      0                                   \
    }                                     \
  }
#define POS(r, ...)                         \
  {                                         \
    D, r, {__VA_ARGS__}, kPositive, true, { \
      0                                     \
    }                                       \
  }
#define INTS(r, d, ...)                        \
  {                                            \
    LOOM_DTYPE_INT32, r, {d}, kFixed, false, { \
      __VA_ARGS__                              \
    }                                          \
  }

static const int64_t kStrides2[] = {1, 2, 2, 1};
static const int64_t kPool2[] = {1, 2, 2, 1};
static const int64_t kPool2Nchw[] = {1, 1, 2, 2};
static const int64_t kPool3Nchw[] = {1, 1, 3, 3};

static const fd_case_t kCases[] = {
    // Direct rules.
    {"AddV2 broadcast", "AddV2", 2, {RND(2, 2, 3), RND(1, 3)}, 0, {{0}}, 1},
    {"Sub broadcast", "Sub", 2, {RND(2, 2, 1), RND(2, 1, 3)}, 0, {{0}}, 1},
    {"Mul broadcast", "Mul", 2, {RND(2, 2, 3), RND(2, 2, 1)}, 0, {{0}}, 1},
    {"RealDiv", "RealDiv", 2, {RND(2, 2, 3), POS(1, 3)}, 0, {{0}}, 1},
    {"Maximum", "Maximum", 2, {RND(2, 2, 3), RND(1, 3)}, 0, {{0}}, 1},
    {"Minimum", "Minimum", 2, {RND(1, 3), RND(2, 2, 3)}, 0, {{0}}, 1},
    {"SquaredDifference",
     "SquaredDifference",
     2,
     {RND(2, 2, 3), RND(1, 3)},
     0,
     {{0}},
     1},
    {"Exp", "Exp", 1, {RND(2, 2, 3)}, 0, {{0}}, 1},
    {"Log", "Log", 1, {POS(1, 5)}, 0, {{0}}, 1},
    {"Tanh", "Tanh", 1, {RND(1, 5)}, 0, {{0}}, 1},
    {"Sigmoid", "Sigmoid", 1, {RND(1, 5)}, 0, {{0}}, 1},
    {"Sqrt", "Sqrt", 1, {POS(1, 5)}, 0, {{0}}, 1},
    {"Relu", "Relu", 1, {RND(2, 3, 4)}, 0, {{0}}, 1},
    {"LeakyRelu",
     "LeakyRelu",
     1,
     {RND(2, 3, 4)},
     1,
     {LOOM_GRAD_FLOAT("alpha", 0.1f)},
     1},
    {"L2Loss", "L2Loss", 1, {RND(2, 3, 4)}, 0, {{0}}, 1},
    {"Softplus", "Softplus", 1, {RND(1, 5)}, 0, {{0}}, 1},
    {"MatMul tb",
     "MatMul",
     2,
     {RND(2, 2, 3), RND(2, 4, 3)},
     1,
     {LOOM_GRAD_BOOL("transpose_b", true)},
     1},
    {"BatchMatMulV2 broadcast",
     "BatchMatMulV2",
     2,
     {RND(3, 2, 2, 3), RND(2, 3, 4)},
     0,
     {{0}},
     1},
    {"BiasAdd", "BiasAdd", 2, {RND(3, 2, 3, 4), RND(1, 4)}, 0, {{0}}, 1},
    {"Sum axis 1", "Sum", 2, {RND(3, 2, 3, 4), INTS(1, 1, 1)}, 0, {{0}}, 1},
    {"Mean keep_dims",
     "Mean",
     2,
     {RND(3, 2, 3, 4), INTS(1, 1, -1)},
     1,
     {LOOM_GRAD_BOOL("keep_dims", true)},
     1},
    {"Reshape", "Reshape", 2, {RND(2, 2, 6), INTS(1, 2, 3, 4)}, 0, {{0}}, 1},
    {"Transpose",
     "Transpose",
     2,
     {RND(3, 2, 3, 2), INTS(1, 3, 1, 0, 2)},
     0,
     {{0}},
     1},
    {"ConcatV2",
     "ConcatV2",
     3,
     {RND(2, 2, 3), RND(2, 2, 2), INTS(0, 0, 1)},
     1,
     {LOOM_GRAD_INT("N", 2)},
     1},
    {"Cumsum",
     "Cumsum",
     2,
     {RND(2, 3, 4), INTS(0, 0, 1)},
     1,
     {LOOM_GRAD_BOOL("reverse", true)},
     1},
    {"ReverseV2",
     "ReverseV2",
     2,
     {RND(3, 2, 3, 2), INTS(1, 2, 0, 2)},
     0,
     {{0}},
     1},
    {"Concat",
     "Concat",
     3,
     {INTS(0, 0, -1), RND(2, 2, 3), RND(2, 2, 2)},
     1,
     {LOOM_GRAD_INT("N", 2)},
     1},
    {"Split",
     "Split",
     2,
     {INTS(0, 0, 1), RND(2, 2, 4)},
     1,
     {LOOM_GRAD_INT("num_split", 2)},
     2},
    {"Softmax", "Softmax", 1, {RND(2, 3, 4)}, 0, {{0}}, 1},
    {"LogSoftmax", "LogSoftmax", 1, {RND(2, 3, 4)}, 0, {{0}}, 1},
    {"SoftmaxCrossEntropyWithLogits",
     "SoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), {D, 2, {3, 5}, kDistribution, true, {0}}},
     0,
     {{0}},
     2},
    {"SparseSoftmaxCrossEntropyWithLogits",
     "SparseSoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), INTS(1, 3, 1, 4, 0)},
     0,
     {{0}},
     2},
    {"Conv2D SAME stride 2",
     "Conv2D",
     2,
     {RND(4, 1, 5, 5, 2), RND(4, 3, 3, 2, 3)},
     2,
     {LOOM_GRAD_INTS("strides", kStrides2, 4),
      LOOM_GRAD_STRING("padding", "SAME")},
     1},
    {"MaxPool NHWC VALID",
     "MaxPool",
     1,
     {RND(4, 1, 4, 4, 2)},
     3,
     {LOOM_GRAD_INTS("ksize", kPool2, 4), LOOM_GRAD_INTS("strides", kPool2, 4),
      LOOM_GRAD_STRING("padding", "VALID")},
     1},
    {"MaxPool NCHW SAME overlapping",
     "MaxPool",
     1,
     {RND(4, 1, 2, 5, 5)},
     4,
     {LOOM_GRAD_INTS("ksize", kPool3Nchw, 4),
      LOOM_GRAD_INTS("strides", kPool2Nchw, 4),
      LOOM_GRAD_STRING("padding", "SAME"),
      LOOM_GRAD_STRING("data_format", "NCHW")},
     1},
    // The transposed-gradient fallback.
    {"Pow", "Pow", 2, {POS(1, 4), RND(1, 4)}, 0, {{0}}, 1},
    {"ClipByValue",
     "ClipByValue",
     3,
     {RND(1, 6),
      {D, 0, {0}, kFixed, true, {-0.3}},
      {D, 0, {0}, kFixed, true, {0.4}}},
     0,
     {{0}},
     1},
    {"Prod", "Prod", 2, {RND(2, 3, 4), INTS(1, 1, 1)}, 0, {{0}}, 1},
    {"Max", "Max", 2, {RND(2, 3, 4), INTS(1, 1, 0)}, 0, {{0}}, 1},
    {"TanhGrad", "TanhGrad", 2, {RND(1, 4), RND(1, 4)}, 0, {{0}}, 1},
    {"Elu", "Elu", 1, {RND(1, 6)}, 0, {{0}}, 1},
};

static int64_t count_of(const fd_input_t* input) {
  int64_t n = 1;
  for (int i = 0; i < input->rank; ++i) n *= input->dims[i];
  return n;
}

static void fill_input(const fd_input_t* input, double* values) {
  int64_t n = count_of(input);
  for (int64_t i = 0; i < n; ++i) {
    switch (input->kind) {
      case kRandom:
        values[i] = uniform(-1.0, 1.0);
        break;
      case kPositive:
        values[i] = uniform(0.5, 2.0);
        break;
      case kFixed:
        values[i] = input->values[i];
        break;
      default:  // rows summing to one
        values[i] = uniform(0.1, 1.0);
        break;
    }
  }
  if (input->kind == kDistribution) {
    int64_t row = input->dims[input->rank - 1];
    for (int64_t r = 0; r < n / row; ++r) {
      double sum = 0;
      for (int64_t j = 0; j < row; ++j) sum += values[r * row + j];
      for (int64_t j = 0; j < row; ++j) values[r * row + j] /= sum;
    }
  }
}

static void run_case_op(const fd_case_t* c, handle_t* const* inputs,
                        handle_t** outputs) {
  LOOM_ASSERT_OK(loom__grad_execute_in(g_ctx, c->op, inputs, c->num_inputs,
                                       c->attrs, c->num_attrs, outputs,
                                       c->num_outputs));
}

// The outputs at x + scale * v.
static void outputs_at(const fd_case_t* c, double values[][kMaxElements],
                       double tangents[][kMaxElements], double scale,
                       double out[][kMaxElements], int64_t* counts) {
  handle_t* inputs[3] = {NULL};
  handle_t* outputs[kMaxOutputs] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    const fd_input_t* input = &c->inputs[i];
    double shifted[kMaxElements];
    int64_t n = count_of(input);
    for (int64_t j = 0; j < n; ++j) {
      shifted[j] =
          values[i][j] + (input->differentiable ? scale * tangents[i][j] : 0.0);
    }
    inputs[i] = make(input->dtype, input->dims, input->rank, shifted);
  }
  run_case_op(c, inputs, outputs);
  for (int k = 0; k < c->num_outputs; ++k) {
    counts[k] = read_values(outputs[k], out[k], kMaxElements);
  }
  loom__grad_release_all(outputs, c->num_outputs);
  loom__grad_release_all(inputs, c->num_inputs);
}

static void check_case(const fd_case_t* c) {
  double values[3][kMaxElements];
  double tangents[3][kMaxElements];
  handle_t* primals[3] = {NULL};
  handle_t* watched[3] = {NULL};
  handle_t* outputs[kMaxOutputs] = {NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    const fd_input_t* input = &c->inputs[i];
    fill_input(input, values[i]);
    for (int64_t j = 0; j < count_of(input); ++j) {
      tangents[i][j] = uniform(-1.0, 1.0);
    }
    primals[i] = make(input->dtype, input->dims, input->rank, values[i]);
  }
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  for (int i = 0; i < c->num_inputs; ++i) {
    const fd_input_t* input = &c->inputs[i];
    if (!input->differentiable) {
      loom_tensor_handle_retain(primals[i]);
      watched[i] = primals[i];
      continue;
    }
    handle_t* tangent =
        make(input->dtype, input->dims, input->rank, tangents[i]);
    LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, primals[i],
                                                  tangent, &watched[i]));
    loom_tensor_handle_release(tangent);
  }
  run_case_op(c, watched, outputs);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double plus[kMaxOutputs][kMaxElements], minus[kMaxOutputs][kMaxElements];
  int64_t counts[kMaxOutputs];
  const double h = 1e-6;
  outputs_at(c, values, tangents, h, plus, counts);
  outputs_at(c, values, tangents, -h, minus, counts);
  for (int k = 0; k < c->num_outputs; ++k) {
    handle_t* tangent = jvp_of(accumulator, outputs[k]);
    double jvp[kMaxElements];
    assert_int_equal(read_values(tangent, jvp, kMaxElements), counts[k]);
    char what[160];
    snprintf(what, sizeof(what), "%s output %d", c->name, k);
    for (int64_t j = 0; j < counts[k]; ++j) {
      expect_close(jvp[j], (plus[k][j] - minus[k][j]) / (2 * h), 1e-6, what, j);
    }
    loom_tensor_handle_release(tangent);
  }
  loom__grad_release_all(outputs, c->num_outputs);
  loom__grad_release_all(watched, c->num_inputs);
  loom__grad_release_all(primals, c->num_inputs);
  loom_op_handler_release(accumulator);
}

static void single_ops_match_finite_differences(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    check_case(&kCases[i]);
  }
}

// The fallback and the direct rules agree where both exist.
static void transposition_fallback_agrees_with_direct_rules(void** state) {
  (void)state;
  static const char* const kOps[] = {"Mul", "MatMul", "RealDiv", "Tanh",
                                     "Softmax"};
  double a[6], b[6], ta[6], tb[6];
  for (int i = 0; i < 6; ++i) {
    a[i] = uniform(-1, 1);
    b[i] = uniform(0.5, 2);
    ta[i] = uniform(-1, 1);
    tb[i] = uniform(-1, 1);
  }
  int64_t dims_a[] = {2, 3}, dims_b[] = {3, 2};
  for (size_t o = 0; o < sizeof(kOps) / sizeof(kOps[0]); ++o) {
    const char* name = kOps[o];
    bool matmul = strcmp(name, "MatMul") == 0;
    bool unary = strcmp(name, "Tanh") == 0 || strcmp(name, "Softmax") == 0;
    int32_t n = unary ? 1 : 2;
    handle_t* inputs[2] = {make(D, dims_a, 2, a),
                           make(D, matmul ? dims_b : dims_a, 2, b)};
    handle_t* tangents[2] = {make(D, dims_a, 2, ta),
                             make(D, matmul ? dims_b : dims_a, 2, tb)};
    handle_t* output = op1(name, inputs, n, LOOM_GRAD_NO_ATTRS);
    loom_tensor_metadata_t metadata[3];
    for (int32_t i = 0; i < n; ++i) {
      LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(inputs[i], &metadata[i]));
    }
    LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(output, &metadata[2]));
    loom_gradient_context_t context;
    loom__gradient_context_initialize(&context, g_ctx, name, NULL, NULL, n,
                                      inputs, metadata, 1, &output,
                                      &metadata[2]);
    handle_t* direct = NULL;
    handle_t* transposed = NULL;
    const loom_jvp_def_t* jvp = loom_jvp_find(name);
    assert_non_null(jvp);
    LOOM_ASSERT_OK(jvp->fn(&context, tangents, &direct, jvp->user_data));
    LOOM_ASSERT_OK(loom__forward_jvp_by_transposition(
        loom_gradient_find(name), &context, tangents, &transposed));
    loom__gradient_context_deinitialize(&context);
    double x[6], y[6];
    int64_t count = read_values(direct, x, 6);
    assert_int_equal(read_values(transposed, y, 6), count);
    for (int64_t i = 0; i < count; ++i)
      expect_close(y[i], x[i], 1e-12, name, i);
    loom_tensor_handle_release(direct);
    loom_tensor_handle_release(transposed);
    loom_tensor_handle_release(output);
    loom__grad_release_all(inputs, 2);
    loom__grad_release_all(tangents, 2);
  }
}

//===----------------------------------------------------------------------===//
// Second order
//===----------------------------------------------------------------------===//

enum { kRows = 3, kIn = 4, kOut = 2 };

// loss(w) = sum(tanh(x w)^2 * c) for fixed x, c; w: [kIn, kOut].
static handle_t* loss_of(handle_t* x, handle_t* w, handle_t* c) {
  handle_t* z = bin("MatMul", x, w);
  handle_t* t = un("Tanh", z);
  handle_t* s = un("Square", t);
  handle_t* p = bin("Mul", s, c);
  int64_t axes_values[] = {0, 1};
  handle_t* axes = NULL;
  loom_gradient_context_t context;
  loom__gradient_context_initialize(&context, g_ctx, "Sum", NULL, NULL, 0, NULL,
                                    NULL, 0, NULL, NULL);
  LOOM_ASSERT_OK(
      loom__grad_int_vector(&context, LOOM_DTYPE_INT32, axes_values, 2, &axes));
  handle_t* loss = bin("Sum", p, axes);
  handle_t* all[] = {z, t, s, p, axes};
  loom__grad_release_all(all, 5);
  return loss;
}

typedef struct problem_t {
  double x[kRows * kIn], w[kIn * kOut], c[kRows * kOut], v[kIn * kOut];
} problem_t;

static void make_problem(problem_t* p) {
  for (int i = 0; i < kRows * kIn; ++i) p->x[i] = uniform(-1, 1);
  for (int i = 0; i < kIn * kOut; ++i) p->w[i] = uniform(-1, 1);
  for (int i = 0; i < kRows * kOut; ++i) p->c[i] = uniform(0.5, 1.5);
  for (int i = 0; i < kIn * kOut; ++i) p->v[i] = uniform(-1, 1);
}

static const int64_t kXDims[] = {kRows, kIn};
static const int64_t kWDims[] = {kIn, kOut};
static const int64_t kCDims[] = {kRows, kOut};

// The tape's gradient of the loss at w + scale * v.
static void gradient_at(const problem_t* p, double scale, double* out) {
  double w[kIn * kOut];
  for (int i = 0; i < kIn * kOut; ++i) w[i] = p->w[i] + scale * p->v[i];
  handle_t* x = make(D, kXDims, 2, p->x);
  handle_t* wh = make(D, kWDims, 2, w);
  handle_t* c = make(D, kCDims, 2, p->c);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, wh));
  handle_t* loss = loss_of(x, wh, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* g = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &wh, 1, NULL,
                                    LOOM_UNCONNECTED_ZERO, &g));
  read_values(g, out, kIn * kOut);
  handle_t* all[] = {x, wh, c, loss, g};
  loom__grad_release_all(all, 5);
  loom_op_handler_release(tape);
}

static void expect_hvp(const problem_t* p, handle_t* hvp, const char* what) {
  double plus[kIn * kOut], minus[kIn * kOut], got[kIn * kOut];
  const double h = 1e-5;
  gradient_at(p, h, plus);
  gradient_at(p, -h, minus);
  assert_int_equal(read_values(hvp, got, kIn * kOut), kIn * kOut);
  for (int i = 0; i < kIn * kOut; ++i) {
    expect_close(got[i], (plus[i] - minus[i]) / (2 * h), 1e-6, what, i);
  }
}

static void forward_over_reverse_gives_hessian_vector_products(void** state) {
  (void)state;
  problem_t p;
  make_problem(&p);
  handle_t* x = make(D, kXDims, 2, p.x);
  handle_t* w = make(D, kWDims, 2, p.w);
  handle_t* c = make(D, kCDims, 2, p.c);
  handle_t* v = make(D, kWDims, 2, p.v);
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* wf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, w, v, &wf));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, wf));
  handle_t* loss = loss_of(x, wf, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* g = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &wf, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &g));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* hvp = jvp_of(accumulator, g);
  expect_hvp(&p, hvp, "forward-over-reverse H v");
  // The gradient's primal is the plain gradient.
  double plain[kIn * kOut], got[kIn * kOut];
  gradient_at(&p, 0.0, plain);
  read_values(g, got, kIn * kOut);
  for (int i = 0; i < kIn * kOut; ++i) {
    expect_close(got[i], plain[i], 1e-12, "gradient", i);
  }
  handle_t* all[] = {x, w, c, v, wf, loss, g, hvp};
  loom__grad_release_all(all, 8);
  loom_op_handler_release(tape);
  loom_op_handler_release(accumulator);
}

static void reverse_over_forward_gives_hessian_vector_products(void** state) {
  (void)state;
  problem_t p;
  make_problem(&p);
  handle_t* x = make(D, kXDims, 2, p.x);
  handle_t* w = make(D, kWDims, 2, p.w);
  handle_t* c = make(D, kCDims, 2, p.c);
  handle_t* v = make(D, kWDims, 2, p.v);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* wf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, w, v, &wf));
  handle_t* loss = loss_of(x, wf, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* directional = jvp_of(accumulator, loss);  // grad . v
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* hvp = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &directional, 1, &w, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &hvp));
  expect_hvp(&p, hvp, "reverse-over-forward H v");
  handle_t* all[] = {x, w, c, v, wf, loss, directional, hvp};
  loom__grad_release_all(all, 8);
  loom_op_handler_release(accumulator);
  loom_op_handler_release(tape);
}

// A tape entered inside the accumulator's scope before the watch: the
// watched tensor still goes to the accumulator's merge under the tape.
static void watch_under_a_tape_finds_the_accumulator(void** state) {
  (void)state;
  problem_t p;
  make_problem(&p);
  handle_t* x = make(D, kXDims, 2, p.x);
  handle_t* w = make(D, kWDims, 2, p.w);
  handle_t* c = make(D, kCDims, 2, p.c);
  handle_t* v = make(D, kWDims, 2, p.v);
  loom_op_handler_t* accumulator = new_accumulator();
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  handle_t* wf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, w, v, &wf));
  LOOM_ASSERT_OK(loom_tape_watch(tape, wf));
  handle_t* loss = loss_of(x, wf, c);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* g = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &wf, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &g));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* hvp = jvp_of(accumulator, g);
  expect_hvp(&p, hvp, "H v, watched under the tape");
  handle_t* all[] = {x, w, c, v, wf, loss, g, hvp};
  loom__grad_release_all(all, 8);
  loom_op_handler_release(tape);
  loom_op_handler_release(accumulator);
}

// f(x) = sin(x) * x^2 per element.
static handle_t* f_of(handle_t* x) {
  handle_t* s = un("Sin", x);
  handle_t* q = un("Square", x);
  handle_t* y = bin("Mul", s, q);
  loom_tensor_handle_release(s);
  loom_tensor_handle_release(q);
  return y;
}

// The JVP of f at x0 + scale * a along b, with one accumulator.
static void first_jvp_at(const double* x0, const double* a, const double* b,
                         double scale, double* out) {
  int64_t dims[] = {3};
  double x[3];
  for (int i = 0; i < 3; ++i) x[i] = x0[i] + scale * a[i];
  handle_t* xh = make(D, dims, 1, x);
  handle_t* bh = make(D, dims, 1, b);
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* xf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, xh, bh, &xf));
  handle_t* y = f_of(xf);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* t = jvp_of(accumulator, y);
  read_values(t, out, 3);
  handle_t* all[] = {xh, bh, xf, y, t};
  loom__grad_release_all(all, 5);
  loom_op_handler_release(accumulator);
}

static void nested_accumulators_give_second_derivatives(void** state) {
  (void)state;
  int64_t dims[] = {3};
  double x0[3], a[3], b[3];
  for (int i = 0; i < 3; ++i) {
    x0[i] = uniform(-1, 1);
    a[i] = uniform(-1, 1);
    b[i] = uniform(-1, 1);
  }
  handle_t* x = make(D, dims, 1, x0);
  handle_t* ah = make(D, dims, 1, a);
  handle_t* bh = make(D, dims, 1, b);
  loom_op_handler_t* outer = new_accumulator();
  loom_op_handler_t* inner = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
  handle_t* xa = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(outer, x, ah, &xa));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  handle_t* xb = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(inner, xa, bh, &xb));
  handle_t* y = f_of(xb);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* inner_jvp = jvp_of(inner, y);       // f'(x) b, carrying a
  handle_t* second = jvp_of(outer, inner_jvp);  // f''(x) a b
  handle_t* outer_jvp = jvp_of(outer, y);       // f'(x) a
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  double first_b[3], first_a[3], plus[3], minus[3], got[3];
  first_jvp_at(x0, a, b, 0.0, first_b);
  first_jvp_at(x0, b, a, 0.0, first_a);
  const double h = 1e-5;
  first_jvp_at(x0, a, b, h, plus);
  first_jvp_at(x0, a, b, -h, minus);
  read_values(inner_jvp, got, 3);
  for (int i = 0; i < 3; ++i) expect_close(got[i], first_b[i], 1e-12, "f'b", i);
  read_values(outer_jvp, got, 3);
  for (int i = 0; i < 3; ++i) expect_close(got[i], first_a[i], 1e-12, "f'a", i);
  read_values(second, got, 3);
  for (int i = 0; i < 3; ++i) {
    expect_close(got[i], (plus[i] - minus[i]) / (2 * h), 1e-7, "f''ab", i);
  }
  handle_t* all[] = {x, ah, bh, xa, xb, y, inner_jvp, second, outer_jvp};
  loom__grad_release_all(all, 9);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
}

// d/dx [x * d/dy (x + y)] at y = x0 (Siskind and Pearlmutter's
// perturbation confusion): the inner derivative must not see x's
// perturbation. Compared with differences of x -> x * (inner JVP).
static double confusion_inner(double x, bool nested, double* out_outer) {
  handle_t* xh = scalar(x);
  handle_t* one = scalar(1.0);
  loom_op_handler_t* outer = nested ? new_accumulator() : NULL;
  handle_t* xa = NULL;
  if (nested) {
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
    LOOM_ASSERT_OK(loom_forward_accumulator_watch(outer, xh, one, &xa));
  } else {
    loom_tensor_handle_retain(xh);
    xa = xh;
  }
  loom_op_handler_t* inner = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  handle_t* yb = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(inner, xa, one, &yb));
  handle_t* sum = bin("AddV2", xa, yb);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* d_inner = jvp_of(inner, sum);
  handle_t* product = bin("Mul", xa, d_inner);
  double value = read_scalar(product);
  if (nested) {
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* d_outer = jvp_of(outer, product);
    *out_outer = read_scalar(d_outer);
    loom_tensor_handle_release(d_outer);
  }
  handle_t* all[] = {xh, one, xa, yb, sum, d_inner, product};
  loom__grad_release_all(all, 7);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
  return value;
}

static void nested_accumulators_keep_perturbations_apart(void** state) {
  (void)state;
  double x = 0.7, derivative = 0;
  confusion_inner(x, true, &derivative);
  const double h = 1e-6;
  double fd = (confusion_inner(x + h, false, NULL) -
               confusion_inner(x - h, false, NULL)) /
              (2 * h);
  expect_close(derivative, fd, 1e-8, "d/dx x * d/dy (x + y)", 0);
}

//===----------------------------------------------------------------------===//
// Tensors of the accumulator
//===----------------------------------------------------------------------===//

static void tensors_resolve_to_their_primals(void** state) {
  (void)state;
  double xs[] = {0.5, -1.5}, ts[] = {1.0, 2.0};
  int64_t dims[] = {2};
  handle_t* x = make(D, dims, 1, xs);
  handle_t* t = make(D, dims, 1, ts);
  loom_op_handler_t* accumulator = new_accumulator();
  handle_t* xf = NULL;
  // Watched before its scope is entered: lands on the merge the scope uses.
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, t, &xf));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  assert_ptr_equal(loom_tensor_handle_handler(xf),
                   loom_context_scope_handler(g_ctx));
  handle_t* y = un("Exp", xf);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_string_equal(loom_op_handler_type_name(loom_tensor_handle_handler(y)),
                      "FORWARD");
  double got[2];
  read_values(y, got, 2);
  for (int i = 0; i < 2; ++i) expect_close(got[i], exp(xs[i]), 1e-15, "y", i);
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(y, &metadata));
  assert_int_equal(metadata.dtype, LOOM_DTYPE_DOUBLE);
  assert_int_equal(metadata.shape.rank, 1);
  assert_int_equal(metadata.shape.dims[0], 2);
  loom_tensor_t* value = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_static_value(y, &value));
  loom_tensor_release(value);
  char text[256];
  loom_tensor_handle_debug_string(y, text, sizeof(text));
  assert_non_null(strstr(text, "forward primal="));
  // An op of the accumulator's tensor outside its scope still runs there.
  handle_t* z = un("Neg", y);
  handle_t* tz = jvp_of(accumulator, z);
  read_values(tz, got, 2);
  for (int i = 0; i < 2; ++i) {
    expect_close(got[i], -exp(xs[i]) * ts[i], 1e-15, "tz", i);
  }
  handle_t* all[] = {x, t, xf, y, z, tz};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(accumulator);
}

static void ops_without_tangents_pass_through(void** state) {
  (void)state;
  double xs[] = {0.5, -1.5};
  int64_t dims[] = {2};
  handle_t* x = make(D, dims, 1, xs);
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* y = un("Exp", x);  // no tangent: a CPU tensor
  handle_t* xf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, x, &xf));
  handle_t* shape = un("Shape", xf);      // integers: no tangent
  handle_t* zeros = un("ZerosLike", xf);  // not differentiable
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(g_ctx));
  assert_ptr_equal(loom_tensor_handle_handler(shape), loom_context_cpu(g_ctx));
  assert_ptr_equal(loom_tensor_handle_handler(zeros), loom_context_cpu(g_ctx));
  handle_t* none = (handle_t*)1;
  LOOM_ASSERT_OK(loom_forward_accumulator_jvp(accumulator, y,
                                              LOOM_UNCONNECTED_NONE, &none));
  assert_null(none);
  handle_t* zero = jvp_of(accumulator, y);
  double got[2] = {1, 1};
  read_values(zero, got, 2);
  assert_true(got[0] == 0.0 && got[1] == 0.0);
  handle_t* all[] = {x, y, xf, shape, zeros, zero};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(accumulator);
}

// FusedBatchNormGradV3 has neither a JVP nor a gradient function.
static void op_without_jvp_or_gradient_is_an_error(void** state) {
  (void)state;
  const int64_t x_dims[4] = {1, 2, 2, 1}, c_dims[1] = {1};
  const double dy_values[4] = {0.5, -1, 2, 0.25}, x_values[4] = {1, 4, 2, 3};
  const double one = 1.0, mean = 2.5, inv_std = 0.8;
  const loom_dtype_t f = LOOM_DTYPE_FLOAT;
  handle_t* inputs[6] = {
      make(f, x_dims, 4, dy_values), make(f, x_dims, 4, x_values),
      make(f, c_dims, 1, &one),      make(f, c_dims, 1, &mean),
      make(f, c_dims, 1, &inv_std),  make(f, c_dims, 1, NULL)};
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* dyf = NULL;
  LOOM_ASSERT_OK(
      loom_forward_accumulator_watch(accumulator, inputs[0], inputs[0], &dyf));
  handle_t* flowing[6] = {dyf,       inputs[1], inputs[2],
                          inputs[3], inputs[4], inputs[5]};
  handle_t* out[5] = {NULL};
  LOOM_ASSERT_STATUS(
      loom__grad_execute_in(g_ctx, "FusedBatchNormGradV3", flowing, 6,
                            LOOM_GRAD_NO_ATTRS, out, 5),
      LOOM_STATUS_NOT_FOUND,
      "forward-mode derivative of FusedBatchNormGradV3: no JVP or gradient");
  for (int i = 0; i < 5; ++i) assert_null(out[i]);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom__grad_release_all(inputs, 6);
  loom_tensor_handle_release(dyf);
  loom_op_handler_release(accumulator);
}

// An asynchronous context: ops return before they run, the tangents too.
static void works_in_asynchronous_contexts(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = true;
  options.num_threads = 2;
  loom_context_t* ctx = NULL;
  LOOM_ASSERT_OK(loom_context_create(&options, &ctx));
  loom_context_t* saved = g_ctx;
  g_ctx = ctx;
  double xs[] = {0.25, -0.5, 1.0}, ts[] = {1.0, 2.0, -1.0};
  int64_t dims[] = {3};
  handle_t* x = make(D, dims, 1, xs);
  handle_t* t = make(D, dims, 1, ts);
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(ctx, accumulator));
  handle_t* xf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, t, &xf));
  handle_t* y = f_of(xf);
  LOOM_ASSERT_OK(loom_context_exit_scope(ctx));
  handle_t* ty = jvp_of(accumulator, y);
  double got[3], first[3], zeros[3] = {0, 0, 0};
  read_values(ty, got, 3);
  g_ctx = saved;
  first_jvp_at(xs, zeros, ts, 0.0, first);
  for (int i = 0; i < 3; ++i) expect_close(got[i], first[i], 1e-15, "ty", i);
  LOOM_ASSERT_OK(loom_context_wait(ctx));
  handle_t* all[] = {x, t, xf, y, ty};
  loom__grad_release_all(all, 5);
  loom_op_handler_release(accumulator);
  loom_context_destroy(ctx);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void api_checks_its_arguments(void** state) {
  (void)state;
  int64_t dims2[] = {2}, dims3[] = {3};
  double values[] = {1, 2, 3};
  handle_t* x = make(D, dims2, 1, values);
  handle_t* t3 = make(D, dims3, 1, values);
  handle_t* tf = make(LOOM_DTYPE_FLOAT, dims2, 1, values);
  handle_t* i = make(LOOM_DTYPE_INT32, dims2, 1, values);
  loom_op_handler_t* accumulator = new_accumulator();
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  handle_t* out = NULL;
  loom_op_handler_t* handler = NULL;
  LOOM_ASSERT_STATUS(loom_forward_accumulator_create(NULL, &handler),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_forward_accumulator_create: context is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_create(g_ctx, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_accumulator is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(NULL, x, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_forward_accumulator_watch: accumulator is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(tape, x, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "not a forward accumulator (type 'TAPE')");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(accumulator, NULL, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "primal is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(accumulator, x, NULL, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "tangent is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(accumulator, x, x, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_handle is NULL");
  LOOM_ASSERT_STATUS(
      loom_forward_accumulator_watch(accumulator, x, tf, &out),
      LOOM_STATUS_INVALID_ARGUMENT,
      "the tangent's dtype float does not match the primal's double");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(accumulator, x, t3, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the tangent's shape [3] does not match the primal's [2]");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_watch(accumulator, i, i, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the primal is a int32 tensor; only floating-point");
  assert_null(out);
  LOOM_ASSERT_STATUS(
      loom_forward_accumulator_jvp(NULL, x, LOOM_UNCONNECTED_NONE, &out),
      LOOM_STATUS_INVALID_ARGUMENT,
      "loom_forward_accumulator_jvp: accumulator is NULL");
  LOOM_ASSERT_STATUS(
      loom_forward_accumulator_jvp(tape, x, LOOM_UNCONNECTED_NONE, &out),
      LOOM_STATUS_INVALID_ARGUMENT, "not a forward accumulator");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_jvp(accumulator, NULL,
                                                  LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "handle is NULL");
  LOOM_ASSERT_STATUS(
      loom_forward_accumulator_jvp(accumulator, x, LOOM_UNCONNECTED_NONE, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "out_tangent is NULL");
  LOOM_ASSERT_STATUS(loom_forward_accumulator_jvp(
                         accumulator, x, (loom_unconnected_gradients_t)7, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "unknown unconnected gradients policy 7");
  handle_t* all[] = {x, t3, tf, i};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(tape);
  loom_op_handler_release(accumulator);
}

static loom_status_t dummy_jvp(loom_gradient_context_t* context,
                               loom_tensor_handle_t* const* input_tangents,
                               loom_tensor_handle_t** output_tangents,
                               void* user_data) {
  (void)context;
  (void)input_tangents;
  (void)output_tangents;
  (void)user_data;
  return loom_ok_status();
}

static void registry_checks_its_arguments(void** state) {
  (void)state;
  assert_non_null(loom_jvp_find("MatMul"));
  assert_non_null(loom_jvp_find("Softmax"));
  assert_null(loom_jvp_find("Pow"));  // by transposing its gradient
  assert_null(loom_jvp_find(NULL));
  LOOM_ASSERT_STATUS(loom_jvp_register(NULL), LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_jvp_register: def is NULL");
  loom_jvp_def_t def = {
      .struct_size = sizeof(def), .op_name = "MatMul", .fn = dummy_jvp};
  LOOM_ASSERT_STATUS(loom_jvp_register(&def), LOOM_STATUS_ALREADY_EXISTS,
                     "op 'MatMul' already has a JVP function");
  def.op_name = "";
  LOOM_ASSERT_STATUS(loom_jvp_register(&def), LOOM_STATUS_INVALID_ARGUMENT,
                     "def->op_name is empty");
  def.op_name = "ForwardTestOnlyOp";
  def.struct_size = 8;
  LOOM_ASSERT_STATUS(loom_jvp_register(&def), LOOM_STATUS_INVALID_ARGUMENT,
                     "struct_size is 8");
  def.struct_size = sizeof(def);
  LOOM_ASSERT_OK(loom_jvp_register(&def));
  const loom_jvp_def_t* found = loom_jvp_find("ForwardTestOnlyOp");
  assert_non_null(found);
  assert_ptr_equal(found->fn, dummy_jvp);
  assert_string_equal(found->op_name, "ForwardTestOnlyOp");
}

static loom_status_t failing_jvp(loom_gradient_context_t* context,
                                 loom_tensor_handle_t* const* input_tangents,
                                 loom_tensor_handle_t** output_tangents,
                                 void* user_data) {
  (void)input_tangents;
  (void)user_data;
  // Something made, then an error: the partial result must not leak.
  LOOM_RETURN_IF_ERROR(
      loom__grad_scalar(context, LOOM_DTYPE_DOUBLE, 1.0, &output_tangents[0]));
  return loom_make_status(LOOM_STATUS_UNAVAILABLE, "the rule failed");
}

static loom_status_t misshapen_jvp(loom_gradient_context_t* context,
                                   loom_tensor_handle_t* const* input_tangents,
                                   loom_tensor_handle_t** output_tangents,
                                   void* user_data) {
  (void)input_tangents;
  (void)user_data;
  return loom__grad_scalar(context, LOOM_DTYPE_DOUBLE, 1.0,
                           &output_tangents[0]);
}

// Rules registered for two ops this test does not otherwise use (the
// registry is the process's).
static void failing_jvp_functions_fail_the_op(void** state) {
  (void)state;
  loom_jvp_def_t def = {.struct_size = sizeof(def),
                        .op_name = "InvGrad",
                        .fn = failing_jvp,
                        .inputs_used = LOOM_GRADIENT_USES_ALL};
  LOOM_ASSERT_OK(loom_jvp_register(&def));
  def.op_name = "SeluGrad";
  def.fn = misshapen_jvp;
  LOOM_ASSERT_OK(loom_jvp_register(&def));
  double xs[] = {0.5, 1.5, 2.5};
  int64_t dims[] = {3};
  handle_t* x = make(D, dims, 1, xs);
  loom_op_handler_t* accumulator = new_accumulator();
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, accumulator));
  handle_t* xf = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_watch(accumulator, x, x, &xf));
  handle_t* out = NULL;
  LOOM_ASSERT_STATUS(
      loom__grad_execute_in(g_ctx, "InvGrad", LOOM_GRAD_INPUTS(xf, xf),
                            LOOM_GRAD_NO_ATTRS, &out, 1),
      LOOM_STATUS_UNAVAILABLE, "forward-mode derivative of InvGrad");
  assert_null(out);
  LOOM_ASSERT_STATUS(
      loom__grad_execute_in(g_ctx, "SeluGrad", LOOM_GRAD_INPUTS(xf, xf),
                            LOOM_GRAD_NO_ATTRS, &out, 1),
      LOOM_STATUS_INTERNAL,
      "the JVP of SeluGrad gave output 0 a double [] tangent; the output is "
      "double [3]");
  assert_null(out);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_tensor_handle_release(xf);
  loom_tensor_handle_release(x);
  loom_op_handler_release(accumulator);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(single_ops_match_finite_differences),
      cmocka_unit_test(transposition_fallback_agrees_with_direct_rules),
      cmocka_unit_test(forward_over_reverse_gives_hessian_vector_products),
      cmocka_unit_test(reverse_over_forward_gives_hessian_vector_products),
      cmocka_unit_test(watch_under_a_tape_finds_the_accumulator),
      cmocka_unit_test(nested_accumulators_give_second_derivatives),
      cmocka_unit_test(nested_accumulators_keep_perturbations_apart),
      cmocka_unit_test(tensors_resolve_to_their_primals),
      cmocka_unit_test(ops_without_tangents_pass_through),
      cmocka_unit_test(op_without_jvp_or_gradient_is_an_error),
      cmocka_unit_test(works_in_asynchronous_contexts),
      cmocka_unit_test(failing_jvp_functions_fail_the_op),
      cmocka_unit_test(api_checks_its_arguments),
      cmocka_unit_test(registry_checks_its_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
