// Handlers written in Python (loom.PythonHandler): an op handler made with
// Loom's public op-handler API (loom/op_handler.h) whose execute calls the
// Python object's `execute(op)`. `op` is a HandlerOp: the op's name, its
// inputs as loom.Tensors, its number of outputs, and `run(*inputs)`, which
// runs the op (with its attributes, on the given inputs or its own) on the
// handler beneath this one and returns its outputs. `execute` returns the
// op's outputs: a handler may watch, change the inputs, replace the
// outputs, or fail the op by raising.
//
// The handler holds the Python object weakly (the object holds the
// handler), so that neither keeps the other alive; once the object is
// gone, the handler passes ops on as they are. A merge (the handler's scope
// entered over another) shares the object with a new outer handler.
//
// The GIL is taken around the calls into Python, and let go while `run`
// executes beneath, so that other threads' handlers (a parallel handler's
// components) may call into Python meanwhile.

#include "_loom.h"

typedef struct {
  loom_context_t* context;
  PyObject* owner;           // a weak reference to the Python object
  loom_op_handler_t* outer;  // retained; NULL: the context's CPU
} py_handler_t;

static loom_op_handler_t* outer_of(const py_handler_t* state) {
  return state->outer ? state->outer : loom_context_cpu(state->context);
}

//===----------------------------------------------------------------------===//
// HandlerOp: the op a Python handler executes
//===----------------------------------------------------------------------===//

// clang-format off
typedef struct {
  PyObject_HEAD
  // Valid while the handler's execute runs, then NULL: `run` fails.
  loom_op_invocation_t* invocation;
  py_handler_t* state;
  loom_prepared_op_t* beneath;  // the op prepared on the outer handler
  PyObject* name;
  PyObject* inputs;  // a tuple of loom.Tensor
  // clang-format on
} HandlerOpObject;

static void handler_op_dealloc(HandlerOpObject* self) {
  Py_XDECREF(self->name);
  Py_XDECREF(self->inputs);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* handler_op_get_name(HandlerOpObject* self, void* closure) {
  (void)closure;
  return Py_NewRef(self->name);
}

static PyObject* handler_op_get_inputs(HandlerOpObject* self, void* closure) {
  (void)closure;
  return Py_NewRef(self->inputs);
}

static PyObject* handler_op_get_num_outputs(HandlerOpObject* self,
                                            void* closure) {
  (void)closure;
  if (self->invocation == NULL) Py_RETURN_NONE;
  return PyLong_FromLong(self->invocation->num_results);
}

// run(*inputs): the op on the handler beneath, on `inputs` (none given: the
// op's own); a list of loom.Tensor.
static PyObject* handler_op_run(HandlerOpObject* self, PyObject* args) {
  loom_op_invocation_t* invocation = self->invocation;
  if (invocation == NULL) {
    PyErr_Format(PyExc_RuntimeError,
                 "HandlerOp.run: op %U ran already (run it inside the "
                 "handler's execute)",
                 self->name);
    return NULL;
  }
  PyObject* given = PyTuple_GET_SIZE(args) > 0 ? args : self->inputs;
  Py_ssize_t n = PyTuple_GET_SIZE(given);
  int32_t m = invocation->num_results;
  loom_tensor_handle_t** handles =
      PyMem_Calloc((size_t)(n + m) + 1, sizeof(*handles));
  if (handles == NULL) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* handle =
        loom__py_as_handle(PyTuple_GET_ITEM(given, i));
    if (handle == NULL) {
      for (Py_ssize_t j = 0; j < i; ++j) loom_tensor_handle_release(handles[j]);
      PyMem_Free(handles);
      return NULL;
    }
    loom_tensor_handle_retain(handle);
    handles[i] = handle;
  }
  loom_op_invocation_t beneath = *invocation;
  beneath.arguments = handles;
  beneath.num_arguments = (int32_t)n;
  beneath.results = handles + n;
  loom_context_t* context = self->state->context;
  loom_op_handler_t* outer = outer_of(self->state);
  loom_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = loom_context_forward_arguments(context, outer, &beneath);
  if (status == NULL) {
    status = loom_op_invocation_forward(&beneath, self->beneath);
  }
  Py_END_ALLOW_THREADS;
  PyObject* list = status == NULL ? PyList_New(m) : NULL;
  for (int32_t k = 0; k < m; ++k) {
    loom_tensor_handle_t* result = beneath.results[k];
    if (list == NULL) {
      loom_tensor_handle_release(result);
      continue;
    }
    PyObject* item = loom__py_wrap_handle(result);
    if (item == NULL) {
      Py_CLEAR(list);
      continue;
    }
    PyList_SET_ITEM(list, k, item);
  }
  PyMem_Free(handles);
  if (status != NULL) return loom__py_raise_status(status);
  return list;
}

static PyGetSetDef handler_op_getset[] = {
    {"name", (getter)handler_op_get_name, NULL, "The op's name.", NULL},
    {"inputs", (getter)handler_op_get_inputs, NULL,
     "The op's inputs (a tuple of loom.Tensor).", NULL},
    {"num_outputs", (getter)handler_op_get_num_outputs, NULL,
     "The number of outputs the op gives.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef handler_op_methods[] = {
    {"run", (PyCFunction)handler_op_run, METH_VARARGS,
     "run(*inputs): runs the op with its attributes on the handler beneath "
     "this one, on `inputs` (none: the op's own); returns its outputs."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HandlerOpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loom._loom.HandlerOp",
    .tp_basicsize = sizeof(HandlerOpObject),
    .tp_dealloc = (destructor)handler_op_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An op a Python handler executes (loom.PythonHandler).",
    .tp_getset = handler_op_getset,
    .tp_methods = handler_op_methods,
};

//===----------------------------------------------------------------------===//
// The handler
//===----------------------------------------------------------------------===//

static loom_status_t py_handler_prepare(loom_op_handler_t* handler,
                                        const char* op_name,
                                        const loom_op_def_t* op,
                                        void** out_op_data) {
  (void)op;
  py_handler_t* state = loom_op_handler_state(handler);
  return loom_runtime_prepare_op(loom_op_handler_runtime(handler), op_name,
                                 outer_of(state),
                                 (loom_prepared_op_t**)out_op_data);
}

static void py_handler_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

// The status for the Python exception set now (cleared): UNKNOWN, as
// TensorFlow gives for an exception of a Python function, naming the op
// and the exception; a Loom error keeps its code.
static loom_status_t status_of_exception(PyObject* name) {
  PyObject* type = NULL;
  PyObject* exception = NULL;
  PyObject* traceback = NULL;
  PyErr_Fetch(&type, &exception, &traceback);
  PyErr_NormalizeException(&type, &exception, &traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  if (exception == NULL) {
    return loom_make_status(LOOM_STATUS_UNKNOWN,
                            "%s: the Python handler's execute failed",
                            PyUnicode_AsUTF8(name));
  }
  loom_status_code_t code = LOOM_STATUS_UNKNOWN;
  PyObject* code_object = PyObject_GetAttrString(exception, "code");
  if (code_object != NULL && PyLong_Check(code_object)) {
    long value = PyLong_AsLong(code_object);
    if (value > 0 && value <= LOOM_STATUS_UNAUTHENTICATED) {
      code = (loom_status_code_t)value;
    }
  }
  Py_XDECREF(code_object);
  PyErr_Clear();
  PyObject* text = PyObject_Str(exception);
  const char* message = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  if (message == NULL) {
    PyErr_Clear();
    message = "";
  }
  loom_status_t status = loom_make_status(
      code, "%s: the Python handler's execute raised %s: %s",
      PyUnicode_AsUTF8(name), Py_TYPE(exception)->tp_name, message);
  Py_XDECREF(text);
  Py_DECREF(exception);
  return status;
}

// Stores the outputs `execute` returned (a sequence of num_results
// loom.Tensors) in the invocation's results; an error status otherwise.
static loom_status_t store_results(loom_op_invocation_t* invocation,
                                   PyObject* name, PyObject* returned) {
  PyObject* sequence =
      PySequence_Fast(returned, "execute must return a list of tensors");
  if (sequence == NULL) return status_of_exception(name);
  Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  loom_status_t status = NULL;
  if (count != invocation->num_results) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: the Python handler's execute returned %zd "
                              "outputs, the op has %d",
                              PyUnicode_AsUTF8(name), count,
                              invocation->num_results);
  }
  for (Py_ssize_t k = 0; status == NULL && k < count; ++k) {
    PyObject* item = PySequence_Fast_GET_ITEM(sequence, k);
    if (!loom__py_is_tensor(item)) {
      status =
          loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                           "%s: output %zd of the Python handler's "
                           "execute is a %s, not a loom.Tensor",
                           PyUnicode_AsUTF8(name), k, Py_TYPE(item)->tp_name);
    }
  }
  for (Py_ssize_t k = 0; status == NULL && k < count; ++k) {
    loom_tensor_handle_t* handle =
        loom__py_as_handle(PySequence_Fast_GET_ITEM(sequence, k));
    loom_tensor_handle_retain(handle);
    invocation->results[k] = handle;
  }
  Py_DECREF(sequence);
  return status;
}

// Calls owner.execute(op) for `invocation` (GIL held).
static loom_status_t call_execute(py_handler_t* state, PyObject* owner,
                                  loom_op_invocation_t* invocation) {
  HandlerOpObject* op = PyObject_New(HandlerOpObject, &HandlerOpType);
  if (op == NULL)
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  op->invocation = invocation;
  op->state = state;
  op->beneath = loom_prepared_op_data(invocation->op);
  op->name = PyUnicode_FromString(loom_prepared_op_name(invocation->op));
  op->inputs = PyTuple_New(invocation->num_arguments);
  for (int32_t i = 0; op->name && op->inputs && i < invocation->num_arguments;
       ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    loom_tensor_handle_retain(argument);
    PyObject* tensor = loom__py_wrap_handle(argument);
    if (tensor == NULL) {
      Py_CLEAR(op->inputs);
      break;
    }
    PyTuple_SET_ITEM(op->inputs, i, tensor);
  }
  loom_status_t status = NULL;
  if (op->name == NULL || op->inputs == NULL) {
    PyErr_Clear();
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    PyObject* returned = PyObject_CallMethod(owner, "execute", "O", op);
    status = returned != NULL ? store_results(invocation, op->name, returned)
                              : status_of_exception(op->name);
    Py_XDECREF(returned);
  }
  op->invocation = NULL;
  Py_DECREF(op);
  return status;
}

static loom_status_t py_handler_execute(loom_op_handler_t* handler,
                                        loom_op_invocation_t* invocation) {
  py_handler_t* state = loom_op_handler_state(handler);
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* owner = PyWeakref_GetObject(state->owner);  // borrowed
  if (owner == NULL) PyErr_Clear();
  if (owner == NULL || owner == Py_None) {
    // The Python object is gone: the op passes on as it is.
    PyGILState_Release(gil);
    LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
        state->context, outer_of(state), invocation));
    return loom_op_invocation_forward(invocation,
                                      loom_prepared_op_data(invocation->op));
  }
  Py_INCREF(owner);
  loom_status_t status = call_execute(state, owner, invocation);
  Py_DECREF(owner);
  PyGILState_Release(gil);
  if (status != NULL) {
    for (int32_t k = 0; k < invocation->num_results; ++k) {
      loom_tensor_handle_release(invocation->results[k]);
      invocation->results[k] = NULL;
    }
    return loom_op_invocation_fail(invocation, status, false);
  }
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  return NULL;
}

static void py_handler_destroy(void* opaque) {
  py_handler_t* state = opaque;
  loom_op_handler_release(state->outer);
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_XDECREF(state->owner);
    PyGILState_Release(gil);
  }
  PyMem_RawFree(state);
}

static bool py_handler_takes_foreign_inputs(const loom_op_handler_t* handler,
                                            const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;
}

static loom_status_t make_handler(loom_context_t* context, PyObject* owner,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out);

static loom_status_t py_handler_merge(loom_op_handler_t* handler,
                                      loom_op_handler_t* outer,
                                      loom_op_handler_t** out_merged) {
  py_handler_t* state = loom_op_handler_state(handler);
  PyGILState_STATE gil = PyGILState_Ensure();
  loom_status_t status =
      make_handler(state->context, state->owner, outer, out_merged);
  PyGILState_Release(gil);
  return status;
}

static const loom_op_handler_vtable_t kPythonHandlerVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "PYTHON",
    .prepare = py_handler_prepare,
    .release_op_data = py_handler_release_op_data,
    .execute = py_handler_execute,
    .destroy = py_handler_destroy,
    .merge = py_handler_merge,
    .takes_foreign_inputs = py_handler_takes_foreign_inputs,
};

// A handler calling `owner` (a weak reference, retained; GIL held).
static loom_status_t make_handler(loom_context_t* context, PyObject* owner,
                                  loom_op_handler_t* outer,
                                  loom_op_handler_t** out) {
  py_handler_t* state = PyMem_RawCalloc(1, sizeof(*state));
  if (state == NULL) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  state->context = context;
  state->owner = Py_NewRef(owner);
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_op_handler_create(
      loom_context_runtime(context), &kPythonHandlerVtable, state, NULL, out);
  if (status != NULL) py_handler_destroy(state);
  return status;
}

// python_handler_create(owner) -> a Handler calling owner.execute(op).
PyObject* loom__py_python_handler_create(PyObject* module, PyObject* owner) {
  (void)module;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  PyObject* weak = PyWeakref_NewRef(owner, NULL);
  if (weak == NULL) return NULL;
  loom_op_handler_t* handler = NULL;
  loom_status_t status = make_handler(context, weak, NULL, &handler);
  Py_DECREF(weak);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(handler);
}

int loom__py_python_handler_init(PyObject* module) {
  if (PyType_Ready(&HandlerOpType) < 0) return -1;
  return PyModule_AddObjectRef(module, "HandlerOp", (PyObject*)&HandlerOpType);
}
