// The kernels of TFRT's test dialect (tfrt_test.*) in the program plugin
// (tfrt_test_ops.c has its ops): cancelling, failing, attribute sets and
// their frozen copies, and strings.

#include <stdio.h>
#include <string.h>

#include "loom/program_kernel.h"
#include "tfrt_test_kernels.h"

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

static void set_or_fail(loom_program_frame_t* frame, loom_status_t status) {
  if (status) loom_program_frame_fail(frame, status);
}

// Cancels the host, as TFRT's test does from inside a program (a client
// would call loom_host_context_cancel itself).
static void cancel_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_host_context_cancel(loom_program_frame_host(frame), "Cancelled");
  set_or_fail(frame, loom_program_value_set_i32(
                         loom_program_frame_result(frame, 0), 0));
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 1)));
}

static void fail_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_program_frame_fail(
      frame, loom_make_status(LOOM_STATUS_INTERNAL, "something bad happened"));
}

static void partial_fail_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  set_or_fail(frame, loom_program_value_set_i32(
                         loom_program_frame_result(frame, 0), 1));
  loom_program_frame_fail(
      frame, loom_make_status(LOOM_STATUS_INTERNAL, "something bad happened"));
}

typedef struct async_error_t {
  loom_program_executor_t* executor;
  loom_location_t location;
  loom_async_value_t* result;
} async_error_t;

static void report_error_later(void* arg) {
  async_error_t* job = arg;
  loom_status_t error = loom_make_status(
      LOOM_STATUS_INTERNAL, "something bad happened asynchronously");
  loom_program_executor_report(job->executor, job->location, error);
  loom_status_ignore(loom_async_value_set_error(job->result, error));
  loom_async_value_release(job->result);
  loom_allocator_free(loom_allocator_default(), job);
}

static void report_error_async_kernel(loom_program_frame_t* frame,
                                      void* user_data) {
  (void)user_data;
  async_error_t* job = NULL;
  loom_status_t status = loom_allocator_malloc(loom_allocator_default(),
                                               sizeof(*job), (void**)&job);
  if (!status) {
    job->executor = loom_program_frame_executor(frame);
    job->location = loom_program_frame_location(frame);
    job->result = loom_program_frame_result(frame, 0);
    loom_async_value_retain(job->result);
    status = loom_host_context_enqueue(loom_program_frame_host(frame),
                                       report_error_later, job);
    if (status) {
      loom_async_value_release(job->result);
      loom_allocator_free(loom_allocator_default(), job);
    }
  }
  if (status) loom_program_frame_fail(frame, status);
}

static void op_attrs_print_kernel(loom_program_frame_t* frame,
                                  void* user_data) {
  (void)user_data;
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_OP_ATTRS);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_op_attrs_t* attrs =
      loom_program_op_attrs_get(loom_program_frame_value(frame, 0)->u.op_attrs);
  char text[4096];
  loom_op_attrs_print(attrs, text, sizeof(text));
  FILE* out = loom_program_frame_output(frame);
  size_t length = strlen(text);
  fprintf(out, "%s%s", text, length && text[length - 1] == '\n' ? "" : "\n");
  fflush(out);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

static void print_attrs(loom_program_frame_t* frame,
                        const loom_op_attrs_t* attrs) {
  char text[4096];
  loom_op_attrs_print(attrs, text, sizeof(text));
  FILE* out = loom_program_frame_output(frame);
  size_t length = strlen(text);
  fprintf(out, "%s%s", text, length && text[length - 1] == '\n' ? "" : "\n");
  fflush(out);
}

// (opattrs, chain) -> (opattrs_ref, chain): an immutable copy of the set as
// it is now; later changes to the set do not reach it.
static void op_attrs_freeze_kernel(loom_program_frame_t* frame,
                                   void* user_data) {
  (void)user_data;
  loom_status_t status =
      loom_program_frame_check_kind(frame, 0, LOOM_PROGRAM_VALUE_OP_ATTRS);
  const loom_op_attrs_t* frozen = NULL;
  if (!status) {
    status = loom_op_attrs_freeze(
        loom_program_op_attrs_get(
            loom_program_frame_value(frame, 0)->u.op_attrs),
        &frozen);
  }
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  loom_program_value_t payload;
  memset(&payload, 0, sizeof(payload));
  payload.kind = LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS;
  payload.u.frozen_op_attrs = frozen;
  // The setter takes its own reference.
  set_or_fail(frame, loom_program_value_set(loom_program_frame_result(frame, 0),
                                            &payload));
  loom_op_attrs_release(frozen);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 1)));
}

static void op_attrs_ref_print_kernel(loom_program_frame_t* frame,
                                      void* user_data) {
  (void)user_data;
  loom_status_t status = loom_program_frame_check_kind(
      frame, 0, LOOM_PROGRAM_VALUE_FROZEN_OP_ATTRS);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  print_attrs(frame, loom_program_frame_value(frame, 0)->u.frozen_op_attrs);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

//===----------------------------------------------------------------------===//
// Strings (!tfrt.string)
//===----------------------------------------------------------------------===//

static bool check_kinds(loom_program_frame_t* frame, int32_t count,
                        loom_program_value_kind_t kind) {
  for (int32_t i = 0; i < count; ++i) {
    loom_status_t status = loom_program_frame_check_kind(frame, i, kind);
    if (status) {
      loom_program_frame_fail(frame, status);
      return false;
    }
  }
  return true;
}

static const char* string_arg(loom_program_frame_t* frame, int32_t index,
                              size_t* size) {
  return loom_program_string_data(
      loom_program_frame_value(frame, index)->u.string, size);
}

// () -> string {value = "..."}
static void get_string_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  loom_attr_value_t value;
  if (!loom_op_attrs_get(loom_program_frame_attrs(frame), "value", &value) ||
      value.is_list || value.kind != LOOM_ATTR_KIND_STRING) {
    loom_program_frame_fail(
        frame, loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "tfrt_test.get_string needs a string "
                                "attribute 'value'"));
    return;
  }
  set_or_fail(frame, loom_program_value_set_string(
                         loom_program_frame_result(frame, 0),
                         value.u.string.data, value.u.string.size));
}

// (string, chain) -> chain: prints `string = ...`.
static void print_string_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_kinds(frame, 1, LOOM_PROGRAM_VALUE_STRING)) return;
  size_t size = 0;
  const char* data = string_arg(frame, 0, &size);
  FILE* out = loom_program_frame_output(frame);
  fputs("string = ", out);
  fwrite(data, 1, size, out);
  fputc('\n', out);
  fflush(out);
  set_or_fail(
      frame, loom_program_value_set_chain(loom_program_frame_result(frame, 0)));
}

// (string, string) -> string: the two joined.
static void append_string_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_kinds(frame, 2, LOOM_PROGRAM_VALUE_STRING)) return;
  size_t a_size = 0;
  size_t b_size = 0;
  const char* a = string_arg(frame, 0, &a_size);
  const char* b = string_arg(frame, 1, &b_size);
  char* joined = NULL;
  loom_status_t status = loom_allocator_malloc(
      loom_allocator_default(), a_size + b_size + 1, (void**)&joined);
  if (status) {
    loom_program_frame_fail(frame, status);
    return;
  }
  memcpy(joined, a, a_size);
  memcpy(joined + a_size, b, b_size);
  set_or_fail(frame,
              loom_program_value_set_string(loom_program_frame_result(frame, 0),
                                            joined, a_size + b_size));
  loom_allocator_free(loom_allocator_default(), joined);
}

// (string, string) -> i1
static void string_equal_kernel(loom_program_frame_t* frame, void* user_data) {
  (void)user_data;
  if (!check_kinds(frame, 2, LOOM_PROGRAM_VALUE_STRING)) return;
  size_t a_size = 0;
  size_t b_size = 0;
  const char* a = string_arg(frame, 0, &a_size);
  const char* b = string_arg(frame, 1, &b_size);
  set_or_fail(frame, loom_program_value_set_bool(
                         loom_program_frame_result(frame, 0),
                         a_size == b_size && memcmp(a, b, a_size) == 0));
}

typedef struct test_kernel_t {
  const char* name;
  loom_program_kernel_fn_t fn;
  int32_t num_arguments;
  int32_t num_results;
} test_kernel_t;

static const test_kernel_t kKernels[] = {
    {.name = "tfrt_test.cancel",
     .fn = cancel_kernel,
     .num_arguments = 1,
     .num_results = 2},
    {.name = "tfrt_test.fail",
     .fn = fail_kernel,
     .num_arguments = 0,
     .num_results = 1},
    {.name = "tfrt_test.partial_fail",
     .fn = partial_fail_kernel,
     .num_arguments = 0,
     .num_results = 2},
    {.name = "tfrt_test.report_error_async",
     .fn = report_error_async_kernel,
     .num_arguments = 0,
     .num_results = 1},
    {.name = "tfrt_test.corert.op_attrs_print",
     .fn = op_attrs_print_kernel,
     .num_arguments = 2,
     .num_results = 1},
    {.name = "tfrt_test.get_string",
     .fn = get_string_kernel,
     .num_arguments = 0,
     .num_results = 1},
    {.name = "tfrt_test.print_string",
     .fn = print_string_kernel,
     .num_arguments = 2,
     .num_results = 1},
    {.name = "tfrt_test.append_string",
     .fn = append_string_kernel,
     .num_arguments = 2,
     .num_results = 1},
    {.name = "tfrt_test.string_equal",
     .fn = string_equal_kernel,
     .num_arguments = 2,
     .num_results = 1},
    {.name = "tfrt_test.corert.op_attrs_freeze",
     .fn = op_attrs_freeze_kernel,
     .num_arguments = 2,
     .num_results = 2},
    {.name = "tfrt_test.corert.op_attrs_ref_print",
     .fn = op_attrs_ref_print_kernel,
     .num_arguments = 2,
     .num_results = 1},
};

loom_status_t loom__tfrt_test_add_kernels(loom_program_executor_t* executor) {
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i) {
    loom_program_kernel_def_t def = {.struct_size = sizeof(def),
                                     .name = kKernels[i].name,
                                     .fn = kKernels[i].fn,
                                     .num_arguments = kKernels[i].num_arguments,
                                     .num_results = kKernels[i].num_results};
    LOOM_RETURN_IF_ERROR(loom_program_executor_add_kernel(executor, &def));
  }
  return loom_ok_status();
}
