// Einsum's equation ("ij,jk->ik", "...ij,...jk->...ik", "ii->i") as
// TensorFlow's op reads it: one or two input subscripts, exactly one "->",
// an ellipsis ("...") at most once per subscript standing for broadcast
// dimensions, a label repeated within one input taking the diagonal, a
// label repeated in the output placing values on the diagonal (zeros
// elsewhere: "i->ii"), and labels absent from the output summed away. Parsed
// once (the kernel's construction, the shape function), then resolved against
// the inputs' shapes into one label per axis and one size per label.

#ifndef LOOM_KERNELS_EINSUM_EQUATION_H_
#define LOOM_KERNELS_EINSUM_EQUATION_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/shape.h"
#include "loom/status.h"

enum {
  // Distinct named labels (any character but ',', '.', '-' and '>'), as
  // many as TensorFlow's letters.
  kEinsumMaxNamed = 52,
  // Axes of an operand or of the output: TensorFlow's rank limit.
  kEinsumMaxAxes = LOOM_MAX_SHAPE_RANK,
  // Named labels plus the ellipsis' broadcast labels.
  kEinsumMaxLabels = kEinsumMaxNamed + kEinsumMaxAxes,
  // Subscript entries: up to kEinsumMaxAxes labels plus an ellipsis.
  kEinsumMaxTerms = kEinsumMaxAxes + 1,
  kEinsumEllipsis = -1,
};

// A label id: [0, kEinsumMaxLabels), or kEinsumEllipsis in a subscript.
typedef int16_t loom__einsum_label_t;

typedef struct loom__einsum_subscript_t {
  int32_t count;                                // entries in terms
  loom__einsum_label_t terms[kEinsumMaxTerms];  // label ids or kEinsumEllipsis
  bool has_ellipsis;
} loom__einsum_subscript_t;

typedef struct loom__einsum_equation_t {
  int32_t num_inputs;  // 1 or 2
  loom__einsum_subscript_t inputs[2];
  loom__einsum_subscript_t output;
  int32_t num_named;
  char names[kEinsumMaxNamed];  // label id -> its character
} loom__einsum_equation_t;

// Parses `equation` (`length` bytes, not NUL-terminated). INVALID_ARGUMENT
// with TensorFlow's wording where it has one ("Expecting exactly one '->'
// in einsum equation: ..."), naming the op otherwise.
loom_status_t loom__einsum_parse(const char* equation, size_t length,
                                 loom__einsum_equation_t* out);

// The equation applied to its inputs' shapes: every axis named by a label,
// every label sized. Broadcast labels (the ellipsis' dimensions, aligned
// to the right as NumPy aligns them) follow the named ones. Only the first
// num_labels entries of dims and the first ranks[i] / output_rank entries
// of the axis arrays are set.
typedef struct loom__einsum_plan_t {
  int32_t num_labels;
  int64_t dims[kEinsumMaxLabels];  // -1: unknown (shape inference only)
  int32_t ranks[2];
  loom__einsum_label_t labels[2][kEinsumMaxAxes];  // input axis -> label
  // Input axis of size 1 whose (ellipsis) label is larger: it broadcasts.
  bool broadcast[2][kEinsumMaxAxes];
  int32_t output_rank;
  loom__einsum_label_t output_labels[kEinsumMaxAxes];
  loom_shape_t output_shape;  // spilled above LOOM_MAX_RANK
} loom__einsum_plan_t;

// Resolves `equation` against `shapes` (num_inputs of them, of known rank;
// unknown dims -1 allowed). INVALID_ARGUMENT with TensorFlow's messages
// for a rank or a dimension that does not match ("Expected dimension 3 at
// axis 1 of the input shaped [2,4] but got dimension 4"), for ellipsis
// dimensions that do not broadcast, for an output above kEinsumMaxAxes
// dimensions, and for an output whose element count overflows int64;
// RESOURCE_EXHAUSTED when the shape pool is full.
loom_status_t loom__einsum_resolve(const loom__einsum_equation_t* equation,
                                   const loom_shape_t* const* shapes,
                                   int32_t num_shapes,
                                   loom__einsum_plan_t* out);

#endif  // LOOM_KERNELS_EINSUM_EQUATION_H_
