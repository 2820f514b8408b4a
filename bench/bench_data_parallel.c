// Data-parallel training of the demo's MLP 784-256-10 (examples/
// fashion_mnist: forward pass under a gradient tape, gradients averaged
// across the replicas by CollectiveReduceV2 in buckets while the backward
// pass runs, Adam's update), a batch of 128 per replica, one thread each.
// Prints one "name median unit" line per figure, in examples per second
// (the global batch over the step's time):
//
//   dp_mlp784_b128_1r_t1        one replica, no collective: the baseline;
//   dp_mlp784_b128x2_threads_t1 two replicas in this process, the
//                               components of a parallel handler over
//                               CPU:0 and CPU:1 (a core each);
//   dp_mlp784_b128x2_mpi_t1     two replicas as two MPI ranks: this program
//                               run again under `mpirun -np 2` (when the
//                               build has the MPI backend and mpirun is on
//                               the PATH).
//
// bench/data_parallel_reference.py times PyTorch's DistributedDataParallel
// (gloo, two processes) and one process on the same model and batch.
//
//   bench_data_parallel [--quick] [--only one|threads|mpi] [--rank]
//
// --rank is the MPI run's: each rank trains its replica, rank 0 prints.

#include <string.h>
#include <unistd.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/collective.h"
#include "loom/loom.h"
#include "loom/parallel.h"
#include "nn_data_parallel.h"
#include "nn_gradient_buckets.h"
#include "nn_model.h"
#include "nn_ops.h"
#include "nn_optimizer.h"
#include "nn_train.h"

enum { kBatch = 128, kInputs = 784, kHidden = 256, kClasses = 10 };

static uint64_t g_seed = 0x9e3779b97f4a7c15ull;

static float next_uniform(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((g_seed >> 40) & 0xffffff) / 16777216.0f;
}

// One replica's batch: x [128, 784] and its labels.
static void make_batch(loom_context_t* context, loom_tensor_handle_t** x,
                       loom_tensor_handle_t** labels) {
  static float values[kBatch * kInputs];
  static int32_t classes[kBatch];
  for (int64_t i = 0; i < kBatch * kInputs; ++i) values[i] = next_uniform();
  for (int64_t i = 0; i < kBatch; ++i) classes[i] = (int32_t)(i % kClasses);
  int64_t x_dims[2] = {kBatch, kInputs}, label_dims[1] = {kBatch};
  CHECK_OK(nn_constant_f32(context, x_dims, 2, values, x));
  CHECK_OK(nn_constant_i32(context, label_dims, 1, classes, labels));
}

typedef struct replicas_t {
  loom_context_t* context;
  nn_model_t* model;
  nn_optimizer_t* optimizer;
  nn_replica_group_t group;
  nn_gradient_buckets_t* buckets;  // NULL for one replica
  loom_tensor_handle_t *x, *labels;
} replicas_t;

static double measure_steps(void* arg, int64_t iterations) {
  replicas_t* r = arg;
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    if (r->group.size == 1) {
      CHECK_OK(nn_train_step(r->model, r->optimizer, r->x, r->labels, NULL));
    } else {
      CHECK_OK(nn_train_step_replicated(r->model, r->optimizer, &r->group,
                                        r->buckets, r->x, r->labels, NULL));
    }
  }
  CHECK_OK(loom_context_wait(r->context));
  return bench_now_ns() - start;
}

// The model, its optimizer and, with several replicas, the buckets of
// their gradients (`parallel`: the handler of the components, or NULL for
// MPI ranks).
static void create_replicas(replicas_t* r, loom_op_handler_t* parallel) {
  CHECK_OK(nn_model_create_mlp(r->context, kInputs, kHidden, kClasses, 1,
                               &r->model));
  nn_optimizer_options_t options;
  nn_optimizer_options_initialize(&options, NN_OPTIMIZER_ADAM);
  CHECK_OK(nn_optimizer_create(r->model, &options, &r->optimizer));
  if (r->group.size > 1) {
    CHECK_OK(nn_gradient_buckets_create(r->context, &r->group, parallel,
                                        NN_GRADIENT_BUCKETS_DEFAULT_BYTES,
                                        &r->buckets));
  }
}

static void destroy_replicas(replicas_t* r) {
  if (r->buckets) nn_gradient_buckets_destroy(r->buckets);
  loom_tensor_handle_release(r->x);
  loom_tensor_handle_release(r->labels);
  nn_optimizer_destroy(r->optimizer);
  nn_model_destroy(r->model);
}

static void report_rate(const char* name, const replicas_t* r, double ns) {
  bench_report(name, (double)(kBatch * r->group.size) / (ns * 1e-9),
               "examples/s");
}

// One replica on one thread.
static void bench_one(int64_t iterations, int repetitions) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 0;
  replicas_t r = {.group = {.size = 1, .key = 1}};
  CHECK_OK(loom_context_create(&options, &r.context));
  create_replicas(&r, NULL);
  make_batch(r.context, &r.x, &r.labels);
  report_rate("dp_mlp784_b128_1r_t1", &r,
              bench_median_ns(measure_steps, &r, iterations, repetitions));
  destroy_replicas(&r);
  loom_context_destroy(r.context);
}

// Two replicas on the components of a parallel handler, a core each (their
// component threads; no pool workers).
static void bench_threads(int64_t iterations, int repetitions) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 0;
  replicas_t r = {.group = {.size = 2, .key = 1, .timeout_seconds = 300}};
  CHECK_OK(loom_context_create(&options, &r.context));
  CHECK_OK(loom_context_set_cpu_device_count(r.context, 2));
  const char* devices[2] = {"CPU:0", "CPU:1"};
  loom_op_handler_t* parallel = NULL;
  CHECK_OK(loom_parallel_handler_create(r.context, devices, 2, &parallel));
  CHECK_OK(loom_context_enter_scope(r.context, parallel));
  create_replicas(&r, parallel);
  loom_tensor_handle_t *xs[2], *labels[2];
  for (int k = 0; k < 2; ++k) make_batch(r.context, &xs[k], &labels[k]);
  CHECK_OK(loom_parallel_pack(parallel, xs, 2, &r.x));
  CHECK_OK(loom_parallel_pack(parallel, labels, 2, &r.labels));
  for (int k = 0; k < 2; ++k) {
    loom_tensor_handle_release(xs[k]);
    loom_tensor_handle_release(labels[k]);
  }
  report_rate("dp_mlp784_b128x2_threads_t1", &r,
              bench_median_ns(measure_steps, &r, iterations, repetitions));
  destroy_replicas(&r);
  CHECK_OK(loom_context_exit_scope(r.context));
  loom_op_handler_release(parallel);
  loom_context_destroy(r.context);
}

// This rank's replica under mpirun; rank 0 reports.
static int run_rank(int64_t iterations, int repetitions) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 0;
  replicas_t r = {.group = {.key = 1}};
  CHECK_OK(loom_context_create(&options, &r.context));
  int32_t rank = 0, size = 1;
  CHECK_OK(loom_collective_use_mpi(0, &rank, &size));
  r.group.size = size;
  create_replicas(&r, NULL);
  make_batch(r.context, &r.x, &r.labels);
  double ns = bench_median_ns(measure_steps, &r, iterations, repetitions);
  if (rank == 0) report_rate("dp_mlp784_b128x2_mpi_t1", &r, ns);
  destroy_replicas(&r);
  loom_context_destroy(r.context);
  CHECK_OK(loom_collective_mpi_finalize());
  return 0;
}

// Runs this program under `mpirun -np 2 ... --rank` and passes its figure
// on (false when that fails); nothing when the build has no MPI backend or
// mpirun is missing.
static bool bench_mpi(const char* self, bool quick) {
  if (!loom_collective_mpi_available() ||
      system("command -v mpirun > /dev/null 2>&1") != 0) {
    return true;
  }
  char command[4096];
  snprintf(command, sizeof(command),
           "mpirun %s--oversubscribe -np 2 '%s' --rank%s 2>&1",
           geteuid() == 0 ? "--allow-run-as-root " : "", self,
           quick ? " --quick" : "");
  FILE* pipe = popen(command, "r");
  if (!pipe) return false;
  char line[512];
  bool reported = false;
  while (fgets(line, sizeof(line), pipe)) {
    if (strncmp(line, "dp_", 3) == 0) {
      fputs(line, stdout);
      reported = true;
    } else {
      fputs(line, stderr);
    }
  }
  fflush(stdout);
  if (pclose(pipe) != 0 || !reported) {
    fprintf(stderr, "bench_data_parallel: the run under mpirun failed\n");
    return false;
  }
  return true;
}

int main(int argc, char** argv) {
  bool quick = false, rank = false;
  const char* only = "";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quick") == 0) quick = true;
    if (strcmp(argv[i], "--rank") == 0) rank = true;
    if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  }
  int64_t iterations = quick ? 2 : 20;
  int repetitions = quick ? 1 : 7;
  if (rank) return run_rank(iterations, repetitions);
  if (!*only || strcmp(only, "one") == 0) bench_one(iterations, repetitions);
  if (!*only || strcmp(only, "threads") == 0) {
    bench_threads(iterations, repetitions);
  }
  if (!*only || strcmp(only, "mpi") == 0) {
    if (!bench_mpi(argv[0], quick)) return 1;
  }
  return 0;
}
