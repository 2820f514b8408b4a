/* A custom-op library built the way TensorFlow builds them: no entry point;
 * its ops and kernel register from a static initialiser (a C constructor)
 * while dlopen runs. CtorAddDelta adds its `delta` attr to a float tensor;
 * CtorGather and its kernel exist to give the op and kernel lists every
 * kind of argument, attr and kernel constraint. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

typedef struct add_delta_t {
  float delta;
} add_delta_t;

static void* add_delta_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  float delta = 0;
  TF_OpKernelConstruction_GetAttrFloat(ctx, "delta", &delta, status);
  add_delta_t* kernel = NULL;
  if (TF_GetCode(status) == TF_OK) {
    kernel = (add_delta_t*)malloc(sizeof(*kernel));
    if (kernel) kernel->delta = delta;
  } else {
    TF_OpKernelConstruction_Failure(ctx, status);
  }
  TF_DeleteStatus(status);
  return kernel;
}

static void add_delta_compute(void* opaque, TF_OpKernelContext* ctx) {
  const add_delta_t* kernel = (const add_delta_t*)opaque;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_Tensor* output = NULL;
  TF_GetInput(ctx, 0, &input, status);
  if (TF_GetCode(status) == TF_OK) {
    int num_dims = TF_NumDims(input);
    int64_t dims[8];
    for (int i = 0; i < num_dims && i < 8; ++i) dims[i] = TF_Dim(input, i);
    output = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, num_dims,
                               TF_TensorByteSize(input), status);
  }
  if (TF_GetCode(status) == TF_OK) {
    const float* x = (const float*)TF_TensorData(input);
    float* y = (float*)TF_TensorData(output);
    int64_t count = TF_TensorElementCount(input);
    for (int64_t i = 0; i < count; ++i) y[i] = x[i] + kernel->delta;
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(output);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

static void add_delta_delete(void* kernel) {
  free(kernel);
}

/* CtorGather's kernel is never run: it is there to be listed. */
static void gather_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  (void)ctx;
}

static void register_ops(void) __attribute__((constructor));

static void register_ops(void) {
  TF_Status* status = TF_NewStatus();
  TF_OpDefinitionBuilder* add = TF_NewOpDefinitionBuilder("CtorAddDelta");
  TF_OpDefinitionBuilderAddInput(add, "x: float");
  TF_OpDefinitionBuilderAddOutput(add, "y: float");
  TF_OpDefinitionBuilderAddAttr(add, "delta: float = 0.5");
  TF_RegisterOpDefinition(add, status);

  TF_KernelBuilder* kernel =
      TF_NewKernelBuilder("CtorAddDelta", "CPU", &add_delta_create,
                          &add_delta_compute, &add_delta_delete);
  TF_KernelBuilder_Priority(kernel, 3);
  TF_RegisterKernelBuilder("CtorAddDeltaOp", kernel, status);

  TF_OpDefinitionBuilder* gather = TF_NewOpDefinitionBuilder("CtorGather");
  TF_OpDefinitionBuilderAddInput(gather, "values: N * T");
  TF_OpDefinitionBuilderAddInput(gather, "extras: Textra");
  TF_OpDefinitionBuilderAddInput(gather, "ref_count: Ref(int64)");
  TF_OpDefinitionBuilderAddOutput(gather, "out: T");
  TF_OpDefinitionBuilderAddAttr(gather, "N: int >= 2");
  TF_OpDefinitionBuilderAddAttr(gather, "T: {float, int32} = DT_INT32");
  TF_OpDefinitionBuilderAddAttr(gather, "Textra: list(type) >= 0");
  TF_OpDefinitionBuilderAddAttr(gather, "mode: {'sum', 'max'} = 'max'");
  TF_OpDefinitionBuilderAddAttr(gather, "axes: list(int) = [1, -2]");
  TF_OpDefinitionBuilderAddAttr(gather, "keep: bool = true");
  TF_OpDefinitionBuilderAddAttr(
      gather, "shape: shape = { dim { size: 2 } dim { size: -1 } }");
  TF_OpDefinitionBuilderSetIsStateful(gather, 1);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(gather, 1);
  TF_OpDefinitionBuilderDeprecated(gather, 7, "use CtorAddDelta");
  TF_RegisterOpDefinition(gather, status);

  TF_KernelBuilder* gather_kernel =
      TF_NewKernelBuilder("CtorGather", "CPU", NULL, &gather_compute, NULL);
  TF_KernelBuilder_TypeConstraint(gather_kernel, "T", TF_FLOAT, status);
  TF_KernelBuilder_HostMemory(gather_kernel, "ref_count");
  TF_KernelBuilder_Label(gather_kernel, "fast");
  TF_RegisterKernelBuilder("CtorGatherOp", gather_kernel, status);
  TF_DeleteStatus(status);
}
