/* Bitcast as a plugin: the example of TensorFlow's kernel and op C API
 * design, made complete. Reinterprets a tensor's bytes as another type,
 * with TensorFlow's semantics:
 *
 *   equal sizes      float[2, 3]  -> int32[2, 3]    (same shape)
 *   a bigger type    int8[2, 4]   -> int32[2]       (the last dim, which
 *                                                    must be the size ratio,
 *                                                    is dropped)
 *   a smaller type   double[5]    -> uint16[5, 4]   (a last dim of the size
 *                                                    ratio is added)
 *
 * It uses only tensorflow/c/ops.h and tensorflow/c/kernels.h, is valid C11
 * and C++ (fixtures/bitcast_plugin_cxx.cc compiles this file as C++), and
 * exports TF_InitPlugin. It registers two kernels: the default one shares
 * the input's buffer (TF_TensorBitcastFrom, no copy); the one labelled
 * "copy" copies the bytes into a new output (TF_AllocateOutput). Select the
 * latter with the "_kernel" attr set to "copy". */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"

/* Another name lets a second build of this file (the C++ one) live in the
 * same process. */
#ifndef BITCAST_PLUGIN_OP_NAME
#define BITCAST_PLUGIN_OP_NAME "Bitcast"
#endif

#ifdef __cplusplus
extern "C" {
#endif
/* The entry point Loom (and TensorFlow's plugin loader) calls after dlopen;
 * it registers the op and its kernels. */
TF_CAPI_EXPORT void TF_InitPlugin(void);
#ifdef __cplusplus
}
#endif

/* Every type of fixed size that TensorFlow's Bitcast accepts. */
#define BITCAST_TYPES                                                     \
  "{bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, " \
  "uint64, int8, int16, complex64, complex128, qint8, quint8, qint16, "   \
  "quint16, qint32}"

typedef struct bitcast_type_name_t {
  TF_DataType type;
  const char* name;
} bitcast_type_name_t;

static const bitcast_type_name_t kBitcastTypeNames[] = {
    {TF_BFLOAT16, "bfloat16"},   {TF_HALF, "half"},
    {TF_FLOAT, "float"},         {TF_DOUBLE, "double"},
    {TF_INT64, "int64"},         {TF_INT32, "int32"},
    {TF_UINT8, "uint8"},         {TF_UINT16, "uint16"},
    {TF_UINT32, "uint32"},       {TF_UINT64, "uint64"},
    {TF_INT8, "int8"},           {TF_INT16, "int16"},
    {TF_COMPLEX64, "complex64"}, {TF_COMPLEX128, "complex128"},
    {TF_QINT8, "qint8"},         {TF_QUINT8, "quint8"},
    {TF_QINT16, "qint16"},       {TF_QUINT16, "quint16"},
    {TF_QINT32, "qint32"},
};

/* The C API has no dtype names; messages should not say "type 6". */
static const char* bitcast_type_name(TF_DataType type) {
  size_t count = sizeof(kBitcastTypeNames) / sizeof(kBitcastTypeNames[0]);
  for (size_t i = 0; i < count; ++i) {
    if (kBitcastTypeNames[i].type == type) return kBitcastTypeNames[i].name;
  }
  return "an unsupported type";
}

/* Writes dims as "[2, 3]" ("?" for an unknown dim); always NUL-terminated. */
static void bitcast_format_dims(const int64_t* dims, int rank, char* buffer,
                                size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int i = -1; i <= rank && length + 1 < capacity; ++i) {
    char part[32];
    if (i == -1) {
      snprintf(part, sizeof(part), "[");
    } else if (i == rank) {
      snprintf(part, sizeof(part), "]");
    } else if (dims[i] < 0) {
      snprintf(part, sizeof(part), "%s?", i ? ", " : "");
    } else {
      snprintf(part, sizeof(part), "%s%lld", i ? ", " : "", (long long)dims[i]);
    }
    snprintf(buffer + length, capacity - length, "%s", part);
    length += strlen(buffer + length);
  }
}

static void bitcast_set_error(TF_Status* status, TF_Code code, TF_DataType from,
                              TF_DataType to, const char* detail) {
  char message[512];
  snprintf(message, sizeof(message), "Cannot bitcast from %s to %s: %s",
           bitcast_type_name(from), bitcast_type_name(to), detail);
  TF_SetStatus(status, code, message);
}

/*===----------------------------------------------------------------------===
 * Shape inference
 *===----------------------------------------------------------------------===*/

/* Formats a shape handle's known part. */
static void bitcast_format_handle(TF_ShapeInferenceContext* ctx,
                                  TF_ShapeHandle* shape,
                                  TF_DimensionHandle* scratch, char* buffer,
                                  size_t capacity) {
  int64_t rank = TF_ShapeInferenceContextRank(ctx, shape);
  int64_t dims[16];
  int shown = rank > 16 ? 16 : (int)rank;
  for (int i = 0; i < shown; ++i) {
    TF_ShapeInferenceContextDim(ctx, shape, i, scratch);
    dims[i] = TF_DimensionHandleValue(scratch);
  }
  bitcast_format_dims(dims, shown, buffer, capacity);
}

static void bitcast_infer_shape(TF_ShapeInferenceContext* ctx,
                                TF_Status* status) {
  TF_DataType from = TF_FLOAT;
  TF_DataType to = TF_FLOAT;
  TF_ShapeInferenceContext_GetAttrType(ctx, "T", &from, status);
  if (TF_GetCode(status) != TF_OK) return;
  TF_ShapeInferenceContext_GetAttrType(ctx, "type", &to, status);
  if (TF_GetCode(status) != TF_OK) return;
  size_t from_size = TF_DataTypeSize(from);
  size_t to_size = TF_DataTypeSize(to);
  if (from_size == 0 || to_size == 0) {
    bitcast_set_error(status, TF_INVALID_ARGUMENT, from, to,
                      "both types need a fixed size");
    return;
  }

  TF_ShapeHandle* input = TF_NewShapeHandle();
  TF_ShapeHandle* result = TF_NewShapeHandle();
  TF_ShapeHandle* ratio = NULL;
  TF_DimensionHandle* dim = TF_NewDimensionHandle();
  char detail[256];
  char shape_text[160];
  if (!input || !result || !dim) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "Bitcast shape inference: out of memory");
    goto done;
  }
  TF_ShapeInferenceContextGetInput(ctx, 0, input, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (!TF_ShapeInferenceContextRankKnown(ctx, input)) {
    /* Nothing is known about the input, so nothing about the output. */
    TF_ShapeInferenceContextSetUnknownShape(ctx, status);
    goto done;
  }

  if (from_size == to_size) {
    TF_ShapeInferenceContextSetOutput(ctx, 0, input, status);
  } else if (from_size < to_size) {
    int64_t expected = (int64_t)(to_size / from_size);
    TF_ShapeInferenceContextWithRankAtLeast(ctx, input, 1, result, status);
    if (TF_GetCode(status) != TF_OK) {
      snprintf(detail, sizeof(detail),
               "the input must have rank >= 1, its last dimension being %lld "
               "(the size ratio); got a scalar",
               (long long)expected);
      bitcast_set_error(status, TF_INVALID_ARGUMENT, from, to, detail);
      goto done;
    }
    TF_ShapeInferenceContextDim(ctx, input, -1, dim);
    if (TF_DimensionHandleValueKnown(dim) &&
        TF_DimensionHandleValue(dim) != expected) {
      bitcast_format_handle(ctx, input, dim, shape_text, sizeof(shape_text));
      snprintf(detail, sizeof(detail),
               "the last dimension of the input shape %s must be %lld (the "
               "size ratio)",
               shape_text, (long long)expected);
      bitcast_set_error(status, TF_INVALID_ARGUMENT, from, to, detail);
      goto done;
    }
    /* An unknown last dim is assumed right, as in TensorFlow: the kernel
     * checks it. */
    TF_ShapeInferenceContextSubshape(ctx, input, 0, -1, result, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    TF_ShapeInferenceContextSetOutput(ctx, 0, result, status);
  } else {
    ratio = TF_ShapeInferenceContextVectorFromSize(ctx, from_size / to_size);
    if (!ratio) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                   "Bitcast shape inference: out of memory");
      goto done;
    }
    TF_ShapeInferenceContextConcatenateShapes(ctx, input, ratio, result,
                                              status);
    if (TF_GetCode(status) != TF_OK) {
      /* E.g. the runtime's rank limit: say which bitcast hit it. */
      snprintf(detail, sizeof(detail), "%s", TF_Message(status));
      bitcast_set_error(status, TF_GetCode(status), from, to, detail);
      goto done;
    }
    TF_ShapeInferenceContextSetOutput(ctx, 0, result, status);
  }

done:
  TF_DeleteShapeHandle(input);
  TF_DeleteShapeHandle(result);
  TF_DeleteShapeHandle(ratio);
  TF_DeleteDimensionHandle(dim);
}

/*===----------------------------------------------------------------------===
 * Kernels
 *===----------------------------------------------------------------------===*/

typedef struct bitcast_kernel_t {
  TF_DataType from;
  TF_DataType to;
  size_t from_size;
  size_t to_size;
} bitcast_kernel_t;

static void* bitcast_create(TF_OpKernelConstruction* ctx) {
  TF_Status* status = TF_NewStatus();
  bitcast_kernel_t* kernel = (bitcast_kernel_t*)calloc(1, sizeof(*kernel));
  if (!status || !kernel) {
    /* compute reports a NULL kernel; without a status nothing else can. */
    TF_DeleteStatus(status);
    free(kernel);
    return NULL;
  }
  TF_OpKernelConstruction_GetAttrType(ctx, "T", &kernel->from, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_OpKernelConstruction_GetAttrType(ctx, "type", &kernel->to, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    kernel->from_size = TF_DataTypeSize(kernel->from);
    kernel->to_size = TF_DataTypeSize(kernel->to);
    if (kernel->from_size == 0 || kernel->to_size == 0) {
      bitcast_set_error(status, TF_INVALID_ARGUMENT, kernel->from, kernel->to,
                        "both types need a fixed size");
    }
  }
  if (TF_GetCode(status) != TF_OK) {
    TF_OpKernelConstruction_Failure(ctx, status);
  }
  TF_DeleteStatus(status);
  return kernel;
}

static void bitcast_delete(void* kernel) {
  free(kernel);
}

/* The output dims for an input of `rank` dims (out_dims has room for
 * rank + 1); false with an error in `status` when the input does not fit. */
static int bitcast_output_dims(const bitcast_kernel_t* kernel,
                               const TF_Tensor* input, int64_t* out_dims,
                               int* out_rank, TF_Status* status) {
  int rank = TF_NumDims(input);
  for (int i = 0; i < rank; ++i) out_dims[i] = TF_Dim(input, i);
  *out_rank = rank;
  char detail[256];
  if (kernel->from_size < kernel->to_size) {
    int64_t expected = (int64_t)(kernel->to_size / kernel->from_size);
    if (rank == 0) {
      snprintf(detail, sizeof(detail),
               "the input must have rank >= 1, its last dimension being %lld "
               "(the size ratio); got a scalar",
               (long long)expected);
      bitcast_set_error(status, TF_INVALID_ARGUMENT, kernel->from, kernel->to,
                        detail);
      return 0;
    }
    if (out_dims[rank - 1] != expected) {
      char shape_text[160];
      bitcast_format_dims(out_dims, rank, shape_text, sizeof(shape_text));
      snprintf(detail, sizeof(detail),
               "the last dimension of the input shape %s must be %lld (the "
               "size ratio)",
               shape_text, (long long)expected);
      bitcast_set_error(status, TF_INVALID_ARGUMENT, kernel->from, kernel->to,
                        detail);
      return 0;
    }
    *out_rank = rank - 1;
  } else if (kernel->from_size > kernel->to_size) {
    out_dims[rank] = (int64_t)(kernel->from_size / kernel->to_size);
    *out_rank = rank + 1;
  }
  return 1;
}

static void bitcast_run(void* state, TF_OpKernelContext* ctx, int copy) {
  const bitcast_kernel_t* kernel = (const bitcast_kernel_t*)state;
  TF_Status* status = TF_NewStatus();
  if (!status) return; /* the runtime reports the unset output */
  TF_Tensor* input = NULL;
  TF_Tensor* output = NULL;
  int64_t* dims = NULL;
  int rank = 0;
  if (!kernel) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED,
                 "Bitcast: out of memory creating the kernel");
    goto done;
  }
  TF_GetInput(ctx, 0, &input, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (TF_TensorByteSize(input) !=
      (size_t)TF_TensorElementCount(input) * kernel->from_size) {
    bitcast_set_error(status, TF_INVALID_ARGUMENT, kernel->from, kernel->to,
                      "the input does not hold one element per entry of its "
                      "shape (not a dense tensor)");
    goto done;
  }
  dims = (int64_t*)malloc(sizeof(int64_t) * (size_t)(TF_NumDims(input) + 1));
  if (!dims) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "Bitcast: out of memory");
    goto done;
  }
  if (!bitcast_output_dims(kernel, input, dims, &rank, status)) goto done;

  if (copy) {
    size_t bytes = TF_TensorByteSize(input);
    output = TF_AllocateOutput(ctx, 0, kernel->to, dims, rank, bytes, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    if (bytes) memcpy(TF_TensorData(output), TF_TensorData(input), bytes);
  } else {
    /* An empty tensor of the output type, then made a view of the input's
     * buffer: no byte is copied. */
    int64_t empty = 0;
    output = TF_AllocateTensor(kernel->to, &empty, 1, 0);
    if (!output) {
      TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "Bitcast: out of memory");
      goto done;
    }
    TF_TensorBitcastFrom(input, kernel->to, output, dims, rank, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    TF_SetOutput(ctx, 0, output, status);
  }

done:
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  free(dims);
  TF_DeleteTensor(output);
  TF_DeleteTensor(input);
  TF_DeleteStatus(status);
}

static void bitcast_compute_shared(void* kernel, TF_OpKernelContext* ctx) {
  bitcast_run(kernel, ctx, 0);
}

static void bitcast_compute_copy(void* kernel, TF_OpKernelContext* ctx) {
  bitcast_run(kernel, ctx, 1);
}

/*===----------------------------------------------------------------------===
 * Registration
 *===----------------------------------------------------------------------===*/

void TF_InitPlugin(void) {
  TF_Status* status = TF_NewStatus();
  if (!status) return;

  TF_OpDefinitionBuilder* op =
      TF_NewOpDefinitionBuilder(BITCAST_PLUGIN_OP_NAME);
  TF_OpDefinitionBuilderAddInput(op, "input: T");
  TF_OpDefinitionBuilderAddOutput(op, "output: type");
  TF_OpDefinitionBuilderAddAttr(op, "T: " BITCAST_TYPES);
  TF_OpDefinitionBuilderAddAttr(op, "type: " BITCAST_TYPES);
  TF_OpDefinitionBuilderSetShapeInferenceFunction(op, &bitcast_infer_shape);
  TF_RegisterOpDefinition(op, status);

  /* On a failure, stop: Loom rolls back what was registered and reports the
   * first error. */
  if (TF_GetCode(status) == TF_OK) {
    TF_KernelBuilder* shared =
        TF_NewKernelBuilder(BITCAST_PLUGIN_OP_NAME, "CPU", &bitcast_create,
                            &bitcast_compute_shared, &bitcast_delete);
    TF_RegisterKernelBuilder(BITCAST_PLUGIN_OP_NAME "Op", shared, status);
  }
  if (TF_GetCode(status) == TF_OK) {
    TF_KernelBuilder* copy =
        TF_NewKernelBuilder(BITCAST_PLUGIN_OP_NAME, "CPU", &bitcast_create,
                            &bitcast_compute_copy, &bitcast_delete);
    TF_KernelBuilder_Label(copy, "copy");
    TF_RegisterKernelBuilder(BITCAST_PLUGIN_OP_NAME "CopyOp", copy, status);
  }
  TF_DeleteStatus(status);
}
