// The native half of the `loom` Python package: tensors and the module
// (op execution is in _execute.c, the transformation handlers in
// _handlers.c), over Loom's public C API only (include/loom).
// Everything a user sees (names, dtype inference, operators) is built on
// these primitives in loom/__init__.py.
//
// One eager context serves the process: Python code has no context to pass
// around, as in TensorFlow and PyTorch. Calls that run ops or wait for
// them release the GIL: other Python threads run meanwhile, and a buffer
// whose memory belongs to a Python object (DLPack imports) may be freed on
// a worker thread, which takes the GIL to do so.

#include "_loom.h"

#include <stdio.h>
#include <string.h>

#include "tensorflow/c/c_api.h"

// Made by the first call that needs it, with the options loom.config set
// before (TensorFlow's eager context is likewise initialised lazily, and
// its thread counts are fixed from then on); it lives as long as the
// process.
static loom_context_t* g_context;
static loom_context_options_t g_options;
// The Python class results are made of (loom.Tensor, a subclass of
// TensorBase) and the exception classes by status code, both given by
// loom/__init__.py.
static PyTypeObject* g_tensor_type;
static PyObject* g_error_classes;

loom_context_t* loom__py_context(void) {
  return g_context;
}

loom_context_t* loom__py_ensure_context(void) {
  if (g_context == NULL) {
    loom_status_t status = loom_context_create(&g_options, &g_context);
    if (status != NULL) {
      loom__py_raise_status(status);
      return NULL;
    }
  }
  return g_context;
}

PyObject* loom__py_raise_status(loom_status_t status) {
  loom_status_code_t code = loom_status_code(status);
  PyObject* cls = NULL;
  if (g_error_classes != NULL) {
    PyObject* key = PyLong_FromLong((long)code);
    if (key != NULL) {
      cls = PyDict_GetItemWithError(g_error_classes, key);
      Py_DECREF(key);
    }
  }
  if (cls == NULL) cls = PyExc_RuntimeError;
  PyObject* value = Py_BuildValue("(si)", loom_status_message(status), code);
  loom_status_free(status);
  if (value != NULL) {
    PyErr_SetObject(cls, value);
    Py_DECREF(value);
  }
  return NULL;
}

loom_op_handler_t* loom__py_find_device(const char* name) {
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  loom_op_handler_t* handler = loom_context_find_handler(context, name);
  if (handler != NULL) return handler;
  // TensorFlow's words when a placement cannot be satisfied, as the
  // context gives them for an op placed on a device it does not have.
  const char* names[64];
  size_t count = loom_context_list_devices(context, names, NULL, 64);
  if (count > 64) count = 64;
  char devices[2048];
  size_t used = 0;
  devices[0] = '\0';
  for (size_t i = 0; i < count; ++i) {
    int n = snprintf(devices + used, sizeof(devices) - used, "%s%s",
                     i > 0 ? ", " : "", names[i]);
    if (n < 0 || (size_t)n >= sizeof(devices) - used) break;
    used += (size_t)n;
  }
  loom__py_raise_status(loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "Could not satisfy device specification '%s'. enable_soft_placement=0. "
      "Supported device types [CPU]. All available devices [%s].",
      name, devices));
  return NULL;
}

//===----------------------------------------------------------------------===//
// TensorBase
//===----------------------------------------------------------------------===//

static PyTypeObject TensorBaseType;

int loom__py_is_tensor(PyObject* object) {
  return PyObject_TypeCheck(object, &TensorBaseType);
}

loom_tensor_handle_t* loom__py_as_handle(PyObject* object) {
  if (!loom__py_is_tensor(object)) {
    PyErr_Format(PyExc_TypeError, "expected a loom.Tensor, got %s",
                 Py_TYPE(object)->tp_name);
    return NULL;
  }
  return ((TensorObject*)object)->handle;
}

PyObject* loom__py_wrap_handle(loom_tensor_handle_t* handle) {
  PyTypeObject* type = g_tensor_type != NULL ? g_tensor_type : &TensorBaseType;
  TensorObject* object = (TensorObject*)type->tp_alloc(type, 0);
  if (object == NULL) {
    loom_tensor_handle_release(handle);
    return NULL;
  }
  object->handle = handle;
  object->host = NULL;
  return (PyObject*)object;
}

static void tensor_dealloc(TensorObject* self) {
  if (self->host != NULL) loom_tensor_release(self->host);
  if (self->handle != NULL) loom_tensor_handle_release(self->handle);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* tensor_new(PyTypeObject* type, PyObject* args,
                            PyObject* kwargs) {
  (void)args;
  (void)kwargs;
  PyErr_Format(PyExc_TypeError,
               "%s cannot be created directly: use loom.tensor()",
               type->tp_name);
  return NULL;
}

int loom__py_resolve_host(TensorObject* self) {
  if (self->host != NULL) return 0;
  loom_tensor_t* tensor;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_context_resolve(g_context, self->handle, &tensor);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) {
    loom__py_raise_status(status);
    return -1;
  }
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR) {
    loom_tensor_t* dense;
    status =
        loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense);
    loom_tensor_release(tensor);
    if (status != NULL) {
      loom__py_raise_status(status);
      return -1;
    }
    tensor = dense;
  }
  self->host = tensor;
  return 0;
}

// The struct module's format of a dtype, or NULL when NumPy has none.
static const char* buffer_format(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return "f";
    case LOOM_DTYPE_DOUBLE:
      return "d";
    case LOOM_DTYPE_HALF:
      return "e";
    case LOOM_DTYPE_INT8:
      return "b";
    case LOOM_DTYPE_INT16:
      return "h";
    case LOOM_DTYPE_INT32:
      return "i";
    case LOOM_DTYPE_INT64:
      return "q";
    case LOOM_DTYPE_UINT8:
      return "B";
    case LOOM_DTYPE_UINT16:
      return "H";
    case LOOM_DTYPE_UINT32:
      return "I";
    case LOOM_DTYPE_UINT64:
      return "Q";
    case LOOM_DTYPE_BOOL:
      return "?";
    case LOOM_DTYPE_COMPLEX64:
      return "Zf";
    case LOOM_DTYPE_COMPLEX128:
      return "Zd";
    default:
      return NULL;
  }
}

// Read-only, C-contiguous views of the host tensor's own memory: numpy.asarray
// shares it without a copy.
static int tensor_getbuffer(TensorObject* self, Py_buffer* view, int flags) {
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "loom tensors are immutable");
    return -1;
  }
  if (loom__py_resolve_host(self) < 0) return -1;
  loom_tensor_t* host = self->host;
  loom_dtype_t dtype = loom_tensor_dtype(host);
  const char* format = buffer_format(dtype);
  if (format == NULL || loom_tensor_kind(host) != LOOM_TENSOR_DENSE) {
    PyErr_Format(PyExc_BufferError, "no buffer for a %s tensor",
                 loom_dtype_name(dtype));
    return -1;
  }
  const loom_shape_t* shape = loom_tensor_shape(host);
  const int64_t* dims = loom_shape_dims(shape);
  int rank = shape->rank;
  Py_ssize_t* layout = PyMem_Malloc(sizeof(Py_ssize_t) * (2 * rank + 1));
  if (layout == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  Py_ssize_t itemsize = (Py_ssize_t)loom_dtype_size(dtype);
  Py_ssize_t stride = itemsize;
  for (int i = rank - 1; i >= 0; --i) {
    layout[i] = (Py_ssize_t)dims[i];
    layout[rank + i] = stride;
    stride *= (Py_ssize_t)dims[i];
  }
  view->buf = loom_tensor_data(host);
  view->obj = Py_NewRef((PyObject*)self);
  view->len = (Py_ssize_t)loom_tensor_byte_size(host);
  view->itemsize = itemsize;
  view->readonly = 1;
  view->ndim = rank;
  view->format = (flags & PyBUF_FORMAT) ? (char*)format : NULL;
  view->shape = (flags & PyBUF_ND) ? layout : NULL;
  view->strides =
      (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? layout + rank : NULL;
  view->suboffsets = NULL;
  view->internal = layout;
  return 0;
}

static void tensor_releasebuffer(TensorObject* self, Py_buffer* view) {
  (void)self;
  PyMem_Free(view->internal);
}

static PyBufferProcs tensor_buffer_procs = {
    .bf_getbuffer = (getbufferproc)tensor_getbuffer,
    .bf_releasebuffer = (releasebufferproc)tensor_releasebuffer,
};

static int tensor_metadata(TensorObject* self, loom_tensor_metadata_t* out) {
  loom_status_t status = loom_tensor_handle_wait_metadata(self->handle, out);
  if (status != NULL) {
    loom__py_raise_status(status);
    return -1;
  }
  return 0;
}

static PyObject* tensor_get_shape(TensorObject* self, void* closure) {
  (void)closure;
  loom_tensor_metadata_t metadata;
  if (tensor_metadata(self, &metadata) < 0) return NULL;
  const loom_shape_t* shape = &metadata.shape;
  if (shape->rank < 0) Py_RETURN_NONE;
  const int64_t* dims = loom_shape_dims(shape);
  PyObject* tuple = PyTuple_New(shape->rank);
  if (tuple == NULL) return NULL;
  for (int i = 0; i < shape->rank; ++i) {
    PyObject* dim = dims[i] < 0 ? Py_NewRef(Py_None)
                                : PyLong_FromLongLong((long long)dims[i]);
    if (dim == NULL) {
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, dim);
  }
  return tuple;
}

static PyObject* tensor_get_dtype_enum(TensorObject* self, void* closure) {
  (void)closure;
  loom_tensor_metadata_t metadata;
  if (tensor_metadata(self, &metadata) < 0) return NULL;
  return PyLong_FromLong((long)metadata.dtype);
}

static PyObject* tensor_get_device(TensorObject* self, void* closure) {
  (void)closure;
  const char* name = loom_context_device_name(g_context, self->handle);
  if (name == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(name);
}

// The address of the element data, for tests of zero-copy sharing.
static PyObject* tensor_get_data_ptr(TensorObject* self, void* closure) {
  (void)closure;
  if (loom__py_resolve_host(self) < 0) return NULL;
  return PyLong_FromVoidPtr(loom_tensor_data(self->host));
}

static PyObject* tensor_debug_string(TensorObject* self, PyObject* unused) {
  (void)unused;
  char buffer[512];
  loom_tensor_handle_debug_string(self->handle, buffer, sizeof(buffer));
  return PyUnicode_FromString(buffer);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)tensor_get_shape, NULL, "The shape, a tuple of ints.",
     NULL},
    {"_dtype_enum", (getter)tensor_get_dtype_enum, NULL,
     "The dtype's enum value (TF_DataType).", NULL},
    {"device", (getter)tensor_get_device, NULL,
     "The full name of the device the tensor lives on.", NULL},
    {"_data_ptr", (getter)tensor_get_data_ptr, NULL,
     "The address of the host data.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"_debug_string", (PyCFunction)tensor_debug_string, METH_NOARGS,
     "Loom's own description of the tensor."},
    {"__dlpack__", (PyCFunction)(void (*)(void))loom__py_dlpack,
     METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None): a DLPack capsule sharing the memory."},
    {"__dlpack_device__", (PyCFunction)loom__py_dlpack_device, METH_NOARGS,
     "__dlpack_device__(): (kDLCPU, 0)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TensorBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loom._loom.TensorBase",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_as_buffer = &tensor_buffer_procs,
    .tp_as_number = &loom__py_tensor_number_methods,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A Loom tensor handle (see loom.Tensor).",
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
    .tp_new = tensor_new,
};

//===----------------------------------------------------------------------===//
// Module functions
//===----------------------------------------------------------------------===//

// from_buffer(obj, dtype, shape): a new host tensor holding a copy of the
// C-contiguous bytes of `obj`.
static PyObject* py_from_buffer(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* source;
  int dtype;
  PyObject* shape_seq;
  if (!PyArg_ParseTuple(args, "OiO", &source, &dtype, &shape_seq)) return NULL;
  PyObject* fast = PySequence_Fast(shape_seq, "shape must be a sequence");
  if (fast == NULL) return NULL;
  Py_ssize_t rank = PySequence_Fast_GET_SIZE(fast);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  if (rank > LOOM_MAX_SHAPE_RANK) {
    Py_DECREF(fast);
    PyErr_SetString(PyExc_ValueError, "rank too large");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < rank; ++i) {
    dims[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) return NULL;
  loom_shape_t shape;
  loom_status_t status = loom_shape_initialize_large(&shape, dims, (int)rank);
  if (status != NULL) return loom__py_raise_status(status);
  if (loom__py_ensure_context() == NULL) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(source, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
  loom_tensor_t* tensor;
  status = loom_tensor_create_dense(loom_allocator_default(),
                                    (loom_dtype_t)dtype, &shape, &tensor);
  if (status != NULL) {
    PyBuffer_Release(&view);
    return loom__py_raise_status(status);
  }
  size_t bytes = loom_tensor_byte_size(tensor);
  if ((size_t)view.len != bytes) {
    PyBuffer_Release(&view);
    loom_tensor_release(tensor);
    PyErr_Format(PyExc_ValueError, "buffer holds %zd bytes, the tensor %zu",
                 view.len, bytes);
    return NULL;
  }
  if (bytes > 0) memcpy(loom_tensor_data(tensor), view.buf, bytes);
  PyBuffer_Release(&view);
  loom_tensor_handle_t* handle;
  status = loom_context_new_handle(g_context, tensor, &handle);
  loom_tensor_release(tensor);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(handle);
}

static PyObject* py_set_classes(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* tensor_type;
  PyObject* errors;
  if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &tensor_type, &PyDict_Type,
                        &errors)) {
    return NULL;
  }
  if (!PyType_IsSubtype((PyTypeObject*)tensor_type, &TensorBaseType)) {
    PyErr_SetString(PyExc_TypeError, "not a TensorBase subclass");
    return NULL;
  }
  Py_XSETREF(g_tensor_type, (PyTypeObject*)Py_NewRef(tensor_type));
  Py_XSETREF(g_error_classes, Py_NewRef(errors));
  Py_RETURN_NONE;
}

// set_handle(dst, src): makes `dst` stand for the handle of `src` (the
// forward accumulator swaps its primals for their watched versions).
static PyObject* py_set_handle(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* dst;
  PyObject* src;
  if (!PyArg_ParseTuple(args, "O!O!", &TensorBaseType, &dst, &TensorBaseType,
                        &src)) {
    return NULL;
  }
  TensorObject* d = (TensorObject*)dst;
  loom_tensor_handle_t* handle = ((TensorObject*)src)->handle;
  loom_tensor_handle_retain(handle);
  loom_tensor_handle_release(d->handle);
  d->handle = handle;
  if (d->host != NULL) {
    loom_tensor_release(d->host);
    d->host = NULL;
  }
  Py_RETURN_NONE;
}

// alias(t): a new tensor object standing for the same handle.
static PyObject* py_alias(PyObject* module, PyObject* arg) {
  (void)module;
  loom_tensor_handle_t* handle = loom__py_as_handle(arg);
  if (handle == NULL) return NULL;
  loom_tensor_handle_retain(handle);
  return loom__py_wrap_handle(handle);
}

static PyObject* py_dtype_name(PyObject* module, PyObject* arg) {
  (void)module;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(loom_dtype_name((loom_dtype_t)v));
}

// configure(num_threads, async): the options of the context to be made;
// RuntimeError once it exists (TensorFlow's words for its thread counts).
static PyObject* py_configure(PyObject* module, PyObject* args) {
  (void)module;
  int num_threads;
  int async;
  if (!PyArg_ParseTuple(args, "ip", &num_threads, &async)) return NULL;
  if (g_context != NULL) {
    PyErr_SetString(PyExc_RuntimeError,
                    "Loom's context is already initialized: its threads and "
                    "async mode cannot be modified after initialization");
    return NULL;
  }
  if (num_threads < -1) {
    PyErr_Format(PyExc_ValueError,
                 "num_threads must be -1 (one per core) or >= 0, got %d",
                 num_threads);
    return NULL;
  }
  g_options.num_threads = num_threads;
  g_options.async = async != 0;
  Py_RETURN_NONE;
}

// context_info(): {"initialized", "num_threads", "async", "thread_async"}
// (num_threads as configured: -1 is one per core but one).
static PyObject* py_context_info(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  if (g_context == NULL) {
    return Py_BuildValue("{sOsisOsO}", "initialized", Py_False, "num_threads",
                         g_options.num_threads, "async",
                         g_options.async ? Py_True : Py_False, "thread_async",
                         g_options.async ? Py_True : Py_False);
  }
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_context_host(g_context));
  int threads = pool != NULL ? loom_thread_pool_num_threads(pool) : 0;
  return Py_BuildValue(
      "{sOsisOsO}", "initialized", Py_True, "num_threads", threads, "async",
      loom_context_is_async(g_context) ? Py_True : Py_False, "thread_async",
      loom_context_thread_is_async(g_context) ? Py_True : Py_False);
}

// set_thread_async(on): the calling thread's ops run asynchronously (on)
// or complete before execute returns.
static PyObject* py_set_thread_async(PyObject* module, PyObject* arg) {
  (void)module;
  int on = PyObject_IsTrue(arg);
  if (on < 0 || loom__py_ensure_context() == NULL) return NULL;
  loom_context_set_thread_async(g_context, on != 0);
  Py_RETURN_NONE;
}

// wait(): waits for pending ops; raises (and clears) the first error one
// reported.
static PyObject* py_wait(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  if (g_context == NULL) Py_RETURN_NONE;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_context_wait(g_context);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) {
    loom_context_clear_error(g_context);
    return loom__py_raise_status(status);
  }
  Py_RETURN_NONE;
}

// load_library(path): TF_LoadLibrary; returns the names of the ops the
// library registered.
static PyObject* py_load_library(PyObject* module, PyObject* arg) {
  (void)module;
  PyObject* path_bytes;
  if (!PyUnicode_FSConverter(arg, &path_bytes)) return NULL;
  TF_Status* status = TF_NewStatus();
  if (status == NULL) {
    Py_DECREF(path_bytes);
    return PyErr_NoMemory();
  }
  TF_Library* library;
  PyThreadState* thread_state = PyEval_SaveThread();
  library = TF_LoadLibrary(PyBytes_AS_STRING(path_bytes), status);
  PyEval_RestoreThread(thread_state);
  Py_DECREF(path_bytes);
  if (library == NULL) {
    loom__py_raise_status(loom_make_status(
        (loom_status_code_t)TF_GetCode(status), "%s", TF_Message(status)));
    TF_DeleteStatus(status);
    return NULL;
  }
  TF_DeleteStatus(status);
  TF_Buffer op_list = TF_GetOpList(library);
  PyObject* result =
      PyBytes_FromStringAndSize(op_list.data, (Py_ssize_t)op_list.length);
  TF_DeleteLibraryHandle(library);
  return result;
}

// set_cpu_device_count(n): CPU:0 .. CPU:n-1 (TensorFlow's logical CPU
// devices): an option of the context to be made, or added to the context
// (a count at or below the current one changes nothing).
static PyObject* py_set_cpu_device_count(PyObject* module, PyObject* arg) {
  (void)module;
  long count = PyLong_AsLong(arg);
  if (count == -1 && PyErr_Occurred()) return NULL;
  if (count < 1 || count > 1024) {
    PyErr_Format(PyExc_ValueError,
                 "the number of CPU devices must be in [1, 1024], got %ld",
                 count);
    return NULL;
  }
  if (g_context == NULL) {
    g_options.num_cpu_devices = (int32_t)count;
    Py_RETURN_NONE;
  }
  loom_status_t status =
      loom_context_set_cpu_device_count(g_context, (int32_t)count);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

// list_devices(): [(name, type)] of the context's devices (made if
// needed).
static PyObject* py_list_devices(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  if (loom__py_ensure_context() == NULL) return NULL;
  size_t count = loom_context_list_devices(g_context, NULL, NULL, 0);
  const char** names = PyMem_Calloc(2 * count + 1, sizeof(char*));
  if (names == NULL) return PyErr_NoMemory();
  const char** types = names + count;
  count = loom_context_list_devices(g_context, names, types, count);
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list != NULL && i < count; ++i) {
    PyObject* item = Py_BuildValue("(ss)", names[i], types[i]);
    if (item == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  PyMem_Free(names);
  return list;
}

// copy_to(t, device): t's value on `device` (a device-to-device copy
// shares the buffer).
static PyObject* py_copy_to(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* tensor;
  const char* device;
  if (!PyArg_ParseTuple(args, "O!s", &TensorBaseType, &tensor, &device)) {
    return NULL;
  }
  loom_op_handler_t* target = loom__py_find_device(device);
  if (target == NULL) return NULL;
  loom_tensor_handle_t* out;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_context_copy_to(g_context, ((TensorObject*)tensor)->handle,
                                target, &out);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(out);
}

// device_name(device): the full name of a device of the context.
static PyObject* py_device_name(PyObject* module, PyObject* arg) {
  (void)module;
  const char* device = PyUnicode_AsUTF8(arg);
  if (device == NULL) return NULL;
  loom_op_handler_t* handler = loom__py_find_device(device);
  if (handler == NULL) return NULL;
  const char* name = loom_context_handler_name(g_context, handler);
  return PyUnicode_FromString(name != NULL ? name : device);
}

// enter_device_scope(device): ops of this thread run on `device` until
// exit_scope.
static PyObject* py_enter_device_scope(PyObject* module, PyObject* arg) {
  (void)module;
  const char* device = PyUnicode_AsUTF8(arg);
  if (device == NULL) return NULL;
  loom_op_handler_t* handler = loom__py_find_device(device);
  if (handler == NULL) return NULL;
  loom_status_t status = loom_context_enter_scope(g_context, handler);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"from_buffer", py_from_buffer, METH_VARARGS,
     "from_buffer(obj, dtype, shape): a tensor copied from a C-contiguous "
     "buffer."},
    {"set_classes", py_set_classes, METH_VARARGS,
     "set_classes(tensor_type, error_classes)."},
    {"set_handle", py_set_handle, METH_VARARGS,
     "set_handle(dst, src): dst now stands for src's handle."},
    {"from_dlpack_capsule", loom__py_from_dlpack, METH_O,
     "from_dlpack_capsule(capsule): a tensor sharing a DLPack capsule's "
     "memory."},
    {"alias", py_alias, METH_O, "alias(t): a new object for t's handle."},
    {"dtype_name", py_dtype_name, METH_O, "dtype_name(enum) -> 'float'."},
    {"configure", py_configure, METH_VARARGS,
     "configure(num_threads, async): options of the context to be made."},
    {"context_info", py_context_info, METH_NOARGS,
     "context_info() -> {initialized, num_threads, async, thread_async}."},
    {"set_thread_async", py_set_thread_async, METH_O,
     "set_thread_async(on): this thread's ops run asynchronously."},
    {"wait", py_wait, METH_NOARGS,
     "wait(): waits for pending ops, raising the first error."},
    {"load_library", py_load_library, METH_O,
     "load_library(path) -> the serialized OpList of the library's ops."},
    {"set_cpu_device_count", py_set_cpu_device_count, METH_O,
     "set_cpu_device_count(n): CPU:0 .. CPU:n-1."},
    {"list_devices", py_list_devices, METH_NOARGS,
     "list_devices() -> [(name, type)]."},
    {"copy_to", py_copy_to, METH_VARARGS,
     "copy_to(t, device): t's value on device."},
    {"device_name", py_device_name, METH_O,
     "device_name(device) -> the device's full name."},
    {"enter_device_scope", py_enter_device_scope, METH_O,
     "enter_device_scope(device): ops run on device until exit_scope()."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef loom_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "loom._loom",
    .m_doc = "Loom's native bindings (use the loom package).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__loom(void) {
  if (PyType_Ready(&TensorBaseType) < 0) return NULL;
  if (g_context == NULL) loom_context_options_initialize(&g_options);
  // The op registry is read at import (loom.raw_ops), before the context
  // that would register the built-in ops exists.
  loom_status_t status = loom_builtin_ops_register();
  if (status != NULL) return loom__py_raise_status(status);
  PyObject* module = PyModule_Create(&loom_module);
  if (module == NULL) return NULL;
  if (PyModule_AddObjectRef(module, "TensorBase", (PyObject*)&TensorBaseType) <
          0 ||
      PyModule_AddFunctions(module, loom__py_execute_methods) < 0 ||
      PyModule_AddFunctions(module, loom__py_handler_methods) < 0 ||
      loom__py_execute_init(module) < 0 || loom__py_handlers_init(module) < 0 ||
      loom__py_python_handler_init(module) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
