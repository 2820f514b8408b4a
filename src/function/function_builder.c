// Building an eager function (loom/function.h): the builder collects the
// signature, the nodes and the outputs as written; finish checks them,
// parses every reference, orders the nodes and makes the signature's op
// definition (in a registry of the function's own).

#include <stdio.h>
#include <string.h>

#include "function/function_internal.h"
#include "loom/op_def.h"
#include "registry/op_registry_internal.h"

typedef struct pending_placeholder_t {
  const char* node;
  const char* attr;
  const char* placeholder;
} pending_placeholder_t;

typedef struct pending_control_output_t {
  const char* name;
  const char* node;
} pending_control_output_t;

struct loom_function_builder_t {
  loom_function_t* function;  // filled as the builder goes
  int32_t inputs_capacity;
  int32_t outputs_capacity;
  int32_t nodes_capacity;
  const char** output_sources;  // as written, per output
  const char*** node_inputs;    // as written, per node
  const char** attr_specs;
  int32_t num_attr_specs;
  int32_t attr_specs_capacity;
  pending_placeholder_t* placeholders;
  int32_t num_placeholders;
  int32_t placeholders_capacity;
  pending_control_output_t* control_outputs;  // nodes named at finish
  int32_t num_control_outputs;
  int32_t control_outputs_capacity;
};

// Grows `*array` of `element_size` elements to hold one more than `count`.
// `parallel` (may be NULL) is an array of pointers grown alongside.
static loom_status_t grow(loom_allocator_t allocator, void** array,
                          int32_t* capacity, int32_t count, size_t element_size,
                          void** parallel, size_t parallel_size) {
  if (count < *capacity) return loom_ok_status();
  if (count >= (1 << 24)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "a function holds at most 2^24 entries of a kind");
  }
  int32_t new_capacity = *capacity ? 2 * *capacity : 4;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, element_size * (size_t)new_capacity, &grown));
  void* grown_parallel = NULL;
  if (parallel) {
    loom_status_t status = loom_allocator_calloc(
        allocator, parallel_size * (size_t)new_capacity, &grown_parallel);
    if (status) {
      loom_allocator_free(allocator, grown);
      return status;
    }
    if (count) memcpy(grown_parallel, *parallel, parallel_size * (size_t)count);
    loom_allocator_free(allocator, *parallel);
    *parallel = grown_parallel;
  }
  if (count) memcpy(grown, *array, element_size * (size_t)count);
  loom_allocator_free(allocator, *array);
  *array = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

static loom_status_t copy_string(loom_function_t* function, const char* text,
                                 const char** out) {
  return loom__arena_strndup(&function->arena, text, strlen(text), out);
}

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
         c == '/' || c == '>';
}

// Names of functions, arguments and nodes: no ':' or '^', which references
// use.
static bool is_valid_name(const char* name, bool function_name) {
  if (!name || !*name) return false;
  if (function_name &&
      !((name[0] >= 'a' && name[0] <= 'z') ||
        (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_')) {
    return false;
  }
  for (const char* c = name; *c; ++c) {
    if (!is_name_char(*c)) return false;
  }
  return true;
}

loom_status_t loom_function_builder_create(
    loom_allocator_t allocator, const char* name,
    loom_function_builder_t** out_builder) {
  if (!name || !out_builder) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_create: %s is NULL",
                            !name ? "name" : "out_builder");
  }
  *out_builder = NULL;
  if (!is_valid_name(name, true) || strlen(name) >= 128) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "invalid function name '%s': use letters, digits, '_', '.', '-', "
        "'/' and '>', starting with a letter or '_', at most 127 bytes",
        name);
  }
  loom_function_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*builder), (void**)&builder));
  loom_function_t* function = NULL;
  loom_status_t status =
      loom_allocator_calloc(allocator, sizeof(*function), (void**)&function);
  if (status) {
    loom_allocator_free(allocator, builder);
    return status;
  }
  atomic_init(&function->references, 1);
  function->allocator = allocator;
  loom__arena_initialize(&function->arena, allocator);
  builder->function = function;
  status = copy_string(function, name, &function->name);
  if (status) {
    loom_function_builder_destroy(builder);
    return status;
  }
  *out_builder = builder;
  return loom_ok_status();
}

// Frees what the builder allocated outside the function's arena.
static void free_builder_arrays(loom_function_builder_t* builder) {
  loom_allocator_t allocator = builder->function->allocator;
  loom_allocator_free(allocator, builder->output_sources);
  loom_allocator_free(allocator, builder->node_inputs);
  loom_allocator_free(allocator, builder->attr_specs);
  loom_allocator_free(allocator, builder->placeholders);
  loom_allocator_free(allocator, builder->control_outputs);
}

void loom_function_builder_destroy(loom_function_builder_t* builder) {
  if (!builder) return;
  free_builder_arrays(builder);
  loom_allocator_t allocator = builder->function->allocator;
  loom_function_release(builder->function);
  loom_allocator_free(allocator, builder);
}

loom_status_t loom_function_builder_add_attr(loom_function_builder_t* builder,
                                             const char* spec) {
  if (!builder || !spec) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_attr: %s is NULL",
                            !builder ? "builder" : "spec");
  }
  loom_function_t* function = builder->function;
  LOOM_RETURN_IF_ERROR(grow(function->allocator, (void**)&builder->attr_specs,
                            &builder->attr_specs_capacity,
                            builder->num_attr_specs, sizeof(const char*), NULL,
                            0));
  LOOM_RETURN_IF_ERROR(copy_string(
      function, spec, &builder->attr_specs[builder->num_attr_specs]));
  builder->num_attr_specs++;
  return loom_ok_status();
}

static const loom__function_arg_t* find_arg(const loom__function_arg_t* args,
                                            int32_t count, const char* name) {
  for (int32_t i = 0; i < count; ++i) {
    if (strcmp(args[i].name, name) == 0) return &args[i];
  }
  return NULL;
}

// Checks an argument's name and type for `what` ("input", "output"):
// a dtype or a type attr, `number_attr` of them, or a list(type) attr.
static loom_status_t check_arg(loom_function_builder_t* builder,
                               const char* what, const char* name,
                               loom_dtype_t dtype, const char* type_attr,
                               const char* number_attr,
                               const char* type_list_attr) {
  loom_function_t* function = builder->function;
  if (!is_valid_name(name, false)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': invalid %s name '%s'",
                            function->name, what, name);
  }
  if (find_arg(function->inputs, function->num_inputs, name) ||
      find_arg(function->outputs, function->num_outputs, name)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s '%s': an argument of that "
                            "name exists already",
                            function->name, what, name);
  }
  if (type_list_attr) {
    if (!*type_list_attr || dtype != LOOM_DTYPE_INVALID || type_attr ||
        number_attr) {
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "function '%s': %s '%s': a type list attr ('%s') takes no dtype "
          "(got %d), type attr (got %s) or number attr (got %s)",
          function->name, what, name, type_list_attr, (int)dtype,
          type_attr ? type_attr : "NULL", number_attr ? number_attr : "NULL");
    }
    return loom_ok_status();
  }
  if (number_attr && !*number_attr) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': %s '%s': the number attr is empty",
                            function->name, what, name);
  }
  if (type_attr ? dtype != LOOM_DTYPE_INVALID || !*type_attr
                : !loom_dtype_is_valid(dtype) || dtype == LOOM_DTYPE_INVALID) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "function '%s': %s '%s' needs either a valid dtype (got %d) or a type "
        "attr (got %s), not both",
        function->name, what, name, (int)dtype, type_attr ? type_attr : "NULL");
  }
  return loom_ok_status();
}

static loom_status_t make_arg(loom_function_t* function, const char* name,
                              loom_dtype_t dtype, const char* type_attr,
                              const char* number_attr,
                              const char* type_list_attr,
                              loom__function_arg_t* out) {
  memset(out, 0, sizeof(*out));
  LOOM_RETURN_IF_ERROR(copy_string(function, name, &out->name));
  out->dtype = dtype;
  if (type_attr) {
    LOOM_RETURN_IF_ERROR(copy_string(function, type_attr, &out->type_attr));
  }
  if (number_attr) {
    LOOM_RETURN_IF_ERROR(copy_string(function, number_attr, &out->number_attr));
  }
  if (type_list_attr) {
    LOOM_RETURN_IF_ERROR(
        copy_string(function, type_list_attr, &out->type_list_attr));
  }
  if (number_attr || type_list_attr) function->has_lists = true;
  return loom_ok_status();
}

static loom_status_t add_input(loom_function_builder_t* builder,
                               const char* name, loom_dtype_t dtype,
                               const char* type_attr, const char* number_attr,
                               const char* type_list_attr,
                               const loom_shape_t* shape) {
  LOOM_RETURN_IF_ERROR(check_arg(builder, "input", name, dtype, type_attr,
                                 number_attr, type_list_attr));
  loom_function_t* function = builder->function;
  if (shape &&
      (shape->rank < LOOM_UNKNOWN_RANK || shape->rank > LOOM_MAX_RANK)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': input '%s': rank %d is outside "
                            "[-1, %d]",
                            function->name, name, shape->rank, LOOM_MAX_RANK);
  }
  LOOM_RETURN_IF_ERROR(grow(function->allocator, (void**)&function->inputs,
                            &builder->inputs_capacity, function->num_inputs,
                            sizeof(loom__function_arg_t), NULL, 0));
  loom__function_arg_t* arg = &function->inputs[function->num_inputs];
  LOOM_RETURN_IF_ERROR(make_arg(function, name, dtype, type_attr, number_attr,
                                type_list_attr, arg));
  if (shape && shape->rank != LOOM_UNKNOWN_RANK) {
    arg->has_shape = true;
    arg->shape = *shape;
  }
  function->num_inputs++;
  return loom_ok_status();
}

static loom_status_t add_output(loom_function_builder_t* builder,
                                const char* name, loom_dtype_t dtype,
                                const char* type_attr, const char* number_attr,
                                const char* type_list_attr,
                                const char* source) {
  LOOM_RETURN_IF_ERROR(check_arg(builder, "output", name, dtype, type_attr,
                                 number_attr, type_list_attr));
  loom_function_t* function = builder->function;
  LOOM_RETURN_IF_ERROR(grow(function->allocator, (void**)&function->outputs,
                            &builder->outputs_capacity, function->num_outputs,
                            sizeof(loom__function_arg_t),
                            (void**)&builder->output_sources,
                            sizeof(const char*)));
  int32_t index = function->num_outputs;
  LOOM_RETURN_IF_ERROR(make_arg(function, name, dtype, type_attr, number_attr,
                                type_list_attr, &function->outputs[index]));
  LOOM_RETURN_IF_ERROR(
      copy_string(function, source, &builder->output_sources[index]));
  function->num_outputs++;
  return loom_ok_status();
}

loom_status_t loom_function_builder_add_input(loom_function_builder_t* builder,
                                              const char* name,
                                              loom_dtype_t dtype,
                                              const char* type_attr,
                                              const loom_shape_t* shape) {
  if (!builder || !name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_input: %s is NULL",
                            !builder ? "builder" : "name");
  }
  return add_input(builder, name, dtype, type_attr, NULL, NULL, shape);
}

loom_status_t loom_function_builder_add_input_list(
    loom_function_builder_t* builder, const char* name, loom_dtype_t dtype,
    const char* type_attr, const char* number_attr, const char* type_list_attr,
    const loom_shape_t* element_shape) {
  if (!builder || !name || (!number_attr && !type_list_attr)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_input_list: %s is NULL",
                            !builder ? "builder"
                            : !name  ? "name"
                                     : "number_attr or type_list_attr");
  }
  return add_input(builder, name, dtype, type_attr, number_attr, type_list_attr,
                   element_shape);
}

loom_status_t loom_function_builder_add_output(loom_function_builder_t* builder,
                                               const char* name,
                                               loom_dtype_t dtype,
                                               const char* type_attr,
                                               const char* source) {
  if (!builder || !name || !source) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_output: %s is NULL",
                            !builder ? "builder"
                            : !name  ? "name"
                                     : "source");
  }
  return add_output(builder, name, dtype, type_attr, NULL, NULL, source);
}

loom_status_t loom_function_builder_add_output_list(
    loom_function_builder_t* builder, const char* name, loom_dtype_t dtype,
    const char* type_attr, const char* number_attr, const char* type_list_attr,
    const char* source) {
  if (!builder || !name || !source || (!number_attr && !type_list_attr)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_output_list: %s is NULL",
                            !builder  ? "builder"
                            : !name   ? "name"
                            : !source ? "source"
                                      : "number_attr or type_list_attr");
  }
  return add_output(builder, name, dtype, type_attr, number_attr,
                    type_list_attr, source);
}

loom_status_t loom_function_builder_add_control_output(
    loom_function_builder_t* builder, const char* name, const char* node) {
  if (!builder || !name || !node) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_function_builder_add_control_output: %s is NULL",
        !builder ? "builder"
        : !name  ? "name"
                 : "node");
  }
  loom_function_t* function = builder->function;
  if (!is_valid_name(name, false)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': invalid control output name '%s'",
                            function->name, name);
  }
  for (int32_t i = 0; i < builder->num_control_outputs; ++i) {
    if (strcmp(builder->control_outputs[i].name, name) == 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': control output '%s' is "
                              "defined twice",
                              function->name, name);
    }
  }
  LOOM_RETURN_IF_ERROR(
      grow(function->allocator, (void**)&builder->control_outputs,
           &builder->control_outputs_capacity, builder->num_control_outputs,
           sizeof(pending_control_output_t), NULL, 0));
  pending_control_output_t* pending =
      &builder->control_outputs[builder->num_control_outputs];
  LOOM_RETURN_IF_ERROR(copy_string(function, name, &pending->name));
  LOOM_RETURN_IF_ERROR(copy_string(function, node, &pending->node));
  builder->num_control_outputs++;
  return loom_ok_status();
}

int32_t loom__function_find_node(const loom_function_t* function,
                                 const char* name) {
  for (int32_t i = 0; i < function->num_nodes; ++i) {
    if (strcmp(function->nodes[i].name, name) == 0) return i;
  }
  return -1;
}

loom_status_t loom_function_builder_add_node(loom_function_builder_t* builder,
                                             const char* name, const char* op,
                                             const char* const* inputs,
                                             int32_t num_inputs,
                                             const loom_op_attrs_t* attrs,
                                             const char* device) {
  if (!builder || !name || !op || num_inputs < 0 || (num_inputs && !inputs)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_add_node: %s",
                            !builder ? "builder is NULL"
                            : !name  ? "name is NULL"
                            : !op    ? "op is NULL"
                                     : "invalid inputs");
  }
  loom_function_t* function = builder->function;
  if (!is_valid_name(name, false)) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': invalid node name '%s'",
                            function->name, name);
  }
  if (!*op || strlen(op) >= 128) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': node '%s': invalid op name '%s'",
                            function->name, name, op);
  }
  if (loom__function_find_node(function, name) >= 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': node '%s' is defined twice",
                            function->name, name);
  }
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (!inputs[i]) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': node '%s': input %d is NULL",
                              function->name, name, i);
    }
  }
  LOOM_RETURN_IF_ERROR(grow(
      function->allocator, (void**)&function->nodes, &builder->nodes_capacity,
      function->num_nodes, sizeof(loom__function_node_t),
      (void**)&builder->node_inputs, sizeof(const char**)));
  loom__function_node_t* node = &function->nodes[function->num_nodes];
  memset(node, 0, sizeof(*node));
  loom_op_attrs_initialize(&node->attrs, function->allocator);
  const char** raw = NULL;
  loom_status_t status = copy_string(function, name, &node->name);
  if (!status) status = copy_string(function, op, &node->op);
  if (!status) {
    status = copy_string(function, device ? device : "", &node->device);
  }
  if (!status && attrs) status = loom_op_attrs_merge(&node->attrs, attrs);
  if (!status) {
    status = loom__arena_allocate(&function->arena,
                                  sizeof(*raw) * (size_t)(num_inputs + 1),
                                  (void**)&raw);
  }
  for (int32_t i = 0; !status && i < num_inputs; ++i) {
    status = copy_string(function, inputs[i], &raw[i]);
  }
  if (status) {
    loom_op_attrs_deinitialize(&node->attrs);
    return status;
  }
  node->num_inputs = num_inputs;  // as written until finish
  builder->node_inputs[function->num_nodes] = raw;
  function->num_nodes++;
  return loom_ok_status();
}

loom_status_t loom_function_builder_set_node_placeholder(
    loom_function_builder_t* builder, const char* node, const char* attr_name,
    const char* placeholder) {
  if (!builder || !node || !attr_name || !placeholder) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "loom_function_builder_set_node_placeholder: NULL argument");
  }
  loom_function_t* function = builder->function;
  if (loom__function_find_node(function, node) < 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': attr '%s' of node '%s': no such "
                            "node",
                            function->name, attr_name, node);
  }
  LOOM_RETURN_IF_ERROR(grow(function->allocator, (void**)&builder->placeholders,
                            &builder->placeholders_capacity,
                            builder->num_placeholders,
                            sizeof(pending_placeholder_t), NULL, 0));
  pending_placeholder_t* pending =
      &builder->placeholders[builder->num_placeholders];
  LOOM_RETURN_IF_ERROR(copy_string(function, node, &pending->node));
  LOOM_RETURN_IF_ERROR(copy_string(function, attr_name, &pending->attr));
  LOOM_RETURN_IF_ERROR(
      copy_string(function, placeholder, &pending->placeholder));
  builder->num_placeholders++;
  return loom_ok_status();
}

void loom_function_builder_set_stateful(loom_function_builder_t* builder,
                                        bool stateful) {
  if (builder) builder->function->stateful = stateful;
}

//===----------------------------------------------------------------------===//
// Finishing
//===----------------------------------------------------------------------===//

// The signature's op definition, registered in the function's own registry.
static loom_status_t make_signature(loom_function_builder_t* builder) {
  loom_function_t* function = builder->function;
  LOOM_RETURN_IF_ERROR(
      loom_op_registry_create(function->allocator, &function->registry));
  loom_op_def_builder_t* def = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_builder_create(function->allocator, function->name, &def));
  loom_status_t status = loom_ok_status();
  char spec[512];
  for (int32_t i = 0; !status && i < builder->num_attr_specs; ++i) {
    status = loom_op_def_builder_add_attr(def, builder->attr_specs[i]);
  }
  for (int32_t pass = 0; pass < 2 && !status; ++pass) {
    const loom__function_arg_t* args =
        pass ? function->outputs : function->inputs;
    int32_t count = pass ? function->num_outputs : function->num_inputs;
    for (int32_t i = 0; !status && i < count; ++i) {
      const loom__function_arg_t* arg = &args[i];
      const char* type = arg->type_list_attr ? arg->type_list_attr
                         : arg->type_attr    ? arg->type_attr
                                             : loom_dtype_name(arg->dtype);
      snprintf(spec, sizeof(spec), "%s: %s%s%s", arg->name,
               arg->number_attr ? arg->number_attr : "",
               arg->number_attr ? " * " : "", type);
      status = pass ? loom_op_def_builder_add_output(def, spec)
                    : loom_op_def_builder_add_input(def, spec);
    }
  }
  loom_op_def_builder_set_is_stateful(def, function->stateful);
  if (status) {
    loom_op_def_builder_destroy(def);
  } else {
    // The function's own registry, never part of a plugin's load (and gone
    // with the function, perhaps before a load's rollback).
    loom__registration_journal_exempt_begin();
    status = loom_op_registry_register(function->registry, def);
    loom__registration_journal_exempt_end();
  }
  if (!status) {
    status = loom_op_registry_lookup(function->registry, function->name,
                                     &function->signature);
  }
  return loom_status_annotate(status, "the signature of function '%s'",
                              function->name);
}

// The control outputs' nodes: each must be a node of the function.
static loom_status_t resolve_control_outputs(loom_function_builder_t* builder) {
  loom_function_t* function = builder->function;
  int32_t n = builder->num_control_outputs;
  if (n == 0) return loom_ok_status();
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &function->arena, sizeof(*function->control_outputs) * (size_t)n,
      (void**)&function->control_outputs));
  for (int32_t i = 0; i < n; ++i) {
    const pending_control_output_t* pending = &builder->control_outputs[i];
    int32_t node = loom__function_find_node(function, pending->node);
    if (node < 0) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': control output '%s' names node "
                              "'%s', which the function does not have",
                              function->name, pending->name, pending->node);
    }
    function->control_outputs[i] = (loom__function_control_output_t){
        .name = pending->name,
        .node = node,
    };
  }
  function->num_control_outputs = n;
  return loom_ok_status();
}

// Parses the node inputs and placeholders, the outputs' sources and the
// control outputs' nodes.
static loom_status_t parse_references(loom_function_builder_t* builder) {
  loom_function_t* function = builder->function;
  char where[320];
  for (int32_t n = 0; n < function->num_nodes; ++n) {
    loom__function_node_t* node = &function->nodes[n];
    const char** raw = builder->node_inputs[n];
    int32_t count = node->num_inputs;
    node->num_inputs = 0;
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &function->arena, sizeof(*node->inputs) * (size_t)(count + 1),
        (void**)&node->inputs));
    LOOM_RETURN_IF_ERROR(loom__arena_allocate(
        &function->arena, sizeof(*node->controls) * (size_t)(count + 1),
        (void**)&node->controls));
    snprintf(where, sizeof(where), "node '%s'", node->name);
    for (int32_t i = 0; i < count; ++i) {
      if (raw[i][0] == '^') {
        int32_t control = loom__function_find_node(function, raw[i] + 1);
        if (control < 0) {
          return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                  "function '%s': node '%s': control input "
                                  "'%s' names no node",
                                  function->name, node->name, raw[i]);
        }
        node->controls[node->num_controls++] = control;
        continue;
      }
      if (node->num_controls > 0) {
        return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                                "function '%s': node '%s': input '%s' comes "
                                "after a control input; control inputs come "
                                "last",
                                function->name, node->name, raw[i]);
      }
      LOOM_RETURN_IF_ERROR(loom__function_parse_ref(
          function, raw[i], where, &node->inputs[node->num_inputs]));
      node->num_inputs++;
    }
  }
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(
      &function->arena,
      sizeof(*function->sources) * (size_t)(function->num_outputs + 1),
      (void**)&function->sources));
  for (int32_t o = 0; o < function->num_outputs; ++o) {
    snprintf(where, sizeof(where), "output '%s'", function->outputs[o].name);
    LOOM_RETURN_IF_ERROR(loom__function_parse_ref(
        function, builder->output_sources[o], where, &function->sources[o]));
  }
  // Placeholders, per node.
  for (int32_t p = 0; p < builder->num_placeholders; ++p) {
    const pending_placeholder_t* pending = &builder->placeholders[p];
    if (!loom_op_def_find_attr(function->signature, pending->placeholder)) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': attr '%s' of node '%s' takes "
                              "'$%s', which the signature does not declare",
                              function->name, pending->attr, pending->node,
                              pending->placeholder);
    }
    loom__function_node_t* node =
        &function->nodes[loom__function_find_node(function, pending->node)];
    if (!node->placeholders) {
      LOOM_RETURN_IF_ERROR(loom__arena_allocate(
          &function->arena,
          sizeof(*node->placeholders) * (size_t)builder->num_placeholders,
          (void**)&node->placeholders));
    }
    node->placeholders[node->num_placeholders].attr = pending->attr;
    node->placeholders[node->num_placeholders].placeholder =
        pending->placeholder;
    node->num_placeholders++;
  }
  return resolve_control_outputs(builder);
}

// Orders the nodes so that each runs after the nodes it reads (Kahn's
// algorithm, keeping the written order among independent nodes).
static loom_status_t order_nodes(loom_function_t* function) {
  int32_t n = function->num_nodes;
  LOOM_RETURN_IF_ERROR(loom__arena_allocate(&function->arena,
                                            sizeof(int32_t) * (size_t)(n + 1),
                                            (void**)&function->order));
  bool* done = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(function->allocator, (size_t)n + 1, (void**)&done));
  int32_t placed = 0;
  bool progress = true;
  while (placed < n && progress) {
    progress = false;
    for (int32_t i = 0; i < n; ++i) {
      if (done[i]) continue;
      const loom__function_node_t* node = &function->nodes[i];
      bool ready = true;
      for (int32_t j = 0; ready && j < node->num_inputs; ++j) {
        int32_t from = node->inputs[j].node;
        ready = from < 0 || done[from];
      }
      for (int32_t j = 0; ready && j < node->num_controls; ++j) {
        ready = done[node->controls[j]];
      }
      if (!ready) continue;
      done[i] = true;
      function->order[placed++] = i;
      progress = true;
    }
  }
  int32_t stuck = -1;
  for (int32_t i = 0; i < n && stuck < 0; ++i) {
    if (!done[i]) stuck = i;
  }
  loom_allocator_free(function->allocator, done);
  if (stuck >= 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': node '%s' is on a cycle (it "
                            "depends on its own outputs)",
                            function->name, function->nodes[stuck].name);
  }
  return loom_ok_status();
}

loom_status_t loom_function_builder_finish(loom_function_builder_t* builder,
                                           loom_function_t** out_function) {
  if (!builder || !out_function) {
    loom_function_builder_destroy(builder);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_function_builder_finish: %s is NULL",
                            !builder ? "builder" : "out_function");
  }
  *out_function = NULL;
  loom_status_t status = make_signature(builder);
  if (!status) status = parse_references(builder);
  if (!status) status = order_nodes(builder->function);
  if (status) {
    loom_function_builder_destroy(builder);
    return status;
  }
  *out_function = builder->function;
  free_builder_arrays(builder);
  loom_allocator_free(builder->function->allocator, builder);
  return loom_ok_status();
}
