// The batching rules: each against a loop over the examples running the
// same op unbatched (its inputs batched along various axes, or unbatched),
// and the per-example fallback (correct, and counted).

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/vmap/vmap_internal.h"
#include "vmap_test_util.h"

enum { kMax = 512 };

static int64_t count_of(const int64_t* dims, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= dims[d];
  return n;
}

// Example e of `values` (of shape dims[0, rank)) along `axis`.
static void take(const double* values, const int64_t* dims, int rank, int axis,
                 int64_t e, double* out) {
  int64_t outer = count_of(dims, axis);
  int64_t inner = count_of(dims + axis + 1, rank - axis - 1);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      out[o * inner + i] = values[(o * dims[axis] + e) * inner + i];
    }
  }
}

//===----------------------------------------------------------------------===//
// Every rule against a loop over examples
//===----------------------------------------------------------------------===//

typedef struct input_t {
  loom_dtype_t dtype;
  int rank;  // of the tensor given to loom_vmap_in
  int64_t dims[5];
  int axis;  // in_axis, or LOOM_VMAP_UNBATCHED
  bool fixed;
  double values[8];  // fixed values (axes, shapes)
} input_t;

typedef struct rule_case_t {
  const char* name;
  const char* op;
  int num_inputs;
  input_t inputs[4];
  int num_attrs;
  loom__grad_attr_t attrs[3];
  int num_outputs;
  int out_axis;
  bool expect_fallback;
} rule_case_t;

#define T(dt, axis, r, ...)              \
  {                                      \
    dt, r, {__VA_ARGS__}, axis, false, { \
      0                                  \
    }                                    \
  }
#define FIXED(r, d, ...)  \
  {                       \
    I, r, {d}, U, true, { \
      __VA_ARGS__         \
    }                     \
  }
#define SCALAR_INT(v)     \
  {                       \
    I, 0, {0}, U, true, { \
      v                   \
    }                     \
  }

static const int64_t kSqueeze[] = {-1};
static const int64_t kStrides[] = {1, 1, 1, 1};
static const int64_t kPool[] = {1, 2, 2, 1};

static const rule_case_t kRuleCases[] = {
    {"Exp", "Exp", 1, {T(D, 0, 3, 4, 2, 3)}, 0, {{0}}, 1, 0, false},
    {"Tanh axis 1", "Tanh", 1, {T(F, 1, 2, 3, 4)}, 0, {{0}}, 1, 0, false},
    {"Softsign", "Softsign", 1, {T(D, 0, 3, 4, 2)}, 0, {{0}}, 1, 0, false},
    {"SoftsignGrad",
     "SoftsignGrad",
     2,
     {T(D, 0, 3, 4, 2), T(D, 0, 3, 4, 2)},
     0,
     {{0}},
     1,
     0,
     false},
    {"AddV2 batched+unbatched",
     "AddV2",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 1, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"AddV2 unbatched higher rank",
     "AddV2",
     2,
     {T(D, 0, 2, 4, 3), T(D, U, 2, 2, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Mul both batched, axes 0 and 1",
     "Mul",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, 1, 2, 3, 4)},
     0,
     {{0}},
     1,
     2,
     false},
    {"Maximum f32",
     "Maximum",
     2,
     {T(F, 0, 2, 4, 3), T(F, 0, 2, 4, 3)},
     0,
     {{0}},
     1,
     1,
     false},
    {"ReluGrad batched+unbatched",
     "ReluGrad",
     2,
     {T(D, 0, 2, 4, 3), T(D, U, 1, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Sum axis 1 keep_dims",
     "Sum",
     2,
     {T(D, 0, 3, 4, 2, 3), FIXED(1, 1, 1)},
     1,
     {LOOM_GRAD_BOOL("keep_dims", true)},
     1,
     0,
     false},
    {"Sum axes -1, 0",
     "Sum",
     2,
     {T(D, 2, 3, 2, 3, 4), FIXED(1, 2, -1, 0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Mean",
     "Mean",
     2,
     {T(F, 0, 3, 4, 2, 3), FIXED(1, 1, 0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Max",
     "Max",
     2,
     {T(D, 0, 3, 4, 2, 3), SCALAR_INT(-1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Min",
     "Min",
     2,
     {T(D, 1, 3, 2, 4, 3), FIXED(1, 1, 1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Prod",
     "Prod",
     2,
     {T(D, 0, 3, 4, 2, 3), FIXED(1, 2, 0, 1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"ArgMax",
     "ArgMax",
     2,
     {T(D, 0, 3, 4, 2, 3), SCALAR_INT(1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"ArgMin axis -1",
     "ArgMin",
     2,
     {T(F, 1, 3, 2, 4, 3), SCALAR_INT(-1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"IdentityN",
     "IdentityN",
     2,
     {T(D, 0, 2, 4, 3), T(D, 1, 2, 3, 4)},
     0,
     {{0}},
     2,
     0,
     false},
    {"MatMul batched x unbatched",
     "MatMul",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 2, 3, 5)},
     0,
     {{0}},
     1,
     0,
     false},
    {"MatMul unbatched x batched, transpose_b",
     "MatMul",
     2,
     {T(D, U, 2, 2, 3), T(D, 2, 3, 5, 3, 4)},
     1,
     {LOOM_GRAD_BOOL("transpose_b", true)},
     1,
     0,
     false},
    {"MatMul both, transpose_a",
     "MatMul",
     2,
     {T(F, 0, 3, 4, 3, 2), T(F, 0, 3, 4, 3, 5)},
     1,
     {LOOM_GRAD_BOOL("transpose_a", true)},
     1,
     0,
     false},
    {"BatchMatMulV2 broadcast",
     "BatchMatMulV2",
     2,
     {T(D, 0, 4, 3, 2, 2, 3), T(D, U, 2, 3, 2)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Reshape -1",
     "Reshape",
     2,
     {T(D, 0, 3, 4, 2, 3), FIXED(1, 2, 3, -1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Transpose",
     "Transpose",
     2,
     {T(D, 1, 3, 2, 4, 3), FIXED(1, 2, 1, 0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Softmax", "Softmax", 1, {T(D, 0, 3, 4, 2, 3)}, 0, {{0}}, 1, 0, false},
    {"LogSoftmax axis 1",
     "LogSoftmax",
     1,
     {T(F, 1, 2, 5, 4)},
     0,
     {{0}},
     1,
     0,
     false},
    {"BiasAdd",
     "BiasAdd",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 1, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"BiasAdd batched bias",
     "BiasAdd",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, 0, 2, 4, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"BiasAdd NCHW",
     "BiasAdd",
     2,
     {T(D, 0, 5, 4, 2, 3, 2, 2), T(D, 0, 2, 4, 3)},
     1,
     {LOOM_GRAD_STRING("data_format", "NCHW")},
     1,
     0,
     false},
    {"BiasAdd NCHW unbatched bias",
     "BiasAdd",
     2,
     {T(D, 0, 5, 4, 2, 3, 2, 2), T(D, U, 1, 3)},
     1,
     {LOOM_GRAD_STRING("data_format", "NCHW")},
     1,
     0,
     false},
    {"Cast",
     "Cast",
     1,
     {T(D, 0, 2, 4, 3)},
     1,
     {LOOM_GRAD_TYPE("DstT", LOOM_DTYPE_FLOAT)},
     1,
     0,
     false},
    {"Identity", "Identity", 1, {T(D, 1, 2, 3, 4)}, 0, {{0}}, 1, 0, false},
    {"ExpandDims -1",
     "ExpandDims",
     2,
     {T(D, 0, 3, 4, 2, 3), SCALAR_INT(-1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"ExpandDims 0",
     "ExpandDims",
     2,
     {T(D, 1, 2, 3, 4), SCALAR_INT(0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Squeeze all",
     "Squeeze",
     1,
     {T(D, 0, 4, 4, 1, 3, 1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Squeeze listed",
     "Squeeze",
     1,
     {T(D, 0, 4, 4, 1, 3, 1)},
     1,
     {LOOM_GRAD_INTS("squeeze_dims", kSqueeze, 1)},
     1,
     0,
     false},
    {"ConcatV2",
     "ConcatV2",
     3,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 2, 1, 3), SCALAR_INT(0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"ConcatV2 axis -1",
     "ConcatV2",
     3,
     {T(D, 0, 3, 4, 2, 3), T(D, 1, 3, 2, 4, 1), SCALAR_INT(-1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Pack axis 1",
     "Pack",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 2, 2, 3)},
     1,
     {LOOM_GRAD_INT("axis", 1)},
     1,
     0,
     false},
    {"Unpack",
     "Unpack",
     1,
     {T(D, 0, 3, 4, 2, 3)},
     2,
     {LOOM_GRAD_INT("axis", 1), LOOM_GRAD_INT("num", 3)},
     3,
     0,
     false},
    {"Slice",
     "Slice",
     3,
     {T(D, 0, 3, 4, 3, 4), FIXED(1, 2, 1, 0), FIXED(1, 2, 2, -1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Tile",
     "Tile",
     2,
     {T(D, 0, 3, 4, 2, 3), FIXED(1, 2, 2, 1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"BroadcastTo",
     "BroadcastTo",
     2,
     {T(D, 0, 2, 4, 3), FIXED(1, 2, 2, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Shape", "Shape", 1, {T(D, 0, 3, 4, 2, 3)}, 0, {{0}}, 1, 0, false},
    {"AddN",
     "AddN",
     2,
     {T(D, 0, 2, 4, 3), T(D, U, 1, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Conv2D (folded)",
     "Conv2D",
     2,
     {T(D, 0, 5, 3, 2, 4, 4, 2), T(D, U, 4, 2, 2, 2, 3)},
     2,
     {LOOM_GRAD_INTS("strides", kStrides, 4),
      LOOM_GRAD_STRING("padding", "VALID")},
     1,
     0,
     false},
    {"MaxPool (folded)",
     "MaxPool",
     1,
     {T(D, 0, 5, 3, 2, 4, 4, 2)},
     3,
     {LOOM_GRAD_INTS("ksize", kPool, 4), LOOM_GRAD_INTS("strides", kPool, 4),
      LOOM_GRAD_STRING("padding", "VALID")},
     1,
     0,
     false},
    {"SoftmaxCrossEntropyWithLogits (folded)",
     "SoftmaxCrossEntropyWithLogits",
     2,
     {T(D, 0, 3, 4, 2, 3), T(D, U, 2, 2, 3)},
     0,
     {{0}},
     2,
     0,
     false},
    {"Cumprod exclusive",
     "Cumprod",
     2,
     {T(D, 1, 3, 2, 4, 3), SCALAR_INT(1)},
     1,
     {LOOM_GRAD_BOOL("exclusive", true)},
     1,
     0,
     false},
    {"Cumsum reverse",
     "Cumsum",
     2,
     {T(D, 1, 3, 2, 4, 3), SCALAR_INT(-1)},
     1,
     {LOOM_GRAD_BOOL("reverse", true)},
     1,
     0,
     false},
    {"ReverseV2",
     "ReverseV2",
     2,
     {T(D, 0, 3, 4, 2, 3), FIXED(1, 1, 1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"LeakyRelu",
     "LeakyRelu",
     1,
     {T(F, 0, 2, 4, 3)},
     1,
     {LOOM_GRAD_FLOAT("alpha", 0.25f)},
     1,
     0,
     false},
    {"BiasAddGrad",
     "BiasAddGrad",
     1,
     {T(D, 1, 3, 2, 4, 3)},
     0,
     {{0}},
     1,
     0,
     false},
    {"BiasAddGrad NCHW",
     "BiasAddGrad",
     1,
     {T(D, 0, 4, 4, 2, 3, 2)},
     1,
     {LOOM_GRAD_STRING("data_format", "NCHW")},
     1,
     0,
     false},
    {"Fill",
     "Fill",
     2,
     {FIXED(1, 2, 2, 3), T(D, 0, 1, 4)},
     0,
     {{0}},
     1,
     0,
     false},
    {"StridedSlice masks",
     "StridedSlice",
     4,
     {T(D, 1, 3, 3, 4, 5), FIXED(1, 2, 1, 0), FIXED(1, 2, 3, 4),
      FIXED(1, 2, 1, 2)},
     2,
     {LOOM_GRAD_INT("end_mask", 2), LOOM_GRAD_INT("shrink_axis_mask", 0)},
     1,
     0,
     false},
    {"StridedSlice shrink",
     "StridedSlice",
     4,
     {T(D, 0, 3, 4, 3, 5), FIXED(1, 2, 1, -2), FIXED(1, 2, 2, 0),
      FIXED(1, 2, 1, 1)},
     2,
     {LOOM_GRAD_INT("shrink_axis_mask", 1), LOOM_GRAD_INT("end_mask", 2)},
     1,
     0,
     false},
    {"Pad",
     "Pad",
     2,
     {T(D, 0, 3, 4, 2, 3), {I, 2, {2, 2}, U, true, {1, 0, 0, 2}}},
     0,
     {{0}},
     1,
     0,
     false},
    {"PadV2",
     "PadV2",
     3,
     {T(D, 1, 3, 2, 4, 3),
      {I, 2, {2, 2}, U, true, {0, 1, 2, 0}},
      T(D, U, 0, 0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"GatherV2 batched params",
     "GatherV2",
     3,
     {T(D, 0, 3, 4, 3, 2), FIXED(1, 3, 2, 0, 2), SCALAR_INT(0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"GatherV2 batched indices",
     "GatherV2",
     3,
     {T(D, U, 2, 3, 2),
      {I, 2, {4, 2}, 0, true, {0, 1, 2, 2, 1, 1, 0, 0}},
      SCALAR_INT(0)},
     0,
     {{0}},
     1,
     0,
     false},
    {"GatherV2 both batched, axis 1",
     "GatherV2",
     3,
     {T(D, 0, 3, 4, 2, 3),
      {I, 2, {2, 4}, 1, true, {0, 1, 2, 2, 1, 1, 0, 0}},
      SCALAR_INT(1)},
     0,
     {{0}},
     1,
     0,
     false},
    {"Split axis -1",
     "Split",
     2,
     {SCALAR_INT(-1), T(D, 1, 3, 2, 4, 4)},
     1,
     {LOOM_GRAD_INT("num_split", 2)},
     2,
     0,
     false},
    {"SplitV",
     "SplitV",
     3,
     {T(D, 0, 3, 4, 5, 2), FIXED(1, 2, 2, 3), SCALAR_INT(0)},
     1,
     {LOOM_GRAD_INT("num_split", 2)},
     2,
     0,
     false},
    {"OneHot axis 0",
     "OneHot",
     4,
     {{I, 2, {4, 2}, 0, true, {0, 1, 2, 2, 1, 1, 0, 0}},
      SCALAR_INT(3),
      T(D, U, 0, 0),
      T(D, U, 0, 0)},
     1,
     {LOOM_GRAD_INT("axis", 0)},
     1,
     0,
     false},
    {"OneHot axis -1 (default)",
     "OneHot",
     4,
     {{I, 2, {2, 4}, 1, true, {0, 1, 2, 2, 1, 1, 0, 0}},
      SCALAR_INT(3),
      T(D, U, 0, 0),
      T(D, U, 0, 0)},
     0,
     {{0}},
     1,
     1,
     false},
    // No rule: the fallback.
    {"L2Loss (fallback)",
     "L2Loss",
     1,
     {T(D, 0, 3, 4, 2, 3)},
     0,
     {{0}},
     1,
     0,
     true},
    {"Transpose batched perm (fallback)",
     "Transpose",
     2,
     {T(D, 0, 3, 3, 2, 2), {I, 2, {3, 2}, 0, true, {1, 0, 0, 1, 1, 0}}},
     0,
     {{0}},
     1,
     0,
     true},
};

static void fill_input(const input_t* input, double* values) {
  int64_t n = count_of(input->dims, input->rank);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = input->fixed ? input->values[i] : uniform(-2.0, 2.0);
  }
}

// The case's op over the batch under a vmap, into out[k] (batch at out_axis);
// returns the batch size.
static int64_t run_batched(const rule_case_t* c, handle_t** batched,
                           handle_t** out, loom_op_handler_t** out_vmap) {
  loom_op_handler_t* vmap = new_vmap(LOOM_VMAP_BATCH_SIZE_UNKNOWN);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, vmap));
  handle_t* args[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < c->num_inputs; ++i) {
    args[i] = vin(vmap, batched[i], c->inputs[i].axis);
  }
  handle_t* results[4] = {NULL};
  run(c->op, args, c->num_inputs, c->attrs, c->num_attrs, results,
      c->num_outputs);
  for (int k = 0; k < c->num_outputs; ++k) {
    out[k] = vout(vmap, results[k], c->out_axis);
    loom_tensor_handle_release(results[k]);
  }
  for (int i = 0; i < c->num_inputs; ++i) loom_tensor_handle_release(args[i]);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  *out_vmap = vmap;
  return loom_vmap_batch_size(vmap);
}

static void test_rules_against_loop(void** state) {
  (void)state;
  for (size_t ci = 0; ci < sizeof(kRuleCases) / sizeof(kRuleCases[0]); ++ci) {
    const rule_case_t* c = &kRuleCases[ci];
    if (getenv("VMAP_DEBUG")) print_message("%s\n", c->name);
    double values[4][kMax];
    handle_t* batched[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < c->num_inputs; ++i) {
      fill_input(&c->inputs[i], values[i]);
      batched[i] = make(c->inputs[i].dtype, c->inputs[i].dims,
                        c->inputs[i].rank, values[i]);
    }
    handle_t* out[4] = {NULL};
    loom_op_handler_t* vmap = NULL;
    int64_t b = run_batched(c, batched, out, &vmap);
    assert_true(b > 0);
    if (c->expect_fallback) {
      if (loom_vmap_fallback_count(vmap, c->op) != 1) {
        fail_msg("%s: expected one fallback of %s", c->name, c->op);
      }
    } else if (loom_vmap_fallback_count(vmap, c->op) != 0) {
      fail_msg("%s: took the fallback", c->name);
    }
    loom_op_handler_release(vmap);
    for (int k = 0; k < c->num_outputs; ++k) {
      double got[kMax];
      int64_t total = read_values(out[k], got, kMax);
      loom_tensor_metadata_t metadata;
      LOOM_ASSERT_OK(loom_tensor_handle_wait_metadata(out[k], &metadata));
      assert_int_equal(metadata.shape.dims[c->out_axis], b);
      int64_t per = total / b;
      // The loop: example e of every batched input, the op unbatched.
      for (int64_t e = 0; e < b; ++e) {
        handle_t* args[4] = {NULL, NULL, NULL, NULL};
        for (int i = 0; i < c->num_inputs; ++i) {
          const input_t* in = &c->inputs[i];
          if (in->axis == U) {
            loom_tensor_handle_retain(batched[i]);
            args[i] = batched[i];
            continue;
          }
          double slice[kMax];
          int64_t dims[5];
          take(values[i], in->dims, in->rank, in->axis, e, slice);
          for (int d = 0, j = 0; d < in->rank; ++d) {
            if (d != in->axis) dims[j++] = in->dims[d];
          }
          args[i] = make(in->dtype, dims, in->rank - 1, slice);
        }
        handle_t* results[4] = {NULL};
        run(c->op, args, c->num_inputs, c->attrs, c->num_attrs, results,
            c->num_outputs);
        double expected[kMax];
        assert_int_equal(read_values(results[k], expected, kMax), per);
        // Element j of example e in `got` (batch at out_axis).
        int64_t outer = count_of(metadata.shape.dims, c->out_axis);
        int64_t inner = per / (outer ? outer : 1);
        for (int64_t j = 0; j < per; ++j) {
          int64_t o = j / inner, r = j % inner;
          double v = got[(o * b + e) * inner + r];
          double tolerance = metadata.dtype == LOOM_DTYPE_FLOAT ? 1e-5 : 1e-12;
          if (fabs(v - expected[j]) >
              tolerance * (fabs(expected[j]) > 1 ? fabs(expected[j]) : 1)) {
            fail_msg(
                "%s: output %d example %lld [%lld]: got %.12g, loop "
                "gives %.12g",
                c->name, k, (long long)e, (long long)j, v, expected[j]);
          }
        }
        loom__grad_release_all(results, c->num_outputs);
        loom__grad_release_all(args, c->num_inputs);
      }
    }
    loom__grad_release_all(out, c->num_outputs);
    loom__grad_release_all(batched, c->num_inputs);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rules_against_loop),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
