// Shared by the files of src/handlers/vmap/:
//   vmap_handler.c   the handler, its tensors and the public API;
//   vmap_batch.c     moving, padding and broadcasting batch dimensions, and
//                    running ops on the outer handler;
//   vmap_rules.c     the batching rules and their table;
//   vmap_rules_layout.c  the rules of the ops that move data around
//                    (Reshape, Transpose, ConcatV2, Slice, ...);
//   vmap_rules_nn.c  the rules of convolutions, pooling, batch norm and
//                    their gradients (the batch folded into N or C);
//   vmap_rules_index.c  GatherNd and the scatters (indices gain the
//                    example's number);
//   vmap_random.c    random ops and the randomness option;
//   vmap_control_flow.c  ops that call functions (If, Case, While,
//                    PartitionedCall): their functions run on the vmap,
//                    examples taking different branches selected apart;
//   vmap_fallback.c  the per-example fallback for ops without a rule;
//   vmap_table.c     every op's rule, or the reason it has none.

#ifndef LOOM_HANDLERS_VMAP_VMAP_INTERNAL_H_
#define LOOM_HANDLERS_VMAP_VMAP_INTERNAL_H_

#include "frontend/passthrough_handler.h"
#include "handlers/autodiff/grad_ops.h"
#include "loom/vmap.h"

// One example's view of a tensor: `value` is a tensor of the outer handler
// (or of any other handler when unbatched), batched along `axis`, or the
// same for every example when `axis` is LOOM_VMAP_UNBATCHED.
typedef struct loom__vmap_value_t {
  loom_tensor_handle_t* value;
  int64_t axis;
} loom__vmap_value_t;

// One op's batching: what a rule sees and fills.
typedef struct loom__vmap_call_t {
  loom_context_t* context;  // ops run here, in the outer handler's scope
  const char* op_name;
  const loom_op_attrs_t* attrs;  // the op's (borrowed)
  int64_t batch_size;
  int32_t num_inputs;
  const loom__vmap_value_t* inputs;              // borrowed
  const loom_tensor_metadata_t* input_metadata;  // one example's
  int32_t num_outputs;
  loom__vmap_value_t* outputs;  // the rule stores new references
  // For the rule that runs functions on the vmap (control_flow): the
  // handler the op ran on, the op's arguments as given (borrowed: tensors
  // of that handler, or of others) and the handler its ops run on.
  loom_op_handler_t* handler;
  loom_tensor_handle_t* const* arguments;
  loom_op_handler_t* outer;
  // The op prepared on `outer` (borrowed, may be NULL): the rules that run
  // the op itself with its attributes run it (loom__vmap_run_into_outputs).
  loom_prepared_op_t* outer_op;
} loom__vmap_call_t;

// A batching rule: OK with every output set, or an error. *out_fallback:
// the rule does not apply (a batched axis list, ...), the per-example
// fallback runs instead (nothing is set).
typedef loom_status_t (*loom__vmap_rule_fn_t)(loom__vmap_call_t* call,
                                              bool* out_fallback);

typedef struct loom__vmap_rule_t {
  const char* op_name;
  loom__vmap_rule_fn_t fn;
  const char* description;
} loom__vmap_rule_t;

// vmap_control_flow.c: the execute_function_call hook: a call of a
// stateless function with a batched argument runs as its batched function
// (vmap_call_batch.h).
loom_status_t loom__vmap_execute_function_call(loom_op_handler_t* handler,
                                               loom_function_call_t* call,
                                               loom_tensor_handle_t** results,
                                               bool* out_taken);

// Whether `vmap` runs the calls it sees op by op (vmap_call_batch.h).
bool loom__vmap_leaves_calls(const loom_op_handler_t* vmap);

// The rule of `op_name`, or NULL; the table, sorted by name.
const loom__vmap_rule_t* loom__vmap_find_rule(const char* op_name);
size_t loom__vmap_rule_count(void);
const loom__vmap_rule_t* loom__vmap_rule_at(size_t index);

// vmap_table.c: the reason an op without a rule has none, or NULL.
const char* loom__vmap_no_rule_reason(const char* op_name);

// vmap_batch.c: ops on the outer handler (the caller is in its scope).

// Runs `op_name` on inputs[0, n) with the attributes `extra` (they win),
// then those of `attrs` (may be NULL); writes `num_results` results.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_run(
    loom_context_t* context, const char* op_name,
    loom_tensor_handle_t* const* inputs, int32_t num_inputs,
    const loom_op_attrs_t* attrs, const loom__grad_attr_t* extra,
    int32_t num_extra, loom_tensor_handle_t** results, int32_t num_results);

// The metadata of a tensor (waiting for it).
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_metadata(loom_tensor_handle_t* handle, loom_tensor_metadata_t* out);

// `input` (batched) with the batch dimension first: a new reference.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_to_front(
    loom__vmap_call_t* call, int32_t input, loom_tensor_handle_t** out);
// The same for any value of `rank` dimensions per example.
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_move_front(loom_context_t* context, const loom__vmap_value_t* value,
                      int32_t rank, loom_tensor_handle_t** out);
// A tensor with its batch dimension first moved to `axis` (0 <= axis <=
// rank): a new reference.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_move_from_front(
    loom_context_t* context, loom_tensor_handle_t* value, int32_t rank,
    int64_t axis, loom_tensor_handle_t** out);
// Input `input` with the batch dimension first and 1s after it up to
// `rank` dimensions per example (for broadcasting with operands of up to
// that rank); an unbatched input is returned as it is.
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_padded(loom__vmap_call_t* call, int32_t input, int32_t rank,
                  loom_tensor_handle_t** out);
// Input `input` as a [B, ...] tensor, an unbatched one broadcast.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_materialized(
    loom__vmap_call_t* call, int32_t input, loom_tensor_handle_t** out);
// Broadcasts an unbatched tensor of shape `shape` to [batch_size, shape].
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_broadcast(
    loom_context_t* context, loom_tensor_handle_t* value,
    const loom_shape_t* shape, int64_t batch_size, loom_tensor_handle_t** out);
// Reshape to dims[0, rank).
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_reshape(
    loom_context_t* context, loom_tensor_handle_t* value, const int64_t* dims,
    int32_t rank, loom_tensor_handle_t** out);
// An int32 constant (int64 when `dtype` is INT64) of shape dims[0, rank)
// holding `values`, on the host.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_int_tensor(
    loom_context_t* context, loom_dtype_t dtype, const int64_t* values,
    const int64_t* dims, int32_t rank, loom_tensor_handle_t** out);
// An int32 vector constant (int64 when `dtype` is INT64) on the host (a
// scalar holding values[0] when `scalar`).
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_int_vector(
    loom_context_t* context, loom_dtype_t dtype, const int64_t* values,
    int32_t count, bool scalar, loom_tensor_handle_t** out);
// The values of an unbatched integer input (at most `capacity`).
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_read_ints(loom_context_t* context, loom_tensor_handle_t* handle,
                     int64_t* values, int32_t capacity, int32_t* out_count);

// Rule helpers (vmap_batch.c).

// Makes input `input` ready for an op: padded, materialized, ... (`rank`:
// the largest rank of the op's examples, for padding).
typedef loom_status_t (*loom__vmap_prepare_fn_t)(loom__vmap_call_t* call,
                                                 int32_t input, int32_t rank,
                                                 loom_tensor_handle_t** out);

// The largest per-example rank of the inputs.
int32_t loom__vmap_max_rank(const loom__vmap_call_t* call);

// Whether input `input` is batched.
bool loom__vmap_batched(const loom__vmap_call_t* call, int32_t input);

// Runs `op_name` on inputs[0, n) (owned: released here) with the op's
// attributes after `extra`, into every output, batched first.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_run_into_outputs(
    loom__vmap_call_t* call, const char* op_name, loom_tensor_handle_t** inputs,
    int32_t n, bool with_attrs, const loom__grad_attr_t* extra,
    int32_t num_extra);

// Every input through `prepare` into inputs[0, num_inputs) (new
// references; none on error).
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_prepare_all(loom__vmap_call_t* call, loom__vmap_prepare_fn_t prepare,
                       int32_t rank, loom_tensor_handle_t** inputs);

// A loom__vmap_prepare_fn_t: the input as [B, ...] (loom__vmap_materialized).
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_materialized_input(loom__vmap_call_t* call, int32_t input,
                              int32_t rank, loom_tensor_handle_t** out);

// Runs the op itself on the inputs after `prepare`.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_same_op(
    loom__vmap_call_t* call, loom__vmap_prepare_fn_t prepare, int32_t rank);

// Normalizes an axis of an example of `rank` dimensions (TensorFlow's
// negative axes) and shifts it past the batch dimension.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_shift_axis(
    const loom__vmap_call_t* call, int64_t* axis, int32_t rank);

// The rule preamble: false (and *out_fallback set) when an input outside
// `allowed` (bit i: input i may be batched) is batched, so the rule does
// not apply and the per-example fallback runs.
bool loom__vmap_require_unbatched(const loom__vmap_call_t* call,
                                  uint32_t allowed, bool* out_fallback);

// Runs `op_name` on inputs[0, n) (owned: released here, also on error)
// into every output, batched first: a NULL inputs[front] becomes input
// `front` with the batch first, any other NULL slot (and an unbatched
// `front`) the call's input as it is.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_run_front(
    loom__vmap_call_t* call, const char* op_name, int32_t front,
    loom_tensor_handle_t** inputs, int32_t n, bool with_attrs,
    const loom__grad_attr_t* extra, int32_t num_extra);

// `value` (batched, `rank` dimensions per example) with its batch
// dimension moved to `axis` (0 <= axis <= rank) in one Transpose.
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_move_to(loom_context_t* context, const loom__vmap_value_t* value,
                   int32_t rank, int64_t axis, loom_tensor_handle_t** out);

// Input `input` (an unbatched one broadcast) with the batch folded into
// one example's dimension `dim`: that dimension becomes B * size, example
// b's slice at [b * size, (b + 1) * size).
LOOM_MUST_USE_RESULT loom_status_t
loom__vmap_fold_into(loom__vmap_call_t* call, int32_t input, int32_t dim,
                     loom_tensor_handle_t** out);

// Splits dimension `dim` of output `output` (B * size) into [B, size],
// the batch axis `dim`: the inverse of loom__vmap_fold_into.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_unfold_output(
    loom__vmap_call_t* call, int32_t output, int32_t dim, int64_t size);

// The layout rules (vmap_rules_layout.c).
#define LOOM__VMAP_RULE(name)                                \
  LOOM_MUST_USE_RESULT loom_status_t loom__vmap_rule_##name( \
      loom__vmap_call_t* call, bool* out_fallback)
LOOM__VMAP_RULE(reshape);
LOOM__VMAP_RULE(transpose);
LOOM__VMAP_RULE(expand_dims);
LOOM__VMAP_RULE(squeeze);
LOOM__VMAP_RULE(concat);
LOOM__VMAP_RULE(pack);
LOOM__VMAP_RULE(slice);
LOOM__VMAP_RULE(tile);
LOOM__VMAP_RULE(broadcast_to);
LOOM__VMAP_RULE(fill);
LOOM__VMAP_RULE(strided_slice);
LOOM__VMAP_RULE(pad);
LOOM__VMAP_RULE(gather);
LOOM__VMAP_RULE(split);
LOOM__VMAP_RULE(one_hot);

// The rules of neural-network ops (vmap_rules_nn.c).
LOOM__VMAP_RULE(fold_first);
LOOM__VMAP_RULE(fold_first_two);
LOOM__VMAP_RULE(fold_all);
LOOM__VMAP_RULE(avg_pool_grad);
LOOM__VMAP_RULE(conv2d);
LOOM__VMAP_RULE(conv_backprop_input);
LOOM__VMAP_RULE(conv_backprop_filter);
LOOM__VMAP_RULE(batch_norm);
LOOM__VMAP_RULE(l2_loss);

// The rules of indexing ops (vmap_rules_index.c).
LOOM__VMAP_RULE(gather_nd);
LOOM__VMAP_RULE(scatter_nd);

// vmap_random.c: random ops and the randomness option.
#define LOOM__VMAP_NOT_RANDOM (-2)
// LOOM__VMAP_NOT_RANDOM for an op that draws no random numbers; else the
// index of its seed input (a stateless op), or -1.
int32_t loom__vmap_random_seed_input(const char* op_name);
// The error of a random op under LOOM_VMAP_RANDOMNESS_ERROR.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_random_error(const char* op_name);
// LOOM_VMAP_RANDOMNESS_DIFFERENT with unbatched inputs: the op once, its
// shape (input 0) with the batch prepended.
LOOM__VMAP_RULE(random_different);

// vmap_handler.c: a tensor of `handler` (a vmap) viewing `value`
// (retained) batched along `axis`.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_wrap(loom_op_handler_t* handler,
                                                   loom_tensor_handle_t* value,
                                                   int64_t axis,
                                                   loom_tensor_handle_t** out);
// The view `handle` is on `handler`'s vmap: its value and axis when it is a
// tensor of it (borrowed), else the handle itself, unbatched.
loom__vmap_value_t loom__vmap_unwrap(const loom_op_handler_t* handler,
                                     loom_tensor_handle_t* handle);

// vmap_control_flow.c: the rule of If, StatelessIf, Case, StatelessCase,
// While, StatelessWhile, PartitionedCall and StatefulPartitionedCall (and
// any op that calls a function). Unlike the others it runs in the caller's
// scope, not the outer handler's: the functions it runs are batched op by
// op by this handler (it enters the outer handler's scope for its own
// ops).
LOOM__VMAP_RULE(control_flow);
// The rule of an op that calls a function (`op_name` one of them, or the
// name of a function): NULL for other ops.
const loom__vmap_rule_t* loom__vmap_call_rule(loom_context_t* context,
                                              const char* op_name,
                                              const loom_op_def_t* op_def);

// vmap_fallback.c: runs the op once per example and stacks the results.
LOOM_MUST_USE_RESULT loom_status_t loom__vmap_fallback(loom__vmap_call_t* call);

#endif  // LOOM_HANDLERS_VMAP_VMAP_INTERNAL_H_
