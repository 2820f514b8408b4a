// Executing an eager op: placement (explicit device, input handlers, the
// scope), implicit copies onto a transformation handler, the prepared op of
// that handler, and synchronous or asynchronous error reporting.
//
// The common case — inputs on the CPU, no scope, the op executed before —
// takes no lock, looks no string up and allocates nothing here: the scope
// is a thread-local look-up, the prepared op is cached on the eager op, and
// the arguments live on the stack.

#include <stdio.h>
#include <string.h>

#include "corert/corert_internal.h"
#include "frontend/eager_op_internal.h"
#include "loom/op_signature.h"

static loom_status_t two_handlers_error(loom_eager_op_t* op,
                                        const loom_op_handler_t* a,
                                        const loom_op_handler_t* b) {
  const char* name_a = loom_context_handler_name(op->context, a);
  const char* name_b = loom_context_handler_name(op->context, b);
  return loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "%s: inputs are placed on two different op handlers, '%s' and '%s'; "
      "copy one of them off first",
      op->name, name_a ? name_a : loom_op_handler_type_name(a),
      name_b ? name_b : loom_op_handler_type_name(b));
}

static loom_status_t explicit_handler(loom_eager_op_t* op,
                                      loom_op_handler_t** out) {
  loom_context_t* context = op->context;
  uint32_t generation =
      atomic_load_explicit(&context->generation, memory_order_acquire);
  if (!op->device_handler || op->device_generation != generation) {
    op->device_handler = loom_context_find_handler(context, op->device);
    op->device_generation = generation;
    if (!op->device_handler) {
      if (!atomic_load_explicit(&context->soft_placement,
                                memory_order_relaxed)) {
        return loom__unknown_device_error(context, op->device);
      }
      *out = context->cpu;  // soft placement, not remembered
      return loom_ok_status();
    }
  }
  *out = op->device_handler;
  return loom_ok_status();
}

// Whether `handler` is a CPU device of the context (a final handler of the
// CPU's type). Asked only before an error.
static bool is_cpu_device(loom_context_t* context,
                          const loom_op_handler_t* handler) {
  return loom_op_handler_is_final(handler) &&
         strcmp(loom_op_handler_type_name(handler),
                loom_op_handler_type_name(context->cpu)) == 0;
}

// Whether `handler` is a CPU device of the context other than the one
// `chosen` (a transformation's merge) runs on: its tensors are host
// memory that any CPU device reads, so the transformations of the scope
// take them as they take the CPU's (a tape around `with device("CPU:1")`
// sees its results used after the scope). Asked only before an error.
static bool another_cpu_device(loom_context_t* context,
                               const loom_op_handler_t* chosen,
                               const loom_op_handler_t* handler) {
  return !loom_op_handler_is_final(chosen) && is_cpu_device(context, handler);
}

// The handler `op` runs on (borrowed, or held in *out_held, a reference the
// caller releases after the execution). An explicit device places the op
// there: under the transformations of the scope when the user runs it,
// straight onto the device when a handler does. Otherwise an input on a handler
// other than the CPU places the op there, and the scope's handler counts as one
// more such input. One handler must stack on all the others (a later merge of
// them).
static loom_status_t place(loom_eager_op_t* op, scope_stack_t* stack,
                           loom_op_handler_t** out,
                           loom_op_handler_t** out_held) {
  *out_held = NULL;
  if (op->device[0]) {
    LOOM_RETURN_IF_ERROR(explicit_handler(op, out));
    // A handler's own ops go where it puts them (see
    // loom__handler_execution_depth).
    if (loom__handler_execution_depth > 0) return loom_ok_status();
    LOOM_RETURN_IF_ERROR(loom__scope_place_on_device(
        op->context, *out, loom__scope_stack_top(stack), out_held));
    if (*out_held) *out = *out_held;
    return loom_ok_status();
  }
  loom_context_t* context = op->context;
  loom_op_handler_t* chosen = loom__scope_stack_top(stack);
  bool by_input = false;
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_op_handler_t* handler = loom_tensor_handle_handler(op->inputs[i]);
    if (LOOM_LIKELY(loom__is_cpu(context, handler)) || handler == chosen) {
      continue;
    }
    if (!chosen || loom__handler_stacks_on(context, handler, chosen)) {
      chosen = handler;
      by_input = true;
    } else if (!loom__handler_stacks_on(context, chosen, handler) &&
               !another_cpu_device(context, chosen, handler)) {
      if (!is_cpu_device(context, chosen) || !is_cpu_device(context, handler)) {
        return two_handlers_error(op, chosen, handler);
      }
      // Tensors of two CPU devices meet as TensorFlow's do: on the scope's
      // device, else on the default device (host memory: nothing copied).
      if (by_input) chosen = context->cpu;
    }
  }
  if (by_input && loom_op_handler_vtable(chosen)->pins_op) {
    bool pin = true;
    LOOM_RETURN_IF_ERROR(
        loom_op_handler_vtable(chosen)->pins_op(chosen, op, &pin));
    if (!pin) chosen = NULL;
  }
  *out = chosen ? chosen : context->cpu;
  return loom_ok_status();
}

// The number of results the op's signature gives with its inputs and
// attributes, checking the inputs against them.
static loom_status_t count_by_signature(loom_eager_op_t* op,
                                        int32_t* out_count) {
  loom_dtype_t stack_dtypes[16];
  loom_dtype_t* dtypes = stack_dtypes;
  if (op->num_inputs > 16) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        op->context->allocator, sizeof(*dtypes) * (size_t)op->num_inputs,
        (void**)&dtypes));
  }
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, op->context->allocator);
  loom_status_t status = loom__eager_op_input_dtypes(op, dtypes);
  if (!status) status = loom_op_attrs_merge(&attrs, &op->attrs);
  if (!status) {
    status =
        loom_op_def_complete_attrs(op->def, dtypes, op->num_inputs, &attrs);
  }
  if (!status) {
    status = loom_op_def_flat_types(op->def, &attrs, true, NULL, 0, out_count);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (dtypes != stack_dtypes) {
    loom_allocator_free(op->context->allocator, dtypes);
  }
  return status;
}

// The number of results the op produces: fixed for most ops, else as the
// signature gives it.
static loom_status_t result_count(loom_eager_op_t* op, int32_t* out_count) {
  if (LOOM_LIKELY(op->output_count >= 0)) {
    *out_count = op->output_count;
    return loom_ok_status();
  }
  return count_by_signature(op, out_count);
}

// Checks the inputs against the op's signature and attributes (what
// result_count does when the count depends on them).
static loom_status_t check_signature(loom_eager_op_t* op) {
  if (op->output_count < 0) return loom_ok_status();  // checked already
  int32_t count = 0;
  return count_by_signature(op, &count);
}

static loom_status_t prepare(loom_eager_op_t* op, loom_op_handler_t* handler) {
  if (LOOM_LIKELY(op->prepared && op->prepared_handler == handler)) {
    return loom_ok_status();
  }
  loom_prepared_op_t* prepared = NULL;
  // Prepared on another handler before: that one may share its work (a
  // new gradient tape of the same kind).
  LOOM_RETURN_IF_ERROR(
      op->prepared
          ? loom_runtime_prepare_op_like(op->prepared, handler, &prepared)
      : op->calls_function
          ? loom_runtime_prepare_op_shared(op->context->runtime, op->name,
                                           handler, &prepared)
          // The definition the op resolved to, at the generation it did.
          : loom__runtime_prepare_op_known(op->context->runtime, op->name,
                                           op->def, op->generation, handler,
                                           &prepared));
  loom_prepared_op_release(op->prepared);
  op->prepared = prepared;
  op->prepared_handler = handler;
  op->memo.prepared = NULL;
  return loom_ok_status();
}

// Makes args[0, n) from the op's inputs for an execution on `handler`:
// inputs already there (or taken as they are) are passed on — moved out of
// the op when the op held the only reference, so that their buffers may be
// reused — and the others copied onto it. On failure nothing changes.
static loom_status_t make_arguments(loom_eager_op_t* op,
                                    loom_op_handler_t* handler,
                                    loom_tensor_handle_t** args, bool* moved) {
  loom_context_t* context = op->context;
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
  bool cpu_target = handler == context->cpu;
  int32_t n = op->num_inputs;
  loom_status_t status = loom_ok_status();
  int32_t made = 0;
  for (; made < n; ++made) {
    loom_tensor_handle_t* input = op->inputs[made];
    loom_op_handler_t* source = loom_tensor_handle_handler(input);
    moved[made] = false;
    if (LOOM_LIKELY(source == handler ||
                    (cpu_target && loom__is_cpu(context, source))) ||
        (vtable->takes_foreign_inputs &&
         vtable->takes_foreign_inputs(handler, op->name))) {
      if (loom_tensor_handle_is_unique(input)) {
        moved[made] = true;
      } else {
        loom_tensor_handle_retain(input);
      }
      args[made] = input;
      continue;
    }
    status = loom_context_copy_to(context, input, handler, &args[made]);
    if (status) break;
  }
  if (status) {
    for (int32_t i = 0; i < made; ++i) {
      if (!moved[i]) loom_tensor_handle_release(args[i]);
    }
    return status;
  }
  for (int32_t i = 0; i < n; ++i) {
    if (moved[i]) {
      op->inputs[i] = NULL;
      op->num_consumed++;
    }
  }
  return loom_ok_status();
}

// Whether the op's inputs can be lent to an execution on `handler`
// (loom__runtime_execute_lent): each is there already and held elsewhere
// too, so that neither a copy nor a move (for buffer reuse) is wanted.
// Then args[0, n) are the inputs, without references of their own.
static bool lend_arguments(loom_eager_op_t* op, loom_op_handler_t* handler,
                           loom_tensor_handle_t** args) {
  loom_context_t* context = op->context;
  bool cpu_target = handler == context->cpu;
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    loom_tensor_handle_t* input = op->inputs[i];
    loom_op_handler_t* source = loom_tensor_handle_handler(input);
    if (!(source == handler || (cpu_target && loom__is_cpu(context, source))) ||
        loom_tensor_handle_is_unique(input)) {
      return false;
    }
    args[i] = input;
  }
  return true;
}

static void release_results(loom_tensor_handle_t** results, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    loom_tensor_handle_release(results[i]);
    results[i] = NULL;
  }
}

static bool all_results_made(loom_tensor_handle_t** results, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    if (!results[i]) return false;
  }
  return true;
}

// The thread's chain for an asynchronous stateful op (ordering it after
// the thread's earlier ones), or NULL when none is needed or possible.
static loom_async_value_t** stateful_chain(loom_eager_op_t* op,
                                           scope_stack_t** stack) {
  if (!*stack) *stack = loom__scope_stack(op->context, true);
  if (!*stack) return NULL;
  if (!(*stack)->chain) {
    (*stack)->chain = loom_host_context_ready_chain(op->context->host);
  }
  return (*stack)->chain ? &(*stack)->chain : NULL;
}

// Whether an execution of `op` here may run from, or fill, the op's memo
// (loom__cpu_execute_memo): synchronous, on the CPU by default (no scope's
// handler, no explicit device, no placement logging), one result, no
// cancellation to watch. The memo itself checks the inputs.
static inline bool memoizable_here(const loom_eager_op_t* op,
                                   scope_stack_t* stack, bool async,
                                   int32_t capacity) {
  return !async && op->output_count == 1 && capacity >= 1 && !op->device[0] &&
         !op->cancellation && op->num_inputs <= kCpuMemoMaxInputs &&
         !loom__scope_stack_top(stack) &&
         !atomic_load_explicit(&op->context->log_placement,
                               memory_order_relaxed);
}

static loom_status_t run_placed(loom_eager_op_t* op, loom_op_handler_t* handler,
                                scope_stack_t* stack, bool async,
                                bool memoizable, loom_tensor_handle_t** results,
                                int32_t capacity, int32_t* out_count,
                                int32_t* out_known_count);

loom_status_t loom_eager_op_execute(loom_eager_op_t* op,
                                    loom_tensor_handle_t** results,
                                    int32_t capacity, int32_t* out_count) {
  int32_t known = -1;
  return loom__eager_op_execute_counted(op, results, capacity, out_count,
                                        &known);
}

loom_status_t loom__eager_op_execute_counted(loom_eager_op_t* op,
                                             loom_tensor_handle_t** results,
                                             int32_t capacity,
                                             int32_t* out_count,
                                             int32_t* out_known_count) {
  *out_known_count = -1;
  if (LOOM_UNLIKELY(!op || (capacity > 0 && !results) || capacity < 0 ||
                    !out_count)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_execute: %s",
                            !op ? "op is NULL" : "invalid results");
  }
  *out_count = 0;
  if (LOOM_UNLIKELY(op->error != NULL)) return loom_status_clone(op->error);
  if (LOOM_UNLIKELY(op->generation != loom__registry_generation())) {
    LOOM_RETURN_IF_ERROR(loom__eager_op_refresh(op));
  }
  if (LOOM_UNLIKELY(op->num_consumed > 0)) {
    for (int32_t i = 0; i < op->num_inputs; ++i) {
      if (!op->inputs[i]) {
        return loom_make_status(
            LOOM_STATUS_FAILED_PRECONDITION,
            "%s: input %d was handed to a previous execution (only the op "
            "held it); add the inputs again",
            op->name, i);
      }
    }
  }
  loom_context_t* context = op->context;
  if (LOOM_UNLIKELY(op->calls_function) &&
      !loom__context_call_runs_on_handler(context, op)) {
    // A function runs op by op: each of its ops is placed as any other.
    return loom__context_call_function(context, op, op->function, results,
                                       capacity, out_count);
  }
  scope_stack_t* stack = loom__scope_stack(context, false);
  bool async = loom__thread_async(context, stack);
  bool memoizable = memoizable_here(op, stack, async, capacity);
  if (memoizable && op->memo.prepared &&
      op->num_inputs == op->memo.num_inputs &&
      loom__cpu_execute_memo(&op->memo, op->inputs, &op->attrs, results)) {
    *out_count = 1;
    *out_known_count = 1;
    return loom_ok_status();
  }
  if (async) {
    // TensorFlow's executors: after an error, new ops fail until cleared.
    LOOM_RETURN_IF_ERROR(loom__context_error(context));
  }
  loom_op_handler_t* handler = NULL;
  loom_op_handler_t* held = NULL;
  LOOM_RETURN_IF_ERROR(place(op, stack, &handler, &held));
  loom_status_t status =
      run_placed(op, handler, stack, async, memoizable, results, capacity,
                 out_count, out_known_count);
  loom_op_handler_release(held);  // NULL unless placement restacked
  return status;
}

// Executes `op` on `handler`, the handler place() chose.
static loom_status_t run_placed(loom_eager_op_t* op, loom_op_handler_t* handler,
                                scope_stack_t* stack, bool async,
                                bool memoizable, loom_tensor_handle_t** results,
                                int32_t capacity, int32_t* out_count,
                                int32_t* out_known_count) {
  loom_context_t* context = op->context;
  int32_t count = 0;
  if (LOOM_UNLIKELY(op->calls_function) && loom__is_cpu(context, handler)) {
    return loom__context_call_function(context, op, op->function, results,
                                       capacity, out_count);
  }
  if (LOOM_UNLIKELY(atomic_load_explicit(&context->log_placement,
                                         memory_order_relaxed))) {
    const char* device = loom_context_handler_name(context, handler);
    fprintf(stderr, "Executing op %s in device %s\n", op->name,
            device ? device : loom_op_handler_type_name(handler));
  }
  loom_status_t counted = result_count(op, &count);
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(handler);
  if (LOOM_UNLIKELY(vtable->execute_eager_op != NULL)) {
    int32_t expected = counted ? -1 : count;
    loom_status_free(counted);
    ++loom__handler_execution_depth;
    loom_status_t status = vtable->execute_eager_op(
        handler, op, expected, results, capacity, out_count);
    --loom__handler_execution_depth;
    return status;
  }
  LOOM_RETURN_IF_ERROR(counted);
  if (LOOM_UNLIKELY(count > capacity)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: Expecting %d outputs, but *num_retvals is %d",
                            op->name, count, capacity);
  }
  *out_known_count = count;
  if (LOOM_UNLIKELY(async)) {
    // What is knowable before running fails the call itself, as in
    // TensorFlow's asynchronous executors (input dtypes against the
    // attributes; input counts were checked with the result count).
    LOOM_RETURN_IF_ERROR(check_signature(op));
  }
  LOOM_RETURN_IF_ERROR(prepare(op, handler));
  loom_tensor_handle_t* stack_args[kEagerInlineInputs];
  bool stack_moved[kEagerInlineInputs];
  loom_tensor_handle_t** args = stack_args;
  bool* moved = stack_moved;
  int32_t n = op->num_inputs;
  if (LOOM_UNLIKELY(n > kEagerInlineInputs)) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        context->allocator, (sizeof(*args) + sizeof(*moved)) * (size_t)n,
        (void**)&args));
    moved = (bool*)(args + n);
  }
  bool lent = lend_arguments(op, handler, args);
  loom_status_t status =
      lent ? loom_ok_status() : make_arguments(op, handler, args, moved);
  if (LOOM_UNLIKELY(status != NULL)) {
    // Nothing ran: the results were not written.
    if (args != stack_args) loom_allocator_free(context->allocator, args);
    return status;
  }
  {
    loom_async_value_t** chain = NULL;
    if (async && op->def->is_stateful) chain = stateful_chain(op, &stack);
    // An op without results in a synchronous context: its kernel's error
    // has no handle to travel in; the thread collects it.
    bool capture = count == 0 && !context->async;
    loom__error_capture_t captured;
    if (LOOM_UNLIKELY(capture)) loom__capture_begin(context, &captured);
    loom_location_t location = {0};
    loom_op_invocation_t invocation = {
        .op = op->prepared,
        .location = location,
        .arguments = args,
        .num_arguments = n,
        .attrs = &op->attrs,
        .results = results,
        .num_results = count,
        .chain = chain,
        .cancellation = op->cancellation,
    };
    // The front end checked what Execute would: the prepared op, the
    // arrays and their counts, every input.
    status = lent
                 ? loom__runtime_execute_lent(
                       &invocation,
                       memoizable && handler == context->cpu ? &op->memo : NULL)
                 : loom_runtime_execute_invocation(&invocation);
    if (LOOM_UNLIKELY(capture)) {
      loom_status_t error = loom__capture_end(&captured);
      if (status) {
        loom_status_free(error);
      } else if (error && async) {
        loom__context_record_error(context, error);
      } else {
        status = error;
      }
    }
  }
  if (args != stack_args) loom_allocator_free(context->allocator, args);
  if (LOOM_UNLIKELY(status != NULL)) {
    if (async && all_results_made(results, count)) {
      // The results carry the error: it surfaces when they are resolved or
      // at the next wait, as TensorFlow's asynchronous executors report
      // kernel errors.
      if (!context->async) {
        loom__context_record_error(context, status);
      } else {
        loom_status_free(status);
      }
      *out_count = count;
      return loom_ok_status();
    }
    release_results(results, count);
    return status;
  }
  if (!async) {
    // Synchronous: the op is done; its error is this call's.
    status = loom__results_error(results, count);
    if (LOOM_UNLIKELY(status != NULL)) {
      release_results(results, count);
      return status;
    }
  } else if (!context->async) {
    // An asynchronous thread on a synchronous context: the op is done, its
    // error goes to the next wait.
    loom__context_record_error(context, loom__results_error(results, count));
  }
  *out_count = count;
  return loom_ok_status();
}

loom_status_t loom__execute_unary(loom_context_t* context,
                                  loom_op_handler_t* handler,
                                  const char* op_name,
                                  loom_tensor_handle_t* input,
                                  const char* attr_name, const char* attr_value,
                                  loom_tensor_handle_t** out_handle) {
  *out_handle = NULL;
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, context->allocator);
  loom_status_t status = loom_ok_status();
  if (attr_name) {
    status = loom_op_attrs_set_string(&attrs, attr_name, attr_value,
                                      strlen(attr_value));
  }
  if (!status) {
    loom_tensor_handle_retain(input);
    loom_tensor_handle_t* args[1] = {input};
    loom_location_t location = {0};
    status = loom_runtime_execute(context->runtime, op_name, handler, location,
                                  args, 1, &attrs, out_handle, 1, NULL);
  }
  loom_op_attrs_deinitialize(&attrs);
  if (!status && !context->async) {
    loom_async_value_t* value = loom_tensor_handle_value(*out_handle);
    if (value && loom_async_value_is_error(value)) {
      status = loom_status_clone(loom_async_value_error(value));
    }
  }
  if (status) {
    loom_tensor_handle_release(*out_handle);
    *out_handle = NULL;
  }
  return status;
}

loom_status_t loom_context_forward_arguments(loom_context_t* context,
                                             loom_op_handler_t* target,
                                             loom_op_invocation_t* invocation) {
  if (!context || !target || !invocation) {
    loom_status_t error =
        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                         "loom_context_forward_arguments: %s is NULL",
                         !context  ? "context"
                         : !target ? "target"
                                   : "invocation");
    if (!invocation) return error;
    return loom_op_invocation_fail(invocation, error, true);
  }
  const loom_op_handler_vtable_t* vtable = loom_op_handler_vtable(target);
  if (vtable->takes_foreign_inputs &&
      vtable->takes_foreign_inputs(target,
                                   loom_prepared_op_name(invocation->op))) {
    return loom_ok_status();
  }
  bool device = loom_op_handler_is_final(target);
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_t* argument = invocation->arguments[i];
    if (loom_tensor_handle_handler(argument) == target ||
        (device && loom_tensor_handle_value(argument))) {
      continue;
    }
    loom_tensor_handle_t* copy = NULL;
    loom_status_t status =
        loom_context_copy_to(context, argument, target, &copy);
    if (status) return loom_op_invocation_fail(invocation, status, true);
    loom_tensor_handle_release(argument);
    invocation->arguments[i] = copy;
  }
  return loom_ok_status();
}
