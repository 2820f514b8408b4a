// The core runtime tests' shared ops and fixtures; see corert_test_ops.h.

#include "corert_test_ops.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

//===----------------------------------------------------------------------===//
// Counters
//===----------------------------------------------------------------------===//

static struct {
  _Atomic int64_t add, async_started, async_finished, fail, bad_shape, range,
      negate, native_add, log, expensive, add_constructed;
} g_counts;

corert_test_counts_t corert_test_counts(void) {
  corert_test_counts_t counts = {atomic_load(&g_counts.add),
                                 atomic_load(&g_counts.async_started),
                                 atomic_load(&g_counts.async_finished),
                                 atomic_load(&g_counts.fail),
                                 atomic_load(&g_counts.bad_shape),
                                 atomic_load(&g_counts.range),
                                 atomic_load(&g_counts.negate),
                                 atomic_load(&g_counts.native_add),
                                 atomic_load(&g_counts.log),
                                 atomic_load(&g_counts.expensive),
                                 atomic_load(&g_counts.add_constructed)};
  return counts;
}

static _Atomic int g_last_forwarded = -2;

int corert_test_last_forwarded(void) {
  return atomic_load(&g_last_forwarded);
}

//===----------------------------------------------------------------------===//
// TensorFlow kernels
//===----------------------------------------------------------------------===//

static void fail_kernel(TF_OpKernelContext* ctx, TF_Code code,
                        const char* message) {
  TF_Status* status = TF_NewStatus();
  TF_SetStatus(status, code, message);
  TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteStatus(status);
}

// Input i's dims into dims[0, *rank).
static void input_dims(const TF_Tensor* tensor, int64_t* dims, int* rank) {
  *rank = TF_NumDims(tensor);
  for (int i = 0; i < *rank; ++i) dims[i] = TF_Dim(tensor, i);
}

static void* add_create(TF_OpKernelConstruction* ctx) {
  (void)ctx;
  atomic_fetch_add(&g_counts.add_constructed, 1);
  return NULL;
}

static void add_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  atomic_fetch_add(&g_counts.add, 1);
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_Tensor* y = NULL;
  TF_GetInput(ctx, 0, &x, status);
  if (TF_GetCode(status) == TF_OK) TF_GetInput(ctx, 1, &y, status);
  TF_Tensor* z = NULL;
  if (TF_GetCode(status) == TF_OK) {
    int64_t dims[LOOM_MAX_RANK];
    int rank = 0;
    input_dims(x, dims, &rank);
    z = TF_AllocateOutput(ctx, 0, TF_TensorType(x), dims, rank, 0, status);
  }
  if (z) {
    int64_t count = TF_TensorElementCount(z);
    if (TF_TensorType(x) == TF_FLOAT) {
      const float* a = TF_TensorData(x);
      const float* b = TF_TensorData(y);
      float* c = TF_TensorData(z);
      for (int64_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
    } else {
      const int32_t* a = TF_TensorData(x);
      const int32_t* b = TF_TensorData(y);
      int32_t* c = TF_TensorData(z);
      for (int64_t i = 0; i < count; ++i) c[i] = a[i] + b[i];
    }
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(z);
  TF_DeleteTensor(y);
  TF_DeleteTensor(x);
  TF_DeleteStatus(status);
}

// Asynchronous identity: parked computes wait in a list until released.
typedef struct async_job_t {
  struct async_job_t* next;
  TF_OpKernelContext* ctx;
  TF_AsyncOpKernelDoneCallback* done;
} async_job_t;

static pthread_mutex_t g_async_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool g_async_hold;
static async_job_t* g_async_parked;
static int g_async_num_parked;

static void async_finish(void* arg) {
  async_job_t* job = arg;
  TF_OpKernelContext* ctx = job->ctx;
  TF_AsyncOpKernelDoneCallback* done = job->done;
  free(job);
  TF_Status* status = TF_NewStatus();
  TF_Tensor* x = NULL;
  TF_GetInput(ctx, 0, &x, status);
  TF_Tensor* y = NULL;
  if (TF_GetCode(status) == TF_OK) {
    int64_t dims[LOOM_MAX_RANK];
    int rank = 0;
    input_dims(x, dims, &rank);
    y = TF_AllocateOutput(ctx, 0, TF_TensorType(x), dims, rank, 0, status);
  }
  if (y) memcpy(TF_TensorData(y), TF_TensorData(x), TF_TensorByteSize(x));
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(y);
  TF_DeleteTensor(x);
  TF_DeleteStatus(status);
  atomic_fetch_add(&g_counts.async_finished, 1);
  TF_RunAsyncOpKernelDoneCallback(done);
}

static void async_compute(void* kernel, TF_OpKernelContext* ctx,
                          TF_AsyncOpKernelDoneCallback* done) {
  (void)kernel;
  atomic_fetch_add(&g_counts.async_started, 1);
  async_job_t* job = malloc(sizeof(*job));
  if (!job) {
    fail_kernel(ctx, TF_RESOURCE_EXHAUSTED, "out of memory");
    TF_RunAsyncOpKernelDoneCallback(done);
    return;
  }
  job->ctx = ctx;
  job->done = done;
  pthread_mutex_lock(&g_async_mutex);
  if (g_async_hold) {
    job->next = g_async_parked;
    g_async_parked = job;
    g_async_num_parked++;
    job = NULL;
  }
  pthread_mutex_unlock(&g_async_mutex);
  if (job) TF_ThreadPool_Schedule(ctx, async_finish, job);
}

void corert_test_async_hold(void) {
  pthread_mutex_lock(&g_async_mutex);
  g_async_hold = true;
  pthread_mutex_unlock(&g_async_mutex);
}

int corert_test_async_release(void) {
  pthread_mutex_lock(&g_async_mutex);
  g_async_hold = false;
  async_job_t* jobs = g_async_parked;
  int count = g_async_num_parked;
  g_async_parked = NULL;
  g_async_num_parked = 0;
  pthread_mutex_unlock(&g_async_mutex);
  // Oldest first: the list was built by pushing at its head.
  async_job_t* ordered = NULL;
  while (jobs) {
    async_job_t* next = jobs->next;
    jobs->next = ordered;
    ordered = jobs;
    jobs = next;
  }
  while (ordered) {
    async_job_t* next = ordered->next;
    TF_ThreadPool_Schedule(ordered->ctx, async_finish, ordered);
    ordered = next;
  }
  return count;
}

int corert_test_async_parked(void) {
  pthread_mutex_lock(&g_async_mutex);
  int count = g_async_num_parked;
  pthread_mutex_unlock(&g_async_mutex);
  return count;
}

static void fail_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  atomic_fetch_add(&g_counts.fail, 1);
  fail_kernel(ctx, TF_ABORTED, "the kernel failed on purpose");
}

static void bad_shape_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  atomic_fetch_add(&g_counts.bad_shape, 1);
  fail_kernel(ctx, TF_INTERNAL, "TestBadShape's kernel must never run");
}

static void range_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  atomic_fetch_add(&g_counts.range, 1);
  TF_Status* status = TF_NewStatus();
  TF_Tensor* n = NULL;
  TF_GetInput(ctx, 0, &n, status);
  TF_Tensor* y = NULL;
  if (TF_GetCode(status) == TF_OK) {
    int64_t count = *(const int32_t*)TF_TensorData(n);
    y = TF_AllocateOutput(ctx, 0, TF_FLOAT, &count, 1, 0, status);
    for (int64_t i = 0; y && i < count; ++i) {
      ((float*)TF_TensorData(y))[i] = (float)i;
    }
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(y);
  TF_DeleteTensor(n);
  TF_DeleteStatus(status);
}

static void negate_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  atomic_fetch_add(&g_counts.negate, 1);
  TF_Status* status = TF_NewStatus();
  // Only the dims: holding the input would keep it from being forwarded.
  TF_Tensor* probe = NULL;
  TF_GetInput(ctx, 0, &probe, status);
  int64_t dims[LOOM_MAX_RANK];
  int rank = 0;
  if (probe) input_dims(probe, dims, &rank);
  TF_DeleteTensor(probe);
  int candidates[1] = {0};
  int forwarded = -2;
  TF_Tensor* y = NULL;
  if (TF_GetCode(status) == TF_OK) {
    y = TF_ForwardInputOrAllocateOutput(ctx, candidates, 1, 0, dims, rank,
                                        &forwarded, status);
  }
  atomic_store(&g_last_forwarded, forwarded);
  TF_Tensor* x = NULL;
  if (y) TF_GetInput(ctx, 0, &x, status);
  if (x) {
    const float* in = TF_TensorData(x);
    float* out = TF_TensorData(y);
    int64_t count = TF_TensorElementCount(y);
    for (int64_t i = 0; i < count; ++i) out[i] = -in[i];
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  TF_DeleteStatus(status);
}

static void no_output_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  (void)ctx;
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

static void same_shape_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* shape = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, shape, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, shape, status);
  }
  TF_DeleteShapeHandle(shape);
}

static void equal_shapes_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  TF_ShapeHandle* x = TF_NewShapeHandle();
  TF_ShapeHandle* y = TF_NewShapeHandle();
  TF_DimensionHandle* dx = TF_NewDimensionHandle();
  TF_DimensionHandle* dy = TF_NewDimensionHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, x, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_ShapeInferenceContextGetInput(ctx, 1, y, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    int64_t rank = TF_ShapeInferenceContextRank(ctx, x);
    bool equal = rank == TF_ShapeInferenceContextRank(ctx, y);
    for (int64_t i = 0; equal && i < rank; ++i) {
      TF_ShapeInferenceContextDim(ctx, x, i, dx);
      TF_ShapeInferenceContextDim(ctx, y, i, dy);
      equal = TF_DimensionHandleValue(dx) == TF_DimensionHandleValue(dy);
    }
    if (equal) {
      TF_ShapeInferenceContextSetOutput(ctx, 0, x, status);
    } else {
      TF_SetStatus(status, TF_INVALID_ARGUMENT,
                   "TestAdd requires inputs of equal shapes");
    }
  }
  TF_DeleteDimensionHandle(dy);
  TF_DeleteDimensionHandle(dx);
  TF_DeleteShapeHandle(y);
  TF_DeleteShapeHandle(x);
}

static void reject_shape_fn(TF_ShapeInferenceContext* ctx, TF_Status* status) {
  (void)ctx;
  TF_SetStatus(status, TF_INVALID_ARGUMENT, "every input is rejected");
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static void check_tf(TF_Status* status, const char* what) {
  if (TF_GetCode(status) != TF_OK) {
    fprintf(stderr, "registering %s failed: %s\n", what, TF_Message(status));
    abort();
  }
}

typedef void (*shape_fn_t)(TF_ShapeInferenceContext*, TF_Status*);

// Registers op `name` with a T: {float, int32} attr when `typed`, the given
// input and output specs (NULL-terminated), and `shape_fn` (may be NULL).
static void register_op(const char* name, bool typed, const char* const* inputs,
                        const char* const* outputs, shape_fn_t shape_fn) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  if (typed) TF_OpDefinitionBuilderAddAttr(builder, "T: {float, int32}");
  for (; *inputs; ++inputs) TF_OpDefinitionBuilderAddInput(builder, *inputs);
  for (; *outputs; ++outputs) {
    TF_OpDefinitionBuilderAddOutput(builder, *outputs);
  }
  if (shape_fn) {
    TF_OpDefinitionBuilderSetShapeInferenceFunction(builder, shape_fn);
  }
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  check_tf(status, name);
  TF_DeleteStatus(status);
}

static void register_kernel(const char* kernel_name, TF_KernelBuilder* builder,
                            bool typed) {
  TF_Status* status = TF_NewStatus();
  if (typed) {
    TF_KernelBuilder_TypeConstraint(builder, "T", TF_FLOAT, status);
    check_tf(status, kernel_name);
    TF_KernelBuilder_TypeConstraint(builder, "T", TF_INT32, status);
    check_tf(status, kernel_name);
  }
  TF_RegisterKernelBuilder(kernel_name, builder, status);
  check_tf(status, kernel_name);
  TF_DeleteStatus(status);
}

static void register_sync_created(const char* op, bool typed,
                                  const char* const* inputs,
                                  const char* const* outputs,
                                  shape_fn_t shape_fn,
                                  void* (*create)(TF_OpKernelConstruction*),
                                  void (*compute)(void*, TF_OpKernelContext*)) {
  register_op(op, typed, inputs, outputs, shape_fn);
  char kernel_name[128];
  snprintf(kernel_name, sizeof(kernel_name), "%sKernel", op);
  register_kernel(kernel_name,
                  TF_NewKernelBuilder(op, "CPU", create, compute, NULL), typed);
}

static void register_sync(const char* op, bool typed, const char* const* inputs,
                          const char* const* outputs, shape_fn_t shape_fn,
                          void (*compute)(void*, TF_OpKernelContext*)) {
  register_sync_created(op, typed, inputs, outputs, shape_fn, NULL, compute);
}

static void register_all(void) {
  static const char* const kXY[] = {"x: T", "y: T", NULL};
  static const char* const kX[] = {"x: T", NULL};
  static const char* const kZ[] = {"z: T", NULL};
  static const char* const kY[] = {"y: T", NULL};
  static const char* const kN[] = {"n: int32", NULL};
  static const char* const kXFloat[] = {"x: float", NULL};
  static const char* const kYFloat[] = {"y: float", NULL};
  register_sync_created("TestAdd", true, kXY, kZ, equal_shapes_fn, add_create,
                        add_compute);
  register_op("TestAsyncIdentity", true, kX, kY, same_shape_fn);
  register_kernel("TestAsyncIdentityKernel",
                  TF_NewAsyncKernelBuilder("TestAsyncIdentity", "CPU", NULL,
                                           async_compute, NULL),
                  true);
  register_sync("TestFail", true, kX, kY, same_shape_fn, fail_compute);
  register_sync("TestBadShape", true, kX, kY, reject_shape_fn,
                bad_shape_compute);
  register_sync("TestRange", false, kN, kYFloat, NULL, range_compute);
  register_sync("TestNegate", false, kXFloat, kYFloat, same_shape_fn,
                negate_compute);
  register_sync("TestNoOutput", false, kXFloat, kYFloat, same_shape_fn,
                no_output_compute);
}

static pthread_once_t g_register_once = PTHREAD_ONCE_INIT;

void corert_test_register_tf_ops(void) {
  pthread_once(&g_register_once, register_all);
}

//===----------------------------------------------------------------------===//
// Native ops
//===----------------------------------------------------------------------===//

static loom_status_t add_metadata(const loom_tensor_metadata_t* inputs,
                                  int32_t num_inputs,
                                  const loom_op_attrs_t* attrs,
                                  loom_tensor_metadata_t* results,
                                  int32_t num_results) {
  (void)attrs;
  if (num_inputs != 2 || num_results != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "test.add takes 2 arguments and has 1 result");
  }
  if (inputs[0].dtype != inputs[1].dtype) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "incompatible dtypes for test.add");
  }
  if (!loom_shape_equal(&inputs[0].shape, &inputs[1].shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "arguments of test.add must have same shape");
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

static loom_status_t add_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  atomic_fetch_add(&g_counts.native_add, 1);
  const loom_tensor_metadata_t* md = ctx->result_metadata
                                         ? &ctx->result_metadata[0]
                                         : loom_tensor_metadata(ctx->inputs[0]);
  loom_tensor_t* z = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(ctx->allocator, md->dtype, &md->shape, &z));
  int64_t count = loom_tensor_num_elements(z);
  const void* a = loom_tensor_data(ctx->inputs[0]);
  const void* b = loom_tensor_data(ctx->inputs[1]);
  if (md->dtype == LOOM_DTYPE_FLOAT) {
    float* c = loom_tensor_data(z);
    for (int64_t i = 0; i < count; ++i) {
      c[i] = ((const float*)a)[i] + ((const float*)b)[i];
    }
  } else if (md->dtype == LOOM_DTYPE_INT32) {
    int32_t* c = loom_tensor_data(z);
    for (int64_t i = 0; i < count; ++i) {
      c[i] = ((const int32_t*)a)[i] + ((const int32_t*)b)[i];
    }
  } else {
    loom_tensor_release(z);
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "test.add: unsupported dtype");
  }
  return loom_cpu_set_result(ctx->results[0], z);
}

static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static double g_log[4096];
static int g_log_count;

void corert_test_log_reset(void) {
  pthread_mutex_lock(&g_log_mutex);
  g_log_count = 0;
  pthread_mutex_unlock(&g_log_mutex);
}

int corert_test_log_count(void) {
  pthread_mutex_lock(&g_log_mutex);
  int count = g_log_count;
  pthread_mutex_unlock(&g_log_mutex);
  return count;
}

double corert_test_log_at(int index) {
  pthread_mutex_lock(&g_log_mutex);
  double value = index >= 0 && index < g_log_count ? g_log[index] : -1.0;
  pthread_mutex_unlock(&g_log_mutex);
  return value;
}

static loom_status_t log_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  atomic_fetch_add(&g_counts.log, 1);
  if (ctx->num_inputs != 1 || ctx->num_results != 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "test.log takes 1 argument and has no results");
  }
  loom_tensor_t* x = ctx->inputs[0];
  double value = loom_tensor_dtype(x) == LOOM_DTYPE_FLOAT
                     ? ((const float*)loom_tensor_data(x))[0]
                     : ((const int32_t*)loom_tensor_data(x))[0];
  pthread_mutex_lock(&g_log_mutex);
  if (g_log_count < (int)(sizeof(g_log) / sizeof(g_log[0]))) {
    g_log[g_log_count++] = value;
  }
  pthread_mutex_unlock(&g_log_mutex);
  return loom_ok_status();
}

static loom_status_t same_metadata(const loom_tensor_metadata_t* inputs,
                                   int32_t num_inputs,
                                   const loom_op_attrs_t* attrs,
                                   loom_tensor_metadata_t* results,
                                   int32_t num_results) {
  (void)attrs;
  if (num_inputs != 1 || num_results != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "test.expensive_negate takes 1 argument and has "
                            "1 result");
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

static loom_status_t expensive_dispatch(
    const loom_cpu_dispatch_context_t* ctx) {
  atomic_fetch_add(&g_counts.expensive, 1);
  loom_tensor_t* x = ctx->inputs[0];
  loom_tensor_t* y = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      ctx->allocator, LOOM_DTYPE_FLOAT, loom_tensor_shape(x), &y));
  const float* in = loom_tensor_data(x);
  float* out = loom_tensor_data(y);
  for (int64_t i = 0; i < loom_tensor_num_elements(x); ++i) out[i] = -in[i];
  return loom_cpu_set_result(ctx->results[0], y);
}

// test.sum(x0, ..., xn) -> sum of n float tensors of one shape.
static loom_status_t sum_metadata(const loom_tensor_metadata_t* inputs,
                                  int32_t num_inputs,
                                  const loom_op_attrs_t* attrs,
                                  loom_tensor_metadata_t* results,
                                  int32_t num_results) {
  (void)attrs;
  if (num_inputs < 1 || num_results != 1) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "test.sum takes at least 1 argument and has 1 "
                            "result");
  }
  for (int32_t i = 1; i < num_inputs; ++i) {
    if (!loom_tensor_metadata_equal(&inputs[i], &inputs[0])) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "arguments of test.sum must have same shape");
    }
  }
  results[0] = inputs[0];
  return loom_ok_status();
}

static loom_status_t sum_dispatch(const loom_cpu_dispatch_context_t* ctx) {
  const loom_tensor_metadata_t* first = loom_tensor_metadata(ctx->inputs[0]);
  for (int32_t i = 1; i < ctx->num_inputs; ++i) {
    // Defensive: the metadata function should have rejected this.
    if (!loom_tensor_metadata_equal(loom_tensor_metadata(ctx->inputs[i]),
                                    first)) {
      return loom_make_status(LOOM_STATUS_INTERNAL,
                              "test.sum was dispatched on unequal shapes "
                              "without its metadata check");
    }
  }
  loom_tensor_t* y = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(ctx->allocator, first->dtype,
                                                &first->shape, &y));
  float* out = loom_tensor_data(y);
  int64_t count = loom_tensor_num_elements(y);
  for (int64_t k = 0; k < count; ++k) out[k] = 0;
  for (int32_t i = 0; i < ctx->num_inputs; ++i) {
    const float* in = loom_tensor_data(ctx->inputs[i]);
    for (int64_t k = 0; k < count; ++k) out[k] += in[k];
  }
  return loom_cpu_set_result(ctx->results[0], y);
}

loom_status_t corert_test_add_native_ops(loom_op_handler_t* cpu) {
  LOOM_RETURN_IF_ERROR(
      loom_cpu_op_handler_add_op(cpu, "test.add", add_dispatch, 0));
  LOOM_RETURN_IF_ERROR(
      loom_cpu_op_handler_add_metadata_fn(cpu, "test.add", add_metadata));
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(cpu, "test.log", log_dispatch,
                                                  LOOM_CPU_OP_SIDE_EFFECTING));
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_op(
      cpu, "test.expensive_negate", expensive_dispatch, LOOM_CPU_OP_EXPENSIVE));
  LOOM_RETURN_IF_ERROR(loom_cpu_op_handler_add_metadata_fn(
      cpu, "test.expensive_negate", same_metadata));
  LOOM_RETURN_IF_ERROR(
      loom_cpu_op_handler_add_op(cpu, "test.sum", sum_dispatch, 0));
  return loom_cpu_op_handler_add_metadata_fn(cpu, "test.sum", sum_metadata);
}

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

enum { kMaxLocations = 4096 };

static pthread_mutex_t g_location_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
  const char* file;
  int line;
  int column;
} g_locations[kMaxLocations];
static int g_num_locations;

loom_location_t corert_test_location(const char* file, int line, int column) {
  loom_location_t location = {0};
  pthread_mutex_lock(&g_location_mutex);
  for (int i = 0; i < g_num_locations; ++i) {
    if (g_locations[i].file == file && g_locations[i].line == line &&
        g_locations[i].column == column) {
      location.token = (uint64_t)i + 1;
    }
  }
  if (!location.token && g_num_locations < kMaxLocations) {
    g_locations[g_num_locations].file = file;
    g_locations[g_num_locations].line = line;
    g_locations[g_num_locations].column = column;
    location.token = (uint64_t)++g_num_locations;
  }
  pthread_mutex_unlock(&g_location_mutex);
  return location;
}

void corert_test_describe_location(loom_location_t location, char* buffer,
                                   size_t capacity) {
  pthread_mutex_lock(&g_location_mutex);
  if (location.token == 0 || location.token > (uint64_t)g_num_locations) {
    snprintf(buffer, capacity, "<unknown>");
  } else {
    int i = (int)location.token - 1;
    snprintf(buffer, capacity, "%s:%d:%d", g_locations[i].file,
             g_locations[i].line, g_locations[i].column);
  }
  pthread_mutex_unlock(&g_location_mutex);
}

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

static void record_diagnostic(void* user_data,
                              const loom_diagnostic_t* diagnostic) {
  corert_test_diagnostics_t* diagnostics = user_data;
  char where[256];
  corert_test_describe_location(diagnostic->location, where, sizeof(where));
  pthread_mutex_lock(&diagnostics->mutex);
  diagnostics->count++;
  snprintf(diagnostics->op_name, sizeof(diagnostics->op_name), "%s",
           diagnostic->op_name ? diagnostic->op_name : "<null>");
  snprintf(diagnostics->where, sizeof(diagnostics->where), "%s", where);
  snprintf(diagnostics->message, sizeof(diagnostics->message), "%s",
           loom_status_message(diagnostic->error));
  diagnostics->code = loom_status_code(diagnostic->error);
  pthread_mutex_unlock(&diagnostics->mutex);
}

void corert_test_env_options_initialize(corert_test_env_options_t* options) {
  memset(options, 0, sizeof(*options));
  options->num_threads = 2;
}

loom_status_t corert_test_env_create(corert_test_env_t* env,
                                     const corert_test_env_options_t* options) {
  corert_test_register_tf_ops();
  memset(env, 0, sizeof(*env));
  pthread_mutex_init(&env->diagnostics.mutex, NULL);
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  host_options.num_threads = options->num_threads;
  if (options->allocator) host_options.allocator = *options->allocator;
  loom_status_t status = loom_host_context_create(&host_options, &env->host);
  if (!status) {
    loom_runtime_options_t runtime_options;
    loom_runtime_options_initialize(&runtime_options, env->host);
    runtime_options.diagnostic_handler = record_diagnostic;
    runtime_options.diagnostic_user_data = &env->diagnostics;
    runtime_options.synchronous = options->synchronous;
    runtime_options.inline_element_limit = options->inline_element_limit;
    status = loom_runtime_create(&runtime_options, &env->runtime);
  }
  if (!status) {
    env->cpu = loom_runtime_get_op_handler(env->runtime, "cpu");
    env->null = loom_runtime_get_op_handler(env->runtime, "null");
    if (!options->no_native_ops) status = corert_test_add_native_ops(env->cpu);
  }
  if (status) {
    corert_test_env_destroy(env);
    return status;
  }
  return loom_ok_status();
}

void corert_test_env_destroy(corert_test_env_t* env) {
  loom_runtime_destroy(env->runtime);
  if (env->host) loom_host_context_destroy(env->host);
  pthread_mutex_destroy(&env->diagnostics.mutex);
  env->runtime = NULL;
  env->host = NULL;
  env->cpu = NULL;
  env->null = NULL;
}

int corert_test_setup(void** state) {
  corert_test_env_t* env = calloc(1, sizeof(*env));
  if (!env) return -1;
  corert_test_env_options_t options;
  corert_test_env_options_initialize(&options);
  LOOM_ASSERT_OK(corert_test_env_create(env, &options));
  *state = env;
  return 0;
}

int corert_test_teardown(void** state) {
  corert_test_env_t* env = *state;
  corert_test_async_release();  // never leave a parked compute behind
  corert_test_env_destroy(env);
  free(env);
  return 0;
}

int corert_test_diagnostic_count(corert_test_env_t* env) {
  pthread_mutex_lock(&env->diagnostics.mutex);
  int count = env->diagnostics.count;
  pthread_mutex_unlock(&env->diagnostics.mutex);
  return count;
}

void corert_test_last_diagnostic(corert_test_env_t* env, char* op_name,
                                 char* where, char* message, size_t capacity) {
  pthread_mutex_lock(&env->diagnostics.mutex);
  if (op_name) snprintf(op_name, capacity, "%s", env->diagnostics.op_name);
  if (where) snprintf(where, capacity, "%s", env->diagnostics.where);
  if (message) snprintf(message, capacity, "%s", env->diagnostics.message);
  pthread_mutex_unlock(&env->diagnostics.mutex);
}

//===----------------------------------------------------------------------===//
// Tensors and handles
//===----------------------------------------------------------------------===//

loom_tensor_t* corert_test_tensor(loom_allocator_t allocator,
                                  loom_dtype_t dtype, const int64_t* dims,
                                  int rank, const void* values) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(allocator, dtype, &shape, &tensor));
  if (values) {
    memcpy(loom_tensor_data(tensor), values, loom_tensor_byte_size(tensor));
  }
  return tensor;
}

loom_tensor_handle_t* corert_test_handle(corert_test_env_t* env,
                                         loom_dtype_t dtype,
                                         const int64_t* dims, int rank,
                                         const void* values) {
  loom_tensor_t* tensor = corert_test_tensor(
      loom_host_context_allocator(env->host), dtype, dims, rank, values);
  loom_tensor_handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_create(env->cpu, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

loom_tensor_handle_t* corert_test_float_vector(corert_test_env_t* env,
                                               const float* values,
                                               int64_t count) {
  return corert_test_handle(env, LOOM_DTYPE_FLOAT, &count, 1, values);
}

loom_tensor_handle_t* corert_test_int32_vector(corert_test_env_t* env,
                                               const int32_t* values,
                                               int64_t count) {
  return corert_test_handle(env, LOOM_DTYPE_INT32, &count, 1, values);
}

loom_tensor_handle_t* corert_test_int32_scalar(corert_test_env_t* env,
                                               int32_t value) {
  return corert_test_handle(env, LOOM_DTYPE_INT32, NULL, 0, &value);
}

loom_tensor_handle_t* corert_test_ref(loom_tensor_handle_t* handle) {
  loom_tensor_handle_retain(handle);
  return handle;
}

loom_tensor_t* corert_test_resolve(loom_tensor_handle_t* handle) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_handle_resolve(handle, &tensor));
  assert_non_null(tensor);
  return tensor;
}

void corert_test_expect_values(loom_tensor_handle_t* handle, loom_dtype_t dtype,
                               const void* expected, int64_t count) {
  loom_tensor_t* tensor = corert_test_resolve(handle);
  assert_int_equal(loom_tensor_kind(tensor), LOOM_TENSOR_DENSE);
  assert_int_equal(loom_tensor_dtype(tensor), dtype);
  assert_int_equal(loom_tensor_num_elements(tensor), count);
  size_t bytes = loom_dtype_size(dtype) * (size_t)count;
  if (memcmp(loom_tensor_data(tensor), expected, bytes) != 0) {
    char text[1024];
    loom_tensor_format(tensor, text, sizeof(text));
    loom_tensor_release(tensor);
    fail_msg("unexpected values: %s", text);
  }
  loom_tensor_release(tensor);
}

void corert_test_expect_error_and_release(loom_tensor_handle_t* handle,
                                          loom_status_code_t code,
                                          const char* substring) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_tensor_handle_resolve(handle, &tensor);
  loom_tensor_release(tensor);
  loom_tensor_handle_release(handle);
  char text[1024];
  loom_status_format(status, text, sizeof(text));
  bool matches =
      status && loom_status_code(status) == code &&
      (!substring || strstr(loom_status_message(status), substring) != NULL);
  loom_status_free(status);
  if (!matches) {
    fail_msg("the handle resolved to '%s'; expected %s containing '%s'", text,
             loom_status_code_name(code), substring ? substring : "");
  }
}

void corert_test_expect_error(loom_tensor_handle_t* handle,
                              loom_status_code_t code, const char* substring) {
  assert_non_null(handle);
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_tensor_handle_resolve(handle, &tensor);
  if (!status) {
    loom_tensor_release(tensor);
    fail_msg("the handle resolved to a tensor; expected %s containing '%s'",
             loom_status_code_name(code), substring ? substring : "");
  }
  assert_null(tensor);
  bool matches =
      loom_status_code(status) == code &&
      (!substring || strstr(loom_status_message(status), substring) != NULL);
  if (!matches) {
    char text[1024];
    loom_status_format(status, text, sizeof(text));
    loom_status_free(status);
    fail_msg("the handle's error is '%s'; expected %s containing '%s'", text,
             loom_status_code_name(code), substring ? substring : "");
  }
  loom_status_free(status);
}

void corert_test_release_all(loom_tensor_handle_t** handles, int count) {
  for (int i = 0; i < count; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

void corert_test_assert_contains(const char* text, const char* substring) {
  if (!text || !strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text ? text : "(null)", substring);
  }
}
