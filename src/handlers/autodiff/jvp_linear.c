// JVPs of linear and bilinear ops. A linear op's JVP is the op itself
// applied to the tangents of its linear inputs (zeros for those without
// one), with its other inputs (shapes, axes, indices) unchanged; a bilinear
// op f(a, b) has J (ta, tb) = f(ta, b) + f(a, tb).

#include "handlers/autodiff/gradient_families.h"
#include "handlers/autodiff/jvp_ops.h"

enum { kMaxInputs = 64 };

// Which inputs an op is linear in.
typedef struct linear_t {
  uint64_t inputs;    // bit j: input j
  bool all_but_last;  // every input but the last (ConcatV2's values)
} linear_t;

static bool is_linear_input(const linear_t* linear, int32_t j, int32_t n) {
  if (linear->all_but_last) return j < n - 1;
  return j < 64 && ((linear->inputs >> j) & 1);
}

static loom_status_t linear_jvp(loom_gradient_context_t* ctx,
                                loom_tensor_handle_t* const* tangents,
                                loom_tensor_handle_t** out, void* user_data) {
  const linear_t* linear = user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  if (n > kMaxInputs) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "JVP of %s: more than %d inputs",
                            loom_gradient_context_op_name(ctx), kMaxInputs);
  }
  bool any = false;
  for (int32_t j = 0; j < n; ++j) {
    any |= is_linear_input(linear, j, n) && tangents[j];
  }
  if (!any) return loom_ok_status();
  loom_tensor_handle_t* replacements[kMaxInputs] = {NULL};
  loom_tensor_handle_t* zeros[kMaxInputs] = {NULL};
  loom_status_t status = loom_ok_status();
  for (int32_t j = 0; j < n && !status; ++j) {
    if (!is_linear_input(linear, j, n)) continue;
    if (tangents[j]) {
      replacements[j] = tangents[j];
    } else {
      status = loom__jvp_zeros_like_input(ctx, j, &zeros[j]);
      replacements[j] = zeros[j];
    }
  }
  if (!status) status = loom__jvp_rerun(ctx, replacements, out);
  for (int32_t j = 0; j < n; ++j) loom_tensor_handle_release(zeros[j]);
  return status;
}

// The two inputs a bilinear op is linear in, each for the other fixed.
typedef struct bilinear_t {
  int32_t a, b;
} bilinear_t;

static loom_status_t bilinear_jvp(loom_gradient_context_t* ctx,
                                  loom_tensor_handle_t* const* tangents,
                                  loom_tensor_handle_t** out, void* user_data) {
  const bilinear_t* pair = user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  if (pair->a >= n || pair->b >= n || n > kMaxInputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "JVP of %s: unexpected number of inputs %d",
                            loom_gradient_context_op_name(ctx), n);
  }
  loom_tensor_handle_t* replacements[kMaxInputs] = {NULL};
  loom_tensor_handle_t* terms[2] = {NULL, NULL};
  loom_status_t status = loom_ok_status();
  if (tangents[pair->a]) {
    replacements[pair->a] = tangents[pair->a];
    status = loom__jvp_rerun(ctx, replacements, &terms[0]);
    replacements[pair->a] = NULL;
  }
  if (!status && tangents[pair->b]) {
    replacements[pair->b] = tangents[pair->b];
    status = loom__jvp_rerun(ctx, replacements, &terms[1]);
  }
  if (status) {
    loom_tensor_handle_release(terms[0]);
    loom_tensor_handle_release(terms[1]);
    return status;
  }
  return loom__jvp_add(ctx, terms[0], terms[1], &out[0]);
}

#define IN(i) ((uint64_t)1 << (i))

static const linear_t kFirst = {IN(0), false};
static const linear_t kSecond = {IN(1), false};
static const linear_t kFirstTwo = {IN(0) | IN(1), false};
static const linear_t kSecondAndThird = {IN(1) | IN(2), false};
static const linear_t kFirstAndThird = {IN(0) | IN(2), false};
static const linear_t kFirstAndFifth = {IN(0) | IN(4), false};
static const linear_t kAll = {~(uint64_t)0, false};
static const linear_t kAllButLast = {0, true};
static const linear_t kAllButFirst = {~IN(0), false};

static const struct {
  const char* op;
  const linear_t* linear;
} kLinear[] = {
    // Sums.
    {"AddV2", &kFirstTwo},
    {"Add", &kFirstTwo},
    {"Sub", &kFirstTwo},
    {"AddN", &kAll},
    {"BiasAdd", &kFirstTwo},
    {"BiasAddV1", &kFirstTwo},
    {"Neg", &kFirst},
    // Values moved around.
    {"Identity", &kFirst},
    {"IdentityN", &kAll},
    {"FunctionInput", &kFirst},
    {"FunctionOutput", &kFirst},
    {"IfInput", &kFirst},
    {"IfOutput", &kFirst},
    {"CaseInput", &kFirst},
    {"CaseOutput", &kFirst},
    {"WhileInput", &kFirst},
    {"WhileOutput", &kFirst},
    {"CopyOn", &kFirst},
    {"CopyOnGrad", &kFirst},
    {"CopyOff", &kFirst},
    {"CopyOffGrad", &kFirst},
    {"Cast", &kFirst},
    {"Reshape", &kFirst},
    {"Transpose", &kFirst},
    {"ReverseV2", &kFirst},
    {"Cumsum", &kFirst},
    {"ExpandDims", &kFirst},
    {"Squeeze", &kFirst},
    {"Tile", &kFirst},
    {"Slice", &kFirst},
    {"StridedSlice", &kFirst},
    {"Pad", &kFirst},
    {"PadV2", &kFirstAndThird},
    {"BroadcastTo", &kFirst},
    {"Gather", &kFirst},
    {"GatherV2", &kFirst},
    {"GatherNd", &kFirst},
    {"ScatterNd", &kSecond},
    {"TensorScatterUpdate", &kFirstAndThird},
    {"MatrixBandPart", &kFirst},
    {"MatrixDiagV3", &kFirstAndFifth},
    {"MatrixDiagPartV3", &kFirstAndThird},
    {"ConcatV2", &kAllButLast},
    {"Concat", &kAllButFirst},
    {"Pack", &kAll},
    {"Unpack", &kFirst},
    {"Split", &kSecond},
    {"SplitV", &kFirst},
    {"Fill", &kSecond},
    {"Select", &kSecondAndThird},
    {"SelectV2", &kSecondAndThird},
    // Reductions and pooling by sums.
    {"Sum", &kFirst},
    {"Mean", &kFirst},
    {"AvgPool", &kFirst},
    {"AvgPoolGrad", &kSecond},
    {"BiasAddGrad", &kFirst},
    // Gradient helpers linear in the gradient (and constant almost
    // everywhere in the other input).
    {"ReluGrad", &kFirst},
    {"Relu6Grad", &kFirst},
};

static const bilinear_t kMulPair = {0, 1};
static const bilinear_t kBackpropInputPair = {1, 2};
static const bilinear_t kBackpropFilterPair = {0, 2};

static const struct {
  const char* op;
  const bilinear_t* pair;
} kBilinear[] = {
    {"Mul", &kMulPair},
    {"MatMul", &kMulPair},
    {"BatchMatMulV2", &kMulPair},
    {"Conv2D", &kMulPair},
    {"Conv2DBackpropInput", &kBackpropInputPair},
    {"Conv2DBackpropFilter", &kBackpropFilterPair},
};

// Einsum: linear in its one input, bilinear in two.
static loom_status_t einsum_jvp(loom_gradient_context_t* ctx,
                                loom_tensor_handle_t* const* tangents,
                                loom_tensor_handle_t** out, void* user_data) {
  (void)user_data;
  if (loom_gradient_context_num_inputs(ctx) == 1) {
    return linear_jvp(ctx, tangents, out, (void*)&kFirst);
  }
  return bilinear_jvp(ctx, tangents, out, (void*)&kMulPair);
}

loom_status_t loom__register_linear_jvps(void) {
  for (size_t i = 0; i < sizeof(kLinear) / sizeof(kLinear[0]); ++i) {
    loom_jvp_def_t def = {
        .struct_size = sizeof(def),
        .op_name = kLinear[i].op,
        .fn = linear_jvp,
        .user_data = (void*)kLinear[i].linear,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
    };
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&def));
  }
  for (size_t i = 0; i < sizeof(kBilinear) / sizeof(kBilinear[0]); ++i) {
    loom_jvp_def_t def = {
        .struct_size = sizeof(def),
        .op_name = kBilinear[i].op,
        .fn = bilinear_jvp,
        .user_data = (void*)kBilinear[i].pair,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
    };
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&def));
  }
  loom_jvp_def_t einsum = {
      .struct_size = sizeof(einsum),
      .op_name = "Einsum",
      .fn = einsum_jvp,
      .inputs_used = LOOM_GRADIENT_USES_ALL,
  };
  return loom_jvp_register(&einsum);
}
