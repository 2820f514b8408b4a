// Index tuples of the N-d indexing ops: see nd_index.h.

#include "kernels/nd_index.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"
#include "kernels/shape_fns.h"

bool loom__nd_index_init(loom__nd_index_t* index, const loom_tensor_t* indices,
                         const loom_shape_t* target) {
  const loom_shape_t* shape = loom_tensor_shape(indices);
  index->indices = indices;
  index->depth = (int32_t)loom_shape_dims(shape)[shape->rank - 1];
  index->count = loom__array_dims_product(shape, 0, shape->rank - 1);
  index->dims = loom_shape_dims(target);
  // Unsigned, so that an empty target's dims may wrap without undefined
  // behaviour; the caller then uses only the bounds checks.
  uint64_t stride = 1;
  bool fits = true;
  for (int32_t d = index->depth - 1; d >= 0; --d) {
    index->strides[d] = (int64_t)stride;
    uint64_t next = 0;
    if (__builtin_mul_overflow(stride, (uint64_t)index->dims[d], &next) ||
        next > (uint64_t)INT64_MAX) {
      fits = false;
    }
    stride = next;
  }
  index->slices = fits ? (int64_t)stride : -1;
  return fits;
}

int64_t loom__nd_index_slice(const loom__nd_index_t* index, int64_t i) {
  uint64_t slice = 0;
  int64_t base = i * index->depth;
  for (int32_t d = 0; d < index->depth; ++d) {
    int64_t value = loom__array_index_at(index->indices, base + d);
    if (value < 0 || value >= index->dims[d]) return -1;
    slice += (uint64_t)value * (uint64_t)index->strides[d];
  }
  return (int64_t)slice;
}

int64_t loom__nd_index_first_bad(const loom__nd_index_t* index) {
  // Empty tuples pick the whole target: none is bad (and indices of shape
  // [2^62, 0] hold no elements, so their count is no bound to loop to).
  if (index->depth == 0) return -1;
  for (int64_t i = 0; i < index->count; ++i) {
    if (loom__nd_index_slice(index, i) < 0) return i;
  }
  return -1;
}

loom_status_t loom__nd_index_error(const loom__nd_index_t* index, int64_t bad,
                                   const char* what, const loom_shape_t* target,
                                   const char* suffix) {
  // Where the tuple is in indices.shape[:-1], as TensorFlow's
  // SliceDebugString writes it: nothing for one tuple, "[i]", "[i,j]".
  const loom_shape_t* shape = loom_tensor_shape(index->indices);
  const int64_t* dims = loom_shape_dims(shape);
  int32_t outer = shape->rank - 1;
  char where[LOOM_SHAPE_FORMAT_MAX] = "";
  if (outer > 0) {
    int64_t position[LOOM_MAX_SHAPE_RANK];
    int64_t rest = bad;
    for (int32_t k = outer - 1; k >= 0; --k) {
      position[k] = dims[k] ? rest % dims[k] : 0;
      rest = dims[k] ? rest / dims[k] : 0;
    }
    size_t used = (size_t)snprintf(where, sizeof(where), "[");
    for (int32_t k = 0; k < outer && used < sizeof(where); ++k) {
      used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%" PRId64,
                               k ? "," : "", position[k]);
    }
    if (used < sizeof(where)) snprintf(where + used, sizeof(where) - used, "]");
  }
  // The coordinates, joined with ", " as TensorFlow's message does.
  int64_t values[LOOM_MAX_SHAPE_RANK];
  for (int32_t d = 0; d < index->depth; ++d) {
    values[d] = loom__array_index_at(index->indices, bad * index->depth + d);
  }
  char tuple[LOOM_SHAPE_FORMAT_MAX];
  loom__format_int64s(values, index->depth, tuple, sizeof(tuple));
  char text[LOOM_SHAPE_FORMAT_MAX];
  return loom__array_invalid(
      "indices%s = %s does not index into %s %s%s", where, tuple, what,
      loom__shape_debug_string(target, text, sizeof(text)), suffix);
}

loom_status_t loom__nd_index_policy(const loom_op_attrs_t* attrs,
                                    bool* out_ignore) {
  *out_ignore = false;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "bad_indices_policy", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING || value.is_list) {
    return loom_ok_status();
  }
  static const char* const kPolicies[] = {"", "DEFAULT", "ERROR", "IGNORE"};
  for (int i = 0; i < 4; ++i) {
    size_t length = strlen(kPolicies[i]);
    if (value.u.string.size == length &&
        memcmp(value.u.string.data, kPolicies[i], length) == 0) {
      *out_ignore = i == 3;
      return loom_ok_status();
    }
  }
  return loom__array_invalid("Unknown bad indices handling attribute: %.*s",
                             (int)value.u.string.size, value.u.string.data);
}

loom_status_t loom__register_nd_indexing_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_gather_nd_ops());
  return loom__register_scatter_nd_ops();
}
