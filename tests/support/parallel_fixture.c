#include "parallel_fixture.h"

#include "loom/loom.h"

int loom_test_parallel_setup(int32_t num_cpu_devices,
                             loom_test_parallel_t* out) {
  *out = (loom_test_parallel_t){.context = NULL, .handler = NULL};
  LOOM_ASSERT_OK(loom_context_create(NULL, &out->context));
  LOOM_ASSERT_OK(
      loom_context_set_cpu_device_count(out->context, num_cpu_devices));
  const char* devices[] = {"CPU:0", "CPU:1"};
  LOOM_ASSERT_OK(
      loom_parallel_handler_create(out->context, devices, 2, &out->handler));
  return 0;
}

int loom_test_parallel_teardown(loom_test_parallel_t* fixture) {
  loom_op_handler_release(fixture->handler);
  loom_context_destroy(fixture->context);
  *fixture = (loom_test_parallel_t){.context = NULL, .handler = NULL};
  return 0;
}

loom_tensor_handle_t* loom_test_tensor_on(loom_context_t* context,
                                          const char* device,
                                          const float* values, int32_t rank,
                                          const int64_t* dims) {
  loom_tensor_handle_t* cpu =
      loom_test_tensor(context, LOOM_DTYPE_FLOAT, values, rank, dims);
  loom_op_handler_t* target = loom_context_find_handler(context, device);
  assert_non_null(target);
  loom_tensor_handle_t* out = NULL;
  LOOM_ASSERT_OK(loom_context_copy_to(context, cpu, target, &out));
  loom_tensor_handle_release(cpu);
  return out;
}

loom_tensor_handle_t* loom_test_parallel_pack2(
    const loom_test_parallel_t* fixture, loom_tensor_handle_t* a,
    loom_tensor_handle_t* b) {
  loom_tensor_handle_t* parts[2] = {a, b};
  loom_tensor_handle_t* value = NULL;
  LOOM_ASSERT_OK(loom_parallel_pack(fixture->handler, parts, 2, &value));
  return value;
}

void loom_test_expect_near(loom_context_t* context,
                           loom_tensor_handle_t* handle, const char* device,
                           const float* expected, int64_t count) {
  assert_non_null(handle);
  if (device) {
    const char* name = loom_context_device_name(context, handle);
    assert_non_null(name);
    if (!strstr(name, device)) {
      fail_msg("the value lives on '%s', expected '%s'", name, device);
    }
  }
  loom_test_expect_values_near(context, handle, expected, count, 1e-5);
}

void loom_test_parallel_expect(const loom_test_parallel_t* fixture,
                               loom_tensor_handle_t* value, const float* c0,
                               const float* c1, int64_t count) {
  loom_tensor_handle_t* parts[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_parallel_unpack(fixture->handler, value, parts, 2));
  loom_test_expect_near(fixture->context, parts[0],
                        loom_parallel_handler_device(fixture->handler, 0), c0,
                        count);
  loom_test_expect_near(fixture->context, parts[1],
                        loom_parallel_handler_device(fixture->handler, 1), c1,
                        count);
  loom_tensor_handle_release(parts[0]);
  loom_tensor_handle_release(parts[1]);
}
