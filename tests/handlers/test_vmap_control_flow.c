// vmap of the ops that call functions (src/handlers/vmap/vmap_control_flow.c):
// PartitionedCall, StatefulPartitionedCall and a function's name as the op
// (a stateless function's body batched into a function of its own, made
// once per key; one that needs the per-example fallback op by op), If and
// Case with a batched condition or index (the branches taken run batched,
// each example's outputs selected),
// While whose trip count differs per example (finished examples keep their
// values), per-example gradients through a call and through an If and a
// While on batched values (a tape inside the vmap),
// a vmap inside another, and the errors. Each result is checked against a
// loop over the examples running the same op without vmap, in f32 and
// f64, and no op takes the per-example fallback.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/function.h"
#include "loom/trace.h"
#include "vmap_test_util.h"

enum { kMaxValues = 64 };

#define BOOL_T LOOM_DTYPE_BOOL
// An argument of the test's float dtype.
#define T_ LOOM_DTYPE_INVALID

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

typedef struct node_spec_t {
  const char* name;
  const char* op;
  const char* inputs[3];
  int num_inputs;
} node_spec_t;

// Adds function `name` over "T: {float, double}": inputs (dtype T_: T),
// nodes, outputs (name, dtype, source).
static void add_function(const char* name, const char* const* inputs,
                         const loom_dtype_t* input_types, int num_inputs,
                         const node_spec_t* nodes, int num_nodes,
                         const char* const* outputs,
                         const loom_dtype_t* output_types,
                         const char* const* sources, int num_outputs) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), name, &b));
  LOOM_ASSERT_OK(loom_function_builder_add_attr(b, "T: {float, double}"));
  for (int i = 0; i < num_inputs; ++i) {
    bool t = input_types[i] == T_;
    LOOM_ASSERT_OK(loom_function_builder_add_input(b, inputs[i], input_types[i],
                                                   t ? "T" : NULL, NULL));
  }
  for (int i = 0; i < num_nodes; ++i) {
    LOOM_ASSERT_OK(loom_function_builder_add_node(
        b, nodes[i].name, nodes[i].op, nodes[i].inputs, nodes[i].num_inputs,
        NULL, NULL));
  }
  for (int i = 0; i < num_outputs; ++i) {
    bool t = output_types[i] == T_;
    LOOM_ASSERT_OK(loom_function_builder_add_output(
        b, outputs[i], output_types[i], t ? "T" : NULL, sources[i]));
  }
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_ctx, function));
  loom_function_release(function);
}

// name(x: T) -> y: T = op(x).
static void add_unary(const char* name, const char* op, const char* out) {
  static const char* const kX[] = {"x"};
  static const loom_dtype_t kT[] = {T_};
  node_spec_t node = {"n", op, {"x"}, 1};
  char source[32];
  snprintf(source, sizeof(source), "n:%s:0", out);
  const char* sources[] = {source};
  static const char* const kY[] = {"y"};
  add_function(name, kX, kT, 1, &node, 1, kY, kT, sources, 1);
}

static void add_functions(void) {
  add_unary("branch_sin", "Sin", "y");
  add_unary("branch_square", "Square", "y");
  add_unary("branch_cos", "Cos", "y");
  add_unary("branch_l2", "L2Loss", "output");
  // dense(x, w) = (tanh(x w), tanh(x w) * x w).
  {
    static const char* const kIn[] = {"x", "w"};
    static const loom_dtype_t kT2[] = {T_, T_};
    static const node_spec_t kNodes[] = {
        {"mm", "MatMul", {"x", "w"}, 2},
        {"th", "Tanh", {"mm:product:0"}, 1},
        {"mul", "Mul", {"th:y:0", "mm:product:0"}, 2},
    };
    static const char* const kOut[] = {"y", "z"};
    static const char* const kSources[] = {"th:y:0", "mul:z:0"};
    add_function("dense", kIn, kT2, 2, kNodes, 3, kOut, kT2, kSources, 2);
  }
  // The loop over (i, one, n, acc, x): less: i < n; power_step: (i + one,
  // one, n, acc * x, x), so that acc ends as acc * x**n.
  {
    static const char* const kIn[] = {"i", "one", "n", "acc", "x"};
    static const loom_dtype_t kTypes[] = {I, I, I, T_, T_};
    static const node_spec_t kLess[] = {{"less", "Less", {"i", "n"}, 2}};
    static const char* const kR[] = {"r"};
    static const loom_dtype_t kBool[] = {BOOL_T};
    static const char* const kLessSource[] = {"less:z:0"};
    add_function("less", kIn, kTypes, 5, kLess, 1, kR, kBool, kLessSource, 1);
    static const node_spec_t kStep[] = {
        {"inc", "AddV2", {"i", "one"}, 2},
        {"mul", "Mul", {"acc", "x"}, 2},
    };
    static const char* const kNext[] = {"i2", "one2", "n2", "acc2", "x2"};
    static const char* const kSources[] = {"inc:z:0", "one", "n", "mul:z:0",
                                           "x"};
    add_function("power_step", kIn, kTypes, 5, kStep, 2, kNext, kTypes,
                 kSources, 5);
  }
}

static int setup_functions(void** state) {
  if (setup(state)) return -1;
  add_functions();
  return 0;
}

//===----------------------------------------------------------------------===//
// Running an op batched and in a loop
//===----------------------------------------------------------------------===//

typedef struct arg_t {
  loom_dtype_t dtype;  // T_: the case's float dtype
  int rank;            // one example's
  int64_t dims[3];
  bool batched;
  double values[kMaxValues];  // [B, dims] when batched, else [dims]
} arg_t;

typedef struct op_case_t {
  const char* op;
  const char* func_attrs[2][2];  // {attr, function}
  const char* branches[3];       // Case
  int num_branches;
  int num_tout;  // Tout of that many T (If, Case, PartitionedCall)
  int64_t batch;
  int num_args;
  arg_t args[5];
  int num_outputs;
} op_case_t;

static int64_t example_size(const arg_t* arg) {
  int64_t n = 1;
  for (int d = 0; d < arg->rank; ++d) n *= arg->dims[d];
  return n;
}

// A tensor of `dtype` (bool: non-zero) and shape dims[0, rank).
static handle_t* tensor(loom_dtype_t dtype, const int64_t* dims, int rank,
                        const double* values) {
  if (dtype != BOOL_T) return make(dtype, dims, rank, values);
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* t = NULL;
  LOOM_ASSERT_OK(
      loom_tensor_create_dense(loom_allocator_default(), dtype, &shape, &t));
  for (int64_t i = 0; i < loom_shape_num_elements(&shape); ++i) {
    ((bool*)loom_tensor_data(t))[i] = values[i] != 0;
  }
  handle_t* h = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, t, &h));
  loom_tensor_release(t);
  return h;
}

// Runs the case's op on inputs[0, n) in the current scope.
static loom_status_t run_case_op(const op_case_t* c, loom_dtype_t dtype,
                                 handle_t* const* inputs, handle_t** results) {
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_ctx, c->op, &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  for (int i = 0; i < 2 && c->func_attrs[i][0]; ++i) {
    const char* f = c->func_attrs[i][1];
    LOOM_ASSERT_OK(
        loom_op_attrs_set_func(attrs, c->func_attrs[i][0], f, strlen(f)));
  }
  if (c->num_branches) {
    loom_string_view_t views[3];
    for (int i = 0; i < c->num_branches; ++i) {
      views[i] = (loom_string_view_t){.data = c->branches[i],
                                      .size = strlen(c->branches[i])};
    }
    loom_attr_value_t list = {.kind = LOOM_ATTR_KIND_FUNC,
                              .is_list = true,
                              .count = c->num_branches,
                              .u.list = views};
    LOOM_ASSERT_OK(loom_op_attrs_set_value(attrs, "branches", &list));
  }
  if (c->num_tout) {
    loom_dtype_t tout[2] = {dtype, dtype};
    LOOM_ASSERT_OK(loom_op_attrs_set_list(attrs, "Tout", LOOM_ATTR_KIND_DTYPE,
                                          tout, c->num_tout));
  }
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < c->num_args && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  int32_t count = 0;
  if (!status) {
    status = loom_eager_op_execute(op, results, c->num_outputs, &count);
  }
  if (!status) assert_int_equal(count, c->num_outputs);
  loom_eager_op_destroy(op);
  return status;
}

// The case's op under a vmap: results[k] are [B, ...] values (read into
// out[k], *out_counts[k] of them). Returns the op's status.
static loom_status_t run_batched(const op_case_t* c, loom_dtype_t dtype,
                                 double out[][kMaxValues * 4],
                                 int64_t* out_counts) {
  handle_t* given[5] = {NULL};
  handle_t* entered[5] = {NULL};
  loom_op_handler_t* vmap = new_vmap(c->batch);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  for (int i = 0; i < c->num_args; ++i) {
    const arg_t* a = &c->args[i];
    loom_dtype_t dt = a->dtype == T_ ? dtype : a->dtype;
    int64_t dims[4];
    int rank = 0;
    if (a->batched) dims[rank++] = c->batch;
    for (int d = 0; d < a->rank; ++d) dims[rank++] = a->dims[d];
    given[i] = tensor(dt, dims, rank, a->values);
    entered[i] = vin(vmap, given[i], a->batched ? 0 : U);
  }
  handle_t* results[5] = {NULL};
  loom_status_t status = run_case_op(c, dtype, entered, results);
  for (int k = 0; k < c->num_outputs && !status; ++k) {
    handle_t* batched = vout(vmap, results[k], 0);
    out_counts[k] = read_values(batched, out[k], kMaxValues * 4);
    loom_tensor_handle_release(batched);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  // Every op was batched by a rule.
  assert_int_equal(total_fallbacks(vmap), 0);
  loom__grad_release_all(results, status ? 0 : c->num_outputs);
  loom__grad_release_all(entered, c->num_args);
  loom__grad_release_all(given, c->num_args);
  loom_op_handler_release(vmap);
  return status;
}

// The case's op, batched, against a loop over its examples.
static void check_against_loop(const op_case_t* c, loom_dtype_t dtype) {
  static double batched[5][kMaxValues * 4];
  int64_t counts[5] = {0};
  LOOM_ASSERT_OK(run_batched(c, dtype, batched, counts));
  int64_t offsets[5] = {0};
  double tolerance = dtype == F ? 1e-6 : 1e-14;
  for (int64_t e = 0; e < c->batch; ++e) {
    handle_t* inputs[5] = {NULL};
    for (int i = 0; i < c->num_args; ++i) {
      const arg_t* a = &c->args[i];
      int64_t n = example_size(a);
      inputs[i] = tensor(a->dtype == T_ ? dtype : a->dtype, a->dims, a->rank,
                         a->values + (a->batched ? e * n : 0));
    }
    handle_t* results[5] = {NULL};
    LOOM_ASSERT_OK(run_case_op(c, dtype, inputs, results));
    for (int k = 0; k < c->num_outputs; ++k) {
      double expected[kMaxValues];
      int64_t n = read_values(results[k], expected, kMaxValues);
      assert_int_equal(counts[k], n * c->batch);
      for (int64_t j = 0; j < n; ++j) {
        char what[96];
        snprintf(what, sizeof(what), "%s output %d example %lld", c->op, k,
                 (long long)e);
        expect_close(batched[k][offsets[k] + j], expected[j], tolerance, what,
                     j);
      }
      offsets[k] += n;
    }
    loom__grad_release_all(results, c->num_outputs);
    loom__grad_release_all(inputs, c->num_args);
  }
}

static void check_both_dtypes(const op_case_t* c) {
  check_against_loop(c, F);
  check_against_loop(c, D);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

// x [2, 3] per example (batched), w [3, 2] (unbatched), B = 3.
#define DENSE_ARGS                                                            \
  {T_,                                                                        \
   2,                                                                         \
   {2, 3},                                                                    \
   true,                                                                      \
   {0.1, -0.4, 0.7, 1.2, -0.3, 0.5, -1.1, 0.2, 0.9, 0.4, 0.6, -0.8, 0.3, 0.8, \
    -0.6, 1.0, -0.2, 0.1}},                                                   \
  {                                                                           \
    T_, 2, {3, 2}, false, {                                                   \
      0.5, -0.7, 0.3, 0.9, -0.4, 0.2                                          \
    }                                                                         \
  }

static void a_call_runs_its_body_batched(void** state) {
  (void)state;
  static const char* const kOps[] = {"PartitionedCall",
                                     "StatefulPartitionedCall", "dense"};
  for (int i = 0; i < 3; ++i) {
    bool by_name = i == 2;
    op_case_t c = {
        .op = kOps[i],
        .func_attrs = {{by_name ? NULL : "f", "dense"}},
        .num_tout = by_name ? 0 : 2,
        .batch = 3,
        .num_args = 2,
        .args = {DENSE_ARGS},
        .num_outputs = 2,
    };
    check_both_dtypes(&c);
  }
  // The stateless calls ran the body batched into a function of its own,
  // one per dtype (the key: batch size, dtypes, shapes, batch dimensions),
  // shared by PartitionedCall and the call by name.
  assert_true(loom_context_has_function(g_ctx, "dense_batched_0"));
  assert_true(loom_context_has_function(g_ctx, "dense_batched_1"));
  assert_false(loom_context_has_function(g_ctx, "dense_batched_2"));
}

// A body that needs the per-example fallback (BiasAddV1 has no rule) runs
// op by op, so that the caller's vmap reports the fallback at each call;
// no batched function is kept.
static void a_call_whose_body_falls_back_runs_op_by_op(void** state) {
  (void)state;
  static const char* const kIn[] = {"x", "b"};
  static const loom_dtype_t kT2[] = {T_, T_};
  static const node_spec_t kNode = {"add", "BiasAddV1", {"x", "b"}, 2};
  static const char* const kOut[] = {"y"};
  static const char* const kSources[] = {"add:output:0"};
  add_function("bias_v1", kIn, kT2, 2, &kNode, 1, kOut, kT2, kSources, 1);
  static const double kX[4] = {1, 2, 3, 4};
  static const double kB[2] = {0.5, -1};
  int64_t dims[3] = {2, 1, 2}, two = 2;  // x [1, 2] per example
  handle_t* xs = make(D, dims, 3, kX);
  handle_t* b = make(D, &two, 1, kB);
  loom_op_handler_t* vmap = new_vmap(2);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xs, 0);
  for (int call = 1; call <= 2; ++call) {
    handle_t* inputs[2] = {x, b};
    handle_t* y = NULL;
    op_case_t c = {.op = "bias_v1", .num_args = 2, .num_outputs = 1};
    LOOM_ASSERT_OK(run_case_op(&c, D, inputs, &y));
    handle_t* ys = vout(vmap, y, 0);
    double got[4];
    assert_int_equal(read_values(ys, got, 4), 4);
    // Each example's row plus b.
    for (int i = 0; i < 4; ++i) {
      expect_close(got[i], kX[i] + kB[i % 2], 0, "bias_v1", i);
    }
    assert_int_equal(loom_vmap_fallback_count(vmap, "BiasAddV1"), call);
    handle_t* all[] = {y, ys};
    loom__grad_release_all(all, 2);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_false(loom_context_has_function(g_ctx, "bias_v1_batched_0"));
  handle_t* all[] = {xs, b, x};
  loom__grad_release_all(all, 3);
  loom_op_handler_release(vmap);
}

//===----------------------------------------------------------------------===//
// If and Case
//===----------------------------------------------------------------------===//

static void if_selects_each_examples_branch(void** state) {
  (void)state;
  // A bool condition, then an int32 one (non-zero is true), mixed; then
  // every example taking one branch; then an unbatched x (each branch's
  // result broadcast before the selection).
  static const double kConds[3][4] = {
      {1, 0, 0, 1}, {3, 0, -2, 0}, {1, 1, 1, 1}};
  static const loom_dtype_t kCondTypes[3] = {BOOL_T, I, BOOL_T};
  for (int k = 0; k < 4; ++k) {
    int which = k < 3 ? k : 0;
    op_case_t c = {
        .op = k == 1 ? "StatelessIf" : "If",
        .func_attrs = {{"then_branch", "branch_sin"},
                       {"else_branch", "branch_square"}},
        .num_tout = 1,
        .batch = 4,
        .num_args = 2,
        .args = {{kCondTypes[which], 0, {0}, true, {0}},
                 {T_,
                  1,
                  {3},
                  k != 3,
                  {0.5, -1.5, 2.0, 0.25, 1.0, -0.75, -2.0, 0.125, 1.5, 0.3,
                   -0.6, 0.9}}},
        .num_outputs = 1,
    };
    memcpy(c.args[0].values, kConds[which], sizeof(kConds[which]));
    check_both_dtypes(&c);
  }
}

static void case_selects_each_examples_branch(void** state) {
  (void)state;
  // Indices out of range take the last branch, as TensorFlow's Case.
  for (int k = 0; k < 2; ++k) {
    op_case_t c = {
        .op = k == 0 ? "Case" : "StatelessCase",
        .branches = {"branch_sin", "branch_square", "branch_cos"},
        .num_branches = 3,
        .num_tout = 1,
        .batch = 5,
        .num_args = 2,
        .args = {{I, 0, {0}, true, {0, 2, 1, 7, -1}},
                 {T_,
                  1,
                  {2},
                  true,
                  {0.5, -1.5, 2.0, 0.25, 1.0, -0.75, -2.0, 0.125, 1.5, 0.3}}},
        .num_outputs = 1,
    };
    if (k == 1) {
      // Only the first branch taken.
      memset(c.args[0].values, 0, sizeof(c.args[0].values));
    }
    check_both_dtypes(&c);
  }
}

//===----------------------------------------------------------------------===//
// While
//===----------------------------------------------------------------------===//

// acc * x**n with n = 0, 3, 1, 5 per example: the loop runs 5 times, the
// first example's values never change, the others' stop after their own
// trip count. i and one start unbatched, acc too (it becomes batched once
// examples differ).
static void while_trip_count_differs_per_example(void** state) {
  (void)state;
  for (int k = 0; k < 2; ++k) {
    op_case_t c = {
        .op = k == 0 ? "While" : "StatelessWhile",
        .func_attrs = {{"cond", "less"}, {"body", "power_step"}},
        .batch = 4,
        .num_args = 5,
        .args =
            {{I, 0, {0}, false, {0}},
             {I, 0, {0}, false, {1}},
             {I, 0, {0}, true, {0, 3, 1, 5}},
             {T_, 1, {2}, false, {1.0, 0.5}},
             {T_, 1, {2}, true, {1.5, -0.5, 0.9, -1.2, 2.0, 0.3, -1.1, 1.05}}},
        .num_outputs = 5,
    };
    check_both_dtypes(&c);
  }
}

// Every example with the same trip count: the condition stays unbatched
// (only x is batched), nothing is masked.
static void while_with_an_unbatched_condition(void** state) {
  (void)state;
  op_case_t c = {
      .op = "While",
      .func_attrs = {{"cond", "less"}, {"body", "power_step"}},
      .batch = 3,
      .num_args = 5,
      .args = {{I, 0, {0}, false, {0}},
               {I, 0, {0}, false, {1}},
               {I, 0, {0}, false, {3}},
               {T_, 1, {2}, false, {1.0, 0.5}},
               {T_, 1, {2}, true, {1.5, -0.5, 0.9, -1.2, 2.0, 0.3}}},
      .num_outputs = 5,
  };
  check_both_dtypes(&c);
}

//===----------------------------------------------------------------------===//
// Per-example gradients through a call
//===----------------------------------------------------------------------===//

// loss = sum(y * z) for (y, z) = dense(x, w), by PartitionedCall.
static handle_t* dense_loss(loom_dtype_t dtype, handle_t* x, handle_t* w) {
  op_case_t c = {
      .op = "PartitionedCall",
      .func_attrs = {{"f", "dense"}},
      .num_tout = 2,
      .num_args = 2,
      .num_outputs = 2,
  };
  handle_t* inputs[2] = {x, w};
  handle_t* yz[2] = {NULL, NULL};
  LOOM_ASSERT_OK(run_case_op(&c, dtype, inputs, yz));
  handle_t* product = bin("Mul", yz[0], yz[1]);
  int64_t two = 2;
  handle_t* axes = make(I, &two, 1, (double[]){0, 1});
  handle_t* loss = bin("Sum", product, axes);
  handle_t* all[] = {yz[0], yz[1], product, axes};
  loom__grad_release_all(all, 4);
  return loss;
}

// The gradients of dense_loss with respect to x and w, with a tape in the
// current scope.
static void dense_gradients(loom_dtype_t dtype, handle_t* x, handle_t* w,
                            handle_t** out_loss, handle_t** grads) {
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  *out_loss = dense_loss(dtype, x, w);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* sources[2] = {x, w};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, out_loss, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_ZERO, grads));
  loom_op_handler_release(tape);
}

// The planned calls (the first one, which builds the plan, included) of the
// derived functions named `format` (one %d: the batched functions of a
// function; two: those of its backward functions).
static int64_t planned_calls_of(const char* format, bool nested) {
  int64_t calls = 0;
  for (int k = 0; k < 16; ++k) {
    for (int j = 0; j < (nested ? 16 : 1); ++j) {
      char name[96];
      snprintf(name, sizeof(name), format, k, j);
      loom_function_t* f = NULL;
      if (!loom_context_has_function(g_ctx, name)) continue;
      LOOM_ASSERT_OK(loom_context_find_function(g_ctx, name, &f));
      loom_function_stats_t stats = {.struct_size = sizeof(stats)};
      LOOM_ASSERT_OK(loom_function_get_stats(f, &stats));
      calls += stats.planned_calls + stats.plans_built;
      loom_function_release(f);
    }
  }
  return calls;
}

static void per_example_gradients_through_a_call(loom_dtype_t dtype) {
  enum { kB = 3, kX = 6, kW = 6 };
  op_case_t shape = {.args = {DENSE_ARGS}};
  const double* xs = shape.args[0].values;
  const double* wv = shape.args[1].values;
  int64_t xd[3] = {kB, 2, 3}, wd[2] = {3, 2};
  // The loop.
  double losses[kB], dx[kB * kX], dw[kB * kW];
  for (int e = 0; e < kB; ++e) {
    handle_t* x = make(dtype, xd + 1, 2, xs + e * kX);
    handle_t* w = make(dtype, wd, 2, wv);
    handle_t* loss = NULL;
    handle_t* grads[2] = {NULL, NULL};
    dense_gradients(dtype, x, w, &loss, grads);
    losses[e] = read_scalar(loss);
    assert_int_equal(read_values(grads[0], dx + e * kX, kX), kX);
    assert_int_equal(read_values(grads[1], dw + e * kW, kW), kW);
    handle_t* all[] = {x, w, loss, grads[0], grads[1]};
    loom__grad_release_all(all, 5);
  }
  // vmap(grad(f)).
  int64_t forward_calls = planned_calls_of("dense_batched_%d", false);
  int64_t backward_calls =
      planned_calls_of("dense_backward_%d_batched_%d", true);
  handle_t* xb = make(dtype, xd, 3, xs);
  handle_t* w = make(dtype, wd, 2, wv);
  loom_op_handler_t* vmap = new_vmap(kB);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* x = vin(vmap, xb, 0);
  handle_t* loss = NULL;
  handle_t* grads[2] = {NULL, NULL};
  dense_gradients(dtype, x, w, &loss, grads);
  handle_t* loss_b = vout(vmap, loss, 0);
  handle_t* dx_b = vout(vmap, grads[0], 0);
  handle_t* dw_b = vout(vmap, grads[1], 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(total_fallbacks(vmap), 0);
  double tolerance = dtype == F ? 1e-5 : 1e-12;
  double got[kB * kW];
  assert_int_equal(read_values(loss_b, got, kB), kB);
  for (int i = 0; i < kB; ++i)
    expect_close(got[i], losses[i], tolerance, "loss", i);
  assert_int_equal(read_values(dx_b, got, kB * kX), kB * kX);
  for (int i = 0; i < kB * kX; ++i)
    expect_close(got[i], dx[i], tolerance, "dx", i);
  assert_int_equal(read_values(dw_b, got, kB * kW), kB * kW);
  for (int i = 0; i < kB * kW; ++i)
    expect_close(got[i], dw[i], tolerance, "dw", i);
  // The tape over the vmap recorded the call as one op and ran it beneath
  // itself as a call the vmap took whole (its batched function, planned),
  // and its gradient called the backward function, which the vmap batched
  // whole as well.
  assert_int_equal(planned_calls_of("dense_batched_%d", false),
                   forward_calls + 1);
  assert_int_equal(planned_calls_of("dense_backward_%d_batched_%d", true),
                   backward_calls + 1);
  handle_t* all[] = {xb, w, x, loss, grads[0], grads[1], loss_b, dx_b, dw_b};
  loom__grad_release_all(all, 9);
  loom_op_handler_release(vmap);
}

static void per_example_gradients_through_a_call_f32(void** state) {
  (void)state;
  per_example_gradients_through_a_call(F);
}

static void per_example_gradients_through_a_call_f64(void** state) {
  (void)state;
  per_example_gradients_through_a_call(D);
}

// If(cond, x): sin(x) where cond holds, else x**2.
static const op_case_t kSinOrSquare = {
    .op = "If",
    .func_attrs = {{"then_branch", "branch_sin"},
                   {"else_branch", "branch_square"}},
    .num_tout = 1,
    .num_args = 2,
    .num_outputs = 1,
};

// loss = sum(If(selector, x; sin, square)) (the selector a bool): d loss/dx
// = cos(x) or 2x. Recorded by `tape`, which watches x.
static handle_t* if_loss(loom_dtype_t dtype, handle_t* selector, handle_t* x,
                         loom_op_handler_t* tape) {
  op_case_t c = kSinOrSquare;
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  handle_t* inputs[2] = {selector, x};
  handle_t* y = NULL;
  LOOM_ASSERT_OK(run_case_op(&c, dtype, inputs, &y));
  handle_t* axis = make(I, NULL, 0, (double[]){0});
  handle_t* loss = bin("Sum", y, axis);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* all[] = {y, axis};
  loom__grad_release_all(all, 2);
  return loss;
}

// loss = sum(x**n) by the loop over (i, one, n, acc, x), the selector n an
// int32: d loss/dx = n x**(n-1).
static handle_t* while_loss(loom_dtype_t dtype, handle_t* selector, handle_t* x,
                            loom_op_handler_t* tape) {
  op_case_t c = {
      .op = "StatelessWhile",
      .func_attrs = {{"cond", "less"}, {"body", "power_step"}},
      .num_args = 5,
      .num_outputs = 5,
  };
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  int64_t two = 2;
  handle_t* inputs[5] = {make(I, NULL, 0, (double[]){0}),
                         make(I, NULL, 0, (double[]){1}), selector,
                         make(dtype, &two, 1, (double[]){1, 1}), x};
  handle_t* out[5] = {NULL};
  LOOM_ASSERT_OK(run_case_op(&c, dtype, inputs, out));
  handle_t* axis = make(I, NULL, 0, (double[]){0});
  handle_t* loss = bin("Sum", out[3], axis);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* all[] = {inputs[0], inputs[1], inputs[3], axis};
  loom__grad_release_all(all, 4);
  loom__grad_release_all(out, 5);
  return loss;
}

typedef handle_t* (*loss_fn_t)(loom_dtype_t dtype, handle_t* selector,
                               handle_t* x, loom_op_handler_t* tape);

enum { kGradB = 4, kGradN = 2 };

// vmap(grad f) through control flow on a batched selector: the tape inside
// the vmap records the op as one op, and its gradient (an If over the
// branches' backward functions; for a While, the loop run again keeping
// each iteration's variables, then counted down) runs batched. Checked
// against a loop over the examples (their ops run op by op).
static void per_example_gradients_through(loss_fn_t loss_fn,
                                          loom_dtype_t selector_dtype,
                                          const double* selectors,
                                          bool batched_selector,
                                          loom_dtype_t dtype) {
  static const double kXs[kGradB * kGradN] = {0.5, -1.5,  2.0, 0.25,
                                              1.0, -0.75, 1.5, 0.3};
  double dx[kGradB * kGradN];
  int64_t n = kGradN;
  for (int e = 0; e < kGradB; ++e) {
    handle_t* selector = tensor(selector_dtype, NULL, 0, &selectors[e]);
    handle_t* x = make(dtype, &n, 1, kXs + e * kGradN);
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
    handle_t* loss = loss_fn(dtype, selector, x, tape);
    handle_t* grad = NULL;
    LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_ZERO, &grad));
    assert_int_equal(read_values(grad, dx + e * kGradN, kGradN), kGradN);
    handle_t* all[] = {selector, x, loss, grad};
    loom__grad_release_all(all, 4);
    loom_op_handler_release(tape);
  }
  int64_t b = kGradB, dims[2] = {kGradB, kGradN};
  handle_t* selectors_b = batched_selector
                              ? tensor(selector_dtype, &b, 1, selectors)
                              : tensor(selector_dtype, NULL, 0, selectors);
  handle_t* xs = make(dtype, dims, 2, kXs);
  loom_op_handler_t* vmap = new_vmap(kGradB);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* selector = selectors_b;
  if (batched_selector) {
    selector = vin(vmap, selectors_b, 0);
  } else {
    loom_tensor_handle_retain(selector);
  }
  handle_t* x = vin(vmap, xs, 0);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, NULL, &tape));
  handle_t* loss = loss_fn(dtype, selector, x, tape);
  handle_t* grad = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_ZERO, &grad));
  handle_t* grads = vout(vmap, grad, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(total_fallbacks(vmap), 0);
  double got[kGradB * kGradN];
  assert_int_equal(read_values(grads, got, kGradB * kGradN), kGradB * kGradN);
  double tolerance = dtype == F ? 1e-5 : 1e-12;
  for (int i = 0; i < kGradB * kGradN; ++i) {
    expect_close(got[i], dx[i], tolerance, "dx", i);
  }
  handle_t* all[] = {selectors_b, xs, selector, x, loss, grad, grads};
  loom__grad_release_all(all, 7);
  loom_op_handler_release(tape);
  loom_op_handler_release(vmap);
}

static const double kSelectors[kGradB] = {1, 0, 0, 1};
static const double kTrips[kGradB] = {3, 3, 3, 3};

static void per_example_gradients_through_a_batched_if(void** state) {
  (void)state;
  per_example_gradients_through(if_loss, BOOL_T, kSelectors, true, F);
  per_example_gradients_through(if_loss, BOOL_T, kSelectors, true, D);
}

// The loop's variables batched, its trip count not (the vmap masks no
// example): the stacks of the recording loop grow alike.
static void per_example_gradients_through_a_batched_while(void** state) {
  (void)state;
  per_example_gradients_through(while_loss, I, kTrips, false, F);
  per_example_gradients_through(while_loss, I, kTrips, false, D);
}

// tanh_sum_<dtype>(x) = sum(tanh(x)) over x [kGradN], traced (its axis a
// captured constant, as a traced function's constants are).
static const char* add_tanh_sum(loom_dtype_t dtype) {
  const char* name = dtype == F ? "tanh_sum_f32" : "tanh_sum_f64";
  if (loom_context_has_function(g_ctx, name)) return name;
  loom_op_handler_t* trace = NULL;
  LOOM_ASSERT_OK(loom_trace_create(g_ctx, name, &trace));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, trace));
  int64_t n = kGradN;
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &n, 1));
  handle_t* x = NULL;
  LOOM_ASSERT_OK(loom_trace_add_parameter(trace, "x", dtype, &shape, &x));
  handle_t* axis = make(I, NULL, 0, (double[]){0});
  handle_t* th = op1("Tanh", &x, 1, LOOM_GRAD_NO_ATTRS);
  handle_t* y = bin("Sum", th, axis);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  loom_function_t* f = NULL;
  LOOM_ASSERT_OK(loom_trace_finish(trace, &y, 1, &f));
  LOOM_ASSERT_OK(loom_context_add_function(g_ctx, f));
  loom_function_release(f);
  handle_t* all[] = {x, axis, th, y};
  loom__grad_release_all(all, 4);
  loom_op_handler_release(trace);
  return name;
}

// loss = tanh_sum_<dtype>(x) called by name, recorded by `tape` (watching
// x).
static handle_t* tanh_sum_loss(loom_dtype_t dtype, handle_t* selector,
                               handle_t* x, loom_op_handler_t* tape) {
  (void)selector;
  const char* name = add_tanh_sum(dtype);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  op_case_t c = {.op = name, .num_args = 1, .num_outputs = 1};
  handle_t* loss = NULL;
  LOOM_ASSERT_OK(run_case_op(&c, dtype, &x, &loss));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  return loss;
}

// The gradient of a call whose body reduces (Sum's gradient broadcasts the
// seed to a shape read at run time, which the batched backward function's
// trace does not know): the backward function is batched whole all the
// same, the unbatched seed gradient tiled over the batch.
static void per_example_gradients_of_a_reducing_call(void** state) {
  (void)state;
  int64_t before = planned_calls_of("tanh_sum_backward_%d_batched_%d", true);
  for (int call = 0; call < 2; ++call) {
    per_example_gradients_through(tanh_sum_loss, I, kTrips, false, F);
    per_example_gradients_through(tanh_sum_loss, I, kTrips, false, D);
  }
  assert_int_equal(
      planned_calls_of("tanh_sum_f32_backward_%d_batched_%d", true) +
          planned_calls_of("tanh_sum_f64_backward_%d_batched_%d", true),
      before + 4);
}

// Trip counts that differ per example: the batched loop runs until the
// longest example is done, masking the others; the recording loop of the
// gradient stacks every iteration for every example (a finished one repeats
// its last variables), and the countdown passes its gradients through
// those rows unchanged.
static void per_example_gradients_through_a_ragged_while(void** state) {
  (void)state;
  static const double kRagged[kGradB] = {0, 3, 1, 5};
  per_example_gradients_through(while_loss, I, kRagged, true, F);
  per_example_gradients_through(while_loss, I, kRagged, true, D);
}

//===----------------------------------------------------------------------===//
// A vmap inside another
//===----------------------------------------------------------------------===//

// The condition batched by both vmaps: the inner one cannot read it on the
// host, so it runs both branches and selects; the outer batches them. The
// loop is over the 2 x 3 examples.
static void if_under_two_vmaps(void** state) {
  (void)state;
  static const double kConds[6] = {1, 0, 0, 1, 1, 0};
  static const double kX[6] = {0.5, -1.5, 2.0, 0.25, 1.0, -0.75};
  op_case_t c = kSinOrSquare;
  int64_t dims[2] = {2, 3};
  handle_t* conds = tensor(BOOL_T, dims, 2, kConds);
  handle_t* xs = make(D, dims, 2, kX);
  loom_op_handler_t* outer = new_vmap(2);
  loom_op_handler_t* inner = new_vmap(3);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
  handle_t* co = vin(outer, conds, 0);
  handle_t* xo = vin(outer, xs, 0);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
  handle_t* inputs[2] = {vin(inner, co, 0), vin(inner, xo, 0)};
  handle_t* y = NULL;
  LOOM_ASSERT_OK(run_case_op(&c, D, inputs, &y));
  handle_t* yo = vout(inner, y, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  handle_t* ys = vout(outer, yo, 0);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_int_equal(total_fallbacks(inner), 0);
  assert_int_equal(total_fallbacks(outer), 0);
  double got[6];
  assert_int_equal(read_values(ys, got, 6), 6);
  for (int e = 0; e < 6; ++e) {
    handle_t* cond = tensor(BOOL_T, NULL, 0, &kConds[e]);
    handle_t* x = make(D, NULL, 0, &kX[e]);
    handle_t* one[2] = {cond, x};
    // The branch functions take [n] vectors as well as scalars.
    handle_t* expected = NULL;
    LOOM_ASSERT_OK(run_case_op(&c, D, one, &expected));
    expect_close(got[e], read_scalar(expected), 1e-14, "nested If", e);
    handle_t* all[] = {cond, x, expected};
    loom__grad_release_all(all, 3);
  }
  handle_t* all[] = {conds, xs, co, xo, inputs[0], inputs[1], y, yo, ys};
  loom__grad_release_all(all, 9);
  loom_op_handler_release(inner);
  loom_op_handler_release(outer);
}

//===----------------------------------------------------------------------===//
// Errors and the table
//===----------------------------------------------------------------------===//

// Examples taking branches whose outputs differ in shape cannot be
// selected apart: the error names the op and the branch.
static void branches_of_different_shapes_are_an_error(void** state) {
  (void)state;
  op_case_t c = {
      .op = "If",
      .func_attrs = {{"then_branch", "branch_sin"},
                     {"else_branch", "branch_l2"}},
      .num_tout = 1,
      .batch = 2,
      .num_args = 2,
      .args = {{BOOL_T, 0, {0}, true, {1, 0}},
               {T_, 1, {3}, true, {0.5, -1.5, 2.0, 0.25, 1.0, -0.75}}},
      .num_outputs = 1,
  };
  static double out[5][kMaxValues * 4];
  int64_t counts[5];
  loom_status_t status = run_batched(&c, F, out, counts);
  assert_int_equal(loom_status_code(status), LOOM_STATUS_INVALID_ARGUMENT);
  const char* message = loom_status_message(status);
  assert_non_null(strstr(message,
                         "vmap: If: output 0 of function 'branch_sin'"
                         ": float [3] against float []"));
  assert_non_null(strstr(message,
                         "examples taking different paths need equal "
                         "dtypes and shapes"));
  loom_status_free(status);
}

static void the_ops_have_rules(void** state) {
  (void)state;
  static const char* const kOps[] = {"If",
                                     "StatelessIf",
                                     "Case",
                                     "StatelessCase",
                                     "While",
                                     "StatelessWhile",
                                     "PartitionedCall",
                                     "StatefulPartitionedCall"};
  for (int i = 0; i < 8; ++i) {
    const char* description = NULL;
    assert_int_equal(loom_vmap_op_support(kOps[i], &description),
                     LOOM_VMAP_RULE);
    assert_non_null(strstr(description, "on the vmap"));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_call_runs_its_body_batched),
      cmocka_unit_test(a_call_whose_body_falls_back_runs_op_by_op),
      cmocka_unit_test(if_selects_each_examples_branch),
      cmocka_unit_test(case_selects_each_examples_branch),
      cmocka_unit_test(while_trip_count_differs_per_example),
      cmocka_unit_test(while_with_an_unbatched_condition),
      cmocka_unit_test(per_example_gradients_through_a_call_f32),
      cmocka_unit_test(per_example_gradients_through_a_call_f64),
      cmocka_unit_test(per_example_gradients_through_a_batched_if),
      cmocka_unit_test(per_example_gradients_through_a_batched_while),
      cmocka_unit_test(per_example_gradients_of_a_reducing_call),
      cmocka_unit_test(per_example_gradients_through_a_ragged_while),
      cmocka_unit_test(if_under_two_vmaps),
      cmocka_unit_test(branches_of_different_shapes_are_an_error),
      cmocka_unit_test(the_ops_have_rules),
  };
  return cmocka_run_group_tests(tests, setup_functions, teardown);
}
