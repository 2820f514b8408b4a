// Op execution for the `loom` package: attributes from Python values,
// inputs, `execute` and the op definitions loom.raw_ops is made from, and
// the fast path of a call with tensors only (loom.raw_ops.X(a, b), a + b),
// which keeps its prepared op between calls.

#include "_loom.h"

#include <stddef.h>
#include <string.h>

#include "structmember.h"

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
int loom__py_set_attr(loom_op_attrs_t* attrs, const loom_op_def_t* op,
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
      if (!loom__py_is_tensor(value)) {
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
    if (loom__py_is_tensor(item)) {
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
        handles[j] = loom__py_as_handle(PySequence_Fast_GET_ITEM(list, j));
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

// In a device's scope (loom.device) the op is placed on that device
// explicitly, as tf.device places it, wherever its inputs are; in a
// transformation's scope it is left to the scope.
static loom_status_t place_in_device_scope(loom_eager_op_t* op) {
  loom_context_t* context = loom_eager_op_context(op);
  loom_op_handler_t* top = loom_context_scope_handler(context);
  if (top == NULL || !loom_op_handler_is_final(top)) return loom_ok_status();
  const char* name = loom_context_handler_name(context, top);
  return name != NULL ? loom_eager_op_set_device(op, name) : loom_ok_status();
}

#define MAX_RESULTS 256

// execute(op_name, inputs, attrs, device=None): runs a registered op;
// `inputs` holds one tensor or list of tensors per input argument, `attrs`
// maps attribute names to values; `device` places it explicitly. Returns
// the tuple of results.
static PyObject* py_execute(PyObject* module, PyObject* args) {
  (void)module;
  const char* op_name;
  PyObject* inputs;
  PyObject* attrs;
  const char* device = NULL;
  if (!PyArg_ParseTuple(args, "sOO!|z", &op_name, &inputs, &PyDict_Type, &attrs,
                        &device)) {
    return NULL;
  }
  if (loom__py_ensure_context() == NULL) return NULL;
  loom_eager_op_t* op;
  loom_status_t status =
      loom_eager_op_acquire(loom__py_context(), op_name, &op);
  if (status != NULL) return loom__py_raise_status(status);
  const loom_op_def_t* def = loom_eager_op_def(op);
  loom_tensor_handle_t* results[MAX_RESULTS];
  int32_t count = 0;
  status = device != NULL ? loom_eager_op_set_device(op, device)
                          : place_in_device_scope(op);
  if (status != NULL) {
    loom__py_raise_status(status);
    goto fail;
  }
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
    if (loom__py_set_attr(loom_eager_op_attrs(op), def, attr, value) < 0)
      goto fail;
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
//===----------------------------------------------------------------------===//
// The fast path: tensors by position, no attributes
//===----------------------------------------------------------------------===//

// How an op's results are returned to Python.
enum {
  OUTPUTS_NONE = 0,   // no outputs: None
  OUTPUTS_ONE = 1,    // one tensor
  OUTPUTS_LIST = 2,   // one list argument: a list
  OUTPUTS_TUPLE = 3,  // several arguments: the tuple
};

// Results as `outputs` says; the handles (count of them) move in.
static PyObject* wrap_results(loom_tensor_handle_t** results, int32_t count,
                              int outputs) {
  if (outputs == OUTPUTS_ONE && count == 1) {
    return loom__py_wrap_handle(results[0]);
  }
  PyObject* sequence =
      outputs == OUTPUTS_LIST ? PyList_New(count) : PyTuple_New(count);
  for (int32_t i = 0; i < count; ++i) {
    PyObject* item = sequence != NULL ? loom__py_wrap_handle(results[i]) : NULL;
    if (item == NULL) {
      if (sequence == NULL) loom_tensor_handle_release(results[i]);
      Py_CLEAR(sequence);
      continue;
    }
    if (outputs == OUTPUTS_LIST) {
      PyList_SET_ITEM(sequence, i, item);
    } else {
      PyTuple_SET_ITEM(sequence, i, item);
    }
  }
  if (sequence != NULL && outputs == OUTPUTS_NONE) {
    Py_DECREF(sequence);
    Py_RETURN_NONE;
  }
  return sequence;
}

// Whether an op that just ran can be kept for the next call as it is
// (reset, its prepared kernel kept): only when it ran on a device
// handler, so that an idle op never keeps a transformation alive.
static bool keepable(loom_eager_op_t* op, PyObject* const* args,
                     Py_ssize_t count) {
  if (loom_context_scope_handler(loom_eager_op_context(op)) != NULL) {
    return false;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    loom_tensor_handle_t* handle = ((TensorObject*)args[i])->handle;
    if (!loom_op_handler_is_final(loom_tensor_handle_handler(handle))) {
      return false;
    }
  }
  return true;
}

// Runs op `name` on the tensors args[0, count) with no attributes. `*cache`
// holds an idle op of that name between calls (NULL while a call, maybe
// on another thread, uses it): taking it skips the context's pool.
static PyObject* run_plain(const char* name, loom_eager_op_t** cache,
                           PyObject* const* args, Py_ssize_t count,
                           int outputs) {
  loom_eager_op_t* op = *cache;
  loom_status_t status;
  if (op != NULL) {
    *cache = NULL;
  } else {
    if (loom__py_ensure_context() == NULL) return NULL;
    status = loom_eager_op_acquire(loom__py_context(), name, &op);
    if (status != NULL) return loom__py_raise_status(status);
  }
  status = place_in_device_scope(op);
  if (status != NULL) {
    loom_eager_op_recycle(op);
    return loom__py_raise_status(status);
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    status = loom_eager_op_add_input(op, ((TensorObject*)args[i])->handle);
    if (status != NULL) {
      loom_eager_op_recycle(op);
      return loom__py_raise_status(status);
    }
  }
  loom_tensor_handle_t* results[MAX_RESULTS];
  int32_t result_count = 0;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_eager_op_execute(op, results, MAX_RESULTS, &result_count);
  PyEval_RestoreThread(thread_state);
  if (*cache == NULL && keepable(op, args, count) &&
      loom_eager_op_reset(op, NULL) == NULL) {
    *cache = op;
  } else {
    loom_eager_op_recycle(op);
  }
  if (status != NULL) return loom__py_raise_status(status);
  return wrap_results(results, result_count, outputs);
}

// A registered op as a callable (loom.raw_ops.X): a call with exactly its
// tensors by position runs the op here; any other call goes to the
// general Python function it was made with.
// clang-format off
typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  // clang-format on
  PyObject* dict;  // __doc__, __signature__, __name__, ...
  PyObject* general;
  char* name;
  Py_ssize_t num_inputs;
  int outputs;
  loom_eager_op_t* cache;
} OpObject;

static PyObject* op_vectorcall(OpObject* self, PyObject* const* args,
                               size_t nargsf, PyObject* kwnames) {
  Py_ssize_t count = PyVectorcall_NARGS(nargsf);
  bool plain = kwnames == NULL && count == self->num_inputs;
  for (Py_ssize_t i = 0; plain && i < count; ++i) {
    plain = loom__py_is_tensor(args[i]);
  }
  if (!plain) return PyObject_Vectorcall(self->general, args, nargsf, kwnames);
  return run_plain(self->name, &self->cache, args, count, self->outputs);
}

static PyObject* op_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"name", "num_inputs", "outputs", "general", NULL};
  const char* name;
  Py_ssize_t num_inputs;
  int outputs;
  PyObject* general;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sniO", keywords, &name,
                                   &num_inputs, &outputs, &general)) {
    return NULL;
  }
  if (!PyCallable_Check(general)) {
    PyErr_SetString(PyExc_TypeError, "general must be callable");
    return NULL;
  }
  OpObject* self = (OpObject*)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  size_t size = strlen(name) + 1;
  self->name = PyMem_Malloc(size);
  if (self->name == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  memcpy(self->name, name, size);
  self->num_inputs = num_inputs;
  self->outputs = outputs;
  self->general = Py_NewRef(general);
  self->vectorcall = (vectorcallfunc)op_vectorcall;
  return (PyObject*)self;
}

static int op_traverse(OpObject* self, visitproc visit, void* arg) {
  Py_VISIT(self->dict);
  Py_VISIT(self->general);
  return 0;
}

static int op_clear(OpObject* self) {
  Py_CLEAR(self->dict);
  Py_CLEAR(self->general);
  return 0;
}

static void op_dealloc(OpObject* self) {
  PyObject_GC_UnTrack(self);
  op_clear(self);
  if (self->cache != NULL) loom_eager_op_recycle(self->cache);
  PyMem_Free(self->name);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* op_descr_get(PyObject* self, PyObject* instance,
                              PyObject* owner) {
  (void)instance;
  (void)owner;
  return Py_NewRef(self);  // a function of a module, never a method
}

static PyMemberDef op_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(OpObject, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(OpObject, vectorcall),
     READONLY, NULL},
    {"op_name", T_STRING, offsetof(OpObject, name), READONLY,
     "The registered op's name."},
    {"general", T_OBJECT, offsetof(OpObject, general), READONLY,
     "The function that takes every other call."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject OpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loom._loom.Op",
    .tp_basicsize = sizeof(OpObject),
    .tp_dealloc = (destructor)op_dealloc,
    .tp_vectorcall_offset = offsetof(OpObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc =
        "Op(name, num_inputs, outputs, general): a registered op as "
        "a function; calls with exactly its tensors by position run "
        "it directly, others call `general`.",
    .tp_traverse = (traverseproc)op_traverse,
    .tp_clear = (inquiry)op_clear,
    .tp_members = op_members,
    .tp_descr_get = op_descr_get,
    .tp_dictoffset = offsetof(OpObject, dict),
    .tp_new = op_new,
};

// Tensor operators on two tensors run their op here; any other operand
// goes to the NumPy-style function loom/_tensor.py gives (set_operators).
enum { BINARY_ADD, BINARY_SUB, BINARY_MUL, BINARY_COUNT };
static const char* const kBinaryOps[BINARY_COUNT] = {"AddV2", "Sub", "Mul"};
static loom_eager_op_t* g_binary_cache[BINARY_COUNT];
static PyObject* g_binary_general[BINARY_COUNT];

static PyObject* tensor_binary(PyObject* a, PyObject* b, int which) {
  if (loom__py_is_tensor(a) && loom__py_is_tensor(b)) {
    PyObject* args[2] = {a, b};
    return run_plain(kBinaryOps[which], &g_binary_cache[which], args, 2,
                     OUTPUTS_ONE);
  }
  if (g_binary_general[which] == NULL) Py_RETURN_NOTIMPLEMENTED;
  return PyObject_CallFunctionObjArgs(g_binary_general[which], a, b, NULL);
}

static PyObject* tensor_add(PyObject* a, PyObject* b) {
  return tensor_binary(a, b, BINARY_ADD);
}

static PyObject* tensor_sub(PyObject* a, PyObject* b) {
  return tensor_binary(a, b, BINARY_SUB);
}

static PyObject* tensor_mul(PyObject* a, PyObject* b) {
  return tensor_binary(a, b, BINARY_MUL);
}

PyNumberMethods loom__py_tensor_number_methods = {
    .nb_add = tensor_add,
    .nb_subtract = tensor_sub,
    .nb_multiply = tensor_mul,
};

// set_operators(add, subtract, multiply): the functions taking operators
// with an operand that is not a tensor.
static PyObject* py_set_operators(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* functions[BINARY_COUNT];
  if (!PyArg_ParseTuple(args, "OOO", &functions[BINARY_ADD],
                        &functions[BINARY_SUB], &functions[BINARY_MUL])) {
    return NULL;
  }
  for (int i = 0; i < BINARY_COUNT; ++i) {
    Py_XSETREF(g_binary_general[i], Py_NewRef(functions[i]));
  }
  Py_RETURN_NONE;
}

int loom__py_execute_init(PyObject* module) {
  if (PyType_Ready(&OpType) < 0) return -1;
  return PyModule_AddObjectRef(module, "Op", (PyObject*)&OpType);
}

PyMethodDef loom__py_execute_methods[] = {
    {"execute", py_execute, METH_VARARGS,
     "execute(op_name, inputs, attrs, device=None): runs an op; returns its "
     "results."},
    {"op_defs", py_op_defs, METH_NOARGS,
     "op_defs(): the registered op definitions."},
    {"set_operators", py_set_operators, METH_VARARGS,
     "set_operators(add, subtract, multiply): the operators' general "
     "functions."},
    {NULL, NULL, 0, NULL},
};
