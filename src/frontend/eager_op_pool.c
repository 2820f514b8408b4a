// Idle eager ops a context keeps for loom_eager_op_acquire: a gradient
// tape's backward pass executes a few dozen short-lived ops each step;
// taking them from here keeps their prepared ops from step to step instead
// of creating, preparing and destroying them every time.

#include <string.h>

#include "base/hash_map.h"
#include "frontend/eager_op_internal.h"

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
  uint64_t hash = loom__hash_bytes(op_name, strlen(op_name));
  pthread_mutex_lock(&context->pool_mutex);
  for (int32_t i = context->pool_count - 1; i >= 0; --i) {
    loom_eager_op_t* op = context->pool[i];
    if (context->pool_hashes[i] != hash || strcmp(op->name, op_name) != 0) {
      continue;
    }
    int32_t last = --context->pool_count;
    context->pool[i] = context->pool[last];
    context->pool_hashes[i] = context->pool_hashes[last];
    pthread_mutex_unlock(&context->pool_mutex);
    *out_op = op;
    return loom_ok_status();
  }
  pthread_mutex_unlock(&context->pool_mutex);
  return loom_eager_op_create(context, op_name, out_op);
}

void loom_eager_op_recycle(loom_eager_op_t* op) {
  if (!op) return;
  loom_context_t* context = op->context;
  if (op->function) {
    // Not kept: the function may be removed from the library, or replaced.
    loom_eager_op_destroy(op);
    return;
  }
  loom_status_ignore(loom_eager_op_reset(op, NULL));
  // Only a final handler's prepared op is kept: another (a tape) would be
  // kept alive, with what it holds, by an idle op.
  if (op->prepared_handler && !loom_op_handler_is_final(op->prepared_handler)) {
    loom__eager_op_drop_prepared(op);
  }
  uint64_t hash = loom__hash_bytes(op->name, strlen(op->name));
  pthread_mutex_lock(&context->pool_mutex);
  if (context->pool_count < kEagerOpPoolSize) {
    context->pool[context->pool_count] = op;
    context->pool_hashes[context->pool_count++] = hash;
    op = NULL;
  }
  pthread_mutex_unlock(&context->pool_mutex);
  loom_eager_op_destroy(op);  // the pool is full
}

void loom__eager_op_pool_clear(loom_context_t* context) {
  for (int32_t i = 0; i < context->pool_count; ++i) {
    loom_eager_op_destroy(context->pool[i]);
  }
  context->pool_count = 0;
}
