// Composite ops: corert.make_composite_op makes an op of a function of the
// program (`{fn = @f}`), and corert.execute_crt_op executes it on tensor
// handles, as TFRT's core runtime does. The function takes and returns a
// !tfrt.chain before its tensor handles, or no chain at all.

#include <string.h>

#include "function/program_executor.h"

static bool check(loom_program_frame_t* frame, int32_t index,
                  loom_program_value_kind_t kind) {
  loom_status_t status = loom_program_frame_check_kind(frame, index, kind);
  if (!status) return true;
  loom_program_frame_fail(frame, status);
  return false;
}

static void make_composite_kernel(loom_program_frame_t* frame,
                                  void* user_data) {
  (void)user_data;
  if (frame->op->num_callees != 1) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs one function (fn = @f), got %d",
                                frame->op->name, frame->op->num_callees));
    return;
  }
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_FUNCTION;
  payload.u.function = frame->op->callees[0];
  loom_status_t status =
      loom_program_value_set(loom_program_frame_result(frame, 0), &payload);
  if (status) loom_program_frame_fail(frame, status);
}

static void execute_crt_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const char* name = frame->op->name;
  if (frame->num_arguments < 1) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs the op to execute (a !corert.op) "
                                "as its first operand",
                                name));
    return;
  }
  if (!check(frame, 0, LOOM_PROGRAM_VALUE_FUNCTION)) return;
  for (int32_t i = 1; i < frame->num_arguments; ++i) {
    if (!check(frame, i, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  }
  const program_function_t* callee =
      loom_program_frame_value(frame, 0)->u.function;
  if (callee->program != frame->binding->program) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': composite op @%s belongs to another "
                                "program",
                                name, callee->name));
    return;
  }
  int32_t n = frame->num_arguments - 1;
  int32_t m = frame->num_results;
  bool chained = callee->num_arguments == n + 1 && callee->num_results == m + 1;
  if (!chained && (callee->num_arguments != n || callee->num_results != m)) {
    loom_program_frame_fail(
        frame, loom_make_status(
                   LOOM_STATUS_INVALID_ARGUMENT,
                   "'%s' passes %d tensor handle%s and expects %d "
                   "result%s, but composite op @%s takes %d "
                   "argument%s and returns %d (a leading !tfrt.chain "
                   "in and out is also accepted)",
                   name, n, n == 1 ? "" : "s", m, m == 1 ? "" : "s",
                   callee->name, callee->num_arguments,
                   callee->num_arguments == 1 ? "" : "s", callee->num_results));
    return;
  }
  loom_allocator_t allocator = frame->executor->allocator;
  int32_t extra = chained ? 1 : 0;
  program_value_vector_t values;
  program_value_vector_initialize(&values);
  loom_status_t status = program_value_vector_resize(
      &values, allocator, (size_t)(n + extra) + (size_t)(m + extra));
  loom_async_value_t** arguments = program_value_vector_data(&values);
  loom_async_value_t** results = arguments + n + extra;
  loom_async_value_t* chain = NULL;
  loom_async_value_t* chain_out = NULL;
  if (!status && chained) {
    status = loom_program_value_create(allocator, &chain);
    if (!status) status = loom_program_value_set_chain(chain);
    if (!status) status = loom_program_value_create(allocator, &chain_out);
  }
  if (status) {
    loom_async_value_release(chain);
    loom_async_value_release(chain_out);
    program_value_vector_deinitialize(&values, allocator);
    loom_program_frame_fail(frame, status);
    return;
  }
  if (chained) {
    arguments[0] = chain;
    results[0] = chain_out;
  }
  for (int32_t i = 0; i < n; ++i)
    arguments[extra + i] = frame->arguments[1 + i];
  for (int32_t i = 0; i < m; ++i) results[extra + i] = frame->results[i];
  // A call that cannot start has set the results and reported why. The
  // callee's frame holds its own references to the values.
  loom_status_free(loom__program_call(frame->executor, frame->binding, callee,
                                      frame->frame, frame->op, arguments,
                                      results));
  loom_async_value_release(chain);
  loom_async_value_release(chain_out);
  program_value_vector_deinitialize(&values, allocator);
}

static loom_status_t add(loom_program_executor_t* executor, const char* name,
                         loom_program_kernel_fn_t fn, int32_t num_arguments,
                         int32_t num_results) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = fn,
                                   .num_arguments = num_arguments,
                                   .num_results = num_results};
  return loom_program_executor_add_kernel(executor, &def);
}

loom_status_t loom__program_register_composite_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(
      add(executor, "corert.make_composite_op", make_composite_kernel, 0, 1));
  return add(executor, "corert.execute_crt_op", execute_crt_kernel, -1, -1);
}
