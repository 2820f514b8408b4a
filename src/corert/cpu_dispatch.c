// Dispatch records: an op on the cpu handler that cannot run inline when
// Execute is called — an argument or its chain is not available yet, it is
// expensive, or its kernel is asynchronous. The record owns the arguments
// and the result values until the op has run. The last input to become
// available dispatches it (on that thread, or on the pool when the op is
// expensive); then the record waits for the results to be set, sets the out
// chain, and frees itself.

#include <string.h>

#include "base/small_vector.h"
#include "corert/cpu_op_handler_internal.h"
#include "loom/host_context.h"

LOOM_DEFINE_SMALL_VECTOR(handle_vector, loom_tensor_handle_t*, kCpuInlineArity)
LOOM_DEFINE_SMALL_VECTOR(tensor_vector, loom_tensor_t*, kCpuInlineArity)
LOOM_DEFINE_SMALL_VECTOR(value_vector, loom_async_value_t*, kCpuInlineArity)
// One waiter per argument plus the chain, later one per result.
LOOM_DEFINE_SMALL_VECTOR(waiter_vector, loom_async_waiter_t,
                         kCpuInlineArity + 1)
LOOM_DEFINE_SMALL_VECTOR(metadata_vector, loom_tensor_metadata_t,
                         kCpuInlineArity)

typedef struct dispatch_t {
  loom_runtime_t* runtime;
  loom_prepared_op_t* op;  // retained
  cpu_op_t* cpu_op;
  loom_location_t location;
  const loom_op_attrs_t* attrs;  // frozen (NULL: none)
  cpu_kernel_spec_t* spec;       // NULL until known
  bool spec_owned;
  bool expensive;  // run on the pool rather than the producer's thread
  loom_tensor_handle_t** arguments;
  int32_t num_arguments;
  loom_tensor_t** inputs;  // the arguments' tensors while the kernel runs
  int32_t num_inputs;
  loom_async_value_t** results;  // retained
  int32_t num_results;
  loom_tensor_metadata_t* result_metadata;  // NULL when not known
  loom_async_value_t* chain_in;             // retained, may be NULL
  loom_async_value_t* chain_out;            // retained, may be NULL
  loom_cancellation_t* cancellation;        // retained, may be NULL
  _Atomic int32_t waiting;                  // inputs, then results, not yet set
  loom_async_waiter_t* waiters;
  // Where the arrays above live.
  handle_vector_t argument_vector;
  tensor_vector_t input_vector;
  value_vector_t result_vector;
  waiter_vector_t waiter_vector;
} dispatch_t;

static void dispatch_free(dispatch_t* dispatch) {
  loom_allocator_t allocator = dispatch->runtime->allocator;
  for (int32_t i = 0; i < dispatch->num_arguments; ++i) {
    loom_tensor_handle_release(dispatch->arguments[i]);
  }
  for (int32_t i = 0; i < dispatch->num_inputs; ++i) {
    loom_tensor_release(dispatch->inputs[i]);
  }
  for (int32_t i = 0; i < dispatch->num_results; ++i) {
    loom_async_value_release(dispatch->results[i]);
  }
  loom_async_value_release(dispatch->chain_in);
  loom_async_value_release(dispatch->chain_out);
  loom_cancellation_release(dispatch->cancellation);
  loom_op_attrs_release(dispatch->attrs);
  if (dispatch->spec_owned) {
    loom__cpu_spec_destroy(dispatch->cpu_op->cpu->allocator, dispatch->spec);
  }
  loom_prepared_op_release(dispatch->op);
  handle_vector_deinitialize(&dispatch->argument_vector, allocator);
  tensor_vector_deinitialize(&dispatch->input_vector, allocator);
  value_vector_deinitialize(&dispatch->result_vector, allocator);
  waiter_vector_deinitialize(&dispatch->waiter_vector, allocator);
  loom_allocator_free(allocator, dispatch->result_metadata);
  loom_allocator_free(allocator, dispatch);
}

static loom_status_t create_dispatch(loom_op_invocation_t* invocation,
                                     const loom_tensor_metadata_t* metadata,
                                     dispatch_t** out_dispatch) {
  loom_prepared_op_t* prepared = invocation->op;
  loom_runtime_t* runtime = prepared->runtime;
  loom_allocator_t allocator = runtime->allocator;
  dispatch_t* dispatch = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*dispatch), (void**)&dispatch));
  dispatch->runtime = runtime;
  dispatch->op = prepared;
  loom_prepared_op_retain(prepared);
  dispatch->cpu_op = prepared->data;
  dispatch->location = invocation->location;
  dispatch->cancellation = invocation->cancellation;
  loom_cancellation_retain(dispatch->cancellation);
  handle_vector_initialize(&dispatch->argument_vector);
  tensor_vector_initialize(&dispatch->input_vector);
  value_vector_initialize(&dispatch->result_vector);
  waiter_vector_initialize(&dispatch->waiter_vector);
  size_t n = (size_t)invocation->num_arguments;
  size_t m = (size_t)invocation->num_results;
  loom_status_t status =
      handle_vector_reserve(&dispatch->argument_vector, allocator, n);
  if (!status) {
    status = tensor_vector_reserve(&dispatch->input_vector, allocator, n);
  }
  if (!status) {
    status = value_vector_reserve(&dispatch->result_vector, allocator, m);
  }
  if (!status) {
    status = waiter_vector_reserve(&dispatch->waiter_vector, allocator,
                                   (n > m ? n : m) + 1);
  }
  dispatch->arguments = handle_vector_data(&dispatch->argument_vector);
  dispatch->inputs = tensor_vector_data(&dispatch->input_vector);
  dispatch->results = value_vector_data(&dispatch->result_vector);
  dispatch->waiters = waiter_vector_data(&dispatch->waiter_vector);
  if (!status && loom_op_attrs_count(invocation->attrs) > 0) {
    status = loom_op_attrs_freeze(invocation->attrs, &dispatch->attrs);
  }
  if (!status && metadata && m > 0) {
    status = loom_allocator_malloc(allocator,
                                   sizeof(loom_tensor_metadata_t) * (size_t)m,
                                   (void**)&dispatch->result_metadata);
    if (!status) {
      memcpy(dispatch->result_metadata, metadata,
             sizeof(loom_tensor_metadata_t) * (size_t)m);
    }
  }
  if (status) {
    dispatch_free(dispatch);
    return status;
  }
  *out_dispatch = dispatch;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Completion
//===----------------------------------------------------------------------===//

// Sets every unset result (and the out chain) to `error` (consumed).
static void fail_results(dispatch_t* dispatch, loom_status_t error) {
  for (int32_t i = 0; i < dispatch->num_results; ++i) {
    if (!dispatch->results[i] ||
        loom_async_value_is_set(dispatch->results[i])) {
      continue;
    }
    loom_status_ignore(loom_async_value_set_error(dispatch->results[i],
                                                  loom_status_clone(error)));
  }
  if (dispatch->chain_out && !loom_async_value_is_set(dispatch->chain_out)) {
    loom_status_ignore(loom_async_value_set_error(dispatch->chain_out,
                                                  loom_status_clone(error)));
  }
  loom_status_free(error);
}

// Reports a failure of this op (its origin) and fails the results.
static void report_and_fail(dispatch_t* dispatch, loom_status_t error) {
  loom__runtime_report(dispatch->runtime, dispatch->location,
                       dispatch->op->name, error);
  fail_results(dispatch, error);
}

// Runs when one more result is set; the last one completes the dispatch.
static void result_set(void* arg) {
  dispatch_t* dispatch = arg;
  if (atomic_fetch_sub(&dispatch->waiting, 1) != 1) return;
  if (dispatch->chain_out && !loom_async_value_is_set(dispatch->chain_out)) {
    loom_status_t error = loom_ok_status();
    for (int32_t i = 0; i < dispatch->num_results && !error; ++i) {
      // A NULL slot was set available and handed to its handles.
      if (dispatch->results[i] &&
          loom_async_value_is_error(dispatch->results[i])) {
        error = loom_status_clone(loom_async_value_error(dispatch->results[i]));
      }
    }
    if (error) {
      loom_status_ignore(
          loom_async_value_set_error(dispatch->chain_out, error));
    } else {
      loom_status_ignore(loom_async_value_set_available(dispatch->chain_out));
    }
  }
  loom_runtime_t* runtime = dispatch->runtime;
  dispatch_free(dispatch);
  loom__runtime_dispatch_finished(runtime);
}

// The kernel has produced (or promised) its results: wait for them all.
static void finish_dispatch(dispatch_t* dispatch) {
  for (int32_t i = 0; i < dispatch->num_inputs; ++i) {
    loom_tensor_release(dispatch->inputs[i]);
  }
  dispatch->num_inputs = 0;
  int32_t pending = 0;
  for (int32_t i = 0; i < dispatch->num_results; ++i) {
    pending += dispatch->results[i] != NULL;
  }
  atomic_store(&dispatch->waiting, pending + 1);
  for (int32_t i = 0; i < dispatch->num_results; ++i) {
    if (!dispatch->results[i]) continue;
    loom_async_waiter_t* node = &dispatch->waiters[i];
    node->fn = result_set;
    node->arg = dispatch;
    loom_async_value_and_then_node(dispatch->results[i], node);
  }
  result_set(dispatch);
}

static void async_kernel_done(void* arg, loom_status_t error) {
  dispatch_t* dispatch = arg;
  if (error) report_and_fail(dispatch, error);
  finish_dispatch(dispatch);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

// The error of the first argument (or the in chain) that is an error.
static loom_status_t first_input_error(const dispatch_t* dispatch) {
  for (int32_t i = 0; i < dispatch->num_arguments; ++i) {
    loom_async_value_t* value = dispatch->arguments[i]->value;
    if (loom_async_value_is_error(value)) return loom_async_value_error(value);
  }
  if (dispatch->chain_in && loom_async_value_is_error(dispatch->chain_in)) {
    return loom_async_value_error(dispatch->chain_in);
  }
  return loom_ok_status();
}

// Moves the arguments' tensors into dispatch->inputs and drops the argument
// handles: when the caller kept no other reference, the kernel then holds
// the only one and may reuse the tensor's buffer.
static loom_status_t take_inputs(dispatch_t* dispatch) {
  int32_t n = dispatch->num_arguments;
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_t* tensor =
        loom__tensor_of_value(dispatch->arguments[i]->value);
    loom_tensor_retain(tensor);
    dispatch->inputs[i] = tensor;
    loom_tensor_handle_release(dispatch->arguments[i]);
    dispatch->arguments[i] = NULL;
  }
  dispatch->num_arguments = 0;
  dispatch->num_inputs = n;
  return loom__cpu_convert_inputs(
      dispatch->cpu_op, dispatch->runtime->allocator, dispatch->inputs, n);
}

// For a TensorFlow op whose input dtypes were not known at Execute: find
// its kernel and check the shapes, now that the inputs are here.
static loom_status_t specialise(dispatch_t* dispatch) {
  cpu_op_t* op = dispatch->cpu_op;
  if (op->native || dispatch->spec) return loom_ok_status();
  int32_t n = dispatch->num_inputs;
  loom_allocator_t allocator = dispatch->runtime->allocator;
  metadata_vector_t inputs;
  metadata_vector_t results;
  metadata_vector_initialize(&inputs);
  metadata_vector_initialize(&results);
  loom_status_t status = metadata_vector_reserve(&inputs, allocator, (size_t)n);
  if (!status) {
    status = metadata_vector_reserve(&results, allocator,
                                     (size_t)dispatch->num_results);
  }
  loom_tensor_metadata_t* input_data = metadata_vector_data(&inputs);
  for (int32_t i = 0; !status && i < n; ++i) {
    input_data[i] = *loom_tensor_metadata(dispatch->inputs[i]);
  }
  if (!status) {
    status = loom__cpu_spec_get(op, input_data, n, dispatch->attrs,
                                &dispatch->spec, &dispatch->spec_owned);
  }
  if (!status) {
    status = loom__cpu_check_large_ranks(dispatch->spec, op->def->name,
                                         input_data, n);
  }
  bool known = false;
  if (!status) {
    status = loom__cpu_spec_infer(op, dispatch->spec, input_data,
                                  dispatch->inputs, dispatch->num_results,
                                  metadata_vector_data(&results), &known, NULL);
  }
  metadata_vector_deinitialize(&inputs, allocator);
  metadata_vector_deinitialize(&results, allocator);
  return status;
}

// Runs the op; every input is set (available or an error).
static void run_dispatch(dispatch_t* dispatch) {
  loom_runtime_t* runtime = dispatch->runtime;
  loom_status_t cancelled = loom_host_context_cancel_status(runtime->host);
  if (!cancelled && LOOM_UNLIKELY(dispatch->cancellation != NULL) &&
      (loom_cancellation_is_cancelled(dispatch->cancellation) ||
       loom_cancellation_is_cancelling(dispatch->cancellation))) {
    cancelled = loom_cancellation_error(dispatch->op->name);
  }
  if (cancelled) {
    fail_results(dispatch, cancelled);
    finish_dispatch(dispatch);
    return;
  }
  loom_status_t input_error = first_input_error(dispatch);
  if (input_error) {
    // Already reported where it arose.
    fail_results(dispatch, loom_status_clone(input_error));
    finish_dispatch(dispatch);
    return;
  }
  loom_status_t status = take_inputs(dispatch);
  if (!status) status = specialise(dispatch);
  if (status) {
    report_and_fail(dispatch, loom__cpu_annotate(status, dispatch->op->name));
    finish_dispatch(dispatch);
    return;
  }
  // The record holds a reference to each input and no handle: all are its
  // own.
  cpu_call_t call = {
      .op = dispatch->cpu_op,
      .op_name = dispatch->op->name,
      .location = dispatch->location,
      .attrs = dispatch->attrs,
      .spec = dispatch->spec,
      .inputs = dispatch->inputs,
      .num_inputs = dispatch->num_inputs,
      .owned_inputs = ~(uint64_t)0,
      .result_metadata = dispatch->result_metadata,
      .results = dispatch->results,
      .num_results = dispatch->num_results,
      .results_owned = true,
  };
  if (!loom__cpu_call_is_sync(dispatch->spec)) {
    loom__cpu_call_run_async(&call, async_kernel_done, dispatch);
    return;
  }
  status = loom__cpu_call_run(&call);
  if (status) report_and_fail(dispatch, status);
  finish_dispatch(dispatch);
}

static void run_dispatch_task(void* arg) {
  run_dispatch(arg);
}

static void schedule(dispatch_t* dispatch) {
  if (dispatch->expensive) {
    loom_status_t status = loom_host_context_enqueue(
        dispatch->runtime->host, run_dispatch_task, dispatch);
    if (!status) return;
    loom_status_free(status);  // run it here rather than lose it
  }
  run_dispatch(dispatch);
}

static void input_ready(void* arg) {
  dispatch_t* dispatch = arg;
  if (atomic_fetch_sub(&dispatch->waiting, 1) == 1) schedule(dispatch);
}

static void wait_for(dispatch_t* dispatch, loom_async_value_t* value,
                     int32_t* node) {
  if (loom_async_value_is_set(value)) return;
  loom_async_waiter_t* waiter = &dispatch->waiters[(*node)++];
  waiter->fn = input_ready;
  waiter->arg = dispatch;
  loom_async_value_and_then_node(value, waiter);
}

loom_status_t loom__cpu_dispatch_later(loom_op_handler_t* handler,
                                       loom_op_invocation_t* invocation,
                                       cpu_kernel_spec_t* spec, bool spec_owned,
                                       const loom_tensor_metadata_t* metadata,
                                       bool expensive) {
  loom_runtime_t* runtime = handler->runtime;
  dispatch_t* dispatch = NULL;
  loom_status_t status = create_dispatch(invocation, metadata, &dispatch);
  // The result handles, created before anything can fail at dispatch; the
  // record holds a reference to each value.
  for (int32_t i = 0; !status && i < invocation->num_results; ++i) {
    status = loom__tensor_handle_create_pending(
        handler, metadata ? &metadata[i] : NULL, &invocation->results[i],
        &dispatch->results[i]);
    if (status) {
      for (int32_t j = 0; j < i; ++j) {
        loom_tensor_handle_release(invocation->results[j]);
      }
    } else {
      loom_async_value_retain(dispatch->results[i]);
      dispatch->num_results = i + 1;
    }
  }
  if (!status && invocation->chain && *invocation->chain) {
    status =
        loom_async_value_create_chain(runtime->allocator, &dispatch->chain_out);
    if (status) {
      for (int32_t i = 0; i < invocation->num_results; ++i) {
        loom_tensor_handle_release(invocation->results[i]);
      }
    }
  }
  if (status) {
    if (dispatch) dispatch_free(dispatch);
    if (spec_owned) loom__cpu_spec_destroy(handler->runtime->allocator, spec);
    return loom_op_invocation_fail(invocation, status, true);
  }
  dispatch->spec = spec;
  dispatch->spec_owned = spec_owned;
  dispatch->expensive = expensive;
  if (dispatch->chain_out) {
    dispatch->chain_in = *invocation->chain;  // the caller's reference
    loom_async_value_retain(dispatch->chain_out);
    *invocation->chain = dispatch->chain_out;
  }
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    dispatch->arguments[i] = invocation->arguments[i];
    invocation->arguments[i] = NULL;
  }
  dispatch->num_arguments = invocation->num_arguments;
  loom__runtime_count_dispatch(runtime, false);
  loom__runtime_dispatch_started(runtime);

  // One extra count keeps the dispatch from starting before every
  // continuation is registered.
  atomic_store(&dispatch->waiting, invocation->num_arguments + 2);
  int32_t node = 0;
  for (int32_t i = 0; i < dispatch->num_arguments; ++i) {
    wait_for(dispatch, dispatch->arguments[i]->value, &node);
  }
  if (dispatch->chain_in) wait_for(dispatch, dispatch->chain_in, &node);
  // Inputs already set count as arrived, then drop the extra count.
  int32_t arrived = invocation->num_arguments + 1 - node;
  if (atomic_fetch_sub(&dispatch->waiting, arrived + 1) == arrived + 1) {
    schedule(dispatch);
  }
  return loom_ok_status();
}
