// All-reduce of 1, 16 and 64 MB of float between the ranks of an mpirun
// job: CollectiveReduceV2 (sum) through Loom's eager API on the MPI
// collective backend, against MPI_Allreduce called directly on the same
// input buffer. Run it under mpirun (scripts/bench.sh does not):
//
//   mpirun -np 2 build/release/bench/bench_collective_mpi [--quick]
//
// Rank 0 prints the figures (the median over repetitions of the slowest
// rank's time) and one ratio per size, MPI_Allreduce's time over Loom's:
// above 1 means Loom is faster. Loom pays its header exchange, the eager
// dispatch and a fresh output tensor per call.

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_check.h"
#include "bench_timer.h"
#include "loom/loom.h"

typedef struct bench_case_t {
  loom_context_t* ctx;
  loom_tensor_handle_t* input;
  loom_tensor_handle_t* keys[3];  // group_size, group_key, instance_key
  void* input_data;
  void* output_data;
  int64_t count;
} bench_case_t;

static loom_tensor_handle_t* int32_scalar(loom_context_t* ctx, int32_t value) {
  loom_shape_t shape;
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_shape_initialize(&shape, NULL, 0));
  CHECK_OK(loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_INT32,
                                    &shape, &tensor));
  *(int32_t*)loom_tensor_data(tensor) = value;
  loom_tensor_handle_t* handle = NULL;
  CHECK_OK(loom_context_new_handle(ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static void loom_all_reduce(bench_case_t* c) {
  loom_eager_op_t* op = NULL;
  CHECK_OK(loom_eager_op_create(c->ctx, "CollectiveReduceV2", &op));
  CHECK_OK(loom_eager_op_add_input(op, c->input));
  for (int i = 0; i < 3; ++i) CHECK_OK(loom_eager_op_add_input(op, c->keys[i]));
  loom_op_attrs_t* attrs = loom_eager_op_attrs(op);
  CHECK_OK(loom_op_attrs_set_string(attrs, "merge_op", "Add", 3));
  CHECK_OK(loom_op_attrs_set_string(attrs, "final_op", "Id", 2));
  loom_tensor_handle_t* output = NULL;
  int32_t count = 0;
  CHECK_OK(loom_eager_op_execute(op, &output, 1, &count));
  loom_tensor_t* tensor = NULL;
  CHECK_OK(loom_context_resolve(c->ctx, output, &tensor));
  loom_tensor_release(tensor);
  loom_tensor_handle_release(output);
  loom_eager_op_destroy(op);
}

// The slowest rank's time for `iterations` calls.
static double measure(bench_case_t* c, int64_t iterations, int loom) {
  MPI_Barrier(MPI_COMM_WORLD);
  double start = bench_now_ns();
  for (int64_t i = 0; i < iterations; ++i) {
    if (loom) {
      loom_all_reduce(c);
    } else {
      MPI_Allreduce(c->input_data, c->output_data, (int)c->count, MPI_FLOAT,
                    MPI_SUM, MPI_COMM_WORLD);
    }
  }
  double elapsed = bench_now_ns() - start, slowest = 0;
  MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest / (double)iterations;
}

static double median_of(bench_case_t* c, int repetitions, int64_t iterations,
                        int loom) {
  double samples[32];
  measure(c, 1, loom);  // warm-up
  for (int r = 0; r < repetitions; ++r) {
    samples[r] = measure(c, iterations, loom);
  }
  qsort(samples, (size_t)repetitions, sizeof(double), bench_compare_doubles);
  return samples[repetitions / 2];
}

int main(int argc, char** argv) {
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int32_t rank = 0, size = 0;
  CHECK_OK(loom_collective_use_mpi(0, &rank, &size));
  loom_context_t* ctx = NULL;
  CHECK_OK(loom_context_create(NULL, &ctx));
  static const int kMegabytes[] = {1, 16, 64};
  for (int s = 0; s < 3; ++s) {
    int64_t count = (int64_t)kMegabytes[s] * (1 << 20) / (int64_t)sizeof(float);
    if (quick) count /= 64;
    loom_shape_t shape;
    loom_tensor_t* tensor = NULL;
    CHECK_OK(loom_shape_initialize(&shape, &count, 1));
    CHECK_OK(loom_tensor_create_dense(loom_allocator_default(),
                                      LOOM_DTYPE_FLOAT, &shape, &tensor));
    float* data = loom_tensor_data(tensor);
    for (int64_t i = 0; i < count; ++i) data[i] = (float)(i % 1000) * 0.5f;
    bench_case_t c = {.ctx = ctx, .input_data = data, .count = count};
    c.output_data = malloc((size_t)count * sizeof(float));
    CHECK_OK(loom_context_new_handle(ctx, tensor, &c.input));
    c.keys[0] = int32_scalar(ctx, size);
    c.keys[1] = int32_scalar(ctx, 1);
    c.keys[2] = int32_scalar(ctx, s);
    int repetitions = quick ? 3 : 9;
    int64_t iterations = quick ? 1 : (s == 0 ? 20 : 4);
    double loom_ns = median_of(&c, repetitions, iterations, 1);
    double mpi_ns = median_of(&c, repetitions, iterations, 0);
    if (rank == 0) {
      char loom_name[64], mpi_name[64];
      snprintf(loom_name, sizeof(loom_name),
               "collective_all_reduce_f32_%dmb_np%d", kMegabytes[s], (int)size);
      snprintf(mpi_name, sizeof(mpi_name), "mpi_allreduce_f32_%dmb_np%d",
               kMegabytes[s], (int)size);
      bench_report(loom_name, loom_ns / 1e3, "us");
      bench_report(mpi_name, mpi_ns / 1e3, "us");
      printf("ratio_%s_vs_%s %.2f x\n", loom_name, mpi_name, mpi_ns / loom_ns);
      fflush(stdout);
    }
    for (int i = 0; i < 3; ++i) loom_tensor_handle_release(c.keys[i]);
    loom_tensor_handle_release(c.input);
    loom_tensor_release(tensor);
    free(c.output_data);
  }
  loom_context_destroy(ctx);
  CHECK_OK(loom_collective_mpi_finalize());
  MPI_Finalize();
  return 0;
}
