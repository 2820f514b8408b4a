// Variables: VarHandleOp, AssignVariableOp, AssignAddVariableOp,
// AssignSubVariableOp, ReadVariableOp, DestroyResourceOp,
// VarIsInitializedOp.
//
// A resource tensor (dtype RESOURCE, shape []) wraps a reference to a
// variable object: its buffer is the variable, and the buffer's deallocator
// drops the reference. A variable holds its value as a shared host tensor:
// a read returns that tensor (no copy), an assign replaces it, and an
// update (AssignAdd/Sub) writes in place only when nothing else holds the
// value — otherwise it makes a new tensor, so a value read earlier never
// changes (copy-on-write).
//
// VarHandleOp with a shared_name looks the variable up by (container,
// shared_name) in the resource manager of the host context it runs on
// (loom_kernel_context_resources) and creates it there when missing;
// without one it makes a new anonymous variable, which lives as long as
// resource tensors refer to it.

#include "kernels/resource.h"

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/ref_count.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "registry/kernel_context.h"

#define kVarMagic UINT64_C(0x6c6f6f6d56617221)  // "loomVar!"

typedef struct resource_var_t {
  uint64_t magic;
  loom__ref_count_t ref_count;
  pthread_mutex_t mutex;  // value, destroyed
  loom_dtype_t dtype;
  loom_shape_t shape;    // as declared by VarHandleOp
  loom_tensor_t* value;  // NULL until assigned
  bool destroyed;
  char container[64];
  char name[128];
} resource_var_t;

static void var_retain(void* opaque) {
  resource_var_t* var = opaque;
  loom__ref_count_inc(&var->ref_count);
}

static void var_release(void* opaque) {
  resource_var_t* var = opaque;
  if (!var || !loom__ref_count_dec(&var->ref_count)) return;
  loom_tensor_release(var->value);
  pthread_mutex_destroy(&var->mutex);
  var->magic = 0;
  loom_allocator_free(loom_allocator_system(), var);
}

static void release_from_buffer(void* data, size_t size, void* arg) {
  (void)size;
  (void)arg;
  var_release(data);
}

// Shared variables in a resource manager.
static const loom_resource_type_t kVarType = {
    .name = "Var",
    .retain = var_retain,
    .release = var_release,
};

static loom_status_t new_var(loom_dtype_t dtype, const loom_shape_t* shape,
                             const char* container, const char* name,
                             resource_var_t** out) {
  resource_var_t* var = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(loom_allocator_system(),
                                             sizeof(*var), (void**)&var));
  var->magic = kVarMagic;
  loom__ref_count_init(&var->ref_count);
  pthread_mutex_init(&var->mutex, NULL);
  var->dtype = dtype;
  var->shape = *shape;
  snprintf(var->container, sizeof(var->container), "%s", container);
  snprintf(var->name, sizeof(var->name), "%s", name);
  *out = var;
  return loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Resource tensors
//===----------------------------------------------------------------------===//

// A RESOURCE tensor holding a new reference to `var`.
static loom_status_t resource_tensor(loom_allocator_t allocator,
                                     resource_var_t* var, loom_tensor_t** out) {
  var_retain(var);
  loom_buffer_t* buffer = NULL;
  LOOM_RETURN_IF_ERROR(loom_buffer_wrap(allocator, var, sizeof(*var),
                                        release_from_buffer, NULL, &buffer));
  loom_shape_t scalar = loom_shape_scalar();
  loom_status_t status = loom_tensor_create_dense_in_buffer(
      allocator, LOOM_DTYPE_RESOURCE, &scalar, buffer, 0, out);
  loom_buffer_release(buffer);
  return status;
}

// The variable input `index` refers to (borrowed for the call).
static loom_status_t var_of(loom_kernel_context_t* ctx, int32_t index,
                            resource_var_t** out) {
  const loom_tensor_t* tensor = loom_kernel_context_input(ctx, index);
  const char* op = loom_kernel_context_op(ctx)->name;
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_RESOURCE ||
      loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: input %d is not a resource tensor", op, index);
  }
  resource_var_t* var = loom_tensor_data(tensor);
  if (loom_tensor_byte_size(tensor) != sizeof(*var) || !var ||
      var->magic != kVarMagic) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: input %d is a resource tensor that does not "
                            "refer to a variable (make it with VarHandleOp)",
                            op, index);
  }
  *out = var;
  return loom_ok_status();
}

static loom_status_t deleted_error(const resource_var_t* var) {
  return loom_make_status(
      LOOM_STATUS_FAILED_PRECONDITION,
      "Could not find variable %s. This could mean that the variable has been "
      "deleted. Debug info: container=%s",
      var->name, var->container);
}

static loom_status_t uninitialized_error(const resource_var_t* var) {
  return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                          "Attempting to use uninitialized value %s "
                          "(container=%s): assign the variable first",
                          var->name, var->container);
}

static void format_shape(const loom_shape_t* shape, char* text,
                         size_t capacity) {
  loom_shape_format(shape, text, capacity);
}

//===----------------------------------------------------------------------===//
// Kernel state: the attributes each op reads once
//===----------------------------------------------------------------------===//

typedef struct var_kernel_t {
  loom_dtype_t dtype;
  loom_shape_t shape;
  bool validate_shape;
  bool ignore_lookup_error;
  char container[64];
  char shared_name[128];
} var_kernel_t;

static void* var_kernel_create(loom_kernel_construction_t* ctx) {
  const loom_op_attrs_t* attrs = loom_kernel_construction_attrs(ctx);
  var_kernel_t* kernel = NULL;
  loom_status_t status = loom_allocator_calloc(
      loom_allocator_system(), sizeof(*kernel), (void**)&kernel);
  if (status) {
    loom_kernel_construction_fail(ctx, status);
    return NULL;
  }
  kernel->shape = loom_shape_unknown();
  kernel->ignore_lookup_error = true;
  // (On failure the kernel is returned all the same: deleting it is the
  // runtime's.)
  const char* op_name = ctx->op ? ctx->op->name : "VarHandleOp";
  loom_attr_value_t value;
  if (loom_op_attrs_get(attrs, "dtype", &value) &&
      value.kind == LOOM_ATTR_KIND_DTYPE && !value.is_list) {
    kernel->dtype = value.u.dtype;
    // A variable holds tensors of a real dtype.
    if (!loom_dtype_is_valid(kernel->dtype) ||
        kernel->dtype == LOOM_DTYPE_RESOURCE) {
      loom_kernel_construction_fail(
          ctx, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "%s: attr 'dtype' is %s (%d), not the dtype "
                                "of a variable",
                                op_name, loom_dtype_name(value.u.dtype),
                                (int)value.u.dtype));
      return kernel;
    }
  }
  if (loom_op_attrs_get(attrs, "shape", &value)) {
    status = loom_attr_value_to_shape(&value, &kernel->shape);
    if (status) {
      loom_kernel_construction_fail(
          ctx, loom_status_annotate(status, "%s: attr 'shape'", op_name));
      return kernel;
    }
  }
  if (loom_op_attrs_get(attrs, "validate_shape", &value) &&
      value.kind == LOOM_ATTR_KIND_BOOL) {
    kernel->validate_shape = value.u.b;
  }
  if (loom_op_attrs_get(attrs, "ignore_lookup_error", &value) &&
      value.kind == LOOM_ATTR_KIND_BOOL) {
    kernel->ignore_lookup_error = value.u.b;
  }
  if (loom_op_attrs_get(attrs, "container", &value) &&
      value.kind == LOOM_ATTR_KIND_STRING) {
    snprintf(kernel->container, sizeof(kernel->container), "%.*s",
             (int)value.u.string.size, value.u.string.data);
  }
  if (loom_op_attrs_get(attrs, "shared_name", &value) &&
      value.kind == LOOM_ATTR_KIND_STRING) {
    if (value.u.string.size >= sizeof(kernel->shared_name)) {
      loom_kernel_construction_fail(
          ctx, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "shared_name of %zu bytes is longer than %zu",
                                value.u.string.size,
                                sizeof(kernel->shared_name) - 1));
    }
    snprintf(kernel->shared_name, sizeof(kernel->shared_name), "%.*s",
             (int)value.u.string.size, value.u.string.data);
  }
  return kernel;
}

static void var_kernel_delete(void* kernel) {
  loom_allocator_free(loom_allocator_system(), kernel);
}

// The manager's creation callback: the variable VarHandleOp declares.
static loom_status_t create_shared_var(void* opaque, void** out_var) {
  const var_kernel_t* kernel = opaque;
  return new_var(kernel->dtype, &kernel->shape, kernel->container,
                 kernel->shared_name, (resource_var_t**)out_var);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static void var_handle_compute(void* opaque, loom_kernel_context_t* ctx) {
  var_kernel_t* kernel = opaque;
  resource_var_t* var = NULL;
  loom_status_t status;
  loom_resource_manager_t* manager = loom_kernel_context_resources(ctx);
  if (kernel->shared_name[0]) {
    status = loom_resource_manager_lookup_or_create(
        manager, &kVarType, kernel->container, kernel->shared_name,
        create_shared_var, kernel, (void**)&var);
  } else {
    char name[64];
    snprintf(name, sizeof(name), "_AnonymousVar%" PRId64,
             loom_resource_manager_unique_id(manager));
    status =
        new_var(kernel->dtype, &kernel->shape, kernel->container, name, &var);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status = resource_tensor(loom_kernel_context_allocator(ctx), var, &tensor);
  }
  if (!status) status = loom_kernel_context_set_output(ctx, 0, tensor);
  loom_tensor_release(tensor);
  var_release(var);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void assign_compute(void* opaque, loom_kernel_context_t* ctx) {
  var_kernel_t* kernel = opaque;
  resource_var_t* var = NULL;
  loom_status_t status = var_of(ctx, 0, &var);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  loom_tensor_t* value = loom_kernel_context_input(ctx, 1);
  pthread_mutex_lock(&var->mutex);
  if (var->destroyed) {
    status = deleted_error(var);
  } else if (var->dtype != loom_tensor_dtype(value)) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Trying to assign variable with wrong dtype. Expected %s got %s",
        loom_dtype_name(var->dtype), loom_dtype_name(loom_tensor_dtype(value)));
  } else if (kernel->validate_shape &&
             !loom_shape_is_compatible(&var->shape, loom_tensor_shape(value))) {
    char expected[LOOM_SHAPE_FORMAT_MAX];
    char got[LOOM_SHAPE_FORMAT_MAX];
    format_shape(&var->shape, expected, sizeof(expected));
    format_shape(loom_tensor_shape(value), got, sizeof(got));
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Trying to assign to variable with tensor with "
                              "wrong shape. Expected %s got %s",
                              expected, got);
  } else {
    // Tensors are immutable once shared: the variable keeps this one.
    loom_tensor_retain(value);
    loom_tensor_release(var->value);
    var->value = value;
  }
  pthread_mutex_unlock(&var->mutex);
  if (status) loom_kernel_context_fail(ctx, status);
}

#define UPDATE_LOOP(T, U)                                              \
  do {                                                                 \
    T* out = (T*)to;                                                   \
    const T* a = (const T*)from;                                       \
    const T* b = (const T*)delta;                                      \
    if (subtract) {                                                    \
      for (int64_t i = 0; i < n; ++i) out[i] = (T)((U)a[i] - (U)b[i]); \
    } else {                                                           \
      for (int64_t i = 0; i < n; ++i) out[i] = (T)((U)a[i] + (U)b[i]); \
    }                                                                  \
  } while (0)

// to[i] = from[i] +/- delta[i] for n elements of dtype (to may be from).
static void update(loom_dtype_t dtype, void* to, const void* from,
                   const void* delta, int64_t n, bool subtract) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      UPDATE_LOOP(float, float);
      break;
    case LOOM_DTYPE_COMPLEX64:
      n *= 2;
      UPDATE_LOOP(float, float);
      break;
    case LOOM_DTYPE_DOUBLE:
      UPDATE_LOOP(double, double);
      break;
    case LOOM_DTYPE_COMPLEX128:
      n *= 2;
      UPDATE_LOOP(double, double);
      break;
    case LOOM_DTYPE_INT8:
      UPDATE_LOOP(int8_t, uint8_t);
      break;
    case LOOM_DTYPE_UINT8:
      UPDATE_LOOP(uint8_t, uint8_t);
      break;
    case LOOM_DTYPE_INT16:
      UPDATE_LOOP(int16_t, uint16_t);
      break;
    case LOOM_DTYPE_UINT16:
      UPDATE_LOOP(uint16_t, uint16_t);
      break;
    case LOOM_DTYPE_INT32:
      UPDATE_LOOP(int32_t, uint32_t);
      break;
    case LOOM_DTYPE_UINT32:
      UPDATE_LOOP(uint32_t, uint32_t);
      break;
    case LOOM_DTYPE_INT64:
      UPDATE_LOOP(int64_t, uint64_t);
      break;
    case LOOM_DTYPE_UINT64:
      UPDATE_LOOP(uint64_t, uint64_t);
      break;
    default:
      break;  // the kernel's type constraint excludes the rest
  }
}

static void update_compute(loom_kernel_context_t* ctx, bool subtract) {
  resource_var_t* var = NULL;
  loom_status_t status = var_of(ctx, 0, &var);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  loom_tensor_t* delta = loom_kernel_context_input(ctx, 1);
  pthread_mutex_lock(&var->mutex);
  loom_tensor_t* old = var->value;
  if (var->destroyed) {
    status = deleted_error(var);
  } else if (!old) {
    status = uninitialized_error(var);
  } else if (var->dtype != loom_tensor_dtype(delta)) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Trying to assign variable with wrong dtype. Expected %s got %s",
        loom_dtype_name(var->dtype), loom_dtype_name(loom_tensor_dtype(delta)));
  } else if (!loom_shape_equal(loom_tensor_shape(old),
                               loom_tensor_shape(delta))) {
    char have[LOOM_SHAPE_FORMAT_MAX];
    char got[LOOM_SHAPE_FORMAT_MAX];
    format_shape(loom_tensor_shape(old), have, sizeof(have));
    format_shape(loom_tensor_shape(delta), got, sizeof(got));
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Cannot update variable with shape %s using a "
                              "Tensor with shape %s, shapes must be equal.",
                              have, got);
  } else if (loom_tensor_kind(old) == LOOM_TENSOR_DENSE &&
             loom_tensor_is_forwardable(old)) {
    // Nothing else holds the value: update it in place.
    update(var->dtype, loom_tensor_data(old), loom_tensor_data(old),
           loom_tensor_data(delta), loom_tensor_num_elements(old), subtract);
  } else {
    // Someone holds the value (a read): leave it, make a new one.
    loom_tensor_t* dense = NULL;
    loom_tensor_t* fresh = NULL;
    status = loom_tensor_convert_to_dense(loom_kernel_context_allocator(ctx),
                                          old, &dense);
    if (!status) {
      status =
          loom_tensor_create_dense(loom_kernel_context_allocator(ctx),
                                   var->dtype, loom_tensor_shape(old), &fresh);
    }
    if (!status) {
      update(var->dtype, loom_tensor_data(fresh), loom_tensor_data(dense),
             loom_tensor_data(delta), loom_tensor_num_elements(old), subtract);
      loom_tensor_release(var->value);
      var->value = fresh;
      fresh = NULL;
    }
    loom_tensor_release(dense);
    loom_tensor_release(fresh);
  }
  pthread_mutex_unlock(&var->mutex);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void assign_add_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  update_compute(ctx, false);
}

static void assign_sub_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  update_compute(ctx, true);
}

static void read_compute(void* opaque, loom_kernel_context_t* ctx) {
  var_kernel_t* kernel = opaque;
  resource_var_t* var = NULL;
  loom_status_t status = var_of(ctx, 0, &var);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  pthread_mutex_lock(&var->mutex);
  if (var->destroyed) {
    status = deleted_error(var);
  } else if (!var->value) {
    status = uninitialized_error(var);
  } else if (var->dtype != kernel->dtype) {
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Trying to read variable with wrong dtype. Expected %s got %s",
        loom_dtype_name(var->dtype), loom_dtype_name(kernel->dtype));
  } else {
    status = loom_kernel_context_set_output(ctx, 0, var->value);
  }
  pthread_mutex_unlock(&var->mutex);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void destroy_compute(void* opaque, loom_kernel_context_t* ctx) {
  var_kernel_t* kernel = opaque;
  resource_var_t* var = NULL;
  loom_status_t status = var_of(ctx, 0, &var);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  // Its name goes first, so that a VarHandleOp from now on makes a new
  // variable rather than finding this one destroyed.
  loom_resource_manager_remove(loom_kernel_context_resources(ctx), &kVarType,
                               var);
  pthread_mutex_lock(&var->mutex);
  if (var->destroyed) {
    if (!kernel->ignore_lookup_error) {
      status = loom_make_status(LOOM_STATUS_NOT_FOUND,
                                "Resource %s/%s does not exist.",
                                var->container, var->name);
    }
  } else {
    var->destroyed = true;
    loom_tensor_release(var->value);
    var->value = NULL;
  }
  pthread_mutex_unlock(&var->mutex);
  if (status) loom_kernel_context_fail(ctx, status);
}

static void is_initialized_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  resource_var_t* var = NULL;
  loom_status_t status = var_of(ctx, 0, &var);
  loom_tensor_t* out = NULL;
  if (!status) {
    loom_shape_t scalar = loom_shape_scalar();
    status = loom_kernel_context_allocate_output(ctx, 0, &scalar, &out);
  }
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  pthread_mutex_lock(&var->mutex);
  *(bool*)loom_tensor_data(out) = var->value && !var->destroyed;
  pthread_mutex_unlock(&var->mutex);
}

//===----------------------------------------------------------------------===//
// Variables for the kernels that update them in place (resource.h)
//===----------------------------------------------------------------------===//

loom_status_t loom__resource_input(loom_kernel_context_t* ctx, int32_t index,
                                   loom__resource_var_t** out_var) {
  return var_of(ctx, index, out_var);
}

// The distinct variables of vars[0, count), by address, into `sorted`;
// returns their number (count is small: a few).
static int32_t distinct_in_order(loom__resource_var_t* const* vars,
                                 int32_t count, loom__resource_var_t** sorted) {
  int32_t n = 0;
  for (int32_t i = 0; i < count; ++i) {
    loom__resource_var_t* var = vars[i];
    int32_t at = 0;
    while (at < n && (uintptr_t)sorted[at] < (uintptr_t)var) at++;
    if (at < n && sorted[at] == var) continue;
    memmove(sorted + at + 1, sorted + at, sizeof(*sorted) * (size_t)(n - at));
    sorted[at] = var;
    n++;
  }
  return n;
}

enum { kMaxLockedVars = 8 };

void loom__resource_lock_all(loom__resource_var_t* const* vars, int32_t count) {
  loom__resource_var_t* sorted[kMaxLockedVars];
  assert(count <= kMaxLockedVars);
  int32_t n = distinct_in_order(vars, count, sorted);
  for (int32_t i = 0; i < n; ++i) pthread_mutex_lock(&sorted[i]->mutex);
}

void loom__resource_unlock_all(loom__resource_var_t* const* vars,
                               int32_t count) {
  loom__resource_var_t* sorted[kMaxLockedVars];
  assert(count <= kMaxLockedVars);
  int32_t n = distinct_in_order(vars, count, sorted);
  for (int32_t i = n - 1; i >= 0; --i) pthread_mutex_unlock(&sorted[i]->mutex);
}

loom_status_t loom__resource_value(const loom__resource_var_t* var,
                                   loom_dtype_t dtype, const char* arg,
                                   const loom_tensor_t** out_value) {
  if (var->destroyed) return deleted_error(var);
  if (!var->value) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "Attempting to use uninitialized variables: %s "
                            "(variable %s, container=%s): assign it first",
                            arg, var->name, var->container);
  }
  if (var->dtype != dtype) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Trying to update variable %s (input %s) with wrong dtype. Expected "
        "%s got %s",
        var->name, arg, loom_dtype_name(var->dtype), loom_dtype_name(dtype));
  }
  *out_value = var->value;
  return loom_ok_status();
}

loom_status_t loom__resource_writable_value(loom__resource_var_t* var,
                                            loom_allocator_t allocator,
                                            loom_tensor_t** out_value) {
  loom_tensor_t* old = var->value;
  if (loom_tensor_kind(old) == LOOM_TENSOR_DENSE &&
      loom_tensor_is_forwardable(old)) {
    *out_value = old;
    return loom_ok_status();
  }
  // Someone holds the value (a read): leave theirs, update a copy.
  loom_tensor_t* dense = NULL;
  loom_tensor_t* fresh = NULL;
  loom_status_t status = loom_tensor_convert_to_dense(allocator, old, &dense);
  if (!status) {
    status = loom_tensor_create_dense(allocator, var->dtype,
                                      loom_tensor_shape(old), &fresh);
  }
  if (!status) {
    memcpy(loom_tensor_data(fresh), loom_tensor_data(dense),
           loom_tensor_byte_size(fresh));
    loom_tensor_release(var->value);
    var->value = fresh;
    *out_value = fresh;
  }
  loom_tensor_release(dense);
  return status;
}

bool loom__resource_tensor_handle_data(const loom_tensor_t* tensor,
                                       loom_tensor_metadata_t* out_data) {
  if (!tensor || loom_tensor_dtype(tensor) != LOOM_DTYPE_RESOURCE ||
      loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE) {
    return false;
  }
  const resource_var_t* var = loom_tensor_data(tensor);
  if (loom_tensor_byte_size(tensor) != sizeof(*var) || !var ||
      var->magic != kVarMagic) {
    return false;
  }
  // The declaration is fixed when the variable is made: no lock.
  // A spilled shape's dims live in the process's shape pool: kept as is.
  *out_data =
      (loom_tensor_metadata_t){.dtype = var->dtype, .shape = var->shape};
  return true;
}

void loom__resource_retain(loom__resource_var_t* var) {
  var_retain(var);
}

void loom__resource_release(loom__resource_var_t* var) {
  var_release(var);
}

void loom__resource_lock(loom__resource_var_t* var) {
  pthread_mutex_lock(&var->mutex);
}

void loom__resource_unlock(loom__resource_var_t* var) {
  pthread_mutex_unlock(&var->mutex);
}

loom_dtype_t loom__resource_dtype(const loom__resource_var_t* var) {
  return var->dtype;
}

static loom_status_t wrong_shape_error(const loom_shape_t* expected,
                                       const loom_shape_t* got) {
  char expected_text[LOOM_SHAPE_FORMAT_MAX];
  char got_text[LOOM_SHAPE_FORMAT_MAX];
  format_shape(expected, expected_text, sizeof(expected_text));
  format_shape(got, got_text, sizeof(got_text));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Trying to assign to variable with tensor with "
                          "wrong shape. Expected %s got %s",
                          expected_text, got_text);
}

loom_status_t loom__resource_assign(loom__resource_var_t* var,
                                    loom_tensor_t* value, bool validate_shape) {
  if (var->destroyed) return deleted_error(var);
  if (var->dtype != loom_tensor_dtype(value)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Trying to assign variable with wrong dtype. Expected %s got %s",
        loom_dtype_name(var->dtype), loom_dtype_name(loom_tensor_dtype(value)));
  }
  if (validate_shape) {
    if (!loom_shape_is_compatible(&var->shape, loom_tensor_shape(value))) {
      return wrong_shape_error(&var->shape, loom_tensor_shape(value));
    }
    if (var->value && !loom_shape_equal(loom_tensor_shape(var->value),
                                        loom_tensor_shape(value))) {
      return wrong_shape_error(loom_tensor_shape(var->value),
                               loom_tensor_shape(value));
    }
  }
  loom__resource_replace_value(var, value);
  return loom_ok_status();
}

void loom__resource_replace_value(loom__resource_var_t* var,
                                  loom_tensor_t* value) {
  loom_tensor_retain(value);
  loom_tensor_release(var->value);
  var->value = value;
}

//===----------------------------------------------------------------------===//
// Shape functions and registration
//===----------------------------------------------------------------------===//

static loom_status_t scalar_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t scalar = loom_shape_scalar();
  return loom_shape_inference_context_set_output(context, 0, &scalar);
}

// VarHandleOp: a scalar resource whose handle data is the declared dtype
// and shape (TensorFlow's), for static shape inference of its reads.
static loom_status_t var_handle_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  LOOM_RETURN_IF_ERROR(scalar_shape_fn(context, user_data));
  const loom_op_attrs_t* attrs = loom_shape_inference_context_attrs(context);
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "dtype", &value) ||
      value.kind != LOOM_ATTR_KIND_DTYPE || value.is_list) {
    return loom_ok_status();
  }
  loom_handle_data_t data = {.dtype = value.u.dtype,
                             .shape = loom_shape_unknown()};
  if (loom_op_attrs_get(attrs, "shape", &value)) {
    LOOM_RETURN_IF_ERROR(
        loom_status_annotate(loom_attr_value_to_shape(&value, &data.shape),
                             "VarHandleOp: attr "
                             "'shape'"));
  }
  return loom_shape_inference_context_set_output_handle_data(context, 0, &data);
}

// The handle data of input 0 (the variable) when known, checked against
// the op's attr `dtype` as TensorFlow's shape functions check it.
static loom_status_t variable_handle_data(
    loom_shape_inference_context_t* context, const char* what,
    loom_handle_data_t* out, bool* out_known) {
  *out_known = false;
  if (!loom_shape_inference_context_input_handle_data(context, 0, out)) {
    return loom_ok_status();
  }
  const char* op = loom_shape_inference_context_op(context)->name;
  loom_attr_value_t value;
  if (loom_op_attrs_get(loom_shape_inference_context_attrs(context), "dtype",
                        &value) &&
      value.kind == LOOM_ATTR_KIND_DTYPE && !value.is_list &&
      value.u.dtype != out->dtype) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: Trying to %s variable with wrong dtype. Expected %s got %s "
        "(input 'resource' is a variable of %s, attr 'dtype' is %s)",
        op, what, loom_dtype_name(out->dtype), loom_dtype_name(value.u.dtype),
        loom_dtype_name(out->dtype), loom_dtype_name(value.u.dtype));
  }
  *out_known = true;
  return loom_ok_status();
}

// ReadVariableOp: the variable's shape when its handle data is known
// (static shape inference); else unknown — an eager read's shape is known
// once it runs (an earlier assign may still be pending).
static loom_status_t read_variable_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom_handle_data_t data;
  bool known = false;
  LOOM_RETURN_IF_ERROR(variable_handle_data(context, "read", &data, &known));
  if (!known) return loom_ok_status();
  return loom_shape_inference_context_set_output(context, 0, &data.shape);
}

// AssignVariableOp and the updates: with the variable's handle data known,
// the value's dtype must be the variable's, and (AssignVariableOp with
// validate_shape) its shape compatible with the declared one.
static loom_status_t assign_variable_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom_handle_data_t data;
  bool known = false;
  LOOM_RETURN_IF_ERROR(variable_handle_data(context, "assign", &data, &known));
  if (!known) return loom_ok_status();
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_shape_inference_context_attrs(context),
                         "validate_shape", &value) ||
      value.kind != LOOM_ATTR_KIND_BOOL || !value.u.b) {
    return loom_ok_status();
  }
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &shape));
  if (loom_shape_is_compatible(&data.shape, &shape)) return loom_ok_status();
  char expected[LOOM_SHAPE_FORMAT_MAX];
  char got[LOOM_SHAPE_FORMAT_MAX];
  format_shape(&data.shape, expected, sizeof(expected));
  format_shape(&shape, got, sizeof(got));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "%s: Trying to assign to variable with tensor with "
                          "wrong shape. Expected %s got %s (input 'resource' "
                          "is a variable of shape %s, input 'value' has shape "
                          "%s)",
                          loom_shape_inference_context_op(context)->name,
                          expected, got, expected, got);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "VarHandleOp",
     .outputs = {"resource: resource"},
     .attrs = {"container: string = ''", "shared_name: string = ''",
               "debug_name: string = ''", "dtype: type", "shape: shape",
               "allowed_devices: list(string) = []"},
     .shape_fn = var_handle_shape_fn,
     .is_stateful = true},
    {.name = "AssignVariableOp",
     .inputs = {"resource: resource", "value: dtype"},
     .attrs = {"dtype: type", "validate_shape: bool = false"},
     .shape_fn = assign_variable_shape_fn,
     .is_stateful = true},
    {.name = "AssignAddVariableOp",
     .inputs = {"resource: resource", "value: dtype"},
     .attrs = {"dtype: type"},
     .shape_fn = assign_variable_shape_fn,
     .is_stateful = true},
    {.name = "AssignSubVariableOp",
     .inputs = {"resource: resource", "value: dtype"},
     .attrs = {"dtype: type"},
     .shape_fn = assign_variable_shape_fn,
     .is_stateful = true},
    {.name = "ReadVariableOp",
     .inputs = {"resource: resource"},
     .outputs = {"value: dtype"},
     .attrs = {"dtype: type"},
     .shape_fn = read_variable_shape_fn,
     .is_stateful = true},
    {.name = "DestroyResourceOp",
     .inputs = {"resource: resource"},
     .attrs = {"ignore_lookup_error: bool = true"},
     .is_stateful = true},
    {.name = "VarIsInitializedOp",
     .inputs = {"resource: resource"},
     .outputs = {"is_initialized: bool"},
     .shape_fn = scalar_shape_fn,
     .is_stateful = true},
};

#define UPDATE_TYPES                                                         \
  {                                                                          \
    LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, \
        LOOM_DTYPE_INT8, LOOM_DTYPE_INT16, LOOM_DTYPE_UINT8,                 \
        LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64,             \
        LOOM_DTYPE_COMPLEX64, LOOM_DTYPE_COMPLEX128                          \
  }

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "VarHandleOp",
     .compute = var_handle_compute,
     .create = var_kernel_create,
     .destroy = var_kernel_delete},
    {.op_name = "AssignVariableOp",
     .compute = assign_compute,
     .create = var_kernel_create,
     .destroy = var_kernel_delete,
     .any_rank = true},
    {.op_name = "AssignAddVariableOp",
     .compute = assign_add_compute,
     .type_attr = "dtype",
     .types = UPDATE_TYPES,
     .any_rank = true},
    {.op_name = "AssignSubVariableOp",
     .compute = assign_sub_compute,
     .type_attr = "dtype",
     .types = UPDATE_TYPES,
     .any_rank = true},
    {.op_name = "ReadVariableOp",
     .compute = read_compute,
     .create = var_kernel_create,
     .destroy = var_kernel_delete,
     .any_rank = true},
    {.op_name = "DestroyResourceOp",
     .compute = destroy_compute,
     .create = var_kernel_create,
     .destroy = var_kernel_delete},
    {.op_name = "VarIsInitializedOp", .compute = is_initialized_compute},
};

loom_status_t loom__register_resource_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
