// TFRT's dense host tensor kernels (tfrt_dht): !t.tensor values made,
// written in place, compared and printed; and corert's conversions between
// tensor handles and them. The host buffers under them are
// kernels_host_buffer.c's.
//
// Kernels that write a tensor (fill_tensor_with_constant,
// set_tensor_with_*) change it in place, as TFRT's do: the program orders
// them with chains. The dtype suffixes are the program spellings (i32,
// ui8, f16, ...) and `bool`; tensor kernels check that the tensor has that
// dtype.

#include <string.h>

#include "base/half.h"
#include "function/coo_tensor.h"
#include "function/kernels_dht.h"
#include "function/program_dtype.h"
#include "loom/op_handler.h"
#include "loom/tensor_handle.h"

typedef struct dht_kernel_t {
  loom_dtype_t dtype;
  int32_t rank;  // create_uninitialized_tensor's
  int32_t ulp;   // tensor_allclose's tolerance; 0 for tensor_equal
} dht_kernel_t;

// A kernel's user data packs its dtype, rank and tolerance.
static void* pack(loom_dtype_t dtype, int32_t rank, int32_t ulp) {
  return (void*)(((uintptr_t)(uint32_t)ulp << 16) | ((uintptr_t)rank << 8) |
                 (uintptr_t)dtype);
}

static dht_kernel_t unpack(const void* user_data) {
  uintptr_t bits = (uintptr_t)user_data;
  return (dht_kernel_t){.dtype = (loom_dtype_t)(bits & 0xff),
                        .rank = (int32_t)((bits >> 8) & 0xff),
                        .ulp = (int32_t)(bits >> 16)};
}

loom_status_t loom__dht_set_tensor(loom_async_value_t* result,
                                   loom_tensor_t* tensor) {
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_TENSOR;
  payload.u.tensor = tensor;
  return loom_program_value_set(result, &payload);  // retains
}

loom_tensor_t* loom__dht_tensor_argument(loom_program_frame_t* frame,
                                         int32_t index, loom_dtype_t dtype) {
  const loom_program_value_t* value = loom_program_frame_value(frame, index);
  if (value && value->kind == LOOM_PROGRAM_VALUE_COO_TENSOR) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': argument %d is a COO tensor, expected "
                                "a dense host tensor (from "
                                "coo.convert_coo_to_dht)",
                                loom_program_frame_op_name(frame), index));
    return NULL;
  }
  if (!loom__kernel_check(frame, index, LOOM_PROGRAM_VALUE_TENSOR)) {
    return NULL;
  }
  loom_tensor_t* tensor = loom_program_frame_value(frame, index)->u.tensor;
  if (loom_tensor_kind(tensor) != LOOM_TENSOR_DENSE) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': argument %d is not a dense tensor",
                                loom_program_frame_op_name(frame), index));
    return NULL;
  }
  if (dtype != LOOM_DTYPE_INVALID && loom_tensor_dtype(tensor) != dtype) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': argument %d is a tensor of %s, "
                                "expected %s",
                                loom_program_frame_op_name(frame), index,
                                loom_dtype_name(loom_tensor_dtype(tensor)),
                                loom_dtype_name(dtype)));
    return NULL;
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// Making and writing tensors
//===----------------------------------------------------------------------===//

// tfrt_dht.create_uninitialized_tensor.<dtype>.<rank> {shape = [...]}: its
// elements are zero (Loom does not hand out uninitialised memory).
static void create_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  const dht_kernel_t* k = &kernel;
  loom_shape_t shape;
  loom_attr_value_t value;
  loom_status_t status = loom_ok_status();
  if (loom_op_attrs_get(loom_program_frame_attrs(frame), "shape", &value) &&
      value.is_list && value.count == 0) {
    shape = loom_shape_scalar();
  } else {
    status = loom__kernel_shape_attr(frame, "shape", &shape);
  }
  if (!status && shape.rank != k->rank) {
    char text[256];
    loom_shape_format(&shape, text, sizeof(text));
    status = loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT, "'%s': shape %s has rank %d, expected %d",
        loom_program_frame_op_name(frame), text, shape.rank, k->rank);
  }
  loom_tensor_t* tensor = NULL;
  if (!status) {
    status = loom_tensor_create_dense(frame->executor->allocator, k->dtype,
                                      &shape, &tensor);
  }
  if (!status) {
    memset(loom_tensor_data(tensor), 0, loom_tensor_byte_size(tensor));
    status = loom__dht_set_tensor(loom_program_frame_result(frame, 0), tensor);
  }
  loom_tensor_release(tensor);
  loom__kernel_set_or_fail(frame, status);
}

// Whether a number attribute can be stored as `dtype`.
static bool is_number_attr(const loom_attr_value_t* value) {
  return value->kind == LOOM_ATTR_KIND_BOOL ||
         value->kind == LOOM_ATTR_KIND_I32 ||
         value->kind == LOOM_ATTR_KIND_I64 ||
         value->kind == LOOM_ATTR_KIND_F32 || value->kind == LOOM_ATTR_KIND_F64;
}

// tfrt_dht.fill_tensor_with_constant.<dtype> %t, %ch {value} -> chain
static void fill_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  const dht_kernel_t* k = &kernel;
  loom_tensor_t* tensor = loom__dht_tensor_argument(frame, 0, k->dtype);
  if (!tensor) return;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list || !is_number_attr(&value)) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "value", "a number"));
    return;
  }
  double f = 0;
  int64_t i = 0;
  loom__kernel_attr_number(&value, 0, &f, &i);
  void* data = loom_tensor_data(tensor);
  int64_t n = loom_tensor_num_elements(tensor);
  for (int64_t e = 0; e < n; ++e) {
    loom__kernel_store_number(k->dtype, data, e, f, i);
  }
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

static loom_status_t count_mismatch(const loom_program_frame_t* frame,
                                    int64_t given, int64_t expected) {
  // TFRT's message.
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "'%s': Incorrect number of values for the tensor: "
                          "%lld, but expected %lld",
                          loom_program_frame_op_name(frame), (long long)given,
                          (long long)expected);
}

// tfrt_dht.set_tensor_with_constant_values.<dtype> %t, %ch {values} -> chain
static void set_constant_values_kernel(loom_program_frame_t* frame,
                                       void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  const dht_kernel_t* k = &kernel;
  loom_tensor_t* tensor = loom__dht_tensor_argument(frame, 0, k->dtype);
  if (!tensor) return;
  loom_attr_value_t value;
  int64_t n = loom_tensor_num_elements(tensor);
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "values", &value) ||
      !value.is_list || (value.count > 0 && !is_number_attr(&value))) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "values", "a list of numbers"));
    return;
  }
  if (value.count != n) {
    loom_program_frame_fail(frame, count_mismatch(frame, value.count, n));
    return;
  }
  void* data = loom_tensor_data(tensor);
  for (int64_t e = 0; e < n; ++e) {
    double f = 0;
    int64_t i = 0;
    loom__kernel_attr_number(&value, e, &f, &i);
    loom__kernel_store_number(k->dtype, data, e, f, i);
  }
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

// The `shape` attribute (an empty list: a scalar).
static loom_status_t shape_attr(loom_program_frame_t* frame,
                                loom_shape_t* shape) {
  loom_attr_value_t value;
  if (loom_op_attrs_get(loom_program_frame_attrs(frame), "shape", &value) &&
      value.is_list && value.count == 0) {
    *shape = loom_shape_scalar();
    return loom_ok_status();
  }
  return loom__kernel_shape_attr(frame, "shape", shape);
}

// tfrt_dht_sync.create_dense_tensor.<dtype> {shape, values} -> !t.tensor:
// one value fills the tensor; otherwise one value per element.
static void create_dense_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  loom_shape_t shape;
  loom_status_t status = shape_attr(frame, &shape);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "values", &value) ||
      !value.is_list || value.count == 0 || !is_number_attr(&value)) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "values",
                                         "a non-empty list of numbers"));
    return;
  }
  loom_tensor_t* tensor = NULL;
  status = loom_tensor_create_dense(frame->executor->allocator, kernel.dtype,
                                    &shape, &tensor);
  int64_t n = tensor ? loom_tensor_num_elements(tensor) : 0;
  if (!status && value.count != 1 && value.count != n) {
    status = count_mismatch(frame, value.count, n);
  }
  if (!status) {
    void* data = loom_tensor_data(tensor);
    for (int64_t e = 0; e < n; ++e) {
      double f = 0;
      int64_t i = 0;
      loom__kernel_attr_number(&value, value.count == 1 ? 0 : e, &f, &i);
      loom__kernel_store_number(kernel.dtype, data, e, f, i);
    }
    status = loom__dht_set_tensor(loom_program_frame_result(frame, 0), tensor);
  }
  loom_tensor_release(tensor);
  loom__kernel_set_or_fail(frame, status);
}

// tfrt_dht_sync.create_from_scalar.<dtype> {shape, value} -> !t.tensor: a
// scalar host tensor (one value standing for every element).
static void create_scalar_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  loom_shape_t shape;
  loom_status_t status = shape_attr(frame, &shape);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list || !is_number_attr(&value)) {
    loom_program_frame_fail(
        frame, loom__kernel_missing_attr(frame, "value", "a number"));
    return;
  }
  double f = 0;
  int64_t i = 0;
  loom__kernel_attr_number(&value, 0, &f, &i);
  uint64_t bits[2] = {0, 0};
  loom__kernel_store_number(kernel.dtype, bits, 0, f, i);
  loom_tensor_t* tensor = NULL;
  status = loom_tensor_create_scalar(frame->executor->allocator, kernel.dtype,
                                     &shape, bits, &tensor);
  if (!status)
    status = loom__dht_set_tensor(loom_program_frame_result(frame, 0), tensor);
  loom_tensor_release(tensor);
  loom__kernel_set_or_fail(frame, status);
}

// tfrt_dht.set_tensor_with_values.<dtype> %t, %ch, %v0, %v1, ... -> chain
static void set_values_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  const dht_kernel_t* k = &kernel;
  if (frame->num_arguments < 2) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' takes a tensor, a chain and the values",
                                loom_program_frame_op_name(frame)));
    return;
  }
  loom_tensor_t* tensor = loom__dht_tensor_argument(frame, 0, k->dtype);
  if (!tensor) return;
  int64_t n = loom_tensor_num_elements(tensor);
  if (frame->num_arguments - 2 != n) {
    loom_program_frame_fail(frame,
                            count_mismatch(frame, frame->num_arguments - 2, n));
    return;
  }
  void* data = loom_tensor_data(tensor);
  for (int64_t e = 0; e < n; ++e) {
    const loom_program_value_t* v =
        loom_program_frame_value(frame, (int32_t)e + 2);
    double f = 0;
    int64_t i = 0;
    switch (v->kind) {
      case LOOM_PROGRAM_VALUE_BOOL:
        i = v->u.b;
        f = (double)i;
        break;
      case LOOM_PROGRAM_VALUE_I32:
        i = v->u.i32;
        f = (double)i;
        break;
      case LOOM_PROGRAM_VALUE_I64:
        i = v->u.i64;
        f = (double)i;
        break;
      case LOOM_PROGRAM_VALUE_F32:
        f = v->u.f32;
        i = (int64_t)f;
        break;
      case LOOM_PROGRAM_VALUE_F64:
        f = v->u.f64;
        i = (int64_t)f;
        break;
      default:
        loom_program_frame_fail(
            frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                    "'%s': argument %lld is a %s, not a "
                                    "number",
                                    loom_program_frame_op_name(frame),
                                    (long long)e + 2,
                                    loom_program_value_kind_name(v->kind)));
        return;
    }
    loom__kernel_store_number(k->dtype, data, e, f, i);
  }
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

//===----------------------------------------------------------------------===//
// Printing and comparing
//===----------------------------------------------------------------------===//

// Prints a COO tensor and a newline (out of memory: nothing).
static loom_status_t print_coo(loom_program_frame_t* frame,
                               const loom_program_coo_tensor_t* coo) {
  loom_allocator_t allocator = frame->executor->allocator;
  size_t length = loom__coo_tensor_format(coo, NULL, 0);
  char* text = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, length + 1, (void**)&text));
  loom__coo_tensor_format(coo, text, length + 1);
  fprintf(loom_program_frame_output(frame), "%s\n", text);
  loom_allocator_free(allocator, text);
  return loom_ok_status();
}

// tfrt_dht.print_tensor %t, %ch -> chain: a dense, scalar or COO tensor.
static void print_tensor_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const loom_program_value_t* v = loom_program_frame_value(frame, 0);
  if (v && v->kind == LOOM_PROGRAM_VALUE_COO_TENSOR) {
    loom_status_t status = print_coo(frame, v->u.coo_tensor);
    if (status) {
      loom_program_frame_fail(frame, status);
      return;
    }
  } else {
    if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR)) return;
    loom__kernel_print_tensor(frame, v->u.tensor);
  }
  fflush(loom_program_frame_output(frame));
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

// tfrt_dht.print_tensor_shape (a tensor or a shape, chain) -> chain: the
// shape as TFRT prints a TensorShape, `[2, 3]`.
static void print_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  const loom_program_value_t* v = loom_program_frame_value(frame, 0);
  const loom_shape_t* shape = NULL;
  if (v->kind == LOOM_PROGRAM_VALUE_TENSOR) {
    shape = loom_tensor_shape(v->u.tensor);
  } else if (v->kind == LOOM_PROGRAM_VALUE_SHAPE) {
    shape = &v->u.shape;
  } else if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR)) {
    return;
  }
  char text[256];
  loom_shape_format(shape, text, sizeof(text));
  FILE* out = loom_program_frame_output(frame);
  fprintf(out, "%s\n", text);
  fflush(out);
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

static void get_shape_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR)) return;
  loom__kernel_set_or_fail(
      frame,
      loom_program_value_set_shape(
          loom_program_frame_result(frame, 0),
          loom_tensor_shape(loom_program_frame_value(frame, 0)->u.tensor)));
}

// tfrt_dht.no_op_ht %t -> chain
static void no_op_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR)) return;
  loom__kernel_set_or_fail(frame, loom__dht_set_chain(frame, 0));
}

// A float's bits as an integer that orders like the float: the distance
// between two of them counts the representable values between (ULPs).
static int64_t ordered_bits(double x, loom_dtype_t dtype) {
  if (dtype == LOOM_DTYPE_DOUBLE) {
    int64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    return bits < 0 ? INT64_MIN - bits : bits;
  }
  float f = (float)x;
  int32_t bits;
  memcpy(&bits, &f, sizeof(bits));
  return bits < 0 ? (int64_t)INT32_MIN - bits : bits;
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

// tfrt_dht.tensor_equal.<dtype> and tensor_allclose[.<N>ulp].<dtype>
// (a, b, chain) -> (i1, chain): equal dtypes and shapes, and elements equal
// (floats compare as numbers: NaN differs from itself) or, for allclose,
// floats at most `ulp` representable values apart.
static void compare_kernel(loom_program_frame_t* frame, void* user_data) {
  const dht_kernel_t kernel = unpack(user_data);
  const dht_kernel_t* k = &kernel;
  loom_tensor_t* a = loom__dht_tensor_argument(frame, 0, k->dtype);
  loom_tensor_t* b = a ? loom__dht_tensor_argument(frame, 1, k->dtype) : NULL;
  if (!b) return;
  bool equal = loom_shape_equal(loom_tensor_shape(a), loom_tensor_shape(b));
  int64_t n = loom_tensor_num_elements(a);
  const void* x = loom_tensor_data(a);
  const void* y = loom_tensor_data(b);
  bool is_float = k->dtype == LOOM_DTYPE_HALF ||
                  k->dtype == LOOM_DTYPE_BFLOAT16 ||
                  k->dtype == LOOM_DTYPE_FLOAT || k->dtype == LOOM_DTYPE_DOUBLE;
  if (equal && !is_float) {
    equal = n == 0 || memcmp(x, y, loom_tensor_byte_size(a)) == 0;
  }
  for (int64_t e = 0; equal && is_float && e < n; ++e) {
    double u = element(x, k->dtype, e);
    double v = element(y, k->dtype, e);
    if (u == v) continue;
    if (k->ulp == 0 || u != u || v != v) {
      equal = false;
      break;
    }
    int64_t p = ordered_bits(u, k->dtype);
    int64_t q = ordered_bits(v, k->dtype);
    // Halves compare as the floats they widen to.
    uint64_t distance =
        p > q ? (uint64_t)p - (uint64_t)q : (uint64_t)q - (uint64_t)p;
    equal = distance <= (uint64_t)k->ulp;
  }
  loom_status_t status =
      loom_program_value_set_bool(loom_program_frame_result(frame, 0), equal);
  if (!status) status = loom__dht_set_chain(frame, 1);
  loom__kernel_set_or_fail(frame, status);
}

//===----------------------------------------------------------------------===//
// Tensor handles
//===----------------------------------------------------------------------===//

typedef struct to_ht_t {
  loom_allocator_t allocator;
  loom_tensor_handle_t* handle;
  loom_async_value_t* result;
} to_ht_t;

// Sets `result` to a copy of the handle's host tensor (a program's
// constants are shared and immutable; tfrt_dht kernels write tensors).
static void to_ht_finish(void* arg) {
  to_ht_t* state = arg;
  loom_async_value_t* value = loom_tensor_handle_value(state->handle);
  loom_status_t status = loom_ok_status();
  if (loom_async_value_is_error(value)) {
    status = loom_status_clone(loom_async_value_error(value));
  } else if (loom_async_value_type(value) != &loom_async_value_type_tensor) {
    status = loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "'corert.tensorhandle_to_ht': the tensor handle "
                              "is not on a host device");
  }
  loom_tensor_t* dense = NULL;
  loom_tensor_t* copy = NULL;
  if (!status) {
    loom_tensor_t* tensor = *(loom_tensor_t**)loom_async_value_payload(value);
    status = loom_tensor_convert_to_dense(state->allocator, tensor, &dense);
  }
  if (!status) {
    status =
        loom_tensor_create_dense(state->allocator, loom_tensor_dtype(dense),
                                 loom_tensor_shape(dense), &copy);
  }
  if (!status) {
    memcpy(loom_tensor_data(copy), loom_tensor_data(dense),
           loom_tensor_byte_size(dense));
    status = loom__dht_set_tensor(state->result, copy);
  }
  if (status) {
    loom_status_ignore(loom_async_value_set_error(state->result, status));
  }
  loom_tensor_release(copy);
  loom_tensor_release(dense);
  loom_tensor_handle_release(state->handle);
  loom_async_value_release(state->result);
  loom_allocator_free(state->allocator, state);
}

// corert.tensorhandle_to_ht %h[, %ch] -> !t.tensor, once the handle's
// tensor is available.
static void to_ht_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR_HANDLE)) return;
  to_ht_t* state = NULL;
  loom_status_t status = loom_allocator_malloc(frame->executor->allocator,
                                               sizeof(*state), (void**)&state);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  state->allocator = frame->executor->allocator;
  state->handle = loom_program_frame_value(frame, 0)->u.tensor_handle;
  loom_tensor_handle_retain(state->handle);
  state->result = loom_program_frame_result(frame, 0);
  loom_async_value_retain(state->result);
  loom_async_value_t* value = loom_tensor_handle_value(state->handle);
  if (!value || loom_async_value_is_set(value)) {
    to_ht_finish(state);
    return;
  }
  status = loom_async_value_and_then(value, to_ht_finish, state);
  if (status) {
    loom_async_value_release(state->result);
    loom_tensor_handle_release(state->handle);
    loom_allocator_free(state->allocator, state);
    loom_program_frame_fail(frame, status);
  }
}

// corert.ht_to_tensorhandle %t, %ch -> !corert.tensorhandle on the cpu
// handler, sharing the tensor.
static void to_handle_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!loom__kernel_check(frame, 0, LOOM_PROGRAM_VALUE_TENSOR)) return;
  loom_op_handler_t* cpu =
      loom_runtime_get_op_handler(frame->executor->runtime, "cpu");
  loom_tensor_handle_t* handle = NULL;
  loom_status_t status =
      cpu ? loom_tensor_handle_create(
                cpu, loom_program_frame_value(frame, 0)->u.tensor, &handle)
          : loom_make_status(LOOM_STATUS_NOT_FOUND, "no cpu op handler");
  if (!status) {
    status = loom_program_value_set_tensor_handle(
        loom_program_frame_result(frame, 0), handle);
  }
  loom__kernel_set_or_fail(frame, status);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

const loom__dht_dtype_t loom__dht_dtypes[LOOM__DHT_NUM_DTYPES] = {
    {"bool", LOOM_DTYPE_BOOL},   {"i1", LOOM_DTYPE_BOOL},
    {"i8", LOOM_DTYPE_INT8},     {"i16", LOOM_DTYPE_INT16},
    {"i32", LOOM_DTYPE_INT32},   {"i64", LOOM_DTYPE_INT64},
    {"ui8", LOOM_DTYPE_UINT8},   {"ui16", LOOM_DTYPE_UINT16},
    {"ui32", LOOM_DTYPE_UINT32}, {"ui64", LOOM_DTYPE_UINT64},
    {"f16", LOOM_DTYPE_HALF},    {"bf16", LOOM_DTYPE_BFLOAT16},
    {"f32", LOOM_DTYPE_FLOAT},   {"f64", LOOM_DTYPE_DOUBLE},
};
enum { kMaxRank = 5 };  // TFRT's create_uninitialized_tensor ranks: 0..5
static const int32_t kUlps[] = {0, 2, 3, 1000, 2000, 100000};
enum { kNumUlps = sizeof(kUlps) / sizeof(kUlps[0]) };

static loom_status_t add(loom_program_executor_t* executor, const char* name,
                         loom_program_kernel_fn_t fn, void* user_data,
                         int32_t num_arguments, int32_t num_results) {
  return loom__kernel_add(executor, name, fn, user_data, num_arguments,
                          num_results);
}

// tfrt_dht_sync: the kernels above for functions without chains.
static loom_status_t register_sync_kernels(loom_program_executor_t* executor) {
  char name[96];
  char wrapped[96];
  for (int d = 0; d < LOOM__DHT_NUM_DTYPES; ++d) {
    const char* t = loom__dht_dtypes[d].name;
    for (int r = 0; r <= kMaxRank; ++r) {
      snprintf(wrapped, sizeof(wrapped),
               "tfrt_dht.create_uninitialized_tensor.%s.%d", t, r);
      snprintf(name, sizeof(name),
               "tfrt_dht_sync.create_uninitialized_tensor.%s.%d", t, r);
      LOOM_RETURN_IF_ERROR(loom__program_add_sync_kernel(
          executor, name, wrapped, -1, false, 0, 1));
    }
    snprintf(wrapped, sizeof(wrapped),
             "tfrt_dht.set_tensor_with_constant_values.%s", t);
    snprintf(name, sizeof(name),
             "tfrt_dht_sync.set_tensor_with_constant_values.%s", t);
    LOOM_RETURN_IF_ERROR(
        loom__program_add_sync_kernel(executor, name, wrapped, 1, true, 1, 0));
    loom_dtype_t dtype = loom__dht_dtypes[d].dtype;
    snprintf(name, sizeof(name), "tfrt_dht_sync.create_dense_tensor.%s", t);
    LOOM_RETURN_IF_ERROR(
        add(executor, name, create_dense_kernel, pack(dtype, 0, 0), 0, 1));
    snprintf(name, sizeof(name), "tfrt_dht_sync.create_from_scalar.%s", t);
    LOOM_RETURN_IF_ERROR(
        add(executor, name, create_scalar_kernel, pack(dtype, 0, 0), 0, 1));
  }
  LOOM_RETURN_IF_ERROR(
      loom__program_add_sync_kernel(executor, "tfrt_dht_sync.print_tensor",
                                    "tfrt_dht.print_tensor", 1, true, 1, 0));
  return loom__program_add_sync_kernel(
      executor, "tfrt_dht_sync.get_tensor_shape", "tfrt_dht.get_tensor_shape",
      -1, false, 1, 1);
}

loom_status_t loom__program_register_dht_kernels(
    loom_program_executor_t* executor) {
  char name[96];
  for (int d = 0; d < LOOM__DHT_NUM_DTYPES; ++d) {
    const char* t = loom__dht_dtypes[d].name;
    loom_dtype_t dtype = loom__dht_dtypes[d].dtype;
    for (int r = 0; r <= kMaxRank; ++r) {
      snprintf(name, sizeof(name), "tfrt_dht.create_uninitialized_tensor.%s.%d",
               t, r);
      LOOM_RETURN_IF_ERROR(
          add(executor, name, create_kernel, pack(dtype, r, 0), 0, 1));
    }
    void* typed = pack(dtype, 0, 0);
    snprintf(name, sizeof(name), "tfrt_dht.fill_tensor_with_constant.%s", t);
    LOOM_RETURN_IF_ERROR(add(executor, name, fill_kernel, typed, 2, 1));
    snprintf(name, sizeof(name), "tfrt_dht.set_tensor_with_constant_values.%s",
             t);
    LOOM_RETURN_IF_ERROR(
        add(executor, name, set_constant_values_kernel, typed, 2, 1));
    snprintf(name, sizeof(name), "tfrt_dht.set_tensor_with_values.%s", t);
    LOOM_RETURN_IF_ERROR(add(executor, name, set_values_kernel, typed, -1, 1));
    snprintf(name, sizeof(name), "tfrt_dht.tensor_equal.%s", t);
    LOOM_RETURN_IF_ERROR(add(executor, name, compare_kernel, typed, 3, 2));
    for (int u = 1; u < kNumUlps; ++u) {
      if (kUlps[u] == 2) {
        snprintf(name, sizeof(name), "tfrt_dht.tensor_allclose.%s", t);
      } else {
        snprintf(name, sizeof(name), "tfrt_dht.tensor_allclose.%dulp.%s",
                 kUlps[u], t);
      }
      LOOM_RETURN_IF_ERROR(
          add(executor, name, compare_kernel, pack(dtype, 0, kUlps[u]), 3, 2));
    }
  }
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt_dht.print_tensor", print_tensor_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(add(executor, "tfrt_dht.print_tensor_shape",
                           print_shape_kernel, NULL, 2, 1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt_dht.get_tensor_shape", get_shape_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt_dht.no_op_ht", no_op_kernel, NULL, 1, 1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "corert.tensorhandle_to_ht", to_ht_kernel, NULL, -1, 1));
  LOOM_RETURN_IF_ERROR(register_sync_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_host_buffer_kernels(executor));
  LOOM_RETURN_IF_ERROR(loom__program_register_coo_kernels(executor));
  return add(executor, "corert.ht_to_tensorhandle", to_handle_kernel, NULL, 2,
             1);
}
