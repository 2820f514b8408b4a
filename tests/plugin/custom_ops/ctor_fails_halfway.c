/* A custom-op library whose static initialiser registers an op and its
 * kernel, then starts a helper thread (and joins it) that registers another
 * op and then one whose attr spec names a type that does not exist:
 * loading it must fail with that error and leave nothing of it registered,
 * the helper's registrations included.
 * Its destructor records, in the environment, whether its kernel was
 * still registered when the library was unmapped. */

#define _POSIX_C_SOURCE 200809L /* setenv */

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

#ifndef FIXTURE_UNMAPPED_VARIABLE
#define FIXTURE_UNMAPPED_VARIABLE "LOOM_FIXTURE_CTOR_FAILS_HALFWAY_UNMAPPED"
#endif

static void identity_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  if (TF_GetCode(status) == TF_OK) TF_SetOutput(ctx, 0, input, status);
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

static void register_ops(void) __attribute__((constructor));
static void unmapped(void) __attribute__((destructor));

static void* register_from_helper(void* arg) {
  (void)arg;
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* helper = TF_NewOpDefinitionBuilder("CtorHalfHelper");
  TF_OpDefinitionBuilderAddOutput(helper, "y: float");
  TF_RegisterOpDefinition(helper, status);
  TF_OpDefinitionBuilder* bad = TF_NewOpDefinitionBuilder("CtorHalfBad");
  TF_OpDefinitionBuilderAddAttr(bad, "T: {float, int33}");
  TF_OpDefinitionBuilderAddInput(bad, "x: T");
  TF_OpDefinitionBuilderAddOutput(bad, "y: T");
  TF_RegisterOpDefinition(bad, status);
  TF_DeleteStatus(status);
  return NULL;
}

static void register_ops(void) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* good = TF_NewOpDefinitionBuilder("CtorHalfGood");
  TF_OpDefinitionBuilderAddInput(good, "x: float");
  TF_OpDefinitionBuilderAddOutput(good, "y: float");
  TF_RegisterOpDefinition(good, status);
  TF_RegisterKernelBuilder(
      "CtorHalfGoodOp",
      TF_NewKernelBuilder("CtorHalfGood", "CPU", NULL, &identity_compute, NULL),
      status);
  TF_DeleteStatus(status);
  pthread_t helper;
  if (pthread_create(&helper, NULL, register_from_helper, NULL) == 0) {
    pthread_join(helper, NULL);
  }
}

static void unmapped(void) {
  TF_Status* status = TF_NewStatus();
  TF_Buffer* kernels = TF_GetRegisteredKernelsForOp("CtorHalfGood", status);
  const char* state = TF_GetCode(status) != TF_OK ? "error"
                      : kernels->length == 0      ? "rolled back"
                                                  : "registered";
  setenv(FIXTURE_UNMAPPED_VARIABLE, state, 1);
  TF_DeleteBuffer(kernels);
  TF_DeleteStatus(status);
}
