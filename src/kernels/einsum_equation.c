// Einsum's equation: parsing and resolution against the input shapes.

#include "kernels/einsum_equation.h"

#include <string.h>

#include "kernels/shape_fns.h"
#include "tensor/checked_size.h"

static loom_status_t invalid_subscript(const char* equation, size_t length,
                                       const char* what) {
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Einsum: %s in einsum equation: %.*s", what,
                          (int)length, equation);
}

// Labels of one subscript, text [begin, end), into `sub`; named labels get
// ids through `equation`'s table.
static loom_status_t parse_subscript(const char* text, size_t begin, size_t end,
                                     const char* equation, size_t length,
                                     loom__einsum_equation_t* eq,
                                     loom__einsum_subscript_t* sub) {
  memset(sub, 0, sizeof(*sub));
  for (size_t i = begin; i < end; ++i) {
    char c = text[i];
    loom__einsum_label_t term;
    if (c == '.') {
      if (i + 3 > end || text[i + 1] != '.' || text[i + 2] != '.') {
        return invalid_subscript(equation, length,
                                 "'.' outside an ellipsis ('...')");
      }
      if (sub->has_ellipsis) {
        return invalid_subscript(equation, length,
                                 "more than one ellipsis in a subscript");
      }
      sub->has_ellipsis = true;
      term = kEinsumEllipsis;
      i += 2;
    } else if (c == '-' || c == '>' || c == ',') {
      return invalid_subscript(equation, length, "misplaced ',', '-' or '>'");
    } else {
      int32_t id = -1;
      for (int32_t j = 0; j < eq->num_named; ++j) {
        if (eq->names[j] == c) id = j;
      }
      if (id < 0) {
        if (eq->num_named == kEinsumMaxNamed) {
          return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "Einsum: more than %d distinct labels in "
                                  "einsum equation: %.*s",
                                  kEinsumMaxNamed, (int)length, equation);
        }
        id = eq->num_named++;
        eq->names[id] = c;
      }
      term = (loom__einsum_label_t)id;
    }
    if (sub->count == kEinsumMaxTerms ||
        (sub->count == kEinsumMaxAxes && !sub->has_ellipsis)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Einsum: a subscript names more than %d axes in "
                              "einsum equation: %.*s",
                              kEinsumMaxAxes, (int)length, equation);
    }
    sub->terms[sub->count++] = term;
  }
  return loom_ok_status();
}

loom_status_t loom__einsum_parse(const char* equation, size_t length,
                                 loom__einsum_equation_t* out) {
  memset(out, 0, sizeof(*out));
  // Exactly one "->", as TensorFlow's op requires (tf.einsum adds it).
  size_t arrow = length;
  int arrows = 0;
  for (size_t i = 0; i + 1 < length; ++i) {
    if (equation[i] == '-' && equation[i + 1] == '>') {
      if (arrows++ == 0) arrow = i;
    }
  }
  if (arrows != 1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Expecting exactly one '->' in einsum equation: %.*s", (int)length,
        equation);
  }
  size_t commas = 0, comma = arrow;
  for (size_t i = 0; i < arrow; ++i) {
    if (equation[i] == ',') {
      if (commas++ == 0) comma = i;
    }
  }
  if (commas > 1) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Expecting 1 or 2 input subscripts in equation '%.*s' but got: %zu",
        (int)length, equation, commas + 1);
  }
  out->num_inputs = (int32_t)commas + 1;
  LOOM_RETURN_IF_ERROR(parse_subscript(equation, 0, comma, equation, length,
                                       out, &out->inputs[0]));
  if (commas == 1) {
    LOOM_RETURN_IF_ERROR(parse_subscript(equation, comma + 1, arrow, equation,
                                         length, out, &out->inputs[1]));
  }
  int32_t named_in_inputs = out->num_named;
  LOOM_RETURN_IF_ERROR(parse_subscript(equation, arrow + 2, length, equation,
                                       length, out, &out->output));
  for (int32_t i = 0; i < out->output.count; ++i) {
    loom__einsum_label_t label = out->output.terms[i];
    if (label == kEinsumEllipsis) continue;
    if (label >= named_in_inputs) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Einsum: output label '%c' appears in no input subscript of einsum "
          "equation: %.*s",
          out->names[label], (int)length, equation);
    }
  }
  return loom_ok_status();
}

// Records `dim` for `label` at `axis` of `shape` (a named label: all its
// axes have one size).
static loom_status_t record_named(loom__einsum_plan_t* plan,
                                  loom__einsum_label_t label, int32_t axis,
                                  const loom_shape_t* shape) {
  int64_t dim = loom_shape_dims(shape)[axis];
  int64_t* known = &plan->dims[label];
  if (*known < 0) {
    *known = dim;
  } else if (dim >= 0 && dim != *known) {
    char text[160];
    loom__shape_debug_string(shape, text, sizeof(text));
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Expected dimension %lld at axis %d of the input "
                            "shaped %s but got dimension %lld",
                            (long long)*known, (int)axis, text, (long long)dim);
  }
  return loom_ok_status();
}

loom_status_t loom__einsum_resolve(const loom__einsum_equation_t* equation,
                                   const loom_shape_t* const* shapes,
                                   int32_t num_shapes,
                                   loom__einsum_plan_t* out) {
  out->num_labels = 0;
  out->ranks[0] = out->ranks[1] = 0;
  out->output_rank = 0;
  out->output_shape = loom_shape_scalar();
  if (num_shapes != equation->num_inputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Expected %d inputs but got: %d",
                            (int)equation->num_inputs, (int)num_shapes);
  }
  int32_t named = equation->num_named;
  // Broadcast dims per input, and the most of them.
  int32_t bcast[2] = {0, 0}, max_bcast = 0;
  for (int32_t i = 0; i < num_shapes; ++i) {
    const loom__einsum_subscript_t* sub = &equation->inputs[i];
    int32_t rank = shapes[i]->rank;
    int32_t named_terms = sub->count - (sub->has_ellipsis ? 1 : 0);
    if (!sub->has_ellipsis && rank != sub->count) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Expected input %d to have rank %d but got: %d",
                              (int)i, (int)sub->count, (int)rank);
    }
    if (sub->has_ellipsis && rank < named_terms) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Expected input %d to have rank at least %d but got: %d", (int)i,
          (int)named_terms, (int)rank);
    }
    bcast[i] = rank - named_terms;
    if (bcast[i] > max_bcast) max_bcast = bcast[i];
  }
  out->num_labels = named + max_bcast;
  for (int32_t l = 0; l < out->num_labels; ++l) out->dims[l] = -1;
  // Label every axis; size the named labels.
  for (int32_t i = 0; i < num_shapes; ++i) {
    const loom__einsum_subscript_t* sub = &equation->inputs[i];
    int32_t axis = 0;
    for (int32_t t = 0; t < sub->count; ++t) {
      loom__einsum_label_t term = sub->terms[t];
      if (term == kEinsumEllipsis) {
        // Right-aligned with the other input's ellipsis dims.
        for (int32_t b = 0; b < bcast[i]; ++b) {
          out->labels[i][axis++] =
              (loom__einsum_label_t)(named + max_bcast - bcast[i] + b);
        }
        continue;
      }
      LOOM_RETURN_IF_ERROR(record_named(out, term, axis, shapes[i]));
      out->labels[i][axis++] = term;
    }
    out->ranks[i] = axis;
  }
  // Size the broadcast labels: equal, or 1 broadcasting to the other.
  for (int32_t l = named; l < out->num_labels; ++l) {
    bool any = false;
    int64_t dim = 1;
    for (int32_t i = 0; i < num_shapes; ++i) {
      for (int32_t axis = 0; axis < out->ranks[i]; ++axis) {
        if (out->labels[i][axis] != l) continue;
        int64_t d = loom_shape_dims(shapes[i])[axis];
        if (!any) {
          dim = d;
          any = true;
        } else if (d == 1 || d == dim) {
          // keeps dim
        } else if (dim == 1) {
          dim = d;
        } else if (d < 0 || dim < 0) {
          dim = d < 0 ? dim : d;  // unknown: assume it broadcasts
        } else {
          char ta[160], tb[160];
          loom__shape_debug_string(shapes[0], ta, sizeof(ta));
          loom__shape_debug_string(shapes[1], tb, sizeof(tb));
          return loom_make_status(
              LOOM_STATUS_INVALID_ARGUMENT,
              "Einsum: the ellipsis dimensions of inputs shaped %s and %s do "
              "not broadcast",
              ta, tb);
        }
      }
    }
    out->dims[l] = dim;
  }
  for (int32_t i = 0; i < num_shapes; ++i) {
    const int64_t* dims = loom_shape_dims(shapes[i]);
    for (int32_t axis = 0; axis < out->ranks[i]; ++axis) {
      out->broadcast[i][axis] =
          dims[axis] == 1 && out->dims[out->labels[i][axis]] != 1;
    }
  }
  // The output's labels: its named ones, with the broadcast labels at its
  // ellipsis.
  const loom__einsum_subscript_t* sub = &equation->output;
  if (!sub->has_ellipsis && max_bcast > 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Output contains %d broadcasting dimension(s) but "
                            "no ellipsis (...) was found in the output "
                            "subscripts.",
                            (int)max_bcast);
  }
  int32_t rank = 0;
  for (int32_t t = 0; t < sub->count; ++t) {
    loom__einsum_label_t term = sub->terms[t];
    int32_t first = term == kEinsumEllipsis ? named : term;
    int32_t count = term == kEinsumEllipsis ? max_bcast : 1;
    for (int32_t b = 0; b < count; ++b) {
      if (rank == kEinsumMaxAxes) {
        return loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "Einsum: the output would have more than %d dimensions",
            kEinsumMaxAxes);
      }
      out->output_labels[rank++] = (loom__einsum_label_t)(first + b);
    }
  }
  out->output_rank = rank;
  int64_t dims[kEinsumMaxAxes];
  bool known = true;
  for (int32_t axis = 0; axis < rank; ++axis) {
    dims[axis] = out->dims[out->output_labels[axis]];
    if (dims[axis] < 0) known = false;
  }
  if (known) {
    LOOM_RETURN_IF_ERROR(
        loom__size_product_checked("Einsum", "output", dims, rank, NULL));
  }
  return loom_shape_initialize_large(&out->output_shape, dims, rank);
}
