// TensorFlow's experimental kernel C API (tensorflow/c/kernels_experimental.h)
// end to end: kernels registered through TensorFlow's C API update resource
// variables made by VarHandleOp, run through TFE_Execute and checked with
// ReadVariableOp; locking from several threads; inputs by name; shape attrs;
// and what Loom does not have (reference variables, DT_VARIANT).

#include <pthread.h>
#include <stdatomic.h>

#include "eager_test_util.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/kernels_experimental.h"
#include "tensorflow/c/ops.h"

//===----------------------------------------------------------------------===//
// Kernels written as TensorFlow's C-API training kernels are
//===----------------------------------------------------------------------===//

static atomic_int g_copies;

// TensorFlow's plugins copy with their device's memcpy.
static void copy_func(TF_OpKernelContext* ctx, TF_Tensor* source,
                      TF_Tensor* dest) {
  (void)ctx;
  atomic_fetch_add(&g_copies, 1);
  memcpy(TF_TensorData(dest), TF_TensorData(source), TF_TensorByteSize(source));
  TF_DeleteTensor(source);
  TF_DeleteTensor(dest);
}

enum { kAdd = 0, kSub = 1 };

static void update_func(TF_OpKernelContext* ctx, TF_Tensor* tensor,
                        TF_Tensor* value, int op) {
  (void)ctx;
  int64_t n = TF_TensorElementCount(tensor);
  float sign = op == kSub ? -1.0f : 1.0f;
  if (TF_TensorType(tensor) == TF_INT32) {
    int32_t* to = TF_TensorData(tensor);
    const int32_t* by = TF_TensorData(value);
    for (int64_t i = 0; i < n; ++i) to[i] += (int32_t)sign * by[i];
  } else {
    float* to = TF_TensorData(tensor);
    const float* by = TF_TensorData(value);
    for (int64_t i = 0; i < n; ++i) to[i] += sign * by[i];
  }
  TF_DeleteTensor(tensor);
  TF_DeleteTensor(value);
}

// KexpAssignAdd(var, delta): TF_AssignUpdateVariable.
static void assign_add_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_AssignUpdateVariable(ctx, 0, 1, kAdd, 0, copy_func, update_func, status);
  TF_DeleteStatus(status);
}

// KexpApplyGradientDescent(var, alpha, delta): var -= alpha * delta, as
// TensorFlow's ResourceApplyGradientDescent plugin kernels do it.
static void apply_gd_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  const int inputs[1] = {0};
  TF_VariableInputLockHolder* holder = NULL;
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, false, inputs, 1,
                                          copy_func, &holder, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_Tensor* var = NULL;
  TF_GetInputTensorFromVariable(ctx, 0, true, false, false, copy_func, &var,
                                status);
  if (TF_GetCode(status) == TF_OK) {
    TF_Tensor* alpha = NULL;
    TF_Tensor* delta = NULL;
    TF_GetInput(ctx, 1, &alpha, status);
    TF_GetInput(ctx, 2, &delta, status);
    float a = *(const float*)TF_TensorData(alpha);
    float* to = TF_TensorData(var);
    const float* by = TF_TensorData(delta);
    for (int64_t i = 0; i < TF_TensorElementCount(var); ++i) to[i] -= a * by[i];
    TF_DeleteTensor(alpha);
    TF_DeleteTensor(delta);
    TF_DeleteTensor(var);
  }
  TF_ReleaseVariableInputLockHolder(holder);
done:
  TF_DeleteStatus(status);
}

// KexpIncrementBoth(a, b): a += 1 and b += 1 under both locks, taken
// through a list that names `a` twice.
static void increment_both_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  const int inputs[3] = {0, 1, 0};
  TF_VariableInputLockHolder* holder = NULL;
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, false, inputs, 3,
                                          copy_func, &holder, status);
  for (int i = 0; i < 2 && TF_GetCode(status) == TF_OK; ++i) {
    TF_Tensor* var = NULL;
    TF_GetInputTensorFromVariable(ctx, i, true, false, false, copy_func, &var,
                                  status);
    if (TF_GetCode(status) != TF_OK) break;
    *(float*)TF_TensorData(var) += 1.0f;
    TF_DeleteTensor(var);
  }
  TF_ReleaseVariableInputLockHolder(holder);
  TF_DeleteStatus(status);
}

// KexpAssign(var, value) with attr validate_shape: TF_AssignVariable.
static void* assign_create(TF_OpKernelConstruction* ctx) {
  TF_Bool* validate = calloc(1, sizeof(*validate));
  TF_Status* status = TF_NewStatus();
  TF_OpKernelConstruction_GetAttrBool(ctx, "validate_shape", validate, status);
  TF_DeleteStatus(status);
  return validate;
}

static void assign_compute(void* kernel, TF_OpKernelContext* ctx) {
  TF_Status* status = TF_NewStatus();
  TF_AssignVariable(ctx, 0, 1, *(TF_Bool*)kernel != 0, copy_func, status);
  TF_DeleteStatus(status);
}

// KexpByName(x, ys): output x found by name; what the bad names gave.
static TF_Code g_unknown_code, g_list_code;
static char g_unknown_message[256], g_list_message[256];

static void by_name_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_GetInputByName(ctx, "nope", &x, status);
  g_unknown_code = TF_GetCode(status);
  snprintf(g_unknown_message, sizeof(g_unknown_message), "%s",
           TF_Message(status));
  TF_GetInputByName(ctx, "ys", &x, status);
  g_list_code = TF_GetCode(status);
  snprintf(g_list_message, sizeof(g_list_message), "%s", TF_Message(status));
  TF_GetInputByName(ctx, "x", &x, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_SetOutput(ctx, 0, x, status);
    TF_DeleteTensor(x);
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

// KexpShapeAttr(shape, rank): what GetAttrTensorShape read at construction.
static TF_Code g_shape_code;
static char g_shape_message[256];
static int64_t g_shape_dims[4];

static void* shape_attr_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  int64_t rank = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, "rank", &rank, status);
  memset(g_shape_dims, 0, sizeof(g_shape_dims));
  TF_OpKernelConstruction_GetAttrTensorShape(ctx, "shape", g_shape_dims,
                                             (size_t)rank, status);
  g_shape_code = TF_GetCode(status);
  snprintf(g_shape_message, sizeof(g_shape_message), "%s", TF_Message(status));
  TF_DeleteStatus(status);
  return NULL;
}

static void nothing_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  (void)ctx;
}

// KexpUnsupported(var): the calls for reference variables and variants.
typedef struct call_result_t {
  TF_Code code;
  char message[256];
} call_result_t;

static call_result_t g_ref_input, g_ref_out_of_range, g_assign_ref, g_addn,
    g_zeros_like;
static bool g_is_ref;

static void keep(call_result_t* result, TF_Status* status) {
  result->code = TF_GetCode(status);
  snprintf(result->message, sizeof(result->message), "%s", TF_Message(status));
}

static void unsupported_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  g_is_ref = TF_IsRefInput(ctx, 0, status);
  keep(&g_ref_input, status);
  TF_IsRefInput(ctx, 3, status);
  keep(&g_ref_out_of_range, status);
  // A resource input has nothing to forward: no failure.
  TF_OpKernelContext_ForwardRefInputToRefOutput(ctx, 0, 0);
  TF_AssignRefVariable(ctx, 0, 0, 0, true, true, copy_func, status);
  keep(&g_assign_ref, status);
  TF_AddNVariant(ctx, NULL, status);
  keep(&g_addn, status);
  TF_ZerosLikeVariant(ctx, NULL, status);
  keep(&g_zeros_like, status);
  TF_DeleteStatus(status);
}

// KexpUpdateAny(x, delta): the calls on inputs that are no variables.
static call_result_t g_lock_plain, g_lock_out_of_range;

static void update_any_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  // The first failure is the op's.
  TF_AssignUpdateVariable(ctx, 0, 1, kAdd, 0, copy_func, update_func, status);
  TF_VariableInputLockHolder* holder = NULL;
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, false, (const int[]){0, 1},
                                          2, copy_func, &holder, status);
  keep(&g_lock_plain, status);
  TF_ReleaseVariableInputLockHolder(holder);
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, false, (const int[]){0, 7},
                                          2, copy_func, &holder, status);
  keep(&g_lock_out_of_range, status);
  TF_DeleteStatus(status);
}

static void register_op(const char* name, const char* const* attrs,
                        const char* const* inputs, const char* const* outputs) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  for (; attrs && *attrs; ++attrs)
    TF_OpDefinitionBuilderAddAttr(builder, *attrs);
  for (; inputs && *inputs; ++inputs) {
    TF_OpDefinitionBuilderAddInput(builder, *inputs);
  }
  for (; outputs && *outputs; ++outputs) {
    TF_OpDefinitionBuilderAddOutput(builder, *outputs);
  }
  TF_OpDefinitionBuilderSetIsStateful(builder, true);
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

static void register_kernel(const char* op,
                            void* (*create)(TF_OpKernelConstruction*),
                            void (*compute)(void*, TF_OpKernelContext*),
                            void (*destroy)(void*)) {
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder(op, "CPU", create, compute, destroy);
  TF_RegisterKernelBuilder(op, builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

static int register_ops(void** state) {
  (void)state;
  register_op("KexpAssignAdd", (const char* const[]){"T: {float, int32}", NULL},
              (const char* const[]){"var: resource", "delta: T", NULL}, NULL);
  register_kernel("KexpAssignAdd", NULL, assign_add_compute, NULL);
  register_op(
      "KexpApplyGradientDescent", (const char* const[]){"T: {float}", NULL},
      (const char* const[]){"var: resource", "alpha: T", "delta: T", NULL},
      NULL);
  register_kernel("KexpApplyGradientDescent", NULL, apply_gd_compute, NULL);
  register_op(
      "KexpAssign",
      (const char* const[]){"T: type", "validate_shape: bool = false", NULL},
      (const char* const[]){"var: resource", "value: T", NULL}, NULL);
  register_kernel("KexpAssign", assign_create, assign_compute, free);
  register_op("KexpIncrementBoth", NULL,
              (const char* const[]){"a: resource", "b: resource", NULL}, NULL);
  register_kernel("KexpIncrementBoth", NULL, increment_both_compute, NULL);
  register_op("KexpByName", (const char* const[]){"N: int >= 1", NULL},
              (const char* const[]){"x: float", "ys: N * float", NULL},
              (const char* const[]){"out: float", NULL});
  register_kernel("KexpByName", NULL, by_name_compute, NULL);
  register_op("KexpShapeAttr",
              (const char* const[]){"shape: shape", "rank: int", NULL}, NULL,
              NULL);
  register_kernel("KexpShapeAttr", shape_attr_create, nothing_compute, NULL);
  register_op("KexpUpdateAny", NULL,
              (const char* const[]){"x: float", "delta: float", NULL}, NULL);
  register_kernel("KexpUpdateAny", NULL, update_any_compute, NULL);
  register_op("KexpUnsupported", NULL,
              (const char* const[]){"var: resource", NULL},
              (const char* const[]){"out: float", NULL});
  register_kernel("KexpUnsupported", NULL, unsupported_compute, NULL);
  return 0;
}

//===----------------------------------------------------------------------===//
// Helpers: variables through the eager API
//===----------------------------------------------------------------------===//

static TFE_TensorHandle* new_variable(TFE_Context* ctx, TF_DataType dtype,
                                      const int64_t* dims, int rank) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, "VarHandleOp", status);
  ASSERT_TF_OK(status);
  TFE_OpSetAttrType(op, "dtype", dtype);
  TFE_OpSetAttrShape(op, "shape", dims, rank, status);
  ASSERT_TF_OK(status);
  TFE_TensorHandle* handle = NULL;
  int num = 1;
  TFE_Execute(op, &handle, &num, status);
  ASSERT_TF_OK(status);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
  return handle;
}

// Runs `name`(inputs...) with attr T = dtype (when T_attr); no outputs
// kept. Leaves the result in `status`.
static void run(TFE_Context* ctx, const char* name, const char* type_attr,
                TF_DataType dtype, TFE_TensorHandle* const* inputs, int count,
                TF_Status* status) {
  TFE_Op* op = TFE_NewOp(ctx, name, status);
  ASSERT_TF_OK(status);
  for (int i = 0; i < count; ++i) {
    TFE_OpAddInput(op, inputs[i], status);
    ASSERT_TF_OK(status);
  }
  if (type_attr) TFE_OpSetAttrType(op, type_attr, dtype);
  TFE_TensorHandle* outputs[1] = {NULL};
  int num = 1;
  TFE_Execute(op, outputs, &num, status);
  if (num == 1 && outputs[0]) TFE_DeleteTensorHandle(outputs[0]);
  TFE_DeleteOp(op);
}

static void assign(TFE_Context* ctx, TFE_TensorHandle* var,
                   TFE_TensorHandle* value, TF_DataType dtype) {
  TF_Status* status = TF_NewStatus();
  TFE_TensorHandle* inputs[2] = {var, value};
  run(ctx, "AssignVariableOp", "dtype", dtype, inputs, 2, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

// ReadVariableOp: a new handle.
static TFE_TensorHandle* read_variable(TFE_Context* ctx, TFE_TensorHandle* var,
                                       TF_DataType dtype) {
  TF_Status* status = TF_NewStatus();
  TFE_Op* op = TFE_NewOp(ctx, "ReadVariableOp", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, var, status);
  ASSERT_TF_OK(status);
  TFE_OpSetAttrType(op, "dtype", dtype);
  TFE_TensorHandle* value = NULL;
  int num = 1;
  TFE_Execute(op, &value, &num, status);
  ASSERT_TF_OK(status);
  TFE_DeleteOp(op);
  TF_DeleteStatus(status);
  return value;
}

static void read_float_variable(TFE_Context* ctx, TFE_TensorHandle* var,
                                float* out, size_t count) {
  TFE_TensorHandle* value = read_variable(ctx, var, TF_FLOAT);
  read_floats(value, out, count);
  TFE_DeleteTensorHandle(value);
}

static const int64_t kDims3[1] = {3};

//===----------------------------------------------------------------------===//
// Updates
//===----------------------------------------------------------------------===//

static void assign_update_variable_adds_through_the_callback(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* init =
      float_handle(f->ctx, kDims3, 1, (const float[]){1.47f, -2.32f, 3.11f});
  assign(f->ctx, var, init, TF_FLOAT);
  TFE_TensorHandle* delta =
      float_handle(f->ctx, kDims3, 1, (const float[]){0.25f, 0.5f, -0.125f});
  TFE_TensorHandle* inputs[2] = {var, delta};
  run(f->ctx, "KexpAssignAdd", "T", TF_FLOAT, inputs, 2, f->status);
  ASSERT_TF_OK(f->status);
  float got[3];
  read_float_variable(f->ctx, var, got, 3);
  // NumPy: float32([1.47, -2.32, 3.11]) + float32([0.25, 0.5, -0.125]).
  assert_float_equal(got[0], 1.72000003f, 0);
  assert_float_equal(got[1], -1.81999993f, 0);
  assert_float_equal(got[2], 2.9849999f, 0);
  TFE_DeleteTensorHandle(delta);
  TFE_DeleteTensorHandle(init);
  TFE_DeleteTensorHandle(var);
}

static void get_input_tensor_from_variable_updates_in_place(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* init =
      float_handle(f->ctx, kDims3, 1, (const float[]){1.5f, -2.25f, 3.0f});
  assign(f->ctx, var, init, TF_FLOAT);
  TFE_TensorHandle* alpha = scalar_handle(f->ctx, 0.1f);
  TFE_TensorHandle* delta =
      float_handle(f->ctx, kDims3, 1, (const float[]){0.3f, 0.7f, -1.1f});
  // A read held across the update keeps its value (copy-on-write through
  // copy_func).
  TFE_TensorHandle* before = read_variable(f->ctx, var, TF_FLOAT);
  TFE_TensorHandle* inputs[3] = {var, alpha, delta};
  atomic_store(&g_copies, 0);
  run(f->ctx, "KexpApplyGradientDescent", "T", TF_FLOAT, inputs, 3, f->status);
  ASSERT_TF_OK(f->status);
  assert_int_equal(atomic_load(&g_copies), 1);
  float got[3];
  read_float_variable(f->ctx, var, got, 3);
  // NumPy: float32 [1.5, -2.25, 3.0] - float32(0.1) * [0.3, 0.7, -1.1].
  assert_float_equal(got[0], 1.47000003f, 0);
  assert_float_equal(got[1], -2.31999993f, 0);
  assert_float_equal(got[2], 3.1099999f, 0);
  float old[3];
  read_floats(before, old, 3);
  assert_float_equal(old[0], 1.5f, 0);
  assert_float_equal(old[1], -2.25f, 0);
  assert_float_equal(old[2], 3.0f, 0);
  TFE_DeleteTensorHandle(before);
  TFE_DeleteTensorHandle(delta);
  TFE_DeleteTensorHandle(alpha);
  TFE_DeleteTensorHandle(init);
  TFE_DeleteTensorHandle(var);
}

static void update_with_another_shape_is_invalid_argument(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* init =
      float_handle(f->ctx, kDims3, 1, (const float[]){1, 2, 3});
  assign(f->ctx, var, init, TF_FLOAT);
  const int64_t dims2[1] = {2};
  TFE_TensorHandle* delta =
      float_handle(f->ctx, dims2, 1, (const float[]){1, 2});
  TFE_TensorHandle* inputs[2] = {var, delta};
  run(f->ctx, "KexpAssignAdd", "T", TF_FLOAT, inputs, 2, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Cannot update variable with shape [3] using a Tensor with "
                  "shape [2], shapes must be equal.");
  float got[3];
  read_float_variable(f->ctx, var, got, 3);
  assert_float_equal(got[2], 3.0f, 0);
  TFE_DeleteTensorHandle(delta);
  TFE_DeleteTensorHandle(init);
  TFE_DeleteTensorHandle(var);
}

static void update_of_an_unassigned_variable_is_failed_precondition(
    void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* delta =
      float_handle(f->ctx, kDims3, 1, (const float[]){1, 2, 3});
  TFE_TensorHandle* inputs[2] = {var, delta};
  run(f->ctx, "KexpAssignAdd", "T", TF_FLOAT, inputs, 2, f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "Attempting to use uninitialized variables");
  TFE_TensorHandle* alpha = scalar_handle(f->ctx, 1.0f);
  TFE_TensorHandle* gd_inputs[3] = {var, alpha, delta};
  run(f->ctx, "KexpApplyGradientDescent", "T", TF_FLOAT, gd_inputs, 3,
      f->status);
  ASSERT_TF_ERROR(f->status, TF_FAILED_PRECONDITION,
                  "Attempting to use uninitialized variables");
  TFE_DeleteTensorHandle(alpha);
  TFE_DeleteTensorHandle(delta);
  TFE_DeleteTensorHandle(var);
}

static void update_of_a_non_resource_input_is_invalid_argument(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x =
      float_handle(f->ctx, kDims3, 1, (const float[]){1, 2, 3});
  TFE_TensorHandle* inputs[2] = {x, x};
  run(f->ctx, "KexpUpdateAny", NULL, TF_FLOAT, inputs, 2, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "TF_AssignUpdateVariable: input_index: KexpUpdateAny: input "
                  "0 is not a resource tensor");
  // Locking skips inputs that are no variables, refuses unknown ones.
  assert_int_equal(g_lock_plain.code, TF_OK);
  assert_int_equal(g_lock_out_of_range.code, TF_OUT_OF_RANGE);
  assert_string_equal(g_lock_out_of_range.message,
                      "TF_MaybeLockVariableInputMutexesInOrder: input 7 of op "
                      "'KexpUpdateAny' is outside its inputs [0, 2)");
  TFE_DeleteTensorHandle(x);
}

//===----------------------------------------------------------------------===//
// Assignment
//===----------------------------------------------------------------------===//

static TFE_Op* assign_op(TFE_Context* ctx, TFE_TensorHandle* var,
                         TFE_TensorHandle* value, bool validate_shape,
                         TF_Status* status) {
  TFE_Op* op = TFE_NewOp(ctx, "KexpAssign", status);
  ASSERT_TF_OK(status);
  TFE_OpAddInput(op, var, status);
  TFE_OpAddInput(op, value, status);
  ASSERT_TF_OK(status);
  TFE_OpSetAttrBool(op, "validate_shape", validate_shape);
  return op;
}

static void execute_assign(TFE_Context* ctx, TFE_TensorHandle* var,
                           TFE_TensorHandle* value, bool validate_shape,
                           TF_Status* status) {
  TFE_Op* op = assign_op(ctx, var, value, validate_shape, status);
  int num = 0;
  TFE_Execute(op, NULL, &num, status);
  TFE_DeleteOp(op);
}

static void assign_variable_sets_the_value(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* value =
      float_handle(f->ctx, kDims3, 1, (const float[]){4, 5, 6});
  execute_assign(f->ctx, var, value, true, f->status);
  ASSERT_TF_OK(f->status);
  float got[3];
  read_float_variable(f->ctx, var, got, 3);
  assert_float_equal(got[0], 4.0f, 0);
  assert_float_equal(got[2], 6.0f, 0);
  TFE_DeleteTensorHandle(value);
  TFE_DeleteTensorHandle(var);
}

static void assign_variable_validates_the_shape_when_asked(void** state) {
  eager_fixture_t* f = *state;
  // Declared with an unknown dimension: only the assigned value decides.
  const int64_t unknown[1] = {-1};
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, unknown, 1);
  TFE_TensorHandle* three =
      float_handle(f->ctx, kDims3, 1, (const float[]){1, 2, 3});
  const int64_t dims2[1] = {2};
  TFE_TensorHandle* two = float_handle(f->ctx, dims2, 1, (const float[]){7, 8});
  execute_assign(f->ctx, var, three, true, f->status);
  ASSERT_TF_OK(f->status);
  execute_assign(f->ctx, var, two, true, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Trying to assign to variable with tensor with wrong shape. "
                  "Expected [3] got [2]");
  // Without validate_shape the shape may change, as in TensorFlow.
  execute_assign(f->ctx, var, two, false, f->status);
  ASSERT_TF_OK(f->status);
  float got[2];
  read_float_variable(f->ctx, var, got, 2);
  assert_float_equal(got[1], 8.0f, 0);
  TFE_DeleteTensorHandle(two);
  TFE_DeleteTensorHandle(three);
  TFE_DeleteTensorHandle(var);
}

static void assign_variable_checks_the_declared_shape(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  const int64_t dims2[1] = {2};
  TFE_TensorHandle* two = float_handle(f->ctx, dims2, 1, (const float[]){7, 8});
  execute_assign(f->ctx, var, two, true, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Trying to assign to variable with tensor with wrong shape. "
                  "Expected [3] got [2]");
  TFE_DeleteTensorHandle(two);
  TFE_DeleteTensorHandle(var);
}

static void assign_variable_with_another_dtype_is_invalid_argument(
    void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* ints =
      int_handle(f->ctx, kDims3, 1, (const int32_t[]){1, 2, 3});
  TFE_Op* op = assign_op(f->ctx, var, ints, false, f->status);
  int num = 0;
  TFE_Execute(op, NULL, &num, f->status);
  ASSERT_TF_ERROR(f->status, TF_INVALID_ARGUMENT,
                  "Trying to assign variable with wrong dtype. Expected float "
                  "got int32");
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(ints);
  TFE_DeleteTensorHandle(var);
}

//===----------------------------------------------------------------------===//
// Locking from several threads
//===----------------------------------------------------------------------===//

enum { kThreads = 4, kIncrements = 100 };

typedef struct increment_args_t {
  TFE_Context* ctx;
  TFE_TensorHandle* var;
  TFE_TensorHandle* one;
  TFE_TensorHandle* minus_one;
  TFE_TensorHandle* alpha;
  int failures;
} increment_args_t;

static void* increment(void* opaque) {
  increment_args_t* args = opaque;
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < kIncrements; ++i) {
    // Alternate the two ways of updating: both lock the variable.
    if (i % 2) {
      TFE_TensorHandle* inputs[2] = {args->var, args->one};
      run(args->ctx, "KexpAssignAdd", "T", TF_FLOAT, inputs, 2, status);
    } else {
      TFE_TensorHandle* inputs[3] = {args->var, args->alpha, args->minus_one};
      run(args->ctx, "KexpApplyGradientDescent", "T", TF_FLOAT, inputs, 3,
          status);
    }
    if (TF_GetCode(status) != TF_OK) args->failures++;
    // A read now and then holds the value: the next update copies it.
    if (i % 10 == 0) {
      TFE_TensorHandle* read = read_variable(args->ctx, args->var, TF_FLOAT);
      TFE_DeleteTensorHandle(read);
    }
  }
  TF_DeleteStatus(status);
  return NULL;
}

static void threads_updating_one_variable_lose_no_update(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, NULL, 0);
  TFE_TensorHandle* zero = scalar_handle(f->ctx, 0.0f);
  assign(f->ctx, var, zero, TF_FLOAT);
  increment_args_t args[kThreads];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    args[t] = (increment_args_t){
        .ctx = f->ctx,
        .var = var,
        .one = scalar_handle(f->ctx, 1.0f),
        .minus_one = scalar_handle(f->ctx, -1.0f),
        .alpha = scalar_handle(f->ctx, 1.0f),
    };
    assert_int_equal(pthread_create(&threads[t], NULL, increment, &args[t]), 0);
  }
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    assert_int_equal(args[t].failures, 0);
    TFE_DeleteTensorHandle(args[t].one);
    TFE_DeleteTensorHandle(args[t].minus_one);
    TFE_DeleteTensorHandle(args[t].alpha);
  }
  float got = 0;
  read_float_variable(f->ctx, var, &got, 1);
  assert_float_equal(got, (float)(kThreads * kIncrements), 0);
  TFE_DeleteTensorHandle(zero);
  TFE_DeleteTensorHandle(var);
}

typedef struct pair_args_t {
  TFE_Context* ctx;
  TFE_TensorHandle* first;
  TFE_TensorHandle* second;
  int failures;
} pair_args_t;

static void* increment_pair(void* opaque) {
  pair_args_t* args = opaque;
  TF_Status* status = TF_NewStatus();
  for (int i = 0; i < kIncrements; ++i) {
    TFE_TensorHandle* inputs[2] = {args->first, args->second};
    run(args->ctx, "KexpIncrementBoth", NULL, TF_FLOAT, inputs, 2, status);
    if (TF_GetCode(status) != TF_OK) args->failures++;
  }
  TF_DeleteStatus(status);
  return NULL;
}

static void threads_locking_two_variables_in_either_order_do_not_deadlock(
    void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* a = new_variable(f->ctx, TF_FLOAT, NULL, 0);
  TFE_TensorHandle* b = new_variable(f->ctx, TF_FLOAT, NULL, 0);
  TFE_TensorHandle* zero = scalar_handle(f->ctx, 0.0f);
  assign(f->ctx, a, zero, TF_FLOAT);
  assign(f->ctx, b, zero, TF_FLOAT);
  pair_args_t args[kThreads];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    // Threads 0 and 2 pass (a, b), thread 1 (b, a), the last (a, a),
    // which locks `a` once.
    bool swap = t % 2;
    bool last = t == kThreads - 1;
    args[t] = (pair_args_t){.ctx = f->ctx,
                            .first = swap && !last ? b : a,
                            .second = swap || last ? a : b};
    assert_int_equal(
        pthread_create(&threads[t], NULL, increment_pair, &args[t]), 0);
  }
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(threads[t], NULL);
    assert_int_equal(args[t].failures, 0);
  }
  // Each call adds 1 to each input; (a, a) adds 2 to a.
  float got_a = 0;
  float got_b = 0;
  read_float_variable(f->ctx, a, &got_a, 1);
  read_float_variable(f->ctx, b, &got_b, 1);
  assert_float_equal(got_a, (float)((kThreads + 1) * kIncrements), 0);
  assert_float_equal(got_b, (float)((kThreads - 1) * kIncrements), 0);
  TFE_DeleteTensorHandle(zero);
  TFE_DeleteTensorHandle(b);
  TFE_DeleteTensorHandle(a);
}

//===----------------------------------------------------------------------===//
// Inputs by name, shape attrs, what Loom does not have
//===----------------------------------------------------------------------===//

static void get_input_by_name_finds_inputs_of_the_op_def(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* x = scalar_handle(f->ctx, 2.5f);
  TFE_TensorHandle* y = scalar_handle(f->ctx, 1.0f);
  TFE_Op* op = TFE_NewOp(f->ctx, "KexpByName", f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(op, x, f->status);
  TFE_TensorHandle* ys[2] = {y, y};
  TFE_OpAddInputList(op, ys, 2, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* out = NULL;
  int num = 1;
  TFE_Execute(op, &out, &num, f->status);
  ASSERT_TF_OK(f->status);
  assert_float_equal(read_scalar(out), 2.5f, 0);
  // TensorFlow's messages (OpKernel::InputRange, OpKernelContext::input).
  assert_int_equal(g_unknown_code, TF_INVALID_ARGUMENT);
  assert_string_equal(g_unknown_message, "Unknown input name: nope");
  assert_int_equal(g_list_code, TF_INVALID_ARGUMENT);
  assert_string_equal(g_list_message,
                      "OpKernel used list-valued input name 'ys' when "
                      "single-valued input was expected");
  TFE_DeleteTensorHandle(out);
  TFE_DeleteOp(op);
  TFE_DeleteTensorHandle(y);
  TFE_DeleteTensorHandle(x);
}

static void construct_shape_attr(eager_fixture_t* f, const int64_t* dims,
                                 int rank, int64_t asked_rank) {
  TFE_Op* op = TFE_NewOp(f->ctx, "KexpShapeAttr", f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrShape(op, "shape", dims, rank, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpSetAttrInt(op, "rank", asked_rank);
  int num = 0;
  TFE_Execute(op, NULL, &num, f->status);
  TFE_DeleteOp(op);
}

static void get_attr_tensor_shape_reads_the_dims(void** state) {
  eager_fixture_t* f = *state;
  construct_shape_attr(f, (const int64_t[]){2, 7, 1}, 3, 3);
  ASSERT_TF_OK(f->status);
  assert_int_equal(g_shape_code, TF_OK);
  assert_int_equal(g_shape_dims[0], 2);
  assert_int_equal(g_shape_dims[1], 7);
  assert_int_equal(g_shape_dims[2], 1);
}

static void get_attr_tensor_shape_with_a_wrong_size_is_invalid_argument(
    void** state) {
  eager_fixture_t* f = *state;
  construct_shape_attr(f, (const int64_t[]){4, 5}, 2, 3);
  assert_int_equal(g_shape_code, TF_INVALID_ARGUMENT);
  assert_string_equal(g_shape_message,
                      "Expected rank is 3 but actual rank is 2");
  construct_shape_attr(f, (const int64_t[]){4, -1}, 2, 2);
  assert_int_equal(g_shape_code, TF_INVALID_ARGUMENT);
  if (!strstr(g_shape_message, "is [4, ?], not a fully defined shape")) {
    fail_msg("%s", g_shape_message);
  }
}

static void ref_variables_and_variants_are_unimplemented(void** state) {
  eager_fixture_t* f = *state;
  TFE_TensorHandle* var = new_variable(f->ctx, TF_FLOAT, kDims3, 1);
  TFE_TensorHandle* inputs[1] = {var};
  run(f->ctx, "KexpUnsupported", NULL, TF_FLOAT, inputs, 1, f->status);
  // The kernel fails with the first of them.
  ASSERT_TF_ERROR(f->status, TF_UNIMPLEMENTED, "TF_AssignRefVariable");
  assert_false(g_is_ref);
  assert_int_equal(g_ref_input.code, TF_OK);
  assert_int_equal(g_ref_out_of_range.code, TF_OUT_OF_RANGE);
  assert_non_null(
      strstr(g_ref_out_of_range.message, "input index out of range"));
  assert_int_equal(g_assign_ref.code, TF_UNIMPLEMENTED);
  assert_non_null(strstr(g_assign_ref.message,
                         "TF_AssignRefVariable: Loom has no reference "
                         "variables"));
  assert_int_equal(g_addn.code, TF_UNIMPLEMENTED);
  assert_string_equal(g_addn.message,
                      "TF_AddNVariant: Loom has no DT_VARIANT tensors");
  assert_int_equal(g_zeros_like.code, TF_UNIMPLEMENTED);
  assert_string_equal(g_zeros_like.message,
                      "TF_ZerosLikeVariant: Loom has no DT_VARIANT tensors");
  TFE_DeleteTensorHandle(var);
}

static void release_of_a_null_lock_holder_is_harmless(void** state) {
  (void)state;
  TF_ReleaseVariableInputLockHolder(NULL);
}

#define EAGER_TEST(name) \
  cmocka_unit_test_setup_teardown(name, eager_setup_sync, eager_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      EAGER_TEST(assign_update_variable_adds_through_the_callback),
      EAGER_TEST(get_input_tensor_from_variable_updates_in_place),
      EAGER_TEST(update_with_another_shape_is_invalid_argument),
      EAGER_TEST(update_of_an_unassigned_variable_is_failed_precondition),
      EAGER_TEST(update_of_a_non_resource_input_is_invalid_argument),
      EAGER_TEST(assign_variable_sets_the_value),
      EAGER_TEST(assign_variable_validates_the_shape_when_asked),
      EAGER_TEST(assign_variable_checks_the_declared_shape),
      EAGER_TEST(assign_variable_with_another_dtype_is_invalid_argument),
      EAGER_TEST(threads_updating_one_variable_lose_no_update),
      EAGER_TEST(threads_locking_two_variables_in_either_order_do_not_deadlock),
      EAGER_TEST(get_input_by_name_finds_inputs_of_the_op_def),
      EAGER_TEST(get_attr_tensor_shape_reads_the_dims),
      EAGER_TEST(get_attr_tensor_shape_with_a_wrong_size_is_invalid_argument),
      EAGER_TEST(ref_variables_and_variants_are_unimplemented),
      cmocka_unit_test(release_of_a_null_lock_holder_is_harmless),
  };
  return cmocka_run_group_tests(tests, register_ops, NULL);
}
