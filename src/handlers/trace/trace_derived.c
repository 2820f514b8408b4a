// What the functions derived from a call share (trace_derived.h).

#include "handlers/trace/trace_derived.h"

#include "function/function_derived.h"
#include "handlers/autodiff/gradient_families.h"
#include "loom/trace.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

void loom__derived_key_put(loom__derived_key_t* key, const void* data,
                           size_t size) {
  if (key->bytes) memcpy(key->bytes + key->size, data, size);
  key->size += size;
}

void loom__derived_key_put_metadata(loom__derived_key_t* key, bool used,
                                    const loom_tensor_metadata_t* metadata) {
  unsigned char flag = used;
  loom__derived_key_put(key, &flag, 1);
  if (!used) return;
  int32_t head[2] = {(int32_t)metadata->dtype, metadata->shape.rank};
  loom__derived_key_put(key, head, sizeof(head));
  if (metadata->shape.rank > 0) {
    loom__derived_key_put(key, loom_shape_dims(&metadata->shape),
                          sizeof(int64_t) * (size_t)metadata->shape.rank);
  }
}

void loom__derived_name(loom_context_t* context, const char* base,
                        const char* kind, char* name, size_t capacity) {
  static _Atomic int64_t g_serial;
  bool short_base = strlen(base) + strlen(kind) + 24 < capacity;
  for (int32_t k = 0;; ++k) {
    if (short_base) {
      snprintf(name, capacity, "%s_%s_%" PRId32, base, kind, k);
    } else {
      snprintf(name, capacity, "call_%s_%" PRId64, kind,
               atomic_fetch_add_explicit(&g_serial, 1, memory_order_relaxed));
    }
    if (!loom_context_has_function(context, name)) return;
  }
}

loom_status_t loom__derived_find_or_make(loom_context_t* context,
                                         loom_function_t* base,
                                         const char* function, const char* kind,
                                         const loom__derived_builder_t* builder,
                                         loom_function_t** out_derived,
                                         bool* out_made) {
  *out_derived = NULL;
  *out_made = false;
  loom_allocator_t allocator = loom_allocator_system();
  loom__derived_key_t key = {NULL, 0};
  builder->write_key(builder->request, &key);  // counts
  size_t size = key.size;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, size, (void**)&key.bytes));
  key.size = 0;
  builder->write_key(builder->request, &key);
  bool found = false;
  loom__function_library_find_derived(context, base, key.bytes, size, &found,
                                      out_derived);
  if (!found) {
    char name[128];
    loom__derived_name(context, function, kind, name, sizeof(name));
    loom_function_t* made = NULL;
    // A body that cannot be traced is remembered as such (made NULL).
    loom_status_free(builder->trace(builder->request, name, &made));
    // No room (or the base left the library): the caller's own way.
    loom_status_free(loom__function_library_add_derived(
        context, base, key.bytes, size, made, out_derived));
    *out_made = made && *out_derived == made;
    loom_function_release(made);
  }
  loom_allocator_free(allocator, key.bytes);
  return loom_ok_status();
}

loom_status_t loom__derived_call(loom_context_t* context,
                                 const loom_function_t* derived,
                                 loom_tensor_handle_t* const* inputs, int32_t n,
                                 loom_tensor_handle_t** outputs, int32_t m) {
  const char* name = loom_function_name(derived);
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(context, name, &op));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  int32_t made = 0;
  if (!status) status = loom_eager_op_execute(op, outputs, m, &made);
  if (!status && made != m) {
    for (int32_t k = 0; k < made; ++k) {
      loom_tensor_handle_release(outputs[k]);
      outputs[k] = NULL;
    }
    status = loom_make_status(LOOM_STATUS_INTERNAL,
                              "function '%s' gave %d results, %d expected",
                              name, made, m);
  }
  loom_eager_op_destroy(op);
  return status;
}

loom_status_t loom__derived_trace(loom_context_t* context, const char* name,
                                  const loom_tensor_metadata_t* metadata,
                                  int32_t n, int32_t capacity,
                                  loom__derived_body_fn_t body,
                                  const void* request,
                                  loom_function_t** out_function) {
  loom_allocator_t allocator = loom_allocator_system();
  // params[n], outs[capacity]: owned
  size_t count = (size_t)(n + capacity) + 1;
  loom_tensor_handle_t** all = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*all) * count, (void**)&all));
  loom_tensor_handle_t** params = all;
  loom_tensor_handle_t** outs = all + n;
  int32_t num_outs = 0;
  loom_op_handler_t* trace = NULL;
  loom_status_t status = loom_trace_create_executing(context, name, &trace);
  bool entered = false;
  if (!status) {
    status = loom_context_enter_scope(context, trace);
    entered = !status;
  }
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_trace_add_parameter(trace, NULL, metadata[i].dtype,
                                      &metadata[i].shape, &params[i]);
  }
  if (!status) status = body(request, params, outs, &num_outs);
  if (entered) status = loom__derived_exit_scope(context, status);
  if (!status) {
    status = loom_trace_finish(trace, outs, num_outs, out_function);
  }
  loom_op_handler_release(trace);
  // (NULL past what was made, on errors too.)
  for (size_t i = 0; i < count; ++i) loom_tensor_handle_release(all[i]);
  loom_allocator_free(allocator, all);
  return status;
}

loom_status_t loom__derived_metadata(loom_tensor_handle_t* const* handles,
                                     int32_t n,
                                     loom_tensor_metadata_t** out_metadata) {
  loom_tensor_metadata_t* metadata = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      loom_allocator_system(), sizeof(*metadata) * ((size_t)n + 1),
      (void**)&metadata));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < n; ++i) {
    status = loom_tensor_handle_wait_metadata(handles[i], &metadata[i]);
  }
  if (status) {
    loom_allocator_free(loom_allocator_system(), metadata);
    return status;
  }
  *out_metadata = metadata;
  return loom_ok_status();
}

loom_status_t loom__derived_run(loom_context_t* context, const char* function,
                                const char* kind,
                                const loom__derived_builder_t* builder,
                                loom_tensor_handle_t* const* inputs, int32_t n,
                                loom_tensor_handle_t** outputs, int32_t m,
                                bool* out_done) {
  *out_done = false;
  loom_function_t* base = NULL;
  loom_status_t status = loom_context_find_function(context, function, &base);
  if (status) {
    loom_status_free(status);  // not a function of the library
    return loom_ok_status();
  }
  loom_function_t* derived = NULL;
  bool made = false;
  status = loom__derived_find_or_make(context, base, function, kind, builder,
                                      &derived, &made);
  if (!status && derived) {
    status = loom__derived_call(context, derived, inputs, n, outputs, m);
    *out_done = true;
  }
  loom_function_release(derived);
  loom_function_release(base);
  return status;
}

loom_status_t loom__derived_register_derivatives(const char* const* ops,
                                                 size_t n,
                                                 loom_gradient_fn_t gradient,
                                                 loom_jvp_fn_t jvp) {
  for (size_t i = 0; i < n; ++i) {
    loom_gradient_def_t gradient_def = {
        .struct_size = sizeof(gradient_def),
        .op_name = ops[i],
        .fn = gradient,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
        .outputs_used = LOOM_GRADIENT_USES_NONE,
    };
    loom_jvp_def_t jvp_def = {
        .struct_size = sizeof(jvp_def),
        .op_name = ops[i],
        .fn = jvp,
        .inputs_used = LOOM_GRADIENT_USES_ALL,
        .outputs_used = LOOM_GRADIENT_USES_NONE,
    };
    LOOM_RETURN_IF_ERROR(loom_gradient_register(&gradient_def));
    LOOM_RETURN_IF_ERROR(loom_jvp_register(&jvp_def));
  }
  return loom_ok_status();
}

loom_status_t loom__derived_exit_scope(loom_context_t* context,
                                       loom_status_t status) {
  loom_status_t exited = loom_context_exit_scope(context);
  if (!status) return exited;
  loom_status_free(exited);
  return status;
}

// The builders are installed as the library loads. libloom.a's users link
// this object through the anchor, which src/CMakeLists.txt names to the
// linker (nothing else references it); its constructor links in the
// builders' objects.
const int loom__trace_derived_anchor = 1;

__attribute__((constructor)) static void install_builders(void) {
  loom__trace_install_call_backward();
  loom__trace_install_call_jvp();
  loom__trace_install_call_batch();
  loom__trace_install_call_checked();
  // Registered with the built-in gradients, on their first use: nothing
  // is allocated as the library loads.
  loom__gradient_add_late_family(loom__trace_register_control_flow_gradients);
  loom__gradient_add_late_family(loom__trace_register_while_gradients);
}
