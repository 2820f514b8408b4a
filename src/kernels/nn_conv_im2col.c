// The copies between images and the matrices the convolution GEMMs
// multiply: im2col gathers the patches a block of outputs reads, col2im
// scatters a gradient's patches back, adding where they overlap.

#include <string.h>

#include "kernels/nn_conv.h"

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
static void scatter_add(const loom__nn_conv_job_t* job, char* dst,
                        const char* src, int64_t count, int64_t step) {
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
void loom__nn_im2col_nhwc(const loom__nn_conv_job_t* job, int64_t p0,
                          int64_t rows, char* col) {
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
void loom__nn_col2im_nhwc(const loom__nn_conv_job_t* job, const char* dcol,
                          int64_t p0, int64_t rows, char* dx) {
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
void loom__nn_im2col_nchw(const loom__nn_conv_job_t* job, int64_t n, int64_t q0,
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
void loom__nn_col2im_nchw(const loom__nn_conv_job_t* job, const char* dcol,
                          int64_t q0, int64_t cols, char* dx) {
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
