// The basic kernels of the tfrt dialect: chains, scalar constants,
// arithmetic and printing (TFRT's basic_kernels).

#include <inttypes.h>
#include <string.h>

#include "function/program_executor.h"

static void set_or_fail(loom_program_frame_t* frame, loom_status_t status) {
  if (status) loom_program_frame_fail(frame, status);
}

//===----------------------------------------------------------------------===//
// Chains
//===----------------------------------------------------------------------===//

// tfrt.new.chain, tfrt.merge.chains: a chain once the arguments are set
// (the executor runs a kernel only then).
static void chain_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

static void constant_kernel(loom_program_frame_t* frame, void* user_data) {
  loom_program_value_kind_t kind =
      (loom_program_value_kind_t)(intptr_t)user_data;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s' needs a scalar 'value' attribute",
                                loom_program_frame_op_name(frame)));
    return;
  }
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = kind;
  bool ok = true;
  switch (kind) {
    case LOOM_PROGRAM_VALUE_BOOL:
      ok = value.kind == LOOM_ATTR_KIND_BOOL;
      payload.u.b = value.u.b;
      break;
    case LOOM_PROGRAM_VALUE_I32:
      ok = value.kind == LOOM_ATTR_KIND_I32;
      payload.u.i32 = value.u.i32;
      break;
    case LOOM_PROGRAM_VALUE_I64:
      ok = value.kind == LOOM_ATTR_KIND_I64;
      payload.u.i64 = value.u.i64;
      break;
    case LOOM_PROGRAM_VALUE_F32:
      ok = value.kind == LOOM_ATTR_KIND_F32;
      payload.u.f32 = value.u.f32;
      break;
    case LOOM_PROGRAM_VALUE_F64:
      ok = value.kind == LOOM_ATTR_KIND_F64 || value.kind == LOOM_ATTR_KIND_F32;
      payload.u.f64 =
          value.kind == LOOM_ATTR_KIND_F64 ? value.u.f64 : (double)value.u.f32;
      break;
    default:
      ok = false;
      break;
  }
  if (!ok) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "'%s': the 'value' attribute is a %s",
                                loom_program_frame_op_name(frame),
                                loom_attr_kind_name(value.kind)));
    return;
  }
  set_or_fail(frame, loom_program_value_set(loom_program_frame_result(frame, 0),
                                            &payload));
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

typedef enum arith_t { ARITH_ADD, ARITH_EQUAL, ARITH_DIV } arith_t;

typedef struct arith_kernel_t {
  arith_t op;
  loom_program_value_kind_t kind;
} arith_kernel_t;

static void arith_kernel(loom_program_frame_t* frame, void* user_data) {
  const arith_kernel_t* def = user_data;
  for (int32_t i = 0; i < 2; ++i) {
    loom_status_t status = loom_program_frame_check_kind(frame, i, def->kind);
    if (status) {
      loom_program_frame_fail(frame, status);
      return;
    }
  }
  const loom_program_value_t* a = loom_program_frame_value(frame, 0);
  const loom_program_value_t* b = loom_program_frame_value(frame, 1);
  loom_async_value_t* r0 = loom_program_frame_result(frame, 0);
  loom_program_value_t out;
  memset(&out, 0, sizeof(out));
  out.kind = def->kind;
  switch (def->op) {
    case ARITH_ADD:
      // Integers wrap around, as in TFRT (computed unsigned: no UB).
      switch (def->kind) {
        case LOOM_PROGRAM_VALUE_I32:
          out.u.i32 = (int32_t)((uint32_t)a->u.i32 + (uint32_t)b->u.i32);
          break;
        case LOOM_PROGRAM_VALUE_I64:
          out.u.i64 = (int64_t)((uint64_t)a->u.i64 + (uint64_t)b->u.i64);
          break;
        case LOOM_PROGRAM_VALUE_F32:
          out.u.f32 = a->u.f32 + b->u.f32;
          break;
        default:
          out.u.f64 = a->u.f64 + b->u.f64;
          break;
      }
      set_or_fail(frame, loom_program_value_set(r0, &out));
      return;
    case ARITH_EQUAL: {
      bool equal = def->kind == LOOM_PROGRAM_VALUE_I32 ? a->u.i32 == b->u.i32
                                                       : a->u.i64 == b->u.i64;
      set_or_fail(frame, loom_program_value_set_bool(r0, equal));
      return;
    }
    case ARITH_DIV: {
      int64_t x = def->kind == LOOM_PROGRAM_VALUE_I32 ? a->u.i32 : a->u.i64;
      int64_t y = def->kind == LOOM_PROGRAM_VALUE_I32 ? b->u.i32 : b->u.i64;
      if (y == 0) {
        loom_program_frame_fail(
            frame,
            loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "Divide by zero"));
        return;
      }
      int64_t q = 0;
      int64_t m = 0;
      if (y == -1) {  // INT_MIN / -1 overflows: wrap around
        q = (int64_t)(0 - (uint64_t)x);
      } else {
        q = x / y;
        m = x % y;
      }
      loom_program_value_t rem = out;
      if (def->kind == LOOM_PROGRAM_VALUE_I32) {
        out.u.i32 = (int32_t)q;
        rem.u.i32 = (int32_t)m;
      } else {
        out.u.i64 = q;
        rem.u.i64 = m;
      }
      set_or_fail(frame, loom_program_value_set(r0, &out));
      set_or_fail(frame, loom_program_value_set(
                             loom_program_frame_result(frame, 1), &rem));
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static void print_kernel(loom_program_frame_t* frame, void* user_data) {
  loom_program_value_kind_t kind =
      (loom_program_value_kind_t)(intptr_t)user_data;
  loom_status_t status = loom_program_frame_check_kind(frame, 0, kind);
  if (!status) {
    status = loom_program_frame_check_kind(frame, 1, LOOM_PROGRAM_VALUE_CHAIN);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  const loom_program_value_t* value = loom_program_frame_value(frame, 0);
  FILE* out = loom_program_frame_output(frame);
  switch (kind) {
    case LOOM_PROGRAM_VALUE_BOOL:
      fprintf(out, "int1 = %d\n", value->u.b ? 1 : 0);
      break;
    case LOOM_PROGRAM_VALUE_I32:
      fprintf(out, "int32 = %" PRId32 "\n", value->u.i32);
      break;
    case LOOM_PROGRAM_VALUE_I64:
      fprintf(out, "int64 = %" PRId64 "\n", value->u.i64);
      break;
    case LOOM_PROGRAM_VALUE_F32:
      fprintf(out, "f32 = %f\n", (double)value->u.f32);
      break;
    default:
      fprintf(out, "f64 = %f\n", value->u.f64);
      break;
  }
  fflush(out);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

static loom_status_t add(loom_program_executor_t* executor, const char* name,
                         loom_program_kernel_fn_t fn, void* user_data,
                         int32_t num_arguments, int32_t num_results) {
  loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                   .name = name,
                                   .fn = fn,
                                   .user_data = user_data,
                                   .num_arguments = num_arguments,
                                   .num_results = num_results};
  return loom_program_executor_add_kernel(executor, &def);
}

// tfrt.constant.<T> and tfrt.print.<T>, T the kind's name.
static const loom_program_value_kind_t kScalars[] = {
    LOOM_PROGRAM_VALUE_BOOL, LOOM_PROGRAM_VALUE_I32, LOOM_PROGRAM_VALUE_I64,
    LOOM_PROGRAM_VALUE_F32,  LOOM_PROGRAM_VALUE_F64,
};

static const arith_kernel_t kArith[] = {
    {ARITH_ADD, LOOM_PROGRAM_VALUE_I32},
    {ARITH_ADD, LOOM_PROGRAM_VALUE_I64},
    {ARITH_ADD, LOOM_PROGRAM_VALUE_F32},
    {ARITH_ADD, LOOM_PROGRAM_VALUE_F64},
    {ARITH_EQUAL, LOOM_PROGRAM_VALUE_I32},
    {ARITH_EQUAL, LOOM_PROGRAM_VALUE_I64},
    {ARITH_DIV, LOOM_PROGRAM_VALUE_I32},
    {ARITH_DIV, LOOM_PROGRAM_VALUE_I64},
};

loom_status_t loom__program_register_tfrt_kernels(
    loom_program_executor_t* executor) {
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt.new.chain", chain_kernel, NULL, 0, 1));
  LOOM_RETURN_IF_ERROR(
      add(executor, "tfrt.merge.chains", chain_kernel, NULL, -1, 1));
  char name[64];
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    void* kind = (void*)(intptr_t)kScalars[i];
    const char* suffix = loom_program_value_kind_name(kScalars[i]);
    snprintf(name, sizeof(name), "tfrt.constant.%s", suffix);
    LOOM_RETURN_IF_ERROR(add(executor, name, constant_kernel, kind, 0, 1));
    snprintf(name, sizeof(name), "tfrt.print.%s", suffix);
    LOOM_RETURN_IF_ERROR(add(executor, name, print_kernel, kind, 2, 1));
  }
  for (size_t i = 0; i < sizeof(kArith) / sizeof(kArith[0]); ++i) {
    const arith_kernel_t* def = &kArith[i];
    snprintf(name, sizeof(name), "tfrt.%s.%s",
             def->op == ARITH_ADD     ? "add"
             : def->op == ARITH_EQUAL ? "equal"
                                      : "div",
             loom_program_value_kind_name(def->kind));
    LOOM_RETURN_IF_ERROR(add(executor, name, arith_kernel, (void*)def, 2,
                             def->op == ARITH_DIV ? 2 : 1));
  }
  return loom_ok_status();
}
