// The corert_sync dialect's kernels: TFRT's core runtime in functions
// without chains (`attributes {tfrt.sync}`), whose values are set when the
// operation making them returns.
//
// Each wraps its corert kernel: an available chain stands in for the chain
// that kernel takes, the chain it returns is dropped, and the results are
// awaited before the kernel returns, so that a function of these runs its
// operations one after the other in textual order, as TFRT's synchronous
// executor does.

#include <stdio.h>
#include <string.h>

#include "function/program_dtype.h"
#include "function/program_executor.h"
#include "loom/host_context.h"

typedef struct sync_adapter_t {
  const program_kernel_t* wrapped;
  int32_t chain_argument;  // where the wrapped kernel takes a chain, or -1
  bool chain_result;       // the wrapped kernel's result 0 is a chain
} sync_adapter_t;

static void sync_kernel(loom_program_frame_t* frame, void* user_data) {
  const sync_adapter_t* adapter = user_data;
  loom_allocator_t allocator = frame->executor->allocator;
  int32_t extra_argument = adapter->chain_argument >= 0 ? 1 : 0;
  int32_t extra_result = adapter->chain_result ? 1 : 0;
  int32_t n = frame->num_arguments + extra_argument;
  int32_t m = frame->num_results + extra_result;
  program_value_vector_t values;
  program_value_vector_initialize(&values);
  loom_status_t status =
      program_value_vector_resize(&values, allocator, (size_t)n + (size_t)m);
  loom_async_value_t** arguments = program_value_vector_data(&values);
  loom_async_value_t** results = arguments + n;
  loom_async_value_t* chain = NULL;
  loom_async_value_t* chain_out = NULL;
  if (!status && extra_argument) {
    status = loom_program_value_create(allocator, &chain);
    if (!status) status = loom_program_value_set_chain(chain);
  }
  if (!status && extra_result) {
    status = loom_program_value_create(allocator, &chain_out);
  }
  if (status) {
    loom_async_value_release(chain);
    loom_async_value_release(chain_out);
    program_value_vector_deinitialize(&values, allocator);
    loom_program_frame_fail(frame, status);
    return;
  }
  for (int32_t i = 0, j = 0; i < n; ++i) {
    arguments[i] = i == adapter->chain_argument ? chain : frame->arguments[j++];
  }
  if (extra_result) results[0] = chain_out;
  for (int32_t i = 0; i < frame->num_results; ++i) {
    results[extra_result + i] = frame->results[i];
  }
  loom_program_frame_t call = *frame;
  call.arguments = arguments;
  call.num_arguments = n;
  call.results = results;
  call.num_results = m;
  adapter->wrapped->fn(&call, adapter->wrapped->user_data);
  // Errors were reported by the wrapped kernel and are in the results.
  loom_status_free(
      loom_host_context_await(frame->executor->host, results, (size_t)m));
  loom_async_value_release(chain);
  loom_async_value_release(chain_out);
  program_value_vector_deinitialize(&values, allocator);
}

loom_status_t loom__program_add_sync_kernel(
    loom_program_executor_t* executor, const char* name, const char* wrapped,
    int32_t chain_argument, bool chain_result, int32_t num_arguments,
    int32_t num_results) {
  const program_kernel_t* kernel = loom__program_find_kernel(executor, wrapped);
  if (!kernel) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "%s wraps %s, which is not registered", name,
                            wrapped);
  }
  sync_adapter_t* adapter = NULL;
  pthread_mutex_lock(&executor->mutex);
  loom_status_t status = loom__arena_allocate(
      &executor->arena, sizeof(*adapter), (void**)&adapter);
  pthread_mutex_unlock(&executor->mutex);
  LOOM_RETURN_IF_ERROR(status);
  adapter->wrapped = kernel;
  adapter->chain_argument = chain_argument;
  adapter->chain_result = chain_result;
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = sync_kernel,
                                   .user_data = adapter,
                                   .num_arguments = num_arguments,
                                   .num_results = num_results};
  return loom_program_executor_add_kernel(executor, &def);
}

static loom_status_t wrap(loom_program_executor_t* executor, const char* name,
                          const char* wrapped, int32_t chain_argument,
                          bool chain_result, int32_t num_arguments,
                          int32_t num_results) {
  return loom__program_add_sync_kernel(executor, name, wrapped, chain_argument,
                                       chain_result, num_arguments,
                                       num_results);
}

loom_status_t loom__program_register_corert_sync_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(wrap(executor, "corert_sync.get_op_handler",
                            "corert.get_op_handler", 0, false, 0, 1));
  LOOM_RETURN_IF_ERROR(wrap(executor, "corert_sync.register_op_handler",
                            "corert.register_op_handler", -1, true, 1, 0));
  LOOM_RETURN_IF_ERROR(wrap(executor, "corert_sync.executeop",
                            "corert.executeop", -1, false, -1, -1));
  LOOM_RETURN_IF_ERROR(wrap(executor, "corert_sync.const_dense_tensor",
                            "corert.const_dense_tensor", -1, false, 0, 1));
  LOOM_RETURN_IF_ERROR(wrap(executor, "corert_sync.print_tensorhandle",
                            "corert.print_tensorhandle", 1, true, 1, 0));
  char name[64];
  char wrapped[64];
  size_t num_spellings = 0;
  const program_dtype_spelling_t* spellings =
      loom__program_dtype_spellings(&num_spellings);
  for (size_t i = 0; i < num_spellings; ++i) {
    snprintf(wrapped, sizeof(wrapped), "corert.create_dense_tensor.%s",
             spellings[i].name);
    if (!loom__program_find_kernel(executor, wrapped)) continue;
    snprintf(name, sizeof(name), "corert_sync.create_dense_tensor.%s",
             spellings[i].name);
    LOOM_RETURN_IF_ERROR(wrap(executor, name, wrapped, -1, false, 0, 1));
  }
  return loom_ok_status();
}
