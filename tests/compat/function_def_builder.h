// FunctionDefs for the tests, packed with protobuf-c: a signature (attrs,
// single and list arguments, control outputs), the arguments' shapes
// (arg_attr "_output_shapes"), nodes with placeholder, type, int and bool
// attrs, `ret` and `control_ret`. Everything lives in one fixed-size
// struct (the tests' FunctionDefs are small); strings are borrowed and
// must outlive fdef_pack.

#ifndef LOOM_TESTS_COMPAT_FUNCTION_DEF_BUILDER_H_
#define LOOM_TESTS_COMPAT_FUNCTION_DEF_BUILDER_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tensorflow/c/eager/c_api.h"
#include "test_support.h"
#include "tf_framework.pb-c.h"

enum {
  kFdefMaxArgs = 6,
  kFdefMaxAttrs = 4,
  kFdefMaxTypes = 4,
  kFdefMaxNodes = 8,
  kFdefMaxNodeInputs = 4,
  kFdefMaxNodeAttrs = 4,
  kFdefMaxControl = 2,
  kFdefMaxRank = 4,
};

typedef struct fdef_node_t {
  Tensorflow__NodeDef node;
  char* inputs[kFdefMaxNodeInputs];
  Tensorflow__NodeDef__AttrEntry entries[kFdefMaxNodeAttrs];
  Tensorflow__NodeDef__AttrEntry* entry_ptrs[kFdefMaxNodeAttrs];
  Tensorflow__AttrValue values[kFdefMaxNodeAttrs];
} fdef_node_t;

typedef struct fdef_t {
  Tensorflow__FunctionDef def;
  Tensorflow__OpDef signature;
  Tensorflow__OpDef__ArgDef args[2 * kFdefMaxArgs];
  Tensorflow__OpDef__ArgDef* inputs[kFdefMaxArgs];
  Tensorflow__OpDef__ArgDef* outputs[kFdefMaxArgs];
  Tensorflow__OpDef__AttrDef attrs[kFdefMaxAttrs];
  Tensorflow__OpDef__AttrDef* attr_ptrs[kFdefMaxAttrs];
  Tensorflow__AttrValue allowed[kFdefMaxAttrs];
  Tensorflow__AttrValue__ListValue allowed_lists[kFdefMaxAttrs];
  int32_t allowed_types[kFdefMaxAttrs][kFdefMaxTypes];
  fdef_node_t nodes[kFdefMaxNodes];
  Tensorflow__NodeDef* node_ptrs[kFdefMaxNodes];
  Tensorflow__FunctionDef__RetEntry rets[kFdefMaxArgs];
  Tensorflow__FunctionDef__RetEntry* ret_ptrs[kFdefMaxArgs];
  Tensorflow__FunctionDef__ControlRetEntry control_rets[kFdefMaxControl];
  Tensorflow__FunctionDef__ControlRetEntry* control_ret_ptrs[kFdefMaxControl];
  char* control_outputs[kFdefMaxControl];
  // arg_attr: per input argument, "_output_shapes" holding one shape.
  struct fdef_arg_attr_t {
    Tensorflow__FunctionDef__ArgAttrEntry entry;
    Tensorflow__FunctionDef__ArgAttrs attrs;
    Tensorflow__FunctionDef__ArgAttrs__AttrEntry attr;
    Tensorflow__FunctionDef__ArgAttrs__AttrEntry* attr_ptr;
    Tensorflow__AttrValue value;
    Tensorflow__AttrValue__ListValue list;
    Tensorflow__TensorShapeProto shape;
    Tensorflow__TensorShapeProto* shape_ptr;
    Tensorflow__TensorShapeProto__Dim dims[kFdefMaxRank];
    Tensorflow__TensorShapeProto__Dim* dim_ptrs[kFdefMaxRank];
  } arg_attrs[kFdefMaxArgs];
  Tensorflow__FunctionDef__ArgAttrEntry* arg_attr_ptrs[kFdefMaxArgs];
} fdef_t;

static inline void fdef_init(fdef_t* f, const char* name) {
  memset(f, 0, sizeof(*f));
  tensorflow__function_def__init(&f->def);
  tensorflow__op_def__init(&f->signature);
  f->signature.name = (char*)name;
  f->signature.input_arg = f->inputs;
  f->signature.output_arg = f->outputs;
  f->signature.attr = f->attr_ptrs;
  f->signature.control_output = f->control_outputs;
  f->def.signature = &f->signature;
  f->def.node_def = f->node_ptrs;
  f->def.ret = f->ret_ptrs;
  f->def.control_ret = f->control_ret_ptrs;
  f->def.arg_attr = f->arg_attr_ptrs;
}

// A signature attr of kind `type` ("type", "int", "list(type)"), with a
// minimum when `minimum` >= 0 and, for "type", the allowed dtypes (ended
// by 0).
static inline void fdef_attr(fdef_t* f, const char* name, const char* type,
                             int64_t minimum, const int32_t* allowed) {
  size_t i = f->signature.n_attr++;
  assert_true(i < kFdefMaxAttrs);
  Tensorflow__OpDef__AttrDef* attr = &f->attrs[i];
  tensorflow__op_def__attr_def__init(attr);
  attr->name = (char*)name;
  attr->type = (char*)type;
  if (minimum >= 0) {
    attr->has_minimum = 1;
    attr->minimum = minimum;
  }
  if (allowed) {
    tensorflow__attr_value__init(&f->allowed[i]);
    tensorflow__attr_value__list_value__init(&f->allowed_lists[i]);
    size_t n = 0;
    for (; allowed[n] && n < kFdefMaxTypes; ++n) {
      f->allowed_types[i][n] = allowed[n];
    }
    f->allowed_lists[i].type = f->allowed_types[i];
    f->allowed_lists[i].n_type = n;
    f->allowed[i].value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    f->allowed[i].list = &f->allowed_lists[i];
    attr->allowed_values = &f->allowed[i];
  }
  f->attr_ptrs[i] = attr;
}

static inline Tensorflow__OpDef__ArgDef* fdef_arg(fdef_t* f, const char* name,
                                                  int32_t dtype,
                                                  const char* type_attr,
                                                  const char* number_attr,
                                                  const char* type_list_attr) {
  size_t i = f->signature.n_input_arg + f->signature.n_output_arg;
  assert_true(i < 2 * kFdefMaxArgs);
  Tensorflow__OpDef__ArgDef* arg = &f->args[i];
  tensorflow__op_def__arg_def__init(arg);
  arg->name = (char*)name;
  arg->type = dtype;
  if (type_attr) arg->type_attr = (char*)type_attr;
  if (number_attr) arg->number_attr = (char*)number_attr;
  if (type_list_attr) arg->type_list_attr = (char*)type_list_attr;
  return arg;
}

// An input argument: a dtype (type_attr NULL) or a type attr, a number
// attr for `N * T`, or a type list attr.
static inline void fdef_input(fdef_t* f, const char* name, int32_t dtype,
                              const char* type_attr, const char* number_attr,
                              const char* type_list_attr) {
  Tensorflow__OpDef__ArgDef* arg =
      fdef_arg(f, name, dtype, type_attr, number_attr, type_list_attr);
  assert_true(f->signature.n_input_arg < kFdefMaxArgs);
  f->inputs[f->signature.n_input_arg++] = arg;
}

// An output argument and its `ret` entry (`source`; NULL: none).
static inline void fdef_output(fdef_t* f, const char* name, int32_t dtype,
                               const char* type_attr, const char* number_attr,
                               const char* type_list_attr, const char* source) {
  Tensorflow__OpDef__ArgDef* arg =
      fdef_arg(f, name, dtype, type_attr, number_attr, type_list_attr);
  assert_true(f->signature.n_output_arg < kFdefMaxArgs);
  f->outputs[f->signature.n_output_arg++] = arg;
  if (!source) return;
  size_t r = f->def.n_ret++;
  tensorflow__function_def__ret_entry__init(&f->rets[r]);
  f->rets[r].key = (char*)name;
  f->rets[r].value = (char*)source;
  f->ret_ptrs[r] = &f->rets[r];
}

// arg_attr of input argument `index`: "_output_shapes" holding one shape,
// dims[0, rank) (-1: an unknown dim; rank -1: an unknown rank), as
// TensorFlow writes the shape of a function's argument.
static inline void fdef_arg_shape(fdef_t* f, uint32_t index,
                                  const int64_t* dims, int32_t rank) {
  size_t i = f->def.n_arg_attr++;
  assert_true(i < kFdefMaxArgs && rank <= kFdefMaxRank);
  struct fdef_arg_attr_t* a = &f->arg_attrs[i];
  tensorflow__function_def__arg_attr_entry__init(&a->entry);
  tensorflow__function_def__arg_attrs__init(&a->attrs);
  tensorflow__function_def__arg_attrs__attr_entry__init(&a->attr);
  tensorflow__attr_value__init(&a->value);
  tensorflow__attr_value__list_value__init(&a->list);
  tensorflow__tensor_shape_proto__init(&a->shape);
  a->shape.unknown_rank = rank < 0;
  for (int32_t d = 0; d < rank; ++d) {
    tensorflow__tensor_shape_proto__dim__init(&a->dims[d]);
    a->dims[d].size = dims[d];
    a->dim_ptrs[d] = &a->dims[d];
  }
  a->shape.n_dim = rank < 0 ? 0 : (size_t)rank;
  a->shape.dim = a->dim_ptrs;
  a->shape_ptr = &a->shape;
  a->list.n_shape = 1;
  a->list.shape = &a->shape_ptr;
  a->value.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
  a->value.list = &a->list;
  a->attr.key = (char*)"_output_shapes";
  a->attr.value = &a->value;
  a->attr_ptr = &a->attr;
  a->attrs.n_attr = 1;
  a->attrs.attr = &a->attr_ptr;
  a->entry.key = index;
  a->entry.value = &a->attrs;
  f->arg_attr_ptrs[i] = &a->entry;
}

// A node of op `op` reading `inputs` (NULL-terminated); returns it.
static inline fdef_node_t* fdef_node(fdef_t* f, const char* name,
                                     const char* op,
                                     const char* const* inputs) {
  size_t i = f->def.n_node_def++;
  assert_true(i < kFdefMaxNodes);
  fdef_node_t* n = &f->nodes[i];
  tensorflow__node_def__init(&n->node);
  n->node.name = (char*)name;
  n->node.op = (char*)op;
  size_t count = 0;
  for (; inputs && inputs[count]; ++count) {
    assert_true(count < kFdefMaxNodeInputs);
    n->inputs[count] = (char*)inputs[count];
  }
  n->node.input = n->inputs;
  n->node.n_input = count;
  n->node.attr = n->entry_ptrs;
  f->node_ptrs[i] = &n->node;
  return n;
}

static inline Tensorflow__AttrValue* fdef_node_attr(fdef_node_t* n,
                                                    const char* key) {
  size_t i = n->node.n_attr++;
  assert_true(i < kFdefMaxNodeAttrs);
  tensorflow__node_def__attr_entry__init(&n->entries[i]);
  tensorflow__attr_value__init(&n->values[i]);
  n->entries[i].key = (char*)key;
  n->entries[i].value = &n->values[i];
  n->entry_ptrs[i] = &n->entries[i];
  return &n->values[i];
}

// Attr `key` of the node takes the signature's attr `placeholder` ("T").
static inline void fdef_placeholder(fdef_node_t* n, const char* key,
                                    const char* placeholder) {
  Tensorflow__AttrValue* value = fdef_node_attr(n, key);
  value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
  value->placeholder = (char*)placeholder;
}

static inline void fdef_type(fdef_node_t* n, const char* key, int32_t dtype) {
  Tensorflow__AttrValue* value = fdef_node_attr(n, key);
  value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
  value->type = dtype;
}

static inline void fdef_int(fdef_node_t* n, const char* key, int64_t i) {
  Tensorflow__AttrValue* value = fdef_node_attr(n, key);
  value->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
  value->i = i;
}

// A control_ret entry (`name` -> node `node`); with `declare`, also a
// control output of the signature.
static inline void fdef_control_ret(fdef_t* f, const char* name,
                                    const char* node, bool declare) {
  size_t i = f->def.n_control_ret++;
  assert_true(i < kFdefMaxControl);
  tensorflow__function_def__control_ret_entry__init(&f->control_rets[i]);
  f->control_rets[i].key = (char*)name;
  f->control_rets[i].value = (char*)node;
  f->control_ret_ptrs[i] = &f->control_rets[i];
  if (declare) {
    f->control_outputs[f->signature.n_control_output++] = (char*)name;
  }
}

// The serialized FunctionDef (malloc'ed).
static inline uint8_t* fdef_pack(const fdef_t* f, size_t* out_size) {
  *out_size = tensorflow__function_def__get_packed_size(&f->def);
  uint8_t* bytes = malloc(*out_size ? *out_size : 1);
  assert_non_null(bytes);
  tensorflow__function_def__pack(&f->def, bytes);
  return bytes;
}

// Packs `f` and adds it to `ctx` (the status says how that went).
static inline void fdef_add(const fdef_t* f, TFE_Context* ctx,
                            TF_Status* status) {
  size_t size = 0;
  uint8_t* bytes = fdef_pack(f, &size);
  TFE_ContextAddFunctionDef(ctx, (const char*)bytes, size, status);
  free(bytes);
}

#endif  // LOOM_TESTS_COMPAT_FUNCTION_DEF_BUILDER_H_
