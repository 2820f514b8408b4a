// Encoding op and kernel definitions as TensorFlow's OpList and KernelList
// (see tf_framework_proto.h). The protobuf-c message structs point into
// one arena that is freed once the bytes are packed.

#include "compat/tf_framework_proto.h"

#include <string.h>

#include "base/arena.h"
#include "base/tagged_block.h"
#include "loom/tstring.h"
#include "registry/kernel_registry_internal.h"
#include "tf_framework.pb-c.h"

typedef Tensorflow__AttrValue attr_value_t;
typedef Tensorflow__AttrValue__ListValue list_value_t;
typedef Tensorflow__TensorShapeProto shape_proto_t;
typedef Tensorflow__TensorProto tensor_proto_t;

// Zero-filled storage for `count` elements of `size` bytes in `arena`.
static loom_status_t make_array(loom__arena_t* arena, size_t count, size_t size,
                                void** out) {
  *out = NULL;
  if (!count) return loom_ok_status();
  size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    return loom_make_status(LOOM_STATUS_RESOURCE_EXHAUSTED,
                            "serializing definitions: %zu elements of %zu "
                            "bytes overflow",
                            count, size);
  }
  return loom__arena_allocate(arena, bytes, out);
}

#define MAKE(arena, type, out) \
  make_array((arena), 1, sizeof(type), (void**)(out))

static loom_status_t copy_string(loom__arena_t* arena, const char* text,
                                 char** out) {
  const char* copy = NULL;
  LOOM_RETURN_IF_ERROR(loom__arena_strndup(arena, text ? text : "",
                                           text ? strlen(text) : 0, &copy));
  *out = (char*)copy;
  return loom_ok_status();
}

static loom_status_t encode_shape(loom__arena_t* arena, int32_t rank,
                                  const int64_t* dims, shape_proto_t** out) {
  shape_proto_t* shape = NULL;
  LOOM_RETURN_IF_ERROR(MAKE(arena, shape_proto_t, &shape));
  tensorflow__tensor_shape_proto__init(shape);
  if (rank == LOOM_UNKNOWN_RANK) {
    shape->unknown_rank = true;
  } else if (rank > 0) {
    Tensorflow__TensorShapeProto__Dim* dim_storage = NULL;
    LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)rank, sizeof(*dim_storage),
                                    (void**)&dim_storage));
    LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)rank, sizeof(*shape->dim),
                                    (void**)&shape->dim));
    for (int32_t i = 0; i < rank; ++i) {
      tensorflow__tensor_shape_proto__dim__init(&dim_storage[i]);
      dim_storage[i].size = dims[i];  // LOOM_UNKNOWN_DIM is TensorFlow's -1
      shape->dim[i] = &dim_storage[i];
    }
    shape->n_dim = (size_t)rank;
  }
  *out = shape;
  return loom_ok_status();
}

// A tensor as TensorFlow's TensorProto: the strings of a STRING tensor,
// the raw bytes (tensor_content) of any other.
static loom_status_t encode_tensor(loom__arena_t* arena,
                                   const loom_tensor_t* tensor,
                                   tensor_proto_t** out) {
  tensor_proto_t* proto = NULL;
  LOOM_RETURN_IF_ERROR(MAKE(arena, tensor_proto_t, &proto));
  tensorflow__tensor_proto__init(proto);
  proto->dtype = (int32_t)loom_tensor_dtype(tensor);
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  LOOM_RETURN_IF_ERROR(
      encode_shape(arena, shape->rank, shape->dims, &proto->tensor_shape));
  if (loom_tensor_dtype(tensor) == LOOM_DTYPE_STRING) {
    int64_t count = loom_tensor_num_elements(tensor);
    LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)count,
                                    sizeof(*proto->string_val),
                                    (void**)&proto->string_val));
    for (int64_t i = 0; i < count; ++i) {
      const loom_tstring_t* element = loom_tensor_string_at(tensor, i);
      proto->string_val[i].data = (uint8_t*)loom_tstring_data(element);
      proto->string_val[i].len = loom_tstring_size(element);
    }
    proto->n_string_val = (size_t)count;
  } else {
    proto->tensor_content.data = loom_tensor_data(tensor);
    proto->tensor_content.len = loom_tensor_byte_size(tensor);
  }
  *out = proto;
  return loom_ok_status();
}

// Sets the field of `list` for `kind` to `count` elements read from
// `value` (a list).
static loom_status_t encode_list(loom__arena_t* arena,
                                 const loom_attr_value_t* value,
                                 list_value_t* list) {
  size_t count = (size_t)value->count;
  for (size_t i = 0; i < count; ++i) {
    loom_attr_value_t element;
    LOOM_RETURN_IF_ERROR(
        loom_attr_value_list_element(value, (int64_t)i, &element));
    if (i == 0) {
      // One array of the right field, sized for all elements.
      switch (value->kind) {
        case LOOM_ATTR_KIND_BOOL:
          LOOM_RETURN_IF_ERROR(
              make_array(arena, count, sizeof(*list->b), (void**)&list->b));
          break;
        case LOOM_ATTR_KIND_I32:
        case LOOM_ATTR_KIND_I64:
          LOOM_RETURN_IF_ERROR(
              make_array(arena, count, sizeof(*list->i), (void**)&list->i));
          break;
        case LOOM_ATTR_KIND_F32:
        case LOOM_ATTR_KIND_F64:
          LOOM_RETURN_IF_ERROR(
              make_array(arena, count, sizeof(*list->f), (void**)&list->f));
          break;
        case LOOM_ATTR_KIND_DTYPE:
          LOOM_RETURN_IF_ERROR(make_array(arena, count, sizeof(*list->type),
                                          (void**)&list->type));
          break;
        case LOOM_ATTR_KIND_SHAPE:
          LOOM_RETURN_IF_ERROR(make_array(arena, count, sizeof(*list->shape),
                                          (void**)&list->shape));
          break;
        case LOOM_ATTR_KIND_STRING:
          LOOM_RETURN_IF_ERROR(
              make_array(arena, count, sizeof(*list->s), (void**)&list->s));
          break;
        case LOOM_ATTR_KIND_TENSOR:
          LOOM_RETURN_IF_ERROR(make_array(arena, count, sizeof(*list->tensor),
                                          (void**)&list->tensor));
          break;
        case LOOM_ATTR_KIND_FUNC:
          LOOM_RETURN_IF_ERROR(make_array(arena, count, sizeof(*list->func),
                                          (void**)&list->func));
          break;
        default:
          return loom_make_status(
              LOOM_STATUS_UNIMPLEMENTED,
              "serializing an attr value: a list of %s has no AttrValue form",
              loom_attr_kind_name(value->kind));
      }
    }
    switch (value->kind) {
      case LOOM_ATTR_KIND_BOOL:
        list->b[list->n_b++] = element.u.b;
        break;
      case LOOM_ATTR_KIND_I32:
        list->i[list->n_i++] = element.u.i32;
        break;
      case LOOM_ATTR_KIND_I64:
        list->i[list->n_i++] = element.u.i64;
        break;
      case LOOM_ATTR_KIND_F32:
        list->f[list->n_f++] = element.u.f32;
        break;
      case LOOM_ATTR_KIND_F64:
        list->f[list->n_f++] = (float)element.u.f64;
        break;
      case LOOM_ATTR_KIND_DTYPE:
        list->type[list->n_type++] = (int32_t)element.u.dtype;
        break;
      case LOOM_ATTR_KIND_SHAPE:
        LOOM_RETURN_IF_ERROR(encode_shape(arena, element.u.shape.rank,
                                          element.u.shape.dims,
                                          &list->shape[list->n_shape++]));
        break;
      case LOOM_ATTR_KIND_STRING:
        list->s[list->n_s].data = (uint8_t*)element.u.string.data;
        list->s[list->n_s++].len = element.u.string.size;
        break;
      case LOOM_ATTR_KIND_TENSOR:
        LOOM_RETURN_IF_ERROR(encode_tensor(arena, element.u.tensor,
                                           &list->tensor[list->n_tensor++]));
        break;
      default: {  // FUNC
        Tensorflow__NameAttrList* func = NULL;
        LOOM_RETURN_IF_ERROR(MAKE(arena, Tensorflow__NameAttrList, &func));
        tensorflow__name_attr_list__init(func);
        LOOM_RETURN_IF_ERROR(loom__arena_strndup(arena, element.u.string.data,
                                                 element.u.string.size,
                                                 (const char**)&func->name));
        list->func[list->n_func++] = func;
        break;
      }
    }
  }
  return loom_ok_status();
}

static loom_status_t encode_attr_value(loom__arena_t* arena,
                                       const loom_attr_value_t* value,
                                       attr_value_t** out) {
  attr_value_t* proto = NULL;
  LOOM_RETURN_IF_ERROR(MAKE(arena, attr_value_t, &proto));
  tensorflow__attr_value__init(proto);
  if (value->is_list) {
    list_value_t* list = NULL;
    LOOM_RETURN_IF_ERROR(MAKE(arena, list_value_t, &list));
    tensorflow__attr_value__list_value__init(list);
    LOOM_RETURN_IF_ERROR(encode_list(arena, value, list));
    proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    proto->list = list;
    *out = proto;
    return loom_ok_status();
  }
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
      proto->b = value->u.b;
      break;
    case LOOM_ATTR_KIND_I32:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
      proto->i = value->u.i32;
      break;
    case LOOM_ATTR_KIND_I64:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
      proto->i = value->u.i64;
      break;
    case LOOM_ATTR_KIND_F32:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
      proto->f = value->u.f32;
      break;
    case LOOM_ATTR_KIND_F64:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
      proto->f = (float)value->u.f64;
      break;
    case LOOM_ATTR_KIND_DTYPE:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
      proto->type = (int32_t)value->u.dtype;
      break;
    case LOOM_ATTR_KIND_SHAPE:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
      LOOM_RETURN_IF_ERROR(encode_shape(arena, value->u.shape.rank,
                                        value->u.shape.dims, &proto->shape));
      break;
    case LOOM_ATTR_KIND_STRING:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
      proto->s.data = (uint8_t*)value->u.string.data;
      proto->s.len = value->u.string.size;
      break;
    case LOOM_ATTR_KIND_TENSOR:
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
      LOOM_RETURN_IF_ERROR(
          encode_tensor(arena, value->u.tensor, &proto->tensor));
      break;
    case LOOM_ATTR_KIND_FUNC: {
      Tensorflow__NameAttrList* func = NULL;
      LOOM_RETURN_IF_ERROR(MAKE(arena, Tensorflow__NameAttrList, &func));
      tensorflow__name_attr_list__init(func);
      LOOM_RETURN_IF_ERROR(loom__arena_strndup(arena, value->u.string.data,
                                               value->u.string.size,
                                               (const char**)&func->name));
      proto->value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
      proto->func = func;
      break;
    }
    default:
      return loom_make_status(
          LOOM_STATUS_UNIMPLEMENTED,
          "serializing an attr value: %s has no AttrValue form",
          loom_attr_kind_name(value->kind));
  }
  *out = proto;
  return loom_ok_status();
}

// TensorFlow's name of an attr's type: "int", "list(type)", ...
static const char* attr_type_name(const loom_attr_def_t* attr) {
  static const char* const kScalar[LOOM_ATTR_KIND_COUNT] = {
      [LOOM_ATTR_KIND_BOOL] = "bool",     [LOOM_ATTR_KIND_I32] = "int",
      [LOOM_ATTR_KIND_I64] = "int",       [LOOM_ATTR_KIND_F32] = "float",
      [LOOM_ATTR_KIND_F64] = "float",     [LOOM_ATTR_KIND_DTYPE] = "type",
      [LOOM_ATTR_KIND_SHAPE] = "shape",   [LOOM_ATTR_KIND_STRING] = "string",
      [LOOM_ATTR_KIND_TENSOR] = "tensor", [LOOM_ATTR_KIND_FUNC] = "func",
  };
  static const char* const kList[LOOM_ATTR_KIND_COUNT] = {
      [LOOM_ATTR_KIND_BOOL] = "list(bool)",
      [LOOM_ATTR_KIND_I32] = "list(int)",
      [LOOM_ATTR_KIND_I64] = "list(int)",
      [LOOM_ATTR_KIND_F32] = "list(float)",
      [LOOM_ATTR_KIND_F64] = "list(float)",
      [LOOM_ATTR_KIND_DTYPE] = "list(type)",
      [LOOM_ATTR_KIND_SHAPE] = "list(shape)",
      [LOOM_ATTR_KIND_STRING] = "list(string)",
      [LOOM_ATTR_KIND_TENSOR] = "list(tensor)",
      [LOOM_ATTR_KIND_FUNC] = "list(func)",
  };
  const char* name = NULL;
  if (attr->kind >= 0 && attr->kind < LOOM_ATTR_KIND_COUNT) {
    name = attr->is_list ? kList[attr->kind] : kScalar[attr->kind];
  }
  return name ? name : "";
}

static loom_status_t encode_arg(loom__arena_t* arena, const loom_arg_def_t* arg,
                                Tensorflow__OpDef__ArgDef* proto) {
  tensorflow__op_def__arg_def__init(proto);
  LOOM_RETURN_IF_ERROR(copy_string(arena, arg->name, &proto->name));
  proto->type = (int32_t)arg->dtype;  // LOOM_DTYPE_INVALID is DT_INVALID
  if (arg->type_attr) {
    LOOM_RETURN_IF_ERROR(copy_string(arena, arg->type_attr, &proto->type_attr));
  }
  if (arg->number_attr) {
    LOOM_RETURN_IF_ERROR(
        copy_string(arena, arg->number_attr, &proto->number_attr));
  }
  if (arg->type_list_attr) {
    LOOM_RETURN_IF_ERROR(
        copy_string(arena, arg->type_list_attr, &proto->type_list_attr));
  }
  proto->is_ref = arg->is_ref;
  return loom_ok_status();
}

static loom_status_t encode_attr(loom__arena_t* arena, const loom_op_def_t* op,
                                 const loom_attr_def_t* attr,
                                 Tensorflow__OpDef__AttrDef* proto) {
  tensorflow__op_def__attr_def__init(proto);
  LOOM_RETURN_IF_ERROR(copy_string(arena, attr->name, &proto->name));
  proto->type = (char*)attr_type_name(attr);
  loom_attr_value_t value;
  if (attr->has_default && op->defaults &&
      loom_op_attrs_get(op->defaults, attr->name, &value)) {
    LOOM_RETURN_IF_ERROR(
        encode_attr_value(arena, &value, &proto->default_value));
  }
  proto->has_minimum = attr->has_minimum;
  proto->minimum = attr->has_minimum ? attr->minimum : 0;
  if (attr->num_allowed_types || attr->num_allowed_strings) {
    loom_attr_value_t allowed = {.is_list = true};
    if (attr->num_allowed_types) {
      allowed.kind = LOOM_ATTR_KIND_DTYPE;
      allowed.count = attr->num_allowed_types;
      allowed.u.list = attr->allowed_types;
    } else {
      allowed.kind = LOOM_ATTR_KIND_STRING;
      allowed.count = attr->num_allowed_strings;
      allowed.u.list = attr->allowed_strings;
    }
    LOOM_RETURN_IF_ERROR(
        encode_attr_value(arena, &allowed, &proto->allowed_values));
  }
  return loom_ok_status();
}

static loom_status_t encode_op(loom__arena_t* arena, const loom_op_def_t* op,
                               Tensorflow__OpDef* proto) {
  tensorflow__op_def__init(proto);
  LOOM_RETURN_IF_ERROR(copy_string(arena, op->name, &proto->name));

  Tensorflow__OpDef__ArgDef* args = NULL;
  size_t num_args = (size_t)op->num_inputs + (size_t)op->num_outputs;
  LOOM_RETURN_IF_ERROR(
      make_array(arena, num_args, sizeof(*args), (void**)&args));
  LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)op->num_inputs,
                                  sizeof(*proto->input_arg),
                                  (void**)&proto->input_arg));
  LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)op->num_outputs,
                                  sizeof(*proto->output_arg),
                                  (void**)&proto->output_arg));
  for (int32_t i = 0; i < op->num_inputs; ++i) {
    LOOM_RETURN_IF_ERROR(encode_arg(arena, &op->inputs[i], args));
    proto->input_arg[proto->n_input_arg++] = args++;
  }
  for (int32_t i = 0; i < op->num_outputs; ++i) {
    LOOM_RETURN_IF_ERROR(encode_arg(arena, &op->outputs[i], args));
    proto->output_arg[proto->n_output_arg++] = args++;
  }

  Tensorflow__OpDef__AttrDef* attrs = NULL;
  LOOM_RETURN_IF_ERROR(
      make_array(arena, (size_t)op->num_attrs, sizeof(*attrs), (void**)&attrs));
  LOOM_RETURN_IF_ERROR(make_array(arena, (size_t)op->num_attrs,
                                  sizeof(*proto->attr), (void**)&proto->attr));
  for (int32_t i = 0; i < op->num_attrs; ++i) {
    LOOM_RETURN_IF_ERROR(encode_attr(arena, op, &op->attrs[i], &attrs[i]));
    proto->attr[proto->n_attr++] = &attrs[i];
  }

  if (op->deprecation_version) {
    LOOM_RETURN_IF_ERROR(
        MAKE(arena, Tensorflow__OpDeprecation, &proto->deprecation));
    tensorflow__op_deprecation__init(proto->deprecation);
    proto->deprecation->version = op->deprecation_version;
    LOOM_RETURN_IF_ERROR(copy_string(arena, op->deprecation_explanation,
                                     &proto->deprecation->explanation));
  }
  proto->is_commutative = op->is_commutative;
  proto->is_aggregate = op->is_aggregate;
  proto->is_stateful = op->is_stateful;
  proto->allows_uninitialized_input = op->allows_uninitialized_input;
  return loom_ok_status();
}

// Packs `message` into a tagged block from `allocator`.
static loom_status_t pack(loom_allocator_t allocator,
                          const ProtobufCMessage* message, void** out_data,
                          size_t* out_length) {
  size_t length = protobuf_c_message_get_packed_size(message);
  void* data = NULL;
  LOOM_RETURN_IF_ERROR(
      loom__tagged_block_allocate(allocator, length ? length : 1, &data));
  size_t packed = protobuf_c_message_pack(message, data);
  if (packed != length) {
    loom__tagged_block_free(data);
    return loom_make_status(LOOM_STATUS_INTERNAL,
                            "serializing definitions: packed %zu bytes of %zu",
                            packed, length);
  }
  *out_data = data;
  *out_length = length;
  return loom_ok_status();
}

loom_status_t loom__tf_encode_op_list(loom_allocator_t allocator,
                                      const loom_op_def_t* const* ops,
                                      size_t count, void** out_data,
                                      size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  loom__arena_t arena;
  loom__arena_initialize(&arena, allocator);
  Tensorflow__OpList list;
  tensorflow__op_list__init(&list);
  Tensorflow__OpDef* defs = NULL;
  loom_status_t status =
      make_array(&arena, count, sizeof(*defs), (void**)&defs);
  if (!status) {
    status = make_array(&arena, count, sizeof(*list.op), (void**)&list.op);
  }
  for (size_t i = 0; !status && i < count; ++i) {
    status = encode_op(&arena, ops[i], &defs[i]);
    list.op[list.n_op++] = &defs[i];
  }
  if (!status) {
    status = pack(allocator, &list.base, out_data, out_length);
  }
  loom__arena_deinitialize(&arena);
  return status;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

typedef struct kernel_list_t {
  loom__arena_t* arena;
  Tensorflow__KernelDef** kernels;  // newest first, as visited
  size_t count;
  size_t capacity;
} kernel_list_t;

static loom_status_t encode_kernel(loom__arena_t* arena,
                                   const loom_kernel_def_t* def,
                                   Tensorflow__KernelDef** out) {
  Tensorflow__KernelDef* proto = NULL;
  LOOM_RETURN_IF_ERROR(MAKE(arena, Tensorflow__KernelDef, &proto));
  tensorflow__kernel_def__init(proto);
  LOOM_RETURN_IF_ERROR(copy_string(arena, def->op_name, &proto->op));
  LOOM_RETURN_IF_ERROR(
      copy_string(arena, def->device_type, &proto->device_type));
  LOOM_RETURN_IF_ERROR(copy_string(arena, def->label, &proto->label));
  proto->priority = def->priority;

  size_t num_constraints = (size_t)def->num_constraints;
  Tensorflow__KernelDef__AttrConstraint* constraints = NULL;
  LOOM_RETURN_IF_ERROR(make_array(arena, num_constraints, sizeof(*constraints),
                                  (void**)&constraints));
  LOOM_RETURN_IF_ERROR(make_array(arena, num_constraints,
                                  sizeof(*proto->constraint),
                                  (void**)&proto->constraint));
  for (size_t i = 0; i < num_constraints; ++i) {
    const loom__type_constraint_t* constraint = &def->constraints[i];
    tensorflow__kernel_def__attr_constraint__init(&constraints[i]);
    LOOM_RETURN_IF_ERROR(
        copy_string(arena, constraint->attr_name, &constraints[i].name));
    loom_attr_value_t allowed = {
        .kind = LOOM_ATTR_KIND_DTYPE,
        .is_list = true,
        .count = constraint->num_types,
        .u.list = constraint->types,
    };
    LOOM_RETURN_IF_ERROR(
        encode_attr_value(arena, &allowed, &constraints[i].allowed_values));
    proto->constraint[proto->n_constraint++] = &constraints[i];
  }

  size_t num_host = (size_t)def->num_host_memory_args;
  LOOM_RETURN_IF_ERROR(make_array(arena, num_host,
                                  sizeof(*proto->host_memory_arg),
                                  (void**)&proto->host_memory_arg));
  for (size_t i = 0; i < num_host; ++i) {
    LOOM_RETURN_IF_ERROR(copy_string(arena, def->host_memory_args[i],
                                     &proto->host_memory_arg[i]));
    proto->n_host_memory_arg++;
  }
  *out = proto;
  return loom_ok_status();
}

// Called with the registry's lock held: copies what it needs.
static loom_status_t visit_kernel(const loom_kernel_def_t* def,
                                  void* user_data) {
  kernel_list_t* list = user_data;
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 16;
    Tensorflow__KernelDef** kernels = NULL;
    LOOM_RETURN_IF_ERROR(
        make_array(list->arena, capacity, sizeof(*kernels), (void**)&kernels));
    if (list->count) {
      memcpy(kernels, list->kernels, sizeof(*kernels) * list->count);
    }
    list->kernels = kernels;
    list->capacity = capacity;
  }
  return encode_kernel(list->arena, def, &list->kernels[list->count++]);
}

loom_status_t loom__tf_encode_kernel_list(loom_allocator_t allocator,
                                          loom_kernel_registry_t* registry,
                                          const char* op_name, void** out_data,
                                          size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  loom__arena_t arena;
  loom__arena_initialize(&arena, allocator);
  kernel_list_t visited = {.arena = &arena};
  loom_status_t status =
      loom__kernel_registry_visit(registry, op_name, visit_kernel, &visited);
  if (!status) {
    // Registration order.
    for (size_t i = 0, j = visited.count; i + 1 < j; ++i, --j) {
      Tensorflow__KernelDef* kernel = visited.kernels[i];
      visited.kernels[i] = visited.kernels[j - 1];
      visited.kernels[j - 1] = kernel;
    }
    Tensorflow__KernelList list;
    tensorflow__kernel_list__init(&list);
    list.kernel = visited.kernels;
    list.n_kernel = visited.count;
    status = pack(allocator, &list.base, out_data, out_length);
  }
  loom__arena_deinitialize(&arena);
  return status;
}
