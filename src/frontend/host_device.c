// The process-wide host CPU: TensorFlow's TFE_NewTensorHandle makes handles
// without a context, so they live on a CPU handler of their own (a runtime
// on a host context without worker threads, made on first use and kept
// for the life of the process), which every context treats as its CPU.

#include <pthread.h>

#include "frontend/frontend_internal.h"

// Process-wide because TFE_NewTensorHandle(tensor, status) names no
// context: its handles belong to none, and outlive any.
loom_op_handler_t* _Atomic loom__g_host_cpu = NULL;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static loom_status_t g_error;
static loom_host_context_t* g_host;
static loom_runtime_t* g_runtime;

static void make_host_cpu(void) {
  loom_host_context_options_t options;
  loom_host_context_options_initialize(&options);
  options.num_threads = 0;  // its values are always available
  options.allocator = loom_allocator_system();
  g_error = loom_host_context_create(&options, &g_host);
  if (g_error) return;
  loom_runtime_options_t runtime_options;
  loom_runtime_options_initialize(&runtime_options, g_host);
  runtime_options.synchronous = true;
  g_error = loom_runtime_create(&runtime_options, &g_runtime);
  if (g_error) {
    loom_host_context_destroy(g_host);
    g_host = NULL;
    return;
  }
  atomic_store(&loom__g_host_cpu,
               loom_runtime_get_op_handler(g_runtime, "cpu"));
}

loom_status_t loom_host_handle_create(loom_tensor_t* tensor,
                                      loom_tensor_handle_t** out_handle) {
  if (!tensor || !out_handle) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_host_handle_create: %s is NULL",
                            !tensor ? "tensor" : "out_handle");
  }
  *out_handle = NULL;
  pthread_once(&g_once, make_host_cpu);
  if (g_error) return loom_status_clone(g_error);
  return loom_tensor_handle_create(atomic_load(&loom__g_host_cpu), tensor,
                                   out_handle);
}
