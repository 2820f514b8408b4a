// TFRT's loops of basic_kernels: tfrt.while (a body function that returns
// the next loop values and whether to run again) and tfrt.repeat.i32 (a
// region run a given number of times). Each iteration is a call in a frame
// of its own; the loop values pass from one call to the next as async
// values, so an iteration may start before the previous one's values are
// set (dataflow), and only tfrt.while waits, for each iteration's i1.

#include <string.h>

#include "function/program_executor.h"

typedef struct loop_t {
  loom_program_executor_t* executor;
  const program_binding_t* binding;
  const program_op_t* op;
  program_frame_t* frame;          // the kernel's (retained): the caller
  int32_t count;                   // loop values
  loom_async_value_t* again;       // the body's i1 (tfrt.while)
  loom_async_value_t** values;     // this iteration's (retained)
  loom_async_value_t** results;    // the kernel's (retained)
  loom_async_value_t** next;       // room for the body's results
  loom_async_value_t** arguments;  // room for a region's arguments
} loop_t;

static void loop_free(loop_t* loop) {
  for (int32_t i = 0; i < loop->count; ++i) {
    loom_async_value_release(loop->values[i]);
    loom_async_value_release(loop->results[i]);
  }
  loom_async_value_release(loop->again);
  loom__program_frame_release(loop->frame);
  loom_allocator_free(loop->executor->allocator, loop);
}

// Sets the results not set yet to `error` (borrowed) and ends the loop.
static void loop_fail(loop_t* loop, loom_status_t error) {
  for (int32_t i = 0; i < loop->count; ++i) {
    if (loom_async_value_is_set(loop->results[i])) continue;
    loom_status_ignore(
        loom_async_value_set_error(loop->results[i], loom_status_clone(error)));
  }
  loop_free(loop);
}

// Reports `error` (consumed) at the loop's operation and fails the loop.
static void loop_report(loop_t* loop, loom_status_t error) {
  loom__program_report_at(loop->executor, loop->op, error);
  loop_fail(loop, error);
  loom_status_free(error);
}

// The loop values become the results.
static void loop_finish(loop_t* loop) {
  for (int32_t i = 0; i < loop->count; ++i) {
    loom__program_value_forward(loop->executor->allocator, loop->values[i],
                                loop->results[i]);
  }
  loop_free(loop);
}

// Makes a loop of `count` values (frame->arguments from `first`) with room
// for `extra` results of the body and `num_arguments` region arguments.
static loom_status_t loop_create(loom_program_frame_t* frame, int32_t first,
                                 int32_t count, int32_t extra,
                                 int32_t num_arguments, loop_t** out) {
  size_t slots = (size_t)(3 * count + extra + num_arguments);
  loop_t* loop = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      frame->executor->allocator,
      sizeof(*loop) + sizeof(loom_async_value_t*) * slots, (void**)&loop));
  loop->executor = frame->executor;
  loop->binding = frame->binding;
  loop->op = frame->op;
  loop->frame = frame->frame;
  loom__program_frame_retain(loop->frame);
  loop->count = count;
  loop->values = (loom_async_value_t**)(loop + 1);
  loop->results = loop->values + count;
  loop->next = loop->results + count;
  loop->arguments = loop->next + count + extra;
  for (int32_t i = 0; i < count; ++i) {
    loop->values[i] = frame->arguments[first + i];
    loom_async_value_retain(loop->values[i]);
    loop->results[i] = frame->results[i];
    loom_async_value_retain(loop->results[i]);
  }
  *out = loop;
  return loom_ok_status();
}

// Calls `function` on `arguments` into loop->next[0, n): the next values
// (and, after them, what else the function returns). A call that cannot
// start has reported why.
static loom_status_t loop_call(loop_t* loop, const program_function_t* function,
                               loom_async_value_t* const* arguments) {
  int32_t n = function->num_results;
  for (int32_t i = 0; i < n; ++i) {
    loom_status_t status =
        loom_program_value_create(loop->executor->allocator, &loop->next[i]);
    if (status) {
      for (int32_t j = 0; j < i; ++j) {
        loom_async_value_release(loop->next[j]);
        loop->next[j] = NULL;
      }
      loom__program_report_at(loop->executor, loop->op, status);
      return status;
    }
  }
  loom_status_t status =
      loom__program_call(loop->executor, loop->binding, function, loop->frame,
                         loop->op, arguments, loop->next);
  for (int32_t i = 0; status && i < n; ++i) {
    loom_async_value_release(loop->next[i]);
    loop->next[i] = NULL;
  }
  if (status) return status;
  for (int32_t i = 0; i < loop->count; ++i) {
    loom_async_value_release(loop->values[i]);
    loop->values[i] = loop->next[i];
    loop->next[i] = NULL;
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// tfrt.while
//===----------------------------------------------------------------------===//

// Reads an i1 that is set: *out its value, or fails the loop (false).
static bool read_again(loop_t* loop, loom_async_value_t* value, bool* out) {
  if (loom_async_value_is_error(value)) {
    loop_fail(loop, loom_async_value_error(value));
    return false;
  }
  const loom_program_value_t* v = loom_program_value_get(value);
  if (!v || v->kind != LOOM_PROGRAM_VALUE_BOOL) {
    loop_report(loop,
                loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "'%s': @%s did not return an i1 last",
                                 loop->op->name, loop->op->callees[0]->name));
    return false;
  }
  *out = v->u.b;
  return true;
}

static void while_again_set(void* arg);

// Runs iterations while `again` holds and each body's i1 is set already;
// otherwise waits for it.
static void while_run(loop_t* loop, bool again) {
  const program_function_t* body = loop->op->callees[0];
  loom_host_context_t* host = loop->executor->host;
  while (again) {
    if (loom_host_context_is_cancelled(host)) {
      loom_status_t cancelled = loom_host_context_cancel_status(host);
      loop_fail(loop, cancelled);
      loom_status_free(cancelled);
      return;
    }
    loom_status_t status = loop_call(loop, body, loop->values);
    if (status) {
      loop_fail(loop, status);
      loom_status_free(status);
      return;
    }
    loom_async_value_release(loop->again);
    loop->again = loop->next[loop->count];
    loop->next[loop->count] = NULL;
    if (!loom_async_value_is_set(loop->again)) {
      status = loom_async_value_and_then(loop->again, while_again_set, loop);
      if (status) loop_report(loop, status);
      return;
    }
    if (!read_again(loop, loop->again, &again)) return;
  }
  loop_finish(loop);
}

static void while_again_set(void* arg) {
  loop_t* loop = arg;
  bool again = false;
  if (read_again(loop, loop->again, &again)) while_run(loop, again);
}

static void tfrt_while_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const program_op_t* op = frame->op;
  if (op->num_callees != 1 || frame->num_arguments < 1) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs a condition and one body "
                                "function",
                                op->name));
    return;
  }
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_BOOL);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  bool again = loom_program_frame_value(frame, 0)->u.b;
  loop_t* loop = NULL;
  status = loop_create(frame, 1, frame->num_arguments - 1, 1, 0, &loop);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  while_run(loop, again);
}

//===----------------------------------------------------------------------===//
// tfrt.repeat.i32
//===----------------------------------------------------------------------===//

static void repeat_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const program_op_t* op = frame->op;
  if (op->num_regions != 1 || frame->num_arguments < 1) {
    loom_program_frame_fail(
        frame,
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "'%s' needs a trip count and a body", op->name));
    return;
  }
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_I32);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  int32_t trips = loom_program_frame_value(frame, 0)->u.i32;
  const program_function_t* region = op->regions[0];
  int32_t first = op->region_first[0];
  int32_t count = first - 1;  // the loop values, before the captures
  loop_t* loop = NULL;
  status = loop_create(frame, 1, count, 0, region->num_arguments, &loop);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_host_context_t* host = frame->executor->host;
  for (int32_t trip = 0; trip < trips; ++trip) {
    if (loom_host_context_is_cancelled(host)) {
      loom_status_t cancelled = loom_host_context_cancel_status(host);
      loop_fail(loop, cancelled);
      loom_status_free(cancelled);
      return;
    }
    // The region names the loop values as written: a capture of one is
    // this iteration's value of it; other captures stay as they are.
    for (int32_t k = 0; k < region->num_arguments; ++k) {
      int32_t id = op->operands[first + k];
      loom_async_value_t* argument = frame->arguments[first + k];
      for (int32_t j = 0; j < count; ++j) {
        if (op->operands[1 + j] == id) argument = loop->values[j];
      }
      loop->arguments[k] = argument;
    }
    status = loop_call(loop, region, loop->arguments);
    if (status) {
      loop_fail(loop, status);
      loom_status_free(status);
      return;
    }
  }
  loop_finish(loop);
}

loom_status_t loom__program_register_loop_kernels(
    loom_program_executor_t* executor) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = "tfrt.while",
                                   .fn = tfrt_while_kernel,
                                   .num_arguments = -1,
                                   .num_results = -1};
  LOOM_RETURN_IF_ERROR(loom_program_executor_add_kernel(executor, &def));
  def.name = "tfrt.repeat.i32";
  def.fn = repeat_kernel;
  return loom_program_executor_add_kernel(executor, &def);
}
