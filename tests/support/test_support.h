// Helpers shared by Loom's cmocka tests: status assertions, the
// fault-injection sweep and float scalars of the eager API.

#ifndef LOOM_TESTS_SUPPORT_TEST_SUPPORT_H_
#define LOOM_TESTS_SUPPORT_TEST_SUPPORT_H_

// cmocka needs these before its header.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
// clang-format off
#include <cmocka.h>
// clang-format on

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "loom/allocator.h"
#include "loom/eager.h"
#include "loom/fault_allocator.h"
#include "loom/function.h"
#include "loom/host_context.h"
#include "loom/status.h"

// Fails the test with the formatted status unless `expr` is OK.
#define LOOM_ASSERT_OK(expr)                                     \
  do {                                                           \
    loom_status_t loom_assert_status_ = (expr);                  \
    if (loom_assert_status_) {                                   \
      char loom_assert_text_[1024];                              \
      loom_status_format(loom_assert_status_, loom_assert_text_, \
                         sizeof(loom_assert_text_));             \
      loom_status_free(loom_assert_status_);                     \
      fail_msg("%s failed: %s", #expr, loom_assert_text_);       \
    }                                                            \
  } while (0)

// Checks that `expr` fails with `code` and a message containing `substring`
// (NULL: any message), then frees the status.
#define LOOM_ASSERT_STATUS(expr, code, substring) \
  loom_test_check_status((expr), (code), (substring), #expr, __FILE__, __LINE__)

void loom_test_check_status(loom_status_t status, loom_status_code_t code,
                            const char* substring, const char* expression,
                            const char* file, int line);

// An operation for the fault sweep: does its work with `allocator` and
// releases everything it created before returning, on success and on error.
typedef loom_status_t (*loom_test_operation_fn_t)(loom_allocator_t allocator,
                                                  void* context);

typedef enum loom_test_sweep_mode_t {
  // Every injected failure must make the operation return an error.
  LOOM_TEST_SWEEP_STRICT = 0,
  // The operation may recover from an injected failure and return OK
  // (it has a fallback); it still must not crash or leak.
  LOOM_TEST_SWEEP_TOLERANT = 1,
} loom_test_sweep_mode_t;

// Runs `operation` once to count its allocations N (it must succeed), then
// N more times with allocation i failing, checking each time the result
// (per `mode`) and that no block stays live. In both modes the operation
// must allocate the same way on every run: a run in which allocation i is
// never requested fails the test, as does N = 0, so a sweep cannot pass
// without injecting every failure. Returns N.
int64_t loom_test_fault_sweep(loom_test_operation_fn_t operation, void* context,
                              loom_test_sweep_mode_t mode);

// A float scalar handle on the CPU of `context` (a new reference).
loom_tensor_handle_t* loom_test_scalar(loom_context_t* context, float value);

// The value of a float scalar handle, resolved (copied off its handler if
// need be) in `context`.
float loom_test_scalar_value(loom_context_t* context,
                             loom_tensor_handle_t* handle);

// An int32 scalar handle on the CPU of `context` (a new reference).
loom_tensor_handle_t* loom_test_int32_scalar(loom_context_t* context,
                                             int32_t value);

// A handle on the CPU of `context` (a new reference) of a dense tensor of
// `dtype` (float, double or int32) and shape dims[0, rank), its elements
// values[0, n) converted.
loom_tensor_handle_t* loom_test_tensor(loom_context_t* context,
                                       loom_dtype_t dtype, const float* values,
                                       int32_t rank, const int64_t* dims);

// Fails the test unless `handle` (resolved in `context`) holds `count`
// float or double elements equal to expected[0, count).
void loom_test_expect_values(loom_context_t* context,
                             loom_tensor_handle_t* handle,
                             const float* expected, int64_t count);

// As loom_test_expect_values, each element within `tolerance` of its
// expected value.
void loom_test_expect_values_near(loom_context_t* context,
                                  loom_tensor_handle_t* handle,
                                  const float* expected, int64_t count,
                                  double tolerance);

// Runs op `name` (a function's name or a call op with function attr "f" =
// `f` when not NULL) on x and y (either may be NULL) into *out (NULL on
// failure); returns the op's status.
loom_status_t loom_test_run2(loom_context_t* context, const char* name,
                             const char* f, loom_tensor_handle_t* x,
                             loom_tensor_handle_t* y,
                             loom_tensor_handle_t** out);

// f(x, y) = x * y + x, named `name`: over float, or (`type_attr` not NULL)
// over the type attr `type_attr`: {float, double}. A new reference.
loom_function_t* loom_test_mul_add_function(const char* name,
                                            const char* type_attr);

// Parses program `text` (`file` for messages) and calls its function
// `name` on arguments[0, n) (references moved in) with the program
// executor of `context`'s host, as `loom run` does; results[0, m) receive
// new references to the values it returned. At most 4 of each.
void loom_test_run_program(loom_context_t* context, const char* file,
                           const char* text, size_t size, const char* name,
                           loom_tensor_handle_t** arguments, int n,
                           loom_tensor_handle_t** results, int m);

// Runs collective op `name` of `input` in `context` (a group of
// `group_size` participants; string attrs merge_op and final_op set unless
// NULL) into *out (NULL on failure), releasing everything else it made.
loom_status_t loom_test_collective(loom_context_t* context, const char* name,
                                   loom_tensor_handle_t* input,
                                   int32_t group_size, int32_t group_key,
                                   int32_t instance_key, const char* merge,
                                   const char* final_op, float timeout,
                                   loom_tensor_handle_t** out);

// Runs CollectiveReduceV2 of `input` in `context` (a group of `group_size`
// participants, `merge` and `final_op` as TensorFlow names them) into *out
// (NULL on failure), releasing everything else it made.
loom_status_t loom_test_collective_reduce(
    loom_context_t* context, loom_tensor_handle_t* input, int32_t group_size,
    int32_t group_key, int32_t instance_key, const char* merge,
    const char* final_op, float timeout, loom_tensor_handle_t** out);

// A host context of `num_threads` threads for a test file's cases: made
// into *out_host by a cmocka group set-up, destroyed by its tear-down.
// Returns what cmocka expects of a set-up (0, or -1 on failure).
int loom_test_host_setup(int32_t num_threads, loom_host_context_t** out_host);
int loom_test_host_teardown(loom_host_context_t** host);

#endif  // LOOM_TESTS_SUPPORT_TEST_SUPPORT_H_
