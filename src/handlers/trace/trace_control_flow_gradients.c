// The gradients and JVPs of If, StatelessIf, Case and StatelessCase taken
// whole: a handler sees the op itself when its condition has no value to
// read (a traced symbolic value, a batched vmap tensor), and a tape or
// forward accumulator beneath that handler then records it as one op.
// Each is the same op again over functions derived from the branches,
// with the same condition: its gradient selects the branch's backward
// function (trace_call_backward.c), its JVP the branch's JVP function
// (trace_call_jvp.c), each made once per key and kept in the library.
// The branches' derived functions share the request, so they share a
// signature, as the branches do: backward functions give zeros for the
// inputs a branch does not reach.
//
// An If run eagerly on a condition with a value runs op by op instead,
// and the tape records the ops of the branch that ran.

#include <string.h>

#include "handlers/trace/trace_derived.h"
#include "loom/trace.h"

// The branches of the op `ctx` differentiates: If's then and else
// branches, or Case's list, as NUL-terminated names (names[i] points into
// *out_storage, which the caller frees).
static loom_status_t branch_names(loom_gradient_context_t* ctx,
                                  const char*** out_names, int32_t* out_count,
                                  char** out_storage) {
  const char* op_name = loom_gradient_context_op_name(ctx);
  bool is_case = strstr(op_name, "Case") != NULL;
  loom_attr_value_t values[2];
  loom_attr_value_t list;
  int32_t count = 2;
  if (is_case) {
    if (!loom_gradient_context_attr(ctx, "branches", &list) || !list.is_list ||
        list.kind != LOOM_ATTR_KIND_FUNC || list.count < 1) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: attr 'branches' is not a list of functions",
                              op_name);
    }
    count = (int32_t)list.count;
  } else {
    static const char* const kAttrs[2] = {"then_branch", "else_branch"};
    for (int32_t b = 0; b < 2; ++b) {
      if (!loom_gradient_context_attr(ctx, kAttrs[b], &values[b]) ||
          values[b].is_list || values[b].kind != LOOM_ATTR_KIND_FUNC) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s: attr '%s' is not a function", op_name,
                                kAttrs[b]);
      }
    }
  }
  size_t bytes = sizeof(const char*) * (size_t)count;
  for (int32_t b = 0; b < count; ++b) {
    if (is_case) {
      LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(&list, b, &values[0]));
      bytes += values[0].u.string.size + 1;
    } else {
      bytes += values[b].u.string.size + 1;
    }
  }
  char* storage = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(loom_allocator_system(), bytes, (void**)&storage));
  const char** names = (const char**)storage;
  char* next = storage + sizeof(const char*) * (size_t)count;
  for (int32_t b = 0; b < count; ++b) {
    loom_attr_value_t value = values[is_case ? 0 : b];
    if (is_case) {
      loom_status_ignore(loom_attr_value_list_element(&list, b, &value));
    }
    memcpy(next, value.u.string.data, value.u.string.size);
    names[b] = next;
    next += value.u.string.size + 1;
  }
  *out_names = names;
  *out_count = count;
  *out_storage = storage;
  return loom_ok_status();
}

// Runs the op `ctx` differentiates (same name, same condition) over the
// functions derived[0, count) with inputs[0, n) after the condition:
// results[0, num_results) of dtypes `tout`.
static loom_status_t run_over(loom_gradient_context_t* ctx,
                              loom_function_t* const* derived, int32_t count,
                              loom_tensor_handle_t* const* inputs, int32_t n,
                              const loom_dtype_t* tout, int32_t num_results,
                              loom_tensor_handle_t** results) {
  const char* op_name = loom_gradient_context_op_name(ctx);
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_eager_op_create(loom_gradient_context_eager(ctx), op_name, &op));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  loom_status_t status = loom_ok_status();
  if (strstr(op_name, "Case")) {
    loom_string_view_t* views = NULL;
    status =
        loom_allocator_calloc(loom_allocator_system(),
                              sizeof(*views) * (size_t)count, (void**)&views);
    for (int32_t b = 0; !status && b < count; ++b) {
      const char* name = loom_function_name(derived[b]);
      views[b] = (loom_string_view_t){.data = name, .size = strlen(name)};
    }
    loom_attr_value_t list = {.kind = LOOM_ATTR_KIND_FUNC,
                              .is_list = true,
                              .count = count,
                              .u.list = views};
    if (!status) status = loom_op_attrs_set_value(attrs, "branches", &list);
    loom_allocator_free(loom_allocator_system(), views);
  } else {
    const char* then_name = loom_function_name(derived[0]);
    const char* else_name = loom_function_name(derived[1]);
    status = loom_op_attrs_set_func(attrs, "then_branch", then_name,
                                    strlen(then_name));
    if (!status) {
      status = loom_op_attrs_set_func(attrs, "else_branch", else_name,
                                      strlen(else_name));
    }
  }
  if (!status) {
    status = loom_op_attrs_set_list(attrs, "Tout", LOOM_ATTR_KIND_DTYPE, tout,
                                    num_results);
  }
  if (!status) {
    status = loom_eager_op_add_input(op, loom_gradient_context_input(ctx, 0));
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  int32_t made = 0;
  if (!status) {
    status = loom_eager_op_execute(op, results, num_results, &made);
  }
  if (!status && made != num_results) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "%s gave %d results, %d expected", op_name, made,
                              num_results);
  }
  loom_eager_op_destroy(op);
  return status;
}

static void release_functions(loom_function_t** functions, int32_t count) {
  for (int32_t b = 0; b < count; ++b) loom_function_release(functions[b]);
}

// The error for a branch whose derived function cannot be traced.
static loom_status_t not_traceable(loom_gradient_context_t* ctx,
                                   const char* what, const char* branch) {
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s: the %s of branch '%s' cannot be traced into a "
                          "function (an op whose %s reads a value the trace "
                          "has not); the op has no %s as one op",
                          loom_gradient_context_op_name(ctx), what, branch,
                          what, what);
}

//===----------------------------------------------------------------------===//
// The gradient
//===----------------------------------------------------------------------===//

static loom_status_t control_flow_gradient(loom_gradient_context_t* ctx,
                                           loom_tensor_handle_t* const* dys,
                                           loom_tensor_handle_t** dxs,
                                           void* user_data) {
  (void)user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  int32_t m = loom_gradient_context_num_outputs(ctx);
  int32_t num_wanted = 0, num_dys = 0;
  for (int32_t i = 1; i < n; ++i)
    num_wanted += loom__trace_backward_wants(ctx, i);
  for (int32_t k = 0; k < m; ++k) num_dys += dys[k] != NULL;
  if (!num_wanted || !num_dys) return loom_ok_status();  // none flows
  const char** names = NULL;
  int32_t count = 0;
  char* storage = NULL;
  LOOM_RETURN_IF_ERROR(branch_names(ctx, &names, &count, &storage));
  loom_allocator_t allocator = loom_allocator_system();
  // backward[count]; args[n - 1 + num_dys]; grads[num_wanted]; tout
  loom_function_t** backward = NULL;
  loom_tensor_handle_t** args = NULL;
  loom_dtype_t* tout = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*backward) * (size_t)count, (void**)&backward);
  if (!status) {
    status = loom_allocator_calloc(
        allocator, sizeof(*args) * (size_t)(n + num_dys + num_wanted),
        (void**)&args);
  }
  if (!status) {
    status = loom_allocator_calloc(
        allocator, sizeof(*tout) * (size_t)num_wanted, (void**)&tout);
  }
  for (int32_t b = 0; !status && b < count; ++b) {
    status = loom__trace_backward_function(ctx, names[b], 1, dys, &backward[b]);
    if (!status && !backward[b]) {
      status = not_traceable(ctx, "gradient", names[b]);
    }
  }
  loom_tensor_handle_t** grads = args ? args + n - 1 + num_dys : NULL;
  if (!status) {
    int32_t a = 0;
    for (int32_t i = 1; i < n; ++i) {
      args[a++] = loom_gradient_context_input(ctx, i);
    }
    for (int32_t k = 0; k < m; ++k) {
      if (dys[k]) args[a++] = dys[k];
    }
    for (int32_t i = 1, w = 0; i < n; ++i) {
      if (loom__trace_backward_wants(ctx, i)) {
        tout[w++] = loom_gradient_context_input_metadata(ctx, i)->dtype;
      }
    }
    status = run_over(ctx, backward, count, args, a, tout, num_wanted, grads);
  }
  for (int32_t i = 1, w = 0; !status && i < n; ++i) {
    if (loom__trace_backward_wants(ctx, i)) dxs[i] = grads[w++];
  }
  for (int32_t w = 0; status && grads && w < num_wanted; ++w) {
    loom_tensor_handle_release(grads[w]);
  }
  if (backward) release_functions(backward, count);
  loom_allocator_free(allocator, tout);
  loom_allocator_free(allocator, args);
  loom_allocator_free(allocator, backward);
  loom_allocator_free(allocator, storage);
  return status;
}

//===----------------------------------------------------------------------===//
// The JVP
//===----------------------------------------------------------------------===//

static loom_status_t control_flow_jvp(loom_gradient_context_t* ctx,
                                      loom_tensor_handle_t* const* tangents,
                                      loom_tensor_handle_t** out_tangents,
                                      void* user_data) {
  (void)user_data;
  int32_t n = loom_gradient_context_num_inputs(ctx);
  int32_t m = loom_gradient_context_num_outputs(ctx);
  int32_t num_tangents = 0;
  for (int32_t i = 1; i < n; ++i) num_tangents += tangents[i] != NULL;
  if (!num_tangents || !m) return loom_ok_status();  // none flows
  const char** names = NULL;
  int32_t count = 0;
  char* storage = NULL;
  LOOM_RETURN_IF_ERROR(branch_names(ctx, &names, &count, &storage));
  loom_allocator_t allocator = loom_allocator_system();
  // jvp[count]; args: primals[n - 1], then the tangents given; results[2m]
  loom_function_t** jvp = NULL;
  loom_tensor_handle_t** args = NULL;
  loom_dtype_t* tout = NULL;
  loom_status_t status = loom_allocator_calloc(
      allocator, sizeof(*jvp) * (size_t)count, (void**)&jvp);
  if (!status) {
    status = loom_allocator_calloc(
        allocator, sizeof(*args) * (size_t)(2 * n + 2 * m), (void**)&args);
  }
  if (!status) {
    status = loom_allocator_calloc(allocator, sizeof(*tout) * (size_t)(2 * m),
                                   (void**)&tout);
  }
  for (int32_t i = 1; !status && i < n; ++i) {
    args[i - 1] = loom_gradient_context_input(ctx, i);
  }
  for (int32_t b = 0; !status && b < count; ++b) {
    status =
        loom__trace_jvp_function(loom_gradient_context_eager(ctx), names[b],
                                 n - 1, args, tangents + 1, m, false, &jvp[b]);
    if (!status && !jvp[b]) status = not_traceable(ctx, "JVP", names[b]);
  }
  loom_tensor_handle_t** results = args ? args + 2 * n : NULL;
  if (!status) {
    int32_t a = n - 1;
    for (int32_t i = 1; i < n; ++i) {
      if (tangents[i]) args[a++] = tangents[i];
    }
    for (int32_t k = 0; k < m; ++k) {
      tout[k] = tout[m + k] =
          loom_gradient_context_output_metadata(ctx, k)->dtype;
    }
    status = run_over(ctx, jvp, count, args, a, tout, 2 * m, results);
  }
  for (int32_t k = 0; !status && k < m; ++k) {
    out_tangents[k] = results[m + k];
    results[m + k] = NULL;
  }
  if (results) {
    for (int32_t k = 0; k < 2 * m; ++k) loom_tensor_handle_release(results[k]);
  }
  if (jvp) release_functions(jvp, count);
  loom_allocator_free(allocator, tout);
  loom_allocator_free(allocator, args);
  loom_allocator_free(allocator, jvp);
  loom_allocator_free(allocator, storage);
  return status;
}

loom_status_t loom__trace_register_control_flow_gradients(void) {
  static const char* const kOps[] = {"If", "StatelessIf", "Case",
                                     "StatelessCase"};
  return loom__derived_register_derivatives(
      kOps, sizeof(kOps) / sizeof(kOps[0]), control_flow_gradient,
      control_flow_jvp);
}
