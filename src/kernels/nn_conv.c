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

#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_registration.h"
#include "kernels/matmul.h"
#include "kernels/nn_internal.h"

loom_status_t loom__register_nn_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_nn_conv_ops());
  LOOM_RETURN_IF_ERROR(loom__register_nn_pool_ops());
  return loom__register_nn_batchnorm_ops();
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

static bool fully_known(const loom_shape_t* shape) {
  if (shape->rank < 0) return false;
  for (int32_t i = 0; i < shape->rank; ++i) {
    if (shape->dims[i] < 0) return false;
  }
  return true;
}

static loom_shape_t unknown_image(void) {
  loom_shape_t shape = loom_shape_scalar();
  shape.rank = 4;
  for (int i = 0; i < 4; ++i) shape.dims[i] = LOOM_UNKNOWN_DIM;
  return shape;
}

static loom_status_t conv2d_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_conv_attrs(loom_shape_inference_context_attrs(context), &attrs));
  loom_shape_t input, filter, out = unknown_image();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &filter));
  if (fully_known(&input) && fully_known(&filter)) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(loom__nn_conv_geometry(&attrs, &input, &filter, &g));
    out = loom__nn_image_shape(g.nchw, g.batch, g.out_h, g.out_w, g.out_c);
  } else {
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&input, 4, &input));
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&filter, 4, &filter));
    out.dims[0] = input.dims[0];
    out.dims[attrs.nchw ? 1 : 3] = filter.dims[3];
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// TensorFlow's ConvBackpropComputeDimensionsV2: the geometry of the
// forward convolution whose gradient is taken, checked against
// out_backprop.
static loom_status_t backprop_geometry(const char* label,
                                       const loom__nn_window_attrs_t* attrs,
                                       const loom_shape_t* input,
                                       const loom_shape_t* filter,
                                       const loom_shape_t* out_backprop,
                                       loom__nn_geometry_t* g) {
  const loom_shape_t* shapes[3] = {input, filter, out_backprop};
  const char* names[3] = {"input", "filter", "out_backprop"};
  for (int i = 0; i < 3; ++i) {
    if (shapes[i]->rank != 4) {
      char text[LOOM_SHAPE_TEXT_SIZE];
      loom__format_dims(shapes[i], text);
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "%s: %s must be 4-dimensional, got shape %s",
                              label, names[i], text);
    }
  }
  char ti[LOOM_SHAPE_TEXT_SIZE], tf[LOOM_SHAPE_TEXT_SIZE],
      to[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(input, ti);
  loom__format_dims(filter, tf);
  loom__format_dims(out_backprop, to);
  if (input->dims[0] != out_backprop->dims[0]) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "%s: input and out_backprop must have the same batch size. Input "
        "batch: %lld, outbackprop batch: %lld, batch_dim: 0 (input %s, "
        "out_backprop %s)",
        label, (long long)input->dims[0], (long long)out_backprop->dims[0], ti,
        to);
  }
  loom_status_t status = loom__nn_conv_geometry(attrs, input, filter, g);
  if (status) return loom_status_annotate(status, "%s", label);
  int64_t depth = out_backprop->dims[attrs->nchw ? 1 : 3];
  if (g->out_c != depth) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s: filter and out_backprop must have the same "
                            "out_depth: %lld vs %lld (filter %s, out_backprop "
                            "%s)",
                            label, (long long)g->out_c, (long long)depth, tf,
                            to);
  }
  int64_t actual[2] = {out_backprop->dims[attrs->nchw ? 2 : 1],
                       out_backprop->dims[attrs->nchw ? 3 : 2]};
  int64_t computed[2] = {g->out_h, g->out_w};
  int64_t in[2] = {g->in_h, g->in_w}, k[2] = {g->k_h, g->k_w};
  int64_t stride[2] = {g->stride_h, g->stride_w};
  int64_t dilation[2] = {g->dil_h, g->dil_w};
  for (int i = 0; i < 2; ++i) {
    if (actual[i] != computed[i]) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "%s: Size of out_backprop doesn't match computed: actual = %lld, "
          "computed = %lld spatial_dim: %d input: %lld filter: %lld output: "
          "%lld stride: %lld dilation: %lld",
          label, (long long)actual[i], (long long)computed[i], i + 1,
          (long long)in[i], (long long)k[i], (long long)actual[i],
          (long long)stride[i], (long long)dilation[i]);
    }
  }
  return loom_ok_status();
}

// Conv2DBackpropInput (sizes at input 0) and Conv2DBackpropFilter (at 1):
// the output shape is the sizes tensor's value; with every shape known,
// the whole geometry is checked now.
static loom_status_t backprop_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data) {
  (void)user_data;
  const loom_op_def_t* op = loom_shape_inference_context_op(context);
  bool input_grad = strcmp(op->name, "Conv2DBackpropInput") == 0;
  int32_t sizes_index = input_grad ? 0 : 1;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_conv_attrs(loom_shape_inference_context_attrs(context), &attrs));
  const loom_tensor_t* sizes =
      loom_shape_inference_context_input_tensor(context, sizes_index);
  loom_shape_t out = unknown_image();
  if (!sizes) return loom_shape_inference_context_set_output(context, 0, &out);
  LOOM_RETURN_IF_ERROR(loom__nn_shape_from_tensor(
      sizes, input_grad ? "input_sizes" : "filter_sizes", &out));
  loom_shape_t other, out_backprop;
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, input_grad ? 1 : 0, &other));
  LOOM_RETURN_IF_ERROR(
      loom_shape_inference_context_input(context, 2, &out_backprop));
  if (fully_known(&other) && fully_known(&out_backprop)) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(
        backprop_geometry(op->name, &attrs, input_grad ? &out : &other,
                          input_grad ? &other : &out, &out_backprop, &g));
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

//===----------------------------------------------------------------------===//
// GEMM and patch copies
//===----------------------------------------------------------------------===//

// C = op(A) . op(B) (accumulate: C += ...), row-major, float or double.
static void gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
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

// One convolution, its data as float or double (16-bit floats widened).
typedef struct conv_job_t {
  const loom__nn_geometry_t* g;
  const loom__nn_loops_t* loops;
  bool f64;
  size_t size;         // bytes per element
  const char* input;   // x: forward and filter gradient
  const char* filter;  // HWIO; NCHW: also `wt`, the filter as [O][cg*kh*kw]
  const char* wt;
  const char* dy;  // out_backprop
  char* output;    // y, dx, or the filter-gradient chunks
  char* scratch;   // per worker (or per chunk) blocks
  size_t scratch_stride;
  int64_t k_total;  // im2col row length: kh * kw * in_c
  int64_t k_group;  // per group: kh * kw * filter_c
  int64_t o_group;  // out_c / groups
  int64_t pixels;   // out_h * out_w
  int64_t block;    // NHWC: output pixels per unit; NCHW: columns per unit
  int64_t blocks;   // units per image (NCHW, and per-image NHWC passes)
  bool direct;      // 1x1, unit stride, no padding: input is the matrix
  // Filter gradient: units [begin, end) of chunk c are c * per_chunk ...
  int64_t units, per_chunk;
  char* chunks;
  size_t chunk_stride;
} conv_job_t;

// Copies `count` elements of `size` bytes from src (step `step` elements)
// to contiguous dst.
static void gather(char* dst, const char* src, int64_t count, int64_t step,
                   size_t size) {
  if (step == 1) {
    memcpy(dst, src, (size_t)count * size);
  } else if (size == sizeof(float)) {
    uint32_t* d = (uint32_t*)dst;
    const uint32_t* s = (const uint32_t*)src;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i * step];
  } else {
    uint64_t* d = (uint64_t*)dst;
    const uint64_t* s = (const uint64_t*)src;
    for (int64_t i = 0; i < count; ++i) d[i] = s[i * step];
  }
}

// dst[i * step] += src[i].
static void scatter_add(const conv_job_t* job, char* dst, const char* src,
                        int64_t count, int64_t step) {
  if (job->f64) {
    double* d = (double*)dst;
    const double* s = (const double*)src;
    if (step == 1) {
      job->loops->add_f64(d, s, count);
    } else {
      for (int64_t i = 0; i < count; ++i) d[i * step] += s[i];
    }
  } else {
    float* d = (float*)dst;
    const float* s = (const float*)src;
    if (step == 1) {
      job->loops->add_f32(d, s, count);
    } else {
      for (int64_t i = 0; i < count; ++i) d[i * step] += s[i];
    }
  }
}

// The output columns [lo, hi) of a row whose input column ow * stride +
// offset lies inside [0, width).
static void valid_columns(int64_t offset, int64_t stride, int64_t width,
                          int64_t out_w, int64_t* lo, int64_t* hi) {
  int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t last = width - 1 - offset;
  int64_t end = last < 0 ? 0 : last / stride + 1;
  if (end > out_w) end = out_w;
  if (first > out_w) first = out_w;
  *lo = first;
  *hi = end > first ? end : first;
}

// NHWC im2col: row r of col is output pixel p0 + r (over batch, rows,
// columns), laid out [group][kh][kw][filter_c].
static void im2col_nhwc(const conv_job_t* job, int64_t p0, int64_t rows,
                        char* col) {
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  size_t c_bytes = (size_t)g->in_c * size,
         cg_bytes = (size_t)g->filter_c * size;
  int64_t n = p0 / job->pixels, rem = p0 % job->pixels;
  int64_t oh = rem / g->out_w, ow = rem % g->out_w;
  for (int64_t r = 0; r < rows; ++r) {
    char* dst = col + (size_t)(r * job->k_total) * size;
    const char* image = job->input + (size_t)(n * g->in_h * g->in_w) * c_bytes;
    int64_t h0 = oh * g->stride_h - g->pad_top;
    int64_t w0 = ow * g->stride_w - g->pad_left;
    int64_t span = (g->k_w - 1) * g->dil_w + 1;
    for (int64_t kh = 0; kh < g->k_h; ++kh) {
      int64_t h = h0 + kh * g->dil_h;
      bool row_in = h >= 0 && h < g->in_h;
      if (row_in && g->groups == 1 && g->dil_w == 1 && w0 >= 0 &&
          w0 + span <= g->in_w) {
        // The window's row is one contiguous run of k_w pixels.
        memcpy(dst + (size_t)(kh * g->k_w) * c_bytes,
               image + (size_t)(h * g->in_w + w0) * c_bytes,
               (size_t)g->k_w * c_bytes);
        continue;
      }
      for (int64_t kw = 0; kw < g->k_w; ++kw) {
        int64_t w = w0 + kw * g->dil_w;
        const char* src = row_in && w >= 0 && w < g->in_w
                              ? image + (size_t)(h * g->in_w + w) * c_bytes
                              : NULL;
        int64_t tap = kh * g->k_w + kw;
        if (g->groups == 1) {
          char* d = dst + (size_t)tap * c_bytes;
          if (src) {
            memcpy(d, src, c_bytes);
          } else {
            memset(d, 0, c_bytes);
          }
          continue;
        }
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          char* d =
              dst + (size_t)(gi * job->k_group) * size + (size_t)tap * cg_bytes;
          if (src) {
            memcpy(d, src + (size_t)gi * cg_bytes, cg_bytes);
          } else {
            memset(d, 0, cg_bytes);
          }
        }
      }
    }
    if (++ow == g->out_w) {
      ow = 0;
      if (++oh == g->out_h) {
        oh = 0;
        n++;
      }
    }
  }
}

// NHWC col2im: adds row r of dcol (output pixel p0 + r of image `n`) into
// the input gradient image dx.
static void col2im_nhwc(const conv_job_t* job, const char* dcol, int64_t p0,
                        int64_t rows, char* dx) {
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  int64_t oh = p0 / g->out_w, ow = p0 % g->out_w;
  for (int64_t r = 0; r < rows; ++r) {
    const char* src = dcol + (size_t)(r * job->k_total) * size;
    int64_t h0 = oh * g->stride_h - g->pad_top;
    int64_t w0 = ow * g->stride_w - g->pad_left;
    for (int64_t kh = 0; kh < g->k_h; ++kh) {
      int64_t h = h0 + kh * g->dil_h;
      if (h < 0 || h >= g->in_h) continue;
      for (int64_t kw = 0; kw < g->k_w; ++kw) {
        int64_t w = w0 + kw * g->dil_w;
        if (w < 0 || w >= g->in_w) continue;
        char* d = dx + (size_t)((h * g->in_w + w) * g->in_c) * size;
        int64_t tap = kh * g->k_w + kw;
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          scatter_add(
              job, d + (size_t)(gi * g->filter_c) * size,
              src + (size_t)(gi * job->k_group + tap * g->filter_c) * size,
              g->filter_c, 1);
        }
      }
    }
    if (++ow == g->out_w) {
      ow = 0;
      oh++;
    }
  }
}

// NCHW im2col of image n, output columns [q0, q0 + cols): row (c, kh, kw)
// of col holds those columns' taps.
static void im2col_nchw(const conv_job_t* job, int64_t n, int64_t q0,
                        int64_t cols, char* col) {
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  int64_t plane = g->in_h * g->in_w;
  const char* image = job->input + (size_t)(n * g->in_c * plane) * size;
  int64_t row = 0;
  for (int64_t c = 0; c < g->in_c; ++c) {
    const char* channel = image + (size_t)(c * plane) * size;
    for (int64_t kh = 0; kh < g->k_h; ++kh) {
      for (int64_t kw = 0; kw < g->k_w; ++kw, ++row) {
        char* dst = col + (size_t)(row * cols) * size;
        int64_t q = q0, end = q0 + cols;
        while (q < end) {
          int64_t oh = q / g->out_w, ow = q % g->out_w;
          int64_t len = g->out_w - ow;
          if (len > end - q) len = end - q;
          char* d = dst + (size_t)(q - q0) * size;
          int64_t h = oh * g->stride_h - g->pad_top + kh * g->dil_h;
          if (h < 0 || h >= g->in_h) {
            memset(d, 0, (size_t)len * size);
          } else {
            int64_t offset = kw * g->dil_w - g->pad_left, lo, hi;
            valid_columns(offset, g->stride_w, g->in_w, g->out_w, &lo, &hi);
            if (lo < ow) lo = ow;
            if (hi > ow + len) hi = ow + len;
            if (hi < lo) hi = lo;
            if (lo > ow + len) lo = hi = ow + len;
            memset(d, 0, (size_t)(lo - ow) * size);
            gather(d + (size_t)(lo - ow) * size,
                   channel +
                       (size_t)(h * g->in_w + lo * g->stride_w + offset) * size,
                   hi - lo, g->stride_w, size);
            memset(d + (size_t)(hi - ow) * size, 0,
                   (size_t)(ow + len - hi) * size);
          }
          q += len;
        }
      }
    }
  }
}

// NCHW col2im: adds the rows of dcol (columns [q0, q0 + cols) of image
// n's output) into the input gradient image dx ([C][H][W]).
static void col2im_nchw(const conv_job_t* job, const char* dcol, int64_t q0,
                        int64_t cols, char* dx) {
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  int64_t plane = g->in_h * g->in_w;
  int64_t row = 0;
  for (int64_t c = 0; c < g->in_c; ++c) {
    char* channel = dx + (size_t)(c * plane) * size;
    for (int64_t kh = 0; kh < g->k_h; ++kh) {
      for (int64_t kw = 0; kw < g->k_w; ++kw, ++row) {
        const char* src = dcol + (size_t)(row * cols) * size;
        int64_t q = q0, end = q0 + cols;
        while (q < end) {
          int64_t oh = q / g->out_w, ow = q % g->out_w;
          int64_t len = g->out_w - ow;
          if (len > end - q) len = end - q;
          int64_t h = oh * g->stride_h - g->pad_top + kh * g->dil_h;
          if (h >= 0 && h < g->in_h) {
            int64_t offset = kw * g->dil_w - g->pad_left, lo, hi;
            valid_columns(offset, g->stride_w, g->in_w, g->out_w, &lo, &hi);
            if (lo < ow) lo = ow;
            if (hi > ow + len) hi = ow + len;
            if (hi > lo) {
              scatter_add(
                  job,
                  channel +
                      (size_t)(h * g->in_w + lo * g->stride_w + offset) * size,
                  src + (size_t)(q - q0 + lo - ow) * size, hi - lo,
                  g->stride_w);
            }
          }
          q += len;
        }
      }
    }
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
static int64_t block_size(const conv_job_t* job, int64_t outer, int64_t total,
                          int64_t concurrency) {
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

static char* worker_scratch(const conv_job_t* job, int worker) {
  return job->scratch + job->scratch_stride * (size_t)worker;
}

// Forward, NHWC: unit = a block of output pixels.
static void forward_nhwc_units(void* arg, int64_t begin, int64_t end,
                               int worker) {
  const conv_job_t* job = arg;
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
      im2col_nhwc(job, p0, rows, col);
      a = col;
      lda = job->k_total;
    }
    for (int64_t gi = 0; gi < g->groups; ++gi) {
      gemm(
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
  const conv_job_t* job = arg;
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
      im2col_nchw(job, n, q0, cols, col);
      b = col;
      ldb = cols;
    }
    char* out =
        job->output + (size_t)(n * g->out_c * job->pixels + q0) * job->size;
    for (int64_t gi = 0; gi < g->groups; ++gi) {
      gemm(job->f64, false, false, job->o_group, cols, job->k_group,
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
  const conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->direct) {
      int64_t total = g->batch * job->pixels;
      int64_t p0 = unit * job->block, rows = total - p0;
      if (rows > job->block) rows = job->block;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        gemm(job->f64, false, true, rows, g->filter_c, job->o_group,
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
        gemm(job->f64, false, true, rows, job->k_group, job->o_group,
             dy + (size_t)(gi * job->o_group) * size, g->out_c,
             job->filter + (size_t)(gi * job->o_group) * size, g->out_c, false,
             dcol + (size_t)(gi * job->k_group) * size, job->k_total);
      }
      col2im_nhwc(job, dcol, p0, rows, dx);
    }
  }
}

// Input gradient, NCHW: unit = one image, or with `direct` (image, block
// of columns).
static void input_grad_nchw_units(void* arg, int64_t begin, int64_t end,
                                  int worker) {
  const conv_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  size_t size = job->size;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->direct) {
      int64_t n = unit / job->blocks, q0 = (unit % job->blocks) * job->block;
      int64_t cols = job->pixels - q0;
      if (cols > job->block) cols = job->block;
      for (int64_t gi = 0; gi < g->groups; ++gi) {
        gemm(job->f64, true, false, g->filter_c, cols, job->o_group,
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
        gemm(job->f64, true, false, job->k_group, cols, job->o_group,
             job->wt + (size_t)(gi * job->o_group * job->k_group) * size,
             job->k_group,
             job->dy +
                 (size_t)((n * g->out_c + gi * job->o_group) * job->pixels +
                          q0) *
                     size,
             job->pixels, false,
             dcol + (size_t)(gi * job->k_group * cols) * size, cols);
      }
      col2im_nchw(job, dcol, q0, cols, dx);
    }
  }
}

// Filter gradient: chunk c accumulates its units' products into its own
// partial sum (NHWC: [k_group][out_c] as HWIO; NCHW: [out_c][k_group]).
static void filter_grad_chunks(void* arg, int64_t begin, int64_t end,
                               int worker) {
  const conv_job_t* job = arg;
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
          im2col_nhwc(job, p0, rows, col);
          a = col;
          lda = job->k_total;
        }
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          gemm(job->f64, true, false, job->k_group, job->o_group, rows,
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
          im2col_nchw(job, n, q0, cols, col);
          b = col;
          ldb = cols;
        }
        for (int64_t gi = 0; gi < g->groups; ++gi) {
          gemm(job->f64, false, true, job->o_group, job->k_group, cols,
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

//===----------------------------------------------------------------------===//
// Winograd F(2x2, 3x3)
//===----------------------------------------------------------------------===//
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

enum {
  kWinogradBlockBytes = 512 << 10,  // V and M of one block of tiles
  kWinogradMinChannels = 16,
};

static bool use_winograd(const loom__nn_geometry_t* g) {
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
      gemm(job->f64, false, false, count, o, c,
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

static loom_status_t run_winograd(loom_kernel_context_t* ctx,
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
  job.tiles = g->batch * job.tiles_y * job.tiles_x;
  int64_t block = kWinogradBlockBytes / (16 * (c + o) * (int64_t)size);
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
  // data, and the per-worker blocks.
  size_t u_bytes = (size_t)(16 * c * o) * size;
  size_t zero_bytes = (size_t)c * size;
  size_t in_bytes =
      g->nchw ? (size_t)(g->batch * g->in_h * g->in_w * c) * size : 0;
  size_t out_bytes =
      g->nchw ? (size_t)(g->batch * g->out_h * g->out_w * o) * size : 0;
  size_t worker_bytes = (size_t)(16 * block * (c + o) + o) * size;
  char* shared = NULL;
  LOOM_RETURN_IF_ERROR(loom__nn_scratch(
      allocator, 1, u_bytes + zero_bytes + in_bytes + out_bytes + 256, &shared,
      NULL));
  loom_status_t status = loom__nn_scratch(allocator, concurrency, worker_bytes,
                                          &job.scratch, &job.scratch_stride);
  if (status) {
    loom_allocator_free(allocator, shared);
    return status;
  }
  char* u = shared;
  char* zeros = u + (u_bytes + 63) / 64 * 64;
  char* nhwc_in = zeros + (zero_bytes + 63) / 64 * 64;
  char* nhwc_out = nhwc_in + (in_bytes + 63) / 64 * 64;
  memset(zeros, 0, zero_bytes);
  if (f64) {
    job.loops->winograd_filter_f64(filter, c * o, (double*)u, c * o, c * o);
  } else {
    job.loops->winograd_filter_f32(filter, c * o, (float*)u, c * o, c * o);
  }
  job.u = u;
  job.zeros = zeros;
  if (g->nchw) {
    status =
        transpose_images(ctx, x, nhwc_in, g->batch, c, g->in_h * g->in_w, size);
    job.input = nhwc_in;
    job.output = nhwc_out;
  }
  int64_t cost = (int64_t)(32.0 * (double)(block * c * o) / 64.0) + 1;
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

// Runs one convolution on float or double data. The pointers are the
// float/double buffers (16-bit inputs already widened).
static loom_status_t run_conv(loom_kernel_context_t* ctx, conv_kind_t kind,
                              const loom__nn_geometry_t* g, bool f64,
                              const void* x, const void* filter, const void* dy,
                              void* out) {
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  size_t size = f64 ? sizeof(double) : sizeof(float);
  int64_t concurrency = loom__nn_concurrency(ctx);
  conv_job_t job = {
      .g = g,
      .loops = loom__nn_loops(),
      .f64 = f64,
      .size = size,
      .input = x,
      .filter = filter,
      .dy = dy,
      .output = out,
      .k_total = g->k_h * g->k_w * g->in_c,
      .k_group = g->k_h * g->k_w * g->filter_c,
      .o_group = g->out_c / g->groups,
      .pixels = g->out_h * g->out_w,
  };
  job.direct = g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 &&
               g->stride_w == 1 && g->pad_top == 0 && g->pad_left == 0 &&
               g->out_h == g->in_h && g->out_w == g->in_w;
  int64_t int_max = INT_MAX;
  if (job.k_total > int_max || g->batch * job.pixels > int_max ||
      g->in_c * g->in_h * g->in_w > int_max || g->out_c > int_max) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "convolutions with matrix dimensions above %d "
                            "are not supported",
                            INT_MAX);
  }
  loom__blas_single_threaded();
  if (kind == CONV_FORWARD && use_winograd(g)) {
    return run_winograd(ctx, g, f64, x, filter, out);
  }
  char* wt = NULL;
  loom_status_t status = loom_ok_status();
  if (g->nchw) {
    // The filter as [O][cg * kh * kw] (the gradient is produced so).
    status = loom__nn_scratch(
        allocator, 1, (size_t)(job.k_group * g->out_c) * size, &wt, NULL);
    if (status) return status;
    if (kind != CONV_FILTER_GRAD) transpose_filter(g, size, filter, wt, false);
    job.wt = wt;
  }
  int64_t outer = g->nchw ? g->batch : 1;
  int64_t total = g->nchw ? job.pixels : g->batch * job.pixels;
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
      status = loom__nn_scratch(allocator, units,
                                (size_t)(job.k_group * g->out_c) * size,
                                &job.chunks, &job.chunk_stride);
      unit_flops *= (double)job.per_chunk;
      break;
    }
  }
  // About 64 multiply-adds per cost unit.
  int64_t cost = (int64_t)(unit_flops / 64.0) + 1;
  if (!status && !job.direct) {
    // Per-worker im2col (or gradient column) blocks.
    status = loom__nn_scratch(allocator, concurrency,
                              (size_t)(job.block * job.k_total) * size,
                              &job.scratch, &job.scratch_stride);
  }
  if (!status && units > 0) {
    status = loom_thread_pool_parallel_for_with_worker_id(
        loom__nn_pool(ctx), units, cost, fn, &job);
  }
  if (!status && kind == CONV_FILTER_GRAD) {
    // Sum the chunks in order, into HWIO.
    int64_t count = job.k_group * g->out_c;
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

static void conv_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  const char* name = loom_kernel_context_op(ctx)->name;
  conv_kind_t kind = strcmp(name, "Conv2D") == 0 ? CONV_FORWARD
                     : strcmp(name, "Conv2DBackpropInput") == 0
                         ? CONV_INPUT_GRAD
                         : CONV_FILTER_GRAD;
  loom__nn_window_attrs_t attrs;
  loom_status_t status =
      loom__nn_conv_attrs(loom_kernel_context_attrs(ctx), &attrs);
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
        status = backprop_geometry(name, &attrs, &x_shape, &filter_shape,
                                   loom_tensor_shape(dy), &g);
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
        status = backprop_geometry(name, &attrs, &x_shape, &filter_shape,
                                   loom_tensor_shape(dy), &g);
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
  char* scratch = NULL;
  status = loom__nn_scratch(allocator, 1,
                            (size_t)(nx + nf + nd + out_count) * sizeof(float),
                            &scratch, NULL);
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

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

#define CONV_ATTRS                                       \
  "strides: list(int)", "use_cudnn_on_gpu: bool = true", \
      "padding: {'SAME', 'VALID', 'EXPLICIT'}",          \
      "explicit_paddings: list(int) = []",               \
      "data_format: {'NHWC', 'NCHW'} = 'NHWC'",          \
      "dilations: list(int) = [1, 1, 1, 1]"

static const loom__builtin_op_t kOps[] = {
    {.name = "Conv2D",
     .inputs = {"input: T", "filter: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double, int32}", CONV_ATTRS},
     .shape_fn = conv2d_shape_fn},
    {.name = "Conv2DBackpropInput",
     .inputs = {"input_sizes: int32", "filter: T", "out_backprop: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double, int32}", CONV_ATTRS},
     .shape_fn = backprop_shape_fn},
    {.name = "Conv2DBackpropFilter",
     .inputs = {"input: T", "filter_sizes: int32", "out_backprop: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {half, bfloat16, float, double}", CONV_ATTRS},
     .shape_fn = backprop_shape_fn},
};

#define CONV_TYPES \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Conv2D",
     .compute = conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES}},
    {.op_name = "Conv2DBackpropInput",
     .compute = conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES},
     .host_memory = {"input_sizes"}},
    {.op_name = "Conv2DBackpropFilter",
     .compute = conv_compute,
     .type_attr = "T",
     .types = {CONV_TYPES},
     .host_memory = {"filter_sizes"}},
};

loom_status_t loom__register_nn_conv_ops(void) {
  loom__blas_single_threaded();
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
