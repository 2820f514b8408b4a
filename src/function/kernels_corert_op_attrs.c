// The corert dialect's op attribute set kernels: corert.create_op_attrs
// and corert.op_attrs_set{,_array}.<kind>.

#include <pthread.h>
#include <string.h>

#include "function/kernels_common.h"

static void create_op_attrs_kernel(loom_program_frame_t* frame,
                                   void* user_data) {
  (void)user_data;
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_OP_ATTRS;
  loom_status_t status = loom__program_op_attrs_create(
      frame->executor->allocator, &payload.u.op_attrs);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(
      frame,
      loom_program_value_set(loom_program_frame_result(frame, 0), &payload));
  loom__program_op_attrs_release(payload.u.op_attrs);
}

typedef struct attr_setter_t {
  const char* suffix;
  loom_attr_kind_t kind;
  bool is_list;
  bool any;  // aggregate: any list
} attr_setter_t;

static const attr_setter_t kSetters[] = {
    {.suffix = "op_attrs_set.bool", .kind = LOOM_ATTR_KIND_BOOL},
    {.suffix = "op_attrs_set.i32", .kind = LOOM_ATTR_KIND_I32},
    {.suffix = "op_attrs_set.i64", .kind = LOOM_ATTR_KIND_I64},
    {.suffix = "op_attrs_set.f32", .kind = LOOM_ATTR_KIND_F32},
    {.suffix = "op_attrs_set.f64", .kind = LOOM_ATTR_KIND_F64},
    {.suffix = "op_attrs_set.dtype", .kind = LOOM_ATTR_KIND_DTYPE},
    {.suffix = "op_attrs_set.dense", .kind = LOOM_ATTR_KIND_TENSOR},
    {.suffix = "op_attrs_set.shape", .kind = LOOM_ATTR_KIND_SHAPE},
    {.suffix = "op_attrs_set.str", .kind = LOOM_ATTR_KIND_STRING},
    {.suffix = "op_attrs_set.aggregate",
     .kind = LOOM_ATTR_KIND_AGGREGATE,
     .is_list = true,
     .any = true},
    {.suffix = "op_attrs_set_array.i32",
     .kind = LOOM_ATTR_KIND_I32,
     .is_list = true},
    {.suffix = "op_attrs_set_array.i64",
     .kind = LOOM_ATTR_KIND_I64,
     .is_list = true},
    {.suffix = "op_attrs_set_array.f32",
     .kind = LOOM_ATTR_KIND_F32,
     .is_list = true},
};

static void op_attrs_set_kernel(loom_program_frame_t* frame, void* user_data) {
  const attr_setter_t* setter = user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_OP_ATTRS) ||
      !loom__kernel_check(frame, 1, LOOM_PROGRAM_VALUE_CHAIN)) {
    return;
  }
  const char* key = loom__kernel_string_attr(frame, "key");
  loom_attr_value_t value;
  loom_status_t status = loom_ok_status();
  if (!key || !*key) {
    status = loom__kernel_missing_attr(frame, "key", "a non-empty string");
  } else if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value",
                                &value)) {
    status = loom__kernel_missing_attr(frame, "value", "the value to set");
  } else if (setter->any ? !value.is_list
                         : (value.kind != setter->kind ||
                            value.is_list != setter->is_list)) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "'%s': the 'value' attribute is %s %s, expected %s %s",
        loom_program_frame_op_name(frame), value.is_list ? "a list of" : "a",
        loom_attr_kind_name(value.kind), setter->is_list ? "a list of" : "a",
        setter->any ? "values" : loom_attr_kind_name(setter->kind));
  }
  // op_attrs_set.aggregate keeps an AGGREGATE even when the elements share
  // a kind (which the attribute parser makes a typed list).
  loom_attr_value_t* elements = NULL;
  if (!status && setter->any && value.kind != LOOM_ATTR_KIND_AGGREGATE &&
      value.count > 0) {
    status = loom_allocator_malloc(frame->executor->allocator,
                                   sizeof(*elements) * (size_t)value.count,
                                   (void**)&elements);
    for (int64_t i = 0; !status && i < value.count; ++i) {
      status = loom_attr_value_list_element(&value, i, &elements[i]);
    }
    value.kind = LOOM_ATTR_KIND_AGGREGATE;
    value.encoded = false;
    value.u.list = elements;
  }
  if (!status) {
    loom_op_attrs_t* attrs = loom_program_op_attrs_get(
        loom_program_frame_value(frame, 0)->u.op_attrs);
    pthread_mutex_lock(&frame->executor->op_attrs_mutex);
    status = loom_op_attrs_set_value(attrs, key, &value);
    pthread_mutex_unlock(&frame->executor->op_attrs_mutex);
  }
  loom_allocator_free(frame->executor->allocator, elements);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom__kernel_set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

loom_status_t loom__program_register_corert_op_attrs_kernels(
    loom_program_executor_t* executor) {
  char name[64];
  LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, "corert.create_op_attrs",
                                        create_op_attrs_kernel, NULL, 0, 1));
  for (size_t i = 0; i < sizeof(kSetters) / sizeof(kSetters[0]); ++i) {
    snprintf(name, sizeof(name), "corert.%s", kSetters[i].suffix);
    LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, op_attrs_set_kernel,
                                          (void*)&kSetters[i], 2, 1));
  }
  return loom_ok_status();
}
