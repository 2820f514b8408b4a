// Helpers shared by Loom's cmocka tests: status assertions and the
// fault-injection sweep.

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

// A float scalar handle of `context` holding `value` (a new reference).
loom_tensor_handle_t* loom_test_scalar(loom_context_t* context, float value);
// The value of a float scalar handle of `context`, waiting for it.
float loom_test_scalar_value(loom_context_t* context,
                             loom_tensor_handle_t* handle);

#endif  // LOOM_TESTS_SUPPORT_TEST_SUPPORT_H_
