// Sum, Mean, Prod, Max, Min, All, Any, with TensorFlow's signatures, shape
// functions, semantics and messages (ArgMax and ArgMin, on the same plan,
// are in reduction_arg.c).
//
// The driver never transposes its input. It drops size-1 dims and merges
// neighbouring dims that are both reduced or both kept, leaving runs that
// alternate between kept and reduced (as TensorFlow's ReductionHelper
// does). If the innermost run is reduced, each output reduces contiguous
// rows (loops->rows); if it is kept, whole rows of outputs fold together
// (loops->columns). The remaining outer runs are walked with strides, so
// axes [0, 2] of a rank-3 tensor read it once, in order. Work is cut into
// units of (output row, block of outputs, part of the reduced elements)
// that run on the thread pool; how it is cut depends only on the shape,
// and parts are merged in order, so results do not depend on the number
// of threads.

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/reduction.h"
#include "kernels/reduction_plan.h"
#include "kernels/shape_fns.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Loop tables
//===----------------------------------------------------------------------===//

const loom__reduce_loops_t* loom__reduce_loops(loom__reduce_op_t op,
                                               loom_dtype_t dtype) {
  static const loom__reduce_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__reduce_loops_baseline, &loom__reduce_loops_avx2,
      &loom__reduce_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_REDUCE_OPS) return NULL;
  const loom__reduce_loops_t* loops = &(*kTables[loom__isa_level()])[op][slot];
  return loops->acc_size ? loops : NULL;
}

const loom__arg_loops_t* loom__arg_loops(loom__arg_op_t op,
                                         loom_dtype_t dtype) {
  static const loom__arg_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__arg_loops_baseline, &loom__arg_loops_avx2,
      &loom__arg_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_ARG_OPS) return NULL;
  const loom__arg_loops_t* loops = &(*kTables[loom__isa_level()])[op][slot];
  return loops->value_size ? loops : NULL;
}

//===----------------------------------------------------------------------===//
// Axes and shapes
//===----------------------------------------------------------------------===//

// Element i of an int16, int32 or int64 index tensor; false for another
// dtype.
bool loom__reduce_read_index(const loom_tensor_t* indices, int64_t i,
                             int64_t* out_value) {
  const void* data = loom_tensor_data(indices);
  switch (loom_tensor_dtype(indices)) {
    case LOOM_DTYPE_INT32:
      *out_value = ((const int32_t*)data)[i];
      return true;
    case LOOM_DTYPE_INT64:
      *out_value = ((const int64_t*)data)[i];
      return true;
    case LOOM_DTYPE_INT16:
      *out_value = ((const int16_t*)data)[i];
      return true;
    default:
      return false;
  }
}

// Marks reduced[d] for every axis in `indices` (scalar or vector; negative
// axes count from the end), with TensorFlow's messages for a bad or
// repeated axis.
static loom_status_t reduction_axes(const loom_tensor_t* indices, int32_t rank,
                                    bool* reduced) {
  for (int32_t d = 0; d < rank; ++d) reduced[d] = false;
  const loom_shape_t* shape = loom_tensor_shape(indices);
  if (shape->rank > 1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "reduction_indices must be a scalar or a vector, got rank %d",
        (int)shape->rank);
  }
  int64_t count = loom_shape_num_elements(shape);
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis;
    if (!loom__reduce_read_index(indices, i, &axis)) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "reduction_indices must be int32 or int64, got %s",
          loom_dtype_name(loom_tensor_dtype(indices)));
    }
    if (axis < -(int64_t)rank || axis >= rank) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Invalid reduction dimension (%lld for input with %d dimension(s)",
          (long long)axis, (int)rank);
    }
    int64_t d = axis < 0 ? axis + rank : axis;
    if (reduced[d]) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Invalid reduction arguments: Axes contains duplicate dimension: "
          "%lld",
          (long long)d);
    }
    reduced[d] = true;
  }
  return loom_ok_status();
}

// The output shape of reducing `input` over `reduced`; above LOOM_MAX_RANK
// its dims are interned (which may fail: RESOURCE_EXHAUSTED).
static loom_status_t reduced_shape(const loom_shape_t* input,
                                   const bool* reduced, bool keep_dims,
                                   loom_shape_t* out_shape) {
  if (LOOM_LIKELY(input->rank <= LOOM_MAX_RANK)) {
    loom_shape_t out = loom_shape_scalar();
    for (int32_t d = 0; d < input->rank; ++d) {
      if (!reduced[d]) {
        out.dims[out.rank++] = input->dims[d];
      } else if (keep_dims) {
        out.dims[out.rank++] = 1;
      }
    }
    *out_shape = out;
    return loom_ok_status();
  }
  const int64_t* in = loom_shape_dims(input);
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < input->rank; ++d) {
    if (!reduced[d]) {
      dims[rank++] = in[d];
    } else if (keep_dims) {
      dims[rank++] = 1;
    }
  }
  return loom_shape_initialize_large(out_shape, dims, rank);
}

static bool keep_dims_attr(const loom_op_attrs_t* attrs) {
  bool keep_dims = false;
  loom_status_t status = loom_op_attrs_get_bool(attrs, "keep_dims", &keep_dims);
  if (status) {
    loom_status_free(status);
    return false;
  }
  return keep_dims;
}

// TensorFlow's ReductionShape: exact when the axes are known now; else the
// rank survives keep_dims, and nothing else is known.
static loom_status_t reduction_shape_fn(loom_shape_inference_context_t* context,
                                        void* user_data) {
  (void)user_data;
  loom_shape_t input, indices_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, 1, &indices_shape));
  LOOM_RETURN_IF_ERROR(
      loom_shape_with_rank_at_most(&indices_shape, 1, &indices_shape));
  bool keep_dims = keep_dims_attr(loom_shape_inference_context_attrs(context));
  const loom_tensor_t* indices =
      loom_shape_inference_context_input_tensor(context, 1);
  loom_shape_t out = loom_shape_unknown();
  if (input.rank >= 0 && indices) {
    bool reduced[LOOM_MAX_SHAPE_RANK];
    LOOM_RETURN_IF_ERROR(reduction_axes(indices, input.rank, reduced));
    LOOM_RETURN_IF_ERROR(reduced_shape(&input, reduced, keep_dims, &out));
  } else if (input.rank >= 0 && keep_dims) {
    int64_t dims[LOOM_MAX_SHAPE_RANK];
    for (int32_t d = 0; d < input.rank; ++d) dims[d] = LOOM_UNKNOWN_DIM;
    LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&out, dims, input.rank));
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

//===----------------------------------------------------------------------===//
// The plan: a reduction as steps over contiguous rows or columns
//===----------------------------------------------------------------------===//

// The element count of a kernel's output shape; past int64 it is an error
// naming the op and the dims.
loom_status_t loom__reduce_output_count(loom_kernel_context_t* ctx,
                                        const int64_t* dims, int32_t rank,
                                        int64_t* out) {
  if (loom__size_product(dims, rank, out)) return loom_ok_status();
  char text[160];
  return loom__size_overflow_error(
      loom_kernel_context_op(ctx)->name, "output shape", "%s",
      loom__format_int64s(dims, rank, text, sizeof(text)));
}

// Builds the plan of reducing `shape` over the axes marked in `reduced`.
// *planned is false when nothing is reduced (every reduced dim has size 1:
// plan->reduced == 1) or the input is empty: the caller copies or fills
// instead. plan->outputs is the output count, an error (naming the op)
// when it overflows int64. When the input is empty, the reduced dims'
// product may pass int64 ([2^62, 8, 0] over axes 0 and 1): it is never
// used, and the plan's sizes are computed only for a non-empty input,
// whose count bounds them all.
static loom_status_t plan_init(loom_kernel_context_t* ctx,
                               loom__reduce_plan_t* plan,
                               const loom_shape_t* shape, const bool* reduced,
                               bool* planned) {
  int64_t kept_dims[LOOM_MAX_RANK], reduced_dims[LOOM_MAX_RANK];
  int32_t kept_count = 0, reduced_count = 0;
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (reduced[d]) {
      reduced_dims[reduced_count++] = shape->dims[d];
    } else {
      kept_dims[kept_count++] = shape->dims[d];
    }
  }
  *planned = false;
  LOOM_RETURN_IF_ERROR(
      loom__reduce_output_count(ctx, kept_dims, kept_count, &plan->outputs));
  if (!loom__size_product(reduced_dims, reduced_count, &plan->reduced)) {
    plan->reduced = 0;  // only with plan->outputs == 0: nothing to compute
  }
  if (plan->reduced <= 1 || plan->outputs == 0) return loom_ok_status();
  *planned = true;
  int64_t dims[LOOM_MAX_RANK];
  bool flags[LOOM_MAX_RANK];
  int32_t runs = 0;
  for (int32_t d = 0; d < shape->rank; ++d) {
    int64_t dim = shape->dims[d];
    if (dim == 1) continue;
    if (runs > 0 && flags[runs - 1] == reduced[d]) {
      dims[runs - 1] *= dim;  // below the input's count
    } else {
      dims[runs] = dim;
      flags[runs] = reduced[d];
      runs++;
    }
  }
  int64_t strides[LOOM_MAX_RANK];
  int64_t stride = 1;
  for (int32_t i = runs - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  // The innermost run, and (if any) the run next to it, are walked by the
  // loops; the others by the walks.
  int32_t last = runs - 1;
  plan->inner_reduced = flags[last];
  plan->rows_walk.count = 0;
  plan->outer_walk.count = 0;
  if (plan->inner_reduced) {
    plan->extent = dims[last];
    plan->width = last >= 1 ? dims[last - 1] : 1;
    plan->row_stride = dims[last];
  } else {
    plan->width = dims[last];
    plan->extent = dims[last - 1];  // a reduced run exists
    plan->row_stride = dims[last];
  }
  for (int32_t i = 0; i < last - 1; ++i) {
    loom__reduce_walk_t* walk = flags[i] ? &plan->outer_walk : &plan->rows_walk;
    walk->dims[walk->count] = dims[i];
    walk->strides[walk->count] = strides[i];
    walk->count++;
  }
  plan->out_rows = 1;
  for (int32_t i = 0; i < plan->rows_walk.count; ++i) {
    plan->out_rows *= plan->rows_walk.dims[i];
  }
  plan->segments = 1;
  for (int32_t i = 0; i < plan->outer_walk.count; ++i) {
    plan->segments *= plan->outer_walk.dims[i];
  }
  return loom_ok_status();
}

// `shape` (above LOOM_MAX_RANK) reduced over `reduced` as at most
// LOOM_MAX_RANK dims, as TensorFlow's ReductionHelper simplifies it: size-1
// dims dropped, neighbours both reduced or both kept merged. The plan walks
// the folded shape, which has the same elements in the same order. When
// more than LOOM_MAX_RANK runs alternate, the folded shape is [kept,
// reduced] and *permute is set: the caller walks the input transposed to
// that order (permute_input), so every reduction sees the same elements
// per output, in the order they come within it.
static loom_status_t fold_reduction(loom_kernel_context_t* ctx,
                                    const loom_shape_t* shape,
                                    const bool* reduced, loom_shape_t* folded,
                                    bool* folded_reduced, bool* permute) {
  const int64_t* in = loom_shape_dims(shape);
  int64_t dims[LOOM_MAX_RANK];
  int32_t runs = 0;
  *permute = false;
  if (loom_shape_num_elements(shape) == 0) {
    // Empty: only the counts matter (plan_init's rules for them).
    int64_t kept[LOOM_MAX_SHAPE_RANK], lost[LOOM_MAX_SHAPE_RANK];
    int32_t num_kept = 0, num_lost = 0;
    for (int32_t d = 0; d < shape->rank; ++d) {
      if (reduced[d]) {
        lost[num_lost++] = in[d];
      } else {
        kept[num_kept++] = in[d];
      }
    }
    LOOM_RETURN_IF_ERROR(
        loom__reduce_output_count(ctx, kept, num_kept, &dims[0]));
    if (!loom__size_product(lost, num_lost, &dims[1])) dims[1] = 0;
    folded_reduced[0] = false;
    folded_reduced[1] = true;
    return loom_shape_initialize(folded, dims, 2);
  }
  for (int32_t d = 0; d < shape->rank; ++d) {
    if (in[d] == 1) continue;
    if (runs > 0 && folded_reduced[runs - 1] == reduced[d]) {
      dims[runs - 1] *= in[d];  // below the input's count
      continue;
    }
    if (runs == LOOM_MAX_RANK) {
      // Kept, then reduced: both products are below the input's count.
      dims[0] = dims[1] = 1;
      for (int32_t k = 0; k < shape->rank; ++k) dims[reduced[k]] *= in[k];
      folded_reduced[0] = false;
      folded_reduced[1] = true;
      *permute = true;
      return loom_shape_initialize(folded, dims, 2);
    }
    dims[runs] = in[d];
    folded_reduced[runs] = reduced[d];
    runs++;
  }
  return loom_shape_initialize(folded, dims, runs);
}

// The non-empty input `x` with its kept dims first and its reduced ones
// after, each in order (fold_reduction's *permute), copied to a fresh
// buffer (*out, freed with `allocator`). Out of line: its plan is large.
static __attribute__((noinline)) loom_status_t permute_input(
    loom_kernel_context_t* ctx, const loom_tensor_t* x, const bool* reduced,
    loom_allocator_t allocator, char** out) {
  const loom_shape_t* shape = loom_tensor_shape(x);
  const int64_t* in = loom_shape_dims(shape);
  loom_dtype_t dtype = loom_tensor_dtype(x);
  // The input holds elements: its strides fit.
  int64_t strides[LOOM_MAX_SHAPE_RANK];
  int64_t stride = 1;
  for (int32_t d = shape->rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= in[d];
  }
  loom__array_copy_any_t* copy = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_default(),
                                             sizeof(*copy), (void**)&copy));
  copy->rank = 0;
  for (int32_t pass = 0; pass < 2; ++pass) {
    for (int32_t d = 0; d < shape->rank; ++d) {
      if (reduced[d] != (pass == 1)) continue;
      copy->dims[copy->rank] = in[d];
      copy->src_strides[copy->rank] = strides[d];
      copy->rank++;
    }
  }
  stride = 1;
  for (int32_t i = copy->rank - 1; i >= 0; --i) {
    copy->dst_strides[i] = stride;
    stride *= copy->dims[i];
  }
  loom_status_t status = loom_allocator_malloc_aligned(
      allocator, loom_tensor_byte_size(x), 64, (void**)out);
  if (!status) {
    status = loom__array_copy_any(loom__array_pool(ctx), dtype,
                                  loom_tensor_data(x), *out, copy, NULL);
    if (status) {
      loom_allocator_free(allocator, *out);
      *out = NULL;
    }
  }
  loom_allocator_free(loom_allocator_default(), copy);
  return status;
}

// Cuts the work into at least kMinUnits units when it is large: first
// narrower blocks of outputs (each still worth kPartElements, and for
// columns at least kMinColumns wide so the loops stay vectorised), then
// parts of the reduced elements (each contiguous run at least
// kMinPartLength long). Depends on the shape only, never on the threads.
loom__reduce_split_t loom__reduce_plan_split(const loom__reduce_plan_t* plan) {
  enum { kMinColumns = 64, kMinPartLength = 1024 };
  loom__reduce_split_t split;
  int64_t width = plan->width;
  int64_t total = plan->outputs * plan->reduced;
  int64_t widest = plan->inner_reduced ? kTile : kWideTile;
  split.tile = width < widest ? width : widest;
  split.parts = 1;
  // Narrower blocks only when each output's elements are one run: with
  // several segments a narrow block would read short pieces far apart, so
  // those reductions are cut by segments (parts) instead.
  if (total >= kMinParallelElements && plan->segments == 1 &&
      plan->out_rows * ((width + split.tile - 1) / split.tile) < kMinUnits) {
    int64_t per_row = (kMinUnits + plan->out_rows - 1) / plan->out_rows;
    int64_t tile = (width + per_row - 1) / per_row;
    int64_t least = plan->inner_reduced
                        ? (kPartElements + plan->reduced - 1) / plan->reduced
                        : kMinColumns;
    if (tile < least) tile = least;
    if (tile < split.tile) split.tile = tile;
  }
  split.chunks = (width + split.tile - 1) / split.tile;
  int64_t units = plan->out_rows * split.chunks;
  if (units < kMinUnits && total >= kMinParallelElements) {
    int64_t parts = total / (units * kPartElements);
    if (parts > kMaxParts) parts = kMaxParts;
    int64_t work = plan->segments * plan->extent;
    int64_t most = plan->inner_reduced && plan->segments == 1
                       ? work / kMinPartLength
                       : work;
    if (parts > most) parts = most;
    if (parts > 1) split.parts = parts;
  }
  split.units = units * split.parts;
  return split;
}

// floor(work * part / parts) for 0 <= part <= parts, without the product
// (work may be any count).
static int64_t share_point(int64_t work, int64_t part, int64_t parts) {
  return work / parts * part + work % parts * part / parts;
}

loom__reduce_unit_t loom__reduce_unit_at(const loom__reduce_plan_t* plan,
                                         const loom__reduce_split_t* split,
                                         int64_t unit) {
  loom__reduce_unit_t u;
  int64_t part = unit % split->parts;
  int64_t rest = unit / split->parts;
  int64_t chunk = rest % split->chunks;
  u.row = rest / split->chunks;
  u.first = chunk * split->tile;
  u.count = plan->width - u.first;
  if (u.count > split->tile) u.count = split->tile;
  int64_t work = plan->segments * plan->extent;
  u.begin = share_point(work, part, split->parts);
  u.end = share_point(work, part + 1, split->parts);
  return u;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

typedef struct reduce_job_t {
  const loom__reduce_plan_t* plan;
  const loom__reduce_loops_t* loops;
  loom__reduce_split_t split;
  const char* x;
  char* out;
  char* partials;  // parts * outputs accumulators, when parts > 1
  size_t in_size;
  size_t acc_size;
  loom_allocator_t allocator;
  _Atomic int failed;  // a block could not allocate its accumulators
} reduce_job_t;

// Adds the unit's reduced range into acc[0, count), which holds the
// identity. Float sums pass each step's result through a cascade of levels
// (each folding kCascadeFan results before passing its sum up), so no chain
// of additions grows long. `acc` has room for kCascadeLevels + 1 tiles:
// the result, the levels above it, and the step's scratch.
static void reduce_unit(const reduce_job_t* job, const loom__reduce_unit_t* u,
                        char* acc) {
  const loom__reduce_plan_t* plan = job->plan;
  const loom__reduce_loops_t* loops = job->loops;
  size_t in_size = job->in_size;
  size_t tile_bytes = (size_t)job->split.tile * job->acc_size;
  char* level[kCascadeLevels];
  int counts[kCascadeLevels] = {0};
  char* step = acc;
  if (loops->cascade) {
    for (int l = 1; l < kCascadeLevels; ++l) {
      level[l] = acc + (size_t)l * tile_bytes;
      loops->init(level[l], u->count);
    }
    step = acc + (size_t)kCascadeLevels * tile_bytes;
  }
  const char* base =
      job->x +
      (size_t)loom__reduce_walk_offset(&plan->rows_walk, u->row) * in_size;
  for (int64_t q = u->begin; q < u->end;) {
    int64_t segment = q / plan->extent;
    int64_t at = q % plan->extent;
    int64_t n = plan->extent - at;
    if (n > u->end - q) n = u->end - q;
    if (loops->cascade && !plan->inner_reduced && n > kCascadeRows) {
      n = kCascadeRows;
    }
    const char* src =
        base +
        (size_t)loom__reduce_walk_offset(&plan->outer_walk, segment) * in_size;
    if (loops->cascade) loops->init(step, u->count);
    if (plan->inner_reduced) {
      loops->rows(src + (size_t)(u->first * plan->row_stride + at) * in_size,
                  plan->row_stride, u->count, n, step);
    } else {
      loops->columns(src + (size_t)(at * plan->row_stride + u->first) * in_size,
                     plan->row_stride, n, u->count, step);
    }
    if (loops->cascade) {
      loops->combine(level[1], step, u->count);
      for (int l = 1; l + 1 < kCascadeLevels && ++counts[l] == kCascadeFan;
           ++l) {
        loops->combine(level[l + 1], level[l], u->count);
        loops->init(level[l], u->count);
        counts[l] = 0;
      }
    }
    q += n;
  }
  if (loops->cascade) {
    for (int l = kCascadeLevels - 1; l >= 1; --l) {
      loops->combine(acc, level[l], u->count);
    }
  }
}

static void reduce_units(void* arg, int64_t begin, int64_t end) {
  reduce_job_t* job = arg;
  const loom__reduce_plan_t* plan = job->plan;
  // The result tile, the cascade's levels and the step's scratch.
  size_t bytes =
      (size_t)(kCascadeLevels + 1) * (size_t)job->split.tile * job->acc_size;
  char* acc = NULL;
  loom_status_t status =
      loom_allocator_malloc_aligned(job->allocator, bytes, 64, (void**)&acc);
  if (status) {
    loom_status_free(status);
    job->failed = 1;
    return;
  }
  for (int64_t unit = begin; unit < end; ++unit) {
    loom__reduce_unit_t u = loom__reduce_unit_at(plan, &job->split, unit);
    job->loops->init(acc, u.count);
    reduce_unit(job, &u, acc);
    int64_t output = u.row * plan->width + u.first;
    if (job->split.parts == 1) {
      job->loops->finish(acc, u.count, plan->reduced,
                         job->out + (size_t)output * job->in_size);
    } else {
      int64_t part = unit % job->split.parts;
      memcpy(job->partials +
                 ((size_t)part * (size_t)plan->outputs + (size_t)output) *
                     job->acc_size,
             acc, (size_t)u.count * job->acc_size);
    }
  }
  loom_allocator_free(job->allocator, acc);
}

loom_status_t loom__reduce_run_parallel(loom_kernel_context_t* ctx,
                                        int64_t units, int64_t elements,
                                        int64_t cost_per_element,
                                        loom_parallel_for_fn_t fn, void* job) {
  if (units <= 1 || elements < kMinParallelElements) {
    fn(job, 0, units);
    return loom_ok_status();
  }
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  int64_t cost = elements / units * cost_per_element;
  if (cost < 1) cost = 1;
  return loom_thread_pool_parallel_for(pool, units, cost, fn, job);
}

// Fills `count` outputs with what reducing nothing gives (Mean: NaN for
// floats, 0 for integers).
static void fill_identity(const loom__reduce_loops_t* loops, int64_t count,
                          char* out, size_t out_size) {
  _Alignas(64) char acc[kTile * sizeof(int64_t)];
  for (int64_t first = 0; first < count; first += kTile) {
    int64_t n = count - first < kTile ? count - first : kTile;
    loops->init(acc, n);
    loops->finish(acc, n, 0, out + (size_t)first * out_size);
  }
}

static void reduce_compute(loom_kernel_context_t* ctx, loom__reduce_op_t op) {
  loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* indices = loom_kernel_context_input(ctx, 1);
  const loom_shape_t* shape = loom_tensor_shape(x);
  loom_dtype_t dtype = loom_tensor_dtype(x);
  bool reduced[LOOM_MAX_SHAPE_RANK];
  loom_status_t status = reduction_axes(indices, shape->rank, reduced);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_shape_t out_shape;
  bool keep_dims = keep_dims_attr(loom_kernel_context_attrs(ctx));
  status = reduced_shape(shape, reduced, keep_dims, &out_shape);
  if (status) FAIL_AND_RETURN(ctx, status);
  // Above LOOM_MAX_RANK the plan walks the folded shape.
  loom_shape_t folded;
  bool folded_reduced[LOOM_MAX_RANK];
  bool permute = false;
  const loom_shape_t* walked = shape;
  const bool* walked_reduced = reduced;
  if (LOOM_UNLIKELY(shape->rank > LOOM_MAX_RANK)) {
    status =
        fold_reduction(ctx, shape, reduced, &folded, folded_reduced, &permute);
    if (status) FAIL_AND_RETURN(ctx, status);
    walked = &folded;
    walked_reduced = folded_reduced;
  }
  const loom__reduce_loops_t* loops = loom__reduce_loops(op, dtype);
  if (!loops) {
    FAIL_AND_RETURN(ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                          "no CPU loop for input dtype %s",
                                          loom_dtype_name(dtype)));
  }
  loom__reduce_plan_t plan;
  bool planned = false;
  status = plan_init(ctx, &plan, walked, walked_reduced, &planned);
  if (status) FAIL_AND_RETURN(ctx, status);
  size_t in_size = loom_dtype_size(dtype);
  loom_tensor_t* out = NULL;
  if (!planned && plan.reduced == 1) {
    // Nothing reduced: the result is the input (reshaped), shared when
    // nobody else holds it.
    int32_t candidate = 0, forwarded = -1;
    status = loom_kernel_context_forward_or_allocate(
        ctx, &candidate, 1, 0, &out_shape, &forwarded, &out);
    if (status) FAIL_AND_RETURN(ctx, status);
    if (forwarded < 0 && loom_tensor_byte_size(x)) {
      memcpy(loom_tensor_data(out), loom_tensor_data(x),
             loom_tensor_byte_size(x));
    }
    return;
  }
  status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out);
  if (status) FAIL_AND_RETURN(ctx, status);
  if (plan.outputs == 0) return;
  if (!planned) {  // an empty input reduced into non-empty outputs
    fill_identity(loops, plan.outputs, loom_tensor_data(out), in_size);
    return;
  }
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  char* permuted = NULL;
  if (LOOM_UNLIKELY(permute)) {
    status = permute_input(ctx, x, reduced, allocator, &permuted);
    if (status) FAIL_AND_RETURN(ctx, status);
  }
  reduce_job_t job = {
      .plan = &plan,
      .loops = loops,
      .split = loom__reduce_plan_split(&plan),
      .x = permuted ? permuted : loom_tensor_data(x),
      .out = loom_tensor_data(out),
      .in_size = in_size,
      .acc_size = loops->acc_size,
      .allocator = allocator,
  };
  if (job.split.parts > 1) {
    int64_t count;
    size_t bytes;
    if (!loom__size_mul(job.split.parts, plan.outputs, &count) ||
        !loom__size_bytes(count, job.acc_size, &bytes)) {
      loom_allocator_free(allocator, permuted);
      FAIL_AND_RETURN(
          ctx, loom__size_overflow_error(
                   loom_kernel_context_op(ctx)->name, "partial sums",
                   "(%lld parts of %lld outputs)", (long long)job.split.parts,
                   (long long)plan.outputs));
    }
    status = loom_allocator_malloc_aligned(allocator, bytes, 64,
                                           (void**)&job.partials);
    if (status) {
      loom_allocator_free(allocator, permuted);
      FAIL_AND_RETURN(ctx, status);
    }
  }
  int64_t elements = loom_tensor_num_elements(x);
  int64_t cost = op == LOOM_REDUCE_PROD ? 2 : 1;
  status = loom__reduce_run_parallel(ctx, job.split.units, elements, cost,
                                     reduce_units, &job);
  if (!status && atomic_load(&job.failed)) {
    status = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory for a reduction's accumulators");
  }
  if (!status && job.split.parts > 1) {
    // Merge the parts in order, then convert.
    size_t part_bytes = (size_t)plan.outputs * job.acc_size;
    for (int64_t p = 1; p < job.split.parts; ++p) {
      loops->combine(job.partials, job.partials + (size_t)p * part_bytes,
                     plan.outputs);
    }
    loops->finish(job.partials, plan.outputs, plan.reduced, job.out);
  }
  loom_allocator_free(allocator, job.partials);
  if (LOOM_UNLIKELY(permuted != NULL)) loom_allocator_free(allocator, permuted);
  if (status) loom_kernel_context_fail(ctx, status);
}

#define REDUCE_COMPUTE(name, op)                                         \
  static void name##_compute(void* kernel, loom_kernel_context_t* ctx) { \
    (void)kernel;                                                        \
    reduce_compute(ctx, op);                                             \
  }

REDUCE_COMPUTE(sum, LOOM_REDUCE_SUM)
REDUCE_COMPUTE(mean, LOOM_REDUCE_MEAN)
REDUCE_COMPUTE(prod, LOOM_REDUCE_PROD)
REDUCE_COMPUTE(max, LOOM_REDUCE_MAX)
REDUCE_COMPUTE(min, LOOM_REDUCE_MIN)
REDUCE_COMPUTE(all, LOOM_REDUCE_ALL)
REDUCE_COMPUTE(any, LOOM_REDUCE_ANY)

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define REDUCTION_OP(op_name, types)                                    \
  {                                                                     \
    .name = op_name, .inputs = {"input: T", "reduction_indices: Tidx"}, \
    .outputs = {"output: T"},                                           \
    .attrs = {"keep_dims: bool = false", "T: " types,                   \
              "Tidx: {int32, int64} = DT_INT32"},                       \
    .shape_fn = reduction_shape_fn                                      \
  }

#define BOOL_REDUCTION_OP(op_name)                                           \
  {                                                                          \
    .name = op_name, .inputs = {"input: bool", "reduction_indices: Tidx"},   \
    .outputs = {"output: bool"},                                             \
    .attrs = {"keep_dims: bool = false", "Tidx: {int32, int64} = DT_INT32"}, \
    .shape_fn = reduction_shape_fn                                           \
  }

static const loom__builtin_op_t kOps[] = {
    REDUCTION_OP("Sum", "numbertype"),
    REDUCTION_OP("Mean", "numbertype"),
    REDUCTION_OP("Prod", "numbertype"),
    REDUCTION_OP("Max", "{realnumbertype, quantizedtype}"),
    REDUCTION_OP("Min", "{realnumbertype, quantizedtype}"),
    BOOL_REDUCTION_OP("All"),
    BOOL_REDUCTION_OP("Any"),
};

#define REAL_TYPES                                                           \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT8, \
      LOOM_DTYPE_INT16, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32,                \
      LOOM_DTYPE_UINT64

#define REDUCTION_KERNEL(op, fn)                                           \
  {                                                                        \
    .op_name = op, .compute = fn, .type_attr = "T", .types = {REAL_TYPES}, \
    .any_rank = true, .host_memory = {                                     \
      "reduction_indices"                                                  \
    }                                                                      \
  }

static const loom__builtin_kernel_t kKernels[] = {
    REDUCTION_KERNEL("Sum", sum_compute),
    REDUCTION_KERNEL("Mean", mean_compute),
    REDUCTION_KERNEL("Prod", prod_compute),
    REDUCTION_KERNEL("Max", max_compute),
    REDUCTION_KERNEL("Min", min_compute),
    {.op_name = "All",
     .compute = all_compute,
     .any_rank = true,
     .host_memory = {"reduction_indices"}},
    {.op_name = "Any",
     .compute = any_compute,
     .any_rank = true,
     .host_memory = {"reduction_indices"}},
};

loom_status_t loom__register_reduction_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  LOOM_RETURN_IF_ERROR(loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0]))));
  return loom__register_reduction_arg_ops();
}
