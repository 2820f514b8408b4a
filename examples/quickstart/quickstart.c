// Loom's eager API in one page: two tensors, a matrix product, a gradient
// from a tape, and an error reported by the op that caused it.
//
//   quickstart

#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

// A rows x cols float tensor on the context's CPU device.
static loom_status_t make_matrix(loom_context_t* ctx, int64_t rows,
                                 int64_t cols, const float* values,
                                 loom_tensor_handle_t** out_handle) {
  int64_t dims[2] = {rows, cols};
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(loom_shape_initialize(&shape, dims, 2));
  loom_tensor_t* tensor;
  LOOM_RETURN_IF_ERROR(loom_tensor_create_dense(
      loom_allocator_default(), LOOM_DTYPE_FLOAT, &shape, &tensor));
  memcpy(loom_tensor_data(tensor), values, loom_tensor_byte_size(tensor));
  loom_status_t status = loom_context_new_handle(ctx, tensor, out_handle);
  loom_tensor_release(tensor);  // the handle holds its own reference
  return status;
}

// Runs op_name(a[, b]) with one result. Attributes such as MatMul's T are
// inferred from the inputs; the others take their defaults.
static loom_status_t run(loom_context_t* ctx, const char* op_name,
                         loom_tensor_handle_t* a, loom_tensor_handle_t* b,
                         loom_tensor_handle_t** out_result) {
  loom_eager_op_t* op;
  LOOM_RETURN_IF_ERROR(loom_eager_op_create(ctx, op_name, &op));
  loom_status_t status = loom_eager_op_add_input(op, a);
  if (!status && b) status = loom_eager_op_add_input(op, b);
  int32_t count = 0;
  if (!status) status = loom_eager_op_execute(op, out_result, 1, &count);
  loom_eager_op_destroy(op);
  return status;
}

static loom_status_t print(loom_context_t* ctx, const char* name,
                           loom_tensor_handle_t* handle) {
  loom_tensor_t* value;  // waits for the value if it is still computing
  LOOM_RETURN_IF_ERROR(loom_context_resolve(ctx, handle, &value));
  char text[256];
  loom_tensor_format(value, text, sizeof(text));
  printf("%s: %s\n", name, text);
  loom_tensor_release(value);
  return loom_ok_status();
}

// Evaluates expr; on an error, keeps it in `status` and jumps to `done`.
#define CHECK(expr)        \
  do {                     \
    status = (expr);       \
    if (status) goto done; \
  } while (0)

// The forward pass, in the tape's scope: the tape records the ops that
// depend on a watched tensor.
static loom_status_t forward(loom_context_t* ctx, loom_op_handler_t* tape,
                             loom_tensor_handle_t* x, loom_tensor_handle_t* w,
                             loom_tensor_handle_t** y,
                             loom_tensor_handle_t** loss) {
  LOOM_RETURN_IF_ERROR(loom_context_enter_scope(ctx, tape));
  loom_status_t status = loom_tape_watch(tape, w);
  if (!status) status = run(ctx, "MatMul", x, w, y);  // y = x w
  if (!status) status = run(ctx, "Square", *y, NULL, loss);
  loom_status_t exit_status = loom_context_exit_scope(ctx);
  if (status) {
    loom_status_ignore(exit_status);
    return status;
  }
  return exit_status;
}

static loom_status_t quickstart(loom_context_t* ctx) {
  const float x_values[] = {1, 2, 3, 4};
  const float w_values[] = {0.5f, -1};
  loom_status_t status;
  loom_tensor_handle_t *x = NULL, *w = NULL, *y = NULL, *loss = NULL;
  loom_tensor_handle_t *dw = NULL, *bad = NULL;
  loom_op_handler_t* tape = NULL;

  CHECK(make_matrix(ctx, 2, 2, x_values, &x));
  CHECK(make_matrix(ctx, 2, 1, w_values, &w));
  CHECK(loom_tape_create(ctx, NULL, &tape));
  CHECK(forward(ctx, tape, x, w, &y, &loss));
  // d sum(loss) / dw = x^T (2 y)
  CHECK(loom_tape_gradient(tape, &loss, 1, &w, 1, NULL, LOOM_UNCONNECTED_NONE,
                           &dw));
  CHECK(print(ctx, "y", y));
  CHECK(print(ctx, "dloss/dw", dw));

  // A shape error is returned by the op that has it, with TensorFlow's
  // message.
  loom_status_t error = run(ctx, "MatMul", w, w, &bad);
  printf("MatMul(w, w): %s: %s\n",
         loom_status_code_name(loom_status_code(error)),
         loom_status_message(error));
  loom_status_free(error);

done:;
  loom_tensor_handle_t* handles[] = {x, w, y, loss, dw, bad};
  for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); ++i) {
    if (handles[i]) loom_tensor_handle_release(handles[i]);
  }
  if (tape) loom_op_handler_release(tape);
  return status;
}

int main(void) {
  loom_context_t* ctx;
  loom_status_t status = loom_context_create(NULL, &ctx);
  if (!status) {
    status = quickstart(ctx);
    loom_context_destroy(ctx);
  }
  if (status) {
    char text[512];
    loom_status_format(status, text, sizeof(text));
    fprintf(stderr, "quickstart: %s\n", text);
    loom_status_free(status);
    return 1;
  }
  return 0;
}
