// Programs as `loom run` executes them (src/function): a generated program
// of 10,000 tiny operations, parsed, then run through the executor. Prints
// "name median unit" lines:
//
//   program_parse_10000_ops                  ms to parse the executeop program
//   program_parse_per_op                     ns per operation of that parse
//   program_run_tfrt_add_i32_per_op          ns per tfrt.add.i32 kernel run
//   program_run_executeop_add_1_per_op       ns per corert.executeop of
//                                            "tf.AddV2" on f32 [1] tensors
//   program_run_executeop_add_2x2_per_op     the same on [2, 2]
//
// Each run is one call of the function (frame set-up and the return
// included) until its result is available. --quick: 1,000 operations and
// fewer repetitions (the test suite's smoke run); --ops N: N operations.

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timer.h"
#include "loom/host_context.h"
#include "loom/program.h"

static int64_t g_ops = 10000;
static int g_repetitions = 15;

static void check(loom_status_t status, const char* what) {
  if (!status) return;
  fprintf(stderr, "bench_program: %s: %s\n", what, loom_status_message(status));
  exit(1);
}

typedef struct text_t {
  char* data;
  size_t length;
  size_t capacity;
} text_t;

static void append(text_t* text, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static void append(text_t* text, const char* format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text->data + text->length, text->capacity - text->length,
                      format, args);
    va_end(args);
    if (n >= 0 && (size_t)n < text->capacity - text->length) {
      text->length += (size_t)n;
      return;
    }
    text->capacity = text->capacity * 2 + (size_t)n + 64;
    text->data = realloc(text->data, text->capacity);
    if (!text->data) exit(1);
  }
}

// %v0 = constant; %vI = tfrt.add.i32 %v(I-1), %one; return the last.
static text_t tfrt_program(int64_t ops) {
  text_t text = {.data = malloc(1024), .length = 0, .capacity = 1024};
  append(&text,
         "func.func @chain() -> i32 {\n"
         "  %%one = tfrt.constant.i32 1\n"
         "  %%v0 = tfrt.constant.i32 0\n");
  for (int64_t i = 1; i <= ops - 2; ++i) {
    append(&text, "  %%v%lld = tfrt.add.i32 %%v%lld, %%one\n", (long long)i,
           (long long)i - 1);
  }
  append(&text, "  tfrt.return %%v%lld : i32\n}\n", (long long)ops - 2);
  return text;
}

// The same chain through corert.executeop: "tf.AddV2" on `type` tensors.
static text_t executeop_program(int64_t ops, const char* type,
                                const char* value) {
  text_t text = {.data = malloc(1024), .length = 0, .capacity = 1024};
  append(&text,
         "func.func @chain() -> !corert.tensorhandle {\n"
         "  %%ch = tfrt.new.chain\n"
         "  %%cpu = corert.get_op_handler %%ch \"cpu\"\n"
         "  %%one = corert.const_dense_tensor dense<%s> : %s\n"
         "  %%v0 = corert.const_dense_tensor dense<0.0> : %s\n",
         value, type, type);
  for (int64_t i = 1; i <= ops - 5; ++i) {
    append(&text,
           "  %%v%lld = corert.executeop(%%cpu) \"tf.AddV2\"(%%v%lld, %%one) : "
           "1\n",
           (long long)i, (long long)i - 1);
  }
  append(&text, "  tfrt.return %%v%lld : !corert.tensorhandle\n}\n",
         (long long)ops - 5);
  return text;
}

typedef struct parse_case_t {
  const text_t* text;
} parse_case_t;

static double measure_parse(void* arg, int64_t iterations) {
  parse_case_t* c = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_program_t* program = NULL;
    check(loom_program_parse(loom_allocator_default(), "bench.mlir",
                             c->text->data, c->text->length, &program, NULL),
          "parse");
    loom_program_destroy(program);
  }
  return bench_now_ns() - start;
}

typedef struct run_case_t {
  loom_host_context_t* host;
  loom_program_executor_t* executor;
  loom_program_t* program;
} run_case_t;

static double measure_run(void* arg, int64_t iterations) {
  run_case_t* c = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_async_value_t* result = NULL;
    check(loom_program_executor_call(c->executor, c->program, "chain", NULL, 0,
                                     &result, 1),
          "call");
    check(loom_host_context_await(c->host, &result, 1), "await");
    if (!loom_program_value_get(result)) {
      fprintf(stderr, "bench_program: the program failed: %s\n",
              loom_status_message(loom_async_value_error(result)));
      exit(1);
    }
    loom_async_value_release(result);
  }
  double elapsed = bench_now_ns() - start;
  loom_program_executor_quiesce(c->executor);
  return elapsed;
}

// Median ns per operation of running `text`'s function.
static double run_per_op(run_case_t* c, const text_t* text) {
  check(loom_program_parse(loom_allocator_default(), "bench.mlir", text->data,
                           text->length, &c->program, NULL),
        "parse");
  double per_call = bench_median_ns(measure_run, c, 3, g_repetitions);
  double per_op = per_call / (double)loom_program_op_count(c->program);
  loom_program_destroy(c->program);
  c->program = NULL;
  return per_op;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_ops = 1000;
      g_repetitions = 3;
    } else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc) {
      g_ops = atoll(argv[++i]);
      if (g_ops < 10) g_ops = 10;
    }
  }
  text_t tfrt = tfrt_program(g_ops);
  text_t add_1 = executeop_program(g_ops, "tensor<1xf32>", "[1.0]");
  text_t add_2x2 = executeop_program(g_ops, "tensor<2x2xf32>", "1.0");

  parse_case_t parse = {&add_1};
  double parse_ns = bench_median_ns(measure_parse, &parse, 3, g_repetitions);
  char name[64];
  snprintf(name, sizeof(name), "program_parse_%lld_ops", (long long)g_ops);
  bench_report(name, parse_ns / 1e6, "ms");
  bench_report("program_parse_per_op", parse_ns / (double)g_ops, "ns");

  run_case_t run = {0};
  check(loom_host_context_create(NULL, &run.host), "host");
  loom_program_executor_options_t options;
  loom_program_executor_options_initialize(&options, run.host);
  check(loom_program_executor_create(&options, &run.executor), "executor");
  bench_report("program_run_tfrt_add_i32_per_op", run_per_op(&run, &tfrt),
               "ns");
  bench_report("program_run_executeop_add_1_per_op", run_per_op(&run, &add_1),
               "ns");
  bench_report("program_run_executeop_add_2x2_per_op",
               run_per_op(&run, &add_2x2), "ns");
  loom_program_executor_destroy(run.executor);
  loom_host_context_destroy(run.host);
  free(tfrt.data);
  free(add_1.data);
  free(add_2x2.data);
  return 0;
}
