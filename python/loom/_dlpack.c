// DLPack exchange for the `loom` package: Tensor.__dlpack__,
// Tensor.__dlpack_device__ and loom.from_dlpack, both ways without a copy,
// over loom/dlpack.h. The managed tensors travel in PyCapsules named
// "dltensor", which the consumer renames "used_dltensor", as NumPy and
// PyTorch exchange them.

#include "_loom.h"

#include "loom/dlpack.h"

static const char kCapsuleName[] = "dltensor";
static const char kUsedCapsuleName[] = "used_dltensor";

// Frees a capsule nobody consumed.
static void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed
  loom_dlpack_delete(PyCapsule_GetPointer(capsule, kCapsuleName));
}

// BufferError with the status's message (DLPack's consumers and producers
// raise it for tensors they cannot exchange).
static PyObject* raise_buffer_error(loom_status_t status) {
  PyErr_SetString(PyExc_BufferError, loom_status_message(status));
  loom_status_free(status);
  return NULL;
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
  void* managed;
  loom_status_t status = loom_tensor_to_dlpack(tensor->host, &managed);
  if (status != NULL) return raise_buffer_error(status);
  PyObject* capsule = PyCapsule_New(managed, kCapsuleName, capsule_destructor);
  if (capsule == NULL) loom_dlpack_delete(managed);
  return capsule;
}

PyObject* loom__py_dlpack_device(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", LOOM_DLPACK_DEVICE_CPU, 0);
}

// Hands an imported tensor's memory back to its producer. Producers'
// deleters may touch Python objects (NumPy's drops its array), so this
// takes the GIL; it runs on whichever thread releases the last reference.
static void release_with_gil(void* managed) {
  PyGILState_STATE state = PyGILState_Ensure();
  loom_dlpack_delete(managed);
  PyGILState_Release(state);
}

// from_dlpack(capsule): a tensor over the memory of a DLPack capsule,
// which it consumes.
PyObject* loom__py_from_dlpack(PyObject* module, PyObject* capsule) {
  (void)module;
  void* managed = PyCapsule_GetPointer(capsule, kCapsuleName);
  if (managed == NULL) return NULL;  // not a capsule, or already used
  if (loom__py_ensure_context() == NULL) return NULL;
  loom_tensor_t* tensor;
  loom_status_t status =
      loom_tensor_from_dlpack(managed, release_with_gil, &tensor);
  if (status != NULL) return raise_buffer_error(status);
  // The tensor owns the managed tensor now: the capsule must not free it.
  // Renaming fails only for what is not a capsule, which GetPointer ruled
  // out.
  int renamed = PyCapsule_SetName(capsule, kUsedCapsuleName);
  (void)renamed;
  loom_tensor_handle_t* handle;
  status = loom_context_new_handle(loom__py_context(), tensor, &handle);
  loom_tensor_release(tensor);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(handle);
}
