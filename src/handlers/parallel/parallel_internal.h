// The parallel handler's state and representation, shared by its files:
// parallel_handler.c (the handler, its tensors, its generic execution),
// parallel_copies.c (CopyOn, CopyOff and their gradients, pack and
// unpack), parallel_api.c (loom/parallel.h and the gradients of pack and
// unpack).

#ifndef LOOM_HANDLERS_PARALLEL_PARALLEL_INTERNAL_H_
#define LOOM_HANDLERS_PARALLEL_PARALLEL_INTERNAL_H_

#include <stdatomic.h>

#include "handlers/parallel/parallel_threads.h"
#include "loom/eager.h"
#include "loom/op_handler.h"
#include "loom/parallel.h"
#include "loom/tensor_handle.h"

// What a parallel handler and its merges share.
typedef struct loom__parallel_t {
  atomic_uint ref_count;
  loom_allocator_t allocator;
  loom_context_t* context;  // not retained (the context holds the handler)
  int32_t num_components;
  char** devices;                  // the component devices' full names
  loom_op_handler_t** components;  // retained
  loom__parallel_threads_t* threads;
  char* name;  // the handler's device name in its context
  // Function calls run whole per component (execute_function_call).
  _Atomic int64_t calls_taken;
} loom__parallel_t;

// The state of one handler: the shared part and the handler.
typedef struct loom__parallel_state_t {
  loom__parallel_t* shared;  // one reference
  loom_op_handler_t* handler;
} loom__parallel_state_t;

// A tensor on the handler: one handle per component (retained).
typedef struct loom__parallel_tensor_t {
  int32_t num_components;
  loom_tensor_handle_t* components[];
} loom__parallel_tensor_t;

// The shared part of a parallel handler (or a merge of one), else NULL.
loom__parallel_t* loom__parallel_of(const loom_op_handler_t* handler);

// The representation of `handle` when it lives on a parallel handler, else
// NULL (an error handle has none either).
loom__parallel_tensor_t* loom__parallel_tensor_of(
    const loom_tensor_handle_t* handle);

// A tensor on `handler` made of components[0, n) (consumed, also on
// failure).
LOOM_MUST_USE_RESULT loom_status_t loom__parallel_wrap(
    loom_op_handler_t* handler, loom_tensor_handle_t** components,
    loom_tensor_handle_t** out_handle);

// Runs the handler's own ops (CopyOn, CopyOff, CopyOnGrad, CopyOffGrad,
// ParallelPack, ParallelUnpack): true and *out_status when `invocation`
// is one of them.
bool loom__parallel_execute_own_op(loom_op_handler_t* handler,
                                   loom_op_invocation_t* invocation,
                                   loom_status_t* out_status);

// Registers the gradients of ParallelPack and ParallelUnpack (once).
LOOM_MUST_USE_RESULT loom_status_t loom__parallel_register_gradients(void);

#endif  // LOOM_HANDLERS_PARALLEL_PARALLEL_INTERNAL_H_
