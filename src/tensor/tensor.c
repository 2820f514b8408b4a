// Host tensors: a ref-counted header (kind, metadata) over a shared buffer
// or, for SCALAR tensors, an inline value.

#include "loom/tensor.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "base/ref_count.h"
#include "tensor/buffer_internal.h"
#include "tensor/checked_size.h"
#include "tensor/shape_internal.h"
#include "tensor/tensor_internal.h"

// Checks that `shape` can describe a tensor; *out_count (may be NULL)
// receives its element count.
static loom_status_t check_shape_count(const char* name,
                                       const loom_shape_t* shape,
                                       int64_t* out_count) {
  if (!shape) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: shape is NULL",
                            name);
  }
  int64_t count = loom_shape_num_elements(shape);
  if (count < 0) {
    char text[256];
    loom_shape_format(shape, text, sizeof(text));
    if (!loom_shape_is_fully_defined(shape)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: shape %s is not fully defined", name, text);
    }
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: the element count of shape %s overflows", name,
                            text);
  }
  if (out_count) *out_count = count;
  return loom_ok_status();
}

static loom_status_t check_shape(const char* name, const loom_shape_t* shape) {
  return check_shape_count(name, shape, NULL);
}

// Bytes for `count` elements of `element_size`, or an error on overflow.
static loom_status_t element_bytes(const char* name, int64_t count,
                                   size_t element_size, size_t* out_bytes) {
  if (!loom__size_bytes(count, element_size, out_bytes)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: %lld elements of %zu bytes overflow", name,
                            (long long)count, element_size);
  }
  return loom_ok_status();
}

static loom_status_t allocate_header(loom_allocator_t allocator,
                                     loom_tensor_kind_t kind,
                                     loom_dtype_t dtype,
                                     const loom_shape_t* shape,
                                     loom_tensor_t** out_tensor) {
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*tensor), (void**)&tensor));
  loom__ref_count_init(&tensor->ref_count);
  tensor->kind = kind;
  tensor->metadata.dtype = dtype;
  tensor->metadata.shape = *shape;
  tensor->num_elements = loom_shape_num_elements(shape);
  tensor->allocator = allocator;
  tensor->buffer = NULL;
  tensor->home = NULL;
  tensor->data = NULL;
  tensor->byte_size = 0;
  memset(tensor->scalar, 0, sizeof(tensor->scalar));
  *out_tensor = tensor;
  return loom_ok_status();
}

static loom_status_t check_fixed_size_dtype(const char* name,
                                            loom_dtype_t dtype) {
  if (loom_dtype_size(dtype) == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: dtype %s (%d) has no fixed element size", name,
                            loom_dtype_name(dtype), (int)dtype);
  }
  return loom_ok_status();
}

// Why loom_tensor_create_dense cannot make this tensor (out of line: the
// common case checks everything in one test).
static __attribute__((noinline)) loom_status_t dense_error(
    const char* name, loom_dtype_t dtype, const loom_shape_t* shape) {
  LOOM_RETURN_IF_ERROR(check_fixed_size_dtype(name, dtype));
  int64_t count = 0;
  LOOM_RETURN_IF_ERROR(check_shape_count(name, shape, &count));
  size_t bytes = 0;
  return element_bytes(name, count, loom_dtype_size(dtype), &bytes);
}

// A dense tensor of `dtype` (fixed element size) and the fully defined
// `shape`, whose element count is `count` and data size `bytes` (computed
// without overflow by the caller).
static loom_status_t create_dense_sized(const loom_allocator_t* allocator,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape,
                                        int64_t count, size_t bytes,
                                        loom_tensor_t** out_tensor) {
  // The tensor, its buffer and the data in one block.
  loom_buffer_t* buffer = NULL;
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom__buffer_allocate_with_prefix(
      allocator, sizeof(*tensor), bytes, LOOM_DEFAULT_DATA_ALIGNMENT, &buffer,
      (void**)&tensor));
  loom__ref_count_init(&tensor->ref_count);
  tensor->kind = LOOM_TENSOR_DENSE;
  tensor->metadata.dtype = dtype;
  tensor->metadata.shape = *shape;
  tensor->num_elements = count;
  // tensor->allocator stays unset: a tensor in its buffer's block goes with
  // the block.
  tensor->buffer = buffer;
  tensor->home = buffer;
  tensor->data = loom_buffer_data(buffer);
  tensor->byte_size = bytes;
  *out_tensor = tensor;
  return loom_ok_status();
}

// Both entry points below, each with its own copy (no call between them:
// every op's output comes through one of them).
static inline loom_status_t create_dense_counted(
    const loom_allocator_t* allocator, loom_dtype_t dtype,
    const loom_shape_t* shape, int64_t count, loom_tensor_t** out_tensor) {
  *out_tensor = NULL;
  size_t element_size = loom_dtype_size(dtype);
  size_t bytes = 0;
  if (LOOM_UNLIKELY(element_size == 0 ||
                    !loom__size_bytes(count, element_size, &bytes))) {
    return dense_error("loom_tensor_create_dense", dtype, shape);
  }
  return create_dense_sized(allocator, dtype, shape, count, bytes, out_tensor);
}

loom_status_t loom__tensor_create_dense(const loom_allocator_t* allocator,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape,
                                        loom_tensor_t** out_tensor) {
  return create_dense_counted(allocator, dtype, shape,
                              shape ? loom__shape_num_elements(shape) : -1,
                              out_tensor);
}

loom_status_t loom__tensor_create_dense_counted(
    const loom_allocator_t* allocator, loom_dtype_t dtype,
    const loom_shape_t* shape, int64_t count, loom_tensor_t** out_tensor) {
  return create_dense_counted(allocator, dtype, shape, count, out_tensor);
}

loom_status_t loom_tensor_create_dense(loom_allocator_t allocator,
                                       loom_dtype_t dtype,
                                       const loom_shape_t* shape,
                                       loom_tensor_t** out_tensor) {
  if (!out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_tensor_create_dense: out_tensor is NULL");
  }
  return loom__tensor_create_dense(&allocator, dtype, shape, out_tensor);
}

loom_status_t loom_tensor_create_dense_in_buffer(
    loom_allocator_t allocator, loom_dtype_t dtype, const loom_shape_t* shape,
    loom_buffer_t* buffer, size_t byte_offset, loom_tensor_t** out_tensor) {
  static const char kName[] = "loom_tensor_create_dense_in_buffer";
  if (!out_tensor || !buffer) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !out_tensor ? "out_tensor" : "buffer");
  }
  *out_tensor = NULL;
  if (!loom_dtype_is_valid(dtype) || dtype == LOOM_DTYPE_STRING) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: dtype %s (%d) cannot back a dense tensor",
                            kName, loom_dtype_name(dtype), (int)dtype);
  }
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  size_t buffer_size = loom_buffer_size(buffer);
  if (byte_offset > buffer_size) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: byte offset %zu is past the end of a %zu-byte buffer", kName,
        byte_offset, buffer_size);
  }
  size_t bytes = buffer_size - byte_offset;
  if (loom_dtype_size(dtype) != 0) {
    LOOM_RETURN_IF_ERROR(element_bytes(kName, loom_shape_num_elements(shape),
                                       loom_dtype_size(dtype), &bytes));
    if (bytes > buffer_size - byte_offset) {
      char text[256];
      loom_shape_format(shape, text, sizeof(text));
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "%s: a %s tensor of shape %s needs %zu bytes, the buffer has %zu "
          "from offset %zu",
          kName, loom_dtype_name(dtype), text, bytes, buffer_size - byte_offset,
          byte_offset);
    }
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      allocate_header(allocator, LOOM_TENSOR_DENSE, dtype, shape, &tensor));
  loom_buffer_retain(buffer);
  tensor->buffer = buffer;
  char* data = loom_buffer_data(buffer);  // NULL for an empty external one
  tensor->data = data ? data + byte_offset : NULL;
  tensor->byte_size = bytes;
  *out_tensor = tensor;
  return loom_ok_status();
}

loom_status_t loom_tensor_create_scalar(loom_allocator_t allocator,
                                        loom_dtype_t dtype,
                                        const loom_shape_t* shape,
                                        const void* value,
                                        loom_tensor_t** out_tensor) {
  static const char kName[] = "loom_tensor_create_scalar";
  if (!out_tensor || !value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !out_tensor ? "out_tensor" : "value");
  }
  *out_tensor = NULL;
  LOOM_RETURN_IF_ERROR(check_fixed_size_dtype(kName, dtype));
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      allocate_header(allocator, LOOM_TENSOR_SCALAR, dtype, shape, &tensor));
  size_t size = loom_dtype_size(dtype);
  memcpy(tensor->scalar, value, size);
  tensor->data = tensor->scalar;
  tensor->byte_size = size;
  *out_tensor = tensor;
  return loom_ok_status();
}

static void destroy_strings(void* data, size_t size, void* arg) {
  (void)arg;
  loom_tstring_t* strings = data;
  for (size_t i = 0; i < size / sizeof(loom_tstring_t); ++i) {
    loom_tstring_deinitialize(&strings[i]);
  }
}

loom_status_t loom_tensor_create_string(loom_allocator_t allocator,
                                        const loom_shape_t* shape,
                                        loom_tensor_t** out_tensor) {
  static const char kName[] = "loom_tensor_create_string";
  if (!out_tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: out_tensor is NULL", kName);
  }
  *out_tensor = NULL;
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  size_t bytes = 0;
  LOOM_RETURN_IF_ERROR(element_bytes(kName, loom_shape_num_elements(shape),
                                     sizeof(loom_tstring_t), &bytes));
  // Zero bytes are empty SMALL strings, so the buffer needs no other setup.
  loom_buffer_t* buffer = NULL;
  LOOM_RETURN_IF_ERROR(loom__buffer_allocate_with_finalizer(
      allocator, bytes, LOOM_DEFAULT_DATA_ALIGNMENT, destroy_strings, &buffer));
  loom_tensor_t* tensor = NULL;
  loom_status_t status = allocate_header(allocator, LOOM_TENSOR_STRING,
                                         LOOM_DTYPE_STRING, shape, &tensor);
  if (status) {
    loom_buffer_release(buffer);
    return status;
  }
  tensor->buffer = buffer;
  tensor->data = loom_buffer_data(buffer);
  tensor->byte_size = bytes;
  *out_tensor = tensor;
  return loom_ok_status();
}

loom_status_t loom_tensor_create_string_in_buffer(loom_allocator_t allocator,
                                                  const loom_shape_t* shape,
                                                  loom_buffer_t* buffer,
                                                  loom_tensor_t** out_tensor) {
  static const char kName[] = "loom_tensor_create_string_in_buffer";
  if (!out_tensor || !buffer) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !out_tensor ? "out_tensor" : "buffer");
  }
  *out_tensor = NULL;
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  size_t bytes = 0;
  LOOM_RETURN_IF_ERROR(element_bytes(kName, loom_shape_num_elements(shape),
                                     sizeof(loom_tstring_t), &bytes));
  if (bytes > loom_buffer_size(buffer)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: %lld strings need %zu bytes, the buffer has %zu", kName,
        (long long)loom_shape_num_elements(shape), bytes,
        loom_buffer_size(buffer));
  }
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(allocate_header(allocator, LOOM_TENSOR_STRING,
                                       LOOM_DTYPE_STRING, shape, &tensor));
  loom_buffer_retain(buffer);
  tensor->buffer = buffer;
  tensor->data = loom_buffer_data(buffer);
  tensor->byte_size = bytes;
  *out_tensor = tensor;
  return loom_ok_status();
}

loom_status_t loom_tensor_convert_to_dense(loom_allocator_t allocator,
                                           loom_tensor_t* tensor,
                                           loom_tensor_t** out_dense) {
  static const char kName[] = "loom_tensor_convert_to_dense";
  if (!tensor || !out_dense) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !tensor ? "tensor" : "out_dense");
  }
  *out_dense = NULL;
  switch (tensor->kind) {
    case LOOM_TENSOR_DENSE:
      loom_tensor_retain(tensor);
      *out_dense = tensor;
      return loom_ok_status();
    case LOOM_TENSOR_STRING:
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: a string tensor has no dense form", kName);
    case LOOM_TENSOR_SCALAR:
    default:
      break;
  }
  loom_tensor_t* dense = NULL;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      allocator, tensor->metadata.dtype, &tensor->metadata.shape, &dense));
  size_t size = loom_dtype_size(tensor->metadata.dtype);
  int64_t count = loom_tensor_num_elements(dense);
  unsigned char* out = dense->data;
  for (int64_t i = 0; i < count; ++i) {
    memcpy(out + (size_t)i * size, tensor->scalar, size);
  }
  *out_dense = dense;
  return loom_ok_status();
}

void loom_tensor_retain(loom_tensor_t* tensor) {
  if (tensor) loom__ref_count_inc(&tensor->ref_count);
}

void loom__tensor_destroy(loom_tensor_t* tensor) {
  loom_buffer_t* home = tensor->home;
  if (tensor->buffer != home) loom_buffer_release(tensor->buffer);
  if (home) {
    loom__buffer_release(home);  // may free the tensor with its block
  } else {
    loom_allocator_free(tensor->allocator, tensor);
  }
}

void loom_tensor_release(loom_tensor_t* tensor) {
  if (tensor) loom__tensor_release(tensor);
}

bool loom_tensor_is_forwardable(const loom_tensor_t* tensor) {
  return tensor && tensor->buffer &&
         loom__ref_count_is_one(&tensor->ref_count) &&
         loom_buffer_is_unique(tensor->buffer) &&
         loom_buffer_owns_memory(tensor->buffer);
}

loom_tensor_kind_t loom_tensor_kind(const loom_tensor_t* tensor) {
  return tensor->kind;
}

loom_dtype_t loom_tensor_dtype(const loom_tensor_t* tensor) {
  return tensor->metadata.dtype;
}

const loom_shape_t* loom_tensor_shape(const loom_tensor_t* tensor) {
  return &tensor->metadata.shape;
}

const loom_tensor_metadata_t* loom_tensor_metadata(
    const loom_tensor_t* tensor) {
  return &tensor->metadata;
}

int64_t loom_tensor_num_elements(const loom_tensor_t* tensor) {
  return tensor->num_elements;
}

size_t loom_tensor_byte_size(const loom_tensor_t* tensor) {
  return tensor->byte_size;
}

void* loom_tensor_data(const loom_tensor_t* tensor) {
  return tensor->data;
}

loom_buffer_t* loom_tensor_buffer(const loom_tensor_t* tensor) {
  return tensor->buffer;
}

bool loom_tensor_is_aligned(const loom_tensor_t* tensor) {
  return ((uintptr_t)tensor->data % LOOM_DEFAULT_DATA_ALIGNMENT) == 0;
}

loom_tstring_t* loom_tensor_string_at(const loom_tensor_t* tensor,
                                      int64_t index) {
  if (!tensor || tensor->kind != LOOM_TENSOR_STRING || index < 0 ||
      index >= loom_tensor_num_elements(tensor)) {
    return NULL;
  }
  return (loom_tstring_t*)tensor->data + index;
}

loom_status_t loom_tensor_set_shape(loom_tensor_t* tensor,
                                    const loom_shape_t* shape) {
  static const char kName[] = "loom_tensor_set_shape";
  if (!tensor) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: tensor is NULL",
                            kName);
  }
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  if (!loom__ref_count_is_one(&tensor->ref_count)) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "%s: the tensor is shared; only its sole owner "
                            "may reshape it",
                            kName);
  }
  int64_t old_count = loom_tensor_num_elements(tensor);
  int64_t new_count = loom_shape_num_elements(shape);
  if (old_count != new_count) {
    char old_text[256], new_text[256];
    loom_shape_format(&tensor->metadata.shape, old_text, sizeof(old_text));
    loom_shape_format(shape, new_text, sizeof(new_text));
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: cannot reshape a tensor of shape %s (%lld elements) to %s (%lld "
        "elements)",
        kName, old_text, (long long)old_count, new_text, (long long)new_count);
  }
  tensor->metadata.shape = *shape;
  tensor->num_elements = loom_shape_num_elements(shape);
  return loom_ok_status();
}

loom_status_t loom_tensor_bitcast_from(loom_tensor_t* tensor,
                                       const loom_tensor_t* source,
                                       loom_dtype_t dtype,
                                       const loom_shape_t* shape) {
  static const char kName[] = "loom_tensor_bitcast_from";
  if (!tensor || !source) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            kName, !tensor ? "tensor" : "source");
  }
  if (tensor->kind != LOOM_TENSOR_DENSE || source->kind != LOOM_TENSOR_DENSE) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: both tensors must be dense", kName);
  }
  size_t in_size = loom_dtype_size(source->metadata.dtype);
  if (in_size == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: input tensor has a zero-sized data type (%s)",
                            kName, loom_dtype_name(source->metadata.dtype));
  }
  size_t out_size = loom_dtype_size(dtype);
  if (out_size == 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: output tensor has a zero-sized data type (%s)",
                            kName, loom_dtype_name(dtype));
  }
  LOOM_RETURN_IF_ERROR(check_shape(kName, shape));
  if (!loom__ref_count_is_one(&tensor->ref_count)) {
    return loom_make_status(LOOM_STATUS_FAILED_PRECONDITION,
                            "%s: the tensor is shared; only its sole owner "
                            "may bitcast it",
                            kName);
  }
  size_t out_bytes = 0;
  LOOM_RETURN_IF_ERROR(element_bytes(kName, loom_shape_num_elements(shape),
                                     out_size, &out_bytes));
  if (out_bytes != source->byte_size) {
    char text[256];
    loom_shape_format(shape, text, sizeof(text));
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: input tensor (%zu bytes) is not compatible with output dtype %s "
        "and shape %s (%zu bytes)",
        kName, source->byte_size, loom_dtype_name(dtype), text, out_bytes);
  }
  if (tensor->buffer != source->buffer) {
    // The home buffer's one reference stays: it keeps this tensor's memory.
    if (source->buffer != tensor->home) loom_buffer_retain(source->buffer);
    if (tensor->buffer != tensor->home) loom_buffer_release(tensor->buffer);
    tensor->buffer = source->buffer;
  }
  tensor->data = source->data;
  tensor->byte_size = out_bytes;
  tensor->metadata.dtype = dtype;
  tensor->metadata.shape = *shape;
  tensor->num_elements = loom_shape_num_elements(shape);
  return loom_ok_status();
}
