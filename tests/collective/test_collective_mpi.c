// CollectiveReduceV2 across processes: run under mpirun (-np 2 or 3), each
// rank one participant of the MPI collective backend (loom/collective.h);
// or, with --threads N, the same cases between N threads of one process
// on the in-process backend. Both compare every result bit for bit with
// the same NumPy reference values (tools: the generator's expressions are
// beside the table), so the two backends give identical results. Under
// MPI it also checks the faults: ranks that disagree on the shape, the
// dtype or the group size all fail with an error naming the collective
// and the ranks; a rank that stops calling collectives leaves the others
// with DEADLINE_EXCEEDED, not a hang. A plain C program: it returns
// nonzero when a check fails (cmocka's asserts would end one rank and
// leave the others waiting).

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "test_support.h"

static int g_failures;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);       \
      fprintf(stderr, __VA_ARGS__);                         \
      fprintf(stderr, "\n");                                \
      __atomic_add_fetch(&g_failures, 1, __ATOMIC_RELAXED); \
    }                                                       \
  } while (0)

// Rank r's input (integer dtypes: each value times 4, truncated).
static const double kInputs[3][5] = {{1.5, -2.25, 0.125, 1000.0, -7.75},
                                     {3.0, 4.5, -0.375, -999.5, 6.0},
                                     {-0.5, 10.0, 2.0, 0.25, -1.0}};

static const loom_dtype_t kDtypes[4] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE,
                                        LOOM_DTYPE_INT32, LOOM_DTYPE_INT64};
static const char* const kCases[4][2] = {
    {"Add", "Id"}, {"Add", "Div"}, {"Max", "Id"}, {"Min", "Id"}};

// numpy, with a = inputs[:size] as the dtype (ints: int(v * 4)):
// a.sum(0, dtype=dt); sum / dt(size) (ints: sign(s) * (abs(s) // size),
// C's truncation); a.max(0); a.min(0). [size - 2][dtype * 4 + case].
static const double kExpected[2][16][5] = {
    {
        {4.5, 2.25, -0.25, 0.5, -1.75},       // f32 Add Id
        {2.25, 1.125, -0.125, 0.25, -0.875},  // f32 Add Div
        {3.0, 4.5, 0.125, 1000.0, 6.0},       // f32 Max Id
        {1.5, -2.25, -0.375, -999.5, -7.75},  // f32 Min Id
        {4.5, 2.25, -0.25, 0.5, -1.75},       // f64 Add Id
        {2.25, 1.125, -0.125, 0.25, -0.875},  // f64 Add Div
        {3.0, 4.5, 0.125, 1000.0, 6.0},       // f64 Max Id
        {1.5, -2.25, -0.375, -999.5, -7.75},  // f64 Min Id
        {18, 9, -1, 2, -7},                   // i32 Add Id
        {9, 4, 0, 1, -3},                     // i32 Add Div
        {12, 18, 0, 4000, 24},                // i32 Max Id
        {6, -9, -1, -3998, -31},              // i32 Min Id
        {18, 9, -1, 2, -7},                   // i64 Add Id
        {9, 4, 0, 1, -3},                     // i64 Add Div
        {12, 18, 0, 4000, 24},                // i64 Max Id
        {6, -9, -1, -3998, -31},              // i64 Min Id
    },
    {
        {4.0, 12.25, 1.75, 0.75, -2.75},  // f32 Add Id
        {1.3333333730697632, 4.083333492279053, 0.5833333134651184, 0.25,
         -0.9166666865348816},                 // f32 Add Div
        {3.0, 10.0, 2.0, 1000.0, 6.0},         // f32 Max Id
        {-0.5, -2.25, -0.375, -999.5, -7.75},  // f32 Min Id
        {4.0, 12.25, 1.75, 0.75, -2.75},       // f64 Add Id
        {1.3333333333333333, 4.083333333333333, 0.5833333333333334, 0.25,
         -0.9166666666666666},                 // f64 Add Div
        {3.0, 10.0, 2.0, 1000.0, 6.0},         // f64 Max Id
        {-0.5, -2.25, -0.375, -999.5, -7.75},  // f64 Min Id
        {16, 49, 7, 3, -11},                   // i32 Add Id
        {5, 16, 2, 1, -3},                     // i32 Add Div
        {12, 40, 8, 4000, 24},                 // i32 Max Id
        {-2, -9, -1, -3998, -31},              // i32 Min Id
        {16, 49, 7, 3, -11},                   // i64 Add Id
        {5, 16, 2, 1, -3},                     // i64 Add Div
        {12, 40, 8, 4000, 24},                 // i64 Max Id
        {-2, -9, -1, -3998, -31},              // i64 Min Id
    },
};

static loom_tensor_handle_t* make_input(loom_context_t* ctx, loom_dtype_t dtype,
                                        int64_t size, int rank) {
  loom_shape_t shape;
  loom_tensor_t* tensor = NULL;
  if (loom_shape_initialize(&shape, &size, 1) ||
      loom_tensor_create_dense(loom_allocator_default(), dtype, &shape,
                               &tensor)) {
    abort();
  }
  void* data = loom_tensor_data(tensor);
  for (int64_t i = 0; i < size; ++i) {
    double v = kInputs[rank][i % 5];
    switch (dtype) {
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)v;
        break;
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = v;
        break;
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)(v * 4);
        break;
      default:
        ((int64_t*)data)[i] = (int64_t)(v * 4);
        break;
    }
  }
  loom_tensor_handle_t* handle = NULL;
  if (loom_context_new_handle(ctx, tensor, &handle)) abort();
  loom_tensor_release(tensor);
  return handle;
}

// Whether `handle` holds `expected`, bit for bit, in its dtype.
static bool holds(loom_context_t* ctx, loom_tensor_handle_t* handle,
                  loom_dtype_t dtype, const double* expected) {
  loom_tensor_t* tensor = NULL;
  if (loom_context_resolve(ctx, handle, &tensor)) return false;
  bool same = loom_tensor_num_elements(tensor) == 5 &&
              loom_tensor_dtype(tensor) == dtype;
  const void* data = loom_tensor_data(tensor);
  for (int i = 0; i < 5 && same; ++i) {
    switch (dtype) {
      case LOOM_DTYPE_FLOAT: {
        float want = (float)expected[i];
        same = memcmp(&((const float*)data)[i], &want, sizeof(want)) == 0;
        break;
      }
      case LOOM_DTYPE_DOUBLE:
        same = memcmp(&((const double*)data)[i], &expected[i],
                      sizeof(double)) == 0;
        break;
      case LOOM_DTYPE_INT32:
        same = ((const int32_t*)data)[i] == (int32_t)expected[i];
        break;
      default:
        same = ((const int64_t*)data)[i] == (int64_t)expected[i];
        break;
    }
  }
  loom_tensor_release(tensor);
  return same;
}

static char* status_text(loom_status_t status) {
  static _Thread_local char text[2048];
  loom_status_format(status, text, sizeof(text));
  return text;
}

// Every (dtype, merge, final) case as participant `rank` of `size`.
static void reduce_cases(loom_context_t* ctx, int rank, int size) {
  for (int d = 0; d < 4; ++d) {
    for (int c = 0; c < 4; ++c) {
      loom_tensor_handle_t* x = make_input(ctx, kDtypes[d], 5, rank);
      loom_tensor_handle_t* y = NULL;
      loom_status_t status = loom_test_collective_reduce(
          ctx, x, size, 1, d * 4 + c, kCases[c][0], kCases[c][1], 30, &y);
      CHECK(!status, "rank %d: %s %s %s: %s", rank, loom_dtype_name(kDtypes[d]),
            kCases[c][0], kCases[c][1], status_text(status));
      if (!status) {
        CHECK(holds(ctx, y, kDtypes[d], kExpected[size - 2][d * 4 + c]),
              "rank %d: %s %s %s differs from NumPy's", rank,
              loom_dtype_name(kDtypes[d]), kCases[c][0], kCases[c][1]);
      }
      loom_status_free(status);
      loom_tensor_handle_release(y);
      loom_tensor_handle_release(x);
    }
  }
  // A large input, every rank's the same: the sum is size times it.
  loom_tensor_handle_t* x = make_input(ctx, LOOM_DTYPE_FLOAT, 1 << 20, 0);
  loom_tensor_handle_t* y = NULL;
  loom_status_t status =
      loom_test_collective_reduce(ctx, x, size, 1, 99, "Add", "Id", 30, &y);
  CHECK(!status, "rank %d: large sum: %s", rank, status_text(status));
  if (!status) {
    loom_tensor_t* tensor = NULL;
    CHECK(!loom_context_resolve(ctx, y, &tensor), "resolve");
    const float* got = tensor ? loom_tensor_data(tensor) : NULL;
    for (int64_t i = 0; got && i < (1 << 20); ++i) {
      if (got[i] != (float)kInputs[0][i % 5] * (float)size) {
        CHECK(false, "rank %d: large sum element %lld: %g", rank, (long long)i,
              got[i]);
        break;
      }
    }
    loom_tensor_release(tensor);
  }
  loom_status_free(status);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

// CollectiveGatherV2 of `input` (timeout 30 s) into *out.
static loom_status_t gather(loom_context_t* ctx, loom_tensor_handle_t* input,
                            int32_t group_size, int32_t instance_key,
                            loom_tensor_handle_t** out) {
  loom_tensor_handle_t* inputs[] = {input,
                                    loom_test_int32_scalar(ctx, group_size),
                                    loom_test_int32_scalar(ctx, 1),
                                    loom_test_int32_scalar(ctx, instance_key)};
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(ctx, "CollectiveGatherV2", &op);
  for (int i = 0; i < 4 && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!status) {
    status =
        loom_op_attrs_set_f32(loom_eager_op_attrs(op), "timeout_seconds", 30);
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 1; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return status;
}

// Every rank's input, concatenated in rank order (numpy: np.concatenate(
// inputs[:size]), as float and as int64 times 4).
static void gather_cases(loom_context_t* ctx, int rank, int size) {
  const loom_dtype_t dtypes[] = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_INT64};
  for (int d = 0; d < 2; ++d) {
    loom_tensor_handle_t* x = make_input(ctx, dtypes[d], 5, rank);
    loom_tensor_handle_t* y = NULL;
    loom_status_t status = gather(ctx, x, size, 200 + d, &y);
    CHECK(!status, "rank %d: gather %s: %s", rank, loom_dtype_name(dtypes[d]),
          status_text(status));
    loom_tensor_t* tensor = NULL;
    if (!status && !loom_context_resolve(ctx, y, &tensor)) {
      const loom_shape_t* shape = loom_tensor_shape(tensor);
      CHECK(shape->rank == 1 && shape->dims[0] == 5 * size,
            "rank %d: gather's shape", rank);
      for (int r = 0; r < size && shape->dims[0] == 5 * size; ++r) {
        for (int i = 0; i < 5; ++i) {
          double want = dtypes[d] == LOOM_DTYPE_FLOAT
                            ? kInputs[r][i]
                            : (double)(int64_t)(kInputs[r][i] * 4);
          double got = dtypes[d] == LOOM_DTYPE_FLOAT
                           ? ((const float*)loom_tensor_data(tensor))[r * 5 + i]
                           : (double)((const int64_t*)loom_tensor_data(
                                 tensor))[r * 5 + i];
          CHECK(got == want,
                "rank %d: gather element %d of rank %d: %g, not %g", rank, i, r,
                got, want);
        }
      }
    }
    loom_tensor_release(tensor);
    loom_status_free(status);
    loom_tensor_handle_release(y);
    loom_tensor_handle_release(x);
  }
  // Ranks gathering different shapes all fail, naming them.
  loom_tensor_handle_t* x =
      make_input(ctx, LOOM_DTYPE_FLOAT, rank == size - 1 ? 4 : 5, rank);
  loom_tensor_handle_t* y = NULL;
  loom_status_t status = gather(ctx, x, size, 202, &y);
  CHECK(status && loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
            strstr(status_text(status),
                   "CollectiveGatherV2 (group_key 1, instance_key 202) on "
                   "MPI: the ranks' inputs differ (all must have the same "
                   "dtype and shape): rank 0: float [5]"),
        "rank %d: gather of mismatched shapes: %s", rank,
        status ? status_text(status) : "OK");
  loom_status_free(status);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

// `op_name` (CollectiveReduceScatterV2 with Add and Id, or
// CollectiveAllToAllV2) of `input`, group_key 1, timeout 30 s, into *out.
static loom_status_t exchange(loom_context_t* ctx, const char* op_name,
                              loom_tensor_handle_t* input, int32_t group_size,
                              int32_t instance_key,
                              loom_tensor_handle_t** out) {
  loom_tensor_handle_t* inputs[] = {input,
                                    loom_test_int32_scalar(ctx, group_size),
                                    loom_test_int32_scalar(ctx, 1),
                                    loom_test_int32_scalar(ctx, instance_key)};
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(ctx, op_name, &op);
  for (int i = 0; i < 4 && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  loom_op_attrs_t* attrs = status ? NULL : loom_eager_op_attrs(op);
  if (!status) status = loom_op_attrs_set_f32(attrs, "timeout_seconds", 30);
  if (!status && strcmp(op_name, "CollectiveReduceScatterV2") == 0) {
    status = loom_op_attrs_set_string(attrs, "merge_op", "Add", 3);
    if (!status) status = loom_op_attrs_set_string(attrs, "final_op", "Id", 2);
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 1; i < 4; ++i) loom_tensor_handle_release(inputs[i]);
  return status;
}

// Reduce-scatter and all-to-all of 6 int64 per rank (x_k[i] =
// int(kInputs[k][i % 5] * 4)), in parts of 6 / size:
//   numpy: s = sum(x); reduce-scatter: s.reshape(size, -1)[rank]
//   all-to-all: concatenate([x_j.reshape(size, -1)[rank] for j in ranks])
static void exchange_cases(loom_context_t* ctx, int rank, int size) {
  int64_t part = 6 / size;
  loom_tensor_handle_t* x = make_input(ctx, LOOM_DTYPE_INT64, 6, rank);
  static const char* const kOps[] = {"CollectiveReduceScatterV2",
                                     "CollectiveAllToAllV2"};
  for (int o = 0; o < 2; ++o) {
    loom_tensor_handle_t* y = NULL;
    loom_status_t status = exchange(ctx, kOps[o], x, size, 210 + o, &y);
    CHECK(!status, "rank %d: %s: %s", rank, kOps[o], status_text(status));
    loom_tensor_t* tensor = NULL;
    if (!status && !loom_context_resolve(ctx, y, &tensor)) {
      int64_t n = o == 0 ? part : 6;
      CHECK(loom_tensor_num_elements(tensor) == n, "rank %d: %s's size", rank,
            kOps[o]);
      const int64_t* got = loom_tensor_data(tensor);
      for (int64_t i = 0; i < n && loom_tensor_num_elements(tensor) == n; ++i) {
        int64_t want = 0;
        if (o == 0) {
          for (int k = 0; k < size; ++k) {
            want += (int64_t)(kInputs[k][(rank * part + i) % 5] * 4);
          }
        } else {
          int64_t j = i / part, t = i % part;
          want = (int64_t)(kInputs[j][(rank * part + t) % 5] * 4);
        }
        CHECK(got[i] == want, "rank %d: %s element %lld: %lld, not %lld", rank,
              kOps[o], (long long)i, (long long)got[i], (long long)want);
      }
    }
    loom_tensor_release(tensor);
    loom_status_free(status);
    loom_tensor_handle_release(y);
  }
  loom_tensor_handle_release(x);
}

// CollectiveBcastSendV2 of `input`, or (input NULL) CollectiveBcastRecvV2
// of a double tensor of shape [n], timeout 30 s, into *out.
static loom_status_t broadcast(loom_context_t* ctx, loom_tensor_handle_t* input,
                               int32_t n, int32_t group_size,
                               int32_t instance_key,
                               loom_tensor_handle_t** out) {
  loom_tensor_handle_t* shape = NULL;
  if (!input) {
    int64_t one = 1;
    loom_shape_t vector;
    loom_tensor_t* tensor = NULL;
    if (loom_shape_initialize(&vector, &one, 1) ||
        loom_tensor_create_dense(loom_allocator_default(), LOOM_DTYPE_INT32,
                                 &vector, &tensor)) {
      abort();
    }
    *(int32_t*)loom_tensor_data(tensor) = n;
    if (loom_context_new_handle(ctx, tensor, &shape)) abort();
    loom_tensor_release(tensor);
  }
  loom_tensor_handle_t* keys[] = {loom_test_int32_scalar(ctx, group_size),
                                  loom_test_int32_scalar(ctx, 1),
                                  loom_test_int32_scalar(ctx, instance_key)};
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(
      ctx, input ? "CollectiveBcastSendV2" : "CollectiveBcastRecvV2", &op);
  if (!status && input) status = loom_eager_op_add_input(op, input);
  for (int i = 0; i < 3 && !status; ++i) {
    status = loom_eager_op_add_input(op, keys[i]);
  }
  if (!status && shape) status = loom_eager_op_add_input(op, shape);
  loom_op_attrs_t* attrs = status ? NULL : loom_eager_op_attrs(op);
  if (!status) status = loom_op_attrs_set_f32(attrs, "timeout_seconds", 30);
  if (!status && !input) {
    status = loom_op_attrs_set_dtype(attrs, "T", LOOM_DTYPE_DOUBLE);
  }
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  for (int i = 0; i < 3; ++i) loom_tensor_handle_release(keys[i]);
  loom_tensor_handle_release(shape);
  return status;
}

// Rank 1 sends its input; every rank ends with it (numpy: inputs[1]).
// Then faults: a receiver of the wrong shape (MPI only: threads check
// shapes as a reduce does), two senders.
static void broadcast_cases(loom_context_t* ctx, int rank, int size, bool mpi) {
  loom_tensor_handle_t* x = make_input(ctx, LOOM_DTYPE_DOUBLE, 5, rank);
  loom_tensor_handle_t* y = NULL;
  loom_status_t status = broadcast(ctx, rank == 1 ? x : NULL, 5, size, 300, &y);
  CHECK(!status, "rank %d: broadcast: %s", rank, status_text(status));
  const double sent[] = {3.0, 4.5, -0.375, -999.5, 6.0};
  if (!status) {
    loom_tensor_t* tensor = NULL;
    CHECK(!loom_context_resolve(ctx, y, &tensor) &&
              loom_tensor_num_elements(tensor) == 5 &&
              memcmp(loom_tensor_data(tensor), sent, sizeof(sent)) == 0,
          "rank %d: broadcast's values", rank);
    loom_tensor_release(tensor);
  }
  loom_status_free(status);
  loom_tensor_handle_release(y);
  // A receiver expecting 4 elements: every rank fails, naming it.
  y = NULL;
  status = mpi ? broadcast(ctx, rank == 0 ? x : NULL, rank == size - 1 ? 4 : 5,
                           size, 301, &y)
               : loom_ok_status();
  char last[64];
  snprintf(last, sizeof(last), "rank %d: double [4]", size - 1);
  CHECK(!mpi || (status &&
                 loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
                 strstr(status_text(status),
                        "(group_key 1, instance_key 301) on MPI: the ranks' "
                        "inputs differ") &&
                 strstr(status_text(status), last)),
        "rank %d: broadcast of mismatched shapes: %s", rank,
        status ? status_text(status) : "OK");
  loom_status_free(status);
  loom_tensor_handle_release(y);
  // Two senders.
  status = broadcast(ctx, rank <= 1 ? x : NULL, 5, size, 302, &y);
  CHECK(status && loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
            strstr(status_text(status),
                   mpi ? "a broadcast needs exactly one sender, got 2: rank "
                         "0: sends; rank 1: sends"
                       : "(group_key 1, instance_key 302): a broadcast needs "
                         "exactly one sender, got 2"),
        "rank %d: two senders: %s", rank, status ? status_text(status) : "OK");
  loom_status_free(status);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
}

// Runs binary op `name` on a and b into *out.
static loom_status_t binary(loom_context_t* ctx, const char* name,
                            loom_tensor_handle_t* a, loom_tensor_handle_t* b,
                            loom_tensor_handle_t** out) {
  loom_eager_op_t* op = NULL;
  loom_status_t status = loom_eager_op_create(ctx, name, &op);
  if (!status) status = loom_eager_op_add_input(op, a);
  if (!status) status = loom_eager_op_add_input(op, b);
  int32_t count = 0;
  *out = NULL;
  if (!status) status = loom_eager_op_execute(op, out, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

// The broadcast's gradient: rank 1 sends x = inputs[1] under a tape
// watching it; every rank r's loss is Sum(y * c_r), c_r = inputs[r],
// watched on the other ranks (their tapes track none of RecvV2's inputs).
// Rank 1's gradient is the sum of the c_r (NumPy: the reduce's Add Id
// figures, inputs[:size].sum(0)); the others' is y = x.
static void broadcast_gradient_case(loom_context_t* ctx, int rank, int size) {
  loom_tensor_handle_t* x = make_input(ctx, LOOM_DTYPE_DOUBLE, 5, 1);
  loom_tensor_handle_t* c = make_input(ctx, LOOM_DTYPE_DOUBLE, 5, rank);
  loom_tensor_handle_t* watched = rank == 1 ? x : c;
  loom_tensor_handle_t* h[5] = {NULL, NULL, NULL, NULL, NULL};
  loom_op_handler_t* tape = NULL;
  if (loom_tape_create(ctx, NULL, &tape) ||
      loom_context_enter_scope(ctx, tape) || loom_tape_watch(tape, watched)) {
    abort();
  }
  loom_status_t status =
      broadcast(ctx, rank == 1 ? x : NULL, 5, size, 303, &h[0]);
  if (!status) status = binary(ctx, "Mul", h[0], c, &h[1]);
  h[2] = loom_test_int32_scalar(ctx, 0);
  if (!status) status = binary(ctx, "Sum", h[1], h[2], &h[3]);
  if (loom_context_exit_scope(ctx)) abort();
  if (!status) {
    status = loom_tape_gradient(tape, &h[3], 1, &watched, 1, NULL,
                                LOOM_UNCONNECTED_NONE, &h[4]);
  }
  CHECK(!status, "rank %d: broadcast gradient: %s", rank, status_text(status));
  if (!status) {
    CHECK(holds(ctx, h[4], LOOM_DTYPE_DOUBLE,
                rank == 1 ? kExpected[size - 2][4] : kInputs[1]),
          "rank %d: the broadcast gradient differs from NumPy's", rank);
  }
  loom_status_free(status);
  for (int i = 0; i < 5; ++i) loom_tensor_handle_release(h[i]);
  loom_op_handler_release(tape);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(c);
}

// Runs a reduce expected to fail with `code` and each of `parts` in its
// message.
static void expect_failure(loom_context_t* ctx, loom_tensor_handle_t* x,
                           int32_t group_size, int32_t instance_key,
                           float timeout, loom_status_code_t code,
                           const char* const* parts, int num_parts, int rank) {
  loom_tensor_handle_t* y = NULL;
  loom_status_t status = loom_test_collective_reduce(
      ctx, x, group_size, 7, instance_key, "Add", "Id", timeout, &y);
  CHECK(status && loom_status_code(status) == code,
        "rank %d, instance %d: expected code %d, got %s", rank,
        (int)instance_key, (int)code, status ? status_text(status) : "OK");
  for (int i = 0; status && i < num_parts; ++i) {
    CHECK(strstr(status_text(status), parts[i]),
          "rank %d: message \"%s\" lacks \"%s\"", rank, status_text(status),
          parts[i]);
  }
  loom_status_free(status);
  loom_tensor_handle_release(y);
}

static void fault_cases(loom_context_t* ctx, int rank, int size) {
  char last[64];
  snprintf(last, sizeof(last), "rank %d: double [3]", size - 1);
  // The last rank brings 3 elements, the others 5.
  loom_tensor_handle_t* x =
      make_input(ctx, LOOM_DTYPE_DOUBLE, rank == size - 1 ? 3 : 5, rank);
  const char* shape_parts[] = {
      "CollectiveReduceV2 (group_key 7, instance_key 1) on MPI: the ranks' "
      "inputs differ (all must have the same dtype and shape): rank 0: "
      "double [5]; rank 1: double ",
      last};
  expect_failure(ctx, x, size, 1, 30, LOOM_STATUS_INVALID_ARGUMENT, shape_parts,
                 2, rank);
  loom_tensor_handle_release(x);

  // Rank 0 brings float, the others double.
  x = make_input(ctx, rank == 0 ? LOOM_DTYPE_FLOAT : LOOM_DTYPE_DOUBLE, 5,
                 rank);
  const char* dtype_parts[] = {
      "CollectiveReduceV2 (group_key 7, instance_key 2) on MPI: the ranks' "
      "inputs differ",
      "rank 0: float [5]; rank 1: double [5]"};
  expect_failure(ctx, x, size, 2, 30, LOOM_STATUS_INVALID_ARGUMENT, dtype_parts,
                 2, rank);
  loom_tensor_handle_release(x);

  // Every rank says one participant more than there are ranks.
  x = make_input(ctx, LOOM_DTYPE_DOUBLE, 5, rank);
  char group[160];
  snprintf(group, sizeof(group),
           "CollectiveReduceV2 (group_key 7, instance_key 3) on MPI: "
           "group_size is %d, but there are %d MPI ranks",
           size + 1, size);
  const char* group_parts[] = {group};
  expect_failure(ctx, x, size + 1, 3, 30, LOOM_STATUS_INVALID_ARGUMENT,
                 group_parts, 1, rank);

  // The ranks disagree on the instance key.
  const char* key_parts[] = {"the ranks disagree on instance_key",
                             "rank 0: 4; rank 1: 5"};
  expect_failure(ctx, x, size, rank == 0 ? 4 : 5, 30,
                 LOOM_STATUS_INVALID_ARGUMENT, key_parts, 2, rank);

  // The ranks still agree after those failures.
  loom_tensor_handle_t* y = NULL;
  loom_status_t status =
      loom_test_collective_reduce(ctx, x, size, 7, 6, "Max", "Id", 30, &y);
  CHECK(!status && holds(ctx, y, LOOM_DTYPE_DOUBLE, kExpected[size - 2][6]),
        "rank %d: the reduce after the faults failed: %s", rank,
        status ? status_text(status) : "wrong values");
  loom_status_free(status);
  loom_tensor_handle_release(y);

  // The last rank stops calling collectives: the others time out, naming
  // it, and their MPI backend refuses further collectives.
  if (rank != size - 1) {
    char timeout[256];
    snprintf(timeout, sizeof(timeout),
             "CollectiveReduceV2 (group_key 7, instance_key 8) on MPI: "
             "timed out after 1 seconds waiting for the other ranks' headers "
             "(rank %d of %d; no word from rank %d)",
             rank, size, size - 1);
    const char* timeout_parts[] = {timeout};
    expect_failure(ctx, x, size, 8, 1, LOOM_STATUS_DEADLINE_EXCEEDED,
                   timeout_parts, 1, rank);
    const char* after_parts[] = {
        "CollectiveReduceV2 (group_key 7, instance_key 9) on MPI: an earlier "
        "collective timed out on this rank"};
    expect_failure(ctx, x, size, 9, 1, LOOM_STATUS_FAILED_PRECONDITION,
                   after_parts, 1, rank);
  }
  loom_tensor_handle_release(x);
}

typedef struct thread_arg_t {
  loom_context_t* ctx;
  int rank;
  int size;
} thread_arg_t;

static void* thread_main(void* opaque) {
  thread_arg_t* arg = opaque;
  reduce_cases(arg->ctx, arg->rank, arg->size);
  broadcast_cases(arg->ctx, arg->rank, arg->size, false);
  broadcast_gradient_case(arg->ctx, arg->rank, arg->size);
  return NULL;
}

// The same cases between `size` threads on the in-process backend.
static int run_threads(int size) {
  if (size < 2 || size > 3) {
    fprintf(stderr, "--threads takes 2 or 3\n");
    return 2;
  }
  loom_context_t* ctx = NULL;
  if (loom_context_create(NULL, &ctx)) return 1;
  pthread_t threads[3];
  thread_arg_t args[3];
  for (int r = 0; r < size; ++r) {
    args[r] = (thread_arg_t){.ctx = ctx, .rank = r, .size = size};
    if (pthread_create(&threads[r], NULL, thread_main, &args[r])) abort();
  }
  for (int r = 0; r < size; ++r) pthread_join(threads[r], NULL);
  // A gather of one participant on the in-process backend is its input
  // (gathers between threads on several devices: test_parallel).
  loom_tensor_handle_t* x = make_input(ctx, LOOM_DTYPE_FLOAT, 5, 0);
  loom_tensor_handle_t* y = NULL;
  loom_status_t status = gather(ctx, x, 1, 1, &y);
  CHECK(!status && holds(ctx, y, LOOM_DTYPE_FLOAT, kInputs[0]),
        "gather on one thread: %s",
        status ? status_text(status) : "wrong values");
  loom_status_free(status);
  loom_tensor_handle_release(y);
  y = NULL;
  // A receiver's shape is checked before any backend sees it.
  status = broadcast(ctx, NULL, -1, 1, 3, &y);
  CHECK(status && loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
            strstr(status_text(status),
                   "CollectiveBcastRecvV2: shape[0] is -1: dims must be >= 0"),
        "a negative dim: %s", status ? status_text(status) : "OK");
  loom_status_free(status);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_context_destroy(ctx);
  printf("%d threads: %s\n", size, g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--threads") == 0) {
    return run_threads(atoi(argv[2]));
  }
  CHECK(loom_collective_mpi_available(), "a build with MPI says it has none");
  int32_t rank = 0, size = 0;
  loom_status_t status = loom_collective_use_mpi(-1, &rank, &size);
  CHECK(status && loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
            strstr(status_text(status),
                   "loom_collective_use_mpi: default_timeout_seconds must be "
                   "finite and >= 0, got -1"),
        "a negative timeout: %s", status ? status_text(status) : "OK");
  loom_status_free(status);
  status = loom_collective_use_mpi(0, &rank, &size);
  if (status) {
    fprintf(stderr, "loom_collective_use_mpi: %s\n", status_text(status));
    loom_status_free(status);
    return 1;
  }
  if (size < 2 || size > 3) {
    fprintf(stderr, "run with mpirun -np 2 or -np 3 (got %d ranks)\n",
            (int)size);
    loom_status_free(loom_collective_mpi_finalize());
    return 2;
  }
  loom_context_t* ctx = NULL;
  if (loom_context_create(NULL, &ctx)) abort();
  reduce_cases(ctx, rank, size);
  gather_cases(ctx, rank, size);
  exchange_cases(ctx, rank, size);
  broadcast_cases(ctx, rank, size, true);
  broadcast_gradient_case(ctx, rank, size);
  fault_cases(ctx, rank, size);
  loom_context_destroy(ctx);
  status = loom_collective_mpi_finalize();
  CHECK(!status, "finalize: %s", status ? status_text(status) : "");
  loom_status_free(status);
  // MPI cannot start again.
  status = loom_collective_use_mpi(0, NULL, NULL);
  CHECK(status && loom_status_code(status) == LOOM_STATUS_FAILED_PRECONDITION &&
            strstr(status_text(status),
                   "loom_collective_use_mpi: MPI was finalized and cannot be "
                   "initialized again"),
        "use after finalize: %s", status ? status_text(status) : "OK");
  loom_status_free(status);
  printf("rank %d of %d: %s\n", (int)rank, (int)size,
         g_failures ? "FAILED" : "passed");
  return g_failures ? 1 : 0;
}
