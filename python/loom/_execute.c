// Op execution for the `loom` package: attributes from Python values,
// inputs, `execute` and the op definitions loom.raw_ops is made from.

#include "_loom.h"

#include <string.h>

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
  if (loom__py_ensure_context() == NULL) return NULL;
  loom_eager_op_t* op;
  loom_status_t status =
      loom_eager_op_acquire(loom__py_context(), op_name, &op);
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

PyMethodDef loom__py_execute_methods[] = {
    {"execute", py_execute, METH_VARARGS,
     "execute(op_name, inputs, attrs): runs an op; returns its results."},
    {"op_defs", py_op_defs, METH_NOARGS,
     "op_defs(): the registered op definitions."},
    {NULL, NULL, 0, NULL},
};
