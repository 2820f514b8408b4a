// Einsum with TensorFlow's signature (inputs: N * T, equation, N >= 1;
// one or two inputs), computed as a batched matrix product.
//
// Each label of a two-input equation has a role: batch (in both inputs and
// the output), contract (in both, not in the output), free (in one input
// and the output) or summed (in one input only). Operand A is brought to
// [batch, free A, contract] and B to [batch, contract, free B] — one
// strided pass each that also takes diagonals (a label repeated in one
// input) and sums labels away — unless its memory already has that layout
// (or the transposed one, which the product takes as a transpose flag);
// then one batched GEMM (MatMul's path: OpenBLAS, the pool) computes
// [batch, free A, free B], written straight into the output when that is
// the output's order. One input is one strided pass. An ellipsis axis of
// size 1 facing a larger one in the other input is left out of its
// operand, so broadcasting never copies.
//
// Operands and the output take any rank up to TensorFlow's 254. Before
// planning, labels that stay adjacent and in one order in every operand
// and the output are folded into one (fold_plan), so the common cases run
// with a few axes whatever the rank; the working arrays are sized by the
// folded plan, in a small block on the stack or, above it, on the heap.
//
// half and bfloat16 are computed in float (the passes widen and narrow).

#include <string.h>

#include "base/half.h"
#include "kernels/builtin_families.h"
#include "kernels/einsum_equation.h"
#include "kernels/kernel_registration.h"
#include "kernels/matmul.h"
#include "loom/host_context.h"
#include "loom/tensor.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

typedef loom__einsum_label_t label_t;

static size_t label_bytes(int32_t count) {
  return (size_t)count * sizeof(label_t);
}

//===----------------------------------------------------------------------===//
// Strided passes
//===----------------------------------------------------------------------===//

// dst[i0, ..., in] (dense, row-major over dims) = sum over the summed axes
// of src[sum_a i_a * strides[a] + sum_r j_r * sum_strides[r]].
// The arrays are the work block's (see work_t), rank / sum_rank entries set.
typedef struct pass_t {
  int32_t rank;
  int64_t* dims;
  int64_t* strides;
  int32_t sum_rank;
  int64_t* sum_dims;
  int64_t* sum_strides;
  int64_t count;  // elements of dst (> 0)
} pass_t;

typedef enum pass_kind_t {
  PASS_F32,       // float -> float
  PASS_F64,       // double -> double
  PASS_I32,       // int32 -> int32 (sums wrap)
  PASS_I64,       // int64 -> int64 (sums wrap)
  PASS_HALF,      // half -> half, summed in float
  PASS_BF16,      // bfloat16 -> bfloat16, summed in float
  PASS_HALF_F32,  // half -> float
  PASS_BF16_F32,  // bfloat16 -> float
  PASS_F32_HALF,  // float -> half
  PASS_F32_BF16,  // float -> bfloat16
} pass_kind_t;

#define LOAD_SAME(x) (x)
#define LOAD_U64(x) ((uint64_t)(x))
#define STORE_SAME(x) (x)
#define STORE_I32(x) ((int32_t)(uint32_t)(uint64_t)(x))
#define STORE_I64(x) ((int64_t)(x))

// One pass per (source, accumulator, destination) type. The innermost
// destination axis runs in a tight loop; sums walk their own odometer.
#define DEFINE_PASS(name, SRC_T, ACC_T, DST_T, LOAD, STORE)               \
  static ACC_T name##_sum(const pass_t* p, const SRC_T* s) {              \
    ACC_T acc = 0;                                                        \
    int32_t last = p->sum_rank - 1;                                       \
    int64_t index[kEinsumMaxAxes];                                        \
    memset(index, 0, sizeof(index[0]) * (size_t)p->sum_rank);             \
    int64_t offset = 0;                                                   \
    for (;;) {                                                            \
      for (int64_t j = 0; j < p->sum_dims[last]; ++j) {                   \
        acc += LOAD(s[offset + j * p->sum_strides[last]]);                \
      }                                                                   \
      int32_t a = last - 1;                                               \
      for (; a >= 0; --a) {                                               \
        offset += p->sum_strides[a];                                      \
        if (++index[a] < p->sum_dims[a]) break;                           \
        offset -= p->sum_strides[a] * p->sum_dims[a];                     \
        index[a] = 0;                                                     \
      }                                                                   \
      if (a < 0) return acc;                                              \
    }                                                                     \
  }                                                                       \
  static void name(const pass_t* p, const void* src_data, void* dst_data, \
                   int64_t begin, int64_t end) {                          \
    const SRC_T* src = src_data;                                          \
    int64_t inner = p->rank > 0 ? p->dims[p->rank - 1] : 1;               \
    int64_t step = p->rank > 0 ? p->strides[p->rank - 1] : 0;             \
    DST_T* dst = (DST_T*)dst_data + begin * inner;                        \
    int64_t index[kEinsumMaxAxes];                                        \
    int64_t base = 0;                                                     \
    int64_t rest = begin;                                                 \
    for (int32_t a = p->rank - 2; a >= 0; --a) {                          \
      index[a] = rest % p->dims[a];                                       \
      rest /= p->dims[a];                                                 \
      base += index[a] * p->strides[a];                                   \
    }                                                                     \
    for (int64_t o = begin; o < end; ++o) {                               \
      if (p->sum_rank == 0) {                                             \
        for (int64_t j = 0; j < inner; ++j) {                             \
          *dst++ = STORE(LOAD(src[base + j * step]));                     \
        }                                                                 \
      } else {                                                            \
        for (int64_t j = 0; j < inner; ++j) {                             \
          *dst++ = STORE(name##_sum(p, src + base + j * step));           \
        }                                                                 \
      }                                                                   \
      for (int32_t a = p->rank - 2; a >= 0; --a) {                        \
        base += p->strides[a];                                            \
        if (++index[a] < p->dims[a]) break;                               \
        base -= p->strides[a] * p->dims[a];                               \
        index[a] = 0;                                                     \
      }                                                                   \
    }                                                                     \
  }

DEFINE_PASS(pass_f32, float, float, float, LOAD_SAME, STORE_SAME)
DEFINE_PASS(pass_f64, double, double, double, LOAD_SAME, STORE_SAME)
DEFINE_PASS(pass_i32, int32_t, uint64_t, int32_t, LOAD_U64, STORE_I32)
DEFINE_PASS(pass_i64, int64_t, uint64_t, int64_t, LOAD_U64, STORE_I64)
DEFINE_PASS(pass_half, uint16_t, float, uint16_t, loom__half_to_float,
            loom__float_to_half)
DEFINE_PASS(pass_bf16, uint16_t, float, uint16_t, loom__bfloat16_to_float,
            loom__float_to_bfloat16)
DEFINE_PASS(pass_half_f32, uint16_t, float, float, loom__half_to_float,
            STORE_SAME)
DEFINE_PASS(pass_bf16_f32, uint16_t, float, float, loom__bfloat16_to_float,
            STORE_SAME)
DEFINE_PASS(pass_f32_half, float, float, uint16_t, LOAD_SAME,
            loom__float_to_half)
DEFINE_PASS(pass_f32_bf16, float, float, uint16_t, LOAD_SAME,
            loom__float_to_bfloat16)

typedef void (*pass_fn_t)(const pass_t* p, const void* src, void* dst,
                          int64_t begin, int64_t end);

// One pass split over the pool by rows of the destination's innermost axis.
typedef struct pass_job_t {
  pass_fn_t fn;
  const pass_t* p;
  const void* src;
  void* dst;
} pass_job_t;

static void pass_rows(void* arg, int64_t begin, int64_t end) {
  const pass_job_t* job = arg;
  job->fn(job->p, job->src, job->dst, begin, end);
}

static loom_status_t run_pass(loom_kernel_context_t* ctx, pass_kind_t kind,
                              const pass_t* p, const void* src, void* dst) {
  static const pass_fn_t kPasses[] = {
      [PASS_F32] = pass_f32,           [PASS_F64] = pass_f64,
      [PASS_I32] = pass_i32,           [PASS_I64] = pass_i64,
      [PASS_HALF] = pass_half,         [PASS_BF16] = pass_bf16,
      [PASS_HALF_F32] = pass_half_f32, [PASS_BF16_F32] = pass_bf16_f32,
      [PASS_F32_HALF] = pass_f32_half, [PASS_F32_BF16] = pass_f32_bf16,
  };
  int64_t inner = p->rank > 0 ? p->dims[p->rank - 1] : 1;
  int64_t sums = 1;
  for (int32_t r = 0; r < p->sum_rank; ++r) sums *= p->sum_dims[r];
  pass_job_t job = {.fn = kPasses[kind], .p = p, .src = src, .dst = dst};
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  // About a nanosecond per element read.
  return loom_thread_pool_parallel_for(pool, p->count / inner, inner * sums,
                                       pass_rows, &job);
}

// The pass from a source whose axis a has label src_labels[a] and size
// src_dims[a] (row-major, dense) to a destination with labels dst_labels
// sized by `label_dims`: labels of the source absent from the destination
// are summed; a label on several source axes reads their diagonal. Axes
// flagged in `dropped` (size 1) are ignored. `scratch` and `flags` hold
// 2 * num_labels entries.
static void plan_pass(const label_t* src_labels, const int64_t* src_dims,
                      int32_t src_rank, const bool* dropped,
                      const label_t* dst_labels, int32_t dst_rank,
                      const int64_t* label_dims, int32_t num_labels,
                      int64_t* scratch, bool* flags, pass_t* p) {
  size_t n = (size_t)num_labels;
  int64_t* label_strides = scratch;
  int64_t* label_sizes = scratch + n;
  bool* in_src = flags;
  bool* in_dst = flags + n;
  memset(label_strides, 0, n * sizeof(label_strides[0]));
  memset(label_sizes, 0, n * sizeof(label_sizes[0]));
  memset(in_src, 0, n * sizeof(in_src[0]));
  memset(in_dst, 0, n * sizeof(in_dst[0]));
  int64_t stride = 1;
  for (int32_t a = src_rank - 1; a >= 0; --a) {
    if (!dropped || !dropped[a]) {
      label_t l = src_labels[a];
      label_strides[l] += stride;
      label_sizes[l] = src_dims[a];
      in_src[l] = true;
    }
    stride *= src_dims[a];
  }
  p->rank = dst_rank;
  p->sum_rank = 0;
  p->count = 1;
  for (int32_t a = 0; a < dst_rank; ++a) {
    label_t l = dst_labels[a];
    in_dst[l] = true;
    p->dims[a] = label_dims[l];
    p->strides[a] = in_src[l] ? label_strides[l] : 0;
    p->count *= p->dims[a];
  }
  for (int32_t a = 0; a < src_rank; ++a) {
    label_t l = src_labels[a];
    if (!in_src[l] || in_dst[l]) continue;
    in_dst[l] = true;  // once per label
    p->sum_dims[p->sum_rank] = label_sizes[l];
    p->sum_strides[p->sum_rank] = label_strides[l];
    p->sum_rank++;
  }
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

typedef struct einsum_kernel_t {
  loom__einsum_equation_t equation;
} einsum_kernel_t;

static loom_status_t read_equation(const loom_op_attrs_t* attrs,
                                   loom__einsum_equation_t* out) {
  loom_attr_value_t value;
  if (!loom_op_attrs_get(attrs, "equation", &value) ||
      value.kind != LOOM_ATTR_KIND_STRING) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Einsum: attr 'equation' (a string) is missing");
  }
  return loom__einsum_parse(value.u.string.data, value.u.string.size, out);
}

static void* einsum_create(loom_kernel_construction_t* ctx) {
  einsum_kernel_t* kernel = NULL;
  loom_status_t status = loom_allocator_calloc(
      loom_allocator_system(), sizeof(*kernel), (void**)&kernel);
  if (!status) {
    status =
        read_equation(loom_kernel_construction_attrs(ctx), &kernel->equation);
  }
  if (status) {
    loom_allocator_free(loom_allocator_system(), kernel);
    loom_kernel_construction_fail(ctx, status);
    return NULL;
  }
  return kernel;
}

static void einsum_delete(void* kernel) {
  loom_allocator_free(loom_allocator_system(), kernel);
}

// Whether `labels` (count of them) is `a` then `b` then `c`.
static bool is_concat(const label_t* labels, int32_t count, const label_t* a,
                      int32_t na, const label_t* b, int32_t nb,
                      const label_t* c, int32_t nc) {
  if (count != na + nb + nc) return false;
  return memcmp(labels, a, label_bytes(na)) == 0 &&
         memcmp(labels + na, b, label_bytes(nb)) == 0 &&
         memcmp(labels + na + nb, c, label_bytes(nc)) == 0;
}

static void concat3(label_t* out, const label_t* a, int32_t na,
                    const label_t* b, int32_t nb, const label_t* c,
                    int32_t nc) {
  memcpy(out, a, label_bytes(na));
  memcpy(out + na, b, label_bytes(nb));
  memcpy(out + na + nb, c, label_bytes(nc));
}

// One operand of the product: its labels as laid out in memory (dropped
// axes left out), and whether it can be used in place.
typedef struct operand_t {
  int32_t rank;  // axes of the (folded) tensor
  int64_t* dims;
  const label_t* axis_labels;
  const bool* dropped;
  int32_t count;  // labels kept, in memory order
  label_t* labels;
  bool repeats_or_sums;  // needs a pass whatever the layout
} operand_t;

// The working arrays of one einsum, sized by the folded plan: `rank`
// entries per axis array (the most axes of an operand or the output),
// `labels` per label array. Carved from one block: the kernel's stack for
// small plans, the heap above.
typedef struct work_t {
  pass_t pass;
  int64_t* dims[2];        // the operands' axis sizes
  int64_t* c_dims;         // the product's
  int64_t* label_scratch;  // plan_pass: 2 * labels
  int32_t* where[2];       // label -> axes kept in operand i
  label_t* kept[2];        // operand i's labels kept
  label_t* batch;
  label_t* free_a;
  label_t* free_b;
  label_t* contract;
  label_t* c_labels;
  label_t* target;
  bool* flags;      // plan_pass: 2 * labels
  bool* in_output;  // labels
} work_t;

enum { kWorkInlineBytes = 2048 };

// Bytes of the block for `rank` and `labels` (each at most the limits, so
// this cannot overflow); every part keeps 8-byte alignment.
static size_t work_bytes(size_t rank, size_t labels) {
  size_t i64 = 7 * rank + 2 * labels;
  size_t i32 = 2 * labels;
  size_t lab = 8 * rank;
  size_t flags = 3 * labels;
  return i64 * sizeof(int64_t) + (i32 * sizeof(int32_t) + 7) / 8 * 8 +
         (lab * sizeof(label_t) + 7) / 8 * 8 + flags;
}

static void work_carve(work_t* w, char* block, size_t rank, size_t labels) {
  int64_t* i64 = (int64_t*)(void*)block;
  w->pass.dims = i64;
  w->pass.strides = i64 + rank;
  w->pass.sum_dims = i64 + 2 * rank;
  w->pass.sum_strides = i64 + 3 * rank;
  w->dims[0] = i64 + 4 * rank;
  w->dims[1] = i64 + 5 * rank;
  w->c_dims = i64 + 6 * rank;
  w->label_scratch = i64 + 7 * rank;
  char* cursor = (char*)(i64 + 7 * rank + 2 * labels);
  int32_t* i32 = (int32_t*)(void*)cursor;
  w->where[0] = i32;
  w->where[1] = i32 + labels;
  cursor += (2 * labels * sizeof(int32_t) + 7) / 8 * 8;
  label_t* lab = (label_t*)(void*)cursor;
  label_t** parts[8] = {&w->kept[0], &w->kept[1],  &w->batch,    &w->free_a,
                        &w->free_b,  &w->contract, &w->c_labels, &w->target};
  for (size_t i = 0; i < 8; ++i) *parts[i] = lab + i * rank;
  cursor += (8 * rank * sizeof(label_t) + 7) / 8 * 8;
  w->flags = (bool*)cursor;
  w->in_output = (bool*)cursor + 2 * labels;
}

static int64_t dims_product(const label_t* labels, int32_t count,
                            const int64_t* label_dims) {
  int64_t product = 1;
  for (int32_t i = 0; i < count; ++i) product *= label_dims[labels[i]];
  return product;
}

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

#define FAIL_AND_RETURN_FALSE(ctx, status) \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return false;                          \
  } while (0)

// The axis sequences of a plan: the inputs', then the output's.
typedef struct sequence_t {
  label_t* labels;
  int32_t* rank;
  bool* broadcast;  // NULL for the output
} sequence_t;

// Where `label` sits in `seq`: its axis, -1 when absent, -2 when repeated.
static int32_t position(const sequence_t* seq, label_t label) {
  int32_t found = -1;
  for (int32_t a = 0; a < *seq->rank; ++a) {
    if (seq->labels[a] != label) continue;
    if (found >= 0) return -2;
    found = a;
  }
  return found;
}

// Whether `y` may merge into `x`: in every sequence they are both absent,
// or both present once, y right after x, neither broadcasting.
static bool foldable(const sequence_t* seqs, int32_t count, label_t x,
                     label_t y) {
  for (int32_t s = 0; s < count; ++s) {
    int32_t px = position(&seqs[s], x), py = position(&seqs[s], y);
    if (px == -1 && py == -1) continue;
    if (px < 0 || py != px + 1) return false;
    if (seqs[s].broadcast && (seqs[s].broadcast[px] || seqs[s].broadcast[py])) {
      return false;
    }
  }
  return true;
}

// Folds `plan` (whose output labels are distinct): labels adjacent and in
// the same order wherever they appear act as one label of their product,
// as TensorFlow's broadcasting folds dimensions. The memory every operand
// and the output have is unchanged; only fewer, larger axes describe it,
// so the passes and the product see the smallest ranks the layout allows.
static void fold_plan(loom__einsum_plan_t* plan, int32_t num_inputs) {
  sequence_t seqs[3];
  int32_t count = 0;
  for (int32_t i = 0; i < num_inputs; ++i) {
    seqs[count++] = (sequence_t){.labels = plan->labels[i],
                                 .rank = &plan->ranks[i],
                                 .broadcast = plan->broadcast[i]};
  }
  seqs[count++] = (sequence_t){.labels = plan->output_labels,
                               .rank = &plan->output_rank,
                               .broadcast = NULL};
  for (int32_t s = 0; s < count; ++s) {
    for (int32_t a = 0; a + 1 < *seqs[s].rank;) {
      label_t x = seqs[s].labels[a], y = seqs[s].labels[a + 1];
      if (x == y || !foldable(seqs, count, x, y)) {
        ++a;
        continue;
      }
      // y's dimension joins x's; y leaves every sequence.
      plan->dims[x] *= plan->dims[y];
      for (int32_t t = 0; t < count; ++t) {
        int32_t py = position(&seqs[t], y);
        if (py < 0) continue;
        int32_t rest = *seqs[t].rank - py - 1;
        memmove(seqs[t].labels + py, seqs[t].labels + py + 1,
                label_bytes(rest));
        if (seqs[t].broadcast) {
          memmove(seqs[t].broadcast + py, seqs[t].broadcast + py + 1,
                  (size_t)rest * sizeof(bool));
        }
        --*seqs[t].rank;
      }
    }
  }
}

// Copies the set entries of `plan` (a struct copy would move all of its
// fixed-size arrays).
static void copy_plan(const loom__einsum_plan_t* plan, int32_t num_inputs,
                      loom__einsum_plan_t* out) {
  out->num_labels = plan->num_labels;
  memcpy(out->dims, plan->dims, (size_t)plan->num_labels * sizeof(int64_t));
  for (int32_t i = 0; i < num_inputs; ++i) {
    out->ranks[i] = plan->ranks[i];
    memcpy(out->labels[i], plan->labels[i], label_bytes(plan->ranks[i]));
    memcpy(out->broadcast[i], plan->broadcast[i],
           (size_t)plan->ranks[i] * sizeof(bool));
  }
  out->output_rank = plan->output_rank;
  memcpy(out->output_labels, plan->output_labels,
         label_bytes(plan->output_rank));
  out->output_shape = plan->output_shape;
}

// An input's axis sizes under `plan`: its label's size, or 1 where it
// broadcasts.
static void input_dims(const loom__einsum_plan_t* plan, int32_t i,
                       int64_t* dims) {
  for (int32_t a = 0; a < plan->ranks[i]; ++a) {
    dims[a] = plan->broadcast[i][a] ? 1 : plan->dims[plan->labels[i][a]];
  }
}

// The einsum of the folded `plan` (whose output labels are distinct, whose
// inputs hold elements) into `output`, with the arrays of `w`. False when
// it failed the kernel.
static bool compute_folded(loom_kernel_context_t* ctx,
                           const loom__einsum_plan_t* plan, work_t* w,
                           loom_tensor_t* const* inputs, int32_t num_inputs,
                           loom_tensor_t* output) {
  int32_t num_labels = plan->num_labels;
  loom_status_t status = loom_ok_status();
  loom_dtype_t dtype = loom_tensor_dtype(inputs[0]);
  bool narrow = dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16;
  pass_kind_t same;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      same = PASS_F32;
      break;
    case LOOM_DTYPE_DOUBLE:
      same = PASS_F64;
      break;
    case LOOM_DTYPE_INT32:
      same = PASS_I32;
      break;
    case LOOM_DTYPE_INT64:
      same = PASS_I64;
      break;
    case LOOM_DTYPE_HALF:
      same = PASS_HALF;
      break;
    case LOOM_DTYPE_BFLOAT16:
      same = PASS_BF16;
      break;
    default:
      FAIL_AND_RETURN_FALSE(
          ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                "Einsum: no CPU kernel for dtype %s",
                                loom_dtype_name(dtype)));
  }
  pass_t* pass = &w->pass;
  if (num_inputs == 1) {
    input_dims(plan, 0, w->dims[0]);
    plan_pass(plan->labels[0], w->dims[0], plan->ranks[0], NULL,
              plan->output_labels, plan->output_rank, plan->dims, num_labels,
              w->label_scratch, w->flags, pass);
    status = run_pass(ctx, same, pass, loom_tensor_data(inputs[0]),
                      loom_tensor_data(output));
    if (status) FAIL_AND_RETURN_FALSE(ctx, status);
    return true;
  }
  // The operands: an ellipsis axis of size 1 facing a larger one is left
  // out (its label is free in the other operand).
  operand_t ops[2];
  int32_t* const* where = w->where;
  bool* in_output = w->in_output;
  memset(in_output, 0, (size_t)num_labels * sizeof(in_output[0]));
  for (int32_t a = 0; a < plan->output_rank; ++a) {
    in_output[plan->output_labels[a]] = true;
  }
  for (int32_t i = 0; i < 2; ++i) {
    operand_t* op = &ops[i];
    memset(where[i], 0, (size_t)num_labels * sizeof(where[i][0]));
    op->rank = plan->ranks[i];
    op->axis_labels = plan->labels[i];
    op->dropped = plan->broadcast[i];
    op->count = 0;
    op->repeats_or_sums = false;
    op->dims = w->dims[i];
    op->labels = w->kept[i];
    input_dims(plan, i, op->dims);
    for (int32_t a = 0; a < op->rank; ++a) {
      label_t l = plan->labels[i][a];
      if (op->dropped[a]) continue;
      if (where[i][l]++ > 0) op->repeats_or_sums = true;
      op->labels[op->count++] = l;
    }
  }
  // Roles. Batch and free labels in the output's order.
  label_t* batch = w->batch;
  label_t* free_a = w->free_a;
  label_t* free_b = w->free_b;
  label_t* contract = w->contract;
  int32_t nbatch = 0, nfree_a = 0, nfree_b = 0, ncontract = 0;
  for (int32_t a = 0; a < plan->output_rank; ++a) {
    label_t l = plan->output_labels[a];
    if (where[0][l] && where[1][l]) {
      batch[nbatch++] = l;
    } else if (where[0][l]) {
      free_a[nfree_a++] = l;
    } else {
      free_b[nfree_b++] = l;
    }
  }
  for (int32_t i = 0; i < 2; ++i) {
    for (int32_t a = 0; a < ops[i].count; ++a) {
      label_t l = ops[i].labels[a];
      if (!in_output[l] && !where[1 - i][l]) ops[i].repeats_or_sums = true;
    }
  }
  // Contracted labels in A's order, or in B's when A needs a pass anyway.
  for (int32_t pick = 0; pick < 2; ++pick) {
    ncontract = 0;
    const operand_t* from = &ops[pick];
    for (int32_t a = 0; a < from->count; ++a) {
      label_t l = from->labels[a];
      if (in_output[l] || !where[1 - pick][l]) continue;
      bool seen = false;
      for (int32_t c = 0; c < ncontract; ++c) seen |= contract[c] == l;
      if (!seen) contract[ncontract++] = l;
    }
    if (pick == 1) break;
    bool a_in_place = !narrow && !ops[0].repeats_or_sums &&
                      (is_concat(ops[0].labels, ops[0].count, batch, nbatch,
                                 free_a, nfree_a, contract, ncontract) ||
                       is_concat(ops[0].labels, ops[0].count, batch, nbatch,
                                 contract, ncontract, free_a, nfree_a));
    if (a_in_place) break;
  }
  int64_t nb = dims_product(batch, nbatch, plan->dims);
  int64_t m = dims_product(free_a, nfree_a, plan->dims);
  int64_t n = dims_product(free_b, nfree_b, plan->dims);
  int64_t k = dims_product(contract, ncontract, plan->dims);
  // A: [batch, free A, contract] (or its transpose in place).
  bool transpose[2] = {false, false};
  bool in_place[2] = {false, false};
  if (!narrow && !ops[0].repeats_or_sums) {
    if (is_concat(ops[0].labels, ops[0].count, batch, nbatch, free_a, nfree_a,
                  contract, ncontract)) {
      in_place[0] = true;
    } else if (is_concat(ops[0].labels, ops[0].count, batch, nbatch, contract,
                         ncontract, free_a, nfree_a)) {
      in_place[0] = transpose[0] = true;
    }
  }
  // B: [batch, contract, free B] (or its transpose, but not for integer
  // products).
  bool integer = dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_INT64;
  if (!narrow && !ops[1].repeats_or_sums) {
    if (is_concat(ops[1].labels, ops[1].count, batch, nbatch, contract,
                  ncontract, free_b, nfree_b)) {
      in_place[1] = true;
    } else if (!integer && is_concat(ops[1].labels, ops[1].count, batch, nbatch,
                                     free_b, nfree_b, contract, ncontract)) {
      in_place[1] = transpose[1] = true;
    }
  }
  // C: [batch, free A, free B], in the output when that is its order.
  label_t* c_labels = w->c_labels;
  int32_t c_rank = nbatch + nfree_a + nfree_b;
  concat3(c_labels, batch, nbatch, free_a, nfree_a, free_b, nfree_b);
  bool c_in_place = !narrow && memcmp(c_labels, plan->output_labels,
                                      label_bytes(c_rank)) == 0;
  // Scratch for the operands that need a pass and for C.
  int64_t counts[3] = {in_place[0] ? 0 : nb * m * k,
                       in_place[1] ? 0 : nb * k * n,
                       c_in_place ? 0 : nb * m * n};
  int64_t total;
  loom_dtype_t compute = narrow ? LOOM_DTYPE_FLOAT : dtype;
  size_t size = loom_dtype_size(compute), bytes;
  if (!loom__size_sum(counts, 3, &total) ||
      !loom__size_bytes(total, size, &bytes)) {
    FAIL_AND_RETURN_FALSE(
        ctx,
        loom__size_overflow_error(
            "Einsum", "scratch", "(%lld + %lld + %lld elements)",
            (long long)counts[0], (long long)counts[1], (long long)counts[2]));
  }
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  char* scratch = NULL;
  if (bytes > 0) {
    status =
        loom_allocator_malloc_aligned(allocator, bytes, 64, (void**)&scratch);
    if (status) FAIL_AND_RETURN_FALSE(ctx, status);
  }
  pass_kind_t widen = dtype == LOOM_DTYPE_HALF       ? PASS_HALF_F32
                      : dtype == LOOM_DTYPE_BFLOAT16 ? PASS_BF16_F32
                                                     : same;
  const void* data[2];
  char* cursor = scratch;
  for (int32_t i = 0; i < 2; ++i) {
    if (in_place[i]) {
      data[i] = loom_tensor_data(inputs[i]);
      continue;
    }
    label_t* target = w->target;
    int32_t rank = nbatch + ncontract + (i == 0 ? nfree_a : nfree_b);
    if (i == 0) {
      concat3(target, batch, nbatch, free_a, nfree_a, contract, ncontract);
    } else {
      concat3(target, batch, nbatch, contract, ncontract, free_b, nfree_b);
    }
    plan_pass(ops[i].axis_labels, ops[i].dims, ops[i].rank, ops[i].dropped,
              target, rank, plan->dims, num_labels, w->label_scratch, w->flags,
              pass);
    status = run_pass(ctx, widen, pass, loom_tensor_data(inputs[i]), cursor);
    if (status) {
      loom_allocator_free(allocator, scratch);
      FAIL_AND_RETURN_FALSE(ctx, status);
    }
    data[i] = cursor;
    cursor += (size_t)counts[i] * size;
  }
  void* c = c_in_place ? loom_tensor_data(output) : cursor;
  status = loom__matmul_batched(ctx, "Einsum", compute, data[0], transpose[0],
                                data[1], transpose[1], c, nb, m, n, k);
  if (!status && !c_in_place) {
    int64_t* c_dims = w->c_dims;
    for (int32_t a = 0; a < c_rank; ++a) c_dims[a] = plan->dims[c_labels[a]];
    plan_pass(c_labels, c_dims, c_rank, NULL, plan->output_labels,
              plan->output_rank, plan->dims, num_labels, w->label_scratch,
              w->flags, pass);
    pass_kind_t back = dtype == LOOM_DTYPE_HALF       ? PASS_F32_HALF
                       : dtype == LOOM_DTYPE_BFLOAT16 ? PASS_F32_BF16
                                                      : same;
    status = run_pass(ctx, back, pass, c, loom_tensor_data(output));
  }
  loom_allocator_free(allocator, scratch);
  if (status) FAIL_AND_RETURN_FALSE(ctx, status);
  return true;
}

// Computes the einsum of `plan` (whose output labels are distinct) into
// `output`, of plan->output_shape: folded, with its working arrays on the
// stack when small, else on the heap. False when it failed the kernel.
static bool compute_into(loom_kernel_context_t* ctx,
                         const loom__einsum_plan_t* plan_in,
                         loom_tensor_t* const* inputs, int32_t num_inputs,
                         loom_tensor_t* output) {
  if (loom_tensor_num_elements(output) == 0) return true;
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (loom_tensor_num_elements(inputs[i]) == 0) {
      // A summed or contracted label of size 0: every sum is empty.
      memset(loom_tensor_data(output), 0, loom_tensor_byte_size(output));
      return true;
    }
  }
  // From here every input holds elements, so products of its dims fit.
  loom__einsum_plan_t plan;
  copy_plan(plan_in, num_inputs, &plan);
  fold_plan(&plan, num_inputs);
  int32_t rank = plan.output_rank;
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (plan.ranks[i] > rank) rank = plan.ranks[i];
  }
  size_t bytes = work_bytes((size_t)rank, (size_t)plan.num_labels);
  _Alignas(16) char inline_block[kWorkInlineBytes];
  char* block = inline_block;
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  if (bytes > sizeof(inline_block)) {
    loom_status_t status =
        loom_allocator_malloc(allocator, bytes, (void**)&block);
    if (status) FAIL_AND_RETURN_FALSE(ctx, status);
  }
  work_t work;
  work_carve(&work, block, (size_t)rank, (size_t)plan.num_labels);
  bool ok = compute_folded(ctx, &plan, &work, inputs, num_inputs, output);
  if (block != inline_block) loom_allocator_free(allocator, block);
  return ok;
}

// Writes `compact` (labels `labels`, distinct, row-major) into `output`,
// zero elsewhere: element (i_l for each label l) goes to the output element
// whose axes labelled l all hold i_l (TensorFlow's inflation, "i->ii").
static void inflate(const loom_tensor_t* compact, const label_t* labels,
                    int32_t rank, const loom__einsum_plan_t* plan,
                    loom_tensor_t* output) {
  size_t size = loom_dtype_size(loom_tensor_dtype(output));
  memset(loom_tensor_data(output), 0, loom_tensor_byte_size(output));
  // Each compact axis' stride in the output: the sum of the strides of the
  // output axes with its label.
  int64_t strides[kEinsumMaxAxes];
  memset(strides, 0, (size_t)rank * sizeof(strides[0]));
  const int64_t* output_dims = loom_shape_dims(&plan->output_shape);
  int64_t stride = 1;
  for (int32_t a = plan->output_rank - 1; a >= 0; --a) {
    for (int32_t c = 0; c < rank; ++c) {
      if (labels[c] == plan->output_labels[a]) strides[c] += stride;
    }
    stride *= output_dims[a];
  }
  const int64_t* dims = loom_shape_dims(loom_tensor_shape(compact));
  int64_t index[kEinsumMaxAxes];
  memset(index, 0, (size_t)rank * sizeof(index[0]));
  int64_t n = loom_tensor_num_elements(compact);
  const char* src = loom_tensor_data(compact);
  char* dst = loom_tensor_data(output);
  int64_t offset = 0;
  for (int64_t e = 0; e < n; ++e) {
    memcpy(dst + (size_t)offset * size, src + (size_t)e * size, size);
    for (int32_t c = rank - 1; c >= 0; --c) {
      offset += strides[c];
      if (++index[c] < dims[c]) break;
      offset -= strides[c] * index[c];
      index[c] = 0;
    }
  }
}

static void einsum_compute(void* state, loom_kernel_context_t* ctx) {
  const einsum_kernel_t* kernel = state;
  int32_t num_inputs = loom_kernel_context_num_inputs(ctx);
  const loom_shape_t* shapes[2] = {NULL, NULL};
  loom_tensor_t* inputs[2] = {NULL, NULL};
  for (int32_t i = 0; i < num_inputs && i < 2; ++i) {
    inputs[i] = loom_kernel_context_input(ctx, i);
    shapes[i] = loom_tensor_shape(inputs[i]);
  }
  loom__einsum_plan_t plan;
  loom_status_t status =
      loom__einsum_resolve(&kernel->equation, shapes, num_inputs, &plan);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* output = NULL;
  status =
      loom_kernel_context_allocate_output(ctx, 0, &plan.output_shape, &output);
  if (status) FAIL_AND_RETURN(ctx, status);
  // An output label repeated ("i->ii"): the einsum to its distinct labels,
  // then inflated onto the diagonal.
  bool repeats = false;
  for (int32_t a = 0; a < plan.output_rank && !repeats; ++a) {
    for (int32_t b = 0; b < a; ++b) {
      repeats |= plan.output_labels[a] == plan.output_labels[b];
    }
  }
  if (!repeats) {
    (void)compute_into(ctx, &plan, inputs, num_inputs, output);
    return;
  }
  loom__einsum_plan_t compact_plan;
  copy_plan(&plan, num_inputs, &compact_plan);
  compact_plan.output_rank = 0;
  int64_t compact_dims[kEinsumMaxAxes];
  for (int32_t a = 0; a < plan.output_rank; ++a) {
    label_t l = plan.output_labels[a];
    bool seen = false;
    for (int32_t c = 0; c < compact_plan.output_rank; ++c) {
      seen |= compact_plan.output_labels[c] == l;
    }
    if (seen) continue;
    compact_dims[compact_plan.output_rank] = plan.dims[l];
    compact_plan.output_labels[compact_plan.output_rank++] = l;
  }
  // Fewer elements than the output: the product fits.
  status = loom_shape_initialize_large(&compact_plan.output_shape, compact_dims,
                                       compact_plan.output_rank);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* compact = NULL;
  status = loom_tensor_create_dense(loom_kernel_context_allocator(ctx),
                                    loom_tensor_dtype(output),
                                    &compact_plan.output_shape, &compact);
  if (status) FAIL_AND_RETURN(ctx, status);
  if (compute_into(ctx, &compact_plan, inputs, num_inputs, compact)) {
    inflate(compact, compact_plan.output_labels, compact_plan.output_rank,
            &plan, output);
  }
  loom_tensor_release(compact);
}

//===----------------------------------------------------------------------===//
// Shape function and registration
//===----------------------------------------------------------------------===//

static loom_status_t einsum_shape_fn(loom_shape_inference_context_t* context,
                                     void* user_data) {
  (void)user_data;
  loom__einsum_equation_t equation;
  LOOM_RETURN_IF_ERROR(
      read_equation(loom_shape_inference_context_attrs(context), &equation));
  int32_t n = loom_shape_inference_context_num_inputs(context);
  loom_shape_t shapes[2];
  const loom_shape_t* pointers[2] = {&shapes[0], &shapes[1]};
  if (n != equation.num_inputs) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Expected %d inputs but got: %d",
                            (int)equation.num_inputs, (int)n);
  }
  for (int32_t i = 0; i < n; ++i) {
    LOOM_RETURN_IF_ERROR(
        loom_shape_inference_context_input(context, i, &shapes[i]));
    if (shapes[i].rank < 0) {
      loom_shape_t unknown = loom_shape_unknown();
      return loom_shape_inference_context_set_output(context, 0, &unknown);
    }
  }
  loom__einsum_plan_t plan;
  LOOM_RETURN_IF_ERROR(loom__einsum_resolve(&equation, pointers, n, &plan));
  return loom_shape_inference_context_set_output(context, 0,
                                                 &plan.output_shape);
}

static const loom__builtin_op_t kOps[] = {
    {.name = "Einsum",
     .inputs = {"inputs: N * T"},
     .outputs = {"output: T"},
     .attrs = {"equation: string", "N: int >= 1", "T: type"},
     .shape_fn = einsum_shape_fn},
};

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "Einsum",
     .compute = einsum_compute,
     .create = einsum_create,
     .destroy = einsum_delete,
     .type_attr = "T",
     .any_rank = true,
     .types = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF,
               LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64}},
};

loom_status_t loom__register_einsum_ops(void) {
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  return loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0])));
}
