// Control flow by calling functions: tfrt.call, tfrt.case, tfrt.cond,
// tfrt_test.do.async (its region),
// corert.cond and corert.while. Callees run in their own frames; their
// results are forwarded into the kernel's results as they are set.

#include <stdlib.h>
#include <string.h>

#include "function/program_executor.h"
#include "loom/tensor_handle.h"

// Fails the kernel unless its operation names `count` functions (the
// generic form can name any number).
static bool check_callees(loom_program_frame_t* frame, int32_t minimum,
                          int32_t maximum) {
  int32_t count = frame->op->num_callees;
  if (count >= minimum && (maximum < 0 || count <= maximum)) return true;
  loom_program_frame_fail(
      frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'%s' names %d function%s, expected %d%s",
                              frame->op->name, count, count == 1 ? "" : "s",
                              minimum, maximum < 0 ? " or more" : ""));
  return false;
}

// Calls callee with the kernel's arguments from `first` on, into all of its
// results; a failure to call is reported at the kernel.
static void call_into_results(loom_program_frame_t* frame,
                              const program_function_t* callee, int32_t first) {
  if (callee->num_arguments != frame->num_arguments - first ||
      callee->num_results != frame->num_results) {
    loom_program_frame_fail(
        frame, loom_make_status(
                   LOOM_STATUS_INVALID_ARGUMENT,
                   "'%s' passes %d argument%s and expects %d "
                   "result%s, but @%s takes %d and returns %d",
                   frame->op->name, frame->num_arguments - first,
                   frame->num_arguments - first == 1 ? "" : "s",
                   frame->num_results, frame->num_results == 1 ? "" : "s",
                   callee->name, callee->num_arguments, callee->num_results));
    return;
  }
  // A call that cannot start has set the results and reported why.
  loom_status_free(
      loom__program_call(frame->executor, frame->binding, callee, frame->frame,
                         frame->op, frame->arguments + first, frame->results));
}

static void call_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_callees(frame, 1, 1)) return;
  call_into_results(frame, frame->op->callees[0], 0);
}

static void case_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_callees(frame, 1, -1)) return;
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_I32);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  int32_t index = loom_program_frame_value(frame, 0)->u.i32;
  if (index < 0 || index >= frame->op->num_callees) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "branch_index invalid. branch index: %d # "
                                "branches: %d",
                                index, frame->op->num_callees));
    return;
  }
  call_into_results(frame, frame->op->callees[index], 1);
}

static void tfrt_cond_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_callees(frame, 2, 2)) return;
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_BOOL);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  bool condition = loom_program_frame_value(frame, 0)->u.b;
  call_into_results(frame, frame->op->callees[condition ? 0 : 1], 1);
}

//===----------------------------------------------------------------------===//
// Tensor predicates
//===----------------------------------------------------------------------===//

// The truth of a one-element tensor: non-zero numbers, non-empty strings.
static loom_status_t tensor_predicate(const char* op_name,
                                      loom_async_value_t* handle_value,
                                      bool* out) {
  const loom_program_value_t* value = loom_program_value_get(handle_value);
  if (!value || value->kind != LOOM_PROGRAM_VALUE_TENSOR_HANDLE) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': the condition is not a tensor handle",
                            op_name);
  }
  loom_async_value_t* tensor_value =
      loom_tensor_handle_value(value->u.tensor_handle);
  if (!tensor_value ||
      loom_async_value_type(tensor_value) != &loom_async_value_type_tensor ||
      !loom_async_value_is_available(tensor_value)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': the condition is not a host tensor",
                            op_name);
  }
  const loom_tensor_t* tensor =
      *(loom_tensor_t**)loom_async_value_payload(tensor_value);
  if (loom_tensor_num_elements(tensor) != 1) {
    char shape[128];
    loom_shape_format(loom_tensor_shape(tensor), shape, sizeof(shape));
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': the condition must have one element, got "
                            "shape %s",
                            op_name, shape);
  }
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_STRING) {
    *out = loom_tstring_size(loom_tensor_string_at(tensor, 0)) > 0;
    return loom_ok_status();
  }
  const void* data = loom_tensor_data(tensor);
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      *out = *(const float*)data != 0;
      return loom_ok_status();
    case LOOM_DTYPE_DOUBLE:
      *out = *(const double*)data != 0;
      return loom_ok_status();
    default:
      break;
  }
  size_t size = loom_dtype_size(dtype);
  if (!loom_dtype_is_integer(dtype) && dtype != LOOM_DTYPE_BOOL) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': a condition of %s is not supported", op_name,
                            loom_dtype_short_name(dtype));
  }
  bool nonzero = false;
  for (size_t i = 0; i < size; ++i) nonzero |= ((const uint8_t*)data)[i] != 0;
  *out = nonzero;
  return loom_ok_status();
}

static void corert_cond_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_callees(frame, 2, 2)) return;
  if (frame->num_arguments < 1) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'corert.cond' needs a condition"));
    return;
  }
  bool condition = false;
  loom_status_t status =
      tensor_predicate(frame->op->name, frame->arguments[0], &condition);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  call_into_results(frame, frame->op->callees[condition ? 0 : 1], 1);
}

//===----------------------------------------------------------------------===//
// corert.while
//===----------------------------------------------------------------------===//

typedef struct while_state_t {
  loom_program_executor_t* executor;
  const program_binding_t* binding;
  const program_op_t* op;
  program_frame_t* frame;            // the kernel's (retained): the caller
  int32_t count;                     // loop values (the chain first)
  _Atomic int32_t waiting;           // condition values not yet set, plus one
  loom_async_value_t* condition[2];  // the cond function's chain, handle
  loom_async_value_t** values;       // this iteration's arguments (retained)
  loom_async_value_t** results;      // the kernel's results (retained)
} while_state_t;

static void while_free(while_state_t* state) {
  for (int32_t i = 0; i < state->count; ++i) {
    loom_async_value_release(state->values[i]);
    loom_async_value_release(state->results[i]);
  }
  loom_async_value_release(state->condition[0]);
  loom_async_value_release(state->condition[1]);
  loom__program_frame_release(state->frame);
  loom_allocator_free(state->executor->allocator, state);
}

// Sets every result to `error` (borrowed) and ends the loop.
static void while_fail(while_state_t* state, loom_status_t error) {
  for (int32_t i = 0; i < state->count; ++i) {
    if (loom_async_value_is_set(state->results[i])) continue;
    loom_status_ignore(loom_async_value_set_error(state->results[i],
                                                  loom_status_clone(error)));
  }
  while_free(state);
}

static void while_iterate(while_state_t* state);

// Creates `count` unset values into out.
static loom_status_t create_values(loom_allocator_t allocator, int32_t count,
                                   loom_async_value_t** out) {
  for (int32_t i = 0; i < count; ++i) {
    loom_status_t status = loom_program_value_create(allocator, &out[i]);
    if (status) {
      for (int32_t j = 0; j < i; ++j) {
        loom_async_value_release(out[j]);
        out[j] = NULL;
      }
      return status;
    }
  }
  return loom_ok_status();
}

static void while_condition_set(void* arg) {
  while_state_t* state = arg;
  if (atomic_fetch_sub(&state->waiting, 1) != 1) return;
  for (int32_t i = 0; i < 2; ++i) {
    if (loom_async_value_is_error(state->condition[i])) {
      while_fail(state, loom_async_value_error(state->condition[i]));
      return;
    }
  }
  bool condition = false;
  loom_status_t status =
      tensor_predicate(state->op->name, state->condition[1], &condition);
  if (status) {
    loom__program_report_at(state->executor, state->op, status);
    while_fail(state, status);
    loom_status_free(status);
    return;
  }
  if (!condition) {
    for (int32_t i = 0; i < state->count; ++i) {
      loom__program_value_forward(state->executor->allocator, state->values[i],
                                  state->results[i]);
    }
    while_free(state);
    return;
  }
  // The body's results are the next iteration's arguments.
  loom_async_value_t** next = state->values + state->count;
  status = create_values(state->executor->allocator, state->count, next);
  if (status) {
    loom__program_report_at(state->executor, state->op, status);
    while_fail(state, status);
    loom_status_free(status);
    return;
  }
  // A call that cannot start has reported why.
  status =
      loom__program_call(state->executor, state->binding, state->op->callees[1],
                         state->frame, state->op, state->values, next);
  if (status) {
    for (int32_t i = 0; i < state->count; ++i) {
      loom_async_value_release(next[i]);
      next[i] = NULL;
    }
    while_fail(state, status);
    loom_status_free(status);
    return;
  }
  for (int32_t i = 0; i < state->count; ++i) {
    loom_async_value_release(state->values[i]);
    state->values[i] = next[i];
    next[i] = NULL;
  }
  while_iterate(state);
}

static void while_iterate(while_state_t* state) {
  loom_host_context_t* host = state->executor->host;
  if (loom_host_context_is_cancelled(host)) {
    loom_status_t cancelled = loom_host_context_cancel_status(host);
    while_fail(state, cancelled);
    loom_status_free(cancelled);
    return;
  }
  for (int32_t i = 0; i < 2; ++i) {
    loom_async_value_release(state->condition[i]);
    state->condition[i] = NULL;
  }
  loom_status_t status =
      create_values(state->executor->allocator, 2, state->condition);
  if (status) {
    loom__program_report_at(state->executor, state->op, status);
    while_fail(state, status);
    loom_status_free(status);
    return;
  }
  // A call that cannot start has reported why.
  status = loom__program_call(state->executor, state->binding,
                              state->op->callees[0], state->frame, state->op,
                              state->values, state->condition);
  if (status) {
    while_fail(state, status);
    loom_status_free(status);
    return;
  }
  // One count per condition value not set yet, plus one dropped below.
  bool unset[2];
  int32_t waiting = 1;
  for (int32_t i = 0; i < 2; ++i) {
    unset[i] = !loom_async_value_is_set(state->condition[i]);
    waiting += unset[i];
  }
  atomic_store(&state->waiting, waiting);
  for (int32_t i = 0; i < 2; ++i) {
    if (!unset[i]) continue;
    status = loom_async_value_and_then(state->condition[i], while_condition_set,
                                       state);
    if (status) {
      // Out of memory: count it as arrived; the check below then fails on
      // the value that is not set.
      loom_status_free(status);
      while_condition_set(state);
    }
  }
  while_condition_set(state);
}

static void corert_while_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_callees(frame, 2, 2)) return;
  const program_op_t* op = frame->op;
  const program_function_t* cond = op->callees[0];
  const program_function_t* body = op->callees[1];
  int32_t count = frame->num_arguments;
  if (count != frame->num_results || cond->num_arguments != count ||
      body->num_arguments != count || body->num_results != count ||
      cond->num_results != 2) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'corert.while': @%s must take the %d loop "
                                "values and return a chain and a tensor "
                                "handle; @%s must take and return them",
                                cond->name, count, body->name));
    return;
  }
  while_state_t* state = NULL;
  size_t size =
      sizeof(*state) + sizeof(loom_async_value_t*) * 3 * (size_t)count;
  loom_status_t status =
      loom_allocator_calloc(frame->executor->allocator, size, (void**)&state);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  state->executor = frame->executor;
  state->binding = frame->binding;
  state->op = op;
  state->frame = frame->frame;
  loom__program_frame_retain(state->frame);
  state->count = count;
  // values[0, count), then room for the next iteration's, then results.
  state->values = (loom_async_value_t**)(state + 1);
  state->results = state->values + 2 * count;
  for (int32_t i = 0; i < count; ++i) {
    state->values[i] = frame->arguments[i];
    loom_async_value_retain(state->values[i]);
    state->results[i] = frame->results[i];
    loom_async_value_retain(state->results[i]);
  }
  while_iterate(state);
}

// tfrt_test.do.async: runs its region with the values it uses, into the
// kernel's results.
static void do_async_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const program_op_t* op = frame->op;
  if (op->num_regions != 1) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs one region, got %d", op->name,
                                op->num_regions));
    return;
  }
  call_into_results(frame, op->regions[0], op->region_first[0]);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static loom_status_t add(loom_program_executor_t* executor, const char* name,
                         loom_program_kernel_fn_t fn, int32_t num_arguments) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = fn,
                                   .num_arguments = num_arguments,
                                   .num_results = -1};
  return loom_program_executor_add_kernel(executor, &def);
}

loom_status_t loom__program_register_control_flow_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(add(executor, "tfrt.call", call_kernel, -1));
  LOOM_RETURN_IF_ERROR(add(executor, "tfrt.case", case_kernel, -1));
  LOOM_RETURN_IF_ERROR(add(executor, "tfrt.cond", tfrt_cond_kernel, -1));
  LOOM_RETURN_IF_ERROR(add(executor, "corert.cond", corert_cond_kernel, -1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt_test.do.async", do_async_kernel, -1));
  LOOM_RETURN_IF_ERROR(loom__program_register_loop_kernels(executor));
  return add(executor, "corert.while", corert_while_kernel, -1);
}
