// The gradient tape under allocation failures: a training step of a small
// MLP — a context, a tape (persistent or not), watched tensors or
// resource variables read in the tape's scope, MatMul, BiasAdd, Relu,
// SparseSoftmaxCrossEntropyWithLogits (and Sum: kSumLoss) recorded, the
// gradients (twice on a persistent tape) — runs with allocation k failing, for
// k = 1, 2, ... until a run completes without reaching allocation k. Every
// failed run must return an error status (RESOURCE_EXHAUSTED), and every run
// must free everything it allocated; a run that recovers from its failure (a
// cache that is only an optimisation) must still give the right gradients, and
// the last run's gradients must equal those of a run without fault
// injection.
//
// The context, the tensors and the tape all allocate from the fault
// allocator: the context through its options, the tape (which has no
// allocator option: it takes the default allocator) and the tensors through
// loom_allocator_set_default for the run's duration. The context has no
// worker threads, so every run allocates in the same order.

#include <stdlib.h>

#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

typedef loom_tensor_handle_t handle_t;

enum {
  kBatch = 4,
  kIn = 3,
  kHidden = 5,
  kClasses = 3,
  kNumParams = 4,
  kMaxParam =
      kIn * kHidden > kHidden* kClasses ? kIn* kHidden : kHidden* kClasses,
};

#define D LOOM_DTYPE_DOUBLE

static const int64_t kParamDims[kNumParams][2] = {
    {kIn, kHidden}, {kHidden, 0}, {kHidden, kClasses}, {kClasses, 0}};
static const int kParamRanks[kNumParams] = {2, 1, 2, 1};

typedef struct step_config_t {
  bool persistent;
  bool variables;  // resource variables read in scope, else watched tensors
} step_config_t;

// The target: the Sum of the examples' cross-entropies (kSumLoss; off, the
// per-example losses, whose gradient is that of their sum). A reduction
// that cannot allocate its accumulators must fail, not return garbage.
enum { kSumLoss = 1, kLossSize = kSumLoss ? 1 : kBatch };

// What a step computes.
typedef struct step_result_t {
  double loss[kLossSize];
  double grads[kNumParams][kMaxParam];
} step_result_t;

static int64_t param_size(int p) {
  return kParamRanks[p] == 2 ? kParamDims[p][0] * kParamDims[p][1]
                             : kParamDims[p][0];
}

static double param_value(int p, int64_t i) {
  return 0.1 * (double)((i * 7 + p * 3) % 11) - 0.45 + 0.01 * p;
}

static double x_value(int64_t i) {
  return 0.2 * (double)((i * 5) % 9) - 0.7;
}

//===----------------------------------------------------------------------===//
// The step, returning statuses and releasing everything on every path
//===----------------------------------------------------------------------===//

typedef struct step_t {
  loom_allocator_t allocator;
  loom_context_t* context;
  handle_t* x;
  handle_t* labels;
  handle_t* params[kNumParams];     // tensors, or the variables' values
  handle_t* resources[kNumParams];  // the variables (variables only)
  handle_t* reads[kNumParams];      // read in the tape's scope
  handle_t* loss;
  handle_t* grads[kNumParams];
  handle_t* again[kNumParams];
  loom_op_handler_t* tape;
} step_t;

static loom_status_t new_handle(step_t* s, loom_dtype_t dtype,
                                const int64_t* dims, int rank,
                                const double* values, handle_t** out) {
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_tensor_create_dense(s->allocator, dtype, &shape, &tensor));
  int64_t n = loom_shape_num_elements(&shape);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == D) {
      ((double*)loom_tensor_data(tensor))[i] = values[i];
    } else if (dtype == LOOM_DTYPE_INT64) {
      ((int64_t*)loom_tensor_data(tensor))[i] = (int64_t)values[i];
    } else {
      ((int32_t*)loom_tensor_data(tensor))[i] = (int32_t)values[i];
    }
  }
  loom_status_t status = loom_context_new_handle(s->context, tensor, out);
  loom_tensor_release(tensor);
  return status;
}

static loom_status_t op(step_t* s, const char* name, handle_t* const* inputs,
                        int32_t n, const loom__grad_attr_t* attrs,
                        int32_t num_attrs, handle_t** results,
                        int32_t num_results) {
  return loom__grad_execute_in(s->context, name, inputs, n, attrs, num_attrs,
                               results, num_results);
}

static loom_status_t op2(step_t* s, const char* name, handle_t* a, handle_t* b,
                         handle_t** out) {
  return op(s, name, LOOM_GRAD_INPUTS(a, b), LOOM_GRAD_NO_ATTRS, out, 1);
}

static loom_status_t read_values(step_t* s, handle_t* handle, double* out,
                                 int64_t count) {
  if (!handle) return loom_make_status(LOOM_STATUS_INTERNAL, "no gradient");
  loom_tensor_t* tensor = NULL;
  LOOM_RETURN_IF_ERROR(loom_context_resolve(s->context, handle, &tensor));
  loom_tensor_t* dense = NULL;
  loom_status_t status =
      loom_tensor_convert_to_dense(s->allocator, tensor, &dense);
  loom_tensor_release(tensor);
  if (status) return status;
  if (loom_tensor_dtype(dense) != D ||
      loom_tensor_num_elements(dense) != count) {
    status = loom_make_status(LOOM_STATUS_INTERNAL, "wrong gradient shape");
  } else {
    memcpy(out, loom_tensor_data(dense), sizeof(double) * (size_t)count);
  }
  loom_tensor_release(dense);
  return status;
}

static loom_status_t make_inputs(step_t* s) {
  double x[kBatch * kIn];
  for (int64_t i = 0; i < kBatch * kIn; ++i) x[i] = x_value(i);
  const int64_t x_dims[2] = {kBatch, kIn};
  LOOM_RETURN_IF_ERROR(new_handle(s, D, x_dims, 2, x, &s->x));
  double labels[kBatch];
  for (int i = 0; i < kBatch; ++i) labels[i] = (i * 2) % kClasses;
  const int64_t label_dims[1] = {kBatch};
  LOOM_RETURN_IF_ERROR(
      new_handle(s, LOOM_DTYPE_INT64, label_dims, 1, labels, &s->labels));
  for (int p = 0; p < kNumParams; ++p) {
    double values[kMaxParam];
    for (int64_t i = 0; i < param_size(p); ++i) values[i] = param_value(p, i);
    LOOM_RETURN_IF_ERROR(
        new_handle(s, D, kParamDims[p], kParamRanks[p], values, &s->params[p]));
  }
  return loom_ok_status();
}

// Anonymous variables (freed with their handles) holding the parameters.
static loom_status_t make_variables(step_t* s) {
  for (int p = 0; p < kNumParams; ++p) {
    LOOM_RETURN_IF_ERROR(
        op(s, "VarHandleOp", NULL, 0,
           LOOM_GRAD_ATTRS(
               LOOM_GRAD_TYPE("dtype", D),
               LOOM_GRAD_SHAPE("shape", kParamDims[p], kParamRanks[p])),
           &s->resources[p], 1));
    LOOM_RETURN_IF_ERROR(op(
        s, "AssignVariableOp", LOOM_GRAD_INPUTS(s->resources[p], s->params[p]),
        LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", D)), NULL, 0));
  }
  return loom_ok_status();
}

// loss = xent(relu(x w1 + b1) w2 + b2, labels) (summed with kSumLoss), in
// the tape's scope.
static loom_status_t forward(step_t* s, const step_config_t* config) {
  handle_t** params = s->params;
  for (int p = 0; p < kNumParams; ++p) {
    if (config->variables) {
      LOOM_RETURN_IF_ERROR(op(s, "ReadVariableOp", &s->resources[p], 1,
                              LOOM_GRAD_ATTRS(LOOM_GRAD_TYPE("dtype", D)),
                              &s->reads[p], 1));
    } else {
      LOOM_RETURN_IF_ERROR(loom_tape_watch(s->tape, s->params[p]));
    }
  }
  if (config->variables) params = s->reads;
  handle_t* z1 = NULL;
  handle_t* a1 = NULL;
  handle_t* h = NULL;
  handle_t* z2 = NULL;
  handle_t* logits = NULL;
  handle_t* xent[2] = {NULL, NULL};
  handle_t* axis = NULL;
  loom_status_t status = op2(s, "MatMul", s->x, params[0], &z1);
  if (!status) status = op2(s, "BiasAdd", z1, params[1], &a1);
  if (!status) status = op(s, "Relu", &a1, 1, LOOM_GRAD_NO_ATTRS, &h, 1);
  if (!status) status = op2(s, "MatMul", h, params[2], &z2);
  if (!status) status = op2(s, "BiasAdd", z2, params[3], &logits);
  if (!status) {
    status =
        op(s, "SparseSoftmaxCrossEntropyWithLogits",
           LOOM_GRAD_INPUTS(logits, s->labels), LOOM_GRAD_NO_ATTRS, xent, 2);
  }
  const double zero = 0;
  if (!status && kSumLoss) {
    status = new_handle(s, LOOM_DTYPE_INT32, NULL, 0, &zero, &axis);
    if (!status) status = op2(s, "Sum", xent[0], axis, &s->loss);
  } else if (!status) {
    s->loss = xent[0];
    xent[0] = NULL;
  }
  handle_t* all[] = {z1, a1, h, z2, logits, xent[0], xent[1], axis};
  loom__grad_release_all(all, 8);
  return status;
}

static loom_status_t run_step(step_t* s, const step_config_t* config,
                              step_result_t* result) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.allocator = s->allocator;
  options.num_threads = 0;
  LOOM_RETURN_IF_ERROR(loom_context_create(&options, &s->context));
  loom_status_t status = make_inputs(s);
  if (!status && config->variables) status = make_variables(s);
  loom_tape_options_t tape_options;
  loom_tape_options_initialize(&tape_options);
  tape_options.persistent = config->persistent;
  tape_options.watch_accessed_variables = true;
  if (!status) status = loom_tape_create(s->context, &tape_options, &s->tape);
  if (!status) {
    status = loom_context_enter_scope(s->context, s->tape);
    if (!status) {
      status = forward(s, config);
      loom_status_t exited = loom_context_exit_scope(s->context);
      if (status) {
        loom_status_free(exited);
      } else {
        status = exited;
      }
    }
  }
  handle_t** sources = config->variables ? s->resources : s->params;
  if (!status) {
    status = loom_tape_gradient(s->tape, &s->loss, 1, sources, kNumParams, NULL,
                                LOOM_UNCONNECTED_NONE, s->grads);
  }
  if (!status && config->persistent) {
    loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
    status = loom_tape_statistics(s->tape, &statistics);
    if (!status && statistics.num_ops == 0) {
      status = loom_make_status(LOOM_STATUS_INTERNAL, "nothing recorded");
    }
    if (!status) {
      status = loom_tape_gradient(s->tape, &s->loss, 1, sources, kNumParams,
                                  NULL, LOOM_UNCONNECTED_NONE, s->again);
    }
  }
  if (!status) status = read_values(s, s->loss, result->loss, kLossSize);
  for (int p = 0; p < kNumParams && !status; ++p) {
    status = read_values(s, s->grads[p], result->grads[p], param_size(p));
  }
  for (int p = 0; p < kNumParams && !status && config->persistent; ++p) {
    double again[kMaxParam];
    status = read_values(s, s->again[p], again, param_size(p));
    if (!status && memcmp(again, result->grads[p],
                          sizeof(double) * (size_t)param_size(p)) != 0) {
      status =
          loom_make_status(LOOM_STATUS_INTERNAL,
                           "the second gradient of parameter %d differs", p);
    }
  }
  return status;
}

static void release_step(step_t* s) {
  loom__grad_release_all(s->grads, kNumParams);
  loom__grad_release_all(s->again, kNumParams);
  loom__grad_release_all(s->reads, kNumParams);
  loom__grad_release_all(s->resources, kNumParams);
  loom__grad_release_all(s->params, kNumParams);
  loom_tensor_handle_release(s->loss);
  loom_tensor_handle_release(s->labels);
  loom_tensor_handle_release(s->x);
  loom_op_handler_release(s->tape);
  if (s->context) loom_context_destroy(s->context);
}

// One step with everything allocated from `allocator`.
static loom_status_t step(loom_allocator_t allocator,
                          const step_config_t* config, step_result_t* result) {
  memset(result, 0, sizeof(*result));
  step_t s;
  memset(&s, 0, sizeof(s));
  s.allocator = allocator;
  loom_allocator_t previous = loom_allocator_set_default(allocator);
  loom_status_t status = run_step(&s, config, result);
  release_step(&s);
  loom_allocator_set_default(previous);
  return status;
}

//===----------------------------------------------------------------------===//
// The sweep
//===----------------------------------------------------------------------===//

static void expect_same_result(const step_result_t* actual,
                               const step_result_t* expected, const char* what,
                               int64_t k) {
  for (int i = 0; i < kLossSize; ++i) {
    if (memcmp(&actual->loss[i], &expected->loss[i], sizeof(double)) != 0) {
      fail_msg("%s (k=%lld): loss[%d] %.17g, expected %.17g", what,
               (long long)k, i, actual->loss[i], expected->loss[i]);
    }
  }
  for (int p = 0; p < kNumParams; ++p) {
    for (int64_t i = 0; i < param_size(p); ++i) {
      if (memcmp(&actual->grads[p][i], &expected->grads[p][i],
                 sizeof(double)) != 0) {
        fail_msg(
            "%s (k=%lld): gradient of parameter %d [%lld]: %.17g, "
            "expected %.17g",
            what, (long long)k, p, (long long)i, actual->grads[p][i],
            expected->grads[p][i]);
      }
    }
  }
}

static void sweep(const step_config_t* config, const char* what) {
  // Without fault injection, on the process's allocators: also registers
  // the gradients and ops and fills the process-wide tables, so that the
  // runs below allocate only what they free.
  step_result_t reference;
  LOOM_ASSERT_OK(step(loom_allocator_default(), config, &reference));
  bool nonzero = false;
  for (int p = 0; p < kNumParams; ++p) {
    for (int64_t i = 0; i < param_size(p); ++i) {
      nonzero |= reference.grads[p][i] != 0;
    }
  }
  assert_true(nonzero);

  loom_fault_allocator_t* fault = NULL;
  LOOM_ASSERT_OK(loom_fault_allocator_create(loom_allocator_system(), &fault));
  loom_allocator_t allocator = loom_fault_allocator_allocator(fault);
  int64_t recovered = 0;
  int64_t k = 1;
  for (;; ++k) {
    if (k > 100000) fail_msg("%s: the step never ran without a failure", what);
    int64_t injected_before = loom_fault_allocator_injected_failures(fault);
    loom_fault_allocator_fail_nth(fault, k);
    step_result_t result;
    loom_status_t status = step(allocator, config, &result);
    bool injected =
        loom_fault_allocator_injected_failures(fault) > injected_before;
    int64_t live = loom_fault_allocator_live_count(fault);
    if (live != 0) {
      char text[512] = "OK";
      if (status) loom_status_format(status, text, sizeof(text));
      loom_status_free(status);
      fail_msg("%s: allocation %lld failed and %lld blocks leaked (status: %s)",
               what, (long long)k, (long long)live, text);
    }
    if (!injected) {
      LOOM_ASSERT_OK(status);
      expect_same_result(&result, &reference, what, k);
      break;
    }
    if (!status) {  // recovered: the result must still be right
      recovered++;
      expect_same_result(&result, &reference, what, k);
      continue;
    }
    if (loom_status_code(status) != LOOM_STATUS_RESOURCE_EXHAUSTED) {
      char text[512];
      loom_status_format(status, text, sizeof(text));
      loom_status_free(status);
      fail_msg("%s: allocation %lld failed with an unexpected status: %s", what,
               (long long)k, text);
    }
    loom_status_free(status);
  }
  loom_fault_allocator_destroy(fault);
  print_message(
      "%s: %lld allocations, each failed once (%lld runs recovered)\n", what,
      (long long)(k - 1), (long long)recovered);
  assert_true(k > 50);
}

static void tensors_not_persistent(void** state) {
  (void)state;
  step_config_t config = {.persistent = false, .variables = false};
  sweep(&config, "watched tensors, not persistent");
}

static void tensors_persistent(void** state) {
  (void)state;
  step_config_t config = {.persistent = true, .variables = false};
  sweep(&config, "watched tensors, persistent");
}

static void variables_not_persistent(void** state) {
  (void)state;
  step_config_t config = {.persistent = false, .variables = true};
  sweep(&config, "variables, not persistent");
}

static void variables_persistent(void** state) {
  (void)state;
  step_config_t config = {.persistent = true, .variables = true};
  sweep(&config, "variables, persistent");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tensors_not_persistent),
      cmocka_unit_test(tensors_persistent),
      cmocka_unit_test(variables_not_persistent),
      cmocka_unit_test(variables_persistent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
