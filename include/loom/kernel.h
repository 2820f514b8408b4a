// Kernels: the implementations of ops for a device, their registry, and a
// way to run one.
//
// A kernel is registered for an op name and a device type ("CPU") with
// type constraints on the op's attrs, a priority and an optional label. It
// provides create (once per op instance: read attrs, validate, build state),
// compute (per invocation, synchronous or asynchronous) and delete. These are
// the functions of TensorFlow's kernel C API (tensorflow/c/kernels.h), which
// is implemented on top of this registry; the context and construction
// pointers passed to them are the ones that API's functions accept.

#ifndef LOOM_KERNEL_H_
#define LOOM_KERNEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/allocator.h"
#include "loom/dtype.h"
#include "loom/host_context.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"
#include "loom/shape.h"
#include "loom/status.h"
#include "loom/tensor.h"

LOOM_EXTERN_C_BEGIN

typedef struct loom_kernel_construction_t loom_kernel_construction_t;
typedef struct loom_kernel_context_t loom_kernel_context_t;
typedef struct loom_kernel_done_t loom_kernel_done_t;

// The kernel function types. They are ABI-identical to TensorFlow's
// (TF_OpKernelConstruction*, TF_OpKernelContext* and
// TF_AsyncOpKernelDoneCallback* are these pointers).
typedef void* (*loom_kernel_create_fn_t)(loom_kernel_construction_t* ctx);
typedef void (*loom_kernel_compute_fn_t)(void* kernel,
                                         loom_kernel_context_t* ctx);
typedef void (*loom_kernel_compute_async_fn_t)(void* kernel,
                                               loom_kernel_context_t* ctx,
                                               loom_kernel_done_t* done);
typedef void (*loom_kernel_delete_fn_t)(void* kernel);

// The device type Loom's host kernels register for.
#define LOOM_DEVICE_CPU "CPU"

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

typedef struct loom_kernel_registry_t loom_kernel_registry_t;
typedef struct loom_kernel_builder_t loom_kernel_builder_t;
typedef struct loom_kernel_def_t loom_kernel_def_t;

// The process-wide registry that TF_RegisterKernelBuilder and plugins use.
LOOM_API loom_kernel_registry_t* loom_kernel_registry_global(void);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_registry_create(
    loom_allocator_t allocator, loom_kernel_registry_t** out_registry);
LOOM_API void loom_kernel_registry_destroy(loom_kernel_registry_t* registry);

// A builder for a kernel of `op_name` on `device_type`. Exactly one of
// compute and compute_async is set; create and delete may be NULL.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_builder_create(
    loom_allocator_t allocator, const char* op_name, const char* device_type,
    loom_kernel_create_fn_t create, loom_kernel_compute_fn_t compute,
    loom_kernel_compute_async_fn_t compute_async,
    loom_kernel_delete_fn_t destroy, loom_kernel_builder_t** out_builder);
LOOM_API void loom_kernel_builder_destroy(loom_kernel_builder_t* builder);

// Restricts type attr `attr_name` to `dtype`; several calls for one attr
// allow each of the types given.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_builder_type_constraint(
    loom_kernel_builder_t* builder, const char* attr_name, loom_dtype_t dtype);
// Marks an input or output argument as kept in host memory.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_builder_host_memory(
    loom_kernel_builder_t* builder, const char* arg_name);
// Higher priorities win when several kernels match (default 0).
LOOM_API void loom_kernel_builder_priority(loom_kernel_builder_t* builder,
                                           int32_t priority);
// A kernel with a label is chosen only for invocations whose "_kernel" attr
// names that label; a kernel without one only for invocations without it.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_kernel_builder_label(loom_kernel_builder_t* builder, const char* label);

// Registers the kernel under `kernel_name`; always consumes `builder`.
// Thread-safe.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_registry_register(
    loom_kernel_registry_t* registry, const char* kernel_name,
    loom_kernel_builder_t* builder);

// The kernel for an invocation of `op` with complete `attrs` on
// `device_type`: those registered for the op and device whose constraints
// and label match; the highest priority wins. NOT_FOUND listing the kernels
// registered for the op when none matches; INVALID_ARGUMENT when several
// match at the highest priority. Thread-safe.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_registry_lookup(
    loom_kernel_registry_t* registry, const loom_op_def_t* op,
    const char* device_type, const loom_op_attrs_t* attrs,
    const loom_kernel_def_t** out_kernel);

// Number of kernels registered for `op_name` (any device).
LOOM_API size_t loom_kernel_registry_count(loom_kernel_registry_t* registry,
                                           const char* op_name);

// Kernel definition queries.
LOOM_API const char* loom_kernel_def_name(const loom_kernel_def_t* kernel);
LOOM_API const char* loom_kernel_def_op_name(const loom_kernel_def_t* kernel);
LOOM_API const char* loom_kernel_def_device_type(
    const loom_kernel_def_t* kernel);
LOOM_API int32_t loom_kernel_def_priority(const loom_kernel_def_t* kernel);
LOOM_API const char* loom_kernel_def_label(const loom_kernel_def_t* kernel);
LOOM_API bool loom_kernel_def_is_async(const loom_kernel_def_t* kernel);
LOOM_API bool loom_kernel_def_is_host_memory_arg(
    const loom_kernel_def_t* kernel, const char* arg_name);

//===----------------------------------------------------------------------===//
// Kernel construction and context, native form
//===----------------------------------------------------------------------===//
//
// What TensorFlow's TF_OpKernelConstruction_* and TF_* context functions
// offer, without their per-call objects: tensors are borrowed (valid during
// the compute call, no reference to drop), attributes are read from the
// complete attribute set, failures are statuses. Built-in kernels use these;
// a plugin may use either form, even mixed in one kernel.

// The complete attributes of the op instance (caller's, inferred, defaults).
LOOM_API const loom_op_attrs_t* loom_kernel_construction_attrs(
    const loom_kernel_construction_t* ctx);
// Records a construction failure (consumed); the first one is kept.
LOOM_API void loom_kernel_construction_fail(loom_kernel_construction_t* ctx,
                                            loom_status_t status);

LOOM_API const loom_op_def_t* loom_kernel_context_op(
    const loom_kernel_context_t* ctx);
LOOM_API const loom_op_attrs_t* loom_kernel_context_attrs(
    const loom_kernel_context_t* ctx);
LOOM_API int32_t
loom_kernel_context_num_inputs(const loom_kernel_context_t* ctx);
LOOM_API int32_t
loom_kernel_context_num_outputs(const loom_kernel_context_t* ctx);
// Input `index` (0 <= index < num_inputs), borrowed; NULL out of range.
LOOM_API loom_tensor_t* loom_kernel_context_input(
    const loom_kernel_context_t* ctx, int32_t index);
// The dtype output `index` must have (from the op's signature).
LOOM_API loom_dtype_t loom_kernel_context_output_dtype(
    const loom_kernel_context_t* ctx, int32_t index);
// Allocates output `index` with its expected dtype and `shape` (fully
// defined); *out_tensor is borrowed: the context owns it.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_context_allocate_output(
    loom_kernel_context_t* ctx, int32_t index, const loom_shape_t* shape,
    loom_tensor_t** out_tensor);
// As allocate_output, but reuses the buffer of the first of `candidates`
// (input indices) that nobody else holds and has the output's dtype and
// element count (*out_forwarded: its index, or -1; may be NULL).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_kernel_context_forward_or_allocate(loom_kernel_context_t* ctx,
                                        const int32_t* candidates,
                                        int32_t num_candidates, int32_t index,
                                        const loom_shape_t* shape,
                                        int32_t* out_forwarded,
                                        loom_tensor_t** out_tensor);
// Makes output `index` the given tensor (a new reference is taken).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_kernel_context_set_output(
    loom_kernel_context_t* ctx, int32_t index, loom_tensor_t* tensor);
// Records the kernel's failure (consumed); the first one is kept.
LOOM_API void loom_kernel_context_fail(loom_kernel_context_t* ctx,
                                       loom_status_t status);
// Where temporaries come from, and the pool that parallel work runs on.
LOOM_API loom_allocator_t
loom_kernel_context_allocator(const loom_kernel_context_t* ctx);
LOOM_API loom_host_context_t* loom_kernel_context_host(
    const loom_kernel_context_t* ctx);
// The full name of the device that runs the kernel
// ("/job:localhost/replica:0/task:0/device:CPU:1"; borrowed for the call),
// or NULL when it runs outside a device (loom_kernel_run). Collectives
// order their participants by it.
LOOM_API const char* loom_kernel_context_device(
    const loom_kernel_context_t* ctx);
// The resources the kernel shares by name with the other kernels of its
// device (TensorFlow's OpKernelContext::resource_manager): its host
// context's manager. Borrowed for the call.
LOOM_API loom_resource_manager_t* loom_kernel_context_resources(
    const loom_kernel_context_t* ctx);

//===----------------------------------------------------------------------===//
// Running a kernel
//===----------------------------------------------------------------------===//

typedef struct loom_kernel_run_options_t {
  loom_host_context_t* host;        // required: allocator, thread pool
  loom_op_registry_t* ops;          // NULL: the global registry
  loom_kernel_registry_t* kernels;  // NULL: the global registry
  const char* device_type;          // NULL: LOOM_DEVICE_CPU
  int64_t step_id;
} loom_kernel_run_options_t;

// Runs op `op_name` once: completes `attrs` from the inputs and the op's
// defaults, picks the kernel, creates it, computes (waiting for an async
// kernel), and deletes it. Takes ownership of the references in
// inputs[0, num_inputs) (retain a tensor to keep it): a kernel may then
// reuse an input's memory for an output. On success writes *out_num_outputs
// new references into outputs[0, capacity). Errors from the kernel are
// returned annotated with the op and kernel names.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_kernel_run(const loom_kernel_run_options_t* options, const char* op_name,
                loom_tensor_t* const* inputs, int32_t num_inputs,
                const loom_op_attrs_t* attrs, loom_tensor_t** outputs,
                int32_t capacity, int32_t* out_num_outputs);

// Counters of the kernel machinery (tests and benchmarks), kept per host
// context: the kernels that ran on one, or the process's totals (every
// host context's, those destroyed included).
typedef struct loom_kernel_statistics_t {
  int64_t forwarded_buffers;  // outputs that reused an input's buffer
  int64_t allocated_outputs;  // outputs that needed new memory
} loom_kernel_statistics_t;

LOOM_API loom_kernel_statistics_t
loom_host_context_kernel_statistics(const loom_host_context_t* host);
LOOM_API loom_kernel_statistics_t loom_kernel_statistics(void);

LOOM_EXTERN_C_END

#endif  // LOOM_KERNEL_H_
