// Dataflow execution of function bodies.
//
// A call allocates a frame: one async value per SSA value (the arguments are
// the caller's), and per operation a count of arguments still unset. The
// operations are scheduled in order: each registers a continuation on its
// unset arguments and becomes ready when the last one is set. Ready
// operations go to a per-thread queue that the outermost scheduler on the
// thread drains, so that long dependency chains and nested calls never
// recurse on the stack. A kernel with an error argument (or any kernel once
// the host is cancelled) does not run; its results get that error. The
// return operation forwards its operands to the caller's result values as
// they are set. The frame is freed when its last operation has run and the
// frames of the calls it made are gone: a frame keeps its caller, so that
// an error can name the call stack.
//
// Calls are bounded by depth and by how many are in flight
// (max_call_depth, max_calls_in_flight): a program whose calls multiply
// would otherwise take memory until allocations fail. The first call
// beyond a limit reports one error with the call stack and stops the
// executor: its kernels are skipped, their results carrying that error,
// until no call is in flight.

#include <string.h>

#include "function/program_executor.h"
#include "host/async_value_internal.h"
#include "loom/host_context.h"

typedef struct op_state_t {
  _Atomic int32_t waiting;  // unset arguments, plus one while scheduling
  struct op_state_t* next_ready;
  program_frame_t* frame;
  int32_t index;
} op_state_t;

struct program_frame_t {
  loom_program_executor_t* executor;
  const program_binding_t* binding;
  const program_function_t* function;
  int32_t depth;
  // Operations not yet run, plus one at start, plus one per live frame
  // this frame called (or kernel holding it, loom__program_frame_retain).
  _Atomic int32_t pending;
  program_frame_t* caller;      // NULL for a call from outside
  const program_op_t* call_op;  // the caller's operation that made it
  // Per value, its uses not yet run; the frame's reference goes with the
  // last (NULL in `values` from then on), so that tensors do not outlive
  // their use.
  _Atomic int32_t* uses;
  loom_async_value_t** values;
  loom_async_value_t** outputs;  // the caller's result values
  op_state_t* ops;
  loom_async_waiter_t* waiters;  // one per operand slot
  // Called once the frame is freed (loom__program_call_notify); may be
  // NULL.
  void (*on_done)(void* arg);
  void* on_done_arg;
};

// The ready operations of this thread, run by its outermost scheduler: a
// trampoline, so that values set inside an operation (whose waiters run on
// the setting thread, with only their own argument) queue their operations
// instead of running them nested. It is the thread's own call state, of
// whichever executors' frames it runs.
static _Thread_local struct {
  bool active;
  op_state_t* head;
  op_state_t* tail;
} t_ready;

// Frees a frame, then each caller it was the last to hold (a loop: the
// chain can be max_call_depth long).
static void frame_free(program_frame_t* frame) {
  while (frame) {
    const program_function_t* function = frame->function;
    for (int32_t i = 0; i < function->num_values; ++i) {
      loom_async_value_release(frame->values[i]);
    }
    for (int32_t i = 0; i < function->num_results; ++i) {
      loom_async_value_release(frame->outputs[i]);
    }
    loom_program_executor_t* executor = frame->executor;
    program_frame_t* caller = frame->caller;
    void (*on_done)(void*) = frame->on_done;
    void* on_done_arg = frame->on_done_arg;
    loom_allocator_free(executor->allocator, frame);
    atomic_fetch_sub(&executor->live_frames, 1);
    // Before the caller is let go: the hook's owner may still hold it.
    if (on_done) on_done(on_done_arg);
    frame =
        caller && atomic_fetch_sub(&caller->pending, 1) == 1 ? caller : NULL;
  }
}

static void frame_op_done(program_frame_t* frame) {
  if (atomic_fetch_sub(&frame->pending, 1) == 1) frame_free(frame);
}

void loom__program_frame_retain(program_frame_t* frame) {
  if (frame) atomic_fetch_add(&frame->pending, 1);
}

void loom__program_frame_release(program_frame_t* frame) {
  if (frame) frame_op_done(frame);
}

//===----------------------------------------------------------------------===//
// Stopping
//===----------------------------------------------------------------------===//

loom_status_t loom__program_stop_error(loom_program_executor_t* executor) {
  if (!atomic_load_explicit(&executor->stopped, memory_order_acquire)) {
    return loom_ok_status();
  }
  pthread_mutex_lock(&executor->mutex);
  loom_status_t error = executor->stop_error
                            ? loom_status_clone(executor->stop_error)
                            : loom_ok_status();
  pthread_mutex_unlock(&executor->mutex);
  return error;
}

loom_status_t loom__program_stop_clear(loom_program_executor_t* executor) {
  if (!atomic_load_explicit(&executor->stopped, memory_order_acquire)) {
    return loom_ok_status();
  }
  pthread_mutex_lock(&executor->mutex);
  loom_status_t error = executor->stop_error;
  executor->stop_error = loom_ok_status();
  atomic_store_explicit(&executor->stopped, false, memory_order_release);
  pthread_mutex_unlock(&executor->mutex);
  return error;
}

// Stops the executor with `error` (borrowed) unless it is stopped already:
// true when this call stopped it (and is the one to report).
static bool stop(loom_program_executor_t* executor, loom_status_t error) {
  bool first = false;
  pthread_mutex_lock(&executor->mutex);
  if (!executor->stop_error) {
    executor->stop_error = loom_status_clone(error);
    atomic_store_explicit(&executor->stopped, true, memory_order_release);
    first = true;
  }
  pthread_mutex_unlock(&executor->mutex);
  return first;
}

// Drops the frame's reference to value `id` when no operation still needs
// it (nothing reads the slot after its last use has run).
static void frame_release_use(program_frame_t* frame, int32_t id) {
  if (atomic_fetch_sub_explicit(&frame->uses[id], 1, memory_order_acq_rel) ==
      1) {
    loom_async_value_release(frame->values[id]);
    frame->values[id] = NULL;
  }
}

// After operation `op` ran: its uses of its operands and its results are
// done.
static void frame_op_ran(program_frame_t* frame, const program_op_t* op) {
  for (int32_t i = 0; i < op->num_operands; ++i) {
    frame_release_use(frame, op->operands[i]);
  }
  // The producer holds a use of its results until it has run: a return
  // (not strict) may drop its uses of them before.
  for (int32_t i = 0; i < op->num_results; ++i) {
    frame_release_use(frame, op->first_result + i);
  }
}

loom_tensor_handle_t* loom__program_frame_take_handle(
    const loom_program_frame_t* call, int32_t index) {
  program_frame_t* frame = call->frame;
  if (!frame || index < 0 || index >= call->op->num_operands) return NULL;
  int32_t id = call->op->operands[index];
  loom_async_value_t* value = frame->values[id];
  // This operation is the value's last use (once among its operands), and
  // the frame's reference the only one: nobody reads the value after it.
  if (!value || value != call->arguments[index] ||
      atomic_load_explicit(&frame->uses[id], memory_order_acquire) != 1 ||
      !loom__async_value_is_unique(value) ||
      !loom_async_value_is_available(value)) {
    return NULL;
  }
  loom_program_value_t* payload = loom_async_value_payload(value);
  if (payload->kind != LOOM_PROGRAM_VALUE_TENSOR_HANDLE) return NULL;
  loom_tensor_handle_t* handle = payload->u.tensor_handle;
  // Left holding nothing to release.
  payload->kind = LOOM_PROGRAM_VALUE_CHAIN;
  payload->u.tensor_handle = NULL;
  return handle;
}

void loom__program_frame_fail_results(const loom_program_frame_t* frame,
                                      loom_status_t error) {
  for (int32_t i = 0; i < frame->num_results; ++i) {
    if (loom_async_value_is_set(frame->results[i])) continue;
    loom_status_ignore(loom_async_value_set_error(frame->results[i],
                                                  loom_status_clone(error)));
  }
}

static void run_op(op_state_t* state) {
  program_frame_t* frame = state->frame;
  loom_program_executor_t* executor = frame->executor;
  const program_op_t* op = &frame->function->ops[state->index];
  program_value_vector_t arguments;
  program_value_vector_initialize(&arguments);
  loom_program_frame_t call = {
      .executor = executor,
      .frame = frame,
      .op = op,
      .binding = frame->binding,
      .depth = frame->depth,
      .arguments = NULL,
      .num_arguments = op->num_operands,
      .results = &frame->values[op->first_result],
      .num_results = op->num_results,
  };
  loom_status_t status = program_value_vector_resize_uninitialized(
      &arguments, executor->allocator, (size_t)op->num_operands);
  if (status) {
    call.num_arguments = 0;
    loom_program_frame_fail(&call, status);
    frame_op_ran(frame, op);
    frame_op_done(frame);
    return;
  }
  loom_async_value_t** items = program_value_vector_data(&arguments);
  loom_status_t skip = loom_ok_status();  // borrowed or owned, see below
  bool owned = false;
  for (int32_t i = 0; i < op->num_operands; ++i) {
    items[i] = frame->values[op->operands[i]];
    if (!skip && loom_async_value_is_error(items[i])) {
      skip = loom_async_value_error(items[i]);
    }
  }
  call.arguments = items;
  if (!skip && loom_host_context_is_cancelled(executor->host)) {
    skip = loom_host_context_cancel_status(executor->host);
    owned = true;
  }
  if (!skip && atomic_load_explicit(&executor->stopped, memory_order_acquire)) {
    skip = loom__program_stop_error(executor);
    owned = true;
  }
  if (skip) {
    // Not reported: the error was reported where it arose (or is a
    // cancellation, or the executor's stop).
    atomic_fetch_add_explicit(&executor->kernels_skipped, 1,
                              memory_order_relaxed);
    loom__program_frame_fail_results(&call, skip);
    if (owned) loom_status_free(skip);
  } else {
    const program_kernel_t* kernel = frame->binding->kernels[op->global_index];
    atomic_fetch_add_explicit(&executor->kernels_run, 1, memory_order_relaxed);
    kernel->fn(&call, kernel->user_data);
  }
  program_value_vector_deinitialize(&arguments, executor->allocator);
  frame_op_ran(frame, op);
  frame_op_done(frame);
}

static void drain(void) {
  while (t_ready.head) {
    op_state_t* state = t_ready.head;
    t_ready.head = state->next_ready;
    if (!t_ready.head) t_ready.tail = NULL;
    run_op(state);
  }
}

static void make_ready(op_state_t* state) {
  state->next_ready = NULL;
  if (t_ready.tail) {
    t_ready.tail->next_ready = state;
  } else {
    t_ready.head = state;
  }
  t_ready.tail = state;
  if (t_ready.active) return;
  t_ready.active = true;
  drain();
  t_ready.active = false;
}

static void operand_set(void* arg) {
  op_state_t* state = arg;
  if (atomic_fetch_sub(&state->waiting, 1) == 1) make_ready(state);
}

static void schedule(program_frame_t* frame, int32_t index,
                     loom_async_waiter_t* waiters) {
  const program_op_t* op = &frame->function->ops[index];
  if (op->is_return) {
    // Not strict: each result follows its operand whenever it is set.
    for (int32_t i = 0; i < op->num_operands; ++i) {
      loom__program_value_forward(frame->executor->allocator,
                                  frame->values[op->operands[i]],
                                  frame->outputs[i]);
    }
    frame_op_ran(frame, op);
    frame_op_done(frame);
    return;
  }
  op_state_t* state = &frame->ops[index];
  state->frame = frame;
  state->index = index;
  atomic_store_explicit(&state->waiting, op->num_operands + 1,
                        memory_order_relaxed);
  int32_t arrived = 0;
  for (int32_t i = 0; i < op->num_operands; ++i) {
    loom_async_value_t* value = frame->values[op->operands[i]];
    if (loom_async_value_is_set(value)) {
      arrived++;
      continue;
    }
    waiters[i].fn = operand_set;
    waiters[i].arg = state;
    loom_async_value_and_then_node(value, &waiters[i]);
  }
  if (atomic_fetch_sub(&state->waiting, arrived + 1) == arrived + 1) {
    make_ready(state);
  }
}

// Appends the call stack of a call that `call_op` of `caller` makes:
// `at @f (file:line:col)` per frame, innermost first, the middle of a deep
// stack elided.
static void append_call_stack(char* buffer, size_t capacity, size_t* length,
                              const program_frame_t* caller,
                              const program_op_t* call_op) {
  enum { kInnermost = 8, kOutermost = 4 };
  int32_t count = 0;
  for (const program_frame_t* f = caller; f; f = f->caller) count++;
  int32_t index = 0;
  const program_op_t* op = call_op;
  for (const program_frame_t* f = caller; f; op = f->call_op, f = f->caller) {
    if (index < kInnermost || index >= count - kOutermost) {
      const program_function_t* function = f->function;
      loom__program_append(buffer, capacity, length, "\n  at @%.80s (%s:%d:%d)",
                           function->name, function->program->file_name,
                           op->location.line, op->location.column);
    } else if (index == kInnermost) {
      loom__program_append(buffer, capacity, length, "\n  ... %d more",
                           count - kInnermost - kOutermost);
    }
    index++;
  }
}

// The error of a call that cannot start: `what` went wrong calling
// `function`, then the call stack.
static loom_status_t call_error(const program_function_t* function,
                                const program_frame_t* caller,
                                const program_op_t* call_op, const char* what) {
  char message[4096];
  size_t length = 0;
  loom__program_append(message, sizeof(message), &length, "calling @%s: %s",
                       function->name, what);
  append_call_stack(message, sizeof(message), &length, caller, call_op);
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "%s", message);
}

// The error of a call whose frame could not be allocated (consumes
// `status`, the allocation's error).
static loom_status_t out_of_memory(const program_function_t* function,
                                   const program_frame_t* caller,
                                   const program_op_t* call_op,
                                   loom_status_t status) {
  char fallback[128];
  loom_status_t error =
      call_error(function, caller, call_op,
                 loom__program_status_text(status, fallback, sizeof(fallback)));
  loom_status_free(status);
  return error;
}

// Fails a call that did not start: sets its results to `error` (borrowed).
static void fail_results(const program_function_t* function,
                         loom_async_value_t* const* results,
                         loom_status_t error) {
  for (int32_t i = 0; i < function->num_results; ++i) {
    if (loom_async_value_is_set(results[i])) continue;
    loom_status_ignore(
        loom_async_value_set_error(results[i], loom_status_clone(error)));
  }
}

// A call that hit a limit or ran out of memory: stops the executor and
// reports `error` (consumed) unless it is stopped already, in which case
// its stop error becomes the call's.
static loom_status_t fail_call(loom_program_executor_t* executor,
                               const program_function_t* function,
                               const program_op_t* call_op,
                               loom_async_value_t* const* results,
                               loom_status_t error) {
  if (stop(executor, error)) {
    if (call_op) {
      loom__program_report_at(executor, call_op, error);
    } else {
      loom__program_report_at_location(executor, function->program,
                                       function->location, error);
    }
  } else {
    loom_status_t stopped = loom__program_stop_error(executor);
    if (stopped) {
      loom_status_free(error);
      error = stopped;
    }
  }
  fail_results(function, results, error);
  return error;
}

loom_status_t loom__program_call(loom_program_executor_t* executor,
                                 const program_binding_t* binding,
                                 const program_function_t* function,
                                 program_frame_t* caller,
                                 const program_op_t* call_op,
                                 loom_async_value_t* const* arguments,
                                 loom_async_value_t* const* results) {
  return loom__program_call_notify(executor, binding, function, caller, call_op,
                                   arguments, results, NULL, NULL);
}

loom_status_t loom__program_call_notify(
    loom_program_executor_t* executor, const program_binding_t* binding,
    const program_function_t* function, program_frame_t* caller,
    const program_op_t* call_op, loom_async_value_t* const* arguments,
    loom_async_value_t* const* results, void (*on_done)(void* arg),
    void* on_done_arg) {
  // A call from outside when nothing is in flight ends a stop.
  if (!caller && atomic_load(&executor->live_frames) == 0) {
    loom_status_free(loom__program_stop_clear(executor));
  }
  loom_status_t status = loom__program_stop_error(executor);
  if (status) {
    fail_results(function, results, status);
    return status;
  }
  int32_t depth = caller ? caller->depth + 1 : 0;
  char what[256];
  if (depth > executor->max_call_depth) {
    snprintf(what, sizeof(what),
             "the call depth limit (%d) is exceeded (max_call_depth)",
             executor->max_call_depth);
    return fail_call(executor, function, call_op, results,
                     call_error(function, caller, call_op, what));
  }
  // The slot is taken before the frame exists, so that concurrent calls
  // cannot all pass the check.
  if (atomic_fetch_add(&executor->live_frames, 1) >=
      executor->max_calls_in_flight) {
    atomic_fetch_sub(&executor->live_frames, 1);
    snprintf(what, sizeof(what),
             "%d function calls are in flight, the most allowed "
             "(max_calls_in_flight)",
             executor->max_calls_in_flight);
    return fail_call(executor, function, call_op, results,
                     call_error(function, caller, call_op, what));
  }
  size_t values_offset = sizeof(program_frame_t);
  size_t outputs_offset = values_offset + sizeof(loom_async_value_t*) *
                                              (size_t)function->num_values;
  size_t ops_offset = outputs_offset + sizeof(loom_async_value_t*) *
                                           (size_t)function->num_results;
  ops_offset = (ops_offset + 15) & ~(size_t)15;
  size_t waiters_offset =
      ops_offset + sizeof(op_state_t) * (size_t)function->num_ops;
  size_t uses_offset = waiters_offset + sizeof(loom_async_waiter_t) *
                                            (size_t)function->num_operand_slots;
  size_t size = uses_offset + sizeof(int32_t) * (size_t)function->num_values;
  char* block = NULL;
  status = loom_allocator_malloc(executor->allocator, size, (void**)&block);
  if (status) {
    atomic_fetch_sub(&executor->live_frames, 1);
    return fail_call(executor, function, call_op, results,
                     out_of_memory(function, caller, call_op, status));
  }
  program_frame_t* frame = (program_frame_t*)block;
  frame->executor = executor;
  frame->binding = binding;
  frame->function = function;
  frame->depth = depth;
  frame->caller = caller;
  frame->call_op = call_op;
  frame->on_done = on_done;
  frame->on_done_arg = on_done_arg;
  frame->values = (loom_async_value_t**)(block + values_offset);
  frame->outputs = (loom_async_value_t**)(block + outputs_offset);
  frame->ops = (op_state_t*)(block + ops_offset);
  frame->waiters = (loom_async_waiter_t*)(block + waiters_offset);
  frame->uses = (_Atomic int32_t*)(block + uses_offset);
  for (int32_t i = 0; i < function->num_values; ++i) {
    // Results count their producer as a use (see frame_op_ran).
    atomic_init(&frame->uses[i],
                function->value_uses[i] + (i >= function->num_arguments));
  }
  for (int32_t i = 0; i < function->num_arguments; ++i) {
    frame->values[i] = arguments[i];
    loom_async_value_retain(arguments[i]);
  }
  for (int32_t i = 0; i < function->num_results; ++i) {
    frame->outputs[i] = results[i];
    loom_async_value_retain(results[i]);
  }
  // Every value before anything runs: a consumer may register on a value
  // whose producer has not run yet.
  for (int32_t i = function->num_arguments; i < function->num_values; ++i) {
    status = loom_program_value_create(executor->allocator, &frame->values[i]);
    if (status) {
      for (int32_t j = function->num_arguments; j < i; ++j) {
        loom_async_value_release(frame->values[j]);
      }
      for (int32_t j = 0; j < function->num_arguments; ++j) {
        loom_async_value_release(frame->values[j]);
      }
      for (int32_t j = 0; j < function->num_results; ++j) {
        loom_async_value_release(results[j]);
      }
      loom_allocator_free(executor->allocator, block);
      atomic_fetch_sub(&executor->live_frames, 1);
      return fail_call(executor, function, call_op, results,
                       out_of_memory(function, caller, call_op, status));
    }
  }
  atomic_init(&frame->pending, function->num_ops + 1);
  loom__program_frame_retain(caller);
  // Arguments nothing uses need not be kept.
  for (int32_t i = 0; i < function->num_arguments; ++i) {
    if (function->value_uses[i] == 0) {
      loom_async_value_release(frame->values[i]);
      frame->values[i] = NULL;
    }
  }
  atomic_fetch_add_explicit(&executor->functions_called, 1,
                            memory_order_relaxed);
  // The outermost call on a thread runs each operation as soon as it is
  // ready, so straight-line code runs in order without waiting; calls made
  // by kernels only queue theirs, for the outermost loop to run.
  bool outermost = !t_ready.active;
  t_ready.active = true;
  loom_async_waiter_t* waiters = frame->waiters;
  for (int32_t i = 0; i < function->num_ops; ++i) {
    schedule(frame, i, waiters);
    waiters += function->ops[i].num_operands;
    if (outermost) drain();
  }
  frame_op_done(frame);
  if (outermost) {
    drain();
    t_ready.active = false;
  }
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Calling a function from outside
//===----------------------------------------------------------------------===//

loom_status_t loom_program_executor_call(
    loom_program_executor_t* executor, const loom_program_t* program,
    const char* name, loom_async_value_t* const* arguments,
    int32_t num_arguments, loom_async_value_t** results, int32_t num_results) {
  if (!executor || !program || !name || (num_arguments > 0 && !arguments) ||
      (num_results > 0 && !results)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_executor_call: %s is NULL",
                            !executor  ? "executor"
                            : !program ? "program"
                            : !name    ? "name"
                            : !results ? "results"
                                       : "arguments");
  }
  for (int32_t i = 0; i < num_results; ++i) results[i] = NULL;
  const program_function_t* function =
      loom__program_find_function(program, name, strlen(name));
  if (!function) {
    return loom_make_status(LOOM_STATUS_NOT_FOUND,
                            "%s: there is no function @%s", program->file_name,
                            name);
  }
  if (num_arguments != function->num_arguments ||
      num_results != function->num_results) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "@%s takes %d argument%s and returns %d value%s; "
        "got %d and %d",
        name, function->num_arguments, function->num_arguments == 1 ? "" : "s",
        function->num_results, function->num_results == 1 ? "" : "s",
        num_arguments, num_results);
  }
  for (int32_t i = 0; i < num_arguments; ++i) {
    if (!arguments[i] ||
        loom_async_value_type(arguments[i]) != &loom_async_value_type_program) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "@%s: argument %d is not a program value", name,
                              i);
    }
  }
  program_binding_t* binding = NULL;
  LOOM_RETURN_IF_ERROR(loom__program_bind(executor, program, &binding));
  for (int32_t i = 0; i < num_results; ++i) {
    loom_status_t status =
        loom_program_value_create(executor->allocator, &results[i]);
    if (status) {
      for (int32_t j = 0; j < i; ++j) {
        loom_async_value_release(results[j]);
        results[j] = NULL;
      }
      return status;
    }
  }
  // Errors of the call itself (limits, memory) are in the results.
  loom_status_free(loom__program_call(executor, binding, function, NULL, NULL,
                                      arguments, results));
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// The kernel frame
//===----------------------------------------------------------------------===//

int32_t loom_program_frame_num_arguments(const loom_program_frame_t* frame) {
  return frame->num_arguments;
}

loom_async_value_t* loom_program_frame_argument(
    const loom_program_frame_t* frame, int32_t index) {
  if (index < 0 || index >= frame->num_arguments) return NULL;
  return frame->arguments[index];
}

const loom_program_value_t* loom_program_frame_value(
    const loom_program_frame_t* frame, int32_t index) {
  return loom_program_value_get(loom_program_frame_argument(frame, index));
}

int32_t loom_program_frame_num_results(const loom_program_frame_t* frame) {
  return frame->num_results;
}

loom_async_value_t* loom_program_frame_result(const loom_program_frame_t* frame,
                                              int32_t index) {
  if (index < 0 || index >= frame->num_results) return NULL;
  return frame->results[index];
}

const loom_op_attrs_t* loom_program_frame_attrs(
    const loom_program_frame_t* frame) {
  return frame->op->attrs ? frame->op->attrs : &frame->executor->empty_attrs;
}

const char* loom_program_frame_op_name(const loom_program_frame_t* frame) {
  return frame->op->name;
}

loom_program_executor_t* loom_program_frame_executor(
    const loom_program_frame_t* frame) {
  return frame->executor;
}

loom_host_context_t* loom_program_frame_host(
    const loom_program_frame_t* frame) {
  return frame->executor->host;
}

loom_runtime_t* loom_program_frame_runtime(const loom_program_frame_t* frame) {
  return frame->executor->runtime;
}

FILE* loom_program_frame_output(const loom_program_frame_t* frame) {
  return frame->executor->output;
}

loom_location_t loom_program_frame_location(const loom_program_frame_t* frame) {
  return loom__program_location(frame->binding, frame->op);
}

void loom_program_frame_fail(loom_program_frame_t* frame, loom_status_t error) {
  if (!error) return;
  loom__program_report_at(frame->executor, frame->op, error);
  loom__program_frame_fail_results(frame, error);
  loom_status_free(error);
}

loom_status_t loom_program_frame_check_kind(const loom_program_frame_t* frame,
                                            int32_t index,
                                            loom_program_value_kind_t kind) {
  const loom_program_value_t* value = loom_program_frame_value(frame, index);
  if (!value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': argument %d is missing or not a program "
                            "value",
                            frame->op->name, index);
  }
  if (value->kind != kind) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': argument %d is a %s, expected a %s",
                            frame->op->name, index,
                            loom_program_value_kind_name(value->kind),
                            loom_program_value_kind_name(kind));
  }
  return loom_ok_status();
}
