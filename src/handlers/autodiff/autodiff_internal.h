// The internal interface of src/handlers/autodiff/, the library the
// automatic differentiation handlers (tape, forward, recompute) share:
//   gradient_registry.c  the process-wide gradient and JVP registries;
//   gradient_context.c   what a gradient or JVP function sees of its op;
//   grad_ops.c           helpers for gradient functions (grad_ops.h);
//   grad_<family>.c      the built-in gradient functions;
//   recompute_segment.c  how a recompute handler tells a tape its segment.

#ifndef LOOM_HANDLERS_AUTODIFF_AUTODIFF_INTERNAL_H_
#define LOOM_HANDLERS_AUTODIFF_AUTODIFF_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "frontend/passthrough_handler.h"
#include "loom/autodiff.h"
#include "loom/op_handler.h"

// Idle eager ops kept for reuse during one backward pass, by op name (an
// op is reset when it comes back, so it holds no tensors while idle).
enum { kGradOpCacheSize = 32 };
typedef struct loom__grad_op_cache_t {
  int32_t count;
  loom_eager_op_t* ops[kGradOpCacheSize];
  // The name each was asked for last: gradient functions name their ops
  // with string literals, so a pointer comparison usually finds the op.
  const char* keys[kGradOpCacheSize];
} loom__grad_op_cache_t;

// An op for `op_name` in `eager`: an idle one of that name, or a new one.
loom_status_t loom__grad_op_cache_get(loom__grad_op_cache_t* cache,
                                      loom_context_t* eager,
                                      const char* op_name,
                                      loom_eager_op_t** out_op);
// Gives an op back (reset, or destroyed when the cache is full); `op_name`
// is the name it was asked for with (its address is the key of a quick
// look-up; the name itself decides).
void loom__grad_op_cache_put(loom__grad_op_cache_t* cache, loom_eager_op_t* op,
                             const char* op_name);
// Gives the idle ops back to their context (loom_eager_op_recycle).
void loom__grad_op_cache_clear(loom__grad_op_cache_t* cache);

// The view a gradient (or JVP) function gets of its forward op. Built on
// the stack by whoever calls the function; everything is borrowed.
struct loom_gradient_context_t {
  loom_context_t* eager;
  const char* op_name;
  const loom_op_def_t* op_def;  // may be NULL
  // The attributes the op was given (may be NULL: none). The complete set
  // (inferred ones and defaults) is made on first use.
  const loom_op_attrs_t* given_attrs;
  bool attrs_completed;
  loom_op_attrs_t completed_attrs;
  int32_t num_inputs;
  int32_t num_outputs;
  // NULL entries: not kept (the function did not declare them used).
  loom_tensor_handle_t* const* inputs;
  loom_tensor_handle_t* const* outputs;
  const loom_tensor_metadata_t* input_metadata;
  const loom_tensor_metadata_t* output_metadata;
  loom__grad_op_cache_t* op_cache;  // may be NULL
  // Per input: whether its gradient is used; NULL: all are.
  const bool* input_needed;
  // Bit k: output k's gradient is the tape's own seed of ones alone (no
  // other contribution): all ones, with a zero derivative with respect to
  // anything (a constant, or OnesLike), so a gradient function may use its
  // value without an op on it (see loom__grad_output_gradient_is_ones).
  // The bit holds only for the handle the tape passed, output_gradients[k].
  uint64_t ones_output_gradients;
  loom_tensor_handle_t* const* output_gradients;  // as passed; may be NULL
};

// Fills `context` (no allocation; attrs are completed lazily).
void loom__gradient_context_initialize(
    loom_gradient_context_t* context, loom_context_t* eager,
    const char* op_name, const loom_op_def_t* op_def,
    const loom_op_attrs_t* given_attrs, int32_t num_inputs,
    loom_tensor_handle_t* const* inputs,
    const loom_tensor_metadata_t* input_metadata, int32_t num_outputs,
    loom_tensor_handle_t* const* outputs,
    const loom_tensor_metadata_t* output_metadata);
// Frees the completed attributes, if they were made.
void loom__gradient_context_deinitialize(loom_gradient_context_t* context);

// The first error the built-in gradient families reported when they
// registered (they register on first use); OK when none did.
loom_status_t loom__gradient_builtins_status(void);

// Changes whenever a gradient is registered: a loom_gradient_find result
// taken at one generation holds while it is current.
uint64_t loom__gradient_generation(void);

// The key of the note (loom_op_invocation_note_t) a recompute handler
// leaves on each op it passes on: its value is the handler's segment (the
// state a recompute handler and its merges share), and a tape below it
// records the op in that segment. The note left last is the outermost
// recompute scope's, which wins.
extern const char loom__recompute_segment_note;

// The recompute segment `invocation` runs in, or NULL outside any. A tape
// retains it (loom__passthrough_shared_retain) while it keeps a segment of
// it, so that its address names one segment.
static inline loom__passthrough_shared_t* loom__recompute_segment_of(
    const loom_op_invocation_t* invocation) {
  return (loom__passthrough_shared_t*)loom_op_invocation_note(
      invocation, &loom__recompute_segment_note);
}

#endif  // LOOM_HANDLERS_AUTODIFF_AUTODIFF_INTERNAL_H_
