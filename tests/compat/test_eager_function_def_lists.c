// TensorFlow FunctionDefs whose signatures hold lists of tensors (`xs: N *
// T`, `zs: N * float`, `xs: Tlist`), added with TFE_ContextAddFunctionDef
// and called by name (N and the type list inferred from the inputs, or set
// with TFE_OpSetAttrInt / TFE_OpSetAttrTypeList), through PartitionedCall
// and from another function's body, synchronously (a second call runs the plan)
// and asynchronously; a list's shape from arg_attr ("_output_shapes");
// a gradient tape around a call; and the errors.
//
// scale_all(xs: N * T) -> (ys: N * T, total: T), T in {float, double}:
// total = AddN(xs), ys = Unpack(Pack(xs) * total). Reference values from
// NumPy for x0 = [1.5, -2], x1 = [0.5, 3], x2 = [-1.25, 0.75] (exact in
// float and double); gradients of sum(ys) + sum(total) from PyTorch.

#include <stdio.h>

#include "eager_test_util.h"
#include "function_def_builder.h"
#include "loom/autodiff.h"
#include "loom/function.h"

static const float kXs[3][2] = {{1.5f, -2}, {0.5f, 3}, {-1.25f, 0.75f}};
// np.add.reduce(xs[:N]) and xs[k] * total, per N = 1, 2, 3.
static const float kTotal[3][2] = {{1.5f, -2}, {2, 1}, {0.75f, 1.75f}};
static const float kYs[3][3][2] = {
    {{2.25f, 4}},
    {{3, -2}, {1, 3}},
    {{1.125f, -3.5f}, {0.375f, 5.25f}, {-0.9375f, 1.3125f}},
};
// torch: d(sum(ys) + sum(total)) / dxs[k], per N (equal for every k).
static const float kGrads[3][2] = {{4, -3}, {5, 3}, {2.5f, 4.5f}};
static const int64_t kDims[1] = {2};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// x_k as `dtype` (float or double).
static TFE_TensorHandle* x_handle(TFE_Context* ctx, TF_DataType dtype, int k) {
  double d[2] = {kXs[k][0], kXs[k][1]};
  return typed_handle(ctx, dtype, kDims, 1,
                      dtype == TF_DOUBLE ? (const void*)d : kXs[k]);
}

// Checks that `h` holds `dtype` and `count` values equal to `expected`.
static void check_values(TFE_TensorHandle* h, TF_DataType dtype,
                         const float* expected, size_t count) {
  assert_int_equal(TFE_TensorHandleDataType(h), dtype);
  TF_Status* status = TF_NewStatus();
  TF_Tensor* t = TFE_TensorHandleResolve(h, status);
  ASSERT_TF_OK(status);
  for (size_t i = 0; i < count; ++i) {
    double got = dtype == TF_DOUBLE ? ((const double*)TF_TensorData(t))[i]
                 : dtype == TF_INT32
                     ? (double)((const int32_t*)TF_TensorData(t))[i]
                     : (double)((const float*)TF_TensorData(t))[i];
    if (got != (double)expected[i]) {
      fail_msg("element %zu: got %g, expected %g", i, got, (double)expected[i]);
    }
  }
  TF_DeleteTensor(t);
  TF_DeleteStatus(status);
}

static const int32_t kFloatTypes[] = {TF_FLOAT, TF_DOUBLE, 0};

// scale_all(xs: N * T) -> (ys: N * T, total: T).
static void add_scale_all(TFE_Context* ctx, TF_Status* status) {
  fdef_t f;
  fdef_init(&f, "scale_all");
  fdef_attr(&f, "N", "int", 1, NULL);
  fdef_attr(&f, "T", "type", -1, kFloatTypes);
  fdef_input(&f, "xs", 0, "T", "N", NULL);
  fdef_output(&f, "ys", 0, "T", "N", NULL, "unpack:output");
  fdef_output(&f, "total", 0, "T", NULL, NULL, "total:sum:0");
  fdef_node_t* n = fdef_node(&f, "total", "AddN", (const char*[]){"xs", 0});
  fdef_placeholder(n, "N", "N");
  fdef_placeholder(n, "T", "T");
  n = fdef_node(&f, "packed", "Pack", (const char*[]){"xs", 0});
  fdef_placeholder(n, "N", "N");
  fdef_placeholder(n, "T", "T");
  fdef_int(n, "axis", 0);
  n = fdef_node(&f, "scaled", "Mul",
                (const char*[]){"packed:output:0", "total:sum:0", 0});
  fdef_placeholder(n, "T", "T");
  n = fdef_node(&f, "unpack", "Unpack", (const char*[]){"scaled:z:0", 0});
  fdef_placeholder(n, "num", "N");
  fdef_placeholder(n, "T", "T");
  fdef_add(&f, ctx, status);
}

typedef enum call_kind_t {
  kByName,           // N and T inferred
  kByNameWithAttrs,  // N and T set
  kPartitioned,      // PartitionedCall, Tin and Tout set
} call_kind_t;

// Calls scale_all on x_0 .. x_{n-1} as `dtype` and checks ys and total.
static void call_scale_all(TFE_Context* ctx, call_kind_t kind, int n,
                           TF_DataType dtype) {
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* xs[3] = {NULL, NULL, NULL};
  for (int k = 0; k < n; ++k) xs[k] = x_handle(ctx, dtype, k);
  TFE_Op* op = TFE_NewOp(
      ctx, kind == kPartitioned ? "PartitionedCall" : "scale_all", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInputList(op, xs, n, status);
  ASSERT_TF_OK(status);
  if (kind == kByNameWithAttrs) {
    TFE_OpSetAttrInt(op, "N", n);
    TFE_OpSetAttrType(op, "T", dtype);
  } else if (kind == kPartitioned) {
    TFE_OpSetAttrFunctionName(op, "f", "scale_all", 9);
    TF_DataType types[4] = {dtype, dtype, dtype, dtype};
    TFE_OpSetAttrTypeList(op, "Tin", types, n);
    TFE_OpSetAttrTypeList(op, "Tout", types, n + 1);
  }
  TFE_TensorHandle* results[5] = {NULL};
  int count = 5;
  TFE_Execute(op, results, &count, status);
  ASSERT_TF_OK(status);
  assert_int_equal(count, n + 1);
  for (int k = 0; k < n; ++k) {
    check_values(results[k], dtype, kYs[n - 1][k], 2);
  }
  check_values(results[n], dtype, kTotal[n - 1], 2);
  for (int i = 0; i < count; ++i) TFE_DeleteTensorHandle(results[i]);
  for (int k = 0; k < n; ++k) TFE_DeleteTensorHandle(xs[k]);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// N * T
//===----------------------------------------------------------------------===//

static void number_attr_lists_in_and_out(void** state) {
  eager_fixture_t* f = *state;
  add_scale_all(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  unsigned char is_list = 1;
  assert_int_equal(
      TFE_OpNameGetAttrType(f->ctx, "scale_all", "N", &is_list, f->status),
      TF_ATTR_INT);
  ASSERT_TF_OK(f->status);
  static const TF_DataType kTypes[2] = {TF_FLOAT, TF_DOUBLE};
  for (int t = 0; t < 2; ++t) {
    for (int n = 1; n <= 3; ++n) {
      for (int kind = kByName; kind <= kPartitioned; ++kind) {
        // The second call of a synchronous context runs the plan.
        call_scale_all(f->ctx, (call_kind_t)kind, n, kTypes[t]);
        call_scale_all(f->ctx, (call_kind_t)kind, n, kTypes[t]);
      }
    }
  }
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  // Synchronously, each N, T and kind of call made a plan its second call
  // ran (by name with and without attrs: two keys).
  loom_context_t* context = (loom_context_t*)f->ctx;
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_context_find_function(context, "scale_all", &function));
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  bool async = loom_context_is_async(context);
  assert_int_equal(stats.plans_built, async ? 0 : 2 * 3 * 3);
  assert_int_equal(stats.planned_calls, async ? 0 : 2 * 3 * 3);
  loom_function_release(function);
}

// outer(xs: N * T) -> ys: N * T: the list output of a node calling
// scale_all on the whole list.
static void a_body_passes_a_list_to_a_function(void** state) {
  eager_fixture_t* f = *state;
  add_scale_all(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  fdef_t d;
  fdef_init(&d, "outer");
  fdef_attr(&d, "N", "int", 1, NULL);
  fdef_attr(&d, "T", "type", -1, kFloatTypes);
  fdef_input(&d, "xs", 0, "T", "N", NULL);
  fdef_output(&d, "ys", 0, "T", "N", NULL, "inner:ys");
  fdef_node_t* n =
      fdef_node(&d, "inner", "scale_all", (const char*[]){"xs", 0});
  fdef_placeholder(n, "N", "N");
  fdef_placeholder(n, "T", "T");
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* xs[3];
  for (int k = 0; k < 3; ++k) xs[k] = x_handle(f->ctx, TF_DOUBLE, k);
  for (int call = 0; call < 2; ++call) {
    TFE_Op* op = TFE_NewOp(f->ctx, "outer", f->status);
    TFE_OpAddInputList(op, xs, 3, f->status);
    TFE_TensorHandle* ys[3] = {NULL, NULL, NULL};
    int count = 3;
    TFE_Execute(op, ys, &count, f->status);
    ASSERT_TF_OK(f->status);
    assert_int_equal(count, 3);
    for (int k = 0; k < 3; ++k) {
      check_values(ys[k], TF_DOUBLE, kYs[2][k], 2);
      TFE_DeleteTensorHandle(ys[k]);
    }
    TFE_DeleteOp(op);
  }
  for (int k = 0; k < 3; ++k) TFE_DeleteTensorHandle(xs[k]);
}

// fill(x: float) -> zs: N * float = Unpack(x, num = N): the output's length
// is the attr the caller sets (nothing infers it).
static void add_fill(TFE_Context* ctx, const char* name, bool num_from_n,
                     TF_Status* status) {
  fdef_t f;
  fdef_init(&f, name);
  fdef_attr(&f, "N", "int", 1, NULL);
  fdef_input(&f, "x", TF_FLOAT, NULL, NULL, NULL);
  fdef_output(&f, "zs", TF_FLOAT, NULL, "N", NULL, "unpack:output");
  fdef_node_t* n = fdef_node(&f, "unpack", "Unpack", (const char*[]){"x", 0});
  if (num_from_n) {
    fdef_placeholder(n, "num", "N");
  } else {
    fdef_int(n, "num", 2);
  }
  fdef_type(n, "T", TF_FLOAT);
  fdef_add(&f, ctx, status);
}

static void a_list_output_takes_its_length_from_the_call(void** state) {
  eager_fixture_t* f = *state;
  add_fill(f->ctx, "fill", true, f->status);
  ASSERT_TF_OK(f->status);
  static const float kValues[3] = {1, -2.5f, 4};
  static const int64_t kThree[1] = {3};
  TFE_TensorHandle* x = float_handle(f->ctx, kThree, 1, kValues);
  for (int call = 0; call < 2; ++call) {
    TFE_Op* op = TFE_NewOp(f->ctx, "fill", f->status);
    TFE_OpAddInput(op, x, f->status);
    TFE_OpSetAttrInt(op, "N", 3);
    TFE_TensorHandle* zs[3] = {NULL, NULL, NULL};
    int count = 3;
    TFE_Execute(op, zs, &count, f->status);
    ASSERT_TF_OK(f->status);
    assert_int_equal(count, 3);
    for (int k = 0; k < 3; ++k) {
      assert_int_equal(TFE_TensorHandleNumDims(zs[k], f->status), 0);
      check_values(zs[k], TF_FLOAT, &kValues[k], 1);
      TFE_DeleteTensorHandle(zs[k]);
    }
    TFE_DeleteOp(op);
  }
  TFE_DeleteTensorHandle(x);
}

//===----------------------------------------------------------------------===//
// Type lists
//===----------------------------------------------------------------------===//

// mixed(xs: Tlist) -> (ys: Tlist, first_sq: float): ys = IdentityN(xs)
// (its T the placeholder $Tlist), first_sq = Square(xs:0).
static void add_mixed(TFE_Context* ctx, TF_Status* status) {
  fdef_t f;
  fdef_init(&f, "mixed");
  fdef_attr(&f, "Tlist", "list(type)", 1, NULL);
  fdef_input(&f, "xs", 0, NULL, NULL, "Tlist");
  fdef_output(&f, "ys", 0, NULL, NULL, "Tlist", "ids:output");
  fdef_output(&f, "first_sq", TF_FLOAT, NULL, NULL, NULL, "sq:y:0");
  fdef_node_t* n = fdef_node(&f, "ids", "IdentityN", (const char*[]){"xs", 0});
  fdef_placeholder(n, "T", "Tlist");
  n = fdef_node(&f, "sq", "Square", (const char*[]){"xs:0", 0});
  fdef_type(n, "T", TF_FLOAT);
  fdef_add(&f, ctx, status);
}

static const float kA[2] = {1.5f, -2};
static const int32_t kB[2] = {7, -3};
static const double kC[1] = {0.25};
static const TF_DataType kMixed[3] = {TF_FLOAT, TF_INT32, TF_DOUBLE};

static void mixed_inputs(TFE_Context* ctx, TFE_TensorHandle** xs) {
  static const int64_t kOne[1] = {1};
  xs[0] = typed_handle(ctx, TF_FLOAT, kDims, 1, kA);
  xs[1] = typed_handle(ctx, TF_INT32, kDims, 1, kB);
  xs[2] = typed_handle(ctx, TF_DOUBLE, kOne, 1, kC);
}

static void type_list_with_mixed_dtypes(void** state) {
  eager_fixture_t* f = *state;
  add_mixed(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* xs[3];
  mixed_inputs(f->ctx, xs);
  // np.square([1.5, -2], dtype=np.float32)
  static const float kSquare[2] = {2.25f, 4};
  for (int kind = kByName; kind <= kPartitioned; ++kind) {
    for (int call = 0; call < 2; ++call) {
      TFE_Op* op =
          TFE_NewOp(f->ctx, kind == kPartitioned ? "PartitionedCall" : "mixed",
                    f->status);
      TFE_OpAddInputList(op, xs, 3, f->status);
      ASSERT_TF_OK(f->status);
      if (kind == kByNameWithAttrs) {
        TFE_OpSetAttrTypeList(op, "Tlist", kMixed, 3);
      } else if (kind == kPartitioned) {
        TFE_OpSetAttrFunctionName(op, "f", "mixed", 5);
        TFE_OpSetAttrTypeList(op, "Tin", kMixed, 3);
      }
      TFE_TensorHandle* results[4] = {NULL};
      int count = 4;
      TFE_Execute(op, results, &count, f->status);
      ASSERT_TF_OK(f->status);
      assert_int_equal(count, 4);
      check_values(results[0], TF_FLOAT, kA, 2);
      check_values(results[1], TF_INT32, (const float[]){7, -3}, 2);
      check_values(results[2], TF_DOUBLE, (const float[]){0.25f}, 1);
      check_values(results[3], TF_FLOAT, kSquare, 2);
      for (int i = 0; i < 4; ++i) TFE_DeleteTensorHandle(results[i]);
      TFE_DeleteOp(op);
    }
  }
  for (int i = 0; i < 3; ++i) TFE_DeleteTensorHandle(xs[i]);
  TFE_ContextAsyncWait(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
}

//===----------------------------------------------------------------------===//
// A tape around a call
//===----------------------------------------------------------------------===//

static void gradients_of_each_list_element(void** state) {
  eager_fixture_t* f = *state;
  add_scale_all(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  loom_context_t* context = (loom_context_t*)f->ctx;
  for (int n = 1; n <= 3; ++n) {
    TFE_TensorHandle* xs[3] = {NULL, NULL, NULL};
    for (int k = 0; k < n; ++k) xs[k] = x_handle(f->ctx, TF_FLOAT, k);
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(loom_tape_create(context, NULL, &tape));
    LOOM_ASSERT_OK(loom_context_enter_scope(context, tape));
    for (int k = 0; k < n; ++k) {
      LOOM_ASSERT_OK(loom_tape_watch(tape, (loom_tensor_handle_t*)xs[k]));
    }
    TFE_Op* op = TFE_NewOp(f->ctx, "scale_all", f->status);
    TFE_OpAddInputList(op, xs, n, f->status);
    TFE_TensorHandle* results[4] = {NULL};
    int count = 4;
    TFE_Execute(op, results, &count, f->status);
    ASSERT_TF_OK(f->status);
    assert_int_equal(count, n + 1);
    TFE_DeleteOp(op);
    LOOM_ASSERT_OK(loom_context_exit_scope(context));
    // The tape took the call as one node (its gradient runs the call again
    // under a tape of its own).
    loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
    LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
    assert_int_equal(statistics.num_ops, 1);
    // d(sum(ys) + sum(total)) / dxs: every target seeded with ones.
    loom_tensor_handle_t* grads[3] = {NULL, NULL, NULL};
    LOOM_ASSERT_OK(loom_tape_gradient(tape,
                                      (loom_tensor_handle_t* const*)results,
                                      n + 1, (loom_tensor_handle_t* const*)xs,
                                      n, NULL, LOOM_UNCONNECTED_NONE, grads));
    for (int k = 0; k < n; ++k) {
      assert_non_null(grads[k]);
      check_values((TFE_TensorHandle*)grads[k], TF_FLOAT, kGrads[n - 1], 2);
      loom_tensor_handle_release(grads[k]);
    }
    loom_op_handler_release(tape);
    for (int i = 0; i < count; ++i) TFE_DeleteTensorHandle(results[i]);
    for (int k = 0; k < n; ++k) TFE_DeleteTensorHandle(xs[k]);
  }
}

//===----------------------------------------------------------------------===//
// Shapes from arg_attr
//===----------------------------------------------------------------------===//

// sum_shaped(xs: N * float, s: float) -> total: float, total = AddN(xs) * s,
// with arg_attr "_output_shapes" giving xs the shape xs_dims[0, xs_rank)
// and s the shape [] (rank 0).
static void add_sum_shaped(TFE_Context* ctx, const char* name,
                           const int64_t* xs_dims, int32_t xs_rank,
                           TF_Status* status) {
  fdef_t d;
  fdef_init(&d, name);
  fdef_attr(&d, "N", "int", 1, NULL);
  fdef_input(&d, "xs", TF_FLOAT, NULL, "N", NULL);
  fdef_input(&d, "s", TF_FLOAT, NULL, NULL, NULL);
  fdef_output(&d, "total", TF_FLOAT, NULL, NULL, NULL, "scaled:z:0");
  fdef_arg_shape(&d, 0, xs_dims, xs_rank);
  fdef_arg_shape(&d, 1, NULL, 0);
  fdef_node_t* n = fdef_node(&d, "sum", "AddN", (const char*[]){"xs", 0});
  fdef_placeholder(n, "N", "N");
  fdef_type(n, "T", TF_FLOAT);
  n = fdef_node(&d, "scaled", "Mul", (const char*[]){"sum:sum:0", "s", 0});
  fdef_type(n, "T", TF_FLOAT);
  fdef_add(&d, ctx, status);
}

// Calls `name` (by name, or through PartitionedCall) on xs[0, n) and
// scalar s = 2; the status says how it went, *out the result.
static void call_sum_shaped(TFE_Context* ctx, const char* name,
                            bool partitioned, TFE_TensorHandle** xs, int n,
                            TF_Status* status, TFE_TensorHandle** out) {
  TFE_TensorHandle* s = scalar_handle(ctx, 2);
  TFE_Op* op = TFE_NewOp(ctx, partitioned ? "PartitionedCall" : name, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInputList(op, xs, n, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, s, status);
  ASSERT_TF_OK(status);
  if (partitioned) {
    TFE_OpSetAttrFunctionName(op, "f", name, strlen(name));
    TF_DataType types[4] = {TF_FLOAT, TF_FLOAT, TF_FLOAT, TF_FLOAT};
    TFE_OpSetAttrTypeList(op, "Tin", types, n + 1);
    TFE_OpSetAttrTypeList(op, "Tout", types, 1);
  }
  *out = NULL;
  int count = 1;
  TFE_Execute(op, out, &count, status);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(s);
}

// A list argument takes its shape from arg_attr's "_output_shapes" as a
// single argument does: TensorFlow gives each tensor of the list (each
// _Arg node) the argument's attrs, so every tensor is checked against the
// shape, by name and through PartitionedCall, at the first call and at a
// planned one, with the message a single argument gives (naming the
// tensor's index among the call's inputs); an unknown dim or rank
// accepts any.
static void a_list_argument_takes_its_shape_from_arg_attr(void** state) {
  eager_fixture_t* f = *state;
  add_sum_shaped(f->ctx, "sum_shaped", kDims, 1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* xs[3];
  for (int k = 0; k < 3; ++k) xs[k] = x_handle(f->ctx, TF_FLOAT, k);
  // 2 * np.add.reduce(xs)
  static const float kDoubled[2] = {1.5f, 3.5f};
  for (int partitioned = 0; partitioned < 2; ++partitioned) {
    // The second call of a synchronous context runs the plan.
    for (int again = 0; again < 2; ++again) {
      TFE_TensorHandle* total = NULL;
      call_sum_shaped(f->ctx, "sum_shaped", partitioned, xs, 3, f->status,
                      &total);
      ASSERT_TF_OK(f->status);
      check_values(total, TF_FLOAT, kDoubled, 2);
      TFE_DeleteTensorHandle(total);
    }
    // An element of another shape.
    static const int64_t kThree[1] = {3};
    static const float kLong[3] = {1, 2, 3};
    TFE_TensorHandle* wrong[3] = {xs[0], xs[1],
                                  float_handle(f->ctx, kThree, 1, kLong)};
    TFE_TensorHandle* total = NULL;
    call_sum_shaped(f->ctx, "sum_shaped", partitioned, wrong, 3, f->status,
                    &total);
    ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                    "function 'sum_shaped': input 2 ('xs') has shape [3], "
                    "expected [2]");
    assert_null(total);
    TFE_DeleteTensorHandle(wrong[2]);
  }
  // The single argument's shape is checked the same way.
  TFE_Op* op = TFE_NewOp(f->ctx, "sum_shaped", f->status);
  TFE_OpAddInputList(op, xs, 2, f->status);
  TFE_OpAddInput(op, xs[2], f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* total = NULL;
  int count = 1;
  TFE_Execute(op, &total, &count, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'sum_shaped': input 2 ('s') has shape [2], "
                  "expected []");
  TFE_DeleteOp(op);

  // An unknown dim: any length; the rank still counts.
  static const int64_t kAny[1] = {-1};
  add_sum_shaped(f->ctx, "sum_any", kAny, 1, f->status);
  ASSERT_TF_OK(f->status);
  static const float kMatrix[4] = {1, 2, 3, 4};
  TFE_TensorHandle* matrix =
      float_handle(f->ctx, (const int64_t[]){2, 2}, 2, kMatrix);
  call_sum_shaped(f->ctx, "sum_any", false, xs, 3, f->status, &total);
  ASSERT_TF_OK(f->status);
  check_values(total, TF_FLOAT, kDoubled, 2);
  TFE_DeleteTensorHandle(total);
  TFE_TensorHandle* ranked[2] = {xs[0], matrix};
  call_sum_shaped(f->ctx, "sum_any", false, ranked, 2, f->status, &total);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "function 'sum_any': input 1 ('xs') has shape [2, 2], "
                  "expected [?]");
  // An unknown rank: anything (the same shapes AddN needs).
  add_sum_shaped(f->ctx, "sum_unknown", NULL, -1, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* matrices[2] = {matrix, matrix};
  call_sum_shaped(f->ctx, "sum_unknown", false, matrices, 2, f->status, &total);
  ASSERT_TF_OK(f->status);
  static const float kSummed[4] = {4, 8, 12, 16};
  check_values(total, TF_FLOAT, kSummed, 4);
  TFE_DeleteTensorHandle(total);
  TFE_DeleteTensorHandle(matrix);
  for (int k = 0; k < 3; ++k) TFE_DeleteTensorHandle(xs[k]);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// Executes `op` (deleted) expecting `code` and `message`.
static void expect_error(TFE_Op* op, int capacity, TF_Code code,
                         const char* message) {
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* results[6] = {NULL};
  int count = capacity;
  TFE_Execute(op, results, &count, status);
  ASSERT_TF_ERROR(status, code, message);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
}

static TFE_Op* scale_all_op(TFE_Context* ctx, TFE_TensorHandle** xs, int n) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, "scale_all", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInputList(op, xs, n, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
  return op;
}

static void list_errors(void** state) {
  eager_fixture_t* f = *state;
  add_scale_all(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* xs[3];
  for (int k = 0; k < 3; ++k) xs[k] = x_handle(f->ctx, TF_FLOAT, k);
  // N set, but not to the number of tensors passed.
  TFE_Op* op = scale_all_op(f->ctx, xs, 3);
  TFE_OpSetAttrInt(op, "N", 2);
  expect_error(op, 4, TF_INVALID_ARGUMENT,
               "Op 'scale_all' expects 2 inputs, got 3");
  // A negative N.
  op = scale_all_op(f->ctx, xs, 1);
  TFE_OpSetAttrInt(op, "N", -1);
  expect_error(op, 4, TF_INVALID_ARGUMENT,
               "Op 'scale_all': value for attr 'N' of -1 must be at least "
               "minimum 1");
  // T set, but not the tensors' dtype.
  op = scale_all_op(f->ctx, xs, 2);
  TFE_OpSetAttrType(op, "T", TF_DOUBLE);
  expect_error(op, 4, TF_INVALID_ARGUMENT,
               "Op 'scale_all': input 0 ('xs') has dtype float but attr 'T' "
               "is double");
  // Fewer result slots than the list's length and total.
  op = scale_all_op(f->ctx, xs, 3);
  expect_error(op, 3, TF_INVALID_ARGUMENT,
               "scale_all: Expecting 4 outputs, but *num_retvals is 3");
  // PartitionedCall's Tin against the list.
  op = TFE_NewOp(f->ctx, "PartitionedCall", f->status);
  TFE_OpAddInputList(op, xs, 2, f->status);
  TFE_OpSetAttrFunctionName(op, "f", "scale_all", 9);
  static const TF_DataType kTin[3] = {TF_FLOAT, TF_FLOAT, TF_FLOAT};
  TFE_OpSetAttrTypeList(op, "Tin", kTin, 3);
  expect_error(op, 4, TF_INVALID_ARGUMENT,
               "PartitionedCall: attr 'Tin' has 3 types, but function "
               "'scale_all' has 2 inputs");

  // A list output whose length nothing sets.
  add_fill(f->ctx, "fill", true, f->status);
  ASSERT_TF_OK(f->status);
  op = TFE_NewOp(f->ctx, "fill", f->status);
  TFE_OpAddInput(op, xs[0], f->status);
  expect_error(op, 3, TF_INVALID_ARGUMENT,
               "Op 'fill': attr 'N' (\"N: int >= 1\") is not set and has no "
               "default");
  // A list output's source of another length than the call's N.
  add_fill(f->ctx, "fill_two", false, f->status);
  ASSERT_TF_OK(f->status);
  op = TFE_NewOp(f->ctx, "fill_two", f->status);
  TFE_OpAddInput(op, xs[0], f->status);
  TFE_OpSetAttrInt(op, "N", 3);
  expect_error(op, 3, TF_INVALID_ARGUMENT,
               "function 'fill_two': output 'zs': 'unpack:output' is 2 "
               "tensors, but the output's length is 3 in this call");

  // A type list set to other dtypes than the tensors'.
  add_mixed(f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* mixed[3];
  mixed_inputs(f->ctx, mixed);
  op = TFE_NewOp(f->ctx, "mixed", f->status);
  TFE_OpAddInputList(op, mixed, 3, f->status);
  static const TF_DataType kWrong[3] = {TF_FLOAT, TF_FLOAT, TF_DOUBLE};
  TFE_OpSetAttrTypeList(op, "Tlist", kWrong, 3);
  expect_error(op, 4, TF_INVALID_ARGUMENT,
               "Op 'mixed': input 1 ('xs') has dtype int32, expected float");
  // A type list whose first type is not the float Square reads.
  TFE_TensorHandle* swapped[3] = {mixed[1], mixed[0], mixed[2]};
  op = TFE_NewOp(f->ctx, "mixed", f->status);
  TFE_OpAddInputList(op, swapped, 3, f->status);
  expect_error(op, 4, TF_INVALID_ARGUMENT, "function 'mixed': node 'sq'");
  for (int k = 0; k < 3; ++k) TFE_DeleteTensorHandle(mixed[k]);

  // An element of an input list beyond the call's length.
  fdef_t d;
  fdef_init(&d, "second");
  fdef_attr(&d, "N", "int", 1, NULL);
  fdef_input(&d, "xs", TF_FLOAT, NULL, "N", NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "xs:1");
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_OK(f->status);
  op = TFE_NewOp(f->ctx, "second", f->status);
  TFE_OpAddInputList(op, xs, 1, f->status);
  expect_error(op, 1, TF_INVALID_ARGUMENT,
               "function 'second': output 'y': 'xs:1': input 'xs' has 1 "
               "tensor(s) in this call");
  op = TFE_NewOp(f->ctx, "second", f->status);
  TFE_OpAddInputList(op, xs, 2, f->status);
  TFE_TensorHandle* y = NULL;
  int count = 1;
  TFE_Execute(op, &y, &count, f->status);
  ASSERT_TF_OK(f->status);
  check_values(y, TF_FLOAT, kXs[1], 2);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteOp(op);

  // A list whose length attr the signature does not declare.
  fdef_init(&d, "undeclared");
  fdef_input(&d, "xs", TF_FLOAT, NULL, "M", NULL);
  fdef_output(&d, "y", TF_FLOAT, NULL, NULL, NULL, "xs:0");
  fdef_add(&d, f->ctx, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "'M'");
  for (int k = 0; k < 3; ++k) TFE_DeleteTensorHandle(xs[k]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(number_attr_lists_in_and_out,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(number_attr_lists_in_and_out,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(a_body_passes_a_list_to_a_function,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(a_body_passes_a_list_to_a_function,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(
          a_list_output_takes_its_length_from_the_call, eager_setup_sync,
          eager_teardown),
      cmocka_unit_test_setup_teardown(type_list_with_mixed_dtypes,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(type_list_with_mixed_dtypes,
                                      eager_setup_async, eager_teardown),
      cmocka_unit_test_setup_teardown(gradients_of_each_list_element,
                                      eager_setup_sync, eager_teardown),
      cmocka_unit_test_setup_teardown(
          a_list_argument_takes_its_shape_from_arg_attr, eager_setup_sync,
          eager_teardown),
      cmocka_unit_test_setup_teardown(
          a_list_argument_takes_its_shape_from_arg_attr, eager_setup_async,
          eager_teardown),
      cmocka_unit_test_setup_teardown(list_errors, eager_setup_sync,
                                      eager_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
