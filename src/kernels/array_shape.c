// Shape ops: Identity, IdentityN, StopGradient, Reshape, Shape, ShapeN,
// Size, Rank, ExpandDims, Squeeze, BroadcastGradientArgs. Reshape,
// ExpandDims, Squeeze and the identities never copy: their output is a view
// of the input's buffer. The constants (Const, Fill, ...) are in
// array_constant.c.

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Identity, IdentityN
//===----------------------------------------------------------------------===//

static loom_status_t identity_n_shape_fn(loom_shape_inference_context_t* c,
                                         void* user_data) {
  (void)user_data;
  int32_t n = loom_shape_inference_context_num_inputs(c);
  for (int32_t i = 0; i < n; ++i) {
    loom_shape_t shape;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, i, &shape));
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, i, &shape));
  }
  return loom_ok_status();
}

static void identity_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  int32_t n = loom_kernel_context_num_inputs(ctx);
  for (int32_t i = 0; i < n; ++i) {
    loom_status_t status = loom_kernel_context_set_output(
        ctx, i, loom_kernel_context_input(ctx, i));
    if (status) {
      loom_kernel_context_fail(ctx, status);
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

// The output shape of reshaping `in` (dims may be unknown) to the sizes in
// `sizes`, with TensorFlow's rules and messages: at most one -1, inferred
// from the element count when the input's is known.
static loom_status_t reshape_plan(const loom_shape_t* in,
                                  const loom_tensor_t* sizes,
                                  loom_shape_t* out) {
  int64_t n = loom_tensor_num_elements(sizes);
  if (n > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid("Reshape to %" PRId64
                               " dimensions exceeds the maximum rank %d",
                               n, LOOM_MAX_SHAPE_RANK);
  }
  // Above LOOM_MAX_RANK the dims are gathered here, then interned.
  int64_t large[LOOM_MAX_SHAPE_RANK];
  *out = loom_shape_scalar();
  out->rank = (int32_t)n;
  int64_t* dims = n > LOOM_MAX_RANK ? large : out->dims;
  int64_t unknown_index = -1, product = 1;
  bool sizes_have_zero = false, product_overflows = false;
  for (int64_t d = 0; d < n; ++d) {
    int64_t size = loom__array_index_at(sizes, d);
    dims[d] = size;
    if (size == -1) {
      if (unknown_index != -1) {
        return loom__array_invalid(
            "Only one input size may be -1, not both %" PRId64 " and %" PRId64,
            unknown_index, d);
      }
      unknown_index = d;
    } else if (size < 0) {
      return loom__array_invalid(
          "Size %" PRId64 " must be non-negative, not %" PRId64, d, size);
    } else {
      if (size == 0) sizes_have_zero = true;
      if (size > 0 && !loom__size_mul(product, size, &product)) {
        product_overflows = true;
      }
    }
  }
  // The product of the non-zero sizes divides the input's count when one
  // size is inferred, and is the count otherwise unless a size is 0: a
  // wrapped product would divide by 0 or pass a wrong count.
  if (product_overflows && (unknown_index != -1 || !sizes_have_zero)) {
    char text[LOOM_SHAPE_FORMAT_MAX];
    return loom__size_overflow_error(
        "Reshape", "shape", "%s",
        loom__format_int64s(dims, (int)n, text, sizeof(text)));
  }
  int64_t in_count = loom_shape_num_elements(in);
  if (in_count >= 0 && unknown_index != -1) {
    // Zero dims of the input are left out only when the sizes have one too,
    // so that the other dims can still be inferred.
    int64_t nonzero = 1;
    bool has_zero = false;
    const int64_t* in_dims = loom_shape_dims(in);  // the input may be large
    for (int32_t i = 0; i < in->rank; ++i) {
      if (in_dims[i] == 0 && sizes_have_zero) {
        has_zero = true;
      } else if (!loom__size_mul(nonzero, in_dims[i], &nonzero)) {
        // Only an empty input's other dims can multiply past int64.
        char text[LOOM_SHAPE_FORMAT_MAX];
        return loom__size_overflow_error(
            "Reshape", "tensor of shape", "%s",
            loom__format_int64s(in_dims, in->rank, text, sizeof(text)));
      }
    }
    if (!has_zero && nonzero % product != 0) {
      return loom__array_invalid(
          "Input to reshape is a tensor with %" PRId64
          " values, but the requested shape requires a multiple of %" PRId64,
          nonzero, product);
    }
    dims[unknown_index] = nonzero / product;
  }
  if (LOOM_UNLIKELY(n > LOOM_MAX_RANK)) {
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, large, (int)n));
  }
  if (in_count < 0) return loom_ok_status();  // not known yet
  int64_t out_count = loom_shape_num_elements(out);
  if (out_count != in_count) {
    return loom__array_invalid("Input to reshape is a tensor with %" PRId64
                               " values, but the requested shape has %" PRId64,
                               in_count, out_count);
  }
  return loom_ok_status();
}

loom_status_t loom__array_unknown_dims(int64_t rank, loom_shape_t* out) {
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int64_t i = 0; i < rank; ++i) dims[i] = LOOM_UNKNOWN_DIM;
  return loom_shape_initialize_large(out, dims, (int)rank);
}

static loom_status_t check_vector(const loom_shape_t* shape, const char* what,
                                  const char* verb) {
  if (shape->rank >= 0 && shape->rank != 1) {
    char text[128];
    return loom__array_invalid(
        "%s %s 1-D, not %s", what, verb,
        loom__shape_debug_string(shape, text, sizeof(text)));
  }
  return loom_ok_status();
}

static loom_status_t reshape_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t in, sizes_shape, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &sizes_shape));
  LOOM_RETURN_IF_ERROR(check_vector(&sizes_shape, "sizes input", "must be"));
  const loom_tensor_t* sizes = loom_shape_inference_context_input_tensor(c, 1);
  if (sizes) {
    LOOM_RETURN_IF_ERROR(reshape_plan(&in, sizes, &out));
  } else if (sizes_shape.rank == 1 && sizes_shape.dims[0] >= 0 &&
             sizes_shape.dims[0] <= LOOM_MAX_SHAPE_RANK) {
    LOOM_RETURN_IF_ERROR(loom__array_unknown_dims(sizes_shape.dims[0], &out));
  } else {
    out = loom_shape_unknown();
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static void reshape_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* input = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* sizes = loom_kernel_context_input(ctx, 1);
  loom_shape_t out;
  loom_status_t status =
      check_vector(loom_tensor_shape(sizes), "sizes input", "must be");
  if (!status) status = reshape_plan(loom_tensor_shape(input), sizes, &out);
  if (!status) status = loom__array_set_view(ctx, 0, input, 0, &out);
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// Shape, Size, Rank
//===----------------------------------------------------------------------===//

// Shape and ShapeN: output i is a vector of input i's rank.
static loom_status_t shape_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  int32_t n = loom_shape_inference_context_num_outputs(c);
  for (int32_t i = 0; i < n; ++i) {
    loom_shape_t in;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, i, &in));
    loom_shape_t out = loom_shape_scalar();
    out.rank = 1;
    out.dims[0] = in.rank < 0 ? LOOM_UNKNOWN_DIM : in.rank;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, i, &out));
  }
  return loom_ok_status();
}

static loom_status_t scalar_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t out = loom_shape_scalar();
  int32_t n = loom_shape_inference_context_num_outputs(c);
  for (int32_t i = 0; i < n; ++i) {
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, i, &out));
  }
  return loom_ok_status();
}

// Stores `value` as output element `index` of an int32 or int64 tensor;
// false when it does not fit in int32.
static bool store_index(loom_tensor_t* out, int64_t index, int64_t value) {
  if (loom_tensor_dtype(out) == LOOM_DTYPE_INT32) {
    if (value > INT32_MAX || value < INT32_MIN) return false;
    ((int32_t*)loom_tensor_data(out))[index] = (int32_t)value;
  } else {
    ((int64_t*)loom_tensor_data(out))[index] = value;
  }
  return true;
}

// Shape and ShapeN: output i holds input i's dims.
static void shape_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_status_t status = loom_ok_status();
  int32_t n = loom_kernel_context_num_outputs(ctx);
  bool n_form = strcmp(loom_kernel_context_op(ctx)->name, "ShapeN") == 0;
  for (int32_t k = 0; !status && k < n; ++k) {
    const loom_shape_t* in =
        loom_tensor_shape(loom_kernel_context_input(ctx, k));
    const int64_t* in_dims = loom_shape_dims(in);  // the input may be large
    loom_shape_t shape = loom_shape_scalar();
    shape.rank = 1;
    shape.dims[0] = in->rank;
    loom_tensor_t* out = NULL;
    status = loom_kernel_context_allocate_output(ctx, k, &shape, &out);
    for (int32_t i = 0; !status && i < in->rank; ++i) {
      if (store_index(out, i, in_dims[i])) continue;
      if (n_form) {
        status = loom__array_invalid(
            "ShapeN output type is 32-bit but shape %d dim %d is %" PRId64, k,
            i, in_dims[i]);
      } else {
        status = loom__array_invalid(
            "Shape output type is 32-bit but dim %d is %" PRId64, i,
            in_dims[i]);
      }
    }
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

static void size_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* in = loom_kernel_context_input(ctx, 0);
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* out = NULL;
  loom_status_t status =
      loom_kernel_context_allocate_output(ctx, 0, &scalar, &out);
  if (!status && !store_index(out, 0, loom_tensor_num_elements(in))) {
    status = loom__array_invalid(
        "Number of elements was larger than representable by 32-bit output "
        "type");
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

static void rank_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* in = loom_kernel_context_input(ctx, 0);
  loom_shape_t scalar = loom_shape_scalar();
  loom_tensor_t* out = NULL;
  loom_status_t status =
      loom_kernel_context_allocate_output(ctx, 0, &scalar, &out);
  if (!status) *(int32_t*)loom_tensor_data(out) = loom_tensor_shape(in)->rank;
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// ExpandDims, Squeeze
//===----------------------------------------------------------------------===//

static loom_status_t expand_dims_plan(const loom_shape_t* in,
                                      const loom_tensor_t* dim_tensor,
                                      loom_shape_t* out) {
  if (loom_tensor_num_elements(dim_tensor) != 1) {
    return loom__array_invalid("'dim' must be a tensor with a single value");
  }
  int64_t dim = loom__array_index_at(dim_tensor, 0);
  if (in->rank < 0) {
    *out = loom_shape_unknown();
    return loom_ok_status();
  }
  if (dim < -1 - in->rank || dim > in->rank) {
    return loom__array_invalid("Tried to expand dim index %" PRId64
                               " for tensor with %d dimensions.",
                               dim, in->rank);
  }
  if (in->rank >= LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid(
        "ExpandDims: the result would have rank %d, above the maximum rank %d",
        in->rank + 1, LOOM_MAX_SHAPE_RANK);
  }
  if (dim < 0) dim += in->rank + 1;
  if (LOOM_UNLIKELY(in->rank >= LOOM_MAX_RANK)) {
    const int64_t* in_dims = loom_shape_dims(in);
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int64_t i = 0; i < dim; ++i) dims[i] = in_dims[i];
    dims[dim] = 1;
    for (int64_t i = dim; i < in->rank; ++i) dims[i + 1] = in_dims[i];
    return loom_shape_initialize_large(out, dims, in->rank + 1);
  }
  *out = *in;
  out->rank = in->rank + 1;
  for (int64_t i = in->rank; i > dim; --i) out->dims[i] = in->dims[i - 1];
  out->dims[dim] = 1;
  return loom_ok_status();
}

static loom_status_t expand_dims_shape_fn(loom_shape_inference_context_t* c,
                                          void* user_data) {
  (void)user_data;
  loom_shape_t in, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  const loom_tensor_t* dim = loom_shape_inference_context_input_tensor(c, 1);
  if (dim) LOOM_RETURN_IF_ERROR(expand_dims_plan(&in, dim, &out));
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static void expand_dims_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* input = loom_kernel_context_input(ctx, 0);
  loom_shape_t out;
  loom_status_t status = expand_dims_plan(
      loom_tensor_shape(input), loom_kernel_context_input(ctx, 1), &out);
  if (!status) status = loom__array_set_view(ctx, 0, input, 0, &out);
  if (status) loom_kernel_context_fail(ctx, status);
}

static loom_status_t squeeze_plan(const loom_shape_t* in,
                                  const loom_op_attrs_t* attrs,
                                  loom_shape_t* out) {
  enum { kMaxSqueezeDims = 64 };
  int64_t dims[kMaxSqueezeDims];
  int64_t count =
      loom__array_attr_ints(attrs, "squeeze_dims", dims, kMaxSqueezeDims);
  if (count < 0) count = 0;
  if (count > kMaxSqueezeDims) {
    return loom__array_invalid("squeeze_dims has %" PRId64
                               " entries, above the limit of %d",
                               count, kMaxSqueezeDims);
  }
  if (in->rank < 0) {
    *out = loom_shape_unknown();
    return loom_ok_status();
  }
  bool wanted[LOOM_MAX_SHAPE_RANK] = {false};
  for (int64_t i = 0; i < count; ++i) {
    int64_t d = dims[i];
    if (d < -in->rank || d >= in->rank) {
      return loom__array_invalid("Tried to squeeze dim index %" PRId64
                                 " for tensor with %d dimensions.",
                                 d, in->rank);
    }
    wanted[d < 0 ? d + in->rank : d] = true;
  }
  const int64_t* in_dims = loom_shape_dims(in);  // the input may be large
  int64_t kept[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t dim = in_dims[i];
    if (count > 0 && wanted[i]) {
      if (dim >= 0 && dim != 1) {
        return loom__array_invalid(
            "Can not squeeze dim[%d], expected a dimension of 1, got %" PRId64,
            i, dim);
      }
      continue;  // an unknown dim is assumed to be 1
    }
    if (count == 0) {
      if (dim == 1) continue;
      if (dim < 0) {  // it may or may not be 1
        *out = loom_shape_unknown();
        return loom_ok_status();
      }
    }
    kept[rank++] = dim;
  }
  return loom_shape_initialize_large(out, kept, rank);
}

static loom_status_t squeeze_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t in, out;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(
      squeeze_plan(&in, loom_shape_inference_context_attrs(c), &out));
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static void squeeze_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* input = loom_kernel_context_input(ctx, 0);
  loom_shape_t out;
  loom_status_t status = squeeze_plan(loom_tensor_shape(input),
                                      loom_kernel_context_attrs(ctx), &out);
  if (!status) status = loom__array_set_view(ctx, 0, input, 0, &out);
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// BroadcastGradientArgs
//===----------------------------------------------------------------------===//

// The dims each side of a broadcast sums over, as TensorFlow's BCast: a
// dim (in the output's numbering) where a side is 1 and the output is not,
// or where every side is 1. Writes r0[0, *n0) and r1[0, *n1).
static loom_status_t gradient_args_plan(const loom_tensor_t* s0,
                                        const loom_tensor_t* s1, int64_t* r0,
                                        int64_t* n0, int64_t* r1, int64_t* n1) {
  int64_t a = loom_tensor_num_elements(s0), b = loom_tensor_num_elements(s1);
  int64_t rank = a > b ? a : b;
  *n0 = *n1 = 0;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t x =
        i - (rank - a) >= 0 ? loom__array_index_at(s0, i - (rank - a)) : 1;
    int64_t y =
        i - (rank - b) >= 0 ? loom__array_index_at(s1, i - (rank - b)) : 1;
    if (x == 1 && y == 1) {
      r0[(*n0)++] = i;
      r1[(*n1)++] = i;
    } else if (x == 1) {
      r0[(*n0)++] = i;
    } else if (y == 1) {
      r1[(*n1)++] = i;
    } else if (x != y) {
      char text[2][512];
      for (int k = 0; k < 2; ++k) {
        const loom_tensor_t* s = k ? s1 : s0;
        int64_t count = loom_tensor_num_elements(s);
        size_t used = (size_t)snprintf(text[k], sizeof(text[k]), "[");
        for (int64_t j = 0; j < count && used < sizeof(text[k]); ++j) {
          used += (size_t)snprintf(text[k] + used, sizeof(text[k]) - used,
                                   "%s%" PRId64, j ? "," : "",
                                   loom__array_index_at(s, j));
        }
        if (used < sizeof(text[k])) {
          snprintf(text[k] + used, sizeof(text[k]) - used, "]");
        }
      }
      return loom__array_invalid("Incompatible shapes: %s vs. %s", text[0],
                                 text[1]);
    }
  }
  return loom_ok_status();
}

enum { kMaxGradientRank = LOOM_MAX_SHAPE_RANK };

static loom_status_t gradient_args_check(const loom_shape_t* s0,
                                         const loom_shape_t* s1) {
  const loom_shape_t* shapes[2] = {s0, s1};
  for (int i = 0; i < 2; ++i) {
    if (shapes[i]->rank >= 0 && shapes[i]->rank != 1) {
      return loom__array_invalid("Shape must be rank 1 but is rank %d",
                                 shapes[i]->rank);
    }
    if (shapes[i]->rank == 1 && shapes[i]->dims[0] > kMaxGradientRank) {
      return loom__array_invalid("s%d has %" PRId64 " dims, at most %d", i,
                                 shapes[i]->dims[0], kMaxGradientRank);
    }
  }
  return loom_ok_status();
}

static loom_status_t gradient_args_shape_fn(loom_shape_inference_context_t* c,
                                            void* user_data) {
  (void)user_data;
  loom_shape_t s0, s1;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &s0));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &s1));
  LOOM_RETURN_IF_ERROR(gradient_args_check(&s0, &s1));
  const loom_tensor_t* t0 = loom_shape_inference_context_input_tensor(c, 0);
  const loom_tensor_t* t1 = loom_shape_inference_context_input_tensor(c, 1);
  loom_shape_t out[2];
  for (int i = 0; i < 2; ++i) {
    out[i] = loom_shape_scalar();
    out[i].rank = 1;
    out[i].dims[0] = LOOM_UNKNOWN_DIM;
  }
  if (t0 && t1) {
    int64_t r0[kMaxGradientRank], r1[kMaxGradientRank];
    LOOM_RETURN_IF_ERROR(
        gradient_args_plan(t0, t1, r0, &out[0].dims[0], r1, &out[1].dims[0]));
  }
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, 0, &out[0]));
  return loom_shape_inference_context_set_output(c, 1, &out[1]);
}

static void gradient_args_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom_tensor_t* s0 = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* s1 = loom_kernel_context_input(ctx, 1);
  int64_t r[2][kMaxGradientRank], n[2];
  loom_status_t status =
      gradient_args_check(loom_tensor_shape(s0), loom_tensor_shape(s1));
  if (!status) status = gradient_args_plan(s0, s1, r[0], &n[0], r[1], &n[1]);
  for (int i = 0; i < 2 && !status; ++i) {
    loom_shape_t shape = loom_shape_scalar();
    shape.rank = 1;
    shape.dims[0] = n[i];
    loom_tensor_t* out = NULL;
    status = loom_kernel_context_allocate_output(ctx, i, &shape, &out);
    for (int64_t j = 0; !status && j < n[i]; ++j) store_index(out, j, r[i][j]);
  }
  if (status) loom_kernel_context_fail(ctx, status);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Identity",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "StopGradient",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type"},
     .shape_fn = loom__shape_fn_unchanged},
    {.name = "IdentityN",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: list(type)"},
     .shape_fn = identity_n_shape_fn},
    {.name = "Reshape",
     .inputs = {"tensor: T", "shape: Tshape"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tshape: {int32, int64} = DT_INT32"},
     .shape_fn = reshape_shape_fn},
    {.name = "Shape",
     .inputs = {"input: T"},
     .outputs = {"output: out_type"},
     .attrs = {"T: type", "out_type: {int32, int64} = DT_INT32"},
     .shape_fn = shape_shape_fn},
    {.name = "ShapeN",
     .inputs = {"input: N * T"},
     .outputs = {"output: N * out_type"},
     .attrs = {"N: int", "T: type", "out_type: {int32, int64} = DT_INT32"},
     .shape_fn = shape_shape_fn},
    {.name = "Size",
     .inputs = {"input: T"},
     .outputs = {"output: out_type"},
     .attrs = {"T: type", "out_type: {int32, int64} = DT_INT32"},
     .shape_fn = scalar_shape_fn},
    {.name = "Rank",
     .inputs = {"input: T"},
     .outputs = {"output: int32"},
     .attrs = {"T: type"},
     .shape_fn = scalar_shape_fn},
    {.name = "ExpandDims",
     .inputs = {"input: T", "dim: Tdim"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Tdim: {int32, int64} = DT_INT32"},
     .shape_fn = expand_dims_shape_fn},
    {.name = "Squeeze",
     .inputs = {"input: T"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "squeeze_dims: list(int) >= 0 = []"},
     .shape_fn = squeeze_shape_fn},
    {.name = "BroadcastGradientArgs",
     .inputs = {"s0: T", "s1: T"},
     .outputs = {"r0: T", "r1: T"},
     .attrs = {"T: {int32, int64} = DT_INT32"},
     .shape_fn = gradient_args_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    // Identity passes any tensor through, resources and variants included.
    // These read shapes through loom_shape_dims: they take ranks above
    // LOOM_MAX_RANK.
    {.op_name = "Identity", .compute = identity_compute, .any_rank = true},
    {.op_name = "IdentityN", .compute = identity_compute, .any_rank = true},
    {.op_name = "StopGradient", .compute = identity_compute, .any_rank = true},
    {.op_name = "Reshape",
     .compute = reshape_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"shape"},
     .any_rank = true},
    {.op_name = "Shape",
     .compute = shape_compute,
     .host_memory = {"output"},
     .any_rank = true},
    {.op_name = "ShapeN",
     .compute = shape_compute,
     .host_memory = {"output"},
     .any_rank = true},
    {.op_name = "Size",
     .compute = size_compute,
     .host_memory = {"output"},
     .any_rank = true},
    {.op_name = "Rank",
     .compute = rank_compute,
     .host_memory = {"output"},
     .any_rank = true},
    {.op_name = "ExpandDims",
     .any_rank = true,
     .compute = expand_dims_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"dim"}},
    {.op_name = "Squeeze",
     .any_rank = true,
     .compute = squeeze_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES}},
    {.op_name = "BroadcastGradientArgs",
     .any_rank = true,
     .compute = gradient_args_compute,
     .type_attr = "T",
     .types = {LOOM_DTYPE_INT32, LOOM_DTYPE_INT64},
     .host_memory = {"s0", "s1", "r0", "r1"}},
};

loom_status_t loom__register_array_shape_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
