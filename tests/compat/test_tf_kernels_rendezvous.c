// TF_GetRendezvous (tensorflow/c/kernels.h): kernels hand tensors to each
// other by key through their host context's rendezvous, on one thread or
// several; a receive waits until a tensor is sent, or until its
// cancellation manager cancels it or the rendezvous is aborted.

#include <pthread.h>
#include <time.h>

#include "loom/kernel.h"
#include "tensorflow/c/eager/c_api_experimental.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "test_support.h"

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  return loom_test_host_setup(2, &g_host);
}

static int teardown(void** state) {
  (void)state;
  return loom_test_host_teardown(&g_host);
}

static void assert_contains(const char* text, const char* substring) {
  if (!strstr(text, substring)) {
    fail_msg("'%s' does not contain '%s'", text, substring);
  }
}

static TF_RendezvousParsedKey key_of(const char* text) {
  TF_RendezvousParsedKey key = {(char*)text, (uint32_t)strlen(text)};
  return key;
}

// What a receive's done callback saw.
typedef struct received_t {
  pthread_mutex_t mutex;
  pthread_cond_t done_cond;
  bool done;
  TF_Code code;
  char message[160];
  float values[4];
  int64_t count;
  bool is_dead;
} received_t;

static void received_init(received_t* r) {
  memset(r, 0, sizeof(*r));
  pthread_mutex_init(&r->mutex, NULL);
  pthread_cond_init(&r->done_cond, NULL);
}

static void received_destroy(received_t* r) {
  pthread_mutex_destroy(&r->mutex);
  pthread_cond_destroy(&r->done_cond);
}

static void on_received(void* context,
                        TF_RendezvousDoneCallback_Params* params) {
  received_t* r = context;
  pthread_mutex_lock(&r->mutex);
  r->code = TF_GetCode(params->status);
  snprintf(r->message, sizeof(r->message), "%s", TF_Message(params->status));
  if (params->tensor) {
    r->count = TF_TensorElementCount(params->tensor);
    memcpy(r->values, TF_TensorData(params->tensor),
           sizeof(float) * (size_t)(r->count < 4 ? r->count : 4));
  }
  r->is_dead = params->is_dead;
  r->done = true;
  pthread_cond_broadcast(&r->done_cond);
  pthread_mutex_unlock(&r->mutex);
}

// A blocking receive: waits for the done callback.
static void wait_received(received_t* r) {
  pthread_mutex_lock(&r->mutex);
  while (!r->done) pthread_cond_wait(&r->done_cond, &r->mutex);
  pthread_mutex_unlock(&r->mutex);
}

static bool is_received(received_t* r) {
  pthread_mutex_lock(&r->mutex);
  bool done = r->done;
  pthread_mutex_unlock(&r->mutex);
  return done;
}

static void async_recv(const TF_RendezvousThunk* thunk, const char* key_text,
                       TFE_CancellationManager* manager, received_t* r) {
  TF_RendezvousParsedKey key = key_of(key_text);
  TF_RendezvousArgsStruct args;
  memset(&args, 0, sizeof(args));
  args.cancellation_manager = manager;
  TF_RendezvousAsyncRecv_Params params = {
      .context = NULL,
      .key = &key,
      .args = &args,
      .on_done = {.context = r, .callback = on_received},
  };
  thunk->async_recv.async_recv_func(thunk->async_recv.context, &params);
}

static TF_Tensor* float_tensor(const float* values, int64_t count) {
  TF_Tensor* t =
      TF_AllocateTensor(TF_FLOAT, &count, 1, sizeof(float) * (size_t)count);
  memcpy(TF_TensorData(t), values, sizeof(float) * (size_t)count);
  return t;
}

static TF_Code send(const TF_RendezvousThunk* thunk, const char* key_text,
                    TF_Tensor* tensor, char* message, size_t capacity) {
  TF_RendezvousParsedKey key = key_of(key_text);
  TF_RendezvousArgsStruct args;
  memset(&args, 0, sizeof(args));
  TF_Status* status = TF_NewStatus();
  TF_RendezvousSend_Params params = {.key = &key,
                                     .args = &args,
                                     .tensor = tensor,
                                     .is_dead = false,
                                     .status = status};
  thunk->send.send_func(thunk->send.context, &params);
  TF_Code code = TF_GetCode(status);
  if (message) snprintf(message, capacity, "%s", TF_Message(status));
  TF_DeleteStatus(status);
  return code;
}

//===----------------------------------------------------------------------===//
// Kernels: RdvSend sends its input under "tensor"; RdvRecv receives
// "tensor" (waiting for it) as its output; RdvGet keeps the thunk.
//===----------------------------------------------------------------------===//

static TF_RendezvousThunk g_thunk;

static void register_op(const char* name, bool input, bool output) {
  TF_OpDefinitionBuilder* builder = TF_NewOpDefinitionBuilder(name);
  if (input) TF_OpDefinitionBuilderAddInput(builder, "x: float");
  if (output) TF_OpDefinitionBuilderAddOutput(builder, "y: float");
  TF_OpDefinitionBuilderSetIsStateful(builder, true);
  TF_Status* status = TF_NewStatus();
  TF_RegisterOpDefinition(builder, status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

static void register_kernel(const char* op,
                            void (*compute)(void*, TF_OpKernelContext*)) {
  char name[64];
  snprintf(name, sizeof(name), "%sKernel", op);
  TF_Status* status = TF_NewStatus();
  TF_RegisterKernelBuilder(
      name, TF_NewKernelBuilder(op, "CPU", NULL, compute, NULL), status);
  if (TF_GetCode(status) != TF_OK) fail_msg("%s", TF_Message(status));
  TF_DeleteStatus(status);
}

static void send_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_Status* status = TF_NewStatus();
  TF_Tensor* input = NULL;
  TF_GetInput(ctx, 0, &input, status);
  TF_RendezvousThunk thunk = TF_GetRendezvous(ctx);
  TF_RendezvousParsedKey key = key_of("tensor");
  TF_RendezvousArgsStruct args;
  memset(&args, 0, sizeof(args));
  TF_RendezvousSend_Params params = {
      .key = &key, .args = &args, .tensor = input, .status = status};
  if (TF_GetCode(status) == TF_OK) {
    thunk.send.send_func(thunk.send.context, &params);
  }
  if (TF_GetCode(status) != TF_OK) TF_OpKernelContext_Failure(ctx, status);
  TF_DeleteTensor(input);  // the rendezvous keeps its own reference
  TF_DeleteStatus(status);
}

static void recv_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  TF_RendezvousThunk thunk = TF_GetRendezvous(ctx);
  received_t r;
  received_init(&r);
  async_recv(&thunk, "tensor", NULL, &r);
  wait_received(&r);
  TF_Status* status = TF_NewStatus();
  if (r.code != TF_OK) {
    TF_SetStatus(status, r.code, r.message);
    TF_OpKernelContext_Failure(ctx, status);
  } else {
    TF_Tensor* out = float_tensor(r.values, r.count);
    TF_SetOutput(ctx, 0, out, status);
    TF_DeleteTensor(out);
  }
  TF_DeleteStatus(status);
  received_destroy(&r);
}

static void get_compute(void* kernel, TF_OpKernelContext* ctx) {
  (void)kernel;
  g_thunk = TF_GetRendezvous(ctx);
}

static void register_kernels(void) {
  static bool registered = false;
  if (registered) return;
  registered = true;
  register_op("RdvSend", true, false);
  register_op("RdvRecv", false, true);
  register_op("RdvGet", false, false);
  register_kernel("RdvSend", send_compute);
  register_kernel("RdvRecv", recv_compute);
  register_kernel("RdvGet", get_compute);
}

static loom_tensor_t* float_vector(const float* values, int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_system(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(float) * (size_t)count);
  return tensor;
}

static loom_status_t run(loom_host_context_t* host, const char* op,
                         loom_tensor_t* input, loom_tensor_t** output) {
  loom_tensor_t* inputs[1] = {input};
  loom_tensor_t* outputs[1] = {NULL};
  loom_kernel_run_options_t options;
  memset(&options, 0, sizeof(options));
  options.host = host;
  int32_t count = 0;
  loom_status_t status = loom_kernel_run(&options, op, inputs, input ? 1 : 0,
                                         NULL, outputs, output ? 1 : 0, &count);
  if (output) *output = outputs[0];
  return status;
}

static void get_thunk(loom_host_context_t* host) {
  memset(&g_thunk, 0, sizeof(g_thunk));
  LOOM_ASSERT_OK(run(host, "RdvGet", NULL, NULL));
  assert_non_null(g_thunk.send.context);
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

static void send_then_receive_across_kernels(void** state) {
  (void)state;
  register_kernels();
  const float values[] = {1.5f, -2.0f, 3.25f};
  LOOM_ASSERT_OK(run(g_host, "RdvSend", float_vector(values, 3), NULL));
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(g_host, "RdvRecv", NULL, &out));
  assert_int_equal(loom_tensor_num_elements(out), 3);
  assert_memory_equal(loom_tensor_data(out), values, sizeof(values));
  loom_tensor_release(out);
}

typedef struct sender_t {
  loom_host_context_t* host;
  float value;
} sender_t;

static void* send_later(void* arg) {
  sender_t* sender = arg;
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  loom_status_t status =
      run(sender->host, "RdvSend", float_vector(&sender->value, 1), NULL);
  loom_status_free(status);
  return NULL;
}

static void receive_waits_for_a_send_on_another_thread(void** state) {
  (void)state;
  register_kernels();
  sender_t sender = {.host = g_host, .value = 7.0f};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, send_later, &sender), 0);
  loom_tensor_t* out = NULL;
  LOOM_ASSERT_OK(run(g_host, "RdvRecv", NULL, &out));  // blocks until sent
  pthread_join(thread, NULL);
  assert_int_equal(loom_tensor_num_elements(out), 1);
  assert_true(((const float*)loom_tensor_data(out))[0] == 7.0f);
  loom_tensor_release(out);
}

static void tensors_of_a_key_arrive_in_order_and_keys_are_apart(void** state) {
  (void)state;
  register_kernels();
  get_thunk(g_host);
  const float a = 1, b = 2, c = 3;
  TF_Tensor* ta = float_tensor(&a, 1);
  TF_Tensor* tb = float_tensor(&b, 1);
  TF_Tensor* tc = float_tensor(&c, 1);
  assert_int_equal(send(&g_thunk, "k", ta, NULL, 0), TF_OK);
  assert_int_equal(send(&g_thunk, "k", tb, NULL, 0), TF_OK);
  assert_int_equal(send(&g_thunk, "other", tc, NULL, 0), TF_OK);
  // The rendezvous holds its own references.
  TF_DeleteTensor(ta);
  TF_DeleteTensor(tb);
  TF_DeleteTensor(tc);
  received_t r[3];
  for (int i = 0; i < 3; ++i) received_init(&r[i]);
  async_recv(&g_thunk, "other", NULL, &r[0]);
  async_recv(&g_thunk, "k", NULL, &r[1]);
  async_recv(&g_thunk, "k", NULL, &r[2]);
  for (int i = 0; i < 3; ++i) {
    assert_true(is_received(&r[i]));  // sent before: no waiting
    assert_int_equal(r[i].code, TF_OK);
  }
  assert_true(r[0].values[0] == 3.0f);
  assert_true(r[1].values[0] == 1.0f);
  assert_true(r[2].values[0] == 2.0f);
  // Two receives wait; sends complete them in order.
  received_t w[2];
  for (int i = 0; i < 2; ++i) received_init(&w[i]);
  async_recv(&g_thunk, "q", NULL, &w[0]);
  async_recv(&g_thunk, "q", NULL, &w[1]);
  assert_false(is_received(&w[0]));
  TF_Tensor* td = float_tensor(&a, 1);
  assert_int_equal(send(&g_thunk, "q", td, NULL, 0), TF_OK);
  assert_true(is_received(&w[0]));
  assert_false(is_received(&w[1]));
  assert_int_equal(send(&g_thunk, "q", td, NULL, 0), TF_OK);
  assert_true(is_received(&w[1]));
  TF_DeleteTensor(td);
  for (int i = 0; i < 3; ++i) received_destroy(&r[i]);
  for (int i = 0; i < 2; ++i) received_destroy(&w[i]);
}

static void cancelling_a_waiting_receive_fails_it(void** state) {
  (void)state;
  register_kernels();
  get_thunk(g_host);
  TFE_CancellationManager* manager = TFE_NewCancellationManager();
  received_t r;
  received_init(&r);
  async_recv(&g_thunk, "never sent", manager, &r);
  assert_false(is_received(&r));
  TFE_CancellationManagerStartCancel(manager);
  assert_true(is_received(&r));
  assert_int_equal(r.code, TF_CANCELLED);
  assert_string_equal(r.message, "RecvAsync is cancelled.");
  // A receive with a cancelled manager fails at once.
  received_t again;
  received_init(&again);
  async_recv(&g_thunk, "never sent", manager, &again);
  assert_true(is_received(&again));
  assert_int_equal(again.code, TF_CANCELLED);
  assert_string_equal(again.message, "RecvAsync is cancelled.");
  // A later send under the key is not taken by the cancelled receives.
  const float one = 1;
  TF_Tensor* t = float_tensor(&one, 1);
  assert_int_equal(send(&g_thunk, "never sent", t, NULL, 0), TF_OK);
  TF_DeleteTensor(t);
  received_t last;
  received_init(&last);
  async_recv(&g_thunk, "never sent", NULL, &last);
  assert_true(is_received(&last));
  assert_int_equal(last.code, TF_OK);
  TFE_DeleteCancellationManager(manager);
  received_destroy(&r);
  received_destroy(&again);
  received_destroy(&last);
}

static void abort_fails_waiting_and_later_calls(void** state) {
  (void)state;
  register_kernels();
  // Aborting is for good: a host of its own.
  loom_host_context_t* host = NULL;
  assert_int_equal(loom_test_host_setup(1, &host), 0);
  get_thunk(host);
  received_t r;
  received_init(&r);
  async_recv(&g_thunk, "k", NULL, &r);
  TF_Status* abort_status = TF_NewStatus();
  TF_SetStatus(abort_status, TF_ABORTED, "step 3 failed");
  g_thunk.start_abort.start_abort_func(g_thunk.start_abort.context,
                                       abort_status);
  TF_DeleteStatus(abort_status);
  assert_true(is_received(&r));
  assert_int_equal(r.code, TF_ABORTED);
  assert_string_equal(r.message, "step 3 failed");
  const float one = 1;
  TF_Tensor* t = float_tensor(&one, 1);
  char message[160];
  assert_int_equal(send(&g_thunk, "k", t, message, sizeof(message)),
                   TF_ABORTED);
  assert_string_equal(message, "step 3 failed");
  TF_DeleteTensor(t);
  received_t later;
  received_init(&later);
  async_recv(&g_thunk, "k", NULL, &later);
  assert_true(is_received(&later));
  assert_int_equal(later.code, TF_ABORTED);
  received_destroy(&r);
  received_destroy(&later);
  // A tensor sent and never received is freed with the host.
  assert_int_equal(loom_test_host_teardown(&host), 0);
}

static void destroying_the_host_fails_a_waiting_receive(void** state) {
  (void)state;
  register_kernels();
  loom_host_context_t* host = NULL;
  assert_int_equal(loom_test_host_setup(1, &host), 0);
  get_thunk(host);
  TFE_CancellationManager* manager = TFE_NewCancellationManager();
  received_t r;
  received_init(&r);
  async_recv(&g_thunk, "k", manager, &r);
  assert_false(is_received(&r));
  assert_int_equal(loom_test_host_teardown(&host), 0);
  assert_true(is_received(&r));
  assert_int_equal(r.code, TF_ABORTED);
  assert_string_equal(r.message,
                      "the rendezvous was destroyed (its host context was) "
                      "before a tensor was sent under the key");
  // Its cancellation callback is gone with it.
  TFE_CancellationManagerStartCancel(manager);
  TFE_DeleteCancellationManager(manager);
  received_destroy(&r);
}

static void invalid_arguments_are_reported(void** state) {
  (void)state;
  register_kernels();
  get_thunk(g_host);
  char message[200];
  // A NULL tensor.
  assert_int_equal(send(&g_thunk, "k", NULL, message, sizeof(message)),
                   TF_INVALID_ARGUMENT);
  assert_string_equal(message,
                      "TF_RendezvousSend: key 'k': the tensor is NULL");
  // A NULL key.
  const float one = 1;
  TF_Tensor* t = float_tensor(&one, 1);
  TF_Status* status = TF_NewStatus();
  TF_RendezvousSend_Params params = {
      .key = NULL, .tensor = t, .status = status};
  g_thunk.send.send_func(g_thunk.send.context, &params);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_string_equal(TF_Message(status), "TF_RendezvousSend: the key is NULL");
  received_t r;
  received_init(&r);
  TF_RendezvousAsyncRecv_Params recv_params = {
      .key = NULL, .on_done = {.context = &r, .callback = on_received}};
  g_thunk.async_recv.async_recv_func(g_thunk.async_recv.context, &recv_params);
  assert_true(is_received(&r));
  assert_int_equal(r.code, TF_INVALID_ARGUMENT);
  assert_string_equal(r.message, "TF_RendezvousAsyncRecv: the key is NULL");
  // No kernel context: every function says so.
  TF_RendezvousThunk none = TF_GetRendezvous(NULL);
  params.key = NULL;
  TF_RendezvousParsedKey key = key_of("k");
  params.key = &key;
  none.send.send_func(none.send.context, &params);
  assert_int_equal(TF_GetCode(status), TF_INVALID_ARGUMENT);
  assert_contains(TF_Message(status),
                  "TF_RendezvousSend: the rendezvous is NULL (from "
                  "TF_GetRendezvous with a NULL context)");
  received_t r2;
  received_init(&r2);
  recv_params.key = &key;
  recv_params.on_done.context = &r2;
  none.async_recv.async_recv_func(none.async_recv.context, &recv_params);
  assert_true(is_received(&r2));
  assert_int_equal(r2.code, TF_INVALID_ARGUMENT);
  assert_contains(r2.message, "TF_RendezvousAsyncRecv: the rendezvous is NULL");
  TF_DeleteTensor(t);
  TF_DeleteStatus(status);
  received_destroy(&r);
  received_destroy(&r2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(send_then_receive_across_kernels),
      cmocka_unit_test(receive_waits_for_a_send_on_another_thread),
      cmocka_unit_test(tensors_of_a_key_arrive_in_order_and_keys_are_apart),
      cmocka_unit_test(cancelling_a_waiting_receive_fails_it),
      cmocka_unit_test(abort_fails_waiting_and_later_calls),
      cmocka_unit_test(destroying_the_host_fails_a_waiting_receive),
      cmocka_unit_test(invalid_arguments_are_reported),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
