// Unique (TensorFlow's signature, attrs and messages): the distinct values
// of a vector in the order they first appear, and for each element the
// position of its value among them. Values are compared as TensorFlow's
// CPU kernel compares them (a hash map with ==): -0.0 equals 0.0, and every
// NaN is a value of its own. Elements of up to 8 bytes (the real types and
// bool) are the keys of one hash map from base.

#include <inttypes.h>
#include <string.h>

#include "base/hash_map.h"
#include "base/small_vector.h"
#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"

static loom_status_t check_vector(const loom_shape_t* shape) {
  if (shape->rank >= 0 && shape->rank != 1) {
    return loom__array_invalid("unique expects a 1D vector.");
  }
  return loom_ok_status();
}

static loom_status_t unique_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t x, y = loom_shape_scalar();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &x));
  LOOM_RETURN_IF_ERROR(check_vector(&x));
  y.rank = 1;
  y.dims[0] = LOOM_UNKNOWN_DIM;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, 0, &y));
  if (x.rank < 0) {
    x.rank = 1;
    x.dims[0] = LOOM_UNKNOWN_DIM;
  }
  return loom_shape_inference_context_set_output(c, 1, &x);
}

// Element i as a map key: its bits, with -0 made +0. False for NaN (a
// value equal to nothing, itself included).
static bool element_key(loom_dtype_t dtype, const void* data, int64_t i,
                        uint64_t* key) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT: {
      float v = ((const float*)data)[i];
      if (v != v) return false;
      if (v == 0.0f) v = 0.0f;
      uint32_t bits;
      memcpy(&bits, &v, sizeof(bits));
      *key = bits;
      return true;
    }
    case LOOM_DTYPE_DOUBLE: {
      double v = ((const double*)data)[i];
      if (v != v) return false;
      if (v == 0.0) v = 0.0;
      memcpy(key, &v, sizeof(*key));
      return true;
    }
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t bits = ((const uint16_t*)data)[i];
      uint16_t exponent = dtype == LOOM_DTYPE_HALF ? 0x7c00 : 0x7f80;
      if ((bits & exponent) == exponent && (bits & ~exponent & 0x7fff)) {
        return false;  // NaN
      }
      if ((bits & 0x7fff) == 0) bits = 0;  // -0
      *key = bits;
      return true;
    }
    default:
      break;
  }
  switch (loom_dtype_size(dtype)) {
    case 1:
      *key = ((const uint8_t*)data)[i];
      break;
    case 2:
      *key = ((const uint16_t*)data)[i];
      break;
    case 4:
      *key = ((const uint32_t*)data)[i];
      break;
    default:
      *key = ((const uint64_t*)data)[i];
      break;
  }
  // bool: any nonzero byte is true.
  if (dtype == LOOM_DTYPE_BOOL) *key = *key != 0;
  return true;
}

// The first element of each distinct value: up to 16 without allocating.
LOOM_DEFINE_SMALL_VECTOR(index_vector, int64_t, 16)

static loom_status_t unique_run(loom_kernel_context_t* ctx,
                                loom_tensor_t* const* inputs) {
  loom_tensor_t* x = inputs[0];
  const loom_shape_t* shape = loom_tensor_shape(x);
  LOOM_RETURN_IF_ERROR(check_vector(shape));
  int64_t n = shape->dims[0];
  loom_dtype_t index_dtype = loom_kernel_context_output_dtype(ctx, 1);
  if (index_dtype == LOOM_DTYPE_INT32 && n > INT32_MAX) {
    return loom__array_invalid(
        "unique does not support input tensors larger than %d elements",
        INT32_MAX);
  }
  loom_tensor_t* idx = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 1, shape, &idx));
  loom_dtype_t dtype = loom_tensor_dtype(x);
  const void* data = loom_tensor_data(x);
  size_t size = loom_dtype_size(dtype);
  // Each element's position among the distinct values, and the index of
  // each distinct value's first element (order[j]).
  loom_allocator_t allocator = loom_allocator_default();
  loom__hash_map_t map;
  loom__hash_map_initialize(&map, allocator);
  index_vector_t order_storage;
  index_vector_initialize(&order_storage);
  loom_status_t status = loom__hash_map_reserve(&map, (size_t)n);
  if (!status) {
    status =
        index_vector_resize_uninitialized(&order_storage, allocator, (size_t)n);
  }
  int64_t* order = index_vector_data(&order_storage);
  int64_t count = 0;
  for (int64_t i = 0; !status && i < n; ++i) {
    uint64_t key = 0, position = 0;
    bool hashable = element_key(dtype, data, i, &key);
    if (!hashable || !loom__hash_map_find(&map, key, &position)) {
      position = (uint64_t)count;
      order[count++] = i;
      if (hashable) status = loom__hash_map_insert(&map, key, position);
    }
    if (index_dtype == LOOM_DTYPE_INT32) {
      ((int32_t*)loom_tensor_data(idx))[i] = (int32_t)position;
    } else {
      ((int64_t*)loom_tensor_data(idx))[i] = (int64_t)position;
    }
  }
  loom__hash_map_deinitialize(&map);
  loom_tensor_t* y = NULL;
  if (!status) {
    loom_shape_t y_shape = loom_shape_scalar();
    y_shape.rank = 1;
    y_shape.dims[0] = count;
    status = loom_kernel_context_allocate_output(ctx, 0, &y_shape, &y);
  }
  for (int64_t j = 0; !status && j < count; ++j) {
    memcpy((char*)loom_tensor_data(y) + (size_t)j * size,
           (const char*)data + (size_t)order[j] * size, size);
  }
  index_vector_deinitialize(&order_storage, allocator);
  return status;
}

static void unique_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, unique_run);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "Unique",
     .inputs = {"x: T"},
     .outputs = {"y: T", "idx: out_idx"},
     .attrs = {"T: type", "out_idx: {int32, int64} = DT_INT32"},
     .shape_fn = unique_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Unique",
     .compute = unique_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF,
               LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT8, LOOM_DTYPE_INT16,
               LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8,
               LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64,
               LOOM_DTYPE_BOOL}},
};

loom_status_t loom__register_unique_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
