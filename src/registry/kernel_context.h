// What a kernel sees while it is constructed and while it computes. The
// TensorFlow kernel C API (src/compat/kernels.c) is a thin layer over these.

#ifndef LOOM_REGISTRY_KERNEL_CONTEXT_H_
#define LOOM_REGISTRY_KERNEL_CONTEXT_H_

#include <stdatomic.h>

#include "loom/kernel.h"
#include "registry/kernel_registry_internal.h"

struct loom_kernel_construction_t {
  const loom_op_def_t* op;
  const loom_op_attrs_t* attrs;  // complete
  const loom_kernel_def_t* kernel;
  const char* node_name;
  loom_status_t status;  // the first failure reported
};

struct loom_kernel_context_t {
  const loom_op_def_t* op;
  const loom_op_attrs_t* attrs;  // complete
  const loom_kernel_def_t* kernel;
  loom_host_context_t* host;
  loom_allocator_t allocator;
  loom_tensor_t* const* inputs;  // one reference each, owned by the caller
  int32_t num_inputs;
  // Bit i set: input i is the kernel's alone once the tensor is unique, so
  // forwarding may reuse it. Clear: the caller still holds the input's handle
  // (its tensor is borrowed), so it is never reused. Inputs past 64 are
  // never forwarded.
  uint64_t owned_inputs;
  loom_tensor_t** outputs;  // set by the kernel: new references
  // Per output (may be NULL): a dense tensor the caller offers for it, taken
  // instead of a new allocation when it has the output's dtype and shape
  // and nobody else holds it (a planned function call keeps its values'
  // buffers from one call to the next). Borrowed.
  loom_tensor_t* const* reuse_outputs;
  const loom_dtype_t* output_dtypes;
  int32_t num_outputs;
  int64_t step_id;
  const char* device_name;
  // The full name of the device that runs the kernel, or NULL (a kernel
  // run outside any device, loom_kernel_run).
  const char* device;
  loom_status_t status;  // the first failure reported
};

struct loom_kernel_done_t {
  void (*fn)(void* arg);
  void* arg;
};

// Records a failure; the first one is kept. Consumes `status`.
void loom__kernel_context_fail(loom_kernel_context_t* context,
                               loom_status_t status);
void loom__kernel_construction_fail(loom_kernel_construction_t* construction,
                                    loom_status_t status);

// Output `index` becomes `tensor` (a new reference is taken).
loom_status_t loom__kernel_context_set_output(loom_kernel_context_t* context,
                                              int32_t index,
                                              loom_tensor_t* tensor);

// Allocates a dense output (dtype must match the expected one); returns a
// new reference for the kernel.
loom_status_t loom__kernel_context_allocate_output(
    loom_kernel_context_t* context, int32_t index, loom_dtype_t dtype,
    const loom_shape_t* shape, loom_tensor_t** out_tensor);

// Reuses the memory of the first candidate input that nobody else holds and
// that has the output's dtype and element count; otherwise allocates.
// *out_forwarded receives the input index or -1.
loom_status_t loom__kernel_context_forward_or_allocate(
    loom_kernel_context_t* context, const int* candidates, int num_candidates,
    int32_t output_index, const loom_shape_t* shape, int* out_forwarded,
    loom_tensor_t** out_tensor);

// Output 0 of a kernel of Loom's own: the first candidate input nobody
// else holds, or a new dense tensor. The caller has checked the candidates:
// inputs (below 64) of output 0's dtype and of `shape` (fully defined, of
// `count` elements). The output's reference stays the context's.
loom_status_t loom__kernel_context_forward_or_allocate_same(
    loom_kernel_context_t* context, const int32_t* candidates,
    int32_t num_candidates, const loom_shape_t* shape, int64_t count,
    loom_tensor_t** out_tensor);

// A direct entry of a kernel of Loom's own: what its compute does, for a
// kernel of one output whose dtype and shape the op's metadata function has
// already decided (the cpu handler knows them before it runs the kernel).
// It takes no kernel context, so an element-wise op on a few elements costs
// its loop and its output rather than the context's set-up and checks.
typedef struct loom__kernel_direct_call_t {
  void* instance;  // the kernel's, as create returned it
  loom_host_context_t* host;
  loom_allocator_t allocator;
  loom_tensor_t* const* inputs;  // borrowed
  int32_t num_inputs;
  uint64_t owned_inputs;                 // as loom_kernel_context_t's
  const loom_tensor_metadata_t* output;  // output 0's, fully defined
  // The number of elements in `output`, or -1 when the caller has not
  // counted them.
  int64_t output_elements;
  // A dense tensor of `output`'s dtype and shape offered for the output
  // (borrowed, may be NULL): taken when it is nobody else's, before a new
  // tensor is allocated.
  loom_tensor_t* reuse;
  // A dense tensor of `output`'s dtype and shape that is the caller's alone
  // and that no input shares (may be NULL): when set, the output is
  // written into it and *out_tensor receives it without a new reference;
  // no input is forwarded and `reuse` is not looked at. For a caller that
  // keeps its values' buffers itself (a function's frame), so that a tiny
  // op takes no reference counts.
  loom_tensor_t* into;
} loom__kernel_direct_call_t;

// Returns false, having done nothing, when it does not apply to these
// inputs (the caller then runs compute); else true with the output in
// *out_tensor (a new reference, or call->into itself, borrowed) or the
// failure in *out_status.
typedef bool (*loom__kernel_direct_fn_t)(const loom__kernel_direct_call_t* call,
                                         loom_tensor_t** out_tensor,
                                         loom_status_t* out_status);

// Makes `direct` the direct entry of the kernels that compute with
// `compute` (built-in kernels register theirs with their definitions).
void loom__kernel_set_direct_entry(loom_kernel_compute_fn_t compute,
                                   loom__kernel_direct_fn_t direct);

// The direct entry of kernels computing with `compute`, or NULL.
loom__kernel_direct_fn_t loom__kernel_direct_entry(
    loom_kernel_compute_fn_t compute);

// loom__kernel_context_forward_or_allocate_same for a direct entry: the
// first candidate input that is the call's alone, or a new dense tensor of
// call->output (`count` elements). *out_tensor is a new reference, or
// call->into (borrowed) when the caller gave one.
loom_status_t loom__kernel_direct_forward_or_allocate(
    const loom__kernel_direct_call_t* call, const int32_t* candidates,
    int32_t num_candidates, int64_t count, loom_tensor_t** out_tensor);

// Whether flattened input (or output) `index` belongs to an argument the
// kernel keeps in host memory.
bool loom__kernel_context_is_host_memory(const loom_kernel_context_t* context,
                                         bool output, int32_t index);

#endif  // LOOM_REGISTRY_KERNEL_CONTEXT_H_
