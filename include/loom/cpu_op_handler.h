// The cpu op handler: runs ops on the host. It knows two kinds of ops:
//   - native ops registered on it (TFRT's CpuOpRegistry): a dispatch
//     function over host tensors and an optional metadata function;
//   - ops of the op registry with kernels registered for device "CPU"
//     through TensorFlow's kernel API (loom/kernel.h).
// Ops it knows neither way go to its fallback handler.

#ifndef LOOM_CPU_OP_HANDLER_H_
#define LOOM_CPU_OP_HANDLER_H_

#include <stdint.h>

#include "loom/host_context.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_handler.h"
#include "loom/runtime.h"
#include "loom/status.h"
#include "loom/tensor.h"
#include "loom/tensor_metadata.h"

LOOM_EXTERN_C_BEGIN

// What a native dispatch function gets.
typedef struct loom_cpu_dispatch_context_t {
  loom_host_context_t* host;
  loom_allocator_t allocator;
  loom_location_t location;
  // The inputs, available, valid until the dispatch function returns (retain
  // one to keep it). An input for which loom_cpu_input_is_forwardable holds
  // is the op's alone: its memory may be reused for a result.
  loom_tensor_t* const* inputs;
  int32_t num_inputs;
  const loom_op_attrs_t* attrs;
  // The result metadata from the metadata function (NULL when the op has
  // none: results then get their metadata from their tensors).
  const loom_tensor_metadata_t* result_metadata;
  // Unavailable async values of type loom_async_value_type_tensor: store a
  // loom_tensor_t* reference in each payload and set it available (or set an
  // error) — now, or later from any thread for asynchronous ops.
  loom_async_value_t* const* results;
  int32_t num_results;
  // Bit i: input i is held by this dispatch alone (no caller kept its
  // handle). Read it through loom_cpu_input_is_forwardable.
  uint64_t owned_inputs;
} loom_cpu_dispatch_context_t;

// Whether input `index` may be reused for a result: nothing else can see
// it (no handle, no other tensor or buffer reference) and Loom allocated its
// memory.
LOOM_API bool loom_cpu_input_is_forwardable(
    const loom_cpu_dispatch_context_t* context, int32_t index);

// Returns an error instead of setting the results when it fails at once.
typedef loom_status_t (*loom_cpu_dispatch_fn_t)(
    const loom_cpu_dispatch_context_t* context);

// Computes result metadata from input metadata and attributes, or reports
// invalid ones. Runs synchronously inside Execute.
typedef loom_status_t (*loom_cpu_metadata_fn_t)(
    const loom_tensor_metadata_t* inputs, int32_t num_inputs,
    const loom_op_attrs_t* attrs, loom_tensor_metadata_t* results,
    int32_t num_results);

enum {
  // The dispatch function accepts SCALAR host tensors; otherwise scalar
  // inputs are converted to dense ones first.
  LOOM_CPU_OP_ALLOWS_SCALAR = 1 << 0,
  // The op has side effects: it needs a chain and runs in chain order.
  LOOM_CPU_OP_SIDE_EFFECTING = 1 << 1,
  // Always dispatch on the thread pool, never inline.
  LOOM_CPU_OP_EXPENSIVE = 1 << 2,
};

LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_cpu_op_handler_create(loom_runtime_t* runtime, loom_op_handler_t* fallback,
                           loom_op_handler_t** out_handler);

// Names the device the handler is (default
// "/job:localhost/replica:0/task:0/device:CPU:0"), as its handles report it:
// a context's second CPU device is CPU:1. Call it before the handler is
// used. INVALID_ARGUMENT for an empty name or one of 128 bytes or more.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_cpu_op_handler_set_device_name(loom_op_handler_t* cpu, const char* name);

// Registers a native op on a cpu handler. ALREADY_EXISTS for a name
// registered before. Register before the op is first prepared.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_cpu_op_handler_add_op(loom_op_handler_t* cpu, const char* op_name,
                           loom_cpu_dispatch_fn_t dispatch, uint32_t flags);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_cpu_op_handler_add_metadata_fn(loom_op_handler_t* cpu, const char* op_name,
                                    loom_cpu_metadata_fn_t metadata_fn);

// Helper for dispatch functions: stores `tensor` (consumed) in `result`
// and sets it available.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_cpu_set_result(loom_async_value_t* result, loom_tensor_t* tensor);

LOOM_EXTERN_C_END

#endif  // LOOM_CPU_OP_HANDLER_H_
