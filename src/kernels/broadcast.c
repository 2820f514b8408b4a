// NumPy broadcasting: shapes and strided iteration plans.

#include "kernels/broadcast.h"

#include <stdio.h>
#include <string.h>

#include "kernels/shape_fns.h"
#include "loom/allocator.h"
#include "tensor/checked_size.h"

bool loom__broadcast_compatible(const loom_shape_t* a, const loom_shape_t* b) {
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a_dims[ia] : 1;
    int64_t db = ib >= 0 ? b_dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
  }
  return true;
}

// TensorFlow's message for shapes that do not broadcast. Out of line: the
// text of two spilled shapes is large.
static __attribute__((noinline)) loom_status_t incompatible_error(
    const loom_shape_t* a, const loom_shape_t* b) {
  char ta[LOOM_SHAPE_FORMAT_MAX], tb[LOOM_SHAPE_FORMAT_MAX];
  loom__shape_debug_string(a, ta, sizeof(ta));
  loom__shape_debug_string(b, tb, sizeof(tb));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Incompatible shapes: %s vs. %s", ta, tb);
}

static __attribute__((noinline)) loom_status_t overflow_error(
    const char* op, const loom_shape_t* a, const loom_shape_t* b) {
  char ta[LOOM_SHAPE_FORMAT_MAX], tb[LOOM_SHAPE_FORMAT_MAX];
  return loom__size_overflow_error(
      op, "shapes", "%s vs. %s",
      loom__format_int64s(loom_shape_dims(a), a->rank, ta, sizeof(ta)),
      loom__format_int64s(loom_shape_dims(b), b->rank, tb, sizeof(tb)));
}

// The broadcast of shapes one of which is above LOOM_MAX_RANK: its dims
// are gathered here, then interned. Out of line, off the common path.
static __attribute__((noinline)) loom_status_t broadcast_large(
    const char* op, const loom_shape_t* a, const loom_shape_t* b,
    loom_shape_t* out_shape) {
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int32_t i = 0; i < rank; ++i) {
    int32_t ia = i - (rank - a->rank);
    int32_t ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a_dims[ia] : 1;
    int64_t db = ib >= 0 ? b_dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return incompatible_error(a, b);
    dims[i] = da == 1 ? db : da;
  }
  int64_t count;
  if (!loom__size_product(dims, rank, &count)) return overflow_error(op, a, b);
  return loom_shape_initialize_large(out_shape, dims, rank);
}

loom_status_t loom__broadcast_shapes(const char* op, const loom_shape_t* a,
                                     const loom_shape_t* b,
                                     loom_shape_t* out_shape) {
  if (LOOM_UNLIKELY(a->rank > LOOM_MAX_RANK || b->rank > LOOM_MAX_RANK)) {
    if (loom_shape_equal(a, b)) {
      *out_shape = *a;
      return loom_ok_status();
    }
    return broadcast_large(op, a, b, out_shape);
  }
  if (a->rank == b->rank && a->rank >= 0) {
    int32_t i = 0;
    while (i < a->rank && a->dims[i] == b->dims[i]) ++i;
    if (i == a->rank) {
      *out_shape = *a;  // the common case: equal shapes
      return loom_ok_status();
    }
  }
  int32_t rank = a->rank > b->rank ? a->rank : b->rank;
  loom_shape_t out;
  memset(&out, 0, sizeof(out));
  out.rank = rank;
  for (int32_t i = 0; i < rank; ++i) {
    // Align from the right.
    int32_t ia = i - (rank - a->rank);
    int32_t ib = i - (rank - b->rank);
    int64_t da = ia >= 0 ? a->dims[ia] : 1;
    int64_t db = ib >= 0 ? b->dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return incompatible_error(a, b);
    out.dims[i] = da == 1 ? db : da;
  }
  // Each operand's count fits int64; their broadcast's need not.
  int64_t count;
  if (!loom__size_product(out.dims, out.rank, &count)) {
    return overflow_error(op, a, b);
  }
  *out_shape = out;
  return loom_ok_status();
}

loom_status_t loom__broadcast_fold(const loom_shape_t* output,
                                   const loom_shape_t* const* operands,
                                   int32_t n, loom_shape_t* folded_output,
                                   loom_shape_t* folded,
                                   loom__broadcast_peel_t** peel) {
  const int64_t* out_dims = loom_shape_dims(output);
  int64_t count = loom_shape_num_elements(output);
  *peel = NULL;
  if (count == 0) {
    // Nothing is walked; the other dims need not multiply within int64.
    int64_t zero = 0, one = 1;
    LOOM_RETURN_IF_ERROR(loom_shape_initialize(folded_output, &zero, 1));
    for (int32_t k = 0; k < n; ++k) {
      bool empty = loom_shape_num_elements(operands[k]) == 0;
      LOOM_RETURN_IF_ERROR(
          loom_shape_initialize(&folded[k], empty ? &zero : &one, 1));
    }
    return loom_ok_status();
  }
  // Every product below is at most the output's count, which fits int64.
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  uint32_t kinds[LOOM_MAX_SHAPE_RANK];  // bit k: operand k walks the dim
  int32_t rank = 0;
  for (int32_t i = 0; i < output->rank; ++i) {
    if (out_dims[i] == 1) continue;
    uint32_t kind = 0;
    for (int32_t k = 0; k < n; ++k) {
      int32_t j = i - (output->rank - operands[k]->rank);
      if (j >= 0 && loom_shape_dims(operands[k])[j] != 1) kind |= 1u << k;
    }
    if (rank > 0 && kinds[rank - 1] == kind) {
      dims[rank - 1] *= out_dims[i];
      continue;
    }
    dims[rank] = out_dims[i];
    kinds[rank] = kind;
    rank++;
  }
  // Beyond LOOM_MAX_RANK groups, the outer ones go to *peel with their
  // strides: an operand's is the product of the dims it walks inside.
  int32_t outer = rank > LOOM_MAX_RANK ? rank - LOOM_MAX_RANK : 0;
  if (outer > 0) {
    loom__broadcast_peel_t* p = NULL;
    LOOM_RETURN_IF_ERROR(loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*p), (void**)&p));
    p->rank = outer;
    int64_t out_stride = 1;
    int64_t strides[kBroadcastMaxOperands];
    for (int32_t k = 0; k < n; ++k) strides[k] = 1;
    for (int32_t g = rank - 1; g >= 0; --g) {
      if (g < outer) {
        p->dims[g] = dims[g];
        p->out_strides[g] = out_stride;
        for (int32_t k = 0; k < n; ++k) {
          p->strides[k][g] = (kinds[g] >> k) & 1u ? strides[k] : 0;
        }
      }
      out_stride *= dims[g];
      for (int32_t k = 0; k < n; ++k) {
        if ((kinds[g] >> k) & 1u) strides[k] *= dims[g];
      }
    }
    *peel = p;
  }
  loom_status_t status =
      loom_shape_initialize(folded_output, dims + outer, rank - outer);
  for (int32_t k = 0; k < n && !status; ++k) {
    int64_t operand[LOOM_MAX_RANK];
    for (int32_t d = outer; d < rank; ++d) {
      operand[d - outer] = (kinds[d] >> k) & 1u ? dims[d] : 1;
    }
    status = loom_shape_initialize(&folded[k], operand, rank - outer);
  }
  if (status) {
    loom_allocator_free(loom_allocator_default(), *peel);
    *peel = NULL;
  }
  return status;
}

loom_status_t loom__broadcast_plan_init_any_rank(
    loom__broadcast_plan_t* plan, const loom_shape_t* output,
    const loom_shape_t* const* operands, int32_t n,
    loom__broadcast_peel_t** peel) {
  bool large = output->rank > LOOM_MAX_RANK;
  for (int32_t k = 0; k < n; ++k) large |= operands[k]->rank > LOOM_MAX_RANK;
  *peel = NULL;
  if (LOOM_LIKELY(!large)) {
    loom__broadcast_plan_init(plan, output, operands, n);
    return loom_ok_status();
  }
  loom_shape_t folded_output;
  loom_shape_t folded[kBroadcastMaxOperands];
  const loom_shape_t* folded_operands[kBroadcastMaxOperands];
  LOOM_RETURN_IF_ERROR(
      loom__broadcast_fold(output, operands, n, &folded_output, folded, peel));
  for (int32_t k = 0; k < n; ++k) folded_operands[k] = &folded[k];
  loom__broadcast_plan_init(plan, &folded_output, folded_operands, n);
  return loom_ok_status();
}

// The common case in one loop: every operand has the output's shape or is a
// single element (a tiny op's planning is a good part of its cost).
static bool flat_plan(loom__broadcast_plan_t* plan, const loom_shape_t* output,
                      const loom_shape_t* const* operands, int32_t n) {
  int64_t total = loom_shape_num_elements(output);
  for (int32_t k = 0; k < n; ++k) {
    const loom_shape_t* shape = operands[k];
    if (loom_shape_equal(shape, output)) {
      plan->strides[k][0] = 1;
    } else if (loom_shape_num_elements(shape) == 1) {
      plan->strides[k][0] = 0;
    } else {
      return false;
    }
  }
  plan->num_operands = n;
  plan->rank = 1;
  plan->dims[0] = total;
  plan->inner = total;
  plan->outer = 1;
  return true;
}

void loom__broadcast_plan_init(loom__broadcast_plan_t* plan,
                               const loom_shape_t* output,
                               const loom_shape_t* const* operands, int32_t n) {
  if (flat_plan(plan, output, operands, n)) return;
  memset(plan, 0, sizeof(*plan));
  plan->num_operands = n;
  if (loom_shape_num_elements(output) == 0) {
    // Nothing to walk; the other dims of an empty output (and of its
    // operands) need not multiply within int64, so they are not planned.
    plan->rank = 1;
    plan->inner = 0;
    plan->outer = 1;
    return;
  }
  // From here every product of dims below is at most the output's count.
  // Full-rank strides, outermost first; size-1 dims of the output are
  // dropped (they change nothing).
  int64_t dims[LOOM_MAX_RANK];
  int64_t strides[kBroadcastMaxOperands][LOOM_MAX_RANK];
  int32_t rank = 0;
  for (int32_t i = 0; i < output->rank; ++i) {
    if (output->dims[i] == 1) continue;
    dims[rank] = output->dims[i];
    for (int32_t k = 0; k < n; ++k) {
      const loom_shape_t* shape = operands[k];
      int32_t j = i - (output->rank - shape->rank);
      int64_t stride = 0;
      if (j >= 0 && shape->dims[j] != 1) {
        stride = 1;
        for (int32_t m = j + 1; m < shape->rank; ++m) stride *= shape->dims[m];
      }
      strides[k][rank] = stride;
    }
    rank++;
  }
  if (rank == 0) {  // a scalar (or all ones): one loop of one element
    plan->rank = 1;
    plan->dims[0] = 1;
    plan->inner = 1;
    plan->outer = 1;
    return;
  }
  // Merge dim d into d + 1 when every operand steps through both as one:
  // stride[d] == stride[d + 1] * dims[d + 1] (both 0 included).
  int32_t out = 0;
  plan->dims[0] = dims[0];
  for (int32_t k = 0; k < n; ++k) plan->strides[k][0] = strides[k][0];
  for (int32_t d = 1; d < rank; ++d) {
    bool mergeable = true;
    for (int32_t k = 0; k < n && mergeable; ++k) {
      mergeable = plan->strides[k][out] == strides[k][d] * dims[d];
    }
    if (mergeable) {
      plan->dims[out] *= dims[d];
      for (int32_t k = 0; k < n; ++k) plan->strides[k][out] = strides[k][d];
    } else {
      out++;
      plan->dims[out] = dims[d];
      for (int32_t k = 0; k < n; ++k) plan->strides[k][out] = strides[k][d];
    }
  }
  plan->rank = out + 1;
  plan->inner = plan->dims[out];
  plan->outer = 1;
  for (int32_t d = 0; d < out; ++d) plan->outer *= plan->dims[d];
}

void loom__broadcast_plan_offsets(const loom__broadcast_plan_t* plan,
                                  int64_t row, int64_t* offsets) {
  for (int32_t k = 0; k < plan->num_operands; ++k) offsets[k] = 0;
  for (int32_t d = plan->rank - 2; d >= 0; --d) {
    int64_t index = row % plan->dims[d];
    row /= plan->dims[d];
    for (int32_t k = 0; k < plan->num_operands; ++k) {
      offsets[k] += index * plan->strides[k][d];
    }
  }
}
