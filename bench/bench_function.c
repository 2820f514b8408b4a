// Calling an eager function: the cost per body op of a call of a function
// of 20 tiny ops, beside the same 20 ops run eagerly, and a tiny training
// step traced into a function beside the same step run eagerly. Prints one
// "name median unit" line per figure:
//
//   function_add20_call   a call (by the function's name, an op built once)
//                         of f(x, y) = x + y + y + ... (20 AddV2 on 2x2
//                         float tensors), result released, ns per body op;
//   function_add20_eager  the same 20 AddV2 as eager ops, built once, ns
//                         per op;
//   function_mlp_step_traced_b<B>
//                         one SGD step (momentum 0.9) of the demo's MLP
//                         16-32-4 on a batch of B (examples/fashion_mnist:
//                         forward, the tape's gradient, the variables'
//                         update), traced once into a function and called
//                         per step, us per step;
//   function_mlp_step_traced_b<B>_per_node
//                         the same in ns per node the call runs;
//   function_mlp_step_eager_b<B>
//                         that step run eagerly, us per step;
//   function_add20_grad_call
//                         a gradient step through a call: a new tape
//                         watching x, add20(x, y) (recorded as one op), the
//                         gradient of the result with respect to x (the
//                         call's backward function, traced at the first
//                         step), us per step;
//   function_add20_grad_eager
//                         the same with the 20 AddV2 run eagerly under the
//                         tape, us per step.
//
// bench/function_reference.py times the same step in PyTorch, eagerly and
// as a TorchScript function (torch.jit.script).
//
//   bench_function [--quick] [--only TEXT] [--calls N [--workload W]]
//
// --calls N runs N calls of workload W (add20, the default: a call of
// add20; mlp_traced: a call of the traced step of batch 1; mlp_eager: that
// step eagerly) and nothing else, untimed: the fixed workload to count
// instructions of under callgrind.

#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/loom.h"
#include "loom/trace.h"
#include "nn_model.h"
#include "nn_ops.h"
#include "nn_optimizer.h"
#include "nn_train.h"

enum { kBodyOps = 20 };

static const char* g_only = NULL;

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only) != NULL;
}

typedef struct bench_t {
  loom_context_t* context;
  loom_tensor_handle_t* x;
  loom_tensor_handle_t* y;
  loom_eager_op_t* call;            // "add20" on x, y
  loom_eager_op_t* adds[kBodyOps];  // AddV2, inputs added per run
} bench_t;

static void make_function(loom_context_t* context) {
  loom_function_builder_t* b = NULL;
  CHECK_OK(loom_function_builder_create(loom_allocator_system(), "add20", &b));
  CHECK_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  CHECK_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  char previous[32] = "x";
  for (int i = 0; i < kBodyOps; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "add%d", i);
    const char* inputs[] = {previous, "y"};
    CHECK_OK(loom_function_builder_add_node(b, name, "AddV2", inputs, 2, NULL,
                                            NULL));
    snprintf(previous, sizeof(previous), "add%d:z:0", i);
  }
  CHECK_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT, NULL,
                                            previous));
  loom_function_t* function = NULL;
  CHECK_OK(loom_function_builder_finish(b, &function));
  CHECK_OK(loom_context_add_function(context, function));
  loom_function_release(function);
}

static loom_tensor_handle_t* small_tensor(loom_context_t* context,
                                          float value) {
  int64_t dims[2] = {2, 2};
  loom_shape_t shape;
  CHECK_OK(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_tensor_create_dense(loom_allocator_system(), LOOM_DTYPE_FLOAT,
                                    &shape, &tensor));
  for (int i = 0; i < 4; ++i) ((float*)loom_tensor_data(tensor))[i] = value;
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_context_new_handle(context, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static void bench_open(bench_t* b) {
  memset(b, 0, sizeof(*b));
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  CHECK_OK(loom_context_create(&options, &b->context));
  make_function(b->context);
  b->x = small_tensor(b->context, 1.0f);
  b->y = small_tensor(b->context, 0.5f);
  CHECK_OK(loom_eager_op_create(b->context, "add20", &b->call));
  CHECK_OK(loom_eager_op_add_input(b->call, b->x));
  CHECK_OK(loom_eager_op_add_input(b->call, b->y));
  for (int i = 0; i < kBodyOps; ++i) {
    CHECK_OK(loom_eager_op_create(b->context, "AddV2", &b->adds[i]));
  }
}

static void bench_close(bench_t* b) {
  for (int i = 0; i < kBodyOps; ++i) loom_eager_op_destroy(b->adds[i]);
  loom_eager_op_destroy(b->call);
  loom_tensor_handle_release(b->x);
  loom_tensor_handle_release(b->y);
  loom_context_destroy(b->context);
}

static void call_once(bench_t* b) {
  loom_tensor_handle_t* r = NULL;
  int32_t count = 0;
  CHECK_OK(loom_eager_op_execute(b->call, &r, 1, &count));
  loom_tensor_handle_release(r);
}

static double measure_call(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) call_once(b);
  return (bench_now_ns() - start) / kBodyOps;
}

static double measure_eager(void* arg, int64_t iterations) {
  bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* value = b->x;
    loom_tensor_handle_retain(value);
    for (int k = 0; k < kBodyOps; ++k) {
      loom_eager_op_t* op = b->adds[k];
      CHECK_OK(loom_eager_op_reset(op, NULL));
      CHECK_OK(loom_eager_op_add_input(op, value));
      CHECK_OK(loom_eager_op_add_input(op, b->y));
      loom_tensor_handle_release(value);
      int32_t count = 0;
      CHECK_OK(loom_eager_op_execute(op, &value, 1, &count));
    }
    loom_tensor_handle_release(value);
  }
  return (bench_now_ns() - start) / kBodyOps;
}

// A tape watching x, add20(x, y) through the call or eagerly, and the
// gradient with respect to x.
static void grad_step(bench_t* b, bool through_call) {
  loom_op_handler_t* tape = NULL;
  CHECK_OK(loom_tape_create(b->context, NULL, &tape));
  CHECK_OK(loom_context_enter_scope(b->context, tape));
  CHECK_OK(loom_tape_watch(tape, b->x));
  loom_tensor_handle_t* r = NULL;
  int32_t count = 0;
  if (through_call) {
    CHECK_OK(loom_eager_op_execute(b->call, &r, 1, &count));
  } else {
    r = b->x;
    loom_tensor_handle_retain(r);
    for (int k = 0; k < kBodyOps; ++k) {
      loom_eager_op_t* op = b->adds[k];
      CHECK_OK(loom_eager_op_reset(op, NULL));
      CHECK_OK(loom_eager_op_add_input(op, r));
      CHECK_OK(loom_eager_op_add_input(op, b->y));
      loom_tensor_handle_release(r);
      CHECK_OK(loom_eager_op_execute(op, &r, 1, &count));
    }
  }
  CHECK_OK(loom_context_exit_scope(b->context));
  loom_tensor_handle_t* dx = NULL;
  CHECK_OK(loom_tape_gradient(tape, &r, 1, &b->x, 1, NULL,
                              LOOM_UNCONNECTED_NONE, &dx));
  loom_tensor_handle_release(dx);
  loom_tensor_handle_release(r);
  loom_op_handler_release(tape);
}

static double measure_grad_call(void* arg, int64_t iterations) {
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) grad_step(arg, true);
  return bench_now_ns() - start;
}

static double measure_grad_eager(void* arg, int64_t iterations) {
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) grad_step(arg, false);
  return bench_now_ns() - start;
}

// The tiny MLP's training step, eager or traced.
typedef struct step_bench_t {
  loom_context_t* context;
  nn_model_t* model;
  nn_optimizer_t* optimizer;
  loom_tensor_handle_t* x;
  loom_tensor_handle_t* labels;
  loom_eager_op_t* call;  // the traced step on x and labels, or NULL
  loom_function_t* function;
} step_bench_t;

static void step_once(step_bench_t* b) {
  if (b->call) {
    loom_tensor_handle_t* loss = NULL;
    int32_t count = 0;
    CHECK_OK(loom_eager_op_execute(b->call, &loss, 1, &count));
    loom_tensor_handle_release(loss);
    return;
  }
  CHECK_OK(nn_train_step(b->model, b->optimizer, b->x, b->labels, NULL));
}

static double measure_steps(void* arg, int64_t iterations) {
  step_bench_t* b = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) step_once(b);
  return bench_now_ns() - start;
}

// Traces one step into function "train_step" (the variables and the
// optimizer's slots are captured) and makes b->call.
static void trace_step(step_bench_t* b) {
  loom_context_t* context = b->context;
  loom_op_handler_t* trace = NULL;
  CHECK_OK(loom_trace_create(context, "train_step", &trace));
  loom_tensor_handle_t *x = NULL, *labels = NULL, *loss = NULL;
  CHECK_OK(loom_trace_add_parameter_value(trace, "x", b->x, &x));
  CHECK_OK(loom_trace_add_parameter_value(trace, "labels", b->labels, &labels));
  CHECK_OK(loom_context_enter_scope(context, trace));
  CHECK_OK(nn_train_step(b->model, b->optimizer, x, labels, &loss));
  CHECK_OK(loom_context_exit_scope(context));
  CHECK_OK(loom_trace_finish(trace, &loss, 1, &b->function));
  CHECK_OK(loom_context_add_function(context, b->function));
  loom_tensor_handle_release(loss);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(labels);
  loom_op_handler_release(trace);
  CHECK_OK(loom_eager_op_create(context, "train_step", &b->call));
  CHECK_OK(loom_eager_op_add_input(b->call, b->x));
  CHECK_OK(loom_eager_op_add_input(b->call, b->labels));
}

static void step_open(step_bench_t* b, int64_t batch, bool traced) {
  memset(b, 0, sizeof(*b));
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 0;  // the caller's thread only
  CHECK_OK(loom_context_create(&options, &b->context));
  CHECK_OK(nn_model_create_mlp(b->context, 16, 32, 4, 1, &b->model));
  nn_optimizer_options_t optimizer_options;
  nn_optimizer_options_initialize(&optimizer_options, NN_OPTIMIZER_SGD);
  CHECK_OK(nn_optimizer_create(b->model, &optimizer_options, &b->optimizer));
  float values[32 * 16];
  int32_t labels[32];
  for (int64_t i = 0; i < batch * 16; ++i) {
    values[i] = (float)((i * 37) % 101) / 101.0f;
  }
  for (int64_t i = 0; i < batch; ++i) labels[i] = (int32_t)(i % 4);
  int64_t x_dims[2] = {batch, 16}, label_dims[1] = {batch};
  CHECK_OK(nn_constant_f32(b->context, x_dims, 2, values, &b->x));
  CHECK_OK(nn_constant_i32(b->context, label_dims, 1, labels, &b->labels));
  if (traced) trace_step(b);
}

static void step_close(step_bench_t* b) {
  loom_eager_op_destroy(b->call);
  loom_function_release(b->function);
  loom_tensor_handle_release(b->x);
  loom_tensor_handle_release(b->labels);
  nn_optimizer_destroy(b->optimizer);
  nn_model_destroy(b->model);
  loom_context_destroy(b->context);
}

static void bench_steps(int64_t batch, int64_t iterations, int repetitions) {
  char traced_name[64], per_node_name[80], eager_name[64];
  snprintf(traced_name, sizeof(traced_name), "function_mlp_step_traced_b%lld",
           (long long)batch);
  snprintf(per_node_name, sizeof(per_node_name), "%s_per_node", traced_name);
  snprintf(eager_name, sizeof(eager_name), "function_mlp_step_eager_b%lld",
           (long long)batch);
  step_bench_t b;
  if (wanted(traced_name) || wanted(per_node_name)) {
    step_open(&b, batch, true);
    double ns = bench_median_ns(measure_steps, &b, iterations, repetitions);
    loom_function_stats_t stats = {.struct_size = sizeof(stats)};
    CHECK_OK(loom_function_get_stats(b.function, &stats));
    if (wanted(traced_name)) bench_report(traced_name, ns / 1000.0, "us");
    if (wanted(per_node_name) && stats.planned_nodes > 0) {
      bench_report(per_node_name, ns / stats.planned_nodes, "ns/op");
    }
    step_close(&b);
  }
  if (wanted(eager_name)) {
    step_open(&b, batch, false);
    double ns = bench_median_ns(measure_steps, &b, iterations, repetitions);
    bench_report(eager_name, ns / 1000.0, "us");
    step_close(&b);
  }
}

int main(int argc, char** argv) {
  int64_t iterations = 50000;
  int repetitions = 9;
  int64_t calls = -1;
  const char* workload = "add20";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      iterations = 500;
      repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = strtoll(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--workload") == 0 && i + 1 < argc) {
      workload = argv[++i];
    }
  }
  if (calls >= 0 && strcmp(workload, "add20") != 0) {
    bool traced = strcmp(workload, "mlp_traced") == 0;
    if (!traced && strcmp(workload, "mlp_eager") != 0) {
      fprintf(stderr, "bench_function: unknown workload '%s'\n", workload);
      return 2;
    }
    step_bench_t step;
    step_open(&step, 1, traced);
    for (int64_t i = 0; i < calls; ++i) step_once(&step);
    step_close(&step);
    return 0;
  }
  bench_t b;
  bench_open(&b);
  if (calls >= 0) {
    for (int64_t i = 0; i < calls; ++i) call_once(&b);
    bench_close(&b);
    return 0;
  }
  if (wanted("function_add20_call")) {
    bench_report("function_add20_call",
                 bench_median_ns(measure_call, &b, iterations, repetitions),
                 "ns/op");
  }
  if (wanted("function_add20_eager")) {
    bench_report("function_add20_eager",
                 bench_median_ns(measure_eager, &b, iterations, repetitions),
                 "ns/op");
  }
  if (wanted("function_add20_grad_call")) {
    bench_report("function_add20_grad_call",
                 bench_median_ns(measure_grad_call, &b, iterations / 10 + 1,
                                 repetitions) /
                     1000.0,
                 "us");
  }
  if (wanted("function_add20_grad_eager")) {
    bench_report("function_add20_grad_eager",
                 bench_median_ns(measure_grad_eager, &b, iterations / 10 + 1,
                                 repetitions) /
                     1000.0,
                 "us");
  }
  bench_close(&b);
  int64_t batches[2] = {1, 32};
  for (int k = 0; k < 2; ++k) {
    bench_steps(batches[k], iterations / 25 + 1, repetitions);
  }
  return 0;
}
