// The parallel handler: one op, every component device. A tensor on it is
// a parallel value, one tensor per component; an op placed on it runs once
// per component, at once, on component threads the handler owns, and
// gives parallel values. Pack and unpack move between per-device values
// and a parallel value; CopyOn of another tensor broadcasts it; CopyOnGrad
// (the gradient of that broadcast) sums the components back; CopyOff is
// refused unless every component holds the same value. Collectives
// (CollectiveReduceV2) run between the components of a parallel value.
//
//   const char* devices[] = {"CPU:0", "CPU:1"};
//   loom_op_handler_t* parallel;
//   LOOM_RETURN_IF_ERROR(loom_context_set_cpu_device_count(ctx, 2));
//   LOOM_RETURN_IF_ERROR(loom_parallel_handler_create(ctx, devices, 2,
//                                                      &parallel));
//   loom_tensor_handle_t* x;  // x0 on CPU:0, x1 on CPU:1
//   loom_tensor_handle_t* parts[2] = {x0, x1};
//   LOOM_RETURN_IF_ERROR(loom_parallel_pack(parallel, parts, 2, &x));
//   LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, parallel));
//   ... y = f(x): each component computes f(x_k) ...
//   LOOM_RETURN_IF_ERROR(loom_context_exit_scope(ctx));
//   loom_tensor_handle_t* ys[2];
//   LOOM_RETURN_IF_ERROR(loom_parallel_unpack(parallel, y, ys, 2));
#ifndef LOOM_PARALLEL_H_
#define LOOM_PARALLEL_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/op_handler.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"

LOOM_EXTERN_C_BEGIN

// Makes a parallel handler (type "PARALLEL") over the devices
// devices[0, num_devices) of `context` (names as the context accepts them:
// "CPU:1", a custom device's full name; each at most once), and adds it to
// the context as "/job:localhost/replica:0/task:0/device:PARALLEL:<n>",
// the device name its tensors show. It starts one thread per component;
// the context holds the handler, and so its threads, until the context is
// destroyed.
// INVALID_ARGUMENT for a device the context does not have, a repeated one,
// or a count outside [1, 1024].
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_parallel_handler_create(
    loom_context_t* context, const char* const* devices, int32_t num_devices,
    loom_op_handler_t** out_handler);

// The number of components of a parallel handler (or of a merge of one);
// 0 for another handler or NULL.
LOOM_API int32_t
loom_parallel_handler_num_components(const loom_op_handler_t* handler);

// The full name of component device `index`, or NULL.
LOOM_API const char* loom_parallel_handler_device(
    const loom_op_handler_t* handler, int32_t index);

// Whether `handle` is a parallel value (of any parallel handler).
LOOM_API bool loom_parallel_is_parallel_value(
    const loom_tensor_handle_t* handle);

// Packs values[0, count), one per component (count must equal the number
// of components; value k is copied to component device k if it lives
// elsewhere; all the same dtype), into a parallel value: the op
// "ParallelPack" placed on `handler`.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_parallel_pack(
    loom_op_handler_t* handler, loom_tensor_handle_t* const* values,
    int32_t count, loom_tensor_handle_t** out_value);

// Unpacks a parallel value of `handler` into its components (new
// references in out_components[0, capacity); capacity must be the number
// of components): the op "ParallelUnpack", run in the scope of the
// handlers around the value, so that a gradient tape records it (its
// gradient packs).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_parallel_unpack(loom_op_handler_t* handler, loom_tensor_handle_t* value,
                     loom_tensor_handle_t** out_components, int32_t capacity);

LOOM_EXTERN_C_END

#endif  // LOOM_PARALLEL_H_
