// TFRT's coo kernels: sparse host tensors in coordinate form (TFRT's
// CooHostTensor) made from dense host tensors and back, and compared.
// tfrt_dht.print_tensor prints them (kernels_dht.c).
//
//   coo.convert_dht_to_coo.<dtype>.<rank> %t, %ch -> (!t.tensor, chain)
//   coo.convert_coo_to_dht.<dtype>.<rank> %coo, %ch -> (!t.tensor, chain)
//   coo.tensor_equal.<dtype>.<rank> %a, %b, %ch -> (i1, chain)
//
// The rank in the name is the tensor's, checked. The coordinates of an
// element are TFRT's: its offset's digits taken with the dims first to last
// as radices, written last coordinate first (NumPy's
// np.unravel_index(offset, shape[::-1])). For a square shape they are the
// row-major coordinates; for others they are not (TFRT's own test expects
// [0, 2] for the third element of a [3, 2] tensor), and TFRT's programs
// print them so. coo.convert_coo_to_dht inverts the same numbering, so a
// round trip gives back the tensor whatever its shape.

#include <math.h>
#include <string.h>

#include "base/half.h"
#include "function/coo_tensor.h"
#include "function/kernels_dht.h"

enum { kMaxCooRank = 3 };  // TFRT registers ranks 0..3

typedef struct coo_kernel_t {
  loom_dtype_t dtype;
  int32_t rank;
} coo_kernel_t;

static void* pack(loom_dtype_t dtype, int32_t rank) {
  return (void*)(((uintptr_t)rank << 8) | (uintptr_t)dtype);
}

static coo_kernel_t unpack(const void* user_data) {
  uintptr_t bits = (uintptr_t)user_data;
  return (coo_kernel_t){.dtype = (loom_dtype_t)(bits & 0xff),
                        .rank = (int32_t)((bits >> 8) & 0xff)};
}

static loom_status_t rank_mismatch(const loom_program_frame_t* frame,
                                   int32_t index, int32_t rank,
                                   int32_t expected) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "'%s': argument %d has rank %d, expected %d",
                          loom_program_frame_op_name(frame), index, rank,
                          expected);
}

// Argument `index`, a COO tensor of the kernel's dtype and rank; NULL after
// failing the kernel otherwise.
static const loom_program_coo_tensor_t* coo_argument(
    loom_program_frame_t* frame, int32_t index, const coo_kernel_t* k) {
  const loom_program_value_t* value = loom_program_frame_value(frame, index);
  if (value && value->kind == LOOM_PROGRAM_VALUE_TENSOR) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': argument %d is a dense host tensor, "
                                "expected a COO tensor (from "
                                "coo.convert_dht_to_coo)",
                                loom_program_frame_op_name(frame), index));
    return NULL;
  }
  if (!loom__kernel_check(frame, index, LOOM_PROGRAM_VALUE_COO_TENSOR)) {
    return NULL;
  }
  const loom_program_coo_tensor_t* coo =
      loom_program_frame_value(frame, index)->u.coo_tensor;
  loom_status_t status = loom_ok_status();
  if (coo->dtype != k->dtype) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'%s': argument %d is a tensor of %s, "
                              "expected %s",
                              loom_program_frame_op_name(frame), index,
                              loom_dtype_name(coo->dtype),
                              loom_dtype_name(k->dtype));
  } else if (coo->shape.rank != k->rank) {
    status = rank_mismatch(frame, index, coo->shape.rank, k->rank);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return NULL;
  }
  return coo;
}

// Whether element k is zero (for floats, -0.0 too).
static bool is_zero(const void* data, size_t size, bool floats, int64_t k) {
  static const uint8_t kZero[16] = {0};
  const uint8_t* element = (const uint8_t*)data + (size_t)k * size;
  if (memcmp(element, kZero, size) == 0) return true;
  if (!floats) return false;
  switch (size) {
    case 2: {
      uint16_t bits;
      memcpy(&bits, element, 2);
      return bits == 0x8000;
    }
    case 4: {
      uint32_t bits;
      memcpy(&bits, element, 4);
      return bits == 0x80000000u;
    }
    case 8: {
      uint64_t bits;
      memcpy(&bits, element, 8);
      return bits == 0x8000000000000000ull;
    }
    default:
      return false;
  }
}

static bool is_float(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16 ||
         dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE;
}

// coo.convert_dht_to_coo: the non-zero elements, in row-major order.
static void from_dht_kernel(loom_program_frame_t* frame, void* user_data) {
  const coo_kernel_t k = unpack(user_data);
  loom_tensor_t* dense = loom__dht_tensor_argument(frame, 0, k.dtype);
  if (!dense) return;
  const loom_shape_t* shape = loom_tensor_shape(dense);
  if (shape->rank != k.rank) {
    loom_program_frame_fail(frame,
                            rank_mismatch(frame, 0, shape->rank, k.rank));
    return;
  }
  loom_allocator_t allocator = frame->executor->allocator;
  const void* data = loom_tensor_data(dense);
  size_t size = loom_dtype_size(k.dtype);
  bool floats = is_float(k.dtype);
  int64_t n = loom_tensor_num_elements(dense);
  int64_t count = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (!is_zero(data, size, floats, e)) ++count;
  }
  loom_shape_t values_shape = loom_shape_scalar();
  values_shape.rank = 1;
  values_shape.dims[0] = count;
  loom_shape_t indices_shape = values_shape;
  indices_shape.rank = 2;
  indices_shape.dims[1] = k.rank;
  loom_tensor_t* values = NULL;
  loom_tensor_t* indices = NULL;
  loom_program_coo_tensor_t* coo = NULL;
  loom_status_t status =
      loom_tensor_create_dense(allocator, k.dtype, &values_shape, &values);
  if (!status) {
    status = loom_tensor_create_dense(allocator, LOOM_DTYPE_INT64,
                                      &indices_shape, &indices);
  }
  if (!status) {
    uint8_t* out_values = loom_tensor_data(values);
    int64_t* out_indices = loom_tensor_data(indices);
    int64_t next = 0;
    for (int64_t e = 0; e < n; ++e) {
      if (is_zero(data, size, floats, e)) continue;
      memcpy(out_values + (size_t)next * size,
             (const uint8_t*)data + (size_t)e * size, size);
      int64_t offset = e;
      for (int32_t r = 0; r < k.rank; ++r) {
        out_indices[next * k.rank + (k.rank - 1 - r)] = offset % shape->dims[r];
        offset /= shape->dims[r];
      }
      ++next;
    }
    status = loom__coo_tensor_create(allocator, k.dtype, shape, indices, values,
                                     &coo);
  }
  if (!status) {
    loom_program_value_t payload;
    memset(&payload, 0, sizeof(payload));
    payload.kind = LOOM_PROGRAM_VALUE_COO_TENSOR;
    payload.u.coo_tensor = coo;
    status = loom_program_value_set(loom_program_frame_result(frame, 0),
                                    &payload);  // retains
  }
  if (!status) status = loom__dht_set_chain(frame, 1);
  loom__coo_tensor_release(coo);
  loom_tensor_release(values);
  loom_tensor_release(indices);
  loom__kernel_set_or_fail(frame, status);
}

// coo.convert_coo_to_dht: zeros, then each value at its coordinates, in
// TFRT's numbering (coordinate `axis` counts in radix dims[rank - 1 -
// axis]; one out of its range is an error, not a write out of bounds).
static void to_dht_kernel(loom_program_frame_t* frame, void* user_data) {
  const coo_kernel_t k = unpack(user_data);
  const loom_program_coo_tensor_t* coo = coo_argument(frame, 0, &k);
  if (!coo) return;
  loom_tensor_t* dense = NULL;
  loom_status_t status = loom_tensor_create_dense(frame->executor->allocator,
                                                  k.dtype, &coo->shape, &dense);
  if (!status) {
    memset(loom_tensor_data(dense), 0, loom_tensor_byte_size(dense));
    uint8_t* out = loom_tensor_data(dense);
    const uint8_t* values = loom_tensor_data(coo->values);
    const int64_t* indices = loom_tensor_data(coo->indices);
    size_t size = loom_dtype_size(k.dtype);
    int64_t count = loom_tensor_num_elements(coo->values);
    for (int64_t i = 0; !status && i < count; ++i) {
      int64_t offset = 0;
      for (int32_t axis = 0; axis < k.rank; ++axis) {
        int64_t at = indices[i * k.rank + axis];
        int64_t radix = coo->shape.dims[k.rank - 1 - axis];
        if (at < 0 || at >= radix) {
          status = loom_make_status(
              LOOM_STATUS_INVALID_ARGUMENT,
              "'%s': element %lld's coordinate %d is %lld, out of its range "
              "[0, %lld) (TFRT's numbering: dim %d's size)",
              loom_program_frame_op_name(frame), (long long)i, axis,
              (long long)at, (long long)radix, k.rank - 1 - axis);
          break;
        }
        offset = offset * radix + at;
      }
      if (!status) {
        memcpy(out + (size_t)offset * size, values + (size_t)i * size, size);
      }
    }
  }
  if (!status)
    status = loom__dht_set_tensor(loom_program_frame_result(frame, 0), dense);
  if (!status) status = loom__dht_set_chain(frame, 1);
  loom_tensor_release(dense);
  loom__kernel_set_or_fail(frame, status);
}

static double element(const void* data, loom_dtype_t dtype, int64_t k) {
  switch (dtype) {
    case LOOM_DTYPE_HALF:
      return loom__half_to_float(((const uint16_t*)data)[k]);
    case LOOM_DTYPE_BFLOAT16:
      return loom__bfloat16_to_float(((const uint16_t*)data)[k]);
    case LOOM_DTYPE_FLOAT:
      return ((const float*)data)[k];
    default:
      return ((const double*)data)[k];
  }
}

// coo.tensor_equal: the same coordinates, and values equal (integers) or
// close (floats: within 1e-6 relative, as TFRT's TensorApproxEqual).
static void equal_kernel(loom_program_frame_t* frame, void* user_data) {
  const coo_kernel_t k = unpack(user_data);
  const loom_program_coo_tensor_t* a = coo_argument(frame, 0, &k);
  const loom_program_coo_tensor_t* b = a ? coo_argument(frame, 1, &k) : NULL;
  if (!b) return;
  int64_t count = loom_tensor_num_elements(a->values);
  bool equal =
      count == loom_tensor_num_elements(b->values) &&
      memcmp(loom_tensor_data(a->indices), loom_tensor_data(b->indices),
             loom_tensor_byte_size(a->indices)) == 0;
  const void* x = loom_tensor_data(a->values);
  const void* y = loom_tensor_data(b->values);
  if (equal && !is_float(k.dtype)) {
    equal = memcmp(x, y, loom_tensor_byte_size(a->values)) == 0;
  }
  for (int64_t e = 0; equal && is_float(k.dtype) && e < count; ++e) {
    double u = element(x, k.dtype, e);
    double v = element(y, k.dtype, e);
    equal = u == v || fabs(u - v) <= 1e-6 * fmax(fabs(u), fabs(v));
  }
  loom_status_t status =
      loom_program_value_set_bool(loom_program_frame_result(frame, 0), equal);
  if (!status) status = loom__dht_set_chain(frame, 1);
  loom__kernel_set_or_fail(frame, status);
}

loom_status_t loom__program_register_coo_kernels(
    loom_program_executor_t* executor) {
  char name[96];
  for (int d = 0; d < LOOM__DHT_NUM_DTYPES; ++d) {
    const char* t = loom__dht_dtypes[d].name;
    loom_dtype_t dtype = loom__dht_dtypes[d].dtype;
    for (int32_t r = 0; r <= kMaxCooRank; ++r) {
      snprintf(name, sizeof(name), "coo.convert_dht_to_coo.%s.%d", t, r);
      LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, from_dht_kernel,
                                            pack(dtype, r), 2, 2));
      snprintf(name, sizeof(name), "coo.convert_coo_to_dht.%s.%d", t, r);
      LOOM_RETURN_IF_ERROR(loom__kernel_add(executor, name, to_dht_kernel,
                                            pack(dtype, r), 2, 2));
      snprintf(name, sizeof(name), "coo.tensor_equal.%s.%d", t, r);
      LOOM_RETURN_IF_ERROR(
          loom__kernel_add(executor, name, equal_kernel, pack(dtype, r), 3, 2));
    }
  }
  return loom_ok_status();
}
