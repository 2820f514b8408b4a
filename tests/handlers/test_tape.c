// The gradient tape: gradients of single ops against f64 finite
// differences, an MLP step and second-order gradients against PyTorch's
// autograd (a /usr/bin/python3 script run by the test prints them),
// lifetimes of persistent and non-persistent tapes, unconnected sources,
// stop_recording, variables, reuse, nesting with other handlers, and the
// errors of the API.

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "autodiff_test_util.h"
#include "handlers/autodiff/autodiff_internal.h"
#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/handlers.h"
#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static void expect_values(handle_t* handle, const double* expected, int64_t n,
                          double tolerance, const char* what) {
  assert_non_null(handle);
  double actual[512];
  assert_int_equal(read_values(handle, actual, 512), n);
  for (int64_t i = 0; i < n; ++i) {
    expect_close(actual[i], expected[i], tolerance, what, i);
  }
}

static uint64_t g_seed = 12345;
static double uniform(double lo, double hi) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  double u = (double)(g_seed >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}

static loom_op_handler_t* new_tape(bool persistent) {
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  options.persistent = persistent;
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, &options, &tape));
  return tape;
}

// A tape watching x, its scope entered (the caller exits it).
static loom_op_handler_t* recording_tape(bool persistent, handle_t* x) {
  loom_op_handler_t* tape = new_tape(persistent);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  return tape;
}

//===----------------------------------------------------------------------===//
// Single ops against finite differences
//===----------------------------------------------------------------------===//

enum { kRandom = 0, kPositive, kFixed, kDistribution };

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
  int output;  // the output differentiated
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

static const int64_t kStrides2[] = {1, 2, 2, 1};
static const int64_t kOnes4[] = {1, 1, 1, 1};
static const int64_t kPool2[] = {1, 2, 2, 1};
static const int64_t kPool2Nchw[] = {1, 1, 2, 2};

static const fd_case_t kCases[] = {
    {"AddV2 broadcast", "AddV2", 2, {RND(2, 2, 3), RND(1, 3)}, 0, {{0}}, 0, 1},
    {"Add broadcast", "Add", 2, {RND(2, 2, 1), RND(2, 1, 3)}, 0, {{0}}, 0, 1},
    {"Sub broadcast", "Sub", 2, {RND(2, 2, 1), RND(2, 1, 3)}, 0, {{0}}, 0, 1},
    {"Mul broadcast", "Mul", 2, {RND(2, 2, 3), RND(2, 2, 1)}, 0, {{0}}, 0, 1},
    {"Mul scalar", "Mul", 2, {RND(0, 0), RND(2, 2, 3)}, 0, {{0}}, 0, 1},
    {"RealDiv broadcast",
     "RealDiv",
     2,
     {RND(2, 2, 3), POS(1, 3)},
     0,
     {{0}},
     0,
     1},
    {"Neg", "Neg", 1, {RND(1, 4)}, 0, {{0}}, 0, 1},
    {"Identity", "Identity", 1, {RND(2, 2, 2)}, 0, {{0}}, 0, 1},
    {"MatMul", "MatMul", 2, {RND(2, 2, 3), RND(2, 3, 4)}, 0, {{0}}, 0, 1},
    {"MatMul ta",
     "MatMul",
     2,
     {RND(2, 3, 2), RND(2, 3, 4)},
     1,
     {LOOM_GRAD_BOOL("transpose_a", true)},
     0,
     1},
    {"MatMul tb",
     "MatMul",
     2,
     {RND(2, 2, 3), RND(2, 4, 3)},
     1,
     {LOOM_GRAD_BOOL("transpose_b", true)},
     0,
     1},
    {"MatMul ta tb",
     "MatMul",
     2,
     {RND(2, 3, 2), RND(2, 4, 3)},
     2,
     {LOOM_GRAD_BOOL("transpose_a", true), LOOM_GRAD_BOOL("transpose_b", true)},
     0,
     1},
    {"BatchMatMulV2 broadcast",
     "BatchMatMulV2",
     2,
     {RND(3, 2, 2, 3), RND(2, 3, 4)},
     0,
     {{0}},
     0,
     1},
    {"BatchMatMulV2 adj_x",
     "BatchMatMulV2",
     2,
     {RND(3, 2, 3, 2), RND(3, 1, 3, 2)},
     1,
     {LOOM_GRAD_BOOL("adj_x", true)},
     0,
     1},
    {"BiasAdd NHWC",
     "BiasAdd",
     2,
     {RND(3, 2, 3, 4), RND(1, 4)},
     0,
     {{0}},
     0,
     1},
    {"BiasAdd NCHW",
     "BiasAdd",
     2,
     {RND(3, 2, 3, 4), RND(1, 3)},
     1,
     {LOOM_GRAD_STRING("data_format", "NCHW")},
     0,
     1},
    {"Relu", "Relu", 1, {RND(2, 3, 4)}, 0, {{0}}, 0, 1},
    {"Sum axis 1",
     "Sum",
     2,
     {RND(3, 2, 3, 4), {LOOM_DTYPE_INT32, 1, {1}, kFixed, false, {1}}},
     0,
     {{0}},
     0,
     1},
    {"Sum keep_dims",
     "Sum",
     2,
     {RND(3, 2, 3, 4), {LOOM_DTYPE_INT32, 1, {2}, kFixed, false, {0, 2}}},
     1,
     {LOOM_GRAD_BOOL("keep_dims", true)},
     0,
     1},
    {"Mean negative axis keep_dims",
     "Mean",
     2,
     {RND(3, 2, 3, 4), {LOOM_DTYPE_INT32, 1, {1}, kFixed, false, {-1}}},
     1,
     {LOOM_GRAD_BOOL("keep_dims", true)},
     0,
     1},
    {"Mean two axes",
     "Mean",
     2,
     {RND(3, 2, 3, 4), {LOOM_DTYPE_INT64, 1, {2}, kFixed, false, {-2, 0}}},
     0,
     {{0}},
     0,
     1},
    {"Mean scalar axis",
     "Mean",
     2,
     {RND(2, 3, 4), {LOOM_DTYPE_INT32, 0, {0}, kFixed, false, {0}}},
     0,
     {{0}},
     0,
     1},
    {"Reshape",
     "Reshape",
     2,
     {RND(2, 2, 6), {LOOM_DTYPE_INT32, 1, {2}, kFixed, false, {3, 4}}},
     0,
     {{0}},
     0,
     1},
    {"SoftmaxCrossEntropyWithLogits loss",
     "SoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), {D, 2, {3, 5}, kDistribution, true, {0}}},
     0,
     {{0}},
     0,
     2},
    {"SoftmaxCrossEntropyWithLogits backprop",
     "SoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), {D, 2, {3, 5}, kDistribution, false, {0}}},
     0,
     {{0}},
     1,
     2},
    {"SparseSoftmaxCrossEntropyWithLogits loss",
     "SparseSoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), {LOOM_DTYPE_INT32, 1, {3}, kFixed, false, {1, 4, 0}}},
     0,
     {{0}},
     0,
     2},
    {"SparseSoftmaxCrossEntropyWithLogits backprop",
     "SparseSoftmaxCrossEntropyWithLogits",
     2,
     {RND(2, 3, 5), {LOOM_DTYPE_INT64, 1, {3}, kFixed, false, {2, 0, 3}}},
     0,
     {{0}},
     1,
     2},
    {"Conv2D NHWC SAME stride 2",
     "Conv2D",
     2,
     {RND(4, 1, 5, 5, 2), RND(4, 3, 3, 2, 3)},
     2,
     {LOOM_GRAD_INTS("strides", kStrides2, 4),
      LOOM_GRAD_STRING("padding", "SAME")},
     0,
     1},
    {"Conv2D NCHW VALID",
     "Conv2D",
     2,
     {RND(4, 2, 2, 5, 4), RND(4, 2, 2, 2, 3)},
     3,
     {LOOM_GRAD_INTS("strides", kOnes4, 4),
      LOOM_GRAD_STRING("padding", "VALID"),
      LOOM_GRAD_STRING("data_format", "NCHW")},
     0,
     1},
    {"MaxPool NHWC",
     "MaxPool",
     1,
     {RND(4, 1, 4, 4, 2)},
     3,
     {LOOM_GRAD_INTS("ksize", kPool2, 4), LOOM_GRAD_INTS("strides", kPool2, 4),
      LOOM_GRAD_STRING("padding", "VALID")},
     0,
     1},
    {"MaxPool NCHW",
     "MaxPool",
     1,
     {RND(4, 1, 2, 4, 4)},
     4,
     {LOOM_GRAD_INTS("ksize", kPool2Nchw, 4),
      LOOM_GRAD_INTS("strides", kPool2Nchw, 4),
      LOOM_GRAD_STRING("padding", "SAME"),
      LOOM_GRAD_STRING("data_format", "NCHW")},
     0,
     1},
};

static int64_t count_of(const fd_input_t* input) {
  int64_t n = 1;
  for (int i = 0; i < input->rank; ++i) n *= input->dims[i];
  return n;
}

// sum(w * op(inputs)[output]).
static double weighted_output(const fd_case_t* c, handle_t* const* inputs,
                              const double* w, int64_t w_count) {
  handle_t* results[2] = {NULL, NULL};
  run(c->op, inputs, c->num_inputs, c->attrs, c->num_attrs, results,
      c->num_outputs);
  double values[512];
  int64_t n = read_values(results[c->output], values, 512);
  assert_int_equal(n, w_count);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += w[i] * values[i];
  loom__grad_release_all(results, c->num_outputs);
  return sum;
}

static void check_case(const fd_case_t* c) {
  double values[3][256];
  handle_t* inputs[3] = {NULL, NULL, NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    const fd_input_t* in = &c->inputs[i];
    int64_t n = count_of(in);
    for (int64_t k = 0; k < n; ++k) {
      values[i][k] = in->kind == kFixed    ? in->values[k]
                     : in->kind == kRandom ? uniform(-2.0, 2.0)
                                           : uniform(0.5, 2.0);
    }
    if (in->kind == kDistribution) {  // rows summing to 1
      int64_t width = in->dims[in->rank - 1];
      for (int64_t r = 0; r < n / width; ++r) {
        double total = 0;
        for (int64_t k = 0; k < width; ++k) total += values[i][r * width + k];
        for (int64_t k = 0; k < width; ++k) values[i][r * width + k] /= total;
      }
    }
    inputs[i] = make(in->dtype, in->dims, in->rank, values[i]);
  }
  // The tape's gradient of sum(w * y).
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  handle_t* sources[3];
  int num_sources = 0;
  int which[3];
  for (int i = 0; i < c->num_inputs; ++i) {
    if (!c->inputs[i].differentiable) continue;
    LOOM_ASSERT_OK(loom_tape_watch(tape, inputs[i]));
    which[num_sources] = i;
    sources[num_sources++] = inputs[i];
  }
  handle_t* results[2] = {NULL, NULL};
  run(c->op, inputs, c->num_inputs, c->attrs, c->num_attrs, results,
      c->num_outputs);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_tensor_metadata_t out_meta;
  LOOM_ASSERT_OK(
      loom_tensor_handle_wait_metadata(results[c->output], &out_meta));
  int64_t w_count = loom_shape_num_elements(&out_meta.shape);
  double w[512];
  for (int64_t k = 0; k < w_count; ++k) w[k] = uniform(-1.0, 1.0);
  handle_t* w_handle = make(D, out_meta.shape.dims, out_meta.shape.rank, w);
  handle_t* grads[3] = {NULL, NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &results[c->output], 1, sources,
                                    num_sources, &w_handle,
                                    LOOM_UNCONNECTED_NONE, grads));
  loom_tensor_handle_release(w_handle);
  loom__grad_release_all(results, c->num_outputs);
  loom_op_handler_release(tape);
  // Central differences in f64.
  const double h = 1e-6;
  for (int s = 0; s < num_sources; ++s) {
    int i = which[s];
    const fd_input_t* in = &c->inputs[i];
    int64_t n = count_of(in);
    double expected[256];
    for (int64_t k = 0; k < n; ++k) {
      double saved = values[i][k];
      handle_t* perturbed[3];
      memcpy(perturbed, inputs, sizeof(perturbed));
      values[i][k] = saved + h;
      perturbed[i] = make(in->dtype, in->dims, in->rank, values[i]);
      double plus = weighted_output(c, perturbed, w, w_count);
      loom_tensor_handle_release(perturbed[i]);
      values[i][k] = saved - h;
      perturbed[i] = make(in->dtype, in->dims, in->rank, values[i]);
      double minus = weighted_output(c, perturbed, w, w_count);
      loom_tensor_handle_release(perturbed[i]);
      values[i][k] = saved;
      expected[k] = (plus - minus) / (2 * h);
    }
    char what[160];
    snprintf(what, sizeof(what), "%s: d/dinput%d", c->name, i);
    expect_values(grads[s], expected, n, 1e-6, what);
  }
  loom__grad_release_all(grads, num_sources);
  loom__grad_release_all(inputs, c->num_inputs);
}

static void single_ops_match_finite_differences(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    check_case(&kCases[i]);
  }
}

static void builtin_gradients_register_without_error(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom__gradient_builtins_status());
  const loom_gradient_def_t* def = loom_gradient_find("MatMul");
  assert_non_null(def);
  assert_non_null(def->fn);
  assert_int_equal(def->inputs_used, 3);
  def = loom_gradient_find("Shape");
  assert_non_null(def);
  assert_null(def->fn);
  assert_null(loom_gradient_find("NoSuchOpAnywhere"));
  assert_null(loom_gradient_find(NULL));
}

//===----------------------------------------------------------------------===//
// Reference values from PyTorch
//===----------------------------------------------------------------------===//

// Prints "name v0 v1 ..." lines: the MLP's inputs, its loss and gradients,
// a Hessian-vector product, and second derivatives of scalar functions.
static const char kTorchScript[] =
    "import numpy as np, torch\n"
    "torch.set_num_threads(1)\n"
    "rng = np.random.default_rng(7)\n"
    "def t(a): return torch.tensor(a, dtype=torch.float64, "
    "requires_grad=True)\n"
    "def out(name, a):\n"
    "    a = a.detach().numpy() if torch.is_tensor(a) else np.asarray(a)\n"
    "    print(name, ' '.join(repr(float(v)) for v in a.ravel()))\n"
    "x = rng.standard_normal((8, 6)); w1 = rng.standard_normal((6, 5)) * 0.5\n"
    "b1 = rng.standard_normal(5) * 0.1; w2 = rng.standard_normal((5, 4)) * "
    "0.5\n"
    "b2 = rng.standard_normal(4) * 0.1; labels = rng.integers(0, 4, 8)\n"
    "v = rng.standard_normal((5, 4))\n"
    "for n, a in (('x', x), ('w1', w1), ('b1', b1), ('w2', w2), ('b2', b2),\n"
    "             ('labels', labels), ('v', v)): out(n, a)\n"
    "X, W1, B1, W2, B2 = t(x), t(w1), t(b1), t(w2), t(b2)\n"
    "h = torch.relu(X @ W1 + B1)\n"
    "loss = torch.nn.functional.cross_entropy(h @ W2 + B2, "
    "torch.tensor(labels))\n"
    "g = torch.autograd.grad(loss, [W1, B1, W2, B2, X], create_graph=True)\n"
    "out('loss', loss)\n"
    "for n, a in zip(('dw1', 'db1', 'dw2', 'db2', 'dx'), g): out(n, a)\n"
    "hv = torch.autograd.grad((g[2] * torch.tensor(v)).sum(), [W1, W2])\n"
    "out('hv_w1', hv[0]); out('hv_w2', hv[1])\n"
    "s = np.array([0.3, -1.2, 2.0]); out('s', s)\n"
    "for name, f in (('cube', lambda z: z ** 3),\n"
    "                ('ratio', lambda z: z * z / (1 + z * z))):\n"
    "    S = t(s); d1 = torch.autograd.grad(f(S).sum(), S, "
    "create_graph=True)[0]\n"
    "    out(name + '_d1', d1)\n"
    "    out(name + '_d2', torch.autograd.grad(d1.sum(), S)[0])\n";

typedef struct reference_t {
  char name[32];
  int64_t count;
  double values[64];
} reference_t;

static reference_t g_refs[32];
static int g_num_refs = -1;  // -1: not run yet; 0: unavailable

static void load_references(void) {
  if (g_num_refs >= 0) return;
  g_num_refs = 0;
  if (access("/usr/bin/python3", X_OK) != 0) return;
  char path[] = "/tmp/loom_tape_torch_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  FILE* file = fdopen(fd, "w");
  fputs(kTorchScript, file);
  fclose(file);
  char command[128];
  snprintf(command, sizeof(command), "/usr/bin/python3 %s 2>/dev/null", path);
  FILE* pipe = popen(command, "r");
  char line[8192];
  int count = 0;
  while (pipe && count < 32 && fgets(line, sizeof(line), pipe)) {
    reference_t* ref = &g_refs[count];
    char* cursor = line;
    int consumed = 0;
    if (sscanf(cursor, "%31s%n", ref->name, &consumed) != 1) continue;
    cursor += consumed;
    ref->count = 0;
    double value;
    while (ref->count < 64 && sscanf(cursor, "%lf%n", &value, &consumed) == 1) {
      ref->values[ref->count++] = value;
      cursor += consumed;
    }
    count++;
  }
  int exit_code = pipe ? pclose(pipe) : -1;
  unlink(path);
  g_num_refs = exit_code == 0 ? count : 0;
}

static const reference_t* ref(const char* name) {
  for (int i = 0; i < g_num_refs; ++i) {
    if (strcmp(g_refs[i].name, name) == 0) return &g_refs[i];
  }
  fail_msg("no reference '%s'", name);
  return NULL;
}

#define REQUIRE_TORCH()                                     \
  do {                                                      \
    load_references();                                      \
    if (g_num_refs == 0) {                                  \
      print_message("PyTorch is not available: skipped\n"); \
      skip();                                               \
    }                                                       \
  } while (0)

static handle_t* from_ref(const char* name, loom_dtype_t dtype,
                          const int64_t* dims, int rank) {
  const reference_t* r = ref(name);
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  assert_int_equal(r->count, n);
  return make(dtype, dims, rank, r->values);
}

static void expect_ref(handle_t* handle, const char* name, double tolerance) {
  const reference_t* r = ref(name);
  expect_values(handle, r->values, r->count, tolerance, name);
}

// sum over every axis of a rank-`rank` tensor.
static handle_t* sum_all(handle_t* x, int rank) {
  double axes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t dims[1] = {rank};
  handle_t* axes_handle = make(LOOM_DTYPE_INT32, dims, 1, axes);
  handle_t* y = bin("Sum", x, axes_handle);
  loom_tensor_handle_release(axes_handle);
  return y;
}

typedef struct mlp_t {
  handle_t *x, *w1, *b1, *w2, *b2, *labels;
} mlp_t;

static void mlp_load(mlp_t* m) {
  static const int64_t kX[] = {8, 6}, kW1[] = {6, 5}, kB1[] = {5},
                       kW2[] = {5, 4}, kB2[] = {4}, kLabels[] = {8};
  m->x = from_ref("x", D, kX, 2);
  m->w1 = from_ref("w1", D, kW1, 2);
  m->b1 = from_ref("b1", D, kB1, 1);
  m->w2 = from_ref("w2", D, kW2, 2);
  m->b2 = from_ref("b2", D, kB2, 1);
  m->labels = from_ref("labels", LOOM_DTYPE_INT64, kLabels, 1);
}

static void mlp_release(mlp_t* m) {
  handle_t* all[] = {m->x, m->w1, m->b1, m->w2, m->b2, m->labels};
  loom__grad_release_all(all, 6);
}

// mean(SparseSoftmaxCrossEntropyWithLogits(relu(x w1 + b1) w2 + b2)).
static handle_t* mlp_loss(const mlp_t* m) {
  handle_t* z1 = bin("MatMul", m->x, m->w1);
  handle_t* a1 = bin("BiasAdd", z1, m->b1);
  handle_t* h = op1("Relu", &a1, 1, LOOM_GRAD_NO_ATTRS);
  handle_t* z2 = bin("MatMul", h, m->w2);
  handle_t* logits = bin("BiasAdd", z2, m->b2);
  handle_t* xent[2] = {NULL, NULL};
  run("SparseSoftmaxCrossEntropyWithLogits",
      LOOM_GRAD_INPUTS(logits, m->labels), LOOM_GRAD_NO_ATTRS, xent, 2);
  double zero = 0;
  handle_t* axis = make(LOOM_DTYPE_INT32, NULL, 0, &zero);
  handle_t* loss = bin("Mean", xent[0], axis);
  handle_t* all[] = {z1, a1, h, z2, logits, xent[0], xent[1], axis};
  loom__grad_release_all(all, 8);
  return loss;
}

static void mlp_step_matches_pytorch(void** state) {
  (void)state;
  REQUIRE_TORCH();
  mlp_t m;
  mlp_load(&m);
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  handle_t* sources[5] = {m.w1, m.b1, m.w2, m.b2, m.x};
  for (int i = 0; i < 5; ++i) LOOM_ASSERT_OK(loom_tape_watch(tape, sources[i]));
  handle_t* loss = mlp_loss(&m);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  expect_ref(loss, "loss", 1e-12);
  handle_t* grads[5];
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 5, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  const char* names[5] = {"dw1", "db1", "dw2", "db2", "dx"};
  for (int i = 0; i < 5; ++i) expect_ref(grads[i], names[i], 1e-10);
  loom__grad_release_all(grads, 5);
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
  mlp_release(&m);
}

// Hessian-vector product of the MLP by nesting two tapes: the outer one
// records the inner one's backward pass (Relu's ReluGrad, the
// cross-entropy's backprop, Mean's broadcast, MatMul and BiasAdd).
static void mlp_hessian_vector_product_matches_pytorch(void** state) {
  (void)state;
  REQUIRE_TORCH();
  mlp_t m;
  mlp_load(&m);
  static const int64_t kV[] = {5, 4};
  handle_t* v = from_ref("v", D, kV, 2);
  loom_op_handler_t* outer = new_tape(false);
  loom_op_handler_t* inner = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
  LOOM_ASSERT_OK(loom_tape_watch(outer, m.w1));
  LOOM_ASSERT_OK(loom_tape_watch(outer, m.w2));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  LOOM_ASSERT_OK(loom_tape_watch(inner, m.w2));
  handle_t* loss = mlp_loss(&m);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* g = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(inner, &loss, 1, &m.w2, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &g));
  expect_ref(g, "dw2", 1e-10);
  handle_t* gv = bin("Mul", g, v);
  handle_t* s = sum_all(gv, 2);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* hv[2];
  handle_t* sources[2] = {m.w1, m.w2};
  LOOM_ASSERT_OK(loom_tape_gradient(outer, &s, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, hv));
  expect_ref(hv[0], "hv_w1", 1e-9);
  expect_ref(hv[1], "hv_w2", 1e-9);
  handle_t* all[] = {hv[0], hv[1], s, gv, g, loss, v};
  loom__grad_release_all(all, 7);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
  mlp_release(&m);
}

// d/dx and d2/dx2 of sum(f(x)) by two nested tapes; `inside` computes the
// inner gradient inside both scopes (TensorFlow's usual layout), else
// after leaving the inner one.
static void second_order(const char* name, bool inside) {
  static const int64_t kS[] = {3};
  handle_t* x = from_ref("s", D, kS, 1);
  loom_op_handler_t* outer = new_tape(false);
  loom_op_handler_t* inner = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
  LOOM_ASSERT_OK(loom_tape_watch(outer, x));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  LOOM_ASSERT_OK(loom_tape_watch(inner, x));
  handle_t* y = NULL;
  handle_t* xx = bin("Mul", x, x);
  if (strcmp(name, "cube") == 0) {
    y = bin("Mul", xx, x);
  } else {
    handle_t* one = scalar(1.0);
    handle_t* denominator = bin("AddV2", one, xx);
    y = bin("RealDiv", xx, denominator);
    loom_tensor_handle_release(one);
    loom_tensor_handle_release(denominator);
  }
  handle_t* total = sum_all(y, 1);
  if (!inside) LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* d1 = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(inner, &total, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &d1));
  if (inside) LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  char what[32];
  snprintf(what, sizeof(what), "%s_d1", name);
  expect_ref(d1, what, 1e-12);
  handle_t* d2 = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(outer, &d1, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &d2));
  snprintf(what, sizeof(what), "%s_d2", name);
  expect_ref(d2, what, 1e-12);
  handle_t* all[] = {x, xx, y, total, d1, d2};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
}

static void nested_tapes_give_second_derivatives(void** state) {
  (void)state;
  REQUIRE_TORCH();
  second_order("cube", false);
  second_order("cube", true);
  second_order("ratio", false);
  second_order("ratio", true);
}

//===----------------------------------------------------------------------===//
// Tape behaviour
//===----------------------------------------------------------------------===//

static const double kX3[] = {0.5, -1.5, 2.0};
static const int64_t kDims3[] = {3};

static handle_t* x3(void) {
  return make(D, kDims3, 1, kX3);
}

static void gradients_of_reused_tensors_are_summed(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  // z = x * x; y = z * z + z + x: dy/dx = 4x^3 + 2x + 1.
  handle_t* z = bin("Mul", x, x);
  handle_t* zz = bin("Mul", z, z);
  handle_t* a = bin("AddV2", zz, z);
  handle_t* y = bin("AddV2", a, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  double expected[3];
  for (int i = 0; i < 3; ++i) {
    double v = kX3[i];
    expected[i] = 4 * v * v * v + 2 * v + 1;
  }
  expect_values(dx, expected, 3, 1e-12, "dy/dx");
  handle_t* all[] = {x, z, zz, a, y, dx};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(tape);
}

// `name` on a and b, placed on `device` explicitly.
static handle_t* bin_on(const char* device, const char* name, handle_t* a,
                        handle_t* b) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, name, &op));
  LOOM_ASSERT_OK(loom_eager_op_set_device(op, device));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, a));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, b));
  handle_t* out = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &out, 1, &count));
  loom_eager_op_destroy(op);
  return out;
}

// dy/dx of y = (x * x) * x + x, each op given `device` (NULL: none).
static handle_t* cube_gradient(const char* device) {
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  handle_t* z = device ? bin_on(device, "Mul", x, x) : bin("Mul", x, x);
  handle_t* c = device ? bin_on(device, "Mul", z, x) : bin("Mul", z, x);
  handle_t* y = device ? bin_on(device, "AddV2", c, x) : bin("AddV2", c, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  assert_non_null(dx);
  handle_t* all[] = {x, z, c, y};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(tape);
  return dx;
}

// An op given a device explicitly (the tape's own device, by any of its
// names) is recorded as any other, as TensorFlow's tape records ops
// whatever their device: the gradient is the one of the same ops without
// a device.
static void ops_given_a_device_are_recorded(void** state) {
  (void)state;
  handle_t* reference = cube_gradient(NULL);
  double want[3];
  assert_int_equal(read_values(reference, want, 3), 3);
  static const char* const kDevices[] = {
      "CPU:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"};
  for (int i = 0; i < 3; ++i) {
    handle_t* dx = cube_gradient(kDevices[i]);
    expect_values(dx, want, 3, 0.0, kDevices[i]);
    loom_tensor_handle_release(dx);
  }
  loom_tensor_handle_release(reference);
}

// dy/dx of y = sum(copy(x) * x), the copy made with loom_context_copy_to
// onto `device` (NULL: no copy) inside the tape's scope.
static handle_t* copy_gradient(loom_op_handler_t* device) {
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  handle_t* c = x;
  if (device) {
    LOOM_ASSERT_OK(loom_context_copy_to(g_ctx, x, device, &c));
    assert_ptr_equal(loom_tensor_handle_handler(c), device);
  }
  handle_t* y = bin("Mul", c, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  assert_non_null(dx);
  if (c != x) loom_tensor_handle_release(c);
  handle_t* all[] = {x, y};
  loom__grad_release_all(all, 2);
  loom_op_handler_release(tape);
  return dx;
}

// A copy between devices made in a tape's scope is recorded (its gradient
// copies back), as TensorFlow's tape records its copies: the gradient is
// the one without the copy.
static void copies_between_devices_are_recorded(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_context_set_cpu_device_count(g_ctx, 2));
  loom_op_handler_t* cpu1 = loom_context_find_handler(g_ctx, "CPU:1");
  assert_non_null(cpu1);
  handle_t* reference = copy_gradient(NULL);
  double want[3];
  assert_int_equal(read_values(reference, want, 3), 3);
  handle_t* dx = copy_gradient(cpu1);
  expect_values(dx, want, 3, 0.0, "d/dx with a copy");
  loom_tensor_handle_release(dx);
  loom_tensor_handle_release(reference);
}

// A scalar loss's default seed is a constant of ones, and Mean's gradient
// then fills in 1/n without multiplying; any other contribution to the
// loss's gradient (the loss listed twice, a target computed from it, an
// explicit output gradient) keeps the product.
static void mean_of_a_loss_with_the_default_seed(void** state) {
  (void)state;
  const loom_dtype_t dtypes[2] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE};
  for (int d = 0; d < 2; ++d) {
    double x_values[3] = {0.5, -1.0, 2.0};
    handle_t* x = make(dtypes[d], kDims3, 1, x_values);
    double zero = 0, three = 3, five = 5;
    handle_t* axis = make(LOOM_DTYPE_INT32, NULL, 0, &zero);
    handle_t* k = make(dtypes[d], NULL, 0, &three);
    handle_t* seed = make(dtypes[d], NULL, 0, &five);
    loom_op_handler_t* tape = recording_tape(true, x);
    handle_t* loss = bin("Mean", x, axis);
    handle_t* tripled = bin("Mul", loss, k);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    struct {
      handle_t* targets[2];
      int32_t num_targets;
      handle_t* output_gradients[2];
      double expected;  // each element of d/dx, times 3
    } cases[] = {
        {{loss, NULL}, 1, {NULL, NULL}, 1},
        {{loss, loss}, 2, {NULL, NULL}, 2},
        {{loss, tripled}, 2, {NULL, NULL}, 4},
        {{tripled, loss}, 2, {NULL, NULL}, 4},
        {{loss, NULL}, 1, {seed, NULL}, 5},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
      handle_t* dx = NULL;
      bool seeded = cases[c].output_gradients[0] != NULL;
      LOOM_ASSERT_OK(
          loom_tape_gradient(tape, cases[c].targets, cases[c].num_targets, &x,
                             1, seeded ? cases[c].output_gradients : NULL,
                             LOOM_UNCONNECTED_NONE, &dx));
      assert_int_equal(loom_tensor_handle_dtype(dx), dtypes[d]);
      double expected[3];
      for (int i = 0; i < 3; ++i) expected[i] = cases[c].expected / 3;
      expect_values(dx, expected, 3, 1e-6, "d mean / dx");
      loom_tensor_handle_release(dx);
    }
    handle_t* all[] = {x, axis, k, seed, loss, tripled};
    loom__grad_release_all(all, 6);
    loom_op_handler_release(tape);
  }
}

// The constants the tape makes without running an op (a loss's seed).
static void host_scalars_are_made_without_ops(void** state) {
  (void)state;
  const loom_dtype_t dtypes[4] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                                  LOOM_DTYPE_INT32, LOOM_DTYPE_INT64};
  for (int d = 0; d < 4; ++d) {
    handle_t* h = NULL;
    LOOM_ASSERT_OK(loom__grad_host_scalar(g_ctx, dtypes[d], 3.0, &h));
    assert_int_equal(loom_tensor_handle_dtype(h), dtypes[d]);
    double expected = 3.0;
    expect_values(h, &expected, 1, 0, "host scalar");
    loom_tensor_handle_release(h);
  }
  handle_t* h = NULL;
  LOOM_ASSERT_STATUS(loom__grad_host_scalar(NULL, LOOM_DTYPE_FLOAT, 1.0, &h),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom__grad_host_scalar: eager is NULL");
  assert_null(h);
  LOOM_ASSERT_STATUS(loom__grad_host_scalar(g_ctx, LOOM_DTYPE_HALF, 1.0, &h),
                     LOOM_STATUS_INVALID_ARGUMENT, "dtype half is not");
  assert_null(h);
}

static void several_targets_and_output_gradients(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(true, x);
  handle_t* y1 = bin("Mul", x, x);
  handle_t* y2 = op1("Neg", &x, 1, LOOM_GRAD_NO_ATTRS);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* targets[2] = {y1, y2};
  double w_values[3] = {1.0, 2.0, 3.0};
  handle_t* w = make(D, kDims3, 1, w_values);
  handle_t* seeds[2] = {w, NULL};  // NULL: ones
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, targets, 2, &x, 1, seeds,
                                    LOOM_UNCONNECTED_NONE, &dx));
  double expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = 2 * kX3[i] * w_values[i] - 1;
  expect_values(dx, expected, 3, 1e-12, "d(y1 + y2)/dx");
  loom_tensor_handle_release(dx);
  // The gradient of a source with respect to itself is the seed.
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &x, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  double ones[3] = {1, 1, 1};
  expect_values(dx, ones, 3, 0, "dx/dx");
  handle_t* all[] = {x, y1, y2, w, dx};
  loom__grad_release_all(all, 5);
  loom_op_handler_release(tape);
}

static void persistent_tape_computes_gradients_several_times(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(true, x);
  handle_t* y = bin("Mul", x, x);
  handle_t* z = bin("Mul", y, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dy = NULL;
  handle_t* dz = NULL;
  handle_t* dy_again = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dy));
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &z, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dz));
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dy_again));
  double e_dy[3], e_dz[3];
  for (int i = 0; i < 3; ++i) {
    e_dy[i] = 2 * kX3[i];
    e_dz[i] = 3 * kX3[i] * kX3[i];
  }
  expect_values(dy, e_dy, 3, 1e-12, "dy");
  expect_values(dz, e_dz, 3, 1e-12, "dz");
  expect_values(dy_again, e_dy, 3, 1e-12, "dy again");
  handle_t* all[] = {x, y, z, dy, dz, dy_again};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(tape);
}

static void non_persistent_tape_computes_one_gradient(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  handle_t* y = bin("Mul", x, x);
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  // Ops after the gradient (still in the scope) are not recorded.
  handle_t* z = bin("Mul", y, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* again = NULL;
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &y, 1, &x, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &again),
                     LOOM_STATUS_FAILED_PRECONDITION,
                     "computes gradients only once");
  assert_null(again);
  LOOM_ASSERT_STATUS(loom_tape_watch(tape, x), LOOM_STATUS_FAILED_PRECONDITION,
                     "has computed its gradient already");
  LOOM_ASSERT_STATUS(loom_tape_jacobian(tape, y, x, &again),
                     LOOM_STATUS_FAILED_PRECONDITION, "must be persistent");
  char text[128];
  assert_non_null(strstr(
      (loom_op_handler_vtable(tape)->debug_string(tape, text, sizeof(text)),
       text),
      "released"));
  handle_t* all[] = {x, y, z, dx};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(tape);
}

static void unconnected_sources_give_null_or_zeros(void** state) {
  (void)state;
  handle_t* x = x3();
  double z_values[2] = {4, 5};
  int64_t z_dims[1] = {2};
  handle_t* z = make(D, z_dims, 1, z_values);
  handle_t* unwatched = x3();
  loom_op_handler_t* tape = recording_tape(true, x);
  LOOM_ASSERT_OK(loom_tape_watch(tape, z));
  handle_t* y = bin("Mul", x, x);
  handle_t* w = bin("Mul", unwatched, unwatched);  // not recorded
  // An integer path: ArgMax is not differentiable, so nothing flows.
  double zero = 0;
  handle_t* axis = make(LOOM_DTYPE_INT32, NULL, 0, &zero);
  handle_t* index = bin("ArgMax", x, axis);
  handle_t* as_float =
      op1("Cast", &index, 1, LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", D)));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* sources[2] = {x, z};
  handle_t* grads[2];
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  assert_non_null(grads[0]);
  assert_null(grads[1]);
  loom__grad_release_all(grads, 2);
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, grads));
  double zeros[2] = {0, 0};
  expect_values(grads[1], zeros, 2, 0, "zeros like z");
  loom__grad_release_all(grads, 2);
  // A target the tape never saw, and one behind a non-differentiable op.
  handle_t* targets[2] = {w, as_float};
  for (int t = 0; t < 2; ++t) {
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &targets[t], 1, sources, 2, NULL,
                                      LOOM_UNCONNECTED_NONE, grads));
    assert_null(grads[0]);
    assert_null(grads[1]);
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &targets[t], 1, sources, 2, NULL,
                                      LOOM_UNCONNECTED_ZERO, grads));
    double zeros3[3] = {0, 0, 0};
    expect_values(grads[0], zeros3, 3, 0, "zeros like x");
    loom__grad_release_all(grads, 2);
  }
  handle_t* all[] = {x, z, unwatched, y, w, axis, index, as_float};
  loom__grad_release_all(all, 8);
  loom_op_handler_release(tape);
}

static void stop_recording_pauses_the_tape(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(true, x);
  LOOM_ASSERT_OK(loom_tape_stop_recording(tape));
  LOOM_ASSERT_OK(loom_tape_stop_recording(tape));  // nests
  handle_t* hidden = bin("Mul", x, x);
  LOOM_ASSERT_OK(loom_tape_resume_recording(tape));
  handle_t* still_hidden = bin("Mul", x, x);
  LOOM_ASSERT_OK(loom_tape_resume_recording(tape));
  handle_t* three = scalar(3.0);
  handle_t* seen = bin("Mul", x, three);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_STATUS(loom_tape_resume_recording(tape),
                     LOOM_STATUS_FAILED_PRECONDITION, "was not stopped");
  handle_t* dx = NULL;
  handle_t* targets[3] = {hidden, still_hidden, seen};
  for (int t = 0; t < 2; ++t) {
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &targets[t], 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &dx));
    assert_null(dx);
  }
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &seen, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dx));
  double threes[3] = {3, 3, 3};
  expect_values(dx, threes, 3, 0, "d(3x)/dx");
  handle_t* all[] = {x, hidden, still_hidden, three, seen, dx};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(tape);
}

static handle_t* new_variable(const char* name, handle_t* value) {
  int64_t dims[1] = {3};
  handle_t* resource =
      op1("VarHandleOp", NULL, 0,
          LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", D),
                          LOOM_GRAD_SHAPE("shape", dims, 1),
                          LOOM_GRAD_STRING("shared_name", name)));
  run("AssignVariableOp", LOOM_GRAD_INPUTS(resource, value),
      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", D)), NULL, 0);
  return resource;
}

static handle_t* read_variable(handle_t* resource) {
  return op1("ReadVariableOp", &resource, 1,
             LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", D)));
}

// y = sum(v * v) with v read from a variable: dy/dv = 2v, through the
// handle.
static void variable_gradient(bool watch_accessed, bool watch, bool expect) {
  handle_t* value = x3();
  handle_t* resource = new_variable("tape_test_v", value);
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  options.watch_accessed_variables = watch_accessed;
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, &options, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  if (watch) LOOM_ASSERT_OK(loom_tape_watch(tape, resource));
  handle_t* v = read_variable(resource);
  handle_t* vv = bin("Mul", v, v);
  handle_t* y = sum_all(vv, 1);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dv = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, &resource, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dv));
  if (expect) {
    double expected[3];
    for (int i = 0; i < 3; ++i) expected[i] = 2 * kX3[i];
    expect_values(dv, expected, 3, 1e-12, "dy/dvariable");
  } else {
    assert_null(dv);
  }
  run("DestroyResourceOp", &resource, 1, LOOM_GRAD_NO_ATTRS, NULL, 0);
  handle_t* all[] = {value, resource, v, vv, y, dv};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(tape);
}

static void variables_read_in_scope_are_watched(void** state) {
  (void)state;
  variable_gradient(true, false, true);    // automatically
  variable_gradient(false, true, true);    // explicitly
  variable_gradient(false, false, false);  // not at all
}

static void unread_variable_source_with_zero_policy_fails_clearly(
    void** state) {
  (void)state;
  handle_t* value = x3();
  handle_t* resource = new_variable("tape_test_unread", value);
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  LOOM_ASSERT_OK(loom_tape_watch(tape, resource));
  handle_t* y = bin("Mul", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* grads[2];
  handle_t* sources[2] = {x, resource};
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &y, 1, sources, 2, NULL,
                                        LOOM_UNCONNECTED_ZERO, grads),
                     LOOM_STATUS_INVALID_ARGUMENT, "was not read on the tape");
  assert_null(grads[0]);
  assert_null(grads[1]);
  run("DestroyResourceOp", &resource, 1, LOOM_GRAD_NO_ATTRS, NULL, 0);
  handle_t* all[] = {value, resource, x, y};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(tape);
}

static void logging_handler_under_the_tape_gives_the_same_gradients(
    void** state) {
  (void)state;
  REQUIRE_TORCH();
  mlp_t m;
  mlp_load(&m);
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(loom_scope_logging_handler_create(g_ctx, NULL, &logging));
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, logging));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  handle_t* sources[4] = {m.w1, m.b1, m.w2, m.b2};
  for (int i = 0; i < 4; ++i) LOOM_ASSERT_OK(loom_tape_watch(tape, sources[i]));
  handle_t* loss = mlp_loss(&m);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  int64_t forward_ops = loom_scope_logging_handler_count(logging);
  assert_int_equal(forward_ops, 7);
  handle_t* grads[4];
  // Outside every scope: the backward ops still run under the logging
  // handler, the handler the forward ops ran under.
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, 4, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  assert_true(loom_scope_logging_handler_count(logging) > forward_ops + 7);
  const char* names[4] = {"dw1", "db1", "dw2", "db2"};
  for (int i = 0; i < 4; ++i) expect_ref(grads[i], names[i], 1e-10);
  assert_null(loom_context_scope_handler(g_ctx));
  loom__grad_release_all(grads, 4);
  loom_tensor_handle_release(loss);
  loom_op_handler_release(tape);
  loom_op_handler_release(logging);
  mlp_release(&m);
}

static void jacobian_of_small_functions(void** state) {
  (void)state;
  handle_t* x = x3();
  double a_values[6] = {1, 2, 3, 4, 5, 6};
  int64_t a_dims[2] = {2, 3};
  int64_t x_dims[2] = {3, 1};
  handle_t* a = make(D, a_dims, 2, a_values);
  handle_t* column = make(D, x_dims, 2, kX3);
  loom_op_handler_t* tape = recording_tape(true, x);
  LOOM_ASSERT_OK(loom_tape_watch(tape, column));
  handle_t* y = bin("Mul", x, x);
  handle_t* ax = bin("MatMul", a, column);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* j = NULL;
  LOOM_ASSERT_OK(loom_tape_jacobian(tape, y, x, &j));
  double diag[9] = {0};
  for (int i = 0; i < 3; ++i) diag[i * 4] = 2 * kX3[i];
  expect_values(j, diag, 9, 1e-12, "jacobian of x*x");
  loom_tensor_metadata_t metadata;
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(j, &metadata));
  assert_int_equal(metadata.shape.rank, 2);
  loom_tensor_handle_release(j);
  LOOM_ASSERT_OK(loom_tape_jacobian(tape, ax, column, &j));
  LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(j, &metadata));
  assert_int_equal(metadata.shape.rank, 4);  // [2, 1, 3, 1]
  expect_values(j, a_values, 6, 1e-12, "jacobian of a @ x");
  handle_t* all[] = {x, a, column, y, ax, j};
  loom__grad_release_all(all, 6);
  loom_op_handler_release(tape);
}

static void tape_released_in_its_scope_keeps_results_valid(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  handle_t* y = bin("Mul", x, x);
  loom_op_handler_release(tape);  // the scope still holds it
  handle_t* z = bin("Mul", y, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));  // frees the tape
  double expected[3];
  for (int i = 0; i < 3; ++i) expected[i] = kX3[i] * kX3[i] * kX3[i];
  expect_values(z, expected, 3, 1e-12, "x^3");
  handle_t* all[] = {x, y, z};
  loom__grad_release_all(all, 3);
}

// FusedBatchNormGradV3 has no gradient (TensorFlow's uses ops Loom does
// not have): asking for a gradient through it is NOT_FOUND.
static void op_without_gradient_on_the_path_is_an_error(void** state) {
  (void)state;
  const int64_t x_dims[4] = {1, 2, 2, 1}, c_dims[1] = {1};
  const double dy_values[4] = {0.5, -1, 2, 0.25}, x_values[4] = {1, 4, 2, 3};
  const double one = 1.0, mean = 2.5, inv_std = 0.8;
  const loom_dtype_t f = LOOM_DTYPE_FLOAT;
  handle_t* dy = make(f, x_dims, 4, dy_values);
  handle_t* inputs[6] = {dy,
                         make(f, x_dims, 4, x_values),
                         make(f, c_dims, 1, &one),
                         make(f, c_dims, 1, &mean),
                         make(f, c_dims, 1, &inv_std),
                         make(f, c_dims, 1, NULL)};
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, dy));
  handle_t* back[5] = {NULL};
  run("FusedBatchNormGradV3", inputs, 6, LOOM_GRAD_NO_ATTRS, back, 5);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_null(loom_gradient_find("FusedBatchNormGradV3"));
  handle_t* grad = NULL;
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &back[0], 1, &dy, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &grad),
                     LOOM_STATUS_NOT_FOUND,
                     "no gradient is registered for op "
                     "'FusedBatchNormGradV3'");
  assert_null(grad);
  loom__grad_release_all(inputs, 6);
  loom__grad_release_all(back, 5);
  loom_op_handler_release(tape);
}

// A gradient function is told which inputs lead to a source: the MatMul of
// an unwatched batch computes the weights' gradient only (one backward
// MatMul fewer, seen by a logging handler the ops run under), and that
// gradient is the same.
static void unneeded_input_gradients_are_skipped(void** state) {
  (void)state;
  const int64_t x_dims[2] = {2, 3}, w_dims[2] = {3, 2};
  const double x_values[6] = {0.5, -1, 2, 1.5, 0.25, -3};
  const double w_values[6] = {1, -2, 0.5, 3, -1, 2};
  int64_t backward_ops[2];
  double dw[2][6];
  for (int watch_x = 0; watch_x < 2; ++watch_x) {
    handle_t* x = make(D, x_dims, 2, x_values);
    handle_t* w = make(D, w_dims, 2, w_values);
    loom_op_handler_t* logging = NULL;
    LOOM_ASSERT_OK(loom_scope_logging_handler_create(g_ctx, NULL, &logging));
    loom_op_handler_t* tape = new_tape(false);
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, logging));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, w));
    if (watch_x) LOOM_ASSERT_OK(loom_tape_watch(tape, x));
    handle_t* y = bin("MatMul", x, w);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    int64_t before = loom_scope_logging_handler_count(logging);
    handle_t* sources[2] = {w, x};
    handle_t* grads[2] = {NULL, NULL};
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, sources, 1 + watch_x, NULL,
                                      LOOM_UNCONNECTED_NONE, grads));
    backward_ops[watch_x] = loom_scope_logging_handler_count(logging) - before;
    assert_int_equal(read_values(grads[0], dw[watch_x], 6), 6);
    if (watch_x) assert_non_null(grads[1]);
    loom__grad_release_all(grads, 2);
    handle_t* all[3] = {x, w, y};
    loom__grad_release_all(all, 3);
    loom_op_handler_release(tape);
    loom_op_handler_release(logging);
  }
  assert_int_equal(backward_ops[1] - backward_ops[0], 1);
  for (int i = 0; i < 6; ++i) expect_close(dw[0][i], dw[1][i], 0, "dw", i);
}

// AddV2 prepared on tape `a`, then on tape `b` from it: the two share
// their op data.
static void prepare_on_two_tapes(loom_op_handler_t* a, loom_op_handler_t* b,
                                 loom_prepared_op_t** on_a,
                                 loom_prepared_op_t** on_b) {
  LOOM_ASSERT_OK(
      loom_runtime_prepare_op(loom_context_runtime(g_ctx), "AddV2", a, on_a));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(*on_a, b, on_b));
  assert_ptr_equal(loom_prepared_op_handler(*on_b), b);
  assert_ptr_equal(loom_prepared_op_data(*on_b), loom_prepared_op_data(*on_a));
}

// An eager op run under a new tape each step (a training loop) prepares
// itself from its previous tape's prepared op: the tapes share the per-op
// data (the op prepared on their common outer handler, its gradient), and
// each gives its own, correct gradient.
static void new_tapes_share_what_their_ops_prepared(void** state) {
  (void)state;
  const int64_t dims[1] = {3};
  const double x_values[3] = {0.5, -2, 3};
  handle_t* x = make(D, dims, 1, x_values);
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, "Mul", &op));
  for (int step = 0; step < 3; ++step) {
    loom_op_handler_t* tape = recording_tape(false, x);
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
    LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
    handle_t* y = NULL;
    int32_t count = 0;
    LOOM_ASSERT_OK(loom_eager_op_execute(op, &y, 1, &count));
    LOOM_ASSERT_OK(loom_eager_op_reset(op, NULL));
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* dx = NULL;
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &dx));
    double expected[3];
    for (int i = 0; i < 3; ++i) expected[i] = 2 * x_values[i];
    expect_values(dx, expected, 3, 0, "d(x*x)/dx");
    loom_tensor_handle_release(dx);
    loom_tensor_handle_release(y);
    loom_op_handler_release(tape);
  }
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(x);

  // The same through the runtime: shared data between tapes, none taken
  // from another type of handler.
  loom_runtime_t* runtime = loom_context_runtime(g_ctx);
  loom_op_handler_t* a = new_tape(false);
  loom_op_handler_t* b = new_tape(false);
  loom_prepared_op_t* on_a = NULL;
  loom_prepared_op_t* on_b = NULL;
  loom_prepared_op_t* on_cpu = NULL;
  prepare_on_two_tapes(a, b, &on_a, &on_b);
  assert_string_equal(loom_prepared_op_name(on_b), "AddV2");
  loom_prepared_op_release(on_a);  // the data lives on with on_b
  loom_prepared_op_release(on_b);
  loom_op_handler_t* cpu = loom_context_cpu(g_ctx);
  LOOM_ASSERT_OK(loom_runtime_prepare_op(runtime, "AddV2", cpu, &on_cpu));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(on_cpu, b, &on_b));
  assert_ptr_equal(loom_prepared_op_handler(on_b), b);
  assert_ptr_not_equal(loom_prepared_op_data(on_b),
                       loom_prepared_op_data(on_cpu));
  loom_prepared_op_release(on_b);
  LOOM_ASSERT_STATUS(loom_runtime_prepare_op_like(NULL, b, &on_b),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_runtime_prepare_op_like: sibling is NULL");
  LOOM_ASSERT_STATUS(loom_runtime_prepare_op_like(on_cpu, NULL, &on_b),
                     LOOM_STATUS_INVALID_ARGUMENT, "handler is NULL");
  LOOM_ASSERT_STATUS(loom_runtime_prepare_op_like(on_cpu, b, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_op is NULL");
  loom_prepared_op_release(on_cpu);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
}

static loom_status_t custom_grad(loom_gradient_context_t* context,
                                 loom_tensor_handle_t* const* dy,
                                 loom_tensor_handle_t** dx, void* user);

// A gradient registered after a tape prepared an op is seen by the next
// tape: that one prepares the op anew instead of sharing stale data.
static void a_gradient_registered_later_reaches_new_tapes(void** state) {
  (void)state;
  loom_op_handler_t* a = new_tape(false);
  loom_op_handler_t* b = new_tape(false);
  loom_op_handler_t* c = new_tape(false);
  loom_prepared_op_t* on_a = NULL;
  loom_prepared_op_t* on_b = NULL;
  loom_prepared_op_t* on_c = NULL;
  prepare_on_two_tapes(a, b, &on_a, &on_b);
  loom_gradient_def_t def = {.struct_size = sizeof(def),
                             .op_name = "TapeTestLateGradientOp",
                             .fn = custom_grad};
  LOOM_ASSERT_OK(loom_gradient_register(&def));
  LOOM_ASSERT_OK(loom_runtime_prepare_op_like(on_b, c, &on_c));
  assert_ptr_not_equal(loom_prepared_op_data(on_c),
                       loom_prepared_op_data(on_b));
  loom_prepared_op_release(on_a);
  loom_prepared_op_release(on_b);
  loom_prepared_op_release(on_c);
  loom_op_handler_release(a);
  loom_op_handler_release(b);
  loom_op_handler_release(c);
}

static loom_status_t custom_grad(loom_gradient_context_t* context,
                                 loom_tensor_handle_t* const* dy,
                                 loom_tensor_handle_t** dx, void* user) {
  (void)context;
  (void)dy;
  (void)dx;
  (void)user;
  return loom_ok_status();
}

static void registry_checks_its_arguments(void** state) {
  (void)state;
  LOOM_ASSERT_STATUS(loom_gradient_register(NULL), LOOM_STATUS_INVALID_ARGUMENT,
                     "def is NULL");
  loom_gradient_def_t def = {.struct_size = sizeof(def), .op_name = ""};
  LOOM_ASSERT_STATUS(loom_gradient_register(&def), LOOM_STATUS_INVALID_ARGUMENT,
                     "op_name is empty");
  def.op_name = "TapeTestCustomOp";
  def.struct_size = 8;
  LOOM_ASSERT_STATUS(loom_gradient_register(&def), LOOM_STATUS_INVALID_ARGUMENT,
                     "struct_size");
  def.struct_size = sizeof(def);
  def.fn = custom_grad;
  def.inputs_used = LOOM_GRADIENT_USES(2);
  char name[32] = "TapeTestCustomOp";
  def.op_name = name;
  LOOM_ASSERT_OK(loom_gradient_register(&def));
  name[0] = 'X';  // the registry copied the name
  const loom_gradient_def_t* found = loom_gradient_find("TapeTestCustomOp");
  assert_non_null(found);
  assert_ptr_equal(found->fn, custom_grad);
  assert_int_equal(found->inputs_used, 4);
  def.op_name = "TapeTestCustomOp";
  LOOM_ASSERT_STATUS(loom_gradient_register(&def), LOOM_STATUS_ALREADY_EXISTS,
                     "already has a gradient");
  // A definition made before `flags` existed: accepted, its flags 0 (what
  // lies past its struct_size is not read).
  loom_gradient_def_t old = def;
  old.op_name = "TapeTestOlderDefOp";
  old.struct_size = offsetof(loom_gradient_def_t, flags);
  old.flags = LOOM_GRADIENT_COLLECTIVE;
  LOOM_ASSERT_OK(loom_gradient_register(&old));
  found = loom_gradient_find("TapeTestOlderDefOp");
  assert_non_null(found);
  assert_ptr_equal(found->fn, custom_grad);
  assert_int_equal(found->flags, 0);
  assert_int_equal(found->struct_size, sizeof(loom_gradient_def_t));
  old.op_name = "TapeTestTooOldDefOp";
  old.struct_size = offsetof(loom_gradient_def_t, flags) - 1;
  LOOM_ASSERT_STATUS(loom_gradient_register(&old), LOOM_STATUS_INVALID_ARGUMENT,
                     "expected at least");
  loom_jvp_def_t jvp = {.struct_size = sizeof(jvp), .op_name = NULL};
  LOOM_ASSERT_STATUS(loom_jvp_register(&jvp), LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_jvp_register");
  jvp.op_name = "TapeTestCustomOp";
  LOOM_ASSERT_OK(loom_jvp_register(&jvp));
  assert_non_null(loom_jvp_find("TapeTestCustomOp"));
  LOOM_ASSERT_STATUS(loom_jvp_register(&jvp), LOOM_STATUS_ALREADY_EXISTS,
                     "already has a JVP");
  assert_null(loom_jvp_find(NULL));
}

static void api_checks_its_arguments(void** state) {
  (void)state;
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_STATUS(loom_tape_create(NULL, NULL, &tape),
                     LOOM_STATUS_INVALID_ARGUMENT, "context is NULL");
  LOOM_ASSERT_STATUS(loom_tape_create(g_ctx, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "out_tape is NULL");
  loom_tape_options_t options = {.struct_size = 4};
  LOOM_ASSERT_STATUS(loom_tape_create(g_ctx, &options, &tape),
                     LOOM_STATUS_INVALID_ARGUMENT, "struct_size");
  loom_tape_options_initialize(NULL);  // no crash
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  assert_string_equal(loom_op_handler_type_name(tape), "TAPE");
  loom_op_handler_t* logging = NULL;
  LOOM_ASSERT_OK(loom_scope_logging_handler_create(g_ctx, NULL, &logging));
  handle_t* x = x3();
  handle_t* out = NULL;
  LOOM_ASSERT_STATUS(loom_tape_watch(NULL, x), LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tape_watch: tape is NULL");
  LOOM_ASSERT_STATUS(loom_tape_watch(logging, x), LOOM_STATUS_INVALID_ARGUMENT,
                     "not a gradient tape (type 'LOGGING')");
  LOOM_ASSERT_STATUS(loom_tape_watch(tape, NULL), LOOM_STATUS_INVALID_ARGUMENT,
                     "handle is NULL");
  LOOM_ASSERT_STATUS(loom_tape_stop_recording(NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "tape is NULL");
  LOOM_ASSERT_STATUS(loom_tape_resume_recording(logging),
                     LOOM_STATUS_INVALID_ARGUMENT, "not a gradient tape");
  LOOM_ASSERT_STATUS(loom_tape_gradient(logging, &x, 1, &x, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "not a gradient tape");
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, NULL, 1, &x, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "invalid targets");
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &x, 1, NULL, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "invalid sources");
  LOOM_ASSERT_STATUS(
      loom_tape_gradient(tape, &x, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "out_gradients is NULL");
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &x, 1, &x, 1, NULL,
                                        (loom_unconnected_gradients_t)7, &out),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "unknown unconnected gradients policy");
  handle_t* null_handle = NULL;
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &null_handle, 1, &x, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "targets[0] is NULL");
  LOOM_ASSERT_STATUS(loom_tape_gradient(tape, &x, 1, &null_handle, 1, NULL,
                                        LOOM_UNCONNECTED_NONE, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "sources[0] is NULL");
  LOOM_ASSERT_STATUS(loom_tape_jacobian(NULL, x, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "tape is NULL");
  LOOM_ASSERT_STATUS(loom_tape_jacobian(tape, NULL, x, &out),
                     LOOM_STATUS_INVALID_ARGUMENT, "target is NULL");
  // The gradient context's accessors tolerate NULL and bad indices.
  assert_null(loom_gradient_context_eager(NULL));
  assert_null(loom_gradient_context_op_name(NULL));
  assert_null(loom_gradient_context_attrs(NULL));
  assert_int_equal(loom_gradient_context_num_inputs(NULL), 0);
  assert_int_equal(loom_gradient_context_num_outputs(NULL), 0);
  assert_null(loom_gradient_context_input(NULL, 0));
  assert_null(loom_gradient_context_output(NULL, 0));
  assert_null(loom_gradient_context_input_metadata(NULL, 0));
  assert_null(loom_gradient_context_output_metadata(NULL, -1));
  assert_false(loom_gradient_context_input_needs_gradient(NULL, 0));
  loom_attr_value_t attr_value;
  assert_false(loom_gradient_context_attr(NULL, "T", &attr_value));
  loom_tensor_handle_release(x);
  loom_op_handler_release(logging);
  loom_op_handler_release(tape);
}

//===----------------------------------------------------------------------===//
// Copies: a handler with its own tensors under the tape
//===----------------------------------------------------------------------===//

// "WRAP": its tensors hold a CPU handle; ops unwrap their inputs, run on
// the CPU and wrap their results. CopyOn wraps, CopyOff and CopyOnGrad
// unwrap (its gradient of a copy sums nothing: there is one component).
typedef struct wrap_state_t {
  loom_context_t* context;
  int copies_back;  // CopyOnGrad executions
} wrap_state_t;

static loom_status_t wrap_make(wrap_state_t* state, loom_op_handler_t** out);

static loom_status_t wrap_prepare(loom_op_handler_t* handler,
                                  const char* op_name, const loom_op_def_t* op,
                                  void** out_op_data) {
  (void)handler;
  (void)op_name;
  (void)op;
  *out_op_data = NULL;
  return loom_ok_status();
}

static handle_t* unwrapped(loom_op_handler_t* handler, handle_t* h) {
  if (loom_tensor_handle_handler(h) != handler) return h;
  return loom_tensor_handle_representation(h);
}

static loom_status_t wrap_result(loom_op_handler_t* handler, handle_t* inner,
                                 handle_t** out) {
  loom_tensor_metadata_t metadata;
  loom_status_t status = loom_tensor_handle_wait_metadata(inner, &metadata);
  if (!status) {
    status = loom_tensor_handle_create_representation(handler, &metadata, inner,
                                                      out);
  }
  if (status) loom_tensor_handle_release(inner);
  return status;
}

static loom_status_t wrap_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  wrap_state_t* state = loom_op_handler_state(handler);
  const char* name = loom_prepared_op_name(invocation->op);
  loom_status_t status = loom_ok_status();
  bool unwrap = strcmp(name, "CopyOff") == 0 || strcmp(name, "CopyOnGrad") == 0;
  if (strcmp(name, "CopyOnGrad") == 0) state->copies_back++;
  if (strcmp(name, "CopyOn") == 0 || unwrap) {
    handle_t* inner = unwrapped(handler, invocation->arguments[0]);
    loom_tensor_handle_retain(inner);
    if (unwrap) {
      invocation->results[0] = inner;
    } else {
      status = wrap_result(handler, inner, &invocation->results[0]);
    }
  } else {
    loom_eager_op_t* op = NULL;
    status = loom_eager_op_create(state->context, name, &op);
    if (!status) status = loom_eager_op_set_device(op, "CPU:0");
    for (int32_t i = 0; i < invocation->num_arguments && !status; ++i) {
      status = loom_eager_op_add_input(
          op, unwrapped(handler, invocation->arguments[i]));
    }
    if (!status) status = loom_eager_op_add_attrs(op, invocation->attrs);
    handle_t* inner[4] = {NULL, NULL, NULL, NULL};
    int32_t count = 0;
    if (!status) {
      status =
          loom_eager_op_execute(op, inner, invocation->num_results, &count);
    }
    for (int32_t k = 0; k < count; ++k) {
      if (!status) {
        status = wrap_result(handler, inner[k], &invocation->results[k]);
      } else {
        loom_tensor_handle_release(inner[k]);
      }
    }
    loom_eager_op_destroy(op);
  }
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  if (status) {
    for (int32_t k = 0; k < invocation->num_results; ++k) {
      loom_tensor_handle_release(invocation->results[k]);
      loom_status_ignore(loom_tensor_handle_create_error(
          handler, loom_status_clone(status), &invocation->results[k]));
    }
  }
  return status;
}

static void wrap_release_representation(loom_op_handler_t* handler,
                                        void* representation) {
  (void)handler;
  loom_tensor_handle_release(representation);
}

static loom_status_t wrap_merge(loom_op_handler_t* handler,
                                loom_op_handler_t* outer,
                                loom_op_handler_t** out) {
  (void)outer;
  return wrap_make(loom_op_handler_state(handler), out);
}

static const loom_op_handler_vtable_t kWrapVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "WRAP",
    .prepare = wrap_prepare,
    .execute = wrap_execute,
    .merge = wrap_merge,
    .release_representation = wrap_release_representation,
};

static loom_status_t wrap_make(wrap_state_t* state, loom_op_handler_t** out) {
  return loom_op_handler_create(loom_context_runtime(state->context),
                                &kWrapVtable, state, NULL, out);
}

// With a handler that copies tensors on under the tape, the gradient of a
// CPU source comes back to the CPU through CopyOn's gradient, CopyOnGrad.
static void gradients_flow_back_through_copies(void** state) {
  (void)state;
  wrap_state_t wrap_state = {g_ctx, 0};
  loom_op_handler_t* wrap = NULL;
  LOOM_ASSERT_OK(wrap_make(&wrap_state, &wrap));
  handle_t* a = x3();
  double b_values[3] = {2, 3, 4};
  handle_t* b = make(D, kDims3, 1, b_values);
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, wrap));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, a));
  handle_t* c = bin("Mul", a, b);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_string_equal(loom_op_handler_type_name(loom_tensor_handle_handler(c)),
                      "WRAP");
  handle_t* da = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &c, 1, &a, 1, NULL, LOOM_UNCONNECTED_NONE, &da));
  assert_non_null(da);
  assert_ptr_equal(loom_tensor_handle_handler(da), loom_context_cpu(g_ctx));
  assert_int_equal(wrap_state.copies_back, 1);
  expect_values(da, b_values, 3, 0, "da");
  handle_t* all[] = {a, b, c, da};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(tape);
  loom_op_handler_release(wrap);
}

// The tape tracks a tensor only while someone else can still use it, or
// a gradient needs it: a long chain whose intermediates the caller drops
// leaves a bounded number of tracked tensors.
static void dropped_intermediates_are_not_kept(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* tape = recording_tape(false, x);
  handle_t* y = x;
  loom_tensor_handle_retain(y);
  for (int i = 0; i < 1000; ++i) {
    handle_t* next = bin("AddV2", y, x);  // its gradient keeps no tensor
    loom_tensor_handle_release(y);
    y = next;
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  char text[160];
  loom_op_handler_vtable(tape)->debug_string(tape, text, sizeof(text));
  long long ops = 0, tracked = 0;
  assert_int_equal(sscanf(text, "gradient tape (%lld ops, %lld tensors tracked",
                          &ops, &tracked),
                   2);
  assert_int_equal(ops, 1000);
  assert_true(tracked <= 200);
  handle_t* dx = NULL;
  LOOM_ASSERT_OK(
      loom_tape_gradient(tape, &y, 1, &x, 1, NULL, LOOM_UNCONNECTED_NONE, &dx));
  double expected[3] = {1001, 1001, 1001};
  expect_values(dx, expected, 3, 0, "d(x + ... + x)/dx");
  handle_t* all[] = {x, y, dx};
  loom__grad_release_all(all, 3);
  loom_op_handler_release(tape);
}

// A tape watching a tensor that another live tape tracks takes its tag
// over; the first tape still finds the tensor (in its map) and both give
// their gradients.
static void tapes_sharing_a_watched_tensor_both_give_gradients(void** state) {
  (void)state;
  handle_t* x = x3();
  loom_op_handler_t* first = new_tape(true);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, first));
  LOOM_ASSERT_OK(loom_tape_watch(first, x));
  handle_t* y = bin("Mul", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  uint64_t first_tag = loom_tensor_handle_tag(x);
  assert_int_not_equal(first_tag, 0);
  loom_op_handler_t* second = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, second));
  LOOM_ASSERT_OK(loom_tape_watch(second, x));
  assert_int_not_equal(loom_tensor_handle_tag(x), first_tag);
  handle_t* z = bin("AddV2", x, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  // The first tape records more with x after losing its tag.
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, first));
  handle_t* w = bin("Mul", y, x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* dz = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(second, &z, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dz));
  handle_t* dy = NULL;
  handle_t* dw = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(first, &y, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dy));
  LOOM_ASSERT_OK(loom_tape_gradient(first, &w, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &dw));
  double e_dz[3] = {2, 2, 2}, e_dy[3], e_dw[3];
  for (int i = 0; i < 3; ++i) {
    e_dy[i] = 2 * kX3[i];
    e_dw[i] = 3 * kX3[i] * kX3[i];
  }
  expect_values(dz, e_dz, 3, 0, "dz");
  expect_values(dy, e_dy, 3, 1e-12, "dy");
  expect_values(dw, e_dw, 3, 1e-12, "dw");
  // Releasing the tapes clears the tags of what they watched.
  loom_op_handler_release(second);
  loom_op_handler_release(first);
  assert_int_equal(loom_tensor_handle_tag(x), 0);
  handle_t* all[] = {x, y, z, w, dz, dy, dw};
  loom__grad_release_all(all, 7);
}

// The handle tag the tape relies on: 0 until set, compare-and-swap.
static void handle_tags_are_compare_and_swap(void** state) {
  (void)state;
  handle_t* x = x3();
  assert_int_equal(loom_tensor_handle_tag(x), 0);
  uint64_t expected = 1;
  assert_false(loom_tensor_handle_exchange_tag(x, &expected, 7));
  assert_int_equal(expected, 0);
  assert_true(loom_tensor_handle_exchange_tag(x, &expected, 7));
  assert_int_equal(loom_tensor_handle_tag(x), 7);
  expected = 7;
  assert_true(loom_tensor_handle_exchange_tag(x, &expected, 0));
  assert_int_equal(loom_tensor_handle_tag(NULL), 0);
  assert_false(loom_tensor_handle_exchange_tag(NULL, &expected, 1));
  assert_false(loom_tensor_handle_exchange_tag(x, NULL, 1));
  loom_tensor_handle_release(x);
}

// More arguments and results than the tape keeps inline.
static void ops_with_many_inputs_are_recorded(void** state) {
  (void)state;
  enum { kCount = 14 };
  handle_t* inputs[kCount];
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  for (int i = 0; i < kCount; ++i) {
    inputs[i] = x3();
    LOOM_ASSERT_OK(loom_tape_watch(tape, inputs[i]));
  }
  handle_t* sum =
      op1("AddN", inputs, kCount, LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", kCount)));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* grads[kCount];
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &sum, 1, inputs, kCount, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  double ones[3] = {1, 1, 1};
  for (int i = 0; i < kCount; ++i) expect_values(grads[i], ones, 3, 0, "dAddN");
  loom__grad_release_all(grads, kCount);
  loom__grad_release_all(inputs, kCount);
  loom_tensor_handle_release(sum);
  loom_op_handler_release(tape);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(builtin_gradients_register_without_error),
      cmocka_unit_test(single_ops_match_finite_differences),
      cmocka_unit_test(mlp_step_matches_pytorch),
      cmocka_unit_test(mlp_hessian_vector_product_matches_pytorch),
      cmocka_unit_test(nested_tapes_give_second_derivatives),
      cmocka_unit_test(gradients_of_reused_tensors_are_summed),
      cmocka_unit_test(ops_given_a_device_are_recorded),
      cmocka_unit_test(copies_between_devices_are_recorded),
      cmocka_unit_test(mean_of_a_loss_with_the_default_seed),
      cmocka_unit_test(host_scalars_are_made_without_ops),
      cmocka_unit_test(several_targets_and_output_gradients),
      cmocka_unit_test(persistent_tape_computes_gradients_several_times),
      cmocka_unit_test(non_persistent_tape_computes_one_gradient),
      cmocka_unit_test(unconnected_sources_give_null_or_zeros),
      cmocka_unit_test(stop_recording_pauses_the_tape),
      cmocka_unit_test(variables_read_in_scope_are_watched),
      cmocka_unit_test(unread_variable_source_with_zero_policy_fails_clearly),
      cmocka_unit_test(logging_handler_under_the_tape_gives_the_same_gradients),
      cmocka_unit_test(jacobian_of_small_functions),
      cmocka_unit_test(gradients_flow_back_through_copies),
      cmocka_unit_test(dropped_intermediates_are_not_kept),
      cmocka_unit_test(ops_with_many_inputs_are_recorded),
      cmocka_unit_test(tapes_sharing_a_watched_tensor_both_give_gradients),
      cmocka_unit_test(handle_tags_are_compare_and_swap),
      cmocka_unit_test(tape_released_in_its_scope_keeps_results_valid),
      cmocka_unit_test(op_without_gradient_on_the_path_is_an_error),
      cmocka_unit_test(unneeded_input_gradients_are_skipped),
      cmocka_unit_test(new_tapes_share_what_their_ops_prepared),
      cmocka_unit_test(a_gradient_registered_later_reaches_new_tapes),
      cmocka_unit_test(registry_checks_its_arguments),
      cmocka_unit_test(api_checks_its_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
