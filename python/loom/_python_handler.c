// Handlers written in Python (loom.PythonHandler): an op handler made with
// Loom's public op-handler API (loom/op_handler.h) whose execute calls the
// Python object's `execute(op)`. `op` is a HandlerOp: the op's name, its
// inputs as loom.Tensors, its attributes (a dict), its number of outputs,
// and `run(*inputs, attrs=None)`, which runs the op (with its attributes,
// those given replacing them, on the given inputs or its own) on the
// handler beneath this one and returns its outputs. `execute` returns the
// op's outputs: a handler may watch, change the inputs or attributes,
// replace the outputs, or fail the op by raising.
//
// Whole function calls (execute_function_call) go to the object's
// `call(fn)`: `fn` is a HandlerCall (the function's name, its inputs, its
// number of outputs, `run()` running the body op by op beneath this
// handler); `call` returns the outputs to take the call as one op, or None
// to leave it (its body's ops then reach `execute` one by one).
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

// The owner whose call's body this thread runs (HandlerCall.run): the
// body's ops pass that handler without reaching Python.
static _Thread_local PyObject* t_running_call;

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

// An attribute value as Python: bool, int, float, loom.DType, a shape as a
// tuple (None: an unknown dimension or rank), str (bytes when not UTF-8),
// a function's name, a tensor as a loom.Tensor, a list of those.
static PyObject* attr_to_python(const loom_attr_value_t* value) {
  if (value->is_list) {
    PyObject* list = PyList_New(value->count);
    for (int64_t i = 0; list != NULL && i < value->count; ++i) {
      loom_attr_value_t element;
      loom_status_t status = loom_attr_value_list_element(value, i, &element);
      PyObject* item = status != NULL ? loom__py_raise_status(status)
                                      : attr_to_python(&element);
      if (item == NULL) {
        Py_CLEAR(list);
        break;
      }
      PyList_SET_ITEM(list, i, item);
    }
    return list;
  }
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      return PyBool_FromLong(value->u.b);
    case LOOM_ATTR_KIND_I32:
      return PyLong_FromLong(value->u.i32);
    case LOOM_ATTR_KIND_I64:
      return PyLong_FromLongLong(value->u.i64);
    case LOOM_ATTR_KIND_F32:
      return PyFloat_FromDouble(value->u.f32);
    case LOOM_ATTR_KIND_F64:
      return PyFloat_FromDouble(value->u.f64);
    case LOOM_ATTR_KIND_DTYPE: {
      PyObject* dtypes = PyImport_ImportModule("loom.dtypes");
      if (dtypes == NULL) return NULL;
      PyObject* dtype =
          PyObject_CallMethod(dtypes, "as_dtype", "i", (int)value->u.dtype);
      Py_DECREF(dtypes);
      return dtype;
    }
    case LOOM_ATTR_KIND_SHAPE: {
      if (value->u.shape.rank < 0) Py_RETURN_NONE;
      PyObject* dims = PyTuple_New(value->u.shape.rank);
      for (int32_t d = 0; dims != NULL && d < value->u.shape.rank; ++d) {
        int64_t dim = value->u.shape.dims[d];
        PyObject* item =
            dim < 0 ? Py_NewRef(Py_None) : PyLong_FromLongLong(dim);
        if (item == NULL) {
          Py_CLEAR(dims);
          break;
        }
        PyTuple_SET_ITEM(dims, d, item);
      }
      return dims;
    }
    case LOOM_ATTR_KIND_STRING:
    case LOOM_ATTR_KIND_FUNC: {
      PyObject* text = PyUnicode_DecodeUTF8(
          value->u.string.data, (Py_ssize_t)value->u.string.size, NULL);
      if (text != NULL || value->kind == LOOM_ATTR_KIND_FUNC) return text;
      PyErr_Clear();
      return PyBytes_FromStringAndSize(value->u.string.data,
                                       (Py_ssize_t)value->u.string.size);
    }
    case LOOM_ATTR_KIND_TENSOR: {
      loom_context_t* context = loom__py_ensure_context();
      if (context == NULL) return NULL;
      loom_tensor_handle_t* handle = NULL;
      loom_status_t status =
          loom_context_new_handle(context, value->u.tensor, &handle);
      if (status != NULL) return loom__py_raise_status(status);
      return loom__py_wrap_handle(handle);
    }
    default:
      PyErr_Format(PyExc_NotImplementedError,
                   "an attribute of kind %s has no Python value yet",
                   loom_attr_kind_name(value->kind));
      return NULL;
  }
}

// The attributes the op was given, as a dict (not its definition's
// defaults).
static PyObject* handler_op_get_attrs(HandlerOpObject* self, void* closure) {
  (void)closure;
  PyObject* dict = PyDict_New();
  const loom_op_attrs_t* attrs =
      self->invocation != NULL ? self->invocation->attrs : NULL;
  size_t count = attrs != NULL ? loom_op_attrs_count(attrs) : 0;
  for (size_t i = 0; dict != NULL && i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(attrs, i, &name, &value)) continue;
    PyObject* item = attr_to_python(&value);
    if (item == NULL || PyDict_SetItemString(dict, name, item) < 0) {
      Py_XDECREF(item);
      Py_CLEAR(dict);
      break;
    }
    Py_DECREF(item);
  }
  return dict;
}

// The op's attributes with `given` (a dict, may be NULL) replacing them,
// into `out` (initialized here); -1 with a Python exception on error.
static int merged_attrs(const loom_op_invocation_t* invocation, PyObject* given,
                        loom_op_attrs_t* out) {
  loom_op_attrs_initialize(out, loom_allocator_default());
  const loom_op_attrs_t* attrs = invocation->attrs;
  size_t count = attrs != NULL ? loom_op_attrs_count(attrs) : 0;
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(attrs, i, &name, &value)) continue;
    loom_status_t status = loom_op_attrs_set_value(out, name, &value);
    if (status != NULL) {
      loom__py_raise_status(status);
      return -1;
    }
  }
  const loom_op_def_t* def = loom_prepared_op_def(invocation->op);
  PyObject* key = NULL;
  PyObject* item = NULL;
  Py_ssize_t position = 0;
  while (PyDict_Next(given, &position, &key, &item)) {
    const char* name = PyUnicode_AsUTF8(key);
    if (name == NULL) return -1;
    const loom_attr_def_t* attr =
        def != NULL ? loom_op_def_find_attr(def, name) : NULL;
    if (attr == NULL) {
      PyErr_Format(PyExc_TypeError, "HandlerOp.run: %s has no attribute '%s'",
                   loom_prepared_op_name(invocation->op), name);
      return -1;
    }
    if (loom__py_set_attr(out, def, attr, item) < 0) return -1;
  }
  return 0;
}

// run(*inputs, attrs=None): the op on the handler beneath, on `inputs`
// (none given: the op's own), with its attributes (those of `attrs`
// replacing them); a list of loom.Tensor.
static PyObject* handler_op_run(HandlerOpObject* self, PyObject* args,
                                PyObject* kwargs) {
  loom_op_invocation_t* invocation = self->invocation;
  if (invocation == NULL) {
    PyErr_Format(PyExc_RuntimeError,
                 "HandlerOp.run: op %U ran already (run it inside the "
                 "handler's execute)",
                 self->name);
    return NULL;
  }
  PyObject* attrs = NULL;
  if (kwargs != NULL) {
    attrs = PyDict_GetItemString(kwargs, "attrs");  // borrowed
    if (PyDict_Size(kwargs) != (attrs != NULL ? 1 : 0)) {
      PyErr_SetString(PyExc_TypeError,
                      "HandlerOp.run takes one keyword argument, attrs");
      return NULL;
    }
    if (attrs == Py_None) attrs = NULL;
    if (attrs != NULL && !PyDict_Check(attrs)) {
      PyErr_SetString(PyExc_TypeError, "HandlerOp.run: attrs must be a dict");
      return NULL;
    }
  }
  loom_op_attrs_t merged;
  if (attrs != NULL && merged_attrs(invocation, attrs, &merged) < 0) {
    loom_op_attrs_deinitialize(&merged);
    return NULL;
  }
  PyObject* given = PyTuple_GET_SIZE(args) > 0 ? args : self->inputs;
  Py_ssize_t n = PyTuple_GET_SIZE(given);
  int32_t m = invocation->num_results;
  loom_tensor_handle_t** handles =
      PyMem_Calloc((size_t)(n + m) + 1, sizeof(*handles));
  if (handles == NULL) {
    if (attrs != NULL) loom_op_attrs_deinitialize(&merged);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    loom_tensor_handle_t* handle =
        loom__py_as_handle(PyTuple_GET_ITEM(given, i));
    if (handle == NULL) {
      for (Py_ssize_t j = 0; j < i; ++j) loom_tensor_handle_release(handles[j]);
      PyMem_Free(handles);
      if (attrs != NULL) loom_op_attrs_deinitialize(&merged);
      return NULL;
    }
    loom_tensor_handle_retain(handle);
    handles[i] = handle;
  }
  loom_op_invocation_t beneath = *invocation;
  if (attrs != NULL) beneath.attrs = &merged;
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
  if (attrs != NULL) loom_op_attrs_deinitialize(&merged);
  if (status != NULL) return loom__py_raise_status(status);
  return list;
}

static PyGetSetDef handler_op_getset[] = {
    {"name", (getter)handler_op_get_name, NULL, "The op's name.", NULL},
    {"inputs", (getter)handler_op_get_inputs, NULL,
     "The op's inputs (a tuple of loom.Tensor).", NULL},
    {"num_outputs", (getter)handler_op_get_num_outputs, NULL,
     "The number of outputs the op gives.", NULL},
    {"attrs", (getter)handler_op_get_attrs, NULL,
     "The attributes the op was given (a dict; not its defaults).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef handler_op_methods[] = {
    {"run", (PyCFunction)(void (*)(void))handler_op_run,
     METH_VARARGS | METH_KEYWORDS,
     "run(*inputs, attrs=None): runs the op with its attributes (those in "
     "`attrs` replacing them) on the handler beneath this one, on `inputs` "
     "(none: the op's own); returns its outputs."},
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

// Stores the outputs the handler's `method` returned (a sequence of `m`
// loom.Tensors) in results[0, m); an error status otherwise.
static loom_status_t store_results(const char* method, PyObject* name,
                                   PyObject* returned,
                                   loom_tensor_handle_t** results, int32_t m) {
  PyObject* sequence =
      PySequence_Fast(returned, "the handler must return a list of tensors");
  if (sequence == NULL) return status_of_exception(name);
  Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
  loom_status_t status = NULL;
  if (count != m) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: the Python handler's %s returned %zd "
                              "outputs, expected %d",
                              PyUnicode_AsUTF8(name), method, count, m);
  }
  for (Py_ssize_t k = 0; status == NULL && k < count; ++k) {
    PyObject* item = PySequence_Fast_GET_ITEM(sequence, k);
    if (!loom__py_is_tensor(item)) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s: output %zd of the Python handler's %s "
                                "is a %s, not a loom.Tensor",
                                PyUnicode_AsUTF8(name), k, method,
                                Py_TYPE(item)->tp_name);
    }
  }
  for (Py_ssize_t k = 0; status == NULL && k < count; ++k) {
    loom_tensor_handle_t* handle =
        loom__py_as_handle(PySequence_Fast_GET_ITEM(sequence, k));
    loom_tensor_handle_retain(handle);
    results[k] = handle;
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
    status = returned != NULL
                 ? store_results("execute", op->name, returned,
                                 invocation->results, invocation->num_results)
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
  if (t_running_call == state->owner) {
    // The body of a call the handler took (HandlerCall.run): on as it is.
    LOOM_RETURN_IF_ERROR(loom_context_forward_arguments(
        state->context, outer_of(state), invocation));
    return loom_op_invocation_forward(invocation,
                                      loom_prepared_op_data(invocation->op));
  }
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

//===----------------------------------------------------------------------===//
// HandlerCall: a whole function call the handler may take
//===----------------------------------------------------------------------===//

// clang-format off
typedef struct {
  PyObject_HEAD
  // Valid while the handler's call() runs, then NULL: `run` fails.
  loom_function_call_t* call;
  py_handler_t* state;
  PyObject* name;
  PyObject* inputs;  // the parameters, a tuple of loom.Tensor
  // clang-format on
} HandlerCallObject;

static void handler_call_dealloc(HandlerCallObject* self) {
  Py_XDECREF(self->name);
  Py_XDECREF(self->inputs);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* handler_call_get_name(HandlerCallObject* self, void* closure) {
  (void)closure;
  return Py_NewRef(self->name);
}

static PyObject* handler_call_get_inputs(HandlerCallObject* self,
                                         void* closure) {
  (void)closure;
  return Py_NewRef(self->inputs);
}

static PyObject* handler_call_get_num_outputs(HandlerCallObject* self,
                                              void* closure) {
  (void)closure;
  if (self->call == NULL) Py_RETURN_NONE;
  return PyLong_FromLong(self->call->num_outputs);
}

// run(): the body op by op beneath the handler (its ops do not reach
// `execute`); a list of loom.Tensor.
static PyObject* handler_call_run(HandlerCallObject* self,
                                  PyObject* Py_UNUSED(ignored)) {
  loom_function_call_t* call = self->call;
  if (call == NULL) {
    PyErr_Format(PyExc_RuntimeError,
                 "HandlerCall.run: the call of %U is over (run it inside the "
                 "handler's call)",
                 self->name);
    return NULL;
  }
  int32_t m = call->num_outputs;
  loom_tensor_handle_t** results =
      PyMem_Calloc((size_t)m + 1, sizeof(*results));
  if (results == NULL) return PyErr_NoMemory();
  PyObject* previous = t_running_call;
  loom_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  t_running_call = self->state->owner;
  status = call->run(call, results);
  t_running_call = previous;
  Py_END_ALLOW_THREADS;
  PyObject* list = status == NULL ? PyList_New(m) : NULL;
  for (int32_t k = 0; k < m; ++k) {
    PyObject* item = list != NULL ? loom__py_wrap_handle(results[k]) : NULL;
    if (list == NULL || item == NULL) {
      if (list == NULL) loom_tensor_handle_release(results[k]);
      Py_CLEAR(list);
      continue;
    }
    PyList_SET_ITEM(list, k, item);
  }
  PyMem_Free(results);
  if (status != NULL) return loom__py_raise_status(status);
  return list;
}

static PyGetSetDef handler_call_getset[] = {
    {"name", (getter)handler_call_get_name, NULL, "The function's name.", NULL},
    {"inputs", (getter)handler_call_get_inputs, NULL,
     "The call's inputs (a tuple of loom.Tensor).", NULL},
    {"num_outputs", (getter)handler_call_get_num_outputs, NULL,
     "The number of outputs the call gives.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef handler_call_methods[] = {
    {"run", (PyCFunction)handler_call_run, METH_NOARGS,
     "run(): runs the function's body op by op beneath this handler (its "
     "ops do not reach execute); returns its outputs."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HandlerCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loom._loom.HandlerCall",
    .tp_basicsize = sizeof(HandlerCallObject),
    .tp_dealloc = (destructor)handler_call_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc =
        "A function call a Python handler may take whole "
        "(loom.PythonHandler.call).",
    .tp_getset = handler_call_getset,
    .tp_methods = handler_call_methods,
};

// Offers the call to owner.call(fn) (GIL held): None leaves it.
static loom_status_t offer_call(py_handler_t* state, PyObject* owner,
                                loom_function_call_t* call,
                                loom_tensor_handle_t** results,
                                bool* out_taken) {
  PyObject* method = PyObject_GetAttrString(owner, "call");
  if (method == NULL) {
    PyErr_Clear();  // no call(): every call is left
    return NULL;
  }
  HandlerCallObject* fn = PyObject_New(HandlerCallObject, &HandlerCallType);
  if (fn == NULL) {
    Py_DECREF(method);
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  int32_t n = call->num_inputs - call->num_captured;
  fn->call = call;
  fn->state = state;
  fn->name = PyUnicode_FromString(call->function_name);
  fn->inputs = PyTuple_New(n);
  for (int32_t i = 0; fn->name && fn->inputs && i < n; ++i) {
    loom_tensor_handle_retain(call->inputs[i]);
    PyObject* tensor = loom__py_wrap_handle(call->inputs[i]);
    if (tensor == NULL) {
      Py_CLEAR(fn->inputs);
      break;
    }
    PyTuple_SET_ITEM(fn->inputs, i, tensor);
  }
  loom_status_t status = NULL;
  if (fn->name == NULL || fn->inputs == NULL) {
    PyErr_Clear();
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } else {
    PyObject* returned =
        PyObject_CallFunctionObjArgs(method, (PyObject*)fn, NULL);
    if (returned == NULL) {
      status = status_of_exception(fn->name);
      *out_taken = true;
    } else if (returned != Py_None) {
      status =
          store_results("call", fn->name, returned, results, call->num_outputs);
      *out_taken = true;
    }
    Py_XDECREF(returned);
  }
  fn->call = NULL;
  Py_DECREF(fn);
  Py_DECREF(method);
  return status;
}

static loom_status_t py_handler_execute_function_call(
    loom_op_handler_t* handler, loom_function_call_t* call,
    loom_tensor_handle_t** results, bool* out_taken) {
  *out_taken = false;
  py_handler_t* state = loom_op_handler_state(handler);
  if (t_running_call == state->owner) return NULL;  // inside a taken call
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* owner = PyWeakref_GetObject(state->owner);  // borrowed
  if (owner == NULL) PyErr_Clear();
  loom_status_t status = NULL;
  if (owner != NULL && owner != Py_None) {
    Py_INCREF(owner);
    status = offer_call(state, owner, call, results, out_taken);
    Py_DECREF(owner);
  }
  PyGILState_Release(gil);
  // (On an error nothing was written to results.)
  return status;
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
    .execute_function_call = py_handler_execute_function_call,
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
  if (PyType_Ready(&HandlerCallType) < 0) return -1;
  if (PyModule_AddObjectRef(module, "HandlerCall",
                            (PyObject*)&HandlerCallType) < 0) {
    return -1;
  }
  return PyModule_AddObjectRef(module, "HandlerOp", (PyObject*)&HandlerOpType);
}
