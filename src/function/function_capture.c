// Captured values of traced functions (function_capture.h): the call
// signature without them, and calls that bind them.

#include "function/function_capture.h"

#include <stdio.h>

#include "frontend/eager_op_internal.h"
#include "function/function_call.h"
#include "function/function_internal.h"
#include "registry/op_registry_internal.h"

const loom_op_def_t* loom__function_call_signature(
    const loom_function_t* function) {
  return function->captures ? function->captures->signature
                            : function->signature;
}

int32_t loom__function_num_captures(const loom_function_t* function) {
  return function && function->captures ? function->captures->count : 0;
}

void loom__function_release_captures(loom_function_t* function) {
  loom__function_captures_t* captures = function->captures;
  if (!captures) return;
  for (int32_t i = 0; i < captures->count; ++i) {
    loom_tensor_handle_release(captures->handles[i]);
  }
  loom_allocator_free(function->allocator, captures->handles);
  loom_op_registry_destroy(captures->registry);
  loom_allocator_free(function->allocator, captures);
  function->captures = NULL;
}

// The call signature: the function's without its last `count` inputs.
static loom_status_t make_call_signature(loom_function_t* function,
                                         int32_t count,
                                         loom__function_captures_t* captures) {
  LOOM_RETURN_IF_ERROR(
      loom_op_registry_create(function->allocator, &captures->registry));
  loom_op_def_builder_t* def = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(function->allocator, function->name, &def));
  loom_status_t status = loom_ok_status();
  char spec[512];
  int32_t visible = function->num_inputs - count;
  for (int32_t pass = 0; pass < 2 && !status; ++pass) {
    const loom__function_arg_t* args =
        pass ? function->outputs : function->inputs;
    int32_t n = pass ? function->num_outputs : visible;
    for (int32_t i = 0; !status && i < n; ++i) {
      snprintf(spec, sizeof(spec), "%s: %s", args[i].name,
               loom_dtype_name(args[i].dtype));
      status = pass ? loom_op_def_builder_add_output(def, spec)
                    : loom_op_def_builder_add_input(def, spec);
    }
  }
  loom_op_def_builder_set_is_stateful(def, function->stateful);
  if (status) {
    loom_op_def_builder_destroy(def);
  } else {
    // The function's own registry, never part of a plugin's load (and gone
    // with the function, perhaps before a load's rollback).
    loom__registration_journal_exempt_begin();
    status = loom_op_registry_register(captures->registry, def);
    loom__registration_journal_exempt_end();
  }
  if (!status) {
    status = loom_op_registry_lookup(captures->registry, function->name,
                                     &captures->signature);
  }
  return status;
}

loom_status_t loom__function_set_captures(loom_function_t* function,
                                          loom_tensor_handle_t* const* handles,
                                          int32_t count) {
  if (count <= 0) return loom_ok_status();
  if (function->captures || count > function->num_inputs) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "function '%s': %d captures for %d inputs",
                            function->name, count, function->num_inputs);
  }
  loom__function_captures_t* captures = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      function->allocator, sizeof(*captures), (void**)&captures));
  loom_status_t status = loom_allocator_calloc(
      function->allocator, sizeof(*captures->handles) * (size_t)count,
      (void**)&captures->handles);
  if (!status) status = make_call_signature(function, count, captures);
  function->captures = captures;
  if (status) {
    loom__function_release_captures(function);
    return status;
  }
  for (int32_t i = 0; i < count; ++i) {
    loom_tensor_handle_retain(handles[i]);
    captures->handles[i] = handles[i];
  }
  captures->count = count;
  return loom_ok_status();
}

loom_status_t loom__function_call_captured(
    loom_eager_op_t* op, loom_function_t* function, bool partitioned,
    loom_tensor_handle_t** results, int32_t capacity, int32_t* out_count) {
  *out_count = 0;
  const loom__function_captures_t* captures = function->captures;
  int32_t n = loom_eager_op_num_inputs(op);
  int32_t expected = function->num_inputs - captures->count;
  if (n != expected) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s' takes %d input(s), got %d (its %d "
                            "captured value(s) are bound by the function)",
                            function->name, expected, n, captures->count);
  }
  // The call runs as an op of the function's own name with the captured
  // values added: `op` (perhaps a PartitionedCall, whose Tin lists the
  // visible inputs only) stays as its caller made it.
  loom_eager_op_t* call = NULL;
  loom_status_t status =
      loom_eager_op_acquire(loom_eager_op_context(op), function->name, &call);
  const char* device = loom_eager_op_device(op);
  if (!status && device && *device) {
    status = loom_eager_op_set_device(call, device);
  }
  if (!status && op->cancellation) {
    status = loom_eager_op_set_cancellation(call, op->cancellation);
  }
  if (!status && !partitioned) {
    status = loom_eager_op_add_attrs(call, loom_eager_op_attrs(op));
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    loom_tensor_handle_t* input = loom_eager_op_input(op, i);
    status = input ? loom_eager_op_add_input(call, input)
                   : loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                                      "%s: input %d was handed to a previous "
                                      "execution; add the inputs again",
                                      loom_eager_op_name(op), i);
  }
  for (int32_t i = 0; !status && i < captures->count; ++i) {
    status = loom_eager_op_add_input(call, captures->handles[i]);
  }
  if (!status) {
    status = loom__function_call(call, function, false, results, capacity,
                                 out_count);
  }
  if (call) loom_eager_op_recycle(call);
  return status;
}
