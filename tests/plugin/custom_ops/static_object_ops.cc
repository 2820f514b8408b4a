// A custom-op library in C++ built the way TensorFlow builds them: a static
// object whose constructor registers the op and its kernel while dlopen
// runs (what REGISTER_OP and REGISTER_KERNEL_BUILDER expand to). No entry
// point. StaticObjectNegate negates a float tensor.

#include <cstdint>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

namespace {

void negate_compute(void*, TF_OpKernelContext* ctx) {
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = nullptr;
  TF_Tensor* output = nullptr;
  TF_GetInput(ctx, 0, &input, status);
  if (TF_GetCode(status) == TF_OK) {
    int num_dims = TF_NumDims(input);
    int64_t dims[8];
    for (int i = 0; i < num_dims && i < 8; ++i) dims[i] = TF_Dim(input, i);
    output = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, num_dims,
                               TF_TensorByteSize(input), status);
  }
  if (TF_GetCode(status) == TF_OK) {
    const float* x = static_cast<const float*>(TF_TensorData(input));
    float* y = static_cast<float*>(TF_TensorData(output));
    int64_t count = TF_TensorElementCount(input);
    for (int64_t i = 0; i < count; ++i) y[i] = -x[i];
  } else {
    TF_OpKernelContext_Failure(ctx, status);
  }
  TF_DeleteTensor(output);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

class OpRegistrar {
 public:
  OpRegistrar() {
    TF_Status* status = TF_NewStatus();
    TF_OpDefinitionBuilder* op =
        TF_NewOpDefinitionBuilder("StaticObjectNegate");
    TF_OpDefinitionBuilderAddInput(op, "x: float");
    TF_OpDefinitionBuilderAddOutput(op, "y: float");
    TF_RegisterOpDefinition(op, status);
    TF_KernelBuilder* kernel = TF_NewKernelBuilder(
        "StaticObjectNegate", "CPU", nullptr, &negate_compute, nullptr);
    TF_RegisterKernelBuilder("StaticObjectNegateOp", kernel, status);
    registered_ = TF_GetCode(status) == TF_OK;
    TF_DeleteStatus(status);
  }
  bool registered() const { return registered_; }

 private:
  bool registered_;
};

const OpRegistrar registrar;

}  // namespace
