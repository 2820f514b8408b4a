// Joining along an axis: Concat, ConcatV2, Pack. Each is a batch of 2-D
// block copies (array_copy.c) run in one parallel pass. The splitting ops
// (Unpack, Split, SplitV) are in array_split.c.

#include <inttypes.h>
#include <string.h>

#include "base/small_vector.h"
#include "kernels/array_internal.h"
#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

// Up to 16 inputs need no allocation.
LOOM_DEFINE_SMALL_VECTOR(shape_vector, loom_shape_t, 16)

// The product of dims [begin, end) of a tensor that holds elements (so it
// fits int64: the kernels return before planning copies of empty tensors).
static int64_t product(const loom_shape_t* shape, int32_t begin, int32_t end) {
  return loom__array_dims_product(shape, begin, end);
}

// Whether dims of two shapes may be the same (unknown matches anything).
static bool dims_compatible(int64_t a, int64_t b) {
  return a < 0 || b < 0 || a == b;
}

//===----------------------------------------------------------------------===//
// Concat, ConcatV2
//===----------------------------------------------------------------------===//

// Where the two ops keep their axis: Concat (v1) takes concat_dim before
// its values, ConcatV2 takes axis after them.
typedef struct concat_form_t {
  const char* op;
  const char* axis_name;
  bool axis_first;
} concat_form_t;

static const concat_form_t kConcatV1 = {
    .op = "Concat", .axis_name = "concat_dim", .axis_first = true};
static const concat_form_t kConcatV2 = {
    .op = "ConcatV2", .axis_name = "axis", .axis_first = false};

// The axis input's index and the first value's, for n values.
static int32_t concat_axis_index(const concat_form_t* form, int32_t n) {
  return form->axis_first ? 0 : n;
}

static int32_t concat_first_value(const concat_form_t* form) {
  return form->axis_first ? 1 : 0;
}

static loom_status_t concat_axis(const concat_form_t* form,
                                 const loom_shape_t* axis_shape,
                                 const loom_tensor_t* axis_tensor,
                                 int64_t* out_axis) {
  if (axis_shape->rank > 1 ||
      (axis_shape->rank == 1 && axis_shape->dims[0] != 1)) {
    char text[128];
    return loom__array_invalid(
        "%s tensor should be a scalar integer, but got shape %s",
        form->axis_name,
        loom__shape_debug_string(axis_shape, text, sizeof(text)));
  }
  if (axis_tensor) *out_axis = loom__array_index_at(axis_tensor, 0);
  return loom_ok_status();
}

// The output shape of concatenating shapes[0, n) along `axis`; dims may be
// unknown (they are then skipped by the checks and stay unknown).
static loom_status_t concat_plan(const concat_form_t* form,
                                 const loom_shape_t* shapes, int32_t n,
                                 int64_t axis, loom_shape_t* out,
                                 int32_t* out_axis) {
  char a[256], b[256];
  const loom_shape_t* first = &shapes[0];
  int32_t rank = first->rank;
  if (rank == 0) {
    return loom__array_invalid(
        "Can't concatenate scalars (use tf.stack instead)");
  }
  if (axis < -rank || axis >= rank) {
    return loom__array_invalid(
        "ConcatOp : Expected concatenating dimensions "
        "in the range [%d, %d), but got %" PRId64,
        -rank, rank, axis);
  }
  int32_t ax = (int32_t)(axis < 0 ? axis + rank : axis);
  // The output's dims, gathered here (any rank; interned above 8).
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  memcpy(dims, loom_shape_dims(first), sizeof(int64_t) * (size_t)rank);
  const int64_t* first_dims = loom_shape_dims(first);
  for (int32_t k = 1; k < n; ++k) {
    const loom_shape_t* s = &shapes[k];
    const int64_t* s_dims = loom_shape_dims(s);
    if (s->rank != rank) {
      return loom__array_invalid(
          "ConcatOp : Ranks of all input tensors should match: shape[0] = %s "
          "vs. shape[%d] = %s",
          loom__shape_debug_string(first, a, sizeof(a)), k,
          loom__shape_debug_string(s, b, sizeof(b)));
    }
    for (int32_t d = 0; d < rank; ++d) {
      if (d == ax) continue;
      if (!dims_compatible(first_dims[d], s_dims[d])) {
        return loom__array_invalid(
            "ConcatOp : Dimensions of inputs should match: shape[0] = %s vs. "
            "shape[%d] = %s",
            loom__shape_debug_string(first, a, sizeof(a)), k,
            loom__shape_debug_string(s, b, sizeof(b)));
      }
      if (dims[d] < 0) dims[d] = s_dims[d];
    }
    int64_t sum;
    if (dims[ax] >= 0 && s_dims[ax] < 0) {
      dims[ax] = LOOM_UNKNOWN_DIM;
    } else if (dims[ax] >= 0 && !loom__size_add(dims[ax], s_dims[ax], &sum)) {
      return loom__size_overflow_error(form->op, "values",
                                       "sizes along dimension %d: %" PRId64
                                       " (values[0, %d)) + %" PRId64
                                       " (values[%d])",
                                       ax, dims[ax], k, s_dims[ax], k);
    } else if (dims[ax] >= 0) {
      dims[ax] = sum;
    }
  }
  *out_axis = ax;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(out, dims, rank));
  return loom__array_check_count(form->op, "values of output shape", dims, rank,
                                 out);
}

static loom_status_t concat_shape_fn(loom_shape_inference_context_t* c,
                                     void* user_data) {
  const concat_form_t* form = user_data;
  int32_t n = loom_shape_inference_context_num_inputs(c) - 1;
  int32_t axis_index = concat_axis_index(form, n);
  int32_t first = concat_first_value(form);
  loom_shape_t axis_shape, out = loom_shape_unknown();
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(c, axis_index, &axis_shape));
  const loom_tensor_t* axis_tensor =
      loom_shape_inference_context_input_tensor(c, axis_index);
  int64_t axis = 0;
  LOOM_RETURN_IF_ERROR(concat_axis(form, &axis_shape, axis_tensor, &axis));
  shape_vector_t shape_storage;
  shape_vector_initialize(&shape_storage);
  LOOM_RETURN_IF_ERROR(shape_vector_resize_uninitialized(
      &shape_storage, loom_allocator_default(), (size_t)n));
  loom_shape_t* shapes = shape_vector_data(&shape_storage);
  loom_status_t status = loom_ok_status();
  int32_t rank = LOOM_UNKNOWN_RANK;
  bool ranks_known = true;
  for (int32_t k = 0; k < n && !status; ++k) {
    status = loom_shape_inference_context_input(c, first + k, &shapes[k]);
    if (shapes[k].rank < 0) ranks_known = false;
    if (shapes[k].rank >= 0) rank = shapes[k].rank;
  }
  if (!status && ranks_known && axis_tensor) {
    int32_t ax;
    status = concat_plan(form, shapes, n, axis, &out, &ax);
  } else if (!status && rank == 0) {
    status =
        loom__array_invalid("Can't concatenate scalars (use tf.stack instead)");
  } else if (!status && rank >= 0) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t d = 0; d < rank; ++d) dims[d] = LOOM_UNKNOWN_DIM;
    status = loom_shape_initialize_large(&out, dims, rank);
  }
  shape_vector_deinitialize(&shape_storage, loom_allocator_default());
  LOOM_RETURN_IF_ERROR(status);
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t concat_run(const concat_form_t* form,
                                loom_kernel_context_t* ctx,
                                loom_tensor_t* const* all_inputs) {
  int32_t n = loom_kernel_context_num_inputs(ctx) - 1;
  loom_tensor_t* axis_tensor = all_inputs[concat_axis_index(form, n)];
  loom_tensor_t* const* inputs = all_inputs + concat_first_value(form);
  int64_t axis = 0;
  LOOM_RETURN_IF_ERROR(
      concat_axis(form, loom_tensor_shape(axis_tensor), axis_tensor, &axis));
  shape_vector_t shape_storage;
  shape_vector_initialize(&shape_storage);
  LOOM_RETURN_IF_ERROR(shape_vector_resize_uninitialized(
      &shape_storage, loom_allocator_default(), (size_t)n));
  loom_shape_t* shapes = shape_vector_data(&shape_storage);
  for (int32_t k = 0; k < n; ++k) shapes[k] = *loom_tensor_shape(inputs[k]);
  loom_shape_t out_shape;
  int32_t ax = 0;
  loom_status_t status = concat_plan(form, shapes, n, axis, &out_shape, &ax);
  shape_vector_deinitialize(&shape_storage, loom_allocator_default());
  LOOM_RETURN_IF_ERROR(status);
  // One input holding every element: the output is that input.
  int32_t nonempty = -1, count = 0;
  for (int32_t k = 0; k < n; ++k) {
    if (loom_tensor_num_elements(inputs[k]) > 0) {
      nonempty = k;
      count++;
    }
  }
  if (count == 1) {
    return loom__array_set_view(ctx, 0, inputs[nonempty], 0, &out_shape);
  }
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  loom__array_block_list_t list;
  LOOM_RETURN_IF_ERROR(loom__array_block_list_init(&list, n));
  loom_dtype_t dtype = loom_tensor_dtype(out);
  size_t size = loom__array_element_size(dtype);
  int64_t outer = product(&out_shape, 0, ax);
  int64_t row = product(&out_shape, ax, out_shape.rank);
  int64_t offset = 0, blocks = 0;
  for (int32_t k = 0; k < n; ++k) {
    const loom_shape_t* s = loom_tensor_shape(inputs[k]);
    int64_t inner = product(s, ax, s->rank);
    if (inner > 0 && outer > 0) {
      loom__array_block_t* block = &list.blocks[blocks++];
      block->src = loom_tensor_data(inputs[k]);
      block->dst = (char*)loom_tensor_data(out) + (size_t)offset * size;
      block->rows = outer;
      block->row_elements = inner;
      block->src_stride = inner;
      block->dst_stride = row;
    }
    offset += inner;
  }
  status = loom__array_copy_blocks(loom__array_pool(ctx), dtype, list.blocks,
                                   blocks);
  loom__array_block_list_free(&list);
  return status;
}

static loom_status_t concat_v1_run(loom_kernel_context_t* ctx,
                                   loom_tensor_t* const* inputs) {
  return concat_run(&kConcatV1, ctx, inputs);
}

static loom_status_t concat_v2_run(loom_kernel_context_t* ctx,
                                   loom_tensor_t* const* inputs) {
  return concat_run(&kConcatV2, ctx, inputs);
}

static void concat_v1_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, concat_v1_run);
}

static void concat_v2_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, concat_v2_run);
}

//===----------------------------------------------------------------------===//
// Pack
//===----------------------------------------------------------------------===//

static loom_status_t pack_plan(const loom_shape_t* shape, int32_t n,
                               int64_t axis, loom_shape_t* out,
                               int32_t* out_axis) {
  int32_t rank = shape->rank + 1;
  if (axis < -rank || axis >= rank) {
    return loom__array_invalid("axis = %" PRId64 " not in [%d, %d)", axis,
                               -rank, rank);
  }
  if (rank > LOOM_MAX_SHAPE_RANK) {
    return loom__array_invalid(
        "Pack: the result would have rank %d, above the maximum rank %d", rank,
        LOOM_MAX_SHAPE_RANK);
  }
  int32_t ax = (int32_t)(axis < 0 ? axis + rank : axis);
  const int64_t* in = loom_shape_dims(shape);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0; d < ax; ++d) dims[d] = in[d];
  dims[ax] = n;
  for (int32_t d = ax + 1; d < rank; ++d) dims[d] = in[d - 1];
  *out_axis = ax;
  return loom_shape_initialize_large(out, dims, rank);
}

static loom_status_t pack_check_shapes(const loom_shape_t* a, int32_t k,
                                       const loom_shape_t* b) {
  bool same = a->rank == b->rank;
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  for (int32_t d = 0; same && d < a->rank; ++d) {
    same = dims_compatible(a_dims[d], b_dims[d]);
  }
  if (same) return loom_ok_status();
  char x[256], y[256];
  return loom__array_invalid(
      "Shapes of all inputs must match: values[0].shape = %s != values[%d]."
      "shape = %s",
      loom__shape_debug_string(a, x, sizeof(x)), k,
      loom__shape_debug_string(b, y, sizeof(y)));
}

static loom_status_t pack_shape_fn(loom_shape_inference_context_t* c,
                                   void* user_data) {
  (void)user_data;
  int32_t n = loom_shape_inference_context_num_inputs(c);
  loom_shape_t merged;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &merged));
  for (int32_t k = 1; k < n; ++k) {
    loom_shape_t s;
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, k, &s));
    if (merged.rank < 0) {
      merged = s;
      continue;
    }
    if (s.rank < 0) continue;
    LOOM_RETURN_IF_ERROR(pack_check_shapes(&merged, k, &s));
    bool merged_ok = false;
    loom_shape_t both;
    LOOM_RETURN_IF_ERROR(loom__shape_merge(&merged, &s, &both, &merged_ok));
    if (merged_ok) merged = both;
  }
  loom_shape_t out = loom_shape_unknown();
  if (merged.rank >= 0) {
    int32_t ax;
    LOOM_RETURN_IF_ERROR(pack_plan(
        &merged, n,
        loom__array_attr_int(loom_shape_inference_context_attrs(c), "axis", 0),
        &out, &ax));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t pack_run(loom_kernel_context_t* ctx,
                              loom_tensor_t* const* inputs) {
  int32_t n = loom_kernel_context_num_inputs(ctx);
  const loom_shape_t* first = loom_tensor_shape(inputs[0]);
  for (int32_t k = 1; k < n; ++k) {
    LOOM_RETURN_IF_ERROR(
        pack_check_shapes(first, k, loom_tensor_shape(inputs[k])));
  }
  loom_shape_t out_shape;
  int32_t ax = 0;
  LOOM_RETURN_IF_ERROR(pack_plan(
      first, n, loom__array_attr_int(loom_kernel_context_attrs(ctx), "axis", 0),
      &out_shape, &ax));
  if (n == 1) return loom__array_set_view(ctx, 0, inputs[0], 0, &out_shape);
  loom_tensor_t* out = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out));
  if (loom_tensor_num_elements(out) == 0) return loom_ok_status();
  loom__array_block_list_t list;
  LOOM_RETURN_IF_ERROR(loom__array_block_list_init(&list, n));
  loom_dtype_t dtype = loom_tensor_dtype(out);
  size_t size = loom__array_element_size(dtype);
  int64_t outer = product(first, 0, ax);
  int64_t inner = product(first, ax, first->rank);
  int64_t blocks = 0;
  for (int32_t k = 0; k < n && outer > 0 && inner > 0; ++k) {
    loom__array_block_t* block = &list.blocks[blocks++];
    block->src = loom_tensor_data(inputs[k]);
    block->dst = (char*)loom_tensor_data(out) + (size_t)(k * inner) * size;
    block->rows = outer;
    block->row_elements = inner;
    block->src_stride = inner;
    block->dst_stride = n * inner;
  }
  loom_status_t status = loom__array_copy_blocks(loom__array_pool(ctx), dtype,
                                                 list.blocks, blocks);
  loom__array_block_list_free(&list);
  return status;
}

static void pack_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, pack_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Concat",
     .inputs = {"concat_dim: int32", "values: N * T"},
     .outputs = {"output: T"},
     .attrs = {"N: int >= 2", "T: type"},
     .shape_fn = concat_shape_fn,
     .shape_fn_data = &kConcatV1},
    {.name = "ConcatV2",
     .inputs = {"values: N * T", "axis: Tidx"},
     .outputs = {"output: T"},
     .attrs = {"N: int >= 2", "T: type", "Tidx: {int32, int64} = DT_INT32"},
     .shape_fn = concat_shape_fn,
     .shape_fn_data = &kConcatV2},
    {.name = "Pack",
     .inputs = {"values: N * T"},
     .outputs = {"output: T"},
     .attrs = {"N: int >= 1", "T: type", "axis: int = 0"},
     .shape_fn = pack_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Concat",
     .any_rank = true,
     .compute = concat_v1_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"concat_dim"}},
    {.op_name = "ConcatV2",
     .any_rank = true,
     .compute = concat_v2_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"axis"}},
    {.op_name = "Pack",
     .any_rank = true,
     .compute = pack_compute,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES}},
};

loom_status_t loom__register_array_concat_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
