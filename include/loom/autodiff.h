// Automatic differentiation as front-end op handlers: the gradient tape
// (reverse mode), the forward accumulator (forward mode), the recompute
// handler (gradient checkpointing), and the registries of gradient and JVP
// functions that built-in ops and plugins fill.
//
//   loom_op_handler_t* tape;
//   LOOM_RETURN_IF_ERROR(loom_tape_create(ctx, NULL, &tape));
//   LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, tape));
//   LOOM_RETURN_IF_ERROR(loom_tape_watch(tape, x));
//   ... y = f(x) with eager ops ...
//   LOOM_RETURN_IF_ERROR(loom_context_exit_scope(ctx));
//   loom_tensor_handle_t* dx;
//   LOOM_RETURN_IF_ERROR(loom_tape_gradient(tape, &y, 1, &x, 1, NULL,
//                                           LOOM_UNCONNECTED_NONE, &dx));
//   loom_op_handler_release(tape);
//
// The tape is a pass-through handler: ops in its scope run on the handler it
// was merged with and their results are that handler's tensors (the tape's
// tensor representation is trivial), so nothing has to be copied off it.
// The ops a gradient function executes run in the scope of the handlers the
// forward op ran under, outside this tape: a tape entered around the
// gradient computation records them, which gives higher-order gradients.

#ifndef LOOM_AUTODIFF_H_
#define LOOM_AUTODIFF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/eager.h"
#include "loom/macros.h"
#include "loom/op_attrs.h"
#include "loom/op_handler.h"
#include "loom/status.h"
#include "loom/tensor_handle.h"
#include "loom/tensor_metadata.h"

LOOM_EXTERN_C_BEGIN

//===----------------------------------------------------------------------===//
// What a gradient or JVP function sees of its forward op
//===----------------------------------------------------------------------===//

typedef struct loom_gradient_context_t loom_gradient_context_t;

// The eager context to execute the backward (or tangent) ops in. Ops
// executed with loom_eager_op_* while the function runs are placed with the
// forward op's handlers.
LOOM_API loom_context_t* loom_gradient_context_eager(
    const loom_gradient_context_t* context);
LOOM_API const char* loom_gradient_context_op_name(
    const loom_gradient_context_t* context);
// The attributes the forward op ran with (given, inferred and defaults).
LOOM_API const loom_op_attrs_t* loom_gradient_context_attrs(
    const loom_gradient_context_t* context);
// One attribute of the forward op (given, or its definition's default;
// else looked up in loom_gradient_context_attrs): false when it has none.
// Cheaper than the complete set when a function reads a few attributes.
LOOM_API bool loom_gradient_context_attr(const loom_gradient_context_t* context,
                                         const char* name,
                                         loom_attr_value_t* out_value);
// The forward op's flat inputs and outputs.
LOOM_API int32_t
loom_gradient_context_num_inputs(const loom_gradient_context_t* context);
LOOM_API int32_t
loom_gradient_context_num_outputs(const loom_gradient_context_t* context);
// Forward input or output `index` (borrowed), or NULL when the function's
// definition did not declare it as used (inputs_used / outputs_used) or the
// index is out of range.
LOOM_API loom_tensor_handle_t* loom_gradient_context_input(
    const loom_gradient_context_t* context, int32_t index);
LOOM_API loom_tensor_handle_t* loom_gradient_context_output(
    const loom_gradient_context_t* context, int32_t index);
// The dtype and shape of every forward input and output are always kept
// (they are small): for the functions that need only shapes.
LOOM_API const loom_tensor_metadata_t* loom_gradient_context_input_metadata(
    const loom_gradient_context_t* context, int32_t index);
LOOM_API const loom_tensor_metadata_t* loom_gradient_context_output_metadata(
    const loom_gradient_context_t* context, int32_t index);
// Whether the caller uses the gradient of forward input `index` (false
// when the index is out of range). A gradient function may leave the
// gradients of the other inputs NULL and skip their work: the tape asks
// only for inputs that lead to a source (TensorFlow's skip_input_indices),
// so the first layer's MatMul computes no gradient for the batch. JVP
// functions always see true.
LOOM_API bool loom_gradient_context_input_needs_gradient(
    const loom_gradient_context_t* context, int32_t index);

//===----------------------------------------------------------------------===//
// Gradient (VJP) functions
//===----------------------------------------------------------------------===//

// Computes the gradients of the forward op's inputs from those of its
// outputs. `output_gradients[i]` (borrowed) is NULL when no gradient flows
// into output i (it is zero). The function stores a new reference in
// `input_gradients[j]` for each input it has a gradient for and leaves the
// others NULL (no gradient: an integer input, a shape, an index). The
// gradients have the inputs' dtypes and shapes.
typedef loom_status_t (*loom_gradient_fn_t)(
    loom_gradient_context_t* context,
    loom_tensor_handle_t* const* output_gradients,
    loom_tensor_handle_t** input_gradients, void* user_data);

// Bit i: the function reads forward input (output) i; the tape keeps only
// these alive. LOOM_GRADIENT_USES_ALL keeps all of them, whatever their
// number.
#define LOOM_GRADIENT_USES_NONE ((uint64_t)0)
#define LOOM_GRADIENT_USES_ALL (~(uint64_t)0)
#define LOOM_GRADIENT_USES(i) ((uint64_t)1 << (i))

// A gradient flag: the op is a collective, whose backward pass is another
// collective that every participant must join. A tape records such an op
// even when none of its inputs is tracked (a broadcast's receivers), counts
// its outputs as leading to a source, and runs its gradient function in
// every gradient computation, also when no gradient reached its outputs
// (they are NULL then: the function brings zeros), so that no participant
// is left waiting. Every participant must compute its gradients in the
// same order.
#define LOOM_GRADIENT_COLLECTIVE ((uint32_t)1)

typedef struct loom_gradient_def_t {
  // sizeof(loom_gradient_def_t); definitions made before `flags` existed
  // (struct_size up to outputs_used) are accepted with no flags.
  size_t struct_size;
  const char* op_name;
  // NULL: the op is not differentiable; the tape records nothing for it and
  // gradients stop at its outputs (as TensorFlow's NotDifferentiable).
  loom_gradient_fn_t fn;
  void* user_data;
  uint64_t inputs_used;
  uint64_t outputs_used;
  uint32_t flags;  // LOOM_GRADIENT_COLLECTIVE, or 0
} loom_gradient_def_t;

// Registers the gradient of an op (process-wide, thread-safe; the
// definition is copied, the op name too). ALREADY_EXISTS when the op has
// one; INVALID_ARGUMENT for a NULL definition or name. A plugin that adds
// an op registers its gradient here.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_gradient_register(const loom_gradient_def_t* def);

// The registered gradient of `op_name` (valid for the process's life), or
// NULL when none is registered. Registers the built-in gradients first.
LOOM_API const loom_gradient_def_t* loom_gradient_find(const char* op_name);

//===----------------------------------------------------------------------===//
// JVP functions (forward mode)
//===----------------------------------------------------------------------===//

// Computes the tangents of the forward op's outputs from those of its
// inputs. `input_tangents[j]` (borrowed) is NULL when input j has none (it
// is zero); the function stores a new reference in `output_tangents[i]`
// for each output with a tangent and leaves the others NULL.
typedef loom_status_t (*loom_jvp_fn_t)(
    loom_gradient_context_t* context,
    loom_tensor_handle_t* const* input_tangents,
    loom_tensor_handle_t** output_tangents, void* user_data);

typedef struct loom_jvp_def_t {
  size_t struct_size;  // sizeof(loom_jvp_def_t)
  const char* op_name;
  loom_jvp_fn_t fn;  // NULL: not differentiable
  void* user_data;
  uint64_t inputs_used;
  uint64_t outputs_used;
} loom_jvp_def_t;

// As loom_gradient_register. An op with a gradient but no JVP function is
// differentiated in forward mode by transposing its gradient function.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_jvp_register(const loom_jvp_def_t* def);
LOOM_API const loom_jvp_def_t* loom_jvp_find(const char* op_name);

//===----------------------------------------------------------------------===//
// The gradient tape (reverse mode)
//===----------------------------------------------------------------------===//

typedef struct loom_tape_options_t {
  size_t struct_size;  // sizeof(loom_tape_options_t)
  // A persistent tape may compute gradients several times; a tape that is
  // not releases what it recorded when loom_tape_gradient returns.
  bool persistent;
  // Resource variables read in the tape's scope (ReadVariableOp) are
  // watched without loom_tape_watch (TensorFlow's default).
  bool watch_accessed_variables;
} loom_tape_options_t;

// Defaults: not persistent, watching accessed variables.
LOOM_API void loom_tape_options_initialize(loom_tape_options_t* options);

// A tape handler (type "TAPE") for `context`; enter it as a scope
// (loom_context_enter_scope) to record the ops of the scope that depend on
// watched tensors. `options` may be NULL.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tape_create(loom_context_t* context, const loom_tape_options_t* options,
                 loom_op_handler_t** out_tape);

// Watches a tensor (a float tensor, or a resource variable's handle:
// gradients then flow through its reads). Also on a merged tape (the handler
// the scope runs on).
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tape_watch(loom_op_handler_t* tape, loom_tensor_handle_t* handle);

// Pauses (stop) and resumes recording on the calling thread
// (tf.GradientTape.stop_recording). Stop and resume nest.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tape_stop_recording(loom_op_handler_t* tape);
LOOM_API LOOM_MUST_USE_RESULT loom_status_t
loom_tape_resume_recording(loom_op_handler_t* tape);

typedef enum loom_unconnected_gradients_t {
  LOOM_UNCONNECTED_NONE = 0,  // NULL for a source the targets do not reach
  LOOM_UNCONNECTED_ZERO = 1,  // zeros shaped like the source
} loom_unconnected_gradients_t;

// The gradients of the sum of `targets` with respect to each source
// (tf.GradientTape.gradient). `output_gradients` (may be NULL: ones) gives
// the initial gradient of each target. Writes one new reference (or NULL,
// see `unconnected`) per source to `out_gradients`. A source that is a
// resource variable's handle gets the gradient of its value. Called on a
// tape that is not persistent a second time: FAILED_PRECONDITION.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tape_gradient(
    loom_op_handler_t* tape, loom_tensor_handle_t* const* targets,
    int32_t num_targets, loom_tensor_handle_t* const* sources,
    int32_t num_sources, loom_tensor_handle_t* const* output_gradients,
    loom_unconnected_gradients_t unconnected,
    loom_tensor_handle_t** out_gradients);

// Called by loom_tape_gradient_with_options once the gradient of source
// `source_index` is final: every contribution to it has been summed. The
// backward pass visits the recorded ops last first, so the sources the
// last ops read (a network's last layer) are reported first, while the
// backward pass still has the earlier ops to run. Each source is reported
// exactly once; a source the targets do not reach (and one not on the
// tape) is reported after the backward pass, with what `out_gradients`
// gets for it (NULL, or zeros; see `unconnected`). `gradient` (borrowed;
// retain it to keep it) is the handle `out_gradients[source_index]`
// receives. The callback runs on the calling thread in the caller's scope,
// with the tape locked: it may execute ops (this tape does not record
// them) but must not use this tape. An error it returns stops the
// gradient computation: loom_tape_gradient_with_options returns it,
// annotated with the source's index, and writes no gradients.
typedef loom_status_t (*loom_tape_gradient_ready_fn_t)(
    void* user_data, int32_t source_index, loom_tensor_handle_t* gradient);

typedef struct loom_tape_gradient_options_t {
  size_t struct_size;  // sizeof(loom_tape_gradient_options_t)
  // NULL: no source is reported (as loom_tape_gradient).
  loom_tape_gradient_ready_fn_t gradient_ready;
  void* user_data;  // passed to gradient_ready
} loom_tape_gradient_options_t;

// Sets struct_size; no callback.
LOOM_API void loom_tape_gradient_options_initialize(
    loom_tape_gradient_options_t* options);

// loom_tape_gradient with `options` (may be NULL: the same as
// loom_tape_gradient). The gradients are those loom_tape_gradient
// computes, bit for bit. INVALID_ARGUMENT for a struct_size smaller than
// the fields up to user_data.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tape_gradient_with_options(
    loom_op_handler_t* tape, loom_tensor_handle_t* const* targets,
    int32_t num_targets, loom_tensor_handle_t* const* sources,
    int32_t num_sources, loom_tensor_handle_t* const* output_gradients,
    loom_unconnected_gradients_t unconnected,
    const loom_tape_gradient_options_t* options,
    loom_tensor_handle_t** out_gradients);

// The Jacobian of `target` with respect to `source`, shaped
// target.shape + source.shape (tf.GradientTape.jacobian, computed row by
// row; meant for small cases). The tape must be persistent.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tape_jacobian(
    loom_op_handler_t* tape, loom_tensor_handle_t* target,
    loom_tensor_handle_t* source, loom_tensor_handle_t** out_jacobian);

// What a tape holds now (loom_tape_statistics).
typedef struct loom_tape_statistics_t {
  size_t struct_size;  // set by the caller: sizeof(loom_tape_statistics_t)
  int64_t num_ops;     // the ops recorded
  int64_t num_recompute_segments;
  // The distinct tensors the recorded ops keep alive for their gradient
  // functions (and recompute segments to recompute from), and their size:
  // elements times the dtype's size.
  int64_t num_kept_tensors;
  int64_t kept_bytes;
} loom_tape_statistics_t;

// Fills *out_statistics (its struct_size set by the caller; thread-safe).
// INVALID_ARGUMENT for a handler that is not a tape or a struct_size that
// is too small.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_tape_statistics(
    loom_op_handler_t* tape, loom_tape_statistics_t* out_statistics);

//===----------------------------------------------------------------------===//
// The forward accumulator (forward mode)
//===----------------------------------------------------------------------===//

// A forward-accumulator handler (type "FORWARD"): a tensor made in its
// scope is a primal and a tangent (its representation); ops compute both.
// Accumulators nested with each other or with tapes keep their
// perturbations apart; forward-over-reverse gives Hessian-vector products.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_forward_accumulator_create(
    loom_context_t* context, loom_op_handler_t** out_accumulator);

// Gives `primal` the tangent `tangent` (same dtype and shape) for this
// accumulator: *out_handle (a new reference) is the primal on the
// accumulator, to compute with in its scope.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_forward_accumulator_watch(
    loom_op_handler_t* accumulator, loom_tensor_handle_t* primal,
    loom_tensor_handle_t* tangent, loom_tensor_handle_t** out_handle);

// The tangent of `handle` for this accumulator (tf.autodiff.
// ForwardAccumulator.jvp): a new reference, or NULL / zeros as
// `unconnected` says when it has none.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_forward_accumulator_jvp(
    loom_op_handler_t* accumulator, loom_tensor_handle_t* handle,
    loom_unconnected_gradients_t unconnected,
    loom_tensor_handle_t** out_tangent);

//===----------------------------------------------------------------------===//
// The recompute handler (gradient checkpointing)
//===----------------------------------------------------------------------===//

// A recompute handler (type "RECOMPUTE"): ops executed in its scope, inside
// a tape's, let the tape keep only their inputs; the intermediate values
// their gradients need are recomputed from those when the backward pass
// reaches them (tf.recompute_grad).
//
// One handler is one segment (one call of a function tf.recompute_grad
// wraps): create one for each segment to checkpoint — it is cheap — and
// release it after leaving its scope. Re-entering a handler continues its
// segment when nothing else was recorded in between. The segment is
// recomputed as a whole, so ops in it are expected to be deterministic
// (random ops draw again). Outside any tape's scope it only passes ops on.
LOOM_API LOOM_MUST_USE_RESULT loom_status_t loom_recompute_handler_create(
    loom_context_t* context, loom_op_handler_t** out_handler);

LOOM_EXTERN_C_END

#endif  // LOOM_AUTODIFF_H_
