// ScatterNd and TensorScatterUpdate (TensorFlow's signatures, attrs and
// messages). Each innermost vector of `indices` names a slice of the output
// by its leading dims; ScatterNd adds the matching slice of `updates` into
// zeros (repeated tuples sum, in index order as TensorFlow's CPU kernel
// does), TensorScatterUpdate writes it over a copy of `tensor` (the last
// repeated tuple wins). Every tuple is checked before the output is
// touched; `bad_indices_policy: "IGNORE"` skips bad tuples instead.

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/nd_index.h"

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

// The checks both ops share, with their own messages: indices [O.., D]
// and updates [O.., output dims D..]. Unknown dims and ranks pass.
static loom_status_t check_scatter(bool tensor_op, const loom_shape_t* output,
                                   int64_t output_count,
                                   const loom_shape_t* indices,
                                   const loom_shape_t* updates) {
  char a[LOOM_SHAPE_FORMAT_MAX], b[LOOM_SHAPE_FORMAT_MAX];
  if (indices->rank == 0) {
    return loom__array_invalid(
        "Indices shape must have rank at least one. Found:%s",
        loom__shape_debug_string(indices, a, sizeof(a)));
  }
  if (updates->rank == 0) {
    return loom__array_invalid(
        "Updates shape must have rank at least one. Found:%s",
        loom__shape_debug_string(updates, a, sizeof(a)));
  }
  if (output->rank < 0 || indices->rank < 0 || updates->rank < 0 ||
      !loom_shape_is_fully_defined(indices) ||
      !loom_shape_is_fully_defined(updates) ||
      !loom_shape_is_fully_defined(output)) {
    return loom_ok_status();
  }
  int64_t num_indices = loom__array_dims_product(indices, 0, indices->rank);
  int64_t num_updates = loom__array_dims_product(updates, 0, updates->rank);
  // Elements given for an empty output (ScatterNd counts the elements of
  // its shape vector, TensorScatterUpdate those of its tensor).
  if (!(num_indices == 0 && num_updates == 0) &&
      !(output_count != 0 && num_indices != 0 && num_updates != 0)) {
    return loom__array_invalid(
        "Indices and updates specified for empty output shape");
  }
  const int64_t* index_dims = loom_shape_dims(indices);
  const int64_t* update_dims = loom_shape_dims(updates);
  const int64_t* output_dims = loom_shape_dims(output);
  int32_t outer = indices->rank - 1;
  for (int32_t i = 0; i < outer; ++i) {
    if (i < updates->rank && index_dims[i] == update_dims[i]) continue;
    loom__shape_debug_string(indices, a, sizeof(a));
    loom__shape_debug_string(updates, b, sizeof(b));
    if (tensor_op) {
      return loom__array_invalid(
          "Outer dimensions of indices and update must match. Indices "
          "shape: %s, updates shape:%s",
          a, b);
    }
    return loom__array_invalid(
        "Dimensions [0,%d) of indices[shape=%s] must match dimensions [0,%d) "
        "of updates[shape=%s]",
        outer, a, outer, b);
  }
  int64_t depth = index_dims[outer];
  if (depth > output->rank) {
    loom__shape_debug_string(indices, a, sizeof(a));
    loom__shape_debug_string(output, b, sizeof(b));
    return loom__array_invalid(
        "%s: index innermost dimension length must be <= %s rank; saw: "
        "%" PRId64 " vs. %d (indices %s, %s %s)",
        tensor_op ? "TensorScatterUpdate" : "ScatterNd",
        tensor_op ? "tensor" : "shape", depth, output->rank, a,
        tensor_op ? "tensor" : "shape", b);
  }
  bool inner_rank = updates->rank - outer == output->rank - depth;
  for (int32_t i = 0; inner_rank && i + outer < updates->rank; ++i) {
    if (update_dims[i + outer] != output_dims[depth + i]) {
      loom__shape_debug_string(output, a, sizeof(a));
      loom__shape_debug_string(updates, b, sizeof(b));
      if (tensor_op) {
        return loom__array_invalid(
            "The inner %" PRId64
            " dimensions of output.shape=%s must match the inner %d "
            "dimensions of updates.shape=%s",
            output->rank - depth, a, updates->rank - outer, b);
      }
      inner_rank = false;
    }
  }
  if (!inner_rank) {
    loom__shape_debug_string(output, a, sizeof(a));
    loom__shape_debug_string(updates, b, sizeof(b));
    if (tensor_op) {
      return loom__array_invalid(
          "Inner dimensions of output shape must match inner dimensions of "
          "updates shape. Output: %s updates: %s",
          a, b);
    }
    return loom__array_invalid("Dimensions [%" PRId64
                               ",%d) of input[shape=%s] must match "
                               "dimensions [%d,%d) of updates[shape=%s]",
                               depth, output->rank, a, outer, updates->rank, b);
  }
  if (depth < 1) {
    return loom__array_invalid(
        "Only indices.shape[-1] values between 1 and %d are currently "
        "supported.  Requested rank: %" PRId64 " (indices %s)",
        output->rank, depth, loom__shape_debug_string(indices, a, sizeof(a)));
  }
  return loom_ok_status();
}

// ScatterNd's output shape from its `shape` input (a vector of dims >= 0).
static loom_status_t shape_from_tensor(const loom_tensor_t* shape_tensor,
                                       loom_shape_t* out) {
  const loom_shape_t* s = loom_tensor_shape(shape_tensor);
  if (s->rank != 1) return loom__array_invalid("Shape must be a vector");
  int64_t rank = s->dims[0];
  if (rank > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid("ScatterNd: shape has %" PRId64
                               " dims, above the maximum rank %d",
                               rank, LOOM_MAX_SHAPE_RANK);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < rank; ++i) {
    dims[i] = loom__array_index_at(shape_tensor, i);
    if (dims[i] < 0) {
      return loom__array_invalid("Dimension %" PRId64 " must be >= 0", dims[i]);
    }
  }
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, (int)rank));
  return loom__array_check_count("ScatterNd", "shape", dims, (int)rank, out);
}

static loom_status_t scatter_nd_shape_fn(loom_shape_inference_context_t* c,
                                         void* user_data) {
  (void)user_data;
  loom_shape_t indices, updates, shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &indices));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &updates));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &shape));
  if (shape.rank >= 0 && shape.rank != 1) {
    return loom__array_invalid("Shape must be a vector");
  }
  const loom_tensor_t* t = loom_shape_inference_context_input_tensor(c, 2);
  if (t) {
    LOOM_RETURN_IF_ERROR(shape_from_tensor(t, &out));
  } else if (shape.rank == 1 && shape.dims[0] >= 0 &&
             shape.dims[0] <= LOOM_MAX_SHAPE_RANK) {
    LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(shape.dims[0], &out));
  }
  int64_t count = shape.rank == 1 ? shape.dims[0] : LOOM_UNKNOWN_DIM;
  if (count >= 0) {
    LOOM_RETURN_IF_ERROR(check_scatter(false, &out, count, &indices, &updates));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t tensor_scatter_shape_fn(loom_shape_inference_context_t* c,
                                             void* user_data) {
  (void)user_data;
  loom_shape_t tensor, indices, updates;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &tensor));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &indices));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &updates));
  if (loom_shape_is_fully_defined(&tensor) && tensor.rank >= 0) {
    int64_t count = loom__array_dims_product(&tensor, 0, tensor.rank);
    LOOM_RETURN_IF_ERROR(
        check_scatter(true, &tensor, count, &indices, &updates));
  }
  return loom_shape_inference_context_set_output(c, 0, &tensor);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

// dst[0, n) += src[0, n) in `dtype` (integers wrap; 16-bit floats round
// after each sum, as TensorFlow's Eigen::half does).
static void add_slice(loom_dtype_t dtype, void* dst, const void* src,
                      int64_t n) {
#define ADD_LOOP(T)                                          \
  do {                                                       \
    T* d = dst;                                              \
    const T* s = src;                                        \
    for (int64_t i = 0; i < n; ++i) d[i] = (T)(d[i] + s[i]); \
  } while (0)
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      ADD_LOOP(float);
      break;
    case LOOM_DTYPE_DOUBLE:
      ADD_LOOP(double);
      break;
    case LOOM_DTYPE_COMPLEX64:
      n *= 2;
      ADD_LOOP(float);
      break;
    case LOOM_DTYPE_COMPLEX128:
      n *= 2;
      ADD_LOOP(double);
      break;
    case LOOM_DTYPE_HALF: {
      uint16_t* d = dst;
      const uint16_t* s = src;
      for (int64_t i = 0; i < n; ++i) {
        d[i] = loom__float_to_half(loom__half_to_float(d[i]) +
                                   loom__half_to_float(s[i]));
      }
      break;
    }
    case LOOM_DTYPE_BFLOAT16: {
      uint16_t* d = dst;
      const uint16_t* s = src;
      for (int64_t i = 0; i < n; ++i) {
        d[i] = loom__float_to_bfloat16(loom__bfloat16_to_float(d[i]) +
                                       loom__bfloat16_to_float(s[i]));
      }
      break;
    }
    // Integers wrap as TensorFlow's do (computed unsigned: defined).
    case LOOM_DTYPE_INT8:
    case LOOM_DTYPE_UINT8:
      ADD_LOOP(uint8_t);
      break;
    case LOOM_DTYPE_INT16:
    case LOOM_DTYPE_UINT16:
      ADD_LOOP(uint16_t);
      break;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_UINT32:
      ADD_LOOP(uint32_t);
      break;
    case LOOM_DTYPE_INT64:
    case LOOM_DTYPE_UINT64:
      ADD_LOOP(uint64_t);
      break;
    default:
      break;
  }
#undef ADD_LOOP
}

// Applies every good tuple of `index` to `out` (of `shape`): adds
// (ScatterNd) or assigns (TensorScatterUpdate) the matching slice of
// `updates`. Bad tuples are an error unless the policy ignores them.
static loom_status_t scatter(loom_kernel_context_t* ctx, bool add,
                             const loom_shape_t* shape,
                             const loom_tensor_t* indices,
                             const loom_tensor_t* updates, loom_tensor_t* out) {
  bool ignore = false;
  LOOM_RETURN_IF_ERROR(
      loom__nd_index_policy(loom_kernel_context_attrs(ctx), &ignore));
  loom__nd_index_t index;
  (void)loom__nd_index_init(&index, indices, shape);
  if (!ignore) {
    int64_t bad = loom__nd_index_first_bad(&index);
    if (bad >= 0) return loom__nd_index_error(&index, bad, "shape", shape, "");
  }
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  loom_dtype_t dtype = loom_tensor_dtype(out);
  int64_t inner = loom__array_dims_product(shape, index.depth, shape->rank);
  size_t slice_bytes = (size_t)inner * loom__array_element_size(dtype);
  const char* src = loom_tensor_data(updates);
  char* dst = loom_tensor_data(out);
  bool ok = true;
  for (int64_t i = 0; i < index.count; ++i) {
    int64_t slice = loom__nd_index_slice(&index, i);
    if (slice < 0) continue;  // ignored
    char* to = dst + (size_t)slice * slice_bytes;
    const char* from = src + (size_t)i * slice_bytes;
    if (add) {
      add_slice(dtype, to, from, inner);
    } else if (dtype == LOOM_DTYPE_STRING) {
      ok &= loom__array_copy_row(dtype, from, 1, to, 1, inner);
    } else {
      memcpy(to, from, slice_bytes);
    }
  }
  if (!ok) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "out of memory copying string elements");
  }
  return loom_ok_status();
}

static loom_status_t scatter_nd_run(loom_kernel_context_t* ctx,
                                    loom_tensor_t* const* inputs) {
  loom_tensor_t* indices = inputs[0];
  loom_tensor_t* updates = inputs[1];
  const loom_shape_t* is = loom_tensor_shape(indices);
  const loom_shape_t* us = loom_tensor_shape(updates);
  loom_shape_t shape = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(check_scatter(false, &shape, 0, is, us));
  LOOM_RETURN_IF_ERROR(shape_from_tensor(inputs[2], &shape));
  LOOM_RETURN_IF_ERROR(check_scatter(
      false, &shape, loom_tensor_num_elements(inputs[2]), is, us));
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &shape, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (count > 0) {
    loom_dtype_t dtype = loom_tensor_dtype(out);
    memset(loom_tensor_data(out), 0,
           (size_t)count * loom__array_element_size(dtype));
  }
  return scatter(ctx, true, &shape, indices, updates, out);
}

static loom_status_t tensor_scatter_update_run(loom_kernel_context_t* ctx,
                                               loom_tensor_t* const* inputs) {
  loom_tensor_t* tensor = inputs[0];
  loom_tensor_t* indices = inputs[1];
  loom_tensor_t* updates = inputs[2];
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  LOOM_RETURN_IF_ERROR(
      check_scatter(true, shape, loom_tensor_num_elements(tensor),
                    loom_tensor_shape(indices), loom_tensor_shape(updates)));
  // Validate before copying: the output may be the input's own buffer.
  bool ignore = false;
  LOOM_RETURN_IF_ERROR(
      loom__nd_index_policy(loom_kernel_context_attrs(ctx), &ignore));
  if (!ignore) {
    loom__nd_index_t index;
    (void)loom__nd_index_init(&index, indices, shape);
    int64_t bad = loom__nd_index_first_bad(&index);
    if (bad >= 0) return loom__nd_index_error(&index, bad, "shape", shape, "");
  }
  static const int32_t kCandidates[] = {0};
  int32_t forwarded = -1;
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(loom_kernel_context_forward_or_allocate(
      ctx, kCandidates, 1, 0, shape, &forwarded, &out));
  int64_t count = loom_tensor_num_elements(out);
  if (forwarded < 0 && count > 0) {
    loom_dtype_t dtype = loom_tensor_dtype(out);
    if (dtype == LOOM_DTYPE_STRING) {
      if (!loom__array_copy_row(dtype, loom_tensor_data(tensor), 1,
                                loom_tensor_data(out), 1, count)) {
        return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                                "out of memory copying string elements");
      }
    } else {
      memcpy(loom_tensor_data(out), loom_tensor_data(tensor),
             (size_t)count * loom__array_element_size(dtype));
    }
  }
  return scatter(ctx, false, shape, indices, updates, out);
}

static void scatter_nd_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, scatter_nd_run);
}

static void tensor_scatter_update_compute(void* kernel,
                                          loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, tensor_scatter_update_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "ScatterNd",
     .inputs = {"indices: Tindices", "updates: T", "shape: Tindices"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tindices: {int16, int32, int64}",
               "bad_indices_policy: string = ''"},
     .shape_fn = scatter_nd_shape_fn},
    {.name = "TensorScatterUpdate",
     .inputs = {"tensor: T", "indices: Tindices", "updates: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tindices: {int16, int32, int64, uint16}",
               "bad_indices_policy: string = ''"},
     .shape_fn = tensor_scatter_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "ScatterNd",
     .compute = scatter_nd_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_NUMERIC_TYPES},
     .host_memory = {"shape"},
     .any_rank = true},
    {.op_name = "TensorScatterUpdate",
     .compute = tensor_scatter_update_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .any_rank = true},
};

loom_status_t loom__register_scatter_nd_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
