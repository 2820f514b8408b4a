// Eager dispatch cost: a tiny f32 add through TensorFlow's eager C API
// (TFE_Execute) and Loom's native eager API, and what front-end op handlers
// add per op. Prints one "name median unit" line per figure:
//
//   eager_add_2x2_tfe_sync        TFE_OpReset + 2 x TFE_OpAddInput +
//                                 TFE_Execute + TFE_DeleteTensorHandle, a
//                                 synchronous context (what a language
//                                 binding does per op), ns per op;
//   eager_add_2x2_tfe_execute     TFE_Execute of a built op + deleting the
//                                 result;
//   eager_add_2x2_tfe_async       the same in an asynchronous context;
//   eager_add_2x2_native          loom_eager_op_execute of a built op;
//   eager_passthrough_1_extra     the extra cost of one pass-through handler
//                                 scope (a minimal handler that executes
//                                 each op on its outer handler);
//   eager_passthrough_3_extra_per_handler  the same with three nested
//                                 scopes, per handler;
//   eager_logging_extra           the logging handler (no stream): extra.
//
// Pass --only <text> to run the cases whose name contains it (profiling
// under callgrind), --quick for a smoke run.

#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/handlers.h"
#include "loom/loom.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/eager/c_api_experimental.h"

#define CHECK_TF(status)                                                      \
  do {                                                                        \
    if (TF_GetCode(status) != TF_OK) {                                        \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, TF_Message(status)); \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

//===----------------------------------------------------------------------===//
// A minimal pass-through handler: each op runs on the outer handler, with
// the op prepared there once (when it is prepared here).
//===----------------------------------------------------------------------===//

typedef struct pass_state_t {
  loom_context_t* context;
  loom_op_handler_t* outer;  // retained; NULL: the CPU
} pass_state_t;

static loom_status_t make_pass(loom_context_t* context,
                               loom_op_handler_t* outer,
                               loom_op_handler_t** out);

static loom_status_t pass_prepare(loom_op_handler_t* handler,
                                  const char* op_name, const loom_op_def_t* op,
                                  void** out_op_data) {
  (void)op;
  pass_state_t* state = loom_op_handler_state(handler);
  loom_op_handler_t* outer =
      state->outer ? state->outer : loom_context_cpu(state->context);
  return loom_runtime_prepare_op(loom_op_handler_runtime(handler), op_name,
                                 outer, (loom_prepared_op_t**)out_op_data);
}

static void pass_release_op_data(loom_op_handler_t* handler, void* data) {
  (void)handler;
  loom_prepared_op_release(data);
}

static loom_status_t pass_execute(loom_op_handler_t* handler,
                                  loom_op_invocation_t* invocation) {
  (void)handler;
  return loom_op_invocation_forward(invocation,
                                    loom_prepared_op_data(invocation->op));
}

static void pass_destroy(void* opaque) {
  pass_state_t* state = opaque;
  loom_op_handler_release(state->outer);
  free(state);
}

static loom_status_t pass_merge(loom_op_handler_t* handler,
                                loom_op_handler_t* outer,
                                loom_op_handler_t** out_merged) {
  pass_state_t* state = loom_op_handler_state(handler);
  return make_pass(state->context, outer, out_merged);
}

static bool pass_takes_foreign_inputs(const loom_op_handler_t* handler,
                                      const char* op_name) {
  (void)handler;
  (void)op_name;
  return true;
}

static const loom_op_handler_vtable_t kPassVtable = {
    .struct_size = sizeof(loom_op_handler_vtable_t),
    .type_name = "PASS",
    .prepare = pass_prepare,
    .release_op_data = pass_release_op_data,
    .execute = pass_execute,
    .destroy = pass_destroy,
    .merge = pass_merge,
    .takes_foreign_inputs = pass_takes_foreign_inputs,
};

static loom_status_t make_pass(loom_context_t* context,
                               loom_op_handler_t* outer,
                               loom_op_handler_t** out) {
  pass_state_t* state = calloc(1, sizeof(*state));
  if (!state) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  state->context = context;
  state->outer = outer;
  loom_op_handler_retain(outer);
  loom_status_t status = loom_op_handler_create(loom_context_runtime(context),
                                                &kPassVtable, state, NULL, out);
  if (status) pass_destroy(state);
  return status;
}

//===----------------------------------------------------------------------===//
// Measurements
//===----------------------------------------------------------------------===//

typedef struct bench_t {
  TFE_Context* ctx;
  TFE_Op* op;  // AddV2 of x and y, built
  TFE_TensorHandle* x;
  TFE_TensorHandle* y;
  TF_Status* status;
} bench_t;

// What a language binding does per op: reuse an op object.
static double measure_reset_execute(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    TFE_OpReset(b->op, "AddV2", NULL, b->status);
    TFE_OpAddInput(b->op, b->x, b->status);
    TFE_OpAddInput(b->op, b->y, b->status);
    TFE_TensorHandle* result = NULL;
    int num_retvals = 1;
    TFE_Execute(b->op, &result, &num_retvals, b->status);
    TFE_DeleteTensorHandle(result);
  }
  double elapsed = bench_now_ns() - start;
  CHECK_TF(b->status);
  return elapsed;
}

static double measure_execute(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    TFE_TensorHandle* result = NULL;
    int num_retvals = 1;
    TFE_Execute(b->op, &result, &num_retvals, b->status);
    TFE_DeleteTensorHandle(result);
  }
  double elapsed = bench_now_ns() - start;
  CHECK_TF(b->status);
  return elapsed;
}

static double measure_native(void* arg, int64_t iterations) {
  bench_t* b = arg;
  loom_eager_op_t* op = (loom_eager_op_t*)b->op;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* result = NULL;
    int32_t count = 0;
    loom_status_t status = loom_eager_op_execute(op, &result, 1, &count);
    if (LOOM_UNLIKELY(status != NULL)) CHECK_OK(status);
    loom_tensor_handle_release(result);
  }
  return bench_now_ns() - start;
}

static TFE_TensorHandle* matrix(TFE_Context* ctx, float value,
                                TF_Status* status) {
  int64_t dims[2] = {2, 2};
  TF_Tensor* t = TFE_AllocateHostTensor(ctx, TF_FLOAT, dims, 2, status);
  CHECK_TF(status);
  float* data = TF_TensorData(t);
  for (int i = 0; i < 4; ++i) data[i] = value;
  TFE_TensorHandle* h = TFE_NewTensorHandleFromTensor(ctx, t, status);
  CHECK_TF(status);
  TF_DeleteTensor(t);
  return h;
}

static void bench_open(bench_t* b, bool async) {
  b->status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_ContextOptionsSetAsync(options, async);
  b->ctx = TFE_NewContext(options, b->status);
  CHECK_TF(b->status);
  TFE_DeleteContextOptions(options);
  b->x = matrix(b->ctx, 1.0f, b->status);
  b->y = matrix(b->ctx, 2.0f, b->status);
  b->op = TFE_NewOp(b->ctx, "AddV2", b->status);
  TFE_OpAddInput(b->op, b->x, b->status);
  TFE_OpAddInput(b->op, b->y, b->status);
  CHECK_TF(b->status);
}

static void bench_close(bench_t* b) {
  TFE_DeleteOp(b->op);
  TFE_DeleteTensorHandle(b->x);
  TFE_DeleteTensorHandle(b->y);
  TFE_DeleteContext(b->ctx);
  TF_DeleteStatus(b->status);
}

static const char* g_only = NULL;

// Whether the figures starting with `name` are wanted (--only matches a
// part of a figure's name, or names a figure that starts with `name`).
static bool selected(const char* name) {
  return !g_only || strstr(name, g_only) || strstr(g_only, name);
}

// The median extra time per op of `depth` nested handler scopes (pass-through
// handlers, or logging ones): each repetition times the op without and
// with the scopes, back to back, so that the machine's drift cancels.
static double scope_cost(bench_t* b, int depth, bool logging,
                         int64_t iterations, int repetitions) {
  loom_context_t* context = (loom_context_t*)b->ctx;
  loom_op_handler_t* handlers[3] = {NULL, NULL, NULL};
  for (int i = 0; i < depth; ++i) {
    if (logging) {
      CHECK_OK(loom_scope_logging_handler_create(context, NULL, &handlers[i]));
    } else {
      CHECK_OK(make_pass(context, NULL, &handlers[i]));
    }
  }
  double samples[64];
  if (repetitions > 64) repetitions = 64;
  for (int r = -1; r < repetitions; ++r) {  // r = -1: warm-up
    double without = measure_execute(b, iterations);
    for (int i = 0; i < depth; ++i) {
      CHECK_OK(loom_context_enter_scope(context, handlers[i]));
    }
    double with = measure_execute(b, iterations);
    for (int i = 0; i < depth; ++i) CHECK_OK(loom_context_exit_scope(context));
    if (r >= 0) samples[r] = (with - without) / (double)iterations;
  }
  qsort(samples, (size_t)repetitions, sizeof(double), bench_compare_doubles);
  for (int i = 0; i < depth; ++i) loom_op_handler_release(handlers[i]);
  return samples[repetitions / 2];
}

int main(int argc, char** argv) {
  int64_t iterations = 200000;
  int repetitions = 9;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      iterations = 2000;
      repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    }
  }
  bench_t sync;
  bench_open(&sync, false);
  // Bring the clock and the caches up before the first measured case.
  measure_execute(&sync, iterations);

  if (selected("eager_add_2x2_tfe_sync")) {
    bench_report(
        "eager_add_2x2_tfe_sync",
        bench_median_ns(measure_reset_execute, &sync, iterations, repetitions),
        "ns/op");
  }
  if (selected("eager_add_2x2_tfe_execute")) {
    bench_report(
        "eager_add_2x2_tfe_execute",
        bench_median_ns(measure_execute, &sync, iterations, repetitions),
        "ns/op");
  }
  if (selected("eager_add_2x2_native")) {
    bench_report(
        "eager_add_2x2_native",
        bench_median_ns(measure_native, &sync, iterations, repetitions),
        "ns/op");
  }
  if (selected("eager_passthrough_1")) {
    bench_report("eager_passthrough_1_extra",
                 scope_cost(&sync, 1, false, iterations, repetitions), "ns/op");
  }
  if (selected("eager_passthrough_3")) {
    bench_report("eager_passthrough_3_extra_per_handler",
                 scope_cost(&sync, 3, false, iterations, repetitions) / 3,
                 "ns/op");
  }
  if (selected("eager_logging")) {
    bench_report("eager_logging_extra",
                 scope_cost(&sync, 1, true, iterations, repetitions), "ns/op");
  }
  bench_close(&sync);

  if (selected("eager_add_2x2_tfe_async")) {
    bench_t async;
    bench_open(&async, true);
    double ns =
        bench_median_ns(measure_execute, &async, iterations, repetitions);
    TFE_ContextAsyncWait(async.ctx, async.status);
    CHECK_TF(async.status);
    bench_report("eager_add_2x2_tfe_async", ns, "ns/op");
    bench_close(&async);
  }
  return 0;
}
