// Slice and StridedSlice (every mask, negative strides). A slice that takes
// everything is a view of the input; one that is a contiguous, aligned run
// of it (a range of the outermost dimension) is a view at an offset; the
// rest is one strided copy (array_copy.c), with negative strides walking
// backwards.

#include <inttypes.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "tensor/checked_size.h"

// Whether taking sizes[i] elements from begin[i] of each dim (stride 1) is
// one contiguous run of the input.
static bool is_contiguous_run(const loom_shape_t* in, const int64_t* begin,
                              const int64_t* sizes) {
  int32_t i = 0;
  while (i < in->rank && sizes[i] == 1) i++;  // leading single entries
  if (i < in->rank) i++;                      // one partial dim
  for (; i < in->rank; ++i) {
    if (begin[i] != 0 || sizes[i] != in->dims[i]) return false;
  }
  return true;
}

// Output `index` = the box begin[i] + [0, sizes[i]) * steps[i] of `input`
// seen with shape `in` (its own, or one folded to fewer dims), with shape
// `shape` (same element count): a view when that is the whole input or an
// aligned contiguous run of it, else a strided copy.
static loom_status_t take_box(loom_kernel_context_t* ctx, loom_tensor_t* input,
                              const loom_shape_t* in, const int64_t* begin,
                              const int64_t* sizes, const int64_t* steps,
                              const loom_shape_t* shape) {
  // sizes[i] <= dims[i]: the box has no more elements than the input, and
  // none when the input has none (then its dims, and strides, may pass
  // int64, and nothing is read).
  int64_t count = 0;
  if (!loom__size_product(sizes, in->rank, &count) || count == 0 ||
      loom_tensor_num_elements(input) == 0) {
    loom_tensor_t* output = NULL;
    return loom_kernel_context_allocate_output(ctx, 0, shape, &output);
  }
  int64_t strides[LOOM_MAX_RANK];
  if (!loom__array_strides(in, strides)) {
    return loom__array_invalid("the input's strides overflow");
  }
  int64_t offset = 0;
  bool unit_steps = true;
  for (int32_t i = 0; i < in->rank; ++i) {
    offset += begin[i] * strides[i];
    unit_steps = unit_steps && (steps[i] == 1 || sizes[i] <= 1);
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  size_t size = loom__array_element_size(dtype);
  if (count > 0 && unit_steps && is_contiguous_run(in, begin, sizes)) {
    if (count == loom_tensor_num_elements(input)) {
      return loom__array_set_view(ctx, 0, input, 0, shape);
    }
    uintptr_t address = (uintptr_t)((const char*)loom_tensor_data(input) +
                                    (size_t)offset * size);
    if (dtype != LOOM_DTYPE_STRING &&
        loom_tensor_kind(input) == LOOM_TENSOR_DENSE &&
        address % LOOM_DEFAULT_DATA_ALIGNMENT == 0) {
      return loom__array_set_view(ctx, 0, input, offset, shape);
    }
  }
  loom_tensor_t* output = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, shape, &output));
  loom__array_copy_t copy;
  copy.rank = in->rank;
  int64_t dst_stride = 1;
  for (int32_t i = in->rank - 1; i >= 0; --i) {
    copy.dims[i] = sizes[i];
    // A step only matters along a dim taking two or more elements, where
    // |step| < dims[i] keeps step * stride inside the input; a single
    // element may come with any step (INT64_MAX).
    copy.src_strides[i] = sizes[i] > 1 ? steps[i] * strides[i] : 0;
    copy.dst_strides[i] = dst_stride;
    dst_stride *= sizes[i];
  }
  return loom__array_copy(loom__array_pool(ctx), dtype,
                          (const char*)loom_tensor_data(input) +
                              (ptrdiff_t)offset * (ptrdiff_t)size,
                          loom_tensor_data(output), &copy);
}

// take_box for a box of more than LOOM_MAX_RANK folded dims (fold_box's):
// `rank` dims of the input `dims`, the box's begin, sizes and steps along
// each; the box holds elements and the input does. Out of line: its plan
// is large.
static __attribute__((noinline)) loom_status_t take_box_many(
    loom_kernel_context_t* ctx, loom_tensor_t* input, const int64_t* dims,
    int32_t rank, const int64_t* begin, const int64_t* sizes,
    const int64_t* steps, const loom_shape_t* shape) {
  loom_tensor_t* output = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_kernel_context_allocate_output(ctx, 0, shape, &output));
  loom__array_copy_any_t* copy = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom_allocator_malloc(allocator, sizeof(*copy), (void**)&copy));
  // Strides and offsets stay below the input's element count.
  copy->rank = rank;
  int64_t offset = 0, src_stride = 1, dst_stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    offset += begin[i] * src_stride;
    copy->dims[i] = sizes[i];
    // As take_box: a step matters only along a dim of two or more.
    copy->src_strides[i] = sizes[i] > 1 ? steps[i] * src_stride : 0;
    copy->dst_strides[i] = dst_stride;
    src_stride *= dims[i];
    dst_stride *= sizes[i];
  }
  loom_dtype_t dtype = loom_tensor_dtype(input);
  ptrdiff_t size = (ptrdiff_t)loom__array_element_size(dtype);
  loom_status_t status = loom__array_copy_any(
      loom__array_pool(ctx), dtype,
      (const char*)loom_tensor_data(input) + (ptrdiff_t)offset * size,
      loom_tensor_data(output), copy, NULL);
  loom_allocator_free(allocator, copy);
  return status;
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

// The box of Slice(in, begin, size); unknown input dims give unknown sizes.
static loom_status_t slice_plan(const loom_shape_t* in,
                                const loom_shape_t* begin_shape,
                                const loom_tensor_t* begin_tensor,
                                const loom_shape_t* size_shape,
                                const loom_tensor_t* size_tensor,
                                int64_t* begin, int64_t* sizes) {
  int32_t rank = in->rank;
  if (begin_shape->rank != 1 || size_shape->rank != 1 ||
      begin_shape->dims[0] != rank || size_shape->dims[0] != rank) {
    char a[128], b[128];
    return loom__array_invalid(
        "Expected begin and size arguments to be 1-D tensors of size %d, but "
        "got shapes %s and %s instead.",
        rank, loom__shape_debug_string(begin_shape, a, sizeof(a)),
        loom__shape_debug_string(size_shape, b, sizeof(b)));
  }
  const int64_t* in_dims = loom_shape_dims(in);  // the input may be large
  for (int32_t i = 0; i < rank; ++i) {
    int64_t b = loom__array_index_at(begin_tensor, i);
    int64_t s = loom__array_index_at(size_tensor, i);
    int64_t dim = in_dims[i];
    begin[i] = b;
    if (dim < 0) {
      if (s < -1) {
        return loom__array_invalid(
            "Expected size[%d] to be -1 or >= 0, but got %" PRId64, i, s);
      }
      sizes[i] = s == -1 ? LOOM_UNKNOWN_DIM : s;
      continue;
    }
    // -1 is the rest of the dim from a valid begin (else begin is wrong
    // and that is the error); b + s is compared as s against dim - b, so
    // neither wraps.
    if (s == -1 && b >= 0 && b <= dim) s = dim - b;
    if (dim == 0) {
      if (b != 0 || s != 0) {
        return loom__array_invalid("Expected begin[%d] == 0 (got %" PRId64
                                   ") and size[%d] == 0 (got "
                                   "%" PRId64 ") when input.dim_size(%d) == 0",
                                   i, b, i, s, i);
      }
    } else {
      if (b < 0 || b > dim) {
        return loom__array_invalid("Expected begin[%d] in [0, %" PRId64
                                   "], but got %" PRId64,
                                   i, dim, b);
      }
      if (s < 0 || s > dim - b) {
        return loom__array_invalid("Expected size[%d] in [0, %" PRId64
                                   "], but got %" PRId64,
                                   i, dim - b, s);
      }
    }
    sizes[i] = s;
  }
  return loom_ok_status();
}

static loom_status_t slice_shape_fn(loom_shape_inference_context_t* c,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t in, begin_shape, size_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &begin_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &size_shape));
  const loom_tensor_t* begin = loom_shape_inference_context_input_tensor(c, 1);
  const loom_tensor_t* size = loom_shape_inference_context_input_tensor(c, 2);
  loom_shape_t out = loom_shape_unknown();
  if (in.rank >= 0) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t i = 0; i < in.rank; ++i) dims[i] = LOOM_UNKNOWN_DIM;
    if (begin && size) {
      int64_t b[LOOM_MAX_SHAPE_RANK];
      LOOM_RETURN_IF_ERROR(
          slice_plan(&in, &begin_shape, begin, &size_shape, size, b, dims));
    }
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, dims, in.rank));
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

// A box with elements in a non-empty `in` above LOOM_MAX_RANK, folded in
// place: size-1 dims are dropped, and a dim the box takes whole, forwards,
// joins the one before it when that one is walked forwards (or takes one
// element): the pair is then one run of their product. Up to LOOM_MAX_RANK
// folded dims become *folded for take_box; more are copied here, as many
// copy dims through loom__array_copy_any. *done tells which happened.
static loom_status_t fold_box(loom_kernel_context_t* ctx, loom_tensor_t* input,
                              int64_t* begin, int64_t* sizes, int64_t* steps,
                              const loom_shape_t* out_shape,
                              loom_shape_t* folded, bool* done) {
  const loom_shape_t* in = loom_tensor_shape(input);
  const int64_t* dims = loom_shape_dims(in);
  int64_t folded_dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  *done = false;
  for (int32_t i = 0; i < in->rank; ++i) {
    if (dims[i] == 1) continue;
    bool whole = begin[i] == 0 && sizes[i] == dims[i] && steps[i] == 1;
    if (rank > 0 && whole && (steps[rank - 1] == 1 || sizes[rank - 1] <= 1)) {
      // Products stay below the input's element count.
      folded_dims[rank - 1] *= dims[i];
      begin[rank - 1] *= dims[i];
      sizes[rank - 1] *= dims[i];
      steps[rank - 1] = 1;
      continue;
    }
    folded_dims[rank] = dims[i];
    begin[rank] = begin[i];
    sizes[rank] = sizes[i];
    steps[rank] = steps[i];
    rank++;
  }
  if (rank == 0) {  // every dim is 1
    folded_dims[0] = 1;
    begin[0] = 0;
    sizes[0] = 1;
    steps[0] = 1;
    rank = 1;
  }
  if (LOOM_LIKELY(rank <= LOOM_MAX_RANK)) {
    return loom_shape_initialize(folded, folded_dims, rank);
  }
  *done = true;
  return take_box_many(ctx, input, folded_dims, rank, begin, sizes, steps,
                       out_shape);
}

static loom_status_t slice_run(loom_kernel_context_t* ctx,
                               loom_tensor_t* const* inputs) {
  const loom_shape_t* in = loom_tensor_shape(inputs[0]);
  int64_t b[LOOM_MAX_SHAPE_RANK], s[LOOM_MAX_SHAPE_RANK],
      steps[LOOM_MAX_SHAPE_RANK];
  LOOM_RETURN_IF_ERROR(slice_plan(in, loom_tensor_shape(inputs[1]), inputs[1],
                                  loom_tensor_shape(inputs[2]), inputs[2], b,
                                  s));
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, s, in->rank));
  for (int32_t i = 0; i < in->rank; ++i) steps[i] = 1;
  // Above LOOM_MAX_RANK a box with elements is taken from the folded input.
  loom_shape_t folded;
  if (LOOM_UNLIKELY(in->rank > LOOM_MAX_RANK) &&
      loom_shape_num_elements(&out) > 0) {
    bool done = false;
    LOOM_RETURN_IF_ERROR(
        fold_box(ctx, inputs[0], b, s, steps, &out, &folded, &done));
    if (done) return loom_ok_status();
    in = &folded;
  }
  return take_box(ctx, inputs[0], in, b, s, steps, &out);
}

static void slice_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, slice_run);
}

//===----------------------------------------------------------------------===//
// StridedSlice
//===----------------------------------------------------------------------===//

enum { kNewAxis = -1, kShrinkAxis = -2, kMaxSparseDims = 32 };

typedef struct strided_plan_t {
  // Per input dim (any rank): where the box starts, its size and step.
  int64_t begin[LOOM_MAX_SHAPE_RANK];
  int64_t sizes[LOOM_MAX_SHAPE_RANK];
  int64_t steps[LOOM_MAX_SHAPE_RANK];
  loom_shape_t final_shape;
} strided_plan_t;

typedef struct strided_masks_t {
  int64_t begin, end, ellipsis, new_axis, shrink_axis;
} strided_masks_t;

static strided_masks_t read_masks(const loom_op_attrs_t* attrs) {
  strided_masks_t m;
  m.begin = loom__array_attr_int(attrs, "begin_mask", 0);
  m.end = loom__array_attr_int(attrs, "end_mask", 0);
  m.ellipsis = loom__array_attr_int(attrs, "ellipsis_mask", 0);
  m.new_axis = loom__array_attr_int(attrs, "new_axis_mask", 0);
  m.shrink_axis = loom__array_attr_int(attrs, "shrink_axis_mask", 0);
  return m;
}

static loom_status_t check_spec_shapes(const loom_shape_t* begin,
                                       const loom_shape_t* end,
                                       const loom_shape_t* strides) {
  const loom_shape_t* all[3] = {begin, end, strides};
  bool ok = true;
  for (int i = 0; i < 3; ++i) {
    if (all[i]->rank < 0) continue;
    ok = ok && all[i]->rank == 1;
    if (ok && strides->rank == 1 && all[i]->dims[0] >= 0 &&
        strides->dims[0] >= 0) {
      ok = all[i]->dims[0] == strides->dims[0];
    }
  }
  // The masks have a bit per entry, and one more for the implied ellipsis.
  if (ok && strides->rank == 1 && strides->dims[0] >= kMaxSparseDims) {
    return loom__array_invalid(
        "StridedSlice: begin, end and strides have %" PRId64
        " entries, above the limit of %d",
        strides->dims[0], kMaxSparseDims - 1);
  }
  if (ok) return loom_ok_status();
  char a[128], b[128], c[128];
  return loom__array_invalid(
      "Expected begin, end, and strides to be 1D equal size tensors, but got "
      "shapes %s, %s, and %s instead.",
      loom__shape_debug_string(begin, a, sizeof(a)),
      loom__shape_debug_string(end, b, sizeof(b)),
      loom__shape_debug_string(strides, c, sizeof(c)));
}

// TensorFlow's strided-slice validation: expands the sparse spec (begin,
// end, strides and the masks) over the input's dims, canonicalises the
// bounds and computes the box and the final shape. begin or end may be
// NULL (unknown): their dims get unknown sizes. Input dims may be unknown.
static loom_status_t strided_plan(const loom_shape_t* in,
                                  const loom_tensor_t* begin_tensor,
                                  const loom_tensor_t* end_tensor,
                                  const loom_tensor_t* strides_tensor,
                                  strided_masks_t m, strided_plan_t* plan) {
  int32_t n = (int32_t)loom_tensor_num_elements(strides_tensor);
  // Masks are the user's int64s: tested as bits, never as numbers.
  if ((uint64_t)m.ellipsis & ((uint64_t)m.ellipsis - 1)) {
    return loom__array_invalid("Multiple ellipses in slice spec not allowed");
  }
  // Without an ellipsis, one is implied after the last entry.
  bool ellipsis_seen = false;
  int32_t new_axes_after_ellipsis = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (ellipsis_seen && (m.new_axis & ((int64_t)1 << i))) {
      new_axes_after_ellipsis++;
    }
    if (m.ellipsis & ((int64_t)1 << i)) ellipsis_seen = true;
  }
  int64_t ellipsis = m.ellipsis;
  int32_t sparse_dims = n;
  if (!ellipsis_seen) {
    ellipsis |= (int64_t)1 << n;
    sparse_dims++;
  }
  // The dense spec, one entry per input dim.
  int32_t dims = in->rank;
  int64_t begin[LOOM_MAX_SHAPE_RANK], end[LOOM_MAX_SHAPE_RANK],
      stride[LOOM_MAX_SHAPE_RANK];
  bool begin_masked[LOOM_MAX_SHAPE_RANK], end_masked[LOOM_MAX_SHAPE_RANK];
  bool shrink[LOOM_MAX_SHAPE_RANK];
  int32_t gather[kMaxSparseDims + LOOM_MAX_SHAPE_RANK];
  int32_t gathered = 0;
  int32_t full = 0;
  for (int32_t i = 0; i < sparse_dims; ++i) {
    int64_t bit = (int64_t)1 << i;
    if (ellipsis & bit) {
      int32_t next = dims - (sparse_dims - i) + 1 + new_axes_after_ellipsis;
      if (next > dims) next = dims;
      for (; full < next; ++full) {
        begin[full] = end[full] = 0;
        stride[full] = 1;
        begin_masked[full] = end_masked[full] = true;
        shrink[full] = false;
        gather[gathered++] = full;
      }
    } else if (m.new_axis & bit) {
      gather[gathered++] = kNewAxis;
    } else {
      if (full == dims) {
        return loom__array_invalid(
            "Index out of range using input dim %d; input has only %d dims",
            full, dims);
      }
      begin[full] = begin_tensor ? loom__array_index_at(begin_tensor, i) : 0;
      end[full] = end_tensor ? loom__array_index_at(end_tensor, i) : 0;
      stride[full] = loom__array_index_at(strides_tensor, i);
      begin_masked[full] = (m.begin & bit) != 0;
      end_masked[full] = (m.end & bit) != 0;
      shrink[full] = (m.shrink_axis & bit) != 0;
      gather[gathered++] = shrink[full] ? kShrinkAxis : full;
      full++;
    }
  }
  // Dims the spec does not reach are taken whole.
  for (; full < dims; ++full) {
    begin[full] = end[full] = 0;
    stride[full] = 1;
    begin_masked[full] = end_masked[full] = true;
    shrink[full] = false;
  }
  bool bounds_known = begin_tensor && end_tensor;
  const int64_t* in_dims = loom_shape_dims(in);  // the input may be large
  for (int32_t i = 0; i < dims; ++i) {
    int64_t s = stride[i], dim = in_dims[i];
    if (s == 0) {
      return loom__array_invalid("strides[%d] must be non-zero", i);
    }
    if (shrink[i] && s <= 0) {
      return loom__array_invalid(
          "only stride 1 allowed on non-range indexing.");
    }
    plan->steps[i] = s;
    plan->begin[i] = 0;
    if (dim < 0) {
      plan->sizes[i] = shrink[i] ? 1 : LOOM_UNKNOWN_DIM;
      continue;
    }
    int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
    int64_t b = begin[i], e = end[i];
    if (bounds_known) {
      if (shrink[i]) {
        int64_t forward = b < 0 ? dim + b : b;
        if (forward < 0 || forward >= dim) {
          // The index as the user wrote it (-7, not -7 + dim).
          return loom__array_invalid(
              "slice index %" PRId64 " of dimension %d out of bounds.", b, i);
        }
        b = forward;
        e = forward + 1;
      } else {
        if (begin_masked[i]) {
          b = s > 0 ? lo : hi;
        } else {
          b = b < 0 ? dim + b : b;
          b = b < lo ? lo : b > hi ? hi : b;
        }
        if (end_masked[i]) {
          e = s > 0 ? hi : lo;
        } else {
          e = e < 0 ? dim + e : e;
          e = e < lo ? lo : e > hi ? hi : e;
        }
      }
    }
    int64_t interval = 0;
    bool known = true;
    if (bounds_known) {
      interval = e - b;
    } else if (shrink[i]) {
      interval = 1;
    } else if (begin_masked[i] && end_masked[i]) {
      interval = s < 0 ? -dim : dim;
      b = s > 0 ? 0 : dim - 1;
    } else {
      known = false;
    }
    int64_t size = LOOM_UNKNOWN_DIM;
    if (known) {
      if (interval == 0 || ((interval < 0) != (s < 0))) {
        size = 0;
      } else {
        size = interval / s + (interval % s != 0);
      }
    }
    plan->begin[i] = b;
    plan->sizes[i] = size;
  }
  int64_t final_dims[LOOM_MAX_SHAPE_RANK];
  int32_t final_rank = 0;
  for (int32_t g = 0; g < gathered; ++g) {
    if (gather[g] == kShrinkAxis) continue;
    if (final_rank == LOOM_MAX_SHAPE_RANK) {
      return loom__array_invalid(
          "StridedSlice: the result would have rank above the maximum rank %d",
          LOOM_MAX_SHAPE_RANK);
    }
    final_dims[final_rank++] =
        gather[g] == kNewAxis ? 1 : plan->sizes[gather[g]];
  }
  return loom_shape_initialize_large(&plan->final_shape, final_dims,
                                     final_rank);
}

static loom_status_t strided_slice_shape_fn(loom_shape_inference_context_t* c,
                                            void* user_data) {
  (void)user_data;
  loom_shape_t in, begin_shape, end_shape, strides_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 0, &in));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 1, &begin_shape));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(c, 2, &end_shape));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(c, 3, &strides_shape));
  LOOM_RETURN_IF_ERROR(
      check_spec_shapes(&begin_shape, &end_shape, &strides_shape));
  const loom_tensor_t* strides =
      loom_shape_inference_context_input_tensor(c, 3);
  loom_shape_t out = loom_shape_unknown();
  if (in.rank >= 0 && strides) {
    strided_plan_t plan;
    LOOM_RETURN_IF_ERROR(
        strided_plan(&in, loom_shape_inference_context_input_tensor(c, 1),
                     loom_shape_inference_context_input_tensor(c, 2), strides,
                     read_masks(loom_shape_inference_context_attrs(c)), &plan));
    out = plan.final_shape;
  }
  return loom_shape_inference_context_set_output(c, 0, &out);
}

static loom_status_t strided_slice_run(loom_kernel_context_t* ctx,
                                       loom_tensor_t* const* inputs) {
  strided_plan_t plan;
  LOOM_RETURN_IF_ERROR(check_spec_shapes(loom_tensor_shape(inputs[1]),
                                         loom_tensor_shape(inputs[2]),
                                         loom_tensor_shape(inputs[3])));
  const loom_shape_t* in = loom_tensor_shape(inputs[0]);
  LOOM_RETURN_IF_ERROR(strided_plan(in, inputs[1], inputs[2], inputs[3],
                                    read_masks(loom_kernel_context_attrs(ctx)),
                                    &plan));
  // Above LOOM_MAX_RANK a box with elements is taken from the folded input.
  loom_shape_t folded;
  if (LOOM_UNLIKELY(in->rank > LOOM_MAX_RANK) &&
      loom_shape_num_elements(&plan.final_shape) > 0) {
    bool done = false;
    LOOM_RETURN_IF_ERROR(fold_box(ctx, inputs[0], plan.begin, plan.sizes,
                                  plan.steps, &plan.final_shape, &folded,
                                  &done));
    if (done) return loom_ok_status();
    in = &folded;
  }
  return take_box(ctx, inputs[0], in, plan.begin, plan.sizes, plan.steps,
                  &plan.final_shape);
}

static void strided_slice_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  loom__array_run(ctx, strided_slice_run);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "Slice",
     .inputs = {"input: T", "begin: Index", "size: Index"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Index: {int32, int64}"},
     .shape_fn = slice_shape_fn},
    {.name = "StridedSlice",
     .inputs = {"input: T", "begin: Index", "end: Index", "strides: Index"},
     .outputs = {"output: T"},
     .attrs = {"T: type", "Index: {int16, int32, int64}", "begin_mask: int = 0",
               "end_mask: int = 0", "ellipsis_mask: int = 0",
               "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"},
     .shape_fn = strided_slice_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Slice",
     .compute = slice_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"begin", "size"}},
    {.op_name = "StridedSlice",
     .compute = strided_slice_compute,
     .any_rank = true,
     .type_attr = "T",
     .types = {LOOM_ARRAY_ALL_TYPES},
     .host_memory = {"begin", "end", "strides"}},
};

loom_status_t loom__register_array_slice_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
