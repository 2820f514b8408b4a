// The element-wise driver: dtype slots, loop tables per ISA level, and the
// broadcasting compute shared by every element-wise op.

#include "kernels/elementwise.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kernels/broadcast.h"
#include "loom/thread_pool.h"
#include "registry/kernel_context.h"

int loom__elem_slot(loom_dtype_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return LOOM_ELEM_F32;
    case LOOM_DTYPE_DOUBLE:
      return LOOM_ELEM_F64;
    case LOOM_DTYPE_INT32:
      return LOOM_ELEM_I32;
    case LOOM_DTYPE_INT64:
      return LOOM_ELEM_I64;
    case LOOM_DTYPE_UINT8:
      return LOOM_ELEM_U8;
    case LOOM_DTYPE_INT8:
      return LOOM_ELEM_I8;
    case LOOM_DTYPE_INT16:
      return LOOM_ELEM_I16;
    case LOOM_DTYPE_UINT16:
      return LOOM_ELEM_U16;
    case LOOM_DTYPE_UINT32:
      return LOOM_ELEM_U32;
    case LOOM_DTYPE_UINT64:
      return LOOM_ELEM_U64;
    case LOOM_DTYPE_BOOL:
      return LOOM_ELEM_BOOL;
    case LOOM_DTYPE_HALF:
      return LOOM_ELEM_F16;
    case LOOM_DTYPE_BFLOAT16:
      return LOOM_ELEM_BF16;
    default:
      return -1;
  }
}

loom__binary_loop_fn_t loom__binary_loop(loom__binary_op_t op,
                                         loom_dtype_t dtype) {
  static const loom__binary_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__binary_loops_baseline, &loom__binary_loops_avx2,
      &loom__binary_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_BINARY_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

loom__binary_loop_fn_t loom__binary_stream_loop(loom__binary_op_t op,
                                                loom_dtype_t dtype) {
  static const loom__binary_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__binary_stream_loops_baseline, &loom__binary_stream_loops_avx2,
      &loom__binary_stream_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_BINARY_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

// The last-level cache as Linux's sysfs describes it ("32768K"), or 0.
// (sysconf's figure comes from CPUID, which in a VM may describe the
// whole host.)
static int64_t last_level_cache_bytes(void) {
  FILE* file = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  if (!file) return 0;
  long long value = 0;
  char unit = 0;
  int fields = fscanf(file, "%lld%c", &value, &unit);
  fclose(file);
  if (fields < 1 || value <= 0) return 0;
  if (unit == 'K') value <<= 10;
  if (unit == 'M') value <<= 20;
  return (int64_t)value;
}

int64_t loom__elementwise_stream_bytes(void) {
  // The machine's, probed once per process (0: not known yet).
  static _Atomic int64_t cached = 0;
  int64_t bytes = atomic_load_explicit(&cached, memory_order_relaxed);
  if (bytes) return bytes;
  bytes = last_level_cache_bytes();
  if (bytes == 0) bytes = (int64_t)32 << 20;
  if (bytes < ((int64_t)8 << 20)) bytes = (int64_t)8 << 20;
  atomic_store_explicit(&cached, bytes, memory_order_relaxed);
  return bytes;
}

loom__binary_checked_loop_fn_t loom__binary_checked_loop(loom__binary_op_t op,
                                                         loom_dtype_t dtype) {
  static const loom__binary_checked_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__binary_checked_loops_baseline, &loom__binary_checked_loops_avx2,
      &loom__binary_checked_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_BINARY_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

loom__binary_loop_fn_t loom__compare_loop(loom__compare_op_t op,
                                          loom_dtype_t dtype) {
  static const loom__compare_table_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__compare_loops_baseline, &loom__compare_loops_avx2,
      &loom__compare_loops_avx512};
  int slot = loom__elem_slot(dtype);
  if (slot < 0 || (int)op < 0 || op >= LOOM_COMPARE_OPS) return NULL;
  return (*kTables[loom__isa_level()])[op][slot];
}

const loom__select_loops_t* loom__select_loops(void) {
  static const loom__select_loops_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__select_loops_baseline, &loom__select_loops_avx2,
      &loom__select_loops_avx512};
  return kTables[loom__isa_level()];
}

size_t loom__accumulator_size(loom_dtype_t dtype) {
  if (dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16) return 4;
  return loom_dtype_size(dtype);
}

void loom__format_dims(const loom_shape_t* shape, char* text) {
  size_t size = LOOM_SHAPE_TEXT_SIZE;
  const int64_t* dims = loom_shape_dims(shape);
  size_t length = (size_t)snprintf(text, size, "[");
  for (int32_t i = 0; i < shape->rank && length < size; ++i) {
    length += (size_t)snprintf(text + length, size - length, "%s%lld",
                               i ? "," : "", (long long)dims[i]);
  }
  if (length < size) snprintf(text + length, size - length, "]");
}

//===----------------------------------------------------------------------===//
// The broadcasting driver
//===----------------------------------------------------------------------===//

typedef struct elementwise_job_t {
  loom__broadcast_plan_t plan;
  const loom__elementwise_call_t* call;
  loom__binary_loop_fn_t binary;  // call->binary or its streaming form
  const char* in[3];
  size_t in_size[3];  // bytes per input element
  char* out;
  size_t out_size;  // bytes per output element
  int64_t chunks;   // blocks per inner loop
  int64_t chunk;    // elements per block (the last may be shorter)
  atomic_bool failed;
} elementwise_job_t;

// The whole walk as one inner loop of `n` elements (plan->outer == 1);
// false when a checked loop found invalid input.
static bool run_one_loop(const elementwise_job_t* job, int64_t n) {
  const loom__broadcast_plan_t* plan = &job->plan;
  const loom__elementwise_call_t* call = job->call;
  int32_t d = plan->rank - 1;
  const int64_t* s0 = &plan->strides[0][d];
  const int64_t* s1 = &plan->strides[1][d];
  if (job->binary) {
    job->binary(job->in[0], *s0, job->in[1], *s1, job->out, n);
    return true;
  }
  if (call->checked) {
    return call->checked(job->in[0], *s0, job->in[1], *s1, job->out, n);
  }
  call->ternary(job->in[0], *s0, job->in[1], *s1, job->in[2],
                plan->strides[2][d], job->out, n);
  return true;
}

// The repeated row of a bias-like operand, copied side by side.
enum { kRowTileBytes = 2048 };

// Every row of a two-dim plan on this thread (one inner loop per row).
// When one operand is a single row repeated (a bias over [N, C]) and the
// rows are short, that row is laid out several times in a tile on the
// stack: one loop call then covers as many rows as the tile holds.
static void run_rows_2d(const elementwise_job_t* job) {
  const loom__broadcast_plan_t* plan = &job->plan;
  int64_t rows = plan->dims[0], n = plan->inner;
  size_t row0 = (size_t)plan->strides[0][0] * job->in_size[0];
  size_t row1 = (size_t)plan->strides[1][0] * job->in_size[1];
  size_t row_out = (size_t)n * job->out_size;
  int64_t s0 = plan->strides[0][1], s1 = plan->strides[1][1];
  const char* in0 = job->in[0];
  const char* in1 = job->in[1];
  char* out = job->out;
  int repeated = -1;
  if (s0 == 1 && s1 == 1) {
    if (plan->strides[1][0] == 0 && plan->strides[0][0] == n) repeated = 1;
    if (plan->strides[0][0] == 0 && plan->strides[1][0] == n) repeated = 0;
  }
  size_t row_bytes = repeated >= 0 ? (size_t)n * job->in_size[repeated] : 0;
  if (repeated >= 0 && rows >= 4 && 2 * row_bytes <= kRowTileBytes) {
    _Alignas(64) char tile[kRowTileBytes];
    int64_t per_tile = (int64_t)(kRowTileBytes / row_bytes);
    if (per_tile > rows) per_tile = rows;
    size_t filled = row_bytes, wanted = (size_t)per_tile * row_bytes;
    memcpy(tile, job->in[repeated], row_bytes);
    while (filled < wanted) {  // doubling copies
      size_t more = filled < wanted - filled ? filled : wanted - filled;
      memcpy(tile + filled, tile, more);
      filled += more;
    }
    for (int64_t r = 0; r < rows; r += per_tile) {
      int64_t count = rows - r < per_tile ? rows - r : per_tile;
      const char* a = repeated == 0 ? tile : in0 + (size_t)r * row0;
      const char* b = repeated == 1 ? tile : in1 + (size_t)r * row1;
      job->binary(a, 1, b, 1, out + (size_t)r * row_out, count * n);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    job->binary(in0, s0, in1, s1, out, n);
    in0 += row0;
    in1 += row1;
    out += row_out;
  }
}

static void run_blocks(void* arg, int64_t begin, int64_t end) {
  elementwise_job_t* job = arg;
  const loom__broadcast_plan_t* plan = &job->plan;
  const loom__elementwise_call_t* call = job->call;
  int32_t inner_dim = plan->rank - 1;
  int32_t n_ops = call->num_operands;
  int64_t strides[3] = {0, 0, 0};
  for (int32_t k = 0; k < n_ops; ++k) strides[k] = plan->strides[k][inner_dim];
  // Walk the rows as an odometer over the outer dims, so that a row's
  // offsets cost an add rather than a division per dim (many short rows:
  // a bias added to [N, C]).
  int64_t row = begin / job->chunks;
  int64_t column = begin % job->chunks;
  int64_t offsets[kBroadcastMaxOperands];
  loom__broadcast_plan_offsets(plan, row, offsets);
  int64_t index[LOOM_MAX_RANK];
  int64_t rest = row;
  for (int32_t d = inner_dim - 1; d >= 0; --d) {
    index[d] = rest % plan->dims[d];
    rest /= plan->dims[d];
  }
  bool ok = true;
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t start = column * job->chunk;
    int64_t n = plan->inner - start;
    if (n > job->chunk) n = job->chunk;
    const void* in[3] = {NULL, NULL, NULL};
    for (int32_t k = 0; k < n_ops; ++k) {
      in[k] = job->in[k] +
              (size_t)(offsets[k] + start * strides[k]) * job->in_size[k];
    }
    void* out = job->out + (size_t)(row * plan->inner + start) * job->out_size;
    if (job->binary) {
      job->binary(in[0], strides[0], in[1], strides[1], out, n);
    } else if (call->checked) {
      ok &= call->checked(in[0], strides[0], in[1], strides[1], out, n);
    } else {
      call->ternary(in[0], strides[0], in[1], strides[1], in[2], strides[2],
                    out, n);
    }
    if (++column < job->chunks) continue;
    column = 0;
    row++;
    for (int32_t d = inner_dim - 1; d >= 0; --d) {
      for (int32_t k = 0; k < n_ops; ++k) offsets[k] += plan->strides[k][d];
      if (++index[d] < plan->dims[d]) break;
      index[d] = 0;
      for (int32_t k = 0; k < n_ops; ++k) {
        offsets[k] -= plan->strides[k][d] * plan->dims[d];
      }
    }
  }
  if (!ok) atomic_store_explicit(&job->failed, true, memory_order_relaxed);
}

// The inputs an output of `shape` may take the buffer of: those of its
// shape and dtype, among the ones the call allows (element i of the result
// depends only on element i of the input). Returns how many.
static int32_t forward_candidates(const loom__elementwise_call_t* call,
                                  loom_tensor_t* const* inputs,
                                  const loom_shape_t* const* shapes,
                                  int32_t n_ops, const loom_shape_t* shape,
                                  loom_dtype_t out_dtype, int32_t* candidates) {
  int32_t count = 0;
  for (int32_t k = 0; k < n_ops; ++k) {
    if (call->forwardable && !(call->forwardable & (1u << k))) continue;
    if (loom_tensor_dtype(inputs[k]) == out_dtype &&
        loom_shape_equal(shapes[k], shape)) {
      candidates[count++] = k;
    }
  }
  return count;
}

// A tiny two-operand op whose operands have the same shape, or one of
// them a single element (x + y, x * 2): one loop over the output, without
// planning a broadcast. False (nothing done) when it does not apply.
static inline bool tiny_binary(loom_kernel_context_t* ctx,
                               const loom__elementwise_call_t* call) {
  if (call->num_operands != 2 || !call->binary || call->shapes[0] ||
      call->shapes[1]) {
    return false;
  }
  // Every binary op's kernel has two inputs and one output (its op
  // definition's), read in place.
  loom_tensor_t* const* inputs = ctx->inputs;
  const loom_shape_t* const shapes[2] = {loom_tensor_shape(inputs[0]),
                                         loom_tensor_shape(inputs[1])};
  int64_t na = loom_tensor_num_elements(inputs[0]);
  int64_t nb = loom_tensor_num_elements(inputs[1]);
  bool same = loom_shape_equal(shapes[0], shapes[1]);
  const loom_shape_t* shape = NULL;
  if (same || (nb == 1 && shapes[1]->rank <= shapes[0]->rank)) {
    shape = shapes[0];
  } else if (na == 1 && shapes[0]->rank <= shapes[1]->rank) {
    shape = shapes[1];
  } else {
    return false;
  }
  int64_t total = shape == shapes[0] ? na : nb;
  int64_t cost = call->cost_per_element > 0 ? call->cost_per_element : 1;
  if (total * cost >= kElementwiseMinParallelWork) return false;
  // An input of the output's shape (both, when they are equal) and dtype
  // may become the output: forward_candidates without comparing shapes.
  loom_dtype_t out_dtype = ctx->output_dtypes[0];
  int32_t candidates[2];
  int32_t num_candidates = 0;
  for (int32_t k = 0; k < 2; ++k) {
    if (call->forwardable && !(call->forwardable & (1u << k))) continue;
    if ((same || shapes[k] == shape) &&
        loom_tensor_dtype(inputs[k]) == out_dtype) {
      candidates[num_candidates++] = k;
    }
  }
  loom_tensor_t* z = NULL;
  loom_status_t status = loom__kernel_context_forward_or_allocate_same(
      ctx, candidates, num_candidates, shape, total, &z);
  if (LOOM_UNLIKELY(status != NULL)) {
    loom__kernel_context_fail(ctx, status);
    return true;
  }
  if (total > 0) {
    call->binary(loom_tensor_data(inputs[0]), na == total ? 1 : 0,
                 loom_tensor_data(inputs[1]), nb == total ? 1 : 0,
                 loom_tensor_data(z), total);
  }
  return true;
}

// Runs job->plan over the job's operands and output (a failed checked
// loop sets job->failed).
static inline __attribute__((always_inline)) loom_status_t run_plan(
    loom_kernel_context_t* ctx, elementwise_job_t* job) {
  const loom__elementwise_call_t* call = job->call;
  int64_t total = job->plan.outer * job->plan.inner;
  int64_t cost = call->cost_per_element > 0 ? call->cost_per_element : 1;
  if (job->plan.outer == 1 && total * cost < kElementwiseMinParallelWork) {
    // One loop on this thread (a tiny op): no blocks to plan.
    if (!run_one_loop(job, total)) {
      atomic_store_explicit(&job->failed, true, memory_order_relaxed);
    }
    return loom_ok_status();
  }
  // Blocks of at least kElementwiseMinParallelWork / 2 units of work, so a
  // block is worth a thread; an inner loop longer than two blocks is split.
  int64_t min_block = kElementwiseMinParallelWork / 2 / cost;
  if (min_block < 256) min_block = 256;
  job->chunk = job->plan.inner;
  job->chunks = 1;
  if (job->plan.inner > 2 * min_block) {
    job->chunks = (job->plan.inner + min_block - 1) / min_block;
    job->chunk = (job->plan.inner + job->chunks - 1) / job->chunks;
  }
  int64_t units = job->plan.outer * job->chunks;
  if (job->plan.rank == 2 && job->binary &&
      total * cost < kElementwiseMinParallelWork) {
    // Small rows over two dims (a bias added to [N, C], a column scaling
    // [N, C]): each row at a stride, without the general walk.
    run_rows_2d(job);
  } else if (units == 1 || total * cost < kElementwiseMinParallelWork) {
    run_blocks(job, 0, units);  // not worth the pool
  } else {
    loom_thread_pool_t* pool =
        loom_host_context_thread_pool(loom_kernel_context_host(ctx));
    return loom_thread_pool_parallel_for(pool, units, (total / units) * cost,
                                         run_blocks, job);
  }
  return loom_ok_status();
}

// The walk of more than LOOM_MAX_RANK folded dims: the plan's inner dims
// once per index of the peeled outer ones, in order, each step offsetting
// the operands and the output. One step runs at a time (it may use the
// pool itself), so steps neither race nor oversubscribe the pool. Out of
// line, off the common path.
static __attribute__((noinline)) loom_status_t run_peeled(
    loom_kernel_context_t* ctx, elementwise_job_t* job,
    const loom__broadcast_peel_t* peel) {
  int32_t n_ops = job->call->num_operands;
  const char* in[3] = {job->in[0], job->in[1], job->in[2]};
  char* out = job->out;
  int64_t index[LOOM_MAX_SHAPE_RANK] = {0};
  int64_t offsets[3] = {0, 0, 0}, out_offset = 0;
  for (;;) {
    for (int32_t k = 0; k < n_ops; ++k) {
      job->in[k] = in[k] + (ptrdiff_t)offsets[k] * (ptrdiff_t)job->in_size[k];
    }
    job->out = out + (ptrdiff_t)out_offset * (ptrdiff_t)job->out_size;
    LOOM_RETURN_IF_ERROR(run_plan(ctx, job));
    int32_t d = peel->rank - 1;
    for (; d >= 0; --d) {
      for (int32_t k = 0; k < n_ops; ++k) offsets[k] += peel->strides[k][d];
      out_offset += peel->out_strides[d];
      if (++index[d] < peel->dims[d]) break;
      for (int32_t k = 0; k < n_ops; ++k) {
        offsets[k] -= peel->strides[k][d] * peel->dims[d];
      }
      out_offset -= peel->out_strides[d] * peel->dims[d];
      index[d] = 0;
    }
    if (d < 0) return loom_ok_status();
  }
}

// Everything but a tiny binary op: out of line, so that a tiny op does not
// pay for this frame (the job and its plan are large).
static __attribute__((noinline)) void elementwise_compute_planned(
    loom_kernel_context_t* ctx, const loom__elementwise_call_t* call) {
  const loom_op_def_t* op = loom_kernel_context_op(ctx);
  int32_t n_ops = call->num_operands;
  loom_tensor_t* inputs[3] = {NULL, NULL, NULL};
  const loom_shape_t* shapes[3] = {NULL, NULL, NULL};
  for (int32_t k = 0; k < n_ops; ++k) {
    inputs[k] = loom_kernel_context_input(ctx, k);
    shapes[k] =
        call->shapes[k] ? call->shapes[k] : loom_tensor_shape(inputs[k]);
  }
  loom_shape_t shape;
  loom_status_t status =
      loom__broadcast_shapes(op->name, shapes[0], shapes[1], &shape);
  if (!status && n_ops == 3) {
    loom_shape_t pair = shape;
    status = loom__broadcast_shapes(op->name, &pair, shapes[2], &shape);
  }
  // An input of the output's shape that nobody else holds becomes the
  // output.
  int32_t candidates[3];
  int32_t num_candidates = 0;
  loom_dtype_t out_dtype = loom_kernel_context_output_dtype(ctx, 0);
  if (!status) {
    num_candidates = forward_candidates(call, inputs, shapes, n_ops, &shape,
                                        out_dtype, candidates);
  }
  loom_tensor_t* z = NULL;
  int32_t forwarded = -1;
  if (!status) {
    status = loom_kernel_context_forward_or_allocate(
        ctx, candidates, num_candidates, 0, &shape, &forwarded, &z);
  }
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  elementwise_job_t job;
  loom__broadcast_peel_t* peel = NULL;
  status = loom__broadcast_plan_init_any_rank(&job.plan, &shape, shapes, n_ops,
                                              &peel);
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  int64_t total = job.plan.outer * job.plan.inner;
  if (total == 0) return;  // (never with a peel: its output has elements)
  job.call = call;
  job.binary = call->binary;
  // A fresh output bigger than the cache: stream it out. (A forwarded one
  // was just read, so plain stores cost nothing extra.)
  if (call->binary_streaming && forwarded < 0 &&
      total * (int64_t)loom_dtype_size(out_dtype) >=
          loom__elementwise_stream_bytes()) {
    job.binary = call->binary_streaming;
  }
  for (int32_t k = 0; k < n_ops; ++k) {
    job.in[k] = loom_tensor_data(inputs[k]);
    job.in_size[k] = loom_dtype_size(loom_tensor_dtype(inputs[k]));
  }
  job.out = loom_tensor_data(z);
  job.out_size = loom_dtype_size(out_dtype);
  atomic_init(&job.failed, false);
  if (LOOM_UNLIKELY(peel != NULL)) {
    status = run_peeled(ctx, &job, peel);
    loom_allocator_free(loom_allocator_default(), peel);
  } else {
    status = run_plan(ctx, &job);
  }
  if (status) {
    loom_kernel_context_fail(ctx, status);
    return;
  }
  if (atomic_load_explicit(&job.failed, memory_order_relaxed)) {
    loom_kernel_context_fail(
        ctx, loom_make_status(
                 LOOM_STATUS_INVALID_ARGUMENT, "%s: %s", op->name,
                 call->error_message ? call->error_message : "invalid input"));
  }
}

void loom__elementwise_compute(loom_kernel_context_t* ctx,
                               const loom__elementwise_call_t* call) {
  if (tiny_binary(ctx, call)) return;
  elementwise_compute_planned(ctx, call);
}

void loom__binary_compute(loom_kernel_context_t* ctx,
                          loom__binary_loop_fn_t loop,
                          int64_t cost_per_element) {
  if (!loop) {
    loom_tensor_t* x = loom_kernel_context_input(ctx, 0);
    loom_kernel_context_fail(
        ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: no CPU loop for dtype %s",
                              loom_kernel_context_op(ctx)->name,
                              loom_dtype_name(loom_tensor_dtype(x))));
    return;
  }
  loom__elementwise_call_t call = {
      .num_operands = 2, .binary = loop, .cost_per_element = cost_per_element};
  loom__elementwise_compute(ctx, &call);
}

bool loom__binary_call_initialize(loom__binary_op_t op, loom_dtype_t dtype,
                                  int64_t cost_per_element,
                                  loom__elementwise_call_t* call) {
  loom__binary_checked_loop_fn_t checked = loom__binary_checked_loop(op, dtype);
  if (checked) {
    *call = (loom__elementwise_call_t){
        .num_operands = 2,
        .checked = checked,
        .error_message = op == LOOM_BINARY_POW
                             ? "Integers to negative integer powers are not "
                               "allowed"
                             : "Integer division by zero",
        .cost_per_element = cost_per_element};
    return true;
  }
  loom__binary_loop_fn_t loop = loom__binary_loop(op, dtype);
  if (!loop) return false;
  *call = (loom__elementwise_call_t){
      .num_operands = 2,
      .binary = loop,
      .binary_streaming = loom__binary_stream_loop(op, dtype),
      .cost_per_element = cost_per_element};
  return true;
}

void loom__binary_compute_op(loom_kernel_context_t* ctx, loom__binary_op_t op,
                             int64_t cost_per_element) {
  loom_dtype_t dtype = loom_tensor_dtype(loom_kernel_context_input(ctx, 0));
  loom__elementwise_call_t call;
  if (!loom__binary_call_initialize(op, dtype, cost_per_element, &call)) {
    loom__binary_compute(ctx, NULL, cost_per_element);  // the error
    return;
  }
  loom__elementwise_compute(ctx, &call);
}
