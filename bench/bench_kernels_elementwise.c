// Element-wise kernels through the core runtime (ops run inline on the
// calling thread; the kernel splits work over Loom's pool). Prints one
// "name median unit" line per figure; `_1t` / `_2t` figures run with one
// thread (no workers) and two (the caller and one worker).
//
//   stream_triad_f32_16m_<t>     a[i] = b[i] + s * c[i] over 16 M floats on
//                                the same pool: the machine's bandwidth,
//                                counted as 3 arrays x 4 bytes x 16 M;
//   loom_add_f32_16m_<t>         z = AddV2(z, y), z forwarded (each result
//                                is the next op's only reference), counted
//                                as the triad; loom_mul_f32_16m_<t> the same
//                                for Mul;
//   loom_add_f32_16m_forwarded_per_op_<t>  buffers forwarded per op there;
//   loom_add_f32_16m_alloc_<t>   z = AddV2(x, y) with x and y kept: a fresh
//                                64 MB output per op (glibc maps it anew:
//                                page faults dominate);
//   loom_{add,mul}_f32_16m_reuse_<t>  the same out of place, with a host
//                                allocator that recycles big blocks (the
//                                output buffer is warm, as torch's out=z);
//   loom_<op>_<dtype>_1m_<t>     other ops on 1 M elements (4 MB, in the
//                                cache), Melem/s of output.

#include <pthread.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

enum { kStreamElements = 16 * 1024 * 1024, kSmallElements = 1024 * 1024 };

static int64_t g_iterations = 10;
static int g_repetitions = 9;
static const char* g_only = NULL;

static bool wanted(const char* name) {
  return !g_only || strstr(name, g_only);
}

//===----------------------------------------------------------------------===//
// STREAM triad on Loom's pool
//===----------------------------------------------------------------------===//

typedef struct triad_t {
  float* a;
  const float* b;
  const float* c;
  loom_thread_pool_t* pool;
} triad_t;

// Blocks of 64 K elements, as the element-wise driver splits its work.
enum { kTriadBlock = 65536 };

static void triad_blocks(void* arg, int64_t begin, int64_t end) {
  triad_t* t = arg;
  float* restrict a = t->a;
  const float* restrict b = t->b;
  const float* restrict c = t->c;
  const float s = 3.0f;
  for (int64_t i = begin * kTriadBlock; i < end * kTriadBlock; ++i) {
    a[i] = b[i] + s * c[i];
  }
}

static double measure_triad(void* arg, int64_t iterations) {
  triad_t* t = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    CHECK_OK(loom_thread_pool_parallel_for(
        t->pool, kStreamElements / kTriadBlock, kTriadBlock, triad_blocks, t));
  }
  return bench_now_ns() - start;
}

//===----------------------------------------------------------------------===//
// A host allocator that recycles big blocks (as TensorFlow's BFC allocator
// does), to measure out-of-place ops without the page faults of fresh
// memory: glibc maps and unmaps every block above 32 MB.
//===----------------------------------------------------------------------===//

enum { kRecycleMin = 1 << 20, kRecycleSlots = 8, kHeader = 64 };

typedef struct recycler_t {
  pthread_mutex_t mutex;
  void* blocks[kRecycleSlots];  // the malloc'd pointers
  size_t sizes[kRecycleSlots];
  int count;
} recycler_t;

static void* recycler_allocate(void* self, size_t size, size_t alignment) {
  recycler_t* r = self;
  if (alignment > kHeader) return NULL;
  void* block = NULL;
  if (size >= kRecycleMin) {
    pthread_mutex_lock(&r->mutex);
    for (int i = 0; i < r->count; ++i) {
      if (r->sizes[i] == size) {
        block = r->blocks[i];
        r->blocks[i] = r->blocks[--r->count];
        r->sizes[i] = r->sizes[r->count];
        break;
      }
    }
    pthread_mutex_unlock(&r->mutex);
  }
  if (!block && posix_memalign(&block, kHeader, size + kHeader)) return NULL;
  *(size_t*)block = size;
  return (char*)block + kHeader;
}

static void recycler_deallocate(void* self, void* ptr) {
  recycler_t* r = self;
  if (!ptr) return;
  void* block = (char*)ptr - kHeader;
  size_t size = *(size_t*)block;
  if (size >= kRecycleMin) {
    pthread_mutex_lock(&r->mutex);
    if (r->count < kRecycleSlots) {
      r->blocks[r->count] = block;
      r->sizes[r->count++] = size;
      block = NULL;
    }
    pthread_mutex_unlock(&r->mutex);
  }
  free(block);
}

static void recycler_drain(recycler_t* r) {
  for (int i = 0; i < r->count; ++i) free(r->blocks[i]);
  r->count = 0;
}

//===----------------------------------------------------------------------===//
// Ops through the runtime
//===----------------------------------------------------------------------===//

typedef struct op_bench_t {
  loom_prepared_op_t* op;
  loom_tensor_handle_t* args[4];
  int num_args;
  bool chain;  // args[0] is replaced by the result every op
  loom_op_attrs_t* attrs;
} op_bench_t;

static double measure_op(void* arg, int64_t iterations) {
  op_bench_t* bench = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    loom_tensor_handle_t* args[4];
    for (int k = 0; k < bench->num_args; ++k) {
      args[k] = bench->args[k];
      if (!bench->chain || k > 0) loom_tensor_handle_retain(args[k]);
    }
    loom_tensor_handle_t* result = NULL;
    loom_location_t location = {(uint64_t)i};
    CHECK_OK(loom_runtime_execute_prepared(bench->op, location, args,
                                           bench->num_args, bench->attrs,
                                           &result, 1, NULL));
    // Inline ops are done; resolving surfaces a kernel failure.
    loom_tensor_t* tensor = NULL;
    CHECK_OK(loom_tensor_handle_resolve(result, &tensor));
    loom_tensor_release(tensor);
    if (bench->chain) {
      bench->args[0] = result;
    } else {
      loom_tensor_handle_release(result);
    }
  }
  return bench_now_ns() - start;
}

static loom_tensor_handle_t* make_input(loom_runtime_t* runtime,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape, double value,
                                        bool flat) {
  loom_tensor_t* tensor = NULL;
  CHECK_OK(
      loom_tensor_create_dense(loom_allocator_system(), dtype, shape, &tensor));
  int64_t n = loom_tensor_num_elements(tensor);
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < n; ++i) {
    // A gentle ramp, so that comparisons and selects see both outcomes.
    double v = value + (double)(i % 7) * 0.125 * (value != 0 && !flat);
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)v;
        break;
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = v;
        break;
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)value;
        break;
      case LOOM_DTYPE_BOOL:
        ((bool*)data)[i] = (i % 3) != 0;
        break;
      case LOOM_DTYPE_HALF:
        ((uint16_t*)data)[i] = value == 0 ? 0 : 0x3c00;  // 1.0
        break;
      case LOOM_DTYPE_BFLOAT16:
        ((uint16_t*)data)[i] = value == 0 ? 0 : 0x3f80;  // 1.0
        break;
      default:
        memset(data, 0, loom_tensor_byte_size(tensor));
        break;
    }
  }
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_tensor_handle_create(
      loom_runtime_get_op_handler(runtime, "cpu"), tensor, &handle));
  loom_tensor_release(tensor);  // the handle holds the only reference
  return handle;
}

typedef struct input_spec_t {
  loom_dtype_t dtype;
  int rank;
  int64_t dims[4];
  double value;
  bool flat;  // every element `value`, without the ramp
} input_spec_t;

// Runs `op_name` on inputs built from specs; returns the median ns per op.
static double run_op(loom_runtime_t* runtime, const char* op_name,
                     const input_spec_t* specs, int num_args, bool chain,
                     loom_op_attrs_t* attrs, int64_t iterations) {
  op_bench_t bench = {.num_args = num_args, .chain = chain, .attrs = attrs};
  CHECK_OK(loom_runtime_prepare_op(runtime, op_name,
                                   loom_runtime_get_op_handler(runtime, "cpu"),
                                   &bench.op));
  for (int k = 0; k < num_args; ++k) {
    loom_shape_t shape;
    CHECK_OK(loom_shape_initialize(&shape, specs[k].dims, specs[k].rank));
    bench.args[k] = make_input(runtime, specs[k].dtype, &shape, specs[k].value,
                               specs[k].flat);
  }
  double ns = bench_median_ns(measure_op, &bench, iterations, g_repetitions);
  for (int k = 0; k < num_args; ++k) loom_tensor_handle_release(bench.args[k]);
  loom_prepared_op_release(bench.op);
  return ns;
}

static loom_runtime_t* create_runtime(loom_host_context_t* host) {
  loom_runtime_options_t options;
  loom_runtime_options_initialize(&options, host);
  options.synchronous = true;  // inline: the kernel alone is measured
  loom_runtime_t* runtime = NULL;
  CHECK_OK(loom_runtime_create(&options, &runtime));
  return runtime;
}

#define V1(dtype_, n, value_) \
  { .dtype = dtype_, .rank = 1, .dims = {n}, .value = value_ }
// The same without the ramp.
#define V1_FLAT(dtype_, n, value_) \
  { .dtype = dtype_, .rank = 1, .dims = {n}, .value = value_, .flat = true }
#define V2(dtype_, rows, columns, value_) \
  { .dtype = dtype_, .rank = 2, .dims = {rows, columns}, .value = value_ }

static void report_rate(const char* name, const char* suffix, double ns,
                        double amount, const char* unit, double scale) {
  char full[128];
  snprintf(full, sizeof(full), "%s_%s", name, suffix);
  bench_report(full, amount / ns * scale, unit);
}

static void run_threads(int threads) {
  loom_host_context_options_t host_options;
  loom_host_context_options_initialize(&host_options);
  host_options.num_threads = threads - 1;  // the caller is the other one
  loom_host_context_t* host = NULL;
  CHECK_OK(loom_host_context_create(&host_options, &host));
  loom_runtime_t* runtime = create_runtime(host);
  loom_thread_pool_t* pool = loom_host_context_thread_pool(host);
  char suffix[8];
  snprintf(suffix, sizeof(suffix), "%dt", threads);
  const double stream_bytes = 3.0 * 4.0 * kStreamElements;

  if (wanted("stream_triad_f32_16m")) {
    triad_t t;
    t.a = malloc(sizeof(float) * kStreamElements);
    float* b = malloc(sizeof(float) * kStreamElements);
    float* c = malloc(sizeof(float) * kStreamElements);
    if (!t.a || !b || !c) exit(1);
    for (int64_t i = 0; i < kStreamElements; ++i) {
      t.a[i] = 0.0f;
      b[i] = 1.0f;
      c[i] = 2.0f;
    }
    t.b = b;
    t.c = c;
    t.pool = pool;
    double ns = bench_median_ns(measure_triad, &t, g_iterations, g_repetitions);
    report_rate("stream_triad_f32_16m", suffix, ns, stream_bytes, "GB/s", 1.0);
    free(t.a);
    free(b);
    free(c);
  }
  const input_spec_t big_f32[2] = {V1(LOOM_DTYPE_FLOAT, kStreamElements, 1.0),
                                   V1(LOOM_DTYPE_FLOAT, kStreamElements, 0.5)};
  const input_spec_t big_one[2] = {V1(LOOM_DTYPE_FLOAT, kStreamElements, 1.0),
                                   V1(LOOM_DTYPE_FLOAT, kStreamElements, 1.0)};
  if (wanted("loom_add_f32_16m")) {
    loom_kernel_statistics_t before = loom_kernel_statistics();
    double ns = run_op(runtime, "AddV2", big_f32, 2, true, NULL, g_iterations);
    loom_kernel_statistics_t after = loom_kernel_statistics();
    report_rate("loom_add_f32_16m", suffix, ns, stream_bytes, "GB/s", 1.0);
    // Every op of the chain but the first reuses its input's buffer.
    int64_t ops = (g_iterations / 10 + 1) + g_iterations * g_repetitions;
    char name[64];
    snprintf(name, sizeof(name), "loom_add_f32_16m_forwarded_per_op_%s",
             suffix);
    bench_report(name,
                 (double)(after.forwarded_buffers - before.forwarded_buffers) /
                     (double)ops,
                 "buffers/op");
  }
  if (wanted("loom_mul_f32_16m")) {
    double ns = run_op(runtime, "Mul", big_one, 2, true, NULL, g_iterations);
    report_rate("loom_mul_f32_16m", suffix, ns, stream_bytes, "GB/s", 1.0);
  }
  if (wanted("loom_add_f32_16m_alloc")) {
    double ns = run_op(runtime, "AddV2", big_f32, 2, false, NULL, g_iterations);
    report_rate("loom_add_f32_16m_alloc", suffix, ns, stream_bytes, "GB/s",
                1.0);
  }
  if (wanted("loom_add_f32_16m_reuse") || wanted("loom_mul_f32_16m_reuse")) {
    recycler_t recycler = {.count = 0};
    pthread_mutex_init(&recycler.mutex, NULL);
    loom_host_context_options_t reuse_options = host_options;
    reuse_options.allocator =
        (loom_allocator_t){.self = &recycler,
                           .allocate = recycler_allocate,
                           .deallocate = recycler_deallocate};
    loom_host_context_t* reuse_host = NULL;
    CHECK_OK(loom_host_context_create(&reuse_options, &reuse_host));
    loom_runtime_t* reuse = create_runtime(reuse_host);
    double ns = run_op(reuse, "AddV2", big_f32, 2, false, NULL, g_iterations);
    report_rate("loom_add_f32_16m_reuse", suffix, ns, stream_bytes, "GB/s",
                1.0);
    ns = run_op(reuse, "Mul", big_one, 2, false, NULL, g_iterations);
    report_rate("loom_mul_f32_16m_reuse", suffix, ns, stream_bytes, "GB/s",
                1.0);
    loom_runtime_destroy(reuse);
    loom_host_context_destroy(reuse_host);
    recycler_drain(&recycler);
    pthread_mutex_destroy(&recycler.mutex);
  }

  // Other ops on 1 M elements: Melem/s of output.
  const int64_t n = kSmallElements;
  const int64_t iters = g_iterations * 10;
  struct {
    const char* name;
    const char* op;
    input_spec_t in[4];
    int num_args;
    bool chain;
  } cases[] = {
      {.name = "loom_add_f32_1m",
       .op = "AddV2",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1.0), V1(LOOM_DTYPE_FLOAT, n, 0.5)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_add_f16_1m",
       .op = "AddV2",
       .in = {V1(LOOM_DTYPE_HALF, n, 1.0), V1(LOOM_DTYPE_HALF, n, 0.0)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_add_bf16_1m",
       .op = "AddV2",
       .in = {V1(LOOM_DTYPE_BFLOAT16, n, 1.0), V1(LOOM_DTYPE_BFLOAT16, n, 0.0)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_add_row_f32_1m",
       .op = "AddV2",
       .in = {V2(LOOM_DTYPE_FLOAT, 1024, 1024, 1.0),
              V1(LOOM_DTYPE_FLOAT, 1024, 0.5)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_div_i32_1m",
       .op = "Div",
       .in = {V1(LOOM_DTYPE_INT32, n, 1000.0), V1(LOOM_DTYPE_INT32, n, 1.0)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_floormod_i32_1m",
       .op = "FloorMod",
       .in = {V1(LOOM_DTYPE_INT32, n, 1000.0), V1(LOOM_DTYPE_INT32, n, 7.0)},
       .num_args = 2,
       .chain = false},
      {.name = "loom_floormod_f32_1m",
       .op = "FloorMod",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1000.0), V1(LOOM_DTYPE_FLOAT, n, 7.0)},
       .num_args = 2,
       .chain = false},
      // x^1 on the ramp, chained: the values stay (as the references').
      {.name = "loom_pow_f32_1m",
       .op = "Pow",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1.0), V1_FLAT(LOOM_DTYPE_FLOAT, n, 1.0)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_pow_f64_1m",
       .op = "Pow",
       .in = {V1(LOOM_DTYPE_DOUBLE, n, 1.0),
              V1_FLAT(LOOM_DTYPE_DOUBLE, n, 1.0)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_less_f32_1m",
       .op = "Less",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1.0), V1(LOOM_DTYPE_FLOAT, n, 1.25)},
       .num_args = 2,
       .chain = false},
      {.name = "loom_select_f32_1m",
       .op = "SelectV2",
       .in = {V1(LOOM_DTYPE_BOOL, n, 1.0), V1(LOOM_DTYPE_FLOAT, n, 1.0),
              V1(LOOM_DTYPE_FLOAT, n, 2.0)},
       .num_args = 3,
       .chain = false},
      {.name = "loom_clip_f32_1m",
       .op = "ClipByValue",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1.0),
              {.dtype = LOOM_DTYPE_FLOAT, .rank = 0, .value = 1.2},
              {.dtype = LOOM_DTYPE_FLOAT, .rank = 0, .value = 1.5}},
       .num_args = 3,
       .chain = true},
      {.name = "loom_addn4_f32_1m",
       .op = "AddN",
       .in = {V1(LOOM_DTYPE_FLOAT, n, 1.0), V1(LOOM_DTYPE_FLOAT, n, 1.0),
              V1(LOOM_DTYPE_FLOAT, n, 1.0), V1(LOOM_DTYPE_FLOAT, n, 1.0)},
       .num_args = 4,
       .chain = false},
      {.name = "loom_biasadd_f32_1m",
       .op = "BiasAdd",
       .in = {V2(LOOM_DTYPE_FLOAT, 4096, 256, 1.0),
              V1(LOOM_DTYPE_FLOAT, 256, 0.5)},
       .num_args = 2,
       .chain = true},
      {.name = "loom_biasaddgrad_f32_1m",
       .op = "BiasAddGrad",
       .in = {V2(LOOM_DTYPE_FLOAT, 4096, 256, 1.0)},
       .num_args = 1,
       .chain = false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    if (!wanted(cases[i].name)) continue;
    double ns = run_op(runtime, cases[i].op, cases[i].in, cases[i].num_args,
                       cases[i].chain, NULL, iters);
    report_rate(cases[i].name, suffix, ns, (double)n, "Melem/s", 1e3);
  }
  loom_runtime_destroy(runtime);
  loom_host_context_destroy(host);
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) {
      g_iterations = 2;
      g_repetitions = 3;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    }
  }
  run_threads(1);
  run_threads(2);
  return 0;
}
