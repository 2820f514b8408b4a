// The gradient tape from several threads (run under ThreadSanitizer):
// threads with a tape each on one shared context, one tape recording the
// ops of several threads at once, one persistent tape whose gradients
// several threads compute at once, and a tape one thread stopped recording
// on while another records. Every gradient is checked against the
// same computation on a tape used by one thread alone, itself checked
// against f64 central differences of the function computed in C.
//
// f(x, w) = sum(tanh(x w)) + sum(x * x), x: [kRows, kInner], w: [kInner,
// kCols]: x feeds two ops, so its gradient is summed (AddN). w is shared by
// every thread and watched by each thread's tape, so tapes take its tag over
// from each other while others record with it.
//
// The workers report failures as statuses (cmocka's assertions belong to
// the main thread).

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

enum {
  kThreads = 4,
  kRows = 3,
  kInner = 4,
  kCols = 2,
  kX = kRows * kInner,
  kW = kInner * kCols,
  kOwnRounds = 500,       // (a): tapes per thread
  kSharedRounds = 40,     // (b): tapes shared by the threads
  kEvaluations = 6,       // (b): f evaluated per thread on the shared tape
  kGradientRounds = 120,  // (c): gradients per thread
};

#define D LOOM_DTYPE_DOUBLE

static loom_context_t* g_ctx;
static double g_x[kThreads][kX];
static double g_w[kW];
// The reference: f's gradients for each thread's x, from a tape used by the
// main thread alone.
static double g_ref_y[kThreads];
static double g_ref_dx[kThreads][kX];
static double g_ref_dw[kThreads][kW];

//===----------------------------------------------------------------------===//
// Helpers returning statuses (usable on any thread)
//===----------------------------------------------------------------------===//

static loom_status_t new_handle(loom_dtype_t dtype, const int64_t* dims,
                                int rank, const double* values,
                                handle_t** out) {
  *out = NULL;
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                                &shape, &tensor));
  int64_t n = loom_shape_num_elements(&shape);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == LOOM_DTYPE_DOUBLE) {
      ((double*)loom_tensor_data(tensor))[i] = values[i];
    } else {
      ((int32_t*)loom_tensor_data(tensor))[i] = (int32_t)values[i];
    }
  }
  loom_status_t status = loom_context_new_handle(g_ctx, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

static loom_status_t new_x(int t, handle_t** out) {
  const int64_t dims[2] = {kRows, kInner};
  return new_handle(D, dims, 2, g_x[t], out);
}

static loom_status_t new_w(handle_t** out) {
  const int64_t dims[2] = {kInner, kCols};
  return new_handle(D, dims, 2, g_w, out);
}

static loom_status_t op2(const char* name, handle_t* a, handle_t* b,
                         handle_t** out) {
  return loom__grad_execute_in(g_ctx, name, LOOM_GRAD_INPUTS(a, b),
                               LOOM_GRAD_NO_ATTRS, out, 1);
}

static loom_status_t sum_all(handle_t* x, handle_t** out) {
  const double axes[2] = {0, 1};
  const int64_t dims[1] = {2};
  handle_t* axes_handle = NULL;
  LOOM_RETURN_IF_ERROR(
      new_handle(LOOM_DTYPE_INT32, dims, 1, axes, &axes_handle));
  loom_status_t status = op2("Sum", x, axes_handle, out);
  loom_tensor_handle_release(axes_handle);
  return status;
}

// y = sum(tanh(x w)) + sum(x * x), with eager ops in the current scope.
static loom_status_t f(handle_t* x, handle_t* w, handle_t** out_y) {
  *out_y = NULL;
  handle_t* z = NULL;
  handle_t* h = NULL;
  handle_t* s1 = NULL;
  handle_t* xx = NULL;
  handle_t* s2 = NULL;
  loom_status_t status = op2("MatMul", x, w, &z);
  if (!status) {
    status =
        loom__grad_execute_in(g_ctx, "Tanh", &z, 1, LOOM_GRAD_NO_ATTRS, &h, 1);
  }
  if (!status) status = sum_all(h, &s1);
  if (!status) status = op2("Mul", x, x, &xx);
  if (!status) status = sum_all(xx, &s2);
  if (!status) status = op2("AddV2", s1, s2, out_y);
  handle_t* all[] = {z, h, s1, xx, s2};
  loom__grad_release_all(all, 5);
  return status;
}

static double f_in_c(const double* x, const double* w) {
  double y = 0;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      double z = 0;
      for (int k = 0; k < kInner; ++k)
        z += x[r * kInner + k] * w[k * kCols + c];
      y += tanh(z);
    }
  }
  for (int i = 0; i < kX; ++i) y += x[i] * x[i];
  return y;
}

static loom_status_t read_values(handle_t* handle, double* out, int64_t count) {
  if (!handle) {
    return loom_make_status(LOOM_STATUS_INTERNAL, "no gradient (NULL)");
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_resolve(g_ctx, handle, &tensor));
  loom_tensor_t* dense = NULL;
  loom_status_t status =
      loom_tensor_convert_to_dense(loom_allocator_default(), tensor, &dense);
  loom_tensor_release(tensor);
  if (status) return status;
  if (loom_tensor_dtype(dense) != D ||
      loom_tensor_num_elements(dense) != count) {
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "%lld elements of dtype %d, expected %lld "
                              "doubles",
                              (long long)loom_tensor_num_elements(dense),
                              (int)loom_tensor_dtype(dense), (long long)count);
  } else {
    memcpy(out, loom_tensor_data(dense), sizeof(double) * (size_t)count);
  }
  loom_tensor_release(dense);
  return status;
}

static loom_status_t check_values(handle_t* handle, const double* expected,
                                  int64_t count, double tolerance,
                                  const char* what) {
  double actual[kX > kW ? kX : kW];
  loom_status_t status = read_values(handle, actual, count);
  if (status) return loom_status_annotate(status, "%s", what);
  for (int64_t i = 0; i < count; ++i) {
    double scale = fabs(expected[i]) > 1 ? fabs(expected[i]) : 1;
    if (!(fabs(actual[i] - expected[i]) <= tolerance * scale)) {
      return loom_make_status(LOOM_STATUS_INTERNAL,
                              "%s[%lld]: got %.17g, expected %.17g", what,
                              (long long)i, actual[i], expected[i]);
    }
  }
  return loom_ok_status();
}

static loom_status_t new_tape(bool persistent, loom_op_handler_t** out) {
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  options.persistent = persistent;
  return loom_tape_create(g_ctx, &options, out);
}

// Exits the scope; keeps the first error.
static loom_status_t exit_scope(loom_status_t status) {
  loom_status_t exited = loom_context_exit_scope(g_ctx);
  if (!status) return exited;
  loom_status_free(exited);
  return status;
}

// One tape: records f(x, w) with x and w watched, then the gradient with
// respect to both (twice on a persistent tape).
static loom_status_t gradient_on_own_tape(int t, handle_t* w, bool persistent,
                                          double* out_y, double* out_dx,
                                          double* out_dw) {
  handle_t* x = NULL;
  handle_t* y = NULL;
  handle_t* grads[2] = {NULL, NULL};
  handle_t* again[2] = {NULL, NULL};
  loom_op_handler_t* tape = NULL;
  loom_status_t status = new_x(t, &x);
  if (!status) status = new_tape(persistent, &tape);
  if (!status) {
    status = loom_context_enter_scope(g_ctx, tape);
    if (!status) {
      status = loom_tape_watch(tape, x);
      if (!status) status = loom_tape_watch(tape, w);
      if (!status) status = f(x, w, &y);
      status = exit_scope(status);
    }
  }
  handle_t* sources[2] = {x, w};
  if (!status) {
    status = loom_tape_gradient(tape, &y, 1, sources, 2, NULL,
                                LOOM_UNCONNECTED_NONE, grads);
  }
  if (!status && persistent) {
    status = loom_tape_gradient(tape, &y, 1, sources, 2, NULL,
                                LOOM_UNCONNECTED_NONE, again);
  }
  if (!status) status = read_values(y, out_y, 1);
  if (!status) {
    status = read_values(grads[0], out_dx, kX);
    if (status) status = loom_status_annotate(status, "dx");
  }
  if (!status) {
    status = read_values(grads[1], out_dw, kW);
    if (status) status = loom_status_annotate(status, "dw");
  }
  if (!status && persistent) {
    status = check_values(again[0], out_dx, kX, 0, "dx (second gradient)");
    if (!status) {
      status = check_values(again[1], out_dw, kW, 0, "dw (second gradient)");
    }
  }
  loom__grad_release_all(grads, 2);
  loom__grad_release_all(again, 2);
  loom_tensor_handle_release(y);
  loom_tensor_handle_release(x);
  loom_op_handler_release(tape);
  return status;
}

//===----------------------------------------------------------------------===//
// Fixture: the context, the inputs and the single-threaded reference
//===----------------------------------------------------------------------===//

static int setup(void** state) {
  (void)state;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 2;
  loom_status_t status = loom_context_create(&options, &g_ctx);
  if (status) {
    loom_status_free(status);
    return -1;
  }
  uint64_t seed = 20240611;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kX; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      g_x[t][i] = -1.0 + 2.0 * (double)(seed >> 11) / 9007199254740992.0;
    }
  }
  for (int i = 0; i < kW; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    g_w[i] = -0.8 + 1.6 * (double)(seed >> 11) / 9007199254740992.0;
  }
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_ctx);
  g_ctx = NULL;
  return 0;
}

// The reference gradients on the main thread, checked against central
// differences of f_in_c; must run first.
static void reference_matches_finite_differences(void** state) {
  (void)state;
  handle_t* w = NULL;
  LOOM_ASSERT_OK(new_w(&w));
  for (int t = 0; t < kThreads; ++t) {
    LOOM_ASSERT_OK(gradient_on_own_tape(t, w, false, &g_ref_y[t], g_ref_dx[t],
                                        g_ref_dw[t]));
    double y_p, dx_p[kX], dw_p[kW];  // a persistent tape gives the same
    LOOM_ASSERT_OK(gradient_on_own_tape(t, w, true, &y_p, dx_p, dw_p));
    assert_true(y_p == g_ref_y[t]);
    assert_memory_equal(dx_p, g_ref_dx[t], sizeof(dx_p));
    assert_memory_equal(dw_p, g_ref_dw[t], sizeof(dw_p));

    double x[kX], w_values[kW];
    memcpy(x, g_x[t], sizeof(x));
    memcpy(w_values, g_w, sizeof(w_values));
    const double h = 1e-5;
    assert_true(fabs(g_ref_y[t] - f_in_c(x, w_values)) < 1e-12);
    for (int i = 0; i < kX; ++i) {
      double saved = x[i];
      x[i] = saved + h;
      double up = f_in_c(x, w_values);
      x[i] = saved - h;
      double down = f_in_c(x, w_values);
      x[i] = saved;
      double expected = (up - down) / (2 * h);
      if (fabs(g_ref_dx[t][i] - expected) > 1e-7) {
        fail_msg("dx[%d][%d]: tape %.12g, finite differences %.12g", t, i,
                 g_ref_dx[t][i], expected);
      }
    }
    for (int i = 0; i < kW; ++i) {
      double saved = w_values[i];
      w_values[i] = saved + h;
      double up = f_in_c(x, w_values);
      w_values[i] = saved - h;
      double down = f_in_c(x, w_values);
      w_values[i] = saved;
      double expected = (up - down) / (2 * h);
      if (fabs(g_ref_dw[t][i] - expected) > 1e-7) {
        fail_msg("dw[%d][%d]: tape %.12g, finite differences %.12g", t, i,
                 g_ref_dw[t][i], expected);
      }
    }
  }
  loom_tensor_handle_release(w);
}

//===----------------------------------------------------------------------===//
// Workers
//===----------------------------------------------------------------------===//

typedef struct worker_t {
  pthread_t thread;
  int index;
  pthread_barrier_t* start;  // NULL: none
  handle_t* w;               // shared, borrowed
  loom_op_handler_t* tape;   // (b), (c): shared, borrowed
  handle_t* x;               // (b), (c): borrowed
  handle_t* y;               // (b): the worker's target (owned); (c): borrowed
  loom_status_t status;
} worker_t;

static void join_all(worker_t* workers, int count) {
  for (int i = 0; i < count; ++i) {
    assert_int_equal(pthread_join(workers[i].thread, NULL), 0);
  }
  for (int i = 0; i < count; ++i) {
    loom_status_t status = workers[i].status;
    workers[i].status = NULL;
    if (status) {
      status = loom_status_annotate(status, "thread %d", i);
      LOOM_ASSERT_OK(status);
    }
  }
}

static void start(worker_t* worker, void* (*fn)(void*)) {
  assert_int_equal(pthread_create(&worker->thread, NULL, fn, worker), 0);
}

// (a) Tapes of its own, one after the other, persistent or not.
static void* own_tapes_worker(void* arg) {
  worker_t* worker = arg;
  int t = worker->index;
  if (worker->start) pthread_barrier_wait(worker->start);
  loom_status_t status = loom_ok_status();
  for (int round = 0; round < kOwnRounds && !status; ++round) {
    double y, dx[kX], dw[kW];
    status =
        gradient_on_own_tape(t, worker->w, (round + t) % 3 == 0, &y, dx, dw);
    if (!status && y != g_ref_y[t]) {
      status = loom_make_status(LOOM_STATUS_INTERNAL,
                                "y: %.17g, expected %.17g", y, g_ref_y[t]);
    }
    for (int i = 0; i < kX && !status; ++i) {
      if (dx[i] != g_ref_dx[t][i]) {
        status = loom_make_status(LOOM_STATUS_INTERNAL,
                                  "dx[%d]: %.17g, expected %.17g", i, dx[i],
                                  g_ref_dx[t][i]);
      }
    }
    for (int i = 0; i < kW && !status; ++i) {
      if (dw[i] != g_ref_dw[t][i]) {
        status = loom_make_status(LOOM_STATUS_INTERNAL,
                                  "dw[%d]: %.17g, expected %.17g", i, dw[i],
                                  g_ref_dw[t][i]);
      }
    }
    if (status) status = loom_status_annotate(status, "round %d", round);
  }
  worker->status = status;
  return NULL;
}

static void threads_with_their_own_tapes(void** state) {
  (void)state;
  handle_t* w = NULL;
  LOOM_ASSERT_OK(new_w(&w));
  pthread_barrier_t barrier;
  assert_int_equal(pthread_barrier_init(&barrier, NULL, kThreads), 0);
  worker_t workers[kThreads];
  memset(workers, 0, sizeof(workers));
  for (int t = 0; t < kThreads; ++t) {
    workers[t].index = t;
    workers[t].start = &barrier;
    workers[t].w = w;
    start(&workers[t], own_tapes_worker);
  }
  join_all(workers, kThreads);
  pthread_barrier_destroy(&barrier);
  loom_tensor_handle_release(w);
}

// (b) In the shared tape's scope: watches its x, then y = sum of
// kEvaluations evaluations of f(x, w).
static void* shared_tape_worker(void* arg) {
  worker_t* worker = arg;
  pthread_barrier_wait(worker->start);
  loom_status_t status = loom_context_enter_scope(g_ctx, worker->tape);
  if (status) {
    worker->status = status;
    return NULL;
  }
  status = loom_tape_watch(worker->tape, worker->x);
  handle_t* total = NULL;
  for (int k = 0; k < kEvaluations && !status; ++k) {
    handle_t* y = NULL;
    status = f(worker->x, worker->w, &y);
    if (!status && total) {
      handle_t* sum = NULL;
      status = op2("AddV2", total, y, &sum);
      loom_tensor_handle_release(y);
      y = sum;
    }
    loom_tensor_handle_release(total);
    total = y;
  }
  status = exit_scope(status);
  if (status) {
    loom_tensor_handle_release(total);
    total = NULL;
  }
  worker->y = total;
  worker->status = status;
  return NULL;
}

static void one_tape_records_several_threads(void** state) {
  (void)state;
  handle_t* w = NULL;
  LOOM_ASSERT_OK(new_w(&w));
  double expected_dw[kW];
  memset(expected_dw, 0, sizeof(expected_dw));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kW; ++i)
      expected_dw[i] += kEvaluations * g_ref_dw[t][i];
  }
  for (int round = 0; round < kSharedRounds; ++round) {
    bool persistent = round % 2 == 1;
    loom_op_handler_t* tape = NULL;
    LOOM_ASSERT_OK(new_tape(persistent, &tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, w));
    pthread_barrier_t barrier;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, kThreads), 0);
    worker_t workers[kThreads];
    memset(workers, 0, sizeof(workers));
    for (int t = 0; t < kThreads; ++t) {
      workers[t].index = t;
      workers[t].start = &barrier;
      workers[t].w = w;
      workers[t].tape = tape;
      LOOM_ASSERT_OK(new_x(t, &workers[t].x));
      start(&workers[t], shared_tape_worker);
    }
    join_all(workers, kThreads);
    pthread_barrier_destroy(&barrier);

    loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
    LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
    // Per evaluation: MatMul, Tanh, Sum, Mul, Sum, AddV2; then the AddV2s
    // summing the evaluations.
    assert_int_equal(statistics.num_ops,
                     kThreads * (6 * kEvaluations + kEvaluations - 1));

    handle_t* targets[kThreads];
    handle_t* sources[kThreads + 1];
    for (int t = 0; t < kThreads; ++t) {
      targets[t] = workers[t].y;
      sources[t] = workers[t].x;
    }
    sources[kThreads] = w;
    handle_t* grads[kThreads + 1];
    LOOM_ASSERT_OK(loom_tape_gradient(tape, targets, kThreads, sources,
                                      kThreads + 1, NULL, LOOM_UNCONNECTED_NONE,
                                      grads));
    for (int t = 0; t < kThreads; ++t) {
      double expected_dx[kX];
      for (int i = 0; i < kX; ++i) {
        expected_dx[i] = kEvaluations * g_ref_dx[t][i];
      }
      LOOM_ASSERT_OK(check_values(grads[t], expected_dx, kX, 1e-13, "dx"));
      double y = 0;
      LOOM_ASSERT_OK(read_values(targets[t], &y, 1));
      if (fabs(y - kEvaluations * g_ref_y[t]) > 1e-12 * fabs(y)) {
        fail_msg("y[%d]: %.17g, expected %.17g", t, y,
                 kEvaluations * g_ref_y[t]);
      }
    }
    LOOM_ASSERT_OK(check_values(grads[kThreads], expected_dw, kW, 1e-13, "dw"));
    loom__grad_release_all(grads, kThreads + 1);
    if (persistent) {  // one thread's target alone
      handle_t* one[2] = {NULL, NULL};
      handle_t* pair[2] = {workers[1].x, w};
      LOOM_ASSERT_OK(loom_tape_gradient(tape, &targets[1], 1, pair, 2, NULL,
                                        LOOM_UNCONNECTED_NONE, one));
      double expected_dx[kX], expected_one_dw[kW];
      for (int i = 0; i < kX; ++i) {
        expected_dx[i] = kEvaluations * g_ref_dx[1][i];
      }
      for (int i = 0; i < kW; ++i) {
        expected_one_dw[i] = kEvaluations * g_ref_dw[1][i];
      }
      LOOM_ASSERT_OK(check_values(one[0], expected_dx, kX, 1e-13, "dx1"));
      LOOM_ASSERT_OK(check_values(one[1], expected_one_dw, kW, 1e-13, "dw1"));
      loom__grad_release_all(one, 2);
    }
    for (int t = 0; t < kThreads; ++t) {
      loom_tensor_handle_release(workers[t].y);
      loom_tensor_handle_release(workers[t].x);
    }
    loom_op_handler_release(tape);
  }
  loom_tensor_handle_release(w);
}

// (c) Gradients of a persistent tape: alternately its own target (its x
// and w as sources) and all the targets (every x and w).
typedef struct persistent_shared_t {
  handle_t* targets[kThreads];
  handle_t* sources[kThreads + 1];
} persistent_shared_t;

static persistent_shared_t g_persistent;

static void* persistent_gradient_worker(void* arg) {
  worker_t* worker = arg;
  int t = worker->index;
  pthread_barrier_wait(worker->start);
  loom_status_t status = loom_ok_status();
  double expected_all_dw[kW];
  memset(expected_all_dw, 0, sizeof(expected_all_dw));
  for (int s = 0; s < kThreads; ++s) {
    for (int i = 0; i < kW; ++i) expected_all_dw[i] += g_ref_dw[s][i];
  }
  for (int round = 0; round < kGradientRounds && !status; ++round) {
    if ((round + t) % 2 == 0) {
      handle_t* grads[2] = {NULL, NULL};
      handle_t* sources[2] = {worker->x, worker->w};
      status = loom_tape_gradient(worker->tape, &worker->y, 1, sources, 2, NULL,
                                  LOOM_UNCONNECTED_NONE, grads);
      if (!status) status = check_values(grads[0], g_ref_dx[t], kX, 0, "dx");
      if (!status) status = check_values(grads[1], g_ref_dw[t], kW, 0, "dw");
      loom__grad_release_all(grads, 2);
    } else {
      handle_t* grads[kThreads + 1] = {NULL};
      status = loom_tape_gradient(worker->tape, g_persistent.targets, kThreads,
                                  g_persistent.sources, kThreads + 1, NULL,
                                  LOOM_UNCONNECTED_NONE, grads);
      for (int s = 0; s < kThreads && !status; ++s) {
        status = check_values(grads[s], g_ref_dx[s], kX, 1e-14, "all: dx");
      }
      if (!status) {
        status = check_values(grads[kThreads], expected_all_dw, kW, 1e-14,
                              "all: dw");
      }
      loom__grad_release_all(grads, kThreads + 1);
    }
    if (!status && round % 8 == 0) {
      loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
      status = loom_tape_statistics(worker->tape, &statistics);
      if (!status && statistics.num_ops != 6 * kThreads) {
        status = loom_make_status(LOOM_STATUS_INTERNAL, "%lld ops recorded",
                                  (long long)statistics.num_ops);
      }
    }
    if (status) status = loom_status_annotate(status, "round %d", round);
  }
  worker->status = status;
  return NULL;
}

static void persistent_tape_gradients_from_several_threads(void** state) {
  (void)state;
  handle_t* w = NULL;
  LOOM_ASSERT_OK(new_w(&w));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(new_tape(true, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  for (int t = 0; t < kThreads; ++t) {
    LOOM_ASSERT_OK(new_x(t, &g_persistent.sources[t]));
    LOOM_ASSERT_OK(loom_tape_watch(tape, g_persistent.sources[t]));
    LOOM_ASSERT_OK(f(g_persistent.sources[t], w, &g_persistent.targets[t]));
  }
  g_persistent.sources[kThreads] = w;
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));

  pthread_barrier_t barrier;
  assert_int_equal(pthread_barrier_init(&barrier, NULL, kThreads), 0);
  worker_t workers[kThreads];
  memset(workers, 0, sizeof(workers));
  for (int t = 0; t < kThreads; ++t) {
    workers[t].index = t;
    workers[t].start = &barrier;
    workers[t].w = w;
    workers[t].tape = tape;
    workers[t].x = g_persistent.sources[t];
    workers[t].y = g_persistent.targets[t];
    start(&workers[t], persistent_gradient_worker);
  }
  join_all(workers, kThreads);
  pthread_barrier_destroy(&barrier);

  // Still usable afterwards, from this thread.
  handle_t* grads[kThreads + 1];
  LOOM_ASSERT_OK(loom_tape_gradient(tape, g_persistent.targets, kThreads,
                                    g_persistent.sources, kThreads + 1, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  for (int t = 0; t < kThreads; ++t) {
    LOOM_ASSERT_OK(check_values(grads[t], g_ref_dx[t], kX, 1e-14, "dx"));
  }
  loom__grad_release_all(grads, kThreads + 1);
  loom__grad_release_all(g_persistent.targets, kThreads);
  loom__grad_release_all(g_persistent.sources, kThreads);
  loom_op_handler_release(tape);
  loom_tensor_handle_release(w);
}

// (d) In the tape's scope on its own thread: y = f(x, w).
static void* evaluate_worker(void* arg) {
  worker_t* worker = arg;
  loom_status_t status = loom_context_enter_scope(g_ctx, worker->tape);
  if (!status) status = exit_scope(f(worker->x, worker->w, &worker->y));
  worker->status = status;
  return NULL;
}

static int64_t recorded_ops(loom_op_handler_t* tape) {
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  return statistics.num_ops;
}

static void stop_recording_pauses_only_the_calling_thread(void** state) {
  (void)state;
  handle_t* w = NULL;
  handle_t* x = NULL;
  LOOM_ASSERT_OK(new_w(&w));
  LOOM_ASSERT_OK(new_x(0, &x));
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(new_tape(false, &tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, w));
  LOOM_ASSERT_OK(loom_tape_stop_recording(tape));
  worker_t worker = {.w = w, .tape = tape, .x = x};
  start(&worker, evaluate_worker);
  join_all(&worker, 1);
  int64_t recorded = recorded_ops(tape);
  assert_true(recorded > 0);
  // This thread's ops pass unrecorded until it resumes.
  handle_t* unrecorded = NULL;
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  LOOM_ASSERT_OK(exit_scope(f(x, w, &unrecorded)));
  assert_int_equal(recorded_ops(tape), recorded);
  LOOM_ASSERT_OK(loom_tape_resume_recording(tape));
  LOOM_ASSERT_STATUS(loom_tape_resume_recording(tape),
                     LOOM_STATUS_FAILED_PRECONDITION, "was not stopped");
  handle_t* targets[2] = {worker.y, unrecorded};
  handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &targets[0], 1, &w, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &grads[0]));
  LOOM_ASSERT_OK(check_values(grads[0], g_ref_dw[0], kW, 1e-14, "dw"));
  loom__grad_release_all(grads, 2);
  loom__grad_release_all(targets, 2);
  loom_op_handler_release(tape);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reference_matches_finite_differences),
      cmocka_unit_test(threads_with_their_own_tapes),
      cmocka_unit_test(one_tape_records_several_threads),
      cmocka_unit_test(persistent_tape_gradients_from_several_threads),
      cmocka_unit_test(stop_recording_pauses_only_the_calling_thread),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
