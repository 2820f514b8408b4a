// Calling an eager function: the cost per body op of a call of a function
// of 20 tiny ops, beside the same 20 ops run eagerly. Prints one
// "name median unit" line per figure (ns per body op):
//
//   function_add20_call   a call (by the function's name, an op built once)
//                         of f(x, y) = x + y + y + ... (20 AddV2 on 2x2
//                         float tensors), result released;
//   function_add20_eager  the same 20 AddV2 as eager ops, built once.
//
//   bench_function [--quick] [--only TEXT] [--calls N]
//
// --calls N runs N calls of function_add20_call and nothing else, untimed:
// the fixed workload to count instructions of under callgrind.

#include <string.h>

#include "bench_timer.h"
#include "loom/function.h"
#include "loom/loom.h"

#define CHECK_OK(expr)                                         \
  do {                                                         \
    loom_status_t check_status_ = (expr);                      \
    if (check_status_) {                                       \
      char text_[512];                                         \
      loom_status_format(check_status_, text_, sizeof(text_)); \
      fprintf(stderr, "%s failed: %s\n", #expr, text_);        \
      exit(1);                                                 \
    }                                                          \
  } while (0)

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

int main(int argc, char** argv) {
  int64_t iterations = 50000;
  int repetitions = 9;
  int64_t calls = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      iterations = 500;
      repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = strtoll(argv[++i], NULL, 10);
    }
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
  bench_close(&b);
  return 0;
}
