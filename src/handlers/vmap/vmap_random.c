// Random ops under a vmap: which ops draw random numbers, and the rule of
// the randomness option LOOM_VMAP_RANDOMNESS_DIFFERENT (one op drawing the
// whole batch). The option's other modes are decided in vmap_handler.c.

#include <stdlib.h>
#include <string.h>

#include "handlers/vmap/vmap_internal.h"

typedef struct random_op_t {
  const char* op_name;
  int32_t seed_input;  // a stateless op's seed, or -1
} random_op_t;

// Ops whose input 0 is the shape of the numbers drawn. Sorted by name
// (bsearch); names of ops not registered here cost nothing.
static const random_op_t kRandomOps[] = {
    {"RandomStandardNormal", -1},    {"RandomUniform", -1},
    {"RandomUniformInt", -1},        {"StatelessRandomNormal", 1},
    {"StatelessRandomUniform", 1},   {"StatelessRandomUniformInt", 1},
    {"StatelessTruncatedNormal", 1}, {"TruncatedNormal", -1},
};

static int compare_random_op(const void* key, const void* element) {
  return strcmp((const char*)key, ((const random_op_t*)element)->op_name);
}

int32_t loom__vmap_random_seed_input(const char* op_name) {
  if (!op_name) return LOOM__VMAP_NOT_RANDOM;
  const random_op_t* entry =
      bsearch(op_name, kRandomOps, sizeof(kRandomOps) / sizeof(kRandomOps[0]),
              sizeof(kRandomOps[0]), compare_random_op);
  return entry ? entry->seed_input : LOOM__VMAP_NOT_RANDOM;
}

loom_status_t loom__vmap_random_error(const char* op_name) {
  return loom_make_status(
      LOOM_STATUS_INVALID_ARGUMENT,
      "vmap: %s draws random numbers and the vmap's randomness option is "
      "LOOM_VMAP_RANDOMNESS_ERROR (the default); set "
      "loom_vmap_options_t.randomness to LOOM_VMAP_RANDOMNESS_SAME (one draw "
      "shared by every example) or LOOM_VMAP_RANDOMNESS_DIFFERENT (a draw per "
      "example)",
      op_name);
}

loom_status_t loom__vmap_rule_random_different(loom__vmap_call_t* call,
                                               bool* out_fallback) {
  if (!loom__vmap_require_unbatched(call, 0u, out_fallback)) {
    return loom_ok_status();
  }
  if (call->batch_size < 0) {
    return loom_make_status(
        LOOM_STATUS_FAILED_PRECONDITION,
        "vmap: %s draws a random number per example "
        "(LOOM_VMAP_RANDOMNESS_DIFFERENT) but the vmap's batch size is not "
        "known yet: give it to loom_vmap_create, or enter a batched tensor "
        "first",
        call->op_name);
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  int32_t count = 0;
  dims[0] = call->batch_size;
  LOOM_RETURN_IF_ERROR(loom__vmap_read_ints(call->context,
                                            call->inputs[0].value, dims + 1,
                                            LOOM_MAX_SHAPE_RANK - 1, &count));
  loom__handle_vector_t inputs;
  loom__handle_vector_initialize(&inputs);
  loom_allocator_t allocator = loom_allocator_default();
  LOOM_RETURN_IF_ERROR(
      loom__handle_vector_resize(&inputs, allocator, (size_t)call->num_inputs));
  loom_tensor_handle_t** handles = loom__handle_vector_data(&inputs);
  loom_status_t status =
      loom__vmap_int_vector(call->context, call->input_metadata[0].dtype, dims,
                            count + 1, false, &handles[0]);
  if (!status) {
    status = loom__vmap_run_front(call, call->op_name, 0, handles,
                                  call->num_inputs, true, NULL, 0);
  }
  loom__handle_vector_deinitialize(&inputs, allocator);
  return status;
}
