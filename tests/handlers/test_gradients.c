// Gradient conformance: runs every case of a file written by
// tests/handlers/gradients/gen_grad_cases.py under a gradient tape and
// checks the gradients three ways:
//   - against PyTorch's autograd (the expected values of the file);
//   - against central finite differences in float64 of the op itself,
//     computed here (L = sum_k <w_k, y_k> over the outputs with upstream
//     gradients w_k), independent of PyTorch;
//   - for the cases with directions v, the Hessian-vector products of
//     nested tapes (the outer one records the inner one's backward pass)
//     against PyTorch's double backward and against finite differences of
//     the tape's gradients along v.
//
// With --forward, each case runs in forward mode instead (a forward
// accumulator around the op, tangents v on the watched inputs: the
// case's directions, or fixed pseudo-random ones):
//   - forward and reverse agree: sum_k <w_k, (J v)_k> = sum_i <g_i, v_i>
//     with g the tape's gradients;
//   - J v against central finite differences in float64 of the outputs;
//   - for the cases with directions, forward-over-reverse Hessian-vector
//     products (an accumulator around a tape, the JVP of the gradient)
//     against PyTorch's.
//
// With --traced, each case's op and its tape's gradients are traced into a
// function (an executing trace; the floating inputs its parameters), the
// function is called on the case's inputs, and its values and gradients
// must equal the op's and the tape's run eagerly (within the case's
// tolerances): what a traced training step computes is what eager code
// does.
//
//   test_gradients [--forward | --traced] CASES_FILE [NAME_FILTER]
//
// runs the cases whose name contains NAME_FILTER (-NAME_FILTER: those whose
// name does not); GRADIENTS_VERBOSE=1 names each case as it starts.
//
// Every failing case is reported; the exit status is 1 when any failed.

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/loom.h"
#include "loom/trace.h"

enum { kMaxTensors = 16, kMaxOutputs = 16 };

typedef struct grad_case_t {
  char name[256];
  char op[128];
  loom_op_attrs_t attrs;
  loom_tensor_t* inputs[kMaxTensors];
  int num_inputs;
  int watch[kMaxTensors];
  int num_watch;
  int outgrad_index[kMaxOutputs];
  loom_tensor_t* outgrads[kMaxOutputs];
  int num_outgrads;
  loom_tensor_t* expects[kMaxTensors];  // NULL: no gradient
  int num_expects;
  loom_tensor_t* directions[kMaxTensors];
  int num_directions;
  loom_tensor_t* hvps[kMaxTensors];
  int num_hvps;
  double rtol, atol;
  bool fd;
  double fd_rtol, fd_atol;
} grad_case_t;

static loom_context_t* g_ctx;
static int g_failures;  // failed checks
static int g_failed_cases;
static int g_passed;
static int g_fd_checked;
static int g_hvp_checked;

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

static char* next_token(char** cursor) {
  char* p = *cursor;
  while (*p && isspace((unsigned char)*p)) p++;
  if (!*p) return NULL;
  char* start = p;
  while (*p && !isspace((unsigned char)*p)) p++;
  if (*p) *p++ = '\0';
  *cursor = p;
  return start;
}

static int fail_parse(int line, const char* what) {
  fprintf(stderr, "cases:%d: %s\n", line, what);
  return -1;
}

// "<dtype> <rank> <dims...> <values...>" (floating, int32, int64, bool).
static int parse_tensor(char** cursor, int line, loom_tensor_t** out) {
  *out = NULL;
  char* name = next_token(cursor);
  char* rank_text = next_token(cursor);
  if (!name || !rank_text) return fail_parse(line, "tensor: missing dtype");
  loom_dtype_t dtype;
  loom_status_t status = loom_dtype_from_name(name, &dtype);
  if (status) {
    loom_status_free(status);
    return fail_parse(line, "tensor: unknown dtype");
  }
  int rank = atoi(rank_text);
  if (rank < 0 || rank > LOOM_MAX_SHAPE_RANK) {
    return fail_parse(line, "bad rank");
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (int i = 0; i < rank; ++i) {
    char* dim = next_token(cursor);
    if (!dim) return fail_parse(line, "tensor: missing dim");
    dims[i] = strtoll(dim, NULL, 10);
  }
  loom_shape_t shape;
  status = loom_shape_initialize_large(&shape, dims, rank);
  if (!status) {
    status =
        loom_tensor_create_dense(loom_allocator_default(), dtype, &shape, out);
  }
  if (status) {
    loom_status_free(status);
    return fail_parse(line, "tensor: bad shape or dtype");
  }
  void* data = loom_tensor_data(*out);
  int64_t count = loom_tensor_num_elements(*out);
  for (int64_t i = 0; i < count; ++i) {
    char* token = next_token(cursor);
    if (!token) return fail_parse(line, "tensor: too few values");
    switch (dtype) {
      case LOOM_DTYPE_DOUBLE:
        ((double*)data)[i] = strtod(token, NULL);
        break;
      case LOOM_DTYPE_FLOAT:
        ((float*)data)[i] = (float)strtod(token, NULL);
        break;
      case LOOM_DTYPE_INT32:
        ((int32_t*)data)[i] = (int32_t)strtoll(token, NULL, 10);
        break;
      case LOOM_DTYPE_INT64:
        ((int64_t*)data)[i] = strtoll(token, NULL, 10);
        break;
      case LOOM_DTYPE_BOOL:
        ((bool*)data)[i] = atoi(token) != 0;
        break;
      default:
        return fail_parse(line, "tensor: unsupported dtype");
    }
  }
  return 0;
}

static int parse_attr(char** cursor, int line, loom_op_attrs_t* attrs) {
  char* name = next_token(cursor);
  char* kind = next_token(cursor);
  char* value = next_token(cursor);
  if (!name || !kind || !value) return fail_parse(line, "attr: incomplete");
  loom_status_t status = loom_ok_status();
  if (strcmp(kind, "int") == 0) {
    status = loom_op_attrs_set_i64(attrs, name, strtoll(value, NULL, 10));
  } else if (strcmp(kind, "float") == 0) {
    status = loom_op_attrs_set_f32(attrs, name, (float)strtod(value, NULL));
  } else if (strcmp(kind, "bool") == 0) {
    status = loom_op_attrs_set_bool(attrs, name, atoi(value) != 0);
  } else if (strcmp(kind, "type") == 0) {
    loom_dtype_t dtype;
    status = loom_dtype_from_name(value, &dtype);
    if (!status) status = loom_op_attrs_set_dtype(attrs, name, dtype);
  } else if (strcmp(kind, "string") == 0) {
    status = loom_op_attrs_set_string(attrs, name, value, strlen(value));
  } else if (strcmp(kind, "ints") == 0) {
    int count = atoi(value);
    if (count < 0 || count > 64) return fail_parse(line, "attr: bad count");
    int64_t ints[64];
    for (int i = 0; i < count; ++i) {
      char* token = next_token(cursor);
      if (!token) return fail_parse(line, "attr: too few values");
      ints[i] = strtoll(token, NULL, 10);
    }
    status =
        loom_op_attrs_set_list(attrs, name, LOOM_ATTR_KIND_I64, ints, count);
  } else {
    return fail_parse(line, "attr: unknown kind");
  }
  if (status) {
    loom_status_free(status);
    return fail_parse(line, "attr: cannot set");
  }
  return 0;
}

static void release_tensors(loom_tensor_t** tensors, int count) {
  for (int i = 0; i < count; ++i) {
    loom_tensor_release(tensors[i]);
    tensors[i] = NULL;
  }
}

static void clear_case(grad_case_t* c) {
  release_tensors(c->inputs, c->num_inputs);
  release_tensors(c->outgrads, c->num_outgrads);
  release_tensors(c->expects, c->num_expects);
  release_tensors(c->directions, c->num_directions);
  release_tensors(c->hvps, c->num_hvps);
  loom_op_attrs_deinitialize(&c->attrs);
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

static double element(const loom_tensor_t* t, int64_t i) {
  switch (loom_tensor_dtype(t)) {
    case LOOM_DTYPE_DOUBLE:
      return ((const double*)loom_tensor_data(t))[i];
    case LOOM_DTYPE_FLOAT:
      return ((const float*)loom_tensor_data(t))[i];
    default:
      return NAN;
  }
}

static void set_element(loom_tensor_t* t, int64_t i, double value) {
  if (loom_tensor_dtype(t) == LOOM_DTYPE_DOUBLE) {
    ((double*)loom_tensor_data(t))[i] = value;
  } else {
    ((float*)loom_tensor_data(t))[i] = (float)value;
  }
}

static loom_status_t copy_tensor(const loom_tensor_t* from,
                                 loom_tensor_t** out) {
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(loom_allocator_default(),
                                                loom_tensor_dtype(from),
                                                loom_tensor_shape(from), out));
  memcpy(loom_tensor_data(*out), loom_tensor_data(from),
         loom_tensor_byte_size(from));
  return loom_ok_status();
}

static void format_status(loom_status_t status, char* text, size_t size) {
  loom_status_format(status, text, size);
  loom_status_free(status);
}

// An empty string when `got` matches `want` within rtol / atol, else what
// differs.
static void compare(const loom_tensor_t* got, const loom_tensor_t* want,
                    double rtol, double atol, char* why, size_t size) {
  why[0] = '\0';
  if (loom_tensor_dtype(got) != loom_tensor_dtype(want)) {
    snprintf(why, size, "dtype %s, expected %s",
             loom_dtype_name(loom_tensor_dtype(got)),
             loom_dtype_name(loom_tensor_dtype(want)));
    return;
  }
  if (!loom_shape_equal(loom_tensor_shape(got), loom_tensor_shape(want))) {
    char a[128], b[128];
    loom_shape_format(loom_tensor_shape(got), a, sizeof(a));
    loom_shape_format(loom_tensor_shape(want), b, sizeof(b));
    snprintf(why, size, "shape %s, expected %s", a, b);
    return;
  }
  int64_t count = loom_tensor_num_elements(got);
  for (int64_t i = 0; i < count; ++i) {
    double g = element(got, i), w = element(want, i);
    if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
      snprintf(why, size, "element %" PRId64 " is %.12g, expected %.12g", i, g,
               w);
      return;
    }
  }
}

static void report(const grad_case_t* c, const char* check, const char* what) {
  fprintf(stderr, "FAIL %s (%s) %s: %s\n", c->name, c->op, check, what);
  g_failures++;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

static void release_handles(loom_tensor_handle_t** handles, int count) {
  for (int i = 0; i < count; ++i) {
    loom_tensor_handle_release(handles[i]);
    handles[i] = NULL;
  }
}

static loom_status_t new_handles(loom_tensor_t* const* tensors, int count,
                                 loom_tensor_handle_t** out) {
  for (int i = 0; i < count; ++i) {
    loom_status_t status = loom_context_new_handle(g_ctx, tensors[i], &out[i]);
    if (status) {
      release_handles(out, i);
      return status;
    }
  }
  return loom_ok_status();
}

// Executes the case's op on `inputs`; writes its results.
static loom_status_t execute_op(const grad_case_t* c,
                                loom_tensor_handle_t* const* inputs,
                                loom_tensor_handle_t** outputs,
                                int32_t* num_outputs) {
  *num_outputs = 0;
  loom_eager_op_t* op = NULL;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(g_ctx, c->op, &op));
  loom_status_t status = loom_eager_op_add_attrs(op, &c->attrs);
  for (int i = 0; i < c->num_inputs && !status; ++i) {
    status = loom_eager_op_add_input(op, inputs[i]);
  }
  if (!status) {
    status = loom_eager_op_execute(op, outputs, kMaxOutputs, num_outputs);
  }
  loom_eager_op_destroy(op);
  return status;
}

// Runs the op under a new tape watching the case's watched inputs, and asks
// it for their gradients (NULL where the op has none).
static loom_status_t tape_gradients(const grad_case_t* c,
                                    loom_tensor_handle_t* const* inputs,
                                    loom_tensor_handle_t** gradients) {
  loom_tensor_handle_t* outputs[kMaxOutputs] = {NULL};
  loom_tensor_handle_t* seeds[kMaxOutputs] = {NULL};
  loom_tensor_handle_t* targets[kMaxOutputs] = {NULL};
  loom_tensor_handle_t* sources[kMaxTensors] = {NULL};
  int32_t num_outputs = 0;
  loom_op_handler_t* tape = NULL;
  LOOM_RETURN_IF_ERROR(loom_tape_create(g_ctx, NULL, &tape));
  loom_status_t status = loom_context_enter_scope(g_ctx, tape);
  if (status) {
    loom_op_handler_release(tape);
    return status;
  }
  for (int i = 0; i < c->num_watch && !status; ++i) {
    sources[i] = inputs[c->watch[i]];
    status = loom_tape_watch(tape, sources[i]);
  }
  if (!status) status = execute_op(c, inputs, outputs, &num_outputs);
  loom_status_t exit_status = loom_context_exit_scope(g_ctx);
  if (!status) {
    status = exit_status;
  } else {
    loom_status_free(exit_status);
  }
  if (!status) status = new_handles(c->outgrads, c->num_outgrads, seeds);
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    if (c->outgrad_index[i] >= num_outputs) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "the op has %d outputs",
                                num_outputs);
    } else {
      targets[i] = outputs[c->outgrad_index[i]];
    }
  }
  if (!status) {
    status = loom_tape_gradient(tape, targets, c->num_outgrads, sources,
                                c->num_watch, seeds, LOOM_UNCONNECTED_NONE,
                                gradients);
  }
  release_handles(seeds, c->num_outgrads);
  release_handles(outputs, num_outputs);
  loom_op_handler_release(tape);
  return status;
}

// L = sum_k <w_k, y_k> for the op at `inputs` (no tape).
static loom_status_t objective(const grad_case_t* c,
                               loom_tensor_t* const* inputs, double* out) {
  loom_tensor_handle_t* handles[kMaxTensors] = {NULL};
  loom_tensor_handle_t* outputs[kMaxOutputs] = {NULL};
  int32_t num_outputs = 0;
  LOOM_RETURN_IF_ERROR(new_handles(inputs, c->num_inputs, handles));
  loom_status_t status = execute_op(c, handles, outputs, &num_outputs);
  double sum = 0;
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    loom_tensor_t* y = NULL;
    status = loom_context_resolve(g_ctx, outputs[c->outgrad_index[i]], &y);
    if (status) break;
    const loom_tensor_t* w = c->outgrads[i];
    int64_t n = loom_tensor_num_elements(w);
    for (int64_t j = 0; j < n; ++j) sum += element(w, j) * element(y, j);
    loom_tensor_release(y);
  }
  release_handles(outputs, num_outputs);
  release_handles(handles, c->num_inputs);
  *out = sum;
  return status;
}

static bool all_double(const grad_case_t* c) {
  for (int i = 0; i < c->num_watch; ++i) {
    if (loom_tensor_dtype(c->inputs[c->watch[i]]) != LOOM_DTYPE_DOUBLE) {
      return false;
    }
  }
  for (int i = 0; i < c->num_outgrads; ++i) {
    if (loom_tensor_dtype(c->outgrads[i]) != LOOM_DTYPE_DOUBLE) return false;
  }
  return true;
}

// Central differences of L at each element of each watched input with a
// gradient, against the tape's gradients.
static void check_finite_differences(grad_case_t* c,
                                     loom_tensor_t* const* gradients) {
  loom_tensor_t* inputs[kMaxTensors] = {NULL};
  char why[512];
  for (int i = 0; i < c->num_inputs; ++i) {
    loom_status_t status = copy_tensor(c->inputs[i], &inputs[i]);
    if (status) {
      format_status(status, why, sizeof(why));
      report(c, "finite differences", why);
      release_tensors(inputs, i);
      return;
    }
  }
  g_fd_checked++;
  for (int k = 0; k < c->num_watch; ++k) {
    if (!gradients[k]) continue;
    loom_tensor_t* x = inputs[c->watch[k]];
    int64_t n = loom_tensor_num_elements(x);
    for (int64_t j = 0; j < n; ++j) {
      double x0 = element(x, j);
      double h = 1e-6 * (fabs(x0) > 1 ? fabs(x0) : 1);
      double plus = 0, minus = 0;
      set_element(x, j, x0 + h);
      loom_status_t status = objective(c, inputs, &plus);
      set_element(x, j, x0 - h);
      if (!status) status = objective(c, inputs, &minus);
      set_element(x, j, x0);
      if (status) {
        format_status(status, why, sizeof(why));
        report(c, "finite differences", why);
        release_tensors(inputs, c->num_inputs);
        return;
      }
      double fd = (plus - minus) / (2 * h);
      double g = element(gradients[k], j);
      if (!(fabs(fd - g) <= c->fd_atol + c->fd_rtol * fabs(fd))) {
        snprintf(why, sizeof(why),
                 "input %d element %" PRId64 ": tape %.12g, differences %.12g",
                 c->watch[k], j, g, fd);
        report(c, "finite differences", why);
        release_tensors(inputs, c->num_inputs);
        return;
      }
    }
  }
  release_tensors(inputs, c->num_inputs);
}

// The gradients (as tensors) of the op at inputs + scale * directions.
static loom_status_t gradients_at(const grad_case_t* c, double scale,
                                  loom_tensor_t** out) {
  loom_tensor_t* inputs[kMaxTensors] = {NULL};
  loom_tensor_handle_t* handles[kMaxTensors] = {NULL};
  loom_tensor_handle_t* gradients[kMaxTensors] = {NULL};
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < c->num_inputs && !status; ++i) {
    status = copy_tensor(c->inputs[i], &inputs[i]);
  }
  for (int k = 0; k < c->num_watch && !status; ++k) {
    loom_tensor_t* x = inputs[c->watch[k]];
    int64_t n = loom_tensor_num_elements(x);
    for (int64_t j = 0; j < n; ++j) {
      set_element(x, j, element(x, j) + scale * element(c->directions[k], j));
    }
  }
  if (!status) status = new_handles(inputs, c->num_inputs, handles);
  if (!status) status = tape_gradients(c, handles, gradients);
  for (int k = 0; k < c->num_watch && !status; ++k) {
    out[k] = NULL;
    if (gradients[k]) {
      status = loom_context_resolve(g_ctx, gradients[k], &out[k]);
    }
  }
  release_handles(gradients, c->num_watch);
  release_handles(handles, c->num_inputs);
  release_tensors(inputs, c->num_inputs);
  return status;
}

// H v with an outer tape recording the inner one's backward pass.
static loom_status_t nested_hvp(const grad_case_t* c,
                                loom_tensor_handle_t* const* inputs,
                                loom_tensor_handle_t** hvps) {
  loom_tensor_handle_t* gradients[kMaxTensors] = {NULL};
  loom_tensor_handle_t* dirs[kMaxTensors] = {NULL};
  loom_tensor_handle_t* targets[kMaxTensors] = {NULL};
  loom_tensor_handle_t* seeds[kMaxTensors] = {NULL};
  loom_tensor_handle_t* sources[kMaxTensors] = {NULL};
  loom_op_handler_t* outer = NULL;
  LOOM_RETURN_IF_ERROR(loom_tape_create(g_ctx, NULL, &outer));
  loom_status_t status = loom_context_enter_scope(g_ctx, outer);
  if (status) {
    loom_op_handler_release(outer);
    return status;
  }
  for (int i = 0; i < c->num_watch && !status; ++i) {
    sources[i] = inputs[c->watch[i]];
    status = loom_tape_watch(outer, sources[i]);
  }
  if (!status) status = tape_gradients(c, inputs, gradients);
  loom_status_t exit_status = loom_context_exit_scope(g_ctx);
  if (!status) {
    status = exit_status;
  } else {
    loom_status_free(exit_status);
  }
  if (!status) status = new_handles(c->directions, c->num_directions, dirs);
  int num_targets = 0;
  for (int k = 0; k < c->num_watch && !status; ++k) {
    if (!gradients[k]) continue;
    targets[num_targets] = gradients[k];
    seeds[num_targets++] = dirs[k];
  }
  if (!status && num_targets > 0) {
    status =
        loom_tape_gradient(outer, targets, num_targets, sources, c->num_watch,
                           seeds, LOOM_UNCONNECTED_ZERO, hvps);
  }
  release_handles(dirs, c->num_directions);
  release_handles(gradients, c->num_watch);
  loom_op_handler_release(outer);
  return status;
}

static void check_hvp(grad_case_t* c, loom_tensor_handle_t* const* inputs) {
  char why[512];
  loom_tensor_handle_t* hvps[kMaxTensors] = {NULL};
  loom_tensor_t* plus[kMaxTensors] = {NULL};
  loom_tensor_t* minus[kMaxTensors] = {NULL};
  loom_status_t status = nested_hvp(c, inputs, hvps);
  const double h = 1e-5;
  if (!status) status = gradients_at(c, h, plus);
  if (!status) status = gradients_at(c, -h, minus);
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "Hessian-vector product", why);
  }
  g_hvp_checked++;
  for (int k = 0; k < c->num_watch && !status; ++k) {
    loom_tensor_t* hv = NULL;
    if (hvps[k]) {
      status = loom_context_resolve(g_ctx, hvps[k], &hv);
    } else {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "no product");
    }
    if (status) {
      format_status(status, why, sizeof(why));
      report(c, "Hessian-vector product", why);
      break;
    }
    compare(hv, c->hvps[k], c->rtol * 10, c->atol * 10, why, sizeof(why));
    if (why[0]) {
      char what[600];
      snprintf(what, sizeof(what), "input %d vs PyTorch: %s", c->watch[k], why);
      report(c, "Hessian-vector product", what);
    } else if (plus[k] && minus[k]) {
      int64_t n = loom_tensor_num_elements(hv);
      for (int64_t j = 0; j < n; ++j) {
        double fd = (element(plus[k], j) - element(minus[k], j)) / (2 * h);
        double got = element(hv, j);
        if (!(fabs(fd - got) <= 1e-5 + 1e-5 * fabs(fd))) {
          snprintf(why, sizeof(why),
                   "input %d element %" PRId64
                   ": nested tapes %.12g, differences of gradients %.12g",
                   c->watch[k], j, got, fd);
          report(c, "Hessian-vector product", why);
          break;
        }
      }
    }
    loom_tensor_release(hv);
  }
  release_tensors(plus, c->num_watch);
  release_tensors(minus, c->num_watch);
  release_handles(hvps, c->num_watch);
}

//===----------------------------------------------------------------------===//
// Forward mode
//===----------------------------------------------------------------------===//

static bool g_forward;  // --forward: the forward-mode checks
static bool g_traced;   // --traced: traced gradients against eager ones
static int g_traced_checked;
static int g_forward_fd_checked;
static int g_forward_hvp_checked;
static uint64_t g_direction_seed = 88172645463325252ull;

static double next_direction_value(void) {
  g_direction_seed ^= g_direction_seed << 13;
  g_direction_seed ^= g_direction_seed >> 7;
  g_direction_seed ^= g_direction_seed << 17;
  return (double)(g_direction_seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

// The tangents of the watched inputs: the case's directions, else
// pseudo-random values; zeros for an input that has no gradient by
// convention (PadV2's constant, FusedBatchNormV3's statistics in
// inference), so that forward and reverse mode compute the same thing.
static loom_status_t make_directions(const grad_case_t* c,
                                     loom_tensor_t** out) {
  for (int k = 0; k < c->num_watch; ++k) {
    if (!c->expects[k]) {
      const loom_tensor_t* x = c->inputs[c->watch[k]];
      LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
          loom_allocator_default(), loom_tensor_dtype(x), loom_tensor_shape(x),
          &out[k]));
      memset(loom_tensor_data(out[k]), 0, loom_tensor_byte_size(out[k]));
      continue;
    }
    if (c->num_directions == c->num_watch) {
      LOOM_RETURN_IF_ERROR(copy_tensor(c->directions[k], &out[k]));
      continue;
    }
    const loom_tensor_t* x = c->inputs[c->watch[k]];
    LOOM_RETURN_IF_ERROR(
        loom_tensor_create_dense(loom_allocator_default(), loom_tensor_dtype(x),
                                 loom_tensor_shape(x), &out[k]));
    int64_t n = loom_tensor_num_elements(x);
    for (int64_t j = 0; j < n; ++j) {
      set_element(out[k], j, next_direction_value());
    }
  }
  return loom_ok_status();
}

// The op in an accumulator's scope with `tangents` on the watched inputs;
// writes the tangents of the outputs with upstream gradients (zeros when
// none).
static loom_status_t forward_jvps(const grad_case_t* c,
                                  loom_tensor_handle_t* const* inputs,
                                  loom_tensor_handle_t* const* tangents,
                                  loom_tensor_handle_t** out) {
  loom_tensor_handle_t* args[kMaxTensors] = {NULL};
  loom_tensor_handle_t* outputs[kMaxOutputs] = {NULL};
  int32_t num_outputs = 0;
  loom_op_handler_t* accumulator = NULL;
  LOOM_RETURN_IF_ERROR(loom_forward_accumulator_create(g_ctx, &accumulator));
  loom_status_t status = loom_context_enter_scope(g_ctx, accumulator);
  if (status) {
    loom_op_handler_release(accumulator);
    return status;
  }
  for (int i = 0; i < c->num_inputs; ++i) {
    loom_tensor_handle_retain(inputs[i]);
    args[i] = inputs[i];
  }
  for (int k = 0; k < c->num_watch && !status; ++k) {
    int i = c->watch[k];
    loom_tensor_handle_t* watched = NULL;
    status = loom_forward_accumulator_watch(accumulator, args[i], tangents[k],
                                            &watched);
    if (status) break;
    loom_tensor_handle_release(args[i]);
    args[i] = watched;
  }
  if (!status) status = execute_op(c, args, outputs, &num_outputs);
  loom_status_t exit_status = loom_context_exit_scope(g_ctx);
  if (!status) {
    status = exit_status;
  } else {
    loom_status_free(exit_status);
  }
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    if (c->outgrad_index[i] >= num_outputs) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "the op has %d outputs",
                                num_outputs);
      break;
    }
    status =
        loom_forward_accumulator_jvp(accumulator, outputs[c->outgrad_index[i]],
                                     LOOM_UNCONNECTED_ZERO, &out[i]);
  }
  if (status) release_handles(out, c->num_outgrads);
  release_handles(outputs, num_outputs);
  release_handles(args, c->num_inputs);
  loom_op_handler_release(accumulator);
  return status;
}

// The outputs with upstream gradients at inputs + scale * directions.
static loom_status_t outputs_along(const grad_case_t* c,
                                   loom_tensor_t* const* directions,
                                   double scale, loom_tensor_t** out) {
  loom_tensor_t* inputs[kMaxTensors] = {NULL};
  loom_tensor_handle_t* handles[kMaxTensors] = {NULL};
  loom_tensor_handle_t* outputs[kMaxOutputs] = {NULL};
  int32_t num_outputs = 0;
  loom_status_t status = loom_ok_status();
  for (int i = 0; i < c->num_inputs && !status; ++i) {
    status = copy_tensor(c->inputs[i], &inputs[i]);
  }
  for (int k = 0; k < c->num_watch && !status; ++k) {
    loom_tensor_t* x = inputs[c->watch[k]];
    int64_t n = loom_tensor_num_elements(x);
    for (int64_t j = 0; j < n; ++j) {
      set_element(x, j, element(x, j) + scale * element(directions[k], j));
    }
  }
  if (!status) status = new_handles(inputs, c->num_inputs, handles);
  if (!status) status = execute_op(c, handles, outputs, &num_outputs);
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    status = loom_context_resolve(g_ctx, outputs[c->outgrad_index[i]], &out[i]);
  }
  release_handles(outputs, num_outputs);
  release_handles(handles, c->num_inputs);
  release_tensors(inputs, c->num_inputs);
  return status;
}

static void check_forward_finite_differences(grad_case_t* c,
                                             loom_tensor_t* const* directions,
                                             loom_tensor_t* const* jvps) {
  char why[512];
  loom_tensor_t* plus[kMaxOutputs] = {NULL};
  loom_tensor_t* minus[kMaxOutputs] = {NULL};
  const double h = 1e-6;
  loom_status_t status = outputs_along(c, directions, h, plus);
  if (!status) status = outputs_along(c, directions, -h, minus);
  g_forward_fd_checked++;
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    int64_t n = loom_tensor_num_elements(jvps[i]);
    if (loom_tensor_dtype(plus[i]) != LOOM_DTYPE_DOUBLE) continue;
    for (int64_t j = 0; j < n; ++j) {
      double fd = (element(plus[i], j) - element(minus[i], j)) / (2 * h);
      double got = element(jvps[i], j);
      if (!(fabs(fd - got) <= c->fd_atol + c->fd_rtol * fabs(fd))) {
        snprintf(why, sizeof(why),
                 "output %d element %" PRId64
                 ": accumulator %.12g, differences %.12g",
                 c->outgrad_index[i], j, got, fd);
        report(c, "forward finite differences", why);
        break;
      }
    }
  }
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "forward finite differences", why);
  }
  release_tensors(plus, c->num_outgrads);
  release_tensors(minus, c->num_outgrads);
}

// H v with an accumulator (tangents v) around a tape: the JVP of the
// tape's gradients.
static loom_status_t forward_over_reverse_hvp(
    const grad_case_t* c, loom_tensor_handle_t* const* inputs,
    loom_tensor_handle_t* const* tangents, loom_tensor_handle_t** hvps) {
  loom_tensor_handle_t* args[kMaxTensors] = {NULL};
  loom_tensor_handle_t* sources[kMaxTensors] = {NULL};
  loom_tensor_handle_t* gradients[kMaxTensors] = {NULL};
  loom_tensor_handle_t* seeds[kMaxOutputs] = {NULL};
  loom_tensor_handle_t* targets[kMaxOutputs] = {NULL};
  loom_tensor_handle_t* outputs[kMaxOutputs] = {NULL};
  int32_t num_outputs = 0;
  loom_op_handler_t* accumulator = NULL;
  loom_op_handler_t* tape = NULL;
  LOOM_RETURN_IF_ERROR(loom_forward_accumulator_create(g_ctx, &accumulator));
  int depth = 0;
  loom_status_t status = loom_tape_create(g_ctx, NULL, &tape);
  if (!status) status = loom_context_enter_scope(g_ctx, accumulator);
  if (!status) depth++;
  for (int i = 0; i < c->num_inputs; ++i) {
    loom_tensor_handle_retain(inputs[i]);
    args[i] = inputs[i];
  }
  for (int k = 0; k < c->num_watch && !status; ++k) {
    int i = c->watch[k];
    loom_tensor_handle_t* watched = NULL;
    status = loom_forward_accumulator_watch(accumulator, args[i], tangents[k],
                                            &watched);
    if (status) break;
    loom_tensor_handle_release(args[i]);
    args[i] = watched;
    sources[k] = watched;
  }
  if (!status) status = loom_context_enter_scope(g_ctx, tape);
  if (!status) depth++;
  for (int k = 0; k < c->num_watch && !status; ++k) {
    status = loom_tape_watch(tape, sources[k]);
  }
  if (!status) status = execute_op(c, args, outputs, &num_outputs);
  if (depth == 2) {
    loom_status_t exit_status = loom_context_exit_scope(g_ctx);
    depth--;
    if (!status) {
      status = exit_status;
    } else {
      loom_status_free(exit_status);
    }
  }
  if (!status) status = new_handles(c->outgrads, c->num_outgrads, seeds);
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    if (c->outgrad_index[i] >= num_outputs) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "the op has %d outputs",
                                num_outputs);
    } else {
      targets[i] = outputs[c->outgrad_index[i]];
    }
  }
  if (!status) {
    status = loom_tape_gradient(tape, targets, c->num_outgrads, sources,
                                c->num_watch, seeds, LOOM_UNCONNECTED_ZERO,
                                gradients);
  }
  if (depth == 1) {
    loom_status_t exit_status = loom_context_exit_scope(g_ctx);
    if (!status) {
      status = exit_status;
    } else {
      loom_status_free(exit_status);
    }
  }
  for (int k = 0; k < c->num_watch && !status; ++k) {
    status = loom_forward_accumulator_jvp(accumulator, gradients[k],
                                          LOOM_UNCONNECTED_ZERO, &hvps[k]);
  }
  if (status) release_handles(hvps, c->num_watch);
  release_handles(gradients, c->num_watch);
  release_handles(seeds, c->num_outgrads);
  release_handles(outputs, num_outputs);
  release_handles(args, c->num_inputs);
  loom_op_handler_release(tape);
  loom_op_handler_release(accumulator);
  return status;
}

static void check_forward_hvp(grad_case_t* c,
                              loom_tensor_handle_t* const* inputs,
                              loom_tensor_handle_t* const* tangents) {
  char why[512];
  loom_tensor_handle_t* hvps[kMaxTensors] = {NULL};
  loom_status_t status = forward_over_reverse_hvp(c, inputs, tangents, hvps);
  g_forward_hvp_checked++;
  for (int k = 0; k < c->num_watch && !status; ++k) {
    loom_tensor_t* hv = NULL;
    status = loom_context_resolve(g_ctx, hvps[k], &hv);
    if (status) break;
    compare(hv, c->hvps[k], c->rtol * 10, c->atol * 10, why, sizeof(why));
    if (why[0]) {
      char what[600];
      snprintf(what, sizeof(what), "input %d vs PyTorch: %s", c->watch[k], why);
      report(c, "forward-over-reverse Hessian-vector product", what);
    }
    loom_tensor_release(hv);
  }
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "forward-over-reverse Hessian-vector product", why);
  }
  release_handles(hvps, c->num_watch);
}

// Forward against reverse (u . J v = (u^T J) . v), finite differences, and
// forward-over-reverse Hessian-vector products.
static void check_forward(grad_case_t* c, loom_tensor_handle_t* const* inputs,
                          loom_tensor_t* const* gradients) {
  char why[512];
  loom_tensor_t* directions[kMaxTensors] = {NULL};
  loom_tensor_handle_t* tangents[kMaxTensors] = {NULL};
  loom_tensor_handle_t* jvp_handles[kMaxOutputs] = {NULL};
  loom_tensor_t* jvps[kMaxOutputs] = {NULL};
  loom_status_t status = make_directions(c, directions);
  if (!status) status = new_handles(directions, c->num_watch, tangents);
  if (!status) status = forward_jvps(c, inputs, tangents, jvp_handles);
  for (int i = 0; i < c->num_outgrads && !status; ++i) {
    status = loom_context_resolve(g_ctx, jvp_handles[i], &jvps[i]);
  }
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "forward mode", why);
  } else {
    double forward = 0, reverse = 0, scale = 0;
    for (int i = 0; i < c->num_outgrads; ++i) {
      int64_t n = loom_tensor_num_elements(c->outgrads[i]);
      for (int64_t j = 0; j < n; ++j) {
        double term = element(c->outgrads[i], j) * element(jvps[i], j);
        forward += term;
        scale += fabs(term);
      }
    }
    for (int k = 0; k < c->num_watch; ++k) {
      if (!gradients[k]) continue;
      int64_t n = loom_tensor_num_elements(gradients[k]);
      for (int64_t j = 0; j < n; ++j) {
        double term = element(gradients[k], j) * element(directions[k], j);
        reverse += term;
        scale += fabs(term);
      }
    }
    if (!(fabs(forward - reverse) <= 10 * (c->atol + c->rtol * scale))) {
      snprintf(why, sizeof(why), "u.(J v) = %.12g but (u^T J).v = %.12g",
               forward, reverse);
      report(c, "forward vs reverse", why);
    } else if (c->fd && all_double(c)) {
      check_forward_finite_differences(c, directions, jvps);
    }
  }
  if (!status && c->num_directions == c->num_watch &&
      c->num_hvps == c->num_watch && c->num_watch > 0) {
    check_forward_hvp(c, inputs, tangents);
  }
  release_tensors(jvps, c->num_outgrads);
  release_handles(jvp_handles, c->num_outgrads);
  release_handles(tangents, c->num_watch);
  release_tensors(directions, c->num_watch);
}

static bool g_verbose;  // GRADIENTS_VERBOSE set: names each case first

// `*handle` (a tensor of the trace's scope) as a value of the trace: an op
// passing an input on, or a constant, goes through an Identity.
static loom_status_t traced_value(loom_tensor_handle_t** handle) {
  if (!*handle || loom_trace_is_symbolic(*handle)) return loom_ok_status();
  loom_eager_op_t* op = NULL;
  loom_tensor_handle_t* traced = NULL;
  int32_t made = 0;
  loom_status_t status = loom_eager_op_create(g_ctx, "Identity", &op);
  if (!status) status = loom_eager_op_add_input(op, *handle);
  if (!status) status = loom_eager_op_execute(op, &traced, 1, &made);
  if (op) loom_eager_op_destroy(op);
  if (!status) {
    loom_tensor_handle_release(*handle);
    *handle = traced;
  }
  return status;
}

// Compares the floating output `result` of the traced function with the
// eager `want`; reports a difference as `what`.
static bool compare_traced(grad_case_t* c, loom_tensor_handle_t* result,
                           const loom_tensor_t* want, const char* what) {
  char why[1024];
  loom_tensor_t* traced = NULL;
  loom_status_t status = loom_context_resolve(g_ctx, result, &traced);
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "traced", why);
    return false;
  }
  bool floating = loom_dtype_is_floating(loom_tensor_dtype(want));
  if (floating) compare(traced, want, c->rtol, c->atol, why, sizeof(why));
  if (floating && why[0]) {
    char text[1200];
    snprintf(text, sizeof(text), "%s: %s", what, why);
    report(c, "traced", text);
  }
  loom_tensor_release(traced);
  return true;
}

// The case's op and its tape's gradients traced into a function (an
// executing trace: the parameters have the case's values, so ops reading a
// value at trace time find it), called on `inputs`: its values against the
// op run eagerly, its gradients against the eager tape's `values`.
static void check_traced(grad_case_t* c, loom_tensor_handle_t* const* inputs,
                         loom_tensor_t* const* values) {
  char why[1024];
  loom_op_handler_t* trace = NULL;
  loom_status_t status =
      loom_trace_create_executing(g_ctx, "grad_case", &trace);
  loom_tensor_handle_t* params[kMaxTensors] = {NULL};
  loom_tensor_handle_t* grads[kMaxTensors] = {NULL};
  bool entered = false;
  if (!status) {
    status = loom_context_enter_scope(g_ctx, trace);
    entered = !status;
  }
  // The floating inputs are parameters; the others (axes, sizes, indices:
  // what decides the shapes the gradient needs) and inputs of a rank a
  // function's signature cannot hold are captured: constants of the body.
  bool is_param[kMaxTensors] = {false};
  for (int i = 0; i < c->num_inputs && !status; ++i) {
    const loom_tensor_t* t = c->inputs[i];
    is_param[i] = loom_dtype_is_floating(loom_tensor_dtype(t)) &&
                  loom_tensor_shape(t)->rank <= LOOM_MAX_RANK;
    if (is_param[i]) {
      status =
          loom_trace_add_parameter_value(trace, NULL, inputs[i], &params[i]);
    } else {
      loom_tensor_handle_retain(inputs[i]);
      params[i] = inputs[i];
    }
  }
  if (!status) status = tape_gradients(c, params, grads);
  loom_tensor_handle_t* forward[kMaxOutputs] = {NULL};
  int32_t num_forward = 0;
  if (!status) status = execute_op(c, params, forward, &num_forward);
  for (int k = 0; k < c->num_watch && !status; ++k) {
    status = traced_value(&grads[k]);
  }
  for (int k = 0; k < num_forward && !status; ++k) {
    status = traced_value(&forward[k]);
  }
  if (entered) {
    loom_status_t exited = loom_context_exit_scope(g_ctx);
    if (!status) {
      status = exited;
    } else {
      loom_status_free(exited);
    }
  }
  // The function returns the gradients that exist (the others are none),
  // then the op's values.
  loom_tensor_handle_t* outputs[kMaxTensors + kMaxOutputs] = {NULL};
  int32_t num_outputs = 0;
  for (int k = 0; k < c->num_watch; ++k) {
    if (grads[k]) outputs[num_outputs++] = grads[k];
  }
  for (int k = 0; k < num_forward; ++k) outputs[num_outputs++] = forward[k];
  loom_function_t* function = NULL;
  if (!status) {
    status = loom_trace_finish(trace, outputs, num_outputs, &function);
  }
  if (!status) status = loom_context_add_function(g_ctx, function);
  loom_tensor_handle_t* results[kMaxTensors + kMaxOutputs] = {NULL};
  if (!status) {
    loom_eager_op_t* op = NULL;
    status = loom_eager_op_create(g_ctx, "grad_case", &op);
    for (int i = 0; i < c->num_inputs && !status; ++i) {
      if (is_param[i]) status = loom_eager_op_add_input(op, inputs[i]);
    }
    int32_t made = 0;
    if (!status) {
      status =
          loom_eager_op_execute(op, results, kMaxTensors + kMaxOutputs, &made);
    }
    if (op) loom_eager_op_destroy(op);
    loom_status_free(loom_context_remove_function(g_ctx, "grad_case"));
  }
  bool failed = status != NULL;
  if (failed) {
    format_status(status, why, sizeof(why));  // (frees it)
    report(c, "traced", why);
  }
  int r = 0;
  for (int k = 0; !failed && k < c->num_watch; ++k) {
    if (!grads[k]) continue;
    char what[64];
    snprintf(what, sizeof(what), "the gradient of input %d", c->watch[k]);
    if (values[k]) failed = !compare_traced(c, results[r], values[k], what);
    ++r;
  }
  // The op's values against the op run eagerly.
  loom_tensor_handle_t* eager[kMaxOutputs] = {NULL};
  int32_t num_eager = 0;
  if (!failed) {
    status = execute_op(c, inputs, eager, &num_eager);
    if (status) {
      format_status(status, why, sizeof(why));
      report(c, "eager", why);
      failed = true;
    }
  }
  for (int k = 0; !failed && k < num_eager; ++k) {
    loom_tensor_t* want = NULL;
    status = loom_context_resolve(g_ctx, eager[k], &want);
    if (status) {
      format_status(status, why, sizeof(why));
      report(c, "eager", why);
      failed = true;
      break;
    }
    char what[64];
    snprintf(what, sizeof(what), "output %d", k);
    failed = !compare_traced(c, results[r + k], want, what);
    loom_tensor_release(want);
  }
  release_handles(eager, num_eager);
  if (!failed) g_traced_checked++;
  release_handles(forward, num_forward);
  release_handles(results, kMaxTensors + kMaxOutputs);
  release_handles(grads, c->num_watch);
  release_handles(params, c->num_inputs);
  loom_function_release(function);
  loom_op_handler_release(trace);
}

static void note_op_ran(const char* op);

static void run_case(grad_case_t* c) {
  if (g_verbose) fprintf(stderr, "case %s\n", c->name);
  note_op_ran(c->op);
  int failures = g_failures;
  char why[1024];
  loom_tensor_handle_t* inputs[kMaxTensors] = {NULL};
  loom_tensor_handle_t* gradients[kMaxTensors] = {NULL};
  loom_tensor_t* values[kMaxTensors] = {NULL};
  loom_status_t status = new_handles(c->inputs, c->num_inputs, inputs);
  if (!status) status = tape_gradients(c, inputs, gradients);
  if (status) {
    format_status(status, why, sizeof(why));
    report(c, "tape", why);
    release_handles(inputs, c->num_inputs);
    g_failed_cases++;
    return;
  }
  for (int k = 0; k < c->num_watch; ++k) {
    if (!c->expects[k]) {
      if (gradients[k]) report(c, "PyTorch", "a gradient where none is due");
      continue;
    }
    if (!gradients[k]) {
      snprintf(why, sizeof(why), "no gradient for input %d", c->watch[k]);
      report(c, "PyTorch", why);
      continue;
    }
    status = loom_context_resolve(g_ctx, gradients[k], &values[k]);
    if (status) {
      format_status(status, why, sizeof(why));
      report(c, "PyTorch", why);
      continue;
    }
    compare(values[k], c->expects[k], c->rtol, c->atol, why, sizeof(why));
    if (why[0]) {
      char what[1100];
      snprintf(what, sizeof(what), "input %d: %s", c->watch[k], why);
      report(c, "PyTorch", what);
    }
  }
  if (g_traced) {
    // The eager tape's gradients are the reference here.
    if (g_failures == failures) check_traced(c, inputs, values);
  } else if (g_forward) {
    // The tape's gradients are the reference here; their own checks are
    // the reverse-mode run's.
    if (g_failures == failures) check_forward(c, inputs, values);
  } else if (g_failures == failures && c->fd && all_double(c)) {
    check_finite_differences(c, values);
  }
  if (!g_forward && !g_traced && g_failures == failures &&
      c->num_directions == c->num_watch && c->num_hvps == c->num_watch &&
      c->num_watch > 0) {
    check_hvp(c, inputs);
  }
  release_tensors(values, c->num_watch);
  release_handles(gradients, c->num_watch);
  release_handles(inputs, c->num_inputs);
  if (g_failures == failures) {
    g_passed++;
  } else {
    g_failed_cases++;
  }
}

//===----------------------------------------------------------------------===//
// Coverage
//===----------------------------------------------------------------------===//

// Every op of the built-in kernel library.
static const char* const kKernelOps[] = {
    "Abs",
    "Add",
    "AddN",
    "AddV2",
    "All",
    "Any",
    "ArgMax",
    "ArgMin",
    "Assert",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "AssignVariableOp",
    "AvgPool",
    "AvgPoolGrad",
    "BatchMatMulV2",
    "BiasAdd",
    "BiasAddGrad",
    "BiasAddV1",
    "BroadcastGradientArgs",
    "BroadcastTo",
    "Cast",
    "Ceil",
    "ClipByValue",
    "Concat",
    "ConcatV2",
    "Const",
    "Conv2D",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "Cos",
    "Cumprod",
    "Cumsum",
    "DestroyResourceOp",
    "Div",
    "Elu",
    "EluGrad",
    "Equal",
    "Erf",
    "Exp",
    "ExpandDims",
    "Expm1",
    "Fill",
    "Floor",
    "FloorDiv",
    "FloorMod",
    "FusedBatchNormGradV3",
    "FusedBatchNormV3",
    "Gather",
    "GatherV2",
    "GatherNd",
    "Greater",
    "GreaterEqual",
    "Identity",
    "IdentityN",
    "Inv",
    "InvertPermutation",
    "InvGrad",
    "IsFinite",
    "IsInf",
    "IsNan",
    "L2Loss",
    "LeakyRelu",
    "LeakyReluGrad",
    "Less",
    "LessEqual",
    "Log",
    "Log1p",
    "LogSoftmax",
    "LogicalAnd",
    "LogicalNot",
    "LogicalOr",
    "MatMul",
    "MatrixBandPart",
    "MatrixDiagPartV3",
    "MatrixDiagV3",
    "Max",
    "MaxPool",
    "MaxPoolGrad",
    "MaxPoolGradGrad",
    "Maximum",
    "Mean",
    "Min",
    "Minimum",
    "Mul",
    "Neg",
    "NotEqual",
    "OneHot",
    "OnesLike",
    "Pack",
    "Pad",
    "PadV2",
    "Pow",
    "Prod",
    "RandomStandardNormal",
    "RandomUniform",
    "Range",
    "Rank",
    "ReadVariableOp",
    "RealDiv",
    "Reciprocal",
    "ReciprocalGrad",
    "Relu",
    "Relu6",
    "Relu6Grad",
    "ReluGrad",
    "Reshape",
    "ReverseV2",
    "Round",
    "Rsqrt",
    "ScatterNd",
    "RsqrtGrad",
    "Select",
    "SelectV2",
    "Selu",
    "SeluGrad",
    "Shape",
    "ShapeN",
    "Sigmoid",
    "SigmoidGrad",
    "Sign",
    "Sin",
    "Size",
    "Slice",
    "Softmax",
    "SoftmaxCrossEntropyWithLogits",
    "Softplus",
    "SoftplusGrad",
    "Softsign",
    "SoftsignGrad",
    "SparseSoftmaxCrossEntropyWithLogits",
    "Split",
    "SplitV",
    "Sqrt",
    "SqrtGrad",
    "Square",
    "SquaredDifference",
    "StopGradient",
    "Squeeze",
    "StridedSlice",
    "Sub",
    "Sum",
    "Tanh",
    "TensorScatterUpdate",
    "TanhGrad",
    "Tile",
    "TopKV2",
    "Transpose",
    "TruncateDiv",
    "TruncateMod",
    "TruncatedNormal",
    "Unique",
    "Unpack",
    "VarHandleOp",
    "VarIsInitializedOp",
    "Where",
    "ZerosLike",
    "_FusedMatMul",
};

// Ops with no gradient: TensorFlow differentiates them with ops the
// library does not have (FusedBatchNormGradV3's grad), or registers none
// (_FusedMatMul, which grappler makes after differentiation; SoftsignGrad:
// taping them is an error, as in TensorFlow, not a silent zero).
static const char* const kWithoutGradient[] = {"FusedBatchNormGradV3",
                                               "SoftsignGrad", "_FusedMatMul"};

// Differentiable ops a case file cannot run (a resource input).
static const char* const kNotInCases[] = {"ReadVariableOp"};

static bool listed(const char* op, const char* const* list, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(op, list[i]) == 0) return true;
  }
  return false;
}

#define LISTED(op, list) listed((op), (list), sizeof(list) / sizeof((list)[0]))

enum { kNumKernelOps = (int)(sizeof(kKernelOps) / sizeof(kKernelOps[0])) };
static bool g_op_ran[kNumKernelOps];

static void note_op_ran(const char* op) {
  for (int i = 0; i < kNumKernelOps; ++i) {
    if (strcmp(op, kKernelOps[i]) == 0) g_op_ran[i] = true;
  }
}

// Every op has a gradient definition (a function, or marked not
// differentiable) but those known to have none; with `all_cases`, every
// differentiable one ran in some case. Returns the number of problems.
static int check_coverage(bool all_cases) {
  int problems = 0;
  for (int i = 0; i < kNumKernelOps; ++i) {
    const char* op = kKernelOps[i];
    const loom_gradient_def_t* def = loom_gradient_find(op);
    if (!def && !LISTED(op, kWithoutGradient)) {
      fprintf(stderr, "FAIL coverage: no gradient registered for %s\n", op);
      problems++;
    } else if (def && LISTED(op, kWithoutGradient)) {
      fprintf(stderr, "FAIL coverage: %s has a gradient now\n", op);
      problems++;
    }
    if (all_cases && def && def->fn && !g_op_ran[i] &&
        !LISTED(op, kNotInCases)) {
      fprintf(stderr, "FAIL coverage: no case for %s\n", op);
      problems++;
    }
  }
  return problems;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

// Parses one line of a case; 1 at "end", -1 on a parse error.
static int parse_line(grad_case_t* c, char* keyword, char* cursor, int line) {
  if (strcmp(keyword, "op") == 0) {
    snprintf(c->op, sizeof(c->op), "%s", next_token(&cursor));
  } else if (strcmp(keyword, "attr") == 0) {
    return parse_attr(&cursor, line, &c->attrs);
  } else if (strcmp(keyword, "input") == 0) {
    if (c->num_inputs == kMaxTensors) return fail_parse(line, "too many");
    return parse_tensor(&cursor, line, &c->inputs[c->num_inputs++]);
  } else if (strcmp(keyword, "watch") == 0) {
    char* token;
    while ((token = next_token(&cursor)) && c->num_watch < kMaxTensors) {
      c->watch[c->num_watch++] = atoi(token);
    }
  } else if (strcmp(keyword, "outgrad") == 0) {
    if (c->num_outgrads == kMaxOutputs) return fail_parse(line, "too many");
    char* index = next_token(&cursor);
    if (!index) return fail_parse(line, "outgrad: no index");
    c->outgrad_index[c->num_outgrads] = atoi(index);
    return parse_tensor(&cursor, line, &c->outgrads[c->num_outgrads++]);
  } else if (strcmp(keyword, "expect") == 0) {
    if (c->num_expects == kMaxTensors) return fail_parse(line, "too many");
    while (isspace((unsigned char)*cursor)) cursor++;
    if (strncmp(cursor, "none", 4) == 0) {
      c->expects[c->num_expects++] = NULL;
      return 0;
    }
    return parse_tensor(&cursor, line, &c->expects[c->num_expects++]);
  } else if (strcmp(keyword, "direction") == 0) {
    if (c->num_directions == kMaxTensors) return fail_parse(line, "too many");
    return parse_tensor(&cursor, line, &c->directions[c->num_directions++]);
  } else if (strcmp(keyword, "hvp") == 0) {
    if (c->num_hvps == kMaxTensors) return fail_parse(line, "too many");
    return parse_tensor(&cursor, line, &c->hvps[c->num_hvps++]);
  } else if (strcmp(keyword, "tolerance") == 0) {
    char* rtol = next_token(&cursor);
    char* atol = next_token(&cursor);
    if (!rtol || !atol) return fail_parse(line, "tolerance: two values");
    c->rtol = strtod(rtol, NULL);
    c->atol = strtod(atol, NULL);
  } else if (strcmp(keyword, "fd") == 0) {
    char* on = next_token(&cursor);
    c->fd = on && atoi(on) != 0;
    char* rtol = next_token(&cursor);
    char* atol = next_token(&cursor);
    if (rtol && atol) {
      c->fd_rtol = strtod(rtol, NULL);
      c->fd_atol = strtod(atol, NULL);
    }
  } else if (strcmp(keyword, "end") == 0) {
    return c->num_expects == c->num_watch ? 1
                                          : fail_parse(line, "expect count");
  } else {
    return fail_parse(line, "unknown keyword");
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 &&
      (strcmp(argv[1], "--forward") == 0 || strcmp(argv[1], "--traced") == 0)) {
    g_forward = strcmp(argv[1], "--forward") == 0;
    g_traced = !g_forward;
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s [--forward | --traced] CASES_FILE [NAME_FILTER]\n",
            argv[0]);
    return 2;
  }
  FILE* file = fopen(argv[1], "r");
  if (!file) {
    fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  const char* filter = argc > 2 ? argv[2] : NULL;
  g_verbose = getenv("GRADIENTS_VERBOSE") != NULL;
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.num_threads = 1;
  loom_status_t status = loom_context_create(&options, &g_ctx);
  if (status) {
    char text[512];
    format_status(status, text, sizeof(text));
    fprintf(stderr, "setup: %s\n", text);
    fclose(file);
    return 2;
  }
  size_t capacity = 1 << 16;
  char* line = malloc(capacity);
  grad_case_t* c = calloc(1, sizeof(*c));
  int line_number = 0;
  bool in_case = false;
  int result = 0;
  while (line && c && getline(&line, &capacity, file) > 0) {
    line_number++;
    char* cursor = line;
    char* keyword = next_token(&cursor);
    if (!keyword) continue;
    if (strcmp(keyword, "case") == 0) {
      if (in_case) clear_case(c);
      memset(c, 0, sizeof(*c));
      loom_op_attrs_initialize(&c->attrs, loom_allocator_default());
      snprintf(c->name, sizeof(c->name), "%s", next_token(&cursor));
      c->fd = true;
      c->fd_rtol = 1e-6;
      c->fd_atol = 1e-6;
      in_case = true;
      continue;
    }
    if (!in_case) {
      result = fail_parse(line_number, "expected 'case'");
      break;
    }
    int parsed = parse_line(c, keyword, cursor, line_number);
    if (parsed < 0) {
      result = parsed;
      break;
    }
    if (parsed == 1) {
      bool selected =
          !filter || (filter[0] == '-' ? !strstr(c->name, filter + 1)
                                       : strstr(c->name, filter) != NULL);
      if (selected) run_case(c);
      clear_case(c);
      in_case = false;
    }
  }
  if (in_case) clear_case(c);
  free(c);
  free(line);
  fclose(file);
  int problems = result ? 0 : check_coverage(filter == NULL);
  loom_context_destroy(g_ctx);
  if (g_traced) {
    printf(
        "traced: %d cases (%d traced values and gradients equal to eager "
        "ones)\n",
        g_passed + g_failed_cases, g_traced_checked);
  } else if (g_forward) {
    printf(
        "forward mode: %d cases (%d finite-difference checks, %d "
        "forward-over-reverse Hessian-vector products)\n",
        g_passed + g_failed_cases, g_forward_fd_checked, g_forward_hvp_checked);
  } else {
    printf(
        "gradients: %d cases (%d finite-difference checks, %d "
        "Hessian-vector products)\n",
        g_passed + g_failed_cases, g_fd_checked, g_hvp_checked);
  }
  printf("%d passed, %d failed\n", g_passed, g_failed_cases);
  if (problems) printf("coverage: %d problems\n", problems);
  if (result) return 2;
  return g_failures || problems ? 1 : 0;
}
