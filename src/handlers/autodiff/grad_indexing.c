// Gradient functions of the N-d indexing, top-k and matrix band and
// diagonal ops, with TensorFlow's formulas: GatherNd and ScatterNd are each
// other's transposes, TensorScatterUpdate sends the gradient of the
// replaced entries to `updates`, TopKV2 scatters the values' gradient back
// to where they came from, and the band and diagonal ops are linear
// projections whose gradients are the same projection or its adjoint.

#include <stdlib.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t grad_ctx_t;
typedef loom_tensor_handle_t handle_t;

#define USES(i) LOOM_GRADIENT_USES(i)
#define RELEASE(array) \
  loom__grad_release_all((array), (int32_t)(sizeof(array) / sizeof((array)[0])))

static const loom_tensor_metadata_t* input_metadata(grad_ctx_t* ctx,
                                                    int32_t index) {
  return loom_gradient_context_input_metadata(ctx, index);
}

static loom_status_t need_known(grad_ctx_t* ctx, const loom_shape_t* shape) {
  if (shape->rank >= 0 && loom_shape_is_fully_defined(shape)) {
    return loom_ok_status();
  }
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "%s (gradient): shapes must be known",
                          loom_gradient_context_op_name(ctx));
}

// Forward input `index` (indices) as int32 or int64, the dtypes a shape
// constant can have: int16 indices are cast to int32. A new reference.
static loom_status_t wide_indices(grad_ctx_t* ctx, int32_t index,
                                  handle_t** out) {
  handle_t* indices = loom_gradient_context_input(ctx, index);
  if (input_metadata(ctx, index)->dtype != LOOM_DTYPE_INT16) {
    loom_tensor_handle_retain(indices);
    *out = indices;
    return loom_ok_status();
  }
  return loom__grad_op(
      ctx, "Cast", LOOM_GRAD_INPUTS(indices),
      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", LOOM_DTYPE_INT32)), out);
}

// The forward op's bad_indices_policy, passed on to the op that undoes it.
static loom__grad_attr_t policy_attr(grad_ctx_t* ctx) {
  loom_attr_value_t value;
  if (!loom_gradient_context_attr(ctx, "bad_indices_policy", &value)) {
    value =
        (loom_attr_value_t){.kind = LOOM_ATTR_KIND_STRING, .u.string = {"", 0}};
  }
  return LOOM_GRAD_VALUE("bad_indices_policy", value);
}

// GatherNd(params, indices): dparams = ScatterNd(indices, dy, shape).
static loom_status_t gather_nd_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                    handle_t** dxs, void* data) {
  (void)data;
  const loom_shape_t* params = &input_metadata(ctx, 0)->shape;
  LOOM_RETURN_IF_ERROR(need_known(ctx, params));
  handle_t* t[2] = {NULL, NULL};
  loom_status_t s = wide_indices(ctx, 1, &t[0]);
  if (!s) {
    loom_tensor_metadata_t m;
    s = loom__grad_metadata(t[0], &m);
    if (!s) {
      s = loom__grad_int_vector(ctx, m.dtype, params->dims, params->rank,
                                &t[1]);
    }
  }
  if (!s) {
    s = loom__grad_op(ctx, "ScatterNd", LOOM_GRAD_INPUTS(t[0], dys[0], t[1]),
                      LOOM_GRAD_ATTRS(policy_attr(ctx)), &dxs[0]);
  }
  RELEASE(t);
  return s;
}

// ScatterNd(indices, updates, shape): dupdates = GatherNd(dy, indices).
static loom_status_t scatter_nd_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                     handle_t** dxs, void* data) {
  (void)data;
  return loom__grad_op(
      ctx, "GatherNd",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 0)),
      LOOM_GRAD_ATTRS(policy_attr(ctx)), &dxs[1]);
}

// TensorScatterUpdate(tensor, indices, updates): dtensor is dy with the
// replaced entries zeroed, dupdates = GatherNd(dy, indices).
static loom_status_t tensor_scatter_update_grad(grad_ctx_t* ctx,
                                                handle_t* const* dys,
                                                handle_t** dxs, void* data) {
  (void)data;
  handle_t* indices = loom_gradient_context_input(ctx, 1);
  handle_t* zeros = NULL;
  loom_status_t s = loom__grad_filled(ctx, input_metadata(ctx, 2), 0.0, &zeros);
  if (!s) {
    s = loom__grad_op(ctx, "TensorScatterUpdate",
                      LOOM_GRAD_INPUTS(dys[0], indices, zeros),
                      LOOM_GRAD_ATTRS(policy_attr(ctx)), &dxs[0]);
  }
  if (!s) {
    s = loom__grad_op(ctx, "GatherNd", LOOM_GRAD_INPUTS(dys[0], indices),
                      LOOM_GRAD_ATTRS(policy_attr(ctx)), &dxs[2]);
  }
  loom_tensor_handle_release(zeros);
  return s;
}

// TopKV2(input, k): the values' gradient goes back to the entries they
// were taken from. With the input as [rows, n], entry j of row r came from
// flat position r * n + indices[r, j]; a ScatterNd into [rows * n] puts
// the gradient there.
static loom_status_t top_k_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                handle_t** dxs, void* data) {
  (void)data;
  const loom_shape_t* input = &input_metadata(ctx, 0)->shape;
  const loom_tensor_metadata_t* indices_m =
      loom_gradient_context_output_metadata(ctx, 1);
  LOOM_RETURN_IF_ERROR(need_known(ctx, input));
  LOOM_RETURN_IF_ERROR(need_known(ctx, &indices_m->shape));
  int64_t n = input->dims[input->rank - 1];
  int64_t k = indices_m->shape.dims[indices_m->shape.rank - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < input->rank; ++d) rows *= input->dims[d];
  loom_dtype_t dtype = indices_m->dtype == LOOM_DTYPE_INT64 ? LOOM_DTYPE_INT64
                                                            : LOOM_DTYPE_INT32;
  handle_t* t[10] = {NULL};
  loom_status_t s = loom_ok_status();
  handle_t* indices = loom_gradient_context_output(ctx, 1);
  if (indices_m->dtype == LOOM_DTYPE_INT16) {
    s = loom__grad_op(ctx, "Cast", LOOM_GRAD_INPUTS(indices),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("DstT", dtype)), &t[0]);
    indices = t[0];
  }
  int64_t rk[2] = {rows, k};
  if (!s) s = loom__grad_reshape(ctx, indices, rk, 2, &t[1]);
  // Row offsets r * n, as a [rows, 1] constant.
  int64_t* offsets = NULL;
  if (!s) {
    offsets = malloc(sizeof(int64_t) * (size_t)(rows > 0 ? rows : 1));
    if (!offsets) {
      s = loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                           "TopKV2 (gradient): out of memory");
    }
  }
  if (!s) {
    for (int64_t r = 0; r < rows; ++r) offsets[r] = r * n;
    int64_t r1[2] = {rows, 1};
    s = loom__grad_int_tensor(ctx, dtype, r1, 2, offsets, &t[2]);
  }
  free(offsets);
  if (!s) s = loom__grad_binary(ctx, "AddV2", t[1], t[2], &t[3]);
  int64_t flat[2] = {rows * k, 1};
  if (!s) s = loom__grad_reshape(ctx, t[3], flat, 2, &t[4]);
  if (!s) s = loom__grad_output_gradient_or_zeros(ctx, dys, 0, &t[5]);
  if (!s) s = loom__grad_reshape(ctx, t[5], flat, 1, &t[6]);
  int64_t size = rows * n;
  if (!s) s = loom__grad_int_vector(ctx, dtype, &size, 1, &t[7]);
  if (!s) {
    s = loom__grad_op(ctx, "ScatterNd", LOOM_GRAD_INPUTS(t[4], t[6], t[7]),
                      LOOM_GRAD_NO_ATTRS, &t[8]);
  }
  if (!s) s = loom__grad_reshape(ctx, t[8], input->dims, input->rank, &dxs[0]);
  RELEASE(t);
  return s;
}

// MatrixBandPart(x, lower, upper): dx = MatrixBandPart(dy, lower, upper).
static loom_status_t band_part_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                    handle_t** dxs, void* data) {
  (void)data;
  return loom__grad_op(
      ctx, "MatrixBandPart",
      LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 1),
                       loom_gradient_context_input(ctx, 2)),
      LOOM_GRAD_NO_ATTRS, &dxs[0]);
}

static loom__grad_attr_t align_attr(grad_ctx_t* ctx) {
  loom_attr_value_t value;
  if (!loom_gradient_context_attr(ctx, "align", &value)) {
    value = (loom_attr_value_t){.kind = LOOM_ATTR_KIND_STRING,
                                .u.string = {"RIGHT_LEFT", 10}};
  }
  return LOOM_GRAD_VALUE("align", value);
}

// MatrixDiagV3(diagonal, k, rows, cols, padding): ddiagonal =
// MatrixDiagPartV3(dy, k, 0) (the padding's gradient is not defined, as
// in TensorFlow).
static loom_status_t matrix_diag_grad(grad_ctx_t* ctx, handle_t* const* dys,
                                      handle_t** dxs, void* data) {
  (void)data;
  handle_t* zero = NULL;
  loom_status_t s =
      loom__grad_scalar(ctx, input_metadata(ctx, 0)->dtype, 0.0, &zero);
  if (!s) {
    s = loom__grad_op(
        ctx, "MatrixDiagPartV3",
        LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 1), zero),
        LOOM_GRAD_ATTRS(align_attr(ctx)), &dxs[0]);
  }
  loom_tensor_handle_release(zero);
  return s;
}

// MatrixDiagPartV3(input, k, padding): dinput = MatrixDiagV3(dy, k, rows,
// cols, 0) with the input's rows and columns.
static loom_status_t matrix_diag_part_grad(grad_ctx_t* ctx,
                                           handle_t* const* dys, handle_t** dxs,
                                           void* data) {
  (void)data;
  const loom_tensor_metadata_t* m = input_metadata(ctx, 0);
  LOOM_RETURN_IF_ERROR(need_known(ctx, &m->shape));
  handle_t* t[3] = {NULL, NULL, NULL};
  int64_t rows = m->shape.dims[m->shape.rank - 2];
  int64_t cols = m->shape.dims[m->shape.rank - 1];
  loom_status_t s =
      loom__grad_int_tensor(ctx, LOOM_DTYPE_INT32, NULL, 0, &rows, &t[0]);
  if (!s)
    s = loom__grad_int_tensor(ctx, LOOM_DTYPE_INT32, NULL, 0, &cols, &t[1]);
  if (!s) s = loom__grad_scalar(ctx, m->dtype, 0.0, &t[2]);
  if (!s) {
    s = loom__grad_op(
        ctx, "MatrixDiagV3",
        LOOM_GRAD_INPUTS(dys[0], loom_gradient_context_input(ctx, 1), t[0],
                         t[1], t[2]),
        LOOM_GRAD_ATTRS(align_attr(ctx)), &dxs[0]);
  }
  RELEASE(t);
  return s;
}

static const loom__gradient_row_t kGradients[] = {
    {.op = "GatherNd", .fn = gather_nd_grad, .inputs = USES(1)},
    {.op = "ScatterNd", .fn = scatter_nd_grad, .inputs = USES(0)},
    {.op = "TensorScatterUpdate",
     .fn = tensor_scatter_update_grad,
     .inputs = USES(1)},
    {.op = "TopKV2", .fn = top_k_grad, .outputs = USES(1)},
    {.op = "MatrixBandPart", .fn = band_part_grad, .inputs = USES(1) | USES(2)},
    {.op = "MatrixDiagV3", .fn = matrix_diag_grad, .inputs = USES(1)},
    {.op = "MatrixDiagPartV3", .fn = matrix_diag_part_grad, .inputs = USES(1)},
};

// Index-valued, as in TensorFlow.
static const char* const kNotDifferentiable[] = {"Unique"};

loom_status_t loom__register_indexing_gradients(void) {
  return LOOM__REGISTER_GRADIENT_FAMILY(kGradients, kNotDifferentiable);
}
