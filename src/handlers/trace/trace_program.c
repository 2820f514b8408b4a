// A function as a program in the MLIR text form of TFRT's corert dialect,
// which `loom run` and the program API execute: one corert.executeop per
// node on the "cpu" handler, stateful nodes chained in body order
// (corert.executeop.seq), captured tensors as corert.const_dense_tensor.

#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "function/function_capture.h"
#include "function/function_internal.h"
#include "function/program_dtype.h"
#include "handlers/trace/trace_internal.h"
#include "loom/op_signature.h"

typedef struct printer_t {
  loom__text_t text;
  const loom_function_t* function;
  loom_op_registry_t* registry;
  const loom_op_def_t** defs;  // per node
} printer_t;

static loom_status_t unprintable(const printer_t* p, const char* what,
                                 const char* detail) {
  return loom_make_status(LOOM_STATUS_UNIMPLEMENTED,
                          "loom_trace_print_program: function '%s': %s: %s "
                          "cannot be written as a program",
                          p->function->name, what, detail);
}

static loom_status_t print_dtype(printer_t* p, loom_dtype_t dtype,
                                 const char* what) {
  const char* spelling = loom__program_dtype_spelling(dtype);
  if (!spelling) return unprintable(p, what, loom_dtype_name(dtype));
  loom__text_append(&p->text, "%s", spelling);
  return loom_ok_status();
}

static void print_double(printer_t* p, double value) {
  char number[40];
  snprintf(number, sizeof(number), "%.17g", value);
  // MLIR's float literals have a point or an exponent.
  bool is_float = strpbrk(number, ".eEni") != NULL;
  loom__text_append(&p->text, "%s%s", number, is_float ? "" : ".0");
}

// dense<...> : tensor<2x3xf32>, for a dense numeric host tensor.
static loom_status_t print_tensor(printer_t* p, const loom_tensor_t* tensor,
                                  const char* what) {
  loom_dtype_t dtype = loom_tensor_dtype(tensor);
  bool floating = dtype == LOOM_DTYPE_FLOAT || dtype == LOOM_DTYPE_DOUBLE;
  bool integer = dtype == LOOM_DTYPE_INT32 || dtype == LOOM_DTYPE_INT64;
  if (!floating && !integer) {
    return unprintable(p, what, "a tensor of this dtype");
  }
  const loom_shape_t* shape = loom_tensor_shape(tensor);
  int64_t n = loom_tensor_num_elements(tensor);
  const void* data = loom_tensor_data(tensor);
  loom__text_append(&p->text, "dense<%s", shape->rank > 0 ? "[" : "");
  for (int64_t i = 0; i < n; ++i) {
    if (i) loom__text_append(&p->text, ", ");
    if (dtype == LOOM_DTYPE_FLOAT) print_double(p, ((const float*)data)[i]);
    if (dtype == LOOM_DTYPE_DOUBLE) print_double(p, ((const double*)data)[i]);
    if (dtype == LOOM_DTYPE_INT32) {
      loom__text_append(&p->text, "%d", ((const int32_t*)data)[i]);
    }
    if (dtype == LOOM_DTYPE_INT64) {
      loom__text_append(&p->text, "%lld", (long long)((const int64_t*)data)[i]);
    }
  }
  loom__text_append(&p->text, "%s> : tensor<", shape->rank > 0 ? "]" : "");
  const int64_t* dims = loom_shape_dims(shape);
  for (int32_t d = 0; d < shape->rank; ++d) {
    loom__text_append(&p->text, "%lldx", (long long)dims[d]);
  }
  LOOM_RETURN_IF_ERROR(print_dtype(p, dtype, what));
  loom__text_append(&p->text, ">");
  return loom_ok_status();
}

static loom_status_t print_attr(printer_t* p, const char* node,
                                const char* name,
                                const loom_attr_value_t* value) {
  char what[256];
  snprintf(what, sizeof(what), "node '%s', attr '%s'", node, name);
  loom__text_append(&p->text, "%s = ", name);
  if (value->is_list) {
    if (value->kind != LOOM_ATTR_KIND_I64 &&
        value->kind != LOOM_ATTR_KIND_DTYPE) {
      return unprintable(p, what, "a list of this kind");
    }
    loom__text_append(&p->text, "[");
    for (int64_t i = 0; i < value->count; ++i) {
      if (i) loom__text_append(&p->text, ", ");
      if (value->kind == LOOM_ATTR_KIND_I64) {
        loom__text_append(&p->text, "%lld : i64",
                          (long long)((const int64_t*)value->u.list)[i]);
      } else {
        LOOM_RETURN_IF_ERROR(
            print_dtype(p, ((const loom_dtype_t*)value->u.list)[i], what));
      }
    }
    loom__text_append(&p->text, "]");
    return loom_ok_status();
  }
  switch (value->kind) {
    case LOOM_ATTR_KIND_BOOL:
      loom__text_append(&p->text, "%s", value->u.b ? "true" : "false");
      return loom_ok_status();
    case LOOM_ATTR_KIND_I32:
      loom__text_append(&p->text, "%d : i32", value->u.i32);
      return loom_ok_status();
    case LOOM_ATTR_KIND_I64:
      loom__text_append(&p->text, "%lld : i64", (long long)value->u.i64);
      return loom_ok_status();
    case LOOM_ATTR_KIND_F32:
      print_double(p, value->u.f32);
      loom__text_append(&p->text, " : f32");
      return loom_ok_status();
    case LOOM_ATTR_KIND_F64:
      print_double(p, value->u.f64);
      loom__text_append(&p->text, " : f64");
      return loom_ok_status();
    case LOOM_ATTR_KIND_DTYPE:
      return print_dtype(p, value->u.dtype, what);
    case LOOM_ATTR_KIND_STRING:
      for (size_t i = 0; i < value->u.string.size; ++i) {
        char c = value->u.string.data[i];
        if (c == '"' || c == '\\' || c < ' ') {
          return unprintable(p, what, "a string with quotes or escapes");
        }
      }
      loom__text_append(&p->text, "\"%.*s\"", (int)value->u.string.size,
                        value->u.string.data);
      return loom_ok_status();
    case LOOM_ATTR_KIND_SHAPE:
      if (value->u.shape.rank < 0) {
        loom__text_append(&p->text, "#corert.shape<*>");
        return loom_ok_status();
      }
      loom__text_append(&p->text, "#corert.shape<");
      for (int32_t d = 0; d < value->u.shape.rank; ++d) {
        int64_t dim = value->u.shape.dims[d];
        if (d) loom__text_append(&p->text, "x");
        if (dim < 0) {
          loom__text_append(&p->text, "?");
        } else {
          loom__text_append(&p->text, "%lld", (long long)dim);
        }
      }
      loom__text_append(&p->text, ">");
      return loom_ok_status();
    case LOOM_ATTR_KIND_TENSOR:
      return print_tensor(p, value->u.tensor, what);
    default:
      return unprintable(p, what, "an attr of this kind");
  }
}

// The program value a reference designates: "%arg0", "%cap0", "%n3_1";
// a whole list argument is its elements.
static loom_status_t print_ref(printer_t* p, const loom__function_ref_t* ref) {
  const loom_function_t* f = p->function;
  if (ref->node < 0) {
    int32_t visible = f->num_inputs - loom__function_num_captures(f);
    if (ref->input < visible) {
      loom__text_append(&p->text, "%%arg%d", ref->input);
    } else {
      loom__text_append(&p->text, "%%cap%d", ref->input - visible);
    }
    return loom_ok_status();
  }
  const loom__function_node_t* node = &f->nodes[ref->node];
  int32_t start = 0;
  int32_t stop = 0;
  LOOM_RETURN_IF_ERROR(loom_op_def_arg_range(p->defs[ref->node], &node->attrs,
                                             true, ref->output, &start, &stop));
  if (ref->index >= 0) {
    start += ref->index;
    stop = start + 1;
  }
  for (int32_t i = start; i < stop; ++i) {
    loom__text_append(&p->text, "%s%%n%d_%d", i > start ? ", " : "", ref->node,
                      i);
  }
  return loom_ok_status();
}

static loom_status_t print_node(printer_t* p, int32_t index, int32_t* chain) {
  const loom__function_node_t* node = &p->function->nodes[index];
  const loom_op_def_t* def = p->defs[index];
  int32_t count = 0;
  LOOM_RETURN_IF_ERROR(
      loom_op_def_flat_types(def, &node->attrs, true, NULL, 0, &count));
  loom__text_append(&p->text, "  ");
  bool seq = def->is_stateful;
  if (seq)
    loom__text_append(&p->text, "%%ch%d%s", *chain + 1, count ? ", " : "");
  for (int32_t i = 0; i < count; ++i) {
    loom__text_append(&p->text, "%s%%n%d_%d", i ? ", " : "", index, i);
  }
  if (seq || count) loom__text_append(&p->text, " = ");
  if (seq) {
    loom__text_append(&p->text, "corert.executeop.seq(%%cpu, %%ch%d)", *chain);
    ++*chain;
  } else {
    loom__text_append(&p->text, "corert.executeop(%%cpu)");
  }
  loom__text_append(&p->text, " \"tf.%s\"(", node->op);
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    if (i) loom__text_append(&p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &node->inputs[i]));
  }
  loom__text_append(&p->text, ")");
  size_t num_attrs = loom_op_attrs_count(&node->attrs);
  for (size_t a = 0; a < num_attrs; ++a) {
    const char* name = NULL;
    loom_attr_value_t value;
    if (!loom_op_attrs_entry_at(&node->attrs, a, &name, &value)) continue;
    loom__text_append(&p->text, "%s", a ? ", " : " {");
    LOOM_RETURN_IF_ERROR(print_attr(p, node->name, name, &value));
  }
  loom__text_append(&p->text, "%s : %d\n", num_attrs ? "}" : "", count);
  return loom_ok_status();
}

static loom_status_t print_function(printer_t* p) {
  const loom_function_t* f = p->function;
  if (f->num_outputs == 0) {
    return unprintable(p, "its outputs", "a function without outputs");
  }
  int32_t num_captures = loom__function_num_captures(f);
  int32_t visible = f->num_inputs - num_captures;
  loom__text_append(&p->text, "func.func @%s(", f->name);
  for (int32_t i = 0; i < visible; ++i) {
    if (f->inputs[i].type_attr) {
      return unprintable(p, "its inputs", "an input typed by an attr");
    }
    loom__text_append(&p->text, "%s%%arg%d: !corert.tensorhandle",
                      i ? ", " : "", i);
  }
  loom__text_append(&p->text, ") -> (");
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    loom__text_append(&p->text, "%s!corert.tensorhandle", o ? ", " : "");
  }
  loom__text_append(&p->text,
                    ") {\n  %%ch0 = tfrt.new.chain\n"
                    "  %%cpu = corert.get_op_handler %%ch0 \"cpu\"\n");
  for (int32_t c = 0; c < num_captures; ++c) {
    loom_tensor_handle_t* handle = f->captures->handles[c];
    loom_tensor_t* tensor = NULL;
    char what[64];
    snprintf(what, sizeof(what), "captured input %d", c);
    if (loom_tensor_handle_dtype(handle) == LOOM_DTYPE_RESOURCE) {
      return unprintable(p, what, "a resource (a variable's handle)");
    }
    LOOM_RETURN_IF_ERROR(loom_tensor_handle_resolve(handle, &tensor));
    loom__text_append(&p->text, "  %%cap%d = corert.const_dense_tensor ", c);
    loom_status_t status = print_tensor(p, tensor, what);
    loom_tensor_release(tensor);
    LOOM_RETURN_IF_ERROR(status);
    loom__text_append(&p->text, "\n");
  }
  int32_t chain = 0;
  for (int32_t i = 0; i < f->num_nodes; ++i) {
    LOOM_RETURN_IF_ERROR(print_node(p, f->order[i], &chain));
  }
  loom__text_append(&p->text, "  tfrt.return ");
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    if (o) loom__text_append(&p->text, ", ");
    LOOM_RETURN_IF_ERROR(print_ref(p, &f->sources[o]));
  }
  loom__text_append(&p->text, " : ");
  for (int32_t o = 0; o < f->num_outputs; ++o) {
    loom__text_append(&p->text, "%s!corert.tensorhandle", o ? ", " : "");
  }
  loom__text_append(&p->text, "\n}\n");
  return loom_ok_status();
}

loom_status_t loom_trace_print_program(loom_context_t* context,
                                       const loom_function_t* function,
                                       loom_allocator_t allocator,
                                       char** out_text, size_t* out_size) {
  if (!context || !function || !out_text) {
    return loom_make_status(LOOM_STATUS_INVALID_ARGUMENT,
                            "loom_trace_print_program: %s is NULL",
                            !context    ? "context"
                            : !function ? "function"
                                        : "out_text");
  }
  *out_text = NULL;
  if (out_size) *out_size = 0;
  printer_t p = {
      .function = function,
      .registry = loom_runtime_ops(loom_context_runtime(context)),
  };
  LOOM_RETURN_IF_ERROR(loom_allocator_calloc(
      allocator, sizeof(*p.defs) * (size_t)(function->num_nodes + 1),
      (void**)&p.defs));
  loom_status_t status = loom_ok_status();
  for (int32_t i = 0; !status && i < function->num_nodes; ++i) {
    p.defs[i] = loom_op_registry_find(p.registry, function->nodes[i].op);
    if (!p.defs[i]) {
      status = unprintable(&p, function->nodes[i].name,
                           "a node that is not a registered op");
    }
  }
  // Measured first, then written.
  if (!status) status = print_function(&p);
  char* text = NULL;
  if (!status) {
    status = loom_allocator_malloc(allocator, p.text.length + 1, (void**)&text);
  }
  if (!status) {
    size_t length = p.text.length;
    p.text = (loom__text_t){.buffer = text, .capacity = length + 1};
    status = print_function(&p);
  }
  loom_allocator_free(allocator, p.defs);
  if (status) {
    loom_allocator_free(allocator, text);
    return status;
  }
  *out_text = text;
  if (out_size) *out_size = p.text.length;
  return loom_ok_status();
}
