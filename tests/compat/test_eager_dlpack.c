// TensorFlow's DLPack exchange of eager handles (tensorflow/c/eager/
// dlpack.h): both directions share memory without a copy, and a managed
// tensor's deleter runs exactly once, when the last user lets go.
//
// Reference values: NumPy, np.add(a, a) for a = [[1, 2], [3, 4]] and the
// compact row-major strides of a (2, 3, 4) array, np.empty((2, 3, 4))
// .strides // itemsize == (12, 4, 1).

#include "tensorflow/c/eager/dlpack.h"

#include "eager_test_util.h"

#include "dlpack_producer.h"

static int setup(void** state) {
  return eager_setup_sync(state);
}

static int teardown(void** state) {
  return eager_teardown(state);
}

static void to_dlpack_shares_the_handles_memory(void** state) {
  eager_fixture_t* f = *state;
  static const int64_t dims[3] = {2, 3, 4};
  float values[24];
  for (int i = 0; i < 24; ++i) values[i] = (float)i;
  TFE_TensorHandle* h = float_handle(f->ctx, dims, 3, values);
  void* data = TFE_TensorHandleDevicePointer(h, f->status);
  ASSERT_TF_OK(f->status);
  DLManagedTensor* dlm = TFE_HandleToDLPack(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_non_null(dlm);
  assert_ptr_equal(dlm->dl_tensor.data, data);
  assert_int_equal(dlm->dl_tensor.device.device_type, kDLCPU);
  assert_int_equal(dlm->dl_tensor.device.device_id, 0);
  assert_int_equal(dlm->dl_tensor.ndim, 3);
  assert_int_equal(dlm->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(dlm->dl_tensor.dtype.bits, 32);
  assert_int_equal(dlm->dl_tensor.dtype.lanes, 1);
  assert_int_equal(dlm->dl_tensor.byte_offset, 0);
  static const int64_t strides[3] = {12, 4, 1};
  for (int i = 0; i < 3; ++i) {
    assert_int_equal(dlm->dl_tensor.shape[i], dims[i]);
    assert_int_equal(dlm->dl_tensor.strides[i], strides[i]);
  }
  // The managed tensor keeps the memory alive without the handle.
  TFE_DeleteTensorHandle(h);
  const float* shared = dlm->dl_tensor.data;
  for (int i = 0; i < 24; ++i) assert_true(shared[i] == values[i]);
  TFE_CallDLManagedTensorDeleter(dlm);
}

static void a_scalar_exports_with_rank_0(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* h = scalar_handle(f->ctx, 2.5f);
  DLManagedTensor* dlm = TFE_HandleToDLPack(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(dlm->dl_tensor.ndim, 0);
  assert_true(*(const float*)dlm->dl_tensor.data == 2.5f);
  TFE_DeleteTensorHandle(h);
  TFE_CallDLManagedTensorDeleter(dlm);
}

static void from_dlpack_shares_memory_and_deletes_once(void** state) {
  eager_fixture_t* f = *state;
  producer_t p;
  producer_init(&p);
  TFE_TensorHandle* h = TFE_HandleFromDLPack(&p.managed, f->status, f->ctx);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TFE_TensorHandleDevicePointer(h, f->status), p.data);
  assert_int_equal(TFE_TensorHandleDataType(h), TF_FLOAT);
  assert_int_equal(TFE_TensorHandleDim(h, 0, f->status), 2);
  assert_int_equal(TFE_TensorHandleDim(h, 1, f->status), 2);
  // An op reads it; the result does not hold the imported memory.
  TFE_Op* op = binary_op(f->ctx, "AddV2", h, h);
  TFE_TensorHandle* sum = NULL;
  int num_retvals = 1;
  TFE_Execute(op, &sum, &num_retvals, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteOp(op);
  float values[4];
  read_floats(sum, values, 4);
  static const float expected[4] = {2, 4, 6, 8};
  for (int i = 0; i < 4; ++i) assert_true(values[i] == expected[i]);
  // A resolved tensor keeps the memory too: the deleter waits for it.
  TF_Tensor* t = TFE_TensorHandleResolve(h, f->status);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TF_TensorData(t), p.data);
  TFE_DeleteTensorHandle(h);
  assert_int_equal(p.deleted, 0);
  TF_DeleteTensor(t);
  assert_int_equal(p.deleted, 1);
  TFE_DeleteTensorHandle(sum);
  assert_int_equal(p.deleted, 1);
}

// A handle exported and imported again is the same memory; the exporter's
// deleter runs once, when the imported handle goes.
static void a_round_trip_is_zero_copy(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* h = matrix_handle(f->ctx);
  void* data = TFE_TensorHandleDevicePointer(h, f->status);
  DLManagedTensor* dlm = TFE_HandleToDLPack(h, f->status);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(h);
  TFE_TensorHandle* back = TFE_HandleFromDLPack(dlm, f->status, f->ctx);
  ASSERT_TF_OK(f->status);
  assert_ptr_equal(TFE_TensorHandleDevicePointer(back, f->status), data);
  float values[4];
  read_floats(back, values, 4);
  static const float expected[4] = {1, 2, 3, 4};
  for (int i = 0; i < 4; ++i) assert_true(values[i] == expected[i]);
  TFE_DeleteTensorHandle(back);  // runs the exporter's deleter (ASan: once)
}

static void strides_of_size_1_dims_are_ignored(void** state) {
  eager_fixture_t* f = *state;
  producer_t p;
  producer_init(&p);
  p.shape[0] = 1;
  p.shape[1] = 4;
  p.strides[0] = 99;
  TFE_TensorHandle* h = TFE_HandleFromDLPack(&p.managed, f->status, f->ctx);
  ASSERT_TF_OK(f->status);
  TFE_DeleteTensorHandle(h);
  assert_int_equal(p.deleted, 1);
}

static void import_errors_leave_the_tensor_to_the_caller(void** state) {
  eager_fixture_t* f = *state;
  producer_t p;
  producer_init(&p);
  p.managed.dl_tensor.device.device_type = kDLCUDA;
  assert_null(TFE_HandleFromDLPack(&p.managed, f->status, f->ctx));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Unsupported Device Type 2");

  producer_init(&p);
  p.managed.dl_tensor.dtype.code = kDLOpaqueHandle;
  assert_null(TFE_HandleFromDLPack(&p.managed, f->status, f->ctx));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Unsupported Type: code 3, 32 bits, 1 lanes");

  producer_init(&p);
  p.strides[0] = 1;
  p.strides[1] = 2;  // column-major
  assert_null(TFE_HandleFromDLPack(&p.managed, f->status, f->ctx));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Invalid strides array from DLPack");

  producer_init(&p);
  assert_null(TFE_HandleFromDLPack(&p.managed, f->status, NULL));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_HandleFromDLPack: ctx is NULL");
  assert_null(TFE_HandleFromDLPack(NULL, f->status, f->ctx));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TFE_HandleFromDLPack: dlm is NULL");
  assert_int_equal(p.deleted, 0);
  TFE_CallDLManagedTensorDeleter(&p.managed);
  assert_int_equal(p.deleted, 1);
}

static void export_errors_name_the_problem(void** state) {
  eager_fixture_t* f = *state;
  assert_null(TFE_HandleToDLPack(NULL, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT, "Invalid handle");
  TF_Tensor* t = TFE_AllocateHostTensor(f->ctx, TF_STRING, NULL, 0, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* h = TFE_NewTensorHandleFromTensor(f->ctx, t, f->status);
  ASSERT_TF_OK(f->status);
  TF_DeleteTensor(t);
  assert_null(TFE_HandleToDLPack(h, f->status));
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Data type string is not supported by dlpack");
  TFE_DeleteTensorHandle(h);
}

static void calling_the_deleter_of_null_does_nothing(void** state) {
  (void)state;
  TFE_CallDLManagedTensorDeleter(NULL);
  producer_t p;
  producer_init(&p);
  p.managed.deleter = NULL;
  TFE_CallDLManagedTensorDeleter(&p.managed);
  assert_int_equal(p.deleted, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(to_dlpack_shares_the_handles_memory,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(a_scalar_exports_with_rank_0, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          from_dlpack_shares_memory_and_deletes_once, setup, teardown),
      cmocka_unit_test_setup_teardown(a_round_trip_is_zero_copy, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(strides_of_size_1_dims_are_ignored, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          import_errors_leave_the_tensor_to_the_caller, setup, teardown),
      cmocka_unit_test_setup_teardown(export_errors_name_the_problem, setup,
                                      teardown),
      cmocka_unit_test(calling_the_deleter_of_null_does_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
