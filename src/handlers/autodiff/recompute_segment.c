// The key of a recompute handler's note to the tapes below it (see
// autodiff_internal.h): only its address matters.

#include "handlers/autodiff/autodiff_internal.h"

const char loom__recompute_segment_note = 0;
