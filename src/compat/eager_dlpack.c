// TensorFlow's DLPack exchange (tensorflow/c/eager/dlpack.h) over the
// eager handles: an exported handle's host tensor is kept alive by the
// managed tensor; an imported managed tensor is wrapped as a buffer whose
// deallocator calls its deleter. No data is copied either way.
//
// The DLPack structs are the unversioned (pre-1.0) ABI of
// dmlc/dlpack's dlpack.h, written here from the specification: the
// header is an optional dependency, and TensorFlow's API passes them as
// void*.

#include "tensorflow/c/eager/dlpack.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat/tf_status_internal.h"
#include "loom/buffer.h"
#include "loom/eager.h"
#include "loom/tensor.h"
#include "loom/tensor_handle.h"

enum { kDLCPU = 1 };
enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};

typedef struct {
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

// An exported handle: the managed tensor, the host tensor it shares and
// its shape and strides, in one allocation the deleter frees.
typedef struct {
  DLManagedTensor managed;
  loom_tensor_t* tensor;
  int64_t dims[];  // shape[rank], then strides[rank]
} exported_t;

static void exported_deleter(DLManagedTensor* managed) {
  exported_t* exported = (exported_t*)managed->manager_ctx;
  loom_tensor_release(exported->tensor);
  free(exported);
}

// DLPack's code for `dtype`; false for one it cannot hold.
static bool dl_dtype(loom_dtype_t dtype, DLDataType* out) {
  out->lanes = 1;
  out->bits = (uint8_t)(loom_dtype_size(dtype) * 8);
  switch (dtype) {
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64:
      out->code = kDLInt;
      return true;
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_UINT16:
    case LOOM_DTYPE_UINT32:
    case LOOM_DTYPE_UINT64:
      out->code = kDLUInt;
      return true;
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_FLOAT:
    case LOOM_DTYPE_DOUBLE:
      out->code = kDLFloat;
      return true;
    case LOOM_DTYPE_BFLOAT16:
      out->code = kDLBfloat;
      return true;
    case LOOM_DTYPE_COMPLEX64:
    case LOOM_DTYPE_COMPLEX128:
      out->code = kDLComplex;
      return true;
    case LOOM_DTYPE_BOOL:
      out->code = kDLBool;
      return true;
    default:
      return false;
  }
}

static loom_dtype_t loom_dtype_of(DLDataType dtype) {
  static const struct {
    uint8_t code;
    uint8_t bits;
    loom_dtype_t dtype;
  } kTable[] = {
      {kDLInt, 8, LOOM_DTYPE_INT8},
      {kDLInt, 16, LOOM_DTYPE_INT16},
      {kDLInt, 32, LOOM_DTYPE_INT32},
      {kDLInt, 64, LOOM_DTYPE_INT64},
      {kDLUInt, 8, LOOM_DTYPE_UINT8},
      {kDLUInt, 16, LOOM_DTYPE_UINT16},
      {kDLUInt, 32, LOOM_DTYPE_UINT32},
      {kDLUInt, 64, LOOM_DTYPE_UINT64},
      {kDLFloat, 16, LOOM_DTYPE_HALF},
      {kDLFloat, 32, LOOM_DTYPE_FLOAT},
      {kDLFloat, 64, LOOM_DTYPE_DOUBLE},
      {kDLBfloat, 16, LOOM_DTYPE_BFLOAT16},
      {kDLComplex, 64, LOOM_DTYPE_COMPLEX64},
      {kDLComplex, 128, LOOM_DTYPE_COMPLEX128},
      {kDLBool, 8, LOOM_DTYPE_BOOL},
  };
  if (dtype.lanes != 1) return LOOM_DTYPE_INVALID;
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i) {
    if (kTable[i].code == dtype.code && kTable[i].bits == dtype.bits) {
      return kTable[i].dtype;
    }
  }
  return LOOM_DTYPE_INVALID;
}

// The dense host tensor of `handle` (a new reference).
static loom_status_t dense_tensor(loom_tensor_handle_t* handle,
                                  loom_tensor_t** out_tensor) {
  if (!loom_tensor_handle_value(handle)) {
    return loom_make_status(
        LOOM_STATUS_UNIMPLEMENTED,
        "TFE_HandleToDLPack: the tensor lives on op handler '%s', which has "
        "no device memory",
        loom_op_handler_type_name(loom_tensor_handle_handler(handle)));
  }
  loom_tensor_t* tensor;
  LOOM_RETURN_IF_ERROR(loom_context_resolve(NULL, handle, &tensor));
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR) {
    loom_tensor_t* dense;
    loom_status_t status =
        loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense);
    loom_tensor_release(tensor);
    LOOM_RETURN_IF_ERROR(status);
    tensor = dense;
  }
  DLDataType unused;
  if (loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE ||
      !dl_dtype(loom_tensor_dtype(tensor), &unused)) {
    loom_status_t status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "Data type %s is not supported by dlpack",
        loom_dtype_name(loom_tensor_dtype(tensor)));
    loom_tensor_release(tensor);
    return status;
  }
  *out_tensor = tensor;
  return loom_ok_status();
}

void* TFE_HandleToDLPack(TFE_TensorHandle* h, TF_Status* status) {
  if (!h) {
    loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "Invalid handle"));
    return NULL;
  }
  loom_tensor_t* tensor = NULL;
  loom_status_t result = dense_tensor((loom_tensor_handle_t*)h, &tensor);
  if (result) {
    loom__tf_status_set(status, result);
    return NULL;
  }
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  int rank = shape->rank;
  exported_t* exported =
      malloc(sizeof(exported_t) + sizeof(int64_t) * 2 * (size_t)rank);
  if (!exported) {
    loom_tensor_release(tensor);
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                         "TFE_HandleToDLPack: out of memory"));
    return NULL;
  }
  const int64_t* dims = loom_shape_dims(shape);
  int64_t* strides = exported->dims + rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    exported->dims[i] = dims[i];
    strides[i] = stride;
    stride *= dims[i];
  }
  exported->tensor = tensor;
  DLManagedTensor* managed = &exported->managed;
  managed->dl_tensor = (DLTensor){
      .data = loom_tensor_data(tensor),
      .device = {.device_type = kDLCPU, .device_id = 0},
      .ndim = rank,
      .shape = rank > 0 ? exported->dims : NULL,
      .strides = rank > 0 ? strides : NULL,
      .byte_offset = 0,
  };
  dl_dtype(loom_tensor_dtype(tensor), &managed->dl_tensor.dtype);
  managed->manager_ctx = exported;
  managed->deleter = exported_deleter;
  loom__tf_status_set(status, loom_ok_status());
  return managed;
}

// The deallocator argument of an imported tensor's buffer: `armed` once
// the import succeeded, so that a failed import leaves the managed tensor
// to the caller.
typedef struct {
  DLManagedTensor* managed;
  bool armed;
} imported_t;

// The buffer deallocator of an imported tensor: the producer's deleter.
static void imported_deallocator(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  imported_t* imported = arg;
  DLManagedTensor* managed = imported->managed;
  bool armed = imported->armed;
  free(imported);
  if (armed && managed->deleter) managed->deleter(managed);
}

// Checks `dl` and gives its dtype, shape and byte size.
static loom_status_t describe(const DLTensor* dl, loom_dtype_t* out_dtype,
                              loom_shape_t* out_shape, size_t* out_bytes) {
  if (dl->device.device_type != kDLCPU) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Unsupported Device Type %d (only kDLCPU)",
                            (int)dl->device.device_type);
  }
  loom_dtype_t dtype = loom_dtype_of(dl->dtype);
  if (dtype == LOOM_DTYPE_INVALID) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Unsupported Type: code %d, %d bits, %d lanes",
                            (int)dl->dtype.code, (int)dl->dtype.bits,
                            (int)dl->dtype.lanes);
  }
  if (dl->ndim < 0 || (dl->ndim > 0 && !dl->shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Invalid shape from DLPack: rank %d",
                            (int)dl->ndim);
  }
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize_large(out_shape, dl->shape, dl->ndim));
  if (dl->strides) {
    int64_t expected = 1;
    for (int i = dl->ndim - 1; i >= 0; --i) {
      if (dl->shape[i] != 1 && dl->strides[i] != expected) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "Invalid strides array from DLPack: only "
                                "compact row-major data is supported");
      }
      expected *= dl->shape[i];
    }
  }
  int64_t elements = loom_shape_num_elements(out_shape);
  if (elements < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Invalid shape from DLPack");
  }
  *out_dtype = dtype;
  *out_bytes = (size_t)elements * loom_dtype_size(dtype);
  return loom_ok_status();
}

TFE_TensorHandle* TFE_HandleFromDLPack(void* dlm, TF_Status* status,
                                       TFE_Context* ctx) {
  if (!dlm || !ctx) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TFE_HandleFromDLPack: %s is NULL",
                                         !dlm ? "dlm" : "ctx"));
    return NULL;
  }
  DLManagedTensor* managed = dlm;
  const DLTensor* dl = &managed->dl_tensor;
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  loom_shape_t shape;
  size_t bytes = 0;
  loom_status_t result = describe(dl, &dtype, &shape, &bytes);
  if (result) {
    loom__tf_status_set(status, result);
    return NULL;
  }
  imported_t* imported = malloc(sizeof(imported_t));
  if (!imported) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                 "TFE_HandleFromDLPack: out of memory"));
    return NULL;
  }
  *imported = (imported_t){.managed = managed, .armed = false};
  loom_allocator_t allocator = loom_allocator_default();
  loom_buffer_t* buffer = NULL;
  loom_tensor_t* tensor = NULL;
  loom_tensor_handle_t* handle = NULL;
  result = loom_buffer_wrap(allocator, (char*)dl->data + dl->byte_offset, bytes,
                            imported_deallocator, imported, &buffer);
  if (!result) {
    result = loom_tensor_create_dense_in_buffer(allocator, dtype, &shape,
                                                buffer, 0, &tensor);
  }
  if (!result) {
    result = loom_context_new_handle((loom_context_t*)ctx, tensor, &handle);
  }
  // Armed only on success: on failure, releasing the buffer below frees
  // the wrapper without calling the caller's deleter.
  if (!result) imported->armed = true;
  if (tensor) loom_tensor_release(tensor);
  if (buffer) loom_buffer_release(buffer);
  loom__tf_status_set(status, result);
  return (TFE_TensorHandle*)handle;
}

void TFE_CallDLManagedTensorDeleter(void* dlm_ptr) {
  DLManagedTensor* managed = dlm_ptr;
  if (managed && managed->deleter) managed->deleter(managed);
}
