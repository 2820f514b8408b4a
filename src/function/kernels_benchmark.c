// tfrt_test.benchmark: runs its region over and over, one run after the
// other, and prints TFRT's benchmark report (`BM:NAME:Count: N`, ...).
// tfrt_test.sync_benchmark does the same with a function (@f) that returns
// nothing, named after it: a run ends when the function's frame is done.
// It has no result; a failing operation of the function reports its error
// each run.
//
// Attributes (i32): duration_secs and max_count bound the measured runs
// (a run starts while fewer than max_count were measured and they took
// less than duration_secs in all); num_warmup_runs runs come first and are
// not measured. `name` tags the report. The region returns one value; a
// run ends when that value is set. The result, a chain, is set when the
// report is printed, or to the error of a run that failed (reported where
// it arose) or of a cancelled host.

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "function/kernels_common.h"
#include "loom/host_context.h"

typedef struct benchmark_t {
  loom_program_executor_t* executor;
  const program_binding_t* binding;
  const program_op_t* op;
  const program_function_t* region;
  program_frame_t* frame;      // the kernel's (retained): the caller
  loom_async_value_t* chain;   // the kernel's result (retained; NULL: sync)
  loom_async_value_t* result;  // the current run's
  FILE* output;
  const char* name;  // in the program's attributes
  int64_t num_warmup_runs;
  int64_t max_count;
  int64_t duration_ns;
  int64_t started;  // runs started, warm-up runs included
  int64_t wall_start;
  int64_t cpu_start;
  int64_t total_wall;  // of the measured runs
  int64_t total_cpu;
  int64_t* times;  // wall times, then as many CPU times
  int64_t num_times;
  int64_t times_capacity;
  int32_t num_arguments;
  loom_async_value_t* arguments[];  // retained
} benchmark_t;

static int64_t now_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void benchmark_free(benchmark_t* bm) {
  loom_allocator_t allocator = bm->executor->allocator;
  for (int32_t i = 0; i < bm->num_arguments; ++i) {
    loom_async_value_release(bm->arguments[i]);
  }
  loom_async_value_release(bm->result);
  loom_async_value_release(bm->chain);
  loom__program_frame_release(bm->frame);
  loom_allocator_free(allocator, bm->times);
  loom_allocator_free(allocator, bm);
}

// Ends the benchmark with `error` (borrowed), reported already.
static void benchmark_fail(benchmark_t* bm, loom_status_t error) {
  if (bm->chain) {
    loom_status_ignore(
        loom_async_value_set_error(bm->chain, loom_status_clone(error)));
  }
  benchmark_free(bm);
}

// Ends the benchmark with `error` (owned), reporting it at the operation.
static void benchmark_report(benchmark_t* bm, loom_status_t error) {
  loom__program_report_at(bm->executor, bm->op, error);
  benchmark_fail(bm, error);
  loom_status_free(error);
}

static int compare(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a;
  int64_t y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

// The run time at fraction p of the sorted times (TFRT's: times[n * p]).
static int64_t percentile(const int64_t* times, int64_t n, double p) {
  if (n == 0) return 0;
  int64_t index = (int64_t)((double)n * p);
  return times[index < n ? index : n - 1];
}

static void summarize(benchmark_t* bm) {
  int64_t n = bm->num_times;
  int64_t* wall = bm->times;
  int64_t* cpu = bm->times + bm->times_capacity;
  qsort(wall, (size_t)n, sizeof(int64_t), compare);
  qsort(cpu, (size_t)n, sizeof(int64_t), compare);
  FILE* out = bm->output;
  const char* name = bm->name;
  fprintf(out, "BM:%s:Duration(ns): %lld\n", name, (long long)bm->total_wall);
  fprintf(out, "BM:%s:Count: %lld\n", name, (long long)n);
  static const struct {
    const char* label;
    double p;
  } kRows[] = {{"Min", 0.0}, {"50%", 0.5}, {"95%", 0.95}, {"99%", 0.99}};
  for (size_t i = 0; i < 4; ++i) {
    fprintf(out, "BM:%s:Time %s(ns): %lld\n", name, kRows[i].label,
            (long long)percentile(wall, n, kRows[i].p));
  }
  for (size_t i = 0; i < 4; ++i) {
    fprintf(out, "BM:%s:CPU %s(ns): %lld\n", name, kRows[i].label,
            (long long)percentile(cpu, n, kRows[i].p));
  }
  double utilization = bm->total_wall > 0 ? (double)bm->total_cpu * 100.0 /
                                                (double)bm->total_wall
                                          : 0.0;
  fprintf(out, "BM:%s:CPU utilization(percent): %e\n", name, utilization);
  fflush(out);
}

// Keeps one more measured run's times.
static loom_status_t record(benchmark_t* bm, int64_t wall, int64_t cpu) {
  if (bm->num_times == bm->times_capacity) {
    int64_t capacity = bm->times_capacity ? bm->times_capacity * 2 : 64;
    if (capacity > bm->max_count) capacity = bm->max_count;
    int64_t* times = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
        bm->executor->allocator, sizeof(int64_t) * 2 * (size_t)capacity,
        (void**)&times));
    if (bm->num_times > 0) {
      memcpy(times, bm->times, sizeof(int64_t) * (size_t)bm->num_times);
      memcpy(times + capacity, bm->times + bm->times_capacity,
             sizeof(int64_t) * (size_t)bm->num_times);
    }
    loom_allocator_free(bm->executor->allocator, bm->times);
    bm->times = times;
    bm->times_capacity = capacity;
  }
  bm->times[bm->num_times] = wall;
  bm->times[bm->times_capacity + bm->num_times] = cpu;
  bm->num_times++;
  bm->total_wall += wall;
  bm->total_cpu += cpu;
  return loom_ok_status();
}

static void start_run(void* arg);

// A run took `wall` and `cpu` nanoseconds: records it (after the warm-up)
// and starts the next, or reports.
static void finish_run(benchmark_t* bm, int64_t wall, int64_t cpu) {
  if (bm->started > bm->num_warmup_runs) {
    loom_status_t status = record(bm, wall, cpu);
    if (status) {
      benchmark_report(bm, status);
      return;
    }
  }
  if (bm->started < bm->max_count + bm->num_warmup_runs &&
      bm->total_wall < bm->duration_ns) {
    // From the work queue: a run that finishes at once does not recurse.
    loom_status_t status =
        loom_host_context_enqueue(bm->executor->host, start_run, bm);
    if (status) {
      loom_status_free(status);
      start_run(bm);
    }
    return;
  }
  summarize(bm);
  if (bm->chain) {
    loom_status_t status = loom_program_value_set_chain(bm->chain);
    if (status) {
      benchmark_report(bm, status);
      return;
    }
  }
  benchmark_free(bm);
}

static void run_done(void* arg) {
  benchmark_t* bm = arg;
  int64_t wall = now_ns(CLOCK_MONOTONIC) - bm->wall_start;
  int64_t cpu = now_ns(CLOCK_PROCESS_CPUTIME_ID) - bm->cpu_start;
  if (loom_async_value_is_error(bm->result)) {
    benchmark_fail(bm, loom_async_value_error(bm->result));
    return;
  }
  loom_async_value_release(bm->result);
  bm->result = NULL;
  finish_run(bm, wall, cpu);
}

// A sync benchmark's run: its function's frame is done.
static void sync_run_done(void* arg) {
  benchmark_t* bm = arg;
  finish_run(bm, now_ns(CLOCK_MONOTONIC) - bm->wall_start,
             now_ns(CLOCK_PROCESS_CPUTIME_ID) - bm->cpu_start);
}

static void start_run(void* arg) {
  benchmark_t* bm = arg;
  loom_host_context_t* host = bm->executor->host;
  if (loom_host_context_is_cancelled(host)) {
    loom_status_t cancelled = loom_host_context_cancel_status(host);
    benchmark_fail(bm, cancelled);
    loom_status_free(cancelled);
    return;
  }
  loom_status_t status = loom_ok_status();
  if (bm->chain) {
    status = loom_program_value_create(bm->executor->allocator, &bm->result);
    if (status) {
      benchmark_report(bm, status);
      return;
    }
  }
  bm->started++;
  bm->wall_start = now_ns(CLOCK_MONOTONIC);
  bm->cpu_start = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  // A call that cannot start has reported why.
  if (!bm->chain) {
    status = loom__program_call_notify(bm->executor, bm->binding, bm->region,
                                       bm->frame, bm->op, bm->arguments, NULL,
                                       sync_run_done, bm);
    if (status) {
      benchmark_fail(bm, status);
      loom_status_free(status);
    }
    return;
  }
  status = loom__program_call(bm->executor, bm->binding, bm->region, bm->frame,
                              bm->op, bm->arguments, &bm->result);
  if (status) {
    benchmark_fail(bm, status);
    loom_status_free(status);
    return;
  }
  status = loom_async_value_and_then(bm->result, run_done, bm);
  if (status) benchmark_report(bm, status);
}

// Integer attribute `name` (i32, or i64 as the generic form writes it) of
// at least `minimum`.
static loom_status_t int_attr(const loom_program_frame_t* frame,
                              const char* name, int64_t minimum, int64_t* out) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), name, &value) ||
      value.is_list ||
      (value.kind != LOOM_ATTR_KIND_I32 && value.kind != LOOM_ATTR_KIND_I64)) {
    return loom__kernel_missing_attr(frame, name, "an integer");
  }
  *out = value.kind == LOOM_ATTR_KIND_I32 ? value.u.i32 : value.u.i64;
  if (*out < minimum || *out > INT32_MAX) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "'%s': %s must be in [%lld, %d], got %lld",
                            loom_program_frame_op_name(frame), name,
                            (long long)minimum, INT32_MAX, (long long)*out);
  }
  return loom_ok_status();
}

// user_data: NULL for tfrt_test.benchmark, non-NULL for the sync one.
static void benchmark_kernel(loom_program_frame_t* frame, void* user_data) {
  bool sync = user_data != NULL;
  const program_op_t* op = frame->op;
  const program_function_t* region = NULL;
  int32_t first = 0;  // the operand the region's arguments start at
  if (sync) {
    region = op->num_callees == 1 ? op->callees[0] : NULL;
    if (!region || region->num_results != 0 ||
        region->num_arguments != frame->num_arguments) {
      loom_program_frame_fail(
          frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "'%s' needs a function returning nothing "
                                  "that takes its operands",
                                  loom_program_frame_op_name(frame)));
      return;
    }
  } else {
    region = op->num_regions == 1 ? op->regions[0] : 0;
    first = region ? op->region_first[0] : 0;
    if (!region || region->num_results != 1 ||
        first + region->num_arguments != frame->num_arguments) {
      loom_program_frame_fail(
          frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "'%s' needs one region returning one value",
                                  loom_program_frame_op_name(frame)));
      return;
    }
  }
  int64_t duration_secs = 0;
  int64_t max_count = 0;
  int64_t num_warmup_runs = 0;
  const char* name = loom__kernel_string_attr(frame, "name");
  if (!name && sync) name = op->callee_names[0];
  loom_status_t status =
      name ? loom_ok_status()
           : loom__kernel_missing_attr(frame, "name", "a string");
  if (!status) status = int_attr(frame, "duration_secs", 1, &duration_secs);
  if (!status) status = int_attr(frame, "max_count", 1, &max_count);
  if (!status) status = int_attr(frame, "num_warmup_runs", 0, &num_warmup_runs);
  benchmark_t* bm = NULL;
  if (!status) {
    status =
        loom_allocator_calloc(frame->executor->allocator,
                              sizeof(*bm) + sizeof(loom_async_value_t*) *
                                                (size_t)region->num_arguments,
                              (void**)&bm);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  bm->executor = frame->executor;
  bm->binding = frame->binding;
  bm->op = op;
  bm->region = region;
  bm->frame = frame->frame;
  loom__program_frame_retain(bm->frame);
  if (!sync) {
    bm->chain = frame->results[0];
    loom_async_value_retain(bm->chain);
  }
  bm->output = loom_program_frame_output(frame);
  bm->name = name;
  bm->num_warmup_runs = num_warmup_runs;
  bm->max_count = max_count;
  bm->duration_ns = duration_secs * 1000000000;
  bm->num_arguments = region->num_arguments;
  for (int32_t i = 0; i < region->num_arguments; ++i) {
    bm->arguments[i] = frame->arguments[first + i];
    loom_async_value_retain(bm->arguments[i]);
  }
  start_run(bm);
}

loom_status_t loom__program_register_benchmark_kernels(
    loom_program_executor_t* executor) {
  static const char kSync = 1;
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "tfrt_test.benchmark",
                                        benchmark_kernel, NULL, -1, 1));
  return loom__kernel_add(executor, "tfrt_test.sync_benchmark",
                          benchmark_kernel, (void*)&kSync, -1, 0);
}
