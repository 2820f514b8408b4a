// Shared by the files of src/handlers/trace/:
//   trace_handler.c  the handler, its symbolic values, captures and copies;
//   trace_record.c   recording an op as a node of the body;
//   trace_api.c      the public API (loom/trace.h): parameters, finishing.

#ifndef LOOM_HANDLERS_TRACE_TRACE_INTERNAL_H_
#define LOOM_HANDLERS_TRACE_TRACE_INTERNAL_H_

#include <pthread.h>

#include "base/ref_count.h"
#include "frontend/passthrough_handler.h"
#include "loom/shape_inference.h"
#include "loom/trace.h"

// The length of a reference to a value of the body ("node:out:index").
enum { kTraceRefLength = 320 };

typedef struct loom__trace_parameter_t {
  char name[128];
  loom_dtype_t dtype;
  bool has_shape;
  loom_shape_t shape;
} loom__trace_parameter_t;

typedef struct loom__trace_capture_t {
  loom_tensor_handle_t* source;  // retained: bound at each call
  loom_tensor_metadata_t metadata;
} loom__trace_capture_t;

// What a trace handler and its merges share (their base's `shared`).
typedef struct loom__trace_t {
  loom__ref_count_t ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;
  pthread_mutex_t mutex;  // everything below
  char name[128];
  // The body so far; NULL once finished (or when the trace failed to
  // start).
  loom_function_builder_t* builder;
  bool finished;
  int32_t num_nodes;
  loom__trace_parameter_t* parameters;
  int32_t num_parameters;
  int32_t parameters_capacity;
  loom__trace_capture_t* captures;
  int32_t num_captures;
  int32_t captures_capacity;
  // The last stateful node, which the next one runs after ("" : none).
  char last_stateful[160];
  bool stateful;
  // TraceAndExecute: ops whose inputs all have values also run.
  bool execute;
} loom__trace_t;

// A symbolic value of the trace: where the body computes it.
typedef struct loom__trace_value_t {
  loom__trace_t* trace;  // kept alive by the handle's handler
  char ref[kTraceRefLength];
  // The value of a captured tensor when known (retained), for shape
  // functions that read their inputs (Reshape's shape).
  loom_tensor_t* constant;
  // In an executing trace, the value computed while tracing (a tensor of
  // the outer handler, retained), or NULL.
  loom_tensor_handle_t* concrete;
  // A resource's handle data (a variable's dtype and shape) when known:
  // from a captured variable's declaration or a traced VarHandleOp's attrs.
  // dtype LOOM_DTYPE_INVALID: unknown.
  loom_handle_data_t handle_data;
} loom__trace_value_t;

// The trace of `handler` when it is a trace handler, else NULL.
loom__trace_t* loom__trace_of(const loom_op_handler_t* handler);

// The value of `handle` when it is a symbolic value of `trace`, else NULL.
loom__trace_value_t* loom__trace_own_value(const loom__trace_t* trace,
                                           const loom_tensor_handle_t* handle);

// A symbolic value on `handler` (a handler of the trace) referring to
// `ref`, with `metadata` and `constant` (may be NULL; retained).
LOOM_MUST_USE_RESULT loom_status_t
loom__trace_make_value(loom_op_handler_t* handler, const char* ref,
                       const loom_tensor_metadata_t* metadata,
                       loom_tensor_t* constant, loom_tensor_handle_t** out);

// The value `source` (not of the trace) has in it: its capture, made on
// first use. The trace's mutex is not held.
LOOM_MUST_USE_RESULT loom_status_t
loom__trace_capture(loom_op_handler_t* handler, loom_tensor_handle_t* source,
                    loom_tensor_handle_t** out);

// Records the op of `invocation` (its arguments values of the trace) as a
// node and fills its results with the node's symbolic outputs; in an
// executing trace, first runs it as `outer_op` (prepared on the outer
// handler) when every input has a value. The invocation's contract holds.
LOOM_MUST_USE_RESULT loom_status_t
loom__trace_record(loom_op_handler_t* handler, loom_op_invocation_t* invocation,
                   loom_prepared_op_t* outer_op);

// Records a call of `function` on inputs[0, n) (values of the trace, or
// tensors it captures; the function binds its own captures) as one node,
// and writes its m symbolic results (new references), their shapes
// inferred from the function's body for the inputs' shapes
// (function/function_shapes.h). Nothing is written on error.
LOOM_MUST_USE_RESULT loom_status_t loom__trace_record_call(
    loom_op_handler_t* handler, const loom_function_t* function,
    loom_tensor_handle_t* const* inputs, int32_t n,
    loom_tensor_handle_t** results, int32_t m);

// A new trace handler (trace_api.c checks the arguments).
LOOM_MUST_USE_RESULT loom_status_t
loom__trace_new(loom_context_t* context, const char* name, bool execute,
                loom_op_handler_t** out_trace);

// The error for a trace that is finished.
LOOM_MUST_USE_RESULT loom_status_t
loom__trace_finished_error(const loom__trace_t* trace, const char* what);

#endif  // LOOM_HANDLERS_TRACE_TRACE_INTERNAL_H_
