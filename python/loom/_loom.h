// What the files of the `loom` extension share (private to the package).

#ifndef LOOM_PYTHON_LOOM_H_
#define LOOM_PYTHON_LOOM_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "loom/loom.h"

// A loom.Tensor: a handle and, once resolved, its dense host tensor.
// clang-format off
typedef struct {
  PyObject_HEAD
  loom_tensor_handle_t* handle;
  // clang-format on
  // The dense host tensor behind the buffer protocol and DLPack, resolved
  // on first use and kept so that every view of the tensor shares one
  // buffer.
  loom_tensor_t* host;
} TensorObject;

// The process's eager context (NULL before loom__py_ensure_context).
loom_context_t* loom__py_context(void);
// Makes the context if needed: it, or NULL with an exception set.
loom_context_t* loom__py_ensure_context(void);
// Raises the Python exception for `status` (consumed); returns NULL.
PyObject* loom__py_raise_status(loom_status_t status);
// A new loom.Tensor owning `handle` (the reference moves in, also on
// failure).
PyObject* loom__py_wrap_handle(loom_tensor_handle_t* handle);
// Whether `object` is a loom.Tensor (a TensorBase).
int loom__py_is_tensor(PyObject* object);
// The handle of a loom.Tensor (borrowed), or NULL with a TypeError.
loom_tensor_handle_t* loom__py_as_handle(PyObject* object);
// The handler of device `name` (full or partial, borrowed; the context is
// made if needed), or NULL with TensorFlow's INVALID_ARGUMENT error for a
// device the context does not have.
loom_op_handler_t* loom__py_find_device(const char* name);
// Sets tensor->host; -1 with an exception set on failure.
int loom__py_resolve_host(TensorObject* tensor);

// _dlpack.c: Tensor.__dlpack__, Tensor.__dlpack_device__, from_dlpack.
PyObject* loom__py_dlpack(PyObject* self, PyObject* args, PyObject* kwargs);
PyObject* loom__py_dlpack_device(PyObject* self, PyObject* unused);
PyObject* loom__py_from_dlpack(PyObject* module, PyObject* capsule);

// Sets attribute `def` of `op` in `attrs` from a Python value (_execute.c);
// -1 with a Python exception set on failure.
int loom__py_set_attr(loom_op_attrs_t* attrs, const loom_op_def_t* op,
                      const loom_attr_def_t* def, PyObject* value);

// _execute.c: execute, op_defs, the Op type and the tensor operators.
extern PyMethodDef loom__py_execute_methods[];
extern PyNumberMethods loom__py_tensor_number_methods;
// Readies the Op type and adds it to `module`; -1 on error.
int loom__py_execute_init(PyObject* module);

// _handlers.c: the Handler type and the functions over handlers.
extern PyMethodDef loom__py_handler_methods[];
// Readies the Handler type and adds it to `module`; -1 on error.
int loom__py_handlers_init(PyObject* module);
// A new loom._loom.Handler owning `handler` (the reference moves in, also
// on failure).
PyObject* loom__py_wrap_handler(loom_op_handler_t* handler);

// _python_handler.c: handlers written in Python (loom.PythonHandler).
PyObject* loom__py_python_handler_create(PyObject* module, PyObject* owner);
// Readies the HandlerOp type and adds it to `module`; -1 on error.
int loom__py_python_handler_init(PyObject* module);

#endif  // LOOM_PYTHON_LOOM_H_
