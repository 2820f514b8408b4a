// TensorFlow's next-pluggable-device C API on Loom, from inside kernels run
// by loom_kernel_run: plugin resources shared through the host context's
// resource manager, the single-process coordination service, and the
// UNIMPLEMENTED answers for variable infos, devices and PJRT.

#include "loom/kernel.h"
#include "tensorflow/c/experimental/next_pluggable_device/c_api.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  return loom_test_host_setup(1, &g_host);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_host_teardown(&g_host);
}

static void expect_status(TF_Status* status, TF_Code code,
                          const char* substring) {
  if (TF_GetCode(status) != code) {
    fail_msg("code %d, expected %d: %s", (int)TF_GetCode(status), (int)code,
             TF_Message(status));
  }
  if (!strstr(TF_Message(status), substring)) {
    fail_msg("'%s' does not contain '%s'", TF_Message(status), substring);
  }
}

// Registers op `name` (no inputs or outputs) with `compute` as its kernel.
static void register_op(const char* name,
                        void (*compute)(void*, TF_OpKernelContext*)) {
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(TF_NewOpDefinitionBuilder(name), status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  char kernel[64];
  snprintf(kernel, sizeof(kernel), "%sKernel", name);
  TF_RegisterKernelBuilder(
      kernel, TF_NewKernelBuilder(name, "CPU", NULL, compute, NULL), status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteStatus(status);
}

static loom_status_t run_op(const char* op, loom_host_context_t* host) {
  loom_kernel_run_options_t options;
  memset(&options, 0, sizeof(options));
  options.host = host;
  int32_t count = 0;
  return loom_kernel_run(&options, op, NULL, 0, NULL, NULL, 0, &count);
}

//===----------------------------------------------------------------------===//
// Plugin resources
//===----------------------------------------------------------------------===//

static int g_deleted;
static int g_created;
static int g_resource_a = 1;
static int g_resource_b = 2;
static void* g_looked_up;
static TF_Code g_create_code;
static TF_Code g_second_create_code;
static char g_second_create_message[200];
static TF_Code g_lookup_code;

static void delete_resource(void* resource) {
  (void)resource;
  g_deleted++;
}

static void* create_resource(void* args) {
  g_created++;
  return args;
}

static void resource_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_CreatePluginResource(ctx, "plugin", "table", &g_resource_a,
                          delete_resource, status);
  g_create_code = TF_GetCode(status);
  TF_CreatePluginResource(ctx, "plugin", "table", &g_resource_b,
                          delete_resource, status);
  g_second_create_code = TF_GetCode(status);
  snprintf(g_second_create_message, sizeof(g_second_create_message), "%s",
           TF_Message(status));
  // Found: create_func is not called.
  TF_LookupOrCreatePluginResource(ctx, "plugin", "table", &g_looked_up,
                                  create_resource, &g_resource_b,
                                  delete_resource, status);
  g_lookup_code = TF_GetCode(status);
  TF_DeleteStatus(status);
}

static void* g_made;

static void lookup_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_LookupOrCreatePluginResource(ctx, "", "made", &g_made, create_resource,
                                  &g_resource_b, delete_resource, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_DeleteStatus(status);
}

static void plugin_resources_are_shared_by_name(void** state) {
  (void)state;
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 1;
  loom_host_context_t* host = NULL;
  LOOM_ASSERT_OK(loom_host_context_create(&options, &host));
  g_deleted = 0;
  g_created = 0;
  register_op("NpdResource", resource_compute);
  register_op("NpdLookup", lookup_compute);

  LOOM_ASSERT_OK(run_op("NpdResource", host));
  assert_int_equal(g_create_code, TF_OK);
  // The second resource was not stored: dropped at once.
  assert_int_equal(g_second_create_code, TF_ALREADY_EXISTS);
  assert_string_equal(g_second_create_message,
                      "TF_CreatePluginResource: plugin resource 'table' "
                      "already exists in container 'plugin'");
  assert_int_equal(g_deleted, 1);
  assert_int_equal(g_lookup_code, TF_OK);
  assert_ptr_equal(g_looked_up, &g_resource_a);
  assert_int_equal(g_created, 0);

  // Made once, found by the next kernel.
  LOOM_ASSERT_OK(run_op("NpdLookup", host));
  LOOM_ASSERT_OK(run_op("NpdLookup", host));
  assert_int_equal(g_created, 1);
  assert_ptr_equal(g_made, &g_resource_b);

  // The host context's resources go with it.
  loom_host_context_destroy(host);
  assert_int_equal(g_deleted, 3);
}

static void plugin_resource_arguments_are_checked(void** state) {
  (void)state;
  TF_Status* status = TF_NewStatus();
  TF_CreatePluginResource(NULL, "c", "r", &g_resource_a, delete_resource,
                          status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_CreatePluginResource: the kernel context is NULL");
  void* out = &g_resource_a;
  TF_LookupOrCreatePluginResource(NULL, "c", "r", &out, NULL, NULL,
                                  delete_resource, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_LookupOrCreatePluginResource: create_func is NULL");
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// Coordination service
//===----------------------------------------------------------------------===//

typedef struct coordination_seen_t {
  bool initialized;
  bool same_agent;
  TF_Code insert_code;
  TF_Code duplicate_code;
  char duplicate_message[160];
  char value[32];
  TF_Code missing_code;
  char missing_message[200];
  bool missing_is_null;
  TF_Code deleted_code;
  TF_Code sibling_code;
  char sibling[32];
} coordination_seen_t;

static coordination_seen_t g_seen;

static void copy_buffer(char* out, size_t capacity, const TF_Buffer* buffer) {
  snprintf(out, capacity, "%.*s", (int)buffer->length,
           (const char*)buffer->data);
}

static void coordination_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  coordination_seen_t* seen = &g_seen;
  TF_CoordinationServiceAgent* agent = TF_GetCoordinationServiceAgent(ctx);
  seen->initialized = TF_CoordinationServiceIsInitialized(agent);
  seen->same_agent = agent == TF_GetCoordinationServiceAgent(ctx);
  TF_Status* status = TF_NewStatus();
  TF_CoordinationServiceInsertKeyValue("job/worker/0", "address:1", agent,
                                       status);
  seen->insert_code = TF_GetCode(status);
  TF_CoordinationServiceInsertKeyValue("job/worker/1", "address:2", agent,
                                       status);
  TF_CoordinationServiceInsertKeyValue("jobless", "x", agent, status);
  TF_CoordinationServiceInsertKeyValue("job/worker/0", "other", agent, status);
  seen->duplicate_code = TF_GetCode(status);
  snprintf(seen->duplicate_message, sizeof(seen->duplicate_message), "%s",
           TF_Message(status));
  TF_Buffer* value =
      TF_CoordinationServiceGetKeyValue("job/worker/0", agent, status);
  assert_non_null(value);
  copy_buffer(seen->value, sizeof(seen->value), value);
  TF_DeleteBuffer(value);
  TF_Buffer* missing = TF_CoordinationServiceGetKeyValue("nope", agent, status);
  seen->missing_is_null = missing == NULL;
  seen->missing_code = TF_GetCode(status);
  snprintf(seen->missing_message, sizeof(seen->missing_message), "%s",
           TF_Message(status));
  // Deleting a directory deletes the keys under it, not "jobless".
  TF_CoordinationServiceDeleteKeyValue("job", agent, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_Buffer* gone =
      TF_CoordinationServiceGetKeyValue("job/worker/1", agent, status);
  assert_null(gone);
  seen->deleted_code = TF_GetCode(status);
  TF_Buffer* sibling =
      TF_CoordinationServiceGetKeyValue("jobless", agent, status);
  seen->sibling_code = TF_GetCode(status);
  if (sibling) copy_buffer(seen->sibling, sizeof(seen->sibling), sibling);
  TF_DeleteBuffer(sibling);
  // Deleting what is not there is fine.
  TF_CoordinationServiceDeleteKeyValue("job", agent, status);
  assert_int_equal(TF_GetCode(status), TF_OK);
  TF_CoordinationServiceDeleteKeyValue("jobless", agent, status);
  TF_DeleteStatus(status);
}

static void coordination_service_stores_key_values(void** state) {
  (void)state;
  memset(&g_seen, 0, sizeof(g_seen));
  register_op("NpdCoordination", coordination_compute);
  LOOM_ASSERT_OK(run_op("NpdCoordination", g_host));
  assert_true(g_seen.initialized);
  assert_true(g_seen.same_agent);
  assert_int_equal(g_seen.insert_code, TF_OK);
  assert_int_equal(g_seen.duplicate_code, TF_ALREADY_EXISTS);
  assert_string_equal(g_seen.duplicate_message,
                      "TF_CoordinationServiceInsertKeyValue: key "
                      "'job/worker/0' already has a value");
  assert_string_equal(g_seen.value, "address:1");
  assert_true(g_seen.missing_is_null);
  assert_int_equal(g_seen.missing_code, TF_NOT_FOUND);
  assert_string_equal(g_seen.missing_message,
                      "TF_CoordinationServiceGetKeyValue: key 'nope' has no "
                      "value (in one process no other task can insert it)");
  assert_int_equal(g_seen.deleted_code, TF_NOT_FOUND);
  assert_int_equal(g_seen.sibling_code, TF_OK);
  assert_string_equal(g_seen.sibling, "x");
}

static void coordination_service_arguments_are_checked(void** state) {
  (void)state;
  assert_null(TF_GetCoordinationServiceAgent(NULL));
  assert_false(TF_CoordinationServiceIsInitialized(NULL));
  TF_Status* status = TF_NewStatus();
  TF_CoordinationServiceInsertKeyValue("k", "v", NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_CoordinationServiceInsertKeyValue: the agent is NULL");
  assert_null(TF_CoordinationServiceGetKeyValue(NULL, NULL, status));
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_CoordinationServiceGetKeyValue: the key is NULL");
  TF_CoordinationServiceDeleteKeyValue("k", NULL, status);
  expect_status(status, TF_INVALID_ARGUMENT,
                "TF_CoordinationServiceDeleteKeyValue: the agent is NULL");
  TF_DeleteStatus(status);
}

//===----------------------------------------------------------------------===//
// What Loom does not have
//===----------------------------------------------------------------------===//

static void variable_infos_devices_and_pjrt_are_unimplemented(void** state) {
  (void)state;
  assert_null(TF_GetDevice(NULL));
  TF_Status* status = TF_NewStatus();
  assert_null(TF_CreateVariableInfoFromContext(NULL, 0, status));
  expect_status(status, TF_UNIMPLEMENTED, "TF_CreateVariableInfoFromContext: ");
  TF_LockVariableInfos(NULL, 0, status);
  expect_status(status, TF_UNIMPLEMENTED, "TF_LockVariableInfos: ");
  TF_AllocateTempForVariableInfo(NULL, NULL, status);
  expect_status(status, TF_UNIMPLEMENTED, "TF_AllocateTempForVariableInfo: ");
  assert_null(TF_GetTensorFromVariableInfo(NULL, status));
  expect_status(status, TF_UNIMPLEMENTED, "TF_GetTensorFromVariableInfo: ");
  TF_DeleteVariableInfo(NULL);
  TF_CreateAndSetPjRtCApiClient("CPU", status, NULL, 0);
  expect_status(status, TF_UNIMPLEMENTED,
                "TF_CreateAndSetPjRtCApiClient: Loom has no PJRT");
  assert_null(TF_GetPjRtCClient("CPU", status));
  expect_status(status, TF_UNIMPLEMENTED, "TF_GetPjRtCClient: ");
  assert_null(TF_GetPjRtCBuffer(NULL, status));
  expect_status(status, TF_UNIMPLEMENTED, "TF_GetPjRtCBuffer: ");
  TF_CreatePjRtBuffer(NULL, NULL, "CPU", status);
  expect_status(status, TF_UNIMPLEMENTED, "TF_CreatePjRtBuffer: ");
  TF_DeleteStatus(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plugin_resources_are_shared_by_name),
      cmocka_unit_test(plugin_resource_arguments_are_checked),
      cmocka_unit_test(coordination_service_stores_key_values),
      cmocka_unit_test(coordination_service_arguments_are_checked),
      cmocka_unit_test(variable_infos_devices_and_pjrt_are_unimplemented),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
