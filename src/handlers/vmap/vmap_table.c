// Every built-in op without a batching rule, and why: they take the
// per-example fallback when an input is batched (with unbatched inputs
// every op runs as it is, once). tests/handlers/test_vmap.c checks that
// each registered op has a rule (vmap_rules.c) or is listed here.

#include <stdlib.h>
#include <string.h>

#include "handlers/vmap/vmap_internal.h"

typedef struct no_rule_t {
  const char* op_name;
  const char* reason;
} no_rule_t;

#define NOT_YET "not yet: the per-example fallback"
#define STATEFUL                                                        \
  "stateful (a resource): runs once as it is with unbatched inputs; a " \
  "batched value takes the fallback, one call per example in order"
#define RANDOM                                                          \
  "random: the vmap's randomness option decides (an error by default; " \
  "same: one draw shared by every example; different: one op drawing "  \
  "[B, shape]); a batched shape takes the fallback"

// Sorted by name (bsearch).
// Why no collective has a rule.
#define COLLECTIVE                                                      \
  "a collective meets its group once per call: batched, each example "  \
  "would be a round of its own (the per-example fallback runs them in " \
  "turn)"

static const no_rule_t kNoRule[] = {
    {"Assert", STATEFUL},
    {"AssignAddVariableOp", STATEFUL},
    {"AssignSubVariableOp", STATEFUL},
    {"AssignVariableOp", STATEFUL},
    {"BiasAddV1", NOT_YET},
    {"BroadcastGradientArgs",
     "shape arithmetic: its inputs are shapes, unbatched under vmap (Shape "
     "gives one example's), so it runs as it is; batched shapes take the "
     "fallback"},
    {"CollectiveAllToAllV2", COLLECTIVE},
    {"CollectiveBcastRecvV2", COLLECTIVE},
    {"CollectiveBcastSendV2", COLLECTIVE},
    {"CollectiveGatherV2", COLLECTIVE},
    {"CollectiveReduceScatterV2", COLLECTIVE},
    {"CollectiveReduceV2", COLLECTIVE},
    {"Concat", "not yet (ConcatV2 has a rule); the per-example fallback"},
    {"Const", "no inputs: the same value for every example"},
    {"CopyOff",
     "the vmap's own copy: an unbatched tensor's value; a batched one is an "
     "error (use loom_vmap_out)"},
    {"CopyOffGrad", NOT_YET},
    {"CopyOn", "the vmap's own copy: a tensor of another handler is unbatched"},
    {"CopyOnGrad", NOT_YET},
    {"DestroyResourceOp", STATEFUL},
    {"InvertPermutation", NOT_YET},
    {"ParallelPack",
     "the parallel handler's own op: a vmap value entered into a parallel "
     "value takes the per-example fallback"},
    {"ParallelUnpack",
     "the parallel handler's own op: a vmap value entered into a parallel "
     "value takes the per-example fallback"},
    {"RandomStandardNormal", RANDOM},
    {"RandomUniform", RANDOM},
    {"Range",
     "its output's size is its inputs' values: batched bounds give examples "
     "of different sizes; the per-example fallback stacks equal ones"},
    {"ReadVariableOp", STATEFUL},
    {"ResourceApplyAdam", STATEFUL},
    {"ResourceApplyGradientDescent", STATEFUL},
    {"ResourceApplyKerasMomentum", STATEFUL},
    {"ResourceApplyMomentum", STATEFUL},
    {"ShapeN", "not yet (Shape has a rule); the per-example fallback"},
    {"TruncatedNormal", RANDOM},
    {"Unique",
     "its output's size is the number of distinct values: examples of "
     "different sizes; the per-example fallback stacks equal ones"},
    {"VarHandleOp", "no tensor inputs: one resource for every example"},
    {"VarIsInitializedOp", STATEFUL},
    {"Where",
     "its output's size is the number of true values: examples of different "
     "sizes; the per-example fallback stacks equal ones"},
    {"_FusedMatMul",
     "not yet (MatMul has a rule; the fused epilogue would need one); the "
     "per-example fallback"},
};

static int compare_no_rule(const void* key, const void* element) {
  return strcmp((const char*)key, ((const no_rule_t*)element)->op_name);
}

const char* loom__vmap_no_rule_reason(const char* op_name) {
  const no_rule_t* entry =
      bsearch(op_name, kNoRule, sizeof(kNoRule) / sizeof(kNoRule[0]),
              sizeof(kNoRule[0]), compare_no_rule);
  return entry ? entry->reason : NULL;
}

loom_vmap_support_t loom_vmap_op_support(const char* op_name,
                                         const char** out_description) {
  if (out_description) *out_description = NULL;
  if (!op_name) return LOOM_VMAP_UNLISTED;
  const loom__vmap_rule_t* rule = loom__vmap_find_rule(op_name);
  if (rule) {
    if (out_description) *out_description = rule->description;
    return LOOM_VMAP_RULE;
  }
  const char* reason = loom__vmap_no_rule_reason(op_name);
  if (!reason) return LOOM_VMAP_UNLISTED;
  if (out_description) *out_description = reason;
  return LOOM_VMAP_FALLBACK;
}
