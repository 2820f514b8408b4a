// TensorFlow's kernel C API over Loom's kernel registry and kernel contexts.
// TF_OpKernelConstruction, TF_OpKernelContext and
// TF_AsyncOpKernelDoneCallback are Loom's construction, context and done
// structures; a TF_Tensor is a Loom tensor.

#include "tensorflow/c/kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/tagged_block.h"
#include "compat/tf_status_internal.h"
#include "host/thread_pool_internal.h"
#include "loom/op_signature.h"
#include "registry/kernel_context.h"
#include "registry/op_registry_internal.h"

// A TF_KernelBuilder wraps Loom's builder. Registration takes ownership:
// the emptied shell is kept on a process-wide list, so that TensorFlow code
// that deletes a builder after registering it (its own tests do) does no
// harm, and code that does not leaks nothing.
//
// The first builder call that failed (a type constraint, host-memory
// argument or label that could not be added) is kept: registering the
// builder would register a kernel that matches more than its author asked
// for, so TF_RegisterKernelBuilder refuses it with that error.
struct TF_KernelBuilder {
  loom_kernel_builder_t* builder;
  loom_status_t first_error;
  bool registered;
  struct TF_KernelBuilder* next_registered;
};

// Process-wide as the registrations they record: TF_RegisterKernelBuilder
// registers into the global kernel registry, with no context to own them.
static pthread_mutex_t g_registered_mutex = PTHREAD_MUTEX_INITIALIZER;
static TF_KernelBuilder* g_registered_shells = NULL;

static loom_kernel_construction_t* construction_of(
    TF_OpKernelConstruction* ctx) {
  return (loom_kernel_construction_t*)ctx;
}

static loom_kernel_context_t* context_of(TF_OpKernelContext* ctx) {
  return (loom_kernel_context_t*)ctx;
}

static loom_tensor_t* loom__tensor_of(const TF_Tensor* tensor) {
  return (loom_tensor_t*)tensor;
}

static TF_Tensor* tf_tensor_of(loom_tensor_t* tensor) {
  return (TF_Tensor*)tensor;
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

// While a plugin loads, every failed registration call fails the load (and
// rolls back what the plugin registered), whether or not the plugin looks
// at its TF_Status. Does not consume `status`.
static void record_failure(loom_status_t status) {
  loom__registration_journal_report(status);
}

// Reports `status` (consumed) through `tf_status` after recording it.
static void report(TF_Status* tf_status, loom_status_t status) {
  record_failure(status);
  loom__tf_status_set(tf_status, status);
}

// Keeps the first failure of a builder call (consumed); OK is ignored.
static void keep_first_error(TF_KernelBuilder* builder, loom_status_t status) {
  if (!status) return;
  if (builder->first_error) {
    loom_status_free(status);
  } else {
    builder->first_error = status;
  }
}

static TF_KernelBuilder* new_builder(const char* op_name,
                                     const char* device_name,
                                     loom_kernel_create_fn_t create,
                                     loom_kernel_compute_fn_t compute,
                                     loom_kernel_compute_async_fn_t async,
                                     loom_kernel_delete_fn_t destroy) {
  // The shell outlives registration (a later TF_DeleteKernelBuilder on it
  // must be harmless), so it lives until the process ends and comes from the
  // system allocator; the definition inside uses the default allocator.
  TF_KernelBuilder* builder = NULL;
  loom_status_t status = loom__tagged_block_allocate(
      loom_allocator_system(), sizeof(*builder), (void**)&builder);
  if (builder) memset(builder, 0, sizeof(*builder));
  status = builder
               ? loom_kernel_builder_create(loom_allocator_default(), op_name,
                                            device_name, create, compute, async,
                                            destroy, &builder->builder)
               : loom_status_annotate(status,
                                      "creating a kernel builder for op '%s'",
                                      op_name ? op_name : "(null)");
  // TensorFlow's kernels see shapes through TF_Dim, which reads spilled
  // dims too.
  if (!status) loom__kernel_builder_set_any_rank(builder->builder);
  if (status) {
    // The caller only sees NULL; a plugin load reports why.
    record_failure(status);
    loom_status_free(status);
    loom__tagged_block_free(builder);
    return NULL;
  }
  return builder;
}

TF_KernelBuilder* TF_NewKernelBuilder(
    const char* op_name, const char* device_name,
    void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_func)(void*, TF_OpKernelContext*),
    void (*delete_func)(void*)) {
  // The function pointer types differ only in the (opaque) struct their
  // parameters point to: the ABI is the same.
  return new_builder(op_name, device_name, (loom_kernel_create_fn_t)create_func,
                     (loom_kernel_compute_fn_t)compute_func, NULL,
                     (loom_kernel_delete_fn_t)delete_func);
}

TF_KernelBuilder* TF_NewAsyncKernelBuilder(
    const char* op_name, const char* device_name,
    void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_async_func)(void*, TF_OpKernelContext*,
                               TF_AsyncOpKernelDoneCallback* done),
    void (*delete_func)(void*)) {
  return new_builder(op_name, device_name, (loom_kernel_create_fn_t)create_func,
                     NULL, (loom_kernel_compute_async_fn_t)compute_async_func,
                     (loom_kernel_delete_fn_t)delete_func);
}

void TF_RunAsyncOpKernelDoneCallback(TF_AsyncOpKernelDoneCallback* done) {
  loom_kernel_done_t* callback = (loom_kernel_done_t*)done;
  if (callback && callback->fn) callback->fn(callback->arg);
}

static bool usable(TF_KernelBuilder* builder, TF_Status* status,
                   const char* function) {
  if (builder && builder->builder && !builder->registered) return true;
  report(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "%s: the kernel builder is NULL or already "
                                  "registered",
                                  function));
  return false;
}

void TF_KernelBuilder_TypeConstraint(TF_KernelBuilder* kernel_builder,
                                     const char* attr_name,
                                     const TF_DataType type,
                                     TF_Status* status) {
  if (!usable(kernel_builder, status, "TF_KernelBuilder_TypeConstraint")) {
    return;
  }
  loom_status_t result = loom_kernel_builder_type_constraint(
      kernel_builder->builder, attr_name, (loom_dtype_t)type);
  if (result) {
    keep_first_error(kernel_builder, loom_status_clone(result));
  }
  report(status, result);
}

// TF_KernelBuilder_HostMemory and _Label cannot report an error: it is kept
// and reported (and recorded) by TF_RegisterKernelBuilder.
void TF_KernelBuilder_HostMemory(TF_KernelBuilder* kernel_builder,
                                 const char* arg_name) {
  if (!kernel_builder || !kernel_builder->builder) return;
  keep_first_error(
      kernel_builder,
      arg_name
          ? loom_kernel_builder_host_memory(kernel_builder->builder, arg_name)
          : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                             "TF_KernelBuilder_HostMemory: arg_name is "
                             "NULL"));
}

void TF_KernelBuilder_Priority(TF_KernelBuilder* kernel_builder,
                               int32_t priority_number) {
  if (!kernel_builder || !kernel_builder->builder) return;
  loom_kernel_builder_priority(kernel_builder->builder, priority_number);
}

void TF_KernelBuilder_Label(TF_KernelBuilder* kernel_builder,
                            const char* label) {
  if (!kernel_builder || !kernel_builder->builder) return;
  keep_first_error(
      kernel_builder,
      label ? loom_kernel_builder_label(kernel_builder->builder, label)
            : loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                               "TF_KernelBuilder_Label: label is NULL"));
}

static void free_registered_shell(void* shell) {
  pthread_mutex_lock(&g_registered_mutex);
  for (TF_KernelBuilder** link = &g_registered_shells; *link;
       link = &(*link)->next_registered) {
    if (*link == shell) {
      *link = ((TF_KernelBuilder*)shell)->next_registered;
      break;
    }
  }
  pthread_mutex_unlock(&g_registered_mutex);
  loom__tagged_block_free(shell);
}

void TF_RegisterKernelBuilder(const char* kernel_name,
                              TF_KernelBuilder* builder, TF_Status* status) {
  if (!usable(builder, status, "TF_RegisterKernelBuilder")) return;
  loom_kernel_registry_t* registry = loom_kernel_registry_global();
  loom_status_t result;
  if (builder->first_error) {
    loom_kernel_builder_destroy(builder->builder);
    result = builder->first_error;
    builder->first_error = NULL;
    result = loom_status_annotate(
        result, "TF_RegisterKernelBuilder: kernel '%s' not registered",
        kernel_name ? kernel_name : "(null)");
  } else if (!registry) {
    loom_kernel_builder_destroy(builder->builder);
    result = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "the kernel registry could not be created");
  } else {
    result =
        loom_kernel_registry_register(registry, kernel_name, builder->builder);
  }
  builder->builder = NULL;
  builder->registered = true;
  // A plugin load that fails frees the shells its entry points registered
  // (they have returned: nothing calls TF_DeleteKernelBuilder on them any
  // more); other shells are kept for the life of the process.
  pthread_mutex_lock(&g_registered_mutex);
  builder->next_registered = g_registered_shells;
  g_registered_shells = builder;
  pthread_mutex_unlock(&g_registered_mutex);
  loom__registration_journal_add_undo(free_registered_shell, builder);
  report(status, result);
}

void TF_DeleteKernelBuilder(TF_KernelBuilder* builder) {
  if (!builder || builder->registered) return;
  loom_kernel_builder_destroy(builder->builder);
  loom_status_free(builder->first_error);
  loom__tagged_block_free(builder);
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

// Finds attr `attr_name`. A missing attr is NOT_FOUND for the getters, as
// in TensorFlow (whose OpKernelConstruction::GetAttr says NotFound), but
// `missing_code` lets TF_OpKernelConstruction_GetAttrSize say
// INVALID_ARGUMENT, as TensorFlow's does.
static loom_status_t find_attr_or(TF_OpKernelConstruction* ctx,
                                  const char* attr_name,
                                  loom_status_code_t missing_code,
                                  loom_attr_value_t* out_value) {
  if (!ctx || !attr_name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "kernel construction: NULL context or attr name");
  }
  loom_kernel_construction_t* construction = construction_of(ctx);
  if (!loom_op_attrs_get(construction->attrs, attr_name, out_value)) {
    return loom_make_status(missing_code, "Op '%s' has no attr named '%s'",
                            construction->op->name, attr_name);
  }
  return loom_ok_status();
}

static loom_status_t find_attr(TF_OpKernelConstruction* ctx,
                               const char* attr_name,
                               loom_attr_value_t* out_value) {
  return find_attr_or(ctx, attr_name, LOOM_STATUS_NOT_FOUND, out_value);
}

static loom_status_t expect_kind(TF_OpKernelConstruction* ctx,
                                 const char* attr_name,
                                 const loom_attr_value_t* value, bool is_list,
                                 loom_attr_kind_t kind, loom_attr_kind_t alt,
                                 const char* expected) {
  if (value->is_list == is_list &&
      (value->kind == kind || value->kind == alt)) {
    return loom_ok_status();
  }
  return loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "Attr '%s' of op '%s' has type %s%s%s, not %s", attr_name,
      construction_of(ctx)->op->name, value->is_list ? "list(" : "",
      loom_attr_kind_name(value->kind), value->is_list ? ")" : "", expected);
}

void TF_OpKernelConstruction_GetAttrSize(TF_OpKernelConstruction* ctx,
                                         const char* attr_name,
                                         int32_t* list_size,
                                         int32_t* total_size,
                                         TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result =
      find_attr_or(ctx, attr_name, LOOM_STATUS_INVALID_ARGUMENT, &value);
  if (!result && (!list_size || !total_size)) {
    result = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "TF_OpKernelConstruction_GetAttrSize: NULL "
                              "output");
  }
  if (result) {
    if (list_size) *list_size = -1;
    if (total_size) *total_size = -1;
    loom__tf_status_set(status, result);
    return;
  }
  *list_size = value.is_list ? (int32_t)value.count : -1;
  *total_size = -1;
  if (value.kind == LOOM_ATTR_KIND_STRING ||
      value.kind == LOOM_ATTR_KIND_FUNC || value.kind == LOOM_ATTR_KIND_SHAPE) {
    int64_t total = 0;
    for (int64_t i = 0; i < value.count; ++i) {
      loom_attr_value_t element = value;
      if (value.is_list) {
        loom_status_ignore(loom_attr_value_list_element(&value, i, &element));
      }
      if (value.kind == LOOM_ATTR_KIND_SHAPE) {
        if (!value.is_list && element.u.shape.rank < 0) total = -1;
        if (element.u.shape.rank > 0) total += element.u.shape.rank;
      } else {
        total += (int64_t)element.u.string.size;
      }
    }
    *total_size = (int32_t)total;
  }
  loom__tf_status_set(status, loom_ok_status());
}

#define DEFINE_SCALAR_GETTER(Name, c_type, kind, alt, expected, convert)       \
  void TF_OpKernelConstruction_GetAttr##Name(TF_OpKernelConstruction* ctx,     \
                                             const char* attr_name,            \
                                             c_type* val, TF_Status* status) { \
    loom_attr_value_t value;                                                   \
    loom_status_t result = find_attr(ctx, attr_name, &value);                  \
    if (!result) {                                                             \
      result =                                                                 \
          expect_kind(ctx, attr_name, &value, false, kind, alt, expected);     \
    }                                                                          \
    if (!result && val) *val = convert;                                        \
    loom__tf_status_set(status, result);                                       \
  }

DEFINE_SCALAR_GETTER(Type, TF_DataType, LOOM_ATTR_KIND_DTYPE,
                     LOOM_ATTR_KIND_DTYPE, "type", (TF_DataType)value.u.dtype)
DEFINE_SCALAR_GETTER(Int64, int64_t, LOOM_ATTR_KIND_I64, LOOM_ATTR_KIND_I32,
                     "int",
                     value.kind == LOOM_ATTR_KIND_I64 ? value.u.i64
                                                      : value.u.i32)
DEFINE_SCALAR_GETTER(Float, float, LOOM_ATTR_KIND_F32, LOOM_ATTR_KIND_F64,
                     "float",
                     value.kind == LOOM_ATTR_KIND_F32 ? value.u.f32
                                                      : (float)value.u.f64)
DEFINE_SCALAR_GETTER(Bool, TF_Bool, LOOM_ATTR_KIND_BOOL, LOOM_ATTR_KIND_BOOL,
                     "bool", (TF_Bool)(value.u.b ? 1 : 0))

#undef DEFINE_SCALAR_GETTER

void TF_OpKernelConstruction_GetAttrInt32(TF_OpKernelConstruction* ctx,
                                          const char* attr_name, int32_t* val,
                                          TF_Status* status) {
  int64_t wide = 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, attr_name, &wide, status);
  if (TF_GetCode(status) != TF_OK) return;
  if (wide < INT32_MIN || wide > INT32_MAX) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                 "Attr '%s' value %lld does not fit an int32",
                                 attr_name, (long long)wide));
    return;
  }
  if (val) *val = (int32_t)wide;
}

void TF_OpKernelConstruction_GetAttrString(TF_OpKernelConstruction* ctx,
                                           const char* attr_name, char* val,
                                           size_t max_length,
                                           TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result = find_attr(ctx, attr_name, &value);
  if (!result) {
    result = expect_kind(ctx, attr_name, &value, false, LOOM_ATTR_KIND_STRING,
                         LOOM_ATTR_KIND_FUNC, "string");
  }
  if (!result && val) {
    size_t n =
        value.u.string.size < max_length ? value.u.string.size : max_length;
    if (n) memcpy(val, value.u.string.data, n);
  }
  loom__tf_status_set(status, result);
}

void TF_OpKernelConstruction_GetAttrTensor(TF_OpKernelConstruction* ctx,
                                           const char* attr_name,
                                           TF_Tensor** val, TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result = find_attr(ctx, attr_name, &value);
  if (!result) {
    result = expect_kind(ctx, attr_name, &value, false, LOOM_ATTR_KIND_TENSOR,
                         LOOM_ATTR_KIND_TENSOR, "tensor");
  }
  if (!result && val) {
    loom_tensor_retain(value.u.tensor);
    *val = tf_tensor_of(value.u.tensor);
  }
  loom__tf_status_set(status, result);
}

// Reads a list attr of scalars into vals[0, max_vals), converting elements.
static loom_status_t read_list(TF_OpKernelConstruction* ctx,
                               const char* attr_name, loom_attr_kind_t kind,
                               loom_attr_kind_t alt, const char* expected,
                               loom_attr_value_t* out_value) {
  LOOM_RETURN_IF_ERROR(find_attr(ctx, attr_name, out_value));
  return expect_kind(ctx, attr_name, out_value, true, kind, alt, expected);
}

#define DEFINE_LIST_GETTER(Name, c_type, kind, alt, expected, convert)      \
  void TF_OpKernelConstruction_GetAttr##Name##List(                         \
      TF_OpKernelConstruction* ctx, const char* attr_name, c_type* vals,    \
      int max_vals, TF_Status* status) {                                    \
    loom_attr_value_t value;                                                \
    loom_status_t result =                                                  \
        read_list(ctx, attr_name, kind, alt, expected, &value);             \
    for (int64_t i = 0; !result && vals && i < value.count && i < max_vals; \
         ++i) {                                                             \
      loom_attr_value_t element;                                            \
      result = loom_attr_value_list_element(&value, i, &element);           \
      if (!result) vals[i] = convert;                                       \
    }                                                                       \
    loom__tf_status_set(status, result);                                    \
  }

DEFINE_LIST_GETTER(Type, TF_DataType, LOOM_ATTR_KIND_DTYPE,
                   LOOM_ATTR_KIND_DTYPE, "list(type)",
                   (TF_DataType)element.u.dtype)
DEFINE_LIST_GETTER(Int32, int32_t, LOOM_ATTR_KIND_I64, LOOM_ATTR_KIND_I32,
                   "list(int)",
                   (int32_t)(element.kind == LOOM_ATTR_KIND_I64
                                 ? element.u.i64
                                 : element.u.i32))
DEFINE_LIST_GETTER(Int64, int64_t, LOOM_ATTR_KIND_I64, LOOM_ATTR_KIND_I32,
                   "list(int)",
                   element.kind == LOOM_ATTR_KIND_I64 ? element.u.i64
                                                      : element.u.i32)
DEFINE_LIST_GETTER(Float, float, LOOM_ATTR_KIND_F32, LOOM_ATTR_KIND_F64,
                   "list(float)",
                   element.kind == LOOM_ATTR_KIND_F32 ? element.u.f32
                                                      : (float)element.u.f64)
DEFINE_LIST_GETTER(Bool, TF_Bool, LOOM_ATTR_KIND_BOOL, LOOM_ATTR_KIND_BOOL,
                   "list(bool)", (TF_Bool)(element.u.b ? 1 : 0))

#undef DEFINE_LIST_GETTER

void TF_OpKernelConstruction_GetAttrStringList(TF_OpKernelConstruction* ctx,
                                               const char* attr_name,
                                               char** vals, size_t* lengths,
                                               int max_values, void* storage,
                                               size_t storage_size,
                                               TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result = read_list(ctx, attr_name, LOOM_ATTR_KIND_STRING,
                                   LOOM_ATTR_KIND_FUNC, "list(string)", &value);
  char* next = storage;
  size_t left = storage_size;
  for (int64_t i = 0; !result && i < value.count && i < max_values; ++i) {
    loom_attr_value_t element;
    result = loom_attr_value_list_element(&value, i, &element);
    if (result) break;
    if (element.u.string.size > left || !storage) {
      result = loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Attr '%s': not enough storage (%zu bytes) for the strings",
          attr_name, storage_size);
      break;
    }
    if (element.u.string.size) {
      memcpy(next, element.u.string.data, element.u.string.size);
    }
    if (vals) vals[i] = next;
    if (lengths) lengths[i] = element.u.string.size;
    next += element.u.string.size;
    left -= element.u.string.size;
  }
  loom__tf_status_set(status, result);
}

void TF_OpKernelConstruction_GetAttrTensorList(TF_OpKernelConstruction* ctx,
                                               const char* attr_name,
                                               TF_Tensor** vals, int max_values,
                                               TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result =
      read_list(ctx, attr_name, LOOM_ATTR_KIND_TENSOR, LOOM_ATTR_KIND_TENSOR,
                "list(tensor)", &value);
  for (int64_t i = 0; !result && vals && i < value.count && i < max_values;
       ++i) {
    loom_tensor_t* tensor = ((loom_tensor_t* const*)value.u.list)[i];
    loom_tensor_retain(tensor);
    vals[i] = tf_tensor_of(tensor);
  }
  loom__tf_status_set(status, result);
}

TF_Buffer* TF_OpKernelConstruction_GetAttrFunction(TF_OpKernelConstruction* ctx,
                                                   const char* attr_name,
                                                   TF_Status* status) {
  loom_attr_value_t value;
  loom_status_t result = find_attr(ctx, attr_name, &value);
  if (!result) {
    result = expect_kind(ctx, attr_name, &value, false, LOOM_ATTR_KIND_FUNC,
                         LOOM_ATTR_KIND_FUNC, "func");
  }
  TF_Buffer* buffer = NULL;
  if (!result) {
    // NameAttrList { string name = 1; ... }: one length-delimited field
    // (tag 0x0a), omitted when empty as proto3 does.
    size_t size = value.u.string.size;
    unsigned char header[11];
    size_t header_size = 0;
    if (size) {
      header[header_size++] = 0x0a;
      for (size_t rest = size; header_size < sizeof(header); rest >>= 7) {
        header[header_size++] =
            (unsigned char)((rest & 0x7f) | (rest > 0x7f ? 0x80 : 0));
        if (rest <= 0x7f) break;
      }
    }
    loom_allocator_t allocator = loom_allocator_default();
    unsigned char* bytes = NULL;
    result = loom_allocator_malloc(allocator, header_size + size + 1,
                                   (void**)&bytes);
    if (!result) {
      if (header_size) memcpy(bytes, header, header_size);
      if (size) memcpy(bytes + header_size, value.u.string.data, size);
      buffer = TF_NewBufferFromString(bytes, header_size + size);
      loom_allocator_free(allocator, bytes);
      if (!buffer) {
        result = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                  "out of memory serializing func attr '%s'",
                                  attr_name);
      }
    }
  }
  loom__tf_status_set(status, result);
  return buffer;
}

bool TF_OpKernelConstruction_HasAttr(TF_OpKernelConstruction* ctx,
                                     const char* attr_name, TF_Status* status) {
  if (!ctx || !attr_name) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_OpKernelConstruction_HasAttr: "
                                         "NULL argument"));
    return false;
  }
  loom__tf_status_set(status, loom_ok_status());
  return loom_op_attrs_get(construction_of(ctx)->attrs, attr_name, NULL);
}

TF_StringView TF_OpKernelConstruction_GetName(TF_OpKernelConstruction* ctx) {
  TF_StringView view = {"", 0};
  if (ctx) {
    view.data = construction_of(ctx)->node_name;
    view.len = strlen(view.data);
  }
  return view;
}

void TF_OpKernelConstruction_Failure(TF_OpKernelConstruction* ctx,
                                     TF_Status* status) {
  if (!ctx) return;
  loom_status_t failure = loom__tf_status_clone(status);
  if (!failure) {
    failure = loom_make_status(LOOM_STATUS_UNKNOWN,
                               "kernel construction failed with an OK status");
  }
  loom__kernel_construction_fail(construction_of(ctx), failure);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

int TF_NumInputs(TF_OpKernelContext* ctx) {
  return ctx ? context_of(ctx)->num_inputs : 0;
}

int TF_NumOutputs(TF_OpKernelContext* ctx) {
  return ctx ? context_of(ctx)->num_outputs : 0;
}

void TF_GetInput(TF_OpKernelContext* ctx, int i, TF_Tensor** tensor,
                 TF_Status* status) {
  if (!ctx || !tensor) {
    loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "TF_GetInput: NULL argument"));
    return;
  }
  loom_kernel_context_t* context = context_of(ctx);
  if (i < 0 || i >= context->num_inputs) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                                 "%s: input index %d is outside [0, %d)",
                                 context->op->name, i, context->num_inputs));
    return;
  }
  loom_tensor_retain(context->inputs[i]);
  *tensor = tf_tensor_of(context->inputs[i]);
  loom__tf_status_set(status, loom_ok_status());
}

void TF_InputRange(TF_OpKernelContext* ctx, const char* name,
                   TF_InputRange_Args* args) {
  if (!args) return;
  if (!ctx || !name) {
    loom__tf_status_set(args->status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_InputRange: NULL argument"));
    return;
  }
  loom_kernel_context_t* context = context_of(ctx);
  int32_t start = -1, stop = -1;
  loom_status_t result = loom_op_def_arg_range(context->op, context->attrs,
                                               false, name, &start, &stop);
  if (result && loom_status_code(result) == LOOM_STATUS_NOT_FOUND) {
    // TensorFlow's OpKernel::InputRange reports an unknown name as
    // INVALID_ARGUMENT.
    loom_status_t invalid = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s",
                                             loom_status_message(result));
    loom_status_free(result);
    result = invalid;
  }
  // As TensorFlow: [-1, -1) on failure.
  args->start = result ? -1 : start;
  args->stop = result ? -1 : stop;
  loom__tf_status_set(args->status, result);
}

TF_DataType TF_InputDatatype(TF_OpKernelContext* ctx, int index) {
  if (!ctx) return (TF_DataType)0;
  loom_kernel_context_t* context = context_of(ctx);
  if (index < 0 || index >= context->num_inputs) return (TF_DataType)0;
  return (TF_DataType)loom_tensor_dtype(context->inputs[index]);
}

void TF_SetOutput(TF_OpKernelContext* ctx, int i, const TF_Tensor* tensor,
                  TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                                 "TF_SetOutput: ctx is NULL"));
    return;
  }
  loom__tf_status_set(status, loom__kernel_context_set_output(
                                  context_of(ctx), i, loom__tensor_of(tensor)));
}

TF_Tensor* TF_GetMutableOutput(TF_OpKernelContext* ctx, int i,
                               TF_Status* status) {
  if (!ctx) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_GetMutableOutput: ctx is NULL"));
    return NULL;
  }
  loom_kernel_context_t* context = context_of(ctx);
  if (i < 0 || i >= context->num_outputs) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                                 "%s: output index %d is outside [0, %d)",
                                 context->op->name, i, context->num_outputs));
    return NULL;
  }
  loom_tensor_t* output = context->outputs[i];
  if (!output) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                                         "%s: output %d has not been allocated",
                                         context->op->name, i));
    return NULL;
  }
  loom_tensor_retain(output);
  loom__tf_status_set(status, loom_ok_status());
  return tf_tensor_of(output);
}

void TF_OpKernelContext_Failure(TF_OpKernelContext* ctx, TF_Status* status) {
  if (!ctx) return;
  loom_status_t failure = loom__tf_status_clone(status);
  if (!failure) {
    failure = loom_make_status(LOOM_STATUS_UNKNOWN,
                               "kernel failed with an OK status");
  }
  loom__kernel_context_fail(context_of(ctx), failure);
}

TF_DataType TF_ExpectedOutputDataType(TF_OpKernelContext* ctx, int i) {
  if (!ctx) return (TF_DataType)0;
  loom_kernel_context_t* context = context_of(ctx);
  if (i < 0 || i >= context->num_outputs) return (TF_DataType)0;
  return (TF_DataType)context->output_dtypes[i];
}

static bool is_host_memory(TF_OpKernelContext* ctx, int i, TF_Status* status,
                           bool output) {
  if (!ctx) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "ctx is NULL"));
    return false;
  }
  loom_kernel_context_t* context = context_of(ctx);
  int count = output ? context->num_outputs : context->num_inputs;
  if (i < 0 || i >= count) {
    loom__tf_status_set(
        status, loom_make_status(LOOM_STATUS_OUT_OF_RANGE,
                                 "%s: %s index %d is outside [0, %d)",
                                 context->op->name, output ? "output" : "input",
                                 i, count));
    return false;
  }
  loom__tf_status_set(status, loom_ok_status());
  return loom__kernel_context_is_host_memory(context, output, i);
}

bool TF_IsHostMemoryInput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  return is_host_memory(ctx, i, status, false);
}

bool TF_IsHostMemoryOutput(TF_OpKernelContext* ctx, int i, TF_Status* status) {
  return is_host_memory(ctx, i, status, true);
}

int64_t TF_StepId(TF_OpKernelContext* ctx) {
  return ctx ? context_of(ctx)->step_id : 0;
}

int64_t TF_GetStepId(TF_OpKernelContext* ctx) {
  return TF_StepId(ctx);
}

static TF_StringView view_of(const char* text) {
  TF_StringView view = {text ? text : "", text ? strlen(text) : 0};
  return view;
}

TF_StringView TF_GetOpKernelName(TF_OpKernelContext* ctx) {
  return view_of(ctx ? context_of(ctx)->kernel->name : NULL);
}

TF_StringView TF_GetDeviceName(TF_OpKernelContext* ctx) {
  return view_of(ctx ? context_of(ctx)->device_name : NULL);
}

// Builds a shape from TensorFlow's (dims, num_dims).
static loom_status_t shape_of(const int64_t* dims, int num_dims,
                              loom_shape_t* out) {
  return loom_shape_initialize_large(out, dims, num_dims);
}

TF_Tensor* TF_AllocateOutput(TF_OpKernelContext* context, int index,
                             TF_DataType dtype, const int64_t* dims,
                             int num_dims, size_t len, TF_Status* status) {
  if (!context) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_AllocateOutput: context is NULL"));
    return NULL;
  }
  // TensorFlow ignores `len`: the size follows from dims and dtype, so a
  // caller's miscomputed len must not turn into an error (or a buffer of
  // the wrong size).
  (void)len;
  loom_shape_t shape;
  loom_status_t result = shape_of(dims, num_dims, &shape);
  loom_tensor_t* tensor = NULL;
  if (!result) {
    result = loom__kernel_context_allocate_output(
        context_of(context), index, (loom_dtype_t)dtype, &shape, &tensor);
  }
  loom__tf_status_set(status, result);
  return tf_tensor_of(tensor);
}

TF_Tensor* TF_ForwardInputOrAllocateOutput(
    TF_OpKernelContext* context, const int* candidate_input_indices,
    int num_candidate_input_indices, int output_index,
    const int64_t* output_dims, int output_num_dims, int* forwarded_input,
    TF_Status* status) {
  if (!context ||
      (num_candidate_input_indices > 0 && !candidate_input_indices)) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_ForwardInputOrAllocateOutput: "
                                         "NULL argument"));
    return NULL;
  }
  loom_shape_t shape;
  loom_status_t result = shape_of(output_dims, output_num_dims, &shape);
  loom_tensor_t* tensor = NULL;
  if (!result) {
    result = loom__kernel_context_forward_or_allocate(
        context_of(context), candidate_input_indices,
        num_candidate_input_indices, output_index, &shape, forwarded_input,
        &tensor);
  }
  loom__tf_status_set(status, result);
  return tf_tensor_of(tensor);
}

TF_Tensor* TF_AllocateTemp(TF_OpKernelContext* context, TF_DataType dtype,
                           const int64_t* dims, int num_dims,
                           TF_AllocatorAttributes* alloc_attrs,
                           TF_Status* status) {
  (void)alloc_attrs;  // all Loom memory is host memory
  if (!context) {
    loom__tf_status_set(status,
                        loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                         "TF_AllocateTemp: context is NULL"));
    return NULL;
  }
  loom_shape_t shape;
  loom_status_t result = shape_of(dims, num_dims, &shape);
  loom_tensor_t* tensor = NULL;
  if (!result && dtype != TF_STRING &&
      loom_dtype_size((loom_dtype_t)dtype) == 0) {
    result = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "TF_AllocateTemp: cannot allocate a tensor of dtype %d (%s)",
        (int)dtype, loom_dtype_name((loom_dtype_t)dtype));
  }
  if (!result) {
    loom_allocator_t allocator = context_of(context)->allocator;
    result = dtype == TF_STRING
                 ? loom_tensor_create_string(allocator, &shape, &tensor)
                 : loom_tensor_create_dense(allocator, (loom_dtype_t)dtype,
                                            &shape, &tensor);
  }
  loom__tf_status_set(status, result);
  return tf_tensor_of(tensor);
}

//===----------------------------------------------------------------------===//
// Thread pool
//===----------------------------------------------------------------------===//

static loom_thread_pool_t* pool_of(TF_OpKernelContext* context) {
  return context ? loom_host_context_thread_pool(context_of(context)->host)
                 : NULL;
}

void TF_ThreadPool_Schedule(TF_OpKernelContext* context, void (*fn)(void*),
                            void* arg) {
  if (!fn) return;
  loom_status_t status = loom_thread_pool_schedule(pool_of(context), fn, arg);
  if (status) {
    // Never lose the work: run it here.
    loom_status_free(status);
    fn(arg);
  }
}

void TF_ThreadPool_ScheduleWithHint(TF_OpKernelContext* context,
                                    void (*fn)(void*), void* arg, int start,
                                    int limit) {
  if (!fn) return;
  loom_status_t status = loom_thread_pool_schedule_with_hint(
      pool_of(context), fn, arg, start, limit);
  if (status && loom_status_code(status) == LOOM_STATUS_INVALID_ARGUMENT &&
      pool_of(context)) {
    // An out-of-range hint is only a hint.
    loom_status_free(status);
    status = loom_thread_pool_schedule(pool_of(context), fn, arg);
  }
  if (status) {
    loom_status_free(status);
    fn(arg);
  }
}

void TF_ThreadPool_ParallelFor(TF_OpKernelContext* context, int64_t total,
                               int64_t cost_per_unit,
                               void (*fn)(void*, int64_t, int64_t), void* arg) {
  if (!fn || total <= 0) return;
  loom_status_t status = loom_thread_pool_parallel_for(
      pool_of(context), total, cost_per_unit < 0 ? 0 : cost_per_unit, fn, arg);
  if (status) {
    loom_status_free(status);
    fn(arg, 0, total);
  }
}

void TF_ThreadPool_ParallelForWithWorkerId(
    TF_OpKernelContext* context, int64_t total, int64_t cost_per_unit,
    void (*fn)(void*, int64_t, int64_t, int), void* arg) {
  if (!fn || total <= 0) return;
  loom_status_t status = loom_thread_pool_parallel_for_with_worker_id(
      pool_of(context), total, cost_per_unit < 0 ? 0 : cost_per_unit, fn, arg);
  if (status) {
    loom_status_free(status);
    fn(arg, 0, total, 0);
  }
}

int TF_ThreadPool_NumThreads(TF_OpKernelContext* context) {
  return loom_thread_pool_num_threads(pool_of(context));
}
