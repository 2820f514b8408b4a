// Tensors above rank 8 (TensorFlow's ranks go to 254; Loom spills their
// dims, loom/shape.h) through the eager C API: they are made, queried,
// passed through the ops whose kernels read shapes through loom_shape_dims
// (Identity, Shape, Size, Rank, Reshape), and refused with a clear error by
// the others, in synchronous and asynchronous contexts.

#include "eager_test_util.h"
#include "loom/shape.h"

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

static void other_ops_refuse_rank_10_by_name(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = rank_10(f->ctx);
  TFE_Op* op = binary_op(f->ctx, "AddV2", x, x);
  TFE_TensorHandle* y = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &y, &num_retvals, f->status);
  if (TF_GetCode(f->status) == TF_OK) {
    // An asynchronous context reports the error when the result is read.
    TF_Tensor* t = TFE_TensorHandleResolve(y, f->status);
    assert_null(t);
    TFE_DeleteTensorHandle(y);
  }
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Op 'AddV2': input 0 has rank 10; the kernel of 'AddV2' "
                  "takes ranks up to 8");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(x);
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

#define BOTH(test)                                                         \
  cmocka_unit_test_setup_teardown(test, eager_setup_sync, eager_teardown), \
      cmocka_unit_test_setup_teardown(test, eager_setup_async, eager_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(a_handle_of_rank_10_reports_its_dims),
      BOTH(identity_and_the_shape_ops_take_rank_10),
      BOTH(reshape_brings_rank_10_down),
      BOTH(reshape_names_a_rank_10_sizes_input),
      BOTH(other_ops_refuse_rank_10_by_name),
      BOTH(ranks_above_254_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
