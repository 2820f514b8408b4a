// Helpers the built-in kernels (kernels_*.c) share: reading attributes,
// checking arguments, failing, and registering.

#ifndef LOOM_FUNCTION_KERNELS_COMMON_H_
#define LOOM_FUNCTION_KERNELS_COMMON_H_

#include <stdbool.h>
#include <stdint.h>

#include "function/program_executor.h"
#include "loom/shape.h"

// Fails the kernel with `status` unless it is OK.
void loom__kernel_set_or_fail(loom_program_frame_t* frame,
                              loom_status_t status);

// Whether argument `index` holds `kind`; fails the kernel otherwise.
bool loom__kernel_check(loom_program_frame_t* frame, int32_t index,
                        loom_program_value_kind_t kind);

// INVALID_ARGUMENT: "'OP' needs a 'NAME' attribute (WHAT)".
loom_status_t loom__kernel_missing_attr(const loom_program_frame_t* frame,
                                        const char* name, const char* what);

// Reads attribute `name`, a list of integers (I32 or I64), as a fully
// defined shape of at most 2^28 elements.
loom_status_t loom__kernel_shape_attr(const loom_program_frame_t* frame,
                                      const char* name, loom_shape_t* out);

// The string attribute `name` (NUL-terminated, borrowed), or NULL.
const char* loom__kernel_string_attr(const loom_program_frame_t* frame,
                                     const char* name);

// Element `index` of a number attribute (BOOL, I32, I64, F32, F64; a list,
// or a single value whose index is ignored) as a double and as an int64
// (a float saturates; NaN is 0).
void loom__kernel_attr_number(const loom_attr_value_t* value, int64_t index,
                              double* f, int64_t* i);

// Stores a number as element k of `data`, of a dtype of fixed size that is
// not complex or quantized: integers (and bool: i != 0) from `i`, floats
// from `f`.
void loom__kernel_store_number(loom_dtype_t dtype, void* data, int64_t k,
                               double f, int64_t i);

// Registers a built-in kernel.
// Prints `tensor` in TFRT's format, then a newline, to the frame's output
// (a text longer than 1 KiB is formatted again on the heap; out of memory,
// what fits is printed).
void loom__kernel_print_tensor(loom_program_frame_t* frame,
                               const loom_tensor_t* tensor);

loom_status_t loom__kernel_add(loom_program_executor_t* executor,
                               const char* name, loom_program_kernel_fn_t fn,
                               void* user_data, int32_t num_arguments,
                               int32_t num_results);

// The corert kernels' files beside kernels_corert.c, which registers them.
loom_status_t loom__program_register_corert_tensor_kernels(
    loom_program_executor_t* executor);
loom_status_t loom__program_register_corert_op_attrs_kernels(
    loom_program_executor_t* executor);

#endif  // LOOM_FUNCTION_KERNELS_COMMON_H_
