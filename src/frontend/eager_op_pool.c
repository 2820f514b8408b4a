// Idle eager ops a context keeps for loom_eager_op_acquire: a gradient
// tape's backward pass executes a few dozen short-lived ops each step;
// taking them from here keeps their prepared ops from step to step instead
// of creating, preparing and destroying them every time. Each thread keeps
// its own (in its scope stack): no lock per op.

#include <string.h>

#include "base/hash_map.h"
#include "frontend/eager_op_internal.h"
#include "frontend/function_hooks.h"

// Whether `op`, which calls a function of the library by its name, still
// calls the function that name designates (not removed, nor replaced).
// The op's reference keeps its function alive, so a new function never
// takes the old one's address meanwhile.
static bool calls_current_function(loom_context_t* context,
                                   loom_eager_op_t* op) {
  const loom_op_def_t* def = NULL;
  void* function = NULL;
  bool calls = false;
  loom_status_t status =
      loom__context_resolve_op(context, op->name, &def, &function, &calls);
  bool same = !status && function == op->function;
  loom_status_free(status);
  loom__context_release_function(context, function);
  return same;
}

loom_status_t loom_eager_op_acquire(loom_context_t* context,
                                    const char* op_name,
                                    loom_eager_op_t** out_op) {
  if (!context || !op_name || !out_op) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_eager_op_acquire: %s is NULL",
                            !context   ? "context"
                            : !op_name ? "op_name"
                                       : "out_op");
  }
  scope_stack_t* stack = loom__scope_stack(context, true);
  uint64_t hash = loom__hash_bytes(op_name, strlen(op_name));
  for (int32_t i = stack ? stack->pool_count - 1 : -1; i >= 0; --i) {
    loom_eager_op_t* op = stack->pool[i];
    if (stack->pool_hashes[i] != hash || strcmp(op->name, op_name) != 0) {
      continue;
    }
    int32_t last = --stack->pool_count;
    stack->pool[i] = stack->pool[last];
    stack->pool_hashes[i] = stack->pool_hashes[last];
    if (op->function && !calls_current_function(context, op)) {
      loom_eager_op_destroy(op);
      break;
    }
    *out_op = op;
    return loom_ok_status();
  }
  return loom_eager_op_create(context, op_name, out_op);
}

void loom_eager_op_recycle(loom_eager_op_t* op) {
  if (!op) return;
  loom_context_t* context = op->context;
  // An op calling a function is kept too (a traced function called every
  // step); acquire checks that its name still designates that function.
  loom_status_ignore(loom_eager_op_reset(op, NULL));
  // Only a final handler's prepared op is kept: another (a tape) would be
  // kept alive, with what it holds, by an idle op.
  if (op->prepared_handler && !loom_op_handler_is_final(op->prepared_handler)) {
    loom__eager_op_drop_prepared(op);
  }
  scope_stack_t* stack = loom__scope_stack(context, true);
  if (stack && stack->pool_count < kEagerOpPoolSize) {
    stack->pool_hashes[stack->pool_count] =
        loom__hash_bytes(op->name, strlen(op->name));
    stack->pool[stack->pool_count++] = op;
    op = NULL;
  }
  loom_eager_op_destroy(op);  // the pool is full (or out of memory)
}

void loom__eager_op_pool_clear(loom_context_t* context) {
  for (scope_stack_t* stack = context->stacks; stack; stack = stack->next) {
    for (int32_t i = 0; i < stack->pool_count; ++i) {
      loom_eager_op_destroy(stack->pool[i]);
    }
    stack->pool_count = 0;
  }
}
