// The convolution group's parts (nn_conv*.c): Conv2D and its backprops
// run as GEMMs over im2col blocks (nn_conv.c, nn_conv_im2col.c), or for
// 3x3 unit-stride Conv2D through Winograd (nn_conv_winograd.c).

#ifndef LOOM_KERNELS_NN_CONV_H_
#define LOOM_KERNELS_NN_CONV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/nn_internal.h"

// One convolution, its data as float or double (16-bit floats widened).
typedef struct loom__nn_conv_job_t {
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
} loom__nn_conv_job_t;

// C = op(A) . op(B) (accumulate: C += ...), row-major, float or double.
void loom__nn_gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                   const void* a, int64_t lda, const void* b, int64_t ldb,
                   bool accumulate, void* c, int64_t ldc);

//===----------------------------------------------------------------------===//
// im2col and col2im (nn_conv_im2col.c)
//===----------------------------------------------------------------------===//

// NHWC im2col: row r of col is output pixel p0 + r (over batch, rows,
// columns), laid out [group][kh][kw][filter_c].
void loom__nn_im2col_nhwc(const loom__nn_conv_job_t* job, int64_t p0,
                          int64_t rows, char* col);
// NHWC col2im: adds row r of dcol (output pixel p0 + r of image `n`) into
// the input gradient image dx.
void loom__nn_col2im_nhwc(const loom__nn_conv_job_t* job, const char* dcol,
                          int64_t p0, int64_t rows, char* dx);
// NCHW im2col of image n, output columns [q0, q0 + cols): row (c, kh, kw)
// of col holds those columns' taps.
void loom__nn_im2col_nchw(const loom__nn_conv_job_t* job, int64_t n, int64_t q0,
                          int64_t cols, char* col);
// NCHW col2im: adds the rows of dcol (columns [q0, q0 + cols) of image
// n's output) into the input gradient image dx ([C][H][W]).
void loom__nn_col2im_nchw(const loom__nn_conv_job_t* job, const char* dcol,
                          int64_t q0, int64_t cols, char* dx);

//===----------------------------------------------------------------------===//
// Winograd F(2x2, 3x3) (nn_conv_winograd.c)
//===----------------------------------------------------------------------===//

// Whether Conv2D of geometry `g` goes through Winograd.
bool loom__nn_use_winograd(const loom__nn_geometry_t* g);
// Conv2D of float or double data x (filter HWIO) into out, in g's layout.
loom_status_t loom__nn_run_winograd(loom_kernel_context_t* ctx,
                                    const loom__nn_geometry_t* g, bool f64,
                                    const void* x, const void* filter,
                                    void* out);

//===----------------------------------------------------------------------===//
// Shapes (nn_conv_shape.c)
//===----------------------------------------------------------------------===//

// TensorFlow's ConvBackpropComputeDimensionsV2: the geometry of the
// forward convolution whose gradient is taken, checked against
// out_backprop; `label` names the op in messages.
loom_status_t loom__nn_conv_backprop_geometry(
    const char* label, const loom__nn_window_attrs_t* attrs,
    const loom_shape_t* input, const loom_shape_t* filter,
    const loom_shape_t* out_backprop, loom__nn_geometry_t* g);
loom_status_t loom__nn_conv2d_shape_fn(loom_shape_inference_context_t* context,
                                       void* user_data);
// Conv2DBackpropInput (sizes at input 0) and Conv2DBackpropFilter (at 1).
loom_status_t loom__nn_conv_backprop_shape_fn(
    loom_shape_inference_context_t* context, void* user_data);

// The kernel of all three ops (nn_conv.c).
void loom__nn_conv_compute(void* kernel, loom_kernel_context_t* ctx);

#endif  // LOOM_KERNELS_NN_CONV_H_
