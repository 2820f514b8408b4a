// MaxPool, AvgPool, MaxPoolGrad, MaxPoolGradGrad and AvgPoolGrad with
// TensorFlow's signatures, rules and messages, NHWC and NCHW.
//
// MaxPool skips padding (a window sees only real elements); AvgPool
// divides by the number of real elements in the window. MaxPoolGrad
// routes each gradient to the first maximum of its window in row-major
// order (recomputed from orig_input, as TensorFlow's CPU kernel does).
// MaxPoolGradGrad is its transpose: each output takes the grad element
// (shaped like orig_input) at that same first maximum of its window, so
// the two are exact adjoints of each other (orig_output gives the shape
// only).
// Channels-last work runs on channel vectors (nn_loops.c), channels-first
// on whole rows of a plane. Half and bfloat16 are widened to float.

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/elementwise.h"
#include "kernels/nn_internal.h"

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

static loom_shape_t pooled_shape(const loom__nn_geometry_t* g) {
  return loom__nn_image_shape(g->nchw, g->batch, g->out_h, g->out_w, g->in_c);
}

loom_status_t loom__nn_pool_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_pool_attrs(loom_shape_inference_context_op(context)->name,
                          loom_shape_inference_context_attrs(context), &attrs));
  loom_shape_t input, out = loom__nn_unknown_image();
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &input));
  if (loom__nn_fully_known(&input)) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(loom__nn_pool_geometry(&attrs, &input, &g));
    out = pooled_shape(&g);
  } else {
    LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&input, 4, &input));
    out.dims[0] = input.dims[0];
    int c = attrs.nchw ? 1 : 3;
    out.dims[c] = input.dims[c];
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// A gradient argument must have the pooled shape.
static loom_status_t expect_pooled(const loom__nn_geometry_t* g,
                                   const loom_shape_t* shape,
                                   const char* what) {
  loom_shape_t expected = pooled_shape(g);
  if (loom_shape_equal(&expected, shape)) return loom_ok_status();
  char te[LOOM_SHAPE_TEXT_SIZE], tg[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(&expected, te);
  loom__format_dims(shape, tg);
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Expected %s shape to be %s, but got %s", what, te,
                          tg);
}

// MaxPoolGrad: orig_input, orig_output and grad checked against each other.
static loom_status_t max_grad_geometry(const loom__nn_window_attrs_t* attrs,
                                       const loom_shape_t* input,
                                       const loom_shape_t* output,
                                       const loom_shape_t* grad,
                                       loom__nn_geometry_t* g) {
  LOOM_RETURN_IF_ERROR(loom__nn_pool_geometry(attrs, input, g));
  LOOM_RETURN_IF_ERROR(expect_pooled(g, output, "orig_output"));
  return expect_pooled(g, grad, "grad");
}

// The pool attributes and the three input shapes of a max-pool gradient
// op (MaxPoolGrad, MaxPoolGradGrad); *out_known when all are fully known.
static loom_status_t grad_inputs(loom_shape_inference_context_t* context,
                                 loom__nn_window_attrs_t* attrs,
                                 loom_shape_t* shapes, bool* out_known) {
  LOOM_RETURN_IF_ERROR(
      loom__nn_pool_attrs(loom_shape_inference_context_op(context)->name,
                          loom_shape_inference_context_attrs(context), attrs));
  *out_known = true;
  for (int32_t i = 0; i < 3; ++i) {
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_input(context, i, &shapes[i]));
    *out_known = *out_known && loom__nn_fully_known(&shapes[i]);
  }
  return loom_ok_status();
}

loom_status_t loom__nn_max_pool_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  loom_shape_t shapes[3];
  bool known = false;
  LOOM_RETURN_IF_ERROR(grad_inputs(context, &attrs, shapes, &known));
  if (known) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(
        max_grad_geometry(&attrs, &shapes[0], &shapes[1], &shapes[2], &g));
  }
  loom_shape_t out;
  LOOM_RETURN_IF_ERROR(loom_shape_with_rank(&shapes[0], 4, &out));
  return loom_shape_inference_context_set_output(context, 0, &out);
}

// MaxPoolGradGrad: orig_input, orig_output and grad checked against each
// other (TensorFlow's kernel checks and messages).
static loom_status_t max_grad_grad_geometry(
    const loom__nn_window_attrs_t* attrs, const loom_shape_t* input,
    const loom_shape_t* output, const loom_shape_t* grad,
    loom__nn_geometry_t* g) {
  const loom_shape_t* shapes[3] = {input, output, grad};
  static const char* const kNames[3] = {"tensor_in", "tensor_out",
                                        "out_grad_backprop"};
  for (int i = 0; i < 3; ++i) {
    if (shapes[i]->rank == 4) continue;
    char text[LOOM_SHAPE_TEXT_SIZE];
    loom__format_dims(shapes[i], text);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s must be 4-dimensional, got shape %s", kNames[i],
                            text);
  }
  LOOM_RETURN_IF_ERROR(loom__nn_pool_geometry(attrs, input, g));
  LOOM_RETURN_IF_ERROR(expect_pooled(g, output, "orig_output"));
  if (loom_shape_equal(input, grad)) return loom_ok_status();
  char te[LOOM_SHAPE_TEXT_SIZE], tg[LOOM_SHAPE_TEXT_SIZE];
  loom__format_dims(input, te);
  loom__format_dims(grad, tg);
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Expected grad shape to be %s, but got %s", te, tg);
}

// The pooled shape of orig_input (TensorFlow's MaxPoolShape), with every
// check once all three shapes are known.
loom_status_t loom__nn_max_pool_grad_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  loom_shape_t shapes[3];
  bool known = false;
  LOOM_RETURN_IF_ERROR(grad_inputs(context, &attrs, shapes, &known));
  if (known) {
    loom__nn_geometry_t g;
    LOOM_RETURN_IF_ERROR(
        max_grad_grad_geometry(&attrs, &shapes[0], &shapes[1], &shapes[2], &g));
    loom_shape_t out = pooled_shape(&g);
    return loom_shape_inference_context_set_output(context, 0, &out);
  }
  return loom__nn_pool_shape_fn(context, user_data);
}

loom_status_t loom__nn_avg_pool_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data) {
  (void)user_data;
  loom__nn_window_attrs_t attrs;
  LOOM_RETURN_IF_ERROR(
      loom__nn_pool_attrs(loom_shape_inference_context_op(context)->name,
                          loom_shape_inference_context_attrs(context), &attrs));
  const loom_tensor_t* sizes =
      loom_shape_inference_context_input_tensor(context, 0);
  loom_shape_t out = loom__nn_unknown_image(), grad;
  if (sizes) {
    LOOM_RETURN_IF_ERROR(
        loom__nn_shape_from_tensor(sizes, "orig_input_shape", &out));
    LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &grad));
    if (loom__nn_fully_known(&grad)) {
      loom__nn_geometry_t g;
      LOOM_RETURN_IF_ERROR(loom__nn_pool_geometry(&attrs, &out, &g));
      LOOM_RETURN_IF_ERROR(expect_pooled(&g, &grad, "grad"));
    }
  }
  return loom_shape_inference_context_set_output(context, 0, &out);
}

//===----------------------------------------------------------------------===//
// Jobs
//===----------------------------------------------------------------------===//

typedef enum pool_kind_t {
  POOL_MAX,
  POOL_AVG,
  POOL_MAX_GRAD,
  POOL_MAX_GRAD_GRAD,
  POOL_AVG_GRAD,
} pool_kind_t;

typedef struct pool_job_t {
  pool_kind_t kind;
  const loom__nn_geometry_t* g;
  const loom__nn_loops_t* loops;
  loom_dtype_t dtype;  // of the data the loops see (16-bit: float)
  size_t size;
  const char* x;   // input / orig_input
  const char* dy;  // grad
  char* out;
  int64_t row_blocks;  // NCHW forward: blocks of output rows per plane
  int64_t rows_per_block;
  char* scratch;  // MaxPool{Grad,GradGrad} NHWC: per worker best + where
  size_t scratch_stride;
} pool_job_t;

// The input rows [h0, h1) and columns [w0, w1) of output (oh, ow)'s
// window, clipped to the image.
static void window(const loom__nn_geometry_t* g, int64_t oh, int64_t ow,
                   int64_t* h0, int64_t* h1, int64_t* w0, int64_t* w1) {
  *h0 = oh * g->stride_h - g->pad_top;
  *w0 = ow * g->stride_w - g->pad_left;
  *h1 = *h0 + g->k_h;
  *w1 = *w0 + g->k_w;
  if (*h0 < 0) *h0 = 0;
  if (*w0 < 0) *w0 = 0;
  if (*h1 > g->in_h) *h1 = g->in_h;
  if (*w1 > g->in_w) *w1 = g->in_w;
}

// MaxPool, channels last: one output row (n, oh) of pixels.
#define MAX_ROW(suffix, T, LOWEST)                                             \
  static void max_row_##suffix(const pool_job_t* job, int64_t n, int64_t oh) { \
    const loom__nn_geometry_t* g = job->g;                                     \
    int64_t c = g->in_c;                                                       \
    const T* image = (const T*)job->x + n * g->in_h * g->in_w * c;             \
    T* out = (T*)job->out + (n * g->out_h + oh) * g->out_w * c;                \
    for (int64_t ow = 0; ow < g->out_w; ++ow, out += c) {                      \
      int64_t h0, h1, w0, w1;                                                  \
      window(g, oh, ow, &h0, &h1, &w0, &w1);                                   \
      if (h0 >= h1 || w0 >= w1) {                                              \
        for (int64_t j = 0; j < c; ++j) out[j] = LOWEST;                       \
        continue;                                                              \
      }                                                                        \
      memcpy(out, image + (h0 * g->in_w + w0) * c, (size_t)c * sizeof(T));     \
      for (int64_t h = h0; h < h1; ++h) {                                      \
        for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; ++w) {               \
          job->loops->max_##suffix(out, image + (h * g->in_w + w) * c, c);     \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }

MAX_ROW(f32, float, -INFINITY)
MAX_ROW(f64, double, -INFINITY)
MAX_ROW(i8, int8_t, INT8_MIN)
MAX_ROW(u8, uint8_t, 0)
MAX_ROW(i16, int16_t, INT16_MIN)
MAX_ROW(u16, uint16_t, 0)
MAX_ROW(i32, int32_t, INT32_MIN)
MAX_ROW(i64, int64_t, INT64_MIN)

// AvgPool, channels last.
#define AVG_ROW(suffix, T)                                                     \
  static void avg_row_##suffix(const pool_job_t* job, int64_t n, int64_t oh) { \
    const loom__nn_geometry_t* g = job->g;                                     \
    int64_t c = g->in_c;                                                       \
    const T* image = (const T*)job->x + n * g->in_h * g->in_w * c;             \
    T* out = (T*)job->out + (n * g->out_h + oh) * g->out_w * c;                \
    for (int64_t ow = 0; ow < g->out_w; ++ow, out += c) {                      \
      int64_t h0, h1, w0, w1;                                                  \
      window(g, oh, ow, &h0, &h1, &w0, &w1);                                   \
      memset(out, 0, (size_t)c * sizeof(T));                                   \
      if (h0 >= h1 || w0 >= w1) continue;                                      \
      for (int64_t h = h0; h < h1; ++h) {                                      \
        for (int64_t w = w0; w < w1; ++w) {                                    \
          job->loops->add_##suffix(out, image + (h * g->in_w + w) * c, c);     \
        }                                                                      \
      }                                                                        \
      job->loops->scale_##suffix(out, (T)1 / (T)((h1 - h0) * (w1 - w0)), c);   \
    }                                                                          \
  }

AVG_ROW(f32, float)
AVG_ROW(f64, double)

// Forward, channels last: unit = one output row (n, oh).
static void forward_nhwc_rows(void* arg, int64_t begin, int64_t end) {
  const pool_job_t* job = arg;
  bool avg = job->kind == POOL_AVG;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t n = unit / job->g->out_h, oh = unit % job->g->out_h;
    switch (job->dtype) {
      case LOOM_DTYPE_FLOAT:
        avg ? avg_row_f32(job, n, oh) : max_row_f32(job, n, oh);
        break;
      case LOOM_DTYPE_DOUBLE:
        avg ? avg_row_f64(job, n, oh) : max_row_f64(job, n, oh);
        break;
      case LOOM_DTYPE_INT8:
        max_row_i8(job, n, oh);
        break;
      case LOOM_DTYPE_UINT8:
        max_row_u8(job, n, oh);
        break;
      case LOOM_DTYPE_INT16:
        max_row_i16(job, n, oh);
        break;
      case LOOM_DTYPE_UINT16:
        max_row_u16(job, n, oh);
        break;
      case LOOM_DTYPE_INT32:
        max_row_i32(job, n, oh);
        break;
      case LOOM_DTYPE_INT64:
        max_row_i64(job, n, oh);
        break;
      default:
        break;
    }
  }
}

// Forward, channels first: unit = (plane, block of output rows).
static void forward_nchw_planes(void* arg, int64_t begin, int64_t end) {
  const pool_job_t* job = arg;
  const loom__nn_geometry_t* g = job->g;
  const loom__nn_loops_t* loops = job->loops;
  int64_t in_plane = g->in_h * g->in_w, out_plane = g->out_h * g->out_w;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t plane = unit / job->row_blocks;
    int64_t block = unit % job->row_blocks;
    loom__nn_plane_t p = {
        .in_h = g->in_h,
        .in_w = g->in_w,
        .out_w = g->out_w,
        .k_h = g->k_h,
        .k_w = g->k_w,
        .stride_h = g->stride_h,
        .stride_w = g->stride_w,
        .pad_top = g->pad_top,
        .pad_left = g->pad_left,
        .oh0 = block * job->rows_per_block,
    };
    p.oh1 = p.oh0 + job->rows_per_block;
    if (p.oh1 > g->out_h) p.oh1 = g->out_h;
    const char* in = job->x + (size_t)(plane * in_plane) * job->size;
    char* out = job->out + (size_t)(plane * out_plane) * job->size;
    bool avg = job->kind == POOL_AVG;
#define PLANE_CASE(DT, suffix, T)                         \
  case DT:                                                \
    loops->max_plane_##suffix((const T*)in, (T*)out, &p); \
    break;
    switch (job->dtype) {
      case LOOM_DTYPE_FLOAT:
        if (avg) {
          loops->avg_plane_f32((const float*)in, (float*)out, &p);
        } else {
          loops->max_plane_f32((const float*)in, (float*)out, &p);
        }
        break;
      case LOOM_DTYPE_DOUBLE:
        if (avg) {
          loops->avg_plane_f64((const double*)in, (double*)out, &p);
        } else {
          loops->max_plane_f64((const double*)in, (double*)out, &p);
        }
        break;
        PLANE_CASE(LOOM_DTYPE_INT8, i8, int8_t)
        PLANE_CASE(LOOM_DTYPE_UINT8, u8, uint8_t)
        PLANE_CASE(LOOM_DTYPE_INT16, i16, int16_t)
        PLANE_CASE(LOOM_DTYPE_UINT16, u16, uint16_t)
        PLANE_CASE(LOOM_DTYPE_INT32, i32, int32_t)
        PLANE_CASE(LOOM_DTYPE_INT64, i64, int64_t)
      default:
        break;
    }
#undef PLANE_CASE
  }
}

// MaxPoolGrad, channels last: unit = one image. For each output pixel the
// argmax of every channel is found (first maximum in row-major order),
// then its gradient is added there.
#define MAX_GRAD_IMAGE_NHWC(suffix, T)                                       \
  static void max_grad_nhwc_##suffix(const pool_job_t* job, int64_t n,       \
                                     int worker) {                           \
    const loom__nn_geometry_t* g = job->g;                                   \
    int64_t c = g->in_c;                                                     \
    const T* image = (const T*)job->x + n * g->in_h * g->in_w * c;           \
    const T* grad = (const T*)job->dy + n * g->out_h * g->out_w * c;         \
    T* dx = (T*)job->out + n * g->in_h * g->in_w * c;                        \
    memset(dx, 0, (size_t)(g->in_h * g->in_w * c) * sizeof(T));              \
    int64_t* where =                                                         \
        (int64_t*)(job->scratch + job->scratch_stride * (size_t)worker);     \
    T* best = (T*)(where + c);                                               \
    for (int64_t oh = 0; oh < g->out_h; ++oh) {                              \
      for (int64_t ow = 0; ow < g->out_w; ++ow, grad += c) {                 \
        int64_t h0, h1, w0, w1;                                              \
        window(g, oh, ow, &h0, &h1, &w0, &w1);                               \
        if (h0 >= h1 || w0 >= w1) continue;                                  \
        int64_t first = h0 * g->in_w + w0;                                   \
        memcpy(best, image + first * c, (size_t)c * sizeof(T));              \
        for (int64_t j = 0; j < c; ++j) where[j] = first;                    \
        for (int64_t h = h0; h < h1; ++h) {                                  \
          for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; ++w) {           \
            int64_t at = h * g->in_w + w;                                    \
            job->loops->argmax_##suffix(best, where, image + at * c, at, c); \
          }                                                                  \
        }                                                                    \
        for (int64_t j = 0; j < c; ++j) dx[where[j] * c + j] += grad[j];     \
      }                                                                      \
    }                                                                        \
  }

MAX_GRAD_IMAGE_NHWC(f32, float)
MAX_GRAD_IMAGE_NHWC(f64, double)

// MaxPoolGrad, channels first: unit = one plane.
#define MAX_GRAD_PLANE(suffix, T)                                             \
  static void max_grad_plane_##suffix(const pool_job_t* job, int64_t plane) { \
    const loom__nn_geometry_t* g = job->g;                                    \
    const T* in = (const T*)job->x + plane * g->in_h * g->in_w;               \
    const T* grad = (const T*)job->dy + plane * g->out_h * g->out_w;          \
    T* dx = (T*)job->out + plane * g->in_h * g->in_w;                         \
    memset(dx, 0, (size_t)(g->in_h * g->in_w) * sizeof(T));                   \
    for (int64_t oh = 0; oh < g->out_h; ++oh) {                               \
      for (int64_t ow = 0; ow < g->out_w; ++ow, ++grad) {                     \
        int64_t h0, h1, w0, w1;                                               \
        window(g, oh, ow, &h0, &h1, &w0, &w1);                                \
        if (h0 >= h1 || w0 >= w1) continue;                                   \
        int64_t at = h0 * g->in_w + w0;                                       \
        T m = in[at];                                                         \
        for (int64_t h = h0; h < h1; ++h) {                                   \
          for (int64_t w = w0; w < w1; ++w) {                                 \
            T v = in[h * g->in_w + w];                                        \
            if (v > m) {                                                      \
              m = v;                                                          \
              at = h * g->in_w + w;                                           \
            }                                                                 \
          }                                                                   \
        }                                                                     \
        dx[at] += *grad;                                                      \
      }                                                                       \
    }                                                                         \
  }

MAX_GRAD_PLANE(f32, float)
MAX_GRAD_PLANE(f64, double)

// AvgPoolGrad, channels last: unit = one image.
#define AVG_GRAD_IMAGE_NHWC(suffix, T)                                         \
  static void avg_grad_nhwc_##suffix(const pool_job_t* job, int64_t n) {       \
    const loom__nn_geometry_t* g = job->g;                                     \
    int64_t c = g->in_c;                                                       \
    const T* grad = (const T*)job->dy + n * g->out_h * g->out_w * c;           \
    T* dx = (T*)job->out + n * g->in_h * g->in_w * c;                          \
    memset(dx, 0, (size_t)(g->in_h * g->in_w * c) * sizeof(T));                \
    for (int64_t oh = 0; oh < g->out_h; ++oh) {                                \
      for (int64_t ow = 0; ow < g->out_w; ++ow, grad += c) {                   \
        int64_t h0, h1, w0, w1;                                                \
        window(g, oh, ow, &h0, &h1, &w0, &w1);                                 \
        if (h0 >= h1 || w0 >= w1) continue;                                    \
        T s = (T)1 / (T)((h1 - h0) * (w1 - w0));                               \
        for (int64_t h = h0; h < h1; ++h) {                                    \
          for (int64_t w = w0; w < w1; ++w) {                                  \
            job->loops->axpy_##suffix(dx + (h * g->in_w + w) * c, grad, s, c); \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  }

AVG_GRAD_IMAGE_NHWC(f32, float)
AVG_GRAD_IMAGE_NHWC(f64, double)

// AvgPoolGrad, channels first: unit = one plane.
#define AVG_GRAD_PLANE(suffix, T)                                             \
  static void avg_grad_plane_##suffix(const pool_job_t* job, int64_t plane) { \
    const loom__nn_geometry_t* g = job->g;                                    \
    const T* grad = (const T*)job->dy + plane * g->out_h * g->out_w;          \
    T* dx = (T*)job->out + plane * g->in_h * g->in_w;                         \
    memset(dx, 0, (size_t)(g->in_h * g->in_w) * sizeof(T));                   \
    for (int64_t oh = 0; oh < g->out_h; ++oh) {                               \
      for (int64_t ow = 0; ow < g->out_w; ++ow, ++grad) {                     \
        int64_t h0, h1, w0, w1;                                               \
        window(g, oh, ow, &h0, &h1, &w0, &w1);                                \
        if (h0 >= h1 || w0 >= w1) continue;                                   \
        T s = *grad / (T)((h1 - h0) * (w1 - w0));                             \
        for (int64_t h = h0; h < h1; ++h) {                                   \
          T* row = dx + h * g->in_w;                                          \
          for (int64_t w = w0; w < w1; ++w) row[w] += s;                      \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }

AVG_GRAD_PLANE(f32, float)
AVG_GRAD_PLANE(f64, double)

// MaxPoolGradGrad, channels last: output row (n, oh). Each output pixel
// finds the argmax of every channel as MaxPoolGrad does (first maximum in
// row-major order) and takes grad's element there.
#define MAX_GRAD_GRAD_ROW_NHWC(suffix, T)                                   \
  static void max_grad_grad_nhwc_##suffix(const pool_job_t* job, int64_t n, \
                                          int64_t oh, int worker) {         \
    const loom__nn_geometry_t* g = job->g;                                  \
    int64_t c = g->in_c;                                                    \
    const T* image = (const T*)job->x + n * g->in_h * g->in_w * c;          \
    const T* grad = (const T*)job->dy + n * g->in_h * g->in_w * c;          \
    T* out = (T*)job->out + (n * g->out_h + oh) * g->out_w * c;             \
    int64_t* where =                                                        \
        (int64_t*)(job->scratch + job->scratch_stride * (size_t)worker);    \
    T* best = (T*)(where + c);                                              \
    for (int64_t ow = 0; ow < g->out_w; ++ow, out += c) {                   \
      int64_t h0, h1, w0, w1;                                               \
      window(g, oh, ow, &h0, &h1, &w0, &w1);                                \
      if (h0 >= h1 || w0 >= w1) {                                           \
        memset(out, 0, (size_t)c * sizeof(T));                              \
        continue;                                                           \
      }                                                                     \
      int64_t first = h0 * g->in_w + w0;                                    \
      memcpy(best, image + first * c, (size_t)c * sizeof(T));               \
      for (int64_t j = 0; j < c; ++j) where[j] = first;                     \
      for (int64_t h = h0; h < h1; ++h) {                                   \
        for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; ++w) {            \
          int64_t at = h * g->in_w + w;                                     \
          job->loops->argmax_##suffix(best, where, image + at * c, at, c);  \
        }                                                                   \
      }                                                                     \
      for (int64_t j = 0; j < c; ++j) out[j] = grad[where[j] * c + j];      \
    }                                                                       \
  }

MAX_GRAD_GRAD_ROW_NHWC(f32, float)
MAX_GRAD_GRAD_ROW_NHWC(f64, double)

// MaxPoolGradGrad, channels first: output row oh of one plane.
#define MAX_GRAD_GRAD_ROW_PLANE(suffix, T)                              \
  static void max_grad_grad_plane_##suffix(const pool_job_t* job,       \
                                           int64_t plane, int64_t oh) { \
    const loom__nn_geometry_t* g = job->g;                              \
    const T* in = (const T*)job->x + plane * g->in_h * g->in_w;         \
    const T* grad = (const T*)job->dy + plane * g->in_h * g->in_w;      \
    T* out = (T*)job->out + (plane * g->out_h + oh) * g->out_w;         \
    for (int64_t ow = 0; ow < g->out_w; ++ow) {                         \
      int64_t h0, h1, w0, w1;                                           \
      window(g, oh, ow, &h0, &h1, &w0, &w1);                            \
      if (h0 >= h1 || w0 >= w1) {                                       \
        out[ow] = 0;                                                    \
        continue;                                                       \
      }                                                                 \
      int64_t at = h0 * g->in_w + w0;                                   \
      T m = in[at];                                                     \
      for (int64_t h = h0; h < h1; ++h) {                               \
        for (int64_t w = w0; w < w1; ++w) {                             \
          T v = in[h * g->in_w + w];                                    \
          if (v > m) {                                                  \
            m = v;                                                      \
            at = h * g->in_w + w;                                       \
          }                                                             \
        }                                                               \
      }                                                                 \
      out[ow] = grad[at];                                               \
    }                                                                   \
  }

MAX_GRAD_GRAD_ROW_PLANE(f32, float)
MAX_GRAD_GRAD_ROW_PLANE(f64, double)

// MaxPoolGradGrad: unit = one output row of an image (NHWC) or of a plane
// (NCHW); each unit writes its own row, so any split is race-free.
static void grad_grad_units(void* arg, int64_t begin, int64_t end, int worker) {
  const pool_job_t* job = arg;
  bool f64 = job->dtype == LOOM_DTYPE_DOUBLE;
  int64_t rows = job->g->out_h;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t image = unit / rows, oh = unit % rows;
    if (job->g->nchw) {
      f64 ? max_grad_grad_plane_f64(job, image, oh)
          : max_grad_grad_plane_f32(job, image, oh);
    } else {
      f64 ? max_grad_grad_nhwc_f64(job, image, oh, worker)
          : max_grad_grad_nhwc_f32(job, image, oh, worker);
    }
  }
}

// Gradients: unit = one image (NHWC) or one plane (NCHW).
static void grad_units(void* arg, int64_t begin, int64_t end, int worker) {
  const pool_job_t* job = arg;
  bool f64 = job->dtype == LOOM_DTYPE_DOUBLE;
  bool max = job->kind == POOL_MAX_GRAD;
  for (int64_t unit = begin; unit < end; ++unit) {
    if (job->g->nchw) {
      if (max) {
        f64 ? max_grad_plane_f64(job, unit) : max_grad_plane_f32(job, unit);
      } else {
        f64 ? avg_grad_plane_f64(job, unit) : avg_grad_plane_f32(job, unit);
      }
    } else if (max) {
      f64 ? max_grad_nhwc_f64(job, unit, worker)
          : max_grad_nhwc_f32(job, unit, worker);
    } else {
      f64 ? avg_grad_nhwc_f64(job, unit) : avg_grad_nhwc_f32(job, unit);
    }
  }
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

// Runs one pooling op on native data (16-bit floats already widened).
static loom_status_t run_pool(loom_kernel_context_t* ctx, pool_job_t* job) {
  const loom__nn_geometry_t* g = job->g;
  loom_thread_pool_t* pool = loom__nn_pool(ctx);
  job->loops = loom__nn_loops();
  job->size = loom_dtype_size(job->dtype);
  // A window reads at most the image: k_h * k_w may pass int64 (SAME
  // windows larger than the image), the costs are estimates.
  double window_size = (double)(g->k_h < g->in_h ? g->k_h : g->in_h) *
                       (double)(g->k_w < g->in_w ? g->k_w : g->in_w);
  if (job->kind == POOL_MAX || job->kind == POOL_AVG) {
    if (!g->nchw) {
      int64_t cost =
          loom__nn_cost((double)g->out_w * (double)g->in_c * window_size / 4);
      return loom_thread_pool_parallel_for(pool, g->batch * g->out_h, cost,
                                           forward_nhwc_rows, job);
    }
    // Planes, split into blocks of rows when there are few.
    int64_t planes = g->batch * g->in_c;
    int64_t concurrency = loom__nn_concurrency(ctx);
    job->row_blocks = 1;
    if (concurrency > 1 && planes < 4 * concurrency) {
      job->row_blocks = (4 * concurrency + planes - 1) / planes;
      if (job->row_blocks > g->out_h) job->row_blocks = g->out_h;
      if (job->row_blocks < 1) job->row_blocks = 1;
    }
    job->rows_per_block = (g->out_h + job->row_blocks - 1) / job->row_blocks;
    int64_t cost = loom__nn_cost((double)job->rows_per_block *
                                 (double)g->out_w * window_size / 2);
    return loom_thread_pool_parallel_for(pool, planes * job->row_blocks, cost,
                                         forward_nchw_planes, job);
  }
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  bool argmax = job->kind == POOL_MAX_GRAD || job->kind == POOL_MAX_GRAD_GRAD;
  if (argmax && !g->nchw) {
    LOOM_RETURN_IF_ERROR(loom__nn_scratch(
        ctx, "argmax scratch", loom__nn_concurrency(ctx), g->in_c,
        job->size + sizeof(int64_t), &job->scratch, &job->scratch_stride));
  }
  loom_status_t status;
  if (job->kind == POOL_MAX_GRAD_GRAD) {
    // Output rows of every image (NHWC) or plane (NCHW).
    int64_t units = (g->nchw ? g->batch * g->in_c : g->batch) * g->out_h;
    int64_t cost = loom__nn_cost((double)g->out_w * window_size *
                                 (double)(g->nchw ? 1 : g->in_c));
    status = loom_thread_pool_parallel_for_with_worker_id(pool, units, cost,
                                                          grad_grad_units, job);
  } else {
    int64_t units = g->nchw ? g->batch * g->in_c : g->batch;
    int64_t cost = loom__nn_cost((double)g->out_h * (double)g->out_w *
                                 window_size * (double)(g->nchw ? 1 : g->in_c));
    status = loom_thread_pool_parallel_for_with_worker_id(pool, units, cost,
                                                          grad_units, job);
  }
  loom_allocator_free(allocator, job->scratch);
  return status;
}

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

void loom__nn_pool_compute(void* kernel, loom_kernel_context_t* ctx) {
  (void)kernel;
  const char* name = loom_kernel_context_op(ctx)->name;
  pool_kind_t kind = strcmp(name, "MaxPool") == 0           ? POOL_MAX
                     : strcmp(name, "AvgPool") == 0         ? POOL_AVG
                     : strcmp(name, "MaxPoolGrad") == 0     ? POOL_MAX_GRAD
                     : strcmp(name, "MaxPoolGradGrad") == 0 ? POOL_MAX_GRAD_GRAD
                                                            : POOL_AVG_GRAD;
  loom__nn_window_attrs_t attrs;
  loom_status_t status =
      loom__nn_pool_attrs(name, loom_kernel_context_attrs(ctx), &attrs);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* x = NULL;
  loom_tensor_t* dy = NULL;
  loom__nn_geometry_t g;
  loom_shape_t out_shape;
  switch (kind) {
    case POOL_MAX:
    case POOL_AVG:
      x = loom_kernel_context_input(ctx, 0);
      status = loom__nn_pool_geometry(&attrs, loom_tensor_shape(x), &g);
      if (!status) out_shape = pooled_shape(&g);
      break;
    case POOL_MAX_GRAD:
      x = loom_kernel_context_input(ctx, 0);
      dy = loom_kernel_context_input(ctx, 2);
      status = max_grad_geometry(
          &attrs, loom_tensor_shape(x),
          loom_tensor_shape(loom_kernel_context_input(ctx, 1)),
          loom_tensor_shape(dy), &g);
      out_shape = *loom_tensor_shape(x);
      break;
    case POOL_MAX_GRAD_GRAD:
      x = loom_kernel_context_input(ctx, 0);
      dy = loom_kernel_context_input(ctx, 2);
      status = max_grad_grad_geometry(
          &attrs, loom_tensor_shape(x),
          loom_tensor_shape(loom_kernel_context_input(ctx, 1)),
          loom_tensor_shape(dy), &g);
      if (!status) out_shape = pooled_shape(&g);
      break;
    case POOL_AVG_GRAD:
      dy = loom_kernel_context_input(ctx, 1);
      status = loom__nn_shape_from_tensor(loom_kernel_context_input(ctx, 0),
                                          "orig_input_shape", &out_shape);
      if (!status) status = loom__nn_pool_geometry(&attrs, &out_shape, &g);
      if (!status) status = expect_pooled(&g, loom_tensor_shape(dy), "grad");
      break;
  }
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* out = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &out_shape, &out);
  if (status) FAIL_AND_RETURN(ctx, status);
  int64_t out_count = loom_tensor_num_elements(out);
  if (out_count == 0) return;
  loom_dtype_t dtype = loom_kernel_context_output_dtype(ctx, 0);
  pool_job_t job = {
      .kind = kind,
      .g = &g,
      .dtype = dtype,
      .x = x ? loom_tensor_data(x) : NULL,
      .dy = dy ? loom_tensor_data(dy) : NULL,
      .out = loom_tensor_data(out),
  };
  if (dtype != LOOM_DTYPE_HALF && dtype != LOOM_DTYPE_BFLOAT16) {
    status = run_pool(ctx, &job);
    if (status) loom_kernel_context_fail(ctx, status);
    return;
  }
  // Half and bfloat16: widen, compute in float, narrow.
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  int64_t nx = x ? loom_tensor_num_elements(x) : 0;
  int64_t nd = dy ? loom_tensor_num_elements(dy) : 0;
  int64_t counts[3] = {nx, nd, out_count}, wide_count;
  char* scratch = NULL;
  status = loom__size_sum(counts, 3, &wide_count)
               ? loom__nn_scratch(ctx, "float copies", 1, wide_count,
                                  sizeof(float), &scratch, NULL)
               : loom__size_overflow_error(
                     name, "float copies", "(%lld + %lld + %lld)",
                     (long long)nx, (long long)nd, (long long)out_count);
  if (status) FAIL_AND_RETURN(ctx, status);
  float* fx = (float*)scratch;
  float* fd = fx + nx;
  float* fo = fd + nd;
  if (x) loom__nn_widen(dtype, loom_tensor_data(x), fx, nx);
  if (dy) loom__nn_widen(dtype, loom_tensor_data(dy), fd, nd);
  job.dtype = LOOM_DTYPE_FLOAT;
  job.x = (const char*)fx;
  job.dy = (const char*)fd;
  job.out = (char*)fo;
  status = run_pool(ctx, &job);
  if (!status) loom__nn_narrow(dtype, fo, loom_tensor_data(out), out_count);
  loom_allocator_free(allocator, scratch);
  if (status) loom_kernel_context_fail(ctx, status);
}
