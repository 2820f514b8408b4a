// The parallel handler's own ops: CopyOn broadcasts a tensor to every
// component (and re-homes the components of another parallel handler's
// value with as many); CopyOnGrad sums the components back onto one
// device (AddN); CopyOff is refused unless every component holds the same
// value; CopyOffGrad broadcasts as CopyOn does. ParallelPack takes one
// tensor per component where it lives; ParallelUnpack gives them back.

#include <string.h>

#include "handlers/parallel/parallel_internal.h"

typedef enum own_op_t {
  kNotOwn = 0,
  kCopyOn,
  kCopyOnGrad,
  kCopyOff,
  kCopyOffGrad,
  kPack,
  kUnpack,
} own_op_t;

static own_op_t own_op(const char* name) {
  if (name[0] == 'C') {
    if (strcmp(name, "CopyOn") == 0) return kCopyOn;
    if (strcmp(name, "CopyOnGrad") == 0) return kCopyOnGrad;
    if (strcmp(name, "CopyOff") == 0) return kCopyOff;
    if (strcmp(name, "CopyOffGrad") == 0) return kCopyOffGrad;
  } else if (name[0] == 'P') {
    if (strcmp(name, "ParallelPack") == 0) return kPack;
    if (strcmp(name, "ParallelUnpack") == 0) return kUnpack;
  }
  return kNotOwn;
}

// A string attribute ("" when missing).
static void string_attr(const loom_op_attrs_t* attrs, const char* name,
                        char* buffer, size_t capacity) {
  loom_attr_value_t value;
  buffer[0] = '\0';
  if (attrs && loom_op_attrs_get(attrs, name, &value) &&
      value.kind == LOOM_ATTR_KIND_STRING) {
    snprintf(buffer, capacity, "%.*s", (int)value.u.string.size,
             value.u.string.data);
  }
}

// The components of `input` for this handler (new references in
// components[0, n)): a broadcast of a tensor of another handler, the
// components of another parallel handler's value with as many.
static loom_status_t broadcast(const loom__parallel_t* shared,
                               const char* op_name, loom_tensor_handle_t* input,
                               loom_tensor_handle_t** components) {
  int32_t n = shared->num_components;
  loom__parallel_tensor_t* tensor = loom__parallel_tensor_of(input);
  if (tensor && tensor->num_components != n) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s onto parallel handler '%s' (%d components): the tensor is a "
        "parallel value of '%s' with %d components",
        op_name, shared->name, (int)n,
        loom_op_handler_device_name(loom_tensor_handle_handler(input)),
        (int)tensor->num_components);
  }
  for (int32_t k = 0; k < n; ++k) {
    loom_status_t status = loom_context_copy_to(
        shared->context, tensor ? tensor->components[k] : input,
        shared->components[k], &components[k]);
    if (status) {
      for (int32_t j = 0; j < k; ++j) {
        loom_tensor_handle_release(components[j]);
        components[j] = NULL;
      }
      return status;
    }
  }
  return loom_ok_status();
}

// The sum of the components of `input` on the device `device_name` (""
// for the first component's), a new reference.
static loom_status_t sum_components(const loom__parallel_t* shared,
                                    const loom__parallel_tensor_t* tensor,
                                    const char* device_name,
                                    loom_tensor_handle_t** out) {
  loom_op_handler_t* target = shared->components[0];
  if (device_name[0]) {
    target = loom_context_find_handler(shared->context, device_name);
    if (!target) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "CopyOnGrad on parallel handler '%s': "
                              "original_device '%s' is not a device of the "
                              "context",
                              shared->name, device_name);
    }
  }
  int32_t n = tensor->num_components;
  loom_tensor_handle_t* stack_parts[8];
  loom_tensor_handle_t** parts = stack_parts;
  if (n > 8) {
    LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
        shared->allocator, sizeof(*parts) * (size_t)n, (void**)&parts));
  }
  loom_status_t status = loom_ok_status();
  int32_t copied = 0;
  for (; copied < n && !status; ++copied) {
    status = loom_context_copy_to(shared->context, tensor->components[copied],
                                  target, &parts[copied]);
  }
  if (status) copied--;
  if (!status && n == 1) {
    *out = parts[0];
    parts[0] = NULL;
  } else if (!status) {
    loom_eager_op_t* op = NULL;
    status = loom_eager_op_create(shared->context, "AddN", &op);
    const char* name = loom_context_handler_name(shared->context, target);
    if (!status) status = loom_eager_op_set_device(op, name ? name : "");
    if (!status) status = loom_eager_op_add_input_list(op, parts, n);
    int32_t count = 0;
    if (!status) status = loom_eager_op_execute(op, out, 1, &count);
    loom_eager_op_destroy(op);
  }
  for (int32_t k = 0; k < copied; ++k) loom_tensor_handle_release(parts[k]);
  if (parts != stack_parts) loom_allocator_free(shared->allocator, parts);
  return status;
}

// CopyOff: the value every component holds, on the device asked for (the
// context's CPU by default), or an error naming the handler.
static loom_status_t copy_off(const loom__parallel_t* shared,
                              loom_tensor_handle_t* input,
                              const char* new_device,
                              loom_tensor_handle_t** out) {
  // The components' values, once computed (an asynchronous context may
  // still be running them; a component's error is the copy's).
  loom__parallel_tensor_t* tensor = loom_tensor_handle_representation(input);
  for (int32_t k = 0; k < tensor->num_components; ++k) {
    loom_tensor_t* component = NULL;
    LOOM_RETURN_IF_ERROR(loom_context_resolve(
        shared->context, tensor->components[k], &component));
    loom_tensor_release(component);
  }
  loom_tensor_t* value = NULL;
  loom_status_t status = loom_tensor_handle_static_value(input, &value);
  if (status) {
    loom_status_t error = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "CopyOff: cannot copy a parallel value off parallel handler '%s' "
        "(%d components): its components differ (%s); unpack it with "
        "loom_parallel_unpack or reduce it first",
        shared->name, (int)shared->num_components, loom_status_message(status));
    loom_status_free(status);
    return error;
  }
  loom_tensor_release(value);
  loom_op_handler_t* target = loom_context_cpu(shared->context);
  if (new_device[0]) {
    loom_op_handler_t* found =
        loom_context_find_handler(shared->context, new_device);
    if (found && loom_op_handler_is_final(found)) target = found;
  }
  return loom_context_copy_to(shared->context, tensor->components[0], target,
                              out);
}

static loom_status_t pack(loom_op_handler_t* handler,
                          const loom__parallel_t* shared,
                          loom_op_invocation_t* invocation,
                          loom_tensor_handle_t** components) {
  int32_t n = shared->num_components;
  if (invocation->num_arguments != n) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "ParallelPack on parallel handler '%s': %d "
                            "values for %d components",
                            shared->name, (int)invocation->num_arguments,
                            (int)n);
  }
  loom_dtype_t dtype = loom_tensor_handle_dtype(invocation->arguments[0]);
  for (int32_t k = 0; k < n; ++k) {
    loom_tensor_handle_t* value = invocation->arguments[k];
    loom_status_t status = loom_ok_status();
    if (loom__parallel_tensor_of(value)) {
      status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "ParallelPack on parallel handler '%s': "
                                "value %d is a parallel value already",
                                shared->name, (int)k);
    } else if (loom_tensor_handle_dtype(value) != dtype) {
      status = loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "ParallelPack on parallel handler '%s': value %d is %s, value 0 "
          "is %s",
          shared->name, (int)k,
          loom_dtype_name(loom_tensor_handle_dtype(value)),
          loom_dtype_name(dtype));
    } else {
      status = loom_context_copy_to(shared->context, value,
                                    shared->components[k], &components[k]);
    }
    if (status) {
      for (int32_t j = 0; j < k; ++j) {
        loom_tensor_handle_release(components[j]);
        components[j] = NULL;
      }
      return status;
    }
  }
  return loom__parallel_wrap(handler, components, &invocation->results[0]);
}

static loom_status_t unpack(const loom__parallel_t* shared,
                            loom_op_invocation_t* invocation) {
  loom_tensor_handle_t* input = invocation->arguments[0];
  loom__parallel_tensor_t* tensor = loom__parallel_tensor_of(input);
  if (!tensor ||
      loom__parallel_of(loom_tensor_handle_handler(input)) != shared) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "ParallelUnpack on parallel handler '%s': the "
                            "input is not one of its parallel values",
                            shared->name);
  }
  if (invocation->num_results != shared->num_components) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "ParallelUnpack on parallel handler '%s': %d "
                            "results asked for %d components",
                            shared->name, (int)invocation->num_results,
                            (int)shared->num_components);
  }
  for (int32_t k = 0; k < shared->num_components; ++k) {
    loom_tensor_handle_retain(tensor->components[k]);
    invocation->results[k] = tensor->components[k];
  }
  return loom_ok_status();
}

static loom_status_t run_own_op(loom_op_handler_t* handler, own_op_t op,
                                loom_op_invocation_t* invocation) {
  const loom__parallel_t* shared = loom__parallel_of(handler);
  const char* op_name = loom_prepared_op_name(invocation->op);
  if (op == kPack) {
    loom_tensor_handle_t* stack_parts[8] = {NULL};
    loom_tensor_handle_t** parts = stack_parts;
    if (shared->num_components > 8) {
      LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
          shared->allocator, sizeof(*parts) * (size_t)shared->num_components,
          (void**)&parts));
    }
    loom_status_t status = pack(handler, shared, invocation, parts);
    if (parts != stack_parts) loom_allocator_free(shared->allocator, parts);
    return status;
  }
  if (op == kUnpack) {
    if (invocation->num_arguments != 1) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "ParallelUnpack takes one input");
    }
    return unpack(shared, invocation);
  }
  if (invocation->num_arguments != 1 || invocation->num_results != 1 ||
      !invocation->arguments[0]) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s takes one input and has one result", op_name);
  }
  loom_tensor_handle_t* input = invocation->arguments[0];
  loom__parallel_tensor_t* tensor = loom__parallel_tensor_of(input);
  bool own =
      tensor && loom__parallel_of(loom_tensor_handle_handler(input)) == shared;
  char device[256];
  switch (op) {
    case kCopyOn:
    case kCopyOffGrad:
      if (own) {
        loom_tensor_handle_retain(input);
        invocation->results[0] = input;
        return loom_ok_status();
      } else {
        loom_tensor_handle_t* stack_parts[8] = {NULL};
        loom_tensor_handle_t** parts = stack_parts;
        if (shared->num_components > 8) {
          LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
              shared->allocator,
              sizeof(*parts) * (size_t)shared->num_components, (void**)&parts));
        }
        loom_status_t status = broadcast(shared, op_name, input, parts);
        if (!status) {
          status = loom__parallel_wrap(handler, parts, &invocation->results[0]);
        }
        if (parts != stack_parts) loom_allocator_free(shared->allocator, parts);
        return status;
      }
    case kCopyOnGrad:
      string_attr(invocation->attrs, "original_device", device, sizeof(device));
      if (!own) {
        loom_op_handler_t* target =
            device[0] ? loom_context_find_handler(shared->context, device)
                      : NULL;
        if (!target) target = loom_context_cpu(shared->context);
        return loom_context_copy_to(shared->context, input, target,
                                    &invocation->results[0]);
      }
      return sum_components(shared, tensor, device, &invocation->results[0]);
    case kCopyOff:
      string_attr(invocation->attrs, "new_device", device, sizeof(device));
      if (!own) {
        loom_tensor_handle_retain(input);
        invocation->results[0] = input;
        return loom_ok_status();
      }
      return copy_off(shared, input, device, &invocation->results[0]);
    default:
      return loom_make_status(LOOM_STATUS_INTERNAL, "not an own op");
  }
}

bool loom__parallel_execute_own_op(loom_op_handler_t* handler,
                                   loom_op_invocation_t* invocation,
                                   loom_status_t* out_status) {
  own_op_t op = own_op(loom_prepared_op_name(invocation->op));
  if (op == kNotOwn) return false;
  // The result slots are only written (see run_per_component).
  for (int32_t j = 0; j < invocation->num_results; ++j) {
    invocation->results[j] = NULL;
  }
  loom_status_t status = run_own_op(handler, op, invocation);
  if (status) {
    for (int32_t j = 0; j < invocation->num_results; ++j) {
      loom_tensor_handle_release(invocation->results[j]);
      invocation->results[j] = NULL;
    }
    *out_status = loom_op_invocation_fail(invocation, status, true);
    return true;
  }
  for (int32_t i = 0; i < invocation->num_arguments; ++i) {
    loom_tensor_handle_release(invocation->arguments[i]);
    invocation->arguments[i] = NULL;
  }
  *out_status = loom_ok_status();
  return true;
}
