// Program values: async values whose payload is a loom_program_value_t, and
// the shared, ref-counted attribute sets of !corert.opattrs values.

#include <stdatomic.h>
#include <string.h>

#include "function/coo_tensor.h"
#include "function/program_dtype.h"
#include "function/program_executor.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"

struct loom_program_op_attrs_t {
  _Atomic int32_t ref_count;
  loom_allocator_t allocator;
  loom_op_attrs_t attrs;
};

loom_status_t loom__program_op_attrs_create(loom_allocator_t allocator,
                                            loom_program_op_attrs_t** out) {
  loom_program_op_attrs_t* attrs = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*attrs), (void**)&attrs));
  atomic_init(&attrs->ref_count, 1);
  attrs->allocator = allocator;
  loom_op_attrs_initialize(&attrs->attrs, allocator);
  *out = attrs;
  return loom_ok_status();
}

void loom__program_op_attrs_retain(loom_program_op_attrs_t* attrs) {
  atomic_fetch_add_explicit(&attrs->ref_count, 1, memory_order_relaxed);
}

void loom__program_op_attrs_release(loom_program_op_attrs_t* attrs) {
  if (!attrs || atomic_fetch_sub(&attrs->ref_count, 1) != 1) return;
  loom_op_attrs_deinitialize(&attrs->attrs);
  loom_allocator_free(attrs->allocator, attrs);
}

loom_op_attrs_t* loom_program_op_attrs_get(loom_program_op_attrs_t* attrs) {
  return attrs ? &attrs->attrs : NULL;
}

struct loom_program_string_t {
  _Atomic int32_t ref_count;
  loom_allocator_t allocator;
  size_t size;
  char data[];  // size bytes and a NUL
};

static void string_release(loom_program_string_t* string) {
  if (!string || atomic_fetch_sub(&string->ref_count, 1) != 1) return;
  loom_allocator_free(string->allocator, string);
}

const char* loom_program_string_data(const loom_program_string_t* string,
                                     size_t* out_size) {
  if (out_size) *out_size = string ? string->size : 0;
  return string ? string->data : "";
}

// Takes a new reference to whatever the payload points to.
static void retain_payload(const loom_program_value_t* value) {
  switch (value->kind) {
    case LOOM_PROGRAM_VALUE_TENSOR_HANDLE:
      loom_tensor_handle_retain(value->u.tensor_handle);
      break;
    case LOOM_PROGRAM_VALUE_OP_HANDLER:
      loom_op_handler_retain(value->u.op_handler);
      break;
    case LOOM_PROGRAM_VALUE_OP_ATTRS:
      loom__program_op_attrs_retain(value->u.op_attrs);
      break;
    case LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS:
      loom_op_attrs_retain(value->u.frozen_op_attrs);
      break;
    case LOOM_PROGRAM_VALUE_STRING:
      atomic_fetch_add_explicit(&value->u.string->ref_count, 1,
                                memory_order_relaxed);
      break;
    case LOOM_PROGRAM_VALUE_TENSOR:
      loom_tensor_retain(value->u.tensor);
      break;
    case LOOM_PROGRAM_VALUE_HOST_BUFFER:
      loom_buffer_retain(value->u.host_buffer.buffer);
      break;
    case LOOM_PROGRAM_VALUE_COO_TENSOR:
      loom__coo_tensor_retain(value->u.coo_tensor);
      break;
    default:
      break;
  }
}

static void destroy_payload(void* payload) {
  loom_program_value_t* value = payload;
  switch (value->kind) {
    case LOOM_PROGRAM_VALUE_TENSOR_HANDLE:
      loom_tensor_handle_release(value->u.tensor_handle);
      break;
    case LOOM_PROGRAM_VALUE_OP_HANDLER:
      loom_op_handler_release(value->u.op_handler);
      break;
    case LOOM_PROGRAM_VALUE_OP_ATTRS:
      loom__program_op_attrs_release(value->u.op_attrs);
      break;
    case LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS:
      loom_op_attrs_release(value->u.frozen_op_attrs);
      break;
    case LOOM_PROGRAM_VALUE_STRING:
      string_release(value->u.string);
      break;
    case LOOM_PROGRAM_VALUE_TENSOR:
      loom_tensor_release(value->u.tensor);
      break;
    case LOOM_PROGRAM_VALUE_HOST_BUFFER:
      loom_buffer_release(value->u.host_buffer.buffer);
      break;
    case LOOM_PROGRAM_VALUE_COO_TENSOR:
      loom__coo_tensor_release(value->u.coo_tensor);
      break;
    default:
      break;
  }
}

const loom_async_value_type_t loom_async_value_type_program = {
    .name = "loom_program_value",
    .payload_size = sizeof(loom_program_value_t),
    .destroy_payload = destroy_payload};

loom_status_t loom_program_value_create(loom_allocator_t allocator,
                                        loom_async_value_t** out_value) {
  return loom_async_value_create(allocator, &loom_async_value_type_program,
                                 out_value);
}

const loom_program_value_t* loom_program_value_get(
    const loom_async_value_t* value) {
  if (!value ||
      loom_async_value_type(value) != &loom_async_value_type_program ||
      !loom_async_value_is_available(value)) {
    return NULL;
  }
  return loom_async_value_payload((loom_async_value_t*)value);
}

static loom_status_t check_settable(loom_async_value_t* value) {
  if (!value ||
      loom_async_value_type(value) != &loom_async_value_type_program ||
      loom_async_value_is_set(value)) {
    return loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "loom_program_value_set: the value is %s",
        !value ? "NULL"
        : loom_async_value_type(value) != &loom_async_value_type_program
            ? "not a program value"
            : "already set");
  }
  return loom_ok_status();
}

loom_status_t loom_program_value_set(loom_async_value_t* value,
                                     const loom_program_value_t* payload) {
  LOOM_RETURN_IF_ERROR(check_settable(value));
  retain_payload(payload);
  memcpy(loom_async_value_payload(value), payload, sizeof(*payload));
  return loom_async_value_set_available(value);
}

#define DEFINE_SETTER(suffix, c_type, kind_value, field)                   \
  loom_status_t loom_program_value_set_##suffix(loom_async_value_t* value, \
                                                c_type x) {                \
    loom_program_value_t payload;                                          \
    memset(&payload, 0, sizeof(payload));                                  \
    payload.kind = kind_value;                                             \
    payload.u.field = x;                                                   \
    return loom_program_value_set(value, &payload);                        \
  }

DEFINE_SETTER(bool, bool, LOOM_PROGRAM_VALUE_BOOL, b)
DEFINE_SETTER(i32, int32_t, LOOM_PROGRAM_VALUE_I32, i32)
DEFINE_SETTER(i64, int64_t, LOOM_PROGRAM_VALUE_I64, i64)
DEFINE_SETTER(f32, float, LOOM_PROGRAM_VALUE_F32, f32)
DEFINE_SETTER(f64, double, LOOM_PROGRAM_VALUE_F64, f64)
DEFINE_SETTER(op_handler, loom_op_handler_t*, LOOM_PROGRAM_VALUE_OP_HANDLER,
              op_handler)

#undef DEFINE_SETTER

loom_status_t loom_program_value_set_chain(loom_async_value_t* value) {
  LOOM_RETURN_IF_ERROR(check_settable(value));
  loom_program_value_t* payload = loom_async_value_payload(value);
  payload->kind = LOOM_PROGRAM_VALUE_CHAIN;
  return loom_async_value_set_available(value);
}

loom_status_t loom_program_value_set_tensor_handle(
    loom_async_value_t* value, loom_tensor_handle_t* handle) {
  loom_status_t status = check_settable(value);
  if (status || !handle) {
    loom_tensor_handle_release(handle);
    return status ? status
                  : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                     "loom_program_value_set_tensor_handle: "
                                     "handle is NULL");
  }
  loom_program_value_t* payload = loom_async_value_payload(value);
  payload->kind = LOOM_PROGRAM_VALUE_TENSOR_HANDLE;
  payload->u.tensor_handle = handle;  // the caller's reference
  return loom_async_value_set_available(value);
}

loom_status_t loom_program_value_set_shape(loom_async_value_t* value,
                                           const loom_shape_t* shape) {
  LOOM_RETURN_IF_ERROR(check_settable(value));
  loom_program_value_t* payload = loom_async_value_payload(value);
  payload->kind = LOOM_PROGRAM_VALUE_SHAPE;
  payload->u.shape = *shape;
  return loom_async_value_set_available(value);
}

loom_status_t loom_program_value_set_string(loom_async_value_t* value,
                                            const char* data, size_t size) {
  LOOM_RETURN_IF_ERROR(check_settable(value));
  if (!data && size) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_value_set_string: data is NULL and "
                            "size is %zu",
                            size);
  }
  if (size > ((size_t)1 << 40)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_program_value_set_string: size %zu is too "
                            "large",
                            size);
  }
  loom_allocator_t allocator = loom_allocator_default();
  loom_program_string_t* string = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, sizeof(*string) + size + 1, (void**)&string));
  atomic_init(&string->ref_count, 1);
  string->allocator = allocator;
  string->size = size;
  if (size) memcpy(string->data, data, size);
  string->data[size] = '\0';
  loom_program_value_t* payload = loom_async_value_payload(value);
  payload->kind = LOOM_PROGRAM_VALUE_STRING;
  payload->u.string = string;  // the new reference
  return loom_async_value_set_available(value);
}

const char* loom_program_value_kind_name(loom_program_value_kind_t kind) {
  switch (kind) {
    case LOOM_PROGRAM_VALUE_CHAIN:
      return "!tfrt.chain";
    case LOOM_PROGRAM_VALUE_BOOL:
      return loom__program_dtype_spelling(LOOM_DTYPE_BOOL);
    case LOOM_PROGRAM_VALUE_I32:
      return loom__program_dtype_spelling(LOOM_DTYPE_INT32);
    case LOOM_PROGRAM_VALUE_I64:
      return loom__program_dtype_spelling(LOOM_DTYPE_INT64);
    case LOOM_PROGRAM_VALUE_F32:
      return loom__program_dtype_spelling(LOOM_DTYPE_FLOAT);
    case LOOM_PROGRAM_VALUE_F64:
      return loom__program_dtype_spelling(LOOM_DTYPE_DOUBLE);
    case LOOM_PROGRAM_VALUE_TENSOR_HANDLE:
      return "!corert.tensorhandle";
    case LOOM_PROGRAM_VALUE_OP_HANDLER:
      return "!corert.ophandler";
    case LOOM_PROGRAM_VALUE_OP_ATTRS:
      return "!corert.opattrs";
    case LOOM_PROGRAM_VALUE_SHAPE:
      return "!ts.shape";
    case LOOM_PROGRAM_VALUE_FUNCTION:
      return "!corert.op";
    case LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS:
      return "!corert.opattrs_ref";
    case LOOM_PROGRAM_VALUE_STRING:
      return "!tfrt.string";
    case LOOM_PROGRAM_VALUE_TENSOR:
      return "!t.tensor";
    case LOOM_PROGRAM_VALUE_HOST_BUFFER:
      return "!ht.host_buffer";
    case LOOM_PROGRAM_VALUE_COO_TENSOR:
      return "!t.tensor";
  }
  return "unknown";
}

void loom__program_value_forward_now(loom_async_value_t* source,
                                     loom_async_value_t* destination) {
  if (loom_async_value_is_set(destination)) return;
  if (loom_async_value_is_error(source)) {
    loom_status_ignore(loom_async_value_set_error(
        destination, loom_status_clone(loom_async_value_error(source))));
    return;
  }
  const loom_program_value_t* payload = loom_program_value_get(source);
  if (!payload) {
    loom_status_ignore(loom_async_value_set_error(
        destination, loom_make_status(LOOM_STATUS_INTERNAL,
                                      "a value of type '%s' reached a program "
                                      "value",
                                      loom_async_value_type(source)->name)));
    return;
  }
  loom_status_ignore(loom_program_value_set(destination, payload));
}

typedef struct forward_t {
  loom_async_value_t* source;
  loom_async_value_t* destination;
  loom_allocator_t allocator;
} forward_t;

static void forward_later(void* arg) {
  forward_t* forward = arg;
  loom__program_value_forward_now(forward->source, forward->destination);
  loom_async_value_release(forward->source);
  loom_async_value_release(forward->destination);
  loom_allocator_free(forward->allocator, forward);
}

void loom__program_value_forward(loom_allocator_t allocator,
                                 loom_async_value_t* source,
                                 loom_async_value_t* destination) {
  if (loom_async_value_is_set(source)) {
    loom__program_value_forward_now(source, destination);
    return;
  }
  forward_t* forward = NULL;
  loom_status_t status =
      loom_allocator_malloc(allocator, sizeof(*forward), (void**)&forward);
  if (status) {
    loom_status_ignore(loom_async_value_set_error(destination, status));
    return;
  }
  forward->source = source;
  forward->destination = destination;
  forward->allocator = allocator;
  loom_async_value_retain(source);
  loom_async_value_retain(destination);
  status = loom_async_value_and_then(source, forward_later, forward);
  if (status) {
    loom_async_value_release(source);
    loom_async_value_release(destination);
    loom_allocator_free(allocator, forward);
    loom_status_ignore(loom_async_value_set_error(destination, status));
  }
}
