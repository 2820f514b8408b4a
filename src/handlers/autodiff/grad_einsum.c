// Einsum's gradient, as TensorFlow's: input x's gradient is an einsum of
// the output gradient (with the other input, for two) to x's labels, then
// the sums that the forward op did put back. Labels x alone summed away
// come back by broadcasting; ellipsis dimensions x broadcast along
// (size 1 or missing) are summed. A label repeated within x (a diagonal,
// "ii->i") takes the gradient as TensorFlow does: the gradient with respect
// to x's distinct labels (broadcast along those summed away), put back on
// the diagonal by an einsum with the label repeated in its output
// ("i->ii"), which places it there and zeros elsewhere; an ellipsis in
// x rides along ("...ii->..." gets "...i->...ii").
//
// The forward kernel checked the equation; this file only splits it.

#include <stdio.h>
#include <string.h>

#include "handlers/autodiff/grad_ops.h"
#include "handlers/autodiff/gradient_families.h"

typedef loom_gradient_context_t ctx_t;
typedef loom_tensor_handle_t handle_t;

// Three subscripts of up to LOOM_MAX_SHAPE_RANK labels and an ellipsis.
enum { kMaxEquation = 1024 };

typedef struct subscript_t {
  const char* text;
  size_t length;
} subscript_t;

// Splits "a,b->c" (or "a->c") into its subscripts; false when malformed.
static bool split_equation(const char* text, size_t length, subscript_t* in,
                           int32_t* num_in, subscript_t* out) {
  const char* arrow = NULL;
  for (size_t i = 0; i + 1 < length; ++i) {
    if (text[i] == '-' && text[i + 1] == '>') {
      arrow = text + i;
      break;
    }
  }
  if (!arrow) return false;
  size_t left = (size_t)(arrow - text);
  const char* comma = memchr(text, ',', left);
  in[0].text = text;
  in[0].length = comma ? (size_t)(comma - text) : left;
  *num_in = 1;
  if (comma) {
    in[1].text = comma + 1;
    in[1].length = left - in[0].length - 1;
    *num_in = 2;
  }
  out->text = arrow + 2;
  out->length = length - left - 2;
  return true;
}

static bool has_label(const subscript_t* s, char label) {
  return s && memchr(s->text, label, s->length) != NULL;
}

// Whether a label repeats within `x`.
static bool has_repeated_label(const subscript_t* x) {
  for (size_t i = 0; i < x->length; ++i) {
    if (x->text[i] != '.' &&
        memchr(x->text + i + 1, x->text[i], x->length - i - 1)) {
      return true;
    }
  }
  return false;
}

// The gradient of an x shaped `x_shape` whose subscript `x` has no
// repeated label, from `dy` (and `other`, the other input, with its
// subscript, for two inputs).
static loom_status_t input_grad(ctx_t* ctx, const loom_shape_t* x_shape,
                                handle_t* dy, const subscript_t* x,
                                const subscript_t* o, handle_t* other,
                                const subscript_t* out_sub, handle_t** dx) {
  // x's labels kept (those the output or the other input has), the
  // ellipsis position (in x and in the kept labels), and the shape with
  // summed labels as 1.
  char kept[kMaxEquation + 3];
  size_t nkept = 0;
  int32_t named_before_ellipsis = -1, kept_before_ellipsis = -1, named = 0;
  bool summed_any = false;
  const int64_t* x_dims = loom_shape_dims(x_shape);
  int64_t reshaped_dims[LOOM_MAX_SHAPE_RANK];
  memcpy(reshaped_dims, x_dims, (size_t)x_shape->rank * sizeof(int64_t));
  for (size_t i = 0; i < x->length; ++i) {
    char c = x->text[i];
    if (c == '.') {
      named_before_ellipsis = named;
      kept_before_ellipsis = (int32_t)nkept;
      memcpy(kept + nkept, "...", 3);
      nkept += 3;
      i += 2;
      continue;
    }
    named++;
    if (has_label(out_sub, c) || has_label(o, c)) {
      kept[nkept++] = c;
    } else {
      summed_any = true;
    }
  }
  // x without an ellipsis while the others broadcast ("ij,...jk->...ik"):
  // the einsum keeps their ellipsis dims in front, summed below.
  if (named_before_ellipsis < 0 &&
      (memchr(out_sub->text, '.', out_sub->length) ||
       (o && memchr(o->text, '.', o->length)))) {
    memmove(kept + 3, kept, nkept);
    memcpy(kept, "...", 3);
    nkept += 3;
    named_before_ellipsis = kept_before_ellipsis = 0;
  }
  int32_t x_bcast = x_shape->rank - named;
  // Mark the summed axes of x as 1 in `reshaped`.
  if (summed_any) {
    int32_t axis = 0;
    for (size_t i = 0; i < x->length; ++i) {
      char c = x->text[i];
      if (c == '.') {
        axis += x_bcast;
        i += 2;
        continue;
      }
      if (!has_label(out_sub, c) && !has_label(o, c)) reshaped_dims[axis] = 1;
      axis++;
    }
  }
  loom_shape_t reshaped;
  LOOM_RETURN_IF_ERROR(
      loom_shape_initialize_large(&reshaped, reshaped_dims, x_shape->rank));
  char equation[3 * kMaxEquation];
  if (o) {
    snprintf(equation, sizeof(equation), "%.*s,%.*s->%.*s",
             (int)out_sub->length, out_sub->text, (int)o->length, o->text,
             (int)nkept, kept);
  } else {
    snprintf(equation, sizeof(equation), "%.*s->%.*s", (int)out_sub->length,
             out_sub->text, (int)nkept, kept);
  }
  handle_t* t[3] = {NULL, NULL, NULL};
  loom_status_t s =
      o ? loom__grad_op(ctx, "Einsum", LOOM_GRAD_INPUTS(dy, other),
                        LOOM_GRAD_ATTRS(LOOM_GRAD_STRING("equation", equation),
                                        LOOM_GRAD_INT("N", 2)),
                        &t[0])
        : loom__grad_op(ctx, "Einsum", LOOM_GRAD_INPUTS(dy),
                        LOOM_GRAD_ATTRS(LOOM_GRAD_STRING("equation", equation),
                                        LOOM_GRAD_INT("N", 1)),
                        &t[0]);
  // Ellipsis dims x broadcast along: summed.
  int64_t axes[LOOM_MAX_SHAPE_RANK];
  int32_t num_axes = 0;
  if (!s && named_before_ellipsis >= 0) {
    loom_tensor_metadata_t meta;
    s = loom__grad_metadata(t[0], &meta);
    int32_t full = meta.shape.rank - (int32_t)(nkept - 3);
    const int64_t* t_dims = loom_shape_dims(&meta.shape);
    for (int32_t j = 0; !s && j < full; ++j) {
      int32_t jx = j - (full - x_bcast);
      int32_t axis = kept_before_ellipsis + j;
      if (jx < 0 ||
          (x_dims[named_before_ellipsis + jx] == 1 && t_dims[axis] != 1)) {
        axes[num_axes++] = axis;
      }
    }
  }
  if (!s)
    s = loom__grad_sum_to_shape(ctx, t[0], axes, num_axes, &reshaped, &t[1]);
  if (!s && summed_any) {
    s = loom__grad_shape_constant(ctx, x_shape, &t[2]);
    if (!s) s = loom__grad_binary(ctx, "BroadcastTo", t[1], t[2], dx);
  } else if (!s) {
    loom_tensor_handle_retain(t[1]);
    *dx = t[1];
  }
  loom__grad_release_all(t, 3);
  return s;
}

// The gradient of an x whose subscript repeats a label: the gradient with
// respect to d, x's diagonal with each label once ("...ii" gives "...i";
// the forward op reads x only there), put back on the diagonal by the
// inflating Einsum("d->x"), zeros elsewhere. The ellipsis, if any, stays
// an ellipsis: it is x's own and d's alike.
static loom_status_t diagonal_grad(ctx_t* ctx, const loom_shape_t* x_shape,
                                   handle_t* dy, const subscript_t* x,
                                   const subscript_t* o, handle_t* other,
                                   const subscript_t* out_sub, handle_t** dx) {
  char distinct[kMaxEquation];
  size_t length = 0;
  const int64_t* x_dims = loom_shape_dims(x_shape);
  int64_t d_dims[LOOM_MAX_SHAPE_RANK];
  int32_t d_rank = 0;
  int32_t x_bcast = x_shape->rank;
  for (size_t i = 0; i < x->length; ++i) {
    if (x->text[i] != '.') x_bcast--;
  }
  int32_t axis = 0;
  for (size_t i = 0; i < x->length; ++i) {
    char c = x->text[i];
    if (c == '.') {
      memcpy(distinct + length, "...", 3);
      length += 3;
      i += 2;
      for (int32_t b = 0; b < x_bcast; ++b) {
        d_dims[d_rank++] = x_dims[axis++];
      }
      continue;
    }
    if (!memchr(x->text, c, i)) {
      distinct[length++] = c;
      d_dims[d_rank++] = x_dims[axis];
    }
    axis++;
  }
  subscript_t d = {.text = distinct, .length = length};
  loom_shape_t d_shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&d_shape, d_dims, d_rank));
  handle_t* dd = NULL;
  loom_status_t s = input_grad(ctx, &d_shape, dy, &d, o, other, out_sub, &dd);
  if (!s) {
    char equation[3 * kMaxEquation];
    snprintf(equation, sizeof(equation), "%.*s->%.*s", (int)length, distinct,
             (int)x->length, x->text);
    s = loom__grad_op(ctx, "Einsum", LOOM_GRAD_INPUTS(dd),
                      LOOM_GRAD_ATTRS(LOOM_GRAD_STRING("equation", equation),
                                      LOOM_GRAD_INT("N", 1)),
                      dx);
  }
  loom__grad_release_all(&dd, 1);
  return s;
}

static loom_status_t einsum_grad(ctx_t* ctx, handle_t* const* dy, handle_t** dx,
                                 void* user) {
  (void)user;
  if (!dy[0]) return loom_ok_status();
  loom_dtype_t dtype = loom_gradient_context_output_metadata(ctx, 0)->dtype;
  if (dtype != LOOM_DTYPE_FLOAT && dtype != LOOM_DTYPE_DOUBLE &&
      dtype != LOOM_DTYPE_HALF && dtype != LOOM_DTYPE_BFLOAT16) {
    return loom_ok_status();  // no gradient through integers
  }
  loom_attr_value_t value;
  subscript_t in[2], out;
  int32_t num_in = 0;
  if (!loom_gradient_context_attr(ctx, "equation", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING ||
      value.u.string.size >= kMaxEquation ||
      !split_equation(value.u.string.data, value.u.string.size, in, &num_in,
                      &out) ||
      num_in != loom_gradient_context_num_inputs(ctx)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "%s gradient: attr 'equation' is not an equation "
                            "of at most %d characters with one '->' and one "
                            "subscript per input",
                            loom_gradient_context_op_name(ctx),
                            kMaxEquation - 1);
  }
  for (int32_t i = 0; i < num_in; ++i) {
    if (!loom_gradient_context_input_needs_gradient(ctx, i)) continue;
    const subscript_t* o = num_in == 2 ? &in[1 - i] : NULL;
    handle_t* other =
        num_in == 2 ? loom_gradient_context_input(ctx, 1 - i) : NULL;
    const loom_shape_t* shape =
        &loom_gradient_context_input_metadata(ctx, i)->shape;
    LOOM_RETURN_IF_ERROR(
        (has_repeated_label(&in[i]) ? diagonal_grad : input_grad)(
            ctx, shape, dy[0], &in[i], o, other, &out, &dx[i]));
  }
  return loom_ok_status();
}

static const loom__gradient_row_t kGradients[] = {
    {.op = "Einsum", .fn = einsum_grad, .inputs = LOOM_GRADIENT_USES_ALL},
};

loom_status_t loom__register_einsum_gradients(void) {
  return loom__register_gradient_family(kGradients, LOOM__COUNT_OF(kGradients),
                                        NULL, 0);
}
