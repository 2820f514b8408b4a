// Inner loops of the neural-network family, compiled once per ISA level
// (see isa.h): plain C over contiguous channel vectors or image rows that
// the compiler vectorises for the level. Sums of float data accumulate in
// double, in independent lanes so they vectorise without reassociation.

#include <math.h>
#include <stdint.h>

#include "kernels/nn_internal.h"

// The loops below write outputs that never alias their inputs: GCC's
// vectoriser may assume so. Clang has no plain equivalent (its
// vectorize(assume_safety) warns where it cannot vectorise, e.g. under
// ASan), and these loops are built with GCC for release.
#if defined(__GNUC__) && !defined(__clang__)
#define LOOM_IVDEP _Pragma("GCC ivdep")
#else
#define LOOM_IVDEP
#endif

// Independent accumulators of the plane reductions.
enum { kLanes = 16 };

#define VECTOR_LOOPS(suffix, T)                                              \
  static void LOOM_ISA_FN(add_##suffix)(T* restrict dst,                     \
                                        const T* restrict src, int64_t n) {  \
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];                        \
  }                                                                          \
  static void LOOM_ISA_FN(axpy_##suffix)(                                    \
      T* restrict dst, const T* restrict src, T s, int64_t n) {              \
    for (int64_t i = 0; i < n; ++i) dst[i] += s * src[i];                    \
  }                                                                          \
  static void LOOM_ISA_FN(scale_##suffix)(T* restrict dst, T s, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) dst[i] *= s;                             \
  }                                                                          \
  static void LOOM_ISA_FN(argmax_##suffix)(                                  \
      T* restrict best, int64_t* restrict where, const T* restrict x,        \
      int64_t position, int64_t n) {                                         \
    for (int64_t i = 0; i < n; ++i) {                                        \
      int greater = x[i] > best[i];                                          \
      best[i] = greater ? x[i] : best[i];                                    \
      where[i] = greater ? position : where[i];                              \
    }                                                                        \
  }

VECTOR_LOOPS(f32, float)
VECTOR_LOOPS(f64, double)

#define MAX_LOOP(suffix, T)                                                   \
  static void LOOM_ISA_FN(max_##suffix)(T* restrict acc, const T* restrict x, \
                                        int64_t n) {                          \
    for (int64_t i = 0; i < n; ++i) acc[i] = x[i] > acc[i] ? x[i] : acc[i];   \
  }

MAX_LOOP(f32, float)
MAX_LOOP(f64, double)
MAX_LOOP(i8, int8_t)
MAX_LOOP(u8, uint8_t)
MAX_LOOP(i16, int16_t)
MAX_LOOP(u16, uint16_t)
MAX_LOOP(i32, int32_t)
MAX_LOOP(i64, int64_t)

// The columns of output row elements [lo, hi) whose input column
// ow * stride + offset lies in [0, in_w).
static inline void column_range(int64_t offset, int64_t stride, int64_t in_w,
                                int64_t out_w, int64_t* lo, int64_t* hi) {
  // ow * stride + offset >= 0  <=>  ow >= ceil(-offset / stride)
  int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // ow * stride + offset <= in_w - 1
  int64_t last = in_w - 1 - offset;
  int64_t end = last < 0 ? 0 : last / stride + 1;
  if (end > out_w) end = out_w;
  *lo = first;
  *hi = end > first ? end : first;
}

// NCHW pooling of one plane: each window row adds (or maxes) its shifted
// input row into the output row, so the inner loop runs over contiguous
// output columns.
#define MAX_PLANE_LOOP(suffix, T, LOWEST)                                 \
  static void LOOM_ISA_FN(max_plane_##suffix)(                            \
      const T* restrict in, T* restrict out, const loom__nn_plane_t* p) { \
    for (int64_t oh = p->oh0; oh < p->oh1; ++oh) {                        \
      T* restrict row = out + oh * p->out_w;                              \
      for (int64_t ow = 0; ow < p->out_w; ++ow) row[ow] = LOWEST;         \
      int64_t h0 = oh * p->stride_h - p->pad_top;                         \
      for (int64_t kh = 0; kh < p->k_h; ++kh) {                           \
        int64_t h = h0 + kh;                                              \
        if (h < 0 || h >= p->in_h) continue;                              \
        const T* restrict src = in + h * p->in_w;                         \
        for (int64_t kw = 0; kw < p->k_w; ++kw) {                         \
          int64_t offset = kw - p->pad_left, lo, hi;                      \
          column_range(offset, p->stride_w, p->in_w, p->out_w, &lo, &hi); \
          if (p->stride_w == 1) {                                         \
            const T* restrict s = src + offset;                           \
            for (int64_t ow = lo; ow < hi; ++ow) {                        \
              row[ow] = s[ow] > row[ow] ? s[ow] : row[ow];                \
            }                                                             \
          } else {                                                        \
            for (int64_t ow = lo; ow < hi; ++ow) {                        \
              T v = src[ow * p->stride_w + offset];                       \
              row[ow] = v > row[ow] ? v : row[ow];                        \
            }                                                             \
          }                                                               \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  }

#define AVG_PLANE_LOOP(suffix, T)                                         \
  static void LOOM_ISA_FN(avg_plane_##suffix)(                            \
      const T* restrict in, T* restrict out, const loom__nn_plane_t* p) { \
    for (int64_t oh = p->oh0; oh < p->oh1; ++oh) {                        \
      T* restrict row = out + oh * p->out_w;                              \
      for (int64_t ow = 0; ow < p->out_w; ++ow) row[ow] = 0;              \
      int64_t h0 = oh * p->stride_h - p->pad_top, rows = 0;               \
      for (int64_t kh = 0; kh < p->k_h; ++kh) {                           \
        int64_t h = h0 + kh;                                              \
        if (h < 0 || h >= p->in_h) continue;                              \
        rows++;                                                           \
        const T* restrict src = in + h * p->in_w;                         \
        for (int64_t kw = 0; kw < p->k_w; ++kw) {                         \
          int64_t offset = kw - p->pad_left, lo, hi;                      \
          column_range(offset, p->stride_w, p->in_w, p->out_w, &lo, &hi); \
          if (p->stride_w == 1) {                                         \
            const T* restrict s = src + offset;                           \
            for (int64_t ow = lo; ow < hi; ++ow) row[ow] += s[ow];        \
          } else {                                                        \
            for (int64_t ow = lo; ow < hi; ++ow) {                        \
              row[ow] += src[ow * p->stride_w + offset];                  \
            }                                                             \
          }                                                               \
        }                                                                 \
      }                                                                   \
      for (int64_t ow = 0; ow < p->out_w; ++ow) {                         \
        int64_t w0 = ow * p->stride_w - p->pad_left, w1 = w0 + p->k_w;    \
        if (w0 < 0) w0 = 0;                                               \
        if (w1 > p->in_w) w1 = p->in_w;                                   \
        int64_t count = rows * (w1 - w0);                                 \
        row[ow] = count > 0 ? row[ow] / (T)count : (T)0;                  \
      }                                                                   \
    }                                                                     \
  }

MAX_PLANE_LOOP(f32, float, -INFINITY)
MAX_PLANE_LOOP(f64, double, -INFINITY)
MAX_PLANE_LOOP(i8, int8_t, INT8_MIN)
MAX_PLANE_LOOP(u8, uint8_t, 0)
MAX_PLANE_LOOP(i16, int16_t, INT16_MIN)
MAX_PLANE_LOOP(u16, uint16_t, 0)
MAX_PLANE_LOOP(i32, int32_t, INT32_MIN)
MAX_PLANE_LOOP(i64, int64_t, INT64_MIN)
AVG_PLANE_LOOP(f32, float)
AVG_PLANE_LOOP(f64, double)

// Batch normalisation over channels-last rows and channels-first planes.
#define NORM_LOOPS(suffix, T)                                                 \
  static void LOOM_ISA_FN(affine_rows_##suffix)(                              \
      const T* x, T* y, const T* restrict m, const T* restrict a,             \
      const T* restrict b, int64_t rows, int64_t c) {                         \
    for (int64_t r = 0; r < rows; ++r) {                                      \
      const T* xr = x + r * c;                                                \
      T* yr = y + r * c;                                                      \
      for (int64_t j = 0; j < c; ++j) yr[j] = (xr[j] - m[j]) * a[j] + b[j];   \
    }                                                                         \
  }                                                                           \
  static void LOOM_ISA_FN(sum_rows_##suffix)(                                 \
      const T* restrict x, double* restrict acc, int64_t rows, int64_t c) {   \
    for (int64_t r = 0; r < rows; ++r) {                                      \
      const T* restrict xr = x + r * c;                                       \
      for (int64_t j = 0; j < c; ++j) acc[j] += (double)xr[j];                \
    }                                                                         \
  }                                                                           \
  static void LOOM_ISA_FN(sumsq_rows_##suffix)(                               \
      const T* restrict x, const double* restrict mean, double* restrict acc, \
      int64_t rows, int64_t c) {                                              \
    for (int64_t r = 0; r < rows; ++r) {                                      \
      const T* restrict xr = x + r * c;                                       \
      for (int64_t j = 0; j < c; ++j) {                                       \
        double d = (double)xr[j] - mean[j];                                   \
        acc[j] += d * d;                                                      \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void LOOM_ISA_FN(affine_plane_##suffix)(const T* x, T* y, T m, T a,  \
                                                 T b, int64_t n) {            \
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * a + b;                \
  }                                                                           \
  static double LOOM_ISA_FN(sum_plane_##suffix)(const T* restrict x,          \
                                                int64_t n) {                  \
    double lane[kLanes] = {0};                                                \
    int64_t i = 0;                                                            \
    for (; i + kLanes <= n; i += kLanes) {                                    \
      for (int j = 0; j < kLanes; ++j) lane[j] += (double)x[i + j];           \
    }                                                                         \
    for (int j = 0; i + j < n; ++j) lane[j] += (double)x[i + j];              \
    double s = 0;                                                             \
    for (int j = 0; j < kLanes; ++j) s += lane[j];                            \
    return s;                                                                 \
  }                                                                           \
  static double LOOM_ISA_FN(sumsq_plane_##suffix)(const T* restrict x,        \
                                                  double mean, int64_t n) {   \
    double lane[kLanes] = {0};                                                \
    int64_t i = 0;                                                            \
    for (; i + kLanes <= n; i += kLanes) {                                    \
      for (int j = 0; j < kLanes; ++j) {                                      \
        double d = (double)x[i + j] - mean;                                   \
        lane[j] += d * d;                                                     \
      }                                                                       \
    }                                                                         \
    for (int j = 0; i + j < n; ++j) {                                         \
      double d = (double)x[i + j] - mean;                                     \
      lane[j] += d * d;                                                       \
    }                                                                         \
    double s = 0;                                                             \
    for (int j = 0; j < kLanes; ++j) s += lane[j];                            \
    return s;                                                                 \
  }

NORM_LOOPS(f32, float)
NORM_LOOPS(f64, double)

static void LOOM_ISA_FN(grad_sums_rows_f32)(const float* restrict dy,
                                            const float* restrict x,
                                            const double* restrict mean,
                                            double* restrict dsum,
                                            double* restrict dxc, int64_t rows,
                                            int64_t c) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* restrict dr = dy + r * c;
    const float* restrict xr = x + r * c;
    for (int64_t j = 0; j < c; ++j) {
      dsum[j] += (double)dr[j];
      dxc[j] += (double)dr[j] * ((double)xr[j] - mean[j]);
    }
  }
}

static void LOOM_ISA_FN(grad_apply_rows_f32)(const float* dy, const float* x,
                                             float* dx, const float* restrict a,
                                             const float* restrict dmean,
                                             const float* restrict mean,
                                             const float* restrict k,
                                             int64_t rows, int64_t c) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* dr = dy + r * c;
    const float* xr = x + r * c;
    float* out = dx + r * c;
    for (int64_t j = 0; j < c; ++j) {
      out[j] = a[j] * (dr[j] - dmean[j] - (xr[j] - mean[j]) * k[j]);
    }
  }
}

static void LOOM_ISA_FN(grad_sums_plane_f32)(const float* restrict dy,
                                             const float* restrict x,
                                             double mean, double* dsum,
                                             double* dxc, int64_t n) {
  double ls[kLanes] = {0}, lx[kLanes] = {0};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      double d = (double)dy[i + j];
      ls[j] += d;
      lx[j] += d * ((double)x[i + j] - mean);
    }
  }
  for (int j = 0; i + j < n; ++j) {
    double d = (double)dy[i + j];
    ls[j] += d;
    lx[j] += d * ((double)x[i + j] - mean);
  }
  double s = 0, sx = 0;
  for (int j = 0; j < kLanes; ++j) {
    s += ls[j];
    sx += lx[j];
  }
  *dsum += s;
  *dxc += sx;
}

static void LOOM_ISA_FN(grad_apply_plane_f32)(const float* dy, const float* x,
                                              float* dx, float a, float dmean,
                                              float mean, float k, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    dx[i] = a * (dy[i] - dmean - (x[i] - mean) * k);
  }
}

// Winograd F(2x2, 3x3) transforms (Lavin and Gray), lane by lane; the
// loops run over n contiguous lanes, so they vectorise across channels.
// The 16 input and output streams never overlap (ivdep; GCC 12 refuses to
// vectorise these loops when the pointers are declared restrict).
#define WINOGRAD_LOOPS(suffix, T)                                        \
  static void LOOM_ISA_FN(winograd_filter_##suffix)(                     \
      const T* g, int64_t g_stride, T* u, int64_t u_stride, int64_t n) { \
    LOOM_IVDEP for (int64_t l = 0; l < n; ++l) {                         \
      T a[4][3];                                                         \
      for (int c = 0; c < 3; ++c) {                                      \
        T g0 = g[c * g_stride + l], g1 = g[(3 + c) * g_stride + l];      \
        T g2 = g[(6 + c) * g_stride + l];                                \
        a[0][c] = g0;                                                    \
        a[1][c] = (T)0.5 * (g0 + g1 + g2);                               \
        a[2][c] = (T)0.5 * (g0 - g1 + g2);                               \
        a[3][c] = g2;                                                    \
      }                                                                  \
      for (int r = 0; r < 4; ++r) {                                      \
        u[(4 * r + 0) * u_stride + l] = a[r][0];                         \
        u[(4 * r + 1) * u_stride + l] =                                  \
            (T)0.5 * (a[r][0] + a[r][1] + a[r][2]);                      \
        u[(4 * r + 2) * u_stride + l] =                                  \
            (T)0.5 * (a[r][0] - a[r][1] + a[r][2]);                      \
        u[(4 * r + 3) * u_stride + l] = a[r][2];                         \
      }                                                                  \
    }                                                                    \
  }                                                                      \
  static void LOOM_ISA_FN(winograd_input_##suffix)(                      \
      const T* const* d, T* v, int64_t v_stride, int64_t n) {            \
    const T *d00 = d[0], *d01 = d[1], *d02 = d[2];                       \
    const T *d03 = d[3], *d10 = d[4], *d11 = d[5];                       \
    const T *d12 = d[6], *d13 = d[7], *d20 = d[8];                       \
    const T *d21 = d[9], *d22 = d[10];                                   \
    const T *d23 = d[11], *d30 = d[12];                                  \
    const T *d31 = d[13], *d32 = d[14];                                  \
    const T* d33 = d[15];                                                \
    T *v00 = v, *v01 = v + v_stride;                                     \
    T *v02 = v + 2 * v_stride, *v03 = v + 3 * v_stride;                  \
    T *v10 = v + 4 * v_stride, *v11 = v + 5 * v_stride;                  \
    T *v12 = v + 6 * v_stride, *v13 = v + 7 * v_stride;                  \
    T *v20 = v + 8 * v_stride, *v21 = v + 9 * v_stride;                  \
    T *v22 = v + 10 * v_stride, *v23 = v + 11 * v_stride;                \
    T *v30 = v + 12 * v_stride, *v31 = v + 13 * v_stride;                \
    T *v32 = v + 14 * v_stride, *v33 = v + 15 * v_stride;                \
    LOOM_IVDEP for (int64_t l = 0; l < n; ++l) {                         \
      /* t = B^T d, column by column; then V = t B, row by row. */       \
      T t00 = d00[l] - d20[l], t01 = d01[l] - d21[l];                    \
      T t02 = d02[l] - d22[l], t03 = d03[l] - d23[l];                    \
      T t10 = d10[l] + d20[l], t11 = d11[l] + d21[l];                    \
      T t12 = d12[l] + d22[l], t13 = d13[l] + d23[l];                    \
      T t20 = d20[l] - d10[l], t21 = d21[l] - d11[l];                    \
      T t22 = d22[l] - d12[l], t23 = d23[l] - d13[l];                    \
      T t30 = d10[l] - d30[l], t31 = d11[l] - d31[l];                    \
      T t32 = d12[l] - d32[l], t33 = d13[l] - d33[l];                    \
      v00[l] = t00 - t02;                                                \
      v01[l] = t01 + t02;                                                \
      v02[l] = t02 - t01;                                                \
      v03[l] = t01 - t03;                                                \
      v10[l] = t10 - t12;                                                \
      v11[l] = t11 + t12;                                                \
      v12[l] = t12 - t11;                                                \
      v13[l] = t11 - t13;                                                \
      v20[l] = t20 - t22;                                                \
      v21[l] = t21 + t22;                                                \
      v22[l] = t22 - t21;                                                \
      v23[l] = t21 - t23;                                                \
      v30[l] = t30 - t32;                                                \
      v31[l] = t31 + t32;                                                \
      v32[l] = t32 - t31;                                                \
      v33[l] = t31 - t33;                                                \
    }                                                                    \
  }                                                                      \
  static void LOOM_ISA_FN(winograd_output_##suffix)(                     \
      const T* m, int64_t m_stride, T* const* y, int64_t n) {            \
    const T *m00 = m, *m01 = m + m_stride;                               \
    const T *m02 = m + 2 * m_stride, *m03 = m + 3 * m_stride;            \
    const T *m10 = m + 4 * m_stride, *m11 = m + 5 * m_stride;            \
    const T *m12 = m + 6 * m_stride, *m13 = m + 7 * m_stride;            \
    const T *m20 = m + 8 * m_stride, *m21 = m + 9 * m_stride;            \
    const T* m22 = m + 10 * m_stride;                                    \
    const T* m23 = m + 11 * m_stride;                                    \
    const T* m30 = m + 12 * m_stride;                                    \
    const T* m31 = m + 13 * m_stride;                                    \
    const T* m32 = m + 14 * m_stride;                                    \
    const T* m33 = m + 15 * m_stride;                                    \
    T *y0 = y[0], *y1 = y[1], *y2 = y[2];                                \
    T* y3 = y[3];                                                        \
    LOOM_IVDEP for (int64_t l = 0; l < n; ++l) {                         \
      /* s = A^T M, column by column; then Y = s A. */                   \
      T s00 = m00[l] + m10[l] + m20[l], s01 = m01[l] + m11[l] + m21[l];  \
      T s02 = m02[l] + m12[l] + m22[l], s03 = m03[l] + m13[l] + m23[l];  \
      T s10 = m10[l] - m20[l] - m30[l], s11 = m11[l] - m21[l] - m31[l];  \
      T s12 = m12[l] - m22[l] - m32[l], s13 = m13[l] - m23[l] - m33[l];  \
      y0[l] = s00 + s01 + s02;                                           \
      y1[l] = s01 - s02 - s03;                                           \
      y2[l] = s10 + s11 + s12;                                           \
      y3[l] = s11 - s12 - s13;                                           \
    }                                                                    \
  }

WINOGRAD_LOOPS(f32, float)
WINOGRAD_LOOPS(f64, double)

const loom__nn_loops_t LOOM_ISA_FN(loom__nn_loops) = {
    .add_f32 = LOOM_ISA_FN(add_f32),
    .add_f64 = LOOM_ISA_FN(add_f64),
    .axpy_f32 = LOOM_ISA_FN(axpy_f32),
    .axpy_f64 = LOOM_ISA_FN(axpy_f64),
    .scale_f32 = LOOM_ISA_FN(scale_f32),
    .scale_f64 = LOOM_ISA_FN(scale_f64),
    .max_f32 = LOOM_ISA_FN(max_f32),
    .max_f64 = LOOM_ISA_FN(max_f64),
    .max_i8 = LOOM_ISA_FN(max_i8),
    .max_u8 = LOOM_ISA_FN(max_u8),
    .max_i16 = LOOM_ISA_FN(max_i16),
    .max_u16 = LOOM_ISA_FN(max_u16),
    .max_i32 = LOOM_ISA_FN(max_i32),
    .max_i64 = LOOM_ISA_FN(max_i64),
    .argmax_f32 = LOOM_ISA_FN(argmax_f32),
    .argmax_f64 = LOOM_ISA_FN(argmax_f64),
    .max_plane_f32 = LOOM_ISA_FN(max_plane_f32),
    .max_plane_f64 = LOOM_ISA_FN(max_plane_f64),
    .max_plane_i8 = LOOM_ISA_FN(max_plane_i8),
    .max_plane_u8 = LOOM_ISA_FN(max_plane_u8),
    .max_plane_i16 = LOOM_ISA_FN(max_plane_i16),
    .max_plane_u16 = LOOM_ISA_FN(max_plane_u16),
    .max_plane_i32 = LOOM_ISA_FN(max_plane_i32),
    .max_plane_i64 = LOOM_ISA_FN(max_plane_i64),
    .avg_plane_f32 = LOOM_ISA_FN(avg_plane_f32),
    .avg_plane_f64 = LOOM_ISA_FN(avg_plane_f64),
    .affine_rows_f32 = LOOM_ISA_FN(affine_rows_f32),
    .affine_rows_f64 = LOOM_ISA_FN(affine_rows_f64),
    .sum_rows_f32 = LOOM_ISA_FN(sum_rows_f32),
    .sum_rows_f64 = LOOM_ISA_FN(sum_rows_f64),
    .sumsq_rows_f32 = LOOM_ISA_FN(sumsq_rows_f32),
    .sumsq_rows_f64 = LOOM_ISA_FN(sumsq_rows_f64),
    .grad_sums_rows_f32 = LOOM_ISA_FN(grad_sums_rows_f32),
    .grad_apply_rows_f32 = LOOM_ISA_FN(grad_apply_rows_f32),
    .affine_plane_f32 = LOOM_ISA_FN(affine_plane_f32),
    .affine_plane_f64 = LOOM_ISA_FN(affine_plane_f64),
    .sum_plane_f32 = LOOM_ISA_FN(sum_plane_f32),
    .sum_plane_f64 = LOOM_ISA_FN(sum_plane_f64),
    .sumsq_plane_f32 = LOOM_ISA_FN(sumsq_plane_f32),
    .sumsq_plane_f64 = LOOM_ISA_FN(sumsq_plane_f64),
    .grad_sums_plane_f32 = LOOM_ISA_FN(grad_sums_plane_f32),
    .grad_apply_plane_f32 = LOOM_ISA_FN(grad_apply_plane_f32),
    .winograd_filter_f32 = LOOM_ISA_FN(winograd_filter_f32),
    .winograd_filter_f64 = LOOM_ISA_FN(winograd_filter_f64),
    .winograd_input_f32 = LOOM_ISA_FN(winograd_input_f32),
    .winograd_input_f64 = LOOM_ISA_FN(winograd_input_f64),
    .winograd_output_f32 = LOOM_ISA_FN(winograd_output_f32),
    .winograd_output_f64 = LOOM_ISA_FN(winograd_output_f64),
};
