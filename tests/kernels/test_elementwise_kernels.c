// The element-wise binary loops at every ISA level this CPU runs (the
// conformance cases run the widest, and the capped-level reruns reach the
// others only through their cases): streaming-store loops against the
// plain ones at every alignment and stride pattern, integer division
// against a 64-bit reference including zero divisors and INT_MIN / -1,
// and, through the kernel API, buffer forwarding, a fresh output big enough
// for streaming stores across the thread pool, and the division error.

#include <stdlib.h>

#include "kernels/elementwise.h"
#include "loom/loom.h"
#include "test_support.h"

static const loom__binary_table_t* const kPlain[LOOM_ISA_LEVELS] = {
    &loom__binary_loops_baseline, &loom__binary_loops_avx2,
    &loom__binary_loops_avx512};
static const loom__binary_table_t* const kStream[LOOM_ISA_LEVELS] = {
    &loom__binary_stream_loops_baseline, &loom__binary_stream_loops_avx2,
    &loom__binary_stream_loops_avx512};
static const loom__binary_checked_table_t* const kChecked[LOOM_ISA_LEVELS] = {
    &loom__binary_checked_loops_baseline, &loom__binary_checked_loops_avx2,
    &loom__binary_checked_loops_avx512};

static uint64_t g_seed = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void) {
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}

//===----------------------------------------------------------------------===//
// Streaming stores
//===----------------------------------------------------------------------===//

static void streaming_loops_match_plain_loops_at_every_level(void** state) {
  (void)state;
  enum { kCount = 1000, kPad = 16 };
  static const loom__binary_op_t kOps[] = {
      LOOM_BINARY_ADD, LOOM_BINARY_SUB, LOOM_BINARY_MUL, LOOM_BINARY_REAL_DIV,
      LOOM_BINARY_DIV};
  static const int kSlots[] = {LOOM_ELEM_F32, LOOM_ELEM_F64};
  static const int64_t kStrides[][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}};
  double* a = aligned_alloc(64, (kCount + kPad) * sizeof(double));
  double* b = aligned_alloc(64, (kCount + kPad) * sizeof(double));
  double* want = aligned_alloc(64, (kCount + kPad) * sizeof(double));
  double* got = aligned_alloc(64, (kCount + kPad) * sizeof(double));
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(want);
  assert_non_null(got);
  float* af = (float*)a;
  float* bf = (float*)b;
  for (int i = 0; i < kCount + kPad; ++i) {
    a[i] = (double)(next_random() % 20001) / 100.0 - 100.0;
    b[i] = (double)(next_random() % 20001) / 100.0 + 0.5;
  }
  for (int i = 0; i < kCount + kPad; ++i) {  // the float view's own values
    af[i] = (float)a[kCount + kPad - 1 - i / 2];
    bf[i] = (float)b[kCount + kPad - 1 - i / 2];
  }
  for (int level = 0; level <= (int)loom__isa_level(); ++level) {
    for (size_t o = 0; o < sizeof(kOps) / sizeof(kOps[0]); ++o) {
      for (size_t s = 0; s < 2; ++s) {
        int slot = kSlots[s];
        loom__binary_loop_fn_t plain = (*kPlain[level])[kOps[o]][slot];
        loom__binary_loop_fn_t stream = (*kStream[level])[kOps[o]][slot];
        assert_non_null(plain);
        assert_non_null(stream);
        size_t size = slot == LOOM_ELEM_F32 ? sizeof(float) : sizeof(double);
        for (size_t p = 0; p < 4; ++p) {
          for (int offset = 0; offset < kPad; ++offset) {
            int64_t n = kCount - offset;
            char* out_want = (char*)want + (size_t)offset * size;
            char* out_got = (char*)got + (size_t)offset * size;
            plain(a, kStrides[p][0], b, kStrides[p][1], out_want, n);
            stream(a, kStrides[p][0], b, kStrides[p][1], out_got, n);
            if (memcmp(out_want, out_got, (size_t)n * size) != 0) {
              fail_msg("level %d op %d slot %d strides %d offset %d", level,
                       (int)kOps[o], slot, (int)p, offset);
            }
          }
        }
      }
    }
  }
  free(a);
  free(b);
  free(want);
  free(got);
}

//===----------------------------------------------------------------------===//
// Integer division
//===----------------------------------------------------------------------===//

// TensorFlow's results in 64-bit arithmetic, wrapped to `bits`.
static int64_t wrap(int64_t v, int bits, bool is_signed) {
  if (bits == 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (is_signed && (u >> (bits - 1))) u |= ~mask;
  return (int64_t)u;
}

static int64_t reference(loom__binary_op_t op, int64_t x, int64_t y, int bits,
                         bool is_signed) {
  if (y == 0) return 0;
  if (y == -1 && is_signed) {  // x / -1 wraps; every remainder is 0
    bool quotient = op == LOOM_BINARY_DIV || op == LOOM_BINARY_FLOOR_DIV ||
                    op == LOOM_BINARY_TRUNCATE_DIV;
    return quotient ? wrap((int64_t)(0 - (uint64_t)x), bits, true) : 0;
  }
  int64_t q = x / y, r = x % y;
  bool down = r != 0 && ((r < 0) != (y < 0));
  switch (op) {
    case LOOM_BINARY_FLOOR_DIV:
      return down ? q - 1 : q;
    case LOOM_BINARY_FLOOR_MOD:
      return down ? r + y : r;
    case LOOM_BINARY_TRUNCATE_MOD:
      return r;
    default:
      return q;
  }
}

typedef struct int_type_t {
  int slot;
  int bits;
  bool is_signed;
} int_type_t;

static int64_t load(const void* data, int64_t i, const int_type_t* t) {
  switch (t->bits * (t->is_signed ? -1 : 1)) {
    case -8:
      return ((const int8_t*)data)[i];
    case 8:
      return ((const uint8_t*)data)[i];
    case -16:
      return ((const int16_t*)data)[i];
    case 16:
      return ((const uint16_t*)data)[i];
    case -32:
      return ((const int32_t*)data)[i];
    case 32:
      return ((const uint32_t*)data)[i];
    default:
      return ((const int64_t*)data)[i];
  }
}

static void store(void* data, int64_t i, int64_t v, const int_type_t* t) {
  switch (t->bits) {
    case 8:
      ((uint8_t*)data)[i] = (uint8_t)v;
      break;
    case 16:
      ((uint16_t*)data)[i] = (uint16_t)v;
      break;
    case 32:
      ((uint32_t*)data)[i] = (uint32_t)v;
      break;
    default:
      ((uint64_t*)data)[i] = (uint64_t)v;
      break;
  }
}

static void integer_division_matches_the_reference_at_every_level(
    void** state) {
  (void)state;
  enum { kCount = 4099 };
  static const loom__binary_op_t kOps[] = {
      LOOM_BINARY_DIV, LOOM_BINARY_FLOOR_DIV, LOOM_BINARY_FLOOR_MOD,
      LOOM_BINARY_TRUNCATE_DIV, LOOM_BINARY_TRUNCATE_MOD};
  static const int_type_t kTypes[] = {
      {LOOM_ELEM_I8, 8, true},   {LOOM_ELEM_U8, 8, false},
      {LOOM_ELEM_I16, 16, true}, {LOOM_ELEM_U16, 16, false},
      {LOOM_ELEM_I32, 32, true}, {LOOM_ELEM_U32, 32, false},
      {LOOM_ELEM_I64, 64, true}};
  int64_t* x = malloc(kCount * sizeof(int64_t));
  int64_t* y = malloc(kCount * sizeof(int64_t));
  int64_t* out = malloc(kCount * sizeof(int64_t));
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(out);
  for (size_t t = 0; t < sizeof(kTypes) / sizeof(kTypes[0]); ++t) {
    const int_type_t* type = &kTypes[t];
    int64_t low =
        type->is_signed ? (int64_t)(~(uint64_t)0 << (type->bits - 1)) : 0;
    // Random values of the type's range, the extremes, small divisors.
    for (int i = 0; i < kCount; ++i) {
      int64_t xv = wrap((int64_t)next_random(), type->bits, type->is_signed);
      int64_t yv = (int64_t)(next_random() % 15) - (type->is_signed ? 7 : 0);
      if (i % 3 == 0) {
        yv = wrap((int64_t)next_random(), type->bits, type->is_signed);
      }
      if (i % 7 == 0) xv = low;
      if (i % 11 == 0 && type->is_signed) yv = -1;
      store(x, i, xv, type);
      store(y, i, yv == 0 && i % 5 ? 1 : yv, type);  // some zeros stay
    }
    for (int level = 0; level <= (int)loom__isa_level(); ++level) {
      for (size_t o = 0; o < sizeof(kOps) / sizeof(kOps[0]); ++o) {
        loom__binary_checked_loop_fn_t loop =
            (*kChecked[level])[kOps[o]][type->slot];
        assert_non_null(loop);
        bool any_zero = false;
        for (int i = 0; i < kCount; ++i) any_zero |= load(y, i, type) == 0;
        bool ok = loop(x, 1, y, 1, out, kCount);
        assert_int_equal(ok, !any_zero);
        for (int i = 0; i < kCount; ++i) {
          int64_t xv = load(x, i, type), yv = load(y, i, type);
          if (yv == 0) continue;  // the op fails; the value is moot
          int64_t want =
              wrap(reference(kOps[o], xv, yv, type->bits, type->is_signed),
                   type->bits, type->is_signed);
          if (load(out, i, type) != want) {
            fail_msg("level %d op %d bits %d: %lld, %lld gave %lld, want %lld",
                     level, (int)kOps[o], type->bits, (long long)xv,
                     (long long)yv, (long long)load(out, i, type),
                     (long long)want);
          }
        }
        // A broadcast nonzero divisor never fails.
        int64_t three = 3;
        store(out, 0, three, type);
        assert_true(loop(x, 1, out, 0, out + 1, 100));
      }
    }
  }
  free(x);
  free(y);
  free(out);
}

//===----------------------------------------------------------------------===//
// Through the kernel API
//===----------------------------------------------------------------------===//

static loom_host_context_t* g_host;

static int setup(void** state) {
  (void)state;
  LOOM_ASSERT_OK(loom_builtin_ops_register());
  LOOM_ASSERT_OK(loom_host_context_create(NULL, &g_host));
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_host_context_destroy(g_host);
  return 0;
}

static loom_tensor_t* make_vector(loom_dtype_t dtype, int64_t n) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &n, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(), dtype,
                                          &shape, &tensor));
  return tensor;
}

// Runs a two-input op; takes the callers' references to x and y.
static loom_status_t run(const char* op, loom_tensor_t* x, loom_tensor_t* y,
                         loom_tensor_t** out) {
  loom_kernel_run_options_t options = {.host = g_host};
  loom_tensor_t* inputs[2] = {x, y};
  int32_t count = 0;
  *out = NULL;
  return loom_kernel_run(&options, op, inputs, 2, NULL, out, 1, &count);
}

static void add_writes_over_an_input_nobody_else_holds(void** state) {
  (void)state;
  enum { kCount = 100003 };
  loom_tensor_t* x = make_vector(LOOM_DTYPE_FLOAT, kCount);
  loom_tensor_t* y = make_vector(LOOM_DTYPE_FLOAT, kCount);
  float* xd = loom_tensor_data(x);
  float* yd = loom_tensor_data(y);
  for (int i = 0; i < kCount; ++i) {
    xd[i] = (float)i;
    yd[i] = 0.5f;
  }
  loom_tensor_retain(y);
  loom_tensor_t* z = NULL;
  LOOM_ASSERT_OK(run("AddV2", x, y, &z));
  assert_ptr_equal(loom_tensor_data(z), xd);
  for (int i = 0; i < kCount; ++i) assert_true(xd[i] == (float)i + 0.5f);
  loom_tensor_release(z);
  loom_tensor_release(y);
}

// An output bigger than the last-level cache goes out through streaming
// stores, split over the pool; every element must land.
static void a_big_fresh_output_is_complete(void** state) {
  (void)state;
  int64_t count = loom__elementwise_stream_bytes() / (int64_t)sizeof(float) +
                  4099;  // a ragged end
  loom_tensor_t* x = make_vector(LOOM_DTYPE_FLOAT, count);
  loom_tensor_t* y = make_vector(LOOM_DTYPE_FLOAT, count);
  float* xd = loom_tensor_data(x);
  float* yd = loom_tensor_data(y);
  for (int64_t i = 0; i < count; ++i) {
    xd[i] = (float)(i & 1023);
    yd[i] = 2.0f;
  }
  loom_tensor_retain(x);
  loom_tensor_retain(y);
  loom_tensor_t* z = NULL;
  LOOM_ASSERT_OK(run("Mul", x, y, &z));
  const float* zd = loom_tensor_data(z);
  assert_ptr_not_equal(zd, xd);
  for (int64_t i = 0; i < count; ++i) {
    if (zd[i] != (float)(i & 1023) * 2.0f) {
      fail_msg("element %lld is %g", (long long)i, (double)zd[i]);
    }
  }
  loom_tensor_release(z);
  loom_tensor_release(x);
  loom_tensor_release(y);
}

static void integer_division_by_zero_fails_the_op(void** state) {
  (void)state;
  enum { kCount = 50000 };  // split over the pool
  loom_tensor_t* x = make_vector(LOOM_DTYPE_INT32, kCount);
  loom_tensor_t* y = make_vector(LOOM_DTYPE_INT32, kCount);
  int32_t* xd = loom_tensor_data(x);
  int32_t* yd = loom_tensor_data(y);
  for (int i = 0; i < kCount; ++i) {
    xd[i] = i;
    yd[i] = i == kCount - 7 ? 0 : 3;
  }
  loom_tensor_t* z = NULL;
  LOOM_ASSERT_STATUS(run("FloorMod", x, y, &z), LOOM_STATUS_INVALID_ARGUMENT,
                     "Integer division by zero");
  assert_null(z);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(streaming_loops_match_plain_loops_at_every_level),
      cmocka_unit_test(integer_division_matches_the_reference_at_every_level),
      cmocka_unit_test(add_writes_over_an_input_nobody_else_holds),
      cmocka_unit_test(a_big_fresh_output_is_complete),
      cmocka_unit_test(integer_division_by_zero_fails_the_op),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
