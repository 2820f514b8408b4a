// DLPack exchange for the `loom` package: Tensor.__dlpack__,
// Tensor.__dlpack_device__ and loom.from_dlpack, both ways without a copy.
//
// The structs are DLPack's stable (pre-1.0, unversioned) ABI, written here
// from the specification (dmlc/dlpack, include/dlpack/dlpack.h) so that the
// package needs no header: what NumPy's and PyTorch's from_dlpack and
// __dlpack__ exchange, in a PyCapsule named "dltensor" that the consumer
// renames "used_dltensor".

#include "_loom.h"

#include <stdlib.h>
#include <string.h>

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
  int64_t* strides;  // NULL: compact row-major
  uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

static const char kCapsuleName[] = "dltensor";
static const char kUsedCapsuleName[] = "used_dltensor";

// What an exported tensor owns: the managed tensor, a reference to the host
// tensor, and the shape. One allocation; freed by the consumer's deleter
// call, which may come from any thread and needs no GIL.
typedef struct {
  DLManagedTensor managed;
  loom_tensor_t* tensor;
  int64_t shape[];
} ExportedTensor;

static void exported_deleter(DLManagedTensor* managed) {
  ExportedTensor* exported = (ExportedTensor*)managed;
  loom_tensor_release(exported->tensor);
  free(exported);
}

// Frees a capsule nobody consumed.
static void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed
  DLManagedTensor* managed = PyCapsule_GetPointer(capsule, kCapsuleName);
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

static int dl_dtype(loom_dtype_t dtype, DLDataType* out) {
  out->lanes = 1;
  out->bits = (uint8_t)(loom_dtype_size(dtype) * 8);
  switch (dtype) {
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64:
      out->code = kDLInt;
      return 0;
    case LOOM_DTYPE_UINT8:
    case LOOM_DTYPE_UINT16:
    case LOOM_DTYPE_UINT32:
    case LOOM_DTYPE_UINT64:
      out->code = kDLUInt;
      return 0;
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_FLOAT:
    case LOOM_DTYPE_DOUBLE:
      out->code = kDLFloat;
      return 0;
    case LOOM_DTYPE_BFLOAT16:
      out->code = kDLBfloat;
      return 0;
    case LOOM_DTYPE_COMPLEX64:
    case LOOM_DTYPE_COMPLEX128:
      out->code = kDLComplex;
      return 0;
    case LOOM_DTYPE_BOOL:
      out->code = kDLBool;
      return 0;
    default:
      return -1;
  }
}

static loom_dtype_t loom_dtype_of(DLDataType dtype) {
  if (dtype.lanes != 1) return LOOM_DTYPE_INVALID;
  switch (dtype.code * 1000 + dtype.bits) {
    case kDLInt * 1000 + 8:
      return LOOM_DTYPE_INT8;
    case kDLInt * 1000 + 16:
      return LOOM_DTYPE_INT16;
    case kDLInt * 1000 + 32:
      return LOOM_DTYPE_INT32;
    case kDLInt * 1000 + 64:
      return LOOM_DTYPE_INT64;
    case kDLUInt * 1000 + 8:
      return LOOM_DTYPE_UINT8;
    case kDLUInt * 1000 + 16:
      return LOOM_DTYPE_UINT16;
    case kDLUInt * 1000 + 32:
      return LOOM_DTYPE_UINT32;
    case kDLUInt * 1000 + 64:
      return LOOM_DTYPE_UINT64;
    case kDLFloat * 1000 + 16:
      return LOOM_DTYPE_HALF;
    case kDLFloat * 1000 + 32:
      return LOOM_DTYPE_FLOAT;
    case kDLFloat * 1000 + 64:
      return LOOM_DTYPE_DOUBLE;
    case kDLBfloat * 1000 + 16:
      return LOOM_DTYPE_BFLOAT16;
    case kDLComplex * 1000 + 64:
      return LOOM_DTYPE_COMPLEX64;
    case kDLComplex * 1000 + 128:
      return LOOM_DTYPE_COMPLEX128;
    case kDLBool * 1000 + 8:
      return LOOM_DTYPE_BOOL;
    default:
      return LOOM_DTYPE_INVALID;
  }
}

PyObject* loom__py_dlpack(PyObject* self, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"stream", NULL};
  PyObject* stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O", keywords, &stream)) {
    return NULL;
  }
  if (stream != Py_None) {
    PyErr_SetString(PyExc_ValueError,
                    "loom tensors are on the CPU: stream must be None");
    return NULL;
  }
  TensorObject* tensor = (TensorObject*)self;
  if (loom__py_resolve_host(tensor) < 0) return NULL;
  loom_tensor_t* host = tensor->host;
  DLDataType dtype;
  if (loom_tensor_kind(host) != LOOM_TENSOR_DENSE ||
      dl_dtype(loom_tensor_dtype(host), &dtype) < 0) {
    PyErr_Format(PyExc_BufferError, "DLPack has no %s tensors",
                 loom_dtype_name(loom_tensor_dtype(host)));
    return NULL;
  }
  const loom_shape_t* shape = loom_tensor_shape(host);
  int rank = shape->rank;
  ExportedTensor* exported =
      calloc(1, sizeof(ExportedTensor) + sizeof(int64_t) * (size_t)rank);
  if (exported == NULL) return PyErr_NoMemory();
  memcpy(exported->shape, loom_shape_dims(shape),
         sizeof(int64_t) * (size_t)rank);
  loom_tensor_retain(host);
  exported->tensor = host;
  exported->managed = (DLManagedTensor){
      .dl_tensor = {.data = loom_tensor_data(host),
                    .device = {.device_type = kDLCPU, .device_id = 0},
                    .ndim = rank,
                    .dtype = dtype,
                    .shape = exported->shape,
                    .strides = NULL,
                    .byte_offset = 0},
      .manager_ctx = exported,
      .deleter = exported_deleter,
  };
  PyObject* capsule =
      PyCapsule_New(&exported->managed, kCapsuleName, capsule_destructor);
  if (capsule == NULL) exported_deleter(&exported->managed);
  return capsule;
}

PyObject* loom__py_dlpack_device(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", kDLCPU, 0);
}

// The buffer deallocator of an imported tensor: hands the memory back to
// its producer. Producers' deleters may touch Python objects (NumPy's
// drops its array), so this takes the GIL; it runs on whichever thread
// releases the last reference.
static void imported_deallocator(void* data, size_t size, void* arg) {
  (void)data;
  (void)size;
  DLManagedTensor* managed = arg;
  if (managed->deleter == NULL) return;
  PyGILState_STATE state = PyGILState_Ensure();
  managed->deleter(managed);
  PyGILState_Release(state);
}

// from_dlpack(capsule): a tensor over the memory of a DLPack capsule,
// which it consumes.
PyObject* loom__py_from_dlpack(PyObject* module, PyObject* capsule) {
  (void)module;
  DLManagedTensor* managed = PyCapsule_GetPointer(capsule, kCapsuleName);
  if (managed == NULL) return NULL;  // not a capsule, or already used
  DLTensor* dl = &managed->dl_tensor;
  if (dl->device.device_type != kDLCPU) {
    PyErr_Format(PyExc_BufferError,
                 "loom takes DLPack tensors on the CPU, not device type %d",
                 (int)dl->device.device_type);
    return NULL;
  }
  loom_dtype_t dtype = loom_dtype_of(dl->dtype);
  if (dtype == LOOM_DTYPE_INVALID) {
    PyErr_Format(PyExc_BufferError,
                 "loom has no dtype for DLPack code %d, %d bits, %d lanes",
                 dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
    return NULL;
  }
  if (dl->ndim < 0 || dl->ndim > LOOM_MAX_SHAPE_RANK) {
    PyErr_SetString(PyExc_BufferError, "DLPack tensor rank out of range");
    return NULL;
  }
  int64_t elements = 1;
  for (int32_t i = 0; i < dl->ndim; ++i) elements *= dl->shape[i];
  if (dl->strides != NULL && elements > 0) {
    int64_t expected = 1;
    for (int32_t i = dl->ndim - 1; i >= 0; --i) {
      if (dl->shape[i] != 1 && dl->strides[i] != expected) {
        PyErr_SetString(PyExc_BufferError,
                        "loom takes compact row-major DLPack tensors only");
        return NULL;
      }
      expected *= dl->shape[i];
    }
  }
  loom_shape_t shape;
  loom_status_t status =
      loom_shape_initialize_large(&shape, dl->shape, dl->ndim);
  if (status != NULL) return loom__py_raise_status(status);
  if (loom__py_ensure_context() == NULL) return NULL;
  if (PyCapsule_SetName(capsule, kUsedCapsuleName) < 0) return NULL;
  // From here the managed tensor is ours: the buffer's deallocator hands it
  // back, also when wrapping fails.
  size_t bytes = (size_t)elements * loom_dtype_size(dtype);
  loom_buffer_t* buffer;
  status = loom_buffer_wrap(loom_allocator_default(),
                            (char*)dl->data + dl->byte_offset, bytes,
                            imported_deallocator, managed, &buffer);
  if (status != NULL) return loom__py_raise_status(status);
  loom_tensor_t* tensor;
  status = loom_tensor_create_dense_in_buffer(loom_allocator_default(), dtype,
                                              &shape, buffer, 0, &tensor);
  loom_buffer_release(buffer);
  if (status != NULL) return loom__py_raise_status(status);
  loom_tensor_handle_t* handle;
  status = loom_context_new_handle(loom__py_context(), tensor, &handle);
  loom_tensor_release(tensor);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(handle);
}
