// DLPack exchange of host tensors (loom/dlpack.h): an exported tensor is
// kept alive by its managed tensor; an imported managed tensor becomes a
// wrapped buffer whose deallocator hands it back. No data is copied.
//
// The structs are DLPack's unversioned (pre-1.0) ABI, written here from the
// specification (dmlc/dlpack's dlpack.h), which is not a dependency.

#include "loom/dlpack.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "loom/buffer.h"
#include "tensor/checked_size.h"

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
  int64_t* strides;  // NULL: compact row-major
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

// DLPack's code for each dtype it has; the bits are the dtype's size.
static const struct {
  uint8_t code;
  loom_dtype_t dtype;
} kCodes[] = {
    {kDLInt, LOOM_DTYPE_INT8},          {kDLInt, LOOM_DTYPE_INT16},
    {kDLInt, LOOM_DTYPE_INT32},         {kDLInt, LOOM_DTYPE_INT64},
    {kDLUInt, LOOM_DTYPE_UINT8},        {kDLUInt, LOOM_DTYPE_UINT16},
    {kDLUInt, LOOM_DTYPE_UINT32},       {kDLUInt, LOOM_DTYPE_UINT64},
    {kDLFloat, LOOM_DTYPE_HALF},        {kDLFloat, LOOM_DTYPE_FLOAT},
    {kDLFloat, LOOM_DTYPE_DOUBLE},      {kDLBfloat, LOOM_DTYPE_BFLOAT16},
    {kDLComplex, LOOM_DTYPE_COMPLEX64}, {kDLComplex, LOOM_DTYPE_COMPLEX128},
    {kDLBool, LOOM_DTYPE_BOOL},
};
enum { kNumCodes = sizeof(kCodes) / sizeof(kCodes[0]) };

static bool dl_dtype(loom_dtype_t dtype, DLDataType* out) {
  for (int i = 0; i < kNumCodes; ++i) {
    if (kCodes[i].dtype == dtype) {
      *out = (DLDataType){.code = kCodes[i].code,
                          .bits = (uint8_t)(loom_dtype_size(dtype) * 8),
                          .lanes = 1};
      return true;
    }
  }
  return false;
}

static loom_dtype_t loom_dtype_of(DLDataType dtype) {
  if (dtype.lanes != 1) return LOOM_DTYPE_INVALID;
  for (int i = 0; i < kNumCodes; ++i) {
    if (kCodes[i].code == dtype.code &&
        loom_dtype_size(kCodes[i].dtype) * 8 == dtype.bits) {
      return kCodes[i].dtype;
    }
  }
  return LOOM_DTYPE_INVALID;
}

// An exported tensor: the managed tensor, the host tensor it shares, and
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

loom_status_t loom_tensor_to_dlpack(loom_tensor_t* tensor, void** out_managed) {
  if (!tensor || !out_managed) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_to_dlpack: %s is NULL",
                            !tensor ? "tensor" : "out_managed");
  }
  DLDataType dtype;
  loom_tensor_kind_t kind = loom_tensor_kind(tensor);
  if ((kind != LOOM_TENSOR_DENSE && kind != LOOM_TENSOR_SCALAR) ||
      !dl_dtype(loom_tensor_dtype(tensor), &dtype)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Data type %s is not supported by dlpack (loom_tensor_to_dlpack)",
        loom_dtype_name(loom_tensor_dtype(tensor)));
  }
  loom_tensor_t* dense;  // a SCALAR tensor has no memory to share
  LOOM_RETURN_IF_ERROR(
      loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense));
  const loom_shape_t* shape = loom_tensor_shape(dense);
  int rank = shape->rank;
  exported_t* exported =
      malloc(sizeof(exported_t) + sizeof(int64_t) * 2 * (size_t)rank);
  if (!exported) {
    loom_tensor_release(dense);
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "loom_tensor_to_dlpack: out of memory for a "
                            "managed tensor of rank %d",
                            rank);
  }
  // The tensor holds elements (or none), so the strides fit int64.
  const int64_t* dims = loom_shape_dims(shape);
  int64_t* strides = exported->dims + rank;
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    exported->dims[i] = dims[i];
    strides[i] = stride;
    stride *= dims[i] > 0 ? dims[i] : 1;
  }
  exported->tensor = dense;
  exported->managed = (DLManagedTensor){
      .dl_tensor = {.data = loom_tensor_data(dense),
                    .device = {.device_type = LOOM_DLPACK_DEVICE_CPU,
                               .device_id = 0},
                    .ndim = rank,
                    .dtype = dtype,
                    .shape = rank > 0 ? exported->dims : NULL,
                    .strides = rank > 0 ? strides : NULL,
                    .byte_offset = 0},
      .manager_ctx = exported,
      .deleter = exported_deleter,
  };
  *out_managed = &exported->managed;
  return loom_ok_status();
}

void loom_dlpack_delete(void* managed_ptr) {
  DLManagedTensor* managed = managed_ptr;
  if (managed && managed->deleter) managed->deleter(managed);
}

// The deallocator argument of an imported tensor's buffer: `armed` once
// the import succeeded, so that a failed import leaves the managed tensor
// to the caller.
typedef struct {
  DLManagedTensor* managed;
  loom_dlpack_release_fn_t release;
  bool armed;
} imported_t;

static void imported_deallocator(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  imported_t imported = *(imported_t*)arg;
  free(arg);
  if (imported.armed) imported.release(imported.managed);
}

// Checks `dl` and gives its dtype, shape and byte size.
static loom_status_t describe(const DLTensor* dl, loom_dtype_t* out_dtype,
                              loom_shape_t* out_shape, size_t* out_bytes) {
  if (dl->device.device_type != LOOM_DLPACK_DEVICE_CPU) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Unsupported Device Type %d (only kDLCPU, %d)",
                            (int)dl->device.device_type,
                            LOOM_DLPACK_DEVICE_CPU);
  }
  loom_dtype_t dtype = loom_dtype_of(dl->dtype);
  if (dtype == LOOM_DTYPE_INVALID) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Unsupported Type: code %d, %d bits, %d lanes "
                            "(no Loom dtype has this DLPack type)",
                            (int)dl->dtype.code, (int)dl->dtype.bits,
                            (int)dl->dtype.lanes);
  }
  if (dl->ndim < 0 || dl->ndim > LOOM_MAX_SHAPE_RANK ||
      (dl->ndim > 0 && !dl->shape)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Invalid shape from DLPack: rank %d%s (at most "
                            "%d)",
                            (int)dl->ndim,
                            dl->ndim > 0 && !dl->shape ? " without dims" : "",
                            LOOM_MAX_SHAPE_RANK);
  }
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize_large(out_shape, dl->shape, dl->ndim));
  int64_t elements = loom_shape_num_elements(out_shape);
  size_t bytes;
  if (elements < 0 ||
      !loom__size_bytes(elements, loom_dtype_size(dtype), &bytes)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Invalid shape from DLPack: its element count "
                            "or byte size overflows");
  }
  if (dl->strides && elements > 0) {
    int64_t expected = 1;
    for (int i = dl->ndim - 1; i >= 0; --i) {
      if (dl->shape[i] != 1 && dl->strides[i] != expected) {
        return loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "Invalid strides array from DLPack: only compact row-major data "
            "is supported (dim %d of size %lld has stride %lld, not %lld)",
            i, (long long)dl->shape[i], (long long)dl->strides[i],
            (long long)expected);
      }
      expected *= dl->shape[i];
    }
  }
  *out_dtype = dtype;
  *out_bytes = bytes;
  return loom_ok_status();
}

loom_status_t loom_tensor_from_dlpack(void* managed_ptr,
                                      loom_dlpack_release_fn_t release,
                                      loom_tensor_t** out_tensor) {
  if (!managed_ptr || !out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_from_dlpack: %s is NULL",
                            !managed_ptr ? "managed" : "out_tensor");
  }
  DLManagedTensor* managed = managed_ptr;
  const DLTensor* dl = &managed->dl_tensor;
  loom_dtype_t dtype = LOOM_DTYPE_INVALID;
  loom_shape_t shape;
  size_t bytes = 0;
  LOOM_RETURN_IF_ERROR(describe(dl, &dtype, &shape, &bytes));
  imported_t* imported = malloc(sizeof(imported_t));
  if (!imported) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "loom_tensor_from_dlpack: out of memory");
  }
  *imported = (imported_t){.managed = managed,
                           .release = release ? release : loom_dlpack_delete,
                           .armed = false};
  loom_allocator_t allocator = loom_allocator_default();
  loom_buffer_t* buffer = NULL;
  loom_tensor_t* tensor = NULL;
  loom_status_t result =
      loom_buffer_wrap(allocator, (char*)dl->data + dl->byte_offset, bytes,
                       imported_deallocator, imported, &buffer);
  if (!result) {
    result = loom_tensor_create_dense_in_buffer(allocator, dtype, &shape,
                                                buffer, 0, &tensor);
  }
  // Armed only on success: on failure, releasing the buffer frees the
  // wrapper without handing the managed tensor back.
  if (!result) imported->armed = true;
  if (buffer) loom_buffer_release(buffer);
  if (!result) *out_tensor = tensor;
  return result;
}
