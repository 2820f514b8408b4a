// Op definition builders: collect parsed specs, then validate them against
// each other when the definition is registered (op_registry.c).

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "registry/op_def_internal.h"
#include "registry/op_spec_parser.h"

loom_status_t loom_op_def_builder_create(loom_allocator_t allocator,
                                         const char* name,
                                         loom_op_def_builder_t** out_builder) {
  if (!out_builder || !name) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_builder_create: %s is NULL",
                            !name ? "name" : "out_builder");
  }
  *out_builder = NULL;
  bool valid = is_identifier_start_char(name[0]);
  for (const char* c = name; valid && *c; ++c) {
    valid = isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '>' ||
            *c == '-';
  }
  if (!valid) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "invalid op name '%s': use letters, digits, '_', '.', '>' and '-', "
        "starting with a letter or '_'",
        name);
  }
  loom_op_def_builder_t* builder = NULL;
  LOOM_RETURN_IF_ERROR(
      loom_allocator_calloc(allocator, sizeof(*builder), (void**)&builder));
  builder->allocator = allocator;
  loom__arena_initialize(&builder->arena, allocator);
  loom_op_attrs_initialize(&builder->defaults, allocator);
  loom_status_t status = loom__arena_strndup(&builder->arena, name,
                                             strlen(name), &builder->def.name);
  if (status) {
    loom_op_def_builder_destroy(builder);
    return status;
  }
  *out_builder = builder;
  return loom_ok_status();
}

void loom_op_def_builder_destroy(loom_op_def_builder_t* builder) {
  if (!builder) return;
  loom_op_attrs_deinitialize(&builder->defaults);
  loom_allocator_free(builder->allocator, builder->inputs);
  loom_allocator_free(builder->allocator, builder->outputs);
  loom_allocator_free(builder->allocator, builder->attrs);
  loom__arena_deinitialize(&builder->arena);
  loom_allocator_free(builder->allocator, builder);
}

// Appends one element to a growable array owned by the builder.
static loom_status_t grow(loom_op_def_builder_t* builder, void** array,
                          int32_t* count, int32_t* capacity,
                          size_t element_size) {
  if (*count < *capacity) return loom_ok_status();
  int32_t new_capacity = *capacity ? *capacity * 2 : 4;
  void* grown = NULL;
  LOOM_RETURN_IF_ERROR(loom_allocator_malloc(
      builder->allocator, element_size * (size_t)new_capacity, &grown));
  if (*count) memcpy(grown, *array, element_size * (size_t)*count);
  loom_allocator_free(builder->allocator, *array);
  *array = grown;
  *capacity = new_capacity;
  return loom_ok_status();
}

static loom_status_t check_builder(const loom_op_def_builder_t* builder,
                                   const char* spec, const char* function) {
  if (!builder || !spec) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT, "%s: %s is NULL",
                            function, !builder ? "builder" : "spec");
  }
  return loom_ok_status();
}

static loom_status_t add_arg(loom_op_def_builder_t* builder, const char* spec,
                             bool output) {
  LOOM_RETURN_IF_ERROR(check_builder(builder, spec,
                                     output ? "loom_op_def_builder_add_output"
                                            : "loom_op_def_builder_add_input"));
  loom_arg_def_t** array = output ? &builder->outputs : &builder->inputs;
  int32_t* count = output ? &builder->num_outputs : &builder->num_inputs;
  int32_t* capacity =
      output ? &builder->outputs_capacity : &builder->inputs_capacity;
  LOOM_RETURN_IF_ERROR(
      grow(builder, (void**)array, count, capacity, sizeof(loom_arg_def_t)));
  loom_arg_def_t arg;
  loom_status_t status = loom__parse_arg_spec(spec, &builder->arena, &arg);
  if (status) {
    return loom_status_annotate(status, "Op '%s': %s", builder->def.name,
                                output ? "output" : "input");
  }
  (*array)[(*count)++] = arg;
  return loom_ok_status();
}

loom_status_t loom_op_def_builder_add_input(loom_op_def_builder_t* builder,
                                            const char* spec) {
  return add_arg(builder, spec, false);
}

loom_status_t loom_op_def_builder_add_output(loom_op_def_builder_t* builder,
                                             const char* spec) {
  return add_arg(builder, spec, true);
}

loom_status_t loom_op_def_builder_add_attr(loom_op_def_builder_t* builder,
                                           const char* spec) {
  LOOM_RETURN_IF_ERROR(
      check_builder(builder, spec, "loom_op_def_builder_add_attr"));
  LOOM_RETURN_IF_ERROR(grow(builder, (void**)&builder->attrs,
                            &builder->num_attrs, &builder->attrs_capacity,
                            sizeof(loom_attr_def_t)));
  loom_attr_def_t attr;
  loom_status_t status =
      loom__parse_attr_spec(spec, &builder->arena, &builder->defaults, &attr);
  if (status) {
    return loom_status_annotate(status, "Op '%s'", builder->def.name);
  }
  builder->attrs[builder->num_attrs++] = attr;
  return loom_ok_status();
}

void loom_op_def_builder_set_is_commutative(loom_op_def_builder_t* builder,
                                            bool value) {
  if (builder) builder->def.is_commutative = value;
}

void loom_op_def_builder_set_is_aggregate(loom_op_def_builder_t* builder,
                                          bool value) {
  if (builder) builder->def.is_aggregate = value;
}

void loom_op_def_builder_set_is_stateful(loom_op_def_builder_t* builder,
                                         bool value) {
  if (builder) builder->def.is_stateful = value;
}

void loom_op_def_builder_set_allows_uninitialized_input(
    loom_op_def_builder_t* builder, bool value) {
  if (builder) builder->def.allows_uninitialized_input = value;
}

loom_status_t loom_op_def_builder_set_deprecated(loom_op_def_builder_t* builder,
                                                 int version,
                                                 const char* explanation) {
  if (!builder) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_op_def_builder_set_deprecated: builder is "
                            "NULL");
  }
  if (version <= 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Op '%s': deprecation version %d must be positive",
                            builder->def.name, version);
  }
  if (!explanation) explanation = "";
  LOOM_RETURN_IF_ERROR(
      loom__arena_strndup(&builder->arena, explanation, strlen(explanation),
                          &builder->def.deprecation_explanation));
  builder->def.deprecation_version = version;
  return loom_ok_status();
}

void loom_op_def_builder_set_shape_fn(loom_op_def_builder_t* builder,
                                      loom_shape_fn_t shape_fn,
                                      void* user_data) {
  if (!builder) return;
  builder->def.shape_fn = shape_fn;
  builder->def.shape_fn_user_data = user_data;
}

void loom_op_def_builder_set_metadata_fn(loom_op_def_builder_t* builder,
                                         loom_metadata_fn_t metadata_fn) {
  if (!builder) return;
  builder->def.metadata_fn = metadata_fn;
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

const loom_attr_def_t* loom_op_def_find_attr(const loom_op_def_t* op,
                                             const char* name) {
  if (!op || !name) return NULL;
  for (int32_t i = 0; i < op->num_attrs; ++i) {
    if (strcmp(op->attrs[i].name, name) == 0) return &op->attrs[i];
  }
  return NULL;
}

static int32_t find_arg(const loom_arg_def_t* args, int32_t count,
                        const char* name) {
  if (!name) return -1;
  for (int32_t i = 0; i < count; ++i) {
    if (strcmp(args[i].name, name) == 0) return i;
  }
  return -1;
}

int32_t loom_op_def_find_input(const loom_op_def_t* op, const char* name) {
  return op ? find_arg(op->inputs, op->num_inputs, name) : -1;
}

int32_t loom_op_def_find_output(const loom_op_def_t* op, const char* name) {
  return op ? find_arg(op->outputs, op->num_outputs, name) : -1;
}

bool loom_attr_def_allows_type(const loom_attr_def_t* attr,
                               loom_dtype_t dtype) {
  if (!attr) return false;
  if (attr->num_allowed_types == 0) return true;
  for (int32_t i = 0; i < attr->num_allowed_types; ++i) {
    if (attr->allowed_types[i] == dtype) return true;
  }
  return false;
}

// "float, int32" for messages.
static void format_allowed_types(const loom_attr_def_t* attr, char* buffer,
                                 size_t capacity) {
  size_t length = 0;
  buffer[0] = '\0';
  for (int32_t i = 0; i < attr->num_allowed_types && length < capacity; ++i) {
    int written =
        snprintf(buffer + length, capacity - length, "%s%s", i ? ", " : "",
                 loom_dtype_name(attr->allowed_types[i]));
    if (written < 0) break;
    length += (size_t)written;
  }
}

static bool kind_matches(const loom_attr_def_t* attr,
                         const loom_attr_value_t* value) {
  if (attr->is_list != value->is_list) return false;
  if (attr->kind == value->kind) return true;
  // TensorFlow's int and float accept Loom's other widths.
  if (attr->kind == LOOM_ATTR_KIND_I64)
    return value->kind == LOOM_ATTR_KIND_I32;
  if (attr->kind == LOOM_ATTR_KIND_F32)
    return value->kind == LOOM_ATTR_KIND_F64;
  return false;
}

static const char* tf_kind_name(loom_attr_kind_t kind) {
  switch (kind) {
    case LOOM_ATTR_KIND_I64:
      return "int";
    case LOOM_ATTR_KIND_F32:
      return "float";
    case LOOM_ATTR_KIND_BOOL:
      return "bool";
    case LOOM_ATTR_KIND_DTYPE:
      return "type";
    case LOOM_ATTR_KIND_SHAPE:
      return "shape";
    case LOOM_ATTR_KIND_STRING:
      return "string";
    case LOOM_ATTR_KIND_TENSOR:
      return "tensor";
    case LOOM_ATTR_KIND_FUNC:
      return "func";
    default:
      return loom_attr_kind_name(kind);
  }
}

static int64_t int_of(const loom_attr_value_t* element) {
  return element->kind == LOOM_ATTR_KIND_I32 ? element->u.i32 : element->u.i64;
}

loom_status_t loom_attr_def_check_value(const loom_op_def_t* op,
                                        const loom_attr_def_t* attr,
                                        const loom_attr_value_t* value) {
  const char* op_name = op ? op->name : "?";
  if (!attr || !value) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_attr_def_check_value: %s is NULL",
                            !attr ? "attr" : "value");
  }
  if (!kind_matches(attr, value)) {
    return loom_make_status(
        LOOM_STATUS_INVALID_ARGUMENT,
        "Op '%s': attr '%s' expects a %s%s%s value, got %s%s%s", op_name,
        attr->name, attr->is_list ? "list(" : "", tf_kind_name(attr->kind),
        attr->is_list ? ")" : "", value->is_list ? "list(" : "",
        tf_kind_name(value->kind), value->is_list ? ")" : "");
  }
  if (attr->has_minimum) {
    if (attr->is_list && value->count < attr->minimum) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Op '%s': length for attr '%s' of %" PRId64
                              " must be at least minimum %" PRId64,
                              op_name, attr->name, value->count, attr->minimum);
    }
    if (!attr->is_list && int_of(value) < attr->minimum) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "Op '%s': value for attr '%s' of %" PRId64
                              " must be at least minimum %" PRId64,
                              op_name, attr->name, int_of(value),
                              attr->minimum);
    }
  }
  // A scalar is one element whatever its `count` says (loom_op_attrs_t
  // ignores it too).
  int64_t elements = value->is_list ? value->count : 1;
  for (int64_t i = 0; i < elements; ++i) {
    loom_attr_value_t element = *value;
    if (value->is_list) {
      LOOM_RETURN_IF_ERROR(loom_attr_value_list_element(value, i, &element));
    }
    if (attr->kind == LOOM_ATTR_KIND_DTYPE &&
        !loom_attr_def_allows_type(attr, element.u.dtype)) {
      char allowed[512];
      format_allowed_types(attr, allowed, sizeof(allowed));
      return loom_make_status(
          LOOM_STATUS_INVALID_ARGUMENT,
          "Op '%s': value for attr '%s' of %s is not in the list of allowed "
          "values: %s",
          op_name, attr->name, loom_dtype_name(element.u.dtype), allowed);
    }
    if (attr->kind == LOOM_ATTR_KIND_STRING && attr->num_allowed_strings) {
      bool found = false;
      for (int32_t s = 0; s < attr->num_allowed_strings && !found; ++s) {
        found = attr->allowed_strings[s].size == element.u.string.size &&
                memcmp(attr->allowed_strings[s].data, element.u.string.data,
                       element.u.string.size) == 0;
      }
      if (!found) {
        return loom_make_status(
            LOOM_STATUS_INVALID_ARGUMENT,
            "Op '%s': value for attr '%s' of \"%.*s\" is not in the list of "
            "allowed values (spec \"%s\")",
            op_name, attr->name, (int)element.u.string.size,
            element.u.string.data, attr->spec);
      }
    }
  }
  return loom_ok_status();
}
