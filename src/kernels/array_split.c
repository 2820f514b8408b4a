// Splitting along an axis: Unpack, Split, SplitV. Each is a batch of 2-D
// block copies (array_copy.c) run in one parallel pass; a piece that is a
// contiguous, aligned run of the input (splitting the outermost dimension)
// is a view instead of a copy.

#include <inttypes.h>
#include <string.h>

#include "base/small_vector.h"
#include "kernels/array_internal.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

// Up to 16 pieces need no allocation.
LOOM_DEFINE_SMALL_VECTOR(shape_vector, loom_shape_t, 16)
LOOM_DEFINE_SMALL_VECTOR(size_vector, int64_t, 16)

//===----------------------------------------------------------------------===//
// Splitting: Unpack, Split, SplitV
//===----------------------------------------------------------------------===//

// Output k takes sizes[k] entries along `axis` of `input`, one after the
// other, and has shape shapes[k] (the piece's shape, or that with the axis
// dropped). A piece of the outermost non-trivial dimension that starts on
// an aligned address is a view; the others are copied in one parallel
// pass.
static loom_status_t split_along(loom_kernel_context_t* ctx,
                                 loom_tensor_t* input, int32_t axis, int32_t n,
                                 const int64_t* sizes,
                                 const loom_shape_t* shapes) {
  const loom_shape_t* in = loom_tensor_shape(input);
  if (loom_tensor_num_elements(input) == 0) {
    // Every piece is empty: nothing to copy, and the dims of an empty
    // input need not multiply within int64.
    for (int32_t k = 0; k < n; ++k) {
      loom_tensor_t* out = NULL;
      LOOM_RETURN_IF_ERROR(
          loom_kernel_context_allocate_output(ctx, k, &shapes[k], &out));
    }
    return loom_ok_status();
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  size_t size = loom__array_element_size(dtype);
  int64_t outer = loom__array_dims_product(in, 0, axis);
  int64_t inner = loom__array_dims_product(in, axis + 1, in->rank);
  int64_t dim = loom_shape_dims(in)[axis];
  bool viewable = outer == 1 && dtype != LOOM_DTYPE_STRING &&
                  loom_tensor_kind(input) == LOOM_TENSOR_DENSE;
  loom__array_block_list_t list;
  LOOM_RETURN_IF_ERROR(loom__array_block_list_init(&list, n));
  loom_status_t status = loom_ok_status();
  int64_t start = 0, blocks = 0;
  for (int32_t k = 0; k < n && !status; ++k) {
    int64_t offset = start * inner;
    start += sizes[k];
    uintptr_t address = (uintptr_t)((const char*)loom_tensor_data(input) +
                                    (size_t)offset * size);
    if (n == 1 || (viewable && address % LOOM_DEFAULT_DATA_ALIGNMENT == 0)) {
      status = loom__array_set_view(ctx, k, input, offset, &shapes[k]);
      continue;
    }
    loom_tensor_t* out = NULL;
    status = loom_kernel_context_allocate_output(ctx, k, &shapes[k], &out);
    if (status || outer == 0 || sizes[k] * inner == 0) continue;
    loom__array_block_t* block = &list.blocks[blocks++];
    block->src = (const char*)loom_tensor_data(input) + (size_t)offset * size;
    block->dst = loom_tensor_data(out);
    block->rows = outer;
    block->row_elements = sizes[k] * inner;
    block->src_stride = dim * inner;
    block->dst_stride = sizes[k] * inner;
  }
  if (!status) {
    status = loom__array_copy_blocks(loom__array_pool(ctx), dtype, list.blocks,
                                     blocks);
  }
  loom__array_block_list_free(&list);
  return status;
}

// Output shapes and sizes for n pieces (uninitialised).
typedef struct pieces_t {
  shape_vector_t shape_storage;
  size_vector_t size_storage;
  loom_shape_t* shapes;
  int64_t* sizes;
} pieces_t;

static loom_status_t pieces_init(pieces_t* p, int64_t n) {
  loom_allocator_t allocator = loom_allocator_default();
  shape_vector_initialize(&p->shape_storage);
  size_vector_initialize(&p->size_storage);
  loom_status_t status = shape_vector_resize_uninitialized(
      &p->shape_storage, allocator, (size_t)n);
  if (!status) {
    status = size_vector_resize_uninitialized(&p->size_storage, allocator,
                                              (size_t)n);
  }
  if (status) {
    shape_vector_deinitialize(&p->shape_storage, allocator);
    return status;
  }
  p->shapes = shape_vector_data(&p->shape_storage);
  p->sizes = size_vector_data(&p->size_storage);
  return loom_ok_status();
}

static void pieces_free(pieces_t* p) {
  shape_vector_deinitialize(&p->shape_storage, loom_allocator_default());
  size_vector_deinitialize(&p->size_storage, loom_allocator_default());
}

// Unpack's axis and the shape of each output.
static loom_status_t unpack_plan(const loom_shape_t* in, int64_t num,
                                 int64_t axis, loom_shape_t* out,
                                 int32_t* out_axis) {
  int32_t rank = in->rank;
  if (axis < -rank || axis >= rank) {
    return loom__array_invalid("axis = %" PRId64 " not in [%d, %d)", axis,
                               -rank, rank);
  }
  int32_t ax = (int32_t)(axis < 0 ? axis + rank : axis);
  const int64_t* in_dims = loom_shape_dims(in);
  if (in_dims[ax] >= 0 && in_dims[ax] != num) {
    char text[256];
    return loom__array_invalid(
        "Input shape axis %d must equal %" PRId64 ", got shape %s", ax, num,
        loom__shape_debug_string(in, text, sizeof(text)));
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t out_rank = 0;
  for (int32_t d = 0; d < rank; ++d) {
    if (d != ax) dims[out_rank++] = in_dims[d];
  }
  *out_axis = ax;
  return loom_shape_initialize_large(out, dims, out_rank);
}

static loom_status_t unpack_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  (void)user_data;
  loom_shape_t in, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  int32_t n = loom_shape_inference_context_num_outputs(c);
  if (in.rank >= 0) {
    int32_t ax;
    LOOM_RETURN_IF_ERROR(unpack_plan(
        &in, n,
        loom__array_attr_int(loom_shape_inference_context_attrs(c), "axis", 0),
        &out, &ax));
  }
  for (int32_t k = 0; k < n; ++k) {
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_set_output(c, k, &out));
  }
  return loom_ok_status();
}

static loom_status_t unpack_run(loom_kernel_context_t* ctx,
                                loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  int32_t n = loom_kernel_context_num_outputs(ctx);
  loom_shape_t out;
  int32_t ax = 0;
  LOOM_RETURN_IF_ERROR(unpack_plan(
      loom_tensor_shape(input), n,
      loom__array_attr_int(loom_kernel_context_attrs(ctx), "axis", 0), &out,
      &ax));
  if (n == 0) return loom_ok_status();
  // One output: the input's elements with the axis dropped.
  if (n == 1) return loom__array_set_view(ctx, 0, input, 0, &out);
  pieces_t p;
  LOOM_RETURN_IF_ERROR(pieces_init(&p, n));
  for (int32_t k = 0; k < n; ++k) {
    p.sizes[k] = 1;
    p.shapes[k] = out;
  }
  loom_status_t status = split_along(ctx, input, ax, n, p.sizes, p.shapes);
  pieces_free(&p);
  return status;
}

static void unpack_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, unpack_run);
}

// Reads split_dim only once its shape says it holds one value: a
// zero-element split_dim of rank > 0 has nothing to read.
static loom_status_t split_dim_check(const loom_shape_t* dim_shape,
                                     const loom_tensor_t* dim_tensor,
                                     int32_t rank, int32_t* out_axis) {
  if (dim_shape->rank > 0) {
    char text[128];
    return loom__array_invalid(
        "split_dim must be a scalar but has shape %s",
        loom__shape_debug_string(dim_shape, text, sizeof(text)));
  }
  int64_t dim = loom__array_index_at(dim_tensor, 0);
  int64_t axis = dim < 0 ? dim + rank : dim;
  if (axis < 0 || axis >= rank) {
    return loom__array_invalid(
        "-input rank(-%d) <= split_dim < input rank "
        "(%d), but got %" PRId64,
        rank, rank, dim);
  }
  *out_axis = (int32_t)axis;
  return loom_ok_status();
}

// `in` with dim `axis` set to `size` (any rank).
static loom_status_t with_dim(const loom_shape_t* in, int32_t axis,
                              int64_t size, loom_shape_t* out) {
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  memcpy(dims, loom_shape_dims(in), (size_t)in->rank * sizeof(int64_t));
  dims[axis] = size;
  return loom_shape_initialize_large(out, dims, in->rank);
}

// Split: num_split equal pieces of `in` along the axis in split_dim.
static loom_status_t split_plan(const loom_shape_t* dim_shape,
                                const loom_tensor_t* dim_tensor,
                                const loom_shape_t* in, int32_t n,
                                int64_t* sizes, loom_shape_t* shapes,
                                int32_t* out_axis) {
  int32_t axis = 0;
  LOOM_RETURN_IF_ERROR(split_dim_check(dim_shape, dim_tensor, in->rank, &axis));
  int64_t dim = loom_shape_dims(in)[axis];
  if (dim >= 0 && dim % n != 0) {
    return loom__array_invalid(
        "Number of ways to split should evenly divide the split dimension, "
        "but got split_dim %d (size = %" PRId64 ") and num_split %d",
        axis, dim, n);
  }
  for (int32_t k = 0; k < n; ++k) {
    sizes[k] = dim < 0 ? LOOM_UNKNOWN_DIM : dim / n;
    LOOM_RETURN_IF_ERROR(with_dim(in, axis, sizes[k], &shapes[k]));
  }
  *out_axis = axis;
  return loom_ok_status();
}

static loom_status_t split_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t dim_shape, in;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &dim_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &in));
  const loom_tensor_t* dim = loom_shape_inference_context_input_tensor(c, 0);
  int32_t n = loom_shape_inference_context_num_outputs(c);
  pieces_t p;
  LOOM_RETURN_IF_ERROR(pieces_init(&p, n));
  loom_status_t status = loom_ok_status();
  if (dim && in.rank >= 0) {
    int32_t axis;
    status = split_plan(&dim_shape, dim, &in, n, p.sizes, p.shapes, &axis);
  } else {
    for (int32_t k = 0; k < n && !status; ++k) {
      p.shapes[k] = in;
      if (in.rank > 0) status = loom__array_unknown_dims(in.rank, &p.shapes[k]);
    }
  }
  for (int32_t k = 0; k < n && !status; ++k) {
    status = loom_shape_inference_context_set_output(c, k, &p.shapes[k]);
  }
  pieces_free(&p);
  return status;
}

static loom_status_t split_run(loom_kernel_context_t* ctx,
                               loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[1];
  int32_t n = loom_kernel_context_num_outputs(ctx);
  pieces_t p;
  LOOM_RETURN_IF_ERROR(pieces_init(&p, n));
  int32_t axis = 0;
  loom_status_t status =
      split_plan(loom_tensor_shape(inputs[0]), inputs[0],
                 loom_tensor_shape(input), n, p.sizes, p.shapes, &axis);
  if (!status) status = split_along(ctx, input, axis, n, p.sizes, p.shapes);
  pieces_free(&p);
  return status;
}

static void split_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, split_run);
}

// SplitV: pieces of the sizes in size_splits (one may be -1: the rest).
static loom_status_t split_v_plan(const loom_shape_t* in,
                                  const loom_shape_t* sizes_shape,
                                  const loom_tensor_t* sizes_tensor,
                                  const loom_shape_t* dim_shape,
                                  const loom_tensor_t* dim_tensor, int32_t n,
                                  int64_t* sizes, loom_shape_t* shapes,
                                  int32_t* out_axis) {
  int64_t count = loom_tensor_num_elements(sizes_tensor);
  if (sizes_shape->rank != 1 || count != n) {
    return loom__array_invalid(
        "size of the split_tensor must be 1-D and have the same elements as "
        "outputs got %d -D and %" PRId64 " elements",
        sizes_shape->rank, count);
  }
  int32_t axis = 0;
  LOOM_RETURN_IF_ERROR(split_dim_check(dim_shape, dim_tensor, in->rank, &axis));
  int64_t dim = loom_shape_dims(in)[axis];
  int64_t determined = 0, neg_one = -1;
  for (int32_t k = 0; k < n; ++k)
    sizes[k] = loom__array_index_at(sizes_tensor, k);
  for (int32_t k = 0; k < n; ++k) {
    if (sizes[k] == -1) {
      if (neg_one != -1) {
        return loom__array_invalid("There can only be one -1 in the input.");
      }
      neg_one = k;
    } else if (sizes[k] < 0) {
      return loom__array_invalid(
          "Split size at index %d must be >= 0. Got: %" PRId64, k, sizes[k]);
    } else if (!loom__size_add(determined, sizes[k], &determined)) {
      char text[256];
      return loom__size_overflow_error(
          "SplitV", "size_splits", "%s",
          loom__format_int64s(sizes, n, text, sizeof(text)));
    }
  }
  if (dim >= 0) {
    if ((neg_one == -1 && determined != dim) ||
        (neg_one >= 0 && determined > dim)) {
      return loom__array_invalid(
          "Determined shape must either match input shape along split_dim "
          "exactly if fully specified, or be less than the size of the input "
          "along split_dim if not fully specified.  Got: %" PRId64,
          determined);
    }
    if (neg_one >= 0) sizes[neg_one] = dim - determined;
  } else if (neg_one >= 0) {
    sizes[neg_one] = LOOM_UNKNOWN_DIM;
  }
  for (int32_t k = 0; k < n; ++k) {
    LOOM_RETURN_IF_ERROR(with_dim(in, axis, sizes[k], &shapes[k]));
  }
  *out_axis = axis;
  return loom_ok_status();
}

static loom_status_t split_v_shape_fn(loom_shape_inference_context_t* c,
                                      void* user_data) {
  (void)user_data;
  loom_shape_t in, sizes_shape, dim_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &sizes_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &dim_shape));
  const loom_tensor_t* sizes = loom_shape_inference_context_input_tensor(c, 1);
  const loom_tensor_t* dim = loom_shape_inference_context_input_tensor(c, 2);
  int32_t n = loom_shape_inference_context_num_outputs(c);
  if (in.rank == 0) return loom__array_invalid("Can't split scalars");
  pieces_t p;
  LOOM_RETURN_IF_ERROR(pieces_init(&p, n));
  loom_status_t status = loom_ok_status();
  if (sizes && dim && in.rank >= 0) {
    int32_t axis;
    status = split_v_plan(&in, &sizes_shape, sizes, &dim_shape, dim, n, p.sizes,
                          p.shapes, &axis);
  } else {
    for (int32_t k = 0; k < n && !status; ++k) {
      p.shapes[k] = in;
      if (in.rank > 0) status = loom__array_unknown_dims(in.rank, &p.shapes[k]);
    }
  }
  for (int32_t k = 0; k < n && !status; ++k) {
    status = loom_shape_inference_context_set_output(c, k, &p.shapes[k]);
  }
  pieces_free(&p);
  return status;
}

static loom_status_t split_v_run(loom_kernel_context_t* ctx,
                                 loom_tensor_t* const* inputs) {
  loom_tensor_t* input = inputs[0];
  int32_t n = loom_kernel_context_num_outputs(ctx);
  if (loom_tensor_shape(input)->rank == 0) {
    return loom__array_invalid("Can't split scalars");
  }
  pieces_t p;
  LOOM_RETURN_IF_ERROR(pieces_init(&p, n));
  int32_t axis = 0;
  loom_status_t status = split_v_plan(
      loom_tensor_shape(input), loom_tensor_shape(inputs[1]), inputs[1],
      loom_tensor_shape(inputs[2]), inputs[2], n, p.sizes, p.shapes, &axis);
  if (!status) status = split_along(ctx, input, axis, n, p.sizes, p.shapes);
  pieces_free(&p);
  return status;
}

static void split_v_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, split_v_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Unpack",
     .inputs = {"value: T"},
     .outputs = {"output: num * T"},
     .attrs = {"num: int >= 0", "T: type", "axis: int = 0"},
     .shape_fn = unpack_shape_fn},
    {.name = "Split",
     .inputs = {"split_dim: int32", "value: T"},
     .outputs = {"output: num_split * T"},
     .attrs = {"num_split: int >= 1", "T: type"},
     .shape_fn = split_shape_fn},
    {.name = "SplitV",
     .inputs = {"value: T", "size_splits: Tlen", "split_dim: int32"},
     .outputs = {"output: num_split * T"},
     .attrs = {"num_split: int >= 1", "T: type",
               "Tlen: {int8, int32, int64} = DT_INT64"},
     .shape_fn = split_v_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Unpack",
     .any_rank = true,
     .compute = unpack_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES}},
    {.op_name = "Split",
     .any_rank = true,
     .compute = split_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"split_dim"}},
    {.op_name = "SplitV",
     .any_rank = true,
     .compute = split_v_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"size_splits", "split_dim"}},
};

loom_status_t loom__register_array_split_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
