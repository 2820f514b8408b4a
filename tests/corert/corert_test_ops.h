// Shared fixtures of the core runtime's tests: test ops registered through
// TensorFlow's C API and natively on a cpu handler, a runtime environment
// with a recording diagnostic handler, a client-side location table, and
// tensor / handle helpers.
//
// TensorFlow ops (process-wide; corert_test_register_tf_ops registers them
// once):
//   TestAdd(x: T, y: T) -> z: T, T in {float, int32}: z = x + y. The shape
//     function requires equal shapes ("TestAdd requires inputs of equal
//     shapes").
//   TestAsyncIdentity(x: T) -> y: T: an asynchronous kernel that copies x
//     on the thread pool. While corert_test_async_hold is in effect its
//     computes park until corert_test_async_release.
//   TestFail(x: T) -> y: T: the kernel fails with ABORTED "the kernel failed
//     on purpose".
//   TestBadShape(x: T) -> y: T: the shape function fails with
//     "every input is rejected"; the kernel counts its (unexpected) runs.
//   TestRange(n: int32) -> y: float: no shape function (data-dependent
//     result shape); y = [0, 1, ..., n - 1].
//   TestNegate(x: float) -> y: float: y = -x through
//     TF_ForwardInputOrAllocateOutput (see corert_test_last_forwarded).
//   TestNoOutput(x: float) -> y: float: the kernel never sets its output.
//
// Native ops (corert_test_add_native_ops on a cpu handler):
//   test.add(x, y) -> z with a metadata function (same dtype and shape);
//   test.log(x) with a chain: appends x's element 0 to the test log
//     (LOOM_CPU_OP_SIDE_EFFECTING);
//   test.expensive_negate(x) -> -x for float x (LOOM_CPU_OP_EXPENSIVE), with
//     a metadata function;
//   test.sum(x0, ..., xn) -> the element-wise sum of float tensors, with a
//     metadata function requiring one shape ("arguments of test.sum must
//     have same shape").

#ifndef LOOM_TESTS_CORERT_CORERT_TEST_OPS_H_
#define LOOM_TESTS_CORERT_CORERT_TEST_OPS_H_

#include <pthread.h>
#include <stdint.h>

#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Test ops
//===----------------------------------------------------------------------===//

// Registers the TensorFlow test ops and kernels (once per process).
void corert_test_register_tf_ops(void);

// Registers the native test ops on `cpu` (a cpu handler).
loom_status_t corert_test_add_native_ops(loom_op_handler_t* cpu);

// How often each kernel has run (process-wide, monotonic).
typedef struct corert_test_counts_t {
  int64_t add;              // TestAdd computes
  int64_t async_started;    // TestAsyncIdentity computes
  int64_t async_finished;   // TestAsyncIdentity completions
  int64_t fail;             // TestFail computes
  int64_t bad_shape;        // TestBadShape computes
  int64_t range;            // TestRange computes
  int64_t negate;           // TestNegate computes
  int64_t native_add;       // test.add dispatches
  int64_t log;              // test.log dispatches
  int64_t expensive;        // test.expensive_negate dispatches
  int64_t add_constructed;  // TestAdd kernels constructed
} corert_test_counts_t;

corert_test_counts_t corert_test_counts(void);

// Parks TestAsyncIdentity computes from now on, until release.
void corert_test_async_hold(void);
// Stops parking and schedules every parked compute on the thread pool;
// returns how many there were.
int corert_test_async_release(void);
// Computes parked now.
int corert_test_async_parked(void);

// The input TestNegate's last run forwarded (-1: it allocated).
int corert_test_last_forwarded(void);

// The values test.log appended, in order.
void corert_test_log_reset(void);
int corert_test_log_count(void);
double corert_test_log_at(int index);

//===----------------------------------------------------------------------===//
// Locations: a client-side table, as a front end would keep one
//===----------------------------------------------------------------------===//

// A token for file:line:column (0 when the table is full).
loom_location_t corert_test_location(const char* file, int line, int column);
// Writes "file:line:column" for a token ("<unknown>" for 0 or a bad one).
void corert_test_describe_location(loom_location_t location, char* buffer,
                                   size_t capacity);

#define CORERT_TEST_HERE() corert_test_location(__FILE__, __LINE__, 1)

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

// What the diagnostic handler recorded.
typedef struct corert_test_diagnostics_t {
  pthread_mutex_t mutex;
  int count;
  char op_name[128];   // of the last call
  char where[256];     // the last location, decoded
  char message[1024];  // the last error's message
  loom_status_code_t code;
} corert_test_diagnostics_t;

typedef struct corert_test_env_options_t {
  int num_threads;                    // worker threads (-1: the default)
  bool synchronous;                   // loom_runtime_options_t.synchronous
  int64_t inline_element_limit;       // 0: the runtime's default
  const loom_allocator_t* allocator;  // NULL: the host's default
  bool no_native_ops;                 // skip corert_test_add_native_ops
} corert_test_env_options_t;

typedef struct corert_test_env_t {
  loom_host_context_t* host;
  loom_runtime_t* runtime;
  loom_op_handler_t* cpu;   // borrowed from the runtime
  loom_op_handler_t* null;  // borrowed from the runtime
  corert_test_diagnostics_t diagnostics;
} corert_test_env_t;

// Fills `options` with: 2 threads, asynchronous, default limit and
// allocator, native ops added.
void corert_test_env_options_initialize(corert_test_env_options_t* options);

// Creates a host, a runtime (with the recording diagnostic handler) and
// registers the test ops. On error nothing is left allocated.
loom_status_t corert_test_env_create(corert_test_env_t* env,
                                     const corert_test_env_options_t* options);
// Waits for pending work and frees everything.
void corert_test_env_destroy(corert_test_env_t* env);

// cmocka fixtures: *state becomes a corert_test_env_t with the default
// options.
int corert_test_setup(void** state);
int corert_test_teardown(void** state);

int corert_test_diagnostic_count(corert_test_env_t* env);
// Copies the last diagnostic (under the lock).
void corert_test_last_diagnostic(corert_test_env_t* env, char* op_name,
                                 char* where, char* message, size_t capacity);

//===----------------------------------------------------------------------===//
// Tensors and handles
//===----------------------------------------------------------------------===//

// A dense tensor of `dtype` and shape dims[0, rank) holding `values`
// (may be NULL: uninitialised), from `allocator`.
loom_tensor_t* corert_test_tensor(loom_allocator_t allocator,
                                  loom_dtype_t dtype, const int64_t* dims,
                                  int rank, const void* values);

// A handle on env->cpu that holds the only reference to a new dense tensor.
loom_tensor_handle_t* corert_test_handle(corert_test_env_t* env,
                                         loom_dtype_t dtype,
                                         const int64_t* dims, int rank,
                                         const void* values);
loom_tensor_handle_t* corert_test_float_vector(corert_test_env_t* env,
                                               const float* values,
                                               int64_t count);
loom_tensor_handle_t* corert_test_int32_vector(corert_test_env_t* env,
                                               const int32_t* values,
                                               int64_t count);
loom_tensor_handle_t* corert_test_int32_scalar(corert_test_env_t* env,
                                               int32_t value);

// Retains and returns `handle` (to pass a copy to Execute).
loom_tensor_handle_t* corert_test_ref(loom_tensor_handle_t* handle);

// Resolves `handle` (failing the test on error); the caller releases the
// tensor.
loom_tensor_t* corert_test_resolve(loom_tensor_handle_t* handle);

// Resolves `handle` and checks that it holds exactly `expected` (a dense
// rank-1 tensor of `count` elements of `dtype`).
void corert_test_expect_values(loom_tensor_handle_t* handle, loom_dtype_t dtype,
                               const void* expected, int64_t count);

// Resolves `handle` and checks that it is an error with `code` whose
// message contains `substring`.
void corert_test_expect_error(loom_tensor_handle_t* handle,
                              loom_status_code_t code, const char* substring);

// As corert_test_expect_error, but releases `handle` first, so that a
// failing check leaks nothing.
void corert_test_expect_error_and_release(loom_tensor_handle_t* handle,
                                          loom_status_code_t code,
                                          const char* substring);

// Releases handles[0, count) (NULL entries are skipped) and clears them.
void corert_test_release_all(loom_tensor_handle_t** handles, int count);

// Fails the test unless `text` contains `substring`.
void corert_test_assert_contains(const char* text, const char* substring);

#endif  // LOOM_TESTS_CORERT_CORERT_TEST_OPS_H_
