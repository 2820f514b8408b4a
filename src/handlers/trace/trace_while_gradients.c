// The gradient and JVP of While and StatelessWhile taken whole: a handler
// sees the op itself when a loop variable has no value to read (a traced
// symbolic value, a batched vmap tensor), and a tape or forward accumulator
// beneath that handler then records it as one op.
//
// The JVP is a While over the loop variables and the tangents of the
// floating ones. Its condition is the original one on the variables (a
// function "<cond>_loopcond_<k>" that takes the tangents too), its body
// the body's JVP function for a loop (trace_call_jvp.c): the body's
// outputs, then the tangents of the floating ones.
//
// The gradient runs the loop again, keeping each iteration's variables: a
// While over the variables and a stack per variable, the initial value then
// each iteration's concatenated along a new first axis ("<body>_record_<k>",
// its condition the original one, "<cond>_loopcond_<k>"). A second While
// counts the iterations down over the gradients of the floating variables:
// its body ("<body>_reverse_<k>") reads iteration k's variables from the
// stacks and calls the body's backward function (trace_call_backward.c) on
// them; its condition ("<body>_countdown_<k>") is k > 0. The backward pass
// so costs one more run of the forward loop, then per iteration the body's
// backward function (which recomputes the forward ops it needs). Each
// function is made once per key (the variables' dtypes and shapes) and
// kept in the library, derived from the cond or the body. The stacks grow
// by concatenation, which copies them at every iteration: quadratic in the
// trip count, cheap for short loops (a list type would make it linear).
//
// A loop variable whose shape changes between iterations cannot be
// stacked: its gradient is UNIMPLEMENTED, named.

#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/trace/trace_derived.h"
#include "handlers/vmap/vmap_call_batch.h"
#include "loom/trace.h"

// count NULL handles (none on the stack: a loop may have many variables).
static loom_status_t new_handles(size_t count, loom_tensor_handle_t*** out) {
  return loom_allocator_calloc(loom_allocator_system(),
                               sizeof(**out) * (count + 1), (void**)out);
}

static void free_handles(loom_tensor_handle_t** handles) {
  loom_allocator_free(loom_allocator_system(), handles);
}

typedef enum loop_kind_t {
  // cond(vars) of (vars[n], tangents[F]): the JVP loop's condition.
  LOOP_JVP_COND,
  // cond(vars) of (vars[n], stacks[n]): the recording loop's condition.
  LOOP_RECORD_COND,
  // (body(vars), stacks ++ body(vars)) of (vars[n], stacks[n]).
  LOOP_RECORD,
  // k > 0 of (k, grads[F], stacks[n]).
  LOOP_COUNTDOWN,
  // (k - 1, backward(stacks[k - 1], grads), stacks) of (k, grads, stacks);
  // the grads pass unchanged where cond(stacks[k - 1]) is false (a vmap
  // masks the examples whose loop ended: their stacks repeat the last
  // variables).
  LOOP_REVERSE,
} loop_kind_t;

static const char* const kKindNames[] = {
    [LOOP_JVP_COND] = "loopcond", [LOOP_RECORD_COND] = "loopcond",
    [LOOP_RECORD] = "record",     [LOOP_COUNTDOWN] = "countdown",
    [LOOP_REVERSE] = "reverse",
};

typedef struct loop_request_t {
  loom_context_t* eager;
  loop_kind_t kind;
  const char* function;  // the cond (the conditions) or the body
  int32_t n;
  const loom_tensor_metadata_t* vars;  // [n]
  const bool* floating;                // [n]
  int32_t num_floating;
  const char* cond;      // LOOP_REVERSE: the loop's condition
  const char* backward;  // LOOP_REVERSE: the body's backward function
} loop_request_t;

// The key: the kind, the variables' dtypes and shapes and which are
// floating, and the names of the condition and the backward function.
static void write_key(const void* request, loom__derived_key_t* w) {
  const loop_request_t* r = request;
  unsigned char kind = (unsigned char)r->kind;
  loom__derived_key_put(w, &kind, 1);
  loom__derived_key_put(w, &r->n, sizeof(r->n));
  for (int32_t i = 0; i < r->n; ++i) {
    loom__derived_key_put_metadata(w, true, &r->vars[i]);
    unsigned char floating = r->floating[i];
    loom__derived_key_put(w, &floating, 1);
  }
  if (r->kind == LOOP_REVERSE) {
    loom__derived_key_put(w, r->cond, strlen(r->cond) + 1);
    loom__derived_key_put(w, r->backward, strlen(r->backward) + 1);
  }
}

// The metadata of a stack of values of `var`: one more dim, first, unknown.
static loom_status_t stack_metadata(const loom_tensor_metadata_t* var,
                                    loom_tensor_metadata_t* out) {
  out->dtype = var->dtype;
  if (var->shape.rank == LOOM_UNKNOWN_RANK) {
    out->shape = loom_shape_unknown();
    return loom_ok_status();
  }
  if (var->shape.rank >= LOOM_MAX_RANK) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "a loop variable of rank %d cannot be stacked "
                            "(rank %d at most)",
                            var->shape.rank, LOOM_MAX_RANK - 1);
  }
  int64_t dims[LOOM_MAX_RANK];
  dims[0] = LOOM_UNKNOWN_DIM;
  memcpy(dims + 1, loom_shape_dims(&var->shape),
         sizeof(int64_t) * (size_t)var->shape.rank);
  return loom_shape_initialize(&out->shape, dims, var->shape.rank + 1);
}

// The parameters of the request's function: their metadata into
// params[0, *out_count) (room for 2n + 1).
static loom_status_t param_metadata(const loop_request_t* r,
                                    loom_tensor_metadata_t* params,
                                    int32_t* out_count) {
  int32_t p = 0;
  if (r->kind == LOOP_COUNTDOWN || r->kind == LOOP_REVERSE) {
    params[p].dtype = LOOM_DTYPE_INT32;
    params[p++].shape = loom_shape_scalar();
  } else {
    for (int32_t i = 0; i < r->n; ++i) params[p++] = r->vars[i];
  }
  if (r->kind != LOOP_RECORD_COND && r->kind != LOOP_RECORD) {
    for (int32_t i = 0; i < r->n; ++i) {
      if (r->floating[i]) params[p++] = r->vars[i];
    }
  }
  if (r->kind != LOOP_JVP_COND) {
    for (int32_t i = 0; i < r->n; ++i) {
      LOOM_RETURN_IF_ERROR(stack_metadata(&r->vars[i], &params[p++]));
    }
  }
  *out_count = p;
  return loom_ok_status();
}

// The body of the request's function, in its trace's scope: outputs
// outs[0, *out_count) (new references) from params.
static loom_status_t trace_body(const void* request,
                                loom_tensor_handle_t** params,
                                loom_tensor_handle_t** outs,
                                int32_t* out_count) {
  const loop_request_t* r = request;
  loom_context_t* eager = r->eager;
  int32_t n = r->n;
  int32_t f = r->num_floating;
  loom_tensor_handle_t* zero = NULL;
  loom_tensor_handle_t* one = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__grad_host_scalar(eager, LOOM_DTYPE_INT32, 0, &zero));
  loom_status_t status =
      loom__grad_host_scalar(eager, LOOM_DTYPE_INT32, 1, &one);
  *out_count = 0;
  switch (r->kind) {
    case LOOP_JVP_COND:
    case LOOP_RECORD_COND:
      if (!status) {
        status = loom__grad_execute_in(eager, r->function, params, n, NULL, 0,
                                       outs, 1);
      }
      if (!status) *out_count = 1;
      break;
    case LOOP_RECORD: {
      loom_tensor_handle_t** stacks = params + n;
      if (!status) {
        status = loom__grad_execute_in(eager, r->function, params, n, NULL, 0,
                                       outs, n);
      }
      for (int32_t i = 0; !status && i < n; ++i) {
        loom_tensor_handle_t* row = NULL;
        loom_tensor_handle_t* expand[2] = {outs[i], zero};
        status = loom__grad_execute_in(eager, "ExpandDims", expand, 2, NULL, 0,
                                       &row, 1);
        loom_tensor_handle_t* concat[3] = {stacks[i], row, zero};
        if (!status) {
          status = loom__grad_execute_in(eager, "ConcatV2", concat, 3,
                                         LOOM_GRAD_ATTRS(LOOM_GRAD_INT("N", 2)),
                                         &outs[n + i], 1);
        }
        loom_tensor_handle_release(row);
      }
      if (!status) *out_count = 2 * n;
      break;
    }
    case LOOP_COUNTDOWN: {
      loom_tensor_handle_t* compare[2] = {params[0], zero};
      if (!status) {
        status = loom__grad_execute_in(eager, "Greater", compare, 2, NULL, 0,
                                       outs, 1);
      }
      if (!status) *out_count = 1;
      break;
    }
    case LOOP_REVERSE: {
      // args: the variables of iteration k - 1, then the gradients
      loom_tensor_handle_t** stacks = params + 1 + f;
      // args[n + F]: the variables of iteration k - 1 (owned), then the
      // gradients (borrowed); then the backward's results[F], the
      // condition
      loom_tensor_handle_t** args = NULL;
      int32_t made = 0;
      if (!status) status = new_handles((size_t)(n + 2 * f + 1), &args);
      loom_tensor_handle_t** grads = args ? args + n + f : NULL;
      loom_tensor_handle_t** cond = args ? grads + f : NULL;
      loom_tensor_handle_t* sub[2] = {params[0], one};
      if (!status) {
        status =
            loom__grad_execute_in(eager, "Sub", sub, 2, NULL, 0, &outs[0], 1);
      }
      for (int32_t i = 0; !status && i < n; ++i) {
        loom_tensor_handle_t* gather[3] = {stacks[i], outs[0], zero};
        status = loom__grad_execute_in(eager, "GatherV2", gather, 3, NULL, 0,
                                       &args[made], 1);
        made += !status;
      }
      for (int32_t j = 0; !status && j < f; ++j) args[n + j] = params[1 + j];
      if (!status) {
        status = loom__grad_execute_in(eager, r->backward, args, n + f, NULL, 0,
                                       grads, f);
      }
      if (!status) {
        status =
            loom__grad_execute_in(eager, r->cond, args, n, NULL, 0, cond, 1);
      }
      for (int32_t j = 0; !status && j < f; ++j) {
        loom_tensor_handle_t* select[3] = {cond[0], grads[j], params[1 + j]};
        status = loom__grad_execute_in(eager, "SelectV2", select, 3, NULL, 0,
                                       &outs[1 + j], 1);
      }
      if (args) {
        loom__grad_release_all(args, made);
        loom__grad_release_all(grads, f + 1);
      }
      free_handles(args);
      for (int32_t i = 0; !status && i < n; ++i) {
        loom_tensor_handle_retain(stacks[i]);
        outs[1 + f + i] = stacks[i];
      }
      if (!status) *out_count = 1 + f + n;
      break;
    }
  }
  loom_tensor_handle_release(one);
  loom_tensor_handle_release(zero);
  return status;
}

// Traces the request's function `name`.
static loom_status_t trace_loop(const void* request, const char* name,
                                loom_function_t** out_function) {
  const loop_request_t* r = request;
  int32_t room = 2 * r->n + 1;
  loom_tensor_metadata_t* metadata = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_system(),
                                             sizeof(*metadata) * (size_t)room,
                                             (void**)&metadata));
  int32_t num_params = 0;
  loom_status_t status = param_metadata(r, metadata, &num_params);
  if (!status) {
    status = loom__derived_trace(r->eager, name, metadata, num_params, room,
                                 trace_body, r, out_function);
  }
  loom_allocator_free(loom_allocator_system(), metadata);
  return status;
}

// The request's function, found or made (NULL: it cannot be traced).
static loom_status_t loop_function(const loop_request_t* r,
                                   loom_function_t** out_function) {
  *out_function = NULL;
  loom_function_t* base = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_context_find_function(r->eager, r->function, &base));
  loom__derived_builder_t builder = {r, write_key, trace_loop};
  bool made = false;
  loom_status_t status = loom__derived_find_or_make(
      r->eager, base, r->function, kKindNames[r->kind], &builder, out_function,
      &made);
  loom_function_release(base);
  return status;
}

//===----------------------------------------------------------------------===//
// The op's functions and variables
//===----------------------------------------------------------------------===//

// What the gradient and the JVP of one While read.
typedef struct loop_t {
  loom_gradient_context_t* ctx;
  loom_context_t* eager;
  const char* op_name;
  int32_t n;
  char cond[256], body[256];
  loom_tensor_metadata_t* vars;  // [n]
  bool* floating;                // [n]
  int32_t num_floating;
} loop_t;

static loom_status_t function_attr(loop_t* l, const char* attr, char* name) {
  loom_attr_value_t value;
  if (!loom_gradient_context_attr(l->ctx, attr, &value) || value.is_list ||
      value.kind != LOOM_ATTR_KIND_FUNC || value.u.string.size >= 256) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: attr '%s' is not a function", l->op_name,
                            attr);
  }
  memcpy(name, value.u.string.data, value.u.string.size);
  name[value.u.string.size] = '\0';
  return loom_ok_status();
}

static loom_status_t loop_init(loom_gradient_context_t* ctx, loop_t* l) {
  *l = (loop_t){
      .ctx = ctx,
      .eager = loom_gradient_context_eager(ctx),
      .op_name = loom_gradient_context_op_name(ctx),
      .n = loom_gradient_context_num_inputs(ctx),
  };
  LOOM_RETURN_IF_ERROR(function_attr(l, "cond", l->cond));
  LOOM_RETURN_IF_ERROR(function_attr(l, "body", l->body));
  loom_allocator_t allocator = loom_allocator_system();
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*l->vars) * (size_t)(l->n + 1), (void**)&l->vars));
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*l->floating) * (size_t)(l->n + 1),
      (void**)&l->floating));
  for (int32_t i = 0; i < l->n; ++i) {
    l->vars[i] = *loom_gradient_context_input_metadata(ctx, i);
    l->floating[i] = loom_dtype_is_floating(l->vars[i].dtype);
    l->num_floating += l->floating[i];
  }
  return loom_ok_status();
}

static void loop_deinit(loop_t* l) {
  loom_allocator_free(loom_allocator_system(), l->floating);
  loom_allocator_free(loom_allocator_system(), l->vars);
}

// The loop function of `kind` for the While `l`; an error when it cannot
// be traced.
static loom_status_t loop_function_of(loop_t* l, loop_kind_t kind,
                                      const char* backward,
                                      loom_function_t** out_function) {
  bool is_cond = kind == LOOP_JVP_COND || kind == LOOP_RECORD_COND;
  loop_request_t r = {
      .eager = l->eager,
      .kind = kind,
      .function = is_cond ? l->cond : l->body,
      .n = l->n,
      .vars = l->vars,
      .floating = l->floating,
      .num_floating = l->num_floating,
      .cond = l->cond,
      .backward = backward,
  };
  LOOM_RETURN_IF_ERROR(loop_function(&r, out_function));
  if (*out_function) return loom_ok_status();
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s: the '%s' function of '%s' cannot be traced",
                          l->op_name, kKindNames[kind], r.function);
}

// Runs the op `l` is over functions cond and body on inputs[0, n) into
// results[0, n) (`shapes`: attr output_shapes, or NULL).
static loom_status_t run_loop(loop_t* l, loom_function_t* cond,
                              loom_function_t* body,
                              loom_tensor_handle_t* const* inputs, int32_t n,
                              const loom_shape_t* shapes, int32_t unmasked_from,
                              loom_tensor_handle_t** results) {
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(l->eager, l->op_name, &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  const char* cond_name = loom_function_name(cond);
  const char* body_name = loom_function_name(body);
  loom_status_t status =
      loom_op_attrs_set_func(attrs, "cond", cond_name, strlen(cond_name));
  if (!status) {
    status =
        loom_op_attrs_set_func(attrs, "body", body_name, strlen(body_name));
  }
  if (!status && shapes) {
    status = loom_op_attrs_set_shape_list(attrs, "output_shapes", shapes, n);
  }
  if (!status && unmasked_from < n) {
    status = loom_op_attrs_set_i64(attrs, LOOM_VMAP_UNMASKED_FROM_ATTR,
                                   unmasked_from);
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, results, n, &made);
  if (!status && made != n) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "%s gave %d results, %d expected", l->op_name,
                              made, n);
  }
  loom_eager_op_destroy(op);
  return status;
}

//===----------------------------------------------------------------------===//
// The gradient
//===----------------------------------------------------------------------===//

// Checks that no loop variable changes its shape (it is stacked).
static loom_status_t check_shapes(loop_t* l) {
  for (int32_t i = 0; i < l->n; ++i) {
    const loom_tensor_metadata_t* out =
        loom_gradient_context_output_metadata(l->ctx, i);
    // (A traced While's outputs may have unknown shapes: the loop itself
    // checks that they keep the variables' shapes.)
    if (loom_shape_is_compatible(&out->shape, &l->vars[i].shape)) continue;
    char in_text[LOOM_SHAPE_FORMAT_MAX], out_text[LOOM_SHAPE_FORMAT_MAX];
    loom_shape_format(&l->vars[i].shape, in_text, sizeof(in_text));
    loom_shape_format(&out->shape, out_text, sizeof(out_text));
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s: loop variable %d enters as %s and leaves as "
                            "%s: the gradient of a loop taken as one op keeps "
                            "each iteration's variables, which needs their "
                            "shapes fixed",
                            l->op_name, i, in_text, out_text);
  }
  return loom_ok_status();
}

// The gradients of the floating variables at the loop's start, into
// grads[0, F), from the dys (zeros where none).
static loom_status_t reverse(loop_t* l, loom_tensor_handle_t* const* dys,
                             loom_tensor_handle_t** grads) {
  int32_t n = l->n, f = l->num_floating;
  loom_function_t* fns[5] = {NULL, NULL, NULL, NULL, NULL};
  enum { kBackward, kRecordCond, kRecord, kCountdown, kReverse };
  // The body's backward function: every floating variable differentiated,
  // every floating output seeded (the loop carries them all).
  loom_status_t status = loom__trace_backward_function_of(
      l->eager, l->body, n, n, l->vars, l->floating, l->vars, l->floating,
      &fns[kBackward]);
  if (!status && !fns[kBackward]) {
    status = loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: the gradient of body '%s' cannot be traced "
                              "into a function",
                              l->op_name, l->body);
  }
  if (!status) status = loop_function_of(l, LOOP_RECORD_COND, NULL, &fns[1]);
  if (!status) status = loop_function_of(l, LOOP_RECORD, NULL, &fns[2]);
  if (!status) status = loop_function_of(l, LOOP_COUNTDOWN, NULL, &fns[3]);
  if (!status) {
    status = loop_function_of(l, LOOP_REVERSE,
                              loom_function_name(fns[kBackward]), &fns[4]);
  }
  // handles: xs and stacks[2n] (the recording loop's inputs), recorded[2n],
  // start and countdown[1 + F + n] (the counting loop's inputs and
  // results), scratch[3]: the rows, their number, zero
  int32_t count = 4 * n + 2 * (1 + f + n) + 3;
  loom_tensor_handle_t** handles = NULL;
  loom_shape_t* shapes = NULL;
  if (!status) status = new_handles((size_t)count, &handles);
  if (!status) {
    status = loom_allocator_calloc(loom_allocator_system(),
                                   sizeof(*shapes) * (size_t)(2 * n + 1),
                                   (void**)&shapes);
  }
  loom_tensor_handle_t** inputs = handles;
  loom_tensor_handle_t** recorded = handles ? inputs + 2 * n : NULL;
  loom_tensor_handle_t** start = handles ? recorded + 2 * n : NULL;
  loom_tensor_handle_t** countdown = handles ? start + 1 + f + n : NULL;
  loom_tensor_handle_t** scratch = handles ? countdown + 1 + f + n : NULL;
  loom_tensor_handle_t** zero = scratch ? &scratch[2] : NULL;
  if (!status) status = loom__grad_scalar(l->ctx, LOOM_DTYPE_INT32, 0, zero);
  for (int32_t i = 0; !status && i < n; ++i) {
    inputs[i] = loom_gradient_context_input(l->ctx, i);
    loom_tensor_handle_retain(inputs[i]);
    status = loom__grad_binary(l->ctx, "ExpandDims", inputs[i], *zero,
                               &inputs[n + i]);
    loom_tensor_metadata_t stack;
    if (!status) status = stack_metadata(&l->vars[i], &stack);
    shapes[i] = l->vars[i].shape;
    shapes[n + i] = stack.shape;
  }
  if (!status) {
    // The stacks grow for every example of a vmap, those whose loop ended
    // too (repeating their last variables, where the countdown's gate
    // passes the gradients unchanged): their rows stay alike.
    status = run_loop(l, fns[kRecordCond], fns[kRecord], inputs, 2 * n, shapes,
                      n, recorded);
    if (status) {
      status = loom_status_annotate(status,
                                    "%s: running the loop again to keep each "
                                    "iteration's variables",
                                    l->op_name);
    }
  }
  // k = the number of iterations: the first stack's rows, less one.
  if (!status) {
    status = loom__grad_op(
        l->ctx, "Shape", &recorded[n], 1,
        LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("out_type", LOOM_DTYPE_INT32)),
        &scratch[0]);
  }
  if (!status) {
    loom_tensor_handle_t* gather[3] = {scratch[0], *zero, *zero};
    status = loom__grad_op(l->ctx, "GatherV2", gather, 3, NULL, 0, &scratch[1]);
  }
  if (!status) {
    loom_tensor_handle_t* one = NULL;
    status = loom__grad_scalar(l->ctx, LOOM_DTYPE_INT32, 1, &one);
    if (!status)
      status = loom__grad_binary(l->ctx, "Sub", scratch[1], one, &start[0]);
    loom_tensor_handle_release(one);
  }
  for (int32_t i = 0, j = 0; !status && i < n; ++i) {
    if (!l->floating[i]) continue;
    // Zeros like the variable: the output's shape may be unknown (traced).
    if (dys[i]) {
      loom_tensor_handle_retain(dys[i]);
      start[1 + j++] = dys[i];
    } else {
      status = loom__grad_zeros_like(l->ctx, inputs[i], &start[1 + j++]);
    }
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    loom_tensor_handle_retain(recorded[n + i]);
    start[1 + f + i] = recorded[n + i];
  }
  if (!status) {
    status = run_loop(l, fns[kCountdown], fns[kReverse], start, 1 + f + n, NULL,
                      1 + f + n, countdown);
  }
  for (int32_t j = 0; !status && j < f; ++j) {
    grads[j] = countdown[1 + j];
    countdown[1 + j] = NULL;
  }
  if (handles) loom__grad_release_all(handles, count);
  free_handles(handles);
  loom_allocator_free(loom_allocator_system(), shapes);
  for (int32_t k = 0; k < 5; ++k) loom_function_release(fns[k]);
  return status;
}

static loom_status_t while_gradient(loom_gradient_context_t* ctx,
                                    loom_tensor_handle_t* const* dys,
                                    loom_tensor_handle_t** dxs,
                                    void* user_data) {
  (void)user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  bool wanted = false, seeded = false;
  for (int32_t i = 0; i < n; ++i) {
    bool floating = loom_dtype_is_floating(
        loom_gradient_context_input_metadata(ctx, i)->dtype);
    wanted |= floating && loom_gradient_context_input_needs_gradient(ctx, i);
    seeded |= floating && dys[i] != NULL;
  }
  if (!wanted || !seeded) return loom_ok_status();  // none flows
  loop_t l;
  loom_status_t status = loop_init(ctx, &l);
  if (!status) status = check_shapes(&l);
  loom_tensor_handle_t** grads = NULL;
  if (!status) status = new_handles((size_t)l.num_floating, &grads);
  if (!status) status = reverse(&l, dys, grads);
  for (int32_t i = 0, j = 0; !status && i < n; ++i) {
    if (!l.floating[i]) continue;
    if (loom_gradient_context_input_needs_gradient(ctx, i)) {
      dxs[i] = grads[j];
      grads[j] = NULL;
    }
    ++j;
  }
  if (grads) loom__grad_release_all(grads, l.num_floating);
  free_handles(grads);
  loop_deinit(&l);
  return status;
}

//===----------------------------------------------------------------------===//
// The JVP
//===----------------------------------------------------------------------===//

static loom_status_t while_jvp(loom_gradient_context_t* ctx,
                               loom_tensor_handle_t* const* tangents,
                               loom_tensor_handle_t** out_tangents,
                               void* user_data) {
  (void)user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  bool any = false;
  for (int32_t i = 0; i < n; ++i) {
    any |=
        tangents[i] && loom_dtype_is_floating(
                           loom_gradient_context_input_metadata(ctx, i)->dtype);
  }
  if (!any) return loom_ok_status();  // none flows
  loop_t l;
  loom_status_t status = loop_init(ctx, &l);
  int32_t f = l.num_floating;
  // args[n + F]: the primals, then the floating ones' tangents (borrowed);
  // full[n]: each variable's tangent (NULL: not floating); results[n + F]
  loom_tensor_handle_t** all = NULL;
  if (!status) status = new_handles((size_t)(3 * n + 2 * f), &all);
  loom_tensor_handle_t** args = all;
  loom_tensor_handle_t** full = all ? args + n + f : NULL;
  loom_tensor_handle_t** results = all ? full + n : NULL;
  for (int32_t i = 0, j = n; !status && i < n; ++i) {
    args[i] = loom_gradient_context_input(ctx, i);
    if (!l.floating[i]) continue;
    if (tangents[i]) {
      loom_tensor_handle_retain(tangents[i]);
      full[i] = tangents[i];
    } else {
      status = loom__grad_zeros_like(ctx, args[i], &full[i]);
    }
    args[j++] = full[i];
  }
  loom_function_t* cond = NULL;
  loom_function_t* body = NULL;
  if (!status) status = loop_function_of(&l, LOOP_JVP_COND, NULL, &cond);
  if (!status) {
    status = loom__trace_jvp_function(l.eager, l.body, n, args, full, n, true,
                                      &body);
  }
  if (!status && !body) {
    status = loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: the JVP of body '%s' cannot be traced into "
                              "a function",
                              l.op_name, l.body);
  }
  if (!status) {
    status = run_loop(&l, cond, body, args, n + f, NULL, n + f, results);
  }
  for (int32_t i = 0, j = n; !status && i < n; ++i) {
    if (!l.floating[i]) continue;
    out_tangents[i] = results[j];
    results[j++] = NULL;
  }
  if (all) {
    loom__grad_release_all(results, n + f);
    loom__grad_release_all(full, n);
  }
  free_handles(all);
  loom_function_release(body);
  loom_function_release(cond);
  loop_deinit(&l);
  return status;
}

loom_status_t loom__trace_register_while_gradients(void) {
  static const char* const kOps[] = {"While", "StatelessWhile"};
  return loom__derived_register_derivatives(
      kOps, sizeof(kOps) / sizeof(kOps[0]), while_gradient, while_jvp);
}
