// The plan a reduction runs on (reduction.c), shared with the
// arg-reductions (reduction_arg.c): the input's dims simplified into runs
// that alternate between kept and reduced, walked as rows or columns, and
// the work cut into units (output row, block of outputs, part of the
// reduced elements) for the thread pool.

#ifndef LOOM_KERNELS_REDUCTION_PLAN_H_
#define LOOM_KERNELS_REDUCTION_PLAN_H_

#include <stdbool.h>
#include <stdint.h>

#include "loom/kernel.h"
#include "loom/shape.h"
#include "loom/thread_pool.h"

// Outputs per block: up to kTile outputs that each reduce contiguous rows,
// or up to kWideTile contiguous columns (wide, so that each input row is
// read in long runs).
enum { kTile = 512, kWideTile = 4096 };
// Levels of the cascade that float sums fold partial results through, and
// how many results each level takes before passing its sum up.
enum { kCascadeLevels = 4, kCascadeFan = 32, kCascadeRows = 64 };
// Least work per unit when cutting, the most parts one output's reduced
// elements are cut into, and the units worth having for the pool.
enum { kPartElements = 1 << 14, kMaxParts = 32, kMinUnits = 16 };
// Below this many input elements the work runs on the calling thread.
enum { kMinParallelElements = 32768 };

typedef struct loom__reduce_walk_t {
  int32_t count;
  int64_t dims[LOOM_MAX_RANK];
  int64_t strides[LOOM_MAX_RANK];  // in elements
} loom__reduce_walk_t;

static inline int64_t loom__reduce_walk_offset(const loom__reduce_walk_t* walk,
                                               int64_t index) {
  int64_t offset = 0;
  for (int32_t i = walk->count - 1; i >= 0; --i) {
    int64_t dim = walk->dims[i];
    offset += (index % dim) * walk->strides[i];
    index /= dim;
  }
  return offset;
}

typedef struct loom__reduce_plan_t {
  bool inner_reduced;              // rows (true) or columns (false)
  loom__reduce_walk_t rows_walk;   // output rows: kept runs but the innermost
  loom__reduce_walk_t outer_walk;  // reduced runs but the innermost
  int64_t out_rows;                // product of rows_walk
  int64_t width;                   // outputs per output row
  int64_t extent;      // reduced elements per step source (len or rows)
  int64_t segments;    // product of outer_walk
  int64_t row_stride;  // input elements between the width outputs' data
  int64_t reduced;     // elements reduced into each output
  int64_t outputs;     // out_rows * width
} loom__reduce_plan_t;

// How the plan's work is cut into units.
typedef struct loom__reduce_split_t {
  int64_t tile;    // outputs per block
  int64_t chunks;  // blocks per output row
  int64_t parts;   // parts of each output's reduced elements
  int64_t units;   // out_rows * chunks * parts
} loom__reduce_split_t;

// One unit's place: which outputs, which reduced elements.
typedef struct loom__reduce_unit_t {
  int64_t row;         // output row
  int64_t first;       // first output within the row
  int64_t count;       // outputs (<= tile)
  int64_t begin, end;  // reduced range, in steps of `extent`
} loom__reduce_unit_t;

// Fails the kernel with `status` and returns from the compute function.
#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

// Element i of an int16, int32 or int64 index tensor; false for another
// dtype.
bool loom__reduce_read_index(const loom_tensor_t* indices, int64_t i,
                             int64_t* out_value);

// The element count of a kernel's output shape; past int64 it is an error
// naming the op and the dims.
loom_status_t loom__reduce_output_count(loom_kernel_context_t* ctx,
                                        const int64_t* dims, int32_t rank,
                                        int64_t* out);

// Cuts the plan's work into units (depends on the shape only, never on the
// threads).
loom__reduce_split_t loom__reduce_plan_split(const loom__reduce_plan_t* plan);

// The place of unit `unit` of `split`.
loom__reduce_unit_t loom__reduce_unit_at(const loom__reduce_plan_t* plan,
                                         const loom__reduce_split_t* split,
                                         int64_t unit);

// Runs fn over [0, units) on the kernel's pool, or on the calling thread
// when the work is small.
loom_status_t loom__reduce_run_parallel(loom_kernel_context_t* ctx,
                                        int64_t units, int64_t elements,
                                        int64_t cost_per_element,
                                        loom_parallel_for_fn_t fn, void* job);

// Registers ArgMax and ArgMin (reduction_arg.c; called by
// loom__register_reduction_ops).
loom_status_t loom__register_reduction_arg_ops(void);

#endif  // LOOM_KERNELS_REDUCTION_PLAN_H_
