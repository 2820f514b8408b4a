// The recompute handler (gradient checkpointing): gradients of a deep MLP
// whose layers run in recompute scopes equal those of the plain tape, while
// the tape keeps only the segments' inputs; persistent tapes recompute on
// every gradient; nested tapes give the same second derivatives; the
// segments follow the order of the scopes; the handler passes ops on
// outside a tape; the errors of the API.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autodiff_test_util.h"
#include "handlers/autodiff/grad_ops.h"
#include "loom/autodiff.h"
#include "loom/loom.h"
#include "test_support.h"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// A float tensor of shape dims[0, rank) with values from a fixed
// pseudo-random sequence in [-scale, scale).
static handle_t* random_tensor(const int64_t* dims, int rank, float scale,
                               uint32_t* seed) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, dims, rank));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_FLOAT, &shape, &tensor));
  float* data = loom_tensor_data(tensor);
  int64_t n = loom_shape_num_elements(&shape);
  for (int64_t i = 0; i < n; ++i) {
    *seed = *seed * 1664525u + 1013904223u;
    data[i] = scale * ((float)(*seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f);
  }
  handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

static handle_t* int_vector(const int32_t* values, int64_t count) {
  loom_shape_t shape;
  LOOM_ASSERT_OK(loom_shape_initialize(&shape, &count, 1));
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_tensor_create_dense(loom_allocator_default(),
                                          LOOM_DTYPE_INT32, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, sizeof(int32_t) * (size_t)count);
  handle_t* handle = NULL;
  LOOM_ASSERT_OK(loom_context_new_handle(g_ctx, tensor, &handle));
  loom_tensor_release(tensor);
  return handle;
}

// The float values of a tensor (a malloc'ed array of *out_count).
static float* values_of(handle_t* handle, int64_t* out_count) {
  loom_tensor_t* tensor = NULL;
  LOOM_ASSERT_OK(loom_context_resolve(g_ctx, handle, &tensor));
  assert_int_equal(loom_tensor_dtype(tensor), LOOM_DTYPE_FLOAT);
  int64_t n = loom_tensor_num_elements(tensor);
  float* values = malloc(sizeof(float) * (size_t)(n + 1));
  assert_non_null(values);
  memcpy(values, loom_tensor_data(tensor), sizeof(float) * (size_t)n);
  loom_tensor_release(tensor);
  *out_count = n;
  return values;
}

static void expect_same(handle_t* actual, handle_t* expected,
                        const char* what) {
  assert_non_null(actual);
  assert_non_null(expected);
  int64_t n = 0, m = 0;
  float* a = values_of(actual, &n);
  float* e = values_of(expected, &m);
  assert_int_equal(n, m);
  for (int64_t i = 0; i < n; ++i) {
    double tolerance = 1e-6 * (1.0 + fabs((double)e[i]));
    if (fabs((double)a[i] - (double)e[i]) > tolerance) {
      fail_msg("%s[%lld]: %.9g, expected %.9g", what, (long long)i, a[i], e[i]);
    }
  }
  free(a);
  free(e);
}

static handle_t* op(const char* name, handle_t* const* inputs, int32_t n,
                    const loom__grad_attr_t* attrs, int32_t num_attrs) {
  handle_t* out = NULL;
  LOOM_ASSERT_OK(
      loom__grad_execute_in(g_ctx, name, inputs, n, attrs, num_attrs, &out, 1));
  return out;
}

static handle_t* unary(const char* name, handle_t* x) {
  return op(name, &x, 1, LOOM_GRAD_NO_ATTRS);
}

static handle_t* binary(const char* name, handle_t* a, handle_t* b) {
  return op(name, LOOM_GRAD_INPUTS(a, b), LOOM_GRAD_NO_ATTRS);
}

static loom_op_handler_t* new_tape(bool persistent) {
  loom_tape_options_t options;
  loom_tape_options_initialize(&options);
  options.persistent = persistent;
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_ctx, &options, &tape));
  return tape;
}

static loom_tape_statistics_t statistics_of(loom_op_handler_t* tape) {
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  return statistics;
}

//===----------------------------------------------------------------------===//
// A deep MLP
//===----------------------------------------------------------------------===//

enum { kLayers = 16, kBatch = 256, kWidth = 32, kSources = 2 * kLayers + 1 };

typedef struct mlp_t {
  handle_t* x;
  handle_t* weights[kLayers];
  handle_t* biases[kLayers];
  handle_t* axes;  // {0, 1}
} mlp_t;

static void mlp_create(mlp_t* m) {
  uint32_t seed = 12345;
  int64_t x_dims[2] = {kBatch, kWidth};
  int64_t w_dims[2] = {kWidth, kWidth};
  int64_t b_dims[1] = {kWidth};
  m->x = random_tensor(x_dims, 2, 1.0f, &seed);
  for (int l = 0; l < kLayers; ++l) {
    m->weights[l] = random_tensor(w_dims, 2, 0.35f, &seed);
    m->biases[l] = random_tensor(b_dims, 1, 0.1f, &seed);
  }
  const int32_t axes[2] = {0, 1};
  m->axes = int_vector(axes, 2);
}

static void mlp_release(mlp_t* m) {
  loom_tensor_handle_release(m->x);
  loom__grad_release_all(m->weights, kLayers);
  loom__grad_release_all(m->biases, kLayers);
  loom_tensor_handle_release(m->axes);
}

static void sources_of(const mlp_t* m, handle_t** sources) {
  sources[0] = m->x;
  for (int l = 0; l < kLayers; ++l) {
    sources[1 + l] = m->weights[l];
    sources[1 + kLayers + l] = m->biases[l];
  }
}

// One layer: tanh or relu (alternately) of h W + b, scaled on odd layers by
// a factor computed in the layer from an untracked constant (an op the tape
// does not record, whose result the segment must keep).
static handle_t* layer(const mlp_t* m, int l, handle_t* h) {
  handle_t* product = binary("MatMul", h, m->weights[l]);
  handle_t* biased = binary("BiasAdd", product, m->biases[l]);
  handle_t* activated = unary(l % 2 ? "Relu" : "Tanh", biased);
  loom_tensor_handle_release(product);
  loom_tensor_handle_release(biased);
  if (l % 2 == 0) return activated;
  uint32_t seed = 7;
  int64_t one = 1;
  handle_t* c = random_tensor(&one, 1, 1.0f, &seed);
  handle_t* factor = unary("Exp", c);  // untracked input: not recorded
  handle_t* scaled = binary("Mul", activated, factor);
  loom_tensor_handle_release(c);
  loom_tensor_handle_release(factor);
  loom_tensor_handle_release(activated);
  return scaled;
}

// The loss sum(h^2) of the MLP on a new tape, with recompute segments of
// `segment` layers (0: none), and its gradients; the tape's statistics at
// the end of the forward pass go to *out_statistics.
static void mlp_gradients(const mlp_t* m, int segment, bool persistent,
                          handle_t** gradients,
                          loom_tape_statistics_t* out_statistics,
                          loom_op_handler_t** out_tape) {
  loom_op_handler_t* tape = new_tape(persistent);
  handle_t* sources[kSources];
  sources_of(m, sources);
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
  for (int s = 0; s < kSources; ++s) {
    LOOM_ASSERT_OK(loom_tape_watch(tape, sources[s]));
  }
  handle_t* h = m->x;
  loom_tensor_handle_retain(h);
  loom_op_handler_t* recompute = NULL;
  for (int l = 0; l < kLayers; ++l) {
    if (segment && l % segment == 0) {
      LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute));
      LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, recompute));
    }
    handle_t* next = layer(m, l, h);
    loom_tensor_handle_release(h);
    h = next;
    if (segment && ((l + 1) % segment == 0 || l + 1 == kLayers)) {
      LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
      loom_op_handler_release(recompute);
      recompute = NULL;
    }
  }
  handle_t* squared = binary("Mul", h, h);
  handle_t* loss =
      op("Sum", LOOM_GRAD_INPUTS(squared, m->axes), LOOM_GRAD_NO_ATTRS);
  loom_tensor_handle_release(squared);
  loom_tensor_handle_release(h);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  *out_statistics = statistics_of(tape);
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &loss, 1, sources, kSources, NULL,
                                    LOOM_UNCONNECTED_NONE, gradients));
  loom_tensor_handle_release(loss);
  if (out_tape) {
    *out_tape = tape;
  } else {
    loom_op_handler_release(tape);
  }
}

static void expect_same_gradients(handle_t** actual, handle_t** expected,
                                  const char* what) {
  char name[96];
  for (int s = 0; s < kSources; ++s) {
    snprintf(name, sizeof(name), "%s: gradient %d", what, s);
    expect_same(actual[s], expected[s], name);
  }
}

static void deep_mlp_gradients_are_unchanged_by_recompute(void** state) {
  (void)state;
  mlp_t m;
  mlp_create(&m);
  handle_t* plain[kSources];
  loom_tape_statistics_t plain_statistics;
  mlp_gradients(&m, 0, false, plain, &plain_statistics, NULL);
  assert_int_equal(plain_statistics.num_recompute_segments, 0);
  const int segments[3] = {1, 4, kLayers};
  for (int i = 0; i < 3; ++i) {
    handle_t* recomputed[kSources];
    loom_tape_statistics_t statistics;
    mlp_gradients(&m, segments[i], false, recomputed, &statistics, NULL);
    assert_int_equal(statistics.num_recompute_segments,
                     (kLayers + segments[i] - 1) / segments[i]);
    assert_int_equal(statistics.num_ops, plain_statistics.num_ops);
    char what[64];
    snprintf(what, sizeof(what), "segments of %d layers", segments[i]);
    expect_same_gradients(recomputed, plain, what);
    loom__grad_release_all(recomputed, kSources);
  }
  loom__grad_release_all(plain, kSources);
  mlp_release(&m);
}

// At the end of the forward pass, a plain tape keeps every layer's
// activations; with segments of 4 layers it keeps the segments' inputs
// (and the weights and biases, which the caller holds anyway).
static void recompute_keeps_only_segment_inputs(void** state) {
  (void)state;
  mlp_t m;
  mlp_create(&m);
  int64_t parameter_bytes =
      kLayers * (int64_t)sizeof(float) * (kWidth * kWidth + kWidth);
  int64_t activation_bytes = (int64_t)sizeof(float) * kBatch * kWidth;
  const int segments[4] = {0, 1, 4, kLayers};
  int64_t kept[4];
  for (int i = 0; i < 4; ++i) {
    handle_t* gradients[kSources];
    loom_tape_statistics_t statistics;
    mlp_gradients(&m, segments[i], false, gradients, &statistics, NULL);
    kept[i] = statistics.kept_bytes;
    printf(
        "segments of %2d layers: %lld ops, %lld tensors, %lld bytes kept "
        "(%lld of them parameters)\n",
        segments[i] ? segments[i] : 0, (long long)statistics.num_ops,
        (long long)statistics.num_kept_tensors,
        (long long)statistics.kept_bytes, (long long)parameter_bytes);
    loom__grad_release_all(gradients, kSources);
  }
  // Plain: at least one activation per layer besides the parameters.
  assert_true(kept[0] >= parameter_bytes + kLayers * activation_bytes);
  // Segments of 4: the 4 segment inputs and the last activation (the loss
  // h * h keeps it), besides the parameters and the small constants.
  assert_true(kept[2] <= parameter_bytes + 5 * activation_bytes + 1024);
  // One segment: the input x and the last activation.
  assert_true(kept[3] <= parameter_bytes + 2 * activation_bytes + 1024);
  assert_true(kept[3] * 4 < kept[0]);
  mlp_release(&m);
}

// A persistent tape recomputes on each gradient call and keeps only the
// segments' inputs between them: the recomputed tensors go when the
// gradient is done.
static void persistent_tape_keeps_only_segment_inputs_after_gradient(
    void** state) {
  (void)state;
  mlp_t m;
  mlp_create(&m);
  handle_t* plain[kSources];
  loom_tape_statistics_t plain_statistics;
  mlp_gradients(&m, 0, false, plain, &plain_statistics, NULL);
  handle_t* recomputed[kSources];
  loom_tape_statistics_t statistics;
  loom_op_handler_t* tape = NULL;
  mlp_gradients(&m, 4, true, recomputed, &statistics, &tape);
  expect_same_gradients(recomputed, plain, "persistent tape");
  loom_tape_statistics_t after = statistics_of(tape);
  assert_int_equal(after.kept_bytes, statistics.kept_bytes);
  assert_int_equal(after.num_kept_tensors, statistics.num_kept_tensors);
  loom__grad_release_all(recomputed, kSources);
  loom__grad_release_all(plain, kSources);
  loom_op_handler_release(tape);
  mlp_release(&m);
}

// Two targets kept by the caller, two gradient calls on one persistent
// tape: both recompute the segment and agree with the plain tape.
static void persistent_tape_gives_the_same_gradients_twice(void** state) {
  (void)state;
  uint32_t seed = 99;
  int64_t dims[2] = {8, 8};
  handle_t* x = random_tensor(dims, 2, 1.0f, &seed);
  handle_t* w = random_tensor(dims, 2, 0.5f, &seed);
  handle_t* results[2][2];
  for (int variant = 0; variant < 2; ++variant) {
    loom_op_handler_t* tape = new_tape(true);
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, tape));
    LOOM_ASSERT_OK(loom_tape_watch(tape, w));
    loom_op_handler_t* recompute = NULL;
    if (variant) {
      LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute));
      LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, recompute));
    }
    handle_t* a = binary("MatMul", x, w);
    handle_t* b = unary("Tanh", a);
    handle_t* c = binary("MatMul", b, w);
    handle_t* y = unary("Sigmoid", c);
    if (variant) {
      LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
      loom_op_handler_release(recompute);
    }
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* intermediates[3] = {a, b, c};
    loom__grad_release_all(intermediates, 3);
    for (int call = 0; call < 2; ++call) {
      LOOM_ASSERT_OK(loom_tape_gradient(tape, &y, 1, &w, 1, NULL,
                                        LOOM_UNCONNECTED_NONE,
                                        &results[variant][call]));
    }
    loom_tensor_handle_release(y);
    loom_op_handler_release(tape);
  }
  expect_same(results[1][0], results[0][0], "first call");
  expect_same(results[1][1], results[0][0], "second call");
  expect_same(results[0][1], results[0][0], "plain second call");
  loom__grad_release_all(&results[0][0], 4);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(w);
}

// Nested tapes around a recompute scope: the inner gradient recomputes
// the segment under the outer tape, which records the recomputation, so
// the Hessian-vector product is the plain one.
static void nested_tapes_give_the_same_second_derivatives(void** state) {
  (void)state;
  uint32_t seed = 3;
  int64_t dims[1] = {6};
  handle_t* x = random_tensor(dims, 1, 1.0f, &seed);
  handle_t* v = random_tensor(dims, 1, 1.0f, &seed);
  const int32_t axis[1] = {0};
  handle_t* axes = int_vector(axis, 1);
  handle_t* hvp[2] = {NULL, NULL};
  for (int variant = 0; variant < 2; ++variant) {
    loom_op_handler_t* outer = new_tape(false);
    loom_op_handler_t* inner = new_tape(false);
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, outer));
    LOOM_ASSERT_OK(loom_tape_watch(outer, x));
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, inner));
    LOOM_ASSERT_OK(loom_tape_watch(inner, x));
    loom_op_handler_t* recompute = NULL;
    if (variant) {
      LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute));
      LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, recompute));
    }
    handle_t* t = unary("Tanh", x);
    handle_t* s = unary("Sin", t);
    handle_t* p = binary("Mul", s, t);
    if (variant) {
      LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
      loom_op_handler_release(recompute);
    }
    handle_t* f = op("Sum", LOOM_GRAD_INPUTS(p, axes), LOOM_GRAD_NO_ATTRS);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    handle_t* g = NULL;
    LOOM_ASSERT_OK(loom_tape_gradient(inner, &f, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &g));
    handle_t* gv = binary("Mul", g, v);
    handle_t* dot = op("Sum", LOOM_GRAD_INPUTS(gv, axes), LOOM_GRAD_NO_ATTRS);
    LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
    LOOM_ASSERT_OK(loom_tape_gradient(outer, &dot, 1, &x, 1, NULL,
                                      LOOM_UNCONNECTED_NONE, &hvp[variant]));
    handle_t* all[] = {t, s, p, f, g, gv, dot};
    loom__grad_release_all(all, 7);
    loom_op_handler_release(inner);
    loom_op_handler_release(outer);
  }
  expect_same(hvp[1], hvp[0], "Hessian-vector product");
  loom__grad_release_all(hvp, 2);
  handle_t* all[] = {x, v, axes};
  loom__grad_release_all(all, 3);
}

// The segment of an op is the one of the outermost recompute scope below
// the tape: the handler names it on the invocation, and the tapes below it
// (entered before it) read it there.
typedef enum scopes_t {
  kNoRecompute,
  kNestedRecompute,  // tape, recompute, recompute
  kRecomputeFirst,   // recompute, tape: the tape sees no segment
  kBetweenTapes,     // tape, recompute, tape
} scopes_t;

// f(x) = sum(sin(tanh(x)) * tanh(x)) in the scopes `scopes` (the recompute
// scopes around Tanh, Sin and Mul), its gradient from the first tape
// entered, and the statistics of the tapes (the first, then the second).
static handle_t* gradient_in_scopes(scopes_t scopes, handle_t* x,
                                    handle_t* axes,
                                    loom_tape_statistics_t* statistics) {
  loom_op_handler_t* tapes[2] = {new_tape(false), new_tape(false)};
  loom_op_handler_t* recompute[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute[0]));
  LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute[1]));
  // The scopes entered, outermost first.
  loom_op_handler_t* order[3] = {tapes[0], NULL, NULL};
  if (scopes == kNestedRecompute) {
    order[1] = recompute[0];
    order[2] = recompute[1];
  } else if (scopes == kRecomputeFirst) {
    order[0] = recompute[0];
    order[1] = tapes[0];
  } else if (scopes == kBetweenTapes) {
    order[1] = recompute[0];
    order[2] = tapes[1];
  }
  int entered = 0;
  for (; entered < 3 && order[entered]; ++entered) {
    LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, order[entered]));
  }
  for (int i = 0; i < 2; ++i) LOOM_ASSERT_OK(loom_tape_watch(tapes[i], x));
  handle_t* t = unary("Tanh", x);
  handle_t* s = unary("Sin", t);
  handle_t* p = binary("Mul", s, t);
  handle_t* f = op("Sum", LOOM_GRAD_INPUTS(p, axes), LOOM_GRAD_NO_ATTRS);
  while (entered-- > 0) LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  statistics[0] = statistics_of(tapes[0]);
  statistics[1] = statistics_of(tapes[1]);
  handle_t* g = NULL;
  LOOM_ASSERT_OK(loom_tape_gradient(tapes[0], &f, 1, &x, 1, NULL,
                                    LOOM_UNCONNECTED_NONE, &g));
  handle_t* all[] = {t, s, p, f};
  loom__grad_release_all(all, 4);
  for (int i = 0; i < 2; ++i) {
    loom_op_handler_release(recompute[i]);
    loom_op_handler_release(tapes[i]);
  }
  return g;
}

static void recompute_segments_follow_the_scopes(void** state) {
  (void)state;
  uint32_t seed = 9;
  int64_t dims[1] = {5};
  handle_t* x = random_tensor(dims, 1, 1.0f, &seed);
  const int32_t axis[1] = {0};
  handle_t* axes = int_vector(axis, 1);
  loom_tape_statistics_t plain[2], statistics[2];
  handle_t* expected = gradient_in_scopes(kNoRecompute, x, axes, plain);
  assert_int_equal(plain[0].num_ops, 4);
  assert_int_equal(plain[0].num_recompute_segments, 0);
  // Nested recompute scopes: one segment, the outer scope's.
  handle_t* g = gradient_in_scopes(kNestedRecompute, x, axes, statistics);
  assert_int_equal(statistics[0].num_ops, 4);
  assert_int_equal(statistics[0].num_recompute_segments, 1);
  assert_true(statistics[0].kept_bytes < plain[0].kept_bytes);
  expect_same(g, expected, "nested recompute scopes");
  loom_tensor_handle_release(g);
  // A tape entered inside a recompute scope is above it: no segment.
  g = gradient_in_scopes(kRecomputeFirst, x, axes, statistics);
  assert_int_equal(statistics[0].num_recompute_segments, 0);
  assert_int_equal(statistics[0].kept_bytes, plain[0].kept_bytes);
  expect_same(g, expected, "a tape inside a recompute scope");
  loom_tensor_handle_release(g);
  // Between two tapes: the tape below records segments, the one above not.
  g = gradient_in_scopes(kBetweenTapes, x, axes, statistics);
  assert_int_equal(statistics[0].num_recompute_segments, 1);
  assert_int_equal(statistics[1].num_recompute_segments, 0);
  assert_int_equal(statistics[1].num_ops, 4);
  expect_same(g, expected, "a recompute scope between tapes");
  loom_tensor_handle_release(g);
  handle_t* all[] = {x, axes, expected};
  loom__grad_release_all(all, 3);
}

// Outside a tape the handler only passes ops on: same values, CPU tensors.
static void recompute_outside_a_tape_passes_ops_on(void** state) {
  (void)state;
  uint32_t seed = 5;
  int64_t dims[1] = {4};
  handle_t* x = random_tensor(dims, 1, 1.0f, &seed);
  handle_t* expected = unary("Tanh", x);
  loom_op_handler_t* recompute = NULL;
  LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &recompute));
  assert_string_equal(loom_op_handler_type_name(recompute), "RECOMPUTE");
  LOOM_ASSERT_OK(loom_context_enter_scope(g_ctx, recompute));
  handle_t* y = unary("Tanh", x);
  LOOM_ASSERT_OK(loom_context_exit_scope(g_ctx));
  assert_ptr_equal(loom_tensor_handle_handler(y), loom_context_cpu(g_ctx));
  expect_same(y, expected, "tanh");
  char text[96];
  loom_op_handler_vtable(recompute)->debug_string(recompute, text,
                                                  sizeof(text));
  assert_non_null(strstr(text, "recompute handler (segment "));
  loom_op_handler_release(recompute);
  handle_t* all[] = {x, expected, y};
  loom__grad_release_all(all, 3);
}

static void api_checks_its_arguments(void** state) {
  (void)state;
  loom_op_handler_t* handler = (loom_op_handler_t*)&handler;
  LOOM_ASSERT_STATUS(loom_recompute_handler_create(NULL, &handler),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_recompute_handler_create: context is NULL");
  assert_null(handler);  // cleared even on error
  LOOM_ASSERT_STATUS(loom_recompute_handler_create(g_ctx, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_recompute_handler_create: out_handler is NULL");
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_STATUS(loom_tape_statistics(NULL, &statistics),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tape_statistics: tape is NULL");
  LOOM_ASSERT_OK(loom_recompute_handler_create(g_ctx, &handler));
  LOOM_ASSERT_STATUS(loom_tape_statistics(handler, &statistics),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "the handler is not a gradient tape (type 'RECOMPUTE')");
  loom_op_handler_release(handler);
  loom_op_handler_t* tape = new_tape(false);
  LOOM_ASSERT_STATUS(loom_tape_statistics(tape, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_tape_statistics: out_statistics is NULL");
  statistics.struct_size = sizeof(size_t);
  LOOM_ASSERT_STATUS(loom_tape_statistics(tape, &statistics),
                     LOOM_STATUS_INVALID_ARGUMENT, "struct_size is too small");
  statistics.struct_size = sizeof(statistics);
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  assert_int_equal(statistics.num_ops, 0);
  assert_int_equal(statistics.kept_bytes, 0);
  loom_op_handler_release(tape);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(deep_mlp_gradients_are_unchanged_by_recompute),
      cmocka_unit_test(recompute_keeps_only_segment_inputs),
      cmocka_unit_test(
          persistent_tape_keeps_only_segment_inputs_after_gradient),
      cmocka_unit_test(persistent_tape_gives_the_same_gradients_twice),
      cmocka_unit_test(nested_tapes_give_the_same_second_derivatives),
      cmocka_unit_test(recompute_segments_follow_the_scopes),
      cmocka_unit_test(recompute_outside_a_tape_passes_ops_on),
      cmocka_unit_test(api_checks_its_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
