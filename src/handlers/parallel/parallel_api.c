// loom/parallel.h: pack and unpack as ops, the handler's accessors, and the
// gradients of pack and unpack (each other).

#include <pthread.h>
#include <string.h>

#include "handlers/parallel/parallel_internal.h"
#include "loom/autodiff.h"

static loom_status_t not_parallel(const char* function,
                                  const loom_op_handler_t* handler) {
  if (!handler) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: handler is NULL",
                            function);
  }
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: the handler is not a parallel handler (type "
                          "'%s')",
                          function, loom_op_handler_type_name(handler));
}

int32_t loom_parallel_handler_num_components(const loom_op_handler_t* handler) {
  const loom__parallel_t* shared = loom__parallel_of(handler);
  return shared ? shared->num_components : 0;
}

const char* loom_parallel_handler_device(const loom_op_handler_t* handler,
                                         int32_t index) {
  const loom__parallel_t* shared = loom__parallel_of(handler);
  if (!shared || index < 0 || index >= shared->num_components) return NULL;
  return shared->devices[index];
}

bool loom_parallel_is_parallel_value(const loom_tensor_handle_t* handle) {
  return loom__parallel_tensor_of(handle) != NULL;
}

loom_status_t loom_parallel_pack(loom_op_handler_t* handler,
                                 loom_tensor_handle_t* const* values,
                                 int32_t count,
                                 loom_tensor_handle_t** out_value) {
  static const char kFunction[] = "loom_parallel_pack";
  const loom__parallel_t* shared = loom__parallel_of(handler);
  if (!shared) return not_parallel(kFunction, handler);
  if (!values || !out_value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !values ? "values" : "out_value");
  }
  *out_value = NULL;
  if (count != shared->num_components) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %d values for parallel handler '%s' of %d "
                            "components",
                            kFunction, (int)count, shared->name,
                            (int)shared->num_components);
  }
  for (int32_t k = 0; k < count; ++k) {
    if (!values[k]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: values[%d] is NULL", kFunction, (int)k);
    }
  }
  const char* name = loom_context_handler_name(shared->context, handler);
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_eager_op_create(shared->context, "ParallelPack", &op));
  loom_status_t status =
      loom_eager_op_set_device(op, name ? name : shared->name);
  if (!status) status = loom_eager_op_add_input_list(op, values, count);
  int32_t results = 0;
  if (!status) status = loom_eager_op_execute(op, out_value, 1, &results);
  loom_eager_op_destroy(op);
  return status;
}

loom_status_t loom_parallel_unpack(loom_op_handler_t* handler,
                                   loom_tensor_handle_t* value,
                                   loom_tensor_handle_t** out_components,
                                   int32_t capacity) {
  static const char kFunction[] = "loom_parallel_unpack";
  const loom__parallel_t* shared = loom__parallel_of(handler);
  if (!shared) return not_parallel(kFunction, handler);
  if (!value || !out_components) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kFunction, !value ? "value" : "out_components");
  }
  int32_t n = shared->num_components;
  if (capacity != n) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: capacity %d for parallel handler '%s' of %d "
                            "components",
                            kFunction, (int)capacity, shared->name, (int)n);
  }
  for (int32_t k = 0; k < n; ++k) out_components[k] = NULL;
  if (loom__parallel_of(loom_tensor_handle_handler(value)) != shared ||
      !loom__parallel_tensor_of(value)) {
    const char* where = loom_context_device_name(shared->context, value);
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: the value lives on '%s', not on parallel "
        "handler '%s'",
        kFunction,
        where ? where
              : loom_op_handler_type_name(loom_tensor_handle_handler(value)),
        shared->name);
  }
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_eager_op_create(shared->context, "ParallelUnpack", &op));
  loom_status_t status =
      loom_op_attrs_set_i64(loom_eager_op_attrs(op), "num_components", n);
  if (!status) status = loom_eager_op_add_input(op, value);
  int32_t results = 0;
  if (!status) status = loom_eager_op_execute(op, out_components, n, &results);
  loom_eager_op_destroy(op);
  return status;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

// The gradient of ParallelUnpack packs the components' gradients (zeros
// for those no gradient reached) onto the handler of the unpacked value.
static loom_status_t unpack_grad(loom_gradient_context_t* context,
                                 loom_tensor_handle_t* const* dy,
                                 loom_tensor_handle_t** dx, void* user_data) {
  (void)user_data;
  loom_tensor_handle_t* input = loom_gradient_context_input(context, 0);
  loom_op_handler_t* handler = loom_tensor_handle_handler(input);
  const loom__parallel_t* shared = loom__parallel_of(handler);
  if (!shared) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the gradient of ParallelUnpack: its input is not "
                            "a parallel value");
  }
  int32_t n = loom_gradient_context_num_outputs(context);
  loom_tensor_handle_t* stack_parts[8] = {NULL};
  loom_tensor_handle_t** parts = stack_parts;
  if (n > 8) {
    LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
        shared->allocator, sizeof(*parts) * (size_t)n, (void**)&parts));
  }
  loom_status_t status = loom_ok_status();
  for (int32_t k = 0; k < n && !status; ++k) {
    if (dy[k]) {
      loom_tensor_handle_retain(dy[k]);
      parts[k] = dy[k];
      continue;
    }
    loom_eager_op_t* op = NULL;
    status = loom_eager_op_create(shared->context, "ZerosLike", &op);
    if (!status) status = loom_eager_op_set_device(op, shared->devices[k]);
    if (!status) {
      status =
          loom_eager_op_add_input(op, loom_gradient_context_output(context, k));
    }
    int32_t count = 0;
    if (!status) status = loom_eager_op_execute(op, &parts[k], 1, &count);
    loom_eager_op_destroy(op);
  }
  if (!status) status = loom_parallel_pack(handler, parts, n, &dx[0]);
  for (int32_t k = 0; k < n; ++k) loom_tensor_handle_release(parts[k]);
  if (parts != stack_parts) loom_allocator_free(shared->allocator, parts);
  return status;
}

// The gradient of ParallelPack unpacks the gradient of the parallel value.
static loom_status_t pack_grad(loom_gradient_context_t* context,
                               loom_tensor_handle_t* const* dy,
                               loom_tensor_handle_t** dx, void* user_data) {
  (void)user_data;
  if (!dy[0]) return loom_ok_status();
  loom_op_handler_t* handler = loom_tensor_handle_handler(dy[0]);
  if (!loom__parallel_of(handler)) {
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "the gradient of ParallelPack: the gradient of "
                            "its result is not a parallel value");
  }
  return loom_parallel_unpack(handler, dy[0], dx,
                              loom_gradient_context_num_inputs(context));
}

static pthread_once_t g_gradients_once = PTHREAD_ONCE_INIT;
static loom_status_t g_gradients_status;

static void register_gradients(void) {
  const loom_gradient_def_t defs[] = {
      {.struct_size = sizeof(loom_gradient_def_t),
       .op_name = "ParallelUnpack",
       .fn = unpack_grad,
       .inputs_used = LOOM_GRADIENT_USES(0),
       .outputs_used = LOOM_GRADIENT_USES_ALL},
      {.struct_size = sizeof(loom_gradient_def_t),
       .op_name = "ParallelPack",
       .fn = pack_grad},
  };
  for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); ++i) {
    loom_status_t status = loom_gradient_register(&defs[i]);
    if (status && loom_status_code(status) != LOOM_STATUS_ALREADY_EXISTS) {
      g_gradients_status = status;
      return;
    }
    loom_status_free(status);
  }
}

loom_status_t loom__parallel_register_gradients(void) {
  pthread_once(&g_gradients_once, register_gradients);
  return loom_status_clone(g_gradients_status);
}
