// TensorFlow's serialized FunctionDef (function.proto) as a Loom function:
// the signature's OpDef becomes the builder's attrs, inputs and outputs
// (shapes from the arguments' "_output_shapes", a list argument's for each
// of its tensors), each NodeDef a node (its attrs decoded, placeholders
// kept), `ret` the outputs' sources (a list argument, `N * T` or a type
// list, one of the builder's lists) and `control_ret` its control outputs.

#include "compat/tf_function_def.h"

#include <stdio.h>
#include <string.h>

#include "compat/tf_attr_value_decode.h"
#include "tf_framework.pb-c.h"

// The signature attr as an op-definition spec: "T: {float, double}",
// "N: int >= 1", "T: type = DT_FLOAT".
static void attr_spec(const Tensorflow__OpDef__AttrDef* attr, char* spec,
                      size_t capacity) {
  int length = snprintf(spec, capacity, "%s: ", attr->name);
  const Tensorflow__AttrValue* allowed = attr->allowed_values;
  bool is_type = strcmp(attr->type, "type") == 0;
  if (is_type && allowed &&
      allowed->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
      allowed->list->n_type > 0) {
    length += snprintf(spec + length, capacity - (size_t)length, "{");
    for (size_t i = 0; i < allowed->list->n_type && (size_t)length < capacity;
         ++i) {
      length += snprintf(spec + length, capacity - (size_t)length, "%s%s",
                         i ? ", " : "",
                         loom_dtype_name((loom_dtype_t)allowed->list->type[i]));
    }
    length += snprintf(spec + length, capacity - (size_t)length, "}");
  } else {
    length +=
        snprintf(spec + length, capacity - (size_t)length, "%s", attr->type);
  }
  if ((size_t)length >= capacity) return;
  if (attr->has_minimum) {
    length += snprintf(spec + length, capacity - (size_t)length, " >= %lld",
                       (long long)attr->minimum);
  }
  const Tensorflow__AttrValue* value = attr->default_value;
  if (!value || (size_t)length >= capacity) return;
  if (value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE) {
    snprintf(spec + length, capacity - (size_t)length, " = %s",
             loom_dtype_name((loom_dtype_t)value->type));
  } else if (value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I) {
    snprintf(spec + length, capacity - (size_t)length, " = %lld",
             (long long)value->i);
  } else if (value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_B) {
    snprintf(spec + length, capacity - (size_t)length, " = %s",
             value->b ? "true" : "false");
  }
}

// The shape "_output_shapes" gives argument `index`, if any.
static const Tensorflow__TensorShapeProto* arg_shape(
    const Tensorflow__FunctionDef* def, size_t index) {
  for (size_t i = 0; i < def->n_arg_attr; ++i) {
    const Tensorflow__FunctionDef__ArgAttrEntry* entry = def->arg_attr[i];
    if (entry->key != index || !entry->value) continue;
    for (size_t a = 0; a < entry->value->n_attr; ++a) {
      const Tensorflow__FunctionDef__ArgAttrs__AttrEntry* attr =
          entry->value->attr[a];
      if (strcmp(attr->key, "_output_shapes") == 0 && attr->value &&
          attr->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
          attr->value->list->n_shape == 1) {
        return attr->value->list->shape[0];
      }
    }
  }
  return NULL;
}

static bool is_list(const Tensorflow__OpDef__ArgDef* arg) {
  return *arg->number_attr || *arg->type_list_attr;
}

// A list argument's types: `N * T`, `N * float` or a type list.
static void list_types(const Tensorflow__OpDef__ArgDef* arg,
                       loom_dtype_t* dtype, const char** type_attr,
                       const char** number_attr, const char** type_list_attr) {
  bool type_list = *arg->type_list_attr;
  *dtype = type_list || *arg->type_attr ? LOOM_DTYPE_INVALID
                                        : (loom_dtype_t)arg->type;
  *type_attr = !type_list && *arg->type_attr ? arg->type_attr : NULL;
  *number_attr = type_list ? NULL : arg->number_attr;
  *type_list_attr = type_list ? arg->type_list_attr : NULL;
}

// `ret`'s source of output `name`, or NULL.
static const char* ret_source(const Tensorflow__FunctionDef* def,
                              const char* name) {
  for (size_t r = 0; r < def->n_ret; ++r) {
    if (strcmp(def->ret[r]->key, name) == 0) return def->ret[r]->value;
  }
  return NULL;
}

// Argument `i`'s shape from its "_output_shapes" (unknown without one);
// of each tensor of a list argument, as TensorFlow gives every element's
// _Arg node the argument's attrs.
static loom_status_t declared_shape(const Tensorflow__FunctionDef* def,
                                    size_t i, loom_shape_t* out) {
  *out = loom_shape_unknown();
  const Tensorflow__TensorShapeProto* proto = arg_shape(def, i);
  if (!proto || proto->unknown_rank || proto->n_dim > LOOM_MAX_SHAPE_RANK) {
    return loom_ok_status();
  }
  int64_t dims[LOOM_MAX_SHAPE_RANK];
  for (size_t d = 0; d < proto->n_dim; ++d) {
    dims[d] = proto->dim[d]->size < 0 ? LOOM_UNKNOWN_DIM : proto->dim[d]->size;
  }
  return loom_shape_initialize_large(out, dims, (int32_t)proto->n_dim);
}

static loom_status_t add_input(loom_function_builder_t* builder,
                               const Tensorflow__FunctionDef* def, size_t i) {
  const Tensorflow__OpDef__ArgDef* arg = def->signature->input_arg[i];
  loom_shape_t shape;
  LOOM_RETURN_IF_ERROR(declared_shape(def, i, &shape));
  if (is_list(arg)) {
    loom_dtype_t dtype;
    const char *type_attr, *number_attr, *type_list_attr;
    list_types(arg, &dtype, &type_attr, &number_attr, &type_list_attr);
    return loom_function_builder_add_input_list(builder, arg->name, dtype,
                                                type_attr, number_attr,
                                                type_list_attr, &shape);
  }
  return loom_function_builder_add_input(
      builder, arg->name, *arg->type_attr ? LOOM_DTYPE_INVALID : arg->type,
      *arg->type_attr ? arg->type_attr : NULL, &shape);
}

static loom_status_t add_output(loom_function_builder_t* builder,
                                const Tensorflow__FunctionDef* def, size_t i) {
  const Tensorflow__OpDef__ArgDef* arg = def->signature->output_arg[i];
  const char* source = ret_source(def, arg->name);
  if (!source) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "function '%s': output '%s' has no entry in "
                            "ret",
                            def->signature->name, arg->name);
  }
  if (is_list(arg)) {
    loom_dtype_t dtype;
    const char *type_attr, *number_attr, *type_list_attr;
    list_types(arg, &dtype, &type_attr, &number_attr, &type_list_attr);
    return loom_function_builder_add_output_list(builder, arg->name, dtype,
                                                 type_attr, number_attr,
                                                 type_list_attr, source);
  }
  return loom_function_builder_add_output(
      builder, arg->name, *arg->type_attr ? LOOM_DTYPE_INVALID : arg->type,
      *arg->type_attr ? arg->type_attr : NULL, source);
}

// control_ret: the nodes each call runs though no output reads them. Each
// of the signature's control outputs needs an entry.
static loom_status_t add_control_outputs(loom_function_builder_t* builder,
                                         const Tensorflow__FunctionDef* def) {
  const Tensorflow__OpDef* signature = def->signature;
  for (size_t i = 0; i < signature->n_control_output; ++i) {
    const char* name = signature->control_output[i];
    bool found = false;
    for (size_t r = 0; r < def->n_control_ret && !found; ++r) {
      found = strcmp(def->control_ret[r]->key, name) == 0;
    }
    if (!found) {
      return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                              "function '%s': control output '%s' has no "
                              "entry in control_ret",
                              signature->name, name);
    }
  }
  for (size_t r = 0; r < def->n_control_ret; ++r) {
    LOOM_RETURN_IF_ERROR(loom_function_builder_add_control_output(
        builder, def->control_ret[r]->key, def->control_ret[r]->value));
  }
  return loom_ok_status();
}

static loom_status_t add_signature(loom_function_builder_t* builder,
                                   const Tensorflow__FunctionDef* def) {
  const Tensorflow__OpDef* signature = def->signature;
  char spec[512];
  for (size_t i = 0; i < signature->n_attr; ++i) {
    attr_spec(signature->attr[i], spec, sizeof(spec));
    LOOM_RETURN_IF_ERROR(loom_function_builder_add_attr(builder, spec));
  }
  for (size_t i = 0; i < signature->n_input_arg; ++i) {
    LOOM_RETURN_IF_ERROR(add_input(builder, def, i));
  }
  for (size_t i = 0; i < signature->n_output_arg; ++i) {
    LOOM_RETURN_IF_ERROR(add_output(builder, def, i));
  }
  LOOM_RETURN_IF_ERROR(add_control_outputs(builder, def));
  loom_function_builder_set_stateful(builder, signature->is_stateful);
  return loom_ok_status();
}

static loom_status_t add_node(loom_function_builder_t* builder,
                              const char* function,
                              const Tensorflow__NodeDef* node) {
  loom_op_attrs_t attrs;
  loom_op_attrs_initialize(&attrs, loom_allocator_system());
  loom_status_t status = loom_ok_status();
  for (size_t i = 0; !status && i < node->n_attr; ++i) {
    const Tensorflow__NodeDef__AttrEntry* entry = node->attr[i];
    // Attrs of the graph builder and the runtime ("_output_shapes", ...),
    // not the op's.
    if (entry->key[0] == '_' || !entry->value ||
        entry->value->value_case == TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER) {
      continue;
    }
    status = loom__tf_decode_attr_value(entry->value, entry->key, &attrs);
  }
  if (!status) {
    status = loom_function_builder_add_node(
        builder, node->name, node->op, (const char* const*)node->input,
        (int32_t)node->n_input, &attrs, node->device);
  }
  loom_op_attrs_deinitialize(&attrs);
  for (size_t i = 0; !status && i < node->n_attr; ++i) {
    const Tensorflow__NodeDef__AttrEntry* entry = node->attr[i];
    if (!entry->value ||
        entry->value->value_case != TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER) {
      continue;
    }
    const char* placeholder = entry->value->placeholder;
    if (placeholder[0] == '$') placeholder++;
    status = loom_function_builder_set_node_placeholder(
        builder, node->name, entry->key, placeholder);
  }
  return loom_status_annotate(status, "function '%s': node '%s'", function,
                              node->name);
}

loom_status_t loom__tf_function_from_def(const void* data, size_t size,
                                         loom_function_t** out_function) {
  *out_function = NULL;
  if (!data && size > 0) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "FunctionDef: %zu bytes at NULL", size);
  }
  Tensorflow__FunctionDef* def =
      tensorflow__function_def__unpack(NULL, size, data);
  if (!def) {
    // TensorFlow's words.
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "Invalid FunctionDef proto (%zu bytes)", size);
  }
  if (!def->signature || !*def->signature->name) {
    tensorflow__function_def__free_unpacked(def, NULL);
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "FunctionDef: the signature has no name");
  }
  loom_function_builder_t* builder = NULL;
  loom_status_t status = loom_function_builder_create(
      loom_allocator_system(), def->signature->name, &builder);
  if (!status) status = add_signature(builder, def);
  for (size_t i = 0; !status && i < def->n_node_def; ++i) {
    status = add_node(builder, def->signature->name, def->node_def[i]);
  }
  if (!status) {
    status = loom_function_builder_finish(builder, out_function);
  } else {
    loom_function_builder_destroy(builder);
  }
  tensorflow__function_def__free_unpacked(def, NULL);
  return status;
}
