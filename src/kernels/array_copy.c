// The copy engines of the data-movement ops: strided N-d copies, batches of
// 2-D blocks and fills, for elements of any fixed size and for strings,
// split over the thread pool when the work is worth it.

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/half.h"
#include "kernels/array_internal.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

size_t loom__array_element_size(loom_dtype_t dtype) {
  return dtype == LOOM_DTYPE_STRING ? sizeof(loom_tstring_t)
                                    : loom_dtype_size(dtype);
}

int64_t loom__array_index_at(const loom_tensor_t* tensor, int64_t index) {
  const void* data = loom_tensor_data(tensor);
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR) index = 0;
  switch (loom_tensor_dtype(tensor)) {
    case LOOM_DTYPE_INT32:
      return ((const int32_t*)data)[index];
    case LOOM_DTYPE_INT64:
      return ((const int64_t*)data)[index];
    case LOOM_DTYPE_INT16:
      return ((const int16_t*)data)[index];
    case LOOM_DTYPE_INT8:
      return ((const int8_t*)data)[index];
    case LOOM_DTYPE_UINT8:
      return ((const uint8_t*)data)[index];
    case LOOM_DTYPE_UINT16:
      return ((const uint16_t*)data)[index];
    case LOOM_DTYPE_UINT32:
      return ((const uint32_t*)data)[index];
    case LOOM_DTYPE_UINT64:
      return (int64_t)((const uint64_t*)data)[index];
    default:
      return 0;
  }
}

double loom__array_real_at(const loom_tensor_t* tensor, int64_t index) {
  const void* data = loom_tensor_data(tensor);
  if (loom_tensor_kind(tensor) == LOOM_TENSOR_SCALAR) index = 0;
  switch (loom_tensor_dtype(tensor)) {
    case LOOM_DTYPE_FLOAT:
      return ((const float*)data)[index];
    case LOOM_DTYPE_DOUBLE:
      return ((const double*)data)[index];
    case LOOM_DTYPE_HALF:
      return loom__half_to_float(((const uint16_t*)data)[index]);
    case LOOM_DTYPE_BFLOAT16:
      return loom__bfloat16_to_float(((const uint16_t*)data)[index]);
    case LOOM_DTYPE_BOOL:
      return ((const bool*)data)[index] ? 1.0 : 0.0;
    case LOOM_DTYPE_UINT64:
      return (double)((const uint64_t*)data)[index];
    default:
      return (double)loom__array_index_at(tensor, index);
  }
}

loom_status_t loom__array_invalid(const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s", text);
}

int64_t loom__array_dims_product(const loom_shape_t* shape, int32_t begin,
                                 int32_t end) {
  int64_t product = 0;
  if (begin >= end) return 1;
  return loom__size_product(loom_shape_dims(shape) + begin, end - begin,
                            &product)
             ? product
             : -1;
}

bool loom__array_strides(const loom_shape_t* shape, int64_t* strides) {
  const int64_t* dims = loom_shape_dims(shape);
  int64_t stride = 1;
  bool ok = true;
  for (int32_t i = shape->rank - 1; i >= 0; --i) {
    strides[i] = stride;
    if (ok && !loom__size_mul(stride, dims[i], &stride)) ok = false;
  }
  return ok;
}

loom_thread_pool_t* loom__array_pool(loom_kernel_context_t* ctx) {
  loom_host_context_t* host = loom_kernel_context_host(ctx);
  return host ? loom_host_context_thread_pool(host) : NULL;
}

int64_t loom__array_attr_int(const loom_op_attrs_t* attrs, const char* name,
                             int64_t fallback) {
  int64_t value = fallback;
  loom_status_t status = loom_op_attrs_get_i64(attrs, name, &value);
  if (status) {
    loom_status_free(status);
    return fallback;
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Rows
//===----------------------------------------------------------------------===//

int loom__array_size_slot(size_t size) {
  switch (size) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 4:
      return 2;
    case 8:
      return 3;
    case 16:
      return 4;
    default:
      return -1;
  }
}

static const loom__array_row_table_t* row_table(void) {
  static const loom__array_row_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__array_rows_baseline, &loom__array_rows_avx2,
      &loom__array_rows_avx512};
  return kTables[loom__isa_level()];
}

bool loom__array_copy_row(loom_dtype_t dtype, const void* src,
                          int64_t src_stride, void* dst, int64_t dst_stride,
                          int64_t n) {
  if (n <= 0) return true;
  if (dtype == LOOM_DTYPE_STRING) {
    const loom_tstring_t* s = src;
    loom_tstring_t* d = dst;
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
      loom_status_t status =
          loom_tstring_assign(&d[i * dst_stride], &s[i * src_stride]);
      if (status) {
        loom_status_free(status);
        ok = false;
      }
    }
    return ok;
  }
  size_t size = loom_dtype_size(dtype);
  if (src_stride == 1 && dst_stride == 1) {
    memcpy(dst, src, (size_t)n * size);
    return true;
  }
  int slot = loom__array_size_slot(size);
  if (slot >= 0) {
    row_table()->rows[slot](src, src_stride, dst, dst_stride, n);
    return true;
  }
  const char* s = src;
  char* d = dst;
  for (int64_t i = 0; i < n; ++i) {
    memcpy(d + (ptrdiff_t)(i * dst_stride) * (ptrdiff_t)size,
           s + (ptrdiff_t)(i * src_stride) * (ptrdiff_t)size, size);
  }
  return true;
}

// Rough cost of moving `elements` elements in one row, in the thread
// pool's units (about a nanosecond each).
static int64_t row_cost(loom_dtype_t dtype, int64_t elements, bool contiguous) {
  if (dtype == LOOM_DTYPE_STRING) return 20 * elements + 20;
  if (contiguous) {
    return (elements * (int64_t)loom_dtype_size(dtype)) / 8 + 20;
  }
  return 2 * elements + 20;
}

// Below this many bytes, work runs on the calling thread; parallel work
// comes in pieces of at least kPieceBytes.
enum { kInlineBytes = 64 * 1024, kPieceBytes = 128 * 1024 };

// Bytes per piece of a copy of `total` bytes: a few pieces per thread that
// can take one, as long as possible — glibc's memcpy, and the first touch
// of fresh output pages, run faster in long calls.
static int64_t piece_bytes(loom_thread_pool_t* pool, int64_t total) {
  int64_t threads = pool ? loom_thread_pool_num_threads(pool) + 1 : 1;
  if (threads == 1) return total > kPieceBytes ? total : kPieceBytes;
  int64_t piece = total / (4 * threads);
  return piece > kPieceBytes ? piece : kPieceBytes;
}

//===----------------------------------------------------------------------===//
// Strided N-d copies
//===----------------------------------------------------------------------===//

bool loom__array_copy_collapse(const loom__array_copy_t* in,
                               loom__array_copy_t* out) {
  out->rank = 0;
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t dim = in->dims[i];
    if (dim == 0) return false;
    if (dim == 1) continue;
    int32_t last = out->rank - 1;
    if (last >= 0 && out->src_strides[last] == in->src_strides[i] * dim &&
        out->dst_strides[last] == in->dst_strides[i] * dim) {
      out->dims[last] *= dim;
      out->src_strides[last] = in->src_strides[i];
      out->dst_strides[last] = in->dst_strides[i];
      continue;
    }
    out->dims[out->rank] = dim;
    out->src_strides[out->rank] = in->src_strides[i];
    out->dst_strides[out->rank] = in->dst_strides[i];
    out->rank++;
  }
  if (out->rank == 0) {
    out->rank = 1;
    out->dims[0] = 1;
    out->src_strides[0] = 1;
    out->dst_strides[0] = 1;
  }
  return true;
}

typedef struct copy_job_t {
  loom__array_copy_t plan;
  loom_dtype_t dtype;
  size_t size;
  const char* src;
  char* dst;
  int64_t pieces;      // units per row
  int64_t piece_size;  // elements per unit (the last one may be shorter)
  _Atomic bool failed;
} copy_job_t;

static void run_copy_units(void* arg, int64_t begin, int64_t end) {
  copy_job_t* job = arg;
  const loom__array_copy_t* plan = &job->plan;
  int32_t outer = plan->rank - 1;
  int64_t inner = plan->dims[outer];
  int64_t ss = plan->src_strides[outer], ds = plan->dst_strides[outer];
  ptrdiff_t size = (ptrdiff_t)job->size;
  bool ok = true;
  if (job->pieces > 1) {
    for (int64_t unit = begin; unit < end; ++unit) {
      int64_t row = unit / job->pieces;
      int64_t start = (unit % job->pieces) * job->piece_size;
      int64_t n = inner - start;
      if (n > job->piece_size) n = job->piece_size;
      int64_t so = start * ss, dO = start * ds;
      for (int32_t k = outer - 1; k >= 0; --k) {
        int64_t i = row % plan->dims[k];
        row /= plan->dims[k];
        so += i * plan->src_strides[k];
        dO += i * plan->dst_strides[k];
      }
      ok &= loom__array_copy_row(job->dtype, job->src + so * size, ss,
                                 job->dst + dO * size, ds, n);
    }
  } else {
    int64_t index[kArrayMaxCopyRank];
    int64_t so = 0, dO = 0, row = begin;
    for (int32_t k = outer - 1; k >= 0; --k) {
      index[k] = row % plan->dims[k];
      row /= plan->dims[k];
      so += index[k] * plan->src_strides[k];
      dO += index[k] * plan->dst_strides[k];
    }
    // Contiguous rows of plain elements (a broadcast's copies of a short
    // row, say) go straight to memcpy.
    bool flat = ss == 1 && ds == 1 && job->dtype != LOOM_DTYPE_STRING;
    size_t row_bytes = (size_t)inner * job->size;
    for (int64_t unit = begin; unit < end; ++unit) {
      if (flat) {
        memcpy(job->dst + dO * size, job->src + so * size, row_bytes);
      } else {
        ok &= loom__array_copy_row(job->dtype, job->src + so * size, ss,
                                   job->dst + dO * size, ds, inner);
      }
      for (int32_t k = outer - 1; k >= 0; --k) {
        so += plan->src_strides[k];
        dO += plan->dst_strides[k];
        if (++index[k] < plan->dims[k]) break;
        so -= plan->src_strides[k] * plan->dims[k];
        dO -= plan->dst_strides[k] * plan->dims[k];
        index[k] = 0;
      }
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

static loom_status_t string_failure(void) {
  return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                          "out of memory copying string elements");
}

loom_status_t loom__array_copy(loom_thread_pool_t* pool, loom_dtype_t dtype,
                               const void* src, void* dst,
                               const loom__array_copy_t* copy) {
  copy_job_t job;
  if (!loom__array_copy_collapse(copy, &job.plan)) return loom_ok_status();
  job.dtype = dtype;
  job.size = loom__array_element_size(dtype);
  job.src = src;
  job.dst = dst;
  atomic_init(&job.failed, false);
  const loom__array_copy_t* plan = &job.plan;
  int64_t inner = plan->dims[plan->rank - 1];
  // The plan walks an allocated output, so its sizes fit; checked all the
  // same, as a plan from bad arithmetic upstream must not run.
  int64_t rows, total_bytes;
  size_t bytes;
  if (!loom__size_product(plan->dims, plan->rank - 1, &rows) ||
      !loom__size_mul(rows, inner, &total_bytes) ||
      !loom__size_bytes(total_bytes, job.size, &bytes)) {
    char text[256];
    return loom__size_overflow_error(
        "array copy", "plan of dims", "%s",
        loom__format_int64s(plan->dims, plan->rank, text, sizeof(text)));
  }
  total_bytes = (int64_t)bytes;
  job.pieces = 1;
  job.piece_size = inner;
  int64_t piece_elements = piece_bytes(pool, total_bytes) / (int64_t)job.size;
  if (inner > 2 * piece_elements) {
    job.pieces = (inner + piece_elements - 1) / piece_elements;
    job.piece_size = (inner + job.pieces - 1) / job.pieces;
  }
  int64_t units = rows * job.pieces;
  if (!pool || units == 1 || total_bytes < kInlineBytes) {
    run_copy_units(&job, 0, units);
  } else {
    bool contiguous = plan->src_strides[plan->rank - 1] == 1 &&
                      plan->dst_strides[plan->rank - 1] == 1;
    LOOM_RETURN_IF_ERROR(loom_thread_pool_parallel_for(
        pool, units, row_cost(dtype, job.piece_size, contiguous),
        run_copy_units, &job));
  }
  return atomic_load(&job.failed) ? string_failure() : loom_ok_status();
}

bool loom__array_copy_any_collapse(loom__array_copy_any_t* copy) {
  for (int32_t i = 0; i < copy->rank; ++i) {
    if (copy->dims[i] == 0) return false;
  }
  // In place: dim i is read before anything is written at i or beyond.
  int32_t rank = 0;
  for (int32_t i = 0; i < copy->rank; ++i) {
    int64_t dim = copy->dims[i];
    int64_t ss = copy->src_strides[i], ds = copy->dst_strides[i];
    if (dim == 1) continue;
    int32_t last = rank - 1;
    if (last >= 0 && copy->src_strides[last] == ss * dim &&
        copy->dst_strides[last] == ds * dim) {
      copy->dims[last] *= dim;
      copy->src_strides[last] = ss;
      copy->dst_strides[last] = ds;
      continue;
    }
    copy->dims[rank] = dim;
    copy->src_strides[rank] = ss;
    copy->dst_strides[rank] = ds;
    rank++;
  }
  if (rank == 0) {
    copy->dims[0] = 1;
    copy->src_strides[0] = 1;
    copy->dst_strides[0] = 1;
    rank = 1;
  }
  copy->rank = rank;
  return true;
}

loom_status_t loom__array_copy_any(loom_thread_pool_t* pool, loom_dtype_t dtype,
                                   const void* src, void* dst,
                                   loom__array_copy_any_t* copy,
                                   loom__array_copy_fn_t run) {
  if (!run) run = loom__array_copy;
  if (!loom__array_copy_any_collapse(copy)) return loom_ok_status();
  int32_t outer =
      copy->rank > kArrayMaxCopyRank ? copy->rank - kArrayMaxCopyRank : 0;
  loom__array_copy_t inner;
  inner.rank = copy->rank - outer;
  for (int32_t i = 0; i < inner.rank; ++i) {
    inner.dims[i] = copy->dims[outer + i];
    inner.src_strides[i] = copy->src_strides[outer + i];
    inner.dst_strides[i] = copy->dst_strides[outer + i];
  }
  if (outer == 0) return run(pool, dtype, src, dst, &inner);
  // The outer dims as an odometer; the copy walks an allocated output, so
  // every offset fits.
  ptrdiff_t size = (ptrdiff_t)loom__array_element_size(dtype);
  int64_t index[kArrayMaxAnyCopyRank] = {0};
  int64_t so = 0, dO = 0;
  for (;;) {
    LOOM_RETURN_IF_ERROR(run(pool, dtype,
                             (const char*)src + (ptrdiff_t)so * size,
                             (char*)dst + (ptrdiff_t)dO * size, &inner));
    int32_t k = outer - 1;
    for (; k >= 0; --k) {
      so += copy->src_strides[k];
      dO += copy->dst_strides[k];
      if (++index[k] < copy->dims[k]) break;
      so -= copy->src_strides[k] * copy->dims[k];
      dO -= copy->dst_strides[k] * copy->dims[k];
      index[k] = 0;
    }
    if (k < 0) return loom_ok_status();
  }
}

//===----------------------------------------------------------------------===//
// Batches of 2-D blocks
//===----------------------------------------------------------------------===//

typedef struct blocks_job_t {
  const loom__array_block_t* blocks;
  int64_t count;
  loom_dtype_t dtype;
  size_t size;
  // Per block: units before it (prefix[count] = all units), rows per unit
  // and pieces per row (a unit is either rows of a block or a piece of one
  // long row).
  int64_t* prefix;
  int64_t* rows_per_unit;
  int64_t* pieces;
  _Atomic bool failed;
} blocks_job_t;

static void run_block_units(void* arg, int64_t begin, int64_t end) {
  blocks_job_t* job = arg;
  bool ok = true;
  // The block of `begin`, by binary search; later units follow in order.
  int64_t lo = 0, hi = job->count - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (job->prefix[mid] <= begin) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  int64_t b = lo;
  ptrdiff_t size = (ptrdiff_t)job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    while (unit >= job->prefix[b + 1]) b++;
    const loom__array_block_t* block = &job->blocks[b];
    int64_t local = unit - job->prefix[b];
    const char* src = block->src;
    char* dst = block->dst;
    if (job->pieces[b] > 1) {
      int64_t row = local / job->pieces[b];
      int64_t piece = local % job->pieces[b];
      int64_t piece_size =
          (block->row_elements + job->pieces[b] - 1) / job->pieces[b];
      int64_t start = piece * piece_size;
      int64_t n = block->row_elements - start;
      if (n > piece_size) n = piece_size;
      ok &= loom__array_copy_row(
          job->dtype, src + (row * block->src_stride + start) * size, 1,
          dst + (row * block->dst_stride + start) * size, 1, n);
      continue;
    }
    int64_t first = local * job->rows_per_unit[b];
    int64_t last = first + job->rows_per_unit[b];
    if (last > block->rows) last = block->rows;
    if (block->src_stride == block->row_elements &&
        block->dst_stride == block->row_elements) {
      ok &= loom__array_copy_row(job->dtype,
                                 src + first * block->src_stride * size, 1,
                                 dst + first * block->dst_stride * size, 1,
                                 (last - first) * block->row_elements);
      continue;
    }
    for (int64_t r = first; r < last; ++r) {
      ok &= loom__array_copy_row(job->dtype, src + r * block->src_stride * size,
                                 1, dst + r * block->dst_stride * size, 1,
                                 block->row_elements);
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

loom_status_t loom__array_copy_blocks(loom_thread_pool_t* pool,
                                      loom_dtype_t dtype,
                                      const loom__array_block_t* blocks,
                                      int64_t count) {
  size_t size = loom__array_element_size(dtype);
  int64_t total_bytes = 0;
  for (int64_t b = 0; b < count; ++b) {
    // Blocks cover allocated outputs; checked as loom__array_copy's plans.
    int64_t elements;
    size_t bytes;
    if (!loom__size_mul(blocks[b].rows, blocks[b].row_elements, &elements) ||
        !loom__size_bytes(elements, size, &bytes) ||
        !loom__size_add(total_bytes, (int64_t)bytes, &total_bytes)) {
      return loom__size_overflow_error("array copy", "block of",
                                       "%" PRId64 " x %" PRId64, blocks[b].rows,
                                       blocks[b].row_elements);
    }
  }
  if (total_bytes == 0) return loom_ok_status();
  bool strings = dtype == LOOM_DTYPE_STRING;
  if (!pool || total_bytes < kInlineBytes) {
    bool ok = true;
    for (int64_t b = 0; b < count; ++b) {
      const loom__array_block_t* block = &blocks[b];
      for (int64_t r = 0; r < block->rows; ++r) {
        ok &= loom__array_copy_row(
            dtype,
            (const char*)block->src + r * block->src_stride * (int64_t)size, 1,
            (char*)block->dst + r * block->dst_stride * (int64_t)size, 1,
            block->row_elements);
      }
    }
    return ok ? loom_ok_status() : string_failure();
  }
  // Units of piece_bytes() each.
  int64_t* scratch = NULL;
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      allocator, sizeof(int64_t) * (size_t)(3 * count + 1), (void**)&scratch));
  blocks_job_t job;
  job.blocks = blocks;
  job.count = count;
  job.dtype = dtype;
  job.size = size;
  job.prefix = scratch;
  job.rows_per_unit = scratch + count + 1;
  job.pieces = scratch + 2 * count + 1;
  atomic_init(&job.failed, false);
  int64_t units = 0;
  int64_t unit_bytes = piece_bytes(pool, total_bytes);
  int64_t unit_elements = unit_bytes / (int64_t)size;
  if (strings) unit_elements = 1024;
  for (int64_t b = 0; b < count; ++b) {
    const loom__array_block_t* block = &blocks[b];
    job.prefix[b] = units;
    job.pieces[b] = 1;
    job.rows_per_unit[b] = 1;
    if (block->rows == 0 || block->row_elements == 0) continue;
    if (block->row_elements > 2 * unit_elements) {
      job.pieces[b] = (block->row_elements + unit_elements - 1) / unit_elements;
      units += block->rows * job.pieces[b];
    } else {
      int64_t rows = unit_elements / block->row_elements;
      if (rows < 1) rows = 1;
      job.rows_per_unit[b] = rows;
      units += (block->rows + rows - 1) / rows;
    }
  }
  job.prefix[count] = units;
  int64_t cost = strings ? 20 * unit_elements : unit_bytes / 8;
  loom_status_t status =
      loom_thread_pool_parallel_for(pool, units, cost, run_block_units, &job);
  loom_allocator_free(allocator, scratch);
  LOOM_RETURN_IF_ERROR(status);
  return atomic_load(&job.failed) ? string_failure() : loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Fill
//===----------------------------------------------------------------------===//

typedef struct fill_job_t {
  loom_dtype_t dtype;
  size_t size;
  char* dst;
  int64_t count;
  int64_t chunk;
  const void* value;
  _Atomic bool failed;
} fill_job_t;

static bool fill_range(loom_dtype_t dtype, size_t size, void* dst, int64_t n,
                       const void* value) {
  if (n <= 0) return true;
  if (dtype != LOOM_DTYPE_STRING) {
    // A value whose bytes are all equal (zeros, bools) is a memset.
    const unsigned char* bytes = value;
    bool uniform = true;
    for (size_t i = 1; i < size && uniform; ++i) uniform = bytes[i] == bytes[0];
    if (uniform) {
      memset(dst, bytes[0], (size_t)n * size);
      return true;
    }
  }
  return loom__array_copy_row(dtype, value, 0, dst, 1, n);
}

static void run_fill(void* arg, int64_t begin, int64_t end) {
  fill_job_t* job = arg;
  bool ok = true;
  for (int64_t c = begin; c < end; ++c) {
    int64_t start = c * job->chunk;
    int64_t n = job->count - start;
    if (n > job->chunk) n = job->chunk;
    ok &= fill_range(job->dtype, job->size,
                     job->dst + (size_t)start * job->size, n, job->value);
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

loom_status_t loom__array_fill(loom_thread_pool_t* pool, loom_dtype_t dtype,
                               void* dst, int64_t count, const void* value) {
  if (count <= 0) return loom_ok_status();
  size_t size = loom__array_element_size(dtype);
  fill_job_t job;
  job.dtype = dtype;
  job.size = size;
  job.dst = dst;
  job.count = count;
  job.value = value;
  job.chunk = dtype == LOOM_DTYPE_STRING ? 1024 : kPieceBytes / (int64_t)size;
  atomic_init(&job.failed, false);
  int64_t chunks = (count + job.chunk - 1) / job.chunk;
  if (!pool || chunks == 1) {
    run_fill(&job, 0, chunks);
  } else {
    int64_t cost =
        dtype == LOOM_DTYPE_STRING ? 20 * job.chunk : kPieceBytes / 16;
    LOOM_RETURN_IF_ERROR(
        loom_thread_pool_parallel_for(pool, chunks, cost, run_fill, &job));
  }
  return atomic_load(&job.failed) ? string_failure() : loom_ok_status();
}

//===----------------------------------------------------------------------===//
// Views and attrs
//===----------------------------------------------------------------------===//

int64_t loom__array_attr_ints(const loom_op_attrs_t* attrs, const char* name,
                              int64_t* values, int64_t capacity) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, name, &value) || !value.is_list) return -1;
  if (value.count == 0) return 0;
  if (value.kind != LOOM_ATTR_KIND_I64 && value.kind != LOOM_ATTR_KIND_I32) {
    return -1;
  }
  for (int64_t i = 0; i < value.count && i < capacity; ++i) {
    values[i] = value.kind == LOOM_ATTR_KIND_I64
                    ? ((const int64_t*)value.u.list)[i]
                    : ((const int32_t*)value.u.list)[i];
  }
  return value.count;
}

loom_status_t loom__array_set_view(loom_kernel_context_t* ctx, int32_t index,
                                   loom_tensor_t* input, int64_t offset,
                                   const loom_shape_t* shape) {
  if (offset == 0 && loom_shape_equal(loom_tensor_shape(input), shape)) {
    return loom_kernel_context_set_output(ctx, index, input);
  }
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  loom_dtype_t dtype = loom_tensor_dtype(input);
  loom_tensor_t* view = NULL;
  switch (loom_tensor_kind(input)) {
    case LOOM_TENSOR_SCALAR:
      LOOM_RETURN_IF_ERROR(loom_tensor_create_scalar(
          allocator, dtype, shape, loom_tensor_data(input), &view));
      break;
    case LOOM_TENSOR_DENSE: {
      loom_buffer_t* buffer = loom_tensor_buffer(input);
      size_t start = (size_t)((const char*)loom_tensor_data(input) -
                              (const char*)loom_buffer_data(buffer));
      LOOM_RETURN_IF_ERROR(loom_tensor_create_dense_in_buffer(
          allocator, dtype, shape, buffer,
          start + (size_t)offset * loom_dtype_size(dtype), &view));
      break;
    }
    case LOOM_TENSOR_STRING: {
      loom_buffer_t* buffer = loom_tensor_buffer(input);
      if (offset == 0 && loom_tensor_data(input) == loom_buffer_data(buffer)) {
        LOOM_RETURN_IF_ERROR(loom_tensor_create_string_in_buffer(
            allocator, shape, buffer, &view));
        break;
      }
      loom_tensor_t* output = NULL;
      LOOM_RETURN_IF_ERROR(
          loom_kernel_context_allocate_output(ctx, index, shape, &output));
      if (!loom__array_copy_row(
              dtype, (const loom_tstring_t*)loom_tensor_data(input) + offset, 1,
              loom_tensor_data(output), 1, loom_shape_num_elements(shape))) {
        return string_failure();
      }
      return loom_ok_status();
    }
  }
  loom_status_t status = loom_kernel_context_set_output(ctx, index, view);
  loom_tensor_release(view);
  return status;
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

loom_status_t loom__array_inputs_init(loom_kernel_context_t* ctx,
                                      loom__array_inputs_t* inputs) {
  int32_t n = loom_kernel_context_num_inputs(ctx);
  inputs->count = n;
  inputs->expanded = false;
  loom__array_tensor_vector_initialize(&inputs->storage);
  LOOM_RETURN_IF_ERROR(loom__array_tensor_vector_resize(
      &inputs->storage, loom_allocator_default(), 2 * (size_t)n));
  inputs->tensors = loom__array_tensor_vector_data(&inputs->storage);
  loom_tensor_t** holders = inputs->tensors + n;
  for (int32_t i = 0; i < n; ++i) {
    loom_tensor_t* tensor = loom_kernel_context_input(ctx, i);
    inputs->tensors[i] = tensor;
    if (loom_tensor_kind(tensor) != LOOM_TENSOR_SCALAR) continue;
    inputs->expanded = true;
    loom_status_t status = loom_tensor_convert_to_dense(
        loom_kernel_context_allocator(ctx), tensor, &holders[i]);
    if (status) {
      loom__array_inputs_release(inputs);
      return status;
    }
    inputs->tensors[i] = holders[i];
  }
  return loom_ok_status();
}

void loom__array_inputs_release(loom__array_inputs_t* inputs) {
  if (inputs->expanded) {
    for (int32_t i = 0; i < inputs->count; ++i) {
      loom_tensor_release(inputs->tensors[inputs->count + i]);
    }
  }
  loom__array_tensor_vector_deinitialize(&inputs->storage,
                                         loom_allocator_default());
  inputs->expanded = false;
}

void loom__array_run(loom_kernel_context_t* ctx, loom__array_run_fn_t fn) {
  loom__array_inputs_t inputs;
  loom_status_t status = loom__array_inputs_init(ctx, &inputs);
  if (!status) {
    status = fn(ctx, inputs.tensors);
    loom__array_inputs_release(&inputs);
  }
  if (status) loom_kernel_context_fail(ctx, status);
}
