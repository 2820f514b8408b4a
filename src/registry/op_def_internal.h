// The op definition builder's state, shared by op_def.c (building) and
// op_registry.c (validation and registration).

#ifndef LOOM_REGISTRY_OP_DEF_INTERNAL_H_
#define LOOM_REGISTRY_OP_DEF_INTERNAL_H_

#include <ctype.h>

#include "base/arena.h"
#include "loom/op_attrs.h"
#include "loom/op_def.h"

struct loom_op_def_builder_t {
  loom_allocator_t allocator;
  loom__arena_t arena;  // names, specs, allowed values; moves to the registry
  loom_op_def_t def;    // name, properties, shape function
  loom_arg_def_t* inputs;
  int32_t num_inputs;
  int32_t inputs_capacity;
  loom_arg_def_t* outputs;
  int32_t num_outputs;
  int32_t outputs_capacity;
  loom_attr_def_t* attrs;
  int32_t num_attrs;
  int32_t attrs_capacity;
  loom_op_attrs_t defaults;
};

static inline bool is_identifier_start_char(char c) {
  return isalpha((unsigned char)c) || c == '_';
}

#endif  // LOOM_REGISTRY_OP_DEF_INTERNAL_H_
