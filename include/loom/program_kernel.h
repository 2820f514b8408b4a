// Kernels: the functions a program's operations call (TFRT's kernels). The
// executor has the `tfrt`, `corert` and `ts` dialects' kernels built in;
// plugins add theirs, and native cpu ops, through this header.
//
// A kernel runs once its arguments are available (an argument that is an
// error makes the executor skip it and pass the error on). It reads its
// arguments and attributes from the frame and sets every result — now, or
// later from any thread (retain the result values and whatever else it
// needs; the frame itself is valid only during the call). A kernel that
// fails calls loom_program_frame_fail: the error is reported once, at the
// kernel's operation, and becomes the value of every result not yet set.
//
// A plugin is a shared library linked against libloom that exports
//
//   LOOM_PROGRAM_PLUGIN_EXPORT loom_status_t
//   loom_program_plugin_init(loom_program_executor_t* executor);
//
// which registers with loom_program_executor_add_kernel and
// loom_program_executor_add_cpu_ops (`loom run --plugin PATH`).

#ifndef LOOM_PROGRAM_KERNEL_H_
#define LOOM_PROGRAM_KERNEL_H_

#include <stdint.h>
#include <stdio.h>

#include "loom/async_value.h"
#include "loom/host_context.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_handler.h"
#include "loom/program.h"
#include "loom/runtime.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_program_frame_t loom_program_frame_t;

typedef void (*loom_program_kernel_fn_t)(loom_program_frame_t* frame,
                                         void* user_data);

typedef struct loom_program_kernel_def_t {
  size_t struct_size;  // sizeof(loom_program_kernel_def_t)
  const char* name;    // e.g. "tfrt_test.cancel" (copied)
  loom_program_kernel_fn_t fn;
  void* user_data;
  // Checked before a program runs: -1 for any number.
  int32_t num_arguments;
  int32_t num_results;
} loom_program_kernel_def_t;

// Registers a kernel. ALREADY_EXISTS for a name in use (the built-in
// kernels included). Register before programs run.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_executor_add_kernel(
    loom_program_executor_t* executor, const loom_program_kernel_def_t* def);

// Registers native ops on a cpu handler (loom/cpu_op_handler.h).
typedef loom_status_t (*loom_program_cpu_ops_fn_t)(loom_op_handler_t* cpu,
                                                   void* user_data);

// Calls fn on the runtime's "cpu" handler now and on every cpu handler a
// program creates (corert.create_cpu_op_handler) later; returns fn's error.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_program_executor_add_cpu_ops(
    loom_program_executor_t* executor, loom_program_cpu_ops_fn_t fn,
    void* user_data);

// Reports an error at `location` (from loom_program_frame_location) as the
// executor's diagnostics do; for kernels that fail after they returned.
// Borrows `error`.
LOOM_API void loom_program_executor_report(loom_program_executor_t* executor,
                                           loom_location_t location,
                                           loom_status_t error);

// The frame of one kernel call.
LOOM_API int32_t
loom_program_frame_num_arguments(const loom_program_frame_t* frame);
// Argument `index`, AVAILABLE (borrowed).
LOOM_API loom_async_value_t* loom_program_frame_argument(
    const loom_program_frame_t* frame, int32_t index);
// Its payload.
LOOM_API const loom_program_value_t* loom_program_frame_value(
    const loom_program_frame_t* frame, int32_t index);
LOOM_API int32_t
loom_program_frame_num_results(const loom_program_frame_t* frame);
// Result `index`: an unset program value (borrowed; retain to set later).
LOOM_API loom_async_value_t* loom_program_frame_result(
    const loom_program_frame_t* frame, int32_t index);
// The operation's attributes (never NULL; may be empty).
LOOM_API const loom_op_attrs_t* loom_program_frame_attrs(
    const loom_program_frame_t* frame);
LOOM_API const char* loom_program_frame_op_name(
    const loom_program_frame_t* frame);
LOOM_API loom_program_executor_t* loom_program_frame_executor(
    const loom_program_frame_t* frame);
LOOM_API loom_host_context_t* loom_program_frame_host(
    const loom_program_frame_t* frame);
LOOM_API loom_runtime_t* loom_program_frame_runtime(
    const loom_program_frame_t* frame);
LOOM_API FILE* loom_program_frame_output(const loom_program_frame_t* frame);
// The operation's location, for loom_program_executor_report and
// loom_runtime_execute.
LOOM_API loom_location_t
loom_program_frame_location(const loom_program_frame_t* frame);

// Fails the kernel: reports `error` (consumed) at the operation and sets
// every result not yet set to it.
LOOM_API void loom_program_frame_fail(loom_program_frame_t* frame,
                                      loom_status_t error);

// Checks argument `index` holds `kind`: INVALID_ARGUMENT naming the kernel,
// the argument and both kinds otherwise.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_program_frame_check_kind(const loom_program_frame_t* frame, int32_t index,
                              loom_program_value_kind_t kind);

LOOM_API const char* loom_program_value_kind_name(
    loom_program_value_kind_t kind);

// A tensor's text as TFRT's programs print it (corert.print_tensorhandle),
// like snprintf (buffer may be NULL when capacity is 0): the text of
// loom_tensor_format, except that f16 and bf16 values are their bits, as
// TFRT's placeholder types print them: `fp16(15360)`, `bf16(16256)`, and
// that unsigned dtypes have TFRT's names: `dtype = u8`.
LOOM_API size_t loom_program_format_tensor(const loom_tensor_t* tensor,
                                           char* buffer, size_t capacity);

// Plugins.
#define LOOM_PROGRAM_PLUGIN_ENTRY_POINT "loom_program_plugin_init"
#define LOOM_PROGRAM_PLUGIN_EXPORT __attribute__((visibility("default")))
typedef loom_status_t (*loom_program_plugin_init_fn_t)(
    loom_program_executor_t* executor);

LOOM_EXTERN_C_END

#endif  // LOOM_PROGRAM_KERNEL_H_
