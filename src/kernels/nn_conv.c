// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter with TensorFlow's
// signatures, shape rules and messages, for NHWC and NCHW, strides,
// dilations, SAME / VALID / EXPLICIT padding and grouped filters
// (in_depth a multiple of the filter's depth).
//
// The portable path: the image patches a block of outputs reads are
// copied into a matrix (im2col, in a per-thread scratch block that stays in
// cache) and multiplied with the filter by OpenBLAS (sgemm / dgemm), one
// GEMM per group; 1x1 unit-stride unpadded convolutions use the input as
// that matrix directly. The gradients use the same GEMMs transposed, with
// col2im scattering the input gradient back. Half and bfloat16 are
// widened to float, computed, and narrowed.
//
// Threads: OpenBLAS runs single-threaded (loom__blas_single_threaded) and
// the blocks are spread over Loom's pool, so the pool's threads are the
// only ones computing. The filter gradient sums its blocks in a fixed
// number of chunks, so its result does not depend on the thread count.
//
// This file holds the GEMM blocks and the kernel; the shape functions,
// im2col, Winograd and the registration are in nn_conv_*.c (nn_conv.h).

#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "kernels/matmul.h"
#include "kernels/nn_conv.h"

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

void loom__nn_gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   const void* a, int64_t lda, const void* b, int64_t ldb,
                   bool accumulate, void* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (accumulate) return;
    size_t size = f64 ? sizeof(double) : sizeof(float);
    for (int64_t i = 0; i < m; ++i) {
      memset((char*)c + (size_t)(i * ldc) * size, 0, (size_t)n * size);
    }
    return;
  }
  enum CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE ob = tb ? CblasTrans : CblasNoTrans;
  if (f64) {
    cblas_dgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, 1.0, a, (int)lda,
                b, (int)ldb, accumulate ? 1.0 : 0.0, c, (int)ldc);
  } else {
    cblas_sgemm(CblasRowMajor, oa, ob, (int)m, (int)n, (int)k, 1.0f, a,
                (int)lda, b, (int)ldb, accumulate ? 1.0f : 0.0f, c, (int)ldc);
  }
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

enum {
  kColumnBlockBytes = 256 << 10,  // target size of one im2col block
  kFilterChunks = 8,              // filter-gradient partial sums
};

// Output pixels (NHWC: over the batch) or columns (NCHW: per image) per
// block: a block of im2col stays in cache, and with `outer` groups of
// `total` there are enough blocks to share among the threads.
static int64_t block_size(const loom__nn_conv_job_t* job, int64_t outer,
                          int64_t total, int64_t concurrency) {
  int64_t row_bytes = job->k_total * (int64_t)job->size;
  int64_t block = row_bytes > 0 ? kColumnBlockBytes / row_bytes : total;
  if (block < 16) block = 16;
  if (block > total) block = total;
  if (block < 1) return 1;
  int64_t units = outer * ((total + block - 1) / block);
  if (concurrency > 1 && outer > 0 && units < 4 * concurrency) {
    int64_t per_outer = (4 * concurrency + outer - 1) / outer;
    int64_t share = (total + per_outer - 1) / per_outer;
    if (share < 16) share = 16;
    if (share < block) block = share;
  }
  return block;
}

static char* worker_scratch(const loom__nn_conv_job_t* job, int worker) {
  return job->scratch + job->scratch_stride * (size_t)worker;
}

// Forward, NHWC: unit = a block of output pixels.
static void forward_nhwc_units(void* arg, int64_t begin, int64_t end,
                               int worker) {
  const loom__nn_conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  int64_t total = g->batch * job->pixels;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t p0 = unit * job->block, rows = total - p0;
    if (rows > job->block) rows = job->block;
    const char* a;
    int64_t lda;
    if (job->direct) {
      a = job->input + (size_t)(p0 * g->in_c) * job->size;
      lda = g->in_c;
    } else {
      char* col = worker_scratch(job, worker);
      loom__nn_im2col_nhwc(job, p0, rows, col);
      a = col;
      lda = job->k_total;
    }
    for (int64_t gi = 0; gi < g->groups; ++gi) {
      loom__nn_gemm(
          job->f64, false, false, rows, job->o_group, job->k_group,
          a + (size_t)(gi * job->k_group) * job->size, lda,
          job->filter + (size_t)(gi * job->o_group) * job->size, g->out_c,
          false,
          job->output + (size_t)(p0 * g->out_c + gi * job->o_group) * job->size,
          g->out_c);
    }
  }
}

// Forward, NCHW: unit = (image, block of output columns).
static void forward_nchw_units(void* arg, int64_t begin, int64_t end,
                               int worker) {
  const loom__nn_conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t n = unit / job->blocks, q0 = (unit % job->blocks) * job->block;
    int64_t cols = job->pixels - q0;
    if (cols > job->block) cols = job->block;
    const char* b;
    int64_t ldb;
    if (job->direct) {
      b = job->input + (size_t)(n * g->in_c * job->pixels + q0) * job->size;
      ldb = job->pixels;
    } else {
      char* col = worker_scratch(job, worker);
      loom__nn_im2col_nchw(job, n, q0, cols, col);
      b = col;
      ldb = cols;
    }
    char* out =
        job->output + (size_t)(n * g->out_c * job->pixels + q0) * job->size;
    for (int64_t gi = 0; gi < g->groups; ++gi) {
      loom__nn_gemm(
          job->f64, false, false, job->o_group, cols, job->k_group,
          job->wt + (size_t)(gi * job->o_group * job->k_group) * job->size,
          job->k_group, b + (size_t)(gi * job->k_group * ldb) * job->size, ldb,
          false, out + (size_t)(gi * job->o_group * job->pixels) * job->size,
          job->pixels);
    }
  }
}

// Input gradient, NHWC: unit = one image (its pixels' patches overlap),
// or with `direct` a block of pixels.
static void input_grad_nhwc_units(void* arg, int64_t begin, int64_t end,
                                  int worker) {
  const loom__nn_conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->direct) {
      int64_t total = g->batch * job->pixels;
      int64_t p0 = unit * job->block, rows = total - p0;
      if (rows > job->block) rows = job->block;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        loom__nn_gemm(
            job->f64, false, true, rows, g->filter_c, job->o_group,
            job->dy + (size_t)(p0 * g->out_c + gi * job->o_group) * size,
            g->out_c, job->filter + (size_t)(gi * job->o_group) * size,
            g->out_c, false,
            job->output + (size_t)(p0 * g->in_c + gi * g->filter_c) * size,
            g->in_c);
      }
      continue;
    }
    int64_t n = unit;
    char* dx = job->output + (size_t)(n * g->in_h * g->in_w * g->in_c) * size;
    memset(dx, 0, (size_t)(g->in_h * g->in_w * g->in_c) * size);
    char* dcol = worker_scratch(job, worker);
    for (int64_t p0 = 0; p0 < job->pixels; p0 += job->block) {
      int64_t rows = job->pixels - p0;
      if (rows > job->block) rows = job->block;
      const char* dy =
          job->dy + (size_t)((n * job->pixels + p0) * g->out_c) * size;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        loom__nn_gemm(job->f64, false, true, rows, job->k_group, job->o_group,
                      dy + (size_t)(gi * job->o_group) * size, g->out_c,
                      job->filter + (size_t)(gi * job->o_group) * size,
                      g->out_c, false,
                      dcol + (size_t)(gi * job->k_group) * size, job->k_total);
      }
      loom__nn_col2im_nhwc(job, dcol, p0, rows, dx);
    }
  }
}

// Input gradient, NCHW: unit = one image, or with `direct` (image, block
// of columns).
static void input_grad_nchw_units(void* arg, int64_t begin, int64_t end,
                                  int worker) {
  const loom__nn_conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->direct) {
      int64_t n = unit / job->blocks, q0 = (unit % job->blocks) * job->block;
      int64_t cols = job->pixels - q0;
      if (cols > job->block) cols = job->block;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        loom__nn_gemm(
            job->f64, true, false, g->filter_c, cols, job->o_group,
            job->wt + (size_t)(gi * job->o_group * job->k_group) * size,
            job->k_group,
            job->dy +
                (size_t)((n * g->out_c + gi * job->o_group) * job->pixels +
                         q0) *
                    size,
            job->pixels, false,
            job->output +
                (size_t)((n * g->in_c + gi * g->filter_c) * job->pixels + q0) *
                    size,
            job->pixels);
      }
      continue;
    }
    int64_t n = unit, plane = g->in_h * g->in_w;
    char* dx = job->output + (size_t)(n * g->in_c * plane) * size;
    memset(dx, 0, (size_t)(g->in_c * plane) * size);
    char* dcol = worker_scratch(job, worker);
    for (int64_t q0 = 0; q0 < job->pixels; q0 += job->block) {
      int64_t cols = job->pixels - q0;
      if (cols > job->block) cols = job->block;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        loom__nn_gemm(
            job->f64, true, false, job->k_group, cols, job->o_group,
            job->wt + (size_t)(gi * job->o_group * job->k_group) * size,
            job->k_group,
            job->dy +
                (size_t)((n * g->out_c + gi * job->o_group) * job->pixels +
                         q0) *
                    size,
            job->pixels, false,
            dcol + (size_t)(gi * job->k_group * cols) * size, cols);
      }
      loom__nn_col2im_nchw(job, dcol, q0, cols, dx);
    }
  }
}

// Filter gradient: chunk c accumulates its units' products into its own
// partial sum (NHWC: [k_group][out_c] as HWIO; NCHW: [out_c][k_group]).
static void filter_grad_chunks(void* arg, int64_t begin, int64_t end,
                               int worker) {
  const loom__nn_conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  for (int64_t chunk = begin; chunk < end; ++chunk) {
    char* acc = job->chunks + job->chunk_stride * (size_t)chunk;
    memset(acc, 0, (size_t)(job->k_group * g->out_c) * size);
    int64_t first = chunk * job->per_chunk, last = first + job->per_chunk;
    if (last > job->units) last = job->units;
    for (int64_t unit = first; unit < last; ++unit) {
      if (!g->nchw) {
        int64_t total = g->batch * job->pixels;
        int64_t p0 = unit * job->block, rows = total - p0;
        if (rows > job->block) rows = job->block;
        const char* a;
        int64_t lda;
        if (job->direct) {
          a = job->input + (size_t)(p0 * g->in_c) * size;
          lda = g->in_c;
        } else {
          char* col = worker_scratch(job, worker);
          loom__nn_im2col_nhwc(job, p0, rows, col);
          a = col;
          lda = job->k_total;
        }
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          loom__nn_gemm(
              job->f64, true, false, job->k_group, job->o_group, rows,
              a + (size_t)(gi * job->k_group) * size, lda,
              job->dy + (size_t)(p0 * g->out_c + gi * job->o_group) * size,
              g->out_c, true, acc + (size_t)(gi * job->o_group) * size,
              g->out_c);
        }
      } else {
        int64_t n = unit / job->blocks, q0 = (unit % job->blocks) * job->block;
        int64_t cols = job->pixels - q0;
        if (cols > job->block) cols = job->block;
        const char* b;
        int64_t ldb;
        if (job->direct) {
          b = job->input + (size_t)(n * g->in_c * job->pixels + q0) * size;
          ldb = job->pixels;
        } else {
          char* col = worker_scratch(job, worker);
          loom__nn_im2col_nchw(job, n, q0, cols, col);
          b = col;
          ldb = cols;
        }
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          loom__nn_gemm(
              job->f64, false, true, job->o_group, job->k_group, cols,
              job->dy +
                  (size_t)((n * g->out_c + gi * job->o_group) * job->pixels +
                           q0) *
                      size,
              job->pixels, b + (size_t)(gi * job->k_group * ldb) * size, ldb,
              true, acc + (size_t)(gi * job->o_group * job->k_group) * size,
              job->k_group);
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

typedef enum conv_kind_t {
  CONV_FORWARD,
  CONV_INPUT_GRAD,
  CONV_FILTER_GRAD,
} conv_kind_t;

// HWIO [kh][kw][cg][O] to [O][cg][kh][kw] (or back, `inverse`).
static void transpose_filter(const loom__nn_geometry_t* g, size_t size,
                             const char* from, char* to, bool inverse) {
  int64_t taps = g->k_h * g->k_w;
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t c = 0; c < g->filter_c; ++c) {
      for (int64_t o = 0; o < g->out_c; ++o) {
        size_t hwio = (size_t)((t * g->filter_c + c) * g->out_c + o) * size;
        size_t oihw = (size_t)((o * g->filter_c + c) * taps + t) * size;
        if (inverse) {
          memcpy(to + hwio, from + oihw, size);
        } else {
          memcpy(to + oihw, from + hwio, size);
        }
      }
    }
  }
}

// Runs one convolution on float or double data. The pointers are the
// float/double buffers (16-bit inputs already widened).
static loom_status_t run_conv(loom_kernel_context_t* ctx, conv_kind_t kind,
                              const loom__nn_geometry_t* g, bool f64,
                              const void* x, const void* filter, const void* dy,
                              void* out) {
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  size_t size = f64 ? sizeof(double) : sizeof(float);
  int64_t concurrency = loom__nn_concurrency(ctx);
  loom__nn_conv_job_t job = {
      .g = g,
      .loops = loom__nn_loops(),
      .f64 = f64,
      .size = size,
      .input = x,
      .filter = filter,
      .dy = dy,
      .output = out,
      .o_group = g->out_c / g->groups,
  };
  // The plan's sizes, checked once here: every offset the units compute
  // is below one of them, so the loops need no checks of their own.
  const char* op = loom_kernel_context_op(ctx)->name;
  int64_t k_total_dims[3] = {g->k_h, g->k_w, g->in_c};
  int64_t k_group_dims[3] = {g->k_h, g->k_w, g->filter_c};
  int64_t pixel_dims[2] = {g->out_h, g->out_w};
  int64_t image_dims[3] = {g->in_c, g->in_h, g->in_w};
  int64_t rows, image, filter_count;
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(
      op, "filter patch", k_total_dims, 3, &job.k_total));
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(
      op, "filter group", k_group_dims, 3, &job.k_group));
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(op, "output image",
                                                  pixel_dims, 2, &job.pixels));
  int64_t rows_dims[2] = {g->batch, job.pixels};
  int64_t filter_dims[2] = {job.k_group, g->out_c};
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "output rows", rows_dims, 2, &rows));
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "input image", image_dims, 3, &image));
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "filter", filter_dims, 2, &filter_count));
  job.direct = g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 &&
               g->stride_w == 1 && g->pad_top == 0 && g->pad_left == 0 &&
               g->out_h == g->in_h && g->out_w == g->in_w;
  int64_t int_max = INT_MAX;
  if (job.k_total > int_max || rows > int_max || image > int_max ||
      g->out_c > int_max) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s: convolutions with matrix dimensions above %d "
                            "are not supported (filter patch %lld, output "
                            "rows %lld, input image %lld, out_depth %lld)",
                            op, INT_MAX, (long long)job.k_total,
                            (long long)rows, (long long)image,
                            (long long)g->out_c);
  }
  loom__blas_single_threaded();
  if (kind == CONV_FORWARD && loom__nn_use_winograd(g)) {
    return loom__nn_run_winograd(ctx, g, f64, x, filter, out);
  }
  char* wt = NULL;
  loom_status_t status = loom_ok_status();
  if (g->nchw) {
    // The filter as [O][cg * kh * kw] (the gradient is produced so).
    status = loom__nn_scratch(ctx, "filter", 1, filter_count, size, &wt, NULL);
    if (status) return status;
    if (kind != CONV_FILTER_GRAD) transpose_filter(g, size, filter, wt, false);
    job.wt = wt;
  }
  int64_t outer = g->nchw ? g->batch : 1;
  int64_t total = g->nchw ? job.pixels : rows;
  // The filter gradient's blocks do not depend on the thread count (its
  // chunks are what run in parallel), so neither does its sum.
  job.block = block_size(&job, outer, total,
                         kind == CONV_FILTER_GRAD ? 1 : concurrency);
  job.blocks = (job.pixels + job.block - 1) / job.block;
  // Blocks of output pixels (NHWC, over the batch) or of one image's
  // columns (NCHW).
  int64_t units = outer * ((total + job.block - 1) / job.block);
  loom_parallel_for_worker_fn_t fn = NULL;
  double unit_flops =
      2.0 * (double)job.k_group * (double)g->out_c * (double)job.block;
  switch (kind) {
    case CONV_FORWARD:
      fn = g->nchw ? forward_nchw_units : forward_nhwc_units;
      break;
    case CONV_INPUT_GRAD:
      fn = g->nchw ? input_grad_nchw_units : input_grad_nhwc_units;
      if (!job.direct) {
        // col2im: the patches of one image overlap, so one unit each.
        units = g->batch;
        unit_flops *= (double)job.pixels / (double)job.block;
      }
      break;
    case CONV_FILTER_GRAD: {
      fn = filter_grad_chunks;
      job.units = units;
      int64_t chunks = units < kFilterChunks ? units : kFilterChunks;
      if (chunks < 1) chunks = 1;
      job.per_chunk = (units + chunks - 1) / chunks;
      if (job.per_chunk < 1) job.per_chunk = 1;
      units = (units + job.per_chunk - 1) / job.per_chunk;
      status =
          loom__nn_scratch(ctx, "filter gradient chunks", units, filter_count,
                           size, &job.chunks, &job.chunk_stride);
      unit_flops *= (double)job.per_chunk;
      break;
    }
  }
  // About 64 multiply-adds per cost unit.
  int64_t cost = (int64_t)(unit_flops / 64.0) + 1;
  if (!status && !job.direct) {
    // Per-worker im2col (or gradient column) blocks.
    int64_t block_dims[2] = {job.block, job.k_total}, block_count;
    status = loom__size_product_checked(op, "im2col block", block_dims, 2,
                                        &block_count);
    if (!status) {
      status = loom__nn_scratch(ctx, "im2col blocks", concurrency, block_count,
                                size, &job.scratch, &job.scratch_stride);
    }
  }
  if (!status && units > 0) {
    status = loom_thread_pool_parallel_for_with_worker_id(
        loom__nn_pool(ctx), units, cost, fn, &job);
  }
  if (!status && kind == CONV_FILTER_GRAD) {
    // Sum the chunks in order, into HWIO.
    int64_t count = filter_count;
    char* sum = job.chunks;
    for (int64_t c = 1; c < units; ++c) {
      const char* part = job.chunks + job.chunk_stride * (size_t)c;
      if (f64) {
        job.loops->add_f64((double*)sum, (const double*)part, count);
      } else {
        job.loops->add_f32((float*)sum, (const float*)part, count);
      }
    }
    if (units == 0) {
      memset(out, 0, (size_t)count * size);
    } else if (g->nchw) {
      transpose_filter(g, size, sum, out, true);
    } else {
      memcpy(out, sum, (size_t)count * size);
    }
  }
  loom_allocator_free(allocator, job.chunks);
  loom_allocator_free(allocator, job.scratch);
  loom_allocator_free(allocator, wt);
  return status;
}

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

void loom__nn_conv_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  const char* name = loom_kernel_context_op(ctx)->name;
  conv_kind_t kind = strcmp(name, "Conv2D") == 0 ? CONV_FORWARD
                     : strcmp(name, "Conv2DBackpropInput") == 0
                         ? CONV_INPUT_GRAD
                         : CONV_FILTER_GRAD;
  loom__nn_window_attrs_t attrs;
  loom_status_t status =
      loom__nn_conv_attrs(name, loom_kernel_context_attrs(ctx), &attrs);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* x = NULL;
  loom_tensor_t* filter = NULL;
  loom_tensor_t* dy = NULL;
  loom_shape_t x_shape, filter_shape, out_shape;
  loom__nn_geometry_t g;
  switch (kind) {
    case CONV_FORWARD:
      x = loom_kernel_context_input(ctx, 0);
      filter = loom_kernel_context_input(ctx, 1);
      x_shape = *loom_tensor_shape(x);
      filter_shape = *loom_tensor_shape(filter);
      status = loom__nn_conv_geometry(&attrs, &x_shape, &filter_shape, &g);
      if (!status) {
        out_shape =
            loom__nn_image_shape(g.nchw, g.batch, g.out_h, g.out_w, g.out_c);
      }
      break;
    case CONV_INPUT_GRAD:
      filter = loom_kernel_context_input(ctx, 1);
      dy = loom_kernel_context_input(ctx, 2);
      filter_shape = *loom_tensor_shape(filter);
      status = loom__nn_shape_from_tensor(loom_kernel_context_input(ctx, 0),
                                          "input_sizes", &x_shape);
      if (!status) {
        status = loom__nn_conv_backprop_geometry(
            name, &attrs, &x_shape, &filter_shape, loom_tensor_shape(dy), &g);
      }
      out_shape = x_shape;
      break;
    case CONV_FILTER_GRAD:
      x = loom_kernel_context_input(ctx, 0);
      dy = loom_kernel_context_input(ctx, 2);
      x_shape = *loom_tensor_shape(x);
      status = loom__nn_shape_from_tensor(loom_kernel_context_input(ctx, 1),
                                          "filter_sizes", &filter_shape);
      if (!status) {
        status = loom__nn_conv_backprop_geometry(
            name, &attrs, &x_shape, &filter_shape, loom_tensor_shape(dy), &g);
      }
      out_shape = filter_shape;
      break;
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* out = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out);
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t out_count = loom_tensor_num_elements(out);
  if (out_count == 0) return;
  loom_dtype_t dtype = loom_kernel_context_output_dtype(ctx, 0);
  if (dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE) {
    status = run_conv(ctx, kind, &g, dtype == LOOM_DTYPE_DOUBLE,
                      x ? loom_tensor_data(x) : NULL,
                      filter ? loom_tensor_data(filter) : NULL,
                      dy ? loom_tensor_data(dy) : NULL, loom_tensor_data(out));
    if (status) loom_kernel_context_fail(ctx, status);
    return;
  }
  // Half and bfloat16: widen the operands, compute in float, narrow.
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  int64_t nx = x ? loom_tensor_num_elements(x) : 0;
  int64_t nf = filter ? loom_tensor_num_elements(filter) : 0;
  int64_t nd = dy ? loom_tensor_num_elements(dy) : 0;
  int64_t counts[4] = {nx, nf, nd, out_count}, wide_count;
  char* scratch = NULL;
  status = loom__size_sum(counts, 4, &wide_count)
               ? loom__nn_scratch(ctx, "float copies", 1, wide_count,
                                  sizeof(float), &scratch, NULL)
               : loom__size_overflow_error(name, "float copies",
                                           "(%lld + %lld + %lld + %lld)",
                                           (long long)nx, (long long)nf,
                                           (long long)nd, (long long)out_count);
  if (status) FAIL_AND_RETURN(ctx, status);
  float* fx = (float*)scratch;
  float* ff = fx + nx;
  float* fd = ff + nf;
  float* fo = fd + nd;
  if (x) loom__nn_widen(dtype, loom_tensor_data(x), fx, nx);
  if (filter) loom__nn_widen(dtype, loom_tensor_data(filter), ff, nf);
  if (dy) loom__nn_widen(dtype, loom_tensor_data(dy), fd, nd);
  status = run_conv(ctx, kind, &g, false, fx, ff, fd, fo);
  if (!status) loom__nn_narrow(dtype, fo, loom_tensor_data(out), out_count);
  loom_allocator_free(allocator, scratch);
  if (status) loom_kernel_context_fail(ctx, status);
}
