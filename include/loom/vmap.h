// Vectorised map (JAX's vmap, tf.vectorized_map) as a front-end op handler:
// code written for one example runs once over a whole batch.
//
//   loom_op_handler_t* vmap;
//   LOOM_RETURN_IF_ERROR(loom_vmap_create(ctx, LOOM_VMAP_BATCH_SIZE_UNKNOWN,
//                                         &vmap));
//   LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, vmap));
//   loom_tensor_handle_t* x;  // xs [B, 3] seen as one example [3]
//   LOOM_RETURN_IF_ERROR(loom_vmap_in(vmap, xs, 0, &x));
//   ... y = f(x, w) with eager ops, w unbatched (shared by every example) ...
//   loom_tensor_handle_t* ys;  // [B, ...] (out_axis 0)
//   LOOM_RETURN_IF_ERROR(loom_vmap_out(vmap, y, 0, &ys));
//   LOOM_RETURN_IF_ERROR(loom_context_exit_scope(ctx));
//   loom_op_handler_release(vmap);
//
// A tensor on a vmap handler (type "VMAP") is one example's view of a
// batched tensor of the handler the vmap runs its ops on (its outer
// handler): its dtype and shape are one example's. Each op in the scope
// runs once on the outer handler over the whole batch, by the op's batching
// rule; an op without one runs once per example (slice, run, stack) and is
// reported (loom_vmap_fallback_count). Tensors of other handlers are
// unbatched: the same for every example. A vmap inside another vmap's scope
// runs its ops on the outer vmap: nested vmaps map over two batch
// dimensions. A gradient tape works inside the scope (per-example
// gradients) and around it.

#ifndef LOOM_VMAP_H_
#define LOOM_VMAP_H_

#include <stddef.h>
#include <stdint.h>

#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/op_handler.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"

LOOM_EXTERN_C_BEGIN

// An in_axis or out_axis: the tensor has no batch dimension (in: the same
// for every example; out: only for an unbatched tensor).
#define LOOM_VMAP_UNBATCHED (-1)
// A batch size taken from the first batched tensor entered.
#define LOOM_VMAP_BATCH_SIZE_UNKNOWN (-1)

// What a random op (RandomUniform, RandomStandardNormal, TruncatedNormal,
// ...) does under the vmap (JAX's vmap `randomness`). In the modes SAME
// and DIFFERENT a random op with a batched input (a batched shape) runs
// once per example; in ERROR every random op is an error but a stateless
// one whose seed is batched (it runs once per example).
typedef enum loom_vmap_randomness_t {
  // The default: an INVALID_ARGUMENT error naming the op and the option,
  // so that code drawing random numbers states which of the two it means.
  LOOM_VMAP_RANDOMNESS_ERROR = 0,
  // Each example draws its own numbers: one op with the batch dimension
  // prepended to its shape.
  LOOM_VMAP_RANDOMNESS_DIFFERENT = 1,
  // One draw shared by every example: the op runs once as it is and its
  // result is unbatched.
  LOOM_VMAP_RANDOMNESS_SAME = 2,
} loom_vmap_randomness_t;

typedef struct loom_vmap_options_t {
  size_t struct_size;  // sizeof(loom_vmap_options_t)
  // >= 0, or LOOM_VMAP_BATCH_SIZE_UNKNOWN (the default).
  int64_t batch_size;
  loom_vmap_randomness_t randomness;  // default LOOM_VMAP_RANDOMNESS_ERROR
} loom_vmap_options_t;

// Defaults: batch size unknown, randomness ERROR.
LOOM_API void loom_vmap_options_initialize(loom_vmap_options_t* options);

// A vmap handler with `options` (NULL: the defaults). INVALID_ARGUMENT for
// a struct_size too small, a batch size below -1 or an unknown randomness.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_vmap_create_with_options(
    loom_context_t* context, const loom_vmap_options_t* options,
    loom_op_handler_t** out_vmap);

// A vmap handler over `batch_size` examples (>= 0, or
// LOOM_VMAP_BATCH_SIZE_UNKNOWN), the other options their defaults.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_vmap_create(
    loom_context_t* context, int64_t batch_size, loom_op_handler_t** out_vmap);

// The randomness option of a vmap (ERROR for a handler that is not one).
LOOM_API loom_vmap_randomness_t
loom_vmap_randomness(const loom_op_handler_t* vmap);

// The batch size, or LOOM_VMAP_BATCH_SIZE_UNKNOWN before the first batched
// tensor (-1 also for a handler that is not a vmap).
LOOM_API int64_t loom_vmap_batch_size(const loom_op_handler_t* vmap);

// One example's view of `batched`: its dimension `in_axis` (>= 0;
// LOOM_VMAP_UNBATCHED: none, the tensor is broadcast) is the batch. Call in the
// vmap's scope (or the tensor lives on its only merge). INVALID_ARGUMENT when
// the dimension's size is not the batch size.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_vmap_in(loom_op_handler_t* vmap, loom_tensor_handle_t* batched,
             int64_t in_axis, loom_tensor_handle_t** out_handle);

// The batched tensor of `handle` (a tensor of this vmap, or of another
// handler: unbatched), a tensor of the vmap's outer handler with the batch
// dimension at `out_axis` (0 to one example's rank; an unbatched tensor is
// broadcast). LOOM_VMAP_UNBATCHED gives an unbatched tensor as it is and is
// INVALID_ARGUMENT for a batched one. (Axes do not count from the end: -1
// is LOOM_VMAP_UNBATCHED.)
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_vmap_out(loom_op_handler_t* vmap, loom_tensor_handle_t* handle,
              int64_t out_axis, loom_tensor_handle_t** out_batched);

// How many times ops named `op_name` took the per-example fallback (ran
// once per example) on this vmap and its merges.
LOOM_API int64_t loom_vmap_fallback_count(const loom_op_handler_t* vmap,
                                          const char* op_name);

// How an op is batched.
typedef enum loom_vmap_support_t {
  LOOM_VMAP_UNLISTED = 0,  // in neither table: the fallback, unexplained
  LOOM_VMAP_RULE = 1,      // a batching rule: one op over the whole batch
  LOOM_VMAP_FALLBACK = 2,  // listed without a rule: the reason says why
} loom_vmap_support_t;

// Whether `op_name` has a batching rule; *out_description (may be NULL)
// receives the rule's description or the reason it has none (static).
LOOM_API loom_vmap_support_t loom_vmap_op_support(const char* op_name,
                                                  const char** out_description);

LOOM_EXTERN_C_END

#endif  // LOOM_VMAP_H_
