// Caches follow the registries: an eager op (and a context) that ran an op
// before a registry changed runs what the registries say after it. A
// kernel registered late is found, a kernel of higher priority overrides,
// a rolled-back plugin's kernel is no longer used, a removed op is gone.

#include <pthread.h>
#include <stdlib.h>

#include "eager_test_util.h"
#include "loom/op_def.h"
#include "registry/op_registry_internal.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

// Kernels that output a float scalar naming them (1, 2, 3), so that a test
// sees which kernel ran.
static void output_constant(TF_OpKernelContext* ctx, float value) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* output =
      TF_AllocateOutput(ctx, 0, TF_FLOAT, NULL, 0, sizeof(float), status);
  if (TF_GetCode(status) == TF_OK) {
    *(float*)TF_TensorData(output) = value;
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(output);
  TF_DeleteStatus(status);
}
static void compute_one(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  output_constant(ctx, 1.0f);
}
static void compute_two(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  output_constant(ctx, 2.0f);
}
static void compute_three(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  output_constant(ctx, 3.0f);
}

static void compute_four(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  output_constant(ctx, 4.0f);
}

static void register_op(const char* name) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  TF_OpDefinitionBuilderAddInput(builder, "x: float");
  TF_OpDefinitionBuilderAddOutput(builder, "y: float");
  TF_RegisterOpDefinition(builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

static void register_kernel(const char* op_name, const char* kernel_name,
                            void (*compute)(void*, TF_OpKernelContext*),
                            int32_t priority) {
  TF_Status* status = TF_NewStatus();
  TF_KernelBuilder* builder =
      TF_NewKernelBuilder(op_name, "CPU", NULL, compute, NULL);
  TF_KernelBuilder_Priority(builder, priority);
  TF_RegisterKernelBuilder(kernel_name, builder, status);
  ASSERT_TF_OK(status);
  TF_DeleteStatus(status);
}

typedef struct fixture_t {
  TFE_Context* ctx;
  TFE_TensorHandle* x;
  TFE_Op* op;
  TF_Status* status;
} fixture_t;

static void fixture_open(fixture_t* f, const char* op_name) {
  f->ctx = new_context(false);
  f->status = TF_NewStatus();
  const int64_t dims[1] = {0};
  const float value = 5.0f;
  f->x = float_handle(f->ctx, dims, 0, &value);
  f->op = TFE_NewOp(f->ctx, op_name, f->status);
  ASSERT_TF_OK(f->status);
}

static void fixture_close(fixture_t* f) {
  TFE_DeleteOp(f->op);
  TFE_DeleteTensorHandle(f->x);
  TFE_DeleteContext(f->ctx);
  TF_DeleteStatus(f->status);
}

// Runs the fixture's op again (the same TFE_Op, as TensorFlow code reuses
// ops with TFE_OpReset); its result's value, or -1 with f->status set.
static float run(fixture_t* f) {
  TFE_OpReset(f->op, TFE_OpGetName(f->op, f->status), NULL, f->status);
  ASSERT_TF_OK(f->status);
  TFE_OpAddInput(f->op, f->x, f->status);
  ASSERT_TF_OK(f->status);
  TFE_TensorHandle* y = NULL;
  int num_retvals = 1;
  TFE_Execute(f->op, &y, &num_retvals, f->status);
  if (TF_GetCode(f->status) != TF_OK) return -1.0f;
  TF_Tensor* t = TFE_TensorHandleResolve(y, f->status);
  ASSERT_TF_OK(f->status);
  float value = *(const float*)TF_TensorData(t);
  TF_DeleteTensor(t);
  TFE_DeleteTensorHandle(y);
  return value;
}

static void a_kernel_registered_after_a_failed_run_is_found(void** state) {
  (void)state;
  register_op("RegChangesLate");
  fixture_t f;
  fixture_open(&f, "RegChangesLate");
  for (int i = 0; i < 2; ++i) {
    assert_true(run(&f) == -1.0f);
    ASSERT_TF_ERROR(f.status, TF_NOT_FOUND,
                    "No registered 'RegChangesLate' kernel for 'CPU' devices "
                    "compatible with attributes {}. Registered: <no "
                    "registered kernels>");
  }
  register_kernel("RegChangesLate", "RegChangesLateOne", compute_one, 0);
  assert_true(run(&f) == 1.0f);
  // A new op of the same context too (the runtime's cache of prepared ops).
  fixture_t g;
  fixture_open(&g, "RegChangesLate");
  assert_true(run(&g) == 1.0f);
  fixture_close(&g);
  fixture_close(&f);
}

static void a_kernel_of_higher_priority_overrides_in_old_contexts(
    void** state) {
  (void)state;
  register_op("RegChangesOverride");
  register_kernel("RegChangesOverride", "RegChangesOverrideOne", compute_one,
                  0);
  fixture_t f;
  fixture_open(&f, "RegChangesOverride");
  assert_true(run(&f) == 1.0f);
  assert_true(run(&f) == 1.0f);
  register_kernel("RegChangesOverride", "RegChangesOverrideTwo", compute_two,
                  5);
  assert_true(run(&f) == 2.0f);
  // An unrelated registration leaves the choice as it is.
  register_op("RegChangesUnrelated");
  assert_true(run(&f) == 2.0f);
  fixture_close(&f);
}

static void a_rolled_back_kernel_is_no_longer_used(void** state) {
  (void)state;
  register_op("RegChangesRollback");
  register_kernel("RegChangesRollback", "RegChangesRollbackOne", compute_one,
                  0);
  fixture_t f;
  fixture_open(&f, "RegChangesRollback");
  assert_true(run(&f) == 1.0f);
  // As a plugin load that registers a kernel, then fails.
  loom__registration_journal_t journal;
  loom__registration_journal_initialize(&journal, loom_allocator_default());
  loom__registration_journal_t* previous =
      loom__registration_journal_swap(&journal);
  register_kernel("RegChangesRollback", "RegChangesRollbackThree",
                  compute_three, 9);
  loom__registration_journal_swap(previous);
  // Another thread's context may run it meanwhile.
  assert_true(run(&f) == 3.0f);
  loom__registration_journal_rollback(&journal);
  loom__registration_journal_deinitialize(&journal);
  assert_true(run(&f) == 1.0f);
  fixture_close(&f);
}

static void a_removed_op_is_reported_as_not_registered(void** state) {
  (void)state;
  register_op("RegChangesRemoved");
  register_kernel("RegChangesRemoved", "RegChangesRemovedOne", compute_one, 0);
  fixture_t f;
  fixture_open(&f, "RegChangesRemoved");
  assert_true(run(&f) == 1.0f);
  LOOM_ASSERT_OK(loom_op_registry_unregister(loom_op_registry_global(),
                                             "RegChangesRemoved"));
  assert_true(run(&f) == -1.0f);
  ASSERT_TF_ERROR(f.status, TF_NOT_FOUND,
                  "Op type not registered 'RegChangesRemoved'");
  fixture_close(&f);
}

// Overrides registered by another thread while ops run: each run uses one
// of the kernels, never an older one than a run before it, and the first
// run after the last registration uses the last kernel.
static void* register_overrides(void* unused) {
  (void)unused;
  register_kernel("RegChangesRace", "RegChangesRaceTwo", compute_two, 1);
  register_kernel("RegChangesRace", "RegChangesRaceThree", compute_three, 2);
  register_kernel("RegChangesRace", "RegChangesRaceFour", compute_four, 3);
  return NULL;
}

static void overrides_registered_while_ops_run(void** state) {
  (void)state;
  register_op("RegChangesRace");
  register_kernel("RegChangesRace", "RegChangesRaceOne", compute_one, 0);
  fixture_t f;
  fixture_open(&f, "RegChangesRace");
  assert_true(run(&f) == 1.0f);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, register_overrides, NULL), 0);
  float last = 1.0f;
  for (int i = 0; i < 500; ++i) {
    float value = run(&f);
    ASSERT_TF_OK(f.status);
    if (value < last || value > 4.0f) {
      fail_msg("run %d used kernel %g after kernel %g", i, value, last);
    }
    last = value;
  }
  pthread_join(thread, NULL);
  assert_true(run(&f) == 4.0f);
  fixture_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_kernel_registered_after_a_failed_run_is_found),
      cmocka_unit_test(a_kernel_of_higher_priority_overrides_in_old_contexts),
      cmocka_unit_test(a_rolled_back_kernel_is_no_longer_used),
      cmocka_unit_test(a_removed_op_is_reported_as_not_registered),
      cmocka_unit_test(overrides_registered_while_ops_run),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
