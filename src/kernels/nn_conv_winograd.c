// Winograd F(2x2, 3x3) for Conv2D.
//
// 3x3 unit-stride convolutions with enough channels go through Winograd's
// minimal filtering (Lavin and Gray): each 2x2 block of outputs is 16
// element-wise products of 4x4 transformed input and filter tiles, summed
// over channels -- 16 GEMMs of [tiles x in_c] x [in_c x out_c] instead of
// one of [pixels x 9 in_c] x [9 in_c x out_c], 2.25 times fewer
// multiplications. Blocks of tiles are transformed into per-thread scratch
// that stays in cache, multiplied by OpenBLAS, and transformed back. The
// transforms only add and halve, so the error stays that of the direct
// sum's. NCHW data is transposed to NHWC around it.

#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/nn_conv.h"

enum {
  kWinogradBlockBytes = 512 << 10,  // V and M of one block of tiles
  kWinogradMinChannels = 16,
};

bool loom__nn_use_winograd(const loom__nn_geometry_t* g) {
  return g->k_h == 3 && g->k_w == 3 && g->stride_h == 1 && g->stride_w == 1 &&
         g->dil_h == 1 && g->dil_w == 1 && g->groups == 1 &&
         g->in_c >= kWinogradMinChannels && g->out_c >= kWinogradMinChannels &&
         g->out_h >= 2 && g->out_w >= 2;
}

typedef struct winograd_job_t {
  const loom__nn_geometry_t* g;
  const loom__nn_loops_t* loops;
  bool f64;
  size_t size;
  const char* input;  // NHWC
  char* output;       // NHWC
  const char* u;      // the transformed filter, [16][in_c][out_c]
  const char* zeros;  // in_c zeros: the taps outside the image
  char* scratch;      // per worker: V [16][block][in_c], M [16][block][out_c]
  size_t scratch_stride;  // and a row of out_c for outputs past the edge
  int64_t tiles_y, tiles_x, tiles, block;
} winograd_job_t;

static void winograd_units(void* arg, int64_t begin, int64_t end, int worker) {
  const winograd_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  int64_t c = g->in_c, o = g->out_c, t_block = job->block;
  char* v = job->scratch + job->scratch_stride * (size_t)worker;
  char* m = v + (size_t)(16 * t_block * c) * size;
  char* sink = m + (size_t)(16 * t_block * o) * size;
  int64_t per_image = job->tiles_y * job->tiles_x;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t t0 = unit * t_block, count = job->tiles - t0;
    if (count > t_block) count = t_block;
    for (int64_t k = 0; k < count; ++k) {
      int64_t t = t0 + k, n = t / per_image, rest = t % per_image;
      int64_t h0 = 2 * (rest / job->tiles_x) - g->pad_top;
      int64_t w0 = 2 * (rest % job->tiles_x) - g->pad_left;
      const char* d[16];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) {
          int64_t h = h0 + i, w = w0 + j;
          d[4 * i + j] =
              h >= 0 && h < g->in_h && w >= 0 && w < g->in_w
                  ? job->input +
                        (size_t)(((n * g->in_h + h) * g->in_w + w) * c) * size
                  : job->zeros;
        }
      }
      char* vk = v + (size_t)(k * c) * size;
      if (job->f64) {
        const double* dd[16];
        for (int i = 0; i < 16; ++i) dd[i] = (const double*)d[i];
        job->loops->winograd_input_f64(dd, (double*)vk, t_block * c, c);
      } else {
        const float* df[16];
        for (int i = 0; i < 16; ++i) df[i] = (const float*)d[i];
        job->loops->winograd_input_f32(df, (float*)vk, t_block * c, c);
      }
    }
    for (int64_t x = 0; x < 16; ++x) {
      loom__nn_gemm(job->f64, false, false, count, o, c,
                    v + (size_t)(x * t_block * c) * size, c,
                    job->u + (size_t)(x * c * o) * size, o, false,
                    m + (size_t)(x * t_block * o) * size, o);
    }
    for (int64_t k = 0; k < count; ++k) {
      int64_t t = t0 + k, n = t / per_image, rest = t % per_image;
      int64_t oh = 2 * (rest / job->tiles_x), ow = 2 * (rest % job->tiles_x);
      char* y[4];
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          y[2 * i + j] =
              oh + i < g->out_h && ow + j < g->out_w
                  ? job->output +
                        (size_t)(((n * g->out_h + oh + i) * g->out_w + ow + j) *
                                 o) *
                            size
                  : sink;
        }
      }
      const char* mk = m + (size_t)(k * o) * size;
      if (job->f64) {
        double* yd[4] = {(double*)y[0], (double*)y[1], (double*)y[2],
                         (double*)y[3]};
        job->loops->winograd_output_f64((const double*)mk, t_block * o, yd, o);
      } else {
        float* yf[4] = {(float*)y[0], (float*)y[1], (float*)y[2], (float*)y[3]};
        job->loops->winograd_output_f32((const float*)mk, t_block * o, yf, o);
      }
    }
  }
}

// Transposes `count` matrices of rows x cols (elements of `size` bytes).
typedef struct transpose_job_t {
  const char* src;
  char* dst;
  int64_t rows, cols;
  size_t size;
  loom__transpose_panel_fn_t panel;
} transpose_job_t;

static void transpose_units(void* arg, int64_t begin, int64_t end) {
  const transpose_job_t* job = arg;
  int64_t panel_rows = (int64_t)(64 / job->size);
  size_t matrix = (size_t)(job->rows * job->cols) * job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    const char* src = job->src + matrix * (size_t)unit;
    char* dst = job->dst + matrix * (size_t)unit;
    for (int64_t r = 0; r < job->rows; r += panel_rows) {
      int64_t rows = job->rows - r < panel_rows ? job->rows - r : panel_rows;
      job->panel(src + (size_t)(r * job->cols) * job->size, job->cols,
                 dst + (size_t)r * job->size, job->rows, rows, job->cols,
                 false);
    }
  }
}

static loom_status_t transpose_images(loom_kernel_context_t* ctx,
                                      const void* src, void* dst, int64_t count,
                                      int64_t rows, int64_t cols, size_t size) {
  transpose_job_t job = {
      .src = src,
      .dst = dst,
      .rows = rows,
      .cols = cols,
      .size = size,
      .panel = loom__transpose_panel(size),
  };
  return loom_thread_pool_parallel_for(loom__nn_pool(ctx), count,
                                       rows * cols + 1, transpose_units, &job);
}

loom_status_t loom__nn_run_winograd(loom_kernel_context_t* ctx,
                                    const loom__nn_geometry_t* g, bool f64,
                                    const void* x, const void* filter,
                                    void* out) {
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  size_t size = f64 ? sizeof(double) : sizeof(float);
  int64_t c = g->in_c, o = g->out_c;
  int64_t concurrency = loom__nn_concurrency(ctx);
  winograd_job_t job = {
      .g = g,
      .loops = loom__nn_loops(),
      .f64 = f64,
      .size = size,
      .input = x,
      .output = out,
      .tiles_y = (g->out_h + 1) / 2,
      .tiles_x = (g->out_w + 1) / 2,
  };
  // The plan's sizes, checked once (the units' offsets stay below them).
  const char* op = loom_kernel_context_op(ctx)->name;
  int64_t tile_dims[3] = {g->batch, job.tiles_y, job.tiles_x};
  int64_t u_dims[3] = {16, c, o};
  int64_t in_dims[4] = {g->batch, g->in_h, g->in_w, c};
  int64_t out_dims[4] = {g->batch, g->out_h, g->out_w, o};
  int64_t u_count, in_count, out_count, lanes;
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "tiles", tile_dims, 3, &job.tiles));
  LOOM_RETURN_IF_ERROR(loom__size_product_checked(op, "transformed filter",
                                                  u_dims, 3, &u_count));
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "input", in_dims, 4, &in_count));
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "output", out_dims, 4, &out_count));
  int64_t lane_dims[2] = {16, c + o};  // c, o <= INT_MAX (run_conv)
  LOOM_RETURN_IF_ERROR(
      loom__size_product_checked(op, "tile lanes", lane_dims, 2, &lanes));
  int64_t block = kWinogradBlockBytes / (lanes * (int64_t)size);
  if (block < 8) block = 8;
  int64_t units = (job.tiles + block - 1) / block;
  if (concurrency > 1 && units < 4 * concurrency) {
    int64_t share = (job.tiles + 4 * concurrency - 1) / (4 * concurrency);
    block = share < 8 ? 8 : share;
  }
  if (block > job.tiles) block = job.tiles;
  job.block = block;
  units = (job.tiles + block - 1) / block;
  // One allocation: the transformed filter, zeros, NHWC copies for NCHW
  // data, and the per-worker blocks; each part rounded up to 64 bytes.
  int64_t parts[4] = {u_count, c, g->nchw ? in_count : 0,
                      g->nchw ? out_count : 0};
  int64_t offsets[5] = {0}, worker_count;
  int64_t worker_dims[2] = {block, lanes};
  bool fits = loom__size_product(worker_dims, 2, &worker_count) &&
              loom__size_add(worker_count, o, &worker_count);
  for (int i = 0; fits && i < 4; ++i) {
    size_t bytes;
    int64_t rounded;
    fits = loom__size_bytes(parts[i], size, &bytes) &&
           loom__size_add((int64_t)bytes, 63, &rounded) &&
           loom__size_add(offsets[i], rounded / 64 * 64, &offsets[i + 1]);
  }
  if (!fits) {
    char text[128];
    return loom__size_overflow_error(
        op, "Winograd workspace", "%s (filter, zeros, input, output elements)",
        loom__format_int64s(parts, 4, text, sizeof(text)));
  }
  size_t zero_bytes = (size_t)c * size;  // within offsets[2]
  char* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom__nn_scratch(ctx, "Winograd workspace", 1,
                                        offsets[4], 1, &shared, NULL));
  loom_status_t status =
      loom__nn_scratch(ctx, "Winograd blocks", concurrency, worker_count, size,
                       &job.scratch, &job.scratch_stride);
  if (status) {
    loom_allocator_free(allocator, shared);
    return status;
  }
  int64_t co = u_count / 16;  // c * o
  char* u = shared;
  char* zeros = shared + offsets[1];
  char* nhwc_in = shared + offsets[2];
  char* nhwc_out = shared + offsets[3];
  memset(zeros, 0, zero_bytes);
  if (f64) {
    job.loops->winograd_filter_f64(filter, co, (double*)u, co, co);
  } else {
    job.loops->winograd_filter_f32(filter, co, (float*)u, co, co);
  }
  job.u = u;
  job.zeros = zeros;
  if (g->nchw) {
    status =
        transpose_images(ctx, x, nhwc_in, g->batch, c, g->in_h * g->in_w, size);
    job.input = nhwc_in;
    job.output = nhwc_out;
  }
  int64_t cost = (int64_t)(32.0 * (double)block * (double)co / 64.0) + 1;
  if (!status) {
    status = loom_thread_pool_parallel_for_with_worker_id(
        loom__nn_pool(ctx), units, cost, winograd_units, &job);
  }
  if (!status && g->nchw) {
    status = transpose_images(ctx, nhwc_out, out, g->batch, g->out_h * g->out_w,
                              o, size);
  }
  loom_allocator_free(allocator, job.scratch);
  loom_allocator_free(allocator, shared);
  return status;
}
