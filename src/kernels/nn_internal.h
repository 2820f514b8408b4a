// The neural-network family (Conv2D and its backprops, pooling and its
// gradients, fused batch normalisation): the sliding-window geometry every
// op of the family shares, with TensorFlow's attribute rules and messages,
// and the inner loops built per ISA level (nn_loops.c).
//
// Layouts are TensorFlow's: data_format NHWC or NCHW for activations,
// HWIO ([rows, cols, in_depth / groups, out_depth]) for filters.

#ifndef LOOM_KERNELS_NN_INTERNAL_H_
#define LOOM_KERNELS_NN_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "kernels/isa.h"
#include "loom/kernel.h"
#include "loom/op_attrs.h"
#include "loom/shape.h"
#include "loom/shape_inference.h"
#include "loom/status.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

//===----------------------------------------------------------------------===//
// Attributes and geometry
//===----------------------------------------------------------------------===//

typedef enum loom__nn_padding_t {
  LOOM_NN_PADDING_VALID = 0,
  LOOM_NN_PADDING_SAME = 1,
  LOOM_NN_PADDING_EXPLICIT = 2,
} loom__nn_padding_t;

// The window attributes of a convolution or pooling op, as given (in
// data_format order), after TensorFlow's checks.
typedef struct loom__nn_window_attrs_t {
  const char* op;  // the op's name, for messages
  bool pooling;    // a pool's ksize, not a filter, is the window
  bool nchw;
  loom__nn_padding_t padding;
  int64_t ksize[4];  // pooling: the window; convolutions: all 1
  int64_t strides[4];
  int64_t dilations[4];          // pooling: all 1
  int64_t explicit_paddings[8];  // (before, after) per dim; EXPLICIT only
} loom__nn_window_attrs_t;

// A 2-D sliding window over a batch of images, data_format resolved.
typedef struct loom__nn_geometry_t {
  bool nchw;
  int64_t batch, in_h, in_w, in_c;
  int64_t k_h, k_w;  // filter or window size
  int64_t filter_c;  // convolutions: the filter's input depth
  int64_t out_c;     // convolutions: the filter's output depth; else in_c
  int64_t groups;    // in_c / filter_c (1 for pooling)
  int64_t stride_h, stride_w, dil_h, dil_w;
  int64_t pad_top, pad_left;  // elements of implicit zeros before
  int64_t out_h, out_w;
} loom__nn_geometry_t;

// Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter: data_format, padding,
// strides, dilations, explicit_paddings. `op` (kept, not copied) names the
// op in the geometry's messages.
loom_status_t loom__nn_conv_attrs(const char* op, const loom_op_attrs_t* attrs,
                                  loom__nn_window_attrs_t* out);

// MaxPool, AvgPool and their grads: data_format, padding, ksize, strides,
// explicit_paddings (read when present); `op` as for loom__nn_conv_attrs.
loom_status_t loom__nn_pool_attrs(const char* op, const loom_op_attrs_t* attrs,
                                  loom__nn_window_attrs_t* out);

// The convolution of `input` by `filter` (rank 4 each, fully known). Window
// sizes go through loom__window_output_size: an overflow is an error
// naming the op, the argument and the values, and so is an output image
// whose element count does not fit int64 (the same for pooling).
loom_status_t loom__nn_conv_geometry(const loom__nn_window_attrs_t* attrs,
                                     const loom_shape_t* input,
                                     const loom_shape_t* filter,
                                     loom__nn_geometry_t* out);

// Pooling over `input` (rank 4, fully known).
loom_status_t loom__nn_pool_geometry(const loom__nn_window_attrs_t* attrs,
                                     const loom_shape_t* input,
                                     loom__nn_geometry_t* out);

// [batch, h, w, c] in the geometry's data_format.
loom_shape_t loom__nn_image_shape(bool nchw, int64_t batch, int64_t h,
                                  int64_t w, int64_t c);

// The shape held by a 1-D int32 (or int64) tensor of 4 elements, such as
// Conv2DBackpropInput's input_sizes; `what` names the argument in errors.
loom_status_t loom__nn_shape_from_tensor(const loom_tensor_t* tensor,
                                         const char* what,
                                         loom_shape_t* out_shape);

// Whether every dimension of `shape` is known.
bool loom__nn_fully_known(const loom_shape_t* shape);

// A rank-4 shape of unknown dimensions.
loom_shape_t loom__nn_unknown_image(void);

// Whether a string attr equals `text`.
bool loom__nn_attr_string_is(const loom_op_attrs_t* attrs, const char* name,
                             const char* text);

// Allocates `count` blocks of `elements` * `element_size` bytes each,
// 64-byte aligned, in one allocation from the kernel's allocator (*out:
// the first; block i at *out + i * stride, where *out_stride is the block
// size rounded up to 64). A size that overflows is an INVALID_ARGUMENT
// naming the kernel's op and `what`.
loom_status_t loom__nn_scratch(loom_kernel_context_t* ctx, const char* what,
                               int64_t count, int64_t elements,
                               size_t element_size, char** out,
                               size_t* out_stride);

// The number of threads that may run a parallel-for's body at once on the
// kernel's pool (its workers and the calling thread).
int64_t loom__nn_concurrency(loom_kernel_context_t* ctx);

// A parallel-for's cost per unit from an estimate in floating point
// (products of sizes that may pass int64 for windows larger than the
// image), at least 1 and at most 2^62.
static inline int64_t loom__nn_cost(double estimate) {
  return estimate >= 0x1p62 ? (int64_t)1 << 62 : (int64_t)estimate + 1;
}

// The pool of the kernel's host.
loom_thread_pool_t* loom__nn_pool(loom_kernel_context_t* ctx);

// 16-bit floats to float and back (vectorised, from the MatMul family).
void loom__nn_widen(loom_dtype_t dtype, const void* in, float* out, int64_t n);
void loom__nn_narrow(loom_dtype_t dtype, const float* in, void* out, int64_t n);

// Group registration (nn_<group>_registration.c; nn_registration.c calls
// these from loom__register_nn_ops).
loom_status_t loom__register_nn_conv_ops(void);
loom_status_t loom__register_nn_pool_ops(void);
loom_status_t loom__register_nn_batchnorm_ops(void);

// The shape functions and kernels the registrations name.
// Pooling (nn_pool.c).
loom_status_t loom__nn_pool_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data);
loom_status_t loom__nn_max_pool_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data);
loom_status_t loom__nn_max_pool_grad_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data);
loom_status_t loom__nn_avg_pool_grad_shape_fn(
    loom_shape_inference_context_t* context, void* user_data);
// Every pooling op and gradient: the op's name picks the computation.
void loom__nn_pool_compute(void* kernel, loom_kernel_context_t* ctx);
// Batch normalisation (nn_batchnorm.c).
loom_status_t loom__nn_batchnorm_shape_fn(
    loom_shape_inference_context_t* context, void* user_data);
void loom__nn_batchnorm_compute(void* kernel, loom_kernel_context_t* ctx);
void loom__nn_batchnorm_grad_compute(void* kernel, loom_kernel_context_t* ctx);

//===----------------------------------------------------------------------===//
// Inner loops (nn_loops.c, one table per ISA level)
//===----------------------------------------------------------------------===//

// One plane of an NCHW pooling: in is [in_h, in_w], out [out_h, out_w]
// rows [oh0, oh1).
typedef struct loom__nn_plane_t {
  int64_t in_h, in_w, out_w;
  int64_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
  int64_t oh0, oh1;
} loom__nn_plane_t;

typedef struct loom__nn_loops_t {
  // dst[i] += src[i].
  void (*add_f32)(float* dst, const float* src, int64_t n);
  void (*add_f64)(double* dst, const double* src, int64_t n);
  // dst[i] += s * src[i].
  void (*axpy_f32)(float* dst, const float* src, float s, int64_t n);
  void (*axpy_f64)(double* dst, const double* src, double s, int64_t n);
  // dst[i] *= s.
  void (*scale_f32)(float* dst, float s, int64_t n);
  void (*scale_f64)(double* dst, double s, int64_t n);
  // acc[i] = max(acc[i], x[i]) for the MaxPool dtypes (a NaN in x is
  // skipped, as TensorFlow's CPU kernel does).
  void (*max_f32)(float* acc, const float* x, int64_t n);
  void (*max_f64)(double* acc, const double* x, int64_t n);
  void (*max_i8)(int8_t* acc, const int8_t* x, int64_t n);
  void (*max_u8)(uint8_t* acc, const uint8_t* x, int64_t n);
  void (*max_i16)(int16_t* acc, const int16_t* x, int64_t n);
  void (*max_u16)(uint16_t* acc, const uint16_t* x, int64_t n);
  void (*max_i32)(int32_t* acc, const int32_t* x, int64_t n);
  void (*max_i64)(int64_t* acc, const int64_t* x, int64_t n);
  // The argmax step of MaxPoolGrad and MaxPoolGradGrad: where x[i] >
  // best[i], best[i] = x[i] and where[i] = position (the first maximum
  // wins).
  void (*argmax_f32)(float* best, int64_t* where, const float* x,
                     int64_t position, int64_t n);
  void (*argmax_f64)(double* best, int64_t* where, const double* x,
                     int64_t position, int64_t n);
  // NCHW pooling of one plane (rows plane->oh0 .. oh1 of out).
  void (*max_plane_f32)(const float* in, float* out, const loom__nn_plane_t* p);
  void (*max_plane_f64)(const double* in, double* out,
                        const loom__nn_plane_t* p);
  void (*max_plane_i8)(const int8_t* in, int8_t* out,
                       const loom__nn_plane_t* p);
  void (*max_plane_u8)(const uint8_t* in, uint8_t* out,
                       const loom__nn_plane_t* p);
  void (*max_plane_i16)(const int16_t* in, int16_t* out,
                        const loom__nn_plane_t* p);
  void (*max_plane_u16)(const uint16_t* in, uint16_t* out,
                        const loom__nn_plane_t* p);
  void (*max_plane_i32)(const int32_t* in, int32_t* out,
                        const loom__nn_plane_t* p);
  void (*max_plane_i64)(const int64_t* in, int64_t* out,
                        const loom__nn_plane_t* p);
  void (*avg_plane_f32)(const float* in, float* out, const loom__nn_plane_t* p);
  void (*avg_plane_f64)(const double* in, double* out,
                        const loom__nn_plane_t* p);
  // Batch normalisation, channels last: rows of c channels.
  // y[r, j] = (x[r, j] - m[j]) * a[j] + b[j] (y may be x).
  void (*affine_rows_f32)(const float* x, float* y, const float* m,
                          const float* a, const float* b, int64_t rows,
                          int64_t c);
  void (*affine_rows_f64)(const double* x, double* y, const double* m,
                          const double* a, const double* b, int64_t rows,
                          int64_t c);
  // acc[j] += x[r, j] (sum) or (x[r, j] - mean[j])^2 (sum of squares).
  void (*sum_rows_f32)(const float* x, double* acc, int64_t rows, int64_t c);
  void (*sum_rows_f64)(const double* x, double* acc, int64_t rows, int64_t c);
  void (*sumsq_rows_f32)(const float* x, const double* mean, double* acc,
                         int64_t rows, int64_t c);
  void (*sumsq_rows_f64)(const double* x, const double* mean, double* acc,
                         int64_t rows, int64_t c);
  // Gradient sums: dsum[j] += dy[r, j]; dxc[j] += dy[r, j] * (x[r, j] -
  // mean[j]).
  void (*grad_sums_rows_f32)(const float* dy, const float* x,
                             const double* mean, double* dsum, double* dxc,
                             int64_t rows, int64_t c);
  // x_backprop, channels last: dx = a[j] * (dy - dmean[j] - (x - mean[j]) *
  // k[j]) with a, dmean, mean, k per channel.
  void (*grad_apply_rows_f32)(const float* dy, const float* x, float* dx,
                              const float* a, const float* dmean,
                              const float* mean, const float* k, int64_t rows,
                              int64_t c);
  // Channels first: one plane of n elements with scalar channel values.
  void (*affine_plane_f32)(const float* x, float* y, float m, float a, float b,
                           int64_t n);
  void (*affine_plane_f64)(const double* x, double* y, double m, double a,
                           double b, int64_t n);
  double (*sum_plane_f32)(const float* x, int64_t n);
  double (*sum_plane_f64)(const double* x, int64_t n);
  double (*sumsq_plane_f32)(const float* x, double mean, int64_t n);
  double (*sumsq_plane_f64)(const double* x, double mean, int64_t n);
  void (*grad_sums_plane_f32)(const float* dy, const float* x, double mean,
                              double* dsum, double* dxc, int64_t n);
  void (*grad_apply_plane_f32)(const float* dy, const float* x, float* dx,
                               float a, float dmean, float mean, float k,
                               int64_t n);
  // Winograd F(2x2, 3x3), on vectors of n independent lanes (channels):
  // filter: g[k] (k = kh * 3 + kw) at g + k * g_stride, U[x] (x = 4 * row
  // + column of the 4x4 transform) at u + x * u_stride: U = G g G^T.
  void (*winograd_filter_f32)(const float* g, int64_t g_stride, float* u,
                              int64_t u_stride, int64_t n);
  void (*winograd_filter_f64)(const double* g, int64_t g_stride, double* u,
                              int64_t u_stride, int64_t n);
  // input: the 4x4 tile d[i] (i = 4 * row + column) to V[x] at v + x *
  // v_stride: V = B^T d B.
  void (*winograd_input_f32)(const float* const* d, float* v, int64_t v_stride,
                             int64_t n);
  void (*winograd_input_f64)(const double* const* d, double* v,
                             int64_t v_stride, int64_t n);
  // output: M[x] at m + x * m_stride to the 2x2 outputs y[i] (i = 2 * row
  // + column): Y = A^T M A.
  void (*winograd_output_f32)(const float* m, int64_t m_stride, float* const* y,
                              int64_t n);
  void (*winograd_output_f64)(const double* m, int64_t m_stride,
                              double* const* y, int64_t n);
} loom__nn_loops_t;

extern const loom__nn_loops_t loom__nn_loops_baseline;
extern const loom__nn_loops_t loom__nn_loops_avx2;
extern const loom__nn_loops_t loom__nn_loops_avx512;

// The loops of this CPU's level.
const loom__nn_loops_t* loom__nn_loops(void);

#endif  // LOOM_KERNELS_NN_INTERNAL_H_
