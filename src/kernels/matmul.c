// MatMul and BatchMatMulV2 with TensorFlow's signatures, shape checks and
// messages. f32 and f64 go to OpenBLAS (sgemm, dgemm); half and bfloat16
// are stored as such and computed in float (convert, sgemm, convert back);
// int32 and int64 use a blocked loop (matmul_loops.c).
//
// Threads: OpenBLAS runs single-threaded (loom__blas_single_threaded) and
// large products are cut into blocks of rows of C that run on Loom's pool,
// one sgemm call each — so the pool's threads are the only ones computing,
// and no parallel region nests in another.

#include "kernels/matmul.h"

#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernels/builtin_families.h"
#include "kernels/kernel_registration.h"
#include "kernels/shape_fns.h"
#include "loom/thread_pool.h"
#include "tensor/checked_size.h"

const loom__matmul_loops_t* loom__matmul_loops(void) {
  static const loom__matmul_loops_t* const kTables[LOOM_ISA_LEVELS] = {
      &loom__matmul_loops_baseline, &loom__matmul_loops_avx2,
      &loom__matmul_loops_avx512};
  return kTables[loom__isa_level()];
}

// OpenBLAS's thread count is one setting for the whole process.
static pthread_mutex_t g_blas_mutex = PTHREAD_MUTEX_INITIALIZER;

void loom__blas_single_threaded(void) {
  // A plain read of OpenBLAS's setting: cheap enough for every product.
  if (openblas_get_num_threads() == 1) return;
  pthread_mutex_lock(&g_blas_mutex);
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
  pthread_mutex_unlock(&g_blas_mutex);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

// A shape as TensorFlow's DebugString prints it: "[2,3]".
static loom_status_t size_incompatible(const loom_shape_t* a,
                                       const loom_shape_t* b) {
  char ta[160], tb[160];
  loom__shape_debug_string(a, ta, sizeof(ta));
  loom__shape_debug_string(b, tb, sizeof(tb));
  return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                          "Matrix size-incompatible: In[0]: %s, In[1]: %s", ta,
                          tb);
}

static bool bool_attr(const loom_op_attrs_t* attrs, const char* name) {
  bool value = false;
  loom_status_t status = loom_op_attrs_get_bool(attrs, name, &value);
  if (status) {
    loom_status_free(status);
    return false;
  }
  return value;
}

// A product's geometry: C[batch] = op(A[batch_a]) . op(B[batch_b]).
// Any rank: the batch dims are read from the operands' shapes through
// loom_shape_dims (BatchMatMulV2 takes up to LOOM_MAX_SHAPE_RANK - 2).
typedef struct product_t {
  loom_shape_t out;  // made from dims[0, rank) by product_of
  int32_t rank;
  int64_t dims[LOOM_MAX_SHAPE_RANK];  // batch dims, m, n
  int64_t m, n, k;
  bool transpose_a, transpose_b;
  int32_t batch_rank;
  int64_t batch;                           // product of the output batch dims
  int64_t a_strides[LOOM_MAX_SHAPE_RANK];  // matrices between batch indices
  int64_t b_strides[LOOM_MAX_SHAPE_RANK];  // (0 where broadcast)
} product_t;

// MatMul's rules: two matrices. Unknown dims (-1) pass.
static loom_status_t matmul_product(const loom_shape_t* a,
                                    const loom_shape_t* b, bool transpose_a,
                                    bool transpose_b, product_t* p) {
  if (a->rank != b->rank) {
    char ta[160], tb[160];
    loom__shape_debug_string(a, ta, sizeof(ta));
    loom__shape_debug_string(b, tb, sizeof(tb));
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "In[0] and In[1] has different ndims: %s vs. %s",
                            ta, tb);
  }
  if (a->rank != 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "In[0] and In[1] ndims must be == 2: %d",
                            (int)a->rank);
  }
  int64_t ka = a->dims[transpose_a ? 0 : 1];
  int64_t kb = b->dims[transpose_b ? 1 : 0];
  if (ka >= 0 && kb >= 0 && ka != kb) return size_incompatible(a, b);
  p->transpose_a = transpose_a;
  p->transpose_b = transpose_b;
  p->m = a->dims[transpose_a ? 1 : 0];
  p->n = b->dims[transpose_b ? 0 : 1];
  p->k = ka >= 0 ? ka : kb;
  p->batch_rank = 0;
  p->batch = 1;
  p->rank = 2;
  p->dims[0] = p->m;
  p->dims[1] = p->n;
  return loom_ok_status();
}

// BatchMatMulV2's rules: ranks >= 2, batch dims broadcast as NumPy's.
static loom_status_t batch_product(const loom_shape_t* a, const loom_shape_t* b,
                                   bool adj_x, bool adj_y, product_t* p) {
  if (a->rank < 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "In[0] ndims must be >= 2: %d", (int)a->rank);
  }
  if (b->rank < 2) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "In[1] ndims must be >= 2: %d", (int)b->rank);
  }
  int32_t ra = a->rank - 2, rb = b->rank - 2;
  int32_t rank = ra > rb ? ra : rb;
  p->batch_rank = rank;
  p->batch = 1;
  const int64_t* a_dims = loom_shape_dims(a);
  const int64_t* b_dims = loom_shape_dims(b);
  // Strides in matrices of each operand's batch dims, right-aligned.
  int64_t sa = 1, sb = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    int32_t ia = i - (rank - ra), ib = i - (rank - rb);
    int64_t da = ia >= 0 ? a_dims[ia] : 1;
    int64_t db = ib >= 0 ? b_dims[ib] : 1;
    int64_t d;
    if (da == db || db == 1) {
      d = da;
    } else if (da == 1) {
      d = db;
    } else if (da < 0 || db < 0) {
      d = da < 0 ? db : da;  // unknown: assume it broadcasts
    } else {
      char ta[160], tb[160];
      loom__shape_debug_string(a, ta, sizeof(ta));
      loom__shape_debug_string(b, tb, sizeof(tb));
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "In[0] and In[1] must have compatible batch dimensions: %s vs. %s",
          ta, tb);
    }
    p->dims[i] = d;
    p->a_strides[i] = da == 1 && d != 1 ? 0 : sa;
    p->b_strides[i] = db == 1 && d != 1 ? 0 : sb;
    // Products of dims that may pass int64 when a tensor is empty
    // ([2^62, 1, 0, 2] broadcast with [1, 4, 2, 3]): they saturate, and the
    // kernel reads them only for a non-empty output with k > 0, where each
    // is below an operand's element count.
    if (da >= 0 && !loom__size_mul(sa, da, &sa)) sa = INT64_MAX;
    if (db >= 0 && !loom__size_mul(sb, db, &sb)) sb = INT64_MAX;
    if (d >= 0 && !loom__size_mul(p->batch, d, &p->batch)) {
      p->batch = INT64_MAX;
    }
  }
  int64_t ka = a_dims[a->rank - (adj_x ? 2 : 1)];
  int64_t kb = b_dims[b->rank - (adj_y ? 1 : 2)];
  if (ka >= 0 && kb >= 0 && ka != kb) return size_incompatible(a, b);
  p->transpose_a = adj_x;
  p->transpose_b = adj_y;
  p->m = a_dims[a->rank - (adj_x ? 1 : 2)];
  p->n = b_dims[b->rank - (adj_y ? 2 : 1)];
  p->k = ka >= 0 ? ka : kb;
  p->rank = rank + 2;
  p->dims[rank] = p->m;
  p->dims[rank + 1] = p->n;
  return loom_ok_status();
}

// Which product an op instance computes: read from its attributes once, by
// the shape function on each call (the shape memo skips most of them) and
// by the kernel when it is constructed.
typedef struct product_kind_t {
  bool batch;  // BatchMatMulV2's rules (else MatMul's)
  bool transpose_a;
  bool transpose_b;
} product_kind_t;

static const product_kind_t kProductKinds[2][2][2] = {
    [0][0][0] = {.batch = false, .transpose_a = false, .transpose_b = false},
    [0][0][1] = {.batch = false, .transpose_a = false, .transpose_b = true},
    [0][1][0] = {.batch = false, .transpose_a = true, .transpose_b = false},
    [0][1][1] = {.batch = false, .transpose_a = true, .transpose_b = true},
    [1][0][0] = {.batch = true, .transpose_a = false, .transpose_b = false},
    [1][0][1] = {.batch = true, .transpose_a = false, .transpose_b = true},
    [1][1][0] = {.batch = true, .transpose_a = true, .transpose_b = false},
    [1][1][1] = {.batch = true, .transpose_a = true, .transpose_b = true},
};

static const product_kind_t* kind_of(bool batch, const loom_op_attrs_t* attrs) {
  bool transpose_a = bool_attr(attrs, batch ? "adj_x" : "transpose_a");
  bool transpose_b = bool_attr(attrs, batch ? "adj_y" : "transpose_b");
  return &kProductKinds[batch][transpose_a][transpose_b];
}

// The product's geometry; with the output's dims known, its element count
// must fit int64 (an error naming the op, the output and its dims).
static loom_status_t product_of(const char* op_name, const product_kind_t* kind,
                                const loom_shape_t* a, const loom_shape_t* b,
                                product_t* p) {
  LOOM_RETURN_IF_ERROR(
      kind->batch
          ? batch_product(a, b, kind->transpose_a, kind->transpose_b, p)
          : matmul_product(a, b, kind->transpose_a, kind->transpose_b, p));
  LOOM_RETURN_IF_ERROR(loom_shape_initialize_large(&p->out, p->dims, p->rank));
  for (int32_t i = 0; i < p->rank; ++i) {
    if (p->dims[i] < 0) return loom_ok_status();
  }
  int64_t count;
  if (loom__size_product(p->dims, p->rank, &count)) return loom_ok_status();
  char text[160];
  return loom__size_overflow_error(
      op_name, "output", "%s (batch dims, rows of op(a), columns of op(b))",
      loom__format_int64s(p->dims, p->rank, text, sizeof(text)));
}

loom_status_t loom__matmul_shape_fn(loom_shape_inference_context_t* context,
                                    void* user_data) {
  (void)user_data;
  loom_shape_t a, b;
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 0, &a));
  LOOM_RETURN_IF_ERROR(loom_shape_inference_context_input(context, 1, &b));
  const loom_op_def_t* op = loom_shape_inference_context_op(context);
  // BatchMatMulV2's rules, or MatMul's (MatMul, _FusedMatMul).
  bool batch = strcmp(op->name, "BatchMatMulV2") == 0;
  if (a.rank < 0 || b.rank < 0) {
    loom_shape_t unknown = loom_shape_unknown();
    if (!batch) {
      unknown = loom_shape_scalar();
      unknown.rank = 2;
      unknown.dims[0] = unknown.dims[1] = LOOM_UNKNOWN_DIM;
    }
    return loom_shape_inference_context_set_output(context, 0, &unknown);
  }
  product_t p;
  const product_kind_t* kind =
      kind_of(batch, loom_shape_inference_context_attrs(context));
  LOOM_RETURN_IF_ERROR(product_of(op->name, kind, &a, &b, &p));
  return loom_shape_inference_context_set_output(context, 0, &p.out);
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

// Products smaller than this many multiply-adds (~40 us) run in one call.
enum { kMinParallelFlops = 1 << 21 };
// Outer products (k = 1) whose output reaches this many bytes are written
// with non-temporal stores: it would not stay in the last-level cache.
enum { kStreamBytes = 1 << 24 };
// Rows of C per block are a multiple of this (the GEMM kernels' tiles).
enum { kRowAlign = 16 };
// With an epilogue, blocks of C hold at most this many elements (a quarter
// of a 1 MiB L2 in float) so the epilogue finds them in cache, but have at
// least kEpilogueMinRows rows so that packing B once per block stays cheap.
enum { kEpilogueBlock = 1 << 16, kEpilogueMinRows = 64 };

typedef enum gemm_kind_t {
  GEMM_F32,  // also half and bfloat16, converted
  GEMM_F64,
  GEMM_I32,
  GEMM_I64,
} gemm_kind_t;

typedef struct gemm_job_t {
  const product_t* p;
  gemm_kind_t kind;
  const loom__matmul_loops_t* loops;
  const loom__matmul_epilogue_t* epilogue;  // NULL: none
  const char* a;  // element data of A and B (converted to float for 16-bit)
  const char* b;  // for integers: op(B) row-major
  char* c;
  size_t size;       // bytes per element of a, b, c
  int64_t a_matrix;  // elements per matrix of A, B
  int64_t b_matrix;
  int64_t row_blocks;  // blocks of rows per product
  int64_t rows_per_block;
  bool stream;  // k = 1: C past the caches (loom__matmul_loops_t.outer_f32)
} gemm_job_t;

// Element offset of batch `index`'s matrix in an operand with `strides`.
static int64_t batch_offset(const product_t* p, const int64_t* strides,
                            int64_t index) {
  int64_t offset = 0;
  for (int32_t i = p->batch_rank - 1; i >= 0; --i) {
    int64_t dim = p->dims[i];
    offset += (index % dim) * strides[i];
    index /= dim;
  }
  return offset;
}

// One block's product through OpenBLAS (floating point) or the integer
// loops.
static void gemm_call(const gemm_job_t* job, const char* a, const char* b,
                      char* c, int64_t rows) {
  const product_t* p = job->p;
  int64_t m = p->m, n = p->n, k = p->k;
  int lda = (int)(p->transpose_a ? m : k);
  int ldb = (int)(p->transpose_b ? k : n);
  enum CBLAS_TRANSPOSE ta = p->transpose_a ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE tb = p->transpose_b ? CblasTrans : CblasNoTrans;
  switch (job->kind) {
    case GEMM_F32:
      cblas_sgemm(CblasRowMajor, ta, tb, (int)rows, (int)n, (int)k, 1.0f,
                  (const float*)a, lda, (const float*)b, ldb, 0.0f, (float*)c,
                  (int)n);
      break;
    case GEMM_F64:
      cblas_dgemm(CblasRowMajor, ta, tb, (int)rows, (int)n, (int)k, 1.0,
                  (const double*)a, lda, (const double*)b, ldb, 0.0, (double*)c,
                  (int)n);
      break;
    case GEMM_I32:
      job->loops->gemm_i32((const int32_t*)a, p->transpose_a ? 1 : k,
                           p->transpose_a ? m : 1, (const int32_t*)b,
                           (int32_t*)c, rows, n, k);
      break;
    case GEMM_I64:
      job->loops->gemm_i64((const int64_t*)a, p->transpose_a ? 1 : k,
                           p->transpose_a ? m : 1, (const int64_t*)b,
                           (int64_t*)c, rows, n, k);
      break;
  }
}

static void gemm_block(const gemm_job_t* job, int64_t unit) {
  const product_t* p = job->p;
  int64_t batch = unit / job->row_blocks;
  int64_t block = unit % job->row_blocks;
  int64_t r0 = block * job->rows_per_block;
  int64_t rows = p->m - r0;
  if (rows > job->rows_per_block) rows = job->rows_per_block;
  if (rows <= 0) return;
  int64_t m = p->m, n = p->n, k = p->k;
  // op(A) rows r0.. start at row r0 of A, or at column r0 of A^T.
  int64_t a_offset = batch_offset(p, p->a_strides, batch) * job->a_matrix +
                     (p->transpose_a ? r0 : r0 * k);
  int64_t b_offset = batch_offset(p, p->b_strides, batch) * job->b_matrix;
  int64_t c_offset = (batch * m + r0) * n;
  const char* a = job->a + (size_t)a_offset * job->size;
  const char* b = job->b + (size_t)b_offset * job->size;
  char* c = job->c + (size_t)c_offset * job->size;
  // k = 1 (outer products, e.g. per-example weight gradients): sgemm would
  // zero C, then read and write it again; one pass writes each element.
  if (k == 1 && job->kind == GEMM_F32) {
    job->loops->outer_f32((const float*)a, (const float*)b, (float*)c, rows, n,
                          job->stream);
  } else if (k == 1 && job->kind == GEMM_F64) {
    job->loops->outer_f64((const double*)a, (const double*)b, (double*)c, rows,
                          n, job->stream);
  } else {
    gemm_call(job, a, b, c, rows);
  }
  // While the block is still in cache.
  if (job->epilogue) job->epilogue->fn(job->epilogue->state, c, rows, n);
}

static void gemm_units(void* arg, int64_t begin, int64_t end) {
  const gemm_job_t* job = arg;
  for (int64_t unit = begin; unit < end; ++unit) gemm_block(job, unit);
}

// Runs every product of the job, split over the pool when large: by batch
// when there are enough products to share evenly, else also by rows so
// each thread gets the same amount.
static loom_status_t run_gemms(loom_kernel_context_t* ctx, gemm_job_t* job) {
  const product_t* p = job->p;
  loom_thread_pool_t* pool =
      loom_host_context_thread_pool(loom_kernel_context_host(ctx));
  // The pool's workers and the calling thread share the blocks.
  int64_t threads = (int64_t)loom_thread_pool_num_threads(pool) + 1;
  double flops = (double)p->m * (double)p->n * (double)p->k;
  job->row_blocks = 1;
  if (threads > 1 && flops * (double)p->batch >= kMinParallelFlops &&
      p->batch % threads != 0 && p->batch < 8 * threads) {
    // Few products: every thread takes a share of each one's rows.
    int64_t blocks = threads;
    int64_t most = (p->m + kRowAlign - 1) / kRowAlign;
    if (blocks > most) blocks = most;
    if (blocks > 1) job->row_blocks = blocks;
  }
  job->rows_per_block = (p->m + job->row_blocks - 1) / job->row_blocks;
  if (job->row_blocks > 1) {
    job->rows_per_block =
        (job->rows_per_block + kRowAlign - 1) / kRowAlign * kRowAlign;
  }
  if (job->epilogue && job->rows_per_block * p->n > kEpilogueBlock) {
    int64_t rows = kEpilogueBlock / p->n / kRowAlign * kRowAlign;
    if (rows < kEpilogueMinRows) rows = kEpilogueMinRows;
    if (rows < job->rows_per_block) {
      job->rows_per_block = rows;
      job->row_blocks = (p->m + rows - 1) / rows;
    }
  }
  int64_t units = p->batch * job->row_blocks;
  if (threads == 1 || units == 1 ||
      flops * (double)p->batch < kMinParallelFlops) {
    gemm_units(job, 0, units);
    return loom_ok_status();
  }
  // A core does about 50 multiply-adds per nanosecond in sgemm.
  int64_t cost = (int64_t)(flops / (double)job->row_blocks / 50.0) + 1;
  return loom_thread_pool_parallel_for(pool, units, cost, gemm_units, job);
}

#define FAIL_AND_RETURN(ctx, status)       \
  do {                                     \
    loom_kernel_context_fail(ctx, status); \
    return;                                \
  } while (0)

static void* matmul_create(loom_kernel_construction_t* ctx) {
  return (void*)kind_of(false, loom_kernel_construction_attrs(ctx));
}

static void* batch_matmul_create(loom_kernel_construction_t* ctx) {
  return (void*)kind_of(true, loom_kernel_construction_attrs(ctx));
}

loom_status_t loom__matmul_output_shape(const char* op_name,
                                        const loom_shape_t* a,
                                        const loom_shape_t* b, bool transpose_a,
                                        bool transpose_b, loom_shape_t* out) {
  product_t p;
  LOOM_RETURN_IF_ERROR(product_of(
      op_name, &kProductKinds[0][transpose_a][transpose_b], a, b, &p));
  *out = p.out;
  return loom_ok_status();
}

static void compute(loom_kernel_context_t* ctx, const product_kind_t* kind,
                    const loom__matmul_epilogue_t* epilogue) {
  loom_tensor_t* a = loom_kernel_context_input(ctx, 0);
  loom_tensor_t* b = loom_kernel_context_input(ctx, 1);
  const char* op_name = loom_kernel_context_op(ctx)->name;
  product_t p;
  loom_status_t status =
      product_of(op_name, kind, loom_tensor_shape(a), loom_tensor_shape(b), &p);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_tensor_t* c = NULL;
  status = loom_kernel_context_allocate_output(ctx, 0, &p.out, &c);
  if (status) FAIL_AND_RETURN(ctx, status);
  loom_dtype_t dtype = loom_tensor_dtype(a);
  size_t size = loom_dtype_size(dtype);
  int64_t out_elements = loom_tensor_num_elements(c);
  if (out_elements == 0) return;
  if (p.k == 0 && !epilogue) {
    memset(loom_tensor_data(c), 0, loom_tensor_byte_size(c));  // 0 bits
    return;
  }
  // From here C is non-empty, and so are A and B unless k is 0 (with an
  // epilogue): the batch, the strides and the matrix sizes are below their
  // element counts.
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX) {
    FAIL_AND_RETURN(
        ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: matrix dimensions above %d are not "
                              "supported (m %lld, n %lld, k %lld)",
                              op_name, INT_MAX, (long long)p.m, (long long)p.n,
                              (long long)p.k));
  }
  int64_t a_elements = loom_tensor_num_elements(a);
  int64_t b_elements = loom_tensor_num_elements(b);
  // Every product's A, in order, times one B for all (vmap's MatMul of a
  // batch of rows by an unbatched matrix): one product of batch * m rows
  // (C's rows are in that order), not batch small ones.
  if (p.batch > 1 && !p.transpose_a && b_elements == p.k * p.n &&
      a_elements == p.batch * p.m * p.k && p.batch * p.m <= INT_MAX) {
    p.m *= p.batch;
    p.batch = 1;
  }
  loom__blas_single_threaded();
  gemm_job_t job = {
      .p = &p,
      .loops = loom__matmul_loops(),
      .epilogue = epilogue,
      .a = loom_tensor_data(a),
      .b = loom_tensor_data(b),
      .c = loom_tensor_data(c),
      .size = size,
      .a_matrix = p.m * p.k,
      .b_matrix = p.k * p.n,
      // An outer product's C larger than the caches bypasses them.
      .stream = p.k == 1 && out_elements * (int64_t)size >= kStreamBytes,
  };
  loom_allocator_t allocator = loom_kernel_context_allocator(ctx);
  void* scratch = NULL;
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      job.kind = GEMM_F32;
      break;
    case LOOM_DTYPE_DOUBLE:
      job.kind = GEMM_F64;
      break;
    case LOOM_DTYPE_HALF:
    case LOOM_DTYPE_BFLOAT16: {
      // Float copies of A and B, and C computed in float.
      int64_t counts[3] = {a_elements, b_elements, out_elements}, total;
      size_t bytes;
      if (!loom__size_sum(counts, 3, &total) ||
          !loom__size_bytes(total, sizeof(float), &bytes)) {
        FAIL_AND_RETURN(
            ctx, loom__size_overflow_error(
                     op_name, "float copies", "(%lld + %lld + %lld floats)",
                     (long long)a_elements, (long long)b_elements,
                     (long long)out_elements));
      }
      status = loom_allocator_malloc_aligned(allocator, bytes, 64, &scratch);
      if (status) FAIL_AND_RETURN(ctx, status);
      float* fa = scratch;
      float* fb = fa + a_elements;
      float* fc = fb + b_elements;
      void (*widen)(const uint16_t*, float*, int64_t) =
          dtype == LOOM_DTYPE_HALF ? job.loops->half_to_float
                                   : job.loops->bfloat16_to_float;
      widen(loom_tensor_data(a), fa, a_elements);
      widen(loom_tensor_data(b), fb, b_elements);
      job.kind = GEMM_F32;
      job.a = (const char*)fa;
      job.b = (const char*)fb;
      job.c = (char*)fc;
      job.size = sizeof(float);
      break;
    }
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64: {
      if (epilogue) {
        FAIL_AND_RETURN(
            ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                  "%s: no fused computation for dtype %s",
                                  op_name, loom_dtype_name(dtype)));
      }
      job.kind = dtype == LOOM_DTYPE_INT32 ? GEMM_I32 : GEMM_I64;
      if (p.transpose_b) {
        // The loop wants op(B) row-major: transpose each matrix of B once.
        size_t bytes = loom_tensor_byte_size(b);
        status = loom_allocator_malloc_aligned(allocator, bytes, 64, &scratch);
        if (status) FAIL_AND_RETURN(ctx, status);
        int64_t matrices = b_elements / job.b_matrix;
        for (int64_t t = 0; t < matrices; ++t) {
          const char* from = job.b + (size_t)(t * job.b_matrix) * size;
          char* to = (char*)scratch + (size_t)(t * job.b_matrix) * size;
          for (int64_t row = 0; row < p.k; ++row) {
            for (int64_t col = 0; col < p.n; ++col) {
              memcpy(to + (size_t)(row * p.n + col) * size,
                     from + (size_t)(col * p.k + row) * size, size);
            }
          }
        }
        job.b = scratch;
        p.transpose_b = false;
      }
      break;
    }
    default:
      FAIL_AND_RETURN(ctx, loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                                            "no CPU kernel for dtype %s",
                                            loom_dtype_name(dtype)));
  }
  if (p.k == 0) {
    // op(A) . op(B) is all zeros: the epilogue still applies to it.
    memset(job.c, 0, (size_t)out_elements * job.size);
    epilogue->fn(epilogue->state, job.c, p.batch * p.m, p.n);
  } else {
    status = run_gemms(ctx, &job);
  }
  if (!status && (dtype == LOOM_DTYPE_HALF || dtype == LOOM_DTYPE_BFLOAT16)) {
    void (*narrow)(const float*, uint16_t*, int64_t) =
        dtype == LOOM_DTYPE_HALF ? job.loops->float_to_half
                                 : job.loops->float_to_bfloat16;
    narrow((const float*)job.c, loom_tensor_data(c), out_elements);
  }
  loom_allocator_free(allocator, scratch);
  if (status) loom_kernel_context_fail(ctx, status);
}

loom_status_t loom__matmul_batched(loom_kernel_context_t* ctx,
                                   const char* op_name, loom_dtype_t dtype,
                                   const void* a, bool transpose_a,
                                   const void* b, bool transpose_b, void* c,
                                   int64_t batch, int64_t m, int64_t n,
                                   int64_t k) {
  size_t size = loom_dtype_size(dtype);
  if (batch == 0 || m == 0 || n == 0) return loom_ok_status();
  if (k == 0) {
    memset(c, 0, (size_t)(batch * m * n) * size);  // 0 bits
    return loom_ok_status();
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                            "%s: matrix dimensions above %d are not "
                            "supported (m %lld, n %lld, k %lld)",
                            op_name, INT_MAX, (long long)m, (long long)n,
                            (long long)k);
  }
  product_t p = {
      .m = m,
      .n = n,
      .k = k,
      .transpose_a = transpose_a,
      .transpose_b = transpose_b,
      .batch_rank = 1,
      .batch = batch,
      .a_strides = {1},
      .b_strides = {1},
  };
  p.rank = 3;
  p.dims[0] = batch;
  p.dims[1] = m;
  p.dims[2] = n;
  gemm_job_t job = {
      .p = &p,
      .loops = loom__matmul_loops(),
      .a = a,
      .b = b,
      .c = c,
      .size = size,
      .a_matrix = m * k,
      .b_matrix = k * n,
  };
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      job.kind = GEMM_F32;
      break;
    case LOOM_DTYPE_DOUBLE:
      job.kind = GEMM_F64;
      break;
    case LOOM_DTYPE_INT32:
    case LOOM_DTYPE_INT64:
      if (transpose_b) {
        return loom_make_status(LOOM_STATUS_INTERNAL,
                                "%s: integer products take B untransposed",
                                op_name);
      }
      job.kind = dtype == LOOM_DTYPE_INT32 ? GEMM_I32 : GEMM_I64;
      break;
    default:
      return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                              "%s: no matrix product for dtype %s", op_name,
                              loom_dtype_name(dtype));
  }
  loom__blas_single_threaded();
  return run_gemms(ctx, &job);
}

static void matmul_compute(void* kernel, loom_kernel_context_t* ctx) {
  compute(ctx, kernel, NULL);
}

void loom__matmul_compute(loom_kernel_context_t* ctx, bool transpose_a,
                          bool transpose_b,
                          const loom__matmul_epilogue_t* epilogue) {
  compute(ctx, &kProductKinds[0][transpose_a][transpose_b], epilogue);
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static const loom__builtin_op_t kOps[] = {
    {.name = "MatMul",
     .inputs = {"a: T", "b: T"},
     .outputs = {"product: T"},
     .attrs = {"transpose_a: bool = false", "transpose_b: bool = false",
               "T: {bfloat16, half, float, double, int32, int64, uint8, "
               "uint16, uint32, uint64, complex64, complex128}",
               "grad_a: bool = false", "grad_b: bool = false"},
     .shape_fn = loom__matmul_shape_fn},
    {.name = "BatchMatMulV2",
     .inputs = {"x: T", "y: T"},
     .outputs = {"output: T"},
     .attrs = {"T: {bfloat16, half, float, double, int16, int32, int64, "
               "uint8, uint16, uint32, uint64, complex64, complex128}",
               "adj_x: bool = false", "adj_y: bool = false",
               "grad_x: bool = false", "grad_y: bool = false"},
     .shape_fn = loom__matmul_shape_fn},
};

#define MATMUL_TYPES                                                         \
  LOOM_DTYPE_FLOAT, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_HALF, LOOM_DTYPE_BFLOAT16, \
      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64

static const loom__builtin_kernel_t kKernels[] = {
    {.op_name = "MatMul",
     .compute = matmul_compute,
     .create = matmul_create,
     .type_attr = "T",
     .types = {MATMUL_TYPES}},
    {.op_name = "BatchMatMulV2",
     .compute = matmul_compute,
     .any_rank = true,
     .create = batch_matmul_create,
     .type_attr = "T",
     .types = {MATMUL_TYPES}},
};

loom_status_t loom__register_linalg_ops(void) {
  loom__blas_single_threaded();
  LOOM_RETURN_IF_ERROR(
      loom__register_builtin_ops(kOps, (int)(sizeof(kOps) / sizeof(kOps[0]))));
  LOOM_RETURN_IF_ERROR(loom__register_builtin_kernels(
      kKernels, (int)(sizeof(kKernels) / sizeof(kKernels[0]))));
  return loom__register_fused_matmul_ops();
}
