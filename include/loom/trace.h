// Tracing ops into a function: a front-end handler of type "TRACE" that,
// entered as a scope, records each op placed on it as a node of a function
// body instead of running it, as TensorFlow's graph building does — the ops
// run later, as often as the function is called, on whatever handlers are
// around the call. Tracing is deferred: nothing runs while tracing, so a
// traced value has no data. An executing trace
// (loom_trace_create_executing, the design's TraceAndExecute) also runs
// each op whose inputs have values, so that its values can be read.
//
//   loom_op_handler_t* trace;
//   LOOM_RETURN_IF_ERROR(loom_trace_create(ctx, "f", &trace));
//   LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, trace));
//   loom_tensor_handle_t* x;
//   LOOM_RETURN_IF_ERROR(loom_trace_add_parameter(trace, "x",
//                                                 LOOM_DTYPE_FLOAT, NULL, &x));
//   ... ops on x (and on eager tensors, which are captured) ...
//   LOOM_RETURN_IF_ERROR(loom_context_exit_scope(ctx));
//   loom_function_t* f;
//   LOOM_RETURN_IF_ERROR(loom_trace_finish(trace, &y, 1, &f));
//   LOOM_RETURN_IF_ERROR(loom_context_add_function(ctx, f));
//
// The tensors of a trace are symbolic values: a dtype and a shape from the
// op's shape function (dims or the rank may be unknown), no data (but in an
// executing trace); reading one (loom_context_resolve) is
// FAILED_PRECONDITION. A tensor of another
// handler used by a traced op (an eager tensor, a variable's handle) is
// captured: it becomes an extra, last input of the function, which the
// function binds itself at each call (callers pass the parameters only).
//
// Handlers entered inside the trace's scope run first and pass their ops
// on to it: a gradient tape entered in the trace records the traced ops,
// and its gradient computation adds the gradient ops to the function.
//
// Stateful ops (variables, random ops, ...) keep their program order in the
// body (each gets a control input on the previous one); stateless ops are
// ordered by their data only.

#ifndef LOOM_TRACE_H_
#define LOOM_TRACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/dtype.h"
#include "loom/eager.h"
#include "loom/function.h"
#include "loom/macros.h"
#include "loom/op_handler.h"
#include "loom/program.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"

LOOM_EXTERN_C_BEGIN

// A trace of function `name` (a function name, loom_function_builder_create)
// in `context`: a handler of type "TRACE" to enter as a scope. The handler
// and its merges share the trace.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_create(
    loom_context_t* context, const char* name, loom_op_handler_t** out_trace);

// A trace that records AND executes (TraceAndExecute): an op placed on it
// whose inputs all have values (parameters given by
// loom_trace_add_parameter_value, captures, results of such ops) runs on
// the handler the trace was merged with before it is recorded, so that its
// symbolic result also has a value (loom_context_resolve reads it). An op
// that fails there is an error and is not recorded.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_create_executing(
    loom_context_t* context, const char* name, loom_op_handler_t** out_trace);

// Whether `handler` is a trace handler (or a merge of one).
LOOM_API bool loom_trace_is_trace(const loom_op_handler_t* handler);

// Adds parameter `name` (lower-case letters, digits and '_', starting with a
// letter, not "captured_..."; NULL: "arg<i>") of `dtype` and `shape` (NULL:
// unknown; dims may be LOOM_UNKNOWN_DIM), the function's next input, and
// gives its symbolic value (a new reference). Call it in the trace's scope
// or outside any scope of it. FAILED_PRECONDITION once the trace is
// finished.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_add_parameter(
    loom_op_handler_t* trace, const char* name, loom_dtype_t dtype,
    const loom_shape_t* shape, loom_tensor_handle_t** out_value);

// Adds a parameter with the dtype and shape of `value` (a tensor with
// data), which is its value in an executing trace (retained); in a
// deferred trace, as loom_trace_add_parameter.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_add_parameter_value(
    loom_op_handler_t* trace, const char* name, loom_tensor_handle_t* value,
    loom_tensor_handle_t** out_value);

// Captures `handle` (a tensor of another handler) explicitly, as a traced
// op using it would: its symbolic value in the trace (a new reference).
// Capturing the same handle twice gives one input.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_trace_capture(loom_op_handler_t* trace, loom_tensor_handle_t* handle,
                   loom_tensor_handle_t** out_value);

// Whether `handle` is a symbolic value of a trace.
LOOM_API bool loom_trace_is_symbolic(const loom_tensor_handle_t* handle);

// The number of nodes, parameters and captures recorded so far.
LOOM_API int32_t loom_trace_num_nodes(const loom_op_handler_t* trace);
LOOM_API int32_t loom_trace_num_parameters(const loom_op_handler_t* trace);
LOOM_API int32_t loom_trace_num_captures(const loom_op_handler_t* trace);

// Ends the trace with outputs[0, num_outputs) (values of this trace) and
// makes the function: inputs are the parameters, then the captures (bound
// by the function); a node per recorded op. INVALID_ARGUMENT for an output
// that is not a value of this trace; FAILED_PRECONDITION when the trace is
// already finished (ops placed on it afterwards fail likewise). Leave the
// trace's scope first.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_finish(
    loom_op_handler_t* trace, loom_tensor_handle_t* const* outputs,
    int32_t num_outputs, loom_function_t** out_function);

// Writes `function` (traced, or built without attrs) as a program in the
// MLIR text form of TFRT's corert dialect that `loom run` and the program
// API (loom/program.h) execute: a func.func of the function's name taking
// the parameters and returning the outputs as !corert.tensorhandle, one
// corert.executeop "tf.<op>" per node on the "cpu" handler in body order,
// stateful nodes chained (corert.executeop.seq), captured tensors as
// corert.const_dense_tensor, the functions it calls before it (tfrt.call).
// A stateful function it calls also takes a !tfrt.chain first (the chain
// its stateful nodes start from) and returns one first (the chain they end
// with); its callers thread their chain through the call. `function`
// itself takes and returns tensors only (`loom run` runs it when it has no
// parameters). Ops and functions are looked up in `context`. *out_text
// (NUL-terminated, allocated with `allocator`) and *out_size (may be NULL)
// receive the text. UNIMPLEMENTED naming the node and attr for what the
// form cannot hold here (a captured variable, list attrs other than ints
// and types, tensors other than float, double, int32 and int64).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_print_program(
    loom_context_t* context, const loom_function_t* function,
    loom_allocator_t allocator, char** out_text, size_t* out_size);

// Makes function `name`, added to `context`'s library (*out_function, a new
// reference), from function `function` of `program`, written in the corert
// form loom_trace_print_program writes: its tensor-handle arguments become
// parameters of dtypes[0, num_inputs) and shapes (NULL: unknown), its
// chains are dropped, and its operations are traced as eager ops —
// corert.executeop(.seq), corert.const_dense_tensor (captured),
// tfrt.call (a call of the callee imported the same way, named
// "<name>_<callee>_<k>"), corert.cond, corert.while and tfrt.case on a
// corert.tensorhandle_to_int32 (If, While and Case over imported
// functions), tfrt.new.chain and corert.get_op_handler (dropped). So a
// program's functions are called from the eager API
// (TFE_NewOp(ctx, name)). NOT_FOUND for a function the program does not
// have; INVALID_ARGUMENT when num_inputs is not its number of tensor
// handles; UNIMPLEMENTED naming the function, the line and the op for
// another operation.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_trace_program_function(
    loom_context_t* context, const loom_program_t* program,
    const char* function, const char* name, const loom_dtype_t* dtypes,
    const loom_shape_t* shapes, int32_t num_inputs,
    loom_function_t** out_function);

LOOM_EXTERN_C_END

#endif  // LOOM_TRACE_H_
