// Eager functions (loom/function.h): building and checking them, calling
// them by name and through PartitionedCall in synchronous and asynchronous
// contexts, nested and polymorphic functions, list outputs, list
// arguments and control outputs, a gradient tape
// around a call (the call is recorded as one op: the gradients equal those
// of the same ops run eagerly) and a forward accumulator, and the errors of
// each step.
//
// Reference values from NumPy (float32):
//   x = [1.5, -2, 0.5], y = [0.25, 4, -3]
//   x*y+x = [1.875, -10, -1]; (x*y+x)*y = [0.46875, -40, 3]
//   d(sum(x*y+x))/dx = y+1 = [1.25, 5, -2]; /dy = x = [1.5, -2, 0.5]
//   m = [[1, 2], [3, 4]]: m[0]+m[1] = [4, 6]

#include "loom/autodiff.h"
#include "loom/function.h"
#include "loom/loom.h"
#include "test_support.h"

static loom_context_t* g_context;

static const float kX[3] = {1.5f, -2, 0.5f};
static const float kY[3] = {0.25f, 4, -3};
static const float kF[3] = {1.875f, -10, -1};
static const float kG[3] = {0.46875f, -40, 3};

static loom_context_t* new_context(bool async) {
  loom_context_options_t options;
  loom_context_options_initialize(&options);
  options.async = async;
  loom_context_t* context = NULL;
  LOOM_ASSERT_OK(loom_context_create(&options, &context));
  return context;
}

static int setup(void** state) {
  (void)state;
  g_context = new_context(false);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  loom_context_destroy(g_context);
  return 0;
}

static loom_tensor_handle_t* vector(loom_context_t* context,
                                    const float* values) {
  int64_t three = 3;
  return loom_test_tensor(context, LOOM_DTYPE_FLOAT, values, 1, &three);
}

static void add_f(loom_context_t* context, const char* name) {
  loom_function_t* function = loom_test_mul_add_function(name, NULL);
  LOOM_ASSERT_OK(loom_context_add_function(context, function));
  loom_function_release(function);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

static void call_by_name_and_partitioned_call(void** state) {
  (void)state;
  loom_context_t* contexts[2] = {new_context(false), new_context(true)};
  for (int c = 0; c < 2; ++c) {
    loom_context_t* context = contexts[c];
    add_f(context, "f");
    assert_true(loom_context_has_function(context, "f"));
    loom_tensor_handle_t* x = vector(context, kX);
    loom_tensor_handle_t* y = vector(context, kY);
    const char* ops[] = {"f", "PartitionedCall", "StatefulPartitionedCall"};
    for (int i = 0; i < 3; ++i) {
      loom_tensor_handle_t* r = NULL;
      LOOM_ASSERT_OK(loom_test_run2(context, ops[i], i ? "f" : NULL, x, y, &r));
      loom_test_expect_values(context, r, kF, 3);
      loom_tensor_handle_release(r);
    }
    LOOM_ASSERT_OK(loom_context_wait(context));
    loom_tensor_handle_release(x);
    loom_tensor_handle_release(y);
    loom_context_destroy(context);
  }
}

static void nested_and_polymorphic_functions(void** state) {
  (void)state;
  add_f(g_context, "inner");
  // outer(x, y) = inner(x, y) * y
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "outer", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* call_inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "call", "inner", call_inputs,
                                                2, NULL, NULL));
  const char* mul_inputs[] = {"call:r:0", "y"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "mul", "Mul", mul_inputs, 2,
                                                NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "out", LOOM_DTYPE_FLOAT,
                                                  NULL, "mul:z:0"));
  loom_function_t* outer = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &outer));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, outer));
  assert_int_equal(loom_function_num_nodes(outer), 2);
  loom_function_release(outer);
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(loom_test_run2(g_context, "outer", NULL, x, y, &r));
  loom_test_expect_values(g_context, r, kG, 3);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);

  // T from the inputs, passed to the body's ops through placeholders.
  loom_function_t* poly = loom_test_mul_add_function("poly", "T");
  LOOM_ASSERT_OK(loom_context_add_function(g_context, poly));
  loom_function_release(poly);
  int64_t three = 3;
  loom_tensor_handle_t* xd =
      loom_test_tensor(g_context, LOOM_DTYPE_DOUBLE, kX, 1, &three);
  loom_tensor_handle_t* yd =
      loom_test_tensor(g_context, LOOM_DTYPE_DOUBLE, kY, 1, &three);
  LOOM_ASSERT_OK(loom_test_run2(g_context, "poly", NULL, xd, yd, &r));
  assert_int_equal(loom_tensor_handle_dtype(r), LOOM_DTYPE_DOUBLE);
  loom_test_expect_values(g_context, r, kF, 3);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(xd);
  loom_tensor_handle_release(yd);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "poly"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "outer"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "inner"));
}

// rows(m) = m[0] + m[1], through Unpack's list output "output".
static void list_outputs_and_control_inputs(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "rows", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "m", LOOM_DTYPE_FLOAT, NULL, NULL));
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  LOOM_ASSERT_OK(loom_op_attrs_set_i64(&attrs, "num", 2));
  const char* unpack_inputs[] = {"m"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "unpack", "Unpack",
                                                unpack_inputs, 1, &attrs, ""));
  loom_op_attrs_deinitialize(&attrs);
  // Runs before the add although nothing reads it.
  const char* after_inputs[] = {"m", "^unpack"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "after", "Identity",
                                                after_inputs, 2, NULL, NULL));
  const char* add_inputs[] = {"unpack:output:0", "unpack:output:1", "^after"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "add", "AddV2", add_inputs,
                                                3, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "sum", LOOM_DTYPE_FLOAT,
                                                  NULL, "add:z:0"));
  loom_function_t* rows = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &rows));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, rows));
  loom_function_release(rows);
  static const float kM[4] = {1, 2, 3, 4};
  static const float kRows[2] = {4, 6};
  int64_t dims[2] = {2, 2};
  loom_tensor_handle_t* m =
      loom_test_tensor(g_context, LOOM_DTYPE_FLOAT, kM, 2, dims);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(loom_test_run2(g_context, "rows", NULL, m, NULL, &r));
  loom_test_expect_values(g_context, r, kRows, 2);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(m);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "rows"));
}

// sum_all(xs: N * float) -> (s: float, ys: N * float): s = AddN(xs),
// ys = IdentityN(xs); `after` (Identity of xs:0), which nothing reads, is
// a control output.
static void list_arguments_and_control_outputs(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "sum_all", &b));
  LOOM_ASSERT_OK(loom_function_builder_add_attr(b, "N: int >= 1"));
  LOOM_ASSERT_OK(loom_function_builder_add_input_list(b, "xs", LOOM_DTYPE_FLOAT,
                                                      NULL, "N", NULL, NULL));
  const char* xs[] = {"xs"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "sum", "AddN", xs, 1, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "ids", "IdentityN", xs, 1, NULL, NULL));
  const char* first[] = {"xs:0"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "after", "Identity", first,
                                                1, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "s", LOOM_DTYPE_FLOAT,
                                                  NULL, "sum:sum:0"));
  LOOM_ASSERT_OK(loom_function_builder_add_output_list(
      b, "ys", LOOM_DTYPE_FLOAT, NULL, "N", NULL, "ids:output"));
  LOOM_ASSERT_OK(loom_function_builder_add_control_output(b, "done", "after"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  loom_tensor_handle_t* inputs[2] = {x, y};
  // np.add(x, y, dtype=np.float32)
  static const float kSum[3] = {1.75f, 2, -2.5f};
  for (int call = 0; call < 2; ++call) {
    loom_eager_op_t* op = NULL;
    LOOM_ASSERT_OK(loom_eager_op_create(g_context, "sum_all", &op));
    LOOM_ASSERT_OK(loom_eager_op_add_input_list(op, inputs, 2));
    loom_tensor_handle_t* results[3] = {NULL, NULL, NULL};
    int32_t count = 0;
    LOOM_ASSERT_OK(loom_eager_op_execute(op, results, 3, &count));
    assert_int_equal(count, 3);
    loom_test_expect_values(g_context, results[0], kSum, 3);
    loom_test_expect_values(g_context, results[1], kX, 3);
    loom_test_expect_values(g_context, results[2], kY, 3);
    for (int i = 0; i < 3; ++i) loom_tensor_handle_release(results[i]);
    loom_eager_op_destroy(op);
  }
  // The plan of the second call runs `after` too.
  loom_function_stats_t stats = {.struct_size = sizeof(stats)};
  LOOM_ASSERT_OK(loom_function_get_stats(function, &stats));
  assert_int_equal(stats.planned_calls, 1);
  assert_int_equal(stats.planned_nodes, 3);
  loom_function_release(function);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "sum_all"));
}

//===----------------------------------------------------------------------===//
// A gradient tape around a call
//===----------------------------------------------------------------------===//

static void gradients(bool through_call, loom_tensor_handle_t** out_dx,
                      loom_tensor_handle_t** out_dy, int64_t* out_ops) {
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  loom_op_handler_t* tape = NULL;
  LOOM_ASSERT_OK(loom_tape_create(g_context, NULL, &tape));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, tape));
  LOOM_ASSERT_OK(loom_tape_watch(tape, x));
  LOOM_ASSERT_OK(loom_tape_watch(tape, y));
  loom_tensor_handle_t* r = NULL;
  if (through_call) {
    LOOM_ASSERT_OK(loom_test_run2(g_context, "f", NULL, x, y, &r));
  } else {
    loom_tensor_handle_t* product = NULL;
    LOOM_ASSERT_OK(loom_test_run2(g_context, "Mul", NULL, x, y, &product));
    LOOM_ASSERT_OK(loom_test_run2(g_context, "AddV2", NULL, product, x, &r));
    loom_tensor_handle_release(product);
  }
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tape_statistics_t statistics = {.struct_size = sizeof(statistics)};
  LOOM_ASSERT_OK(loom_tape_statistics(tape, &statistics));
  *out_ops = statistics.num_ops;
  loom_tensor_handle_t* sources[2] = {x, y};
  loom_tensor_handle_t* grads[2] = {NULL, NULL};
  LOOM_ASSERT_OK(loom_tape_gradient(tape, &r, 1, sources, 2, NULL,
                                    LOOM_UNCONNECTED_NONE, grads));
  *out_dx = grads[0];
  *out_dy = grads[1];
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(tape);
}

static void a_tape_records_a_call_as_one_op(void** state) {
  (void)state;
  add_f(g_context, "f");
  static const float kDx[3] = {1.25f, 5, -2};
  loom_tensor_handle_t* eager[2];
  loom_tensor_handle_t* called[2];
  int64_t eager_ops = 0;
  int64_t called_ops = 0;
  gradients(false, &eager[0], &eager[1], &eager_ops);
  gradients(true, &called[0], &called[1], &called_ops);
  assert_int_equal(eager_ops, 2);   // Mul and AddV2
  assert_int_equal(called_ops, 1);  // the call
  loom_test_expect_values(g_context, called[0], kDx, 3);
  loom_test_expect_values(g_context, called[1], kX, 3);
  loom_test_expect_values(g_context, eager[0], kDx, 3);
  loom_test_expect_values(g_context, eager[1], kX, 3);
  for (int i = 0; i < 2; ++i) {
    loom_tensor_handle_release(eager[i]);
    loom_tensor_handle_release(called[i]);
  }
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
}

// Forward mode: x watched with tangent ones, so the tangent of f(x, y) is
// y + 1 (NumPy), as the accumulator sees the body's Mul and AddV2.
static void a_forward_accumulator_sees_the_body_of_a_call(void** state) {
  (void)state;
  add_f(g_context, "f");
  static const float kOnes[3] = {1, 1, 1};
  static const float kDx[3] = {1.25f, 5, -2};
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  loom_tensor_handle_t* ones = vector(g_context, kOnes);
  loom_op_handler_t* accumulator = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_create(g_context, &accumulator));
  LOOM_ASSERT_OK(loom_context_enter_scope(g_context, accumulator));
  loom_tensor_handle_t* watched = NULL;
  LOOM_ASSERT_OK(
      loom_forward_accumulator_watch(accumulator, x, ones, &watched));
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(loom_test_run2(g_context, "f", NULL, watched, y, &r));
  LOOM_ASSERT_OK(loom_context_exit_scope(g_context));
  loom_tensor_handle_t* tangent = NULL;
  LOOM_ASSERT_OK(loom_forward_accumulator_jvp(accumulator, r,
                                              LOOM_UNCONNECTED_NONE, &tangent));
  loom_test_expect_values(g_context, tangent, kDx, 3);
  loom_test_expect_values(g_context, r, kF, 3);
  loom_tensor_handle_release(tangent);
  loom_tensor_handle_release(r);
  loom_tensor_handle_release(watched);
  loom_tensor_handle_release(ones);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  loom_op_handler_release(accumulator);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static void call_errors(void** state) {
  (void)state;
  add_f(g_context, "f");
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  int64_t three = 3;
  loom_tensor_handle_t* xd =
      loom_test_tensor(g_context, LOOM_DTYPE_DOUBLE, kX, 1, &three);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_STATUS(loom_test_run2(g_context, "nope", NULL, x, y, &r),
                     LOOM_STATUS_NOT_FOUND, "Op type not registered 'nope'");
  LOOM_ASSERT_STATUS(
      loom_test_run2(g_context, "PartitionedCall", "nope", x, y, &r),
      LOOM_STATUS_NOT_FOUND,
      "PartitionedCall: attr 'f': function 'nope' is not in");
  LOOM_ASSERT_STATUS(
      loom_test_run2(g_context, "PartitionedCall", NULL, x, y, &r),
      LOOM_STATUS_INVALID_ARGUMENT,
      "PartitionedCall: attr 'f' (the function to call) is "
      "not set");
  LOOM_ASSERT_STATUS(loom_test_run2(g_context, "f", NULL, x, NULL, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'f' expects 2 inputs, got 1");
  LOOM_ASSERT_STATUS(loom_test_run2(g_context, "f", NULL, x, xd, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'f': input 1 ('y') has dtype double, expected float");
  // Tout disagreeing with the function.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "PartitionedCall", &op));
  LOOM_ASSERT_OK(loom_op_attrs_set_func(loom_eager_op_attrs(op), "f", "f", 1));
  loom_dtype_t tout = LOOM_DTYPE_INT32;
  LOOM_ASSERT_OK(loom_op_attrs_set_list(loom_eager_op_attrs(op), "Tout",
                                        LOOM_ATTR_KIND_DTYPE, &tout, 1));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  int32_t count = 0;
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &r, 1, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "PartitionedCall: attr 'Tout' element 0 is int32, but "
                     "function 'f' has float there");
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &r, 0, &count),
                     LOOM_STATUS_INVALID_ARGUMENT, "Tout");
  loom_eager_op_destroy(op);
  // A cancelled call: its body's ops run under the call's cancellation.
  loom_cancellation_t* cancellation = NULL;
  LOOM_ASSERT_OK(
      loom_cancellation_create(loom_allocator_system(), &cancellation));
  loom_cancellation_start(cancellation);
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "f", &op));
  LOOM_ASSERT_OK(loom_eager_op_set_cancellation(op, cancellation));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &r, 1, &count),
                     LOOM_STATUS_CANCELLED,
                     "function 'f': node 'mul' (Mul): Mul: Operation was "
                     "cancelled");
  loom_eager_op_destroy(op);
  loom_cancellation_release(cancellation);
  // Too few result slots.
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "f", &op));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  LOOM_ASSERT_STATUS(loom_eager_op_execute(op, &r, 0, &count),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "f: Expecting 1 outputs, but *num_retvals is 0");
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(xd);

  // A node whose op fails names the function and the node.
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "bad", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x", "x"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "mm", "MatMul", inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "mm:product:0"));
  loom_function_t* bad = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &bad));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, bad));
  loom_function_release(bad);
  LOOM_ASSERT_STATUS(loom_test_run2(g_context, "bad", NULL, x, NULL, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'bad': node 'mm' (MatMul): ");
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "bad"));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
}

// In an asynchronous context, a node's kernel error arrives at the wait
// (and with the result), as any op's; what the call can check up front
// (the inputs against the signature) fails the call. pick(x, i) = x[i].
static void errors_in_asynchronous_contexts(void** state) {
  (void)state;
  loom_context_t* context = new_context(true);
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "pick", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "i", LOOM_DTYPE_INT32, NULL, NULL));
  const char* inputs[] = {"x", "i"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "gather", "Gather", inputs,
                                                2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "gather:output:0"));
  loom_function_t* function = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &function));
  LOOM_ASSERT_OK(loom_context_add_function(context, function));
  loom_function_release(function);
  loom_tensor_handle_t* x = vector(context, kX);
  int64_t two = 2;
  static const float kGood[2] = {2, 0};
  static const float kBad[2] = {2, 7};
  static const float kPicked[2] = {0.5f, 1.5f};  // NumPy: x[[2, 0]]
  loom_tensor_handle_t* good =
      loom_test_tensor(context, LOOM_DTYPE_INT32, kGood, 1, &two);
  loom_tensor_handle_t* bad =
      loom_test_tensor(context, LOOM_DTYPE_INT32, kBad, 1, &two);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_OK(loom_test_run2(context, "pick", NULL, x, good, &r));
  loom_test_expect_values(context, r, kPicked, 2);
  loom_tensor_handle_release(r);
  LOOM_ASSERT_OK(loom_test_run2(context, "pick", NULL, x, bad, &r));
  assert_non_null(r);
  LOOM_ASSERT_STATUS(loom_context_wait(context), LOOM_STATUS_INVALID_ARGUMENT,
                     "indices[1] = 7 is not in [0, 3)");
  loom_context_clear_error(context);
  loom_tensor_handle_release(r);
  LOOM_ASSERT_STATUS(loom_test_run2(context, "pick", NULL, x, x, &r),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Op 'pick': input 1 ('i') has dtype float, expected "
                     "int32");
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(good);
  loom_tensor_handle_release(bad);
  loom_context_destroy(context);
}

static void recursion_is_limited(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), "forever", &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  const char* inputs[] = {"x"};
  LOOM_ASSERT_OK(loom_function_builder_add_node(b, "again", "forever", inputs,
                                                1, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                  NULL, "again:r:0"));
  loom_function_t* forever = NULL;
  LOOM_ASSERT_OK(loom_function_builder_finish(b, &forever));
  LOOM_ASSERT_OK(loom_context_add_function(g_context, forever));
  loom_function_release(forever);
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* r = NULL;
  LOOM_ASSERT_STATUS(loom_test_run2(g_context, "forever", NULL, x, NULL, &r),
                     LOOM_STATUS_RESOURCE_EXHAUSTED,
                     "function 'forever': calls nest more than 100 deep");
  loom_tensor_handle_release(x);
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "forever"));
}

static loom_function_builder_t* builder_xy(const char* name) {
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_OK(
      loom_function_builder_create(loom_allocator_system(), name, &b));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_input(b, "y", LOOM_DTYPE_FLOAT, NULL, NULL));
  return b;
}

static void expect_finish_error(loom_function_builder_t* b,
                                const char* message) {
  loom_function_t* function = NULL;
  LOOM_ASSERT_STATUS(loom_function_builder_finish(b, &function),
                     LOOM_STATUS_INVALID_ARGUMENT, message);
  assert_null(function);
}

static void builder_errors(void** state) {
  (void)state;
  loom_function_builder_t* b = NULL;
  LOOM_ASSERT_STATUS(
      loom_function_builder_create(loom_allocator_system(), "9lives", &b),
      LOOM_STATUS_INVALID_ARGUMENT, "invalid function name '9lives'");
  LOOM_ASSERT_STATUS(
      loom_function_builder_create(loom_allocator_system(), NULL, &b),
      LOOM_STATUS_INVALID_ARGUMENT, "name is NULL");
  b = builder_xy("g");
  LOOM_ASSERT_STATUS(
      loom_function_builder_add_input(b, "x", LOOM_DTYPE_FLOAT, NULL, NULL),
      LOOM_STATUS_INVALID_ARGUMENT,
      "function 'g': input 'x': an argument of that name exists already");
  LOOM_ASSERT_STATUS(
      loom_function_builder_add_input(b, "z", LOOM_DTYPE_FLOAT, "T", NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "function 'g': input 'z' needs either");
  LOOM_ASSERT_STATUS(
      loom_function_builder_add_input(b, "a:b", LOOM_DTYPE_FLOAT, NULL, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "function 'g': invalid input name 'a:b'");
  const char* inputs[] = {"x", "y"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "n", "Mul", inputs, 2, NULL, NULL));
  LOOM_ASSERT_STATUS(
      loom_function_builder_add_node(b, "n", "Mul", inputs, 2, NULL, NULL),
      LOOM_STATUS_INVALID_ARGUMENT, "function 'g': node 'n' is defined twice");
  LOOM_ASSERT_STATUS(
      loom_function_builder_set_node_placeholder(b, "m", "T", "T"),
      LOOM_STATUS_INVALID_ARGUMENT, "attr 'T' of node 'm': no such node");
  loom_function_builder_destroy(b);

  struct {
    const char* input;
    const char* output;
    const char* message;
  } cases[] = {
      {"q", "n:z:0",
       "function 'g': node 'm': 'q' names neither an input nor "
       "a node"},
      {"n", "n:z:0", "node 'm': 'n' names node 'n' without an output"},
      {"n:z:x", "n:z:0", "node 'm': 'n:z:x': the index 'x' is not"},
      {"x:1", "n:z:0", "node 'm': 'x:1': input 'x' is one tensor"},
      {"n:z:0:1", "n:z:0", "node 'm': malformed reference 'n:z:0:1'"},
      {"^q", "n:z:0", "node 'm': control input '^q' names no node"},
      {"m:z:0", "n:z:0", "function 'g': node 'm' is on a cycle"},
      {"x", "nowhere:z:0", "output 'r': 'nowhere:z:0' names neither"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    b = builder_xy("g");
    LOOM_ASSERT_OK(
        loom_function_builder_add_node(b, "n", "Mul", inputs, 2, NULL, NULL));
    const char* m_inputs[] = {cases[i].input, "y"};
    LOOM_ASSERT_OK(
        loom_function_builder_add_node(b, "m", "Mul", m_inputs, 2, NULL, NULL));
    LOOM_ASSERT_OK(loom_function_builder_add_output(b, "r", LOOM_DTYPE_FLOAT,
                                                    NULL, cases[i].output));
    expect_finish_error(b, cases[i].message);
  }
  // A control input before a data input; a placeholder nobody declares;
  // an output typed by an unknown attr.
  b = builder_xy("g");
  const char* late[] = {"^n", "x"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "n", "Mul", inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "m", "Neg", late, 2, NULL, NULL));
  expect_finish_error(b, "node 'm': input 'x' comes after a control input");
  b = builder_xy("g");
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "n", "Mul", inputs, 2, NULL, NULL));
  LOOM_ASSERT_OK(loom_function_builder_set_node_placeholder(b, "n", "T", "U"));
  expect_finish_error(b,
                      "attr 'T' of node 'n' takes '$U', which the "
                      "signature does not declare");
  b = builder_xy("g");
  LOOM_ASSERT_OK(
      loom_function_builder_add_output(b, "r", LOOM_DTYPE_INVALID, "U", "x"));
  expect_finish_error(b, "the signature of function 'g'");

  // Lists and control outputs.
  b = builder_xy("g");
  LOOM_ASSERT_STATUS(loom_function_builder_add_input_list(
                         b, "zs", LOOM_DTYPE_FLOAT, NULL, NULL, NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_function_builder_add_input_list: number_attr or "
                     "type_list_attr is NULL");
  LOOM_ASSERT_STATUS(loom_function_builder_add_input_list(
                         b, "zs", LOOM_DTYPE_FLOAT, NULL, NULL, "L", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'g': input 'zs': a type list attr ('L') takes "
                     "no dtype (got 1)");
  LOOM_ASSERT_STATUS(loom_function_builder_add_input_list(
                         b, "zs", LOOM_DTYPE_FLOAT, NULL, "", NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'g': input 'zs': the number attr is empty");
  LOOM_ASSERT_STATUS(loom_function_builder_add_output_list(
                         b, "rs", LOOM_DTYPE_FLOAT, NULL, "N", NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_function_builder_add_output_list: source is NULL");
  LOOM_ASSERT_STATUS(loom_function_builder_add_control_output(b, "a:b", "n"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'g': invalid control output name 'a:b'");
  LOOM_ASSERT_STATUS(loom_function_builder_add_control_output(b, "c", NULL),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "loom_function_builder_add_control_output: node is NULL");
  LOOM_ASSERT_OK(loom_function_builder_add_control_output(b, "c", "nope"));
  LOOM_ASSERT_STATUS(loom_function_builder_add_control_output(b, "c", "n"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "function 'g': control output 'c' is defined twice");
  expect_finish_error(b,
                      "function 'g': control output 'c' names node 'nope', "
                      "which the function does not have");
  b = builder_xy("g");
  LOOM_ASSERT_OK(loom_function_builder_add_attr(b, "N: int >= 1"));
  LOOM_ASSERT_OK(loom_function_builder_add_input_list(b, "zs", LOOM_DTYPE_FLOAT,
                                                      NULL, "N", NULL, NULL));
  const char* element[] = {"zs:x"};
  LOOM_ASSERT_OK(
      loom_function_builder_add_node(b, "n", "Neg", element, 1, NULL, NULL));
  expect_finish_error(b,
                      "node 'n': 'zs:x': the index 'x' is not a "
                      "non-negative integer");
}

static void library_errors(void** state) {
  (void)state;
  // An op's name.
  loom_function_t* function = loom_test_mul_add_function("AddV2", NULL);
  LOOM_ASSERT_STATUS(loom_context_add_function(g_context, function),
                     LOOM_STATUS_ALREADY_EXISTS,
                     "Cannot add function 'AddV2' because an op with the "
                     "same name already exists.");
  loom_function_release(function);
  add_f(g_context, "f");
  function = loom_test_mul_add_function("f", NULL);
  LOOM_ASSERT_STATUS(loom_context_add_function(g_context, function),
                     LOOM_STATUS_ALREADY_EXISTS,
                     "Cannot add function 'f' because a different function "
                     "with the same name already exists.");
  loom_function_release(function);
  LOOM_ASSERT_OK(loom_context_find_function(g_context, "f", &function));
  assert_string_equal(loom_function_name(function), "f");
  LOOM_ASSERT_OK(loom_context_add_function(g_context, function));  // same
  loom_function_release(function);
  // An op made before the function is removed keeps calling it.
  loom_eager_op_t* op = NULL;
  LOOM_ASSERT_OK(loom_eager_op_create(g_context, "f", &op));
  LOOM_ASSERT_OK(loom_context_remove_function(g_context, "f"));
  assert_false(loom_context_has_function(g_context, "f"));
  // Even after the registries changed (making a function registers its
  // signature in a registry of its own).
  loom_function_release(loom_test_mul_add_function("other", NULL));
  loom_tensor_handle_t* x = vector(g_context, kX);
  loom_tensor_handle_t* y = vector(g_context, kY);
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, x));
  LOOM_ASSERT_OK(loom_eager_op_add_input(op, y));
  loom_tensor_handle_t* r = NULL;
  int32_t count = 0;
  LOOM_ASSERT_OK(loom_eager_op_execute(op, &r, 1, &count));
  loom_test_expect_values(g_context, r, kF, 3);
  loom_tensor_handle_release(r);
  loom_eager_op_destroy(op);
  loom_tensor_handle_release(x);
  loom_tensor_handle_release(y);
  LOOM_ASSERT_STATUS(loom_context_remove_function(g_context, "f"),
                     LOOM_STATUS_INVALID_ARGUMENT,
                     "Tried to remove non-existent function 'f'.");
  LOOM_ASSERT_STATUS(loom_context_find_function(g_context, "f", &function),
                     LOOM_STATUS_NOT_FOUND, "function 'f' is not in");
  LOOM_ASSERT_STATUS(loom_context_add_function(NULL, NULL),
                     LOOM_STATUS_INVALID_ARGUMENT, "context is NULL");
}

// Builds and destroys a polymorphic function with `allocator`, returning
// the first error.
static loom_status_t build_with(loom_allocator_t allocator, void* context) {
  (void)context;
  loom_function_builder_t* b = NULL;
  LOOM_RETURN_IF_ERROR(loom_function_builder_create(allocator, "swept", &b));
  const char* mul[] = {"x", "y"};
  const char* add[] = {"mul:z:0", "x", "^mul"};
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, allocator);
  loom_status_t status = loom_op_attrs_set_string(&attrs, "note", "n", 1);
  if (!status) status = loom_function_builder_add_attr(b, "T: {float, double}");
  if (!status) {
    status =
        loom_function_builder_add_input(b, "x", LOOM_DTYPE_INVALID, "T", NULL);
  }
  if (!status) {
    status =
        loom_function_builder_add_input(b, "y", LOOM_DTYPE_INVALID, "T", NULL);
  }
  if (!status) {
    status = loom_function_builder_add_node(b, "mul", "Mul", mul, 2, &attrs,
                                            "CPU:0");
  }
  if (!status) {
    status =
        loom_function_builder_add_node(b, "add", "AddV2", add, 3, NULL, NULL);
  }
  if (!status) {
    status = loom_function_builder_set_node_placeholder(b, "mul", "T", "T");
  }
  if (!status) {
    status = loom_function_builder_add_output(b, "r", LOOM_DTYPE_INVALID, "T",
                                              "add:z:0");
  }
  if (!status) status = loom_function_builder_add_attr(b, "N: int >= 1");
  if (!status) {
    status = loom_function_builder_add_input_list(b, "zs", LOOM_DTYPE_INVALID,
                                                  "T", "N", NULL, NULL);
  }
  if (!status) {
    status = loom_function_builder_add_output_list(b, "rs", LOOM_DTYPE_INVALID,
                                                   "T", "N", NULL, "zs");
  }
  if (!status) status = loom_function_builder_add_control_output(b, "d", "mul");
  loom_op_attrs_deinitialize(&attrs);
  if (status) {
    loom_function_builder_destroy(b);
    return status;
  }
  loom_function_t* function = NULL;
  LOOM_RETURN_IF_ERROR(loom_function_builder_finish(b, &function));
  loom_function_release(function);
  return loom_ok_status();
}

static void building_fails_cleanly_when_memory_runs_out(void** state) {
  (void)state;
  assert_true(loom_test_fault_sweep(build_with, NULL, LOOM_TEST_SWEEP_STRICT) >
              10);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(call_by_name_and_partitioned_call),
      cmocka_unit_test(nested_and_polymorphic_functions),
      cmocka_unit_test(list_outputs_and_control_inputs),
      cmocka_unit_test(list_arguments_and_control_outputs),
      cmocka_unit_test(a_tape_records_a_call_as_one_op),
      cmocka_unit_test(a_forward_accumulator_sees_the_body_of_a_call),
      cmocka_unit_test(call_errors),
      cmocka_unit_test(errors_in_asynchronous_contexts),
      cmocka_unit_test(recursion_is_limited),
      cmocka_unit_test(builder_errors),
      cmocka_unit_test(library_errors),
      cmocka_unit_test(building_fails_cleanly_when_memory_runs_out),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
