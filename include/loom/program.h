// Programs in the MLIR text form of TFRT's `tfrt` and `corert` dialects —
// what TFRT's bef_executor runs — parsed straight from text and executed on
// Loom's core runtime, with bef_executor's observable behaviour.
//
//   loom_program_t* program;
//   LOOM_RETURN_IF_ERROR(loom_program_parse(allocator, "f.mlir", text,
//                                           size, &program, NULL));
//   loom_program_executor_options_t options;
//   loom_program_executor_options_initialize(&options, host);
//   loom_program_executor_t* executor;
//   LOOM_RETURN_IF_ERROR(loom_program_executor_create(&options, &executor));
//   LOOM_RETURN_IF_ERROR(loom_program_executor_run_all(executor, program,
//                                                      NULL));
//
// A program is immutable once parsed and may be run by several executors at
// once. An executor owns a core runtime (with its "cpu" and "null" op
// handlers) and the kernels programs call: the `tfrt` and `corert` dialects'
// built in, more from plugins (see loom/program_kernel.h). Execution is
// dataflow: every value is an async value, a kernel runs when its arguments
// are set, and a kernel with an error argument does not run — its results
// carry that error. Errors are reported once, where they arise, as
// `file:line:col: error: runtime error: MSG`.

#ifndef LOOM_PROGRAM_H_
#define LOOM_PROGRAM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loom/allocator.h"
#include "loom/async_value.h"
#include "loom/buffer.h"
#include "loom/host_context.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/runtime.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_program_t loom_program_t;
typedef struct loom_program_executor_t loom_program_executor_t;

// A position in a program's text: 1-based line and column.
typedef struct loom_program_location_t {
  const char* file;  // the file name the program was parsed with
  int32_t line;
  int32_t column;
} loom_program_location_t;

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

// Parses `text[0, size)` (need not be NUL-terminated; copied). `file_name`
// names the text in locations and is copied. On a syntax error returns
// INVALID_ARGUMENT with the message `file:line:col: error: what, quoting the
// offending token`, and fills *out_error_location (may be NULL; its `file`
// is the caller's `file_name`). Never crashes, hangs or leaks, whatever
// the input.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_parse(loom_allocator_t allocator, const char* file_name,
                   const char* text, size_t size, loom_program_t** out_program,
                   loom_program_location_t* out_error_location);

LOOM_API void loom_program_destroy(loom_program_t* program);

LOOM_API const char* loom_program_file_name(const loom_program_t* program);

// Functions in file order.
LOOM_API int32_t loom_program_function_count(const loom_program_t* program);
// NULL for an index out of range.
LOOM_API const char* loom_program_function_name(const loom_program_t* program,
                                                int32_t index);
// The index of function `name`, or -1.
LOOM_API int32_t loom_program_find_function(const loom_program_t* program,
                                            const char* name);
LOOM_API int32_t loom_program_function_num_arguments(
    const loom_program_t* program, int32_t index);
LOOM_API int32_t
loom_program_function_num_results(const loom_program_t* program, int32_t index);

// Operations in all function bodies, the returns included.
LOOM_API int64_t loom_program_op_count(const loom_program_t* program);

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

// What a program value holds. Every value of a running program is an async
// value of type loom_async_value_type_program whose payload is a
// loom_program_value_t.
typedef enum loom_program_value_kind_t {
  LOOM_PROGRAM_VALUE_CHAIN = 0,          // !tfrt.chain
  LOOM_PROGRAM_VALUE_BOOL = 1,           // i1
  LOOM_PROGRAM_VALUE_I32 = 2,            // i32
  LOOM_PROGRAM_VALUE_I64 = 3,            // i64
  LOOM_PROGRAM_VALUE_F32 = 4,            // f32
  LOOM_PROGRAM_VALUE_F64 = 5,            // f64
  LOOM_PROGRAM_VALUE_TENSOR_HANDLE = 6,  // !corert.tensorhandle
  LOOM_PROGRAM_VALUE_OP_HANDLER = 7,     // !corert.ophandler
  LOOM_PROGRAM_VALUE_OP_ATTRS = 8,       // !corert.opattrs (shared, mutable)
  LOOM_PROGRAM_VALUE_SHAPE = 9,          // !ts.shape
  // !corert.op: a composite op, a function of the running program
  // (corert.make_composite_op).
  LOOM_PROGRAM_VALUE_FUNCTION = 10,
  // !corert.opattrs_ref: a frozen attribute set (one reference).
  LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS = 11,
  LOOM_PROGRAM_VALUE_STRING = 12,  // !tfrt.string (shared, immutable)
  // !t.tensor: a host tensor (one reference). TFRT's tfrt_dht kernels
  // write its elements in place; programs order that with chains.
  LOOM_PROGRAM_VALUE_TENSOR = 13,
  // !ht.host_buffer: bytes [offset, offset + size) of a buffer (one
  // reference to it), what tfrt_dht.get_buffer and get_buffer_slice make.
  LOOM_PROGRAM_VALUE_HOST_BUFFER = 14,
  // !t.tensor of TFRT's coo kernels: a sparse host tensor in coordinate
  // form (one reference), immutable.
  LOOM_PROGRAM_VALUE_COO_TENSOR = 15,
} loom_program_value_kind_t;

typedef struct loom_program_op_attrs_t loom_program_op_attrs_t;
typedef struct loom_program_string_t loom_program_string_t;
typedef struct loom_program_coo_tensor_t loom_program_coo_tensor_t;

typedef struct loom_program_value_t {
  loom_program_value_kind_t kind;
  union {
    bool b;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
    loom_tensor_handle_t* tensor_handle;  // one reference
    loom_op_handler_t* op_handler;        // one reference
    loom_program_op_attrs_t* op_attrs;    // one reference
    loom_shape_t shape;
    const void* function;                    // the program's, valid while it is
    const loom_op_attrs_t* frozen_op_attrs;  // one reference
    loom_program_string_t* string;           // one reference
    loom_tensor_t* tensor;                   // one reference
    loom_program_coo_tensor_t* coo_tensor;   // one reference
    struct {
      loom_buffer_t* buffer;  // one reference
      size_t offset;
      size_t size;
    } host_buffer;
  } u;
} loom_program_value_t;

// The payload type of program values; destroying a value releases what it
// references.
LOOM_API extern const loom_async_value_type_t loom_async_value_type_program;

// A new UNAVAILABLE program value (one reference for the caller).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_value_create(
    loom_allocator_t allocator, loom_async_value_t** out_value);

// The payload of an AVAILABLE program value; NULL for any other state or
// type.
LOOM_API const loom_program_value_t* loom_program_value_get(
    const loom_async_value_t* value);

// Setters: write the payload and make `value` (an unset program value)
// AVAILABLE. They take a new reference to what they store (the tensor
// handle setter consumes the caller's). FAILED_PRECONDITION when `value` is
// set or not a program value.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_value_set(
    loom_async_value_t* value, const loom_program_value_t* payload);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_chain(loom_async_value_t* value);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_bool(loom_async_value_t* value, bool x);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_i32(loom_async_value_t* value, int32_t x);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_i64(loom_async_value_t* value, int64_t x);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_f32(loom_async_value_t* value, float x);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_f64(loom_async_value_t* value, double x);
// Consumes `handle`, also on failure.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_value_set_tensor_handle(loom_async_value_t* value,
                                     loom_tensor_handle_t* handle);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_value_set_op_handler(
    loom_async_value_t* value, loom_op_handler_t* handler);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_value_set_shape(
    loom_async_value_t* value, const loom_shape_t* shape);
// A STRING value holding a copy of data[0, size) (NULL data: size 0).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_value_set_string(
    loom_async_value_t* value, const char* data, size_t size);

// The bytes of a STRING value's string, followed by a NUL; *out_size (may
// be NULL) gets their count.
LOOM_API const char* loom_program_string_data(
    const loom_program_string_t* string, size_t* out_size);

// The attribute set an OP_ATTRS value shares (mutable; programs order
// their changes with chains).
LOOM_API loom_op_attrs_t* loom_program_op_attrs_get(
    loom_program_op_attrs_t* attrs);

//===----------------------------------------------------------------------===//
// Executing
//===----------------------------------------------------------------------===//

typedef struct loom_program_diagnostic_t {
  loom_program_location_t location;
  // What follows "error: " in the printed form: "runtime error: MSG" for
  // errors of a running program, the problem itself for a program that
  // cannot run (an unknown kernel).
  const char* message;
} loom_program_diagnostic_t;

// Receives each diagnostic once, from any thread (the executor serialises
// the calls).
typedef void (*loom_program_diagnostic_handler_t)(
    void* user_data, const loom_program_diagnostic_t* diagnostic);

typedef struct loom_program_executor_options_t {
  size_t struct_size;         // sizeof(loom_program_executor_options_t)
  loom_host_context_t* host;  // required; must outlive the executor
  // Where kernels print (tfrt.print.*, corert.print_tensorhandle, the
  // logging op handler) and run_all prints; NULL: stdout.
  FILE* output;
  // NULL: diagnostics are printed to stderr as
  // `file:line:col: error: MESSAGE`.
  loom_program_diagnostic_handler_t diagnostic_handler;
  void* diagnostic_user_data;
  // Deepest nesting of function calls (tfrt.call, tfrt.case, corert.cond,
  // ...) before a call fails; 0: 10000.
  int32_t max_call_depth;
  // Passed to the runtime: every op completes before Execute returns.
  bool synchronous;
  // Most function calls in flight at once, across everything the executor
  // runs (a call is in flight from its start until its last operation has
  // run and its callees have finished; each holds its frame, a few hundred
  // bytes plus its values); 0: 100000. It bounds the memory of programs
  // whose calls multiply (a function calling itself twice per call).
  //
  // A call beyond either limit, or one that runs out of memory, fails with
  // RESOURCE_EXHAUSTED; the error, with the call stack (`at @f
  // (file:line:col)` per caller, innermost first), is reported once, at
  // the calling operation, and the executor stops: until its calls have all
  // finished, kernels do not run (their results carry that error) and new
  // calls fail with it, unreported.
  int32_t max_calls_in_flight;
} loom_program_executor_options_t;

LOOM_API void loom_program_executor_options_initialize(
    loom_program_executor_options_t* options, loom_host_context_t* host);

LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_executor_create(const loom_program_executor_options_t* options,
                             loom_program_executor_t** out_executor);

// Waits for everything the executor started, then frees it and its runtime.
LOOM_API void loom_program_executor_destroy(loom_program_executor_t* executor);

// The core runtime programs execute ops on.
LOOM_API loom_runtime_t* loom_program_executor_runtime(
    loom_program_executor_t* executor);

// Loads a plugin: a shared library exporting loom_program_plugin_init
// (kernels and cpu ops, loom/program_kernel.h) and/or TensorFlow's
// TF_InitPlugin / TF_InitKernel (ops and kernels, loom/plugin.h). NOT_FOUND
// naming the library when it cannot be loaded or exports none of them.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_executor_load_plugin(
    loom_program_executor_t* executor, const char* path);

// Starts function `name` of `program` with `arguments` (program values,
// borrowed; retained as needed) and creates its results in
// results[0, num_results) (new references, unavailable until the function
// produces them). Returns at once. The counts must match the function's.
// NOT_FOUND for an unknown function; INVALID_ARGUMENT for wrong counts or
// arguments that are not program values; FAILED_PRECONDITION when the
// program cannot run (an operation with no kernel, or with the wrong number
// of arguments or results for its kernel, or a corert.executeop attribute
// that its op's definition does not declare; each is also reported to the
// diagnostic handler, once per program). A call beyond the executor's
// limits fails in its results (see max_calls_in_flight). `program` must
// outlive the results and everything the call started
// (loom_program_executor_quiesce).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_executor_call(
    loom_program_executor_t* executor, const loom_program_t* program,
    const char* name, loom_async_value_t* const* arguments,
    int32_t num_arguments, loom_async_value_t** results, int32_t num_results);

// Waits until every kernel started so far has finished.
LOOM_API void loom_program_executor_quiesce(loom_program_executor_t* executor);

typedef struct loom_program_run_options_t {
  size_t struct_size;  // sizeof(loom_program_run_options_t)
  // Run only these functions, in this order (NULL: every function in file
  // order).
  const char* const* functions;
  int32_t num_functions;
  // Runs first, without the banner and result lines, and is then left out.
  const char* test_init_function;
} loom_program_run_options_t;

LOOM_API void loom_program_run_options_initialize(
    loom_program_run_options_t* options);

// Runs functions as TFRT's bef_executor does, printing to the executor's
// output: `--- Running 'f':` before each (`--- Not running 'f' because it
// has arguments.` for those that take arguments), then, for one with
// results, `'f' returned v1,v2` (i1, i32, i64, f32 and f64 values printed;
// other types as `<type> value`; errors as `<<error: MSG>>`). Each
// function completes, and the host is restarted if it was cancelled,
// before the next starts. `options` may be NULL. Returns NOT_FOUND for a
// function that does not exist, FAILED_PRECONDITION when the program
// cannot run (see loom_program_executor_call); runtime errors go to the
// diagnostic handler.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_executor_run_all(
    loom_program_executor_t* executor, const loom_program_t* program,
    const loom_program_run_options_t* options);

typedef struct loom_program_executor_statistics_t {
  int64_t kernels_run;       // kernels whose function ran
  int64_t kernels_skipped;   // error or cancelled arguments
  int64_t functions_called;  // function bodies started
  int64_t diagnostics;       // diagnostics reported
} loom_program_executor_statistics_t;

LOOM_API loom_program_executor_statistics_t
loom_program_executor_statistics(const loom_program_executor_t* executor);

//===----------------------------------------------------------------------===//
// Checking diagnostics (`loom run --verify-diagnostics`)
//===----------------------------------------------------------------------===//

// The `// expected-error {{substring}}` annotations of a program's text
// (also `@+N`, `@-N`, `@above`, `@below`, and the warning / note / remark
// kinds, which never match since programs report only errors). Each
// diagnostic must match one annotation on its line whose substring it
// contains, and each annotation must match one diagnostic.
typedef struct loom_program_verifier_t loom_program_verifier_t;

// Scans text[0, size) for annotations; a malformed one is an error at its
// location (INVALID_ARGUMENT, `file:line:col: error: ...`).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_verifier_create(
    loom_allocator_t allocator, const char* file_name, const char* text,
    size_t size, loom_program_verifier_t** out_verifier);
LOOM_API void loom_program_verifier_destroy(loom_program_verifier_t* verifier);

// Matches one diagnostic (thread-safe): true when an annotation expected
// it. Unexpected ones are remembered for finish.
LOOM_API bool loom_program_verifier_check(
    loom_program_verifier_t* verifier,
    const loom_program_diagnostic_t* diagnostic);

// Writes `file:line:col: error: unexpected error: MSG` for each unexpected
// diagnostic and `file:line:col: error: expected error "S" was not
// produced` for each annotation left unmatched, to `stream` (may be NULL);
// returns how many there were (0: verified).
LOOM_API int32_t loom_program_verifier_finish(loom_program_verifier_t* verifier,
                                              FILE* stream);

LOOM_EXTERN_C_END

#endif  // LOOM_PROGRAM_H_
