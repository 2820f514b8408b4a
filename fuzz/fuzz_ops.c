// libFuzzer target for every registered op: builds random invocations from
// each op's definition and runs them through TensorFlow's eager C API
// (TFE_Execute in a synchronous context), so that argument checks, shape
// functions and kernels all see hostile inputs.
//
// One input is a short sequence of ops (their outputs feed the later ones,
// so VarHandleOp's resource reaches ReadVariableOp, ...). For each op, the
// bytes choose:
//   - the op, by index into the registry's sorted names;
//   - a value for every type, length and type-list attr (mostly from the
//     allowed types), which decide the inputs;
//   - for every attr: unset (default or inferred), set consistently, set to
//     an extreme of its kind (INT64_MAX, INT64_MIN, -1, 0, NaN, huge lists,
//     empty and long strings, every dtype, unknown and over-long shapes) or
//     set with a setter of another kind;
//   - for every input: how many tensors (sometimes one more or one fewer),
//     their dtypes (sometimes any other), ranks 0 to 9, dimensions (huge
//     ones only next to a 0, so data stays small), contents (small
//     integers, raw bytes, the dtype's extremes, iota, one extreme value),
//     and whether a tensor is a handle used before (the same handle twice,
//     an earlier op's output) and whether the fuzzer drops its own
//     reference before the op runs (so kernels may forward the buffer).
// The op must succeed or fail with a status: never crash, trip a sanitizer
// or leak. Everything is freed at the end of each input, the context too.
//
// Ops that cannot run safely in-process by design are skipped: see
// kSkippedOps. For a run that should leave out more (an op family whose
// known crashes drown everything else), set LOOM_FUZZ_OPS_SKIP to a comma
// list of op names, a trailing '*' matching a prefix ("Sparse*,Conv2D");
// LOOM_FUZZ_OPS_ONLY (same form) fuzzes only the ops it names.
// LOOM_FUZZ_OPS_LIST=1 prints the ops and the skipped ones at start-up;
// LOOM_FUZZ_OPS_SEEDS=<dir> writes a seed input per op into <dir> and exits.
// A reproducer replays the same ops only under the same switches (and op
// list). LOOM_FUZZ_OPS_HUGE_DIMS=0 keeps input dimensions small even beside a 0
// (for a run that must not stop at a known overflow on such shapes).
// LOOM_FUZZ_OPS_TRACE=1 prints what each input runs (ops, attrs, input
// dtypes and shapes, results): run it on a reproducer to see what crashed.
//
// Huge allocations that kernels request from shape-like inputs (Fill with
// dims [1e9, 1e9]) must fail cleanly: __asan_default_options below makes
// ASan return NULL for any single allocation above 64 MiB, which Loom has
// to report as RESOURCE_EXHAUSTED. (At 256 MiB, RandomUniform filling 100
// million elements took over 25 s under ASan: timeouts that said nothing.)

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loom/builtin_ops.h"
#include "loom/op_def.h"
#include "tensorflow/c/eager/c_api.h"
#include "tensorflow/c/tf_tensor.h"
#include "tensorflow/c/tf_tstring.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv);
const char* __asan_default_options(void);

const char* __asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=64";
}

//===----------------------------------------------------------------------===//
// Ops that are not run, and why
//===----------------------------------------------------------------------===//

typedef struct skipped_op_t {
  const char* name;  // an op name, or a prefix ending in '*'
  const char* reason;
} skipped_op_t;

// Ops that sleep, block on a queue or on other participants, read or write
// files or end the process go here with their reason (a NULL name ends the
// table).
static const skipped_op_t kSkippedOps[] = {
    {"Collective*",
     "waits for the other participants of its group (for ever with "
     "timeout_seconds 0)"},
    {NULL, NULL},
};

//===----------------------------------------------------------------------===//
// Reading the input
//===----------------------------------------------------------------------===//

typedef struct reader_t {
  const uint8_t* data;
  size_t size;
} reader_t;

// Past the end every read is 0: the most ordinary choice everywhere.
static uint8_t read_u8(reader_t* r) {
  if (!r->size) return 0;
  --r->size;
  return *r->data++;
}

static uint16_t read_u16(reader_t* r) {
  uint16_t lo = read_u8(r);
  return (uint16_t)(lo | (uint16_t)read_u8(r) << 8);
}

static uint64_t read_u64(reader_t* r) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= (uint64_t)read_u8(r) << (8 * i);
  return value;
}

//===----------------------------------------------------------------------===//
// The registry's ops
//===----------------------------------------------------------------------===//

static bool g_trace;
static bool g_huge_dims = true;

static void trace(const char* format, ...)
    __attribute__((format(printf, 1, 2)));
static void trace(const char* format, ...) {
  if (!g_trace) return;
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
}

// Up to 8 values of a list, for the trace.
static void trace_ints(const int64_t* values, int count) {
  trace("[");
  for (int i = 0; i < count && i < 8; ++i) {
    trace("%s%lld", i ? ", " : "", (long long)values[i]);
  }
  trace("%s] (%d)", count > 8 ? ", ..." : "", count);
}

static const char** g_names;
static size_t g_num_names;
static bool* g_skipped;
static const char* g_seed_dir;

static bool matches(const char* pattern, size_t length, const char* name) {
  if (length && pattern[length - 1] == '*') {
    return strncmp(pattern, name, length - 1) == 0;
  }
  return strlen(name) == length && strncmp(pattern, name, length) == 0;
}

// Whether `name` is in the comma list `list`.
static bool in_list(const char* list, const char* name) {
  while (list && *list) {
    const char* end = strchr(list, ',');
    size_t length = end ? (size_t)(end - list) : strlen(list);
    if (length && matches(list, length, name)) return true;
    list = end ? end + 1 : NULL;
  }
  return false;
}

static const char* skip_reason(const char* name) {
  for (size_t i = 0; kSkippedOps[i].name; ++i) {
    if (matches(kSkippedOps[i].name, strlen(kSkippedOps[i].name), name)) {
      return kSkippedOps[i].reason;
    }
  }
  const char* only = getenv("LOOM_FUZZ_OPS_ONLY");
  if (only && *only && !in_list(only, name)) return "not in LOOM_FUZZ_OPS_ONLY";
  if (in_list(getenv("LOOM_FUZZ_OPS_SKIP"), name)) {
    return "in LOOM_FUZZ_OPS_SKIP";
  }
  return NULL;
}

static void write_seeds(const char* dir);

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  loom_status_t status = loom_builtin_ops_register();
  if (status) {
    fprintf(stderr, "fuzz_ops: %s\n", loom_status_message(status));
    abort();
  }
  loom_op_registry_t* registry = loom_op_registry_global();
  g_num_names = loom_op_registry_list(registry, NULL, 0);
  g_names = calloc(g_num_names ? g_num_names : 1, sizeof(*g_names));
  g_skipped = calloc(g_num_names ? g_num_names : 1, sizeof(*g_skipped));
  if (!g_names || !g_skipped) abort();
  g_num_names = loom_op_registry_list(registry, g_names, g_num_names);
  bool list = getenv("LOOM_FUZZ_OPS_LIST") != NULL;
  g_trace = getenv("LOOM_FUZZ_OPS_TRACE") != NULL;
  const char* huge = getenv("LOOM_FUZZ_OPS_HUGE_DIMS");
  g_huge_dims = !huge || strcmp(huge, "0") != 0;
  size_t skipped = 0;
  for (size_t i = 0; i < g_num_names; ++i) {
    const char* reason = skip_reason(g_names[i]);
    g_skipped[i] = reason != NULL;
    skipped += reason != NULL;
    if (list) {
      printf("%s%s%s\n", g_names[i], reason ? "  skipped: " : "",
             reason ? reason : "");
    }
  }
  fprintf(stderr, "fuzz_ops: %zu ops, %zu skipped\n", g_num_names, skipped);
  g_seed_dir = getenv("LOOM_FUZZ_OPS_SEEDS");
  if (g_seed_dir && *g_seed_dir) {
    write_seeds(g_seed_dir);
    exit(0);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

static const TF_DataType kAnyDtypes[] = {
    TF_FLOAT,         TF_INT32,        TF_INT64,         TF_DOUBLE,
    TF_BOOL,          TF_STRING,       TF_UINT8,         TF_INT8,
    TF_INT16,         TF_UINT16,       TF_UINT32,        TF_UINT64,
    TF_HALF,          TF_BFLOAT16,     TF_COMPLEX64,     TF_COMPLEX128,
    TF_QINT8,         TF_QUINT8,       TF_QINT16,        TF_QUINT16,
    TF_QINT32,        TF_RESOURCE,     TF_VARIANT,       TF_FLOAT8_E5M2,
    TF_FLOAT8_E4M3FN, TF_INT4,         TF_UINT4,         (TF_DataType)0,
    (TF_DataType)33,  (TF_DataType)-1, (TF_DataType)120,
};
#define NUM_ANY_DTYPES (sizeof(kAnyDtypes) / sizeof(kAnyDtypes[0]))

static TF_DataType pick_any_dtype(reader_t* r) {
  return kAnyDtypes[read_u8(r) % NUM_ANY_DTYPES];
}

// Mostly one of the attr's allowed types.
static TF_DataType pick_dtype(reader_t* r, const loom_attr_def_t* attr) {
  uint8_t how = read_u8(r);
  if (attr && attr->num_allowed_types && how < 224) {
    return (TF_DataType)
        attr->allowed_types[read_u8(r) % attr->num_allowed_types];
  }
  return pick_any_dtype(r);
}

static int64_t pick_int(reader_t* r, const loom_attr_def_t* attr) {
  int64_t minimum =
      attr && attr->has_minimum && !attr->is_list ? attr->minimum : 0;
  switch (read_u8(r) % 16) {
    case 0:
      return minimum > 1 ? minimum : 1;
    case 1:
      return 2;
    case 2:
      return 0;
    case 3:
      return -1;
    case 4:
      return INT64_MAX;
    case 5:
      return INT64_MIN;
    case 6:
      return INT32_MAX;
    case 7:
      return INT32_MIN;
    case 8:
      return minimum;
    case 9:
      return minimum - 1;
    case 10:
      return (int8_t)read_u8(r);
    case 11:
      return read_u16(r);
    case 12:
      return (int64_t)read_u64(r);
    case 13:
      return (int64_t)1 << 40;
    default:
      return read_u8(r) % 8;
  }
}

static float pick_float(reader_t* r) {
  switch (read_u8(r) % 16) {
    case 0:
      return 0.5f;
    case 1:
      return 0.0f;
    case 2:
      return -0.0f;
    case 3:
      return 1.0f;
    case 4:
      return -1.0f;
    case 5:
      return NAN;
    case 6:
      return INFINITY;
    case 7:
      return -INFINITY;
    case 8:
      return FLT_MAX;
    case 9:
      return -FLT_MAX;
    case 10:
      return FLT_MIN;
    case 11:
      return 1e-45f;  // the smallest denormal
    case 12:
      return 1e-7f;
    case 13: {
      uint32_t bits = (uint32_t)read_u64(r);
      float value;
      memcpy(&value, &bits, sizeof(value));
      return value;
    }
    default:
      return (float)(int8_t)read_u8(r);
  }
}

// A list length: mostly short, sometimes empty or huge.
static int pick_list_length(reader_t* r) {
  uint8_t how = read_u8(r);
  if (how < 200) return 1 + how % 4;
  if (how < 230) return 0;
  if (how < 250) return 100;
  return 5000;
}

static const int64_t kHuge[] = {INT64_MAX, (int64_t)1 << 62, (int64_t)1 << 40,
                                INT32_MAX, (int64_t)INT32_MAX + 1};

// Dimensions for a shape attr: anything, including unknown (-1), negative
// and huge ones. Returns the rank (-1: unknown; may exceed LOOM_MAX_RANK).
static int pick_shape_attr(reader_t* r, int64_t dims[16]) {
  static const int kRanks[] = {1, 2, 0, -1, 3, 4, 1, 2, 8, 9, 16, 5};
  int rank = kRanks[read_u8(r) % (sizeof(kRanks) / sizeof(kRanks[0]))];
  for (int i = 0; i < rank; ++i) {
    static const int64_t kDims[] = {2, 1, 0, -1, 3, 4, 7, -2};
    uint8_t how = read_u8(r);
    dims[i] = how < 240 ? kDims[how % 8] : kHuge[how % 5];
  }
  return rank;
}

// Bytes for a string: empty, short, from the input, long.
static size_t pick_string(reader_t* r, char* buffer, size_t capacity) {
  uint8_t how = read_u8(r);
  size_t length;
  if (how < 40) return 0;
  if (how < 200) {
    length = 1 + how % 12;
    for (size_t i = 0; i < length; ++i) buffer[i] = (char)read_u8(r);
    return length;
  }
  length = how < 250 ? 40 : capacity;
  if (length > capacity) length = capacity;
  memset(buffer, 'a' + how % 26, length);
  return length;
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

#define MAX_ELEMENTS 4096
#define MAX_STRING 1000

static uint16_t float_to_half(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exponent = (int32_t)((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff) {
    return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  }
  if (exponent >= 31) return (uint16_t)(sign | 0x7c00u);
  if (exponent <= 0) return (uint16_t)sign;
  return (uint16_t)(sign | (uint32_t)exponent << 10 | mantissa >> 13);
}

// Writes `value` (an integer or a floating value) as element `index`.
static void set_element(TF_DataType dtype, void* data, int64_t index,
                        int64_t int_value, double float_value, bool is_float) {
  double f = is_float ? float_value : (double)int_value;
  int64_t i = is_float ? (isfinite(float_value) && fabs(float_value) < 9e18
                              ? (int64_t)float_value
                              : (signbit(float_value) ? INT64_MIN : INT64_MAX))
                       : int_value;
  switch (dtype) {
    case TF_FLOAT:
      ((float*)data)[index] = (float)f;
      break;
    case TF_DOUBLE:
      ((double*)data)[index] = f;
      break;
    case TF_HALF:
      ((uint16_t*)data)[index] = float_to_half((float)f);
      break;
    case TF_BFLOAT16: {
      float narrow = (float)f;
      uint32_t bits;
      memcpy(&bits, &narrow, sizeof(bits));
      ((uint16_t*)data)[index] = (uint16_t)(bits >> 16);
      break;
    }
    case TF_COMPLEX64:
      ((float*)data)[2 * index] = (float)f;
      ((float*)data)[2 * index + 1] = 0.0f;
      break;
    case TF_COMPLEX128:
      ((double*)data)[2 * index] = f;
      ((double*)data)[2 * index + 1] = 0.0;
      break;
    case TF_BOOL:
      ((uint8_t*)data)[index] = i != 0;
      break;
    case TF_INT64:
    case TF_UINT64:
      ((int64_t*)data)[index] = i;
      break;
    case TF_INT32:
    case TF_UINT32:
    case TF_QINT32:
      ((int32_t*)data)[index] = (int32_t)i;
      break;
    case TF_INT16:
    case TF_UINT16:
    case TF_QINT16:
    case TF_QUINT16:
      ((int16_t*)data)[index] = (int16_t)i;
      break;
    default: {
      size_t size = TF_DataTypeSize(dtype);
      if (size == 1) ((uint8_t*)data)[index] = (uint8_t)i;
      break;
    }
  }
}

// The extremes of a dtype's values, picked by `which`.
static void set_extreme(TF_DataType dtype, void* data, int64_t index,
                        uint8_t which) {
  bool floating = dtype == TF_FLOAT || dtype == TF_DOUBLE || dtype == TF_HALF ||
                  dtype == TF_BFLOAT16 || dtype == TF_COMPLEX64 ||
                  dtype == TF_COMPLEX128;
  if (floating) {
    static const double kValues[] = {NAN,      INFINITY, -INFINITY, DBL_MAX,
                                     -DBL_MAX, 0.0,      -0.0,      1e-310,
                                     FLT_MAX,  1.0,      -1.0,      65504.0};
    set_element(dtype, data, index, 0,
                kValues[which % (sizeof(kValues) / sizeof(kValues[0]))], true);
    return;
  }
  static const int64_t kValues[] = {INT64_MAX, INT64_MIN, 0,         -1,
                                    1,         INT32_MAX, INT32_MIN, 255,
                                    -128,      127,       65535,     -32768};
  set_element(dtype, data, index,
              kValues[which % (sizeof(kValues) / sizeof(kValues[0]))], 0.0,
              false);
}

// A tensor of `dtype` with a random shape and contents; NULL when
// TF_AllocateTensor rejects what was picked (a negative dimension, a rank
// over the maximum, an invalid dtype), which is one of the things tried.
static TF_Tensor* make_tensor(reader_t* r, TF_DataType dtype) {
  static const int kRanks[] = {1, 2, 0, 1, 2, 3, 4, 1, 2, 0, 5, 6, 3, 8, 9, 1};
  int rank = kRanks[read_u8(r) % 16];
  int64_t dims[16];
  bool has_zero = false;
  for (int i = 0; i < rank; ++i) {
    static const int64_t kDims[] = {2, 1,  3, 0, 4, 1,  2, 5,
                                    8, 16, 1, 2, 3, 64, 1, 2};
    uint8_t how = read_u8(r);
    if (how >= 248 && (g_huge_dims || how == 255)) {
      dims[i] = how == 255 ? -1 : kHuge[how % 5];
    } else {
      dims[i] = kDims[how % 16];
    }
    has_zero |= dims[i] == 0;
  }
  // Huge dimensions only beside a 0; at most MAX_ELEMENTS elements.
  int64_t elements = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] > 64 && !has_zero) dims[i] = 1;
    if (dims[i] > 0 && dims[i] <= 64) {
      if (elements * dims[i] > MAX_ELEMENTS) dims[i] = 1;
      elements *= dims[i];
    }
  }
  if (has_zero) elements = 0;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) elements = 0;
  }

  trace("%s (%d), shape ", loom_dtype_name((loom_dtype_t)dtype), (int)dtype);
  trace_ints(dims, rank);
  size_t element_size = TF_DataTypeSize(dtype);
  size_t length = (size_t)elements * element_size;
  if (dtype == TF_STRING) length = (size_t)elements * sizeof(TF_TString);
  if (dtype == TF_RESOURCE || dtype == TF_VARIANT) {
    length = (size_t)elements * (read_u8(r) % 3) * 8;
  }
  TF_Tensor* tensor = TF_AllocateTensor(dtype, dims, rank, length);
  if (!tensor || !elements) return tensor;
  void* data = TF_TensorData(tensor);
  if (!data) return tensor;
  if (dtype == TF_STRING) {
    TF_TString* strings = data;
    char buffer[MAX_STRING];
    for (int64_t i = 0; i < elements; ++i) {
      size_t size = pick_string(r, buffer, sizeof(buffer));
      TF_TString_Copy(&strings[i], buffer, size);
    }
    return tensor;
  }
  if (dtype == TF_RESOURCE || dtype == TF_VARIANT) {
    for (size_t i = 0; i < length; ++i) ((uint8_t*)data)[i] = read_u8(r);
    return tensor;
  }
  uint8_t pattern = read_u8(r) % 8;
  int64_t constant = pick_int(r, NULL);
  static const char* const kPatterns[] = {"small", "raw",  "extremes",
                                          "zeros", "iota", "constant",
                                          "small", "small"};
  trace(" %s", kPatterns[pattern]);
  if (pattern == 5) trace(" %lld", (long long)constant);
  for (int64_t i = 0; i < elements; ++i) {
    switch (pattern) {
      case 1:
        for (size_t b = 0; b < element_size; ++b) {
          ((uint8_t*)data)[(size_t)i * element_size + b] = read_u8(r);
        }
        if (dtype == TF_BOOL) ((uint8_t*)data)[i] &= 1;
        break;
      case 2:
        set_extreme(dtype, data, i, read_u8(r));
        break;
      case 3:
        set_element(dtype, data, i, 0, 0.0, false);
        break;
      case 4:
        set_element(dtype, data, i, i, 0.0, false);
        break;
      case 5:
        set_element(dtype, data, i, constant, 0.0, false);
        break;
      default: {
        static const int64_t kSmall[] = {1, 2, 0,  3,  -1,  4,    1,   2,
                                         7, 8, 16, -2, 100, -100, 255, 1000};
        set_element(dtype, data, i, kSmall[read_u8(r) % 16], 0.0, false);
        break;
      }
    }
  }
  return tensor;
}

//===----------------------------------------------------------------------===//
// One op
//===----------------------------------------------------------------------===//

#define MAX_POOL 48
#define MAX_ARG_TENSORS 12
#define MAX_RETVALS 64

typedef struct run_t {
  TFE_Context* context;
  TF_Status* status;
  TFE_TensorHandle* pool[MAX_POOL];  // the fuzzer's references
  int pool_size;
} run_t;

static void pool_add(run_t* run, TFE_TensorHandle* handle) {
  if (run->pool_size < MAX_POOL) {
    run->pool[run->pool_size++] = handle;
  } else {
    TFE_DeleteTensorHandle(handle);
  }
}

// What one attr's "consistent" value is: the type, length and type-list
// attrs decide the inputs.
typedef struct attr_choice_t {
  TF_DataType dtype;
  int64_t count;
  TF_DataType types[MAX_ARG_TENSORS];
  int num_types;
} attr_choice_t;

static void set_attr_value(run_t* run, reader_t* r, TFE_Op* op,
                           const loom_attr_def_t* attr, loom_attr_kind_t kind,
                           bool is_list) {
  const char* name = attr->name;
  int length = is_list ? pick_list_length(r) : 1;
  trace("  attr %s (%s%s as %s%s) = ", name, attr->is_list ? "list " : "",
        loom_attr_kind_name(attr->kind), is_list ? "list " : "",
        loom_attr_kind_name(kind));
  switch (kind) {
    case LOOM_ATTR_KIND_BOOL: {
      if (!is_list) {
        bool value = read_u8(r) & 1;
        trace("%d\n", value);
        TFE_OpSetAttrBool(op, name, value);
        break;
      }
      unsigned char* values = calloc((size_t)length + 1, 1);
      if (!values) abort();
      for (int i = 0; i < length; ++i) values[i] = read_u8(r) & 1;
      trace("bools (%d)\n", length);
      TFE_OpSetAttrBoolList(op, name, values, length);
      free(values);
      break;
    }
    case LOOM_ATTR_KIND_I32:
    case LOOM_ATTR_KIND_I64: {
      if (!is_list) {
        int64_t value = pick_int(r, attr);
        trace("%lld\n", (long long)value);
        TFE_OpSetAttrInt(op, name, value);
        break;
      }
      int64_t* values = calloc((size_t)length + 1, sizeof(*values));
      if (!values) abort();
      for (int i = 0; i < length; ++i) {
        values[i] = i < 16 ? pick_int(r, attr) : (i % 3) - 1;
      }
      trace_ints(values, length);
      trace("\n");
      TFE_OpSetAttrIntList(op, name, values, length);
      free(values);
      break;
    }
    case LOOM_ATTR_KIND_F32:
    case LOOM_ATTR_KIND_F64: {
      if (!is_list) {
        float value = pick_float(r);
        trace("%g\n", value);
        TFE_OpSetAttrFloat(op, name, value);
        break;
      }
      float* values = calloc((size_t)length + 1, sizeof(*values));
      if (!values) abort();
      for (int i = 0; i < length; ++i) values[i] = i < 16 ? pick_float(r) : 1;
      trace("floats [%g, ...] (%d)\n", values[0], length);
      TFE_OpSetAttrFloatList(op, name, values, length);
      free(values);
      break;
    }
    case LOOM_ATTR_KIND_DTYPE: {
      if (!is_list) {
        TF_DataType value = pick_dtype(r, attr);
        trace("%s (%d)\n", loom_dtype_name((loom_dtype_t)value), (int)value);
        TFE_OpSetAttrType(op, name, value);
        break;
      }
      TF_DataType* values = calloc((size_t)length + 1, sizeof(*values));
      if (!values) abort();
      for (int i = 0; i < length; ++i) {
        values[i] = i < 16 ? pick_dtype(r, attr) : TF_FLOAT;
      }
      trace("types [%s, ...] (%d)\n", loom_dtype_name((loom_dtype_t)values[0]),
            length);
      TFE_OpSetAttrTypeList(op, name, values, length);
      free(values);
      break;
    }
    case LOOM_ATTR_KIND_SHAPE: {
      if (!is_list) {
        int64_t dims[16];
        int rank = pick_shape_attr(r, dims);
        trace("shape ");
        trace_ints(dims, rank);
        trace("\n");
        TFE_OpSetAttrShape(op, name, dims, rank, run->status);
        break;
      }
      if (length > 64) length = 64;
      int64_t(*dims)[16] = calloc((size_t)length + 1, sizeof(*dims));
      const int64_t** lists = calloc((size_t)length + 1, sizeof(*lists));
      int* ranks = calloc((size_t)length + 1, sizeof(*ranks));
      if (!dims || !lists || !ranks) abort();
      for (int i = 0; i < length; ++i) {
        ranks[i] = pick_shape_attr(r, dims[i]);
        lists[i] = dims[i];
      }
      trace("shapes (%d)\n", length);
      TFE_OpSetAttrShapeList(op, name, lists, ranks, length, run->status);
      free(dims);
      free(lists);
      free(ranks);
      break;
    }
    case LOOM_ATTR_KIND_STRING: {
      char buffer[MAX_STRING];
      if (!is_list) {
        size_t size;
        if (attr->num_allowed_strings && read_u8(r) < 224) {
          loom_string_view_t allowed =
              attr->allowed_strings[read_u8(r) % attr->num_allowed_strings];
          size = allowed.size < sizeof(buffer) ? allowed.size : 0;
          memcpy(buffer, allowed.data, size);
        } else {
          size = pick_string(r, buffer, sizeof(buffer));
        }
        trace("\"%.*s\" (%zu bytes)\n", (int)(size < 40 ? size : 40), buffer,
              size);
        TFE_OpSetAttrString(op, name, buffer, size);
        break;
      }
      if (length > 100) length = 100;
      char* storage = calloc((size_t)length + 1, 48);
      const void** values = calloc((size_t)length + 1, sizeof(*values));
      size_t* lengths = calloc((size_t)length + 1, sizeof(*lengths));
      if (!storage || !values || !lengths) abort();
      for (int i = 0; i < length; ++i) {
        values[i] = storage + 48 * i;
        lengths[i] = pick_string(r, storage + 48 * i, 48);
      }
      trace("strings (%d)\n", length);
      TFE_OpSetAttrStringList(op, name, values, lengths, length);
      free(storage);
      free(values);
      free(lengths);
      break;
    }
    case LOOM_ATTR_KIND_TENSOR: {
      // TFE has no tensor-list setter: a list attr gets one tensor, which
      // it must reject.
      trace("tensor: ");
      TF_Tensor* tensor = make_tensor(r, pick_any_dtype(r));
      trace("\n");
      TFE_OpSetAttrTensor(op, name, tensor, run->status);
      if (tensor) TF_DeleteTensor(tensor);
      break;
    }
    case LOOM_ATTR_KIND_FUNC: {
      char buffer[64];
      const char* function = buffer;
      size_t size;
      if (read_u8(r) < 200 && g_num_names) {
        function = g_names[read_u16(r) % g_num_names];
        size = strlen(function);
      } else {
        size = pick_string(r, buffer, sizeof(buffer));
      }
      trace("function \"%.*s\"%s\n", (int)size, function,
            is_list ? " (list)" : "");
      if (!is_list) {
        TFE_OpSetAttrFunctionName(op, name, function, size);
        break;
      }
      if (length > 8) length = 8;
      const TFE_Op* functions[8];
      int count = 0;
      char copy[65];
      memcpy(copy, function, size < 64 ? size : 64);
      copy[size < 64 ? size : 64] = '\0';
      for (int i = 0; i < length; ++i) {
        TFE_Op* f = TFE_NewOp(run->context, copy, run->status);
        if (f) functions[count++] = f;
      }
      TFE_OpSetAttrFunctionList(op, name, functions, count);
      for (int i = 0; i < count; ++i) TFE_DeleteOp((TFE_Op*)functions[i]);
      break;
    }
    default:
      trace("(nothing)\n");
      break;
  }
}

// The input tensors of one argument.
static void add_inputs(run_t* run, reader_t* r, TFE_Op* op, int count,
                       const TF_DataType* dtypes, bool as_list) {
  TFE_TensorHandle* handles[MAX_ARG_TENSORS + 1];
  int num_handles = 0;
  for (int i = 0; i < count; ++i) {
    uint8_t source = read_u8(r);
    TFE_TensorHandle* handle = NULL;
    if (source >= 200 && run->pool_size) {
      // A handle used before: an earlier op's output, an earlier input, or
      // (most often) the one just made.
      int which =
          source >= 230 ? run->pool_size - 1 : read_u8(r) % run->pool_size;
      handle = run->pool[which];
      trace("    tensor %d: handle %d again\n", i, which);
    } else if (run->pool_size < MAX_POOL) {
      TF_DataType dtype = read_u8(r) >= 240 ? pick_any_dtype(r) : dtypes[i];
      trace("    tensor %d: handle %d: ", i, run->pool_size);
      TF_Tensor* tensor = make_tensor(r, dtype);
      trace("%s\n", tensor ? "" : " (TF_AllocateTensor refused)");
      if (!tensor) continue;  // an input fewer
      handle = TFE_NewTensorHandle(tensor, run->status);
      TF_DeleteTensor(tensor);
      if (!handle) continue;
      run->pool[run->pool_size++] = handle;
    } else {
      handle = run->pool[source % run->pool_size];
      trace("    tensor %d: handle %d again\n", i, source % run->pool_size);
    }
    handles[num_handles++] = handle;
  }
  trace("    %d tensors added as %s\n", num_handles,
        as_list ? "a list" : "single inputs");
  if (as_list) {
    TFE_OpAddInputList(op, handles, num_handles, run->status);
  } else {
    for (int i = 0; i < num_handles; ++i) {
      TFE_OpAddInput(op, handles[i], run->status);
    }
  }
  // Sometimes drop the fuzzer's reference to the newest handle: the op
  // holds the only one, and a kernel may forward its buffer.
  if (num_handles && read_u8(r) >= 224 && run->pool_size &&
      run->pool[run->pool_size - 1] == handles[num_handles - 1]) {
    TFE_DeleteTensorHandle(run->pool[--run->pool_size]);
    trace("    the fuzzer drops its reference to the last one\n");
  }
}

static int find_attr(const loom_op_def_t* def, const char* name) {
  for (int32_t i = 0; name && i < def->num_attrs; ++i) {
    if (strcmp(def->attrs[i].name, name) == 0) return i;
  }
  return -1;
}

static void run_op(run_t* run, reader_t* r, size_t index) {
  const char* name = g_names[index];
  if (g_skipped[index]) return;
  const loom_op_def_t* def =
      loom_op_registry_find(loom_op_registry_global(), name);
  if (!def) return;
  TFE_Op* op = TFE_NewOp(run->context, name, run->status);
  trace("op %s\n", name);
  if (!op) return;

  // The values of the type, length and type-list attrs.
  attr_choice_t choices[64];
  int32_t num_attrs = def->num_attrs < 64 ? def->num_attrs : 64;
  for (int32_t i = 0; i < num_attrs; ++i) {
    const loom_attr_def_t* attr = &def->attrs[i];
    attr_choice_t* choice = &choices[i];
    memset(choice, 0, sizeof(*choice));
    if (attr->kind == LOOM_ATTR_KIND_DTYPE && !attr->is_list) {
      choice->dtype = pick_dtype(r, attr);
    } else if (attr->kind == LOOM_ATTR_KIND_DTYPE) {
      uint8_t how = read_u8(r);
      choice->num_types = how < 200 ? 1 + how % 4 : how % 7;
      for (int j = 0; j < choice->num_types; ++j) {
        choice->types[j] = pick_dtype(r, attr);
      }
    } else if (attr->kind == LOOM_ATTR_KIND_I64 && !attr->is_list) {
      uint8_t how = read_u8(r);
      choice->count = how < 200 ? 1 + how % 3 : how % 13;
      if (attr->has_minimum && choice->count < attr->minimum &&
          attr->minimum <= MAX_ARG_TENSORS && how < 250) {
        choice->count = attr->minimum;
      }
    }
  }

  // The attrs: unset, consistent, extreme, or of another kind.
  for (int32_t i = 0; i < num_attrs; ++i) {
    const loom_attr_def_t* attr = &def->attrs[i];
    const attr_choice_t* choice = &choices[i];
    uint8_t mode = read_u8(r) % 16;
    if (mode < 4) {
      trace("  attr %s unset\n", attr->name);
      continue;
    }
    if (mode == 15) {
      loom_attr_kind_t other =
          (loom_attr_kind_t)(1 + (attr->kind + read_u8(r) % 9) % 10);
      set_attr_value(run, r, op, attr, other, read_u8(r) & 1);
      continue;
    }
    if (mode >= 12) {
      set_attr_value(run, r, op, attr, attr->kind, attr->is_list);
      continue;
    }
    if (attr->kind == LOOM_ATTR_KIND_DTYPE && !attr->is_list) {
      trace("  attr %s = %s\n", attr->name,
            loom_dtype_name((loom_dtype_t)choice->dtype));
      TFE_OpSetAttrType(op, attr->name, choice->dtype);
    } else if (attr->kind == LOOM_ATTR_KIND_DTYPE) {
      trace("  attr %s = %d types\n", attr->name, choice->num_types);
      TFE_OpSetAttrTypeList(op, attr->name, choice->types, choice->num_types);
    } else if (attr->kind == LOOM_ATTR_KIND_I64 && !attr->is_list && mode < 8) {
      trace("  attr %s = %lld\n", attr->name, (long long)choice->count);
      TFE_OpSetAttrInt(op, attr->name, choice->count);
    } else {
      set_attr_value(run, r, op, attr, attr->kind, attr->is_list);
    }
  }

  // The inputs.
  for (int32_t i = 0; i < def->num_inputs; ++i) {
    const loom_arg_def_t* arg = &def->inputs[i];
    TF_DataType dtypes[MAX_ARG_TENSORS];
    int count = 1;
    bool as_list = false;
    int type_attr = find_attr(def, arg->type_attr);
    TF_DataType dtype = arg->dtype != LOOM_DTYPE_INVALID
                            ? (TF_DataType)arg->dtype
                            : (type_attr >= 0 && type_attr < num_attrs
                                   ? choices[type_attr].dtype
                                   : TF_FLOAT);
    for (int j = 0; j < MAX_ARG_TENSORS; ++j) dtypes[j] = dtype;
    int number_attr = find_attr(def, arg->number_attr);
    int list_attr = find_attr(def, arg->type_list_attr);
    if (number_attr >= 0 && number_attr < num_attrs) {
      count = (int)choices[number_attr].count;
      as_list = true;
    } else if (list_attr >= 0 && list_attr < num_attrs) {
      count = choices[list_attr].num_types;
      memcpy(dtypes, choices[list_attr].types, sizeof(dtypes));
      as_list = true;
    }
    uint8_t how = read_u8(r);
    if (how >= 240) count += how & 1 ? 1 : -1;  // one more or one fewer
    if (how == 239) as_list = !as_list;
    if (count < 0) count = 0;
    if (count > MAX_ARG_TENSORS) count = MAX_ARG_TENSORS;
    trace("  input %s:\n", arg->name);
    add_inputs(run, r, op, count, dtypes, as_list);
  }
  if (def->num_inputs == 0 && read_u8(r) >= 250) {
    // An input the op does not take.
    TF_DataType dtype = TF_FLOAT;
    add_inputs(run, r, op, 1, &dtype, false);
  }

  // Argument lengths as known so far.
  if (def->num_outputs && read_u8(r) >= 200) {
    (void)TFE_OpGetOutputLength(
        op, def->outputs[read_u8(r) % def->num_outputs].name, run->status);
  }

  TFE_TensorHandle* retvals[MAX_RETVALS];
  int num_retvals = MAX_RETVALS;
  if (read_u8(r) >= 250) num_retvals = read_u8(r) % 3;
  trace("  execute\n");
  TFE_Execute(op, retvals, &num_retvals, run->status);
  trace("  -> %d: %s\n", (int)TF_GetCode(run->status),
        TF_GetCode(run->status) == TF_OK ? "ok" : TF_Message(run->status));
  if (TF_GetCode(run->status) != TF_OK) num_retvals = 0;
  for (int i = 0; i < num_retvals; ++i) {
    TF_Tensor* resolved = TFE_TensorHandleResolve(retvals[i], run->status);
    if (resolved) TF_DeleteTensor(resolved);
    trace("  output %d: handle %d, %lld elements\n", i, run->pool_size,
          (long long)TFE_TensorHandleNumElements(retvals[i], run->status));
    pool_add(run, retvals[i]);
  }
  TFE_DeleteOp(op);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!g_num_names) return 0;
  reader_t reader = {data, size};
  run_t run;
  memset(&run, 0, sizeof(run));
  run.status = TF_NewStatus();
  TFE_ContextOptions* options = TFE_NewContextOptions();
  TFE_ContextOptionsSetAsync(options, 0);
  run.context = TFE_NewContext(options, run.status);
  TFE_DeleteContextOptions(options);
  if (!run.context) {
    fprintf(stderr, "fuzz_ops: TFE_NewContext: %s\n", TF_Message(run.status));
    abort();
  }
  int num_ops = 1 + read_u8(&reader) % 4;
  for (int i = 0; i < num_ops; ++i) {
    size_t index = read_u16(&reader) % g_num_names;
    run_op(&run, &reader, index);
  }
  for (int i = 0; i < run.pool_size; ++i) {
    TFE_DeleteTensorHandle(run.pool[i]);
  }
  TFE_DeleteContext(run.context);
  TF_DeleteStatus(run.status);
  return 0;
}

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

// Three seeds per op that run it alone: all choices the first (attrs
// unset, float-like inputs of shape [2]), consistent attrs, and matrices.
static void write_seeds(const char* dir) {
  mkdir(dir, 0755);
  static const uint8_t kTails[3][8] = {
      {0, 0, 0, 0, 0, 0, 0, 0},
      {4, 4, 4, 4, 4, 4, 4, 4},
      {1, 0, 0, 1, 1, 1, 1, 0},
  };
  size_t written = 0;
  for (size_t i = 0; i < g_num_names; ++i) {
    if (g_skipped[i]) continue;
    for (int variant = 0; variant < 3; ++variant) {
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s.%d", dir, g_names[i], variant);
      FILE* file = fopen(path, "wb");
      if (!file) {
        perror(path);
        exit(1);
      }
      uint8_t bytes[3 + 96];
      bytes[0] = 0;  // one op
      bytes[1] = (uint8_t)(i & 0xff);
      bytes[2] = (uint8_t)(i >> 8);
      for (size_t b = 3; b < sizeof(bytes); ++b) {
        bytes[b] = kTails[variant][b % 8];
      }
      fwrite(bytes, 1, sizeof(bytes), file);
      fclose(file);
      ++written;
    }
  }
  fprintf(stderr, "fuzz_ops: wrote %zu seeds to %s\n", written, dir);
}
