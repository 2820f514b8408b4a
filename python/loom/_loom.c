// The native half of the `loom` Python package: tensors, op execution and
// the transformation handlers, over Loom's public C API only (include/loom).
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

// Set once at import; the context lives as long as the process.
static loom_context_t* g_context;
// The Python class results are made of (loom.Tensor, a subclass of
// TensorBase) and the exception classes by status code, both given by
// loom/__init__.py.
static PyTypeObject* g_tensor_type;
static PyObject* g_error_classes;

loom_context_t* loom__py_context(void) {
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

//===----------------------------------------------------------------------===//
// TensorBase
//===----------------------------------------------------------------------===//

static PyTypeObject TensorBaseType;

static int is_tensor(PyObject* object) {
  return PyObject_TypeCheck(object, &TensorBaseType);
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
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A Loom tensor handle (see loom.Tensor).",
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
    .tp_new = tensor_new,
};

//===----------------------------------------------------------------------===//
// Handler
//===----------------------------------------------------------------------===//

// clang-format off
typedef struct {
  PyObject_HEAD
  loom_op_handler_t* handler;
  // clang-format on
} HandlerObject;

static void handler_dealloc(HandlerObject* self) {
  if (self->handler != NULL) loom_op_handler_release(self->handler);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyTypeObject HandlerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loom._loom.Handler",
    .tp_basicsize = sizeof(HandlerObject),
    .tp_dealloc = (destructor)handler_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A Loom op handler (a transformation such as a gradient tape).",
};

// Wraps `handler` (the reference moves in).
static PyObject* wrap_handler(loom_op_handler_t* handler) {
  HandlerObject* object = PyObject_New(HandlerObject, &HandlerType);
  if (object == NULL) {
    loom_op_handler_release(handler);
    return NULL;
  }
  object->handler = handler;
  return (PyObject*)object;
}

static loom_op_handler_t* as_handler(PyObject* object) {
  if (!PyObject_TypeCheck(object, &HandlerType)) {
    PyErr_SetString(PyExc_TypeError, "expected a loom handler");
    return NULL;
  }
  return ((HandlerObject*)object)->handler;
}

static loom_tensor_handle_t* as_handle(PyObject* object) {
  if (!is_tensor(object)) {
    PyErr_Format(PyExc_TypeError, "expected a loom.Tensor, got %s",
                 Py_TYPE(object)->tp_name);
    return NULL;
  }
  return ((TensorObject*)object)->handle;
}

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

static int set_int_list(loom_op_attrs_t* attrs, const char* name,
                        loom_attr_kind_t kind, PyObject* value) {
  PyObject* fast = PySequence_Fast(value, "expected a list");
  if (fast == NULL) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  size_t element = kind == LOOM_ATTR_KIND_F32     ? sizeof(float)
                   : kind == LOOM_ATTR_KIND_F64   ? sizeof(double)
                   : kind == LOOM_ATTR_KIND_BOOL  ? sizeof(bool)
                   : kind == LOOM_ATTR_KIND_I32   ? sizeof(int32_t)
                   : kind == LOOM_ATTR_KIND_DTYPE ? sizeof(loom_dtype_t)
                                                  : sizeof(int64_t);
  char* values = PyMem_Malloc(element * (size_t)(count + 1));
  if (values == NULL) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    void* slot = values + element * (size_t)i;
    switch (kind) {
      case LOOM_ATTR_KIND_F32:
        *(float*)slot = (float)PyFloat_AsDouble(item);
        break;
      case LOOM_ATTR_KIND_F64:
        *(double*)slot = PyFloat_AsDouble(item);
        break;
      case LOOM_ATTR_KIND_BOOL:
        *(bool*)slot = PyObject_IsTrue(item) > 0;
        break;
      case LOOM_ATTR_KIND_I32:
        *(int32_t*)slot = (int32_t)PyLong_AsLong(item);
        break;
      case LOOM_ATTR_KIND_DTYPE:
        *(loom_dtype_t*)slot = (loom_dtype_t)PyLong_AsLong(item);
        break;
      default:
        *(int64_t*)slot = PyLong_AsLongLong(item);
        break;
    }
  }
  Py_DECREF(fast);
  if (PyErr_Occurred()) {
    PyMem_Free(values);
    return -1;
  }
  loom_status_t status =
      loom_op_attrs_set_list(attrs, name, kind, values, count);
  PyMem_Free(values);
  if (status != NULL) {
    loom__py_raise_status(status);
    return -1;
  }
  return 0;
}

// Sets attribute `def` from a Python value: ints, floats, bools, dtype enum
// values, shapes as sequences of ints (None: unknown), strings, tensors.
static int set_attr(loom_op_attrs_t* attrs, const loom_op_def_t* op,
                    const loom_attr_def_t* def, PyObject* value) {
  const char* name = def->name;
  loom_status_t status = NULL;
  if (def->is_list && def->kind != LOOM_ATTR_KIND_STRING &&
      def->kind != LOOM_ATTR_KIND_SHAPE && def->kind != LOOM_ATTR_KIND_TENSOR &&
      def->kind != LOOM_ATTR_KIND_FUNC) {
    return set_int_list(attrs, name, def->kind, value);
  }
  if (def->is_list) {
    PyErr_Format(PyExc_NotImplementedError,
                 "%s: list attribute '%s' of kind %s is not supported yet",
                 op->name, name, loom_attr_kind_name(def->kind));
    return -1;
  }
  switch (def->kind) {
    case LOOM_ATTR_KIND_BOOL: {
      int truth = PyObject_IsTrue(value);
      if (truth < 0) return -1;
      status = loom_op_attrs_set_bool(attrs, name, truth != 0);
      break;
    }
    case LOOM_ATTR_KIND_I32:
    case LOOM_ATTR_KIND_I64: {
      long long v = PyLong_AsLongLong(value);
      if (v == -1 && PyErr_Occurred()) return -1;
      status = def->kind == LOOM_ATTR_KIND_I32
                   ? loom_op_attrs_set_i32(attrs, name, (int32_t)v)
                   : loom_op_attrs_set_i64(attrs, name, (int64_t)v);
      break;
    }
    case LOOM_ATTR_KIND_F32:
    case LOOM_ATTR_KIND_F64: {
      double v = PyFloat_AsDouble(value);
      if (v == -1.0 && PyErr_Occurred()) return -1;
      status = def->kind == LOOM_ATTR_KIND_F32
                   ? loom_op_attrs_set_f32(attrs, name, (float)v)
                   : loom_op_attrs_set_f64(attrs, name, v);
      break;
    }
    case LOOM_ATTR_KIND_DTYPE: {
      long v = PyLong_AsLong(value);
      if (v == -1 && PyErr_Occurred()) return -1;
      status = loom_op_attrs_set_dtype(attrs, name, (loom_dtype_t)v);
      break;
    }
    case LOOM_ATTR_KIND_SHAPE: {
      if (value == Py_None) {
        status = loom_op_attrs_set_shape(attrs, name, NULL, LOOM_UNKNOWN_RANK);
        break;
      }
      PyObject* fast = PySequence_Fast(value, "a shape must be a sequence");
      if (fast == NULL) return -1;
      Py_ssize_t rank = PySequence_Fast_GET_SIZE(fast);
      int64_t dims[LOOM_MAX_SHAPE_RANK];
      for (Py_ssize_t i = 0; i < rank && i < LOOM_MAX_SHAPE_RANK; ++i) {
        PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
        dims[i] = item == Py_None ? LOOM_UNKNOWN_DIM : PyLong_AsLongLong(item);
      }
      Py_DECREF(fast);
      if (PyErr_Occurred()) return -1;
      status = loom_op_attrs_set_shape(attrs, name, dims, (int32_t)rank);
      break;
    }
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC: {
      Py_ssize_t size;
      const char* data;
      if (PyBytes_Check(value)) {
        data = PyBytes_AS_STRING(value);
        size = PyBytes_GET_SIZE(value);
      } else {
        data = PyUnicode_AsUTF8AndSize(value, &size);
        if (data == NULL) return -1;
      }
      status = def->kind == LOOM_ATTR_KIND_STRING
                   ? loom_op_attrs_set_string(attrs, name, data, (size_t)size)
                   : loom_op_attrs_set_func(attrs, name, data, (size_t)size);
      break;
    }
    case LOOM_ATTR_KIND_TENSOR: {
      if (!is_tensor(value)) {
        PyErr_Format(PyExc_TypeError, "%s: attribute '%s' takes a tensor",
                     op->name, name);
        return -1;
      }
      if (loom__py_resolve_host((TensorObject*)value) < 0) return -1;
      status =
          loom_op_attrs_set_tensor(attrs, name, ((TensorObject*)value)->host);
      break;
    }
    default:
      PyErr_Format(PyExc_NotImplementedError,
                   "%s: attribute '%s' of kind %s is not supported yet",
                   op->name, name, loom_attr_kind_name(def->kind));
      return -1;
  }
  if (status != NULL) {
    loom__py_raise_status(status);
    return -1;
  }
  return 0;
}

static int add_inputs(loom_eager_op_t* op, PyObject* inputs) {
  PyObject* fast = PySequence_Fast(inputs, "inputs must be a sequence");
  if (fast == NULL) return -1;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    loom_status_t status;
    if (is_tensor(item)) {
      status = loom_eager_op_add_input(op, ((TensorObject*)item)->handle);
    } else {
      PyObject* list = PySequence_Fast(item,
                                       "an input must be a tensor or a "
                                       "list of tensors");
      if (list == NULL) goto fail;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
      loom_tensor_handle_t** handles =
          PyMem_Malloc(sizeof(loom_tensor_handle_t*) * (size_t)(n + 1));
      if (handles == NULL) {
        Py_DECREF(list);
        PyErr_NoMemory();
        goto fail;
      }
      for (Py_ssize_t j = 0; j < n; ++j) {
        handles[j] = as_handle(PySequence_Fast_GET_ITEM(list, j));
        if (handles[j] == NULL) {
          PyMem_Free(handles);
          Py_DECREF(list);
          goto fail;
        }
      }
      status = loom_eager_op_add_input_list(op, handles, (int32_t)n);
      PyMem_Free(handles);
      Py_DECREF(list);
    }
    if (status != NULL) {
      loom__py_raise_status(status);
      goto fail;
    }
  }
  Py_DECREF(fast);
  return 0;
fail:
  Py_DECREF(fast);
  return -1;
}

#define MAX_RESULTS 256

// execute(op_name, inputs, attrs): runs a registered op; `inputs` holds one
// tensor or list of tensors per input argument, `attrs` maps attribute
// names to values. Returns the tuple of results.
static PyObject* py_execute(PyObject* module, PyObject* args) {
  (void)module;
  const char* op_name;
  PyObject* inputs;
  PyObject* attrs;
  if (!PyArg_ParseTuple(args, "sOO!", &op_name, &inputs, &PyDict_Type,
                        &attrs)) {
    return NULL;
  }
  loom_eager_op_t* op;
  loom_status_t status = loom_eager_op_acquire(g_context, op_name, &op);
  if (status != NULL) return loom__py_raise_status(status);
  const loom_op_def_t* def = loom_eager_op_def(op);
  loom_tensor_handle_t* results[MAX_RESULTS];
  int32_t count = 0;
  if (add_inputs(op, inputs) < 0) goto fail;
  PyObject* key;
  PyObject* value;
  Py_ssize_t position = 0;
  while (PyDict_Next(attrs, &position, &key, &value)) {
    const char* name = PyUnicode_AsUTF8(key);
    if (name == NULL) goto fail;
    const loom_attr_def_t* attr = loom_op_def_find_attr(def, name);
    if (attr == NULL) {
      loom__py_raise_status(loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Attribute '%s' does not exist for operation %s", name, op_name));
      goto fail;
    }
    if (set_attr(loom_eager_op_attrs(op), def, attr, value) < 0) goto fail;
  }
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_eager_op_execute(op, results, MAX_RESULTS, &count);
  PyEval_RestoreThread(thread_state);
  loom_eager_op_recycle(op);
  if (status != NULL) return loom__py_raise_status(status);
  PyObject* tuple = PyTuple_New(count);
  if (tuple == NULL) {
    for (int32_t i = 0; i < count; ++i) loom_tensor_handle_release(results[i]);
    return NULL;
  }
  for (int32_t i = 0; i < count; ++i) {
    PyObject* result = loom__py_wrap_handle(results[i]);
    if (result == NULL) {
      for (int32_t j = i + 1; j < count; ++j) {
        loom_tensor_handle_release(results[j]);
      }
      Py_DECREF(tuple);
      return NULL;
    }
    PyTuple_SET_ITEM(tuple, i, result);
  }
  return tuple;
fail:
  loom_eager_op_recycle(op);
  return NULL;
}

static PyObject* arg_defs(const loom_arg_def_t* args, int32_t count) {
  PyObject* list = PyList_New(count);
  if (list == NULL) return NULL;
  for (int32_t i = 0; i < count; ++i) {
    const loom_arg_def_t* arg = &args[i];
    bool is_list = arg->number_attr != NULL || arg->type_list_attr != NULL;
    PyObject* item = Py_BuildValue(
        "(sNszi)", arg->name, PyBool_FromLong(is_list),
        arg->spec != NULL ? arg->spec : "", arg->type_attr, (int)arg->dtype);
    if (item == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

// op_defs(): every registered op as (name, inputs, outputs, attrs,
// is_stateful); an argument is (name, is_list, spec, type attr or None,
// fixed dtype or 0), an attribute
// (name, kind name, is_list, has_default, spec).
static PyObject* py_op_defs(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  loom_op_registry_t* registry = loom_op_registry_global();
  size_t total = loom_op_registry_list(registry, NULL, 0);
  const char** names = PyMem_Malloc(sizeof(char*) * (total + 1));
  if (names == NULL) return PyErr_NoMemory();
  total = loom_op_registry_list(registry, names, total);
  PyObject* list = PyList_New(0);
  if (list == NULL) goto done;
  for (size_t i = 0; i < total; ++i) {
    const loom_op_def_t* def = loom_op_registry_find(registry, names[i]);
    if (def == NULL) continue;
    PyObject* attrs = PyList_New(def->num_attrs);
    if (attrs == NULL) goto fail;
    for (int32_t j = 0; j < def->num_attrs; ++j) {
      const loom_attr_def_t* attr = &def->attrs[j];
      PyObject* item = Py_BuildValue(
          "(ssNNs)", attr->name, loom_attr_kind_name(attr->kind),
          PyBool_FromLong(attr->is_list), PyBool_FromLong(attr->has_default),
          attr->spec != NULL ? attr->spec : "");
      if (item == NULL) {
        Py_DECREF(attrs);
        goto fail;
      }
      PyList_SET_ITEM(attrs, j, item);
    }
    PyObject* entry = Py_BuildValue("(sNNNN)", def->name,
                                    arg_defs(def->inputs, def->num_inputs),
                                    arg_defs(def->outputs, def->num_outputs),
                                    attrs, PyBool_FromLong(def->is_stateful));
    if (entry == NULL || PyList_Append(list, entry) < 0) {
      Py_XDECREF(entry);
      goto fail;
    }
    Py_DECREF(entry);
  }
  goto done;
fail:
  Py_CLEAR(list);
done:
  PyMem_Free(names);
  return list;
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
  loom_tensor_handle_t* handle = as_handle(arg);
  if (handle == NULL) return NULL;
  loom_tensor_handle_retain(handle);
  return loom__py_wrap_handle(handle);
}

static PyObject* py_enter_scope(PyObject* module, PyObject* arg) {
  (void)module;
  loom_op_handler_t* handler = as_handler(arg);
  if (handler == NULL) return NULL;
  loom_status_t status = loom_context_enter_scope(g_context, handler);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject* py_exit_scope(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  loom_status_t status = loom_context_exit_scope(g_context);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject* py_tape_create(PyObject* module, PyObject* args) {
  (void)module;
  int persistent = 0;
  int watch_accessed_variables = 1;
  if (!PyArg_ParseTuple(args, "pp", &persistent, &watch_accessed_variables)) {
    return NULL;
  }
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  options.persistent = persistent != 0;
  options.watch_accessed_variables = watch_accessed_variables != 0;
  loom_op_handler_t* tape;
  loom_status_t status = loom_tape_create(g_context, &options, &tape);
  if (status != NULL) return loom__py_raise_status(status);
  return wrap_handler(tape);
}

static PyObject* py_tape_watch(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* tape;
  PyObject* tensor;
  if (!PyArg_ParseTuple(args, "OO", &tape, &tensor)) return NULL;
  loom_op_handler_t* handler = as_handler(tape);
  loom_tensor_handle_t* handle = handler ? as_handle(tensor) : NULL;
  if (handle == NULL) return NULL;
  loom_status_t status = loom_tape_watch(handler, handle);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

// Borrowed handles of a sequence of tensors (NULL entries for None when
// `allow_none`); the array is PyMem_Malloc'd.
static loom_tensor_handle_t** handle_array(PyObject* fast, bool allow_none) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  loom_tensor_handle_t** handles =
      PyMem_Calloc((size_t)n + 1, sizeof(loom_tensor_handle_t*));
  if (handles == NULL) {
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
    if (allow_none && item == Py_None) continue;
    handles[i] = as_handle(item);
    if (handles[i] == NULL) {
      PyMem_Free(handles);
      return NULL;
    }
  }
  return handles;
}

static PyObject* py_tape_gradient(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *tape, *targets_seq, *sources_seq, *grads_seq;
  int zeros = 0;
  if (!PyArg_ParseTuple(args, "OOOOp", &tape, &targets_seq, &sources_seq,
                        &grads_seq, &zeros)) {
    return NULL;
  }
  loom_op_handler_t* handler = as_handler(tape);
  if (handler == NULL) return NULL;
  PyObject* result = NULL;
  loom_tensor_handle_t** targets = NULL;
  loom_tensor_handle_t** sources = NULL;
  loom_tensor_handle_t** grads = NULL;
  loom_tensor_handle_t** outs = NULL;
  PyObject* targets_fast = PySequence_Fast(targets_seq, "targets: a sequence");
  PyObject* sources_fast = PySequence_Fast(sources_seq, "sources: a sequence");
  PyObject* grads_fast = grads_seq == Py_None
                             ? NULL
                             : PySequence_Fast(grads_seq, "output_gradients");
  if (targets_fast == NULL || sources_fast == NULL ||
      (grads_seq != Py_None && grads_fast == NULL)) {
    goto done;
  }
  Py_ssize_t num_targets = PySequence_Fast_GET_SIZE(targets_fast);
  Py_ssize_t num_sources = PySequence_Fast_GET_SIZE(sources_fast);
  if (grads_fast != NULL &&
      PySequence_Fast_GET_SIZE(grads_fast) != num_targets) {
    PyErr_SetString(PyExc_ValueError,
                    "output_gradients needs one entry per target");
    goto done;
  }
  targets = handle_array(targets_fast, false);
  sources = targets ? handle_array(sources_fast, false) : NULL;
  if (sources == NULL) goto done;
  if (grads_fast != NULL) {
    grads = handle_array(grads_fast, true);
    if (grads == NULL) goto done;
  }
  outs = PyMem_Calloc((size_t)num_sources + 1, sizeof(loom_tensor_handle_t*));
  if (outs == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_tape_gradient(
      handler, targets, (int32_t)num_targets, sources, (int32_t)num_sources,
      grads, zeros ? LOOM_UNCONNECTED_ZERO : LOOM_UNCONNECTED_NONE, outs);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) {
    loom__py_raise_status(status);
    goto done;
  }
  result = PyList_New(num_sources);
  for (Py_ssize_t i = 0; i < num_sources; ++i) {
    PyObject* item;
    if (outs[i] == NULL) {
      item = Py_NewRef(Py_None);
    } else {
      item = loom__py_wrap_handle(outs[i]);
      outs[i] = NULL;
    }
    if (result == NULL || item == NULL) {
      Py_XDECREF(item);
      continue;
    }
    PyList_SET_ITEM(result, i, item);
  }
  if (result != NULL && PyErr_Occurred()) Py_CLEAR(result);
done:
  PyMem_Free(targets);
  PyMem_Free(sources);
  PyMem_Free(grads);
  PyMem_Free(outs);
  Py_XDECREF(targets_fast);
  Py_XDECREF(sources_fast);
  Py_XDECREF(grads_fast);
  return result;
}

static PyObject* py_tape_jacobian(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *tape, *target, *source;
  if (!PyArg_ParseTuple(args, "OOO", &tape, &target, &source)) return NULL;
  loom_op_handler_t* handler = as_handler(tape);
  loom_tensor_handle_t* t = handler ? as_handle(target) : NULL;
  loom_tensor_handle_t* s = t ? as_handle(source) : NULL;
  if (s == NULL) return NULL;
  loom_tensor_handle_t* out;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_tape_jacobian(handler, t, s, &out);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(out);
}

// tape_recording(tape, on): resumes (on) or stops recording on this thread.
static PyObject* py_tape_recording(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* tape;
  int on;
  if (!PyArg_ParseTuple(args, "Op", &tape, &on)) return NULL;
  loom_op_handler_t* handler = as_handler(tape);
  if (handler == NULL) return NULL;
  loom_status_t status = on ? loom_tape_resume_recording(handler)
                            : loom_tape_stop_recording(handler);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject* py_forward_create(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  loom_op_handler_t* accumulator;
  loom_status_t status =
      loom_forward_accumulator_create(g_context, &accumulator);
  if (status != NULL) return loom__py_raise_status(status);
  return wrap_handler(accumulator);
}

static PyObject* py_forward_watch(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *acc, *primal, *tangent;
  if (!PyArg_ParseTuple(args, "OOO", &acc, &primal, &tangent)) return NULL;
  loom_op_handler_t* handler = as_handler(acc);
  loom_tensor_handle_t* p = handler ? as_handle(primal) : NULL;
  loom_tensor_handle_t* t = p ? as_handle(tangent) : NULL;
  if (t == NULL) return NULL;
  loom_tensor_handle_t* out;
  loom_status_t status = loom_forward_accumulator_watch(handler, p, t, &out);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(out);
}

static PyObject* py_forward_jvp(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *acc, *tensor;
  int zeros = 0;
  if (!PyArg_ParseTuple(args, "OOp", &acc, &tensor, &zeros)) return NULL;
  loom_op_handler_t* handler = as_handler(acc);
  loom_tensor_handle_t* handle = handler ? as_handle(tensor) : NULL;
  if (handle == NULL) return NULL;
  loom_tensor_handle_t* out = NULL;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_forward_accumulator_jvp(
      handler, handle, zeros ? LOOM_UNCONNECTED_ZERO : LOOM_UNCONNECTED_NONE,
      &out);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) return loom__py_raise_status(status);
  if (out == NULL) Py_RETURN_NONE;
  return loom__py_wrap_handle(out);
}

static PyObject* py_logging_create(PyObject* module, PyObject* args) {
  (void)module;
  int print = 1;
  if (!PyArg_ParseTuple(args, "p", &print)) return NULL;
  loom_op_handler_t* handler;
  loom_status_t status = loom_scope_logging_handler_create(
      g_context, print ? stderr : NULL, &handler);
  if (status != NULL) return loom__py_raise_status(status);
  return wrap_handler(handler);
}

static PyObject* py_logging_count(PyObject* module, PyObject* arg) {
  (void)module;
  loom_op_handler_t* handler = as_handler(arg);
  if (handler == NULL) return NULL;
  return PyLong_FromLongLong(
      (long long)loom_scope_logging_handler_count(handler));
}

static PyObject* py_dtype_name(PyObject* module, PyObject* arg) {
  (void)module;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(loom_dtype_name((loom_dtype_t)v));
}

static PyMethodDef module_methods[] = {
    {"from_buffer", py_from_buffer, METH_VARARGS,
     "from_buffer(obj, dtype, shape): a tensor copied from a C-contiguous "
     "buffer."},
    {"execute", py_execute, METH_VARARGS,
     "execute(op_name, inputs, attrs): runs an op; returns its results."},
    {"op_defs", py_op_defs, METH_NOARGS,
     "op_defs(): the registered op definitions."},
    {"set_classes", py_set_classes, METH_VARARGS,
     "set_classes(tensor_type, error_classes)."},
    {"set_handle", py_set_handle, METH_VARARGS,
     "set_handle(dst, src): dst now stands for src's handle."},
    {"from_dlpack_capsule", loom__py_from_dlpack, METH_O,
     "from_dlpack_capsule(capsule): a tensor sharing a DLPack capsule's "
     "memory."},
    {"alias", py_alias, METH_O, "alias(t): a new object for t's handle."},
    {"enter_scope", py_enter_scope, METH_O, "enter_scope(handler)."},
    {"exit_scope", py_exit_scope, METH_NOARGS, "exit_scope()."},
    {"tape_create", py_tape_create, METH_VARARGS,
     "tape_create(persistent, watch_accessed_variables)."},
    {"tape_watch", py_tape_watch, METH_VARARGS, "tape_watch(tape, tensor)."},
    {"tape_gradient", py_tape_gradient, METH_VARARGS,
     "tape_gradient(tape, targets, sources, output_gradients, zeros)."},
    {"tape_jacobian", py_tape_jacobian, METH_VARARGS,
     "tape_jacobian(tape, target, source)."},
    {"tape_recording", py_tape_recording, METH_VARARGS,
     "tape_recording(tape, on): resumes or stops recording."},
    {"forward_create", py_forward_create, METH_NOARGS, "forward_create()."},
    {"forward_watch", py_forward_watch, METH_VARARGS,
     "forward_watch(acc, primal, tangent) -> the primal on acc."},
    {"forward_jvp", py_forward_jvp, METH_VARARGS,
     "forward_jvp(acc, tensor, zeros) -> tangent or None."},
    {"logging_create", py_logging_create, METH_VARARGS,
     "logging_create(print_to_stderr)."},
    {"logging_count", py_logging_count, METH_O, "logging_count(handler)."},
    {"dtype_name", py_dtype_name, METH_O, "dtype_name(enum) -> 'float'."},
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
  if (PyType_Ready(&TensorBaseType) < 0 || PyType_Ready(&HandlerType) < 0) {
    return NULL;
  }
  if (g_context == NULL) {
    loom_status_t status = loom_context_create(NULL, &g_context);
    if (status != NULL) return loom__py_raise_status(status);
  }
  PyObject* module = PyModule_Create(&loom_module);
  if (module == NULL) return NULL;
  if (PyModule_AddObjectRef(module, "TensorBase", (PyObject*)&TensorBaseType) <
          0 ||
      PyModule_AddObjectRef(module, "Handler", (PyObject*)&HandlerType) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
