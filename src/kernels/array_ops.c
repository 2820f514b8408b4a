// Shape and data movement ops (Identity ... Const): the family's
// registration. The ops live in array_shape.c, array_constant.c,
// array_transpose.c, array_concat.c, array_split.c, array_slice.c,
// array_pad.c, array_gather.c and array_indicators.c, on the copy engines
// of array_copy.c.

#include "kernels/array_internal.h"
#include "kernels/builtin_families.h"

loom_status_t loom__register_array_ops(void) {
  LOOM_RETURN_IF_ERROR(loom__register_array_shape_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_constant_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_transpose_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_concat_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_split_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_slice_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_pad_ops());
  LOOM_RETURN_IF_ERROR(loom__register_array_gather_ops());
  return loom__register_array_indicator_ops();
}
