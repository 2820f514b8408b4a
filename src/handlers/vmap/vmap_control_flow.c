// vmap of the ops that call functions. Their functions run on this vmap,
// as eager ops of the caller's scope, so that each op of a body is batched
// by its own rule; the rule's own ops (masks, selections) run on the outer
// handler.
//
//   If / StatelessIf with a batched condition: the branches the examples
//   take run (both when the condition cannot be read on the host, under a
//   second vmap), and each output is selected per example (SelectV2).
//   Case / StatelessCase with a batched index: the same over the branches
//   taken (an index out of range takes the last, as TensorFlow's Case).
//   While / StatelessWhile with batched loop variables: the condition and
//   the body run on the whole batch until no example's condition holds;
//   once an example's condition fails, its loop variables stop changing
//   (the body's results are selected against them), so each example ends
//   with the values its own loop would give.
//   PartitionedCall, StatefulPartitionedCall and a function's name as the
//   op: the call runs again as an eager op, its body op by op.
//
// A call offered to the vmap (execute_function_call) of a stateless
// function runs as its batched function (vmap_call_batch.h), made once per
// key and run planned on the outer handler.
//
// A condition that is not a scalar is true when it has elements, the same
// for every example. Strings and a While whose condition cannot be read on
// the host take the per-example fallback.

#include <string.h>

#include <stdatomic.h>

#include "corert/corert_internal.h"
#include "frontend/function_hooks.h"
#include "handlers/vmap/vmap_call_batch.h"
#include "handlers/vmap/vmap_internal.h"

typedef enum flow_kind_t {
  kFlowCall = 0,
  kFlowIf,
  kFlowCase,
  kFlowWhile,
} flow_kind_t;

static flow_kind_t kind_of(const char* op_name) {
  if (strcmp(op_name, "If") == 0 || strcmp(op_name, "StatelessIf") == 0) {
    return kFlowIf;
  }
  if (strcmp(op_name, "Case") == 0 || strcmp(op_name, "StatelessCase") == 0) {
    return kFlowCase;
  }
  if (strcmp(op_name, "While") == 0 || strcmp(op_name, "StatelessWhile") == 0) {
    return kFlowWhile;
  }
  return kFlowCall;
}

const loom__vmap_rule_t* loom__vmap_call_rule(loom_context_t* context,
                                              const char* op_name,
                                              const loom_op_def_t* op_def) {
  static const loom__vmap_rule_t kCall = {
      .op_name = "(function)",
      .fn = loom__vmap_rule_control_flow,
      .description = "the function's body op by op, each op by its rule",
  };
  (void)op_def;
  const loom_op_def_t* def = NULL;
  void* function = NULL;
  bool calls = false;
  loom_status_t status =
      loom__context_resolve_op(context, op_name, &def, &function, &calls);
  loom__context_release_function(context, function);
  if (status) {
    loom_status_free(status);
    return NULL;
  }
  return calls ? &kCall : NULL;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

// A result of a function, or a loop variable: a tensor of the vmap (or of
// another handler: unbatched), its view and one example's shape.
typedef struct flow_value_t {
  loom_tensor_handle_t* handle;  // owned
  loom__vmap_value_t view;       // borrowed from `handle`
  loom_shape_t shape;
  loom_dtype_t dtype;
} flow_value_t;

static void release_values(flow_value_t* values, int32_t count) {
  for (int32_t i = 0; values && i < count; ++i) {
    if (values[i].handle) loom_tensor_handle_release(values[i].handle);
    values[i].handle = NULL;
  }
}

// Takes `handle` (owned) into `out`; its error, if it is an error handle.
static loom_status_t take_value(loom__vmap_call_t* call,
                                loom_tensor_handle_t* handle,
                                flow_value_t* out) {
  out->handle = handle;
  loom_tensor_metadata_t metadata;
  LOOM_RETURN_IF_ERROR(loom_tensor_handle_wait_metadata(handle, &metadata));
  out->view = loom__vmap_unwrap(call->handler, handle);
  out->shape = metadata.shape;
  out->dtype = metadata.dtype;
  return loom_ok_status();
}

// Allocates `count` values (at least one), zero-filled.
static loom_status_t new_values(int32_t count, flow_value_t** out) {
  return loom_allocator_calloc(loom_allocator_default(),
                               sizeof(**out) * (size_t)(count ? count : 1),
                               (void**)out);
}

static void free_values(flow_value_t* values, int32_t count) {
  release_values(values, count);
  loom_allocator_free(loom_allocator_default(), values);
}

// The name of the function attr `attr` names (element `index` of a list
// when >= 0).
static loom_status_t function_name(const loom__vmap_call_t* call,
                                   const char* attr, int64_t index, char* name,
                                   size_t capacity) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(call->attrs, attr, &value) ||
      value.kind != LOOM_ATTR_KIND_FUNC || value.is_list != (index >= 0)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "%s: attr '%s' is not set to %s",
        call->op_name, attr, index >= 0 ? "a list of functions" : "a function");
  }
  if (index >= 0) {
    loom_attr_value_t list = value;
    LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(&list, index, &value));
  }
  if (value.u.string.size >= capacity) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr '%s': function name of %zu bytes is too "
                            "long",
                            call->op_name, attr, value.u.string.size);
  }
  memcpy(name, value.u.string.data, value.u.string.size);
  name[value.u.string.size] = '\0';
  return loom_ok_status();
}

// Runs `op_name` (a function's name, or a call op with the call's attrs
// when `attrs`) on inputs[0, n) in the caller's scope, so that its ops run
// on the vmap; its `m` results into out[0, m) (none on error).
static loom_status_t call_function(loom__vmap_call_t* call, const char* op_name,
                                   loom_tensor_handle_t* const* inputs,
                                   int32_t n, const loom_op_attrs_t* attrs,
                                   flow_value_t* out, int32_t m) {
  loom_tensor_handle_t* stack[8];
  loom_tensor_handle_t** results = stack;
  if (m > 8) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*results) * (size_t)m,
                                               (void**)&results));
  }
  loom_status_t status = loom__vmap_run(call->context, op_name, inputs, n,
                                        attrs, NULL, 0, results, m);
  int32_t taken = 0;
  for (; taken < m && !status; ++taken) {
    status = take_value(call, results[taken], &out[taken]);
  }
  if (status) {
    // What was not taken yet is released here.
    for (int32_t k = taken; k < m; ++k) loom_tensor_handle_release(results[k]);
    release_values(out, taken);
  }
  if (results != stack) loom_allocator_free(loom_allocator_default(), results);
  if (status && strcmp(op_name, call->op_name) != 0) {
    status = loom_status_annotate(status, "vmap: %s: function '%s'",
                                  call->op_name, op_name);
  }
  return status;
}

// The handles of values[0, n) into handles[0, n) (borrowed).
static void handles_of(const flow_value_t* values, int32_t n,
                       loom_tensor_handle_t** handles) {
  for (int32_t i = 0; i < n; ++i) handles[i] = values[i].handle;
}

// Sets the outputs of the call to values[0, m) (their views, retained).
static void set_outputs(loom__vmap_call_t* call, const flow_value_t* values) {
  for (int32_t k = 0; k < call->num_outputs; ++k) {
    loom_tensor_handle_retain(values[k].view.value);
    call->outputs[k] = values[k].view;
  }
}

//===----------------------------------------------------------------------===//
// Ops on the outer handler (in its scope)
//===----------------------------------------------------------------------===//

// `value` as [B, ...] (an unbatched one broadcast).
static loom_status_t batch_first(loom__vmap_call_t* call,
                                 const flow_value_t* value,
                                 loom_tensor_handle_t** out) {
  if (value->view.axis == LOOM_VMAP_UNBATCHED) {
    return loom__vmap_broadcast(call->context, value->view.value, &value->shape,
                                call->batch_size, out);
  }
  return loom__vmap_move_front(call->context, &value->view, value->shape.rank,
                               out);
}

// Per example, `a` where mask[b] holds, else `b`: a [B, ...] tensor of the
// outer handler. `what` names the values for the error of unequal shapes.
static loom_status_t select_examples(loom__vmap_call_t* call,
                                     loom_tensor_handle_t* mask,
                                     const flow_value_t* a,
                                     const flow_value_t* b, const char* what,
                                     loom_tensor_handle_t** out) {
  *out = NULL;
  if (!loom_shape_equal(&a->shape, &b->shape) || a->dtype != b->dtype) {
    char sa[LOOM_SHAPE_FORMAT_MAX], sb[LOOM_SHAPE_FORMAT_MAX];
    loom_shape_format(&a->shape, sa, sizeof(sa));
    loom_shape_format(&b->shape, sb, sizeof(sb));
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "vmap: %s: %s: %s %s against %s %s; examples taking different paths "
        "need equal dtypes and shapes",
        call->op_name, what, loom_dtype_name(a->dtype), sa,
        loom_dtype_name(b->dtype), sb);
  }
  int64_t dims[LOOM_MAX_RANK];
  int32_t rank = a->shape.rank + 1;
  dims[0] = call->batch_size;
  for (int32_t d = 1; d < rank; ++d) dims[d] = 1;
  loom_tensor_handle_t* operands[3] = {NULL, NULL, NULL};
  loom_status_t status =
      rank == 1
          ? (loom_tensor_handle_retain(mask), operands[0] = mask,
             loom_ok_status())
          : loom__vmap_reshape(call->context, mask, dims, rank, &operands[0]);
  if (!status) status = batch_first(call, a, &operands[1]);
  if (!status) status = batch_first(call, b, &operands[2]);
  if (!status) {
    status = loom__vmap_run(call->context, "SelectV2", operands, 3, NULL, NULL,
                            0, out, 1);
  }
  loom__grad_release_all(operands, 3);
  return status;
}

// The truth of each example's scalar `value` as a [B] bool tensor (a bool
// scalar when it is unbatched): non-zero is true.
static loom_status_t truth_vector(loom__vmap_call_t* call,
                                  const flow_value_t* value,
                                  loom_tensor_handle_t** out) {
  loom_tensor_handle_t* front = value->view.value;
  if (value->view.axis == LOOM_VMAP_UNBATCHED) {
    loom_tensor_handle_retain(front);
  } else {
    LOOM_RETURN_IF_ERROR(
        loom__vmap_move_front(call->context, &value->view, 0, &front));
  }
  if (value->dtype == LOOM_DTYPE_BOOL) {
    *out = front;
    return loom_ok_status();
  }
  loom_status_t status = loom__vmap_run(
      call->context, "Cast", &front, 1, NULL,
      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", LOOM_DTYPE_BOOL)), out, 1);
  loom_tensor_handle_release(front);
  return status;
}

// Reads `count` elements of `dtype` of `handle` into `out`; false when its
// value cannot be read on the host (it is batched by a vmap around this
// one).
static bool read_host(loom__vmap_call_t* call, loom_tensor_handle_t* handle,
                      loom_dtype_t dtype, void* out, int64_t count) {
  loom_tensor_t* tensor = NULL;
  loom_status_t status = loom_context_resolve(call->context, handle, &tensor);
  if (status) {
    loom_status_free(status);
    return false;
  }
  bool ok = loom_tensor_dtype(tensor) == dtype &&
            loom_tensor_num_elements(tensor) == count;
  if (ok && count) {
    memcpy(out, loom_tensor_data(tensor),
           (size_t)count * loom_dtype_size(dtype));
  }
  loom_tensor_release(tensor);
  return ok;
}

static loom_status_t enter_outer(loom__vmap_call_t* call) {
  return loom_context_enter_scope(call->context, call->outer);
}

static void exit_outer(loom__vmap_call_t* call) {
  loom_status_ignore(loom_context_exit_scope(call->context));
}

//===----------------------------------------------------------------------===//
// If and Case
//===----------------------------------------------------------------------===//

// Runs `name` on the op's inputs after its first (the branch's inputs).
static loom_status_t run_branch(loom__vmap_call_t* call, const char* name,
                                flow_value_t* out) {
  return call_function(call, name, call->arguments + 1, call->num_inputs - 1,
                       NULL, out, call->num_outputs);
}

// Replaces current[0, m) by, per example, branch[k] where mask holds.
static loom_status_t select_into(loom__vmap_call_t* call,
                                 loom_tensor_handle_t* mask,
                                 const flow_value_t* branch,
                                 flow_value_t* current, const char* name) {
  LOOM_RETURN_IF_ERROR(enter_outer(call));
  loom_status_t status = loom_ok_status();
  for (int32_t k = 0; k < call->num_outputs && !status; ++k) {
    char what[400];
    snprintf(what, sizeof(what), "output %d of function '%s'", k, name);
    loom_tensor_handle_t* selected = NULL;
    status =
        select_examples(call, mask, &branch[k], &current[k], what, &selected);
    if (status) break;
    loom_tensor_handle_release(current[k].handle);
    current[k].handle = selected;
    current[k].view = (loom__vmap_value_t){selected, 0};
  }
  exit_outer(call);
  return status;
}

static loom_status_t run_if(loom__vmap_call_t* call, bool* out_fallback) {
  int32_t m = call->num_outputs;
  int64_t b = call->batch_size;
  const loom_tensor_metadata_t* cond = &call->input_metadata[0];
  if (call->inputs[0].axis == LOOM_VMAP_UNBATCHED ||
      cond->dtype == LOOM_DTYPE_STRING || b <= 0) {
    *out_fallback = true;
    return loom_ok_status();
  }
  char then_name[256], else_name[256];
  LOOM_RETURN_IF_ERROR(
      function_name(call, "then_branch", -1, then_name, sizeof(then_name)));
  LOOM_RETURN_IF_ERROR(
      function_name(call, "else_branch", -1, else_name, sizeof(else_name)));
  flow_value_t* then_values = NULL;
  flow_value_t* else_values = NULL;
  if (cond->shape.rank != 0) {
    // Not a scalar: true when it has elements, for every example alike.
    bool truth = loom_shape_num_elements(&cond->shape) > 0;
    LOOM_RETURN_IF_ERROR(new_values(m, &then_values));
    loom_status_t status =
        run_branch(call, truth ? then_name : else_name, then_values);
    if (!status) set_outputs(call, then_values);
    free_values(then_values, m);
    return status;
  }
  flow_value_t condition = {
      .view = call->inputs[0],
      .shape = cond->shape,
      .dtype = cond->dtype,
  };
  loom_tensor_handle_t* mask = NULL;
  bool* flags = NULL;
  loom_status_t status = enter_outer(call);
  if (!status) {
    status = truth_vector(call, &condition, &mask);
    exit_outer(call);
  }
  if (!status) {
    status = loom_allocator_malloc(loom_allocator_default(), (size_t)b,
                                   (void**)&flags);
  }
  bool any_true = true, any_false = true;
  if (!status && read_host(call, mask, LOOM_DTYPE_BOOL, flags, b)) {
    any_true = any_false = false;
    for (int64_t e = 0; e < b; ++e) {
      if (flags[e]) any_true = true;
      if (!flags[e]) any_false = true;
    }
  }
  if (!status) status = new_values(m, &then_values);
  if (!status) status = new_values(m, &else_values);
  if (!status && any_true) status = run_branch(call, then_name, then_values);
  if (!status && any_false) status = run_branch(call, else_name, else_values);
  if (!status && any_true && any_false) {
    status = select_into(call, mask, then_values, else_values, then_name);
  }
  if (!status) set_outputs(call, any_false ? else_values : then_values);
  free_values(then_values, m);
  free_values(else_values, m);
  loom_allocator_free(loom_allocator_default(), flags);
  loom_tensor_handle_release(mask);
  return status;
}

static loom_status_t run_case(loom__vmap_call_t* call, bool* out_fallback) {
  int32_t m = call->num_outputs;
  int64_t b = call->batch_size;
  loom_attr_value_t branches;
  if (call->inputs[0].axis == LOOM_VMAP_UNBATCHED ||
      call->input_metadata[0].shape.rank != 0 ||
      call->input_metadata[0].dtype != LOOM_DTYPE_INT32 || b <= 0 ||
      !loom_op_attrs_get(call->attrs, "branches", &branches) ||
      branches.count < 1) {
    // The op's own errors (a branch index that is not a scalar, ...).
    *out_fallback = true;
    return loom_ok_status();
  }
  int64_t count = branches.count;
  loom_tensor_handle_t* index = NULL;
  int32_t* indices = NULL;
  bool* needed = NULL;
  loom_status_t status = enter_outer(call);
  if (!status) {
    status = loom__vmap_move_front(call->context, &call->inputs[0], 0, &index);
    exit_outer(call);
  }
  if (!status) {
    status = loom_allocator_malloc(loom_allocator_default(),
                                   sizeof(*indices) * (size_t)b + (size_t)count,
                                   (void**)&indices);
  }
  if (!status) {
    needed = (bool*)(indices + b);
    bool known = read_host(call, index, LOOM_DTYPE_INT32, indices, b);
    for (int64_t k = 0; k < count; ++k) needed[k] = !known;
    for (int64_t e = 0; known && e < b; ++e) {
      // TensorFlow's default branch: the last.
      int64_t k =
          indices[e] < 0 || indices[e] >= count ? count - 1 : indices[e];
      needed[k] = true;
    }
  }
  // The last branch taken is the base; each other one taken replaces the
  // examples whose index it is.
  int64_t base = count - 1;
  while (!status && !needed[base]) --base;
  flow_value_t* current = NULL;
  flow_value_t* branch = NULL;
  if (!status) status = new_values(m, &current);
  if (!status) status = new_values(m, &branch);
  char name[256];
  if (!status)
    status = function_name(call, "branches", base, name, sizeof(name));
  if (!status) status = run_branch(call, name, current);
  for (int64_t k = base - 1; k >= 0 && !status; --k) {
    if (!needed[k]) continue;
    status = function_name(call, "branches", k, name, sizeof(name));
    if (!status) status = run_branch(call, name, branch);
    if (status) break;
    loom_tensor_handle_t* mask = NULL;
    loom_tensor_handle_t* scalar = NULL;
    status = enter_outer(call);
    if (!status) {
      status = loom__vmap_int_vector(call->context, LOOM_DTYPE_INT32, &k, 1,
                                     true, &scalar);
      if (!status) {
        loom_tensor_handle_t* operands[2] = {index, scalar};
        status = loom__vmap_run(call->context, "Equal", operands, 2, NULL, NULL,
                                0, &mask, 1);
      }
      exit_outer(call);
    }
    if (!status) status = select_into(call, mask, branch, current, name);
    loom_tensor_handle_release(scalar);
    loom_tensor_handle_release(mask);
    release_values(branch, m);
  }
  if (!status) set_outputs(call, current);
  free_values(current, m);
  free_values(branch, m);
  loom_allocator_free(loom_allocator_default(), indices);
  loom_tensor_handle_release(index);
  return status;
}

//===----------------------------------------------------------------------===//
// While
//===----------------------------------------------------------------------===//

typedef struct loop_t {
  loom__vmap_call_t* call;
  char cond[256];
  char body[256];
  flow_value_t* vars;            // the loop variables
  flow_value_t* next;            // the body's results
  bool* flags;                   // per example: its condition still holds
  loom_tensor_handle_t* active;  // [B] bool, or NULL: every example runs
} loop_t;

// Evaluates the condition: *out_again whether any example goes on; updates
// loop->active (NULL while every example goes on). *out_unreadable: a
// batched condition whose values the host cannot read.
static loom_status_t evaluate(loop_t* loop, bool* out_again,
                              bool* out_unreadable) {
  loom__vmap_call_t* call = loop->call;
  int32_t n = call->num_inputs;
  *out_again = false;
  *out_unreadable = false;
  loom_tensor_handle_t* stack[8];
  loom_tensor_handle_t** inputs = stack;
  if (n > 8) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*inputs) * (size_t)n,
                                               (void**)&inputs));
  }
  handles_of(loop->vars, n, inputs);
  flow_value_t predicate = {0};
  loom_status_t status =
      call_function(call, loop->cond, inputs, n, NULL, &predicate, 1);
  if (inputs != stack) loom_allocator_free(loom_allocator_default(), inputs);
  if (status) return status;
  if (predicate.shape.rank != 0) {
    // Not a scalar: true when it has elements, for every example alike.
    *out_again = loom_shape_num_elements(&predicate.shape) > 0;
  } else if (predicate.view.axis == LOOM_VMAP_UNBATCHED) {
    // The same for every example: one value.
    loom_tensor_handle_t* truth = NULL;
    status = enter_outer(call);
    if (!status) {
      status = truth_vector(call, &predicate, &truth);
      exit_outer(call);
    }
    bool value = false;
    if (!status && !read_host(call, truth, LOOM_DTYPE_BOOL, &value, 1)) {
      *out_unreadable = true;
    }
    loom_tensor_handle_release(truth);
    *out_again = value;
  } else {
    loom_tensor_handle_t* truth = NULL;
    loom_tensor_handle_t* active = NULL;
    status = enter_outer(call);
    if (!status) {
      status = truth_vector(call, &predicate, &truth);
      if (!status && loop->active) {
        loom_tensor_handle_t* operands[2] = {loop->active, truth};
        status = loom__vmap_run(call->context, "LogicalAnd", operands, 2, NULL,
                                NULL, 0, &active, 1);
      } else if (!status) {
        loom_tensor_handle_retain(truth);
        active = truth;
      }
      exit_outer(call);
    }
    loom_tensor_handle_release(truth);
    int64_t b = call->batch_size;
    if (!status && !read_host(call, active, LOOM_DTYPE_BOOL, loop->flags, b)) {
      *out_unreadable = true;
    }
    bool all = true;
    for (int64_t e = 0; !status && !*out_unreadable && e < b; ++e) {
      if (loop->flags[e]) *out_again = true;
      if (!loop->flags[e]) all = false;
    }
    loom_tensor_handle_release(loop->active);
    loop->active = NULL;
    if (!status && !all) {
      loop->active = active;
      active = NULL;
    }
    loom_tensor_handle_release(active);
  }
  release_values(&predicate, 1);
  return status;
}

// One iteration: the body on the loop variables; each example whose
// condition failed keeps its values.
static loom_status_t step(loop_t* loop) {
  loom__vmap_call_t* call = loop->call;
  int32_t n = call->num_inputs;
  loom_tensor_handle_t* stack[8];
  loom_tensor_handle_t** inputs = stack;
  if (n > 8) {
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*inputs) * (size_t)n,
                                               (void**)&inputs));
  }
  handles_of(loop->vars, n, inputs);
  loom_status_t status =
      call_function(call, loop->body, inputs, n, NULL, loop->next, n);
  if (inputs != stack) loom_allocator_free(loom_allocator_default(), inputs);
  if (status) return status;
  bool entered = false;
  if (loop->active) {
    status = enter_outer(call);
    entered = !status;
  }
  int64_t unmasked_from = n;
  loom_status_ignore(loom_op_attrs_get_i64(
      call->attrs, LOOM_VMAP_UNMASKED_FROM_ATTR, &unmasked_from));
  for (int32_t i = 0; loop->active && i < n && i < unmasked_from && !status;
       ++i) {
    flow_value_t* next = &loop->next[i];
    const flow_value_t* var = &loop->vars[i];
    if (next->view.axis == LOOM_VMAP_UNBATCHED &&
        var->view.axis == LOOM_VMAP_UNBATCHED &&
        next->view.value == var->view.value) {
      continue;  // unchanged for every example
    }
    char what[400];
    snprintf(what, sizeof(what),
             "loop variable %d against output %d of function '%s'", i, i,
             loop->body);
    loom_tensor_handle_t* selected = NULL;
    status = select_examples(call, loop->active, next, var, what, &selected);
    loom_tensor_handle_t* wrapped = NULL;
    if (!status) {
      status = loom__vmap_wrap(call->handler, selected, 0, &wrapped);
    }
    loom_tensor_handle_release(selected);
    if (status) break;
    loom_tensor_handle_release(next->handle);
    next->handle = NULL;
    status = take_value(call, wrapped, next);
  }
  if (entered) exit_outer(call);
  if (status) {
    release_values(loop->next, n);
    return status;
  }
  release_values(loop->vars, n);
  flow_value_t* swap = loop->vars;
  loop->vars = loop->next;
  loop->next = swap;
  return loom_ok_status();
}

static loom_status_t run_while(loom__vmap_call_t* call, bool* out_fallback) {
  int32_t n = call->num_inputs;
  if (call->batch_size <= 0 || n != call->num_outputs) {
    *out_fallback = true;
    return loom_ok_status();
  }
  loop_t loop = {.call = call};
  LOOM_RETURN_IF_ERROR(
      function_name(call, "cond", -1, loop.cond, sizeof(loop.cond)));
  LOOM_RETURN_IF_ERROR(
      function_name(call, "body", -1, loop.body, sizeof(loop.body)));
  loom_status_t status = new_values(n, &loop.vars);
  if (!status) status = new_values(n, &loop.next);
  if (!status) {
    status =
        loom_allocator_malloc(loom_allocator_default(),
                              (size_t)call->batch_size, (void**)&loop.flags);
  }
  for (int32_t i = 0; i < n && !status; ++i) {
    loom_tensor_handle_retain(call->arguments[i]);
    status = take_value(call, call->arguments[i], &loop.vars[i]);
  }
  for (int64_t iteration = 0; !status; ++iteration) {
    bool again = false, unreadable = false;
    status = evaluate(&loop, &again, &unreadable);
    if (!status && unreadable) {
      // Under a vmap around this one: each example's loop runs there.
      if (iteration == 0) {
        *out_fallback = true;
      } else {
        status = loom_make_status(LOOM_STATUS_INTERNAL,
                                  "vmap: %s: the condition of iteration %lld "
                                  "cannot be read",
                                  call->op_name, (long long)iteration);
      }
      break;
    }
    if (status || !again) break;
    status = step(&loop);
  }
  if (!status && !*out_fallback) set_outputs(call, loop.vars);
  free_values(loop.vars, n);
  free_values(loop.next, n);
  loom_allocator_free(loom_allocator_default(), loop.flags);
  loom_tensor_handle_release(loop.active);
  return status;
}

//===----------------------------------------------------------------------===//
// The rule
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Calls as batched functions
//===----------------------------------------------------------------------===//

static _Atomic(loom__vmap_call_batch_fn_t) g_call_batch;

void loom__vmap_set_call_batch(loom__vmap_call_batch_fn_t fn) {
  atomic_store_explicit(&g_call_batch, fn, memory_order_release);
}

// Runs a call of `function` on the views inputs[0, n) as the builder's
// batched function, in the scope of `outer` (entered as a handler
// executing an op enters it, so that the function runs there, planned):
// outputs[0, m) receive the batched outputs, batch first. *out_done false:
// left to the body op by op (nothing written).
static loom_status_t run_batched(loom_context_t* context,
                                 loom_op_handler_t* handler,
                                 loom_op_handler_t* outer, const char* function,
                                 const loom__vmap_value_t* inputs, int32_t n,
                                 loom_tensor_handle_t** outputs, int32_t m,
                                 bool* out_done) {
  *out_done = false;
  loom__vmap_call_batch_fn_t batch =
      atomic_load_explicit(&g_call_batch, memory_order_acquire);
  loom_vmap_options_t options;
  loom_vmap_options_initialize(&options);
  options.batch_size = loom_vmap_batch_size(handler);
  options.randomness = loom_vmap_randomness(handler);
  if (!batch || options.batch_size < 0 || loom__vmap_leaves_calls(handler)) {
    return loom_ok_status();
  }
  // values[n]; axes[n]
  loom_tensor_handle_t** values = NULL;
  int64_t* axes = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_default(),
                                             sizeof(*values) * (size_t)(n + 1),
                                             (void**)&values));
  loom_status_t status = loom_allocator_calloc(
      loom_allocator_default(), sizeof(*axes) * (size_t)(n + 1), (void**)&axes);
  for (int32_t i = 0; !status && i < n; ++i) {
    values[i] = inputs[i].value;
    axes[i] = inputs[i].axis;
  }
  if (!status) {
    ++loom__handler_execution_depth;
    status = loom_context_enter_scope(context, outer);
    --loom__handler_execution_depth;
  }
  if (!status) {
    status = batch(context, function, &options, n, values, axes, m, outputs,
                   out_done);
    loom_status_ignore(loom_context_exit_scope(context));
  }
  loom_allocator_free(loom_allocator_default(), axes);
  loom_allocator_free(loom_allocator_default(), values);
  return status;
}

loom_status_t loom__vmap_execute_function_call(loom_op_handler_t* handler,
                                               loom_function_call_t* call,
                                               loom_tensor_handle_t** results,
                                               bool* out_taken) {
  *out_taken = false;
  int32_t n = call->num_inputs - call->num_captured;
  int32_t m = call->num_outputs;
  if (call->stateful) return loom_ok_status();
  loom__vmap_value_t* views = NULL;       // [n]
  loom_tensor_handle_t** outputs = NULL;  // [m]: batched, batch first
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_default(),
                                             sizeof(*views) * (size_t)(n + 1),
                                             (void**)&views));
  loom_status_t status = loom_allocator_calloc(
      loom_allocator_default(), sizeof(*outputs) * (size_t)(m + 1),
      (void**)&outputs);
  bool batched = false, leave = false;
  for (int32_t i = 0; i < call->num_inputs; ++i) {
    loom__vmap_value_t view = loom__vmap_unwrap(handler, call->inputs[i]);
    bool own = view.value != call->inputs[i];
    // A captured value of this vmap: the function binds it itself, which
    // the batched function cannot.
    leave |= own && i >= n;
    batched |= own && view.axis != LOOM_VMAP_UNBATCHED;
    if (i < n) views[i] = view;
  }
  if (!status && batched && !leave) {
    const loom__passthrough_t* base = loom_op_handler_state(handler);
    status = run_batched(base->context, handler, base->effective_outer,
                         call->function_name, views, n, outputs, m, out_taken);
  }
  int32_t wrapped = 0;
  for (; !status && *out_taken && wrapped < m; ++wrapped) {
    status = loom__vmap_wrap(handler, outputs[wrapped], 0, &results[wrapped]);
  }
  // On an error only the results written are released (the caller's slots
  // hold anything before).
  if (status) loom__grad_release_all(results, wrapped);
  loom__grad_release_all(outputs, m);
  loom_allocator_free(loom_allocator_default(), outputs);
  loom_allocator_free(loom_allocator_default(), views);
  return status;
}

loom_status_t loom__vmap_rule_control_flow(loom__vmap_call_t* call,
                                           bool* out_fallback) {
  switch (kind_of(call->op_name)) {
    case kFlowIf:
      return run_if(call, out_fallback);
    case kFlowCase:
      return run_case(call, out_fallback);
    case kFlowWhile:
      return run_while(call, out_fallback);
    case kFlowCall:
      break;
  }
  int32_t m = call->num_outputs;
  flow_value_t* results = NULL;
  LOOM_RETURN_IF_ERROR(new_values(m, &results));
  loom_status_t status =
      call_function(call, call->op_name, call->arguments, call->num_inputs,
                    call->attrs, results, m);
  if (!status) set_outputs(call, results);
  free_values(results, m);
  return status;
}
