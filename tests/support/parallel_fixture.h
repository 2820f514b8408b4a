// The fixture the parallel handler's tests share: a context with CPU
// devices and a parallel handler over two of them, float tensors on a
// device, packing two values, and checking a value per component.

#ifndef LOOM_TESTS_SUPPORT_PARALLEL_FIXTURE_H_
#define LOOM_TESTS_SUPPORT_PARALLEL_FIXTURE_H_

#include "loom/eager.h"
#include "loom/parallel.h"
#include "test_support.h"

typedef struct loom_test_parallel_t {
  loom_context_t* context;
  loom_op_handler_t* handler;  // two components
} loom_test_parallel_t;

// Makes *out: a context with `num_cpu_devices` (at least 2) CPU devices and
// a parallel handler over CPU:0 and CPU:1. Returns what cmocka expects of a
// group set-up (0); fails the test otherwise.
int loom_test_parallel_setup(int32_t num_cpu_devices,
                             loom_test_parallel_t* out);

// Releases the handler and destroys the context; returns 0.
int loom_test_parallel_teardown(loom_test_parallel_t* fixture);

// A float tensor of shape dims[0, rank) holding values[0, n) on `device`
// ("CPU:1") of `context` (a new reference).
loom_tensor_handle_t* loom_test_tensor_on(loom_context_t* context,
                                          const char* device,
                                          const float* values, int32_t rank,
                                          const int64_t* dims);

// The parallel value pack(a, b) of fixture->handler (a new reference; a
// and b keep theirs).
loom_tensor_handle_t* loom_test_parallel_pack2(
    const loom_test_parallel_t* fixture, loom_tensor_handle_t* a,
    loom_tensor_handle_t* b);

// Fails the test unless `handle` lives on a device whose name contains
// `device` (NULL: any) and holds `count` float or double elements within
// 1e-5 of expected[0, count).
void loom_test_expect_near(loom_context_t* context,
                           loom_tensor_handle_t* handle, const char* device,
                           const float* expected, int64_t count);

// Unpacks `value`, a parallel value of fixture->handler, and checks its
// components, each on its own device, against c0 and c1 as
// loom_test_expect_near does.
void loom_test_parallel_expect(const loom_test_parallel_t* fixture,
                               loom_tensor_handle_t* value, const float* c0,
                               const float* c1, int64_t count);

#endif  // LOOM_TESTS_SUPPORT_PARALLEL_FIXTURE_H_
