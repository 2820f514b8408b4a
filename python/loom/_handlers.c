// The transformation handlers of the `loom` package as Python objects:
// handler scopes and the gradient tape, forward accumulator, logging, vmap
// and trace handlers that loom/_autodiff.py and loom/_transforms.py are
// made of.

#include "_loom.h"

#include <stdio.h>

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

PyObject* loom__py_wrap_handler(loom_op_handler_t* handler) {
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

static PyObject* py_enter_scope(PyObject* module, PyObject* arg) {
  (void)module;
  loom_op_handler_t* handler = as_handler(arg);
  if (handler == NULL) return NULL;
  loom_status_t status = loom_context_enter_scope(loom__py_context(), handler);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject* py_exit_scope(PyObject* module, PyObject* unused) {
  (void)module;
  (void)unused;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  loom_status_t status = loom_context_exit_scope(context);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject* py_tape_create(PyObject* module, PyObject* args) {
  (void)module;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
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
  loom_status_t status = loom_tape_create(context, &options, &tape);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(tape);
}

static PyObject* py_tape_watch(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* tape;
  PyObject* tensor;
  if (!PyArg_ParseTuple(args, "OO", &tape, &tensor)) return NULL;
  loom_op_handler_t* handler = as_handler(tape);
  loom_tensor_handle_t* handle = handler ? loom__py_as_handle(tensor) : NULL;
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
    handles[i] = loom__py_as_handle(item);
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
  loom_tensor_handle_t* t = handler ? loom__py_as_handle(target) : NULL;
  loom_tensor_handle_t* s = t ? loom__py_as_handle(source) : NULL;
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
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  (void)unused;
  loom_op_handler_t* accumulator;
  loom_status_t status = loom_forward_accumulator_create(context, &accumulator);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(accumulator);
}

static PyObject* py_forward_watch(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *acc, *primal, *tangent;
  if (!PyArg_ParseTuple(args, "OOO", &acc, &primal, &tangent)) return NULL;
  loom_op_handler_t* handler = as_handler(acc);
  loom_tensor_handle_t* p = handler ? loom__py_as_handle(primal) : NULL;
  loom_tensor_handle_t* t = p ? loom__py_as_handle(tangent) : NULL;
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
  loom_tensor_handle_t* handle = handler ? loom__py_as_handle(tensor) : NULL;
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
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  int print = 1;
  if (!PyArg_ParseTuple(args, "p", &print)) return NULL;
  loom_op_handler_t* handler;
  loom_status_t status = loom_scope_logging_handler_create(
      context, print ? stderr : NULL, &handler);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(handler);
}

static PyObject* py_logging_count(PyObject* module, PyObject* arg) {
  (void)module;
  loom_op_handler_t* handler = as_handler(arg);
  if (handler == NULL) return NULL;
  return PyLong_FromLongLong(
      (long long)loom_scope_logging_handler_count(handler));
}

// vmap_create(batch_size, randomness): a vmap handler (loom/vmap.h).
static PyObject* py_vmap_create(PyObject* module, PyObject* args) {
  (void)module;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  long long batch_size;
  int randomness;
  if (!PyArg_ParseTuple(args, "Li", &batch_size, &randomness)) return NULL;
  loom_vmap_options_t options;
  loom_vmap_options_initialize(&options);
  options.batch_size = (int64_t)batch_size;
  options.randomness = (loom_vmap_randomness_t)randomness;
  loom_op_handler_t* vmap;
  loom_status_t status =
      loom_vmap_create_with_options(context, &options, &vmap);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(vmap);
}

// vmap_in(vmap, batched, in_axis) / vmap_out(vmap, tensor, out_axis):
// loom_vmap_in / loom_vmap_out (axis -1: unbatched).
static PyObject* vmap_move(PyObject* args, bool in) {
  PyObject *vmap, *tensor;
  long long axis;
  if (!PyArg_ParseTuple(args, "OOL", &vmap, &tensor, &axis)) return NULL;
  loom_op_handler_t* handler = as_handler(vmap);
  loom_tensor_handle_t* handle = handler ? loom__py_as_handle(tensor) : NULL;
  if (handle == NULL) return NULL;
  loom_tensor_handle_t* out;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = in ? loom_vmap_in(handler, handle, (int64_t)axis, &out)
              : loom_vmap_out(handler, handle, (int64_t)axis, &out);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(out);
}

static PyObject* py_vmap_in(PyObject* module, PyObject* args) {
  (void)module;
  return vmap_move(args, true);
}

static PyObject* py_vmap_out(PyObject* module, PyObject* args) {
  (void)module;
  return vmap_move(args, false);
}

static PyObject* py_vmap_fallback_count(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* vmap;
  const char* op_name;
  if (!PyArg_ParseTuple(args, "Os", &vmap, &op_name)) return NULL;
  loom_op_handler_t* handler = as_handler(vmap);
  if (handler == NULL) return NULL;
  return PyLong_FromLongLong(
      (long long)loom_vmap_fallback_count(handler, op_name));
}

// trace_create(name): a deferred trace of function `name` (loom/trace.h).
static PyObject* py_trace_create(PyObject* module, PyObject* args) {
  (void)module;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
  loom_op_handler_t* trace;
  loom_status_t status = loom_trace_create(context, name, &trace);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(trace);
}

// trace_add_parameter(trace, dtype, shape): the symbolic value of a new
// parameter; `shape` a sequence of ints (None: unknown dim) or None.
static PyObject* py_trace_add_parameter(PyObject* module, PyObject* args) {
  (void)module;
  PyObject* trace;
  int dtype;
  PyObject* shape_seq;
  if (!PyArg_ParseTuple(args, "OiO", &trace, &dtype, &shape_seq)) return NULL;
  loom_op_handler_t* handler = as_handler(trace);
  if (handler == NULL) return NULL;
  loom_shape_t shape;
  loom_shape_t* shape_arg = NULL;
  if (shape_seq != Py_None) {
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
      PyObject* item = PySequence_Fast_GET_ITEM(fast, i);
      dims[i] = item == Py_None ? LOOM_UNKNOWN_DIM : PyLong_AsLongLong(item);
    }
    Py_DECREF(fast);
    if (PyErr_Occurred()) return NULL;
    loom_status_t status = loom_shape_initialize_large(&shape, dims, (int)rank);
    if (status != NULL) return loom__py_raise_status(status);
    shape_arg = &shape;
  }
  loom_tensor_handle_t* value;
  loom_status_t status = loom_trace_add_parameter(
      handler, NULL, (loom_dtype_t)dtype, shape_arg, &value);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(value);
}

// trace_finish(trace, outputs): ends the trace (an output that is not a
// value of the trace, an eager tensor, is captured first) and adds the
// function to the context's library.
static PyObject* py_trace_finish(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *trace, *outputs;
  if (!PyArg_ParseTuple(args, "OO", &trace, &outputs)) return NULL;
  loom_op_handler_t* handler = as_handler(trace);
  if (handler == NULL) return NULL;
  PyObject* fast = PySequence_Fast(outputs, "outputs must be a sequence");
  if (fast == NULL) return NULL;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  loom_tensor_handle_t** handles =
      PyMem_Calloc((size_t)count + 1, sizeof(loom_tensor_handle_t*));
  PyObject* result = NULL;
  loom_status_t status = NULL;
  if (handles == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    loom_tensor_handle_t* handle =
        loom__py_as_handle(PySequence_Fast_GET_ITEM(fast, i));
    if (handle == NULL) goto done;
    if (loom_trace_is_symbolic(handle)) {
      loom_tensor_handle_retain(handle);
      handles[i] = handle;
    } else {
      status = loom_trace_capture(handler, handle, &handles[i]);
      if (status != NULL) goto done;
    }
  }
  loom_function_t* function;
  status = loom_trace_finish(handler, handles, (int32_t)count, &function);
  if (status != NULL) goto done;
  status = loom_context_add_function(loom__py_context(), function);
  if (status == NULL)
    result = PyUnicode_FromString(loom_function_name(function));
  loom_function_release(function);
done:
  if (status != NULL) loom__py_raise_status(status);
  if (handles != NULL) {
    for (Py_ssize_t i = 0; i < count; ++i) {
      if (handles[i] != NULL) loom_tensor_handle_release(handles[i]);
    }
    PyMem_Free(handles);
  }
  Py_DECREF(fast);
  return result;
}

// remove_function(name): drops a traced function from the library.
static PyObject* py_remove_function(PyObject* module, PyObject* args) {
  (void)module;
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  loom_status_t status = loom_context_remove_function(context, name);
  if (status != NULL) return loom__py_raise_status(status);
  Py_RETURN_NONE;
}

// function_stats(name): how calls of `name` ran and its node count.
static PyObject* py_function_calls(PyObject* module, PyObject* args) {
  (void)module;
  const char* name;
  if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
  loom_function_t* function;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  loom_status_t status = loom_context_find_function(context, name, &function);
  if (status != NULL) return loom__py_raise_status(status);
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  status = loom_function_get_stats(function, &stats);
  int32_t nodes = loom_function_num_nodes(function);
  loom_function_release(function);
  if (status != NULL) return loom__py_raise_status(status);
  return Py_BuildValue(
      "{sLsLsisLsLsLsLsLsi}", "planned_calls", (long long)stats.planned_calls,
      "plans_built", (long long)stats.plans_built, "planned_nodes",
      (int)stats.planned_nodes, "replays_built", (long long)stats.replays_built,
      "replay_hits", (long long)stats.replay_hits, "frame_calls",
      (long long)stats.frame_calls, "buffers_reused",
      (long long)stats.buffers_reused, "buffers_allocated",
      (long long)stats.buffers_allocated, "nodes", (int)nodes);
}

// parallel_create(devices): a parallel handler over the devices (a
// sequence of names), added to the context (loom/parallel.h).
static PyObject* py_parallel_create(PyObject* module, PyObject* arg) {
  (void)module;
  loom_context_t* context = loom__py_ensure_context();
  if (context == NULL) return NULL;
  PyObject* fast = PySequence_Fast(arg, "devices must be a sequence");
  if (fast == NULL) return NULL;
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  const char** devices = PyMem_Calloc((size_t)count + 1, sizeof(char*));
  if (devices == NULL) {
    Py_DECREF(fast);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    devices[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
    if (devices[i] == NULL) {
      PyMem_Free(devices);
      Py_DECREF(fast);
      return NULL;
    }
  }
  loom_op_handler_t* parallel;
  loom_status_t status =
      loom_parallel_handler_create(context, devices, (int32_t)count, &parallel);
  PyMem_Free(devices);
  Py_DECREF(fast);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handler(parallel);
}

// parallel_info(handler) -> (its device name, [component device names]).
static PyObject* py_parallel_info(PyObject* module, PyObject* arg) {
  (void)module;
  loom_op_handler_t* handler = as_handler(arg);
  if (handler == NULL) return NULL;
  int32_t count = loom_parallel_handler_num_components(handler);
  PyObject* devices = PyList_New(count);
  if (devices == NULL) return NULL;
  for (int32_t k = 0; k < count; ++k) {
    PyObject* name =
        PyUnicode_FromString(loom_parallel_handler_device(handler, k));
    if (name == NULL) {
      Py_DECREF(devices);
      return NULL;
    }
    PyList_SET_ITEM(devices, k, name);
  }
  const char* name = loom_context_handler_name(loom__py_context(), handler);
  return Py_BuildValue("(zN)", name, devices);
}

// parallel_pack(handler, tensors): one parallel value of the components.
static PyObject* py_parallel_pack(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *parallel, *values;
  if (!PyArg_ParseTuple(args, "OO", &parallel, &values)) return NULL;
  loom_op_handler_t* handler = as_handler(parallel);
  if (handler == NULL) return NULL;
  PyObject* fast = PySequence_Fast(values, "pack takes a sequence of tensors");
  if (fast == NULL) return NULL;
  loom_tensor_handle_t** handles = handle_array(fast, false);
  Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  Py_DECREF(fast);
  if (handles == NULL) return NULL;
  loom_tensor_handle_t* out;
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_parallel_pack(handler, handles, (int32_t)count, &out);
  PyEval_RestoreThread(thread_state);
  PyMem_Free(handles);
  if (status != NULL) return loom__py_raise_status(status);
  return loom__py_wrap_handle(out);
}

// parallel_unpack(handler, value): the list of its components.
static PyObject* py_parallel_unpack(PyObject* module, PyObject* args) {
  (void)module;
  PyObject *parallel, *value;
  if (!PyArg_ParseTuple(args, "OO", &parallel, &value)) return NULL;
  loom_op_handler_t* handler = as_handler(parallel);
  loom_tensor_handle_t* handle = handler ? loom__py_as_handle(value) : NULL;
  if (handle == NULL) return NULL;
  int32_t count = loom_parallel_handler_num_components(handler);
  loom_tensor_handle_t** parts =
      PyMem_Calloc((size_t)count + 1, sizeof(loom_tensor_handle_t*));
  if (parts == NULL) return PyErr_NoMemory();
  loom_status_t status;
  PyThreadState* thread_state = PyEval_SaveThread();
  status = loom_parallel_unpack(handler, handle, parts, count);
  PyEval_RestoreThread(thread_state);
  if (status != NULL) {
    PyMem_Free(parts);
    return loom__py_raise_status(status);
  }
  PyObject* list = PyList_New(count);
  for (int32_t k = 0; k < count; ++k) {
    PyObject* item = list != NULL ? loom__py_wrap_handle(parts[k]) : NULL;
    if (list == NULL) loom_tensor_handle_release(parts[k]);
    if (item == NULL) {
      Py_CLEAR(list);
      continue;
    }
    PyList_SET_ITEM(list, k, item);
  }
  PyMem_Free(parts);
  return list;
}

// is_parallel_value(t): whether t is a parallel value.
static PyObject* py_is_parallel_value(PyObject* module, PyObject* arg) {
  (void)module;
  loom_tensor_handle_t* handle = loom__py_as_handle(arg);
  if (handle == NULL) return NULL;
  return PyBool_FromLong(loom_parallel_is_parallel_value(handle));
}

PyMethodDef loom__py_handler_methods[] = {
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
    {"vmap_create", py_vmap_create, METH_VARARGS,
     "vmap_create(batch_size, randomness)."},
    {"vmap_in", py_vmap_in, METH_VARARGS, "vmap_in(vmap, batched, axis)."},
    {"vmap_out", py_vmap_out, METH_VARARGS, "vmap_out(vmap, tensor, axis)."},
    {"vmap_fallback_count", py_vmap_fallback_count, METH_VARARGS,
     "vmap_fallback_count(vmap, op_name)."},
    {"trace_create", py_trace_create, METH_VARARGS, "trace_create(name)."},
    {"trace_add_parameter", py_trace_add_parameter, METH_VARARGS,
     "trace_add_parameter(trace, dtype, shape) -> symbolic tensor."},
    {"trace_finish", py_trace_finish, METH_VARARGS,
     "trace_finish(trace, outputs) -> the function's name (added)."},
    {"remove_function", py_remove_function, METH_VARARGS,
     "remove_function(name)."},
    {"function_stats", py_function_calls, METH_VARARGS,
     "function_stats(name) -> {planned_calls, plans_built, ..., nodes}."},
    {"parallel_create", py_parallel_create, METH_O,
     "parallel_create(devices) -> a parallel handler."},
    {"parallel_info", py_parallel_info, METH_O,
     "parallel_info(handler) -> (device name, component devices)."},
    {"parallel_pack", py_parallel_pack, METH_VARARGS,
     "parallel_pack(handler, tensors) -> a parallel value."},
    {"parallel_unpack", py_parallel_unpack, METH_VARARGS,
     "parallel_unpack(handler, value) -> its components."},
    {"is_parallel_value", py_is_parallel_value, METH_O,
     "is_parallel_value(t)."},
    {"python_handler_create", loom__py_python_handler_create, METH_O,
     "python_handler_create(owner) -> a handler calling owner.execute(op)."},
    {NULL, NULL, 0, NULL},
};

int loom__py_handlers_init(PyObject* module) {
  if (PyType_Ready(&HandlerType) < 0) return -1;
  return PyModule_AddObjectRef(module, "Handler", (PyObject*)&HandlerType);
}
