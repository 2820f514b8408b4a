// Helpers for the tests of TensorFlow's eager C API: status checks and the
// small tensors TensorFlow's own eager tests use.

#ifndef LOOM_TESTS_COMPAT_EAGER_TEST_UTIL_H_
#define LOOM_TESTS_COMPAT_EAGER_TEST_UTIL_H_

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"
#include "test_support.h"

// Fails the test with the status's message unless it is OK.
#define ASSERT_TF_OK(status)                                       \
  do {                                                             \
    if (TF_GetCode(status) != TF_OK) {                             \
      fail_msg("expected OK, got %d: %s", (int)TF_GetCode(status), \
               TF_Message(status));                                \
    }                                                              \
  } while (0)

// Checks the code and that the message contains `substring`.
#define ASSERT_TF_ERROR(status, code, substring)                         \
  do {                                                                   \
    if (TF_GetCode(status) != (code)) {                                  \
      fail_msg("expected code %d, got %d: %s", (int)(code),              \
               (int)TF_GetCode(status), TF_Message(status));             \
    }                                                                    \
    if (!strstr(TF_Message(status), (substring))) {                      \
      fail_msg("message '%s' does not contain '%s'", TF_Message(status), \
               (substring));                                             \
    }                                                                    \
  } while (0)

static inline TFE_Context* new_context(bool async) {
  TF_Status* status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_ContextOptionsSetAsync(options, async);
  TFE_Context* ctx = TFE_NewContext(options, status);
  ASSERT_TF_OK(status);
  TFE_DeleteContextOptions(options);
  TF_DeleteStatus(status);
  return ctx;
}

// A tensor handle of `dtype` on the context's CPU with `values` in `dims`.
static inline TFE_TensorHandle* typed_handle(TFE_Context* ctx,
                                             TF_DataType dtype,
                                             const int64_t* dims, int rank,
                                             const void* values) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* t = TFE_AllocateHostTensor(ctx, dtype, dims, rank, status);
  ASSERT_TF_OK(status);
  memcpy(TF_TensorData(t), values, TF_TensorByteSize(t));
  TFE_TensorHandle* h = TFE_NewTensorHandleFromTensor(ctx, t, status);
  ASSERT_TF_OK(status);
  TF_DeleteTensor(t);
  TF_DeleteStatus(status);
  return h;
}

// A float tensor handle on the context's CPU with `values` in `dims`.
static inline TFE_TensorHandle* float_handle(TFE_Context* ctx,
                                             const int64_t* dims, int rank,
                                             const float* values) {
  return typed_handle(ctx, TF_FLOAT, dims, rank, values);
}

static inline TFE_TensorHandle* matrix_handle(TFE_Context* ctx) {
  static const int64_t dims[2] = {2, 2};
  static const float values[4] = {1, 2, 3, 4};
  return float_handle(ctx, dims, 2, values);
}

static inline TFE_TensorHandle* scalar_handle(TFE_Context* ctx, float value) {
  return float_handle(ctx, NULL, 0, &value);
}

static inline TFE_TensorHandle* int_handle(TFE_Context* ctx,
                                           const int64_t* dims, int rank,
                                           const int32_t* values) {
  return typed_handle(ctx, TF_INT32, dims, rank, values);
}

static inline TFE_Op* binary_op(TFE_Context* ctx, const char* name,
                                TFE_TensorHandle* a, TFE_TensorHandle* b) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, name, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, a, status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, b, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
  return op;
}

// Resolves `h` and copies out `count` floats.
static inline void read_floats(TFE_TensorHandle* h, float* out, size_t count) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* t = TFE_TensorHandleResolve(h, status);
  ASSERT_TF_OK(status);
  assert_int_equal(TF_TensorByteSize(t), count * sizeof(float));
  memcpy(out, TF_TensorData(t), count * sizeof(float));
  TF_DeleteTensor(t);
  TF_DeleteStatus(status);
}

static inline float read_scalar(TFE_TensorHandle* h) {
  float value = 0;
  read_floats(h, &value, 1);
  return value;
}

// Whether an op of that name is registered (others land meanwhile).
static inline bool op_exists(TFE_Context* ctx, const char* name) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, name, status);
  bool exists = TF_GetCode(status) == TF_OK;
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
  return exists;
}

// The fixture of the eager tests: a context (synchronous or not) and a
// status, made before each test and freed after it.
typedef struct eager_fixture_t {
  TFE_Context* ctx;
  TF_Status* status;
} eager_fixture_t;

static inline int eager_fixture_setup(void** state, bool async) {
  eager_fixture_t* f = calloc(1, sizeof(*f));
  if (!f) return -1;
  f->ctx = new_context(async);
  f->status = TF_NewStatus();
  *state = f;
  return 0;
}

static inline int eager_setup_sync(void** state) {
  return eager_fixture_setup(state, false);
}

static inline int eager_setup_async(void** state) {
  return eager_fixture_setup(state, true);
}

static inline int eager_teardown(void** state) {
  eager_fixture_t* f = *state;
  TFE_DeleteContext(f->ctx);
  TF_DeleteStatus(f->status);
  free(f);
  return 0;
}

#endif  // LOOM_TESTS_COMPAT_EAGER_TEST_UTIL_H_
