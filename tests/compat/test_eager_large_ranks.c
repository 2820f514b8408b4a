// Tensors above rank 8 (TensorFlow's ranks go to 254; Loom spills their
// dims, loom/shape.h) through the eager C API, in synchronous and
// asynchronous contexts: they are made and queried; the element-wise ops,
// reductions, Transpose and the shape ops take them (their broadcasts,
// reductions and permutations folded as TensorFlow folds them, and those
// that leave more than 8 groups walked as loops around them); so do the
// kernels that read only their last dims and kernels registered through
// TensorFlow's C API. A kernel that reads dims in place (Einsum, one
// registered through the native API without saying otherwise) is refused
// them by name.
//
// Reference values: NumPy (/usr/bin/python3), printed as C arrays.

#include <math.h>
#include <stdlib.h>

#include "eager_test_util.h"
#include "loom/kernel.h"
#include "loom/op_def.h"
#include "loom/shape.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

// NumPy: np.arange(6, dtype=np.float32).reshape((2,) + (1,) * 8 + (3,)),
// of rank 10.
static const int64_t kDims[10] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 3};
static const float kValues[6] = {0, 1, 2, 3, 4, 5};

static TFE_TensorHandle* rank_10(TFE_Context* ctx) {
  return float_handle(ctx, kDims, 10, kValues);
}

static TFE_TensorHandle* run_unary(eager_fixture_t* f, const char* name,
                                   TFE_TensorHandle* x) {
  TFE_Op* op = TFE_NewOp(f->ctx, name, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(op, x, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &result, &num_retvals, f->status);
  TFE_DeleteOp(op);
  return result;
}

static void a_handle_of_rank_10_reports_its_dims(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  assert_int_equal(TFE_TensorHandleNumDims(x, f->status), 10);
  for (int i = 0; i < 10; ++i) {
    assert_int_equal(TFE_TensorHandleDim(x, i, f->status), kDims[i]);
  }
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorHandleNumElements(x, f->status), 6);
  float values[6];
  read_floats(x, values, 6);
  for (int i = 0; i < 6; ++i) assert_true(values[i] == kValues[i]);
  TFE_DeleteTensorHandle(x);
}

static void identity_and_the_shape_ops_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  TFE_TensorHandle* y = run_unary(f, "Identity", x);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorHandleNumDims(y, f->status), 10);
  assert_int_equal(TFE_TensorHandleDim(y, 9, f->status), 3);
  TFE_DeleteTensorHandle(y);

  // NumPy: x.shape, x.size, x.ndim.
  TFE_TensorHandle* shape = run_unary(f, "Shape", x);
  ASSERT_TF_OK(f->status);
  TF_Tensor* t = TFE_TensorHandleResolve(shape, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_Dim(t, 0), 10);
  const int32_t* dims = TF_TensorData(t);
  for (int i = 0; i < 10; ++i) assert_int_equal(dims[i], kDims[i]);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(shape);
  TFE_TensorHandle* size = run_unary(f, "Size", x);
  ASSERT_TF_OK(f->status);
  t = TFE_TensorHandleResolve(size, f->status);
  assert_int_equal(*(const int32_t*)TF_TensorData(t), 6);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(size);
  TFE_TensorHandle* rank = run_unary(f, "Rank", x);
  ASSERT_TF_OK(f->status);
  t = TFE_TensorHandleResolve(rank, f->status);
  assert_int_equal(*(const int32_t*)TF_TensorData(t), 10);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(rank);
  TFE_DeleteTensorHandle(x);
}

static void reshape_brings_rank_10_down(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  static const int64_t kTwo[1] = {2};
  static const int32_t kTarget[2] = {3, -1};
  TFE_TensorHandle* target = int_handle(f->ctx, kTwo, 1, kTarget);
  TFE_Op* op = binary_op(f->ctx, "Reshape", x, target);
  TFE_TensorHandle* y = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &y, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  // NumPy: x.reshape(3, -1) is [[0, 1], [2, 3], [4, 5]].
  assert_int_equal(TFE_TensorHandleNumDims(y, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(y, 0, f->status), 3);
  assert_int_equal(TFE_TensorHandleDim(y, 1, f->status), 2);
  float values[6];
  read_floats(y, values, 6);
  for (int i = 0; i < 6; ++i) assert_true(values[i] == kValues[i]);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(target);
  TFE_DeleteTensorHandle(x);
}

// Found by fuzz_ops: Reshape's check of its sizes input printed a spilled
// shape through its inline dims.
static void reshape_names_a_rank_10_sizes_input(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  static const int32_t kSizes[6] = {6, 1, 1, 1, 1, 1};
  int64_t dims[10] = {6, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  TFE_TensorHandle* sizes = int_handle(f->ctx, dims, 10, kSizes);
  TFE_Op* op = binary_op(f->ctx, "Reshape", x, sizes);
  TFE_TensorHandle* y = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &y, &num_retvals, f->status);
  if (TF_GetCode(f->status) == TF_OK) {
    assert_null(TFE_TensorHandleResolve(y, f->status));
    TFE_DeleteTensorHandle(y);
  }
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "sizes input must be 1-D, not [6,1,1,1,1,1,1,1,1,1]");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(sizes);
  TFE_DeleteTensorHandle(x);
}

// Kernels registered through the native API say whether they read dims
// only through loom_shape_dims; one that does not (this one) is refused
// inputs above rank 8 by name, before it runs.
static void native_identity(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_status_t status =
      loom_kernel_context_set_output(ctx, 0, loom_kernel_context_input(ctx, 0));
  if (status) loom_kernel_context_fail(ctx, status);
}

// A kernel registered through TensorFlow's C API, as a plugin's is: it
// reverses its input's elements into a result of its input's dims, read
// through TF_NumDims and TF_Dim.
static void plugin_reverse(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_Tensor* y = NULL;
  TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    int rank = TF_NumDims(x);
    for (int i = 0; i < rank; ++i) dims[i] = TF_Dim(x, i);
    y = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, rank, TF_TensorByteSize(x),
                          status);
  }
  if (TF_GetCode(status) == TF_OK) {
    const float* in = TF_TensorData(x);
    float* out = TF_TensorData(y);
    int64_t n = TF_TensorElementCount(x);
    for (int64_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteStatus(status);
}

// Registers both kernels' ops (once, before any context exists).
static void register_probe_kernels(void) {
  loom_op_def_builder_t* op = NULL;
  LOOM_ASSERT_OK(loom_op_def_builder_create(loom_allocator_system(),
                                            "LargeRankNativeIdentity", &op));
  LOOM_ASSERT_OK(loom_op_def_builder_add_input(op, "x: float"));
  LOOM_ASSERT_OK(loom_op_def_builder_add_output(op, "y: float"));
  LOOM_ASSERT_OK(loom_op_registry_register(loom_op_registry_global(), op));
  loom_kernel_builder_t* kernel = NULL;
  LOOM_ASSERT_OK(loom_kernel_builder_create(
      loom_allocator_system(), "LargeRankNativeIdentity", LOOM_DEVICE_CPU, NULL,
      native_identity, NULL, NULL, &kernel));
  LOOM_ASSERT_OK(loom_kernel_registry_register(
      loom_kernel_registry_global(), "LargeRankNativeIdentityOp", kernel));

  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* def =
      TF_NewOpDefinitionBuilder("LargeRankPluginReverse");
  TF_OpDefinitionBuilderAddInput(def, "x: float");
  TF_OpDefinitionBuilderAddOutput(def, "y: float");
  TF_RegisterOpDefinition(def, status);
  ASSERT_TF_OK(status);
  TF_KernelBuilder* builder = TF_NewKernelBuilder(
      "LargeRankPluginReverse", "CPU", NULL, plugin_reverse, NULL);
  TF_RegisterKernelBuilder("LargeRankPluginReverseOp", builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

static void a_native_kernel_without_any_rank_refuses_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // Rank 8 runs.
  static const int64_t kRank8[8] = {2, 1, 1, 1, 1, 1, 1, 3};
  TFE_TensorHandle* z = float_handle(f->ctx, kRank8, 8, kValues);
  TFE_TensorHandle* y = run_unary(f, "LargeRankNativeIdentity", z);
  ASSERT_TF_OK(f->status);
  float values[6];
  read_floats(y, values, 6);
  for (int i = 0; i < 6; ++i) assert_true(values[i] == kValues[i]);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteTensorHandle(z);
  // Rank 10 is refused.
  TFE_TensorHandle* x = rank_10(f->ctx);
  y = run_unary(f, "LargeRankNativeIdentity", x);
  if (TF_GetCode(f->status) == TF_OK) {
    // An asynchronous context reports the error when the result is read.
    assert_null(TFE_TensorHandleResolve(y, f->status));
    TFE_DeleteTensorHandle(y);
  }
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Op 'LargeRankNativeIdentity': input 0 has rank 10; the "
                  "kernel of 'LargeRankNativeIdentity' takes ranks up to 8");
  TFE_DeleteTensorHandle(x);
}

static void a_plugin_kernel_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  TFE_TensorHandle* y = run_unary(f, "LargeRankPluginReverse", x);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorHandleNumDims(y, f->status), 10);
  for (int i = 0; i < 10; ++i) {
    assert_int_equal(TFE_TensorHandleDim(y, i, f->status), kDims[i]);
  }
  float values[6];
  read_floats(y, values, 6);
  for (int i = 0; i < 6; ++i) assert_true(values[i] == kValues[5 - i]);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteTensorHandle(x);
}

static void where_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  // NumPy: np.argwhere(x), [5, 10].
  static const int64_t kWhere[50] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                                     0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0,
                                     0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                     1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  TFE_TensorHandle* y = run_unary(f, "Where", x);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TFE_TensorHandleNumDims(y, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(y, 0, f->status), 5);
  assert_int_equal(TFE_TensorHandleDim(y, 1, f->status), 10);
  TF_Tensor* t = TFE_TensorHandleResolve(y, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_TensorType(t), TF_INT64);
  const int64_t* data = TF_TensorData(t);
  for (int i = 0; i < 50; ++i) assert_int_equal(data[i], kWhere[i]);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteTensorHandle(x);
}

//===----------------------------------------------------------------------===//
// Ops above rank 8, against NumPy
//===----------------------------------------------------------------------===//

static const int64_t kAddX[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 1};
static const int64_t kAddY[12] = {1, 1, 1, 2, 3, 1, 1, 1, 1, 1, 1, 4};
static const int64_t kAddZ[12] = {1, 1, 2, 2, 3, 1, 1, 1, 1, 1, 2, 4};
static const float kAddOut[96] = {
    0,  0.5,  1,  1.5,  1,  1.5,  2,  2.5,  4,  4.5,  5,  5.5,  5,  5.5,
    6,  6.5,  8,  8.5,  9,  9.5,  9,  9.5,  10, 10.5, 6,  6.5,  7,  7.5,
    7,  7.5,  8,  8.5,  10, 10.5, 11, 11.5, 11, 11.5, 12, 12.5, 14, 14.5,
    15, 15.5, 15, 15.5, 16, 16.5, 6,  6.5,  7,  7.5,  7,  7.5,  8,  8.5,
    10, 10.5, 11, 11.5, 11, 11.5, 12, 12.5, 14, 14.5, 15, 15.5, 15, 15.5,
    16, 16.5, 12, 12.5, 13, 13.5, 13, 13.5, 14, 14.5, 16, 16.5, 17, 17.5,
    17, 17.5, 18, 18.5, 20, 20.5, 21, 21.5, 21, 21.5, 22, 22.5};
static const int64_t kMulX[9] = {2, 3, 1, 1, 1, 1, 1, 1, 2};
static const float kMulOut[12] = {-10, 12, -6, 6,   -2, -0,
                                  2,   -6, 6,  -12, 10, -18};
static const float kExpIn[6] = {0, 0.25, 0.5, 0.75, 1, 1.25};
static const float kExpOut[6] = {1,         1.28402555, 1.64872122,
                                 2.1170001, 2.71828198, 3.49034286};
static const int64_t kRedDims[10] = {2, 1, 3, 1, 2, 1, 1, 1, 2, 1};
static const int64_t kSumShape[8] = {1, 3, 1, 1, 1, 1, 2, 1};
static const float kSumOut[6] = {28, 32, 44, 48, 60, 64};
static const int64_t kMeanShape[10] = {2, 1, 1, 1, 2, 1, 1, 1, 1, 1};
static const float kMeanOut[4] = {4.5, 6.5, 16.5, 18.5};
static const float kMaxOut[1] = {23};
static const int64_t kArgShape[9] = {2, 1, 1, 2, 1, 1, 1, 2, 1};
static const int64_t kArgOut[8] = {2, 0, 0, 1, 2, 2, 0, 0};
static const float kSinIn[24] = {0,
                                 0.841471016,
                                 0.909297407,
                                 0.141120002,
                                 -0.756802499,
                                 -0.958924294,
                                 -0.279415488,
                                 0.656986594,
                                 0.989358246,
                                 0.412118465,
                                 -0.54402107,
                                 -0.999990225,
                                 -0.536572933,
                                 0.420167059,
                                 0.990607381,
                                 0.650287867,
                                 -0.287903339,
                                 -0.961397469,
                                 -0.750987232,
                                 0.149877205,
                                 0.912945271,
                                 0.836655617,
                                 -0.00885130931,
                                 -0.846220374};
static const int64_t kT1Shape[10] = {2, 2, 1, 1, 1, 1, 1, 1, 2, 3};
static const float kT1Out[24] = {0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                                 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
static const int64_t kT2Shape[10] = {2, 2, 1, 1, 1, 1, 1, 1, 3, 2};
static const float kT2Out[24] = {0, 12, 4, 16, 8, 20, 2, 14, 6, 18, 10, 22,
                                 1, 13, 5, 17, 9, 21, 3, 15, 7, 19, 11, 23};
static const int64_t kSelT[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 2};
static const float kSelOut[12] = {1, -1, 3, -1, 5, -1, 7, -1, 9, -1, 11, -1};
static const int64_t kBtShape[10] = {2, 1, 1, 1, 1, 1, 1, 1, 3, 2};
static const float kBtOut[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
static const int32_t kR0[9] = {0, 1, 3, 5, 6, 7, 8, 9, 11};
static const int32_t kR1[9] = {0, 1, 2, 5, 6, 7, 8, 9, 10};
static const float kReluG[12] = {0, 0.5, 1, 1.5, 2, 2.5,
                                 3, 3.5, 4, 4.5, 5, 5.5};
static const float kReluX[12] = {-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5};
static const float kReluGradOut[12] = {0, 0,   0, 0,   0, 0,
                                       0, 3.5, 4, 4.5, 5, 5.5};
static const float kAddNOut[12] = {3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36};
static const float kCastIn[12] = {-4,  -3.25, -2.5, -1.75, -1,  -0.25,
                                  0.5, 1.25,  2,    2.75,  3.5, 4.25};
static const int32_t kCastOut[12] = {-4, -3, -2, -1, -1, 0, 0, 1, 2, 2, 3, 4};

// A new op named `name` with inputs[0, n).
static TFE_Op* new_op(eager_fixture_t* f, const char* name,
                      TFE_TensorHandle* const* inputs, int n) {
  TFE_Op* op = TFE_NewOp(f->ctx, name, f->status);
  ASSERT_TF_OK(f->status);
  for (int i = 0; i < n; ++i) {
    TFE_OpAddInput(op, inputs[i], f->status);
    ASSERT_TF_OK(f->status);
  }
  return op;
}

// Runs and deletes `op`, which has one result, and resolves it: NULL, with
// the error in f->status, when either step fails (an asynchronous context
// reports an op's error when its result is read).
static TFE_TensorHandle* execute(eager_fixture_t* f, TFE_Op* op) {
  TFE_TensorHandle* result = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &result, &num_retvals, f->status);
  TFE_DeleteOp(op);
  if (TF_GetCode(f->status) != TF_OK) return NULL;
  TF_Tensor* t = TFE_TensorHandleResolve(result, f->status);
  if (!t) {
    TFE_DeleteTensorHandle(result);
    return NULL;
  }
  TF_DeleteTensor(t);
  return result;
}

static TFE_TensorHandle* run_ok(eager_fixture_t* f, TFE_Op* op) {
  TFE_TensorHandle* result = execute(f, op);
  ASSERT_TF_OK(f->status);
  return result;
}

static TFE_TensorHandle* int_vector(eager_fixture_t* f, const int32_t* values,
                                    int64_t n) {
  return int_handle(f->ctx, &n, 1, values);
}

// Checks h's dims and float values (to float rounding) and deletes it.
static void expect_floats(eager_fixture_t* f, TFE_TensorHandle* h,
                          const int64_t* dims, int rank, const float* values,
                          int64_t count) {
  assert_non_null(h);
  assert_int_equal(TFE_TensorHandleNumDims(h, f->status), rank);
  for (int i = 0; i < rank; ++i) {
    assert_int_equal(TFE_TensorHandleDim(h, i, f->status), dims[i]);
  }
  TF_Tensor* t = TFE_TensorHandleResolve(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_TensorType(t), TF_FLOAT);
  assert_int_equal(TF_TensorElementCount(t), count);
  const float* data = TF_TensorData(t);
  for (int64_t i = 0; i < count; ++i) {
    float scale = fabsf(values[i]) > 1.0f ? fabsf(values[i]) : 1.0f;
    if (!(fabsf(data[i] - values[i]) <= 1e-6f * scale)) {
      fail_msg("element %lld: got %.9g, expected %.9g", (long long)i,
               (double)data[i], (double)values[i]);
    }
  }
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(h);
}

// Checks h's int32 or int64 values and deletes it.
static void expect_ints(eager_fixture_t* f, TFE_TensorHandle* h,
                        const int64_t* values, int64_t count) {
  assert_non_null(h);
  TF_Tensor* t = TFE_TensorHandleResolve(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_TensorElementCount(t), count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = TF_TensorType(t) == TF_INT64
                    ? ((const int64_t*)TF_TensorData(t))[i]
                    : ((const int32_t*)TF_TensorData(t))[i];
    assert_int_equal(v, values[i]);
  }
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(h);
}

// Checks that h (float) has `rank` dims of `dims` and holds zeros only
// (what NumPy gives for the ops below on zeros), and deletes it.
static void expect_zeros(eager_fixture_t* f, TFE_TensorHandle* h,
                         const int64_t* dims, int rank) {
  assert_non_null(h);
  assert_int_equal(TFE_TensorHandleNumDims(h, f->status), rank);
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    assert_int_equal(TFE_TensorHandleDim(h, i, f->status), dims[i]);
    count *= dims[i];
  }
  TF_Tensor* t = TFE_TensorHandleResolve(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_TensorType(t), TF_FLOAT);
  assert_int_equal(TF_TensorElementCount(t), count);
  const float* data = TF_TensorData(t);
  for (int64_t i = 0; i < count; ++i) {
    if (data[i] != 0.0f) fail_msg("element %lld: %g", (long long)i, data[i]);
  }
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(h);
}

static TFE_TensorHandle* arange(eager_fixture_t* f, const int64_t* dims,
                                int rank, float scale, float offset) {
  float values[128];
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  assert_true(n <= 128);
  for (int64_t i = 0; i < n; ++i) values[i] = (float)i * scale + offset;
  return float_handle(f->ctx, dims, rank, values);
}

static void binary_ops_broadcast_at_ranks_9_10_and_12(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.arange(12).reshape(kAddX) + (np.arange(24) * 0.5).reshape(kAddY)
  // (folds into 5 dims).
  TFE_TensorHandle* x = arange(f, kAddX, 10, 1.0f, 0.0f);
  TFE_TensorHandle* y = arange(f, kAddY, 12, 0.5f, 0.0f);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "AddV2", x, y)), kAddZ, 12,
                kAddOut, 96);
  // The same shapes: one flat loop.
  static const float kDoubled[12] = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22};
  expect_floats(f, run_ok(f, binary_op(f->ctx, "AddV2", x, x)), kAddX, 10,
                kDoubled, 12);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(y);
  // NumPy: (np.arange(12) - 5).reshape(kMulX) * [2, -3].
  TFE_TensorHandle* m = arange(f, kMulX, 9, 1.0f, -5.0f);
  static const float kVector[2] = {2, -3};
  static const int64_t kTwo[1] = {2};
  TFE_TensorHandle* v = float_handle(f->ctx, kTwo, 1, kVector);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Mul", m, v)), kMulX, 9, kMulOut,
                12);
  TFE_DeleteTensorHandle(m);
  TFE_DeleteTensorHandle(v);
}

static void a_broadcast_that_does_not_fold_runs(void** state) {
  eager_fixture_t* f = *state;
  // Ten dims that alternate between broadcasting one side and the other:
  // ten groups, the outer two walked around the plan of the inner eight.
  // NumPy: np.zeros(kA) + np.zeros(kB) (values: tests/kernels/conformance/
  // cases_large_groups.py).
  static const int64_t kA[10] = {2, 1, 2, 1, 2, 1, 2, 1, 2, 1};
  static const int64_t kB[10] = {1, 2, 1, 2, 1, 2, 1, 2, 1, 2};
  static const int64_t kTwos[10] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  TFE_TensorHandle* a = arange(f, kA, 10, 0.0f, 0.0f);
  TFE_TensorHandle* b = arange(f, kB, 10, 0.0f, 0.0f);
  expect_zeros(f, run_ok(f, binary_op(f->ctx, "AddV2", a, b)), kTwos, 10);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
}

static void a_unary_op_takes_rank_254_and_expand_dims_stops_there(
    void** state) {
  eager_fixture_t* f = *state;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  dims[LOOM_MAX_SHAPE_RANK - 2] = 2;
  dims[LOOM_MAX_SHAPE_RANK - 1] = 3;
  TFE_TensorHandle* x = float_handle(f->ctx, dims, LOOM_MAX_SHAPE_RANK, kExpIn);
  // NumPy: np.exp of the flat values (NumPy's arrays stop below rank 254).
  expect_floats(f, run_ok(f, new_op(f, "Exp", &x, 1)), dims,
                LOOM_MAX_SHAPE_RANK, kExpOut, 6);
  // Past TensorFlow's limit of 254.
  static const int32_t kZero = 0;
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, &kZero);
  assert_null(execute(f, binary_op(f->ctx, "ExpandDims", x, axis)));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "ExpandDims: the result would have rank 255, above the "
                  "maximum rank 254");
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(x);
}

static TFE_TensorHandle* reduce(eager_fixture_t* f, const char* name,
                                TFE_TensorHandle* x, const int32_t* axes,
                                int64_t n, bool keep_dims) {
  TFE_TensorHandle* indices = int_vector(f, axes, n);
  TFE_Op* op = binary_op(f->ctx, name, x, indices);
  TFE_OpSetAttrBool(op, "keep_dims", keep_dims);
  TFE_TensorHandle* result = run_ok(f, op);
  TFE_DeleteTensorHandle(indices);
  return result;
}

static void reductions_fold_at_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = arange(f, kRedDims, 10, 1.0f, 0.0f);
  // NumPy: r.sum(axis=(0, 4)), r.mean(axis=(2, 8), keepdims=True), r.max().
  static const int32_t kSumAxes[2] = {0, 4};
  expect_floats(f, reduce(f, "Sum", x, kSumAxes, 2, false), kSumShape, 8,
                kSumOut, 6);
  static const int32_t kMeanAxes[2] = {2, -2};
  expect_floats(f, reduce(f, "Mean", x, kMeanAxes, 2, true), kMeanShape, 10,
                kMeanOut, 4);
  static const int32_t kAll[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  expect_floats(f, reduce(f, "Max", x, kAll, 10, false), NULL, 0, kMaxOut, 1);
  TFE_DeleteTensorHandle(x);
  // NumPy: np.argmax(np.sin(r), axis=2).
  TFE_TensorHandle* s = float_handle(f->ctx, kRedDims, 10, kSinIn);
  static const int32_t kTwo = 2;
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, &kTwo);
  TFE_TensorHandle* am = run_ok(f, binary_op(f->ctx, "ArgMax", s, axis));
  assert_int_equal(TFE_TensorHandleNumDims(am, f->status), 9);
  for (int i = 0; i < 9; ++i) {
    assert_int_equal(TFE_TensorHandleDim(am, i, f->status), kArgShape[i]);
  }
  expect_ints(f, am, kArgOut, 8);
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(s);
}

static TFE_TensorHandle* transpose(eager_fixture_t* f, TFE_TensorHandle* x,
                                   const int32_t* perm, int64_t n) {
  TFE_TensorHandle* p = int_vector(f, perm, n);
  TFE_TensorHandle* result = execute(f, binary_op(f->ctx, "Transpose", x, p));
  TFE_DeleteTensorHandle(p);
  return result;
}

static void transpose_folds_dims_that_stay_adjacent(void** state) {
  eager_fixture_t* f = *state;
  static const int64_t kDims10[10] = {2, 3, 1, 1, 1, 1, 1, 1, 2, 2};
  TFE_TensorHandle* x = arange(f, kDims10, 10, 1.0f, 0.0f);
  // NumPy: np.transpose(t, kPerm1) and np.transpose(t, reversed).
  static const int32_t kPerm1[10] = {8, 9, 2, 3, 4, 5, 6, 7, 0, 1};
  static const int32_t kPerm2[10] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  TFE_TensorHandle* y = transpose(f, x, kPerm1, 10);
  ASSERT_TF_OK(f->status);
  expect_floats(f, y, kT1Shape, 10, kT1Out, 24);
  y = transpose(f, x, kPerm2, 10);
  ASSERT_TF_OK(f->status);
  expect_floats(f, y, kT2Shape, 10, kT2Out, 24);
  TFE_DeleteTensorHandle(x);
  // Ten dims of 2 reversed: none stays next to another.
  int64_t twos[10];
  for (int i = 0; i < 10; ++i) twos[i] = 2;
  float zeros[1024] = {0};
  TFE_TensorHandle* z = float_handle(f->ctx, twos, 10, zeros);
  y = transpose(f, z, kPerm2, 10);
  ASSERT_TF_OK(f->status);
  expect_zeros(f, y, twos, 10);
  TFE_DeleteTensorHandle(z);
}

static void shape_ops_make_and_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  static const int64_t kSmall[3] = {2, 3, 2};
  TFE_TensorHandle* x = arange(f, kSmall, 3, 1.0f, 0.0f);
  static const float kIota[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  // Reshape up to rank 10 (NumPy: x.reshape(kSelT)).
  static const int32_t kTarget[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, -1};
  TFE_TensorHandle* sizes = int_vector(f, kTarget, 10);
  TFE_TensorHandle* r = run_ok(f, binary_op(f->ctx, "Reshape", x, sizes));
  TFE_DeleteTensorHandle(sizes);
  // ExpandDims at axis 3 (rank 11), Squeeze back to [2, 3, 2].
  static const int32_t kThree = 3;
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, &kThree);
  TFE_TensorHandle* e = run_ok(f, binary_op(f->ctx, "ExpandDims", r, axis));
  TFE_DeleteTensorHandle(axis);
  static const int64_t kExpanded[11] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  assert_int_equal(TFE_TensorHandleNumDims(e, f->status), 11);
  for (int i = 0; i < 11; ++i) {
    assert_int_equal(TFE_TensorHandleDim(e, i, f->status), kExpanded[i]);
  }
  TFE_TensorHandle* q = run_ok(f, new_op(f, "Squeeze", &e, 1));
  expect_floats(f, q, kSmall, 3, kIota, 12);
  TFE_DeleteTensorHandle(e);
  expect_floats(f, r, kSelT, 10, kIota, 12);
  TFE_DeleteTensorHandle(x);
  // Fill to rank 10, BroadcastTo rank 10 (NumPy: np.broadcast_to).
  static const int32_t kFillDims[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 2};
  static const float kSevens[12] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  TFE_TensorHandle* dims = int_vector(f, kFillDims, 10);
  TFE_TensorHandle* seven = scalar_handle(f->ctx, 7.0f);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Fill", dims, seven)), kSelT, 10,
                kSevens, 12);
  TFE_DeleteTensorHandle(seven);
  TFE_DeleteTensorHandle(dims);
  static const int64_t kColumn[2] = {3, 1};
  TFE_TensorHandle* column = arange(f, kColumn, 2, 1.0f, 0.0f);
  int32_t target[10];
  for (int i = 0; i < 10; ++i) target[i] = (int32_t)kBtShape[i];
  TFE_TensorHandle* shape = int_vector(f, target, 10);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "BroadcastTo", column, shape)),
                kBtShape, 10, kBtOut, 12);
  TFE_DeleteTensorHandle(shape);
  TFE_DeleteTensorHandle(column);
  // BroadcastGradientArgs of a rank-10 and a rank-12 shape.
  int32_t s0[10], s1[12];
  for (int i = 0; i < 10; ++i) s0[i] = (int32_t)kAddX[i];
  for (int i = 0; i < 12; ++i) s1[i] = (int32_t)kAddY[i];
  TFE_TensorHandle* h0 = int_vector(f, s0, 10);
  TFE_TensorHandle* h1 = int_vector(f, s1, 12);
  TFE_Op* op = binary_op(f->ctx, "BroadcastGradientArgs", h0, h1);
  TFE_TensorHandle* rs[2] = {NULL, NULL};
  int num_retvals = 2;
  TFE_Execute(op, rs, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  int64_t r0[9], r1[9];
  for (int i = 0; i < 9; ++i) {
    r0[i] = kR0[i];
    r1[i] = kR1[i];
  }
  expect_ints(f, rs[0], r0, 9);
  expect_ints(f, rs[1], r1, 9);
  TFE_DeleteTensorHandle(h0);
  TFE_DeleteTensorHandle(h1);
}

static const int64_t kConcatShape[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 3};
static const float kConcatOut[18] = {0, 1, 100, 2, 3, 101, 4,  5,  102,
                                     6, 7, 103, 8, 9, 104, 10, 11, 105};
static const int64_t kPackShape[11] = {2, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1};
static const float kPackOut[12] = {100, 200, 101, 202, 102, 204,
                                   103, 206, 104, 208, 105, 210};
static const int64_t kUnpackShape[9] = {2, 1, 1, 1, 1, 1, 1, 1, 2};
static const float kUnpack1[4] = {2, 3, 8, 9};

static void concat_pack_and_unpack_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: a = np.arange(12).reshape(2,3,1,1,1,1,1,1,1,2),
  // b = (np.arange(6) + 100).reshape(2,3,1,1,1,1,1,1,1,1).
  static const int64_t kA[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 2};
  static const int64_t kB[10] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  TFE_TensorHandle* a = arange(f, kA, 10, 1.0f, 0.0f);
  TFE_TensorHandle* b = arange(f, kB, 10, 1.0f, 100.0f);
  TFE_TensorHandle* b2 = arange(f, kB, 10, 2.0f, 200.0f);
  // np.concatenate([a, b], axis=-1).
  static const int32_t kLast = -1;
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, &kLast);
  TFE_TensorHandle* values[3] = {a, b, axis};
  TFE_Op* op = new_op(f, "ConcatV2", NULL, 0);
  TFE_OpAddInputList(op, values, 2, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(op, axis, f->status);
  ASSERT_TF_OK(f->status);
  expect_floats(f, run_ok(f, op), kConcatShape, 10, kConcatOut, 18);
  TFE_DeleteTensorHandle(axis);
  // np.stack([b, b * 2], axis=3) (rank 11).
  TFE_TensorHandle* pair[2] = {b, b2};
  op = new_op(f, "Pack", NULL, 0);
  TFE_OpAddInputList(op, pair, 2, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrInt(op, "axis", 3);
  expect_floats(f, run_ok(f, op), kPackShape, 11, kPackOut, 12);
  // a[:, 1] of Unpack(a, num=3, axis=1) (rank 9).
  op = new_op(f, "Unpack", &a, 1);
  TFE_OpSetAttrInt(op, "num", 3);
  TFE_OpSetAttrInt(op, "axis", 1);
  TFE_TensorHandle* pieces[3] = {NULL, NULL, NULL};
  int num_retvals = 3;
  TFE_Execute(op, pieces, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  assert_int_equal(num_retvals, 3);
  expect_floats(f, pieces[1], kUnpackShape, 9, kUnpack1, 4);
  TFE_DeleteTensorHandle(pieces[0]);
  TFE_DeleteTensorHandle(pieces[2]);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
  TFE_DeleteTensorHandle(b2);
}

static const int64_t kSliceShape[10] = {1, 2, 1, 1, 1, 1, 1, 1, 2, 2};
static const float kSliceOut[8] = {32, 33, 34, 35, 40, 41, 42, 43};

static void slice_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.arange(48).reshape(kSliced)[1:2, 1:3, ..., 0:1, :, :] (the
  // last two dims taken whole fold into the one before them).
  static const int64_t kSliced[10] = {2, 3, 1, 1, 1, 1, 1, 2, 2, 2};
  static const int32_t kBegin[10] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  static const int32_t kSize[10] = {1, 2, -1, 1, 1, 1, 1, 1, 2, -1};
  TFE_TensorHandle* x = arange(f, kSliced, 10, 1.0f, 0.0f);
  TFE_TensorHandle* begin = int_vector(f, kBegin, 10);
  TFE_TensorHandle* size = int_vector(f, kSize, 10);
  TFE_TensorHandle* inputs[3] = {x, begin, size};
  expect_floats(f, run_ok(f, new_op(f, "Slice", inputs, 3)), kSliceShape, 10,
                kSliceOut, 8);
  TFE_DeleteTensorHandle(x);
  TFE_DeleteTensorHandle(size);
  // Half of each of ten dims of 2: no two dims fold (ten copy dims).
  static const int64_t kOnes10[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  int64_t twos[10];
  int32_t ones[10];
  for (int i = 0; i < 10; ++i) {
    twos[i] = 2;
    ones[i] = 1;
  }
  float zeros[1024] = {0};
  TFE_TensorHandle* z = float_handle(f->ctx, twos, 10, zeros);
  TFE_TensorHandle* halves = int_vector(f, ones, 10);
  TFE_TensorHandle* args[3] = {z, begin, halves};
  expect_zeros(f, run_ok(f, new_op(f, "Slice", args, 3)), kOnes10, 10);
  TFE_DeleteTensorHandle(z);
  TFE_DeleteTensorHandle(halves);
  TFE_DeleteTensorHandle(begin);
}

static const int64_t kLastShape[9] = {2, 3, 1, 1, 1, 1, 1, 2, 2};
static const float kLastOut[24] = {0,  2,  4,  6,  8,  10, 12, 14,
                                   16, 18, 20, 22, 24, 26, 28, 30,
                                   32, 34, 36, 38, 40, 42, 44, 46};
static const float kReversedOut[48] = {
    16, 17, 18, 19, 20, 21, 22, 23, 8,  9,  10, 11, 12, 13, 14, 15,
    0,  1,  2,  3,  4,  5,  6,  7,  40, 41, 42, 43, 44, 45, 46, 47,
    32, 33, 34, 35, 36, 37, 38, 39, 24, 25, 26, 27, 28, 29, 30, 31};

static TFE_TensorHandle* strided_slice(eager_fixture_t* f, TFE_TensorHandle* x,
                                       const int32_t* spec, int64_t n,
                                       const int32_t* strides, int64_t mask,
                                       int64_t ellipsis, int64_t shrink) {
  TFE_TensorHandle* begin = int_vector(f, spec, n);
  TFE_TensorHandle* end = int_vector(f, spec, n);
  TFE_TensorHandle* step = int_vector(f, strides, n);
  TFE_TensorHandle* inputs[4] = {x, begin, end, step};
  TFE_Op* op = new_op(f, "StridedSlice", inputs, 4);
  TFE_OpSetAttrInt(op, "begin_mask", mask);
  TFE_OpSetAttrInt(op, "end_mask", mask);
  TFE_OpSetAttrInt(op, "ellipsis_mask", ellipsis);
  TFE_OpSetAttrInt(op, "shrink_axis_mask", shrink);
  TFE_TensorHandle* result = run_ok(f, op);
  TFE_DeleteTensorHandle(begin);
  TFE_DeleteTensorHandle(end);
  TFE_DeleteTensorHandle(step);
  return result;
}

static void strided_slice_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  static const int64_t kShape10[10] = {2, 3, 1, 1, 1, 1, 1, 2, 2, 2};
  TFE_TensorHandle* x = arange(f, kShape10, 10, 1.0f, 0.0f);
  // NumPy: x[..., 0] (an ellipsis, then a shrunk axis: rank 9).
  static const int32_t kZeros2[2] = {0, 0};
  static const int32_t kOnes2[2] = {1, 1};
  expect_floats(f, strided_slice(f, x, kZeros2, 2, kOnes2, 0, 1, 2), kLastShape,
                9, kLastOut, 24);
  // NumPy: x[:, ::-1] (a reversed dim between folded ones).
  static const int32_t kReverse[2] = {1, -1};
  expect_floats(f, strided_slice(f, x, kZeros2, 2, kReverse, 3, 0, 0), kShape10,
                10, kReversedOut, 48);
  TFE_DeleteTensorHandle(x);
}

static void elementwise_family_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* t = arange(f, kSelT, 10, 1.0f, 1.0f);
  // SelectV2 with a condition broadcast over the last dim and a scalar.
  static const int64_t kCond[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  static const bool kCondValues[2] = {true, false};
  TF_Tensor* ct = TFE_AllocateHostTensor(f->ctx, TF_BOOL, kCond, 10, f->status);
  ASSERT_TF_OK(f->status);
  memcpy(TF_TensorData(ct), kCondValues, sizeof(kCondValues));
  TFE_TensorHandle* cond = TFE_NewTensorHandleFromTensor(f->ctx, ct, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteTensor(ct);
  TFE_TensorHandle* minus_one = scalar_handle(f->ctx, -1.0f);
  TFE_TensorHandle* inputs[3] = {cond, t, minus_one};
  expect_floats(f, run_ok(f, new_op(f, "SelectV2", inputs, 3)), kSelT, 10,
                kSelOut, 12);
  TFE_DeleteTensorHandle(minus_one);
  TFE_DeleteTensorHandle(cond);
  // AddN of three (NumPy: t + t + t).
  TFE_TensorHandle* three[3] = {t, t, t};
  expect_floats(f, run_ok(f, new_op(f, "AddN", three, 3)), kSelT, 10, kAddNOut,
                12);
  // ZerosLike, OnesLike.
  static const float kZeros[12] = {0};
  static const float kOnes[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  expect_floats(f, run_ok(f, new_op(f, "ZerosLike", &t, 1)), kSelT, 10, kZeros,
                12);
  expect_floats(f, run_ok(f, new_op(f, "OnesLike", &t, 1)), kSelT, 10, kOnes,
                12);
  TFE_DeleteTensorHandle(t);
  // ReluGrad (NumPy: np.where(x > 0, g, 0)).
  TFE_TensorHandle* g = float_handle(f->ctx, kSelT, 10, kReluG);
  TFE_TensorHandle* x = float_handle(f->ctx, kSelT, 10, kReluX);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "ReluGrad", g, x)), kSelT, 10,
                kReluGradOut, 12);
  TFE_DeleteTensorHandle(g);
  TFE_DeleteTensorHandle(x);
  // Cast to int32 (NumPy: astype(np.int32), truncating).
  TFE_TensorHandle* c = float_handle(f->ctx, kSelT, 10, kCastIn);
  TFE_Op* op = new_op(f, "Cast", &c, 1);
  TFE_OpSetAttrType(op, "DstT", TF_INT32);
  TFE_TensorHandle* ci = run_ok(f, op);
  assert_int_equal(TFE_TensorHandleNumDims(ci, f->status), 10);
  int64_t cast[12];
  for (int i = 0; i < 12; ++i) cast[i] = kCastOut[i];
  expect_ints(f, ci, cast, 12);
  TFE_DeleteTensorHandle(c);
}

static void ranks_above_254_are_refused(void** state) {
  eager_fixture_t* f = *state;
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  TF_Tensor* t = TFE_AllocateHostTensor(f->ctx, TF_FLOAT, dims,
                                        LOOM_MAX_SHAPE_RANK + 1, f->status);
  assert_null(t);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "shape rank 255 is outside [0, 254]");
  t = TFE_AllocateHostTensor(f->ctx, TF_FLOAT, dims, LOOM_MAX_SHAPE_RANK,
                             f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(TF_NumDims(t), LOOM_MAX_SHAPE_RANK);
  TF_DeleteTensor(t);
}

//===----------------------------------------------------------------------===//
// Splitting, tiling, padding, reversing, gathering, scans, softmax and
// batched products above rank 8, against NumPy (/usr/bin/python3), with
// x = np.arange(24, dtype=np.float32).reshape(kX10)
//===----------------------------------------------------------------------===//

static const int64_t kX10[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 2};
static const int64_t kT9[9] = {1, 2, 1, 1, 1, 1, 1, 1, 3};
static const int64_t kSplitShape[10] = {2, 1, 1, 1, 1, 1, 1, 1, 2, 2};
static const float kSplitOut[24] = {0, 1, 2,  3,  12, 13, 14, 15,
                                    4, 5, 6,  7,  16, 17, 18, 19,
                                    8, 9, 10, 11, 20, 21, 22, 23};
static const int64_t kSplitVShape[10] = {2, 1, 3, 1, 1, 1, 1, 1, 1, 2};
static const float kSplitVOut[24] = {0,  1,  4,  5,  8,  9,  12, 13,
                                     16, 17, 20, 21, 2,  3,  6,  7,
                                     10, 11, 14, 15, 18, 19, 22, 23};
static const int64_t kTileShape[9] = {2, 2, 1, 1, 1, 1, 1, 2, 3};
static const float kTileOut[24] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5,
                                   0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
static const int64_t kPadShape[9] = {1, 3, 1, 1, 1, 1, 1, 2, 5};
static const float kPadOut[30] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0,
                                  0, 0, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0, 0, 0, 0};
static const int64_t kPadV2Shape[10] = {3, 1, 3, 1, 1, 1, 1, 1, 2, 3};
static const float kPadV2Out[54] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    0,  1,  -1, 2,  3,  -1, 4,  5,  -1, 6,  7,  -1, 8,  9,  -1, 10, 11, -1,
    12, 13, -1, 14, 15, -1, 16, 17, -1, 18, 19, -1, 20, 21, -1, 22, 23, -1};
static const float kReverseOut[24] = {14, 15, 12, 13, 18, 19, 16, 17,
                                      22, 23, 20, 21, 2,  3,  0,  1,
                                      6,  7,  4,  5,  10, 11, 8,  9};
static const int64_t kGatherShape[10] = {2, 1, 2, 1, 1, 1, 1, 1, 2, 2};
static const float kGatherOut[16] = {8,  9,  10, 11, 0,  1,  2,  3,
                                     20, 21, 22, 23, 12, 13, 14, 15};
static const int64_t kGather2Shape[10] = {2, 1, 1, 1, 1, 1, 1, 1, 2, 2};
static const float kGather2Out[8] = {8, 9, 10, 11, 0, 1, 2, 3};
static const int64_t kOneHotShape[10] = {1, 2, 1, 1, 1, 1, 1, 1, 2, 3};
static const float kOneHotOut[12] = {1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0};
static const float kCumsumOut[24] = {0,  1,  2,  3,  4,  6,  8,  10,
                                     12, 15, 18, 21, 12, 13, 14, 15,
                                     28, 30, 32, 34, 48, 51, 54, 57};
static const float kCumprodOut[24] = {1.5, 2,  1, 1, 3.5,  4,  1, 1,
                                      5.5, 6,  1, 1, 7.5,  8,  1, 1,
                                      9.5, 10, 1, 1, 11.5, 12, 1, 1};
static const float kSoftmaxOut[24] = {
    0.165296177, 0.212244492, 0.272527322, 0.349932009, 0.165296177,
    0.212244492, 0.272527322, 0.349932009, 0.165296177, 0.212244492,
    0.272527322, 0.349932009, 0.165296177, 0.212244492, 0.272527322,
    0.349932009, 0.165296177, 0.212244492, 0.272527322, 0.349932009,
    0.165296177, 0.212244492, 0.272527322, 0.349932009};
static const float kLogSoftmaxOut[24] = {
    -1.8000164, -1.5500164, -1.3000164, -1.0500164, -1.8000164, -1.5500164,
    -1.3000164, -1.0500164, -1.8000164, -1.5500164, -1.3000164, -1.0500164,
    -1.8000164, -1.5500164, -1.3000164, -1.0500164, -1.8000164, -1.5500164,
    -1.3000164, -1.0500164, -1.8000164, -1.5500164, -1.3000164, -1.0500164};
static const int64_t kBmmShape[10] = {2, 3, 1, 1, 1, 1, 1, 1, 2, 2};
static const float kBmmOut[24] = {2.75,  1.625,  0.5,    0.5,     -4,  -5.125,
                                  0.5,   0.5,    -10.75, -11.875, 0.5, 0.5,
                                  -1.75, -0.625, -4,     -1.75,   5,   6.125,
                                  9.5,   11.75,  11.75,  12.875,  23,  25.25};

// Runs `op` with `n` results into results[0, n) (resolved), deleting it.
static void execute_n(eager_fixture_t* f, TFE_Op* op,
                      TFE_TensorHandle** results, int n) {
  int num_retvals = n;
  TFE_Execute(op, results, &num_retvals, f->status);
  TFE_DeleteOp(op);
  ASSERT_TF_OK(f->status);
  assert_int_equal(num_retvals, n);
}

static void split_and_split_v_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = arange(f, kX10, 10, 1.0f, 0.0f);
  // NumPy: np.split(x, 3, axis=2).
  int64_t two = 2;
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, (const int32_t[]){2});
  TFE_TensorHandle* split_inputs[2] = {axis, x};
  TFE_Op* op = new_op(f, "Split", split_inputs, 2);
  TFE_OpSetAttrInt(op, "num_split", 3);
  TFE_TensorHandle* parts[3] = {NULL, NULL, NULL};
  execute_n(f, op, parts, 3);
  for (int k = 0; k < 3; ++k) {
    expect_floats(f, parts[k], kSplitShape, 10, kSplitOut + 8 * k, 8);
  }
  TFE_DeleteTensorHandle(axis);
  // NumPy: x[..., 0:1, :] and x[..., 1:, :] (SplitV, sizes [1, -1]).
  TFE_TensorHandle* sizes =
      int_handle(f->ctx, &two, 1, (const int32_t[]){1, -1});
  TFE_TensorHandle* dim = int_handle(f->ctx, NULL, 0, (const int32_t[]){-2});
  TFE_TensorHandle* v_inputs[3] = {x, sizes, dim};
  op = new_op(f, "SplitV", v_inputs, 3);
  TFE_OpSetAttrInt(op, "num_split", 2);
  TFE_OpSetAttrType(op, "Tlen", TF_INT32);
  execute_n(f, op, parts, 2);
  for (int k = 0; k < 2; ++k) {
    expect_floats(f, parts[k], kSplitVShape, 10, kSplitVOut + 12 * k, 12);
  }
  TFE_DeleteTensorHandle(sizes);
  TFE_DeleteTensorHandle(dim);
  TFE_DeleteTensorHandle(x);
}

static void tile_takes_rank_9_and_more_than_8_groups(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.tile(t, (2, 1, 1, 1, 1, 1, 1, 2, 1)), t = arange(6).reshape(kT9).
  TFE_TensorHandle* t = arange(f, kT9, 9, 1.0f, 0.0f);
  static const int32_t kMultiples[9] = {2, 1, 1, 1, 1, 1, 1, 2, 1};
  TFE_TensorHandle* multiples = int_vector(f, kMultiples, 9);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Tile", t, multiples)),
                kTileShape, 9, kTileOut, 24);
  TFE_DeleteTensorHandle(multiples);
  TFE_DeleteTensorHandle(t);
  // Nine dims of 2, each repeated: nine groups, the outer one a loop.
  int64_t twos[9];
  int32_t repeats[9];
  for (int i = 0; i < 9; ++i) {
    twos[i] = 2;
    repeats[i] = 2;
  }
  static float zeros[512];
  TFE_TensorHandle* z = float_handle(f->ctx, twos, 9, zeros);
  multiples = int_vector(f, repeats, 9);
  static const int64_t kFours[9] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
  expect_zeros(f, run_ok(f, binary_op(f->ctx, "Tile", z, multiples)), kFours,
               9);
  TFE_DeleteTensorHandle(multiples);
  TFE_DeleteTensorHandle(z);
}

static void pad_and_pad_v2_take_ranks_9_and_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.pad(t, [(0,0), (1,0), (0,0) * 5, (0,1), (1,1)]).
  TFE_TensorHandle* t = arange(f, kT9, 9, 1.0f, 0.0f);
  static const int32_t kPaddings9[18] = {0, 0, 1, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 0, 0, 1, 1, 1};
  static const int64_t kPaddingsDims9[2] = {9, 2};
  TFE_TensorHandle* paddings =
      int_handle(f->ctx, kPaddingsDims9, 2, kPaddings9);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Pad", t, paddings)), kPadShape,
                9, kPadOut, 30);
  TFE_DeleteTensorHandle(paddings);
  TFE_DeleteTensorHandle(t);
  // NumPy: np.pad(x, [(1,0)] + [(0,0)] * 8 + [(0,1)], constant_values=-1).
  TFE_TensorHandle* x = arange(f, kX10, 10, 1.0f, 0.0f);
  static const int32_t kPaddings10[20] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static const int64_t kPaddingsDims10[2] = {10, 2};
  paddings = int_handle(f->ctx, kPaddingsDims10, 2, kPaddings10);
  TFE_TensorHandle* minus_one = scalar_handle(f->ctx, -1.0f);
  TFE_TensorHandle* inputs[3] = {x, paddings, minus_one};
  expect_floats(f, run_ok(f, new_op(f, "PadV2", inputs, 3)), kPadV2Shape, 10,
                kPadV2Out, 54);
  TFE_DeleteTensorHandle(minus_one);
  TFE_DeleteTensorHandle(paddings);
  TFE_DeleteTensorHandle(x);
}

static void reverse_v2_folds_its_axes_at_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.flip(x, axis=(0, 8)).
  TFE_TensorHandle* x = arange(f, kX10, 10, 1.0f, 0.0f);
  TFE_TensorHandle* axes = int_vector(f, (const int32_t[]){0, -2}, 2);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "ReverseV2", x, axes)), kX10, 10,
                kReverseOut, 24);
  TFE_DeleteTensorHandle(axes);
  TFE_DeleteTensorHandle(x);
  // Seventeen dims of 2, every other one reversed: seventeen groups, the
  // outer one a loop.
  int64_t twos[17];
  int32_t every_other[9];
  for (int i = 0; i < 17; ++i) twos[i] = 2;
  for (int i = 0; i < 9; ++i) every_other[i] = 2 * i;
  float* zeros = calloc(1 << 17, sizeof(float));
  assert_non_null(zeros);
  TFE_TensorHandle* z = float_handle(f->ctx, twos, 17, zeros);
  free(zeros);
  axes = int_vector(f, every_other, 9);
  expect_zeros(f, run_ok(f, binary_op(f->ctx, "ReverseV2", z, axes)), twos, 17);
  TFE_DeleteTensorHandle(axes);
  TFE_DeleteTensorHandle(z);
}

static void gather_and_one_hot_make_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.take(x, [2, 0], axis=2).
  TFE_TensorHandle* x = arange(f, kX10, 10, 1.0f, 0.0f);
  TFE_TensorHandle* indices = int_vector(f, (const int32_t[]){2, 0}, 2);
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, (const int32_t[]){2});
  TFE_TensorHandle* inputs[3] = {x, indices, axis};
  expect_floats(f, run_ok(f, new_op(f, "GatherV2", inputs, 3)), kGatherShape,
                10, kGatherOut, 16);
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(indices);
  TFE_DeleteTensorHandle(x);
  // NumPy: np.take(p, [[2], [0]], axis=0), p = arange(12).reshape(3, 1, ...,
  // 2, 2) of rank 9: a result of rank 10.
  static const int64_t kP9[9] = {3, 1, 1, 1, 1, 1, 1, 2, 2};
  TFE_TensorHandle* p = arange(f, kP9, 9, 1.0f, 0.0f);
  static const int64_t kIndexDims[2] = {2, 1};
  indices = int_handle(f->ctx, kIndexDims, 2, (const int32_t[]){2, 0});
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Gather", p, indices)),
                kGather2Shape, 10, kGather2Out, 8);
  TFE_DeleteTensorHandle(indices);
  TFE_DeleteTensorHandle(p);
  // NumPy: (i[..., None] == np.arange(3)).astype(np.float32), i of rank 9
  // holding [0, 2, 1, 5] (5 is out of range: all off).
  static const int64_t kI9[9] = {1, 2, 1, 1, 1, 1, 1, 1, 2};
  indices = int_handle(f->ctx, kI9, 9, (const int32_t[]){0, 2, 1, 5});
  TFE_TensorHandle* depth = int_handle(f->ctx, NULL, 0, (const int32_t[]){3});
  TFE_TensorHandle* on = scalar_handle(f->ctx, 1.0f);
  TFE_TensorHandle* off = scalar_handle(f->ctx, 0.0f);
  TFE_TensorHandle* one_hot[4] = {indices, depth, on, off};
  expect_floats(f, run_ok(f, new_op(f, "OneHot", one_hot, 4)), kOneHotShape, 10,
                kOneHotOut, 12);
  TFE_DeleteTensorHandle(indices);
  // Indices of rank 254 would make a result of rank 255.
  int64_t ones[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) ones[i] = 1;
  indices = int_handle(f->ctx, ones, LOOM_MAX_SHAPE_RANK, (const int32_t[]){0});
  TFE_TensorHandle* too_many[4] = {indices, depth, on, off};
  assert_null(execute(f, new_op(f, "OneHot", too_many, 4)));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "OneHot: the result would have rank 255, above the maximum "
                  "rank 254");
  TFE_DeleteTensorHandle(indices);
  TFE_DeleteTensorHandle(depth);
  TFE_DeleteTensorHandle(on);
  TFE_DeleteTensorHandle(off);
}

static void scans_and_softmax_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.cumsum(x, axis=2).
  TFE_TensorHandle* x = arange(f, kX10, 10, 1.0f, 0.0f);
  TFE_TensorHandle* axis = int_handle(f->ctx, NULL, 0, (const int32_t[]){2});
  expect_floats(f, run_ok(f, binary_op(f->ctx, "Cumsum", x, axis)), kX10, 10,
                kCumsumOut, 24);
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(x);
  // Cumprod along axis 8, exclusive and reversed, of arange(24) * 0.5 + 0.5:
  // NumPy: flip(concat([ones, cumprod(flip(x, 8), 8)[..., :-1, :]], 8), 8).
  x = arange(f, kX10, 10, 0.5f, 0.5f);
  axis = int_handle(f->ctx, NULL, 0, (const int32_t[]){8});
  TFE_Op* op = binary_op(f->ctx, "Cumprod", x, axis);
  TFE_OpSetAttrBool(op, "exclusive", 1);
  TFE_OpSetAttrBool(op, "reverse", 1);
  expect_floats(f, run_ok(f, op), kX10, 10, kCumprodOut, 24);
  TFE_DeleteTensorHandle(axis);
  TFE_DeleteTensorHandle(x);
  // NumPy: softmax and log-softmax over the last axis of
  // (arange(24) * 0.25).reshape(kSm).
  static const int64_t kSm[10] = {2, 1, 3, 1, 1, 1, 1, 1, 1, 4};
  x = arange(f, kSm, 10, 0.25f, 0.0f);
  expect_floats(f, run_unary(f, "Softmax", x), kSm, 10, kSoftmaxOut, 24);
  ASSERT_TF_OK(f->status);
  expect_floats(f, run_unary(f, "LogSoftmax", x), kSm, 10, kLogSoftmaxOut, 24);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(x);
}

static void top_k_and_random_uniform_take_rank_10(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  static const int32_t kTwo = 2;
  TFE_TensorHandle* k = int_handle(f->ctx, NULL, 0, &kTwo);
  TFE_Op* op = binary_op(f->ctx, "TopKV2", x, k);
  TFE_TensorHandle* top[2] = {NULL, NULL};
  execute_n(f, op, top, 2);
  // NumPy: np.sort(x, -1)[..., ::-1][..., :2] and np.argsort(-x, -1,
  // kind="stable")[..., :2].
  static const int64_t kTopDims[10] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  static const float kTopValues[4] = {2, 1, 5, 4};
  static const int64_t kTopIndices[4] = {2, 1, 2, 1};
  expect_floats(f, top[0], kTopDims, 10, kTopValues, 4);
  expect_ints(f, top[1], kTopIndices, 4);
  TFE_DeleteTensorHandle(k);

  // A shape of 10 elements makes a result of rank 10.
  static const int32_t kShape[10] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 3};
  TFE_TensorHandle* shape = int_vector(f, kShape, 10);
  op = new_op(f, "RandomUniform", &shape, 1);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrInt(op, "seed", 7);
  TFE_OpSetAttrInt(op, "seed2", 9);
  TFE_TensorHandle* u = run_ok(f, op);
  assert_int_equal(TFE_TensorHandleNumDims(u, f->status), 10);
  for (int i = 0; i < 10; ++i) {
    assert_int_equal(TFE_TensorHandleDim(u, i, f->status), kShape[i]);
  }
  float values[6];
  read_floats(u, values, 6);
  for (int i = 0; i < 6; ++i) assert_true(values[i] >= 0 && values[i] < 1);
  TFE_DeleteTensorHandle(u);
  TFE_DeleteTensorHandle(shape);
  TFE_DeleteTensorHandle(x);
}

static void matrix_diag_v3_stops_at_rank_254(void** state) {
  eager_fixture_t* f = *state;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < LOOM_MAX_SHAPE_RANK; ++i) dims[i] = 1;
  static const float kOne = 1;
  TFE_TensorHandle* args[5] = {
      float_handle(f->ctx, dims, LOOM_MAX_SHAPE_RANK, &kOne)};
  static const int32_t kZero = 0, kInfer = -1;
  args[1] = int_handle(f->ctx, NULL, 0, &kZero);
  args[2] = int_handle(f->ctx, NULL, 0, &kInfer);
  args[3] = int_handle(f->ctx, NULL, 0, &kInfer);
  args[4] = scalar_handle(f->ctx, 0);
  // One diagonal of rank 253 makes matrices of rank 254.
  TFE_TensorHandle* part = float_handle(f->ctx, dims, 253, &kOne);
  TFE_TensorHandle* ok_args[5] = {part, args[1], args[2], args[3], args[4]};
  expect_floats(f, run_ok(f, new_op(f, "MatrixDiagV3", ok_args, 5)), dims,
                LOOM_MAX_SHAPE_RANK, &kOne, 1);
  assert_null(execute(f, new_op(f, "MatrixDiagV3", args, 5)));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "MatrixDiagV3: the result would have rank 255, above the "
                  "maximum rank 254");
  TFE_DeleteTensorHandle(part);
  for (int i = 0; i < 5; ++i) TFE_DeleteTensorHandle(args[i]);
}

// Einsum at rank 10: a batch label, a contraction and a transposed output
// of rank 10.
static void einsum_takes_rank_10(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.einsum("abcdefghij,jkc->kjhgfedbia",
  //                  (arange(24) * 0.5 - 2).reshape(kA),
  //                  (arange(12) * 0.25 - 1).reshape(kB)).
  static const int64_t kA[10] = {2, 1, 3, 1, 1, 1, 1, 1, 2, 2};
  static const int64_t kB[3] = {2, 2, 3};
  static const int64_t kOut[10] = {2, 2, 1, 1, 1, 1, 1, 1, 2, 2};
  static const float kExpected[16] = {
      1.0, -12.5, -1.25, -14.75, 2.125, 15.625, 4.375, 17.875,
      1.0, 1.0,   1.0,   1.0,    3.25,  30.25,  7.75,  34.75};
  TFE_TensorHandle* args[2] = {arange(f, kA, 10, 0.5f, -2.0f),
                               arange(f, kB, 3, 0.25f, -1.0f)};
  TFE_Op* op = new_op(f, "Einsum", args, 2);
  static const char kEquation[] = "abcdefghij,jkc->kjhgfedbia";
  TFE_OpSetAttrString(op, "equation", kEquation, sizeof(kEquation) - 1);
  TFE_OpSetAttrInt(op, "N", 2);
  expect_floats(f, run_ok(f, op), kOut, 10, kExpected, 16);
  TFE_DeleteTensorHandle(args[0]);
  TFE_DeleteTensorHandle(args[1]);
}

static void batch_mat_mul_broadcasts_eight_batch_dims(void** state) {
  eager_fixture_t* f = *state;
  // NumPy: np.matmul((arange(12) * 0.5 - 2).reshape(kA),
  //                  (arange(18) * 0.25 - 1).reshape(kB)).
  static const int64_t kA[10] = {2, 1, 1, 1, 1, 1, 1, 1, 2, 3};
  static const int64_t kB[10] = {1, 3, 1, 1, 1, 1, 1, 1, 3, 2};
  TFE_TensorHandle* a = arange(f, kA, 10, 0.5f, -2.0f);
  TFE_TensorHandle* b = arange(f, kB, 10, 0.25f, -1.0f);
  expect_floats(f, run_ok(f, binary_op(f->ctx, "BatchMatMulV2", a, b)),
                kBmmShape, 10, kBmmOut, 24);
  TFE_DeleteTensorHandle(a);
  TFE_DeleteTensorHandle(b);
}

static void shape_attrs_take_rank_12(void** state) {
  eager_fixture_t* f = *state;
  int64_t dims[LOOM_MAX_SHAPE_RANK + 1];
  for (int i = 0; i <= LOOM_MAX_SHAPE_RANK; ++i) dims[i] = i % 3 + 1;
  TFE_Op* op = TFE_NewOp(f->ctx, "VarHandleOp", f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrType(op, "dtype", TF_FLOAT);
  TFE_OpSetAttrShape(op, "shape", dims, 12, f->status);
  ASSERT_TF_OK(f->status);
  const int64_t* list[2] = {dims, dims};
  const int num_dims[2] = {12, LOOM_MAX_SHAPE_RANK};
  TFE_OpSetAttrShapeList(op, "shapes", list, num_dims, 2, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrShape(op, "shape", dims, LOOM_MAX_SHAPE_RANK + 1, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Value specified for `shape` has 255 dimensions which is "
                  "over the limit of 254.");
  TFE_DeleteOp(op);
}

#define BOTH(test)                                                         \
  cmocka_unit_test_setup_teardown(test, eager_setup_sync, eager_teardown), \
      cmocka_unit_test_setup_teardown(test, eager_setup_async, eager_teardown)

int main(void) {
  register_probe_kernels();
  const struct CMUnitTest tests[] = {
      BOTH(a_handle_of_rank_10_reports_its_dims),
      BOTH(identity_and_the_shape_ops_take_rank_10),
      BOTH(reshape_brings_rank_10_down),
      BOTH(reshape_names_a_rank_10_sizes_input),
      BOTH(a_native_kernel_without_any_rank_refuses_rank_10),
      BOTH(a_plugin_kernel_takes_rank_10),
      BOTH(where_takes_rank_10),
      BOTH(binary_ops_broadcast_at_ranks_9_10_and_12),
      BOTH(a_broadcast_that_does_not_fold_runs),
      BOTH(a_unary_op_takes_rank_254_and_expand_dims_stops_there),
      BOTH(reductions_fold_at_rank_10),
      BOTH(transpose_folds_dims_that_stay_adjacent),
      BOTH(shape_ops_make_and_take_rank_10),
      BOTH(elementwise_family_takes_rank_10),
      BOTH(concat_pack_and_unpack_take_rank_10),
      BOTH(slice_takes_rank_10),
      BOTH(strided_slice_takes_rank_10),
      BOTH(ranks_above_254_are_refused),
      BOTH(split_and_split_v_take_rank_10),
      BOTH(tile_takes_rank_9_and_more_than_8_groups),
      BOTH(pad_and_pad_v2_take_ranks_9_and_10),
      BOTH(reverse_v2_folds_its_axes_at_rank_10),
      BOTH(gather_and_one_hot_make_rank_10),
      BOTH(scans_and_softmax_take_rank_10),
      BOTH(top_k_and_random_uniform_take_rank_10),
      BOTH(matrix_diag_v3_stops_at_rank_254),
      BOTH(einsum_takes_rank_10),
      BOTH(batch_mat_mul_broadcasts_eight_batch_dims),
      BOTH(shape_attrs_take_rank_12),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
